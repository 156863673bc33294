"""The add-on in a Blender module session: operators, bake, errors, determinism."""

import hashlib
import os
import signal

import bpy
import numpy as np
import pytest

from tests.conftest import add_effect


def frame_files(folder):
    return sorted(p.name for p in folder.glob("*") if p.is_file())


def bake(expect_error=None):
    if expect_error is None:
        assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
        return
    with pytest.raises(RuntimeError, match=expect_error):
        bpy.ops.gpu_particles.bake()


def test_add_and_remove_effect(scene):
    emitter = bpy.context.active_object
    bpy.ops.gpu_particles.add()
    bpy.ops.gpu_particles.add(preset="default")
    assert len(emitter.gpu_particles.effects) == 2
    assert emitter.gpu_particles.active_effect.name == "Spark Fountain"
    bpy.ops.gpu_particles.remove()
    assert len(emitter.gpu_particles.effects) == 1


def test_add_without_active_object_reports(scene):
    bpy.context.view_layer.objects.active = None
    with pytest.raises(RuntimeError, match="No active object"):
        bpy.ops.gpu_particles.add()


def test_property_bounds_match_engine_fields(scene):
    from addon.engine.settings.settings import EFFECT_FIELDS
    from addon.properties import GPU_PARTICLES_PG_effect, effect_clamps, effect_settings_of

    rna = GPU_PARTICLES_PG_effect.bl_rna.properties
    for field in EFFECT_FIELDS:
        if field.kind in ("int", "float"):
            assert rna[field.name].soft_min == pytest.approx(field.min)
    effect = add_effect()
    effect.count = -10  # kept as set; reading clamps it and says so, so it never reaches the GPU
    assert effect.count == -10
    assert effect_settings_of(effect).count == 1 and effect_clamps(effect) == ("Count -10 raised to 1",)


def pixels_of(image) -> np.ndarray:
    """A loaded frame's RGBA pixels, (height, width, 4), rows bottom first (Blender's order)."""
    return np.array(image.pixels[:]).reshape(image.size[1], image.size[0], 4)


def test_bake_writes_png_sequence_with_particles(scene, tmp_path):
    add_effect(count=20_000)
    bake()
    folder = tmp_path / "frames"
    assert frame_files(folder) == ["f_0001.png", "f_0002.png", "f_0003.png", "f_0004.png", "gpu_particles_bake.json"]
    image = bpy.data.images.load(str(folder / "f_0004.png"))
    assert image.size[:] == (64, 36)
    pixels = pixels_of(image)
    assert pixels[..., :3].max() > 0.2, "particles are visible"
    assert (pixels[..., :3].max(axis=-1) < 0.01).mean() > 0.3, "and the background stays black"


def test_bake_exr_alpha_is_the_sprites_coverage(scene, tmp_path):
    """Premultiplied EXR, as the render layer: additive light covers nothing (alpha 0, so "over" adds it
    whole), alpha-blended sprites cover what is behind them."""
    add_effect(count=20_000)
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_mode = "RGBA"
    scene.frame_end = 2

    def baked():
        bake()
        return pixels_of(bpy.data.images.load(str(tmp_path / "frames" / "f_0002.exr"), check_existing=False))

    light = baked()
    assert light[..., :3].max() > 0.2 and not light[..., 3].any()
    add_effect(count=20_000, blend_mode="ALPHA")
    both = baked()
    assert both[..., 3].max() > 0.1 and both[..., 3].min() == 0


def test_two_bakes_are_byte_identical(scene, tmp_path):
    add_effect(count=30_000)
    digests = []
    for run in ("a", "b"):
        scene.gpu_particles_output.bake_path = str(tmp_path / run / "f_####")
        bake()
        digests.append([hashlib.sha256((tmp_path / run / f"f_{n:04d}.png").read_bytes()).hexdigest() for n in range(1, 5)])
    assert digests[0] == digests[1]


@pytest.mark.parametrize("depth", ["8", "16"])
def test_png_bake_converts_on_the_gpu_as_the_cpu_path_does(scene, tmp_path, monkeypatch, depth):
    """The bake's PNG frames (display transform on the GPU, RGB values read back) against the same bake
    with the frames converted on the CPU (OpenColorIO's CPU processor, as BW PNG still is)."""
    from addon.output.display import image_modules
    from addon.output.formats.png import PngFormat

    add_effect(count=30_000)
    scene.view_settings.view_transform, scene.view_settings.look = "AgX", "AgX - Punchy"
    scene.render.image_settings.color_depth = depth
    scene.frame_end = 2
    for run in ("gpu", "cpu"):
        if run == "cpu":
            monkeypatch.setattr(PngFormat, "gpu_display", property(lambda self: None))
        scene.gpu_particles_output.bake_path = str(tmp_path / run / "f_####")
        bake()
    oiio, _ = image_modules()
    for n in (1, 2):
        gpu, cpu = (oiio.ImageInput.open(str(tmp_path / run / f"f_{n:04d}.png")).read_image(f"uint{depth}")
                    .astype(int) for run in ("gpu", "cpu"))
        assert gpu.shape == cpu.shape == (36, 64, 3)
        assert np.abs(gpu - cpu).max() <= (1 if depth == "8" else 257) and (gpu > 0).mean() > 0.05


