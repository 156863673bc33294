"""The simulation engine on the GPU against its numpy reference, closed forms and invariants."""

import math

import numpy as np
import pytest

from addon.engine.reference.simulate import gpu_rounding
from addon.engine.reference.simulate import simulation as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import SettingsError, effect_settings
from addon.engine.simulate import simulation
from addon.engine.simulate.effectors import Collider, EmitterMesh, ForceField, pack_triangles
from tests.engine.simulate import gpu_arithmetic

DT = 1 / 24


def translation(offset):
    m = np.identity(4)
    m[:3, 3] = offset
    return m


def rotated_box(center, angle):
    """A matrix that rotates about z, scales unevenly and moves: colliders must honour all three."""
    c, s = math.cos(angle), math.sin(angle)
    m = np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]) @ np.diag([1.5, 1.0, 0.8, 1.0])
    m[:3, 3] = center
    return m


# Two triangles in the z = 0 plane: the second has three times the area of the first.
MESH = EmitterMesh(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 0, 0], [5, 0, 0], [2, 2, 0]], float),
                   np.array([[0, 1, 2], [3, 4, 5]]))

FIELDS = [
    ForceField("WIND", 3.0, axis=(1, 0, 0)),
    ForceField("VORTEX", 2.0, position=(0.2, 0, 0), axis=(0, 0, 1), falloff_power=1.0),
    ForceField("FORCE", -1.5, position=(0, 0, 2), max_distance=3.0),
    ForceField("TURBULENCE", 4.0, position=(0, 0, 0), size=1.5),
]
COLLIDERS = [
    Collider("PLANE", translation((0, 0, -0.3)), half_size=(4, 4, 0), bounce=0.6, friction=0.2),
    Collider("SPHERE", translation((0.3, 0, 0.8)), half_size=(0.4, 0.4, 0.4), bounce=0.3, friction=0.1),
    Collider("BOX", rotated_box((-0.4, 0.1, 0.9), 0.4), half_size=(0.3, 0.3, 0.3), bounce=0.0, friction=0.5),
]

MOVING = [
    Collider("PLANE", translation((0, 0, -0.1)), half_size=(4, 4, 0), bounce=0.5, previous=translation((0, 0, -0.4))),
    Collider("BOX", rotated_box((0.1, 0, 0.5), 0.3), half_size=(0.3, 0.3, 0.3), bounce=0.2, friction=0.3,
             previous=rotated_box((-0.2, 0, 0.4), 0.3)),
]

CASES = {
    "default": ({}, {}),
    "box_cone": ({"emitter_shape": "BOX", "emitter_radius": 0.5, "cone_angle": 0.4, "normal_velocity": 1.0}, {}),
    "scaled_box": ({"emitter_shape": "BOX", "emitter_radius": 0.5, "emitter_scale": (1.0, 0.08, 0.02),
                    "normal_velocity": 0.5, "velocity": (0, 0, 0)}, {}),
    "scaled_sphere": ({"emitter_radius": 0.4, "emitter_scale": (0.5, 2.0, 0.0), "normal_velocity": 1.0}, {}),
    "mesh": ({"emitter_shape": "MESH", "normal_velocity": 2.0, "velocity": (0, 0, 0)}, {"mesh": MESH}),
    "point_normal": ({"emitter_shape": "POINT", "normal_velocity": 3.0, "cone_angle": 3.0}, {}),
    "turbulence": ({"turbulence_strength": 8.0, "turbulence_scale": 0.7, "turbulence_resolution": 12,
                    "turbulence_speed": (0.5, -1, 2)}, {}),
    "fields": ({"drag": 0.5}, {"fields": FIELDS}),
    "colliders": ({"velocity": (0, 0, 2), "velocity_random": 3.0, "substeps": 2}, {"colliders": COLLIDERS}),
    "moving_colliders": ({"velocity": (0, 0, 1), "velocity_random": 2.0, "substeps": 3}, {"colliders": MOVING}),
    "bursts": ({"emission": "BURST", "burst_interval": 0.35, "lifetime": 0.3}, {}),
    "skip": ({"respawn_skip": 0.15, "lifetime": 0.2}, {}),
    "rate": ({"rate": 20000.0, "lifetime": 0.1}, {}),
    "huge_drag": ({"drag": 1e3, "velocity": (1e5, 0, 0)}, {}),
}


