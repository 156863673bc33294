"""The live overlay in background mode: drawn offscreen, following the timeline, matching the bake."""

import bpy
import gpu
import numpy as np
import pytest
from mathutils import Matrix

from addon import viewport
from addon.engine.seam.records import PARTICLE
from addon.scene.renderer import SceneRenderer, camera_of
from tests.conftest import add_effect

W, H = 64, 36


def scene_view(scene):
    """World to view of the scene camera (what sorting sees)."""
    return np.array(scene.camera.matrix_world.inverted())


def pixel_projection(width, height):
    return Matrix(((2 / width, 0, 0, -1), (0, 2 / height, 0, -1), (0, 0, 1, 0), (0, 0, 0, 1)))


def draw_offscreen(scene, view_proj, width=W, height=H):
    """Run the draw callback's body into an offscreen buffer; returns (height, width, 4) floats."""
    offscreen = gpu.types.GPUOffScreen(width, height, format="RGBA32F")
    with offscreen.bind():
        framebuffer = gpu.state.active_framebuffer_get()
        framebuffer.clear(color=(0.0, 0.0, 0.0, 0.0))
        with gpu.matrix.push_pop():
            gpu.matrix.load_matrix(Matrix.Identity(4))
            gpu.matrix.load_projection_matrix(pixel_projection(width, height))
            viewport.draw_view(scene, view_proj, scene_view(scene), width, height)
        pixels = np.array(framebuffer.read_color(0, 0, width, height, 4, 0, "FLOAT").to_list(), dtype=np.float32)
    offscreen.free()
    return pixels.reshape(height, width, 4)


def projected_pixels(view_proj, positions, width, height):
    clip = np.c_[positions, np.ones(len(positions))] @ np.asarray(view_proj).T
    inside = (clip[:, 3] > 0) & (np.abs(clip[:, :3]) <= clip[:, 3:4]).all(axis=1)
    screen = (clip[inside, :2] / clip[inside, 3:4] * 0.5 + 0.5) * [width, height]
    pixel = np.minimum(screen.astype(int), [width - 1, height - 1])
    return {(int(x), int(y)) for x, y in pixel}


def live_positions(overlay):
    positions = []
    for system in overlay.systems:
        particle = PARTICLE.read_images(*system.read_state())
        live = (particle["age"] >= 0) & (particle["age"] < particle["life"])
        assert system.live.read_count() == live.sum()
        positions.append(particle["position"][live])
    return np.concatenate(positions)


@pytest.fixture
def overlay(scene):
    viewport.free()
    yield viewport.overlay()
    viewport.free()


def test_particles_appear_where_they_project(scene, overlay):
    add_effect(count=3000, emission_strength=4.0)
    scene.frame_set(4)
    view_proj = camera_of(scene, W, H).view_proj
    viewport.stats_panel_drawn()
    pixels = draw_offscreen(scene, view_proj)
    lit = {(int(x), int(y)) for y, x in zip(*np.nonzero(pixels[..., :3].max(axis=-1) > 0))}
    expected = projected_pixels(view_proj, live_positions(overlay), W, H)
    assert len(expected) > 20
    assert lit == expected
    assert overlay.stats.frame == 4 and overlay.stats.alive == len(live_positions(overlay))
    assert set(overlay.stats.stage_ms) == {"simulate", "depth", "sort", "splat and resolve"}


def test_hidden_overlay_draws_nothing(scene, overlay):
    add_effect(count=3000)
    scene.gpu_particles.show_overlay = False
    assert draw_offscreen(scene, camera_of(scene, W, H).view_proj).max() == 0


def test_overlay_matches_the_bake_of_an_animated_emitter(scene, overlay):
    """F-curve evaluation in the draw path gives the frames the bake gets with frame_set."""
    add_effect(count=4000, inherit_velocity=1.0)
    scene.gpu_particles.viewport_point_filter = "ANTIALIASED"  # the bake's default
    assert scene.objects["Emitter"].animation_data is not None  # the stage keys an orbit
    camera = camera_of(scene, W, H)
    baked = SceneRenderer(scene, W, H).render(4)
    scene.frame_set(4)
    frame = overlay.composite(scene, camera.view_proj, scene_view(scene), W, H)
    np.testing.assert_allclose(overlay.host.read(frame), baked, rtol=1e-3, atol=1e-3)


