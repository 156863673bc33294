"""``make bake`` / ``python -m addon.cli``: a real headless bake and every refusal."""

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, cwd=ROOT, **env_changes):
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_changes}
    return subprocess.run([sys.executable, "-m", "addon.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_presets_lists_one_name_per_line():
    result = cli("presets")
    assert result.returncode == 0
    assert "default" in result.stdout.splitlines()


def test_bake_writes_the_frames(tmp_path):
    out = tmp_path / "seq"
    result = cli("bake", "--preset", "default", "--frames", "3-5", "--res", "96x54", "--out", str(out),
                 "--count", "5000", "--seed", "7")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.glob("*.png")) == ["frame_0003.png", "frame_0004.png", "frame_0005.png"]
    assert (out / "gpu_particles_bake.json").is_file()
    assert "Baked" not in result.stdout and result.stdout.count("wrote frames 3-5") == 1, "each message once"
    assert re.search(r"^frame 3/3  [0-9.]+ frames/s  0\.0 s left$", result.stdout, re.MULTILINE), result.stdout


@pytest.mark.usefixtures("pxr")
def test_points_and_usd_flags_write_their_files_beside_the_frames(tmp_path):
    out = tmp_path / "seq"
    result = cli("bake", "--preset", "default", "--frames", "1-2", "--res", "32x18", "--out", str(out),
                 "--count", "500", "--points", "--usd")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (out / "points").iterdir()) == ["frame_0001.ply", "frame_0002.ply"]
    assert sorted(p.name for p in (out / "usd").iterdir()) == ["frame_0001.usdc", "frame_0002.usdc", "manifest.usda"]
    assert (out / "frame.usda").is_file()


def test_one_frame_with_timings_leaves_no_temporary_folders(tmp_path):
    """FRAMES=n is one frame; --timings FILE says where the time went; the quick exit (no bpy teardown) still
    removes Blender's session folder."""
    out, temp = tmp_path / "seq", tmp_path / "temp"
    temp.mkdir()
    result = cli("bake", "--frames", "2", "--res", "64x36", "--out", str(out), "--count", "3000",
                 "--timings", str(tmp_path / "timings.json"), TMPDIR=str(temp))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("wrote frames 2-2") == 1
    assert sorted(p.name for p in out.iterdir()) == ["frame_0002.png", "gpu_particles_bake.json"]
    report = json.loads((tmp_path / "timings.json").read_text())
    assert list(report["laps"]) == ["arguments", "import bpy", "scene", "register and add the effect",
                                    "GPU probe (waiting for it)", "bake"]
    assert {"set-up: GPU context", "preroll", "draw", "readback", "encode+write", "rename"} <= set(report["bake_stages"])
    assert report["kernel_compilation"]["kernels"] > 0 and set(report["probe"]) == {"probe EGL context", "probe process"}
    assert report["started_at"] <= report["exit_at"] <= time.time()
    assert list(temp.iterdir()) == []


