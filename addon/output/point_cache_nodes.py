"""Add to Scene: a PointCloud object whose Geometry Nodes modifier plays a point cache with Blender's own nodes.

The node group reads the current frame's PLY (Scene Time > Value to String >
Join Strings > Import PLY), turns the vertices into points with their radius
and stores Blender's attribute names: ``velocity`` (Cycles' motion blur of
points), ``Color`` (what the emission material shows), ``id`` and
``rotation``.  Everything it needs is saved in the .blend, so the object plays
in a Blender without the add-on.  Its modifier inputs put a chosen object, or a
random pick from a collection, on every particle instead (Instance on Points,
scaled by the particle's radius, turned by its rotation).  A missing file is
Blender's own: the node warns and the frame is empty.
"""

from __future__ import annotations

from pathlib import Path

import bpy

from .export import emission_material

GROUP_NAME = "GPU Particles Point Cache"
MARKER = "gpu_particles_point_cache"  # a custom property on the node group: the add-on finds its objects by it
# point_cache.PLY_DTYPE's properties stored under Blender's names (velocity, Color, rotation, id), then removed
STORED_AS = ("vx", "vy", "vz", "color_r", "color_g", "color_b", "rx", "ry", "rz", "id_high", "id_low")


class _Builder:
    """Nodes of one tree, made and linked in a few words."""

    def __init__(self, tree):
        self.tree = tree
        self.x = 0

    def node(self, kind: str, inputs: dict | None = None, **properties):
        node = self.tree.nodes.new(kind)
        for name, value in properties.items():
            setattr(node, name, value)
        node.location = (self.x, 0)
        self.x += 200
        for name, value in (inputs or {}).items():
            socket = node.inputs[name] if isinstance(name, int) else _socket(node.inputs, name)
            if isinstance(value, bpy.types.NodeSocket):
                self.tree.links.new(value, socket)
            else:
                socket.default_value = value
        return node

    def attribute(self, name: str, data_type: str = "FLOAT"):
        return _socket(self.node("GeometryNodeInputNamedAttribute", {"Name": name}, data_type=data_type).outputs,
                       "Attribute")

    def store(self, geometry, name: str, data_type: str, value):
        return self.node("GeometryNodeStoreNamedAttribute", {"Geometry": geometry, "Name": name, "Value": value},
                         data_type=data_type, domain="POINT").outputs["Geometry"]

    def vector(self, names):
        return self.node("ShaderNodeCombineXYZ", dict(zip("XYZ", (self.attribute(n) for n in names)))).outputs[0]


def _socket(sockets, name: str):
    """The enabled socket called ``name`` (nodes keep one per data type, the others hidden)."""
    return next(socket for socket in sockets if socket.name == name and socket.enabled)


INPUTS = (  # (name, socket type, default, description): the modifier's inputs
    ("Files", "NodeSocketString", "", "The point cache's files up to the frame number ('//particles/points/frame_')"),
    ("Digits", "NodeSocketInt", 4, "Digits of the frame number in the file names"),
    ("Files End", "NodeSocketString", ".ply", "The point cache's file names after the frame number"),
    ("Instance", "NodeSocketBool", False, "Put the instance object, or a random child of the collection, on every "
                                          "particle instead of a sphere"),
    ("Instance Object", "NodeSocketObject", None, "Object put on the particles"),
    ("Instance Collection", "NodeSocketCollection", None, "Collection whose children are put on the particles, "
                                                          "one picked at random for each"),
    ("Instance Scale", "NodeSocketFloat", 1.0, "Instance size per unit of particle radius"),
)


def point_cache_group():
    """The node group (made once a file, reused by every cache object)."""
    group = bpy.data.node_groups.get(GROUP_NAME)
    if group is not None and group.get(MARKER):
        return group
    tree = bpy.data.node_groups.new(GROUP_NAME, "GeometryNodeTree")
    tree[MARKER] = 1
    for name, socket_type, default, description in INPUTS:
        item = tree.interface.new_socket(name, description=description, in_out="INPUT", socket_type=socket_type)
        if default is not None:
            item.default_value = default
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    _build(_Builder(tree), tree)
    return tree


