"""The CSG point cloud's scene adapter: primitives on objects, scene settings, the cloud a scene builds.

The renderer, bake and viewport read the scene through this module; its panel
and export operator are ``ui/csg_panel.py``.

An object becomes a primitive when its "CSG Primitive" box is ticked: a sphere
of ``radius`` times its largest scale, or an axis-aligned box of half extents
``radius`` times its scale, at its world location.  Primitives apply in
ascending ``order`` (then by name).
"""

from __future__ import annotations

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty, IntProperty

from ..engine.pipeline import CloudFrame, follow_cloud
from ..engine.settings.settings import effect_settings
from ..engine.simulate import csg
from ..properties import register_factory


class GPU_PARTICLES_PG_csg_primitive(bpy.types.PropertyGroup):
    enabled: BoolProperty(name="CSG Primitive", description="Use this object as a primitive of the scene's CSG point cloud")
    shape: EnumProperty(name="Shape", items=[("SPHERE", "Sphere", ""), ("BOX", "Box", "Axis-aligned box")])
    mode: EnumProperty(name="Mode", items=[("ADD", "Add", "Union with the primitives before"),
                                           ("SUBTRACT", "Subtract", "Carve out of the primitives before")])
    order: IntProperty(name="Order", description="Primitives apply in ascending order")
    radius: FloatProperty(name="Radius", default=1.0, soft_min=0.001, unit="LENGTH",
                          description="Sphere radius or box half size, times the object's scale")
    color: FloatVectorProperty(name="Color", subtype="COLOR", size=3, default=(1.0, 1.0, 1.0), min=0.0, max=1.0)


class GPU_PARTICLES_PG_csg_scene(bpy.types.PropertyGroup):
    enabled: BoolProperty(name="CSG Point Cloud", default=True, description="Draw and bake the CSG point cloud")
    samples_per_primitive: IntProperty(name="Samples per Primitive", default=50_000, min=1, soft_max=10_000_000)
    capacity: IntProperty(name="Sample Capacity", default=4_000_000, min=1,
                          description="Most samples the cloud holds (GPU memory: 80 bytes each)")
    seed: IntProperty(name="Seed", min=0)
    noise_amount: FloatProperty(name="Noise", default=0.0, min=0.0, unit="LENGTH",
                                description="How far samples glitter along their normal")
    noise_speed: FloatProperty(name="Noise Speed", default=4.0, min=0.0, description="Radians per second")
    color_lit: FloatVectorProperty(name="Lit Color", subtype="COLOR", size=3, default=(1.0, 0.8, 0.5), min=0.0)
    color_shade: FloatVectorProperty(name="Shade Color", subtype="COLOR", size=3, default=(0.1, 0.2, 0.6), min=0.0)
    brightness: FloatProperty(name="Brightness", default=1.0, min=0.0)
    size: FloatProperty(name="Point Size", default=0.003, min=1e-7, unit="LENGTH")
    particle_type: EnumProperty(
        name="Draw As", default="POINT",
        items=[("POINT", "Points", "One-pixel atomic splat per sample"),
               ("SPRITE", "Sprites", "A soft round sprite of Point Size per sample, additively blended")],
    )


def is_primitive(obj) -> bool:
    return obj.gpu_particles_csg.enabled


def scene_primitives(scene, objects=None) -> list[csg.Primitive]:
    """The scene's primitives in stack order (not yet checked: see ``csg.check_primitives``); ``objects``:
    the scene's, or those of them that may be primitives (scene/index.py)."""
    primitives = []
    for obj in sorted(filter(is_primitive, scene.objects if objects is None else objects),
                      key=lambda o: (o.gpu_particles_csg.order, o.name)):
        p = obj.gpu_particles_csg
        scale = np.array(obj.matrix_world.to_scale())
        size = (p.radius * scale.max(),) * 3 if p.shape == "SPHERE" else tuple(p.radius * scale)
        primitives.append(csg.Primitive(p.shape, p.mode, tuple(obj.matrix_world.translation), tuple(map(float, size)),
                                        tuple(p.color), obj.name))
    return primitives


class SceneCloud:
    """A scene's CSG point cloud on the GPU, following its primitives frame by frame."""

    def __init__(self, scene, host):
        s = scene.gpu_particles_csg
        self.cloud = csg.PointCloud(host, s.capacity, s.samples_per_primitive, s.seed)
        look = effect_settings({"color_start": tuple(s.color_lit), "color_end": tuple(s.color_shade),
                                "emission_strength": s.brightness, "size": s.size,
                                "particle_type": s.particle_type})
        self.points = csg.CloudParticles(self.cloud, look)

    def follow(self, scene, seconds: float) -> list[str]:
        """Update to the scene's primitives (incrementally when appended); return warnings."""
        return follow_cloud(self.points, cloud_frame(scene, seconds))


