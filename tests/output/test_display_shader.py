"""The bake's display transform on the GPU (frame_display.glsl + OpenColorIO's shader) against the CPU
path it replaces (``display_processor`` + ``display_pixels`` + ``quantize``): within one 8-bit level
(16-bit files: one 16-bit level more than the 8-bit bound's 257, none needed so far)."""

import re

import numpy as np
import pytest

from addon.engine.draw.readback import FrameReadback, ReadbackLayout
from addon.output.display import DisplaySettings, display_pixels, display_processor, ocio_config_path, quantize
from addon.output.display_shader import display_shader

# (view, look, exposure, gamma): each kind of OpenColorIO GPU resource and op Blender's config has
VIEWS = [
    ("AgX", "None", 0.0, 1.0),  # matrices, log2, a 57^3 3D LUT (tetrahedral), exponent, sRGB curve
    ("AgX", "AgX - Punchy", 0.7, 1.4),  # a look: two 3D LUTs; exposure and gamma
    ("Filmic", "Medium High Contrast", -0.5, 0.8),  # 2D textures of 1D LUTs, sampled linearly
    ("Standard", "None", 0.0, 1.0),  # no tables at all
    ("Khronos PBR Neutral", "None", 1.5, 1.0),
    ("ACES 2.0", "None", 0.0, 2.2),  # 2D tables sampled at texel centres
]


def display_of(view, look="None", exposure=0.0, gamma=1.0):
    return DisplaySettings(ocio_config_path(), "sRGB", view, look, exposure, gamma)


def hdr_frame(rng, width, height):
    """Linear premultiplied RGBA: HDR up to 1e4, zeros, negatives, alpha 0 with color, alpha above 1."""
    pixels = np.zeros((height, width, 4), np.float32)
    pixels[..., :3] = rng.exponential(0.7, (height, width, 3))
    pixels[..., 3] = rng.uniform(-0.1, 1.4, (height, width)).clip(0.0, None)
    flat = pixels.reshape(-1, 4)
    flat[::7, :3] = 0.0
    flat[1::11, :3] *= -0.5
    flat[2::13, :3] *= 1e4
    flat[3::5, 3] = 0.0
    flat[4::9] = 0.0
    return pixels


def on_gpu(host, display, pixels, alpha, depth=1):
    """The frame_display kernel's values as (height, width, 3 or 4) uint8 (or uint16: ``depth`` 2),
    rows top first."""
    height, width, _ = pixels.shape
    readback = FrameReadback(host, width, height, ReadbackLayout("DISPLAY", 4 if alpha else 3, depth),
                             display=display_shader(display))
    frame = host.texture("frame", width, height, "RGBA32F", pixels)
    return readback.read(readback.store(frame, readback.buffer())).copy()


def on_cpu(display, pixels, alpha, depth=1):
    """The CPU path's values, rows top first as the GPU writes them."""
    dtype = np.dtype(f"uint{8 * depth}")
    return quantize(display_pixels(pixels[::-1].copy(), display_processor(display), alpha), 4 if alpha else 3,
                    dtype)


@pytest.mark.parametrize("alpha", [False, True], ids=["rgb", "rgba"])
@pytest.mark.parametrize("view, look, exposure, gamma", VIEWS)
def test_gpu_display_matches_the_cpu_processor_within_one_level(host, rng, view, look, exposure, gamma, alpha):
    display = display_of(view, look, exposure, gamma)
    pixels = hdr_frame(rng, 37, 21)  # neither a multiple of the 16x16 workgroup
    gpu, cpu = on_gpu(host, display, pixels, alpha).astype(int), on_cpu(display, pixels, alpha).astype(int)
    assert gpu.shape == cpu.shape == (21, 37, 4 if alpha else 3)
    assert np.abs(gpu - cpu).max() <= 1
    assert (gpu == cpu).mean() > 0.99
    assert (cpu[..., :3] == 255).any() and (cpu[..., :3] < 8).any(), "the frame spans dark to clipped"


@pytest.mark.parametrize("alpha, depth", [(False, 1), (True, 1), (False, 2), (True, 2)],
                         ids=["rgb8", "rgba8", "rgb16", "rgba16"])
@pytest.mark.parametrize("width, height", [(1, 1), (1, 17), (2, 3), (3, 2), (33, 1), (16, 16), (17, 15), (65, 5)])
def test_every_size_converts_and_flips_every_pixel(host, rng, width, height, alpha, depth):
    """Odd sizes, one pixel, rows ending inside a word: each pixel lands at its flipped row (top first)."""
    display = display_of("AgX")
    pixels = hdr_frame(rng, width, height)
    gpu, cpu = (on_gpu(host, display, pixels, alpha, depth).astype(int),
                on_cpu(display, pixels, alpha, depth).astype(int))
    assert gpu.shape == cpu.shape == (height, width, 4 if alpha else 3)
    assert np.abs(gpu - cpu).max() <= (1 if depth == 1 else 257)
    if depth == 2 and width * height > 16:
        assert (gpu % 257 != 0).any(), "16-bit values, not 8-bit ones scaled"


@pytest.mark.parametrize("view, look, exposure, gamma", VIEWS[:3])
def test_sixteen_bit_values_match_the_cpu_processor(host, rng, view, look, exposure, gamma):
    display = display_of(view, look, exposure, gamma)
    pixels = hdr_frame(rng, 37, 21)
    gpu, cpu = (on_gpu(host, display, pixels, True, 2).astype(int), on_cpu(display, pixels, True, 2).astype(int))
    assert np.abs(gpu - cpu).max() <= 257
    assert np.median(np.abs(gpu - cpu)) <= 1  # measured: at most 10 units apart, 99% within 2


