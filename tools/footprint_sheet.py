"""Side by side: one preset's poster frame with one-pixel points, anti-aliased points, motion blur and depth of field.

Rendered by the bake's renderer (:class:`addon.scene.renderer.SceneRenderer`) at full
resolution with Blender's own settings switched per tile (the point filter,
``scene.render.use_motion_blur``, the camera's depth of field); a crop of each
is shown enlarged (nearest pixel) so single pixels stay visible::

    .venv/bin/python tools/footprint_sheet.py --out docs/footprints.png
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.contact_sheet import compose, save_png  # noqa: E402

VARIANTS = (  # label, point filter, motion blur shutter (frames) or None, (f-stop, focus distance) or None
    ("One pixel (before)", "ONE_PIXEL", None, None),
    ("Anti-aliased 2x2", "ANTIALIASED", None, None),
    ("+ motion blur, shutter 0.5", "ANTIALIASED", 0.5, None),
    ("+ depth of field, f/1 at 6 m", "ANTIALIASED", None, (1.0, 6.0)),
)


def render(name: str, size, variant):
    """The linear RGBA poster frame of preset ``name`` under one variant, rows bottom to top."""
    import addon
    from addon.cli import add_preset_effect, apply_lens, build_scene
    from addon.engine.settings.presets import load_preset
    from addon.scene.renderer import SceneRenderer

    _, point_filter, shutter, dof = variant
    preset = load_preset(name)
    poster = int(preset.stage.get("poster_frame", 24))
    with tempfile.TemporaryDirectory() as scratch:
        scene, _ = build_scene(preset, (1, poster), size, Path(scratch))
        addon.register()
        try:
            apply_lens(scene, shutter, dof)
            add_preset_effect(scene, name, preset)
            scene.gpu_particles.point_filter = point_filter
            return SceneRenderer(scene, *size).render(poster)
        finally:
            addon.unregister()


def crop(pixels, center, crop_size, zoom):
    """A crop_size window around ``center`` (fractions of the frame), enlarged ``zoom`` times (nearest pixel)."""
    height, width = pixels.shape[:2]
    x0 = min(max(int(center[0] * width - crop_size[0] / 2), 0), width - crop_size[0])
    y0 = min(max(int(center[1] * height - crop_size[1] / 2), 0), height - crop_size[1])
    window = pixels[y0:y0 + crop_size[1], x0:x0 + crop_size[0]]
    return window.repeat(zoom, axis=0).repeat(zoom, axis=1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "footprints.png"))
    parser.add_argument("--preset", default="default")
    parser.add_argument("--res", default="1920x1080")
    parser.add_argument("--center", default="0.5,0.55", help="crop center, fractions of the frame (x,y from bottom left)")
    parser.add_argument("--crop", default="320x180", help="crop size in frame pixels")
    parser.add_argument("--zoom", type=int, default=2)
    args = parser.parse_args(argv)
    size = tuple(int(v) for v in args.res.split("x"))
    crop_size = tuple(int(v) for v in args.crop.split("x"))
    center = tuple(float(v) for v in args.center.split(","))
    tiles = [(variant[0], crop(render(args.preset, size, variant), center, crop_size, args.zoom))
             for variant in VARIANTS]
    tile = (crop_size[0] * args.zoom, crop_size[1] * args.zoom)
    save_png(compose(tiles, columns=2, tile=tile), Path(args.out))
    print(f"footprint sheet: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