def cloud_frame(scene, seconds: float, objects=None) -> CloudFrame:
    """What the cloud follows at ``seconds`` from the start frame (``objects``: as scene_primitives takes them)."""
    s = scene.gpu_particles_csg
    return CloudFrame(tuple(scene_primitives(scene, objects)), seconds, s.noise_amount, s.noise_speed)


def scene_has_cloud(scene, objects=None) -> bool:
    """The scene's cloud is on and has a primitive (asked every viewport draw: no primitives built);
    ``objects``: as scene_primitives takes them."""
    return scene.gpu_particles_csg.enabled and any(map(is_primitive, scene.objects if objects is None else objects))


def cloud_settings(scene, objects=None) -> tuple | None:
    """The scene cloud's settings (values, not Blender's live arrays), None without a cloud
    (:func:`scene_has_cloud`, ``objects`` as it takes them): the snapshot's part an edit of builds the cloud again."""
    if not scene_has_cloud(scene, objects):
        return None
    s = scene.gpu_particles_csg
    values = (getattr(s, p.identifier) for p in s.bl_rna.properties if p.identifier != "rna_type")
    return tuple(value if isinstance(value, (bool, int, float, str)) else tuple(value) for value in values)


def scene_cloud(scene, host) -> SceneCloud | None:
    """The scene's cloud, or None when it is switched off or has no primitives."""
    return SceneCloud(scene, host) if scene_has_cloud(scene) else None


def check_scene_cloud(scene, max_texture_size: int) -> list[str]:
    """Raise SettingsError (CSGError) for a cloud that cannot be built; return warnings."""
    s = scene.gpu_particles_csg
    limit = csg.sample_capacity_limit(max_texture_size)
    if s.capacity > limit:
        raise csg.CSGError(f"CSG sample capacity {s.capacity:,} is beyond this GPU's limit of {limit:,}")
    primitives = scene_primitives(scene)
    warnings = csg.check_primitives(primitives)
    csg.check_batch(len(primitives), s.samples_per_primitive, s.capacity)
    return warnings


def point_cloud_object(scene, name, pos, attr, radius):
    """A new Point Cloud object holding the samples with their normal and color attributes."""
    data = bpy.data.pointclouds.new(name)
    data.resize(len(pos))
    data.attributes["position"].data.foreach_set("vector", np.ascontiguousarray(pos[:, :3]).ravel())
    radii = data.attributes.get("radius") or data.attributes.new("radius", "FLOAT", "POINT")
    radii.data.foreach_set("value", np.full(len(pos), radius, np.float32))
    normal = data.attributes.new("normal", "FLOAT_VECTOR", "POINT")
    normal.data.foreach_set("vector", np.ascontiguousarray(attr[:, :3]).ravel())
    color = data.attributes.new("Color", "FLOAT_COLOR", "POINT")
    rgba = np.concatenate([csg.unpack_colors(attr), np.ones((len(attr), 1), np.float32)], axis=1)
    color.data.foreach_set("color", rgba.ravel())
    obj = bpy.data.objects.new(name, data)
    scene.collection.objects.link(obj)
    return obj


CLASSES = (GPU_PARTICLES_PG_csg_primitive, GPU_PARTICLES_PG_csg_scene)
register, unregister = register_factory(
    CLASSES, ((bpy.types.Object, "gpu_particles_csg", GPU_PARTICLES_PG_csg_primitive),
              (bpy.types.Scene, "gpu_particles_csg", GPU_PARTICLES_PG_csg_scene)))


def add_stage_primitives(scene, stage: dict) -> None:
    """Build a preset stage's "csg" section: scene settings and one empty per primitive."""
    settings = scene.gpu_particles_csg
    for name, value in stage.items():
        if name != "primitives":
            setattr(settings, name, value)
    for order, spec in enumerate(stage.get("primitives", [])):
        shape = spec.get("shape", "SPHERE")
        obj = bpy.data.objects.new(spec.get("name", f"CSG {order}"), None)
        obj.empty_display_type = "SPHERE" if shape == "SPHERE" else "CUBE"
        obj.location = spec.get("location", (0.0, 0.0, 0.0))
        obj.scale = spec.get("scale", (1.0, 1.0, 1.0))
        p = obj.gpu_particles_csg
        p.enabled, p.shape, p.mode, p.order = True, shape, spec.get("mode", "ADD"), order
        p.radius = spec.get("radius", 1.0)
        p.color = spec.get("color", (1.0, 1.0, 1.0))
        scene.collection.objects.link(obj)
    scene.view_layers[0].update()  # world matrices of the new objects
