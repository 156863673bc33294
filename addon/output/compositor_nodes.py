"""The compositor nodes that lay the particle layer over a render.

Blender 5's compositing tree is a node group (``scene.compositing_node_group``)
whose Group Output is the final image.  The add-on names its nodes
(``GPU Particles: ...``) so an artist sees them and can rewire or extend them;
it rebuilds only nodes that are missing and never touches the artist's other
nodes.  Every scene gets a tree of its own (a tree whose particle nodes read
another scene is copied, never re-pointed), and every view layer that renders
gets its own chain: its Render Layers node, its depth test.  The
rule a chain implements, per pixel::

    in_front = particle depth < render depth          (that view layer's own Z pass)
    shadowed = render * (1 - shadow)                   (the particles' shadow on the surfaces: layer depth's G)
    color    = shadowed * (1 - in_front * A) + in_front * RGB
    alpha    = render alpha + (1 - render alpha) * in_front * coverage
    coverage = min(1, max(R, G, B, A))                 (of the particle light)

the color is an Alpha Over of the premultiplied particle light
(``render_layer.py``) with the depth test as its factor; the alpha is what an
"over" of the result needs: where the film is transparent the glow becomes
premultiplied light with its own coverage (its brightest channel, or the
sprites' coverage), and over opaque pixels nothing changes.  The coverage is
computed here, in the compositor, rather than per pixel in Python.  The render's depth pass decides the
final occlusion because it is what the engine really drew (modifiers,
displacement, curves, volumes).  Cycles' Depth pass is the z-depth along the
camera axis like EEVEE's and Workbench's (checked: a plane facing the camera
gives one depth over the whole frame), so one comparison serves every engine.

**Every frame its own particles or none.**  The compositor reads the layer
from the passes of a helper scene (``layer_scene.py``) through one Render Layers
node (``LIGHT``): its Image is the light, its Depth the particle depth.  The
add-on hands the helper the layer of that very frame, scene and render in
``render_pre``; a frame without one (effect off, emitter gone, a failure) gets
the empty layer: no particle is in front of anything and none covers anything,
which makes the chain an exact pass-through (``render * 1 + 0``, alpha
unchanged), and the Light node's label says why.

**Today's image nodes are replaced.**  Until the helper scene, the layer came
through two generated images (``GPU Particles Light (<scene>)``, ``... Depth``)
read by Image nodes named ``LIGHT`` and ``DEPTH`` and a ``Depth Channel``: they
cost the compositor more than the render itself.  ``ensure_compositing`` (and a
file's load) puts the Render Layers node of the helper in their place, linked
wherever they fed.

**The previous version's nodes are replaced.**  It made one chain of
unsuffixed nodes (``GPU Particles: Render Layers``, ``...: In Front``,
``...: Light over Render``) in one tree shared by every scene
(``GPU Particles Compositing``) and read the layer from image files it pointed
at each frame's EXR: opened today, those nodes kept reading the last file
written, another frame's particles.  ``ensure_compositing`` (and a file's load,
:func:`replace_previous_version`) puts today's chain where the old one was,
keeping the artist's links around it, and removes the old file-backed images.
"""

from __future__ import annotations

import re

import bpy

from . import layer_scene

GROUP_NAME = "GPU Particles Compositing"
PREFIX = "GPU Particles: "
LIGHT, LIGHT_CHANNELS, BRIGHTEST_RG, BRIGHTEST_RGB, GLOW_COVERAGE = (
    PREFIX + name for name in ("Light", "Light Channels", "Brightest RG", "Brightest RGB", "Glow Coverage"))
CHAIN_PARTS = ("Render Layers", "In Front", "Light over Render", "Render Alpha", "Uncovered", "Coverage", "Alpha",
               "Set Alpha", "Shadow")
EMPTY_LABEL = PREFIX + "no layer until the add-on renders a frame's own"
PREVIOUS_CHAIN = tuple(PREFIX + part for part in ("Render Layers", "In Front", "Light over Render"))
PREVIOUS_IMAGES = (("GPU Particles Light", "light"), ("GPU Particles Depth", "depth"))  # pointed at <kind>_####.exr
IMAGE_ROUTE = (LIGHT, PREFIX + "Depth", PREFIX + "Depth Channel")  # the layer as images, before the helper scene
IMAGE_ROUTE_IMAGES = re.compile(r"GPU Particles (Light|Depth) \(.*\)$")  # their generated images, one pair a scene


