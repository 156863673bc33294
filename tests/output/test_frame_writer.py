"""The bake's writer threads against Blender's own ``Image.save_render``: PNG within one 8-bit level
for several view transforms, a look, exposure, gamma and HDR values; EXR equal as half floats."""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import bpy
import numpy as np
import pytest

from addon.engine.draw.readback import FLOAT_RGBA, HALF_RGBA, FrameReadback
from addon.hosts.gl_readback import ENVIRONMENT, PixelPack, PixelPackBuffer
from addon.output.display import image_modules
from addon.output.display_shader import display_shader
from addon.output.formats import frame_format as frame_format_of_scene
from addon.output.formats.exr import ZIP_LEVEL, ExrFormat
from addon.output.formats.png import PNG_CHANNELS, PngFormat
from addon.output.frame_writer import FrameWriteError, FrameWriter, encode

WIDTH, HEIGHT = 48, 32


def sample_frame(rng):
    """Linear premultiplied RGBA, rows bottom to top: HDR up to 40, black, alpha 0 with color, alpha above 1."""
    pixels = np.zeros((HEIGHT, WIDTH, 4), np.float32)
    pixels[..., :3] = rng.exponential(0.6, (HEIGHT, WIDTH, 3)) * (rng.random((HEIGHT, WIDTH, 1)) < 0.8)
    pixels[..., 3] = np.clip(rng.random((HEIGHT, WIDTH)) * 1.5 - 0.2, 0.0, 1.3)
    pixels[:4, :8, :3] = 40.0
    pixels[::3, ::5, 3] = 0.0
    pixels[-4:] = 0.0
    return pixels


def read_image(path, pixel_type):
    """The values as stored (PNG: straight alpha, not multiplied on reading)."""
    oiio, _ = image_modules()
    config = oiio.ImageSpec()
    config.attribute("oiio:UnassociatedAlpha", 1)
    image = oiio.ImageInput.open(str(path), config)
    try:
        return image.read_image(pixel_type)
    finally:
        image.close()


def save_render(scene, pixels, path):
    image = bpy.data.images.new("reference", WIDTH, HEIGHT, alpha=True, float_buffer=True)
    image.pixels.foreach_set(pixels.ravel())
    try:
        image.save_render(str(path), scene=scene)
    finally:
        bpy.data.images.remove(image)


def write_with_writer(scene, pixels, path, host):
    """What the bake does with a frame (Blender's bottom-to-top rows, as ``save_render`` takes them): the
    readback (RGB(A) PNG converted on the GPU by its frame_display kernel; EXR as half floats; BW as float),
    then what a writer thread does with the frame read back.  Bakes write PNG as RGB; the writer itself
    follows any color mode, compared here with save_render in each."""
    frame_format = frame_format_of_scene(scene)
    if isinstance(frame_format, PngFormat):
        frame_format = replace(frame_format, channels=PNG_CHANNELS[scene.render.image_settings.color_mode])
    write_frame(frame_format, pixels, path, host)


def write_frame(frame_format, pixels, path, host):
    """``pixels`` through the readback ``frame_format`` asks for and a writer's conversion, into ``path``;
    returns what was encoded."""
    gpu_display = frame_format.gpu_display
    readback = FrameReadback(host, WIDTH, HEIGHT, frame_format.readback,
                             display=display_shader(gpu_display) if gpu_display is not None else None)
    frame = host.texture("frame", WIDTH, HEIGHT, "RGBA32F", np.asarray(pixels, np.float32))
    pixels = readback.read(readback.store(frame, readback.buffer()))
    with ThreadPoolExecutor(1) as pool:
        converter = frame_format.converter(pool)
        data = frame_format.file_pixels(pixels.copy(), converter and converter.result())
    encode(path, data, frame_format)
    return data


LOOKS = [
    ("Standard", "None", 0.0, 1.0),
    ("AgX", "None", 0.0, 1.0),
    ("AgX", "AgX - Punchy", 0.7, 1.4),
    ("Filmic", "Medium High Contrast", -0.5, 0.8),
    ("Khronos PBR Neutral", "None", 1.5, 1.0),
]