def test_scrub_back_and_jump_match_a_fresh_simulation(scene, overlay):
    add_effect(count=3000)
    camera = camera_of(scene, W, H)

    def frame_at(n, fresh=False):
        if fresh:
            viewport.free()
        scene.frame_set(n)
        o = viewport.overlay()
        return o.host.read(o.composite(scene, camera.view_proj, scene_view(scene), W, H))

    forward = [frame_at(n) for n in (1, 2, 3, 4)]
    back = frame_at(2)
    np.testing.assert_array_equal(back, forward[1])
    np.testing.assert_array_equal(frame_at(4), forward[3])
    np.testing.assert_array_equal(frame_at(3, fresh=True), forward[2])


def test_editing_a_setting_resimulates_from_the_start(scene, overlay):
    effect = add_effect(count=3000)
    camera = camera_of(scene, W, H)
    scene.frame_set(3)
    before = overlay.host.read(overlay.composite(scene, camera.view_proj, scene_view(scene), W, H))
    effect.seed = 9  # the property's update callback marks the overlay stale
    assert overlay.stale
    after = overlay.host.read(overlay.composite(scene, camera.view_proj, scene_view(scene), W, H))
    assert not np.array_equal(before, after)
    viewport.free()
    fresh = viewport.overlay()
    np.testing.assert_array_equal(fresh.host.read(fresh.composite(scene, camera.view_proj, scene_view(scene), W, H)), after)


def test_two_effects_on_two_objects_are_both_drawn(scene, overlay):
    add_effect(count=2000)
    second = bpy.data.objects.new("Second", None)
    second.location = (2.0, 0.0, 1.0)
    scene.collection.objects.link(second)
    bpy.context.view_layer.objects.active = second
    add_effect(count=2000)
    scene.frame_set(3)
    viewport.stats_panel_drawn()
    draw_offscreen(scene, camera_of(scene, W, H).view_proj)
    assert [name for name, _ in overlay.renderer.effects] == ["Emitter", "Second"]
    assert overlay.stats.slots == 4000


def add_cube(scene, location, size):
    import bmesh

    mesh = bpy.data.meshes.new("Cube")
    shape = bmesh.new()
    bmesh.ops.create_cube(shape, size=size)
    shape.to_mesh(mesh)
    cube = bpy.data.objects.new("Cube", mesh)
    cube.location = location
    scene.collection.objects.link(cube)
    return cube


def lit_pixels(pixels):
    return {(int(x), int(y)) for y, x in zip(*np.nonzero(pixels[..., :3].max(axis=-1) > 0))}


def test_particles_behind_a_cube_are_hidden(scene, overlay):
    """Occlusion against the scene's meshes, drawn from the view's own matrices."""
    add_effect(count=4000, emission_strength=4.0)
    scene.frame_set(4)
    add_cube(scene, (0.0, -3.0, 1.0), 1.2)  # between the camera (y = -12) and the emitter
    bpy.context.view_layer.update()
    view_proj = camera_of(scene, W, H).view_proj
    occluded = lit_pixels(draw_offscreen(scene, view_proj))
    scene.gpu_particles.occlusion = "NONE"
    everything = lit_pixels(draw_offscreen(scene, view_proj))
    corners = np.array([(x, y, z) for x in (-0.6, 0.6) for y in (-3.6, -2.4) for z in (0.4, 1.6)])
    cube_pixels = projected_pixels(view_proj, corners, W, H)
    xs, ys = [p[0] for p in cube_pixels], [p[1] for p in cube_pixels]
    inside = {(x, y) for x in range(min(xs), max(xs) + 1) for y in range(min(ys), max(ys) + 1)}
    hidden = everything - occluded
    assert len(hidden) > 20, "particles behind the cube disappear"
    assert hidden <= inside, "only where the cube is"
    assert occluded - inside == everything - inside, "everything else is untouched"
    assert not occluded - everything


