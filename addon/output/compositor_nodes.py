"""The compositor nodes that lay the particle layer over a render.

Blender 5's compositing tree is a node group (``scene.compositing_node_group``)
whose Group Output is the final image.  The add-on names its nodes
(``GPU Particles: ...``) so an artist sees them and can rewire, mute or
extend them; it rebuilds only nodes that are missing and never touches the
artist's other nodes.  The rule they implement, per pixel::

    in_front = particle depth < render depth          (the render's own Z pass)
    result   = render * (1 - in_front * A) + in_front * RGB

which is an Alpha Over of the premultiplied particle light (``render_layer.py``)
with the depth test as its factor.  The render's depth pass decides the final
occlusion because it is what the engine really drew (modifiers, displacement,
curves, volumes: anything the add-on's mesh pre-pass does not rasterize).  Per
pixel it can only compare one particle depth, the nearest; the light itself
comes from the bake's renderer, which with Occlusion "Scene" has already
dropped every particle behind the meshes one by one, so where particles
straddle a mesh surface the pixel keeps exactly those in front.  With
Occlusion "None" the depth pass is the only test.
"""

from __future__ import annotations

import bpy

GROUP_NAME = "GPU Particles Compositing"
PREFIX = "GPU Particles: "
RENDER, LIGHT, DEPTH, DEPTH_CHANNEL, IN_FRONT, OVER = (
    PREFIX + name for name in ("Render Layers", "Light", "Depth", "Depth Channel", "In Front", "Light over Render"))
LIGHT_IMAGE, DEPTH_IMAGE = "GPU Particles Light", "GPU Particles Depth"


def layer_image(name: str, path: str):
    """The Image datablock the compositor reads a layer file through (created on first use)."""
    image = bpy.data.images.get(name)
    if image is None:
        image = bpy.data.images.new(name, 1, 1, alpha=True, float_buffer=True)
        image.source = "FILE"
    image.filepath = path
    image.colorspace_settings.name = "Non-Color"  # linear light and depth as written, never converted
    image.alpha_mode = "PREMUL"
    return image


def point_at(scene, light_path: str, depth_path: str) -> None:
    """Make the layer images read ``light_path`` and ``depth_path`` now (called for every frame rendered)."""
    for name, path in ((LIGHT_IMAGE, light_path), (DEPTH_IMAGE, depth_path)):
        layer_image(name, path).reload()


def _node(tree, name: str, kind: str, location):
    node = tree.nodes.get(name)
    if node is None:
        node = tree.nodes.new(kind)
        node.name = node.label = name
        node.location = location
    return node


def _group_output(tree):
    output = next((n for n in tree.nodes if n.bl_idname == "NodeGroupOutput"), None)
    if output is None:
        output = tree.nodes.new("NodeGroupOutput")
        output.location = (900, 0)
    if not any(item.item_type == "SOCKET" and item.in_out == "OUTPUT" for item in tree.interface.items_tree):
        tree.interface.new_socket("Image", in_out="OUTPUT", socket_type="NodeSocketColor")
    return output


def ensure_compositing(scene, repair: bool = False):
    """The scene's compositing tree with the particle nodes in it; returns the tree.

    A scene without a compositing tree gets one of its own; a scene that has one
    gets the particle nodes spliced in front of its Group Output (whatever fed
    the output becomes the "render" the particles are laid over).  A tree that
    has them already is left as the artist made it, unless ``repair`` (the Set
    Up Compositing button) adds what is missing and relinks them.
    """
    tree = scene.compositing_node_group
    if tree is not None and tree.nodes.get(OVER) is not None and not repair:
        return tree
    scene.view_layers[0].use_pass_z = True  # the render's depth decides what hides the particles
    scene.render.use_compositing = True
    if tree is None:
        tree = bpy.data.node_groups.get(GROUP_NAME) or bpy.data.node_groups.new(GROUP_NAME, "CompositorNodeTree")
        scene.compositing_node_group = tree
    output = _group_output(tree)
    over = tree.nodes.get(OVER)
    render = _node(tree, RENDER, "CompositorNodeRLayers", (0, 200))
    render.scene = scene
    light = _node(tree, LIGHT, "CompositorNodeImage", (0, -150))
    depth = _node(tree, DEPTH, "CompositorNodeImage", (0, -400))
    light.image = layer_image(LIGHT_IMAGE, light.image.filepath if light.image else "")
    depth.image = layer_image(DEPTH_IMAGE, depth.image.filepath if depth.image else "")
    channel = _node(tree, DEPTH_CHANNEL, "CompositorNodeSeparateColor", (250, -400))
    in_front = _node(tree, IN_FRONT, "ShaderNodeMath", (450, -250))
    in_front.operation = "LESS_THAN"
    if over is None:
        over = _node(tree, OVER, "CompositorNodeAlphaOver", (650, 0))
        fed = next((link.from_socket for link in tree.links if link.to_socket == output.inputs[0]), None)
        tree.links.new(fed or render.outputs["Image"], over.inputs["Background"])
        tree.links.new(over.outputs[0], output.inputs[0])
    over.inputs["Straight Alpha"].default_value = False  # the light is premultiplied
    links = tree.links
    links.new(light.outputs["Image"], over.inputs["Foreground"])
    links.new(depth.outputs["Image"], channel.inputs["Image"])
    links.new(channel.outputs["Red"], in_front.inputs[0])
    links.new(render.outputs["Depth"], in_front.inputs[1])
    links.new(in_front.outputs[0], over.inputs["Factor"])
    return tree
