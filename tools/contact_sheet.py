"""Contact sheet of every shipped preset, rendered by the project itself.

Each preset's stage (camera, emitter, orbit, motion blur, depth of field) is
built with the command line's ``build_scene``, the effect is added with the
``gpu_particles.add`` operator and its poster frame is rendered at 1920x1080 by
:class:`addon.scene.renderer.SceneRenderer`, the bake's renderer. The sheet shows a
480x270 crop of each frame at full resolution (the window with the most light),
drawn with its label into one offscreen image, saved as JPEG at ``QUALITY`` (the sheet travels with the tree:
under 500 KB)::

    .venv/bin/python tools/contact_sheet.py --out docs/presets.jpg
    .venv/bin/python tools/contact_sheet.py --out docs/presets.jpg --update --presets fire   # only fire's cell
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RENDER = (1920, 1080)  # each preset is rendered at 1080p ...
TILE = (480, 270)  # ... and the sheet shows a crop at full resolution, where the light is
LABEL_HEIGHT = 22
COLUMNS = 4
QUALITY = 75  # JPEG: 481 KB for the 16 presets' 1920x1168 sheet (85 would be 622 KB)


def preset_scene(name: str, size, frames, scratch: Path):
    """The preset's stage (camera, emitter, motion blur, DOF) with its effect added, as ``make bake`` builds it.

    Registers the add-on; the caller unregisters (``addon.unregister()``)."""
    import addon
    from addon.cli import add_preset_effect, build_scene
    from addon.engine.settings.presets import load_preset

    preset = load_preset(name)
    scene, _ = build_scene(preset, frames, size, scratch)
    addon.register()
    add_preset_effect(scene, name, preset)
    return preset, scene


def poster_frame(preset) -> int:
    return int(preset.stage.get("poster_frame", 24))


def render_frame(name: str, size=RENDER):
    """(preset, linear RGBA poster frame (height, width, 4), rows bottom to top) of one preset."""
    import addon
    from addon.engine.settings.presets import load_preset
    from addon.scene.renderer import SceneRenderer

    poster = poster_frame(load_preset(name))
    with tempfile.TemporaryDirectory() as scratch:
        preset, scene = preset_scene(name, size, (1, poster), Path(scratch))
        try:
            renderer = SceneRenderer(scene, *size)
            pixels = renderer.render(poster)
            print(f"contact sheet: {name} frame {poster}, {renderer.frame_stats.overflow} Emax overflows")
            return preset, pixels
        finally:
            addon.unregister()


def brightest_window(pixels, tile=TILE):
    """(x, y) of the tile-sized window holding the most light (a summed-area table over the luminance)."""
    import numpy as np

    light = pixels[..., :3].astype(np.float64).sum(axis=-1)
    table = np.zeros((light.shape[0] + 1, light.shape[1] + 1))
    table[1:, 1:] = light.cumsum(axis=0).cumsum(axis=1)
    w, h = tile
    sums = table[h:, w:] - table[:-h, w:] - table[h:, :-w] + table[:-h, :-w]
    y, x = np.unravel_index(np.argmax(sums), sums.shape)
    return int(x), int(y)


def crop(pixels, tile=TILE, center=None):
    """The tile-sized window around ``center`` (fractions of the width and height from the top left, as the
    preset's stage ``poster_window`` says for an effect wider than a tile), else the one with the most light."""
    if center is None:
        x, y = brightest_window(pixels, tile)
    else:
        height, width = pixels.shape[:2]
        x = min(max(round(center[0] * width - tile[0] / 2), 0), width - tile[0])
        y = min(max(round((1 - center[1]) * height - tile[1] / 2), 0), height - tile[1])  # rows run bottom to top
    return pixels[y:y + tile[1], x:x + tile[0]]


def compose(tiles, columns=None, tile=TILE):
    """Tiles (label, linear RGBA) on a dark grid with labels; returns 8-bit sRGB RGBA rows bottom to top."""
    import blf
    import gpu
    import numpy as np
    from gpu_extras.batch import batch_for_shader
    from mathutils import Matrix

    columns = columns or math.ceil(math.sqrt(len(tiles)))
    rows = -(-len(tiles) // columns)
    cell_w, cell_h = tile[0], tile[1] + LABEL_HEIGHT
    width, height = columns * cell_w, rows * cell_h
    offscreen = gpu.types.GPUOffScreen(width, height, format="RGBA8")
    shader = gpu.shader.from_builtin("IMAGE_SCENE_LINEAR_TO_REC709_SRGB")
    with offscreen.bind():
        framebuffer = gpu.state.active_framebuffer_get()
        framebuffer.clear(color=(0.02, 0.02, 0.025, 1.0))
        with gpu.matrix.push_pop():
            gpu.matrix.load_matrix(Matrix.Identity(4))
            gpu.matrix.load_projection_matrix(
                Matrix(((2 / width, 0, 0, -1), (0, 2 / height, 0, -1), (0, 0, 1, 0), (0, 0, 0, 1))))
            for index, (label, pixels) in enumerate(tiles):
                x = (index % columns) * cell_w
                y = height - (index // columns + 1) * cell_h
                data = gpu.types.Buffer("FLOAT", pixels.size, np.ascontiguousarray(pixels, dtype=np.float32).ravel())
                texture = gpu.types.GPUTexture(tile, format="RGBA32F", data=data)
                batch = batch_for_shader(shader, "TRI_STRIP", {
                    "pos": ((x, y), (x + tile[0], y), (x, y + tile[1]), (x + tile[0], y + tile[1])),
                    "texCoord": ((0, 0), (1, 0), (0, 1), (1, 1)),
                })
                gpu.state.blend_set("ALPHA_PREMULT")  # the frames are premultiplied: light adds, smoke covers
                shader.uniform_sampler("image", texture)
                batch.draw(shader)
                blf.size(0, 14)
                blf.color(0, 0.9, 0.9, 0.9, 1.0)
                blf.position(0, x + 8, y + tile[1] + 5, 0)
                blf.draw(0, label)
        pixels = np.array(framebuffer.read_color(0, 0, width, height, 4, 0, "UBYTE").to_list(), dtype=np.uint8)
    offscreen.free()
    return pixels.reshape(height, width, 4)


def place_cell(sheet, cell, index: int, columns: int = COLUMNS) -> None:
    """Put ``cell`` (one tile with its label, as ``compose`` draws it alone) into cell ``index`` of ``sheet``
    (rows bottom to top, as ``compose`` returns them)."""
    cell_h, cell_w = cell.shape[:2]
    x, y = (index % columns) * cell_w, sheet.shape[0] - (index // columns + 1) * cell_h
    if x + cell_w > sheet.shape[1] or y < 0:
        raise ValueError(f"cell {index} lies outside a {sheet.shape[1]}x{sheet.shape[0]} sheet")
    sheet[y:y + cell_h, x:x + cell_w] = cell


def load_sheet(path: Path):
    """The sheet ``save_sheet`` wrote: (height, width, 4) uint8, rows bottom to top."""
    import bpy
    import numpy as np

    image = bpy.data.images.load(str(path))
    try:
        width, height = image.size
        pixels = np.empty(width * height * 4, np.float32)
        image.pixels.foreach_get(pixels)
    finally:
        bpy.data.images.remove(image)
    return np.rint(pixels * 255).astype(np.uint8).reshape(height, width, 4)


def update_sheet(path: Path, names: list[str], tiles) -> None:
    """Replace the cells of ``tiles`` (name, label, crop) in the sheet at ``path``, whose cells hold ``names`` in
    order: the other presets' cells stay as they are."""
    sheet = load_sheet(path)
    rows = -(-len(names) // COLUMNS)
    expected = (rows * (TILE[1] + LABEL_HEIGHT), COLUMNS * TILE[0])
    if sheet.shape[:2] != expected:
        raise SystemExit(f"{path} is {sheet.shape[1]}x{sheet.shape[0]}, not the {expected[1]}x{expected[0]} sheet of "
                         f"{len(names)} presets: render the whole sheet (without --update)")
    for name, label, pixels in tiles:
        place_cell(sheet, compose([(label, pixels)], columns=1), names.index(name))
    save_sheet(sheet, path)


def save_sheet(pixels, path: Path) -> None:
    import bpy

    height, width, _ = pixels.shape
    image = bpy.data.images.new("contact_sheet", width, height, alpha=False)
    image.pixels.foreach_set((pixels.astype("float32") / 255).ravel())
    image.filepath_raw = str(path)
    image.file_format = "JPEG"
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(quality=QUALITY)
    bpy.data.images.remove(image)


def main(argv=None) -> int:
    from addon.engine.settings.presets import preset_names

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "presets.jpg"))
    parser.add_argument("--presets", nargs="*", help="names (default: every shipped preset)")
    parser.add_argument("--update", action="store_true",
                        help="render only --presets and replace their cells in the existing --out sheet")
    args = parser.parse_args(argv)
    shipped = preset_names()
    names = args.presets or shipped
    if args.update and not (args.presets and set(names) <= set(shipped)):
        parser.error(f"--update replaces the cells of shipped presets named by --presets ({', '.join(shipped)})")
    tiles = []
    for name in names:
        preset, pixels = render_frame(name)
        tiles.append((name, preset.label, crop(pixels, center=preset.stage.get("poster_window"))))
    if args.update:
        update_sheet(Path(args.out), shipped, tiles)
    else:
        save_sheet(compose([(label, pixels) for _, label, pixels in tiles], columns=COLUMNS), Path(args.out))
    print(f"contact sheet: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
