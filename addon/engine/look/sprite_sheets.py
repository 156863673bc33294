"""Textured sprites: an image or a flipbook sheet as each sprite's color and alpha, turned by angle and spin.

An effect whose ``sprite_image`` names an image (a Blender image or a file:
``Host.sprite_image`` reads it) draws it instead of the soft round sprite, on
both paths a sprite takes:

* Alpha effects, the tile compositor (``sprites.py``): the textured
  ``sprite_footprint`` writes each sprite's sheet slot, angle and flipbook
  position into ``sprite_frames``, and the textured ``sprite_blend`` samples
  the sheet of that slot where the sprite covers a pixel (a frame's textured
  Alpha effects share one blend: up to SPRITE_SHEETS sheets, each a slot).
* Add effects of the Sprite and Stretched types, the rasterized quads
  (``raster.py``): the quad turns by the angle and samples the sheet (``RELIEF_QUADS``: and shades it).

A lit textured effect with *Relief* (``has_relief``) is shaded across each sprite's face: the light pass writes
where each particle's light comes from on the camera's axes (``PARTICLE_LIGHT_DIRECTION``), the footprint (an
additive quad's vertex stage) turns it into the sprite's frame times the relief (``SPRITE_LIGHTS``), and the blend
(the quad's fragment stage) multiplies the sprite's color by
``max(0, 1 + n . l)``, n the normal's xy from the sheet's normals (``alpha_normals``: the alpha as a height,
its edges sloping away; or a normal map sheet, ``decoded_normals``).  For a sprite whose alpha reaches 0 at its
edge and is point symmetric, n . l averages to 0 over the alpha: relief moves light across the face and keeps
its total.  (A Both effect's glow is shaded with its light: the footprint has their sum.)

The texture spans the square of the sprite's size (its radius is half the
square's side), so a textured footprint reaches sqrt(2) times the radius (the
square's corners).  The pose is a function of the slot, the seed and the age
(``sprite_pose.glsl``), the sampling ``flipbook.glsl``; their numpy reference
is ``reference/look/sprite_sheets.py``, the tests ``tests/engine/look/test_sprite_textures.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..seam.kernels import Constant, Feature, Image, Plans, Sampler
from ..seam.tables import FLIPBOOK_BLENDS, SIZES
from ..settings.settings import SettingsError
from .lighting import is_lit

MAX_SHEETS = SIZES["SPRITE_SHEETS"]
# Sheets wider or taller than this are refused (a 16K sheet is 4 GiB of float pixels to read and 2 GiB to upload):
# 8x8 frames of 1024 pixels fit.  A GPU with a lower texture limit refuses from its limit.
MAX_SHEET_SIZE = 8192
SHEET_FORMAT = "RGBA16F"  # a float image's sheet: 8 bytes a texel, HDR kept
# An 8-bit image's sheet keeps its bytes: an sRGB one's colors as SRGB8_A8 (the GPU decodes them to linear before
# it filters), others (and vector sheets) as RGBA8: half the memory, and NVIDIA's texture units filter 4-byte
# texels at twice the rate of 8-byte ones.
SRGB_SHEET_FORMAT, BYTE_SHEET_FORMAT = "SRGB8_A8", "RGBA8"
NORMALS_FORMAT = "RGBA8"  # a sheet's normals' x and y as bytes (encoded_normals)

SHEET = Constant("VEC4", "sprite_sheet", components=(
    ("sheet_slot", "x"),  # 1 + the sheet's slot in the frame's blend (0: the soft round sprite)
    ("sheet_frames", "y"),  # rows x columns
    ("sheet_rate", "z"),  # sheet frames per second; negative: once over the particle's life
    ("sheet_random_start", "w"),  # flipbook_random_start
))
ROTATION = Constant("VEC4", "sprite_rotation", components=(
    ("rotation_angle", "x"), ("rotation_random", "y"), ("spin_speed", "z"), ("spin_random", "w")))
ALIGN = Constant("INT", "rotation_align")  # 1: turned to the screen velocity too
GRID = Constant("VEC4", "sheet_grid", components=(
    ("sheet_columns", "x"), ("sheet_rows", "y"), ("sheet_blend", "z"), ("vector_strength", "w")))
GRIDS = Constant("VEC4", "sheet_grids", MAX_SHEETS)  # the blend's: each slot's GRID
REACH = Constant("FLOAT", "sheet_reach")  # a textured footprint's radius over its square's half side (sheet_reach)
REACHES = Constant("FLOAT", "sheet_reaches", MAX_SHEETS)  # the blend's: each slot's REACH
POSE_CONSTANTS = (SHEET, ROTATION, ALIGN)
SPRITE_FRAMES = "sprite_frames"  # per sprite: (slot, cos, sin, flipbook position)
# Relief: where a particle's light comes from (the light pass, per slot: xy on the camera's right and up axes,
# weighted by each light's share of the radiance), and per sprite that in its frame times the relief.
PARTICLE_LIGHT_DIRECTION = Sampler("particle_light_direction")
SPRITE_LIGHTS = "sprite_lights"
LIGHTS_FORMAT = "RGBA16F"
RELIEF = Constant("FLOAT", "sprite_relief")


@dataclass(frozen=True)
class SheetImage:
    """An image a host found for a sprite setting: ``key`` changes when its pixels may have (a new upload),
    ``size`` (width, height) is known before ``read`` (linear: color managed to linear RGB) gives them;
    ``eight_bit``: a byte a channel, ``srgb``: those bytes sRGB-encoded colors (``read(False)`` gives them as stored)."""

    key: tuple
    size: tuple[int, int]
    read: Callable[[bool], np.ndarray]  # (height, width, 4) float32, bottom row first
    eight_bit: bool = False
    srgb: bool = False

    def stored(self, linear: bool) -> tuple[str, bool]:
        """(texture format, read linear) of this image's sheet, for colors (``linear``) or vectors."""
        if not self.eight_bit:
            return SHEET_FORMAT, linear
        if linear and self.srgb:
            return SRGB_SHEET_FORMAT, False  # decoded by the GPU
        return BYTE_SHEET_FORMAT, linear