def chain_node(part: str, view_layer: str) -> str:
    """The name of a view layer's node ``part`` (one of CHAIN_PARTS)."""
    return f"{PREFIX}{part} ({view_layer})"


def rendered_layers(scene) -> list:
    """The view layers a render of ``scene`` renders."""
    return [layer for layer in scene.view_layers if layer.use]


def has_nodes(scene) -> bool:
    tree = scene.compositing_node_group
    return tree is not None and tree.nodes.get(LIGHT) is not None


def helper_of(scene):
    """The helper scene the scene's Light node reads (None when it has none, or it was deleted)."""
    node = scene.compositing_node_group.nodes.get(LIGHT) if has_nodes(scene) else None
    return node.scene if node is not None and node.bl_idname == "CompositorNodeRLayers" else None


def _label(scene, label: str) -> None:
    """The Light node's label (Blender keeps 63 bytes of it; the panel has the whole story)."""
    scene.compositing_node_group.nodes[LIGHT].label = label.encode()[:63].decode(errors="ignore")


def show_layer(scene, frame: int, passes: dict, label: str) -> None:
    """Hand ``frame``'s layer (``render_layer.ParticleLayer.layer``: pixels by pass name) to the helper scene
    the scene's nodes read."""
    helper = helper_of(scene)
    if helper is None:
        raise RuntimeError("the compositor's Light node reads no scene; press Set Up Compositing")
    layer_scene.hand_over(helper.name, frame, passes)
    _label(scene, label)


def empty_layer(scene, label: str | None = None) -> None:
    """No particles in what the scene's render composites next; ``label`` says why (kept when None)."""
    helper = helper_of(scene)
    if helper is not None:
        layer_scene.withdraw(helper.name)
    if label is not None and has_nodes(scene):
        _label(scene, label)


def _node(tree, name: str, kind: str, location):
    node = tree.nodes.get(name)
    if node is None:
        node = tree.nodes.new(kind)
        node.name = node.label = name
        node.location = location
    return node


def _math(tree, name: str, operation: str, location):
    node = _node(tree, name, "ShaderNodeMath", location)
    node.operation = operation
    return node


def _group_output(tree):
    output = next((n for n in tree.nodes if n.bl_idname == "NodeGroupOutput"), None)
    if output is None:
        output = tree.nodes.new("NodeGroupOutput")
        output.location = (1800, 0)
    if not any(item.item_type == "SOCKET" and item.in_out == "OUTPUT" for item in tree.interface.items_tree):
        tree.interface.new_socket("Image", in_out="OUTPUT", socket_type="NodeSocketColor")
    return output


def _own_tree(scene):
    """The scene's compositing tree, made or copied so that its particle nodes read this scene only (the
    previous version's tree, shared by name, gets the scene's name)."""
    tree = scene.compositing_node_group
    if tree is None:
        tree = bpy.data.node_groups.new(f"{GROUP_NAME} ({scene.name})", "CompositorNodeTree")
        scene.compositing_node_group = tree
        return tree
    chains = [node for node in tree.nodes
              if node.bl_idname == "CompositorNodeRLayers" and node.name.startswith(PREFIX + "Render Layers")]
    others = [node.scene for node in chains if node.scene != scene]
    if others:  # a Full Copy of the scene, or a tree picked from another scene: copied, never re-pointed
        tree = tree.copy()
        scene.compositing_node_group = tree
        for node in tree.nodes:
            if node.bl_idname == "CompositorNodeRLayers" and node.name.startswith(PREFIX):
                node.scene = scene if node.name != LIGHT else layer_scene.ensure_helper(scene)
    if others or tree.name == GROUP_NAME:
        tree.name = f"{GROUP_NAME} ({scene.name})"
    return tree


