"""Benchmark suite ``sort``: the GPU sorts through moderngl, torch.sort as the peer.

Cases (GPU time from GL timer queries, median of --repeat runs):

* full/<n>: exact sort of n random key-index pairs (bitonic, shared-memory
  local passes, long strides fused in registers); peer torch.sort of n
  float32 keys with their indices.  full_variant/b<block>f<fused>: other
  shapes of the same sort at the largest size, to choose the product's.
  full_radix/<n>: the stable LSD radix sort on the scan, the other candidate.
* pass_direct/<n>, pass_key_index/<n>: one incremental odd-even merge pass,
  over the particle state (direct) or over (key, index) pairs, plus the key
  refresh the key-index sort needs every frame.
* cone/<passes>: the thesis's cone emitter seen by a rotating camera; passes
  per frame against adjacent pairs in order (median over the last frames),
  and the least passes holding >= 99 %; cone_key_index_skip: the same with
  the simulation's respawn skip, waiting particles keyed at the emitter.
* coherence: one step of a stand-in turbulence kernel (a 3D texture lookup per
  particle) over particles in slot order against the same particles sorted by
  grid cell; coherence_simulate: the same with the simulation's own step and
  turbulence volume (which landed after the stand-in was measured).

    python3 bench/sort_bench.py [--sizes 1M,4M,16M] [--variants 1024x3,...] [--pass-sizes 1M,4M]
                                [--cone 1M] [--coherence 4M --volume 256] [--repeat 10]

Records go to bench/results/<device>-<date>-sort.json (bench/records.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from addon.engine.order.sorting import (  # noqa: E402
    FUSED_STRIDES,
    SORT_BLOCK,
    SORT_PASS_DIRECT_KERNELS,
    KeyIndexPairs,
    ParticleSorter,
    SortKey,
    full_sort_dispatches,
    odd_even_pass,
)
from addon.engine.primitives import sort_schedule  # noqa: E402
from addon.engine.seam.kernels import Constant, Kernel, Sampler  # noqa: E402
from addon.engine.seam.state import STATE_IMAGES  # noqa: E402
from addon.engine.settings.settings import effect_settings  # noqa: E402
from addon.engine.simulate.simulation import ParticleSystem  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402
from bench import records  # noqa: E402

SUITE = "sort"


def parse_count(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1], 1)
    return int(text.rstrip("KM")) * scale


def once_ms(host, work) -> float:
    """GPU ms of one call, no warm-up: a frame of incremental passes changes what the next one sees."""
    host.finish()
    start = time.perf_counter()
    if "llvmpipe" in host.device:  # no GPU time there
        work()
        host.finish()
        return (time.perf_counter() - start) * 1e3
    query = host.ctx.query(time=True)
    with query:
        work()
    host.finish()
    return query.elapsed / 1e6


def torch_sort_ms(keys: np.ndarray, repeat: int):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    device_keys = torch.from_numpy(keys).cuda()
    torch.sort(device_keys)
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.sort(device_keys)  # values and indices: the same key-index pairs
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def ordered_keys(values: np.ndarray) -> np.ndarray:
    bits = values.astype(np.float32).view(np.uint32)
    return np.where(bits & 0x80000000, ~bits, bits | 0x80000000).astype(np.uint32)


def upload_pairs(host, pairs: KeyIndexPairs, keys: np.ndarray) -> None:
    width, rows = pairs.keys.width, pairs.keys.height
    padded = np.zeros(width * rows, np.uint32)
    padded[: len(keys)] = keys
    pairs.keys.native.write(padded.tobytes())
    padded[: len(keys)] = np.arange(len(keys), dtype=np.uint32)
    pairs.indices.native.write(padded.tobytes())


def state_system(host, count: int, positions: np.ndarray, settings=None, life: float = 1.0) -> ParticleSystem:
    """A system of live particles at ``positions``, half way through a ``life``."""
    system = ParticleSystem(host, settings or effect_settings({"count": count}))
    width, rows = system.pos_age.width, system.pos_age.height
    pos_age = np.zeros((rows * width, 4), np.float32)
    pos_age[:count, :3] = positions
    pos_age[:count, 3] = 0.5 * life
    vel_life = np.zeros((rows * width, 4), np.float32)
    vel_life[:count, 3] = life
    system.pos_age.native.write(pos_age.tobytes())
    system.vel_life.native.write(vel_life.tobytes())
    return system


def bench_full(host, rows, count, repeat, rng, variants=((SORT_BLOCK, FUSED_STRIDES),)):
    """The product's full sort, and other (block, fused strides) shapes as full_variant."""
    from addon.engine.seam.state import state_size

    floats = rng.standard_normal(count).astype(np.float32)
    keys = ordered_keys(floats)
    width, height = state_size(count, host.max_texture_size)
    peer = torch_sort_ms(floats, repeat)
    for block, fused in variants:
        pairs = KeyIndexPairs(host, width, height, count, block, fused)
        ms = records.gl_ms(host.ctx, pairs.full_sort, repeat, setup=partial(upload_pairs, host, pairs, keys))
        got_keys, got_indices = (host.read(t).ravel()[:count] for t in (pairs.keys, pairs.indices))
        if not (np.array_equal(got_keys, np.sort(keys)) and np.array_equal(keys[got_indices], got_keys)):
            raise SystemExit(f"full sort of {count} keys (block {block}, fused {fused}) is wrong")
        product = (block, fused) == (SORT_BLOCK, FUSED_STRIDES)
        rows.append(record("full" if product else f"full_variant/b{block}f{fused}", count, ms,
                              peer="torch.sort", peer_ms=peer, block=block, fused=fused,
                              dispatches=len(full_sort_dispatches(count, block, fused))))
    pairs = KeyIndexPairs(host, width, height, count)
    ms = records.gl_ms(host.ctx, partial(pairs.full_sort, "RADIX"), repeat, setup=partial(upload_pairs, host, pairs, keys))
    got_keys, got_indices = (host.read(t).ravel()[:count] for t in (pairs.keys, pairs.indices))
    if not (np.array_equal(got_keys, np.sort(keys)) and np.array_equal(got_indices, np.argsort(keys, kind="stable"))):
        raise SystemExit(f"radix sort of {count} keys is wrong")
    rows.append(record("full_radix", count, ms, peer="torch.sort", peer_ms=peer))


