"""Collisions with signed distance fields and Blender's collision settings (issue 30), on the GPU against the
numpy reference (within what the texture unit's filter weights allow: filter_share), and the invariants they must
keep: no tunnelling, no sinking, kill, stick, permeate."""

import math

import numpy as np
import pytest

from addon.engine.reference.simulate import sdf as sdf_reference
from addon.engine.reference.simulate import simulation as ref
from addon.engine.seam.kernels import Constant, Image, Sampler
from addon.engine.seam.records import COLLIDER, PARTICLE
from addon.engine.settings.settings import effect_settings
from addon.engine.simulate import sdf, simulation
from addon.engine.simulate.effectors import (
    COLLIDER_ROWS,
    SDF_CONTACT_VOXELS,
    SDF_FILTER_VOXELS,
    SDF_REACH_ROWS,
    Collider,
    collider_rows,
)
from addon.engine.simulate.sdf import SURFACE_SHELL_VOXELS, SdfAtlas, SdfGrid
from tests.gpu_fill import InlineKernel

DT = 1 / 24
STILL = np.identity(4)


def translation(offset):
    m = np.identity(4)
    m[:3, 3] = offset
    return m


def turned(offset, angle):
    """A rigid matrix: a turn about x, then a move (SDF colliders carry only the rigid part)."""
    c, s = math.cos(angle), math.sin(angle)
    m = np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])
    m[:3, 3] = offset
    return m


# Exact signed distances of analytic shapes in shape space (negative inside).
def sphere_distance(radius):
    return lambda p: np.linalg.norm(p, axis=-1) - radius


def box_distance(half):
    def distance(p):
        q = np.abs(p) - half
        return np.linalg.norm(np.maximum(q, 0), axis=-1) + np.minimum(q.max(axis=-1), 0)
    return distance


def slab_distance(width):
    """A wall |z| <= width / 2, unbounded in x and y."""
    return lambda p: np.abs(p[..., 2]) - width / 2


def open_square(half=0.8, resolution=48):
    """A square of two triangles at z = 0, |x|, |y| <= half, facing up: an open surface's grid and its field as
    the numpy reference builds it (sdf.py: the distance in front, the slab behind)."""
    vertices = np.array([(-half, -half, 0), (half, -half, 0), (half, half, 0), (-half, half, 0)], np.float32)
    triangles = np.array([(0, 1, 2), (0, 2, 3)])
    grid = sdf.sdf_grid(vertices, resolution, surface=True)
    return grid, lambda centres: sdf_reference.build(sdf.mesh_triangles(vertices, triangles, grid), grid)


def grid_around(low, high, voxel) -> SdfGrid:
    """A grid over the box [low, high] plus two voxels of margin, like sdf.sdf_grid's."""
    low, high = np.asarray(low, float) - 2 * voxel, np.asarray(high, float) + 2 * voxel
    return SdfGrid(tuple(low), voxel, tuple(int(n) for n in np.ceil((high - low) / voxel)))


def atlas_of(*shapes) -> tuple[np.ndarray, list[tuple[SdfGrid, int]]]:
    """(depth, height, width) float32 atlas of (grid, distance) pairs stacked along z, with each grid's z offset."""
    atlas = SdfAtlas([grid for grid, _ in shapes])
    volume = np.full(atlas.shape, 1e3, np.float32)
    for (grid, distance), z in zip(shapes, atlas.z_offsets):
        nx, ny, nz = grid.dims
        volume[z:z + nz, :ny, :nx] = distance(grid.centres())
    return volume, list(zip(atlas.grids, atlas.z_offsets))


def sdf_collider(grid_offset, matrix, previous=None, **settings) -> Collider:
    grid, z_offset = grid_offset
    return Collider("SDF", matrix, previous=previous, sdf=grid, sdf_z_offset=z_offset, **settings)


def rain(**changes):
    """Particles falling from a box emitter 1.5 above the origin, fast, in a cone."""
    return effect_settings({"count": 3000, "lifetime": 1.2, "seed": 3, "emitter_shape": "BOX", "emitter_radius": 0.6,
                            "emitter_scale": (1.0, 1.0, 0.1), "velocity": (0, 0, -6), "velocity_random": 1.5,
                            "drag": 0.0, **changes})


RAIN_EMITTER = (translation((0, 0, 1.5)),) * 2  # previous and current matrix


def run_both(host, settings, frames, colliders, volume, emitter=RAIN_EMITTER, per_frame=None):
    """GPU and reference states after ``frames`` frames; ``per_frame(frame)`` gives each frame's colliders."""
    system = simulation.ParticleSystem(host, settings)
    system.set_sdf_atlas(host.volume("sdf_atlas", volume))
    for frame in range(frames):
        system.set_scene_inputs([], colliders if per_frame is None else per_frame(frame))
        system.step(DT, *emitter)
    return system.read_state(), run_reference(settings, frames, colliders, volume, emitter, per_frame)