def _build(b: _Builder, tree) -> None:
    group_in = b.node("NodeGroupInput").outputs
    frame = b.node("ShaderNodeMath", {0: b.node("GeometryNodeInputSceneTime").outputs["Frame"]}, operation="FLOOR")
    number = b.node("FunctionNodeValueToString", {"Value": frame.outputs[0], "Base": 10,
                                                  "Padding": group_in["Digits"]}, data_type="INT").outputs[0]
    join = b.node("GeometryNodeStringJoin", {"Delimiter": ""})
    for part in (group_in["Files End"], number, group_in["Files"]):  # a multi-input socket lists the last linked first
        tree.links.new(part, join.inputs["Strings"])
    mesh = b.node("GeometryNodeImportPLY", {"Path": join.outputs[0]}).outputs[0]
    points = b.node("GeometryNodeMeshToPoints", {"Mesh": mesh, "Radius": b.attribute("radius")}).outputs[0]
    points = b.store(points, "velocity", "FLOAT_VECTOR", b.vector(("vx", "vy", "vz")))
    color = b.node("FunctionNodeCombineColor", {"Red": b.attribute("color_r"), "Green": b.attribute("color_g"),
                                                "Blue": b.attribute("color_b"), "Alpha": 1.0}).outputs[0]
    points = b.store(points, "Color", "FLOAT_COLOR", color)
    ids = b.node("FunctionNodeIntegerMath", {0: b.attribute("id_high", "INT"), 1: 65536,
                                             2: b.attribute("id_low", "INT")}, operation="MULTIPLY_ADD")
    points = b.store(points, "id", "INT", ids.outputs[0])
    turn = b.vector(("rx", "ry", "rz"))
    axis = b.node("ShaderNodeVectorMath", {"Vector": turn}, operation="NORMALIZE").outputs["Vector"]
    angle = b.node("ShaderNodeVectorMath", {"Vector": turn}, operation="LENGTH").outputs["Value"]
    rotation = b.node("FunctionNodeAxisAngleToRotation", {"Axis": axis, "Angle": angle}).outputs[0]
    points = b.store(points, "rotation", "QUATERNION", rotation)
    for name in STORED_AS:
        points = b.node("GeometryNodeRemoveAttribute", {"Geometry": points, "Name": name}).outputs[0]
    points = b.node("GeometryNodeSetMaterial", {"Geometry": points, "Material": emission_material()}).outputs[0]
    _instances(b, tree, group_in, points)


def _instances(b: _Builder, tree, group_in, points) -> None:
    """Switch between the points and instances on them (the object and the collection's children, picked by id)."""
    shapes = b.node("GeometryNodeJoinGeometry")
    for shape in (b.node("GeometryNodeObjectInfo", {"Object": group_in["Instance Object"], "As Instance": True},
                         transform_space="ORIGINAL").outputs["Geometry"],
                  b.node("GeometryNodeCollectionInfo", {"Collection": group_in["Instance Collection"],
                                                        "Separate Children": True, "Reset Children": True},
                         transform_space="ORIGINAL").outputs[0]):
        tree.links.new(shape, shapes.inputs[0])
    pick = b.node("FunctionNodeRandomValue", {"Min": 0, "Max": 1 << 30, "ID": b.attribute("id", "INT"), "Seed": 0},
                  data_type="INT").outputs
    scale = b.node("ShaderNodeMath", {0: b.attribute("radius"), 1: group_in["Instance Scale"]},
                   operation="MULTIPLY").outputs[0]
    instanced = b.node("GeometryNodeInstanceOnPoints", {
        "Points": points, "Instance": shapes.outputs[0], "Pick Instance": True,
        "Instance Index": _socket(pick, "Value"), "Rotation": b.attribute("rotation", "QUATERNION"),
        "Scale": scale}).outputs[0]
    switch = b.node("GeometryNodeSwitch", {"Switch": group_in["Instance"], "False": points, "True": instanced},
                    input_type="GEOMETRY")
    tree.links.new(switch.outputs[0], b.node("NodeGroupOutput").inputs[0])


def add_cache_object(scene, folder: Path, before: str, digits: int, after: str, name: str = "GPU Particles Cache"):
    """A PointCloud object in ``scene`` playing the point cache ``folder / f"{before}{frame:0{digits}d}{after}"``
    (the path Blender-relative when the .blend is saved, so the file and its cache can move together)."""
    obj = bpy.data.objects.new(name, bpy.data.pointclouds.new(name))
    scene.collection.objects.link(obj)
    modifier = obj.modifiers.new("Point Cache", "NODES")
    modifier.node_group = point_cache_group()
    files = str(folder / before) + ("/" if not before else "")
    if bpy.data.filepath:
        try:
            files = bpy.path.relpath(files) + ("/" if not before else "")
        except ValueError:  # another drive
            pass
    set_input(modifier, "Files", files)
    set_input(modifier, "Digits", digits)
    set_input(modifier, "Files End", after)
    return obj


def modifier_input(modifier, name: str):
    """The modifier's value holder of the group input called ``name`` (``.value`` reads and sets it)."""
    item = next(item for item in modifier.node_group.interface.items_tree
                if item.item_type == "SOCKET" and item.in_out == "INPUT" and item.name == name)
    return getattr(modifier.properties.inputs, item.identifier)


def set_input(modifier, name: str, value) -> None:
    modifier_input(modifier, name).value = value