def is_textured(settings) -> bool:
    """Whether the effect draws an image: it names one and draws sprites (Alpha effects always do)."""
    return bool(settings.sprite_image) and (settings.blend_mode == "ALPHA" or settings.particle_type != "POINT")


def has_relief(settings) -> bool:
    """Whether a textured effect's lights shade its sprites across their faces (Relief on a Lit or Both effect)."""
    return settings.sprite_relief > 0.0 and is_textured(settings) and is_lit(settings)


def check_sheet(source: str, size: tuple[int, int], settings, max_texture_size: int) -> None:
    """Refuse an image the GPU cannot take or a grid that does not divide it, saying which and why."""
    width, height = size
    limit = min(MAX_SHEET_SIZE, max_texture_size)
    if width <= 0 or height <= 0:
        raise SettingsError(f"sprite image '{source}' has no pixels (is its file missing?)")
    if width > limit or height > limit:
        raise SettingsError(f"sprite image '{source}' is {width}x{height} pixels; sprite sheets may be at most "
                            f"{limit} a side: scale it down")
    columns, rows = settings.flipbook_columns, settings.flipbook_rows
    if width % columns or height % rows:
        raise SettingsError(f"sprite image '{source}' ({width}x{height} pixels) does not divide into "
                            f"{columns} columns and {rows} rows of whole frames")


def check_images(settings, host) -> None:
    """What a draw of the effect would refuse of its images (missing, too large, frames not dividing), up front."""
    if is_textured(settings):
        for source in filter(None, (settings.sprite_image, settings.flipbook_vectors, settings.sprite_normals)):
            check_sheet(source, host.sprite_image(source).size, settings, host.max_texture_size)


def pose_values(settings, slot: int) -> dict:
    """POSE_CONSTANTS, packed, for an effect drawing sheet ``slot`` (-1: none, the soft round sprite)."""
    rate = settings.flipbook_rate if settings.flipbook_mode == "RATE" else -1.0
    values = {
        "sheet_slot": float(slot + 1), "sheet_frames": float(settings.flipbook_columns * settings.flipbook_rows),
        "sheet_rate": rate, "sheet_random_start": settings.flipbook_random_start,
        "rotation_angle": settings.rotation, "rotation_random": settings.rotation_random,
        "spin_speed": settings.spin, "spin_random": settings.spin_random,
        "rotation_align": int(settings.rotation_align == "VELOCITY"),
    }
    return {constant.name: constant.pack(values) for constant in POSE_CONSTANTS}