def run_reference(settings, frames, colliders, volume, emitter=RAIN_EMITTER, per_frame=None, weight_steps=None):
    """The reference's state after ``frames`` frames (run_both's); ``weight_steps``: its filter's (sdf_distance)."""
    inputs = ref.inputs_for(settings, colliders=colliders, sdf_atlas=volume)
    inputs.sdf_weight_steps = weight_steps
    state, clock = ref.init_particles(settings), ref.Clock()
    for frame in range(frames):
        now = colliders if per_frame is None else per_frame(frame)
        inputs.collider_count = len(now)
        state = ref.step_frame(*state, settings, inputs, clock, DT, *emitter, colliders=now)
    return state


def assert_close(gpu, reference, share=0.0, filtered=0.0):
    """Ages and lifetimes exact; positions and velocities within test_simulation's tolerance (all but
    ``share`` of the particles: a sample a float32 rounding apart may end a trace one step sooner); ``filtered``:
    the share that the GPU's filter weights may set apart besides, in all of these (the filter_share fixture)."""
    (pos_age, vel_life), (ref_pos_age, ref_vel_life) = gpu, reference
    assert np.isfinite(pos_age).all() and np.isfinite(vel_life).all()
    particle, ref_particle = PARTICLE.read_images(pos_age, vel_life), PARTICLE.read_images(ref_pos_age, ref_vel_life)
    for got, want in ((particle["age"], ref_particle["age"]), (particle["life"], ref_particle["life"])):
        assert np.mean(got != want) <= filtered, f"{np.count_nonzero(got != want)} ages or lifetimes apart"
    for got, want in ((pos_age, ref_pos_age), (vel_life, ref_vel_life)):
        error = np.max(np.abs(got - want) / np.maximum(np.abs(want), 1.0), axis=1)
        assert np.mean(error >= 1e-4) <= share + filtered, f"{np.count_nonzero(error >= 1e-4)} particles apart: {error.max()}"


def alive(particle):
    return (particle["age"] >= 0) & (particle["age"] < particle["life"])


def shape_points(matrix, points):
    inverse = np.linalg.inv(matrix)
    return points @ inverse[:3, :3].T + inverse[:3, 3]


# shaders/include/sdf_sample.glsl at given shape-space points of one collider: (sdf_distance, sdf_sample's distance).
SDF_PROBE = InlineKernel(
    "sdf_probe_for_test",
    images=(Image("probe_points", "RGBA32F", "READ"), Image("probe_values", "RGBA32F", "WRITE")),
    samplers=(Sampler("sdf_atlas", "FLOAT_3D"),),
    constants=(Constant("VEC4", "colliders", COLLIDER_ROWS),),
    includes=("common.glsl", "sdf_sample.glsl"),
    defines=simulation.SDF_SAMPLING,
    source="""
void main()
{
  ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
  Collider collider = load_collider(0);
  vec3 p = imageLoad(probe_points, texel).xyz;
  vec3 gradient;
  float exact = sdf_sample(collider, p, gradient);
  imageStore(probe_values, texel, vec4(sdf_distance(collider, p, 1.0 / vec3(textureSize(sdf_atlas, 0))), exact, 0, 0));
}
""")