def test_an_occluder_edited_in_place_stops_hiding(scene, overlay):
    """The overlay keeps occluder triangles between draws, and reads them again after an edit (its
    depsgraph handler): the cube's vertices moved out of view hide nothing any more."""
    add_effect(count=4000, emission_strength=4.0)
    scene.frame_set(4)
    cube = add_cube(scene, (0.0, -3.0, 1.0), 1.2)
    bpy.context.view_layer.update()
    view_proj = camera_of(scene, W, H).view_proj
    occluded = lit_pixels(draw_offscreen(scene, view_proj))
    assert lit_pixels(draw_offscreen(scene, view_proj)) == occluded, "drawn again from the kept triangles"
    positions = np.empty(len(cube.data.vertices) * 3, np.float32)
    cube.data.vertices.foreach_get("co", positions)
    cube.data.vertices.foreach_set("co", positions + np.tile(np.float32([0.0, 0.0, 100.0]), len(cube.data.vertices)))
    cube.data.update()
    bpy.context.view_layer.update()
    edited = lit_pixels(draw_offscreen(scene, view_proj))
    scene.gpu_particles.occlusion = "NONE"
    everything = lit_pixels(draw_offscreen(scene, view_proj))
    assert len(everything - occluded) > 20 and edited == everything


def test_kept_meshes_are_read_again_only_when_they_may_have_changed(scene):
    """Rigid meshes stay kept across frames until an edit; meshes with modifiers (or shape keys, or
    animated data) are read again on another frame."""
    from addon.scene.depth_prepass import KeptMeshes
    from addon.scene.index import SceneIndex, scene_edited

    rigid = add_cube(scene, (0.0, 0.0, 0.0), 1.0)
    deformed = add_cube(scene, (3.0, 0.0, 0.0), 1.0)
    deformed.modifiers.new("Displace", "DISPLACE")
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    kept = KeptMeshes(SceneIndex())

    def read(obj, frame):
        return kept.triangles(obj, frame, depsgraph)

    first = read(rigid, 1)
    assert len(first[0]) == 8 and len(first[1]) == 12
    assert read(rigid, 2) is first, "a rigid mesh: kept over frames"
    scene_edited()
    again = read(rigid, 2)
    assert again is not first and all(np.array_equal(a, b) for a, b in zip(again, first))
    moving = read(deformed, 1)
    assert read(deformed, 1) is moving and read(deformed, 2) is not moving
    kept.keep_only([deformed.name_full])
    assert read(rigid, 2) is not again, "forgotten when no longer an occluder"


def test_keyed_settings_are_read_again_on_every_frame_from_the_edit_that_keys_them(scene):
    """The effects' settings are read once per edit, and on every frame once a key sets one (whether one does is
    asked once per edit too: keys come with an edit)."""
    from addon.properties import scene_effects
    from addon.scene.index import scene_edited
    from addon.scene.snapshot import EffectsWatch

    add_effect(count=100)
    found = scene_effects(scene)
    watch = EffectsWatch()
    assert watch.effects(found, 1)[0][1].count == 100
    effect = found[0][1]
    for frame, count in ((1, 100), (5, 300)):
        effect.count = count
        effect.keyframe_insert("count", frame=frame)
    scene_edited()
    for frame, count in ((5, 300), (1, 100)):
        scene.frame_set(frame)
        assert watch.effects(found, frame)[0][1].count == count


