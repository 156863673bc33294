"""Benchmark suite ``splat``: the atomic compositor against rasterized GL_POINTS on one GPU.

Runs the add-on's own kernels (``addon/engine``) through the moderngl host:
the product splat + resolve (``ms``), the same with the scene-depth test
(coarse depth build included), the one-word 64-bit variant where the GPU
has 64-bit atomics, and the peer (``gl_points``: GL_POINTS additive into
RGBA16F) in the same process; ``bound_ms`` is the bytes the splat + resolve
must touch over the copy bandwidth a vec4 copy kernel reaches here.  Also
the quantization error (PSNR against a float accumulation) for several Emax.

    python3 bench/splat.py              # the device run (2M into 3296x1776, 1080p, 4K, 8M, 32M)
    python3 bench/splat.py --quick      # small sizes, to validate on Mesa
    python3 bench/splat.py --psnr-only  # the PSNR rows on the CPU (numpy reference)

The 3296x1776 target stands for two 1648x1776 eye buffers side by side; each
particle is splatted once into it.  On the device machine (GL debs in .gl,
moderngl/glcontext wheels in .whl), glcontext dlopens the unversioned
libGL.so / libEGL.so, so link them after unpacking the debs:

    for d in .gl/*.deb; do dpkg -x $d /tmp/gl; done; L=/tmp/gl/usr/lib/x86_64-linux-gnu
    ln -sf $L/libGL.so.1 $L/libGL.so; ln -sf $L/libEGL.so.1 $L/libEGL.so
    export LD_LIBRARY_PATH=$L:/usr/local/nvidia/lib64
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    python3 -m pip install --no-deps .whl/*.whl; python3 bench/splat.py --out $OUT
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from addon.engine import compositing, depth, raster  # noqa: E402
from addon.engine.kernels import Image, Kernel  # noqa: E402
from addon.engine.reference import compositing as ref  # noqa: E402
from addon.engine.resources import resource_dir  # noqa: E402
from addon.engine.settings import effect_settings, render_settings  # noqa: E402
from addon.engine.simulation import STATE_READ, ParticleSystem  # noqa: E402
from addon.hosts.moderngl import ModernGLHost, declarations  # noqa: E402

BENCH_SHADERS = Path(__file__).resolve().parent / "shaders"
BENCH_LOOK = {"size": 0.002, "color_start": (1.0, 0.6, 0.2), "color_end": (0.8, 0.1, 0.02), "emission_strength": 1.0}
REPS = 30


def perspective_camera(width: int, height: int) -> compositing.Camera:
    view = compositing.look_at((0.0, -10.0, 0.0), (0.0, 0.0, 0.0))
    return compositing.Camera(compositing.perspective(math.radians(50), width / height, 0.1, 100.0) @ view,
                              width, height)


def particles(case: str, n: int, camera: compositing.Camera, rng) -> np.ndarray:
    """World positions of the three cases, generated in normalised device space.

    normal: one Gaussian blob around the screen center (sigma 1/6 of the screen);
    spread: uniform over the whole screen;
    clumpy: 16 tight clumps (sigma 3 pixels), each a run of consecutive
    particles as an emitter's births are, so thousands land on the same pixels.
    """
    if case == "normal":
        ndc = rng.normal(0.0, 1 / 3, (n, 2))
    elif case == "spread":
        ndc = rng.uniform(-1, 1, (n, 2))
    elif case == "clumpy":
        centers = rng.uniform(-0.8, 0.8, (16, 2))
        sigma = 3.0 * 2 / np.array([camera.width, camera.height])
        ndc = centers[np.arange(n) * 16 // n] + rng.normal(0, 1, (n, 2)) * sigma
    else:
        raise ValueError(case)
    ndc = np.clip(ndc, -0.999, 0.999)
    z = rng.uniform(0.90, 0.99, (n, 1))
    clip = np.concatenate([ndc, z, np.ones((n, 1))], axis=1)
    world = clip @ np.linalg.inv(camera.view_proj).T
    return (world[:, :3] / world[:, 3:]).astype(np.float32)


def state_arrays(positions, rng, slots):
    """pos_age and vel_life rows for ``slots`` texels: random ages, velocities, lifetime 1."""
    n = len(positions)
    pos_age = np.zeros((slots, 4), np.float32)
    vel_life = np.zeros((slots, 4), np.float32)
    pos_age[:n, :3] = positions
    pos_age[:n, 3] = rng.uniform(0.0, 0.9, n)
    vel_life[:n, :3] = rng.normal(0, 1, (n, 3))
    vel_life[:n, 3] = 1.0
    return pos_age, vel_life


def upload(host, system, positions, rng):
    n = len(positions)
    width, rows = system.pos_age.width, system.pos_age.height
    pos_age, vel_life = state_arrays(positions, rng, rows * width)
    system.pos_age = host.texture("pos_age", width, rows, "RGBA32F", pos_age.reshape(rows, width, 4))
    system.vel_life = host.texture("vel_life", width, rows, "RGBA32F", vel_life.reshape(rows, width, 4))
    return pos_age[:n], vel_life[:n]


def gpu_ms(ctx, work, reps=REPS) -> float:
    """Median GPU time of ``work`` in ms (GL timer queries), after warm-up.

    Mesa's llvmpipe answers timer queries with 0; there the wall time of
    work + glFinish stands in (good enough to validate the script)."""
    for _ in range(3):
        work()
    ctx.finish()
    times = []
    for _ in range(reps):
        query = ctx.query(time=True)
        started = time.perf_counter()
        with query:
            work()
        ctx.finish()
        wall = (time.perf_counter() - started) * 1e3
        times.append(query.elapsed / 1e6 or wall)
    return statistics.median(times)


def bench_program(host, kernel: Kernel, file_name: str, extra_header: str = ""):
    """A bench-only kernel: the add-on's includes plus a file from bench/shaders."""
    header = declarations(kernel)
    if extra_header:
        first, rest = header.split("\n", 1)
        header = first + "\n" + extra_header + rest
    body = "".join((resource_dir("shaders") / f).read_text() for f in kernel.includes)
    return host.ctx.compute_shader(header + body + (BENCH_SHADERS / file_name).read_text())