def grid(settings) -> tuple[float, float, float, float]:
    """GRID, packed: the sheet's frames across and down, how frames blend, the vectors' strength."""
    blend = settings.flipbook_blend if settings.flipbook_vectors or settings.flipbook_blend != "MOTION_VECTORS" \
        else "FRAMES"  # motion vectors without a vector sheet: frames mixed
    return GRID.pack({"sheet_columns": settings.flipbook_columns, "sheet_rows": settings.flipbook_rows,
                      "sheet_blend": FLIPBOOK_BLENDS[blend], "vector_strength": settings.flipbook_vector_strength})


def sheet_reach(pixels: np.ndarray, columns: int, rows: int, vector_strength: float | None = None) -> float:
    """How far from a frame's center, in half sides of its square, the sheet can be seen: the farthest texel
    with alpha, plus one texel's diagonal (bilinear sampling spreads it that far) and, with motion vectors of
    ``vector_strength``, the farthest a vector moves a sample; at most sqrt(2), the square's corners.

    A textured sprite's footprint reaches this far instead of the corners, so a round puff on a square sheet
    bins into the tiles of its circle, not of the square's circumcircle (half the tile pairs): the pixels left
    out sampled alpha 0 and changed nothing."""
    height, width = pixels.shape[:2]
    cell_w, cell_h = width // columns, height // rows
    across2 = ((np.arange(width) % cell_w + 0.5) / cell_w * 2.0 - 1.0) ** 2  # (x from the frame's center)^2
    up2 = ((np.arange(height) % cell_h + 0.5) / cell_h * 2.0 - 1.0) ** 2
    farthest2 = -1.0
    for start in range(0, height, 512):  # a row band at a time: an 8192^2 sheet without a 512 MB temporary
        seen = pixels[start:start + 512, :, 3] > 0.0
        if seen.any():
            band = np.where(seen, across2[None, :], -1.0).max(axis=1)
            farthest2 = max(farthest2, float((band + np.where(band >= 0.0, up2[start:start + 512], 0.0)).max()))
    if farthest2 < 0.0:
        farthest2 = 0.0  # nothing to see: the footprint shrinks to the margin
    reach = math.sqrt(farthest2) + math.hypot(2.0 / cell_w, 2.0 / cell_h)
    if vector_strength is not None:
        reach += 2.0 * math.sqrt(2.0) * abs(vector_strength)  # a vector texel moves uv by up to strength x sqrt(2)
    return min(reach, math.sqrt(2.0))


def alpha_normals(pixels: np.ndarray, columns: int, rows: int) -> np.ndarray:
    """Normals of each frame of a sheet (h, w, 4: straight alpha in 3) taking its alpha as a height over the
    frame's square (2 wide): (h, w, 4) float32 with the normal's x and y (its z the rest of a unit vector).

    Central differences within each frame, one-sided at its edges (no frame leaks into the next); an edge
    where alpha falls from 1 to 0 over half the square slopes at 45 degrees (n.xy of length 0.71)."""
    height, width = pixels.shape[:2]
    cell_w, cell_h = width // columns, height // rows
    normals = np.zeros((height, width, 4), np.float32)
    for row in range(rows):  # a row of frames at a time: an 8192^2 sheet without whole-sheet temporaries
        band = pixels[row * cell_h:(row + 1) * cell_h, :, 3].astype(np.float32).reshape(cell_h, columns, cell_w)
        dx = np.gradient(band, axis=2) * (cell_w / 2.0) if cell_w > 1 else np.zeros_like(band)
        dy = np.gradient(band, axis=0) * (cell_h / 2.0) if cell_h > 1 else np.zeros_like(band)
        scale = 1.0 / np.sqrt(1.0 + dx * dx + dy * dy)
        normals[row * cell_h:(row + 1) * cell_h, :, 0] = (-dx * scale).reshape(cell_h, width)
        normals[row * cell_h:(row + 1) * cell_h, :, 1] = (-dy * scale).reshape(cell_h, width)
    return normals


