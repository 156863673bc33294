"""hosts/egl_probe.py: the command line's child that makes Blender's headless EGL context without Blender."""

import os
import subprocess
import sys
import time

import pytest

from addon.cli import GPUProbe
from addon.hosts.egl_probe import gl_version


def run_probe(**env_changes):
    env = {**os.environ, **env_changes}
    return subprocess.run([sys.executable, "-I", "-S", str(GPUProbe.SCRIPT)], env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_probe_finds_the_renderer_blender_finds(host):
    import gpu

    before = time.time()
    result = run_probe()
    assert result.returncode == 0, result.stdout + result.stderr
    renderer, version, seconds, ended_at = result.stdout.splitlines()[-1].split("\t")
    assert renderer == gpu.platform.renderer_get()  # llvmpipe here
    assert gl_version(version) >= (4, 3) and version.startswith(gpu.platform.version_get().split()[0][:3])
    assert 0 < float(seconds) and before < float(ended_at) <= time.time()


def test_without_a_driver_it_says_why_in_one_line(tmp_path):
    result = run_probe(__EGL_VENDOR_LIBRARY_FILENAMES=str(tmp_path / "no_such_vendor.json"))
    assert result.returncode == 1
    assert result.stdout == "eglGetDisplay(EGL_DEFAULT_DISPLAY) failed: EGL_BAD_PARAMETER\n"


BLENDER = "import bpy, gpu; gpu.init(); print(gpu.platform.renderer_get())"


@pytest.mark.parametrize("environment", [
    # Mesa's X11 platform with no X server: eglInitialize fails and Mesa's surfaceless platform serves
    # (GHOST_ContextEGL's fallback).
    {"EGL_PLATFORM": "x11", "DISPLAY": "", "WAYLAND_DISPLAY": ""},
    # No EGL vendor at all: gpu.init() crashes Blender (a segmentation fault).
    {"__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent/egl_vendor.json"},
], ids=["surfaceless-fallback", "no-vendor"])
def test_the_probe_and_blender_agree(host, environment):
    import gpu

    if "EGL_PLATFORM" in environment and "llvmpipe" not in gpu.platform.renderer_get():
        pytest.skip("EGL_PLATFORM chooses among Mesa's platforms; this GPU's driver is not Mesa's")
    blender = subprocess.run([sys.executable, "-c", BLENDER], env={**os.environ, **environment}, capture_output=True,
                             text=True, timeout=300)
    probe = run_probe(**environment)
    assert (probe.returncode == 0) == (blender.returncode == 0), (probe.stdout, blender.returncode)
    if probe.returncode == 0:
        assert probe.stdout.split("\t")[0] == blender.stdout.splitlines()[-1]


def test_gl_versions_read_as_drivers_write_them():
    assert gl_version("4.5 (Core Profile) Mesa 22.3.6") == (4, 5)
    assert gl_version("4.6.0 NVIDIA 580.159.04") == (4, 6)
    assert gl_version("3.3 (Compatibility Profile) Mesa 20.0") == (3, 3)
    assert gl_version("OpenGL ES 3.2 Mesa") == (0, 0)


def test_a_probe_that_crashes_is_a_clear_error_with_what_the_driver_said(tmp_path, monkeypatch):
    from addon.hosts.base import NoGPUError

    script = tmp_path / "crashing_driver.py"
    script.write_text("import os, signal\nprint('driver: no device', flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    monkeypatch.setattr(GPUProbe, "SCRIPT", script)
    probe = GPUProbe()
    try:
        with pytest.raises(NoGPUError, match=r"no GPU context could be created \(the EGL probe crashed: Segmentation "
                                             r"fault\).*\n  driver: no device$"):
            probe.check()
    finally:
        probe.stop()
