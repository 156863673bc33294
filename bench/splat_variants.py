"""Issue 4's measurements inside the device run (bench/gpu_splat.py): splat variants on one case.

* ``naive``: splat.glsl, one pair of returning atomics per particle (the product
  now runs splat_aggregate.glsl; both leave identical images).
* ``depth``: the scene-depth path: coarse 16x16 depth range built (one dispatch,
  counted in ``ms``), then the depth-testing splat; the depth is a wall in front
  of the right half of the target, the left half open.
* ``auto_emax``: the resolve that also measures the peak for automatic Emax.
* ``int64``: R21G22B21 in ONE uint64 per pixel with one atomic add, through a
  storage buffer and GL_NV_shader_atomic_int64 (bench/shaders; Blender 5.2's
  Python gpu API cannot do this: see splat_int64.glsl).  Recorded as unavailable
  when the driver refuses it.
* ``addon_gl_points``: the add-on's own GL_POINTS mode (raster_points.glsl
  through the host's draw, RGBA16F target cleared first): should match the peer.
* PSNR: the quantization error of splat + resolve against the float sums of the
  same particles (numpy reference), for several Emax.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from addon.engine.draw import compositing, depth, raster
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.reference.draw import compositing as reference
from addon.engine.seam.kernels import Image, Kernel, include_source
from addon.engine.seam.state import STATE_READ
from addon.engine.settings.settings import render_settings
from addon.hosts.moderngl import declarations
from bench import cases, common

BENCH_SHADERS = Path(__file__).resolve().parent / "shaders"

# NV_shader_atomic_int64 is written against NV_gpu_shader5's 64-bit types: without it the
# H200's compiler found no atomicAdd(uint64_t, uint64_t) (run of 2026-11-21).
INT64_HEADER = """#extension GL_ARB_gpu_shader_int64 : require
#extension GL_NV_gpu_shader5 : enable
#extension GL_NV_shader_atomic_int64 : require
layout(std430, binding = 0) buffer Accum64 { uint64_t accum64[]; };
"""


def bench_program(host, kernel: Kernel, file_name: str, extra_header: str = ""):
    """A bench-only kernel: the add-on's include files plus a file from bench/shaders."""
    first, rest = declarations(kernel).split("\n", 1)
    body = kernel.records + include_source(kernel.includes)
    return host.ctx.compute_shader(first + "\n" + extra_header + rest + body + (BENCH_SHADERS / file_name).read_text())


def without_accum(includes):
    """The includes less accum.glsl (whose functions name the R32UI accumulation images)."""
    return tuple(f for f in includes if f != "accum.glsl")