def test_seed_changes_the_frames(scene, tmp_path):
    effect = add_effect(count=30_000)
    hashes = []
    for seed in (1, 2):
        effect.seed = seed
        scene.gpu_particles_output.bake_path = str(tmp_path / str(seed) / "f_####")
        bake()
        hashes.append(hashlib.sha256((tmp_path / str(seed) / "f_0004.png").read_bytes()).hexdigest())
    assert hashes[0] != hashes[1]


@pytest.mark.parametrize(
    "breakage, message",
    [
        ("no_camera", "no camera"),
        ("no_effect", "No enabled GPU Particles effects"),
        ("huge_resolution", "beyond this GPU's texture limit"),
        ("unwritable", "cannot be created or written"),
        ("too_many_particles", "more than this GPU can hold"),
    ],
)
def test_bad_bakes_report_and_write_nothing(scene, tmp_path, monkeypatch, breakage, message):
    if breakage != "no_effect":
        effect = add_effect()
    if breakage == "no_camera":
        scene.camera = None
    elif breakage == "huge_resolution":
        scene.render.resolution_x = 65536
    elif breakage == "unwritable":
        blocker = tmp_path / "blocker"
        blocker.write_text("a file where a folder should be")
        scene.gpu_particles_output.bake_path = str(blocker / "sub" / "f_####")
    elif breakage == "too_many_particles":
        import gpu

        monkeypatch.setattr(gpu.capabilities, "max_texture_size_get", lambda: 256)  # a small GPU
        effect.count = 256 * 256 + 1
    bake(expect_error=message)
    assert not (tmp_path / "frames").exists() or not os.listdir(tmp_path / "frames")
    assert len(bpy.data.images) == 0


@pytest.mark.parametrize("error_type, errno, reason", [(OSError, 28, "No space left on device"),
                                                       (PermissionError, 13, "Permission denied")])
def test_failed_write_on_a_worker_stops_the_bake_and_keeps_only_complete_frames(scene, tmp_path, monkeypatch,
                                                                                 error_type, errno, reason):
    """A worker thread failing at frame 3 (half a file written) stops the bake with a clear error on the main
    thread; what is left are whole frames under their final names, no partial file, and not frame 3."""
    from addon.output import frame_writer

    add_effect(count=5000)
    scene.frame_end = 6
    real_encode = frame_writer.encode

    def failing_encode(path, pixels, frame_format):
        if "f_0003" in path.name:
            path.write_bytes(b"\x89PNG truncated")
            raise error_type(errno, reason)  # made here: a shared instance would keep its traceback (and frames)
        real_encode(path, pixels, frame_format)

    monkeypatch.setattr(frame_writer, "encode", failing_encode)
    bake(expect_error=f"Could not write frame 3 to .*f_0003.png': {reason}")
    folder = tmp_path / "frames"
    files = sorted(os.listdir(folder))  # hidden partial files too
    assert {"f_0001.png", "f_0002.png", "gpu_particles_bake.json"} <= set(files)
    assert "f_0003.png" not in files and not [name for name in files if "partial" in name or name.startswith(".")]
    for name in files[:-1]:
        assert bpy.data.images.load(str(folder / name)).size[:] == (64, 36)


@pytest.mark.parametrize("press", ["ctrl-c", "second ctrl-c"])
def test_ctrl_c_mid_bake_finishes_the_frames_drawn_and_cancels(scene, tmp_path, monkeypatch, press):
    """The command line's Ctrl-C in the blocking bake, as a signal read between steps (the step it lands in
    finishes) or, pressed again, as a KeyboardInterrupt inside a step: every frame drawn is written whole."""
    from addon.output.bake import BakeJob

    add_effect(count=3000)
    real_step = BakeJob.step

    def interrupted_step(job):
        if job.done == 2 and press == "second ctrl-c":
            raise KeyboardInterrupt
        if job.done == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return real_step(job)

    monkeypatch.setattr(BakeJob, "step", interrupted_step)
    assert bpy.ops.gpu_particles.bake() == {"CANCELLED"}
    folder = tmp_path / "frames"
    written = [f"f_000{i}.png" for i in range(1, 3 if press == "second ctrl-c" else 4)]
    assert sorted(os.listdir(folder)) == [*written, "gpu_particles_bake.json"]
    for name in written:
        assert bpy.data.images.load(str(folder / name)).size[:] == (64, 36)


def test_png_bake_keeps_the_glow_as_rgb(scene, tmp_path):
    """Additive light covers nothing (alpha 0): a PNG frame is RGB (light on black), never straight alpha."""
    add_effect(count=20_000)
    scene.frame_end = 2
    scene.render.image_settings.file_format = "OPEN_EXR"
    bake()
    light = pixels_of(bpy.data.images.load(str(tmp_path / "frames" / "f_0002.exr")))
    faint = (light[..., :3].max(axis=-1) > 2 / 255) & (light[..., 3] < 0.01)
    assert faint.sum() > 0, "the case: lit pixels a straight-alpha PNG would round to nothing"
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGBA"
    bake()
    png = bpy.data.images.load(str(tmp_path / "frames" / "f_0002.png"))
    pixels = pixels_of(png)
    assert png.channels == 3 or np.all(pixels[..., 3] == 1.0)
    assert (pixels[faint, :3].max(axis=-1) > 0).all(), "every faint lit pixel keeps its light"
    assert scene.render.image_settings.color_mode == "RGBA", "the scene's own setting is restored"
