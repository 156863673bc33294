"""Reference of textured sprites (sprite_sheets.py): sprite_pose.glsl's angle and flipbook position,
flipbook.glsl's sampling (bilinear, clamped to the edge, texel centers at half-integers, as OpenGL samples) and
sprite_blend.glsl's relief shading."""

from __future__ import annotations

import numpy as np

from ...look.look import sprite_draw
from ...seam.tables import FLIPBOOK_BLENDS

F = np.float32


def sprite_angle(index, age, settings, velocity_px=None):
    """sprite_angle of particles ``index`` at ``age`` (``velocity_px`` (n, 2): their screen velocity)."""
    birth = F(settings.rotation) + F(settings.rotation_random) * (
        F(2) * sprite_draw(index, settings.seed, "ANGLE") - F(1))
    spin = F(settings.spin) * (F(1) - F(settings.spin_random) * sprite_draw(index, settings.seed, "SPIN"))
    angle = (birth + spin * np.asarray(age, F)).astype(F)
    if settings.rotation_align == "VELOCITY" and velocity_px is not None:
        v = np.asarray(velocity_px, F)
        moving = (v * v).sum(axis=1) > 0
        angle = angle + np.where(moving, np.arctan2(v[:, 1], v[:, 0]), 0).astype(F)
    return angle


def flipbook_position(index, age, life, settings):
    """flipbook_position: in [0, frames), the frame shown its floor."""
    frames = F(settings.flipbook_columns * settings.flipbook_rows)
    start = np.floor(F(settings.flipbook_random_start) * sprite_draw(index, settings.seed, "FRAME") * frames)
    age, life = np.asarray(age, F), np.asarray(life, F)
    if settings.flipbook_mode == "RATE":
        played = age * F(settings.flipbook_rate)
    else:
        played = np.clip(age / life, 0, 1).astype(F) * (frames - F(1))
    position = (start + played).astype(F)
    return (position - frames * np.floor(position / frames)).astype(F)


def bilinear(image, uv):
    """``image`` (h, w, c) sampled at ``uv`` (n, 2) in [0, 1] (v up from the first row), clamped to the edge."""
    h, w = image.shape[:2]
    x = np.asarray(uv[:, 0], np.float64) * w - 0.5
    y = np.asarray(uv[:, 1], np.float64) * h - 0.5
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]

    def at(xi, yi):
        return image[np.clip(yi, 0, h - 1).astype(int), np.clip(xi, 0, w - 1).astype(int)]

    return ((at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx) * (1 - fy)
            + (at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx) * fy)


def flipbook_uv(settings, frame, uv):
    """Where ``uv`` (n, 2) of frames ``frame`` (n,) lies on the sheet (frame 0 top left)."""
    columns, rows = settings.flipbook_columns, settings.flipbook_rows
    cell = np.column_stack([frame % columns, rows - 1 - frame // columns]).astype(np.float64)
    return (cell + np.clip(uv, 0, 1)) / np.array([columns, rows], np.float64)


def flipbook_texel(sheet, vectors, settings, position, uv):
    """flipbook_texel of ``sheet`` (h, w, 4) at flipbook ``position`` (n,) and ``uv`` (n, 2) of the sprite."""
    frames = settings.flipbook_columns * settings.flipbook_rows
    position = np.asarray(position, np.float64)
    uv = np.asarray(uv, np.float64)
    a = np.minimum(position.astype(int), frames - 1)
    blend = settings.flipbook_blend if vectors is not None or settings.flipbook_blend != "MOTION_VECTORS" else "FRAMES"
    mixed = np.zeros_like(position) if FLIPBOOK_BLENDS[blend] == FLIPBOOK_BLENDS["NONE"] else position - a
    b = (a + 1) % frames
    uv_a, uv_b = uv, uv
    if blend == "MOTION_VECTORS":
        strength = settings.flipbook_vector_strength
        flow_a = (bilinear(vectors, flipbook_uv(settings, a, uv))[:, :2] * 2 - 1) * strength
        flow_b = (bilinear(vectors, flipbook_uv(settings, b, uv))[:, :2] * 2 - 1) * strength
        uv_a = uv - flow_a * mixed[:, None]
        uv_b = uv + flow_b * (1 - mixed)[:, None]
    texel_a = bilinear(sheet, flipbook_uv(settings, a, uv_a))
    texel_b = bilinear(sheet, flipbook_uv(settings, b, uv_b))
    return texel_a + (texel_b - texel_a) * mixed[:, None]


def sprite_lights(light_direction, angle, relief):
    """sprite_footprint's SPRITE_LIGHTS: (n, 2) light directions on screen turned into the sprites' frames by
    ``angle`` (n,), times ``relief``."""
    seen = np.asarray(light_direction, np.float64) * relief
    c, s = np.cos(angle), np.sin(angle)
    return np.column_stack([c * seen[:, 0] + s * seen[:, 1], c * seen[:, 1] - s * seen[:, 0]])


def relief_shade(normals, vectors, settings, position, uv, lights):
    """sprite_blend's relief factor max(0, 1 + n . l): ``normals`` (h, w, 4) the sheet's (sprite_sheets.alpha_normals
    or decoded_normals) read where flipbook_texel reads the color, ``lights`` (n, 2) the sprites' (sprite_lights)."""
    normal = flipbook_texel(normals, vectors, settings, position, uv)[:, :2]
    return np.maximum(0.0, 1.0 + (normal * np.asarray(lights, np.float64)).sum(axis=1))
