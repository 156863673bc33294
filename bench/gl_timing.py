"""What the moderngl device benchmarks share: the run's sizes, the fed-GPU timer, the bandwidth copies
and the GL_POINTS peer (bench/gpu_splat.py runs them all; bench/footprint_bench.py alone runs its part).

How ``Timer`` times and what the copies and the peer stand for: bench/gpu_splat.py's docstring.
"""

from __future__ import annotations

import time

import numpy as np

from addon.hosts.gl_flush import gl_flush
from bench import common

FULL = {"n": 2_000_000, "width": 3296, "height": 1776, "copy_vec4": 1 << 24, "copy_image": 4096,
        "check": (300_000, 640, 360), "footprint_check": (100_000, 512, 256)}
QUICK = {"n": 200_000, "width": 640, "height": 360, "copy_vec4": 1 << 20, "copy_image": 1024,
         "check": (40_000, 193, 97), "footprint_check": (20_000, 256, 128)}

POINTS_VERTEX = """
#version 430
uniform sampler2D pos_age_tex;
uniform sampler2D vel_life_tex;
uniform int state_width;
uniform mat4 view_proj;
uniform vec4 color_start;  /* rgb, w: emission strength (as splat.glsl) */
uniform vec4 color_end;    /* rgb, w: world radius */
uniform float pixels_per_unit;
out vec3 v_color;
void main()
{
  ivec2 texel = ivec2(gl_VertexID % state_width, gl_VertexID / state_width);
  vec4 pos_age = texelFetch(pos_age_tex, texel, 0);
  float life = texelFetch(vel_life_tex, texel, 0).w;
  v_color = vec3(0.0);
  if (!(pos_age.w >= 0.0 && pos_age.w < life)) {
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0); /* clipped */
    return;
  }
  vec4 clip = view_proj * vec4(pos_age.xyz, 1.0);
  float radius_px = color_end.w * pixels_per_unit / clip.w;
  float coverage = min(3.14159265 * radius_px * radius_px, 1.0);
  float t = pos_age.w / life;
  v_color = (color_start.rgb + (color_end.rgb - color_start.rgb) * t) * (color_start.w * coverage);
  gl_Position = clip;
}
"""
POINTS_FRAGMENT = """
#version 430
in vec3 v_color;
out vec4 out_color;
void main() { out_color = vec4(v_color, 1.0); }
"""
COPY_SSBO = """
#version 430
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { vec4 dst[]; };
uniform int row;
uniform int n;
void main()
{
  int i = int(gl_GlobalInvocationID.y) * row + int(gl_GlobalInvocationID.x);
  if (i < n) dst[i] = src[i];
}
"""
COPY_IMAGE = """
#version 430
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0, rgba32f) uniform readonly image2D src;
layout(binding = 1, rgba32f) uniform writeonly image2D dst;
void main()
{
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  imageStore(dst, p, imageLoad(src, p));
}
"""


def log(*args):
    print(*args, flush=True)


class Timer:
    """Median milliseconds of ``repeats`` calls, after warming up.

    ``gl``: GL_TIME_ELAPSED queries (GPU time; the device run).  ``wall``: host
    clock between ``ctx.finish()`` calls, for llvmpipe, whose timer queries do
    not see compute work run on the CPU.  Warm-up runs at least ``warmup``
    calls and at least ``warm_s`` seconds: an idle H200 sits at 345 MHz and the
    first milliseconds of work after an upload ran up to 2.5x slow (2026-11-21).

    Three ways to time: ``median`` (each part under its own query), ``together``
    (all parts once under one query: a lone frame, GPU idle time between its
    dispatches included) and ``fed`` (``batch`` frames back to back under one
    query with the GPU kept busy while the host records them: a frame as a fed
    GPU runs it, the product's case, where the viewport and the bake record
    ahead of the GPU).
    """

    def __init__(self, ctx, repeats, warmup, clock="gl", warm_s=0.3, batch=8):
        self.ctx, self.repeats, self.warmup, self.clock, self.warm_s = ctx, repeats, warmup, clock, warm_s
        self.queries = [ctx.query(time=True) for _ in range(2)] if clock == "gl" else [_WallQuery(ctx)] * 2
        self.batch = batch
        self.feeder = Feeder(ctx, self.queries[0]) if clock == "gl" else None
        self.calls = 0
        self.issue_ms = self.busy_ms = None

    def _warm(self, run):
        """Run ``run`` until warm; the number of calls."""
        start, k = time.perf_counter(), 0
        while k < self.warmup or time.perf_counter() - start < self.warm_s:
            run()
            k += 1
            if k % 8 == 0:
                self.ctx.finish()  # keep the queue short: the wall clock then tracks GPU work
        self.ctx.finish()
        return k

    def median(self, *parts):
        """Median ms of each part, each under its own query."""
        def run_all():
            for part in parts:
                part()
        k = self._warm(run_all)
        samples = [[] for _ in parts]
        for _ in range(self.repeats):
            for part, query, bucket in zip(parts, self.queries, samples):
                with query:
                    part()
                bucket.append(query.elapsed / 1e6)
        self.calls += k + self.repeats
        return [common.median_ms(s) for s in samples]

    def together(self, *parts):
        """Median ms of all parts under one query."""
        def run_all():
            for part in parts:
                part()
        return self.median(run_all)[0]

    def fed(self, *parts):
        """Median ms a frame of all parts when the GPU is fed: ``batch`` frames back to back under one query,
        divided by ``batch``.  Before the query begins, a busy dispatch outside it (``Feeder``: at least
        ``MIN_BUSY_MS``, twice the host's time to record a batch) holds the GPU until the whole batch is
        queued, so the host's recording cannot show up inside the query.  Sets ``issue_ms`` (host time to
        record a batch) and ``busy_ms`` (the busy dispatch's length); both None on the wall clock."""
        def batch():
            for _ in range(self.batch):
                for part in parts:
                    part()
        k = self._warm(batch)
        if self.feeder:
            self.issue_ms = self.feeder.issue_ms(batch)
            self.busy_ms = self.feeder.prepare(max(MIN_BUSY_MS, 2.0 * self.issue_ms))
            k += 3
        else:
            self.issue_ms = self.busy_ms = None  # the wall clock finishes before it starts
        query, samples = self.queries[0], []
        for _ in range(self.repeats):
            if self.feeder:
                self.feeder.fill()
            with query:
                batch()
            samples.append(query.elapsed / 1e6 / self.batch)
        self.calls += (k + self.repeats) * self.batch
        return common.median_ms(samples)

    def fields(self):
        """What a ``fed`` figure's record says about how it was taken (busy and issue None on the wall clock)."""
        return {"batch": self.batch, "clock": self.clock, "busy_ms": self.busy_ms, "issue_ms": self.issue_ms}


