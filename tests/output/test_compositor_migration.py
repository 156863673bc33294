"""Files saved by the previous version of the add-on: its compositor nodes and file-backed layer images are
replaced, so a render never reads a stale layer file (another frame's particles).

The previous version (804d8fd) made one tree shared by scenes (``GPU Particles Compositing``), one chain of
unsuffixed nodes, and images ``GPU Particles Light`` / ``GPU Particles Depth`` that it pointed at each frame's
``light_####.exr`` / ``depth_####.exr``; :func:`previous_version_nodes` rebuilds them as it did.
"""

import bpy
import numpy as np

from addon.output import compositor_nodes, layer_scene
from tests.conftest import add_effect
from tests.output.test_render_integration import disable_effect, lit, plain_render, render_still

PREFIX = compositor_nodes.PREFIX
PREVIOUS_NODES = [PREFIX + part for part in ("Render Layers", "In Front", "Light over Render")]
PREVIOUS_IMAGES = ["GPU Particles Light", "GPU Particles Depth"]


def write_exr(path, rgba):
    image = bpy.data.images.new("stale", rgba.shape[1], rgba.shape[0], alpha=True, float_buffer=True)
    image.pixels.foreach_set(np.ascontiguousarray(rgba, np.float32).ravel())
    image.filepath_raw, image.file_format = str(path), "OPEN_EXR"
    image.save()
    bpy.data.images.remove(image)


def previous_version_nodes(scene, tree, folder, frame):
    """804d8fd's chain spliced in front of ``tree``'s Group Output, its images pointed at ``frame``'s files."""
    def node(part, kind):
        made = tree.nodes.new(kind)
        made.name = made.label = PREFIX + part
        return made

    render = node("Render Layers", "CompositorNodeRLayers")
    render.scene = scene
    light, depth = node("Light", "CompositorNodeImage"), node("Depth", "CompositorNodeImage")
    for image_node, name, kind in ((light, PREVIOUS_IMAGES[0], "light"), (depth, PREVIOUS_IMAGES[1], "depth")):
        image = bpy.data.images.get(name) or bpy.data.images.new(name, 1, 1, alpha=True, float_buffer=True)
        image.source, image.filepath = "FILE", str(folder / f"{kind}_{frame:04d}.exr")
        image.colorspace_settings.name, image.alpha_mode = "Non-Color", "PREMUL"
        image_node.image = image
    channel = node("Depth Channel", "CompositorNodeSeparateColor")
    in_front = node("In Front", "ShaderNodeMath")
    in_front.operation = "LESS_THAN"
    over = node("Light over Render", "CompositorNodeAlphaOver")
    over.inputs["Straight Alpha"].default_value = False
    output = next(n for n in tree.nodes if n.bl_idname == "NodeGroupOutput")
    fed = output.inputs[0].links
    links = tree.links
    links.new(fed[0].from_socket if fed else render.outputs["Image"], over.inputs["Background"])
    links.new(over.outputs[0], output.inputs[0])
    links.new(light.outputs["Image"], over.inputs["Foreground"])
    links.new(depth.outputs["Image"], channel.inputs["Image"])
    links.new(channel.outputs["Red"], in_front.inputs[0])
    links.new(render.outputs["Depth"], in_front.inputs[1])
    links.new(in_front.outputs[0], over.inputs["Factor"])
    return render, over


def previous_version_file(scene, tmp_path):
    """The previous version's shared tree in ``scene``, with the artist's nodes around its chain (a grade before
    it, a finish after it, an image of their own), reading a stale frame 20 of bright light in front of all."""
    layer_folder = tmp_path / "particles" / "layer"
    layer_folder.mkdir(parents=True)
    write_exr(layer_folder / "light_0020.exr", np.full((36, 64, 4), (4.0, 3.0, 2.0, 1.0)))
    write_exr(layer_folder / "depth_0020.exr", np.zeros((36, 64, 4)))  # nearer than anything

    tree = bpy.data.node_groups.new(compositor_nodes.GROUP_NAME, "CompositorNodeTree")
    tree.interface.new_socket("Image", in_out="OUTPUT", socket_type="NodeSocketColor")
    output = tree.nodes.new("NodeGroupOutput")
    scene.compositing_node_group = tree
    scene.view_layers[0].use_pass_z = scene.render.use_compositing = True
    render, over = previous_version_nodes(scene, tree, layer_folder, 20)
    grade, finish = tree.nodes.new("ShaderNodeGamma"), tree.nodes.new("ShaderNodeGamma")
    grade.name, finish.name = "Artist Grade", "Artist Finish"
    plate = tree.nodes.new("CompositorNodeImage")
    plate.name = "Artist Plate"
    plate.image = bpy.data.images.new("plate", 4, 4)
    plate.image.source, plate.image.filepath = "FILE", str(layer_folder / "light_0001.png")  # not one of ours
    for node in (grade, finish):
        node.inputs["Gamma"].default_value = 1.0  # the identity: the result is still the plain render
    tree.links.new(render.outputs["Image"], grade.inputs["Color"])
    tree.links.new(grade.outputs[0], over.inputs["Background"])
    tree.links.new(over.outputs[0], finish.inputs["Color"])
    tree.links.new(finish.outputs[0], output.inputs[0])
    return tree