@pytest.mark.parametrize("color_mode", ["RGB", "RGBA", "BW"])
@pytest.mark.parametrize("view, look, exposure, gamma", LOOKS)
def test_png_matches_save_render_within_one_level(scene, host, tmp_path, rng, color_mode, view, look, exposure,
                                                  gamma):
    """RGB and RGBA through the GPU's display transform, BW on the CPU.  Blender's dither setting is at
    its maximum: save_render does not dither (measured: the same file at 0, 1 and 2), nor does the bake."""
    settings = scene.view_settings
    settings.view_transform, settings.look, settings.exposure, settings.gamma = view, look, exposure, gamma
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = color_mode
    scene.render.dither_intensity = 2.0
    pixels = sample_frame(rng)
    save_render(scene, pixels, tmp_path / "blender.png")
    write_with_writer(scene, pixels, tmp_path / "writer.png", host)
    expected, written = (read_image(tmp_path / name, "uint8").astype(int) for name in ("blender.png", "writer.png"))
    assert written.shape == expected.shape == (HEIGHT, WIDTH, {"BW": 1, "RGB": 3, "RGBA": 4}[color_mode])
    assert np.abs(written - expected).max() <= 1
    assert (expected == 255).any() and (expected < 16).any(), "the frame spans dark to clipped"


@pytest.mark.parametrize("color_mode", ["RGB", "RGBA", "BW"])
def test_sixteen_bit_png_matches_save_render(scene, host, tmp_path, rng, color_mode):
    scene.view_settings.view_transform = "AgX"
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_depth = "16"
    scene.render.image_settings.color_mode = color_mode
    pixels = sample_frame(rng)
    save_render(scene, pixels, tmp_path / "blender.png")
    write_with_writer(scene, pixels, tmp_path / "writer.png", host)
    expected, written = (read_image(tmp_path / name, "uint16").astype(int) for name in ("blender.png", "writer.png"))
    assert np.abs(written - expected).max() <= 257  # one 8-bit level


def test_exr_matches_save_render_as_half_floats(scene, host, tmp_path, rng):
    from tests.output.test_bake_modal import exr_channels

    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_mode = "RGBA"
    scene.render.image_settings.color_depth = "16"
    pixels = sample_frame(rng)
    pixels[0, 0] = (1e-5, 65504.0, 3.14159, 0.5)  # a denormal, the largest half, a value half float rounds
    save_render(scene, pixels, tmp_path / "blender.exr")
    write_with_writer(scene, pixels.astype(np.float16), tmp_path / "writer.exr", host)
    assert exr_channels(tmp_path / "writer.exr") == exr_channels(tmp_path / "blender.exr")
    expected, written = (read_image(tmp_path / name, "half") for name in ("blender.exr", "writer.exr"))
    np.testing.assert_array_equal(written.view(np.uint16), expected.view(np.uint16))


def test_exr_zip_at_deflate_level_one_other_codecs_as_the_scene_says(scene, host, tmp_path, rng):
    """ZIP, Blender's default codec, is written at deflate level ``ZIP_LEVEL`` (cheaper on dense frames, the same
    lossless pixels: formats/exr.py); the file still says ZIP, and every other codec goes as the scene names it."""
    assert scene.render.image_settings.exr_codec == "ZIP"
    for codec, compression in (("ZIP", f"zip:{ZIP_LEVEL}"), ("PIZ", "piz"), ("ZIPS", "zips"), ("DWAA", "dwaa")):
        scene.render.image_settings.exr_codec = codec
        assert ExrFormat.from_scene(scene).compression == compression
    scene.render.image_settings.exr_codec = "ZIP"
    scene.render.image_settings.file_format = "OPEN_EXR"
    write_with_writer(scene, sample_frame(rng).astype(np.float16), tmp_path / "writer.exr", host)
    oiio, _ = image_modules()
    image = oiio.ImageInput.open(str(tmp_path / "writer.exr"))
    try:
        assert image.spec().get_string_attribute("compression") == "zip"
    finally:
        image.close()