@pytest.mark.slow
def test_ctrl_c_cancels_with_status_130_and_keeps_the_frames_written(tmp_path):
    out = tmp_path / "seq"
    process = subprocess.Popen([sys.executable, "-m", "addon.cli", "bake", "--frames", "1-2000", "--res", "64x36",
                                "--count", "3000", "--out", str(out)], cwd=ROOT, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE,  # a suite run in the background ignores SIGINT: not the CLI
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while not list(out.glob("frame_*.png")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    # One Ctrl-C: it must not be lost wherever it lands (job_operator.ctrl_c_pressed).
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 130, stderr
    assert stderr.count("gpu_particles bake: cancelled") == 1
    frames = sorted(out.glob("frame_*.png"))
    assert 1 <= len(frames) < 2000 and not list(out.glob(".*partial*"))
    assert json.loads((out / "gpu_particles_bake.json").read_text())["cancelled"] is True


def test_ctrl_c_is_a_flag_between_steps_and_a_second_one_stops_at_once():
    from addon.ui.modal_job import ctrl_c_pressed

    before = signal.getsignal(signal.SIGINT)
    with ctrl_c_pressed() as pressed:
        assert not pressed()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)  # the handler runs between bytecodes: nothing raised here
        assert pressed()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
    assert signal.getsignal(signal.SIGINT) is before


class FakeStream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("tty", [True, False])
def test_progress_line_updates_in_place_on_a_terminal_and_every_n_frames_otherwise(tty):
    from addon.ui.modal_job import ProgressLine

    stream = FakeStream(tty)
    progress = ProgressLine(48, stream, every=10)
    for done in (1, 2, 10, 11, 20, 20, 48):
        progress.update(done)
    text = stream.getvalue()
    shown = [int(n) for n in re.findall(r"frame (\d+)/48  [0-9.]+ frames/s  [0-9.]+ s left", text)]
    if tty:
        assert shown == [1, 2, 10, 11, 20, 48] and text.count("\r") == 6 and text.endswith("\n")
    else:
        assert shown == [10, 20, 48] and "\r" not in text and text.count("\n") == 3


def test_bake_with_blenders_motion_blur_depth_of_field_and_glints(tmp_path):
    out = tmp_path / "seq"
    result = cli("bake", "--frames", "3-3", "--res", "96x54", "--out", str(out), "--count", "5000",
                 "--motion-blur", "0.5", "--dof", "2.8@6", "--point-filter", "ONE_PIXEL", "--glints", "FLARE")
    assert result.returncode == 0, result.stderr
    assert (out / "frame_0003.png").is_file()
    import json

    sidecar = json.loads((out / "gpu_particles_bake.json").read_text())
    assert sidecar["lens"] == ["Motion blur: shutter 0.50 frames (Center)", "Depth of field: f/2.8 at 6 m"]
    assert sidecar["render"]["point_filter"] == "ONE_PIXEL" and sidecar["render"]["glints"] == "FLARE"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--preset", "nope"], "unknown preset 'nope'; known presets: .*default"),
        (["--count", "-5"], "count must be at least 1"),
        (["--count", "1000000000000"], "at most [0-9,]+ particles"),
        (["--frames", "10-2"], "frame range runs backwards: 10 to 2"),
        (["--res", "100000x100"], "beyond this GPU's texture limit"),
        (["--out", "BLOCKED/sub"], "cannot be created or written"),
        (["--dof", "2.8"], "DOF must look like 2.8@6"),
        (["--motion-blur", "0"], "must be positive"),
        (["--shot", "5-40"], "frames 1-2 are not inside the shot 5-40"),
        (["--simulate-only"], "--simulate-only fills the simulation cache: give it --cache DIR"),
    ],
)
def test_bad_bakes_exit_non_zero_and_write_nothing(tmp_path, args, message):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    out = str(tmp_path / "out")
    args = [a.replace("BLOCKED", str(blocker)) for a in args]
    if "--out" not in args:
        args += ["--out", out]
    result = cli("bake", "--frames", "1-2", "--res", "64x36", *args)
    assert result.returncode != 0
    assert re.search(message, result.stderr), result.stderr
    assert len(re.findall(message, result.stdout + result.stderr)) == 1, "said once"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["blocker"]


def test_no_gpu_is_a_clear_error_not_a_crash(tmp_path):
    """With no EGL driver, gpu.init() would crash Blender: the CLI reports it and writes nothing."""
    result = cli("bake", "--frames", "1-2", "--res", "64x36", "--out", str(tmp_path / "out"),
                 __EGL_VENDOR_LIBRARY_FILENAMES=str(tmp_path / "no_such_vendor.json"))
    assert result.returncode == 2
    assert "no GPU context could be created (eglGetDisplay(EGL_DEFAULT_DISPLAY) failed: EGL_BAD_PARAMETER)" \
        in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_range_without_a_shot_simulates_from_the_simulation_start(tmp_path):
    """FRAMES=58-60 alone builds the scene from frame 1 (its Simulation Start), as F12 on those frames of a whole
    shot does: frame 60 is the whole bake's frame 60 byte for byte, not one rocket launched at 58."""
    shared = ("bake", "--preset", "fireworks", "--res", "64x36", "--count", "64")
    for frames, name in (("1-60", "whole"), ("58-60", "part")):
        result = cli(*shared, "--frames", frames, "--out", str(tmp_path / name))
        assert result.returncode == 0, result.stderr
    part = sorted((tmp_path / "part").glob("*.png"))
    assert [p.name for p in part] == ["frame_0058.png", "frame_0059.png", "frame_0060.png"]
    for frame in part:
        assert frame.read_bytes() == (tmp_path / "whole" / frame.name).read_bytes(), frame.name
    record = json.loads((tmp_path / "part" / "gpu_particles_bake.json").read_text())
    assert record["frames"] == [58, 60]