@pytest.fixture(scope="module")
def half_rounding(host):
    """How this GPU converts float to half on an image store (OpenGL allows both; llvmpipe truncates)."""
    s = effect_settings({"count": 4096, "lifetime": 1.234567, "state_layout": "COMPACT"})
    ages = PARTICLE.read_images(*simulation.ParticleSystem(host, s).read_state())["age"]
    for mode in ("NEAREST", "ZERO"):
        if np.array_equal(ages, PARTICLE.read_images(*ref.init_particles(s, mode))["age"]):
            return mode
    raise AssertionError("half conversion is neither round-to-nearest nor toward zero")


def run_gpu(host, settings, frames, prev, cur, mesh=None, fields=(), colliders=()):
    system = simulation.ParticleSystem(host, settings, mesh)
    system.set_scene_inputs(list(fields), list(colliders))
    for _ in range(frames):
        system.step(DT, prev, cur)
    return system.read_state()


def case_settings(case, layout, **changes):
    overrides, inputs = CASES[case]
    return effect_settings({"count": 3001, "lifetime": 0.5, "seed": 5, "state_layout": layout, **overrides,
                            **changes}), inputs


@pytest.mark.parametrize("layout", ["FULL", "COMPACT"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_simulate_matches_reference(host, half_rounding, case, layout):
    s, inputs = case_settings(case, layout)
    prev, cur = translation((0, 0, 0)), translation((0.2, -0.1, 0.1))
    pos_age, vel_life = run_gpu(host, s, 12, prev, cur, **inputs)
    ref_pos_age, ref_vel_life = ref.run_steps(s, 12, DT, prev, cur, half_rounding=half_rounding, **inputs)
    assert np.isfinite(pos_age).all() and np.isfinite(vel_life).all()
    particle, ref_particle = PARTICLE.read_images(pos_age, vel_life), PARTICLE.read_images(ref_pos_age, ref_vel_life)
    alive = (ref_particle["age"] >= 0) & (ref_particle["life"] > 0)
    assert alive.sum() > 50, "the case must have live particles"
    # Births, deaths, waits, ages and lifetimes are exact on every GPU (their arithmetic is unfused) ...
    np.testing.assert_array_equal(particle["age"], ref_particle["age"])
    np.testing.assert_array_equal(particle["life"], ref_particle["life"])
    if layout == "COMPACT":
        return  # its float state is compared frame by frame below: half rounding makes errors compound
    # ... and the float32 state within accumulated float32 rounding (sin, cos, pow and sqrt differ by GPU).
    scale = np.maximum(np.abs(ref_pos_age), 1.0)
    assert np.max(np.abs(pos_age - ref_pos_age) / scale) < 1e-4
    scale = np.maximum(np.abs(ref_vel_life), 1.0)
    assert np.max(np.abs(vel_life - ref_vel_life) / scale) < 1e-4


EMITTER = (translation((0, 0, 0)), translation((0.2, -0.1, 0.1)))  # the compact cases' previous and current


def bound_ratio(got, want, bound) -> tuple[float, str]:
    """The worst |got - want| / bound of the compact state's positions and velocities, and where it is;
    ages and lifetimes must match exactly."""
    worst = 0.0, ""
    got, want = PARTICLE.read_images(*got), PARTICLE.read_images(*want)
    for name, exact, b in zip(("position", "velocity"), ("age", "life"), bound):
        np.testing.assert_array_equal(got[exact], want[exact])
        g, w = got[name], want[name]
        diff = np.abs(g.astype(np.float64) - w)
        ratio = np.where(diff > 0, diff / np.maximum(b, np.finfo(np.float64).tiny), 0.0)
        i, k = np.unravel_index(np.argmax(ratio), ratio.shape)
        if ratio[i, k] > worst[0]:
            worst = float(ratio[i, k]), f"{name} of particle {i}, axis {k}: {g[i, k]!r}, reference {w[i, k]!r}, bound {b[i, k]:.3g}"
    return worst


def compact_state(settings, inputs, frames):
    """The reference's compact state after ``frames`` frames, its clock and inputs."""
    ref_inputs = ref.inputs_for(settings, **inputs)
    state, clock = ref.init_particles(settings), ref.Clock()
    for _ in range(frames):
        state = ref.step_frame(*state, settings, ref_inputs, clock, DT, *EMITTER, 0, inputs.get("colliders", ()))
    return state, clock, ref_inputs


@pytest.mark.parametrize("case", sorted(CASES))
def test_compact_frames_match_reference_from_the_same_state(host, half_rounding, case):
    """Each frame, from the GPU's own stored half state, against the reference from that state, within the
    bound gpu_rounding.py derives from the float32 arithmetic a GPU may do differently (fused multiply-adds,
    approximate division, square root, sin and cos) and the half rounding of every substep's values.  Over
    many frames such differences compound through forces (turbulence amplifies them), which is why each
    frame restarts from the GPU's state."""
    s, inputs = case_settings(case, "COMPACT")
    system = simulation.ParticleSystem(host, s, inputs.get("mesh"))
    system.set_scene_inputs(list(inputs.get("fields", ())), list(inputs.get("colliders", ())))
    ref_inputs = ref.inputs_for(s, half_rounding=half_rounding, **inputs)
    worst = 0.0, ""
    for frame in range(12):
        before = system.snapshot()
        clock = ref.Clock(before.step_index, before.time, before.origin.copy())
        traces = []
        want = ref.step_frame(*(a.reshape(-1, 4)[: s.count].astype(np.float32) for a in before.arrays), s,
                              ref_inputs, clock, DT, *EMITTER, system.triangle_count, inputs.get("colliders", ()),
                              traces=traces)
        system.step(DT, *EMITTER)
        got = [a.reshape(-1, 4)[: s.count].astype(np.float32) for a in system.snapshot().arrays]
        ratio, where = bound_ratio(got, want, gpu_rounding.frame_bound(traces, ref_inputs))
        worst = max(worst, (ratio, f"frame {frame}, {where}"))
    assert worst[0] <= 1.0, f"{worst[0]:.2f} times the bound at {worst[1]}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_compact_bound_holds_for_emulated_gpu_arithmetic(case):
    """The bound against the reference run as a GPU may round it (gpu_arithmetic.py: fused products,
    approximate quotients, square roots, pow, sin and cos), frame by frame from its own state."""
    s, inputs = case_settings(case, "COMPACT")
    differs = False
    for frame, (got, want, bound) in enumerate(gpu_arithmetic.frames(s, inputs, 6, EMITTER, DT, seed=1)):
        ratio, where = bound_ratio(got, want, bound)
        assert ratio <= 1.0, f"frame {frame}: {ratio:.2f} times the bound at {where}"
        differs |= any(np.any(g != w) for g, w in zip(got, want))
    assert differs, "the emulated GPU must round differently somewhere"


def test_compact_bound_catches_planted_errors():
    """The bound is about one half step where a frame has one substep: two half steps on a live particle's
    coordinate exceed it almost everywhere, and so does a frame with 2% more gravity or twice the drag."""
    s, inputs = case_settings("default", "COMPACT")
    state, clock, ref_inputs = compact_state(s, inputs, 8)
    traces = []
    want = ref.step_frame(*(a.copy() for a in state), s, ref_inputs, ref.Clock(clock.step_index, clock.time,
                          clock.origin.copy()), DT, *EMITTER, traces=traces)
    bound = gpu_rounding.frame_bound(traces, ref_inputs)
    wanted = PARTICLE.read_images(*want)
    live = (wanted["age"] >= 0) & (wanted["life"] > 0)
    assert live.sum() > 1000 and bound_ratio(want, want, bound)[0] == 0
    for which, lane in enumerate(("position", "velocity")):
        planted = [a.copy() for a in want]
        PARTICLE.read_images(*planted)[lane][:] += 2 * gpu_rounding.half_spacing(wanted[lane])
        caught = np.abs(PARTICLE.read_images(*planted)[lane] - wanted[lane]) > bound[which]
        assert caught[live].mean() > 0.99, caught[live].mean()
    for change in ({"gravity": (0.0, 0.0, -9.81 * 1.02)}, {"drag": 0.2}):
        wrong = ref.step_frame(*(a.copy() for a in state), case_settings("default", "COMPACT", **change)[0],
                               ref_inputs, ref.Clock(clock.step_index, clock.time, clock.origin.copy()), DT, *EMITTER)
        assert bound_ratio(wrong, want, bound)[0] > 1.0, change


def test_compact_layout_error_is_bounded(host):
    """The compact layout's measured position error against full precision, for a 2-unit fountain."""
    base = {"count": 4000, "emission": "BURST", "lifetime": 10.0, "velocity": (0, 0, 3), "seed": 3}
    prev, cur = translation((10, 0, 0)), translation((10.2, 0, 0))
    full, compact = (PARTICLE.read_images(*run_gpu(host, effect_settings({**base, "state_layout": layout}), 24, prev,
                                                       cur)) for layout in ("FULL", "COMPACT"))
    alive = (full["age"] >= 0) & (compact["age"] >= 0)
    error = np.linalg.norm(full["position"][alive] - compact["position"][alive], axis=1)
    extent = np.linalg.norm(full["position"][alive] - cur[:3, 3], axis=1).max()
    # Relative to the emitter (10 units from the world origin) the half's 2^-11 steps apply to <= 3 units.
    assert extent > 1.0
    assert np.percentile(error, 99) < 0.05 * extent, (np.percentile(error, 99), extent)


def test_ballistic_flight_matches_closed_form(host):
    """One burst from a point, gravity only: explicit Euler's known error against the parabola."""
    v0, g = np.array([1.0, -2.0, 6.0]), np.array([0.0, 0.0, -9.81])
    s = effect_settings({"count": 300, "emission": "BURST", "emitter_shape": "POINT", "lifetime": 100.0,
                         "lifetime_random": 0.0, "velocity": tuple(v0), "velocity_random": 0.0, "drag": 0.0,
                         "gravity": tuple(g), "substeps": 2})
    origin = translation((1, 2, 3))
    frames = 30
    particle = PARTICLE.read_images(*run_gpu(host, s, frames, origin, origin))
    h, n = DT / 2, frames * 2
    t = n * h
    euler = origin[:3, 3] + v0 * t + g * h * h * n * (n - 1) / 2
    closed = origin[:3, 3] + v0 * t + g * t * t / 2
    np.testing.assert_allclose(particle["position"], np.tile(euler, (300, 1)), atol=1e-4)
    # Euler lags the parabola by exactly g t h / 2.
    np.testing.assert_allclose(particle["position"][0] - closed, -g * t * h / 2, atol=1e-4)
    np.testing.assert_allclose(particle["velocity"], np.tile(v0 + g * t, (300, 1)), atol=1e-4)
    assert np.allclose(particle["age"], t, atol=1e-5)


@pytest.mark.parametrize("overrides", [
    {"emission": "CONTINUOUS"},
    {"emission": "CONTINUOUS", "respawn_skip": 0.1},
    {"emission": "CONTINUOUS", "rate": 10000.0},
    {"emission": "BURST"},
    {"emission": "BURST", "burst_interval": 0.5},
])
def test_alive_equals_emitted_minus_died(host, overrides):
    """Per frame: alive = emitted - died, counting births and deaths from each slot's lifetime draws."""
    s = effect_settings({"count": 2000, "lifetime": 0.4, "lifetime_random": 0.6, **overrides})
    system = simulation.ParticleSystem(host, s)
    emitted = died = 0
    life_before = np.zeros(s.count, np.float32)
    first_life = None
    for frame in range(1, 40):
        system.step(DT, np.identity(4), np.identity(4))
        particle = PARTICLE.read_images(*system.read_state())
        life = particle["life"]
        was_alive, alive = life_before > 0, (particle["age"] >= 0) & (life > 0)
        reborn = life != life_before  # every birth draws a new lifetime
        emitted += np.count_nonzero(alive & (reborn | ~was_alive))
        died += np.count_nonzero(was_alive & (reborn | (life <= 0)))
        assert np.count_nonzero(alive) == emitted - died, frame
        if s.emission == "CONTINUOUS" and s.respawn_skip == 0 and s.rate == 0:
            births = np.arange(s.count) * simulation.birth_interval(s)
            first_births = np.count_nonzero(births <= frame * DT)
            assert abs(emitted - died - first_births) <= np.count_nonzero(np.abs(births - frame * DT) < 1e-5)
        if s.emission == "BURST" and s.burst_interval == 0:
            first_life = life.copy() if first_life is None else first_life
            expected = np.count_nonzero(first_life > frame * DT + 1e-5)
            assert abs(np.count_nonzero(alive) - expected) <= np.count_nonzero(np.abs(first_life - frame * DT) < 1e-5)
        life_before = life
    assert died > 0 and emitted >= died


def test_continuous_rate_is_kept(host):
    """With a set rate, births per frame stay at rate x dt, also after the first lifetime."""
    s = effect_settings({"count": 3000, "rate": 4800.0, "lifetime": 0.3, "lifetime_random": 0.5})
    system = simulation.ParticleSystem(host, s)
    life_before = np.zeros(s.count, np.float32)
    births = []
    for _ in range(36):
        system.step(DT, np.identity(4), np.identity(4))
        particle = PARTICLE.read_images(*system.read_state())
        life = particle["life"]
        births.append(np.count_nonzero((life > 0) & (life != life_before)))
        life_before = life
    assert simulation.rate_warning(s) is None
    np.testing.assert_allclose(births, 4800 * DT, atol=2)
    assert "fewer than 4800" in simulation.rate_warning(effect_settings({"count": 1000, "rate": 4800.0}))


def test_simulation_is_deterministic(host):
    s = effect_settings({"count": 5000, "turbulence_strength": 3.0, "emitter_shape": "BOX", "seed": 9})
    first = run_gpu(host, s, 10, translation((0, 0, 0)), translation((1, 0, 0)), colliders=COLLIDERS)
    second = run_gpu(host, s, 10, translation((0, 0, 0)), translation((1, 0, 0)), colliders=COLLIDERS)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_subframe_emission_is_continuous_along_moving_emitter(host):
    """Particles emitted by a fast point emitter lie evenly along its path, not in per-frame clumps."""
    s = effect_settings({"count": 960, "lifetime": 1.0, "lifetime_random": 0.0, "emitter_shape": "POINT",
                         "velocity": (0, 0, 0), "velocity_random": 0.0, "gravity": (0, 0, 0), "drag": 0.0})
    speed = 24.0  # one unit per frame; 40 particles are born per frame
    system = simulation.ParticleSystem(host, s)
    frames = 12
    for frame in range(frames):
        system.step(DT, translation((speed * frame * DT, 0, 0)), translation((speed * (frame + 1) * DT, 0, 0)))
    particle = PARTICLE.read_images(*system.read_state())
    born = particle["age"] >= 0
    x = np.sort(particle["position"][born, 0])
    gaps = np.diff(x)
    expected = speed * simulation.birth_interval(s)
    assert len(x) > 400
    np.testing.assert_allclose(gaps, expected, rtol=1e-3, atol=1e-5)


def test_mesh_emission_is_area_weighted_and_on_the_surface(host):
    s = effect_settings({"count": 20000, "emission": "BURST", "emitter_shape": "MESH", "lifetime": 10.0,
                         "velocity": (0, 0, 0), "velocity_random": 0.0, "normal_velocity": 1.0,
                         "gravity": (0, 0, 0), "drag": 0.0})
    matrix = rotated_box((1, 2, 3), 0.3)
    particle = PARTICLE.read_images(*run_gpu(host, s, 1, matrix, matrix, mesh=MESH))
    local = (particle["position"] - matrix[:3, 3]) @ np.linalg.inv(matrix[:3, :3]).T - particle["velocity"] * 0
    # Each particle moved DT along the world normal; undo that and check the local z = 0 plane.
    normal = matrix[:3, :3] @ np.array([0, 0, 1.0])
    normal /= np.linalg.norm(normal)
    start = particle["position"] - normal * DT
    local = (start - matrix[:3, 3]) @ np.linalg.inv(matrix[:3, :3]).T
    assert np.abs(local[:, 2]).max() < 1e-4
    second = local[:, 0] >= 2.0 - 1e-5
    assert abs(second.mean() - 3 / 3.5) < 0.01  # areas 0.5 and 3
    np.testing.assert_allclose(particle["velocity"], np.tile(normal, (s.count, 1)), atol=1e-5)


@pytest.mark.parametrize("shape", ["SPHERE", "BOX"])
def test_emitter_scale_shapes_the_volume_and_leaves_velocities_alone(host, shape):
    """Scale (1, 0.08, 0) on a radius-2 emitter: born within (2, 0.16, 0) of its centre, filling X; the
    emitter's velocity is not scaled with it (an object's scale would squash it)."""
    s = effect_settings({"count": 20000, "emission": "BURST", "emitter_shape": shape, "emitter_radius": 2.0,
                         "emitter_scale": (1.0, 0.08, 0.0), "lifetime": 10.0, "velocity": (0.0, 0.0, 3.0),
                         "velocity_random": 0.0, "gravity": (0, 0, 0), "drag": 0.0})
    particle = PARTICLE.read_images(*run_gpu(host, s, 1, translation((0, 0, 0)), translation((0, 0, 0))))
    start = particle["position"] - particle["velocity"] * DT
    extent = np.abs(start).max(axis=0)
    assert extent[0] <= 2.0 + 1e-5 and extent[0] > 1.9
    assert extent[1] <= 0.16 + 1e-5 and extent[1] > 0.15
    assert extent[2] < 1e-5
    np.testing.assert_allclose(particle["velocity"], np.tile((0.0, 0.0, 3.0), (s.count, 1)), atol=1e-5)


@pytest.mark.parametrize("moving", [False, True])
@pytest.mark.parametrize("kind", ["SPHERE", "BOX"])
def test_particles_never_end_inside_a_collider(host, kind, moving):
    """Static colliders, and animated ones re-read every frame, leave no particle inside at a frame's end."""
    start = COLLIDERS[1] if kind == "SPHERE" else COLLIDERS[2]
    s = effect_settings({"count": 4000, "lifetime": 2.0, "velocity": (0, 0, 3), "velocity_random": 4.0,
                         "emitter_radius": 0.3})
    system = simulation.ParticleSystem(host, s)
    hits = 0
    for frame in range(20):
        matrix = start.matrix @ translation((0.03 * frame, 0, 0.02 * frame)) if moving else start.matrix
        collider = Collider(start.type, matrix, start.center, start.half_size, start.bounce, start.friction)
        inverse = np.linalg.inv(collider.matrix)
        system.set_scene_inputs([], [collider])
        system.step(DT, translation((0, 0, 0.4)), translation((0, 0, 0.4)))
        particle = PARTICLE.read_images(*system.read_state())
        alive = (particle["age"] >= 0) & (particle["life"] > 0)
        p = particle["position"][alive] @ inverse[:3, :3].T + inverse[:3, 3] - collider.center
        if kind == "SPHERE":
            inside = np.linalg.norm(p, axis=1) < collider.half_size[0] * (1 - 1e-4)
            hits += np.count_nonzero(np.abs(np.linalg.norm(p, axis=1) - collider.half_size[0]) < 1e-4)
        else:
            inside = np.all(np.abs(p) < np.array(collider.half_size) * (1 - 1e-4), axis=1)
            hits += np.count_nonzero(np.any(np.abs(np.abs(p) - collider.half_size) < 1e-4, axis=1))
        assert not inside.any()
    assert hits > 100, "particles must actually hit the collider"


def test_plane_collider_bounces_with_friction(host):
    s = effect_settings({"count": 256, "emission": "BURST", "emitter_shape": "POINT", "lifetime": 10.0,
                         "lifetime_random": 0.0, "velocity": (1, 0, -5), "velocity_random": 0.0,
                         "gravity": (0, 0, 0), "drag": 0.0})
    plane = Collider("PLANE", translation((0, 0, -1)), half_size=(10, 10, 0), bounce=0.5, friction=0.25)
    particle = PARTICLE.read_images(*run_gpu(host, s, 10, np.identity(4), np.identity(4), colliders=[plane]))
    np.testing.assert_allclose(particle["velocity"][0], (0.75, 0, 2.5), atol=1e-5)
    assert (particle["position"][:, 2] >= -1.0).all()


@pytest.mark.parametrize("substeps", [1, 4])
def test_moving_plane_lifts_particles_with_its_velocity(host, substeps):
    """A plane rising through resting particles leaves them on its surface, moving with it (bounce 0)."""
    s = effect_settings({"count": 300, "emission": "BURST", "emitter_shape": "SPHERE", "emitter_radius": 0.2,
                         "lifetime": 10.0, "velocity": (0, 0, 0), "velocity_random": 0.0, "gravity": (0, 0, 0),
                         "drag": 0.0, "substeps": substeps})
    system = simulation.ParticleSystem(host, s)
    system.step(DT, np.identity(4), np.identity(4))
    plane = Collider("PLANE", translation((0, 0, 0.5)), half_size=(5, 5, 0), bounce=0.0,
                     previous=translation((0, 0, -0.5)))
    system.set_scene_inputs([], [plane])
    system.step(DT, np.identity(4), np.identity(4))
    particle = PARTICLE.read_images(*system.read_state())
    np.testing.assert_allclose(particle["position"][:, 2], 0.5, atol=1e-5)
    np.testing.assert_allclose(particle["velocity"][:, 2], 1.0 / DT, rtol=1e-4)
    np.testing.assert_allclose(particle["velocity"][:, :2], 0.0, atol=1e-3)


def test_bad_input_is_refused_clearly(host, monkeypatch):
    for values, words in [
        ({"count": 0}, "count must be at least"),
        ({"lifetime": 0.0}, "lifetime must be at least"),
        ({"lifetime": -1.0}, "lifetime must be at least"),
        ({"size": 0.0}, "size must be at least"),
        ({"turbulence_scale": 0.0}, "turbulence_scale must be at least"),
        ({"burst_interval": -1.0}, "burst_interval must be at least"),
        ({"emitter_shape": "TORUS"}, "emitter_shape must be one of"),
    ]:
        with pytest.raises(SettingsError, match=words):
            effect_settings(values)
    with pytest.raises(SettingsError, match="needs an emitter mesh with at least one face"):
        simulation.ParticleSystem(host, effect_settings({"emitter_shape": "MESH", "count": 10}))
    with pytest.raises(SettingsError, match="at least one face"):
        simulation.ParticleSystem(host, effect_settings({"emitter_shape": "MESH", "count": 10}),
                                  EmitterMesh(np.zeros((3, 3)), np.zeros((0, 3), int)))
    with pytest.raises(ValueError, match="no area"):
        pack_triangles(EmitterMesh(np.zeros((3, 3)), np.array([[0, 1, 2]])))
    monkeypatch.setattr(host, "max_texture_3d_size", 16)
    with pytest.raises(SettingsError, match="3D texture limit of 16"):
        simulation.ParticleSystem(host, effect_settings({"count": 10, "turbulence_resolution": 32}))
    monkeypatch.setattr(host, "max_texture_size", 256)
    with pytest.raises(SettingsError, match="more than this GPU can hold"):
        simulation.ParticleSystem(host, effect_settings({"count": 256 * 256 + 1}))
    monkeypatch.undo()
    system = simulation.ParticleSystem(host, effect_settings({"count": 10}))
    with pytest.raises(SettingsError, match="at most 16 act"):
        system.set_scene_inputs([ForceField("WIND", 1.0)] * 17, [])


MODERNGL_CASE = """
import sys
import numpy as np
sys.path[:0] = [{root!r}, {tests!r}]
from addon.hosts.base import NoGPUError
from addon.hosts.moderngl import ModernGLHost
from addon.engine.registry import KERNELS
from tests.engine.simulate.test_simulation import moderngl_case
try:
    host = ModernGLHost()
except NoGPUError as error:
    print("no moderngl:", error)
    sys.exit(3)
for kernel in KERNELS:
    host.compile(kernel)
pos_age, vel_life = moderngl_case(host, {layout!r})
np.savez({out!r}, pos_age=pos_age, vel_life=vel_life, device=host.device)
"""


def moderngl_case(host, layout):
    overrides, inputs = CASES["colliders"]
    s = effect_settings({"count": 2000, "turbulence_strength": 3.0, "state_layout": layout, **overrides})
    return run_gpu(host, s, 6, translation((0, 0, 0)), translation((0.2, 0, 0)), **inputs)


@pytest.mark.parametrize("layout", ["FULL", "COMPACT"])
def test_moderngl_host_runs_the_same_kernels(host, layout, tmp_path):
    """The benchmark host compiles every kernel body and, on the same driver, gives the same state.

    It runs in a child process: a second GL context in this one would take Blender's away."""
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parents[2]
    out = tmp_path / "moderngl.npz"
    script = MODERNGL_CASE.format(root=str(tests.parent), tests=str(tests), layout=layout, out=str(out))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    if result.returncode == 3:
        pytest.skip(result.stdout.strip())
    assert result.returncode == 0, result.stderr[-3000:]
    theirs = np.load(out)
    if str(theirs["device"]) != host.device:
        pytest.skip(f"different drivers: {theirs['device']} / {host.device}")
    ours = moderngl_case(host, layout)
    np.testing.assert_allclose(ours[0], theirs["pos_age"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[1], theirs["vel_life"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["FULL", "COMPACT"])
def test_extreme_settings_never_give_nan(host, layout):
    """Every setting at a bound, strong fields and colliders: particles stay finite."""
    from addon.engine.settings.settings import EFFECT_FIELDS

    extreme = {f.name: (f.max if f.kind in ("int", "float") else (f.max,) * 3)
               for f in EFFECT_FIELDS if f.kind in ("int", "float", "vec3")}
    extreme.update({"count": 2000, "substeps": 2, "turbulence_resolution": 8, "preroll": 0.0, "seed": 1,
                    "turbulence_scale": 1e-4, "lifetime_random": 0.5, "burst_interval": 0.0, "respawn_skip": 0.0,
                    "rate": 0.0, "cone_angle": 1.0, "emission": "BURST", "state_layout": layout})
    s = effect_settings(extreme)
    fields = [ForceField(kind, 1e5, falloff_power=3.0) for kind in ("WIND", "VORTEX", "FORCE", "TURBULENCE")]
    pos_age, vel_life = run_gpu(host, s, 8, translation((0, 0, 0)), translation((1e4, 0, 0)),
                                fields=fields, colliders=COLLIDERS)
    particle = PARTICLE.read_images(pos_age, vel_life)
    assert np.isfinite(pos_age).all() and np.isfinite(vel_life).all()
    assert ((particle["age"] >= 0) & (particle["life"] > 0)).all()


def test_curl_noise_is_divergence_free_and_unit_rms():
    from addon.engine.simulate.turbulence import curl_noise

    n = 24
    field = curl_noise(n, 3)[..., :3].astype(np.float64)
    assert np.sqrt(np.mean(np.sum(field ** 2, axis=-1))) == pytest.approx(1.0, rel=1e-5)

    def d(component, axis):  # periodic central difference: the volume tiles
        return (np.roll(field[..., component], -1, axis) - np.roll(field[..., component], 1, axis)) * n / 2

    divergence = d(0, 2) + d(1, 1) + d(2, 0)
    scale = np.sqrt(np.mean(d(0, 2) ** 2 + d(1, 1) ** 2 + d(2, 0) ** 2))
    assert np.sqrt(np.mean(divergence ** 2)) < 0.1 * scale  # what remains is the difference's own error
    np.testing.assert_array_equal(curl_noise(n, 3), curl_noise(n, 3))
    assert not np.array_equal(curl_noise(n, 3), curl_noise(n, 4))
