"""Trails (addon/engine/simulate/trails.py): the ring buffer against its numpy reference, bit for bit; births restart a
ring; checkpoints keep trails; ribbons drawn where the reference puts them; bad settings refused clearly."""

import numpy as np
import pytest

from addon.engine.draw import ribbons
from addon.engine.draw.compositing import Camera, Compositor, camera_view, perspective
from addon.engine.draw.footprint import Shutter
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.draw.particle_depth import FAR, ParticleDepth, reach_kind, view_depth_row
from addon.engine.draw.sprites import SpriteLayer
from addon.engine.reference.draw.particle_depth import mark_trails, nearest_depth
from addon.engine.reference.simulate import trails as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import SettingsError, effect_settings, render_settings
from addon.engine.simulate import trails
from addon.engine.simulate.simulation import ParticleSystem
from tests.scene.test_sim_cache import cli

DT = 1 / 24
STILL = np.eye(4)


def trail_settings(**overrides):
    values = dict(count=300, lifetime=0.4, lifetime_random=0.5, velocity=(0.0, 0.0, 2.0), velocity_random=1.0,
                  turbulence_strength=4.0, trail_points=5, seed=7)
    return effect_settings({**values, **overrides})


def rings_of(system) -> ref.Rings:
    buffer = system.trails
    return ref.Rings.from_textures(*buffer.read(), system.count, system.settings.trail_points, buffer.tiles_x)


def state_as_stored(system):
    return [system.host.read(t).reshape(-1, 4)[: system.count] for t in (system.pos_age, system.vel_life)]


def assert_rings_equal(gpu: ref.Rings, expected: ref.Rings):
    np.testing.assert_array_equal(gpu.heads, expected.heads)
    for slot in np.flatnonzero(expected.heads[:, 1] > 0):
        np.testing.assert_array_equal(gpu.newest_first(slot), expected.newest_first(slot), err_msg=f"slot {slot}")


@pytest.mark.parametrize("overrides", [
    {},
    {"trail_sampling": "DISTANCE", "trail_distance": 0.04},
    {"state_layout": "COMPACT", "trail_points": 3},
    {"emission": "BURST", "burst_interval": 0.2, "respawn_skip": 0.0},
], ids=["substep", "distance", "compact", "burst"])
def test_ring_matches_reference_bit_for_bit(host, overrides):
    """Every step's record equals the reference's, over enough frames that slots die and are reborn."""
    settings = trail_settings(**overrides)
    system = ParticleSystem(host, settings)
    expected = ref.Rings.empty(settings.count, settings.trail_points)
    spacing = trails.layout_values(settings, 1)["trail_spacing"]
    moving = np.eye(4)
    for frame in range(14):
        previous = moving.copy()
        moving[:3, 3] = (0.1 * frame, 0.0, 0.0)
        system.step(DT, previous, moving)
        ref.record(expected, *state_as_stored(system), system.origin, spacing)
        assert_rings_equal(rings_of(system), expected)
    reborn = expected.heads[:, 1] > 0
    assert reborn.sum() > settings.count // 4, "enough slots carry a trail for the test to mean something"


def test_rebirth_restarts_the_ring_at_the_birth_position(host):
    """A slot's new life starts a new ring: its oldest point is where it was born, not where it died."""
    settings = trail_settings(lifetime_random=0.0, velocity_random=0.0, turbulence_strength=0.0, gravity=(0, 0, 0),
                              drag=0.0, emitter_shape="POINT", trail_points=8)
    system = ParticleSystem(host, settings)
    for _ in range(16):  # past one lifetime: every slot has been reborn
        system.step(DT, STILL, STILL)
    rings = rings_of(system)
    particle = PARTICLE.read_images(*system.read_state())
    for slot in np.flatnonzero(rings.heads[:, 1] > 0)[:40]:
        points = rings.newest_first(slot)
        assert abs(points[-1, 2]) < 1e-5 if len(points) < 8 else points[-1, 2] >= 0, "the oldest point: the birth"
        assert np.all(np.diff(points[:, 2]) <= 1e-6), "newest first: heights fall towards the emitter"
        assert points[0, 2] == pytest.approx(particle["position"][slot, 2], abs=1e-6)


def test_dead_slots_have_no_trail(host):
    settings = trail_settings(emission="BURST", lifetime=0.1, lifetime_random=0.0)
    system = ParticleSystem(host, settings)
    for _ in range(5):
        system.step(DT, STILL, STILL)
    assert not rings_of(system).heads.any()


