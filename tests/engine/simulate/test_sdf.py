"""The SDF build (engine/simulate/sdf.py) on the GPU against its numpy reference and against exact signed distances."""

import numpy as np
import pytest

from addon.engine.reference.simulate import sdf as reference
from addon.engine.seam.kernels import Constant, Image, Sampler
from addon.engine.settings.settings import SettingsError
from addon.engine.simulate import sdf
from tests.gpu_fill import InlineKernel


def cube(half=1.0):
    vertices = np.array([[x, y, z] for x in (-half, half) for y in (-half, half) for z in (-half, half)], np.float32)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return vertices, np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])


def icosphere(subdivisions=2, radius=1.0):
    t = (1 + 5 ** 0.5) / 2
    vertices = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
                (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
             (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11),
             (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    vertices = [np.array(v, float) / np.linalg.norm(v) for v in vertices]
    for _ in range(subdivisions):
        midpoints, refined = {}, []
        for a, b, c in faces:
            ab, bc, ca = (_midpoint(vertices, midpoints, i, j) for i, j in ((a, b), (b, c), (c, a)))
            refined += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = refined
    return np.array(vertices, np.float32) * radius, np.array(faces)


def _midpoint(vertices, midpoints, i, j):
    """The index of edge ij's midpoint on the unit sphere, added once for the edge's two faces."""
    key = (min(i, j), max(i, j))
    if key not in midpoints:
        middle = vertices[i] + vertices[j]
        vertices.append(middle / np.linalg.norm(middle))
        midpoints[key] = len(vertices) - 1
    return midpoints[key]


def torus(major=1.0, minor=0.35, rings=24, sides=12):
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, rings, endpoint=False),
                       np.linspace(0, 2 * np.pi, sides, endpoint=False), indexing="ij")
    vertices = np.stack([(major + minor * np.cos(v)) * np.cos(u), (major + minor * np.cos(v)) * np.sin(u),
                         minor * np.sin(v)], -1).reshape(-1, 3).astype(np.float32)
    i, j = np.meshgrid(np.arange(rings), np.arange(sides), indexing="ij")
    a, b = i * sides + j, ((i + 1) % rings) * sides + j
    c, d = ((i + 1) % rings) * sides + (j + 1) % sides, i * sides + (j + 1) % sides
    return vertices, np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])


def tunnelled_box(quads=3):
    """A cube of ``quads`` x ``quads`` quads a face without the middle quad of its -x, +x and +y faces: x
    columns through the middle run through two holes (an even count, wrongly "outside"), y columns through
    one (odd: they abstain), so only z votes rightly there (the feature of Suzanne's eye sockets)."""
    edges = np.linspace(-1.0, 1.0, quads + 1, dtype=np.float32)
    vertices, triangles, middle = [], [], quads // 2
    for axis in range(3):
        u, w = (axis + 1) % 3, (axis + 2) % 3
        for side in (-1.0, 1.0):
            if axis == 0 or (axis == 1 and side > 0):
                skip = (middle, middle)
            else:
                skip = None
            for i in range(quads):
                for j in range(quads):
                    if (i, j) == skip:
                        continue
                    corners = np.zeros((4, 3), np.float32)
                    corners[:, axis] = side
                    corners[:, u] = edges[[i, i + 1, i + 1, i]]
                    corners[:, w] = edges[[j, j, j + 1, j + 1]]
                    base = len(vertices) * 4
                    vertices.append(corners)
                    quad = [(base, base + 1, base + 2), (base, base + 2, base + 3)]
                    triangles += quad if side > 0 else [t[::-1] for t in quad]  # normals outwards
    return np.concatenate(vertices), np.array(triangles)


def terrain_height(x, y):
    return 0.3 * np.sin(2.0 * x + 0.4) * np.cos(1.5 * y)


def terrain(cuts=12, size=2.0):
    """A ``cuts`` x ``cuts`` quad grid ``size`` wide with its z displaced (terrain: an open sheet, faces up);
    quad (i, j)'s triangles share its diagonal from corner (i, j) to (i + 1, j + 1)."""
    edges = np.linspace(-size / 2, size / 2, cuts + 1)
    x, y = np.meshgrid(edges, edges, indexing="ij")
    vertices = np.stack([x, y, terrain_height(x, y)], -1).reshape(-1, 3).astype(np.float32)
    i, j = np.meshgrid(np.arange(cuts), np.arange(cuts), indexing="ij")
    a, b, c, d = i * (cuts + 1) + j, (i + 1) * (cuts + 1) + j, (i + 1) * (cuts + 1) + j + 1, i * (cuts + 1) + j + 1
    return vertices, np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])