def test_kept_occluders_are_the_bakes_with_their_evaluated_matrices(scene):
    """The overlay's occluders (every matrix read at once from the scene's objects) are the ones the
    bake finds, each with its evaluated world matrix: rotated, scaled, parented, constrained."""
    from addon.scene.depth_prepass import KeptMeshes, occluders
    from addon.scene.index import SceneIndex

    parent = add_cube(scene, (1.0, 2.0, 0.5), 1.0)
    parent.rotation_euler = (0.3, -0.2, 1.1)
    child = add_cube(scene, (0.5, 0.0, 0.0), 0.5)
    child.parent, child.scale = parent, (1.0, 2.0, 0.5)
    constrained = add_cube(scene, (0.0, 0.0, 0.0), 0.7)
    constrained.constraints.new("COPY_LOCATION").target = parent
    blended = add_cube(scene, (-2.0, 0.0, 0.0), 1.0)
    material = bpy.data.materials.new("glass")
    material.surface_render_method = "BLENDED"
    blended.data.materials.append(material)
    hidden = add_cube(scene, (-4.0, 0.0, 0.0), 1.0)
    hidden.hide_render = True  # the bake's rule (scene/visibility.py)
    hidden.hide_set(True)  # the overlay's
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    meshes, models = KeptMeshes(SceneIndex()).occluders(scene, depsgraph)
    found = list(occluders(scene, depsgraph))
    assert {obj.name for obj in found} == {parent.name, child.name, constrained.name}
    assert len(meshes) == len(found) and all(len(triangles) == 12 for _, triangles in meshes)
    np.testing.assert_allclose(models, [np.array(obj.matrix_world) for obj in found], atol=1e-6)


def test_draw_region_uses_the_views_own_matrices(scene, overlay):
    """A 3D view looking at the emitter from the side: particles land where its matrices put them."""
    from types import SimpleNamespace

    from addon.engine.draw.compositing import camera_view, perspective

    add_effect(count=3000, emission_strength=4.0)
    scene.frame_set(3)
    view_matrix = camera_view((6.0, 0.0, 1.0), (0.0, 0.0, 1.0))
    window_matrix = perspective(0.8, W / H, 0.1, 100.0)
    region_data = SimpleNamespace(perspective_matrix=Matrix((window_matrix @ view_matrix).tolist()),
                                  view_matrix=Matrix(view_matrix.tolist()), window_matrix=Matrix(window_matrix.tolist()),
                                  view_perspective="PERSP")
    context = SimpleNamespace(scene=scene, region=SimpleNamespace(width=W, height=H), region_data=region_data)
    offscreen = gpu.types.GPUOffScreen(W, H, format="RGBA32F")
    with offscreen.bind():
        framebuffer = gpu.state.active_framebuffer_get()
        framebuffer.clear(color=(0.0, 0.0, 0.0, 0.0))
        with gpu.matrix.push_pop():
            gpu.matrix.load_matrix(Matrix.Identity(4))
            gpu.matrix.load_projection_matrix(pixel_projection(W, H))
            viewport.draw_region(context)
        pixels = np.array(framebuffer.read_color(0, 0, W, H, 4, 0, "FLOAT").to_list(), dtype=np.float32)
    offscreen.free()
    lit = {(int(x), int(y)) for y, x in zip(*np.nonzero(pixels.reshape(H, W, 4)[..., :3].max(axis=-1) > 0))}
    expected = projected_pixels(window_matrix @ view_matrix, live_positions(overlay), W, H)
    assert len(expected) > 20 and lit == expected


def test_frame_change_handler_only_asks_for_a_redraw(scene, overlay):
    add_effect(count=2000)
    scene.frame_set(2)
    overlay.composite(scene, camera_of(scene, W, H).view_proj, scene_view(scene), W, H)
    texture_reads = []
    overlay.host.read = lambda texture: texture_reads.append(texture)
    dispatches = []
    overlay.host.dispatch = lambda *args: dispatches.append(args)
    scene.frame_set(4)  # runs frame_change_post, which holds the overlay's handler
    assert viewport._on_frame_change in bpy.app.handlers.frame_change_post
    assert overlay.frame == 2 and not dispatches and not texture_reads


def test_overlay_draws_the_csg_point_cloud_like_the_bake(scene, overlay):
    from tests.scene.test_csg_blender import cloud_stage

    cloud_stage(scene)
    add_effect(count=2000)
    scene.gpu_particles.viewport_point_filter = "ANTIALIASED"  # the bake's default
    camera = camera_of(scene, W, H)
    baked = SceneRenderer(scene, W, H).render(2)
    scene.frame_set(2)
    frame = overlay.host.read(overlay.composite(scene, camera.view_proj, scene_view(scene), W, H, measure=True))
    assert overlay.cloud is not None and "csg" in overlay.stats.stage_ms
    np.testing.assert_allclose(frame, baked, rtol=1e-3, atol=1e-3)