@pytest.mark.parametrize("half", [True, False])
@pytest.mark.parametrize("asynchronous", [True, False], ids=["pixel-pack", "blender-read"])
def test_readback_targets_hold_each_frame_as_drawn(host, rng, half, asynchronous, monkeypatch):
    """Two frames in flight: storing frame B does not disturb frame A, the half readback rounds as numpy,
    and rows come back top first, as files store them; the same through GL pixel-pack buffers (read
    without waiting, mapped read-only) and through Blender's synchronous read."""
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    monkeypatch.setattr(host, "_pixel_pack", PixelPack.load("OPENGL") if asynchronous else None)
    assert host.reads_without_waiting == asynchronous  # forced on here (llvmpipe) where the test asks
    frames = [sample_frame(rng) for _ in range(3)]
    textures = [host.texture(f"frame_{n}", WIDTH, HEIGHT, "RGBA32F", f) for n, f in enumerate(frames)]
    readback = FrameReadback(host, WIDTH, HEIGHT, HALF_RGBA if half else FLOAT_RGBA)
    buffers = [readback.buffer(), readback.buffer()]
    assert isinstance(buffers[0], PixelPackBuffer) == asynchronous
    pending = [readback.store(textures[0], buffers[0]), readback.store(textures[1], buffers[1])]
    host.clear(textures[0])  # queued after frame A's store: A as stored is what comes back
    dtype = np.float16 if half else np.float32
    for stored, frame in zip(pending, frames):
        pixels = readback.read(stored)
        np.testing.assert_array_equal(pixels, frame[::-1].astype(dtype))  # top row first
        assert pixels.flags.writeable != asynchronous
    third = readback.store(textures[2], buffers[0])  # the first target and buffer again (unmapped first)
    assert third.target == pending[0].target
    np.testing.assert_array_equal(readback.read(third), frames[2][::-1].astype(dtype))
    for buffer in buffers:
        readback.free(buffer)
    assert not asynchronous or buffers[0].name == 0


