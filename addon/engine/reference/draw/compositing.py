"""Reference of splat.glsl and resolve.glsl: exact integer accumulation, float resolve."""

from __future__ import annotations

import numpy as np

from ...draw.compositing import CHANNEL_MAX
from ...look.look import look_at, look_table, particle_look, variation
from ...seam.records import PARTICLE
from ..seam.exact import transform_points
from ..seam.state import alive

F = np.float32
U = np.uint32
LOW21 = U(CHANNEL_MAX[0])  # the low 21 bits of a word: R of accum_hi, B of accum_lo (color_pack.glsl)


def splat(pos_age, vel_life, view_proj, width, height, settings, emax, pixels_per_unit, ramp=None, scene_depth=None,
          tint=None):
    """Integer accumulation images (hi, lo) and the overflow count, as the kernel leaves them.

    With ``scene_depth`` (height x width window depth) particles farther than
    the depth at their pixel are dropped; the kernel's tile test only skips
    work and must agree with this full-resolution rule.  ``tint``: (n, 4) a spawned effect's inherited color.
    """
    pixel, color = project(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, ramp, scene_depth,
                           tint)
    quantize = (CHANNEL_MAX / emax).astype(F)
    scaled = np.clip(color * quantize, F(0), CHANNEL_MAX.astype(F))
    q = (scaled + F(0.5)).astype(U)
    return accumulate(pixel, q, width, height)


def reaching(pos_age, vel_life, view_proj, width, height):
    """(index, clip, w, t = age / life, pixel) of the live particles inside the view, the splat's cull and pixel."""
    particle = PARTICLE.read_images(pos_age, vel_life)
    age, life = particle["age"], particle["life"]
    live = alive(pos_age, vel_life)
    with np.errstate(invalid="ignore"):
        p = particle["position"][live]
        clip = transform_points(view_proj, p)
        w = clip[:, 3]
        inside = (w > 0) & (np.abs(clip[:, :3]) <= w[:, None]).all(axis=1)
    clip, w = clip[inside], w[inside]
    t = (age[live] / life[live])[inside]
    index = np.flatnonzero(live)[inside]
    size = np.array([width, height], F)
    screen = (clip[:, :2] / w[:, None] * F(0.5) + F(0.5)) * size
    pixel = np.minimum(screen.astype(np.int32), np.array([width - 1, height - 1]))
    return index, clip, w, t, pixel


def project(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, ramp=None, scene_depth=None,
            tint=None):
    """Pixel and float color of every particle that reaches the target (before quantization)."""
    index, clip, w, t, pixel = reaching(pos_age, vel_life, view_proj, width, height)
    if scene_depth is not None:
        depth = clip[:, 2] / w * F(0.5) + F(0.5)
        visible = depth <= scene_depth[pixel[:, 1], pixel[:, 0]]
        clip, w, t, pixel, index = clip[visible], w[visible], t[visible], pixel[visible], index[visible]

    velocity = PARTICLE.read_images(pos_age, vel_life)["velocity"][index]
    return pixel, particle_colors(settings, ramp, t, index, w, pixels_per_unit, velocity, tint)


def particle_radii(settings, ramp, t, index, w, pixels_per_unit):
    """particle_look.glsl's particle_radius_px of particles ``index`` at life fraction ``t`` and clip w."""
    look = look_at(look_table(settings, ramp), t)
    size_factor = variation(index, settings.size_random, settings.seed, "SIZE")
    return F(settings.size) * look[:, 3] * size_factor * F(pixels_per_unit) / w