def test_drawing_never_changes_blenders_frame(scene, overlay):
    """Re-simulating from the start inside a draw must not move the scene frame or run frame handlers."""
    add_effect(count=2000)
    camera = camera_of(scene, W, H)
    scene.frame_set(4)
    overlay.composite(scene, camera.view_proj, scene_view(scene), W, H)
    calls = []
    spy = lambda scene, depsgraph=None: calls.append(scene.frame_current)  # noqa: E731
    bpy.app.handlers.frame_change_pre.append(spy)
    try:
        scene.frame_current = 2  # a scrub back, as the timeline sets it (no handlers)
        overlay.composite(scene, camera.view_proj, scene_view(scene), W, H)
        assert overlay.frame == 2 and scene.frame_current == 2 and calls == []
    finally:
        bpy.app.handlers.frame_change_pre.remove(spy)


@pytest.mark.parametrize("rotation_mode", ["XYZ", "ZXY", "QUATERNION", "AXIS_ANGLE"])
def test_matrix_at_equals_the_evaluated_matrix(scene, rotation_mode):
    """F-curve evaluation (the draw path) against Blender's own evaluation at each frame."""
    parent = bpy.data.objects.new("Parent", None)
    child = bpy.data.objects.new("Child", None)
    for obj in (parent, child):
        scene.collection.objects.link(obj)
    child.parent = parent
    child.matrix_parent_inverse = Matrix.Translation((0.5, 0.0, -0.25))
    child.rotation_mode = rotation_mode
    for frame, angle in ((1, 0.0), (4, 1.3)):
        parent.location = (frame * 0.3, 0.0, 1.0)
        parent.rotation_euler = (0.0, 0.0, angle)
        child.location = (1.0, angle, 0.5)
        child.scale = (1.0, 1.0 + angle, 1.0)
        if rotation_mode == "QUATERNION":
            child.rotation_quaternion = (np.cos(angle / 2), np.sin(angle / 2), 0.0, 0.0)
            child.keyframe_insert("rotation_quaternion", frame=frame)
        elif rotation_mode == "AXIS_ANGLE":
            child.rotation_axis_angle = (angle, 0.0, 1.0, 0.0)
            child.keyframe_insert("rotation_axis_angle", frame=frame)
        else:
            child.rotation_euler = (angle, 0.5 * angle, 0.2)
            child.keyframe_insert("rotation_euler", frame=frame)
        for obj, paths in ((parent, ("location", "rotation_euler")), (child, ("location", "scale"))):
            for path in paths:
                obj.keyframe_insert(path, frame=frame)
    for frame in (1, 2, 3, 4):
        scene.frame_set(frame)
        np.testing.assert_allclose(np.array(viewport.matrix_at(child, frame)), np.array(child.matrix_world),
                                   atol=1e-5)


def test_moving_an_emitter_by_hand_resimulates(scene, overlay):
    add_effect(count=2000)
    camera = camera_of(scene, W, H)
    scene.frame_set(3)
    before = overlay.host.read(overlay.composite(scene, camera.view_proj, scene_view(scene), W, H))
    first = overlay.renderer
    scene.objects["Emitter"].animation_data_clear()
    scene.objects["Emitter"].location = (3.0, 0.0, 1.0)
    after = overlay.host.read(overlay.composite(scene, camera.view_proj, scene_view(scene), W, H))
    assert overlay.renderer is not first and not np.array_equal(before, after)
    viewport.free()
    fresh = viewport.overlay()
    np.testing.assert_array_equal(fresh.host.read(fresh.composite(scene, camera.view_proj, scene_view(scene), W, H)), after)


