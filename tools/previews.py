"""Short animated previews of the shipped presets, with Blender's own movie output.

Each preset's stage is built as ``make bake`` builds it (``contact_sheet.preset_scene``),
its frames are rendered by the bake's renderer and written as PNG frames with the
scene's color management (as a bake writes them), then Blender's sequencer turns
them into an H.264 MP4 through the FFmpeg inside the ``bpy`` module::

    .venv/bin/python tools/previews.py --out docs/previews [--presets fire snow] [--stills out/looks]

``--stills DIR`` also keeps every preset's poster frame at full size as a PNG, to look at.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import contact_sheet  # noqa: E402

SIZE = (480, 270)
FRAMES = 48  # two seconds at 24 fps, through the poster frame
FPS = 24
MAX_KB = 400
QUALITIES = ("LOW", "VERYLOW", "LOWEST")  # Blender's constant rate factors, best first


def preview_frames(preset) -> tuple[int, int]:
    last = max(contact_sheet.poster_frame(preset), FRAMES)
    return last - FRAMES + 1, last


def render_to_pngs(name: str, size, folder: Path) -> tuple[list[Path], object]:
    """Bake the preset's preview frames into ``folder`` as PNGs; returns the paths and the preset."""
    import bpy

    import addon
    from addon.engine.settings.presets import load_preset
    from addon.scene.renderer import SceneRenderer

    first, last = preview_frames(load_preset(name))
    preset, scene = contact_sheet.preset_scene(name, size, (1, last), folder)
    try:
        renderer = SceneRenderer(scene, *size, exact_sort=True)
        image = bpy.data.images.new("preview", *size, alpha=True, float_buffer=True)
        paths = []
        for frame in range(first, last + 1):
            pixels = renderer.render(frame)
            pixels[..., 3] = 1.0  # over black, as a PNG bake (RGB) shows it: additive light has alpha 0
            image.pixels.foreach_set(pixels.ravel())
            path = folder / f"{name}_{frame:04d}.png"
            image.save_render(str(path), scene=scene)
            paths.append(path)
        bpy.data.images.remove(image)
        return paths, preset
    finally:
        addon.unregister()


def write_small_movie(frames: list[Path], size, out: Path) -> Path:
    """:func:`write_movie` at the best quality that stays under MAX_KB (sparse sparks compress badly)."""
    for quality in QUALITIES:
        write_movie(frames, size, out, quality)
        if out.stat().st_size <= MAX_KB * 1024:
            break
    return out


def write_movie(frames: list[Path], size, out: Path, quality: str = QUALITIES[0]) -> Path:
    """An H.264 MP4 of PNG frames through Blender's sequencer and FFmpeg (no color transform: the PNGs are display-ready)."""
    import bpy

    scene = bpy.data.scenes.new("preview movie")
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = 1, len(frames)
    scene.view_settings.view_transform = "Standard"
    scene.view_settings.look = "None"
    scene.sequence_editor_create()
    strip = scene.sequence_editor.strips.new_image("frames", str(frames[0]), 1, 1)
    for path in frames[1:]:
        strip.elements.append(path.name)
    settings = scene.render.image_settings
    settings.media_type = "VIDEO"
    settings.file_format = "FFMPEG"
    scene.render.ffmpeg.format = "MPEG4"
    scene.render.ffmpeg.codec = "H264"
    scene.render.ffmpeg.constant_rate_factor = quality
    scene.render.ffmpeg.ffmpeg_preset = "GOOD"
    scene.render.use_sequencer = True
    out.parent.mkdir(parents=True, exist_ok=True)
    scene.render.use_file_extension = False
    scene.render.filepath = str(out)
    bpy.ops.render.render(animation=True, scene=scene.name)
    bpy.data.scenes.remove(scene)
    if not out.is_file():
        raise RuntimeError(f"Blender's movie output wrote no {out}")
    return out


def main(argv=None) -> int:
    from addon.engine.settings.presets import preset_names

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "previews"), help="folder for <preset>.mp4")
    parser.add_argument("--presets", nargs="*", help="names (default: every shipped preset)")
    parser.add_argument("--size", default=f"{SIZE[0]}x{SIZE[1]}")
    parser.add_argument("--stills", help="also keep each preset's last frame as a PNG in this folder")
    args = parser.parse_args(argv)
    size = tuple(int(v) for v in args.size.lower().split("x"))
    for name in args.presets or preset_names():
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            frames, _ = render_to_pngs(name, size, Path(scratch))
            movie = write_small_movie(frames, size, Path(args.out) / f"{name}.mp4")
            if args.stills:
                Path(args.stills).mkdir(parents=True, exist_ok=True)
                (Path(args.stills) / f"{name}.png").write_bytes(frames[-1].read_bytes())
        print(f"previews: {movie} ({movie.stat().st_size / 1024:.0f} KB, {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