def particle_colors(settings, ramp, t, index, w, pixels_per_unit, velocity, tint=None):
    """particle_look.glsl: HDR color of particles ``index`` at life fraction ``t``, clip w and ``velocity`` (m, 3: by
    speed, particle_look); ``tint``: (n, 4) every slot's inherited color (rgb) and fraction of it (a), tinted() of
    PARTICLE_TINT."""
    look = particle_look(look_table(settings, ramp), t, velocity, settings)
    if tint is not None:
        mine = np.asarray(tint, F)[index]
        look[:, :3] = look[:, :3] + (mine[:, :3] - look[:, :3]) * mine[:, 3:]
    radius_px = particle_radii(settings, ramp, t, index, w, pixels_per_unit)
    coverage = np.minimum(F(3.14159265) * radius_px * radius_px, F(1.0))
    brightness = variation(index, settings.color_random, settings.seed, "BRIGHTNESS")
    return look[:, :3] * (F(settings.emission_strength) * brightness * coverage)[:, None]


def float_accumulation(pixel, color, width, height):
    """The unquantized picture: the same particles' float colors summed in float64 per pixel."""
    flat = pixel[:, 1].astype(np.int64) * width + pixel[:, 0]
    sums = [np.bincount(flat, color[:, c].astype(np.float64), width * height) for c in range(3)]
    return np.stack(sums, axis=-1).reshape(height, width, 3)


def accumulate(pixel, q, width, height):
    """Sum packed adds per pixel exactly as the atomics do (order-independent)."""
    flat = pixel[:, 1].astype(np.int64) * width + pixel[:, 0]
    n = width * height
    r = np.bincount(flat, q[:, 0].astype(np.int64), n).astype(np.int64)
    g = q[:, 1].astype(np.int64)
    g_high = np.bincount(flat, g >> 11, n).astype(np.int64)
    g_low = np.bincount(flat, g & 0x7FF, n).astype(np.int64)
    b = np.bincount(flat, q[:, 2].astype(np.int64), n).astype(np.int64)
    lo_total = b + (g_low << 21)
    carries = lo_total >> 32
    hi_total = r + (g_high << 21) + (carries << 21)
    overflow = int((r >> 21).sum() + (b >> 21).sum() + (hi_total >> 32).sum())
    hi = (hi_total & 0xFFFFFFFF).astype(U).reshape(height, width)
    lo = (lo_total & 0xFFFFFFFF).astype(U).reshape(height, width)
    return hi, lo, overflow


def unpack(hi, lo, emax):
    """Accumulated float color per pixel (height, width, 3)."""
    r = hi & LOW21
    g = ((hi >> U(21)) << U(11)) | (lo >> U(21))
    b = lo & LOW21
    return np.stack([r, g, b], axis=-1).astype(F) * (emax / CHANNEL_MAX).astype(F)


def resolve(hi, lo, emax, raster=None):
    """Float RGBA frame from the accumulation (plus the rasterized target), as ``resolve.glsl`` writes it:
    premultiplied light with alpha 0 (it covers nothing)."""
    color = unpack(hi, lo, emax)
    if raster is not None:
        color = color + raster[..., :3].astype(F)
    return np.concatenate([color, np.zeros_like(color[..., :1])], axis=-1).astype(F)


def peak(hi, lo, emax) -> float:
    """The brightest accumulated channel, as the resolve reports it for automatic Emax."""
    return float(unpack(hi, lo, emax).max(initial=0.0))


def psnr(truth, test) -> float:
    """Peak signal-to-noise ratio in dB of ``test`` against ``truth`` (peak: truth's maximum)."""
    peak = float(np.max(truth))
    mse = float(np.mean((np.asarray(truth, np.float64) - test) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(peak * peak / mse)


def quantization_psnr(pixel, color, width, height, emax) -> float:
    """What the integer accumulation costs at this Emax: PSNR of splat + resolve against float sums."""
    truth = float_accumulation(pixel, color, width, height)
    quantize = (CHANNEL_MAX / emax).astype(F)
    q = (np.clip(color * quantize, F(0), CHANNEL_MAX.astype(F)) + F(0.5)).astype(U)
    hi, lo, _ = accumulate(pixel, q, width, height)
    return psnr(truth, resolve(hi, lo, emax)[..., :3])
