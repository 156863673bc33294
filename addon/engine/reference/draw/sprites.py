"""Reference of the alpha sprites (sprites.py): sprite_footprint, the depth order, sprite_blend and the layer laid over
the frame (alpha_over: resolve.glsl with SPRITES_OVER).

In float32, in the kernels' order.  The tile lists between them (counts,
scan, instances, binning) are ``reference.tile_lists``, taken in depth order.
"""

from __future__ import annotations

import numpy as np

from ...draw.sprites import DEPTH_KEYS
from ...look.look import look_table, particle_look, variation
from ...order.tile_lists import TILE, TILE_CHUNK
from ...primitives.binning import ALL_KEYS
from ...seam.records import PARTICLE, SPRITE_SHAPE
from ..order.tile_lists import TileLists, pixel_rects
from ..primitives import binning
from ..seam.exact import transform_points
from .footprint import circles_of_confusion, widened
from .soft_particles import soft_fade

F = np.float32
U = np.uint32
HIDDEN_KEY = U(DEPTH_KEYS - 1)  # sprite_shape.glsl: a hidden sprite's key, after every other
NEAREST_KEYED_DISTANCE = F(1 / 1024)
DISTANCE_KEY_SHIFT = 12
FALLOFF = F(4.0)  # sprite_shape.glsl's SPRITE_FALLOFF
RIM = np.exp(-FALLOFF)  # what the Gaussian has left at the radius (sprite_blend.glsl)
OPAQUE_TRANSMITTANCE = F(1.0 / 4096.0)  # below it after a chunk, a pixel stops (sprite_blend.glsl)


def window_coordinates(clip, width, height) -> np.ndarray:
    """common.glsl's window_coordinates of clip positions (n, 4) with w > 0: (n, 3) pixels and depth."""
    ndc = clip[:, :3] / clip[:, 3:4]
    return np.column_stack([(ndc[:, :2] * F(0.5) + F(0.5)) * np.array([width, height], F),
                            ndc[:, 2] * F(0.5) + F(0.5)]).astype(F)


def footprints(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, sweep_seconds=0.0,
               origin=(0.0, 0.0, 0.0), ramp=None, focus=None):
    """sprite_footprint of one effect's particles: (shape, streak, color, key) per slot, shape (n, 4) the
    records.SPRITE_SHAPE texels, streak (n, 2) pixels (head minus tail), color (n, 4) premultiplied,
    key (n,) uint32 (HIDDEN_KEY and zeros elsewhere for a sprite that does not show); ``focus``: widened by
    the circle of confusion, fainter by the area ratio."""
    n = len(pos_age)
    pos_age, vel_life = np.asarray(pos_age, F), np.asarray(vel_life, F)
    particle = PARTICLE.read_images(pos_age, vel_life)
    position, velocity = particle["position"] + np.asarray(origin, F), particle["velocity"]
    age, life = particle["age"], particle["life"]
    center, streak, color = np.zeros((n, 2), F), np.zeros((n, 2), F), np.zeros((n, 4), F)
    radius, depth, key = np.zeros(n, F), np.zeros(n, F), np.full(n, HIDDEN_KEY, U)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        clip = transform_points(view_proj, position)
        alive = (age >= 0) & (age < life) & np.isfinite(position).all(axis=1)
        window = window_coordinates(clip, width, height)
        index = np.flatnonzero(alive & (clip[:, 3] > 0) & (window[:, 2] >= 0) & (window[:, 2] <= 1))
        window, w = window[index], clip[index, 3]
        look = particle_look(look_table(settings, ramp), age[index] / life[index], velocity[index], settings)
        size = variation(index, settings.size_random, settings.seed, "SIZE")
        radius_px = F(settings.size) * look[:, 3] * size * F(pixels_per_unit) / w
        alpha = F(settings.opacity) * np.minimum(F(3.14159265) * radius_px * radius_px, F(1))
        sharp = np.maximum(radius_px, F(1))
        radius_px = sharp
        if focus is not None:
            radius_px = widened(sharp, circles_of_confusion(focus, w))
            alpha = alpha * ((sharp / radius_px) * (sharp / radius_px))
        brightness = variation(index, settings.color_random, settings.seed, "BRIGHTNESS")
        color[index, :3] = look[:, :3] * (F(settings.emission_strength) * brightness * F(1))[:, None] * alpha[:, None]
        color[index, 3] = alpha
        if sweep_seconds > 0:
            tail = transform_points(view_proj, position[index] - velocity[index] * F(sweep_seconds))
            swept = np.isfinite(velocity[index]).all(axis=1) & (tail[:, 3] > 0)
            motion = window[swept, :2] - window_coordinates(tail[swept], width, height)[:, :2]
            streak[index[swept]] = motion
            window[swept, :2] -= F(0.5) * motion
        center[index], radius[index], depth[index] = window[:, :2], radius_px, window[:, 2]
        key[index] = depth_keys(view_proj, w, window[:, 2])
    shape = SPRITE_SHAPE.pack({"center": center, "radius": radius, "depth": depth})
    return shape, streak, color, key