def _glow_coverage(tree, light):
    """The light's coverage: its brightest channel or its alpha (the sprites'), at most 1."""
    channels = _node(tree, LIGHT_CHANNELS, "CompositorNodeSeparateColor", (250, -150))
    brightest_rg = _math(tree, BRIGHTEST_RG, "MAXIMUM", (400, -100))
    brightest_rgb = _math(tree, BRIGHTEST_RGB, "MAXIMUM", (400, -250))
    coverage = _math(tree, GLOW_COVERAGE, "MAXIMUM", (400, -400))
    coverage.use_clamp = True
    links = tree.links
    links.new(light.outputs["Image"], channels.inputs["Image"])
    links.new(channels.outputs["Red"], brightest_rg.inputs[0])
    links.new(channels.outputs["Green"], brightest_rg.inputs[1])
    links.new(brightest_rg.outputs[0], brightest_rgb.inputs[0])
    links.new(channels.outputs["Blue"], brightest_rgb.inputs[1])
    links.new(brightest_rgb.outputs[0], coverage.inputs[0])
    links.new(channels.outputs["Alpha"], coverage.inputs[1])
    return coverage


def _chain(tree, scene, view_layer, row: int, light, glow, feeds: list, repair: bool) -> None:
    """One view layer's nodes (kept as the artist left them unless missing or ``repair``); made, they lay the
    particles over what fed ``feeds`` (the inputs their result then feeds) or else over their own render."""
    name = view_layer.name
    if tree.nodes.get(chain_node("Set Alpha", name)) is not None and not repair:
        _shadow(tree, name, light)  # a chain made before the shadow gets it, the artist's links kept
        return
    y = row * -700 + 400
    render = _node(tree, chain_node("Render Layers", name), "CompositorNodeRLayers", (0, y + 300))
    render.scene, render.layer = scene, name
    set_alpha = tree.nodes.get(chain_node("Set Alpha", name))
    if set_alpha is None:
        set_alpha = _node(tree, chain_node("Set Alpha", name), "CompositorNodeSetAlpha", (1200, y))
        fed = feeds[0].links if feeds else ()
        background = fed[0].from_socket if fed else render.outputs["Image"]
        for socket in feeds:
            tree.links.new(set_alpha.outputs[0], socket)
    else:
        over = tree.nodes.get(chain_node("Light over Render", name))
        background = (over_background(over) if over is not None else None) or render.outputs["Image"]
    set_alpha.inputs["Type"].default_value = "Replace Alpha"  # the color is premultiplied already
    in_front = _math(tree, chain_node("In Front", name), "LESS_THAN", (600, y - 200))
    over = _node(tree, chain_node("Light over Render", name), "CompositorNodeAlphaOver", (800, y))
    over.inputs["Straight Alpha"].default_value = False  # the light is premultiplied
    render_alpha = _node(tree, chain_node("Render Alpha", name), "CompositorNodeSeparateColor", (600, y - 450))
    uncovered = _math(tree, chain_node("Uncovered", name), "SUBTRACT", (800, y - 450))
    uncovered.inputs[0].default_value = 1.0
    coverage = _math(tree, chain_node("Coverage", name), "MULTIPLY", (800, y - 250))
    alpha = _math(tree, chain_node("Alpha", name), "MULTIPLY_ADD", (1000, y - 300))
    links = tree.links
    links.new(light.outputs["Depth"], in_front.inputs[0])
    links.new(render.outputs["Depth"], in_front.inputs[1])
    links.new(background, over.inputs["Background"])
    links.new(light.outputs["Image"], over.inputs["Foreground"])
    links.new(in_front.outputs[0], over.inputs["Factor"])
    links.new(background, render_alpha.inputs["Image"])
    links.new(render_alpha.outputs["Alpha"], uncovered.inputs[1])
    links.new(in_front.outputs[0], coverage.inputs[0])
    links.new(glow.outputs[0], coverage.inputs[1])
    links.new(coverage.outputs[0], alpha.inputs[0])
    links.new(uncovered.outputs[0], alpha.inputs[1])
    links.new(render_alpha.outputs["Alpha"], alpha.inputs[2])
    links.new(over.outputs[0], set_alpha.inputs["Image"])
    links.new(alpha.outputs[0], set_alpha.inputs["Alpha"])
    _shadow(tree, name, light)