def test_overlay_draws_sorted_alpha_sprites_like_the_bake(scene, overlay):
    """An Alpha-blended effect: sorted from the view and laid over the splat, as the bake does."""
    add_effect(count=3000, blend_mode="ALPHA", opacity=0.5, size=0.05)
    camera = camera_of(scene, W, H)
    baked = SceneRenderer(scene, W, H).render(3)
    scene.frame_set(3)
    frame = overlay.host.read(overlay.composite(scene, camera.view_proj, scene_view(scene), W, H))
    assert overlay.targets[(W, H)].sprites is not None and baked[..., 3].max() > 0.1
    np.testing.assert_allclose(frame, baked, rtol=1e-3, atol=1e-3)


def drawn_over_grey(scene, overlay):
    """(the view's pixels after the overlay drew over a grey view, the particle frame it laid), frame 3."""
    scene.frame_set(3)
    view_proj = camera_of(scene, W, H).view_proj
    offscreen = gpu.types.GPUOffScreen(W, H, format="RGBA32F")
    with offscreen.bind():
        framebuffer = gpu.state.active_framebuffer_get()
        framebuffer.clear(color=(0.5, 0.5, 0.5, 1.0))
        with gpu.matrix.push_pop():
            gpu.matrix.load_matrix(Matrix.Identity(4))
            gpu.matrix.load_projection_matrix(pixel_projection(W, H))
            viewport.draw_view(scene, view_proj, scene_view(scene), W, H)
        pixels = np.array(framebuffer.read_color(0, 0, W, H, 4, 0, "FLOAT").to_list(), np.float32).reshape(H, W, 4)
    offscreen.free()
    return pixels, overlay.host.read(overlay.targets[(W, H)].compositor.resources.frame)


def test_alpha_sprites_cover_the_view_premultiplied(scene, overlay):
    """Over a grey view: alpha smoke darkens it by its coverage, empty pixels keep it."""
    add_effect(count=3000, blend_mode="ALPHA", opacity=0.8, size=0.05, color_start=(0.0, 0.0, 0.0),
               color_end=(0.0, 0.0, 0.0))
    pixels, frame = drawn_over_grey(scene, overlay)
    covered = frame[..., 3] > 0.05
    assert covered.sum() > 10 and (~covered).sum() > 10
    assert (pixels[covered, 0] < 0.5 - 0.01).all(), "black smoke darkens the grey view"
    np.testing.assert_allclose(pixels[frame[..., 3] == 0, :3], 0.5, atol=1e-3)


def test_additive_light_adds_onto_the_view(scene, overlay):
    """Additive light covers nothing (alpha 0): it brightens the view where it shines, as the composited
    render will, and hides nothing behind it."""
    add_effect(count=3000)
    pixels, frame = drawn_over_grey(scene, overlay)
    assert not frame[..., 3].any()
    lit = frame[..., :3].max(axis=-1) > 0.05
    assert lit.sum() > 10 and (~lit).sum() > 10
    assert (pixels[lit, :3].max(axis=-1) > 0.5 + 0.01).all(), "light brightens the grey view"
    assert (pixels[..., :3] >= 0.5 - 1e-3).all(), "and darkens nothing"
    np.testing.assert_allclose(pixels[frame[..., :3].max(axis=-1) == 0, :3], 0.5, atol=1e-3)


def test_scrubbing_back_to_a_checkpoint_of_an_animated_emitter_keeps_the_simulation(scene, overlay):
    """Restoring a checkpoint is not an emitter moved by hand: no rebuild, the cache is used."""
    add_effect(count=2000)
    scene.frame_end = 30
    emitter = scene.objects["Emitter"]
    emitter.animation_data_clear()
    for frame, x in ((1, -1.0), (30, 1.0)):
        emitter.location.x = x
        emitter.keyframe_insert("location", frame=frame)
    camera = camera_of(scene, W, H)
    for frame in (25, 11, 11, 21, 21, 1, 22, 22):  # each drawn twice, as views redraw
        scene.frame_current = frame
        overlay.composite(scene, camera.view_proj, scene_view(scene), W, H)
        if frame == 25:
            renderer = overlay.renderer
    assert overlay.renderer is renderer and overlay.frame == 22