def height_over(vertices, cuts, size, points):
    """terrain()'s height under each point (x, y) within its square: the plane of the triangle it is over."""
    heights = vertices[:, 2].astype(np.float64).reshape(cuts + 1, cuts + 1)
    cell = (points[:, :2] + size / 2) / (size / cuts)
    i, j = (np.clip(np.floor(cell[:, k]).astype(int), 0, cuts - 1) for k in (0, 1))
    u, v = cell[:, 0] - i, cell[:, 1] - j
    ha, hb, hc, hd = heights[i, j], heights[i + 1, j], heights[i + 1, j + 1], heights[i, j + 1]
    return np.where(u >= v, ha + u * (hb - ha) + v * (hc - hb), ha + u * (hc - hd) + v * (hd - ha))


VOLUME_IMAGES = InlineKernel(
    "volume_images_for_test",
    images=(Image("counts", "R32UI", atomic=True, dimensions=3), Image("result", "R32F", "WRITE", dimensions=3)),
    samplers=(Sampler("source", "FLOAT_3D"),), constants=(Constant("INT", "add"),), local_size=(4, 4, 4),
    source="""
void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  if (any(greaterThanEqual(voxel, imageSize(result)))) {
    return;
  }
  imageAtomicAdd(counts, ivec3(0), 1u);
  imageAtomicMax(counts, voxel, uint(voxel.x + 10 * voxel.y + 100 * voxel.z));
  imageStore(result, voxel, vec4(texelFetch(source, voxel, 0).x * 2.0 + float(add)));
}
""")


def check_volumes(host):
    """Host.volume's three forms: R32F from (d, h, w) data, empty R32F / R32UI for 3D images (atomics too),
    RGBA32F from (d, h, w, 4) data; read and clear of each."""
    depth, height, width = 3, 4, 5
    source = host.volume("source", np.arange(depth * height * width, dtype=np.float32).reshape(depth, height, width))
    counts = host.volume("counts", shape=(depth, height, width), format="R32UI")
    result = host.volume("result", shape=(depth, height, width))
    assert (host.read(counts) == 0).all() and (host.read(result) == 0).all()
    host.clear(counts, 0xFFFFFFF0)
    assert (host.read(counts) == 0xFFFFFFF0).all()
    host.clear(counts, 1)
    host.dispatch(VOLUME_IMAGES, (2, 1, 1), {"counts": counts, "result": result, "source": source}, {"add": 1})
    assert np.array_equal(host.read(result), host.read(source) * 2 + 1)
    k, j, i = np.indices((depth, height, width))
    expected = np.maximum(i + 10 * j + 100 * k, 1).astype(np.uint32)
    expected[0, 0, 0] = 1 + depth * height * width
    assert np.array_equal(host.read(counts), expected)
    rgba = host.volume("noise", np.ones((2, 3, 4, 4), np.float32))
    assert rgba.format == "RGBA32F" and host.read(rgba).shape == (2, 3, 4, 4)
    with pytest.raises(ValueError, match="R32F, R32UI, RGBA16F or RGBA32F"):
        host.volume("bad", shape=(1, 1, 1), format="DEPTH32F")


def test_volumes(host):
    check_volumes(host)


def gpu_build(host, vertices, triangles, resolution, atlas_shape=None, z_offset=0, surface=False):
    grid = sdf.sdf_grid(vertices, resolution, surface=surface)
    atlas = host.volume("sdf_atlas", shape=atlas_shape or grid.dims[::-1])
    sdf.SdfBuilder(host).build(vertices, triangles, grid, atlas, z_offset)
    values = host.read(atlas)
    nx, ny, nz = grid.dims
    return grid, values[z_offset:z_offset + nz, :ny, :nx], values


def check_against_reference(grid, values, corners):
    assert_same_field(grid, values, reference.build(corners, grid))


def assert_same_field(grid, values, expected):
    """Equal but where a distance rounded an ulp apart broke a tie between two triangles the other way and
    jump flooding took another path (symmetric meshes tie often): a few voxels, off by a little, same sign."""
    differs = ~np.isclose(values, expected, atol=1e-4 * grid.voxel, rtol=1e-5)
    assert differs.mean() <= 0.02, differs.sum()
    assert np.abs(values - expected).max() <= 0.5 * np.sqrt(3) * grid.voxel
    signed = np.abs(expected) > 1e-3 * grid.voxel
    assert (np.sign(values) == np.sign(expected))[signed].all()