class Int64Path:
    """One-word accumulation: splat_int64.glsl + resolve_int64.glsl over a storage buffer."""

    def __init__(self, host, width, height):
        self.host, self.width, self.height = host, width, height
        splat = Kernel("splat_int64", images=(*STATE_READ, compositing.STATS, Image("look", "RGBA32F", "READ")),
                       constants=compositing.SPLAT.constants, includes=without_accum(compositing.SPLAT.includes))
        resolve = Kernel("resolve_int64", images=(Image("frame", "RGBA32F", "WRITE"),),
                         constants=compositing.RESOLVE.constants[:2], local_size=(16, 16, 1),
                         includes=without_accum(compositing.RESOLVE.includes))
        self.splat = bench_program(host, splat, "splat_int64.glsl", INT64_HEADER)
        self.resolve = bench_program(host, resolve, "resolve_int64.glsl", INT64_HEADER)
        self.buffer = host.ctx.buffer(reserve=width * height * 8)
        self.buffer.clear()
        self.frame = host.texture("frame64", width, height, "RGBA32F")
        self.stats = host.texture("stats64", 2, 1, "R32UI")

    def run(self, system, camera, emax, look):
        s = system.settings
        self.buffer.bind_to_storage_buffer(0)
        system.pos_age.native.bind_to_image(0, read=True, write=False)
        system.vel_life.native.bind_to_image(1, read=True, write=False)
        self.stats.native.bind_to_image(2, read=True, write=True)
        look.native.bind_to_image(3, read=True, write=False)
        values = {"count": system.count, "target_size": (self.width, self.height),
                  "view_proj": tuple(np.asarray(camera.view_proj, np.float32).T.ravel().tolist()),
                  "color_start": (*s.color_start, s.emission_strength), "color_end": (*s.color_end, s.size),
                  "quantize": (*compositing.quantize_scale(emax).tolist(), camera.pixels_per_unit),
                  "state_origin": (*system.origin, 0.0), "look_random": (s.color_random, s.size_random, 0.0, 0.0),
                  "look_seed": s.seed}
        for name, value in values.items():
            if name in self.splat:
                self.splat[name].value = value
        self.splat.run(*system.groups)
        self.host.ctx.memory_barrier()
        self.frame.native.bind_to_image(0, read=False, write=True)
        self.resolve["target_size"].value = (self.width, self.height)
        self.resolve["dequantize"].value = (*compositing.dequantize_scale(emax).tolist(), 0.0)
        self.resolve.run(-(-self.width // 16), -(-self.height // 16))
        self.host.ctx.memory_barrier()

    def release(self):
        self.buffer.release()
        for texture in (self.frame, self.stats):
            texture.native.release()


LAYOUT_VARIANTS = {  # name: (splat kernel, paired accumulation); the product's is among them
    "naive": (compositing.SPLAT, False),
    "naive_paired": (compositing.SPLAT, True),
    **{f"aggregate{k}{suffix}": (compositing.aggregate_kernel(compositing.SPLAT, k), paired)
       for k in (1, 2, 4) for suffix, paired in (("", False), ("_paired", True))},
}


def layouts(host, timer, width, height, system, camera, compositor, emax, bound_ms, ref_hi, ref_lo, variant):
    """Every splat kernel x accumulation layout: splat + resolve, each part, and exactness against the reference."""
    for name, (kernel, paired) in LAYOUT_VARIANTS.items():
        target = compositing.Compositor(FrameResources(host, width, height), compositor.render, paired=paired)
        target.splat_kernels = {"FULL": kernel}

        def splat(target=target):
            target.splat(system, camera)

        ms_variant = timer.fed(splat, target.resolve)
        splat_ms, resolve_ms = timer.median(splat, target.resolve)
        target.take_stats()
        target.splat(system, camera)
        hi, lo = target.read_accum()
        target.resolve()
        exact = bool(np.array_equal(hi, ref_hi) and np.array_equal(lo, ref_lo))
        variant(name, ms_variant, splat_ms=splat_ms, resolve_ms=resolve_ms, exact=exact, paired=paired,
                per_thread=compositing.per_thread(kernel), aggregated=kernel.name == "splat_aggregate",
                bound_ms=bound_ms, product=(kernel == compositor.splat_kernels["FULL"] and paired == compositor.paired))
        for texture in (*target.accum_textures.values(), target.resources.frame, target.resources.raster, target.stats):
            texture.native.release()


def wall_depth(host, width, height) -> depth.SceneDepth:
    """Scene depth 0.5 over the right half (in front of every particle of the cases), far elsewhere."""
    scene_depth = depth.SceneDepth(host, width, height)
    wall = np.ones((height, width), np.float32)
    wall[:, width // 2:] = 0.5
    scene_depth.depth.native.release()
    scene_depth.depth = host.texture("scene_depth", width, height, "DEPTH32F", wall)
    return scene_depth


def measure(host, timer, device, case, n, width, height, system, camera, compositor, emax, ms, bytes_total,
            bandwidth_gbps, ref_hi, ref_lo, log):
    """The variant records of one case, next to the product's ``ms``."""
    records = []

    def splat():
        compositor.splat(system, camera)

    def variant(name, ms_variant, **extra):
        records.append(common.record("splat_variant", f"{case}_{name}", n, device, ms_variant, peer="product",
                                     peer_ms=ms, width=width, height=height, repeats=timer.repeats,
                                     **timer.fields(), **extra))
        detail = "".join(f", {key} {extra[key]}" for key in ("splat_ms", "exact") if key in extra)
        log(f"  variant {case}_{name}: {ms_variant:.4f} ms vs product {ms:.4f}{detail}")

    layouts(host, timer, width, height, system, camera, compositor, emax, bytes_total / (bandwidth_gbps * 1e6),
            ref_hi, ref_lo, variant)

    scene_depth = wall_depth(host, width, height)
    coarse_ms = timer.fed(scene_depth.build_coarse)
    compositor.resources.use_depth(scene_depth)
    depth_ms = timer.fed(scene_depth.build_coarse, splat, compositor.resolve)
    compositor.resources.use_depth(None)
    depth_bytes = bytes_total + 4 * width * height  # + the depth read by the coarse pass
    variant("depth", depth_ms, coarse_ms=coarse_ms, bound_ms=depth_bytes / (bandwidth_gbps * 1e6),
            note="coarse depth + depth-tested splat + resolve; right half behind a wall")
    for texture in (scene_depth.depth, scene_depth.coarse):
        texture.native.release()

    target = host.ctx.framebuffer(color_attachments=[compositor.resources.raster.native])
    look = compositor.resources.look_texture(system)

    def addon_points():
        target.clear(0.0, 0.0, 0.0, 0.0)
        raster.draw(host, system, camera, compositor.resources.raster, None, look)

    variant("addon_gl_points", timer.fed(addon_points), note="the add-on's GL_POINTS mode (point_mode)")
    target.release()

    compositor.render = render_settings({"emax": emax, "emax_mode": "AUTO"})
    variant("auto_emax", timer.fed(splat, compositor.resolve), note="resolve also measures the peak")
    compositor.render = render_settings({"emax": emax})
    compositor.emax = emax
    compositor.take_stats()

    if "GL_NV_shader_atomic_int64" not in host.ctx.extensions:
        variant_note = "no GL_NV_shader_atomic_int64"
    else:
        try:
            path = Int64Path(host, width, height)
        except Exception as error:  # the driver's compiler refusing 64-bit atomics
            variant_note = "compile failed: " + " ".join(str(error).split())[-300:]
        else:
            int64_ms = timer.fed(lambda: path.run(system, camera, emax, look))
            same = bool(np.array_equal(host.read(path.frame), reference.resolve(ref_hi, ref_lo, emax)))
            variant("int64", int64_ms, exact=same, bound_ms=(bytes_total - 8 * width * height) / (bandwidth_gbps * 1e6),
                    note="one uint64 atomic per particle (storage buffer)")
            path.release()
            variant_note = None
    if variant_note:
        records.append(common.record("splat_variant", f"{case}_int64", n, device, None, width=width, height=height,
                                     note=variant_note))
        log(f"  variant {case}_int64: unavailable ({variant_note})")
    return records


def psnr_records(device, case, n, width, height, pos_age, vel_life, camera, s):
    """Quantization PSNR against float sums, Emax from 1.01x to 1024x the brightest pixel."""
    pixel, color = reference.project(pos_age, vel_life, camera.view_proj, width, height, s, camera.pixels_per_unit)
    peak = float(reference.float_accumulation(pixel, color, width, height).max())
    return [common.record("splat_psnr", f"{case}_emax_{factor:g}x_peak", n, device, None, width=width, height=height,
                          emax=peak * factor,
                          psnr_db=reference.quantization_psnr(pixel, color, width, height, peak * factor))
            for factor in (1.01, 2, 8, 64, 1024)]


def main() -> None:
    """``python3 -m bench.splat_variants``: the PSNR rows of gpu_splat's main normal case on the CPU."""
    n, width, height = 2_000_000, 3296, 1776
    rng = np.random.default_rng(20261121)
    camera = compositing.Camera.pixel_grid(width, height)
    pos_age, vel_life = cases.state(cases.positions("normal", n, width, height, rng), rng)
    records = psnr_records("cpu (numpy reference)", "normal", n, width, height, pos_age, vel_life, camera,
                           cases.settings(n))
    common.finish(records, "cpu-reference")


if __name__ == "__main__":
    main()