def _shadow(tree, name: str, light) -> None:
    """The particles' shadow on the render's surfaces (the helper's Particle Shadow pass: the darkening), spliced between the
    render and the view layer's Light over Render: the color times 1 - darkening (Set Alpha replaces the alpha,
    which the render's own decides).  A blank layer darkens nothing."""
    over = tree.nodes.get(chain_node("Light over Render", name))
    if over is None:
        return
    shadow = tree.nodes.get(chain_node("Shadow", name))
    if shadow is None:
        x, y = over.location
        shadow = _node(tree, chain_node("Shadow", name), "ShaderNodeMix", (x - 200, y + 200))
        shadow.data_type, shadow.blend_type = "RGBA", "MIX"
        _socket(shadow.inputs, "B_Color").default_value = (0.0, 0.0, 0.0, 1.0)
    links = over.inputs["Background"].links
    if not links or links[0].from_node != shadow:
        if links:
            tree.links.new(links[0].from_socket, _socket(shadow.inputs, "A_Color"))
        tree.links.new(_socket(shadow.outputs, "Result_Color"), over.inputs["Background"])
    tree.links.new(light.outputs[layer_scene.SHADOW_PASS.name], _socket(shadow.inputs, "Factor_Float"))


def over_background(over):
    """The socket a chain's Light over Render lays the particles over (through its Shadow node), or None."""
    links = over.inputs["Background"].links
    if not links:
        return None
    socket = links[0].from_socket
    if socket.node.name.startswith(PREFIX + "Shadow"):  # the render is what feeds the shadow
        fed = _socket(socket.node.inputs, "A_Color").links
        return fed[0].from_socket if fed else None
    return socket


def _socket(sockets, identifier: str):
    """A socket by identifier (the Mix node names its float, vector and color sockets alike)."""
    return next(socket for socket in sockets if socket.identifier == identifier)


def _remove_previous_chain(tree):
    """Remove the previous version's chain, bridging it (what fed its background feeds what it fed); returns
    None when there was none, else the inputs it fed and the links its Render Layers made to nodes it leaves
    (output name, input), for today's Render Layers of that view layer (or of the first)."""
    nodes = [tree.nodes.get(name) for name in PREVIOUS_CHAIN]
    if not any(nodes):
        return None
    render, _, over = nodes
    feeds = [link.to_socket for link in over.outputs[0].links] if over is not None else []
    render_links = [(link.from_socket.name, link.to_socket) for output in (render.outputs if render else ())
                    for link in output.links if link.to_node not in nodes]
    for link in over.inputs["Background"].links if over is not None else ():
        if link.from_node == render:
            render_links += [(link.from_socket.name, socket) for socket in feeds]
        elif link.from_node not in nodes:
            for socket in feeds:
                tree.links.new(link.from_socket, socket)
    layer = render.layer if render is not None else None
    for node in nodes:
        if node is not None:
            tree.nodes.remove(node)
    return feeds, layer, render_links


def _relink_previous_render(tree, layers, layer: str | None, render_links) -> None:
    """The previous chain's Render Layers links, now from today's (only into inputs nothing else feeds)."""
    render = tree.nodes.get(chain_node("Render Layers", layer)) if layer else None
    render = render or (tree.nodes.get(chain_node("Render Layers", layers[0].name)) if layers else None)
    for output, socket in render_links if render is not None else ():
        if not socket.is_linked:
            tree.links.new(render.outputs[output], socket)


def _previous_image(image) -> bool:
    """A layer image of the previous version: its name, a file, pointed at one of its layer files (or none)."""
    kinds = dict(PREVIOUS_IMAGES)
    return (image is not None and image.name in kinds and image.source == "FILE"
            and re.search(rf"(^|[\\/]){kinds[image.name]}_\d+\.exr$|^$", image.filepath) is not None)


def _remove_previous_images() -> None:
    """The previous version's layer images (only the file-backed ones it made), wherever they are used."""
    for name, _ in PREVIOUS_IMAGES:
        image = bpy.data.images.get(name)
        if _previous_image(image):
            bpy.data.images.remove(image)


