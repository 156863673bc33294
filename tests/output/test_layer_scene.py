"""The particle layer reaches the compositor as render passes of a helper scene (``layer_scene.py``).

Rendered headless through ``bpy.ops.render.render``: the helper deleted, renamed or given another engine by the
artist is made again or still read (never a crash, the same frame); the Image nodes of the layer before the
helper scene are replaced where they were; one more pass of the layer reaches its Render Layers socket as handed
over, with no code of its own.
"""

import bpy
import numpy as np
import pytest

from addon.output import compositor_nodes, layer_scene
from addon.output.render_layer import ParticleLayer
from tests.conftest import add_effect
from tests.output.test_render_integration import lit, plain_render, read_exr, render_still

LIGHT = compositor_nodes.LIGHT


def delete(helper):
    bpy.data.scenes.remove(helper)


def rename(helper):
    helper.name = "The Artist's Name"


def other_engine(helper):
    helper.render.engine = "BLENDER_WORKBENCH"


@pytest.mark.parametrize("change", [delete, rename, other_engine])
def test_a_helper_scene_the_artist_changed_still_gives_the_frame_its_particles(scene, tmp_path, change):
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    first, plain = plain_render(scene, tmp_path / "a", 8)
    assert lit(first, plain) > 50
    change(compositor_nodes.helper_of(scene))
    again = render_still(scene, tmp_path / "b", 8)
    np.testing.assert_array_equal(again, first)
    helper = compositor_nodes.helper_of(scene)
    assert layer_scene.is_helper(helper) and helper.camera == scene.camera
    if change is rename:
        assert helper.name == "The Artist's Name", "read where it is, not made twice"


def test_a_deleted_helper_scene_is_made_again_also_for_a_render_without_particles(scene, tmp_path):
    """Effects off, the nodes still there: the node reads a helper again (none would read the render itself)."""
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    plain_render(scene, tmp_path / "a", 8)
    bpy.context.active_object.gpu_particles.effects[0].enabled = False
    delete(compositor_nodes.helper_of(scene))
    np.testing.assert_array_equal(*plain_render(scene, tmp_path / "b", 8))
    assert layer_scene.is_helper(compositor_nodes.helper_of(scene))


def image_route(scene):
    """Today's chain turned into the one before the helper scene: the light and depth as generated images read
    by Image nodes (the depth through a Separate Color), linked where that version linked them."""
    tree = scene.compositing_node_group
    layer = scene.view_layers[0].name
    tree.nodes.remove(tree.nodes[LIGHT])
    nodes = []
    for name, kind in ((LIGHT, "CompositorNodeImage"), (compositor_nodes.PREFIX + "Depth", "CompositorNodeImage"),
                       (compositor_nodes.PREFIX + "Depth Channel", "CompositorNodeSeparateColor")):
        nodes.append(tree.nodes.new(kind))
        nodes[-1].name = name
    light, depth, channel = nodes
    for node, kind in ((light, "Light"), (depth, "Depth")):
        node.image = bpy.data.images.new(f"GPU Particles {kind} ({scene.name})", 64, 36, alpha=True, float_buffer=True)
    tree.links.new(depth.outputs["Image"], channel.inputs["Image"])
    tree.links.new(light.outputs["Image"], tree.nodes[compositor_nodes.LIGHT_CHANNELS].inputs["Image"])
    tree.links.new(light.outputs["Image"], tree.nodes[compositor_nodes.chain_node("Light over Render", layer)]
                   .inputs["Foreground"])
    tree.links.new(channel.outputs["Red"], tree.nodes[compositor_nodes.chain_node("In Front", layer)].inputs[0])


def test_the_image_nodes_of_the_layer_before_the_helper_scene_are_replaced_where_they_fed(scene, tmp_path):
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    first, plain = plain_render(scene, tmp_path / "a", 8)
    image_route(scene)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "shot.blend"))  # the load replaces them
    opened = bpy.context.scene
    tree = opened.compositing_node_group
    layer = opened.view_layers[0].name
    light = tree.nodes[LIGHT]
    assert light.bl_idname == "CompositorNodeRLayers" and layer_scene.is_helper(light.scene)
    assert not {compositor_nodes.PREFIX + "Depth", compositor_nodes.PREFIX + "Depth Channel"} & set(tree.nodes.keys())
    assert not [image.name for image in bpy.data.images if image.name.startswith("GPU Particles")]
    fed = {(link.from_socket.name, link.to_node.name) for link in tree.links if link.from_node == light}
    assert fed == {("Image", compositor_nodes.LIGHT_CHANNELS),
                   ("Image", compositor_nodes.chain_node("Light over Render", layer)),
                   ("Depth", compositor_nodes.chain_node("In Front", layer)),
                   (layer_scene.SHADOW_PASS.name, compositor_nodes.chain_node("Shadow", layer))}
    np.testing.assert_array_equal(render_still(opened, tmp_path / "b", 8), first)


def test_one_more_pass_of_the_layer_reaches_its_socket_as_handed_over(scene, tmp_path, monkeypatch):
    """What a shadow term needs: a LayerPass in PASSES and its array in the layer; the helper's Render Layers
    node shows it and a frame without a layer gets the pass's empty value."""
    extra = layer_scene.LayerPass("Test Pass", "X", "VALUE", 0.25)
    monkeypatch.setattr(layer_scene, "PASSES", [*layer_scene.PASSES, extra])
    layer = ParticleLayer.layer

    def with_extra(self, frame):
        passes = layer(self, frame)
        height, width = passes["Depth"].shape
        passes[extra.name] = np.arange(height * width, dtype=np.float32).reshape(height, width) / (height * width)
        return passes

    monkeypatch.setattr(ParticleLayer, "layer", with_extra)
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    tree = compositor_nodes.ensure_compositing(scene)
    helper = compositor_nodes.helper_of(scene)
    helper.view_layers[0].update_render_passes()  # (a pass list changed at run time: the node's sockets again)
    files = tree.nodes.new("CompositorNodeOutputFile")
    files.directory, files.file_name = str(tmp_path / "passes") + "/", ""
    files.format.media_type, files.format.file_format, files.format.color_depth = "IMAGE", "OPEN_EXR", "32"
    files.file_output_items.new("FLOAT", "extra")
    tree.links.new(tree.nodes[LIGHT].outputs[extra.name], files.inputs["extra"])
    render_still(scene, tmp_path / "f", 8)
    written = read_exr(tmp_path / "passes" / "extra.exr")[..., 0]
    np.testing.assert_array_equal(written, np.arange(written.size, dtype=np.float32).reshape(written.shape)
                                  / written.size)
    scene.gpu_particles_output.use_render = False
    render_still(scene, tmp_path / "g", 8)
    np.testing.assert_array_equal(read_exr(tmp_path / "passes" / "extra.exr")[..., 0], extra.empty)