def encoded_normals(normals: np.ndarray) -> np.ndarray:
    """Normals' x and y (alpha_normals' texels) as NORMALS_FORMAT's [0, 1] values: byte 128 + 127 n, so that 0 is
    a byte exactly (the shaders' normal_of decodes)."""
    encoded = np.full(normals.shape, 128.0 / 255.0, np.float32)
    encoded[..., :2] = (np.rint(np.clip(normals[..., :2], -1.0, 1.0) * 127.0) + 128.0) / 255.0
    return encoded


def stored_normals(normals: np.ndarray) -> np.ndarray:
    """What a sheet's normals are once stored and decoded (encoded_normals to a byte and back)."""
    stored = np.zeros(normals.shape, np.float32)
    stored[..., :2] = np.rint(np.clip(normals[..., :2], -1.0, 1.0) * 127.0) / 127.0
    return stored


def decoded_normals(pixels: np.ndarray) -> np.ndarray:
    """A tangent-space normal map's pixels (h, w, 4: RGB = (n + 1) / 2, green up) as alpha_normals' texels: the
    normal made unit (a black texel: facing the camera), its x and y."""
    n = pixels[..., :3].astype(np.float32) * 2.0 - 1.0
    length = np.sqrt((n * n).sum(axis=-1, keepdims=True))
    n = np.where(length > 1e-6, n / np.maximum(length, 1e-6), 0.0)
    return np.concatenate([n[..., :2], np.zeros(n.shape[:2] + (2,), np.float32)], axis=-1).astype(np.float32)


# The features of the kernels that draw textured sprites (``Kernel.for_effect``).  sprite_footprint, in a frame with
# textured Alpha sprites (``sheet_slot=``: the effect's slot, None in a frame without): each sprite's pose written into
# SPRITE_FRAMES; with relief in the frame (``relief=``) its light in its frame too, times RELIEF, into SPRITE_LIGHTS.
# Bound from a FootprintDraw (sprites.py).
POSED = Feature("posed", defines=(("SPRITE_TEXTURE", "1"),), images=(Image(SPRITE_FRAMES, "RGBA32F", "WRITE"),),
                constants=(*POSE_CONSTANTS, REACH), includes=("sprite_pose.glsl",),
                wants=lambda settings, frame: frame["sheet_slot"] is not None,
                binds=lambda draw: {SPRITE_FRAMES: draw.sprites.frames}, source="footprints")
RELIEF_FOOTPRINT = Feature(
    "relief", defines=(("SPRITE_RELIEF", "1"),), images=(Image(SPRITE_LIGHTS, LIGHTS_FORMAT, "WRITE"),),
    samplers=(PARTICLE_LIGHT_DIRECTION,), constants=(RELIEF,), requires=(POSED.name,),
    wants=lambda settings, frame: frame["relief"],
    binds=lambda draw: {SPRITE_LIGHTS: draw.sprites.lights, PARTICLE_LIGHT_DIRECTION.name: draw.light_direction},
    source="footprints")
# raster_quads drawing an Add effect's sheet (``textured=``: the frame keeps sheets and the effect names one), posed;
# with relief (``has_relief``) shading it by the particle's light (PARTICLE_LIGHT_DIRECTION, RELIEF) and the sheet's
# normals (``sheet_normals``: SpriteSheets.normals).  Bound from a QuadSheets.
TEXTURED_QUADS = Feature(
    "textured", defines=(("SPRITE_TEXTURE", "1"),), samplers=(Sampler("sheet_image"), Sampler("sheet_vectors")),
    constants=(*POSE_CONSTANTS, GRID), includes=("sprite_pose.glsl", "flipbook.glsl"), varyings=(("FLOAT", "v_frame"),),
    wants=lambda settings, frame: frame["textured"],
    binds=lambda quads: dict(zip(("sheet_image", "sheet_vectors"), quads.sheets.pair(quads.system.settings))),
    source="sheets")