def _set_up_by_previous(tree) -> bool:
    """A tree of this file (not a library's, which cannot change) with an earlier version's nodes."""
    return tree is not None and tree.library is None and (
        any(name in tree.nodes for name in PREVIOUS_CHAIN) or _image_route(tree) is not None or any(
            _previous_image(node.image) for node in tree.nodes if node.bl_idname == "CompositorNodeImage"))


def _image_route(tree):
    """The Light node of a tree that reads the layer from images (every version before the helper scene)."""
    node = tree.nodes.get(LIGHT)
    return node if node is not None and node.bl_idname == "CompositorNodeImage" else None


def ensure_light(scene) -> None:
    """The scene's Light node reads a helper scene of ours (made again when deleted), its camera the scene's;
    the image route's nodes are left to the setup (``ensure_compositing``) and the load."""
    if _image_route(scene.compositing_node_group) is None:
        _light_node(scene.compositing_node_group, scene)


def _light_node(tree, scene):
    """The Render Layers node of the scene's helper, in place of the image route's nodes (linked wherever they
    fed: their light from its Image, their depth channel from its Depth)."""
    feeds = {"Image": [], "Depth": []}
    if _image_route(tree) is not None:
        old = [tree.nodes.get(name) for name in IMAGE_ROUTE]
        light, _, channel = old
        feeds["Image"] = [link.to_socket for link in light.outputs["Image"].links]
        feeds["Depth"] = [link.to_socket for link in channel.outputs["Red"].links] if channel is not None else []
        for node in old:
            if node is not None:
                tree.nodes.remove(node)
        for image in [image for image in bpy.data.images if IMAGE_ROUTE_IMAGES.match(image.name)
                      and image.source == "GENERATED" and image.users == 0]:
            bpy.data.images.remove(image)
    light = _node(tree, LIGHT, "CompositorNodeRLayers", (0, -300))
    helper = layer_scene.ensure_helper(scene, light.scene)
    if light.scene != helper:
        light.scene = helper
    light.layer = helper.view_layers[0].name
    for output, sockets in feeds.items():
        for socket in sockets:
            tree.links.new(light.outputs[output], socket)
    return light


def replace_previous_version() -> None:
    """After a load: every scene whose tree the previous version set up (or shares one that it did) gets
    today's nodes in place of its, also where no render would set them up (effect off: the old image nodes
    would still read a file)."""
    previous = [scene for scene in bpy.data.scenes
                if scene.library is None and _set_up_by_previous(scene.compositing_node_group)]
    for scene in previous:  # all found first: the first scene's setup changes a tree that others share
        ensure_compositing(scene)
    _remove_previous_images()


def ensure_compositing(scene, repair: bool = False):
    """The scene's compositing tree with the particle nodes in it; returns the tree.

    A scene without a compositing tree gets one of its own; a scene that has one
    gets the chain of its first rendered view layer spliced in front of its Group
    Output (whatever fed the output becomes the "render" the particles are laid
    over); every other rendered view layer gets a chain over its own Render Layers,
    for the artist to wire where that layer goes.  Chains that exist are left as
    the artist made them, unless ``repair`` (the Set Up Compositing button) adds
    what is missing and relinks them.  The previous version's chain is replaced
    by the first layer's, where it was; its layer images are removed; so are
    the Image nodes of the layer before the helper scene (:func:`_light_node`).
    """
    tree = _own_tree(scene)
    layers = rendered_layers(scene)
    for view_layer in layers:
        view_layer.use_pass_z = True  # each layer's own depth decides what hides the particles
    output = _group_output(tree)
    previous = _remove_previous_chain(tree)
    light = _light_node(tree, scene)
    glow = _glow_coverage(tree, light)
    first_feeds = previous[0] if previous else [output.inputs[0]]
    for row, view_layer in enumerate(layers):
        _chain(tree, scene, view_layer, row, light, glow, first_feeds if row == 0 else [], repair)
    if previous:
        _relink_previous_render(tree, layers, *previous[1:])
    _remove_previous_images()
    if light.label == LIGHT:
        light.label = EMPTY_LABEL
    return tree
