"""Issue 13's footprints inside the device run (bench/gpu_splat.py): 2x2, streak, disc and bokeh against their bounds.

On each main case (normal, spread, clumpy; 2M particles at 3296x1776 on the
device, the pixel-grid camera of bench/cases.py) the product's Compositor runs
splat + resolve with a footprint, under the same timer as the one-pixel splat:

* ``antialiased``: every point into the 2x2 pixels around it (bilinear);
* ``streak``: motion blur, shutter 8 s wide over the cases' 1 px/s velocities
  (camera still): a streak of about 9 px, one sample a pixel, 2x2 each;
* ``disc``: depth of field with a 2 px circle of confusion everywhere (32 samples, 2x2 each);
* ``bokeh``: circles of 8 px, added as bokeh discs binned by tile (addon/engine/draw/bokeh.py);
* ``disc_mixed``: depth of field as a scene has it, circles growing with the
  distance from the focus (clip w = 1 + 0.6 z over the cases' z): every disc
  level in one splat and ~2% of the particles as bokeh discs, so the bokeh
  pass runs over every particle (not checked: w is not a power of two).

Both are also timed with the wide circles rasterized as soft quads, the path
the compute discs replaced (``bench/bokeh_peer.py``), in the same run: cases
``<case>_bokeh_raster`` and ``<case>_disc_mixed_raster`` (with their quads'
``fragments`` and the rate the rasterizer drew them at: an H100 or H200 has
graphics units in only two of its TPCs and few ROPs, so rasterized work runs
at a small fraction of the chip, GL_POINTS included); the compute record's
peer is then the rasterized bokeh (``peer_ms`` = ``raster_bokeh_ms``,
``speedup_vs_raster``; GL_POINTS in ``gl_points_ms``), and it carries
``max_rel_diff_vs_raster``: the largest difference of the two frames over the
frame's peak.

Bounds (``bound_ms`` = ``bytes`` / the copy bandwidth of the same run): 32 B of
state per particle, 8 B per add (two 4-byte atomics on the packed words; adds
= the distinct pixels of the particles' footprints, from the reference on 2000
of the case's particles, ``adds_per_particle`` a splatted one), 24 B per target
pixel for the resolve (accumulation read, frame written) and 8 B per pixel
the splat touched (``touched_pixels``: the words it clears), and for the bokeh discs (``bokeh_discs`` of them) a read
and write of the RGBA32F layer (32 B) per pixel they cover, counted once however
many discs cover it (at most the target's pixels: the compute discs sum a
tile's discs in registers; the rasterized peer pays per disc).  Besides bytes,
``atomic_bound_ms`` = atomics / the returning-atomic rate that ``atomic_rate``
measured in the same run on distinct, consecutive texels (suite
``bandwidth``, case ``atomic_add_r32ui``), and ``scattered_bound_ms`` = adds /
the rate of returning hi + lo pairs on hashed pixels of the same target
(``atomic_pair_scattered``), plus the resolve: what adds landing where
particles land can cost, the bound the footprints are held to.

``checks`` diffs each footprint with ``addon.engine.reference.draw.footprint`` on a
small case first (exact integers; a driver dividing less exactly than IEEE
may move single units, which ``detail`` then counts, energy still exact).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from addon.engine.draw.compositing import Camera, Compositor  # noqa: E402
from addon.engine.draw.footprint import SPLAT_MAX_RADIUS, Focus, Shutter  # noqa: E402
from addon.engine.draw.frame_resources import FrameResources  # noqa: E402
from addon.engine.reference.draw import compositing as reference  # noqa: E402
from addon.engine.reference.draw import footprint as ref_footprint  # noqa: E402
from addon.engine.simulate.simulation import ParticleSystem  # noqa: E402
from bench import cases, common, gl_timing  # noqa: E402
from bench.bokeh_peer import RasterBokeh  # noqa: E402

SHUTTER_S = 4.0  # seconds each side of the frame: the cases' velocities are ~1 pixel a second per axis
DISC_RADIUS_PX = 2.0
BOKEH_RADIUS_PX = 8.0
MIXED_DEPTH, MIXED_SCALE_PX = 0.6, 3.0  # disc_mixed: radii 3 |w - 1| / w, w in [0.4, 1.6]: every level, ~2% bokeh

ATOMIC_ADD = """
#version 430
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0, r32ui) uniform uimage2D counters;
uniform int use_return;
void main()
{
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  uint old = imageAtomicAdd(counters, p, 1u);
  if (use_return != 0 && old == 0xFFFFFFFFu) {
    imageStore(counters, p, uvec4(0u)); /* never: keeps the returned value live */
  }
}
"""


GROUPS_X = 1024
ATOMIC_PAIRS = """
#version 430
layout(local_size_x = 256) in;
layout(binding = 0, r32ui) uniform uimage2D counters;
uniform int pixels;
uniform int width;
void main()
{
  uint h = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  h = h * 747796405u + 2891336453u; /* PCG hash: pixels spread as particles' are */
  h = ((h >> ((h >> 28u) + 4u)) ^ h) * 277803737u;
  h = ((h >> 22u) ^ h) % uint(pixels);
  ivec2 p = ivec2(int(h) % width * 2, int(h) / width);
  uint old = imageAtomicAdd(counters, p, 1u) ^ imageAtomicAdd(counters, p + ivec2(1, 0), 1u);
  if (old == 0xFFFFFFFFu) {
    imageStore(counters, p, uvec4(0u)); /* never: keeps the returned values live */
  }
}
"""


def footprint_cameras(width: int, height: int) -> dict[str, tuple[Camera, bool]]:
    """name: (camera, antialias) of each measured footprint."""
    camera = Camera.pixel_grid(width, height)
    deep = camera.view_proj.copy()
    deep[3] = [0.0, 0.0, MIXED_DEPTH, 1.0]  # clip w = 1 + MIXED_DEPTH z over the cases' z in [-1, 1]
    return {
        "antialiased": (camera, True),
        "streak": (dataclasses.replace(camera, shutter=Shutter.still(camera.view_proj, -SHUTTER_S, SHUTTER_S)), True),
        "disc": (dataclasses.replace(camera, focus=Focus(DISC_RADIUS_PX, 0.0)), True),  # w = 1: radius = scale
        "bokeh": (dataclasses.replace(camera, focus=Focus(BOKEH_RADIUS_PX, 0.0)), True),
        "disc_mixed": (Camera(deep, width, height, focus=Focus(MIXED_SCALE_PX, 1.0)), True),
    }


CHECKED = ("antialiased", "streak", "disc")  # exact on every host: w = 1 (disc_mixed divides by other w)
WIDE = ("bokeh", "disc_mixed")  # the footprints with wide circles: also timed with the rasterized peer


def footprint_adds(pos_age, vel_life, camera: Camera, settings, emax: float, sample: int = 2000):
    """(adds in all, adds a splatted particle): atomic adds (two words each), the distinct (particle, pixel)
    pairs of the footprints (the kernel merges the rest), from the reference on the first ``sample`` particles."""
    pixel, _, particle = ref_footprint.footprint_taps(
        pos_age[:sample], vel_life[:sample], camera.view_proj, camera.width, camera.height, settings, emax,
        camera.pixels_per_unit, shutter=camera.shutter, focus=camera.focus)
    pairs = len(np.unique(np.stack([particle, pixel[:, 0], pixel[:, 1]], axis=1), axis=0))
    return pairs * len(pos_age) / min(sample, len(pos_age)), pairs / max(len(np.unique(particle)), 1)


def bokeh_radii(pos_age, camera: Camera) -> np.ndarray:
    """Radii in pixels of the circles drawn as bokeh discs whose centre is on the target."""
    if camera.focus is None:
        return np.zeros(0)
    clip = np.c_[pos_age[:, :3].astype(np.float64), np.ones(len(pos_age))] @ camera.view_proj.T
    w = clip[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        screen = (clip[:, :2] / w[:, None] * 0.5 + 0.5) * [camera.width, camera.height]
        radius = camera.focus.radius_px(w)
    kept = (w > 0) & (np.abs(clip[:, 2]) <= w) & (screen >= 0).all(axis=1) & (screen < [camera.width, camera.height]).all(axis=1)
    return radius[kept & (radius > SPLAT_MAX_RADIUS)]


def atomic_rate(ctx, timer, device, side: int, width: int, height: int, pairs: int) -> tuple[list[dict], dict]:
    """Atomics a second: returning and fire-and-forget imageAtomicAdd on distinct R32UI texels, and (case
    ``atomic_pair_scattered``) returning pairs on the two words of hashed pixels of a paired width x height target,
    the pattern of a splat's adds; rates by case name (the pair rate in pairs a second)."""
    texture = ctx.texture((side, side), 1, dtype="u4")
    program = ctx.compute_shader(ATOMIC_ADD)
    records, rates = [], {}
    for use_return in (1, 0):
        program["use_return"].value = use_return

        def run():
            texture.bind_to_image(0, read=True, write=True)
            program.run(side // 16, side // 16, 1)
            ctx.memory_barrier()

        ms = timer.fed(run)
        rate = side * side / (ms * 1e-3)
        name = "atomic_add_r32ui" + ("" if use_return else "_no_return")
        rates[name] = rate
        records.append(common.record("bandwidth", name, side * side, device, ms, width=side, height=side,
                                     atomics_per_s=rate, **timer.fields(),
                                     note="distinct texels, one imageAtomicAdd each"))
    texture.release(), program.release()
    paired = ctx.texture((2 * width, height), 1, dtype="u4")
    program = ctx.compute_shader(ATOMIC_PAIRS)
    program["pixels"].value, program["width"].value = width * height, width
    rows = -(-pairs // (256 * GROUPS_X))

    def scatter():
        paired.bind_to_image(0, read=True, write=True)
        program.run(GROUPS_X, rows, 1)
        ctx.memory_barrier()

    ms = timer.fed(scatter)
    done = GROUPS_X * 256 * rows
    rates["atomic_pair_scattered"] = done / (ms * 1e-3)
    records.append(common.record("bandwidth", "atomic_pair_scattered", done, device, ms, width=width, height=height,
                                 atomics_per_s=2 * done / (ms * 1e-3), pairs_per_s=rates["atomic_pair_scattered"],
                                 **timer.fields(), note="returning hi + lo adds on hashed pixels (paired layout)"))
    paired.release(), program.release()
    return records, rates


def measure(host, timer, device, case, n, width, height, system, pos_age, vel_life, emax, ms_one_pixel, peer_ms,
            bandwidth_gbps, rates, log, names=None) -> list[dict]:
    """The footprint records of one case, next to the one-pixel splat's ``ms`` and the GL_POINTS peer
    (``rates``: atomic_rate's; ``names``: the footprints to measure, default all)."""
    records = []
    for name, (camera, antialias) in footprint_cameras(width, height).items():
        if names is not None and name not in names:
            continue
        compositor = Compositor(FrameResources(host, width, height), cases.render(emax))
        compositor.antialias = antialias

        def splat(compositor=compositor, camera=camera):
            compositor.splat(system, camera)

        ms = timer.fed(splat, compositor.resolve)
        fed = timer.fields()
        single_ms = timer.together(splat, compositor.resolve)
        splat_ms, resolve_ms = timer.median(splat, compositor.resolve)
        compositor.take_stats()
        splat()
        hi, lo = compositor.read_accum()
        compositor.resolve()
        touched = int(np.count_nonzero(hi | lo))
        resolve_bytes = 24 * width * height + 8 * touched  # accumulation read, frame written; touched words cleared
        frame = host.read(compositor.resources.frame)
        adds_total, adds = footprint_adds(pos_age, vel_life, camera, system.settings, emax)
        radii = bokeh_radii(pos_age, camera) + 0.5  # to the rim ramp's end
        covered = min(float(np.pi * (radii**2).sum()), float(width * height))  # discs' pixels, once each at most
        bytes_total = 32 * n + 8 * adds_total + 32 * covered + resolve_bytes
        extra, bound_note = {"bokeh_discs": len(radii)}, ""
        if name in WIDE:
            raster = raster_peer(host, timer, device, f"{case}_{name}", n, compositor, splat, frame, radii, log)
            records.append(raster)
            extra.update(peer="raster_bokeh", peer_ms=raster["ms"], gl_points_ms=peer_ms,
                         raster_bokeh_ms=raster["ms"], speedup_vs_raster=raster["ms"] / max(ms, 1e-6),
                         max_rel_diff_vs_raster=raster["max_rel_diff_vs_compute"])
            bound_note += f", {len(radii):,} bokeh discs, rasterized {raster['ms']:.3f} ms ({raster['ms'] / ms:.1f}x)"
        if adds_total:
            scattered_ms = adds_total / rates["atomic_pair_scattered"] * 1e3 + resolve_ms
            extra["scattered_bound_ms"] = scattered_ms
            bound_note += f", scattered-atomics bound {scattered_ms:.4f} ({ms / scattered_ms:.1f}x)"
        bound_ms = bytes_total / (bandwidth_gbps * 1e6)
        atomic_bound_ms = 2 * adds_total / rates["atomic_add_r32ui"] * 1e3
        records.append(common.record(
            "footprint", f"{case}_{name}", n, device, ms, **{"peer": "gl_points", "peer_ms": peer_ms, **extra},
            bound_ms=bound_ms, atomic_bound_ms=atomic_bound_ms, one_pixel_ms=ms_one_pixel, width=width, height=height,
            single_ms=single_ms, touched_pixels=touched, splat_ms=splat_ms, resolve_ms=resolve_ms, bytes=int(bytes_total),
            adds_per_particle=adds, frame_total=float(frame[..., :3].astype(np.float64).sum()), repeats=timer.repeats,
            **fed))
        log(f"  footprint {case}_{name}: {ms:.4f} ms a frame (single {single_ms:.4f}, splat {splat_ms:.4f}),"
            f" one-pixel {ms_one_pixel:.4f},"
            f" gl_points {peer_ms:.3f} ({peer_ms / max(ms, 1e-6):.1f}x), bound {bound_ms:.4f}"
            f" ({ms / bound_ms:.1f}x){bound_note}, {adds:.1f} adds a particle")
        for texture in (*compositor.accum_textures.values(), compositor.resources.frame, compositor.resources.raster, compositor.stats):
            texture.native.release()
    return records


def raster_peer(host, timer, device, case, n, compositor, splat, frame, radii, log) -> dict:
    """The same frame with the wide circles rasterized as soft quads (bench/bokeh_peer.py), timed in the same
    run; ``frame``: the compute discs' frame, which the record says how far it is from."""
    product, compositor.bokeh = compositor.bokeh, RasterBokeh(host)
    try:
        ms = timer.fed(splat, compositor.resolve)
        splat_ms, resolve_ms = timer.median(splat, compositor.resolve)
        compositor.take_stats()
        rasterized = host.read(compositor.resources.frame)
    finally:
        compositor.bokeh = product
    fragments = float((4.0 * radii**2).sum())  # the quads' pixels
    peak = max(float(np.abs(frame[..., :3]).max()), 1e-30)
    diff = float(np.abs(frame[..., :3] - rasterized[..., :3]).max()) / peak
    log(f"  footprint {case}_raster: {ms:.4f} ms (splat {splat_ms:.4f}), {len(radii):,} quads,"
        f" {fragments / (splat_ms * 1e-3) / 1e9:.3g} G fragments/s, frames differ by {diff:.2g} of the peak")
    return common.record("footprint", f"{case}_raster", n, device, ms, peer="bokeh_discs", splat_ms=splat_ms,
                         resolve_ms=resolve_ms, bokeh_sprites=len(radii), fragments=int(fragments),
                         fragments_per_s=fragments / (splat_ms * 1e-3), max_rel_diff_vs_compute=diff,
                         repeats=timer.repeats, **timer.fields())


def checks(host, device, rng, n, width, height, log) -> list[dict]:
    """Each footprint's accumulation against the numpy reference on a small case (sub-pixel positions)."""
    records = []
    xyz = cases.positions("normal", n, width, height, rng)
    pos_age, vel_life = cases.state(xyz, rng)
    s = cases.settings(n, color_start=(3.0, 0.2, 1.0), color_end=(0.1, 2.5, 0.01), strength=1.3, size_px=10.0)
    emax = cases.fitted_emax(cases.pixel_counts(xyz, width, height), 3.0 * 1.3)
    system = ParticleSystem(host, s)
    system.write_state(pos_age, vel_life)
    for name, (camera, antialias) in footprint_cameras(width, height).items():
        if name not in CHECKED:
            continue
        compositor = Compositor(FrameResources(host, width, height), cases.render(emax))
        compositor.antialias = antialias
        compositor.splat(system, camera)
        hi, lo = compositor.read_accum()
        ref_hi, ref_lo, _ = ref_footprint.footprint_splat(pos_age, vel_life, camera.view_proj, width, height, s, emax,
                                                          camera.pixels_per_unit, shutter=camera.shutter,
                                                          focus=camera.focus)
        differing = int(np.count_nonzero((hi != ref_hi) | (lo != ref_lo)))
        energy = [reference.unpack(a, b, emax).astype(np.float64).sum() for a, b in ((hi, lo), (ref_hi, ref_lo))]
        passed = differing == 0
        detail = (f"{n:,} particles, {width}x{height}: {differing} pixels differ, total {energy[0]:.6g}"
                  f" (reference {energy[1]:.6g})")
        log(f"check footprint_{name}: {'PASS' if passed else 'FAIL'} ({detail})")
        records.append(common.record("check", f"footprint_{name}", n, device, None, width=width, height=height,
                                     result="PASS" if passed else "FAIL", note="PASS" if passed else "FAIL",
                                     detail=detail))
        for texture in (*compositor.accum_textures.values(), compositor.resources.frame, compositor.resources.raster, compositor.stats):
            texture.native.release()
    for texture in (system.pos_age, system.vel_life):
        texture.native.release()
    return records


def main(argv=None) -> int:
    """The wide circles alone: on the three main cases, the compute bokeh discs and the rasterized peer (the
    ``bokeh`` and ``disc_mixed`` footprints of the device run), with the one-pixel splat and GL_POINTS beside."""
    parser = argparse.ArgumentParser(description=main.__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (Mesa/llvmpipe check)")
    parser.add_argument("--repeats", type=int, help="timed repeats per measurement (default 30, quick 5)")
    parser.add_argument("--warmup", type=int, help="untimed runs first (default 5, quick 1)")
    parser.add_argument("--out", action="append", help="folder for <device>-<date>.json (repeatable; default bench/results)")
    parser.add_argument("--batch", type=int, help="frames back to back under one query for ms (default 8, quick 2)")
    args = parser.parse_args(argv)
    sizes = gl_timing.QUICK if args.quick else gl_timing.FULL
    import moderngl

    from addon.hosts.moderngl import ModernGLHost

    start = time.perf_counter()
    ctx = moderngl.create_context(standalone=True, require=430, backend="egl")
    host = ModernGLHost(ctx)
    device = host.device
    log = gl_timing.log
    log(f"GL: {device} | {ctx.info['GL_VERSION']} | moderngl {moderngl.__version__}")
    clock = "wall" if "llvmpipe" in device.lower() else "gl"
    timer = gl_timing.Timer(ctx, args.repeats or (5 if args.quick else 30),
                            args.warmup if args.warmup is not None else (1 if args.quick else 5), clock,
                            warm_s=0.3 if clock == "gl" else 0.0, batch=args.batch or (2 if args.quick else 8))
    records = gl_timing.measure_bandwidth(ctx, timer, device, sizes)
    bandwidth_gbps = max(r["gb_per_s"] for r in records)
    rate_records, rates = atomic_rate(ctx, timer, device, sizes["copy_image"], sizes["width"], sizes["height"],
                                      4 * sizes["n"])
    records += rate_records
    peer = gl_timing.GLPoints(ctx)
    rng = np.random.default_rng(20261121)
    n, width, height = sizes["n"], sizes["width"], sizes["height"]
    camera = Camera.pixel_grid(width, height)
    for case in cases.CASES:
        xyz = cases.positions(case, n, width, height, rng)
        pos_age, vel_life = cases.state(xyz, rng)
        emax = cases.fitted_emax(cases.pixel_counts(xyz, width, height))
        system = ParticleSystem(host, cases.settings(n))
        system.write_state(pos_age, vel_life)
        compositor = Compositor(FrameResources(host, width, height), cases.render(emax))
        one_pixel_ms = timer.fed(lambda c=compositor, s=system: c.splat(s, camera), compositor.resolve)
        peer.target(width, height)
        peer.prepare(system, camera)
        peer_ms = timer.fed(peer.draw)
        records += measure(host, timer, device, case, n, width, height, system, pos_age, vel_life, emax,
                           one_pixel_ms, peer_ms, bandwidth_gbps, rates, log, names=WIDE)
        gl_timing.release(system.pos_age, system.vel_life, *compositor.accum_textures.values(), compositor.resources.frame,
                          compositor.stats, compositor.resources.raster)
    log(f"total {time.perf_counter() - start:.1f} s")
    common.finish(records, common.device_slug(device), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