RELIEF_QUADS = Feature(
    "relief", defines=(("SPRITE_RELIEF", "1"),), samplers=(PARTICLE_LIGHT_DIRECTION, Sampler("sheet_normals")),
    constants=(RELIEF,), varyings=(("VEC2", "v_lights"),), requires=(TEXTURED_QUADS.name,),
    wants=lambda settings, frame: has_relief(settings),
    binds=lambda quads: {"sheet_normals": quads.sheets.normals(quads.system.settings),
                         PARTICLE_LIGHT_DIRECTION.name: quads.system.particle_light_direction},
    source="sheets")


SHEET_SAMPLERS = tuple(Sampler(f"sheet_{kind}_{slot}") for slot in range(MAX_SHEETS) for kind in ("image", "vectors"))
NORMAL_SAMPLERS = tuple(Sampler(f"sheet_normals_{slot}") for slot in range(MAX_SHEETS))


def quad_values(settings) -> dict:
    """The constants a textured quad draw of one effect takes (TEXTURED_QUADS', RELIEF_QUADS' with relief)."""
    values = {**pose_values(settings, 0), GRID.name: grid(settings)}
    if has_relief(settings):
        values[RELIEF.name] = settings.sprite_relief
    return values


class QuadSheets(NamedTuple):
    """What a textured quad draw's features bind (``Kernel.bindings(sheets=...)``): the sheets of ``system``'s
    effect."""

    sheets: SpriteSheets
    system: object