MIN_BUSY_MS = 0.5
BUSY = """
#version 430
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer Sink { float sink[]; };
uniform int iterations;
void main()
{
  float x = float(gl_GlobalInvocationID.x) * 1e-7;
  for (int i = 0; i < iterations; i++) {
    x = x * 0.99991 + 1e-4;
  }
  if (x == -1.0) {
    sink[gl_GlobalInvocationID.x] = x; /* never: keeps the loop live */
  }
}
"""


class Feeder:
    """A busy dispatch over the whole GPU (arithmetic, no memory traffic) queued and flushed to the GPU
    before a timed batch, so that the GPU is still on it when the host has recorded the batch."""

    GROUPS = 1024
    PROBE = 4096  # iterations of the first calibrating run, grown 4x until a run takes 0.2 ms
    MAX_ITERATIONS = 1 << 22

    def __init__(self, ctx, query):
        self.ctx, self.query = ctx, query
        self.program = ctx.compute_shader(BUSY)
        self.sink = ctx.buffer(reserve=self.GROUPS * 256 * 4)
        self.flush = gl_flush("OPENGL", ctx.info["GL_RENDERER"])  # moderngl has no glFlush
        self.ms_per_iteration = None
        self.iterations = self.PROBE

    def run(self, iterations):
        self.sink.bind_to_storage_buffer(0)
        self.program["iterations"].value = iterations
        self.program.run(self.GROUPS, 1, 1)
        self.ctx.memory_barrier()

    def prepare(self, busy_ms):
        """Set the busy dispatch to about ``busy_ms`` (calibrated once, on a warm GPU); its expected ms
        (0 where the timer does not see it: llvmpipe's queries, whose compute runs on the host)."""
        if self.ms_per_iteration is None:
            self.ms_per_iteration = self.calibrate()
        if not self.ms_per_iteration:
            self.iterations = 0
            return 0.0
        self.iterations = max(1, min(int(busy_ms / self.ms_per_iteration), self.MAX_ITERATIONS))
        return self.iterations * self.ms_per_iteration

    def calibrate(self):
        """Milliseconds an iteration of the busy dispatch."""
        iterations = self.PROBE
        while True:
            samples = []
            for _ in range(3):
                with self.query:
                    self.run(iterations)
                samples.append(self.query.elapsed / 1e6)
            ms = float(np.median(samples))
            if ms < 1e-3:
                return 0.0  # a blind timer
            if ms >= 0.2 or iterations >= self.MAX_ITERATIONS:
                return ms / iterations
            iterations *= 4

    def issue_ms(self, run, samples=3):
        """Median host milliseconds to record ``run`` into an empty queue (the GPU not waited for)."""
        times = []
        for _ in range(samples):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
            self.ctx.finish()
        return 1e3 * float(np.median(times))

    def fill(self):
        if not self.iterations:
            return
        self.run(self.iterations)
        if self.flush:
            self.flush()  # to the GPU now, not when the driver next submits


def fed_note(fields):
    """The log's words for how a ``fed`` figure was taken."""
    if fields["busy_ms"] is None:
        return ""
    return f"; host records a batch in {fields['issue_ms']:.2f} ms, busy {fields['busy_ms']:.2f} ms first"