def depth_keys(view_proj, distance, window_depth) -> np.ndarray:
    """sprite_shape.glsl's depth_key: a perspective camera's view distance as a float's exponent and top 11
    mantissa bits, an orthographic camera's (last row 0 0 0 1) window depth in 16-bit fixed point."""
    if not np.asarray(view_proj)[3, :3].any():
        key = (np.asarray(window_depth, F) * F(HIDDEN_KEY)).astype(U)
    else:
        bits = np.maximum(np.asarray(distance, F), NEAREST_KEYED_DISTANCE).view(U)
        key = (bits - NEAREST_KEYED_DISTANCE.view(U)) >> U(DISTANCE_KEY_SHIFT)
    return np.minimum(key, HIDDEN_KEY - U(1))


def depth_order(keys) -> np.ndarray:
    """The radix sort of the depth keys: sprites nearest first, equal keys in list order."""
    return binning.order(keys, ALL_KEYS)


def shared_footprints(shape, streak, color):
    """sprite_blend.glsl's share_footprint for every sprite: (shape with the inverse radius, streak over its
    squared length, color with the spread and the rim normalization folded in)."""
    shape, streak, color = np.asarray(shape, F).copy(), np.asarray(streak, F), np.asarray(color, F)
    lanes = SPRITE_SHAPE.read(shape)
    radius = lanes["radius"].copy()
    length2 = streak[:, 0] * streak[:, 0] + streak[:, 1] * streak[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.where(length2 > 0, radius / (radius + F(0.5) * np.sqrt(length2)), F(1)).astype(F)
        lanes["radius"][...] = np.where(radius > 0, F(1) / radius, F(0))
        along = np.where(length2[:, None] > 0, streak / length2[:, None], F(0)).astype(F)
    return shape, along, color * (spread / (F(1) - RIM))[:, None]


def blend(shape, streak, color, lists: TileLists, width, height, scene_depth=None, soft_depth=None):
    """sprite_blend: the layer (height, width, 4), every pixel's sprites under each other nearest first, the
    pixel stopping after a chunk of TILE_CHUNK that leaves it opaque (``scene_depth``: (height, width) window
    depth that hides sprites behind it; ``soft_depth``: soft_particles.SOFT_DEPTH, sprites fading into it).  Also returns each pixel's bound of the rounding: the sum over the
    sprites the pixel tests (their rectangle holds it, not hidden, the pixel not stopped) of their largest
    folded color channel times the transmittance in front of them (what an error of theirs reaches it by)."""
    tiles_x = -(-width // TILE)
    streak = np.asarray(streak, F)
    rects = pixel_rects(shape, streak, width, height)
    inverse, along, folded = shared_footprints(shape, streak, color)
    lanes = SPRITE_SHAPE.read(inverse)
    layer = np.zeros((height, width, 4), F)
    bound = np.zeros((height, width), np.float64)
    for tile in range(len(lists.counts)):
        y0, x0 = tile // tiles_x * TILE, tile % tiles_x * TILE
        y, x = np.mgrid[y0:min(y0 + TILE, height), x0:min(x0 + TILE, width)]
        at = np.stack([x, y], axis=-1).astype(F) + F(0.5)
        scene = F(1) if scene_depth is None else scene_depth[y, x]
        rgb, transmittance = np.zeros((*x.shape, 3), F), np.ones(x.shape, F)
        open_ = np.ones(x.shape, bool)
        items = lists.tile_list(tile)
        for k, sprite in enumerate(items):
            x_0, y_0, x_1, y_1 = rects[sprite]
            reaches = open_ & (x_0 <= x) & (x <= x_1) & (y_0 <= y) & (y <= y_1) & ~(lanes["depth"][sprite] > scene)
            bound[y, x] += np.where(reaches, transmittance * float(np.abs(folded[sprite]).max()), 0.0)
            offset = at - lanes["center"][sprite]
            toward = offset[..., 0] * along[sprite, 0] + offset[..., 1] * along[sprite, 1]
            offset = offset - np.clip(toward, F(-0.5), F(0.5))[..., None] * streak[sprite]
            corner = offset * lanes["radius"][sprite]
            distance2 = corner[..., 0] * corner[..., 0] + corner[..., 1] * corner[..., 1]
            covers = reaches & (distance2 < 1)
            fade = F(1) if soft_depth is None else soft_fade(lanes["depth"][sprite], scene, soft_depth)
            with np.errstate(over="ignore"):
                value = folded[sprite] * ((np.exp(-FALLOFF * distance2) - RIM) * fade)[..., None]
            rgb = np.where(covers[..., None], rgb + transmittance[..., None] * value[..., :3], rgb)
            transmittance = np.where(covers, transmittance * (F(1) - value[..., 3]), transmittance)
            if (k + 1) % TILE_CHUNK == 0:
                open_ &= transmittance >= OPAQUE_TRANSMITTANCE
        layer[y, x] = np.concatenate([rgb, (F(1) - transmittance)[..., None]], axis=-1)
    return layer, bound


def alpha_over(layer, frame) -> np.ndarray:
    """resolve.glsl with SPRITES_OVER: the premultiplied layer over the frame."""
    layer = np.asarray(layer, F)
    return (layer + (F(1) - layer[..., 3:]) * np.asarray(frame, F)).astype(F)