class SpriteSheets:
    """GPU copies of the images effects name, kept while the host's key for each is unchanged (a viewport
    draw re-reads nothing), and which effect's sheet goes to which slot of a frame's blend."""

    def __init__(self, host):
        self.host = host
        self._kept: dict[tuple[str, bool], tuple[tuple, object]] = {}  # (source, linear) -> (key, texture)
        self._reaches: dict[tuple, float] = {}  # (source, its key, columns, rows) -> sheet_reach of its pixels
        self._normals: dict[tuple, tuple[tuple, object]] = {}  # (source, normal map?, columns, rows) -> (key, texture)
        self._blends = Plans()  # blend_slots' bindings and constants, by the textures, grids and reaches they hold
        self.blank = host.texture("sprite_sheet_blank", 1, 1, SHEET_FORMAT, np.zeros(4, np.float32))
        self.flat = host.texture("sprite_normals_flat", 1, 1, NORMALS_FORMAT, encoded_normals(np.zeros(4, np.float32)))

    def texture(self, source: str, settings, linear: bool = True):
        """The GPU texture of ``source`` (``linear``: colors; vectors are read as stored)."""
        image = self.host.sprite_image(source)
        kept = self._kept.get((source, linear))
        if kept is not None and kept[0] == image.key:
            return kept[1]
        check_sheet(source, image.size, settings, self.host.max_texture_size)
        texture_format, read_linear = image.stored(linear)
        pixels = image.read(read_linear)
        texture = self.host.texture(f"sprite_sheet {source}", *image.size, texture_format, pixels)
        self.host.sampling(texture, True)
        self._kept[(source, linear)] = (image.key, texture)
        if linear:
            columns, rows = settings.flipbook_columns, settings.flipbook_rows
            self._reaches[(source, image.key, columns, rows)] = sheet_reach(pixels, columns, rows)
        return texture

    def reach(self, settings) -> float:
        """REACH of an effect's sheet (its texture made first, by ``pair``: the image's key is not asked twice a
        draw): its frames' reach, widened by its vectors'."""
        key = self._kept[(settings.sprite_image, True)][0]
        reach = self._reaches.get((settings.sprite_image, key, settings.flipbook_columns, settings.flipbook_rows))
        if reach is None:  # the same image kept for another grid: its pixels read again
            self._kept.pop((settings.sprite_image, True))
            self.texture(settings.sprite_image, settings)
            return self.reach(settings)
        if grid(settings)[2] == FLIPBOOK_BLENDS["MOTION_VECTORS"]:
            reach = min(reach + 2.0 * math.sqrt(2.0) * abs(settings.flipbook_vector_strength), math.sqrt(2.0))
        return reach

    def pair(self, settings) -> tuple:
        """(sheet, vectors) textures of an effect (vectors: the blank one when it has none)."""
        vectors = settings.flipbook_vectors
        return (self.texture(settings.sprite_image, settings),
                self.texture(vectors, settings, linear=False) if vectors else self.blank)

    def normals(self, settings):
        """The texture of an effect's sheet normals: its normal map sheet's, or its image's alpha_normals (its
        sheet made first, by ``pair``: the image's key is not asked twice a draw)."""
        normal_map = bool(settings.sprite_normals)
        source = settings.sprite_normals or settings.sprite_image
        image = self.host.sprite_image(source) if normal_map else None
        key = image.key if normal_map else self._kept[(source, True)][0]
        entry = (source, normal_map, settings.flipbook_columns, settings.flipbook_rows)
        kept = self._normals.get(entry)
        if kept is not None and kept[0] == key:
            return kept[1]
        image = image or self.host.sprite_image(source)
        check_sheet(source, image.size, settings, self.host.max_texture_size)
        pixels = image.read(not normal_map)
        texels = decoded_normals(pixels) if normal_map else alpha_normals(pixels, *entry[2:])
        texture = self.host.texture(f"sprite_normals {source}", *image.size, NORMALS_FORMAT, encoded_normals(texels))
        self.host.sampling(texture, True)
        self._normals[entry] = (image.key, texture)
        return texture


    def blend_slots(self, settings_list) -> tuple[list[int], dict, dict] | None:
        """Each effect's slot (-1: untextured), the blend's sampler bindings and constants (GRIDS, REACHES), for
        a frame's Alpha effects; None when none is textured.  Effects naming the same images share a slot.  When
        one has relief (has_relief) the bindings hold every slot's normals too (NORMAL_SAMPLERS)."""
        slots, pairs, grids, reaches, normals = [], {}, [], [], []
        relief = any(map(has_relief, settings_list))
        for settings in settings_list:
            if not is_textured(settings):
                slots.append(-1)
                continue
            key = (settings.sprite_image, settings.flipbook_vectors, grid(settings), settings.sprite_normals)
            if key not in pairs:
                if len(pairs) == MAX_SHEETS:
                    raise SettingsError(f"at most {MAX_SHEETS} different sprite images can be drawn by the Alpha "
                                        f"effects of one frame; {len(pairs) + 1} or more are")
                pairs[key] = (len(pairs), self.pair(settings))
                grids.append(key[2])
                reaches.append(self.reach(settings))
                normals.extend([self.normals(settings)] if relief else [])
            slots.append(pairs[key][0])
        if not pairs:
            return None
        key = (tuple(id(texture) for _, pair in pairs.values() for texture in pair), tuple(grids), tuple(reaches),
               tuple(map(id, normals)))
        return (slots, *self._blends.of(key, self._blend, pairs, grids, reaches, normals))

    def _blend(self, pairs: dict, grids: list, reaches: list, normals: list) -> tuple[dict, dict]:
        """The blend's sampler bindings and constants (read-only: a draw binds the same ones again)."""
        bindings = {}
        for slot in range(MAX_SHEETS):
            sheet, vectors = next((pair for s, pair in pairs.values() if s == slot), (self.blank, self.blank))
            bindings[f"sheet_image_{slot}"], bindings[f"sheet_vectors_{slot}"] = sheet, vectors
            if normals:
                bindings[NORMAL_SAMPLERS[slot].name] = normals[slot] if slot < len(normals) else self.flat
        grid_array = np.zeros((MAX_SHEETS, 4), np.float32)
        grid_array[:len(grids)] = grids
        grid_array[len(grids):, :2] = 1.0  # unused slots: a 1x1 grid
        reach_array = np.full((MAX_SHEETS, 1), math.sqrt(2.0), np.float32)  # (size, 1): a float array
        reach_array[:len(reaches), 0] = reaches
        grid_array.flags.writeable = reach_array.flags.writeable = False
        return bindings, {GRIDS.name: grid_array, REACHES.name: reach_array}