def probe_sdf(host, atlas, collider, points):
    """(filtered, exact) distances of the GPU at (n, 3) shape-space points, n a multiple of 256."""
    rows = collider_rows([collider], 0.0, 1.0, DT)[:COLLIDER_ROWS]
    padded = np.zeros((len(points) // 256, 256, 4), np.float32)
    padded.reshape(-1, 4)[:, :3] = points
    values = host.texture("probe_values", 256, len(padded), "RGBA32F")
    host.dispatch(SDF_PROBE, SDF_PROBE.groups_for(256, len(padded)),
                  {"probe_points": host.texture("probe_points", 256, len(padded), "RGBA32F", padded),
                   "probe_values": values, "sdf_atlas": atlas}, SDF_PROBE.pack({"colliders": rows}))
    result = host.read(values).reshape(-1, 4)
    return result[:, 0], result[:, 1]


SPHERE = (grid_around((-0.5,) * 3, (0.5,) * 3, 0.04), sphere_distance(0.5))
SHEET = open_square()
BOX = (grid_around((-0.6, -0.6, -0.2), (0.6, 0.6, 0.2), 0.03), box_distance(np.array([0.6, 0.6, 0.2])))
WALL = (grid_around((-1, -1, -0.005), (1, 1, 0.005), 0.0123), slab_distance(0.01))


def probe_points(rng, grid) -> np.ndarray:
    """1024 shape-space points around a grid: its 8 box corners, points on its faces, the rest within two voxels
    of its box (inside and out)."""
    low = np.asarray(grid.origin)
    high = low + np.asarray(grid.dims) * grid.voxel
    corners = np.stack(np.meshgrid(*zip(low, high), indexing="ij"), axis=-1).reshape(-1, 3)
    faces = rng.uniform(low, high, (248, 3))
    axis = rng.integers(0, 3, len(faces))
    faces[np.arange(len(faces)), axis] = np.where(rng.uniform(size=len(faces)) < 0.5, low[axis], high[axis])
    around = rng.uniform(low - 2 * grid.voxel, high + 2 * grid.voxel, (768, 3))
    return np.concatenate([corners, faces, around]).astype(np.float32)


# The share of a many-frame rain's particles that a texture unit's few-bit weights may set apart from the
# reference (which filters with exact weights): a trace that ends a sample sooner, a hit across a voxel's face
# where the normal turns.  The reference with its weights cut to 1/256 parts from itself in about 5% of the
# particles (and 1.7% of the ages, where colliders kill): test_coarse_weights_part_few_particles.
COARSE_FILTER_SHARE = 0.15


@pytest.fixture(scope="module")
def filter_share(host) -> float:
    """COARSE_FILTER_SHARE where this GPU's filter parts from the exact trilinear by more than float rounding
    (NVIDIA's 8-bit weights, up to 3/256 voxel), else 0 (llvmpipe filters in float: 3e-6 voxel)."""
    volume, (grid,) = atlas_of(SPHERE)
    atlas = host.volume("sdf_atlas", volume)
    host.sampling(atlas, linear=True)
    points = probe_points(np.random.default_rng(0), grid[0])
    filtered, exact = probe_sdf(host, atlas, sdf_collider(grid, STILL), points)
    return COARSE_FILTER_SHARE if np.abs(filtered - exact).max() > 1e-4 * grid[0].voxel else 0.0


def test_the_filtered_distance_stays_within_its_bound_and_its_grid(host, rng):
    """sdf_sample.glsl: sdf_distance (the texture unit's trilinear: the sphere trace's samples) is within
    SDF_FILTER_VOXELS voxels of sdf_sample (by hand, the reference's to float rounding) inside a grid, on its
    faces and beyond, though the atlas holds the next grid's far values right above it (z) and padding beside
    it (x, y): the edge clamp keeps the filter inside the grid.  The reference with the weights cut to 1/256
    (NVIDIA's 8 bits, at their worst) keeps the bound too."""
    slab = (grid_around((-0.8, -0.8, -0.1), (0.8, 0.8, 0.1), 0.04), lambda p: np.full(p.shape[:-1], 50.0))
    volume, grids = atlas_of(SPHERE, slab)  # a 29-voxel sphere under a 44 x 44 slab of 50s, 1e3 beside it
    atlas = host.volume("sdf_atlas", volume)
    host.sampling(atlas, linear=True)  # as ParticleSystem.set_sdf_atlas sets it
    for grid in grids:
        collider = sdf_collider(grid, STILL)
        points = probe_points(rng, grid[0])
        filtered, exact = probe_sdf(host, atlas, collider, points)
        row = COLLIDER.read(collider_rows([collider], 0.0, 1.0, DT)[:COLLIDER_ROWS])
        reference = ref.sdf_sample(row, volume, points)[0]
        np.testing.assert_allclose(exact, reference, rtol=1e-6, atol=1e-6)
        bound = SDF_FILTER_VOXELS * grid[0].voxel
        off = np.abs(filtered - exact).max()
        assert off <= bound, f"the filter is {off / grid[0].voxel:.3g} voxels off (SDF_FILTER_VOXELS {SDF_FILTER_VOXELS:.3g})"
        assert np.abs(ref.sdf_distance(row, volume, points, weight_steps=256) - reference).max() <= bound


@pytest.mark.parametrize("shape", ["sphere", "box", "kill"])
def test_coarse_weights_part_few_particles(shape):
    """COARSE_FILTER_SHARE's measure, in the reference alone: the rains of the tests below with the filter's
    weights cut to 1/256 (NVIDIA's 8 bits, at their worst) part from the exact weights' in at most half that
    share of the particles (about 5% of the sphere's, 1.3% of the box's, 1.7% of the ages where it kills)."""
    if shape == "kill":
        volume, (grid,) = atlas_of(SPHERE)
        settings, colliders = rain(rate=4000.0, respawn_skip=0.05), [sdf_collider(grid, STILL, kill=True)]
    else:
        volume, (grid,) = atlas_of(SPHERE if shape == "sphere" else BOX)
        settings, colliders = rain(substeps=2), [sdf_collider(grid, turned((0.1, 0, 0.2), 0.3), bounce=0.4,
                                                              friction=0.2, thickness=0.02, stickiness=0.3)]
    exact, coarse = (run_reference(settings, 10, colliders, volume, weight_steps=steps) for steps in (None, 256))
    assert_close(coarse, exact, filtered=COARSE_FILTER_SHARE / 2)
    assert not np.array_equal(coarse[0], exact[0]), "the weights make a difference"


@pytest.mark.parametrize("shape", ["sphere", "box", "wall"])
def test_sdf_collisions_match_the_reference(host, shape, filter_share):
    """Rain onto an SDF (the box turned and moving) over several frames with substeps, every setting but kill."""
    volume, (grid,) = atlas_of({"sphere": SPHERE, "box": BOX, "wall": WALL}[shape])
    settings = rain(substeps=2)
    matrix = turned((0.1, 0, 0.2), 0.3)
    colliders = [sdf_collider(grid, matrix, bounce=0.4, friction=0.2, thickness=0.02, stickiness=0.3)]
    if shape == "box":
        colliders = [sdf_collider(grid, matrix, previous=turned((0.0, 0, 0.1), 0.25), bounce=0.3, friction=0.1)]
    gpu, reference = run_both(host, settings, 10, colliders, volume)
    assert_close(gpu, reference, share=0.002, filtered=filter_share)


def test_an_open_surface_keeps_each_step_on_the_side_it_started(rng):
    """sdf_contact's reference on an open square (the slab behind it, sdf.py): steps that cross it in one go, down
    from above or up from below (from beyond the slab, or within the contact distance of its back face), end on
    the side they started on, at least the contact distance from the sheet or the slab; steps within the grid that
    do not come near it keep their ends."""
    volume, (grid,) = atlas_of(SHEET)
    row = COLLIDER.read(collider_rows([sdf_collider(grid, STILL)], 0.0, 1.0, DT)[:COLLIDER_ROWS])
    contact, shell = (voxels * grid[0].voxel for voxels in (SDF_CONTACT_VOXELS, SURFACE_SHELL_VOXELS))
    count = 3000
    heights = np.concatenate([rng.uniform(0.001, 0.3, count), -shell - rng.uniform(0.001, 0.3, count)])
    start = np.concatenate([rng.uniform(-0.7, 0.7, (2 * count, 2)), heights[:, None]], axis=1).astype(np.float32)
    end = (start + np.concatenate([rng.uniform(-0.1, 0.1, (2 * count, 2)),
                                   -np.sign(heights)[:, None] * rng.uniform(0.0, 0.6, (2 * count, 1))], axis=1))
    end = end.astype(np.float32)
    touched, p, _, began_inside = ref.sdf_contact(row, volume, start, end)
    above = start[:, 2] > 0
    assert not began_inside.any()
    assert (p[above, 2] > 0).all() and (p[~above, 2] < -shell).all(), "each on the side it started on"
    inner = (np.abs(p[:, :2]) < 0.8 - grid[0].voxel).all(axis=1)
    assert (p[above & inner, 2] >= contact * (1 - 1e-4)).all() and (p[~above & inner, 2] <= -shell - contact * (1 - 1e-4)).all()
    beyond = np.maximum(np.abs(p[:, :2]) - 0.8, 0)
    from_sheet = np.sqrt(np.where(above, p[:, 2], p[:, 2] + shell) ** 2 + (beyond ** 2).sum(axis=1))
    assert (from_sheet >= contact - 0.25 * grid[0].voxel).all(), "by the rim, the contact less a rounding"
    crossed = np.sign(end[:, 2]) != np.sign(start[:, 2])
    assert touched[crossed].all() and crossed[:count].sum() > 1000 and crossed[count:].sum() > 1000
    boxed = np.abs(start[:, 2]) < grid[0].dims[2] * grid[0].voxel / 2  # beyond, the field is a lower bound
    clear = boxed & ((end[:, 2] > 2 * contact) & above | (end[:, 2] < -shell - 2 * contact) & ~above)
    assert (p[clear] == end[clear]).all() and clear.sum() > 50


@pytest.mark.parametrize("direction", ["down", "up"])
def test_open_surface_collisions_match_the_reference_and_never_cross(host, direction, filter_share):
    """Rain onto a turned open sheet from above, or fountains up into it from below, over several frames with
    substeps: the GPU's state is the reference's, and no particle over the sheet ends on its other side."""
    volume, (grid,) = atlas_of(SHEET)
    matrix = turned((0.1, 0, 0.2), 0.3)
    up = direction == "up"
    settings = rain(substeps=2, velocity=(0, 0, 7) if up else (0, 0, -6), velocity_random=0.3, emitter_radius=0.4)
    emitter = (translation((0, 0, -1.2 if up else 1.5)),) * 2
    colliders = [sdf_collider(grid, matrix, bounce=0.4, friction=0.2, thickness=0.02, stickiness=0.1)]
    gpu, reference = run_both(host, settings, 10, colliders, volume, emitter=emitter)
    assert_close(gpu, reference, share=0.002, filtered=filter_share)
    particle = PARTICLE.read_images(*gpu)
    local = shape_points(matrix, particle["position"][alive(particle)])
    over = (np.abs(local[:, :2]) < 0.8).all(axis=1)
    assert (over & (np.abs(local[:, 2]) < 0.2)).sum() > 50, "particles reach the sheet"
    assert ((local[over, 2] < 0) if up else (local[over, 2] > 0)).all()


def test_rain_on_an_sdf_sphere_never_sinks_in(host):
    """Thickness zero (the contact distance is then SDF_CONTACT_VOXELS voxels): after every frame of a long
    rain, no live particle is deeper than half a voxel inside the contact distance."""
    volume, (grid,) = atlas_of(SPHERE)
    matrix = translation((0.05, -0.02, 0.0))
    system = simulation.ParticleSystem(host, rain(velocity=(0, 0, -3), lifetime=2.0, count=4000))
    system.set_sdf_atlas(host.volume("sdf_atlas", volume))
    system.set_scene_inputs([], [sdf_collider(grid, matrix, bounce=0.1, friction=0.3)])
    touching = 0
    for _ in range(36):
        system.step(DT, translation((0, 0, 1.2)), translation((0, 0, 1.2)))
        particle = PARTICLE.read_images(*system.read_state())
        d = SPHERE[1](shape_points(matrix, particle["position"][alive(particle)]))
        assert d.min() >= -0.5 * grid[0].voxel
        touching += np.count_nonzero(d < 2 * SDF_CONTACT_VOXELS * grid[0].voxel)
    assert touching > 1000, "particles must rest on the sphere"


@pytest.mark.parametrize("angle", [0.0, 0.5])
def test_100_metres_per_second_never_pass_a_1_cm_wall(host, angle):
    """A 1 cm wall sampled at 1.23 cm voxels (its field may never go negative), hit at 100 m/s: 4 m a step."""
    volume, (grid,) = atlas_of(WALL)
    matrix = turned((0, 0, 0), angle)
    settings = rain(velocity=(0, 0, -100), velocity_random=20.0, emitter_radius=0.4, emission="BURST",
                    lifetime=1.0, gravity=(0, 0, 0))
    system = simulation.ParticleSystem(host, settings)
    system.set_sdf_atlas(host.volume("sdf_atlas", volume))
    system.set_scene_inputs([], [sdf_collider(grid, matrix, bounce=0.5)])
    crossed = np.zeros(settings.count, bool)
    for _ in range(4):
        system.step(DT, translation((0, 0, 1.0)), translation((0, 0, 1.0)))
        local = shape_points(matrix, PARTICLE.read_images(*system.read_state())["position"])
        crossed |= (local[:, 2] < 0) & np.all(np.abs(local[:, :2]) < 1, axis=1)
    assert not crossed.any()
    assert np.all(local[:, 2] > 1.0), "every particle bounced off the wall"


def test_killing_colliders_kill_and_the_slots_respawn_on_schedule(host, filter_share):
    """Kill Particles: a continuous effect's killed slots wait and respawn as after a normal death (ages and
    lifetimes exactly the reference's); a burst's die for good."""
    volume, (grid,) = atlas_of(SPHERE)
    colliders = [sdf_collider(grid, STILL, kill=True),
                 Collider("PLANE", translation((0, 0, -0.8)), half_size=(5, 5, 0), kill=True)]
    gpu, reference = run_both(host, rain(rate=4000.0, respawn_skip=0.05), 12, colliders, volume)
    assert_close(gpu, reference, filtered=filter_share)
    particle = PARTICLE.read_images(*gpu)
    live = alive(particle)
    assert SPHERE[1](particle["position"][live]).min() > 0.02 and particle["position"][live, 2].min() > -0.8
    assert np.count_nonzero((particle["life"] == 0) & (particle["age"] < 0)) > 300, "killed slots wait to respawn"
    burst, _ = run_both(host, rain(emission="BURST", lifetime=5.0), 12, colliders, volume)
    assert np.count_nonzero(PARTICLE.read_images(*burst)["life"] == -1) > 1000, "burst particles die for good"


@pytest.mark.parametrize("stickiness", [0.0, 2.0])
def test_stickiness_holds_particles_under_a_ceiling(host, stickiness, filter_share):
    """Shot up under an SDF slab: with stickiness over what gravity adds in a step they hang on, without it
    they fall off (Blender's meaning: a speed toward the surface at every contact)."""
    ceiling = (grid_around((-1, -1, -0.1), (1, 1, 0.1), 0.03), box_distance(np.array([1.0, 1.0, 0.1])))
    volume, (grid,) = atlas_of(ceiling)
    settings = effect_settings({"count": 500, "emission": "BURST", "lifetime": 5.0, "emitter_shape": "SPHERE",
                                "emitter_radius": 0.1, "velocity": (0, 0, 6), "velocity_random": 1.0})
    colliders = [sdf_collider(grid, translation((0, 0, 1.1)), bounce=0.0, stickiness=stickiness)]
    gpu, reference = run_both(host, settings, 14, colliders, volume, emitter=(STILL, STILL))
    assert_close(gpu, reference, filtered=filter_share)
    z = PARTICLE.read_images(*gpu)["position"][:, 2]
    if stickiness:
        np.testing.assert_allclose(z, 1.0 - SDF_CONTACT_VOXELS * grid[0].voxel, atol=0.01)
    else:
        assert z.max() < 0.8


def test_permeability_lets_its_share_through_deterministically(host, filter_share):
    """Permeability 0.5: about half the particles pass a wall they hit once (a 6-sigma binomial bound), the
    same ones on the GPU as in the reference (a counter-based random stream per particle, step and collider)."""
    volume, (grid,) = atlas_of(WALL)
    settings = rain(emission="BURST", velocity=(0, 0, -5), velocity_random=0.0, gravity=(0, 0, 0), lifetime=5.0,
                    emitter_scale=(1.0, 1.0, 0.0))
    colliders = [sdf_collider(grid, STILL, bounce=1.0, permeability=0.5)]
    gpu, reference = run_both(host, settings, 12, colliders, volume, emitter=(translation((0, 0, 0.5)),) * 2)
    assert_close(gpu, reference, filtered=filter_share)
    z = PARTICLE.read_images(*gpu)["position"][:, 2]
    through = np.count_nonzero(z < 0)
    assert np.count_nonzero(z > 0.5) + through == settings.count, "every particle met the wall once"
    n = settings.count
    assert abs(through - n / 2) < 6 * math.sqrt(n / 4)


@pytest.mark.parametrize("substeps", [1, 4])
def test_a_moving_sdf_collider_pushes_particles(host, substeps, filter_share):
    """A slab 0.4 thick sweeps up 0.8 in a frame through resting particles: none is left behind (its motion
    is traced relative to the collider) and each moves on with its velocity (bounce 0)."""
    volume, (grid,) = atlas_of(BOX)
    settings = effect_settings({"count": 400, "emission": "BURST", "emitter_shape": "SPHERE", "emitter_radius": 0.2,
                                "lifetime": 10.0, "velocity": (0, 0, 0), "velocity_random": 0.0,
                                "gravity": (0, 0, 0), "drag": 0.0, "substeps": substeps})

    def colliders(frame):
        at = translation((0, 0, 0.25)) if frame else translation((0, 0, -0.55))
        return [sdf_collider(grid, at, previous=translation((0, 0, -0.55)), bounce=0.0)] if frame else []

    gpu, reference = run_both(host, settings, 2, [], volume, emitter=(STILL, STILL), per_frame=colliders)
    assert_close(gpu, reference, filtered=filter_share)
    particle = PARTICLE.read_images(*gpu)
    assert particle["position"][:, 2].min() > 0.45
    np.testing.assert_allclose(particle["velocity"][:, 2], 0.8 / DT, rtol=1e-3)


@pytest.mark.parametrize("kind", ["PLANE", "SPHERE", "BOX"])
def test_thickness_keeps_particles_off_analytic_colliders(host, kind):
    volume = np.zeros((1, 1, 1), np.float32)
    collider = {"PLANE": Collider("PLANE", translation((0, 0, -0.3)), half_size=(4, 4, 0)),
                "SPHERE": Collider("SPHERE", translation((0.1, 0, 0)), half_size=(0.5, 0.5, 0.5)),
                "BOX": Collider("BOX", turned((0, 0, 0), 0.3), half_size=(0.5, 0.4, 0.3))}[kind]
    collider = Collider(**{**collider.__dict__, "thickness": 0.1, "bounce": 0.2, "friction": 0.5})
    gpu, reference = run_both(host, rain(), 10, [collider], volume)
    assert_close(gpu, reference)
    particle = PARTICLE.read_images(*gpu)
    local = shape_points(collider.matrix, particle["position"][alive(particle)])
    distance = {"PLANE": local[:, 2], "SPHERE": np.linalg.norm(local, axis=1) - 0.5,
                "BOX": np.max(np.abs(local) - collider.half_size, axis=1)}[kind]
    assert distance.min() > 0.1 - 1e-5
    assert np.count_nonzero(distance < 0.1 + 1e-4) > 20, "particles must rest at the thickness"


def test_overlapping_colliders(host, filter_share):
    """An SDF sphere and an SDF box overlapping each other and an analytic box: the reference's result, and
    no particle deep inside any of them."""
    volume, (sphere, box) = atlas_of(SPHERE, BOX)
    colliders = [sdf_collider(sphere, translation((0.3, 0, 0)), bounce=0.3),
                 sdf_collider(box, turned((-0.2, 0, -0.1), 0.2), friction=0.5, thickness=0.03),
                 Collider("BOX", translation((0, 0.4, 0)), half_size=(0.3, 0.3, 0.3), bounce=0.1)]
    gpu, reference = run_both(host, rain(substeps=2), 10, colliders, volume)
    assert_close(gpu, reference, share=0.002, filtered=filter_share)
    particle = PARTICLE.read_images(*gpu)
    points = particle["position"][alive(particle)]
    assert SPHERE[1](shape_points(colliders[0].matrix, points)).min() > -0.02
    assert BOX[1](shape_points(colliders[1].matrix, points)).min() > -0.02


@pytest.mark.parametrize("start", ["centre", "voxel_centre"])
def test_particles_inside_are_pushed_out_without_nan(host, start, filter_share):
    """Born at the centre of a sphere whose grid has a voxel corner there (the sampled gradient vanishes:
    pushed out along +z), or exactly at a voxel centre, at rest, thickness zero: pushed out to the contact
    distance, finite, as in the reference."""
    even = (grid_around((-0.5,) * 3, (0.5,) * 3, 0.05), SPHERE[1])
    assert even[0].dims == (24, 24, 24)
    volume, (grid,) = atlas_of(even)
    at = (0.0, 0.0, 0.0) if start == "centre" else tuple(grid[0].centres()[10, 12, 11])
    settings = effect_settings({"count": 64, "emission": "BURST", "emitter_shape": "POINT", "lifetime": 5.0,
                                "velocity": (0, 0, 0), "velocity_random": 0.0, "gravity": (0, 0, 0)})
    gpu, reference = run_both(host, settings, 2, [sdf_collider(grid, STILL)], volume,
                              emitter=(translation(at),) * 2)
    assert_close(gpu, reference, filtered=filter_share)
    position = PARTICLE.read_images(*gpu)["position"]
    d = SPHERE[1](position)
    np.testing.assert_allclose(d, SDF_CONTACT_VOXELS * grid[0].voxel, atol=0.3 * grid[0].voxel)
    if start == "centre":
        assert np.abs(position[:, :2]).max() < 1e-6 and position[:, 2].min() > 0


@pytest.mark.parametrize("contact_threads", [simulation.SDF_CONTACT_THREADS, 256])
def test_the_contact_pass_takes_exactly_the_steps_that_meet_an_sdf_grid(host, rng, monkeypatch, contact_threads, filter_share):
    """simulate.glsl's two passes with SDF colliders: the list holds each slot whose step comes within the
    contact distance of a grid box once (the others were stepped by the list pass, most of them stopped by the
    broad phase, effectors.sdf_reach, which passes every listed one), and both passes together give the
    reference's step, in every slot; with fewer contact threads than listed slots too (each thread then steps
    every so many)."""
    monkeypatch.setattr(simulation, "SDF_CONTACT_THREADS", contact_threads)
    volume, (grid,) = atlas_of(SPHERE)
    count = 2000
    settings = effect_settings({"count": count, "emission": "BURST", "lifetime": 10.0, "gravity": (0, 0, 0),
                                "drag": 0.0})
    colliders = [sdf_collider(grid, STILL, bounce=0.5, thickness=0.02)]
    pos_age = np.zeros((count, 4), np.float32)
    vel_life = np.zeros((count, 4), np.float32)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:] = rng.uniform(-1.0, 1.0, (count, 3))
    particle["age"][:] = 1.0
    particle["velocity"][:] = rng.normal(0.0, 3.0, (count, 3))
    particle["life"][:] = settings.lifetime
    system = simulation.ParticleSystem(host, settings)
    system.set_sdf_atlas(host.volume("sdf_atlas", volume))
    system.set_scene_inputs([], colliders)
    system.write_state(pos_age, vel_life)
    system.step(DT, STILL, STILL)

    start, end = particle["position"], particle["position"] + particle["velocity"] * np.float32(DT)
    low = np.asarray(grid[0].origin)
    high = low + np.asarray(grid[0].dims) * grid[0].voxel
    margin = max(0.02, SDF_CONTACT_VOXELS * grid[0].voxel)  # the contact distance (effectors._sdf_lanes)
    meets = np.all((np.minimum(start, end) - margin <= high) & (np.maximum(start, end) + margin >= low), axis=1)
    constants = simulation.simulate_constants(
        settings, dt=DT, step_index=0, time=DT, emitter_prev=STILL, emitter_cur=STILL, origin_in=np.zeros(3),
        origin_out=np.zeros(3), colliders=colliders)
    broad = ref.meets_sdf_reach(start, end, constants["sdf_reach"][:SDF_REACH_ROWS], constants["sdf_reach_spread"])
    slots, length = system.contact_list
    listed = host.read(slots).ravel()[: int(host.read(length)[0, 0])]
    assert contact_threads < len(listed) < count or contact_threads > count
    np.testing.assert_array_equal(np.sort(listed), np.flatnonzero(meets))
    assert broad[meets].all() and broad.sum() < 1.5 * meets.sum()

    inputs = ref.inputs_for(settings, colliders=colliders, sdf_atlas=volume)
    reference = ref.simulate(pos_age, vel_life, constants, inputs)
    assert_close(system.read_state(), reference, filtered=filter_share)


def scaled(offset, angle, scale):
    m = turned(offset, angle)
    m[:3, :3] = m[:3, :3] @ np.diag(scale)
    return m


@pytest.mark.parametrize("motion", ["still", "moving", "scaled", "turning"])
def test_the_sdf_broad_phase_keeps_every_step_that_meets_a_grid(rng, motion):
    """effectors.sdf_reach (simulate.glsl meets_sdf_reach, a world box around each SDF collider) passes every
    step that the exact test (meets_sdf_grid) passes, on random steps around turned, moving and scaled
    colliders, in float32 as the kernel computes, and stops nearly all the others; a turning collider's motion
    it does not bound: then every step goes on to the exact test."""
    _, grids = atlas_of(SPHERE, BOX)
    poses = {"still": (turned((1.0, 0, 0), 0.4), None), "moving": (turned((1.0, 0, 0), 0.4), turned((0.7, 0.2, 0), 0.4)),
             "scaled": (scaled((1.0, 0, 0), 0.4, (0.8, 1.0, 1.25)), None),
             "turning": (turned((1.0, 0, 0), 0.4), turned((1.0, 0, 0), 0.3))}[motion]
    colliders = [sdf_collider(grids[0], *poses, thickness=0.05), sdf_collider(grids[1], translation((-2.0, 0.5, 1.0)))]
    count = 200_000
    previous = rng.uniform(-5.0, 5.0, (count, 3)).astype(np.float32)
    position = (previous + rng.normal(0.0, 0.5, (count, 3))).astype(np.float32)
    lived = np.where(rng.uniform(size=count) < 0.5, DT, rng.uniform(0.0, DT, count)).astype(np.float32)
    settings = effect_settings({})
    c = simulation.SIMULATE.named(simulation.simulate_constants(
        settings, dt=DT, step_index=0, time=DT, emitter_prev=STILL, emitter_cur=STILL, origin_in=np.zeros(3),
        origin_out=np.zeros(3), colliders=colliders, substep=(1, 3)))
    rows = np.asarray(c["colliders"], np.float32).reshape(-1, COLLIDER_ROWS, 4)
    reaches = np.asarray(c["sdf_reach"]).reshape(-1, SDF_REACH_ROWS, 4)
    for number, (row, reach) in enumerate(zip(rows[: len(colliders)], reaches)):
        collider = COLLIDER.read(row)
        start, end = ref.step_start_local(collider, previous, lived), ref._dot_rows(collider["to_local"], position)
        meets = (np.all(np.minimum(start, end) - collider["thickness"] <= collider["sdf_high"], axis=1)
                 & np.all(np.maximum(start, end) + collider["thickness"] >= collider["sdf_low"], axis=1))
        broad = ref.meets_sdf_reach(previous, position, reach, c["sdf_reach_spread"])
        assert 0 < meets.sum() and broad[meets].all()
        assert broad.all() if motion == "turning" and number == 0 else broad.mean() < 0.05  # of a 10 m cube's
