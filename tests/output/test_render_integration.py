"""Particles in Blender's own renders: render_pre writes the particle layer, the compositor lays it over.

Rendered headless through ``bpy.ops.render.render(animation=True)`` with Workbench and EEVEE, a cube
half in front of the emitter: each composited frame must equal the render's own beauty and depth
passes (written beside it by a File Output node in the same render) combined with the particle
layer by the compositor's rule, ``beauty * (1 - m * A) + m * light`` with ``m = particle depth <
render depth``; particles show on the open side and are hidden behind the cube.
"""

import bpy
import numpy as np
import pytest

from addon.engine.draw.particle_depth import FAR
from addon.output import compositor_nodes
from addon.output.render_layer import frame_file, layer_files
from tests.conftest import add_effect
from tests.scene.test_occlusion import add_cube

W, H = 64, 36


def read_exr(path):
    image = bpy.data.images.load(str(path), check_existing=False)
    try:
        width, height = image.size
        return np.array(image.pixels[:], np.float32).reshape(height, width, 4)
    finally:
        bpy.data.images.remove(image)


def add_pass_outputs(scene, folder):
    """A File Output node beside the particle nodes: the render's own beauty and depth, per frame."""
    tree = scene.compositing_node_group
    files = tree.nodes.new("CompositorNodeOutputFile")
    files.directory = str(folder) + "/"
    files.file_name = ""
    files.format.media_type = "IMAGE"
    files.format.file_format = "OPEN_EXR"
    files.format.color_depth = "32"
    render = tree.nodes[compositor_nodes.chain_node("Render Layers", scene.view_layers[0].name)]
    for name, socket_type in (("beauty", "RGBA"), ("depth", "FLOAT")):
        files.file_output_items.new(socket_type, name)
        tree.links.new(render.outputs["Image" if name == "beauty" else "Depth"], files.inputs[name])
    return files


def pass_file(folder, name, frame):
    matches = sorted(folder.glob(f"*{name}*{frame:04d}.exr"))
    assert len(matches) == 1, f"{name} of frame {frame}: {sorted(p.name for p in folder.iterdir())}"
    return matches[0]


