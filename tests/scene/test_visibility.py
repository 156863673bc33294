"""What the particles treat as there follows render visibility in the bake's renderer and the bake (per view layer:
collections, exclusion, holdout, indirect only) and viewport visibility in the overlay (scene/visibility.py)."""

import bpy
import numpy as np
import pytest

from addon import viewport
from addon.scene.renderer import SceneRenderer, camera_of
from addon.scene.visibility import CAMERA, HOLDOUT, INDIRECT, RenderVisibility, render_view_layer
from tests.conftest import add_effect
from tests.scene.test_occlusion import add_cube
from tests.scene.test_viewport import draw_offscreen, lit_pixels

W, H = 64, 36


def halves(scene, frame=2):
    """Lit pixels of the bake's frame in the left and the right half of the view (the cube's)."""
    light = SceneRenderer(scene, W, H).render(frame)[..., :3].max(axis=-1) > 0
    return int(light[:, : W // 2].sum()), int(light[:, W // 2:].sum())


def in_collection(obj, name, parent=None):
    """``obj`` moved into a new collection ``name`` (under ``parent``, else the scene's); returns the collection."""
    collection = bpy.data.collections.new(name)
    (parent or bpy.context.scene.collection).children.link(collection)
    for owner in list(obj.users_collection):
        owner.objects.unlink(obj)
    collection.objects.link(obj)
    return collection


def layer_collection(name, view_layer=None):
    """The view layer's LayerCollection of the collection ``name``, found at any depth."""
    found = [(view_layer or bpy.context.view_layer).layer_collection]
    while found:
        layer = found.pop()
        if layer.collection.name == name:
            return layer
        found.extend(layer.children)
    raise KeyError(name)


@pytest.fixture
def effect_and_cube(scene):
    """An effect, and a cube between the camera and the emitter over the right half of the view."""
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    cube = add_cube((2.5, -6.0, 1.5), 5.0)
    bpy.context.view_layer.objects.active = emitter
    return emitter, cube


def hide_in_viewport(obj):
    obj.hide_set(True)


def disable_in_viewports(obj):
    obj.hide_viewport = True


def hide_collection_in_viewport(obj):
    layer_collection(in_collection(obj, "Viewport Hidden").name).hide_viewport = True


@pytest.mark.parametrize("hide", [hide_in_viewport, disable_in_viewports, hide_collection_in_viewport])
def test_an_occluder_hidden_in_the_viewport_still_hides_particles_in_the_bake(effect_and_cube, scene, hide):
    _, cube = effect_and_cube
    shown = halves(scene)
    assert shown[0] > 50 and shown[1] == 0
    hide(cube)
    bpy.context.view_layer.update()
    assert not cube.visible_get()
    assert halves(scene) == shown


def disable_in_renders(obj):
    obj.hide_render = True


def collection_disabled_in_renders(obj):
    in_collection(obj, "Render Disabled").hide_render = True


def parent_collection_disabled_in_renders(obj):
    parent = bpy.data.collections.new("Parent Disabled")
    bpy.context.scene.collection.children.link(parent)
    in_collection(obj, "Child", parent)
    parent.hide_render = True


def collection_excluded(obj):
    layer_collection(in_collection(obj, "Excluded").name).exclude = True


def collection_holdout(obj):
    layer_collection(in_collection(obj, "Holdout").name).holdout = True


@pytest.mark.parametrize("change", [disable_in_renders, collection_disabled_in_renders,
                                    parent_collection_disabled_in_renders, collection_excluded, collection_holdout])
def test_an_emitter_the_render_does_not_see_draws_no_particles(scene, change):
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    assert sum(halves(scene)) > 100
    change(emitter)
    bpy.context.view_layer.update()
    assert halves(scene) == (0, 0)


@pytest.mark.parametrize("hide", [hide_in_viewport, disable_in_viewports, hide_collection_in_viewport])
def test_an_emitter_hidden_in_the_viewport_renders_its_particles(scene, hide):
    """(A still emitter: Blender does not evaluate an object disabled in viewports in the view layer's
    depsgraph, so an animated one would be read where its animation last left it.)"""
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    emitter.animation_data_clear()
    shown = SceneRenderer(scene, W, H).render(2)
    hide(emitter)
    bpy.context.view_layer.update()
    np.testing.assert_array_equal(SceneRenderer(scene, W, H).render(2), shown)


def test_a_hidden_emitter_keeps_simulating_and_its_sibling_draws_as_before(scene):
    """Visibility is drawing only: another effect's frame is the same, and shown again the hidden one's
    particles are where they would have been."""
    add_effect(count=5000)
    first = bpy.context.active_object
    bpy.ops.object.empty_add(location=(-3.0, 0.0, 0.0))
    add_effect(count=5000)
    both = SceneRenderer(scene, W, H).render(3)
    first.hide_render = True
    renderer = SceneRenderer(scene, W, H)
    alone = renderer.render(3)
    assert 0 < alone[..., :3].sum() < both[..., :3].sum()
    first.hide_render = False
    np.testing.assert_array_equal(renderer.render(3), both)


def test_a_render_follows_the_view_layer_it_renders(effect_and_cube, scene):
    """The first view layer that renders: the cube excluded from it hides nothing, though another layer has it."""
    _, cube = effect_and_cube
    in_collection(cube, "Cubes")
    second = scene.view_layers.new("Without Cube")
    layer_collection("Cubes", second).exclude = True
    assert render_view_layer(scene) == scene.view_layers[0]
    assert halves(scene)[1] == 0
    scene.view_layers[0].use = False
    assert render_view_layer(scene) == second
    open_right = halves(scene)[1]
    assert open_right > 50, "the rendered layer has no cube"


def test_a_scene_that_is_not_the_active_one_keeps_its_occluders(effect_and_cube, scene):
    shown = halves(scene)
    bpy.ops.scene.new(type="EMPTY")
    assert bpy.context.scene != scene
    assert halves(scene) == shown and shown[1] == 0


def object_holdout(cube):
    cube.is_holdout = True


@pytest.mark.parametrize("holdout", [object_holdout, collection_holdout])
def test_a_holdout_occluder_still_hides_the_particles_behind_it(effect_and_cube, scene, holdout):
    _, cube = effect_and_cube
    holdout(cube)
    bpy.context.view_layer.update()
    assert RenderVisibility(render_view_layer(scene), scene.render.engine).seen(cube) == HOLDOUT
    left, right = halves(scene)
    assert left > 50 and right == 0


@pytest.mark.parametrize("engine, hides", [("CYCLES", False), ("BLENDER_EEVEE", True), ("BLENDER_WORKBENCH", True)])
def test_an_indirect_only_occluder_is_unseen_by_the_camera_in_cycles_alone(effect_and_cube, scene, engine, hides):
    """Cycles' Indirect Only: the camera does not see the cube, so it hides nothing; other engines render it."""
    _, cube = effect_and_cube
    cube.location.z = 100.0  # out of the way first
    bpy.context.view_layer.update()
    open_right = halves(scene)[1]
    cube.location.z = 1.5
    layer_collection(in_collection(cube, "Indirect").name).indirect_only = True
    scene.render.engine = engine
    bpy.context.view_layer.update()
    assert RenderVisibility(render_view_layer(scene), engine).seen(cube) == (CAMERA if hides else INDIRECT)
    assert open_right > 50
    assert halves(scene)[1] == (0 if hides else open_right)


def test_render_visibility_takes_any_collection_path_that_renders(scene):
    """An object in a render-disabled collection and in a rendered one renders; nested under an excluded one
    it does not; the object's own toggle wins over every path."""
    cube = add_cube((0.0, 0.0, 0.0), 1.0)
    hidden = in_collection(cube, "Hidden")
    hidden.hide_render = True
    view_layer = bpy.context.view_layer

    def seen():
        bpy.context.view_layer.update()
        return RenderVisibility(view_layer, "BLENDER_EEVEE").seen(cube)

    assert seen() is None
    outer = bpy.data.collections.new("Outer")
    scene.collection.children.link(outer)
    inner = bpy.data.collections.new("Inner")
    outer.children.link(inner)
    inner.objects.link(cube)
    assert seen() == CAMERA
    layer_collection("Outer").exclude = True
    assert seen() is None
    layer_collection("Outer").exclude = False
    cube.hide_render = True
    assert seen() is None


def test_the_overlay_follows_viewport_visibility(effect_and_cube, scene):
    """A cube disabled in renders but shown hides particles in the overlay; hidden in the viewport it hides nothing
    there; a hidden emitter draws nothing there."""
    emitter, cube = effect_and_cube
    viewport.free()
    try:
        scene.frame_set(2)
        view_proj = camera_of(scene, W, H).view_proj

        def right_half():
            bpy.context.view_layer.update()
            return {(x, y) for x, y in lit_pixels(draw_offscreen(scene, view_proj)) if x >= W // 2}

        cube.hide_render = True
        assert not right_half(), "shown in the viewport: it hides the particles there"
        cube.hide_set(True)
        assert len(right_half()) > 50, "hidden in the viewport: it hides nothing there"
        emitter.hide_set(True)
        bpy.context.view_layer.update()
        assert not lit_pixels(draw_offscreen(scene, view_proj)), "the emitter hidden: its particles are too"
    finally:
        viewport.free()


def test_every_mesh_that_renders_shadows_the_particles_but_only_those_the_camera_sees_hide_them(scene):
    """In Cycles: a holdout hides and shadows, an indirect-only mesh shadows only, a mesh hidden in the viewport
    does both, a mesh disabled in renders neither."""
    from addon.scene.depth_prepass import occluders
    from addon.scene.light_shadows import scene_occluders

    cubes = {name: add_cube((float(x), 0.0, 0.0), 1.0) for x, name in enumerate(
        ("plain", "holdout", "indirect", "viewport hidden", "render disabled"))}
    cubes["holdout"].is_holdout = True
    layer_collection(in_collection(cubes["indirect"], "Indirect").name).indirect_only = True
    cubes["viewport hidden"].hide_set(True)
    cubes["render disabled"].hide_render = True
    scene.render.engine = "CYCLES"
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    names = {obj.name: name for name, obj in cubes.items()}
    assert {names[obj.name] for obj in occluders(scene, depsgraph)} == {"plain", "holdout", "viewport hidden"}
    meshes, models = scene_occluders(scene, depsgraph)
    shadowing = [obj for obj in scene.objects if obj.type == "MESH" and obj.name != cubes["render disabled"].name]
    np.testing.assert_allclose(models, [np.array(obj.matrix_world) for obj in shadowing])
    assert len(meshes) == 4