def test_quantizing_rounds_half_up_and_clamps(host):
    """Standard's sRGB curve is exact at 0 and 1; around those the kernel clamps and rounds as quantize()."""
    pixels = np.array([[[0.0, 1.0, 2.0, 0.0], [-1.0, 1e30, 0.5, 1.0], [0.001, 0.002, 0.003, 0.5]]], np.float32)
    display = display_of("Standard")
    gpu = on_gpu(host, display, pixels, alpha=False)
    np.testing.assert_array_equal(gpu[0, :2], [[0, 255, 255], [0, 255, on_cpu(display, pixels, False)[0, 1, 2]]])
    assert np.abs(gpu.astype(int) - on_cpu(display, pixels, False).astype(int)).max() <= 1


def test_the_shader_declares_no_resources_and_names_its_tables():
    shader = display_shader(display_of("Filmic", "Medium High Contrast"))
    assert not re.search(r"\buniform\b", shader.function)
    assert "vec4 display_transform(vec4" in shader.function
    kinds = sorted((lut.sampler.type, lut.linear, lut.values.shape[-1]) for lut in shader.luts)
    assert kinds == [("FLOAT_2D", True, 4), ("FLOAT_2D", True, 4), ("FLOAT_3D", False, 4), ("FLOAT_3D", False, 4)]
    for lut in shader.luts:
        assert lut.sampler.name in shader.function


def test_a_look_the_config_lacks_is_refused():
    with pytest.raises(ValueError, match="look 'Nope' is not in the OpenColorIO config"):
        display_shader(display_of("AgX", "Nope"))


def test_a_kept_shader_reads_back_as_built_and_each_setting_keeps_its_own(tmp_path):
    display = display_of("AgX", "AgX - Punchy", 0.7, 1.4)
    built = display_shader(display, tmp_path)
    (kept,) = tmp_path.glob("*.npz")
    read = display_shader(display, tmp_path)
    assert read.function == built.function
    assert [(lut.sampler, lut.linear) for lut in read.luts] == [(lut.sampler, lut.linear) for lut in built.luts]
    for ours, theirs in zip(read.luts, built.luts, strict=True):
        assert ours.values.dtype == np.float32
        np.testing.assert_array_equal(ours.values, theirs.values)
    plain = display_shader(display_of("AgX"), tmp_path)
    assert plain.function != built.function and len(list(tmp_path.glob("*.npz"))) == 2
    kept.write_bytes(kept.read_bytes()[:100])  # cut short: built again
    assert display_shader(display, tmp_path).function == built.function
    assert not list(tmp_path.glob(".*partial*"))


def test_only_blenders_own_config_is_kept(tmp_path):
    from addon.output.display_shader import display_cache

    assert display_cache(display_of("AgX")) is not None
    assert display_cache(DisplaySettings(str(tmp_path / "config.ocio"), "sRGB", "AgX", "None", 0.0, 1.0)) is None


MODERNGL_DISPLAY = """
import sys
import numpy as np
sys.path[:0] = [{root!r}]
from addon.hosts.base import NoGPUError
from addon.hosts.moderngl import ModernGLHost
from addon.engine.seam.kernels import Sampler
from addon.engine.draw.readback import DisplayLut, DisplayShader, FrameReadback, ReadbackLayout
try:
    host = ModernGLHost()
except NoGPUError as error:
    print("no moderngl:", error)
    sys.exit(3)
case = np.load({case!r}, allow_pickle=False)
luts = tuple(DisplayLut(Sampler(str(name), str(kind)), case[f"lut_{{n}}"], bool(linear))
             for n, (name, kind, linear) in enumerate(case["luts"]))
shader = DisplayShader(str(case["function"]), luts)
pixels = case["pixels"]
height, width, _ = pixels.shape
frame = host.texture("frame", width, height, "RGBA32F", pixels)
converted = {{}}
for channels in (3, 4):
    readback = FrameReadback(host, width, height, ReadbackLayout("DISPLAY", channels, 1), display=shader)
    converted[f"rgb{{'a' * (channels - 3)}}"] = readback.read(readback.store(frame, readback.buffer()))
np.savez({out!r}, **converted, device=host.device)
"""


def test_moderngl_host_runs_the_same_display_kernel(host, rng, tmp_path):
    """The benchmark host binds the same tables (2D and 3D samplers, linear and nearest) and converts alike.
    In a child process: a second GL context in this one would take Blender's away."""
    import subprocess
    import sys
    from pathlib import Path

    display = display_of("Filmic", "Medium High Contrast")
    shader = display_shader(display)
    pixels = hdr_frame(rng, 29, 19)
    luts = {f"lut_{n}": lut.values for n, lut in enumerate(shader.luts)}
    np.savez(tmp_path / "case.npz", pixels=pixels, function=shader.function, **luts,
             luts=np.array([(lut.sampler.name, lut.sampler.type, str(int(lut.linear))) for lut in shader.luts]))
    root = Path(__file__).resolve().parents[2]
    script = MODERNGL_DISPLAY.format(root=str(root), case=str(tmp_path / "case.npz"), out=str(tmp_path / "out.npz"))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    if result.returncode == 3:
        pytest.skip(result.stdout.strip())
    assert result.returncode == 0, result.stderr[-3000:]
    theirs = np.load(tmp_path / "out.npz")
    for name, alpha in (("rgb", False), ("rgba", True)):
        converted = theirs[name].astype(int)
        assert converted.shape == (19, 29, 4 if alpha else 3)
        assert np.abs(converted - on_cpu(display, pixels, alpha).astype(int)).max() <= 1
        assert np.abs(converted - on_gpu(host, display, pixels, alpha).astype(int)).max() <= 1