class _WallQuery:
    """A stand-in for a GL timer query: finish, host clock, finish (elapsed in ns)."""

    def __init__(self, ctx):
        self.ctx = ctx

    def __enter__(self):
        self.ctx.finish()
        self.start = time.perf_counter_ns()

    def __exit__(self, *exc):
        self.ctx.finish()
        self.elapsed = time.perf_counter_ns() - self.start


def release(*textures):
    for texture in textures:
        texture.native.release()


class GLPoints:
    """The peer: rasterized one-pixel GL_POINTS, additive blending into RGBA16F."""

    def __init__(self, ctx):
        import moderngl

        self.moderngl = moderngl
        self.ctx = ctx
        self.program = ctx.program(vertex_shader=POINTS_VERTEX, fragment_shader=POINTS_FRAGMENT)
        self.vao = ctx.vertex_array(self.program, [])
        self.fbo = None

    def target(self, width, height):
        if self.fbo is not None:
            self.fbo.release()
            self.color.release()
        self.color = self.ctx.texture((width, height), 4, dtype="f2")
        self.fbo = self.ctx.framebuffer(color_attachments=[self.color])

    def prepare(self, system, camera):
        s = system.settings
        p = self.program
        p["pos_age_tex"].value = 0
        p["vel_life_tex"].value = 1
        p["state_width"].value = system.pos_age.width
        p["view_proj"].value = tuple(float(x) for x in np.asarray(camera.view_proj, np.float32).T.ravel())
        p["color_start"].value = (*s.color_start, s.emission_strength)
        p["color_end"].value = (*s.color_end, s.size)
        p["pixels_per_unit"].value = camera.pixels_per_unit
        self.count = system.count
        self.textures = (system.pos_age.native, system.vel_life.native)

    def draw(self):
        mgl, ctx = self.moderngl, self.ctx
        self.textures[0].use(location=0)
        self.textures[1].use(location=1)
        self.fbo.use()
        ctx.enable(mgl.BLEND)
        ctx.blend_func = mgl.ONE, mgl.ONE
        ctx.blend_equation = mgl.FUNC_ADD
        ctx.point_size = 1.0
        self.fbo.clear(0.0, 0.0, 0.0, 0.0)
        self.vao.render(mode=mgl.POINTS, vertices=self.count)

    def read_rgb(self):
        return np.frombuffer(self.color.read(), np.float16).reshape(-1, 4)[:, :3].astype(np.float64)


def measure_bandwidth(ctx, timer, device, sizes):
    """vec4 copy through an SSBO and through RGBA32F images; GB/s counts bytes read + written."""
    rng = np.random.default_rng(7)
    records = []
    n = sizes["copy_vec4"]
    data = rng.random(n * 4, dtype=np.float32)
    src, dst = ctx.buffer(data.tobytes()), ctx.buffer(reserve=n * 16)
    program = ctx.compute_shader(COPY_SSBO)
    row = 256 * 1024
    program["row"].value, program["n"].value = row, n

    def copy_ssbo():
        src.bind_to_storage_buffer(0)
        dst.bind_to_storage_buffer(1)
        program.run(row // 256, -(-n // row), 1)
        ctx.memory_barrier()

    ms = timer.fed(copy_ssbo)
    fed = timer.fields()
    single_ms = timer.together(copy_ssbo)
    ok = np.array_equal(np.frombuffer(dst.read(), np.float32), data)
    records.append(common.record("bandwidth", "copy_vec4_ssbo", n, device, ms, bytes=2 * n * 16, single_ms=single_ms, **fed,
                                 gb_per_s=2 * n * 16 / max(ms, 1e-6) / 1e6, note="" if ok else "WRONG COPY"))
    src.release(), dst.release(), program.release()

    side = sizes["copy_image"]
    data = rng.random(side * side * 4, dtype=np.float32)
    src, dst = ctx.texture((side, side), 4, data.tobytes(), dtype="f4"), ctx.texture((side, side), 4, dtype="f4")
    program = ctx.compute_shader(COPY_IMAGE)

    def copy_image():
        src.bind_to_image(0, read=True, write=False)
        dst.bind_to_image(1, read=False, write=True)
        program.run(side // 16, side // 16, 1)
        ctx.memory_barrier()

    ms = timer.fed(copy_image)
    fed = timer.fields()
    single_ms = timer.together(copy_image)
    ok = np.array_equal(np.frombuffer(dst.read(), np.float32), data)
    records.append(common.record("bandwidth", "copy_vec4_image", side * side, device, ms, bytes=2 * side * side * 16,
                                 gb_per_s=2 * side * side * 16 / max(ms, 1e-6) / 1e6, width=side, height=side,
                                 single_ms=single_ms, **fed,
                                 note="" if ok else "WRONG COPY"))
    src.release(), dst.release(), program.release()
    return records