@pytest.mark.parametrize("on_gpu", [False, True], ids=["host", "gpu"])
def test_restore_from_a_checkpoint_repeats_the_trails(host, on_gpu):
    system = ParticleSystem(host, trail_settings())
    for _ in range(4):
        system.step(DT, STILL, STILL)
    checkpoint = system.snapshot_on_gpu() if on_gpu else system.snapshot()
    assert len(checkpoint.arrays) == 4
    for _ in range(5):
        system.step(DT, STILL, STILL)
    whole = rings_of(system)
    system.restore(checkpoint)
    for _ in range(5):
        system.step(DT, STILL, STILL)
    assert_rings_equal(rings_of(system), whole)
    assert system.snapshot_nbytes == sum(np.asarray(a).nbytes for a in system.snapshot().arrays)


def test_two_runs_are_identical(host):
    runs = []
    for _ in range(2):
        system = ParticleSystem(host, trail_settings(trail_sampling="DISTANCE", trail_distance=0.03))
        for _ in range(6):
            system.step(DT, STILL, STILL)
        runs.append(system.trails.read())
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_bad_trail_settings_are_refused_with_the_limit(host):
    for points in (-1, 65):
        with pytest.raises(SettingsError, match="trail_points must be"):
            effect_settings({"trail_points": points})
    with pytest.raises(SettingsError, match=r"GiB of GPU memory: at most 8 GiB per effect \(at most \d+ points"):
        trails.check_trails(effect_settings({"count": 100_000_000, "trail_points": 64}), 16384, 8192, 32768)
    with pytest.raises(SettingsError, match="this GPU's limit is 1,024"):
        trails.check_trails(effect_settings({"count": 1_000_000, "trail_points": 8}), 1024, 1024, 1024)
    trails.check_trails(effect_settings({"count": 1_000_000, "trail_points": 32}), 1024, 1024, 32768)
    with pytest.raises(SettingsError, match="Grid Cell sort moves particles between slots"):
        ParticleSystem(host, effect_settings({"count": 100, "trail_points": 4, "sort_order": "GRID_CELL"}))


BENT_PATH = ((0.3, 0.0, 0.1), (0.0, 0.0, 0.0), (-0.3, 0.0, 0.2), (-0.6, 0.0, 0.2))  # newest first
CAMERA_AT, CAMERA_AIM = (0, -3, 0.1), (0, 0, 0.1)  # view depth: y + 3