def check_against_exact(grid, values, vertices, triangles, holes=False):
    """|error| within half a voxel diagonal everywhere; the sign right wherever |d| > one voxel (with holes:
    more than 1.5 voxels away from the surface, where the winding number is not near 1/2)."""
    exact = reference.exact_sdf(vertices, triangles, grid.centres().reshape(-1, 3)).reshape(values.shape)
    error = np.abs(np.abs(values) - np.abs(exact))
    assert error.max() <= 0.5 * np.sqrt(3) * grid.voxel, error.max() / grid.voxel
    far = np.abs(exact) > (1.5 if holes else 1.0) * grid.voxel
    wrong = far & (np.sign(values) != np.sign(exact))
    assert not wrong.any(), f"{wrong.sum()} voxels of {far.sum()} signed wrong"
    return exact


@pytest.mark.parametrize("mesh", [cube, icosphere, torus])
def test_closed_meshes_match_reference_and_exact(host, mesh):
    vertices, triangles = mesh()
    grid, values, _ = gpu_build(host, vertices, triangles, 20)
    check_against_reference(grid, values, sdf.mesh_triangles(vertices, triangles, grid))
    exact = check_against_exact(grid, values, vertices, triangles)
    assert (exact < 0).any() and (exact > 0).any()


def overlapping_cubes():
    """Two cubes as separate closed shells, overlapping in the middle (Suzanne's eyes sunk into its head): a
    voxel in both is crossed twice along every axis, which parity would call outside."""
    vertices, triangles = cube(0.6)
    shells = [vertices + np.float32(offset) for offset in ((-0.3, -0.1, 0.0), (0.3, 0.1, 0.15))]
    return np.concatenate(shells), np.concatenate([triangles, triangles + len(vertices)])


