"""The benchmark host: the same kernels under moderngl (Mesa EGL here), diffed against the numpy reference.

The lent GPU machines run the product's kernels through ``ModernGLHost`` (see
bench/gpu_splat.py); these tests keep that path honest on this machine's Mesa
(llvmpipe).  They skip only when moderngl is not installed or no EGL OpenGL 4.3
context can be made.  The byte-identity test needs neither.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from addon.engine.draw import compositing, glints
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.reference.draw import compositing as ref_compositing
from addon.engine.reference.draw import glints as ref_glints
from addon.engine.reference.simulate import simulation as ref_simulation
from addon.engine.registry import KERNELS
from addon.engine.seam import kernels
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate import simulation
from addon.engine.simulate.effectors import Collider
from addon.hosts.base import NoGPUError
from tests.conftest import OWN_PROCESS_FILES


@pytest.fixture(scope="module")
def mgl_host(request):
    """One ModernGLHost on Mesa's EGL for this module, in a process without Blender's context (conftest.OWN_PROCESS)."""
    if request.path.name not in OWN_PROCESS_FILES:
        pytest.fail(f"{request.path.name} uses moderngl, which takes Blender's GL context away from later tests: "
                    "list it in conftest.OWN_PROCESS_FILES")
    pytest.importorskip("moderngl", reason="moderngl is not importable (optional: the device benchmark's host)",
                        exc_type=ImportError)
    from addon.hosts.moderngl import ModernGLHost

    try:
        host = ModernGLHost()
    except NoGPUError as error:
        pytest.skip(f"moderngl could not create an EGL OpenGL 4.3 context: {error}")
    yield host
    host.ctx.release()


# --- small helpers (same cases as tests/engine/test_kernels.py) ----------------------------

def translation(offset):
    m = np.identity(4)
    m[:3, 3] = offset
    return m




def pixel_center_state(rng, n, width, height, ages=0.5):
    """All-alive particles on pixel centers of ortho_camera (z = 0), lifetime 1."""
    pos_age, vel_life = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, 0] = rng.integers(0, width, n) + 0.5
    particle["position"][:, 1] = rng.integers(0, height, n) + 0.5
    particle["age"][:] = ages
    particle["life"][:] = 1.0
    return pos_age, vel_life




def splat_against_reference(host, s, pos_age, vel_life, width, height, emax, kernel=compositing.SPLAT):
    camera = compositing.Camera.pixel_grid(width, height)
    system = simulation.ParticleSystem(host, s)
    system.write_state(pos_age, vel_life)
    compositor = compositing.Compositor(FrameResources(host, width, height), render_settings({"emax": emax}))
    compositor.splat_kernels = {"FULL": kernel}
    compositor.splat(system, camera)
    hi, lo = compositor.read_accum()
    ref_hi, ref_lo, ref_overflow = ref_compositing.splat(pos_age, vel_life, camera.view_proj, width, height, s, emax,
                                                         camera.pixels_per_unit)
    np.testing.assert_array_equal(hi, ref_hi)
    np.testing.assert_array_equal(lo, ref_lo)
    overflow = compositor.take_stats().overflow
    # The aggregated splat counts overflowing group adds: zero exactly when the per-particle count is.
    assert overflow == ref_overflow if kernel is compositing.SPLAT else (overflow > 0) == (ref_overflow > 0)
    compositor.resolve()
    np.testing.assert_array_equal(compositor.read_frame(), ref_compositing.resolve(ref_hi, ref_lo, emax))
    assert not compositor.read_accum()[0].any(), "resolve clears the accumulation"
    return ref_hi, ref_overflow


# --- the kernels on Mesa through moderngl ---------------------------------------

@pytest.mark.parametrize("count", [1, 256, 70_001])
def test_init_particles_matches_reference(mgl_host, count):
    s = effect_settings({"count": count, "lifetime": 3.0})
    pos_age, vel_life = simulation.ParticleSystem(mgl_host, s).read_state()
    ref_pos_age, ref_vel_life = ref_simulation.init_particles(s)
    np.testing.assert_array_equal(pos_age, ref_pos_age)
    np.testing.assert_array_equal(vel_life, ref_vel_life)


@pytest.mark.parametrize("overrides", [{}, {"substeps": 3, "inherit_velocity": 0.5, "drag": 2.0, "seed": 77},
                                       {"lifetime": 0.05, "lifetime_random": 0.0}])
def test_simulate_matches_reference(mgl_host, overrides):
    s = effect_settings({"count": 5003, "lifetime": 0.5, **overrides})
    prev, cur = translation((0, 0, 0)), translation((0.3, -0.1, 0.2))
    system = simulation.ParticleSystem(mgl_host, s)
    for _ in range(20):
        system.step(1 / 24, prev, cur)
    pos_age, vel_life = system.read_state()
    particle = PARTICLE.read_images(pos_age, vel_life)
    ref_pos_age, ref_vel_life = ref_simulation.run_steps(s, 20, 1 / 24, prev, cur)
    ref_particle = PARTICLE.read_images(ref_pos_age, ref_vel_life)
    np.testing.assert_array_equal(np.sign(particle["life"]), np.sign(ref_particle["life"]))
    np.testing.assert_allclose(pos_age, ref_pos_age, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(vel_life, ref_vel_life, rtol=1e-4, atol=1e-4)


def test_simulate_with_moving_colliders_matches_reference(mgl_host):
    """The colliders reach the kernel as a uniform array: moderngl's array upload, against the reference."""
    moving = [
        Collider("PLANE", translation((0, 0, -0.1)), half_size=(4, 4, 0), bounce=0.5, friction=0.2,
                 previous=translation((0, 0, -0.4))),
        Collider("SPHERE", translation((0.2, 0, 0.6)), half_size=(0.3, 0.3, 0.3), bounce=0.3,
                 previous=translation((-0.1, 0, 0.5))),
    ]
    s = effect_settings({"count": 5003, "lifetime": 0.5, "velocity": (0, 0, 1), "velocity_random": 2.0,
                         "substeps": 3, "gravity": (0, 0, -9.81)})
    system = simulation.ParticleSystem(mgl_host, s)
    system.set_scene_inputs([], moving)
    for _ in range(20):
        system.step(1 / 24, np.identity(4), np.identity(4))
    pos_age, vel_life = system.read_state()
    particle = PARTICLE.read_images(pos_age, vel_life)
    ref_pos_age, ref_vel_life = ref_simulation.run_steps(s, 20, 1 / 24, np.identity(4), np.identity(4),
                                                         colliders=moving)
    ref_particle = PARTICLE.read_images(ref_pos_age, ref_vel_life)
    np.testing.assert_array_equal(np.sign(particle["life"]), np.sign(ref_particle["life"]))
    np.testing.assert_allclose(pos_age, ref_pos_age, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(vel_life, ref_vel_life, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kernel", [compositing.SPLAT, compositing.SPLAT_AGGREGATE])
def test_splat_and_resolve_exact(mgl_host, rng, kernel):
    width, height, n = 193, 97, 40_000
    pos_age, vel_life = pixel_center_state(rng, n, width, height, rng.random(n, dtype=np.float32) * 0.99)
    s = effect_settings({"count": n, "size": 10.0, "color_start": (3.0, 0.2, 1.0), "color_end": (0.1, 2.5, 0.01),
                         "emission_strength": 1.3})
    ref_hi, _ = splat_against_reference(mgl_host, s, pos_age, vel_life, width, height, 4.0, kernel)
    assert np.count_nonzero(ref_hi) > width * height // 2


@pytest.mark.parametrize("kernel", [compositing.SPLAT, compositing.SPLAT_AGGREGATE])
def test_splat_carry_and_overflow_in_one_pixel(mgl_host, rng, kernel):
    width, height, n = 8, 8, 9000
    pos_age, vel_life = pixel_center_state(rng, n, width, height)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, :2] = particle["position"][0, :2]
    s = effect_settings({"count": n, "size": 10.0, "color_start": (0.5, 0.37, 0.6), "color_end": (0.5, 0.37, 0.6)})
    _, ref_overflow = splat_against_reference(mgl_host, s, pos_age, vel_life, width, height, 1.0, kernel)
    assert (round(0.37 * ((1 << 22) - 1)) & 0x7FF) * n >= 1 << 11, "the case must carry"
    assert ref_overflow > 0


def test_full_frame_through_pipeline(mgl_host):
    """init, a second of simulation, splat and resolve seen by a perspective camera: finite, lit, cleared."""
    from addon.engine.pipeline import advance, composite

    s = effect_settings({"count": 20_000, "lifetime": 1.0})
    system = simulation.ParticleSystem(mgl_host, s)
    for _ in range(24):
        advance([system], 1 / 24, [np.identity(4)], [np.identity(4)])
    view = compositing.camera_view((0.0, -6.0, 1.0), (0.0, 0.0, 0.6))
    camera = compositing.Camera(compositing.perspective(0.7, 16 / 9, 0.1, 100.0) @ view, 160, 90)
    compositor = compositing.Compositor(FrameResources(mgl_host, 160, 90), render_settings({}))
    frame = composite([system], compositor, camera)
    pos_age, vel_life = system.read_state()
    ref_pos_age, ref_vel_life = ref_simulation.run_steps(s, 24, 1 / 24, np.identity(4), np.identity(4))
    np.testing.assert_allclose(pos_age, ref_pos_age, rtol=1e-4, atol=1e-4)
    assert np.isfinite(frame).all() and (frame[..., :3].max(axis=-1) > 0).sum() > 50
    assert not compositor.read_accum()[0].any()


# --- one GLSL source, two hosts -------------------------------------------------

class _CreateInfo:
    """Stands in for gpu.types.GPUShaderCreateInfo: records sources and defines, ignores the rest."""

    def __init__(self):
        self.sources, self.defines = {}, []

    def define(self, name, value):
        self.defines.append((name, value))

    def __getattr__(self, name):
        if name.endswith("_source"):
            return lambda text: self.sources.__setitem__(name, text)
        return lambda *args, **kwargs: None


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_kernel_body_is_byte_identical_in_both_hosts(kernel):
    from addon.hosts.blender import BlenderHost
    from addon.hosts.moderngl import ModernGLHost, declarations, stage_declarations

    body = kernel.body()
    files = (*(f"include/{f}" for f in kernel.includes), f"{kernel.name}.glsl")
    raw = [(kernel.path.parent / f).read_bytes().decode() for f in files]
    if kernel.generated:  # text made at run time (OpenColorIO's display function) goes before the kernel file
        raw.insert(len(kernel.includes), kernel.generated)
    files_text = "".join(t if t.endswith("\n") else t + "\n" for t in raw)
    assert body == kernel.records + files_text, "body is the records' generated GLSL, then the files, unchanged"

    infos = []
    fake_gpu = SimpleNamespace(types=SimpleNamespace(GPUShaderCreateInfo=lambda: infos.append(_CreateInfo()) or infos[-1],
                                                     GPUStageInterfaceInfo=lambda name: _CreateInfo()),
                               shader=SimpleNamespace(create_from_info=lambda info: object()))
    blender = BlenderHost.__new__(BlenderHost)
    blender.gpu, blender._shaders = fake_gpu, {}
    blender.compile(kernel)
    raster = isinstance(kernel, kernels.Raster)
    stages = ("vertex_source", "fragment_source") if raster else ("compute_source",)
    assert [infos[0].sources[stage] for stage in stages] == [body] * len(stages)
    assert infos[0].defines == list(kernel.all_defines())  # the tables and named components, as for moderngl

    sources = []
    moderngl = ModernGLHost.__new__(ModernGLHost)
    moderngl.ctx = SimpleNamespace(compute_shader=lambda source: sources.append(source) or object(),
                                   program=lambda **stages: sources.extend(stages.values()) or object())
    moderngl._programs = {}
    moderngl.compile(kernel)
    headers = [stage_declarations(kernel, s) for s in ("VERTEX", "FRAGMENT")] if raster else [declarations(kernel)]
    assert sources == [header + body for header in headers]
    for header in headers:
        assert all(f"#define {name} {value}\n" in header for name, value in kernel.all_defines())


def test_every_pipeline_kernel_is_declared_once():
    assert len(KERNELS) == len(set(KERNELS))  # layouts give variants: same file, other image formats
    assert all(isinstance(k, kernels.Kernel) and k.path.is_file() for k in KERNELS)


@pytest.mark.parametrize("variant", list(glints.EXTRACT_VARIANTS))
def test_glint_layouts_extract_the_reference_set(mgl_host, rng, variant):
    """The glint benchmark's four layouts (bench/glint_bench.py) on this host: the reference's set."""
    from tests.engine.draw.test_glints import extract_on_gpu, hdr_frame

    frame = hdr_frame(rng, 83, 45)
    got = extract_on_gpu(mgl_host, glints.EXTRACT_VARIANTS[variant], frame, 1.5)
    assert got.as_set() == ref_glints.extract(frame, 1.5).as_set()


def test_volumes_and_sdf_build(mgl_host):
    """3D images and Host.volume on this host (test_sdf.py's checks), and an SDF build against the reference."""
    from addon.engine.reference.simulate import sdf as ref_sdf
    from addon.engine.simulate import sdf
    from tests.engine.simulate.test_sdf import assert_same_field, check_volumes, torus

    check_volumes(mgl_host)
    vertices, triangles = torus()
    grid = sdf.sdf_grid(vertices, 16)
    atlas = mgl_host.volume("sdf_atlas", shape=grid.dims[::-1])
    sdf.SdfBuilder(mgl_host).build(vertices, triangles, grid, atlas, 0)
    assert_same_field(grid, mgl_host.read(atlas), ref_sdf.build(sdf.mesh_triangles(vertices, triangles, grid), grid))


@pytest.mark.parametrize("texture_format", ["RGBA8", "SRGB8_A8"])
def test_8_bit_textures_keep_their_bytes(mgl_host, texture_format):
    """8-bit textures (sprite sheets of 8-bit images, a sheet's normals) take [0, 1] values, keep them as bytes
    and read back as stored, as Blender's do (test_sprite_textures)."""
    values = np.array([0.0, 0.25, 0.5, 1.0] * 4, np.float32).reshape(2, 2, 4)
    texture = mgl_host.texture("bytes", 2, 2, texture_format, values)
    np.testing.assert_allclose(mgl_host.read(texture), np.rint(values * 255) / 255, atol=1e-6)