def copy_bandwidth(host) -> float:
    """Bytes per ms a vec4 image copy moves (read + write), on a 256 MiB image."""
    side = 4096
    kernel = Kernel("copy_vec4", images=(Image("src", "RGBA32F", "READ"), Image("dst", "RGBA32F", "WRITE")),
                    local_size=(16, 16, 1), includes=())
    program = bench_program(host, kernel, "copy_vec4.glsl")
    src = host.texture("src", side, side, "RGBA32F")
    dst = host.texture("dst", side, side, "RGBA32F")

    def work():
        src.native.bind_to_image(0, read=True, write=False)
        dst.native.bind_to_image(1, read=False, write=True)
        program.run(side // 16, side // 16)

    ms = gpu_ms(host.ctx, work)
    return 2 * side * side * 16 / ms


def bytes_touched(n: int, pixels: int) -> int:
    """What splat + resolve must move: state (2 x 16 B) and two 4 B atomics (read + write) per
    particle; per pixel two 4 B reads, 16 B frame write and two 4 B clears."""
    return n * (32 + 16) + pixels * (8 + 16 + 8)


# On the H200 (driver's GLSL) atomicAdd(uint64_t, uint64_t) was not found with only the
# first two; NV_shader_atomic_int64 is written against NV_gpu_shader5's 64-bit types.
INT64_HEADER = """#extension GL_ARB_gpu_shader_int64 : require
#extension GL_NV_gpu_shader5 : enable
#extension GL_NV_shader_atomic_int64 : require
layout(std430, binding = 0) buffer Accum64 { uint64_t accum64[]; };
"""


class Int64Path:
    """R21G22B21 in one uint64 per pixel with one atomic add (benchmark only; see the shader)."""

    def __init__(self, host, width, height):
        self.host, self.width, self.height = host, width, height
        splat = Kernel("splat_int64", images=(*STATE_READ, compositing.STATS), constants=compositing.SPLAT.constants,
                       includes=compositing.SPLAT.includes)
        resolve = Kernel("resolve_int64", images=(Image("frame", "RGBA32F", "WRITE"),),
                         constants=compositing.RESOLVE.constants[:2], local_size=(16, 16, 1),
                         includes=compositing.RESOLVE.includes)
        self.splat = bench_program(host, splat, "splat_int64.glsl", INT64_HEADER)
        self.resolve = bench_program(host, resolve, "resolve_int64.glsl", INT64_HEADER)
        self.buffer = host.ctx.buffer(reserve=width * height * 8)
        self.buffer.clear()
        self.frame = host.texture("frame64", width, height, "RGBA32F")
        self.stats = host.texture("stats64", 2, 1, "R32UI")

    def run(self, system, camera, emax):
        ctx = self.host.ctx
        s = system.settings
        self.buffer.bind_to_storage_buffer(0)
        system.pos_age.native.bind_to_image(0, read=True, write=False)
        system.vel_life.native.bind_to_image(1, read=True, write=False)
        self.stats.native.bind_to_image(2, read=True, write=True)
        values = {"count": system.count, "target_size": (self.width, self.height),
                  "view_proj": tuple(np.asarray(camera.view_proj, np.float32).T.ravel().tolist()),
                  "color_start": (*s.color_start, s.emission_strength), "color_end": (*s.color_end, s.size),
                  "quantize": (*compositing.quantize_scale(emax).tolist(), camera.pixels_per_unit)}
        for name, value in values.items():
            if name in self.splat:
                self.splat[name].value = value
        self.splat.run(*system.groups)
        ctx.memory_barrier()
        self.frame.native.bind_to_image(0, read=False, write=True)
        self.resolve["target_size"].value = (self.width, self.height)
        self.resolve["dequantize"].value = (*(emax / ref.CHANNEL_MAX).astype(np.float32).tolist(), 0.0)
        self.resolve.run(-(-self.width // 16), -(-self.height // 16))
        ctx.memory_barrier()


def run_case(host, record, bandwidth, label, case, n, width, height, settings, rng) -> None:
    """One case: the product splat (direct and aggregated), with depth, int64, and the gl_points peer."""
    ctx = host.ctx
    camera = perspective_camera(width, height)
    s = effect_settings({**{k: getattr(settings, k) for k in ("size", "color_start", "color_end",
                                                              "emission_strength")}, "count": n})
    system = ParticleSystem(host, s)
    pos_age, vel_life = upload(host, system, particles(case, n, camera, rng), rng)
    # Emax as automatic Emax would settle: the float picture's peak with 2x headroom (no overflow).
    pixel, color = ref.project(pos_age, vel_life, camera.view_proj, width, height, s, camera.pixels_per_unit)
    peak = float(ref.float_accumulation(pixel, color, width, height).max())
    emax = peak * 2
    compositor = compositing.Compositor(host, width, height, render_settings({"emax": emax}))
    bound_ms = bytes_touched(n, width * height) / bandwidth
    ref_hi, ref_lo, ref_overflow = ref.splat(pos_age, vel_life, camera.view_proj, width, height, s, emax,
                                             camera.pixels_per_unit)

    def atomic():
        compositor.splat(system, camera)
        compositor.resolve()

    fb = ctx.framebuffer(color_attachments=[compositor.raster.native])

    def peer():
        fb.clear(0.0, 0.0, 0.0, 0.0)
        raster.draw(host, system, camera, compositor.raster, None)

    peer_ms = gpu_ms(ctx, peer)
    # The product splat (aggregated) and the naive one-atomic-pair-per-particle splat.
    for kernel, suffix in ((compositing.SPLAT_AGGREGATE, ""), (compositing.SPLAT, "+naive")):
        compositor.splat_kernel = kernel
        ms = gpu_ms(ctx, atomic)
        resolve_ms = gpu_ms(ctx, compositor.resolve)  # on cleared images: the resolve alone
        compositor.take_stats()
        compositor.splat(system, camera)
        hi, lo = host.read(compositor.accum_hi), host.read(compositor.accum_lo)
        compositor.resolve()
        # Pixels whose integers differ from the numpy reference (float contraction can move a
        # particle across a pixel edge or a rounding step; llvmpipe matches exactly).
        differing = int(np.count_nonzero((hi != ref_hi) | (lo != ref_lo)))
        record(label + suffix, n, width, height, ms, peer="gl_points", peer_ms=round(peer_ms, 4),
               bound_ms=round(bound_ms, 4), speedup=round(peer_ms / ms, 1), of_bound=round(ms / bound_ms, 2),
               splat_ms=round(ms - resolve_ms, 4), resolve_ms=round(resolve_ms, 4), exact=differing == 0,
               pixels_differing=differing, emax=round(emax, 3), overflow=ref_overflow)
    compositor.splat_kernel = compositing.SPLAT_AGGREGATE

    # Automatic Emax: the resolve also measures the peak.
    compositor.render = render_settings({"emax": emax, "emax_mode": "AUTO"})
    auto_ms = gpu_ms(ctx, atomic)
    compositor.emax = emax
    compositor.render = render_settings({"emax": emax})
    record(f"{label}+auto_emax", n, width, height, auto_ms, peer="gl_points", peer_ms=round(peer_ms, 4),
           bound_ms=round(bound_ms, 4), speedup=round(peer_ms / auto_ms, 1), of_bound=round(auto_ms / bound_ms, 2))

    # Scene depth: a wall over the right half, in front of every particle; the rest open.
    scene_depth = depth.SceneDepth(host, width, height)
    wall = np.ones((height, width), np.float32)
    wall[:, width // 2:] = 0.5
    scene_depth.depth = host.texture("scene_depth", width, height, "DEPTH32F", wall)
    compositor.use_depth(scene_depth)

    def atomic_depth():
        scene_depth.build_coarse()
        compositor.splat(system, camera)
        compositor.resolve()

    depth_ms = gpu_ms(ctx, atomic_depth)
    record(f"{label}+depth", n, width, height, depth_ms, peer="gl_points", peer_ms=round(peer_ms, 4),
           bound_ms=round((bytes_touched(n, width * height) + width * height * 4) / bandwidth, 4),
           speedup=round(peer_ms / depth_ms, 1), coarse_ms=round(gpu_ms(ctx, scene_depth.build_coarse), 4))
    compositor.use_depth(None)

    if "GL_NV_shader_atomic_int64" in ctx.extensions:
        try:
            path = Int64Path(host, width, height)
            int64_ms = gpu_ms(ctx, lambda: path.run(system, camera, emax))
            expected = ref.resolve(ref_hi, ref_lo, emax)
            same = bool(np.array_equal(host.read(path.frame), expected))
            record(f"{label}+int64", n, width, height, int64_ms, peer="gl_points", peer_ms=round(peer_ms, 4),
                   bound_ms=round((n * 40 + width * height * 32) / bandwidth, 4), speedup=round(peer_ms / int64_ms, 1),
                   exact=same)
        except Exception as error:  # the shader compiler's word on 64-bit atomics
            print(f"int64 path unavailable: {str(error).strip()[:600]}")
    else:
        print("int64 path unavailable: no GL_NV_shader_atomic_int64")

    if label == "normal":
        record_psnr(record, pixel, color, n, width, height, peak)


def record_psnr(record, pixel, color, n, width, height, peak) -> None:
    """Quantization error against the float accumulation of the same particles, for several Emax."""
    for factor in (1.01, 2, 8, 64, 1024):
        emax = peak * factor
        record(f"psnr_emax_{factor:g}x_peak", n, width, height, None, emax=round(emax, 4),
               psnr_db=round(ref.quantization_psnr(pixel, color, width, height, emax), 2))


def psnr_only(out_dir: Path) -> None:
    """The PSNR rows of the main case computed on the CPU (no GPU needed: reference only)."""
    width, height, n = 3296, 1776, 2_000_000
    rng = np.random.default_rng(7)
    camera = perspective_camera(width, height)
    pos_age, vel_life = state_arrays(particles("normal", n, camera, rng), rng, n)
    s = effect_settings({**BENCH_LOOK, "count": n})
    pixel, color = ref.project(pos_age, vel_life, camera.view_proj, width, height, s, camera.pixels_per_unit)
    peak = float(ref.float_accumulation(pixel, color, width, height).max())
    date = datetime.date.today().isoformat()
    records = []

    def record(case, n, width, height, ms, **extra):
        records.append({"suite": "splat", "case": case, "n": n, "device": "cpu (numpy reference)", "date": date,
                        "command": "python3 bench/splat.py --psnr-only", "ms": ms, "target": f"{width}x{height}",
                        **extra})
        print(json.dumps(records[-1]), flush=True)

    record_psnr(record, pixel, color, n, width, height, peak)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"cpu-{date}-splat-psnr.json").write_text(json.dumps(records, indent=1) + "\n")


def device_slug(renderer: str) -> str:
    match = re.search(r"(H100|H200|A100|L40S?|RTX \w+)", renderer)
    name = f"nvidia-{match.group(1).lower().replace(' ', '-')}" if match else renderer.split()[0].lower()
    return re.sub(r"[^a-z0-9-]", "", name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (validation on Mesa)")
    parser.add_argument("--psnr-only", action="store_true", help="only the quantization PSNR (CPU, numpy reference)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()
    if args.psnr_only:
        psnr_only(args.out)
        return
    host = ModernGLHost()
    ctx = host.ctx
    device = host.device
    date = datetime.date.today().isoformat()
    command = "python3 bench/splat.py" + (" --quick" if args.quick else "")
    extensions = sorted(e for e in ctx.extensions if "int64" in e or "atomic" in e.lower())
    print(f"device: {device}\n64-bit / atomic extensions: {', '.join(extensions)}")
    rng = np.random.default_rng(7)
    records = []
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"{device_slug(device)}-{date}-splat{'-quick' if args.quick else ''}.json"

    def record(case, n, width, height, ms, **extra):
        row = {"suite": "splat", "case": case, "n": n, "device": device, "date": date, "command": command,
               "ms": round(ms, 4) if ms is not None else None, "target": f"{width}x{height}", **extra}
        records.append(row)
        out.write_text(json.dumps(records, indent=1) + "\n")  # after every record: a cut-off run keeps its rows
        shown = {k: v for k, v in row.items() if k not in ("suite", "device", "date", "command")}
        print(json.dumps(shown), flush=True)

    bandwidth = copy_bandwidth(host)
    print(f"copy bandwidth: {bandwidth / 1e9:.3f} TB/s")
    scale = 16 if args.quick else 1
    main_size = (3296 // scale, 1776 // scale)
    plan = [(case, 2_000_000 // scale**2, main_size) for case in ("normal", "spread", "clumpy")]
    plan += [("normal", 2_000_000 // scale**2, (1920 // scale, 1080 // scale)),
             ("normal", 2_000_000 // scale**2, (3840 // scale, 2160 // scale)),
             ("normal", 8_000_000 // scale**2, main_size), ("normal", 32_000_000 // scale**2, main_size)]
    settings = effect_settings({**BENCH_LOOK, "count": 1})
    for case, n, (width, height) in plan:
        label = case if (width, height) == main_size and n == plan[0][1] else \
            f"{case}_{width}x{height}_{n / 1e6:g}M"
        started = time.perf_counter()
        run_case(host, record, bandwidth, label, case, n, width, height, settings, rng)
        print(f"  ({label}: {time.perf_counter() - started:.1f} s)", flush=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
