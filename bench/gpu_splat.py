"""Splat + resolve on a real GPU under moderngl, against rasterized GL_POINTS.

Runs the product's own kernels and recording (``addon.engine``: ParticleSystem,
Compositor, SPLAT, RESOLVE) through ``addon.hosts.moderngl.ModernGLHost``, so the
GLSL that runs is byte-for-byte the GLSL Blender compiles.  No bpy, no Blender:
Python 3.11+ with numpy and moderngl on an EGL context (the lent H100/H200
through ``bench/device_run.sh``, or Mesa's llvmpipe here with ``--quick``).

What it measures (suite ``splat``; the cases are defined in ``bench/cases.py``):

* ``ms``: GPU time a frame of splat + resolve of all particles into the target
  when the GPU is fed, as in the product (the viewport and the bake record
  frames ahead of the GPU): ``batch`` frames (``--batch``, default 8) back to
  back under one GL timer query, divided by ``batch``, each frame the full
  work (splat into the cleared accumulation, resolve, which clears it again);
  before the query a busy dispatch outside it (``busy_ms``: at least 0.5 ms and
  twice ``issue_ms``, the host's time to record a batch) keeps the GPU on it
  until the whole batch is queued, so host recording time cannot fall inside
  the query.  Median of ``--repeats`` after ``--warmup``.  Records say
  ``batch``, ``clock`` (``gl``: timer queries; ``wall``: host clock around
  ``finish``, llvmpipe), ``busy_ms`` and ``issue_ms``.  ``single_ms``: one frame
  alone under one query (``ms`` until 2026-11-23; it counts the GPU idle while
  the host records the second dispatch and the queue drains at the query's
  ends).  ``splat_ms`` / ``resolve_ms``: the two dispatches under separate
  queries.  Particle state is uploaded into the RGBA32F state images of a
  ParticleSystem.
* ``peer_ms`` (peer ``gl_points``): the same particles drawn as single-pixel
  GL_POINTS with additive blending into an RGBA16F framebuffer, positions and
  color computed the same way in a vertex shader reading the same state images;
  framebuffer clear + draw, timed as ``ms`` (batched, fed);
  ``peer_single_ms`` one alone.  The ``bandwidth`` copies, the footprints
  (bench/footprint_bench.py) and the variants (bench/splat_variants.py) are
  timed the same way (``ms`` batched and fed, ``single_ms`` where recorded).
* ``bound_ms``: ``bytes`` (fewest bytes splat + resolve must move: both state
  texels of every particle, one read and write of every touched accumulator
  pixel, then the resolve's read of both accumulators and frame write, and
  the clear of the touched pixels' words: the resolve leaves zero words
  unwritten since 2026-11-23, before which the bound counted every pixel's)
  over the bandwidth a vec4 copy kernel reached in this run (suite ``bandwidth``).

Before timing, ``check`` records compare the GPU's accumulation and resolved
frame with ``addon.engine.reference`` (exact integer equality) on smaller cases.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from addon.engine.draw import compositing  # noqa: E402,F401  (the declarations the host compiles)
from addon.engine.draw.compositing import CHANNEL_MAX, RESOLVE, SPLAT, Camera, Compositor  # noqa: E402
from addon.engine.draw.frame_resources import FrameResources  # noqa: E402
from addon.engine.reference.draw import compositing as reference  # noqa: E402
from addon.engine.seam import kernels  # noqa: E402,F401  (the declarations the host compiles)
from addon.engine.simulate.simulation import ParticleSystem  # noqa: E402
from addon.hosts.moderngl import ModernGLHost, declarations  # noqa: E402
from bench import cases, common, footprint_bench, splat_variants  # noqa: E402
from bench.gl_timing import FULL, QUICK, GLPoints, Timer, fed_note, log, measure_bandwidth, release  # noqa: E402

EXTRAS = [  # (case, n, width, height): the normal case at other targets and counts
    ("normal", 2_000_000, 1920, 1080),
    ("normal", 2_000_000, 3840, 2160),
    ("normal", 8_000_000, 3296, 1776),
    ("normal", 32_000_000, 3296, 1776),
]
QUICK_EXTRAS = [("normal", 200_000, 960, 540), ("normal", 800_000, 640, 360)]


def reference_fused(pos_age, vel_life, view_proj, width, height, s, emax, pixels_per_unit):
    """``reference.splat`` with the color ramp c0 + (c1 - c0) * t rounded once, as one FMA.

    Diagnostic only: a driver may contract that multiply-add (GLSL allows it
    unless the result is ``precise``); the product's reference rounds twice.
    """
    F = np.float32
    age, life = pos_age[:, 3], vel_life[:, 3]
    with np.errstate(invalid="ignore"):
        alive = (age >= 0) & (age < life) & np.isfinite(pos_age[:, :3]).all(axis=1)
        p = pos_age[alive, :3]
        clip = np.concatenate([p, np.ones((len(p), 1), F)], axis=1) @ np.asarray(view_proj, dtype=F).T
        w = clip[:, 3]
        inside = (w > 0) & (np.abs(clip[:, :3]) <= w[:, None]).all(axis=1)
    clip, w = clip[inside], w[inside]
    t = (age[alive] / life[alive])[inside]
    screen = (clip[:, :2] / w[:, None] * F(0.5) + F(0.5)) * np.array([width, height], F)
    pixel = np.minimum(screen.astype(np.int32), np.array([width - 1, height - 1]))
    radius_px = F(s.size) * F(pixels_per_unit) / w
    coverage = np.minimum(F(3.14159265) * radius_px * radius_px, F(1.0))
    c0, c1 = np.asarray(s.color_start, F), np.asarray(s.color_end, F)
    ramp = (c0.astype(np.float64) + (c1 - c0).astype(np.float64) * t[:, None].astype(np.float64)).astype(F)
    color = ramp * (F(s.emission_strength) * coverage)[:, None]
    scaled = np.clip(color * (CHANNEL_MAX / emax).astype(F), F(0), CHANNEL_MAX.astype(F))
    q = (scaled + F(0.5)).astype(np.uint32)
    return reference.accumulate(pixel, q, width, height)


def unpack(hi, lo):
    hi, lo = hi.astype(np.int64), lo.astype(np.int64)
    return np.stack([hi & 0x1FFFFF, ((hi >> 21) << 11) | (lo >> 21), lo & 0x1FFFFF], axis=-1)


def check(host, device, name, case, n, width, height, rng, varied, kernel=compositing.SPLAT_AGGREGATE):
    """GPU splat + resolve vs addon.engine.reference on pixel-center particles: exact equality.

    ``varied``: random ages and a color ramp (the kernel's lerp may be contracted
    to an FMA by the driver, which the float32 numpy reference does not do);
    otherwise one flat color, where no contraction can change a bit.
    """
    camera = Camera.pixel_grid(width, height)
    xyz = cases.positions(case, n, width, height, rng)
    xyz[:, :2] = np.clip(np.floor(xyz[:, :2]), 0, [width - 1, height - 1]) + 0.5
    pos_age, vel_life = cases.state(xyz, rng, ages=varied)
    if varied:
        s = cases.settings(n, color_start=(3.0, 0.2, 1.0), color_end=(0.1, 2.5, 0.01), strength=1.3, size_px=10.0)
    else:
        s = cases.settings(n, color_start=(0.5, 0.37, 0.6), color_end=(0.5, 0.37, 0.6), size_px=10.0)
    emax = cases.fitted_emax(cases.pixel_counts(xyz, width, height), 3.0 * 1.3)
    if case == "clumpy":
        emax /= 64  # force G carries and R/B overflow in the busy pixels
    system = ParticleSystem(host, s)
    system.write_state(pos_age, vel_life)
    compositor = Compositor(FrameResources(host, width, height), cases.render(emax))
    compositor.splat_kernels = {"FULL": kernel}
    compositor.splat(system, camera)
    hi, lo = compositor.read_accum()
    overflow = compositor.take_stats().overflow
    compositor.resolve()
    frame = compositor.read_frame()
    cleared = not compositor.read_accum()[0].any()
    ref_hi, ref_lo, ref_overflow = reference.splat(pos_age, vel_life, camera.view_proj, width, height, s, emax,
                                                   camera.pixels_per_unit)
    ref_frame = reference.resolve(ref_hi, ref_lo, emax)
    bad = (hi != ref_hi) | (lo != ref_lo)
    # The aggregated splat counts overflowing group adds: zero exactly when the per-particle count is.
    same_overflow = overflow == ref_overflow if kernel is compositing.SPLAT else (overflow > 0) == (ref_overflow > 0)
    passed = (not bad.any()) and same_overflow and np.array_equal(frame, ref_frame) and cleared
    detail = f"{n:,} particles, {width}x{height}, emax {emax:g}, overflow {overflow} (ref {ref_overflow})"
    if not passed:
        diff = np.abs(unpack(hi, lo) - unpack(ref_hi, ref_lo)).max(axis=(0, 1)) if bad.any() else [0, 0, 0]
        detail += (f"; {int(bad.sum())} of {width * height} pixels differ, max |diff| r,g,b = {list(map(int, diff))}"
                   f" integer units; frame equal {np.array_equal(frame, ref_frame)}; cleared {cleared}")
        fused_hi, fused_lo, _ = reference_fused(pos_age, vel_life, camera.view_proj, width, height, s, emax,
                                                camera.pixels_per_unit)
        fused = np.array_equal(hi, fused_hi) and np.array_equal(lo, fused_lo)
        detail += f"; equal to a reference with the color ramp fused into one FMA: {fused}"
    log(f"check {name}: {'PASS' if passed else 'FAIL'} ({detail})")
    release(system.pos_age, system.vel_life, *compositor.accum_textures.values(), compositor.resources.frame,
            compositor.stats, compositor.resources.raster)
    return common.record("check", name, n, device, None, width=width, height=height, result="PASS" if passed else "FAIL",
                         note=("PASS" if passed else "FAIL") + (" (FMA)" if "FMA: True" in detail else ""),
                         detail=detail)


def splat_without_return(host):
    """Diagnostic variant of splat.glsl (never shipped): both atomics fire-and-forget, no carry or overflow.

    Built from SPLAT.body() by cutting everything from the first atomic on, so
    the rest of the kernel stays the product's.  Its sums are wrong whenever G
    carries; it only shows what returning atomics (needed for the carry) cost.
    """
    body = SPLAT.body()
    start = body.index("  uint old_hi = accum_add_hi(pixel, add_hi);")
    body = body[:start] + "  accum_add_hi(pixel, add_hi);\n  accum_add_lo(pixel, add_lo);\n}\n"
    kernel = dataclasses.replace(SPLAT, name="splat_no_return")
    compiled = compositing.splat_variant(kernel, paired=compositing.PAIRED)  # what Compositor.splat dispatches
    host._programs[compiled] = host.ctx.compute_shader(declarations(compiled) + body)
    return kernel


def bench_splat(host, timer, peer, device, case, n, width, height, rng, bandwidth_gbps, variant=None, more=(),
                rates=None, main_case=False):
    """The splat record of one case; a main case's is diffed with the reference, and with ``more`` (of
    "variants", "footprint") those records come too."""
    t0 = time.perf_counter()
    camera = Camera.pixel_grid(width, height)
    xyz = cases.positions(case, n, width, height, rng)
    pos_age, vel_life = cases.state(xyz, rng)
    counts = cases.pixel_counts(xyz, width, height)
    emax = cases.fitted_emax(counts)
    touched = int(np.count_nonzero(counts))
    s = cases.settings(n)
    system = ParticleSystem(host, s)
    system.write_state(pos_age, vel_life)
    compositor = Compositor(FrameResources(host, width, height), cases.render(emax))

    def splat():
        compositor.splat(system, camera)

    def resolve():
        compositor.resolve()

    timer.calls = 0
    ms = timer.fed(splat, resolve)
    fed = timer.fields()
    single_ms = timer.together(splat, resolve)
    splat_ms, resolve_ms = timer.median(splat, resolve)
    frames = timer.calls
    overflow = compositor.take_stats().overflow
    rgb = host.read(compositor.resources.frame).reshape(-1, 4)[:, :3].astype(np.float64).sum(axis=0)

    records = []
    if variant is not None:
        compositor.splat_kernels = {"FULL": variant}
        v_ms = timer.fed(splat, resolve)
        v_splat_ms, v_resolve_ms = timer.median(splat, resolve)
        compositor.splat_kernels = {"FULL": compositing.SPLAT_AGGREGATE}
        records.append(common.record(
            "splat_variant", f"{case}_no_return", n, device, v_ms, peer="product", peer_ms=ms, width=width, height=height,
            splat_ms=v_splat_ms, resolve_ms=v_resolve_ms, product_splat_ms=splat_ms, repeats=timer.repeats,
            **timer.fields(), note="diagnostic: atomics without return (inexact)"))
        log(f"  variant {case}_no_return: {v_ms:.4f} ms (splat {v_splat_ms:.4f}) vs product {ms:.4f} (splat {splat_ms:.4f})")
        compositor.resolve()

    peer.target(width, height)
    peer.prepare(system, camera)
    peer_ms = timer.fed(peer.draw)
    peer_fed = timer.fields()
    peer_single_ms = timer.together(peer.draw)
    peer_rgb = peer.read_rgb().sum(axis=0)

    # What the frame should hold: every visible particle's color (coverage 1, strength 1).
    visible = counts.sum()
    inside = (xyz[:, 0] >= 0) & (xyz[:, 0] < width) & (xyz[:, 1] >= 0) & (xyz[:, 1] < height)
    t = pos_age[inside, 3:4].astype(np.float64)
    c0, c1 = np.array(s.color_start), np.array(s.color_end)
    expected = (c0 + (c1 - c0) * t).sum(axis=0)
    sum_err = float(np.abs(rgb - expected).max() / expected.max())
    peer_sum_err = float(np.abs(peer_rgb - expected).max() / expected.max())

    state_bytes = 32 * n  # pos_age + vel_life texel of every particle
    bytes_splat = state_bytes + 16 * touched  # + one read and write of both accumulators per touched pixel
    # read hi, lo (8 B) and write the frame (16 B) of every pixel, clear hi, lo (8 B) of the touched ones
    bytes_resolve = 24 * width * height + 8 * touched
    total = bytes_splat + bytes_resolve
    bound_ms = total / (bandwidth_gbps * 1e6)
    note = "" if overflow == 0 and sum_err < 1e-3 else f"overflow {overflow}, sum_err {sum_err:.2g}"
    rec = common.record(
        "splat", case, n, device, ms, peer="gl_points", peer_ms=peer_ms, bound_ms=bound_ms,
        width=width, height=height, single_ms=single_ms, peer_single_ms=peer_single_ms, splat_ms=splat_ms,
        resolve_ms=resolve_ms, **fed, peer_busy_ms=peer_fed["busy_ms"], peer_issue_ms=peer_fed["issue_ms"],
        bytes=total, bytes_splat=bytes_splat, bytes_resolve=bytes_resolve, gb_per_s=total / max(ms, 1e-6) / 1e6,
        bandwidth_gb_per_s=bandwidth_gbps, touched_pixels=touched, visible=int(visible),
        max_per_pixel=int(counts.max()), emax=emax, overflow_per_frame=overflow / frames,
        sum_err=sum_err, peer_sum_err=peer_sum_err, repeats=timer.repeats, warmup=timer.warmup,
        atomic_bound_ms=2 * int(visible) / rates["atomic_add_r32ui"] * 1e3 if rates else None,
        scattered_bound_ms=(int(visible) / rates["atomic_pair_scattered"] * 1e3 + resolve_ms) if rates else None,
        state_size=[system.pos_age.width, system.pos_age.height], note=note,
    )
    if main_case:  # the timed case's accumulation against the reference
        compositor.splat(system, camera)
        hi, lo = compositor.read_accum()
        compositor.resolve()
        ref_hi, ref_lo, _ = reference.splat(pos_age, vel_life, camera.view_proj, width, height, s, emax,
                                            camera.pixels_per_unit)
        rec["pixels_differing_from_reference"] = int(np.count_nonzero((hi != ref_hi) | (lo != ref_lo)))
    if "variants" in more:  # issue 4's variants and PSNR rows on the main cases
        records += splat_variants.measure(host, timer, device, case, n, width, height, system, camera, compositor,
                                          emax, ms, total, bandwidth_gbps, ref_hi, ref_lo, log)
        if case == "normal":
            records += splat_variants.psnr_records(device, case, n, width, height, pos_age, vel_life, camera, s)
    if "footprint" in more:
        records += footprint_bench.measure(host, timer, device, case, n, width, height, system, pos_age, vel_life,
                                           emax, ms, peer_ms, bandwidth_gbps, rates, log)
    log(f"splat {case:7s} n={n:>11,} {width}x{height}: {ms:.4f} ms a frame in batches of {timer.batch}"
        f" (single {single_ms:.4f}; splat {splat_ms:.4f} + resolve {resolve_ms:.4f}{fed_note(fed)}),"
        f" gl_points {peer_ms:.3f} ms"
        f" (single {peer_single_ms:.3f}; {peer_ms / max(ms, 1e-6):.1f}x), bound {bound_ms:.4f} ms ({ms / bound_ms:.2f}x),"
        f" max/pixel {counts.max()},"
        f" sum err {sum_err:.1e} / peer {peer_sum_err:.1e}  [{time.perf_counter() - t0:.1f} s]")
    release(system.pos_age, system.vel_life, *compositor.accum_textures.values(), compositor.resources.frame,
            compositor.stats, compositor.resources.raster)
    return [rec, *records]


PARTS = ("splat", "footprint", "variants", "extras")


def parts_list(text):
    parts = {part.strip() for part in text.split(",") if part.strip()}
    unknown = parts - set(PARTS)
    if unknown or not parts:
        raise argparse.ArgumentTypeError(f"unknown part(s) {', '.join(sorted(unknown)) or '(none)'}; choose from "
                                         + ", ".join(PARTS))
    return parts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (Mesa/llvmpipe check)")
    parser.add_argument("--repeats", type=int, help="timed repeats per measurement (default 30, quick 5)")
    parser.add_argument("--warmup", type=int, help="untimed runs first (default 5, quick 1)")
    parser.add_argument("--out", action="append", help="folder for <device>-<date>.json (repeatable; default bench/results)")
    parser.add_argument("--no-extras", action="store_true", help="skip the extra targets and particle counts")
    parser.add_argument("--only", type=parts_list, help="comma-separated parts to run, of " + ", ".join(PARTS) +
                        " (default all): splat = the one-pixel splat and GL_POINTS on the main cases (with their"
                        " checks, the bandwidth and atomic rates), footprint = the footprints on them too,"
                        " variants = issue 4's variants and PSNR rows, extras = the other targets and counts")
    parser.add_argument("--batch", type=int, help="frames back to back under one query for ms (default 8, quick 2)")
    parser.add_argument("--clock", choices=("gl", "wall"), help="gl: timer queries (default); wall: host clock"
                        " around ctx.finish() (default on llvmpipe)")
    parser.add_argument("--budget", type=float, default=180.0, help="seconds after which extras are skipped")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    parts = set(args.only or PARTS) - ({"extras"} if args.no_extras else set())
    repeats = args.repeats or (5 if args.quick else 30)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 5)
    start = time.perf_counter()

    import moderngl

    ctx = moderngl.create_context(standalone=True, require=430, backend="egl")
    host = ModernGLHost(ctx)
    device = host.device
    log(f"GL: {device} | {ctx.info['GL_VERSION']} | moderngl {moderngl.__version__} | numpy {np.__version__}"
        f" | python {sys.version.split()[0]}")
    for kernel in (SPLAT, RESOLVE):
        host.compile(kernel)
    rng = np.random.default_rng(20261121)
    records = []

    n, w, h = sizes["check"]
    records.append(check(host, device, "flat_normal", "normal", n, w, h, rng, varied=False))
    records.append(check(host, device, "flat_clumpy_overflow", "clumpy", n, w, h, rng, varied=False))
    records.append(check(host, device, "varied_spread", "spread", n, w, h, rng, varied=True))
    if "variants" in parts:
        records.append(check(host, device, "naive_clumpy_overflow", "clumpy", n, w, h, rng, varied=False,
                             kernel=compositing.SPLAT))
    if "footprint" in parts:
        records += footprint_bench.checks(host, device, rng, *sizes["footprint_check"], log)

    clock = args.clock or ("wall" if "llvmpipe" in device.lower() else "gl")
    timer = Timer(ctx, repeats, warmup, clock, warm_s=0.3 if clock == "gl" else 0.0, batch=args.batch or (2 if args.quick else 8))
    log(f"clock: {clock} (median of {repeats} after at least {warmup} warm-up calls and {timer.warm_s} s;"
        f" ms: batches of {timer.batch} frames, GPU fed; parts: {', '.join(sorted(parts))})")
    bandwidth = measure_bandwidth(ctx, timer, device, sizes)
    records += bandwidth
    for rec in bandwidth:
        log(f"bandwidth {rec['case']}: {rec['ms']:.4f} ms, {rec['gb_per_s']:.0f} GB/s {rec['note']}")
    bandwidth_gbps = max(r["gb_per_s"] for r in bandwidth)
    rate_records, rates = footprint_bench.atomic_rate(ctx, timer, device, sizes["copy_image"], sizes["width"],
                                                      sizes["height"], 4 * sizes["n"])
    records += rate_records
    for rec in rate_records:
        log(f"bandwidth {rec['case']}: {rec['ms']:.4f} ms, {rec['atomics_per_s'] / 1e9:.3g} G atomics/s")

    peer = GLPoints(ctx)
    variant = splat_without_return(host) if "variants" in parts else None
    for case in cases.CASES if parts & {"splat", "footprint", "variants"} else ():
        records += bench_splat(host, timer, peer, device, case, sizes["n"], sizes["width"], sizes["height"],
                               rng, bandwidth_gbps, variant, more=parts & {"variants", "footprint"}, rates=rates,
                               main_case=True)
    if "extras" in parts:
        for case, n, w, h in QUICK_EXTRAS if args.quick else EXTRAS:
            if time.perf_counter() - start > args.budget:
                log(f"skipped {case} n={n:,} {w}x{h}: past the {args.budget:.0f} s budget")
                continue
            try:
                records += bench_splat(host, timer, peer, device, case, n, w, h, rng, bandwidth_gbps,
                                       rates=rates)
            except Exception as error:  # an allocation a smaller GPU cannot make: keep the rest
                log(f"failed {case} n={n:,} {w}x{h}: {type(error).__name__}: {error}")
    log(f"total {time.perf_counter() - start:.1f} s")
    failed = [r["case"] + (" (last-unit FMA rounding)" if "FMA" in r["note"] else "")
              for r in records if r.get("result") == "FAIL"]
    failed += [f"{r['case']} ({r['pixels_differing_from_reference']} pixels differ)" for r in records
               if r["suite"] == "splat" and r.get("pixels_differing_from_reference")]
    log("checks: " + ("PASS" if not failed else f"FAIL ({', '.join(failed)})"))
    common.finish(records, common.device_slug(device), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