def test_pixel_pack_readback_is_off_where_the_environment_asks_or_gl_is_not_blenders(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    assert PixelPack.load("VULKAN") is None and PixelPack.load("METAL") is None
    assert PixelPack.load("OPENGL", platform="an-unknown-os") is None
    assert PixelPack.load("OPENGL", "llvmpipe (LLVM 15.0.6, 256 bits)") is None  # software: nothing to overlap
    assert PixelPack.load("OPENGL", "NVIDIA H100 80GB HBM3/PCIe/SSE2") is not None
    monkeypatch.setenv("GPU_PARTICLES_READBACK", "sync")
    assert PixelPack.load("OPENGL") is None


def full_disk(path, pixels, frame_format):
    """An encode that fails half way through its file."""
    path.write_bytes(b"half a file")
    raise OSError(28, "No space left on device")


def test_worker_error_surfaces_on_the_main_thread(scene, tmp_path, rng, monkeypatch):
    from addon.output import frame_writer

    writer = FrameWriter(frame_format_of_scene(scene), workers=2)
    monkeypatch.setattr(frame_writer, "encode", full_disk)
    released = []
    writer.submit(7, tmp_path / "f_0007.png", sample_frame(rng), release=lambda: released.append(7))
    with pytest.raises(FrameWriteError, match="Could not write frame 7 to .*f_0007.png': No space left on device"):
        writer.collect(wait=True)
    assert released == [7] and writer.failed and list(tmp_path.iterdir()) == []


def test_a_view_the_config_lacks_is_refused_before_any_frame(scene, tmp_path):
    from addon.output.bake import BakeError, BakeJob
    from tests.conftest import add_effect

    add_effect(count=1000)
    scene.display_settings.display_device = "sRGB"
    scene.view_settings.view_transform = "Standard"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OCIO", str(tmp_path / "config.ocio"))
        (tmp_path / "config.ocio").write_text(
            "ocio_profile_version: 2\nroles: {default: raw, scene_linear: raw}\n"
            "displays: {sRGB: [!<View> {name: Raw, colorspace: raw}]}\n"
            "colorspaces:\n  - !<ColorSpace> {name: raw, isdata: true}\n")
        with pytest.raises(BakeError, match="view 'Standard' is not a view of display 'sRGB'"):
            BakeJob(scene)
    assert not (tmp_path / "frames").exists() or not list((tmp_path / "frames").iterdir())


def test_png_follows_the_output_color_management_override(scene, host, tmp_path, rng):
    """Output properties > Color Management > Override: save_render uses the format's own view settings."""
    scene.view_settings.view_transform = "AgX"
    settings = scene.render.image_settings
    settings.file_format, settings.color_mode = "PNG", "RGB"
    settings.color_management = "OVERRIDE"
    settings.view_settings.view_transform, settings.view_settings.exposure = "Standard", -1.0
    pixels = sample_frame(rng)
    save_render(scene, pixels, tmp_path / "blender.png")
    write_with_writer(scene, pixels, tmp_path / "writer.png", host)
    expected, written = (read_image(tmp_path / name, "uint8").astype(int) for name in ("blender.png", "writer.png"))
    assert np.abs(written - expected).max() <= 1
    scene.render.image_settings.color_management = "FOLLOW_SCENE"
    write_with_writer(scene, pixels, tmp_path / "scene.png", host)
    assert np.abs(read_image(tmp_path / "scene.png", "uint8").astype(int) - expected).max() > 1, "the override mattered"


def exr_frame_format(scene):
    scene.render.image_settings.file_format = "OPEN_EXR"
    return frame_format_of_scene(scene)


def test_writer_threads_run_below_the_main_thread(scene, tmp_path, rng, monkeypatch):
    """Writer threads are niced (threads they start inherit it), so the main thread's readback, which feeds
    them, is not starved; the frames are as written without it."""
    import os
    import threading

    from addon.output import frame_writer

    priorities = []

    def recording(path, pixels, frame_format):
        priorities.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        encode(path, pixels, frame_format)

    monkeypatch.setattr(frame_writer, "encode", recording)
    main = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    pixels = sample_frame(rng).astype(np.float16)
    for nice, name in ((frame_writer.WRITER_NICE, "niced"), (0, "plain")):
        writer = FrameWriter(exr_frame_format(scene), workers=2, nice=nice)
        writer.submit(1, tmp_path / f"{name}.exr", pixels.copy())
        writer.collect(wait=True)
        writer.close()
    assert priorities == [min(19, main + frame_writer.WRITER_NICE), main]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main, "the main thread keeps its own"
    for name in ("niced.exr", "plain.exr"):
        np.testing.assert_array_equal(read_image(tmp_path / name, "half"), pixels)


@pytest.mark.parametrize("fail", [False, True])
def test_exr_compressed_on_the_writer_threads_while_such_a_writer_lives(scene, tmp_path, rng, monkeypatch, fail):
    """OpenEXR's shared pool is off while an EXR writer lives (exr_threads -1: each writer thread compresses its
    own frame) and back as it was after close, a failed write's close included; the frames are those the
    pool writes."""
    from addon.output import frame_writer

    oiio, _ = image_modules()
    before = oiio.get_int_attribute("exr_threads")
    pixels = sample_frame(rng).astype(np.float16)
    pooled = FrameWriter(exr_frame_format(scene), workers=2, exr_pool=True)
    assert oiio.get_int_attribute("exr_threads") == before
    pooled.submit(1, tmp_path / "pool.exr", pixels.copy())
    pooled.collect(wait=True)
    pooled.close()
    writer = FrameWriter(exr_frame_format(scene), workers=2, exr_pool=False)
    assert oiio.get_int_attribute("exr_threads") == -1
    writer.submit(1, tmp_path / "own.exr", pixels.copy())
    writer.collect(wait=True)
    if fail:
        monkeypatch.setattr(frame_writer, "encode", full_disk)
        writer.submit(2, tmp_path / "lost.exr", pixels.copy())
        with pytest.raises(FrameWriteError, match="No space left on device"):
            writer.collect(wait=True)
    writer.close()
    assert oiio.get_int_attribute("exr_threads") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["own.exr", "pool.exr"]
    for name in ("own.exr", "pool.exr"):
        np.testing.assert_array_equal(read_image(tmp_path / name, "half"), pixels)


def test_png_writers_leave_openexr_alone(scene):
    oiio, _ = image_modules()
    before = oiio.get_int_attribute("exr_threads")
    writer = FrameWriter(frame_format_of_scene(scene), workers=1)
    assert oiio.get_int_attribute("exr_threads") == before
    writer.close()


def niced_threads() -> int:
    """Threads of this process with a nice value above the main thread's (Linux: /proc/self/task/<tid>/stat's
    19th field)."""
    from pathlib import Path

    stats = (task / "stat" for task in Path("/proc/self/task").iterdir())
    nice = [int(stat.read_text().rsplit(")", 1)[1].split()[16]) for stat in stats if stat.exists()]
    return sum(value > nice[0] for value in nice)


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_openexr_pool_threads_are_niced_with_the_writers_and_restored(scene):
    """With ``exr_pool`` the pool's threads do the compressing: remade from a niced thread, they run below the
    main thread too; close remakes them at the main thread's priority."""
    oiio, _ = image_modules()
    before, others = oiio.get_int_attribute("exr_threads"), niced_threads()  # Mesa's disk cache thread is niced
    writer = FrameWriter(exr_frame_format(scene), workers=1, exr_pool=True)
    assert oiio.get_int_attribute("exr_threads") == before and niced_threads() == others + before
    writer.close()
    assert oiio.get_int_attribute("exr_threads") == before and niced_threads() == others


def test_waits_for_the_gpu_asleep_until_the_fence_signals_and_fail_clearly():
    """The fence is polled (with sleeps between looks, not the driver's spinning wait) until it signals;
    a failed wait is an error, not a hang."""
    from addon.hosts import gl_readback

    for statuses, fails in (([gl_readback.GL_WAIT_FAILED - 2, gl_readback.GL_ALREADY_SIGNALED], False),
                            ([gl_readback.GL_WAIT_FAILED - 2, gl_readback.GL_WAIT_FAILED], True)):
        looks = iter(statuses)
        gl = PixelPack({"glClientWaitSync": lambda fence, flags, timeout, looks=looks: next(looks)})
        if fails:
            with pytest.raises(RuntimeError, match="waiting for the GPU failed"):
                gl.sleep_until("fence")
        else:
            gl.sleep_until("fence")
        assert next(looks, None) is None  # looked until the answer, no further


def test_the_blender_host_sleeps_until_its_queued_work_is_done(host, monkeypatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    monkeypatch.setattr(host, "_pixel_pack", PixelPack.load("OPENGL"))
    texture = host.texture("idle", 64, 64, "RGBA32F", np.full((64, 64, 4), 0.5, np.float32))
    host.clear(texture, 0.25)
    host.sleep_until_idle()
    np.testing.assert_array_equal(host.read(texture), 0.25)


def test_a_driver_that_maps_no_pixel_pack_buffer_gets_blenders_read(host, rng, monkeypatch):
    """glMapBufferRange failing (a context without buffer storage): the host reads through Blender from
    then on, and frames come back as drawn."""
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    pack = PixelPack.load("OPENGL")
    real = pack.glMapBufferRange
    monkeypatch.setattr(pack, "glMapBufferRange", lambda *args: (real(*args), None)[1])
    monkeypatch.setattr(host, "_pixel_pack", pack)
    frame = sample_frame(rng)
    readback = FrameReadback(host, WIDTH, HEIGHT, HALF_RGBA)
    buffer = readback.buffer()
    assert not isinstance(buffer, PixelPackBuffer) and host._pixel_pack is None
    pixels = readback.read(readback.store(host.texture("frame", WIDTH, HEIGHT, "RGBA32F", frame), buffer))
    np.testing.assert_array_equal(pixels, frame[::-1].astype(np.float16))