@pytest.mark.slow
@pytest.mark.parametrize("engine, frames", [("BLENDER_WORKBENCH", 3), ("BLENDER_EEVEE", 2), ("CYCLES", 1)])
def test_render_animation_composites_particles_behind_and_in_front(scene, tmp_path, engine, frames):
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    add_cube((2.5, -6.0, 1.5), 5.0)  # covers the right half of the view, between camera and emitter
    bpy.context.view_layer.objects.active = emitter
    scene.render.engine = engine
    scene.cycles.samples, scene.cycles.use_denoising = 1, False  # Cycles' depth: z along the camera axis too
    scene.frame_start, scene.frame_end = 1, frames
    scene.frame_current = 5
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"
    scene.render.filepath = str(tmp_path / "render" / "f_####")
    scene.gpu_particles_output.layer_path = str(tmp_path / "layer") + "/"
    scene.gpu_particles_output.write_layer_files = True  # the layer each frame was composited with
    compositor_nodes.ensure_compositing(scene)
    add_pass_outputs(scene, tmp_path / "passes")

    assert bpy.ops.render.render(animation=True) == {"FINISHED"}

    assert scene.frame_current == 5
    for frame in range(1, frames + 1):
        result = read_exr(frame_file(str(tmp_path / "render" / "f_####"), frame, ".exr"))
        beauty = read_exr(pass_file(tmp_path / "passes", "beauty", frame))
        render_depth = read_exr(pass_file(tmp_path / "passes", "depth", frame))[..., 0]
        light_path, depth_path = layer_files(scene, frame)
        light, particle_depth = read_exr(light_path), read_exr(depth_path)[..., 0]

        in_front = (particle_depth < render_depth)[..., None]
        expected = beauty[..., :3] * (1 - in_front * light[..., 3:]) + in_front * light[..., :3]
        np.testing.assert_allclose(result[..., :3], expected, atol=1 / 255)

        added = (result[..., :3] - beauty[..., :3]).max(axis=-1)
        cube = render_depth < 9.0  # the cube's faces are 3.5 to 8.5 from the camera, the emitter about 12
        assert cube[:, W // 2:].mean() > 0.9 and not cube[:, : W // 4].any()
        assert (added[:, : W // 2][~cube[:, : W // 2]] > 1 / 255).sum() > 20, "particles show beside the cube"
        lit_behind = (light[..., :3].max(axis=-1) > 0) & cube
        assert np.abs(added[cube]).max() < 1e-6, "hidden where the cube is in front"
        assert not lit_behind.any() or (particle_depth[lit_behind] > render_depth[lit_behind]).all()
        lit = light[..., :3].max(axis=-1) > 0
        assert ((particle_depth[lit] > 9.0) & (particle_depth[lit] < 15.0)).all(), "around the emitter, 12 away"
        assert (particle_depth[:, : W // 4][~lit[:, : W // 4]] >= FAR).mean() > 0.5, "far where no particle is"


def test_layer_light_is_the_bake(scene, tmp_path):
    """The layer a render composites is the bake's frame (same renderer); the bake keeps its own output."""
    add_effect(count=5_000)
    scene.frame_end = 2
    scene.render.filepath = str(tmp_path / "render" / "f_####")
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.gpu_particles_output.bake_path = str(tmp_path / "bake" / "b_###")
    scene.gpu_particles_output.layer_path = str(tmp_path / "layer") + "/"
    scene.gpu_particles_output.write_layer_files = True
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.frame_current = 3
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    assert scene.frame_current == 3, "the bake restores the frame"
    assert sorted(p.name for p in (tmp_path / "bake").iterdir()) == ["b_001.exr", "b_002.exr", "gpu_particles_bake.json"]
    assert not (tmp_path / "render").exists(), "the bake never writes to the render's output"
    assert scene.compositing_node_group is None
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}  # as `blender -b file.blend -a` does
    assert compositor_nodes.LIGHT in scene.compositing_node_group.nodes, "the render set the nodes up itself"
    assert sorted(p.name for p in (tmp_path / "bake").iterdir())[:2] == ["b_001.exr", "b_002.exr"]
    for frame in (1, 2):
        baked = read_exr(tmp_path / "bake" / f"b_{frame:03d}.exr")
        light = read_exr(layer_files(scene, frame)[0])
        assert light[..., :3].max() > 0
        np.testing.assert_allclose(light[..., :3], baked[..., :3], rtol=2e-3, atol=1e-4)  # the bake's EXR is half float
        assert not light[..., 3].any() and not baked[..., 3].any(), "additive light covers nothing in either"
        rendered = read_exr(tmp_path / "render" / f"f_{frame:04d}.exr")
        assert (rendered[..., :3] >= light[..., :3] - 1e-6).all() and rendered[..., :3].max() > 0, "light added"


def test_layer_alpha_is_the_sprites_coverage(scene):
    """The layer's alpha is the frame's own: 0 under additive light, the alpha sprites' coverage where they are."""
    from addon.output.render_layer import ParticleLayer

    add_effect(count=3000)
    add_effect(count=3000, blend_mode="ALPHA", opacity=0.8, size=0.05)
    layer = ParticleLayer(scene)
    light, _ = layer.render(2)
    coverage = layer.renderer.sprites.read()[..., 3]
    assert coverage.max() > 0.1 and (coverage == 0).any()
    np.testing.assert_array_equal(light[..., 3], coverage)
    assert light[coverage == 0, :3].max() > 0, "additive light where no sprite covers"


def test_layer_light_has_the_glints(scene):
    """Glints on: the light a render composites gains the bake's stars, added (alpha stays the sprites' coverage)."""
    from addon.output.render_layer import ParticleLayer

    add_effect(count=3000, emission_strength=40.0)
    settings = scene.gpu_particles
    settings.emax_mode, settings.glints = "MANUAL", "NONE"
    plain, _ = ParticleLayer(scene).render(2)
    settings.glints, settings.glint_threshold, settings.glint_length = "STAR", 1.0, 0.3
    layer = ParticleLayer(scene)
    light, _ = layer.render(2)
    assert len(layer.renderer.glints.read_points().pixels) > 0
    added = light[..., :3] - plain[..., :3]
    assert added.min() >= -1e-6 and added.sum() > 0.05 * plain[..., :3].sum()
    assert np.array_equal(light[..., 3], plain[..., 3])


def test_frame_file_follows_blenders_rule():
    assert frame_file("/x/f_####", 7, ".png").as_posix() == "/x/f_0007.png"
    assert frame_file("/x/f_##_v#", 12, ".exr").as_posix() == "/x/f_##_v12.exr"
    assert frame_file("/x/", 3, ".png").as_posix() == "/x/0003.png"
    assert frame_file("/x/shot", 1234567, ".png").as_posix() == "/x/shot1234567.png"


def test_nodes_splice_into_the_artists_tree_and_keep_their_edits(scene):
    tree = bpy.data.node_groups.new("Mine", "CompositorNodeTree")
    tree.interface.new_socket("Image", in_out="OUTPUT", socket_type="NodeSocketColor")
    render = tree.nodes.new("CompositorNodeRLayers")
    glare = tree.nodes.new("CompositorNodeGlare")
    output = tree.nodes.new("NodeGroupOutput")
    tree.links.new(render.outputs["Image"], glare.inputs["Image"])
    tree.links.new(glare.outputs["Image"], output.inputs[0])
    scene.compositing_node_group = tree

    assert compositor_nodes.ensure_compositing(scene) == tree
    layer = scene.view_layers[0].name
    over = tree.nodes[compositor_nodes.chain_node("Light over Render", layer)]
    assert over.inputs["Background"].links[0].from_node.name == compositor_nodes.chain_node("Shadow", layer)
    assert compositor_nodes.over_background(over).node == glare, "the artist's result: shadowed, particles over it"
    assert output.inputs[0].links[0].from_node.name == compositor_nodes.chain_node("Set Alpha", layer)
    assert over.inputs["Factor"].links[0].from_node.name == compositor_nodes.chain_node("In Front", layer)
    assert scene.view_layers[0].use_pass_z and scene.render.use_compositing

    tree.links.remove(over.inputs["Factor"].links[0])  # the artist's choice: no depth test
    compositor_nodes.ensure_compositing(scene)  # what every render does
    assert not over.inputs["Factor"].links, "left as the artist made it"
    assert bpy.ops.gpu_particles.setup_compositing() == {"FINISHED"}
    assert over.inputs["Factor"].links, "Set Up Compositing repairs it"
    assert [n.name for n in tree.nodes if n.name.startswith(compositor_nodes.PREFIX)] == [
        compositor_nodes.LIGHT, compositor_nodes.LIGHT_CHANNELS,
        compositor_nodes.BRIGHTEST_RG, compositor_nodes.BRIGHTEST_RGB, compositor_nodes.GLOW_COVERAGE,
        *(compositor_nodes.chain_node(part, layer) for part in (
            "Render Layers", "Set Alpha", "In Front", "Light over Render", "Render Alpha", "Uncovered", "Coverage",
            "Alpha", "Shadow"))]


def render_still(scene, path, frame):
    """Render ``frame`` as F12 does (``render_pre`` included) to a 32-bit RGBA EXR and read it."""
    scene.frame_set(frame)
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"
    scene.render.image_settings.color_mode = "RGBA"
    scene.render.filepath = str(path)
    assert bpy.ops.render.render(write_still=True, scene=scene.name) == {"FINISHED"}
    return read_exr(str(path) + ".exr")


def plain_render(scene, path, frame, setup=True):
    """The frame as Blender rendered it, before the particle nodes (a File Output of the first rendered view
    layer's Render Layers in the same render): what a frame without particles must equal; ``setup``: the
    particle nodes set up first (not without the add-on)."""
    if setup:
        compositor_nodes.ensure_compositing(scene)
    tree = scene.compositing_node_group
    files = tree.nodes.get("Test: beauty")
    if files is None:
        files = tree.nodes.new("CompositorNodeOutputFile")
        files.name = "Test: beauty"
        files.file_name = ""
        files.format.media_type, files.format.file_format, files.format.color_depth = "IMAGE", "OPEN_EXR", "32"
        files.file_output_items.new("RGBA", "beauty")
    layer = compositor_nodes.rendered_layers(scene)[0].name
    tree.links.new(tree.nodes[compositor_nodes.chain_node("Render Layers", layer)].outputs["Image"],
                   files.inputs["beauty"])
    files.directory = str(path) + "/"
    result = render_still(scene, path, frame)
    return result, read_exr(path / "beauty.exr")  # a still: no frame number


def lit(result, plain):
    return (np.abs(result - plain)[..., :3].max(axis=-1) > 1e-4).sum()


def light_label(scene):
    return scene.compositing_node_group.nodes[compositor_nodes.LIGHT].label


def disable_effect(scene):
    bpy.context.active_object.gpu_particles.effects[0].enabled = False


def untick_composite(scene):
    scene.gpu_particles_output.use_render = False


def delete_emitter(scene):
    bpy.data.objects.remove(bpy.context.active_object)


@pytest.mark.parametrize("change, why", [(disable_effect, "no enabled effect"), (untick_composite, "Composite into"),
                                         (delete_emitter, "no enabled effect")])
def test_a_frame_without_its_layer_is_the_render_untouched(scene, tmp_path, change, why):
    """Render frame 20, change the scene so that frame 10 gets no particles: frame 10 is the plain render."""
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    assert lit(*plain_render(scene, tmp_path / "f20", 20)) > 50
    change(scene)
    result, plain = plain_render(scene, tmp_path / "f10", 10)
    np.testing.assert_array_equal(result, plain)
    assert "frame 10: " in light_label(scene) and why in light_label(scene)


def test_a_failed_layer_is_the_render_untouched_and_reported(scene, tmp_path, monkeypatch):
    from addon.output import render_integration
    from addon.output.render_layer import ParticleLayer

    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    render_still(scene, tmp_path / "f20", 20)

    def fails(self, frame):
        raise RuntimeError("no GPU memory left")

    monkeypatch.setattr(ParticleLayer, "layer", fails)
    result, plain = plain_render(scene, tmp_path / "f30", 30)
    np.testing.assert_array_equal(result, plain)
    assert "no GPU memory left" in light_label(scene)
    errors = render_integration.last_errors[scene.name]
    assert len(errors) == 1 and "frame 30" in errors[0] and "no GPU memory left" in errors[0], "shown in the panel"


def test_colliders_without_faces_leave_the_particles_in_the_render(scene, tmp_path):
    """F12 with an edges-only collider and a Geometry Nodes collider that makes no faces: the particles are
    there, nothing is reported failed, and the light node names no error."""
    from addon.output import render_integration
    from tests.scene.test_evaluated_colliders import edges_collider, node_collider

    add_effect(count=3000)
    emitter = bpy.context.active_object
    edges_collider("Edges Only")
    node_collider("GN Line", "GeometryNodeMeshLine", Count=4)
    bpy.context.view_layer.objects.active = emitter
    scene.render.engine = "BLENDER_WORKBENCH"
    assert lit(*plain_render(scene, tmp_path / "f20", 20)) > 50
    assert light_label(scene) == f"{compositor_nodes.PREFIX}frame 20's particles"
    assert render_integration.last_errors[scene.name] == []


def test_a_broken_effect_beside_a_good_one_renders_the_good_one_and_names_the_broken(scene, tmp_path):
    """F12 with an effect that cannot run (a Mesh emitter on an Empty): the other effect's particles are in the
    frame, and the render's messages name the one skipped."""
    from addon.output import render_integration

    add_effect(count=3000).name = "Good"
    add_effect(count=3000, emitter_shape="MESH").name = "Broken"
    scene.render.engine = "BLENDER_WORKBENCH"
    assert lit(*plain_render(scene, tmp_path / "f20", 20)) > 50, "the good effect renders"
    errors = render_integration.last_errors[scene.name]
    assert len(errors) == 1 and "effect 'Broken' on 'Emitter' skipped: emitter 'Emitter' (Empty) has no surface" \
        in errors[0] and "the other effects render" in errors[0]


def test_a_file_opened_without_the_add_on_renders_clean(scene, tmp_path):
    import addon

    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.world = bpy.data.worlds.new("Opaque")  # alpha 1 everywhere: layer images reloaded 1x1 made it 0
    assert lit(*plain_render(scene, tmp_path / "f20", 20)) > 50
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    addon.unregister()
    try:
        bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "shot.blend"))
        opened = bpy.context.scene
        assert compositor_nodes.LIGHT in opened.compositing_node_group.nodes, "the nodes are saved"
        result, plain = plain_render(opened, tmp_path / "f10", 10, setup=False)
        np.testing.assert_array_equal(result, plain)
    finally:
        addon.register()


def test_unticked_compositing_stays_off_on_f12_and_the_panel_says_why_with_a_button(scene, tmp_path):
    from addon.output.render_integration import COMPOSITING_OFF, draw_settings
    from tests.ui.test_panels import RecordingLayout

    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.use_compositing = False  # the artist's choice
    without = render_still(scene, tmp_path / "off", 8)
    assert not scene.render.use_compositing, "F12 left it off"
    layout = RecordingLayout()
    draw_settings(layout, scene)
    assert ("label", f"No particles in renders: {COMPOSITING_OFF}") in layout.log
    assert ("operator", "gpu_particles.use_compositing") in layout.log
    assert bpy.ops.gpu_particles.use_compositing() == {"FINISHED"} and scene.render.use_compositing
    layout = RecordingLayout()
    draw_settings(layout, scene)
    assert not any(COMPOSITING_OFF in str(entry) for entry in layout.log), "on again: nothing to say"
    with_particles, plain = plain_render(scene, tmp_path / "on", 8)
    np.testing.assert_array_equal(without, plain, err_msg="off: the render untouched")
    assert lit(with_particles, plain) > 50, "on: the particles are composited"


def test_transparent_film_keeps_the_glow_with_its_coverage(scene, tmp_path):
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.film_transparent = True
    scene.gpu_particles_output.write_layer_files = True
    result, plain = plain_render(scene, tmp_path / "f", 8)
    light = read_exr(layer_files(scene, 8)[0])
    background = plain[..., 3] == 0
    glow = background & (light[..., :3].max(axis=-1) > 1e-3)
    assert background.mean() > 0.5 and glow.sum() > 50
    assert (result[glow, 3] > 0).all(), "every viewer keeps it: alpha > 0"
    np.testing.assert_allclose(result[glow, :3], light[glow, :3], atol=1e-5)  # premultiplied: the light itself
    np.testing.assert_allclose(result[glow, 3], np.minimum(light[glow, :3].max(axis=-1), 1), atol=1e-5)
    opaque = plain[..., 3] == 1
    np.testing.assert_array_equal(result[opaque, 3], 1.0)


@pytest.mark.parametrize("crop", [True, False])
@pytest.mark.parametrize("size, region", [((W, H), (7, 25, 19, 51)), ((160, 90), (18, 63, 48, 128))])
def test_border_render_gets_the_layer_of_its_region(scene, tmp_path, crop, size, region):
    """At 160x90 the border's top, 0.7 x 90, is 63 in Blender's single precision (62 in double)."""
    from addon.output.render_layer import border_region

    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    width, height = size
    scene.render.resolution_x, scene.render.resolution_y = width, height
    full, full_plain = plain_render(scene, tmp_path / "full", 8)
    render = scene.render
    render.use_border, render.use_crop_to_border = True, crop
    render.border_min_x, render.border_max_x, render.border_min_y, render.border_max_y = 0.3, 0.8, 0.2, 0.7
    rows, columns = border_region(scene, width, height)
    assert (rows.start, rows.stop, columns.start, columns.stop) == region, "Blender's truncation"
    result, plain = plain_render(scene, tmp_path / "border", 8)
    added, full_added = result - plain, full - full_plain
    if crop:
        assert result.shape == (rows.stop - rows.start, columns.stop - columns.start, 4)
        np.testing.assert_allclose(added[..., :3], full_added[rows, columns, :3], atol=1e-5)
    else:
        assert result.shape == (height, width, 4)
        np.testing.assert_allclose(added[rows, columns, :3], full_added[rows, columns, :3], atol=1e-5)
        outside = np.ones((height, width), bool)
        outside[rows, columns] = False
        assert not added[outside].any(), "nothing outside the border"
    assert lit(added, 0 * added) > 20


def test_resolution_percentage_is_truncated_as_blender_renders(scene, tmp_path):
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 240, 135, 50
    result, plain = plain_render(scene, tmp_path / "f", 8)
    assert result.shape == plain.shape == (67, 120, 4)
    assert lit(result, plain) > 50


def test_every_rendered_view_layer_gets_its_own_chain(scene, tmp_path):
    add_effect(count=3000)
    add_cube((2.5, -6.0, 1.5), 5.0)
    scene.render.engine = "BLENDER_WORKBENCH"
    second = scene.view_layers.new("Second")
    scene.view_layers[0].use = False
    result, plain = plain_render(scene, tmp_path / "f", 8)
    tree = scene.compositing_node_group
    render = tree.nodes[compositor_nodes.chain_node("Render Layers", second.name)]
    assert render.layer == second.name and second.use_pass_z
    assert compositor_nodes.chain_node("Render Layers", scene.view_layers[0].name) not in tree.nodes
    cube = plain[..., 3] > 0.9
    assert cube.mean() > 0.3, "the render of the second layer: its cube"
    assert lit(result, plain) > 50 and (result[..., :3] >= plain[..., :3] - 1e-6).all(), "particles over it"
    assert (result[cube, 3] >= plain[cube, 3]).all()


def test_two_scenes_each_composite_their_own(scene, tmp_path):
    add_effect(count=3000)
    add_cube((2.5, -6.0, 1.5), 5.0)
    scene.render.engine = "BLENDER_WORKBENCH"
    first = render_still(scene, tmp_path / "a1", 8)
    bpy.ops.scene.new(type="FULL_COPY")
    copy = bpy.context.scene
    next(obj for obj in copy.objects if obj.type == "MESH").location.x -= 3  # the copy's own cube, moved
    assert not np.array_equal(render_still(copy, tmp_path / "b", 8), first)
    assert copy.compositing_node_group != scene.compositing_node_group
    assert all(node.scene == copy for node in copy.compositing_node_group.nodes
               if node.bl_idname == "CompositorNodeRLayers" and node.name != compositor_nodes.LIGHT)
    np.testing.assert_array_equal(render_still(scene, tmp_path / "a2", 8), first)

    for obj in [o for o in copy.objects if o.gpu_particles.effects]:  # the copy without its emitter
        bpy.data.objects.remove(obj)
    np.testing.assert_array_equal(*plain_render(copy, tmp_path / "c", 8))


def test_camera_switched_by_markers(scene, tmp_path):
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.gpu_particles_output.write_layer_files = True
    first = scene.camera
    second = first.copy()
    second.location.x += 1.5
    scene.collection.objects.link(second)
    scene.timeline_markers.new("A", frame=1).camera = first
    scene.timeline_markers.new("B", frame=3).camera = second
    scene.frame_start, scene.frame_end = 2, 3
    scene.render.filepath = str(tmp_path / "anim" / "f_####")
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    marked = read_exr(layer_files(scene, 3)[0])
    scene.timeline_markers.clear()
    scene.camera = second
    scene.gpu_particles_output.layer_path = str(tmp_path / "direct") + "/"
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    np.testing.assert_array_equal(marked, read_exr(layer_files(scene, 3)[0]))
    scene.camera = first
    scene.gpu_particles_output.layer_path = str(tmp_path / "first") + "/"
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    assert not np.array_equal(marked, read_exr(layer_files(scene, 3)[0])), "the marker's camera made a difference"