def bench_passes(host, rows, count, repeat, rng):
    positions = rng.uniform(-1, 1, (count, 3)).astype(np.float32)
    system = state_system(host, count, positions)
    key = SortKey.view_depth(np.identity(4))
    schedule = sort_schedule.odd_even_merge_passes(count)
    frame = schedule[len(schedule) // 2: len(schedule) // 2 + 16]  # mid-schedule passes, typical strides
    for method in ("DIRECT", "KEY_INDEX"):
        sorter = ParticleSorter(system, method)
        if method == "DIRECT":
            def work(sorter=sorter):
                for p, k in frame:
                    odd_even_pass(host, SORT_PASS_DIRECT_KERNELS["FULL"], system.textures, count, p, k, key.constants())
        else:
            sorter.pairs.refresh_keys(system, key, reset_indices=True)

            def work(sorter=sorter):
                sorter.pairs.odd_even_passes(frame)
        ms = records.gl_ms(host.ctx, work, repeat) / len(frame)
        rows.append(record(f"pass_{method.lower()}", count, ms))
        if method == "KEY_INDEX":
            refresh = records.gl_ms(host.ctx, partial(sorter.pairs.refresh_keys, system, key, reset_indices=False), repeat)
            rows.append(record("key_refresh", count, refresh))


def orbit_view(angle: float, radius: float = 6.0, height: float = 2.0) -> np.ndarray:
    from addon.engine.draw.compositing import camera_view

    eye = (radius * np.cos(angle), radius * np.sin(angle), height)
    return camera_view(eye, (0.0, 0.0, 1.5))


CONE = {
    "emitter_shape": "POINT", "emission": "CONTINUOUS", "lifetime": 3.0, "lifetime_random": 0.3,
    "velocity": (0.0, 0.0, 2.5), "velocity_random": 1.0, "gravity": (0.0, 0.0, 0.0), "drag": 0.0,
}


def bench_cone(host, rows, count, frames, degrees_per_frame, candidates, method, skip=0.0):
    """Passes per frame needed to keep a cone emitter sorted for a rotating camera.

    ``skip`` > 0: respawning particles wait hidden that many seconds, keyed at
    the emitter, so the sort can move them into place before they show.
    """
    dt = 1 / 24
    identity = np.identity(4)
    pass_ms = None
    name = f"cone_{method.lower()}" + ("_skip" if skip else "")
    spawn = (0.0, 0.0, 0.0) if skip else None
    full_schedule = len(sort_schedule.odd_even_merge_passes(count))
    for passes in sorted({min(p, full_schedule) for p in candidates} | {full_schedule}):
        system = ParticleSystem(host, effect_settings({**CONE, "count": count, "respawn_skip": skip}))
        sorter = ParticleSorter(system, method)
        for _ in range(int(CONE["lifetime"] / dt)):  # fill the cone before sorting
            system.step(dt, identity, identity)
        sorter.full(SortKey.view_depth(orbit_view(0.0), spawn))
        adjacent, taus, cost = [], [], []
        for frame in range(frames):
            system.step(dt, identity, identity)
            key = SortKey.view_depth(orbit_view(np.radians(degrees_per_frame * frame)), spawn)
            cost.append(once_ms(host, partial(sorter.incremental, key, passes)))
            in_order, tau = sorter.sortedness(key)
            adjacent.append(in_order)
            taus.append(tau)
        held = statistics.median(adjacent[frames // 2:])
        worst = min(adjacent[frames // 2:])
        rows.append(record(f"{name}/{passes}", count, statistics.median(cost),
                              adjacent_in_order=held, worst_adjacent=worst, kendall_tau=statistics.median(taus[frames // 2:]),
                              passes=passes, full_schedule=full_schedule,
                              degrees_per_frame=degrees_per_frame, respawn_skip=skip or None))
        if pass_ms is None and held >= 0.99:
            pass_ms = passes
    rows.append(record(f"{name}_min_passes_99", count,
                       next((r["ms"] for r in rows if r["case"] == f"{name}/{pass_ms}"), None), passes=pass_ms))


TURBULENCE_STANDIN = """
/* Stand-in for the simulation issue's turbulence: one trilinear lookup in a
 * large 3D texture per particle, then Euler integration. */
void main()
{
  int width = imageSize(pos_age).x;
  int index = particle_index(width);
  if (index >= count) {
    return;
  }
  ivec2 texel = particle_texel(index, width);
  vec4 p = imageLoad(pos_age, texel);
  vec4 v = imageLoad(vel_life, texel);
  vec3 force = texture(noise, p.xyz * 0.5 + 0.5).xyz;
  v.xyz += force * dt;
  imageStore(vel_life, texel, v);
  imageStore(pos_age, texel, vec4(p.xyz + v.xyz * dt * 1e-6, p.w));
}
"""


class InlineKernel(Kernel):
    """A bench-only kernel whose body is given inline (the product keeps one file per kernel)."""

    def body(self) -> str:
        from addon.engine.seam.kernels import include_source

        return include_source(self.includes) + TURBULENCE_STANDIN

    def source_lines(self):
        return [("bench/sort_bench.py", n + 1) for n in range(self.body().count("\n"))]


TURBULENCE = InlineKernel(
    "turbulence_standin", images=STATE_IMAGES, samplers=(Sampler("noise", "FLOAT_3D"),),
    constants=(Constant("INT", "count"), Constant("FLOAT", "dt")),
)


def bench_coherence(host, rows, count, volume, repeat, rng):
    noise = host.ctx.texture3d((volume,) * 3, 4, dtype="f2")
    noise.write(rng.standard_normal((volume,) * 3 + (4,)).astype(np.float16).tobytes())
    noise.repeat_x = noise.repeat_y = noise.repeat_z = True
    from addon.hosts.base import Texture

    noise_texture = Texture("noise", volume, volume, "RGBA16F", noise)
    positions = rng.uniform(-1, 1, (count, 3)).astype(np.float32)
    system = state_system(host, count, positions)

    def step():
        host.dispatch(TURBULENCE, system.groups, {**system.textures, "noise": noise_texture},
                      {"count": count, "dt": 1 / 24})

    unsorted = records.gl_ms(host.ctx, step, repeat)
    sorter = ParticleSorter(system, "DIRECT")
    key = SortKey.grid_cell((-1.0, -1.0, -1.0), 2.0 / volume)  # one cell per texel
    sorter.full(key)  # compiles the sort kernels; the full sort itself is timed under case "full"
    sorted_ms = records.gl_ms(host.ctx, step, repeat)
    rows.append(record("coherence_unsorted", count, unsorted, volume=volume, standin=True))
    rows.append(record("coherence_grid_sorted", count, sorted_ms, volume=volume, standin=True,
                          speedup=unsorted / sorted_ms))


def bench_coherence_simulation(host, rows, count, resolution, repeat, rng):
    """The simulation's own turbulence volume: one frame's step, slot order against grid-cell order."""
    settings = effect_settings({"count": count, "turbulence_strength": 1.0, "turbulence_scale": 2.0,
                                "turbulence_resolution": resolution, "gravity": (0.0, 0.0, 0.0), "drag": 0.0})
    system = state_system(host, count, rng.uniform(-1, 1, (count, 3)).astype(np.float32), settings, life=1e4)
    identity = np.identity(4)
    step = partial(system.step, 1 / 24, identity, identity)
    unsorted = records.gl_ms(host.ctx, step, repeat)
    sorter = ParticleSorter(system, "DIRECT")
    sorter.full(SortKey.grid_cell((-1.0, -1.0, -1.0), 2.0 / resolution))  # one cell per voxel
    sorted_ms = records.gl_ms(host.ctx, step, repeat)
    rows.append(record("coherence_simulate_unsorted", count, unsorted, volume=resolution))
    rows.append(record("coherence_simulate_grid_sorted", count, sorted_ms, volume=resolution,
                       speedup=unsorted / sorted_ms))


def record(case, n, ms, **extra):
    return {"case": case, "n": n, "ms": ms, **{k: v for k, v in extra.items() if v is not None}}


def main(argv=None):
    global DEVICE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1M,4M,16M")
    parser.add_argument("--variants", default="1024x1,1024x2,1024x3,2048x3,4096x1,4096x2",
                        help="other full-sort shapes (block x fused strides), timed at the largest size")
    parser.add_argument("--pass-sizes", default="1M,4M")
    parser.add_argument("--cone", default="1M")
    parser.add_argument("--cone-frames", type=int, default=48)
    parser.add_argument("--cone-passes", default="1,4,16,64", help="the full schedule is always added")
    parser.add_argument("--degrees", type=float, default=2.0, help="camera rotation per frame")
    parser.add_argument("--skip", type=float, default=0.25, help="respawn skip (seconds) of the cone_key_index_skip case")
    parser.add_argument("--coherence", default="4M")
    parser.add_argument("--volume", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)

    host = ModernGLHost()
    rng = np.random.default_rng(1)
    max_size = max(map(parse_count, args.sizes.split(",")))
    variants = [(SORT_BLOCK, FUSED_STRIDES)] + [
        (int(b), int(f)) for b, f in (v.split("x") for v in args.variants.split(",") if v)]
    rows = []
    for count in map(parse_count, args.sizes.split(",")):
        bench_full(host, rows, count, args.repeat, rng, variants if count == max_size else variants[:1])
    records.write(SUITE, host.device, rows)
    rows = []
    for count in map(parse_count, args.pass_sizes.split(",")):
        bench_passes(host, rows, count, args.repeat, rng)
    records.write(SUITE, host.device, rows)
    for method, skip in (("DIRECT", 0.0), ("KEY_INDEX", 0.0), ("KEY_INDEX", args.skip)):
        rows = []
        bench_cone(host, rows, parse_count(args.cone), args.cone_frames, args.degrees,
                   [int(p) for p in args.cone_passes.split(",")], method, skip)
        records.write(SUITE, host.device, rows)
    rows = []
    bench_coherence(host, rows, parse_count(args.coherence), args.volume, args.repeat, rng)
    bench_coherence_simulation(host, rows, parse_count(args.coherence), min(args.volume, 256), args.repeat, rng)
    records.write(SUITE, host.device, rows)


if __name__ == "__main__":
    main()