def snapshot():
    """Everything a setup could change: every tree's nodes and links, the images, the trees' names."""
    return ([(tree.name, sorted((n.name, n.bl_idname) for n in tree.nodes),
              sorted((link.from_node.name, link.from_socket.identifier, link.to_node.name, link.to_socket.identifier)
                     for link in tree.links)) for tree in bpy.data.node_groups],
            sorted(image.name for image in bpy.data.images))


def assert_replaced(scene):
    tree = scene.compositing_node_group
    layer = scene.view_layers[0].name
    assert tree.name == f"{compositor_nodes.GROUP_NAME} ({scene.name})"
    assert not set(PREVIOUS_NODES) & set(tree.nodes.keys()), "the previous chain is gone"
    assert not set(PREVIOUS_IMAGES) & set(bpy.data.images.keys()), "its file-backed images too"
    assert "plate" in bpy.data.images and tree.nodes["Artist Plate"].image.name == "plate"
    render = tree.nodes[compositor_nodes.chain_node("Render Layers", layer)]
    over = tree.nodes[compositor_nodes.chain_node("Light over Render", layer)]
    set_alpha = tree.nodes[compositor_nodes.chain_node("Set Alpha", layer)]
    grade, finish = tree.nodes["Artist Grade"], tree.nodes["Artist Finish"]
    assert grade.inputs["Color"].links[0].from_socket == render.outputs["Image"], "the artist's link, from ours"
    assert compositor_nodes.over_background(over).node == grade, "over what the previous chain went over"
    assert finish.inputs["Color"].links[0].from_node == set_alpha, "into what the previous chain fed"
    assert next(n for n in tree.nodes if n.bl_idname == "NodeGroupOutput").inputs[0].links[0].from_node == finish
    assert tree.nodes[compositor_nodes.LIGHT].scene == layer_scene.ensure_helper(scene), "the helper's passes"


def test_previous_version_nodes_are_replaced_by_the_setup(scene, tmp_path):
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    previous_version_file(scene, tmp_path)
    disable_effect(scene)
    stale = render_still(scene, tmp_path / "stale", 10)  # what a render of such a file showed before

    result, plain = plain_render(scene, tmp_path / "f10", 10)  # sets up compositing first, as a render does
    np.testing.assert_array_equal(result, plain)
    assert lit(stale, plain) == plain.shape[0] * plain.shape[1], "the stale light was everywhere"
    assert_replaced(scene)

    before = snapshot()
    compositor_nodes.ensure_compositing(scene)
    compositor_nodes.ensure_compositing(scene, repair=True)
    compositor_nodes.replace_previous_version()
    assert snapshot() == before, "a second setup changes nothing"


def test_a_previous_version_file_is_replaced_when_loaded(scene, tmp_path):
    """Effect off: no render would set up compositing; the load does, and every scene of the shared tree gets
    its own."""
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    tree = previous_version_file(scene, tmp_path)
    other = bpy.data.scenes.new("Other")
    other.compositing_node_group = tree
    disable_effect(scene)
    name = scene.name
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "shot.blend"))

    opened, other = bpy.data.scenes[name], bpy.data.scenes["Other"]
    assert_replaced(opened)
    trees = opened.compositing_node_group, other.compositing_node_group
    assert trees[1] != trees[0] and trees[1].name == f"{compositor_nodes.GROUP_NAME} (Other)"
    for owner, tree in zip((opened, other), trees):
        assert all(node.scene == owner for node in tree.nodes
                   if node.bl_idname == "CompositorNodeRLayers" and node.name != compositor_nodes.LIGHT)
        assert not set(PREVIOUS_NODES) & set(tree.nodes.keys())
    before = snapshot()
    compositor_nodes.replace_previous_version()
    assert snapshot() == before
    np.testing.assert_array_equal(*plain_render(opened, tmp_path / "f10", 10))


def test_previous_chain_followed_by_todays_is_bridged(scene, tmp_path):
    """A file the unmigrating version set up again (its chain spliced after the previous one): the previous
    chain goes, today's lays the particles over what the previous one did."""
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    tree = previous_version_file(scene, tmp_path)
    tree.nodes.remove(tree.nodes["Artist Finish"])
    output = next(n for n in tree.nodes if n.bl_idname == "NodeGroupOutput")
    tree.links.new(tree.nodes[PREVIOUS_NODES[-1]].outputs[0], output.inputs[0])
    for name in PREVIOUS_NODES:  # hidden from the setup, as a setup without the migration saw them
        tree.nodes[name].name = "hidden " + name
    compositor_nodes.ensure_compositing(scene)
    for name in PREVIOUS_NODES:
        tree.nodes["hidden " + name].name = name
    layer = scene.view_layers[0].name
    over, render_alpha, set_alpha = (tree.nodes[compositor_nodes.chain_node(part, layer)]
                                     for part in ("Light over Render", "Render Alpha", "Set Alpha"))
    assert compositor_nodes.over_background(over).node.name == PREVIOUS_NODES[-1]

    compositor_nodes.ensure_compositing(scene)
    assert not set(PREVIOUS_NODES) & set(tree.nodes.keys())
    for socket in (compositor_nodes.over_background(over), render_alpha.inputs["Image"].links[0].from_socket):
        assert socket.node.name == "Artist Grade"
    assert output.inputs[0].links[0].from_node == set_alpha
    disable_effect(scene)
    np.testing.assert_array_equal(*plain_render(scene, tmp_path / "f10", 10))