def one_trail_scene(host, path=BENT_PATH, **overrides):
    """One particle whose ring holds ``path`` (4 points, newest first) in front of a camera, drawn at 96x64."""
    settings = effect_settings({"count": 1, "trail_points": 4, "size": 0.15, "trail_width_end": 0.5,
                                "trail_fade": 0.5, "trail_color_end": (0.2, 0.5, 1.0), "color_start": (1, 1, 1),
                                "color_end": (1, 1, 1), **overrides})
    system = ParticleSystem(host, settings)
    system.write_state(np.array([[0.6, 0.0, 0.0, 0.5]], np.float32), np.array([[0.0, 0.0, 0.0, 1.0]], np.float32))
    ring = np.zeros((system.trails.points.height, system.trails.points.width, 4), np.float32)
    height = system.trails.heads.height
    for j, point in enumerate(path):  # newest at ring index 3, then 2, 1, 0
        ring[(3 - j) // system.trails.tiles_x * height, (3 - j) % system.trails.tiles_x * system.trails.heads.width, :3] = point
    heads = np.zeros((height, system.trails.heads.width, 4), np.float32)
    heads[0, 0] = (3, 4, 0.5, 0)
    system.trails.restore((ring, heads))
    width, height = 96, 64
    view_proj = perspective(0.8, width / height, 0.1, 10.0) @ camera_view(CAMERA_AT, CAMERA_AIM)
    camera = Camera(view_proj, width, height)
    compositor = Compositor(FrameResources(host, width, height), render_settings({"emax": 16.0}))
    return system, camera, compositor


def drawn(host, system, camera, compositor, how: str) -> np.ndarray:
    """The trail alone, drawn by ``how`` (render setting trail_draw), as (height, width, 3) float."""
    if how == "RIBBONS":
        ribbons.draw_ribbons(host, system, camera, compositor.resources.raster, None, compositor.resources.look_texture(system))
        return host.read(compositor.resources.raster)[..., :3].astype(np.float64)
    compositor.add_trails(system, camera)
    compositor.resolve()
    return compositor.read_frame()[..., :3].astype(np.float64)


@pytest.mark.parametrize("how", ["SPLAT", "RIBBONS"])
def test_trails_are_drawn_where_the_reference_puts_them(host, how):
    system, camera, compositor = one_trail_scene(host)
    image = drawn(host, system, camera, compositor, how)
    pos_age, vel_life = system.read_state()
    segments = ref.ribbon_segments(system.settings, rings_of(system), pos_age, vel_life, camera.view_proj,
                                   96, 64, camera.pixels_per_unit)
    assert len(segments) == 4
    y, x = np.mgrid[0:64, 0:96] + 0.5
    centers = np.stack([x, y], axis=-1)
    reaches = []  # per segment: (along, distance from it, half width, color) at every pixel center
    for segment in segments:
        a, b = segment.ends
        unclamped = ((centers - a) @ (b - a)) / ((b - a) @ (b - a))
        along = np.clip(unclamped, 0, 1)
        distance = np.linalg.norm(centers - (a + along[..., None] * (b - a)), axis=-1)
        half = segment.half_px[0] + (segment.half_px[1] - segment.half_px[0]) * along
        color = segment.colors[0] + (segment.colors[1] - segment.colors[0]) * along[..., None]
        reaches.append((along, distance, half, color, (unclamped >= 0) & (unclamped <= 1) & (distance < half + 1.5)))
    inside = np.zeros((64, 96), bool)
    for i, (along, distance, half, color, _) in enumerate(reaches):
        alone = ~np.any([r[4] for j, r in enumerate(reaches) if j != i], axis=0)  # not where segments meet
        core = (distance < half - 1.5) & (along > 0.05) & (along < 0.95) & alone
        np.testing.assert_allclose(image[core], color[core], rtol=0.08, atol=2e-3)
        inside |= core
    near = np.any([distance < half + 2.5 for _, distance, half, _, _ in reaches], axis=0)
    assert inside.sum() > 50, "the ribbon's core is wide enough to test"
    assert not image[~near].any(), "nothing beyond a pixel and a half of the ribbon's edge"


@pytest.mark.parametrize("blend_mode", ["ADD", "ALPHA"])
def test_trails_mark_the_particle_depth_so_geometry_hides_them(host, blend_mode):
    """The particle depth (final renders' compositing over the scene) covers the trail's segments as the
    reference does (trail_depth.glsl), with the depth along each segment: a wall across a trail that runs away
    from the camera hides the part behind it, and only that part."""
    path = ((0.3, -1.0, 0.1), (0.0, 0.0, 0.0), (-0.3, 1.0, 0.2), (-0.6, 2.0, 0.2))  # from depth 2 to 5
    system, camera, compositor = one_trail_scene(host, path, blend_mode=blend_mode)
    view = camera_view(CAMERA_AT, CAMERA_AIM)
    layer = ParticleDepth(host, camera.width, camera.height)
    layer.clear()
    layer.add(system, camera, view, compositor.resources.look_texture(system))
    depth = layer.read()
    pos_age, vel_life = system.read_state()
    expected = nearest_depth(pos_age, vel_life, camera.view_proj, view_depth_row(view), camera.width, camera.height,
                             system.settings, camera.pixels_per_unit, kind=reach_kind(system.settings))
    head = (expected < FAR).sum()
    mark_trails(expected, ref.ribbon_segments(system.settings, rings_of(system), pos_age, vel_life, camera.view_proj,
                                              camera.width, camera.height, camera.pixels_per_unit),
                view_depth_row(view))
    marked, expected_marked = depth < FAR, expected < FAR
    assert expected_marked.sum() > 2 * head, "the trail covers far more than its head"
    assert (marked != expected_marked).sum() <= 4, "only pixel centers on an edge may round the other way"
    both = marked & expected_marked
    np.testing.assert_allclose(depth[both], expected[both], rtol=1e-4)
    wall = 3.5  # a wall at y = 0.5: the scene's depth wherever it stands
    hidden, expected_hidden = both & (depth >= wall), both & (expected >= wall)
    on_edge = np.abs(expected - wall) < 1e-3
    assert hidden.sum() > 20 and (both & ~hidden).sum() > 20, "the wall hides part of the trail, not all"
    assert not (hidden != expected_hidden)[~on_edge].any()


def test_a_trail_effect_composites_through_the_frame(host):
    """compositor.add draws the particle and its ribbon; the frame holds the ribbon's light."""
    system, camera, compositor = one_trail_scene(host, particle_type="SPRITE")
    compositor.add(system, camera)
    compositor.resolve()
    frame = compositor.read_frame()
    assert frame[..., :3].sum() > 20 * system.settings.emission_strength


def test_alpha_trails_are_segments_of_the_sprite_list(host):
    """An Alpha effect's segments follow its sprites in the list, as streaks between the reference's ends."""
    system, camera, compositor = one_trail_scene(host, blend_mode="ALPHA", opacity=0.8)
    layer = SpriteLayer(host, 96, 64)
    compositor.resolve()
    layer.draw([system], compositor.resources, camera)
    shapes, streaks = (host.read(t).reshape(-1, 4) for t in (layer.list.shapes, layer.list.streaks))
    pos_age, vel_life = system.read_state()
    segments = ref.ribbon_segments(system.settings, rings_of(system), pos_age, vel_life, camera.view_proj,
                                   96, 64, camera.pixels_per_unit)
    assert ribbons.sprite_entries(system) == 1 + 4
    for entry, segment in enumerate(segments, start=1):
        np.testing.assert_allclose(shapes[entry, :2], segment.ends.mean(axis=0), atol=1e-3)
        np.testing.assert_allclose(streaks[entry, :2], segment.ends[0] - segment.ends[1], atol=1e-3)
    alpha = layer.read()[..., 3]
    assert alpha.max() <= 1.0 + 1e-6
    middle = segments[1].ends.mean(axis=0).astype(int)
    assert alpha[middle[1], middle[0]] > 0.3, "the ribbon is about as opaque as the effect along its length"


def test_alpha_trails_beside_textured_sprites_draw_as_alone(host):
    """A frame with textured sprites reads every entry's pose (sprite_frames): the segments write theirs as none,
    whatever an earlier draw left there (here a textured effect's poses, where the segments go next)."""
    from tests.engine.look.test_sprite_textures import sheet_image

    system, camera, compositor = one_trail_scene(host, blend_mode="ALPHA", opacity=0.8)
    compositor.resolve()
    alone = SpriteLayer(host, 96, 64)
    alone.draw([system], compositor.resources, camera)
    sheet_image("trail_neighbour", np.ones((8, 8, 4), np.float32))

    def puffs(count, at):
        puff = ParticleSystem(host, effect_settings({"count": count, "blend_mode": "ALPHA", "particle_type": "SPRITE",
                                                     "sprite_image": "trail_neighbour", "size": 0.05}))
        puff.write_state(np.tile(np.float32([*at, 0.5]), (count, 1)), np.tile(np.float32([0, 0, 0, 1]), (count, 1)))
        return puff

    layer = SpriteLayer(host, 96, 64)
    layer.draw([puffs(32, (0.6, 0.0, 0.0))], compositor.resources, camera)  # textured poses at entries 0-31
    behind = 2 * np.asarray(CAMERA_AT) - np.asarray(CAMERA_AIM)  # makes the frame textured, draws nothing
    layer.draw([system, puffs(1, behind)], compositor.resources, camera)
    np.testing.assert_array_equal(layer.read(), alone.read())


@pytest.mark.slow
def test_a_split_bake_with_trails_equals_a_whole_one(tmp_path):
    """Frames 9-16 baked from the cache's checkpoint in a fresh process: byte-identical to a whole bake's."""
    cli("--frames", "1-16", "--out", str(tmp_path / "whole"), preset="comet")
    cache = str(tmp_path / "cache")
    cli("--frames", "1-8", "--out", str(tmp_path / "split"), "--cache", cache, preset="comet")
    cli("--frames", "9-16", "--out", str(tmp_path / "split"), "--cache", cache, preset="comet")
    whole, split = (sorted((tmp_path / name).glob("*.png")) for name in ("whole", "split"))
    assert len(whole) == len(split) == 16
    for a, b in zip(whole, split):
        assert a.read_bytes() == b.read_bytes(), a.name


@pytest.mark.parametrize("how", ["SPLAT", "RIBBONS"])
def test_with_motion_blur_the_trail_reaches_the_streaks_end(host, how):
    """Under a shutter the head of the trail is where the particle is at shutter close (its streak's end)."""
    reach = []
    for shutter in (None, (-0.1, 0.1)):
        system, camera, compositor = one_trail_scene(host)
        system.write_state(np.array([[0.6, 0.0, 0.0, 0.5]], np.float32), np.array([[2.0, 0.0, 0.0, 1.0]], np.float32))
        if shutter is not None:
            camera = Camera(camera.view_proj, camera.width, camera.height, Shutter.still(camera.view_proj, *shutter))
        lit = drawn(host, system, camera, compositor, how).sum(axis=-1) > 0
        reach.append(np.flatnonzero(lit.any(axis=0)).max())
    still, blurred = reach
    assert blurred >= still + 3, "0.2 m further right at shutter close: several pixels"