def test_overlapping_shells_are_inside(host):
    vertices, triangles = overlapping_cubes()
    grid, values, _ = gpu_build(host, vertices, triangles, 20)
    check_against_reference(grid, values, sdf.mesh_triangles(vertices, triangles, grid))
    check_against_exact(grid, values, vertices, triangles)
    assert values[tuple(n // 2 for n in values.shape)] < 0


def test_inward_normals_and_mirrored_objects_give_the_same_field(host):
    vertices, triangles = icosphere()
    grid, outward, _ = gpu_build(host, vertices, triangles, 20)
    _, inward, _ = gpu_build(host, vertices, triangles[:, ::-1], 20)
    assert_same_field(grid, inward, outward)
    assert (np.sign(inward) == np.sign(outward)).all()
    mirror = np.array([-1, 1, 1], np.float32)  # a negative-determinant matrix: every winding reversed
    mirrored_grid, mirrored, _ = gpu_build(host, vertices * mirror, triangles, 20)
    assert mirrored_grid.dims == grid.dims
    assert_same_field(grid, mirrored[:, :, ::-1], outward)
    shells, shell_triangles = overlapping_cubes()
    shells_grid, shells_field, _ = gpu_build(host, shells, shell_triangles, 16)
    _, inward_shells, _ = gpu_build(host, shells, shell_triangles[:, ::-1], 16)
    assert (np.sign(inward_shells) == np.sign(shells_field)).all()


def test_crossings_past_the_count_limit_abstain(host):
    """Copies of one cube stacked in place cross each column that many times at one voxel: up to
    CROSSING_LIMIT they wind that many times (inside); past it the count saturates and the columns abstain,
    so the field comes out unsigned there, never corrupting a neighbouring count."""
    vertices, triangles = cube()
    for copies, inside in ((3, True), (sdf.CROSSING_LIMIT + 2, False)):
        stacked = np.concatenate([triangles] * copies)
        grid, values, _ = gpu_build(host, vertices, stacked, 12)
        check_against_reference(grid, values, sdf.mesh_triangles(vertices, stacked, grid))
        assert (values[tuple(n // 2 for n in values.shape)] < 0) == inside
        assert inside or (values >= 0).all()


def test_mesh_with_holes_signs_right_away_from_the_surface(host):
    vertices, triangles = icosphere(2)
    holed = np.delete(triangles, [5, 200, 201], axis=0)
    grid, values, _ = gpu_build(host, vertices, holed, 24)
    check_against_exact(grid, values, vertices, holed, holes=True)
    assert values[tuple(n // 2 for n in values.shape)] < 0


def test_a_column_through_a_hole_abstains_and_a_tie_is_inside(host):
    vertices, triangles = tunnelled_box()
    grid, values, _ = gpu_build(host, vertices, triangles, 24)
    check_against_reference(grid, values, sdf.mesh_triangles(vertices, triangles, grid))
    check_against_exact(grid, values, vertices, triangles, holes=True)
    assert values[tuple(n // 2 for n in values.shape)] < 0  # in the tunnel, under the hole: one vote each way


def test_degenerate_triangles_are_dropped(host, rng):
    vertices, triangles = cube()
    degenerate = np.array([[0, 0, 1], [2, 2, 2], [0, 1, 1]])
    vertices = np.concatenate([vertices, vertices[:2] * 0.5])
    collinear = np.array([[0, 8, 7]])  # corner, its half, the opposite corner: on one line
    mixed = np.concatenate([triangles, degenerate, collinear])[rng.permutation(len(triangles) + 4)]
    grid, clean, _ = gpu_build(host, *cube(), 20)
    _, values, _ = gpu_build(host, vertices, mixed, 20)
    assert_same_field(grid, values, clean)


def test_single_open_triangle_is_unsigned_distance(host):
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.2]], np.float32)
    triangles = np.array([[0, 1, 2]])
    grid, values, _ = gpu_build(host, vertices, triangles, 20)
    exact = reference.exact_sdf(vertices, triangles, grid.centres().reshape(-1, 3)).reshape(values.shape)
    assert (exact >= 0).all() and (values >= 0).all()
    assert np.abs(values - exact).max() <= 0.5 * np.sqrt(3) * grid.voxel


def test_a_boundary_edge_makes_a_mesh_open():
    assert sdf.is_open(terrain()[1]) and sdf.is_open(np.delete(icosphere(1)[1], 3, axis=0))
    for _, triangles in (cube(), icosphere(1), torus()):
        assert not sdf.is_open(triangles) and not sdf.is_open(triangles[:, ::-1]), "either winding"
    assert not sdf.is_open(np.zeros((0, 3), int))


def test_an_open_surface_is_the_slab_behind_it_and_matches_the_reference(host):
    """A terrain's field: the exact distance above the sheet; below it, the signed distance to the slab
    SURFACE_SHELL_VOXELS thick under it (negative only within it); the GPU's as the reference's."""
    vertices, triangles = terrain()
    grid, values, _ = gpu_build(host, vertices, triangles, 24, surface=True)
    assert grid.surface
    check_against_reference(grid, values, sdf.mesh_triangles(vertices, triangles, grid))
    centres = grid.centres().reshape(-1, 3)
    exact = np.abs(reference.exact_sdf(vertices, triangles, centres))
    values = values.ravel()
    shell = sdf.SURFACE_SHELL_VOXELS * grid.voxel
    into = np.where(exact < shell, -np.minimum(exact, shell - exact), exact - shell)
    over = (np.abs(centres[:, :2]) < 1.0).all(axis=1)
    below = centres[:, 2] < height_over(vertices, 12, 2.0, centres)
    expected = np.where(below, into, exact)
    assert np.abs(values - expected)[over].max() <= 0.5 * np.sqrt(3) * grid.voxel
    signed = over & (np.abs(expected) > 0.01 * grid.voxel)
    assert (np.sign(values) == np.sign(expected))[signed].all()
    assert (values[exact > shell + 0.01 * grid.voxel] > 0).all(), "negative only within the slab, past the rim too"
    assert (values < 0).sum() > 100


def test_large_triangles_are_split_and_keep_the_surface():
    vertices, triangles = cube()
    grid = sdf.sdf_grid(vertices, 64)
    corners = sdf.mesh_triangles(vertices, triangles, grid)
    spans = corners.max(axis=1) - corners.min(axis=1)
    assert len(corners) > len(triangles) and spans.max() <= sdf.SPLIT_VOXELS
    area = np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1).sum()
    assert area / 2 == pytest.approx(6 * (2 / grid.voxel) ** 2, rel=1e-5)


def test_atlas_regions_are_written_in_place(host):
    box_vertices, box_triangles = cube(0.5)
    box_vertices = box_vertices * np.array([1.0, 0.5, 0.25], np.float32)
    sphere_vertices, sphere_triangles = icosphere(1)
    grids = [sdf.sdf_grid(box_vertices, 24), sdf.sdf_grid(sphere_vertices, 16)]
    assert grids[0].dims == (24, 14, 9) and grids[1].dims == (16, 16, 16)
    layout = sdf.SdfAtlas(grids)
    assert layout.z_offsets == (0, 9) and layout.shape == (25, 16, 24) and layout.nbytes == 25 * 16 * 24 * 4
    atlas = host.volume("sdf_atlas", shape=layout.shape)
    host.clear(atlas, 99.0)
    builder = sdf.SdfBuilder(host)
    meshes = [(box_vertices, box_triangles), (sphere_vertices, sphere_triangles)]
    for (vertices, triangles), grid, z_offset in zip(meshes, grids, layout.z_offsets):
        builder.build(vertices, triangles, grid, atlas, z_offset)
    values = host.read(atlas)
    written = np.zeros(values.shape, bool)
    for (vertices, triangles), grid, z_offset in zip(meshes, grids, layout.z_offsets):
        nx, ny, nz = grid.dims
        region = values[z_offset:z_offset + nz, :ny, :nx]
        check_against_reference(grid, region, sdf.mesh_triangles(vertices, triangles, grid))
        written[z_offset:z_offset + nz, :ny, :nx] = True
    assert (values[~written] == 99.0).all()


def test_grid_covers_the_mesh_with_margins():
    vertices = np.array([[0, 0, 0], [2, 1, 0], [0, 1, 0]], np.float32)  # flat in z
    grid = sdf.sdf_grid(vertices, 40)
    with pytest.raises(ValueError, match="more than 4 voxels"):
        sdf.sdf_grid(vertices, 4)
    assert grid.dims[0] == 40 and grid.dims[2] == 1 + 2 * sdf.MARGIN_VOXELS
    corners = grid.to_grid(vertices)
    assert (corners >= sdf.MARGIN_VOXELS - 0.5).all() and (corners <= np.array(grid.dims) - 1).all()
    assert sdf.default_resolution(10.0, 0.01) == sdf.MAX_RESOLUTION
    assert sdf.default_resolution(1.0, 0.5) == sdf.MIN_RESOLUTION
    assert sdf.default_resolution(1.0, 0.0) == sdf.MIN_RESOLUTION
    assert sdf.flood_jumps((40, 20, 5)) == [32, 16, 8, 4, 2, 1, 1]


def test_bad_meshes_raise_clear_messages():
    vertices, triangles = cube()
    with pytest.raises(SettingsError, match="'Wall'.*zero size"):
        sdf.sdf_grid(np.zeros((4, 3)), 32, name="Wall")
    with pytest.raises(SettingsError, match="'Wall'.*non-finite"):
        sdf.sdf_grid(np.full((4, 3), np.nan), 32, name="Wall")
    grid = sdf.sdf_grid(vertices, 32)
    with pytest.raises(SettingsError, match="'Wall'.*no faces with area"):
        sdf.mesh_triangles(vertices, np.array([[0, 0, 1], [2, 2, 2]]), grid, name="Wall")
    with pytest.raises(SettingsError, match="'Wall'.*no faces with area"):
        sdf.mesh_triangles(vertices, np.zeros((0, 3), int), grid, name="Wall")
    with pytest.raises(SettingsError, match="'Wall'.*non-finite"):
        sdf.mesh_triangles(np.full((8, 3), np.inf, np.float32), triangles, grid, name="Wall")
    with pytest.raises(SettingsError, match="atlas.*MiB"):
        sdf.SdfAtlas([sdf.SdfGrid((0, 0, 0), 1.0, (256, 256, 256))] * 20).check(2048)
    sdf.SdfAtlas([grid]).check(2048)


def test_too_many_triangles_raise_a_clear_message(monkeypatch):
    vertices, triangles = icosphere(1)
    grid = sdf.sdf_grid(vertices, 32)
    monkeypatch.setattr(sdf, "MAX_TRIANGLES", 50)
    with pytest.raises(SettingsError, match="80 triangles are more than.*50"):
        sdf.mesh_triangles(vertices, triangles, grid)
    monkeypatch.setattr(sdf, "MAX_TRIANGLES", 100)  # fits, until splitting the long ones passes the cap
    assert len(sdf.mesh_triangles(vertices, triangles, sdf.sdf_grid(vertices, 16))) == 80
    with pytest.raises(SettingsError, match="after splitting"):
        sdf.mesh_triangles(vertices, triangles, sdf.sdf_grid(vertices, 64))