def test_draw_callback_never_raises_into_blender(scene, overlay, monkeypatch, capsys):
    """A failing draw (e.g. a setting the GPU cannot hold) is printed, and the Stats panel goes blank."""
    add_effect(count=2000)
    overlay.composite(scene, camera_of(scene, W, H).view_proj, scene_view(scene), W, H, measure=True)
    assert viewport.last_stats() is not None

    def failing(context):
        raise RuntimeError("no room for 10^12 particles")

    monkeypatch.setattr(viewport, "draw_region", failing)
    viewport._draw_callback()
    assert "GPU Particles overlay: no room for 10^12 particles" in capsys.readouterr().out
    assert viewport.last_stats() is None


def test_a_long_preroll_runs_a_piece_per_draw_then_matches_the_bake(scene, overlay):
    from addon.scene.time import PREROLL_AT_ONCE, PREROLL_CHUNK

    steps = PREROLL_AT_ONCE + 6
    add_effect(count=3000, preroll=steps / 24)
    scene.gpu_particles.viewport_point_filter = "ANTIALIASED"  # the bake's default
    camera = camera_of(scene, W, H)
    scene.frame_set(2)
    assert overlay.composite(scene, camera.view_proj, scene_view(scene), W, H) is None
    assert overlay.preroll_progress() == pytest.approx(PREROLL_CHUNK / steps)
    assert draw_offscreen(scene, camera.view_proj).max() == 0, "nothing drawn while the preroll runs"
    assert bpy.app.timers.is_registered(viewport._redraw_soon), "and the next piece is asked for"
    for _ in range(steps // PREROLL_CHUNK - 2):
        assert overlay.composite(scene, camera.view_proj, scene_view(scene), W, H) is None
    frame = overlay.composite(scene, camera.view_proj, scene_view(scene), W, H)
    assert frame is not None and overlay.preroll_progress() is None
    baked = SceneRenderer(scene, W, H).render(2)
    np.testing.assert_allclose(overlay.host.read(frame), baked, rtol=1e-3, atol=1e-3)


def _two_effects(scene, **settings):
    """An additive effect on the emitter and an alpha-sprite one on a second object."""
    add_effect(count=3000, emission_strength=4.0)
    second = bpy.data.objects.new("Second", None)
    second.location = (1.0, 0.0, 1.0)
    scene.collection.objects.link(second)
    bpy.context.view_layer.objects.active = second
    add_effect(count=2000, blend_mode="ALPHA", opacity=0.5, size=0.05)
    for name, value in settings.items():
        setattr(scene.gpu_particles, name, value)


def _play(scene, stats_shown):
    """Frames 1-4 and 4 again (a redraw) drawn by a fresh overlay on a counting host; the
    timeline takes checkpoints at 1 and 3 (on the GPU: no readback)."""
    from bench.counting import CountingHost

    viewport.free()
    viewport._overlay = viewport.Overlay(CountingHost())
    scene.gpu_particles.cache_memory = 512.0
    viewport._overlay._sync(scene)
    viewport._overlay.renderer.simulation.timeline.interval = 2
    images, waits = [], []
    for frame in (1, 2, 3, 4, 4):
        scene.frame_current = frame
        if stats_shown:
            viewport.stats_panel_drawn()
        before = viewport._overlay.host.waits()
        images.append(draw_offscreen(scene, camera_of(scene, W, H).view_proj))
        waits.append(viewport._overlay.host.waits() - before)
    return images, waits, viewport._overlay.host.calls


@pytest.mark.parametrize("emax_mode", ["MANUAL", "AUTO"])
def test_drawing_waits_for_the_gpu_only_while_the_stats_panel_shows(scene, overlay, emax_mode):
    """Hidden Stats panel: no readback or finish in a draw but of the last draw's figures, read before this
    draw's work: Auto Emax's 2 stats texels every draw, the sprite lists' instance total on the second
    draw (then every VIEWPORT_CHECK_EVERY); shown: it measures.  The images are the same either way."""
    _two_effects(scene, emax_mode=emax_mode)
    hidden, hidden_waits, calls = _play(scene, stats_shown=False)
    assert viewport.last_stats() is None and calls["dispatch"] > 0  # (Alpha sprites are compute now: no draws)
    assert calls["finish"] == 0
    assert hidden_waits == ([0, 1, 0, 0, 0] if emax_mode == "MANUAL" else [0, 2, 1, 1, 1])
    assert sorted(viewport._overlay.renderer.simulation.timeline.checkpoints) == [1, 3]
    shown, shown_waits, _ = _play(scene, stats_shown=True)
    assert all(n > 2 for n in shown_waits) and viewport.last_stats().frame == 4
    assert viewport.last_stats().alive > 0
    for a, b in zip(hidden, shown):
        np.testing.assert_array_equal(a, b)
    assert max(a.max() for a in hidden) > 0


def test_stats_panel_asks_for_one_measured_draw(scene, overlay):
    """The panel's draw makes the next view draw measure; the draw after that waits for nothing."""
    add_effect(count=2000)
    view_proj = camera_of(scene, W, H).view_proj
    scene.frame_set(2)
    draw_offscreen(scene, view_proj)
    assert viewport.last_stats() is None
    viewport.stats_panel_drawn()
    draw_offscreen(scene, view_proj)
    measured = viewport.last_stats()
    assert measured is not None and measured.frame == 2
    scene.frame_current = 3
    draw_offscreen(scene, view_proj)
    assert viewport.last_stats() is measured, "not shown since: the previous frame's counts stay"


def test_scene_index_keeps_its_answers_until_an_edit_and_asks_animated_objects_each_time(scene):
    """Which objects play a part is worked out once per edit; objects with animation data are asked again
    each time (an animated visibility hides an occluder on some frames)."""
    from addon.scene.depth_prepass import may_occlude
    from addon.scene.index import SceneIndex, scene_edited
    from addon.scene.inputs import has_collision

    first, second = add_cube(scene, (0.0, 0.0, 0.0), 1.0), add_cube(scene, (3.0, 0.0, 0.0), 1.0)
    second.modifiers.new("Collision", "COLLISION")
    bpy.context.view_layer.update()
    index = SceneIndex()
    assert index.objects(scene, has_collision) == [second]
    first.modifiers.new("Collision", "COLLISION")
    assert index.objects(scene, has_collision) == [second], "kept until an edit is reported"
    scene_edited()
    assert index.objects(scene, has_collision) == [o for o in scene.objects if o in (first, second)], "scene order"
    still = index.indexed(scene, may_occlude)
    assert index.indexed(scene, may_occlude) is still, "a still scene: the same answer, nothing asked"

    for frame, hidden in ((1, False), (3, True)):
        first.hide_viewport = hidden
        first.keyframe_insert("hide_viewport", frame=frame)
    scene_edited()
    for frame, shown in ((1, True), (3, False), (2, True)):
        scene.frame_set(frame)
        assert (first in index.objects(scene, may_occlude)) == shown, f"frame {frame}"
        assert second in index.objects(scene, may_occlude)


def test_fields_and_colliders_added_between_draws_act_on_the_next(scene, overlay):
    """After an edit (Blender evaluates it, the handlers report it, then the view redraws) the overlay
    reads the new force field and collider."""
    add_effect(count=1000)
    view_proj = camera_of(scene, W, H).view_proj
    bpy.ops.object.empty_add(location=(0.0, 0.0, 2.0))
    wind = bpy.context.active_object
    wall = add_cube(scene, (0.0, 0.0, -1.0), 1.0)
    bpy.context.view_layer.update()
    scene.frame_set(2)
    draw_offscreen(scene, view_proj)
    inputs = overlay.renderer.simulation.inputs
    assert not inputs.fields and not inputs.colliders
    bpy.context.view_layer.objects.active = wind
    bpy.ops.object.forcefield_toggle()  # the same objects: no object came or went
    wind.field.type = "WIND"
    wall.modifiers.new("Collision", "COLLISION")
    bpy.context.view_layer.update()
    scene.frame_set(3)
    draw_offscreen(scene, view_proj)
    inputs = overlay.renderer.simulation.inputs
    assert [field.type for field in inputs.fields] == ["WIND"] and len(inputs.colliders) == 1
