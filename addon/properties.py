"""Blender properties, generated from the engine's field tables.

``Object.gpu_particles.effects`` holds the effects emitted from that object;
``Scene.gpu_particles`` holds render settings shared by every effect.
"""

from __future__ import annotations

import functools

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from . import families
from .engine.settings.costs import Edit, cost_of
from .engine.settings.settings import (
    EFFECT_FIELDS,
    RENAMED_FIELDS,
    RENDER_FIELDS,
    Field,
    clamped,
    effect_settings,
    migrated,
    render_settings,
)

_VECTOR_SUBTYPES = {"VELOCITY": "VELOCITY", "ACCELERATION": "ACCELERATION"}
_INT32_MAX = 2**31 - 1


def blender_property(field: Field, update=None):
    """The bpy property for one engine field: same default, bounds and description.  The bounds are soft: a value
    past them (typed, set by a script, read from an old file) is kept as given and clamped where it is read, saying
    so (``settings.clamped``), instead of Blender clamping it silently."""
    common = {"name": field.label, "description": field.description, "update": update}
    if field.kind == "int":
        return IntProperty(default=field.default, soft_min=int(field.min), soft_max=min(int(field.max), _INT32_MAX),
                           **common)
    if field.kind == "float":
        return FloatProperty(default=field.default, soft_min=field.min, soft_max=field.max, unit=field.unit, **common)
    if field.kind == "vec3":
        return FloatVectorProperty(default=field.default, soft_min=field.min, soft_max=field.max, size=3,
                                   subtype=_VECTOR_SUBTYPES.get(field.unit, "XYZ"), **common)
    if field.kind == "color":
        return FloatVectorProperty(default=field.default, soft_min=field.min, soft_max=min(field.max, 1.0), size=3,
                                   subtype="COLOR", **common)
    if field.kind == "string":
        return StringProperty(default=field.default, **common)
    if field.kind == "bool":
        return BoolProperty(default=field.default, **common)
    if field.kind == "enum":
        items = [(item, item.replace("_", " ").title(), "") for item in field.items]
        return EnumProperty(items=items, default=field.default, **common)
    raise ValueError(f"no Blender property for field kind {field.kind!r}")


# Called with no arguments whenever a setting changes (the viewport marks its simulation stale).
ON_CHANGE: list = []
# Called instead for settings whose edit is an Edit.RELOOK (engine/settings/costs.py): validated again and redrawn with the
# simulation kept.
ON_LOOK: list = []
# Called instead for settings whose edit is an Edit.REDRAW (glints, read at each draw): the viewport redraws.
ON_REDRAW: list = []


def _settings_changed(self, context):
    for hook in ON_CHANGE:
        hook()


def _look_changed(self, context):
    for hook in ON_LOOK:
        hook()


def _drawing_changed(self, context):
    for hook in ON_REDRAW:
        hook()


def _follows_scene_until_set(name: str, label: str, scene_frame: str, description: str) -> IntProperty:
    """A frame that reads the scene's ``scene_frame`` until it is set, then keeps its own value with the file
    (stored as the ID property ``_<name>``: unset is a state Blender's plain properties cannot have)."""
    stored = f"_{name}"

    def get(self):
        return self.get(stored, getattr(self.id_data, scene_frame))

    def set(self, value):
        self[stored] = value

    return IntProperty(name=label, get=get, set=set, update=_settings_changed, description=description)


def _annotations(fields) -> dict:
    return {field.name: blender_property(field, update=_update_of(field)) for field in fields}


_UPDATES = {Edit.REDRAW: _drawing_changed, Edit.RELOOK: _look_changed, Edit.RESIMULATE: _settings_changed}


def _update_of(field: Field):
    """What an edit of ``field`` sets off, by what it costs (costs.cost_of)."""
    return _UPDATES[cost_of(field)]


def _values(group, fields) -> dict:
    return {f.name: tuple(getattr(group, f.name)) if f.kind in ("vec3", "color") else getattr(group, f.name) for f in fields}


_SPAWN_FROM = next(field for field in EFFECT_FIELDS if field.name == "spawn_from")


def _set_spawn_from(self, value: str) -> None:
    families.set_spawn_from(self, value)
    _settings_changed(self, None)


def _spawn_object_changed(self, context) -> None:
    """Another object picked: its effect is picked next (the one of the object before is no longer the parent)."""
    if self.spawn_effect and families.parent_of(self) is None:
        self.spawn_effect = ""
    _settings_changed(self, context)


def _parent_effect_name(self) -> str:
    found = families.parent_of(self)
    return found[1].name if found is not None else ""


def _set_parent_effect(self, name: str) -> None:
    """The parent picked by its name among the effects of Spawn From's object (this object while it is empty)."""
    obj = self.spawn_object or self.id_data
    parent = next((effect for effect in obj.gpu_particles.effects if effect.name == name and effect != self), None)
    if parent is None:
        families.unlink(self)
    else:
        families.link(self, obj, parent)
    _settings_changed(self, None)


GPU_PARTICLES_PG_effect = type(
    "GPU_PARTICLES_PG_effect",
    (bpy.types.PropertyGroup,),
    {
        "__doc__": "One particle effect emitted from its object",
        "__annotations__": {
            "name": StringProperty(name="Name", default="Effect"),
            "enabled": BoolProperty(name="Enabled", default=True, description="Simulate, draw and bake this effect",
                                    update=_settings_changed),
            "ramp_texture": PointerProperty(type=bpy.types.Texture, name="Color Ramp",
                                            description="A texture whose color ramp gives the color over life, or over speed with Color by Speed (replaces start and end)"),
            **_annotations(EFFECT_FIELDS),
            # The parent of a spawned effect, by reference (families.py); spawn_from reads it as names.
            "spawn_from": StringProperty(
                name="Spawn From", description=_SPAWN_FROM.description,
                get=families.spawn_from_name, set=_set_spawn_from),
            "flock_target": PointerProperty(
                type=bpy.types.Object, name="Target", update=_settings_changed,
                description="Flocking: the object the birds seek, wherever it moves (empty: none)"),
            "uid": StringProperty(name="Effect ID", options={"HIDDEN"},
                                  description="This effect's own id, which children refer to (kept by renames)"),
            "spawn_object": PointerProperty(
                type=bpy.types.Object, name="Spawn From", poll=lambda self, obj: has_effects(obj),
                update=_spawn_object_changed,
                description="Object of the effect whose events give birth to this one's particles (empty: emitted "
                            "from this object); a copy of this object made with its parent's object spawns from "
                            "the copy"),
            "spawn_effect": StringProperty(name="Parent Effect ID", options={"HIDDEN"}, update=_settings_changed,
                                           description="The uid of the parent effect on Spawn From's object"),
            "spawn_effect_name": StringProperty(
                name="Effect", get=_parent_effect_name, set=_set_parent_effect,
                description="The effect of the Spawn From object whose events give birth to this one's particles"),
        },
    },
)


class GPU_PARTICLES_PG_object(bpy.types.PropertyGroup):
    effects: CollectionProperty(type=GPU_PARTICLES_PG_effect)
    active_index: IntProperty(name="Active Effect", min=0)

    @property
    def active_effect(self):
        if 0 <= self.active_index < len(self.effects):
            return self.effects[self.active_index]
        return None


class GPU_PARTICLES_PG_collider(bpy.types.PropertyGroup):
    """How GPU particles collide with an object that has Collision physics (the rest is Blender's own)."""

    resolution: IntProperty(
        name="SDF Resolution", default=0, min=0, max=256, update=_settings_changed,
        description="Voxels along the longest side of this mesh's signed distance field (32-256); 0: Auto, "
                    "from the object's size and the particles' size. Planes, spheres and boxes need none")


GPU_PARTICLES_PG_scene = type(
    "GPU_PARTICLES_PG_scene",
    (bpy.types.PropertyGroup,),
    {"__doc__": "Render settings shared by every effect of the scene", "__annotations__": {
        "show_overlay": BoolProperty(name="Show in Viewport", default=True, update=_settings_changed,
                                     description="Draw the scene's particles over every 3D viewport"),
        **_annotations(RENDER_FIELDS),
        "simulation_start": _follows_scene_until_set("simulation_start", "Simulation Start", "frame_start", (
            "Frame the simulation starts on (its preroll runs there), whatever range is rendered: a render of "
            "frames 29-30 simulates from here, as the whole shot did. Frames before it show the start")),
        "simulation_end": _follows_scene_until_set("simulation_end", "End", "frame_end", (
            "Last frame Bake Simulation fills the disk cache to (frames after it still simulate)")),
        "use_disk_cache": BoolProperty(name="Disk Cache", default=True, description=(
            "Keep the simulation on disk: scrubbing and reopening the file read it instead of simulating from "
            "the start; bakes fill it")),
        "cache_directory": StringProperty(name="Cache Folder", default="//gpu_particles_cache/", subtype="DIR_PATH",
                                          description="Folder of the simulation cache (// is the .blend's folder)"),
        "cache_interval": IntProperty(name="Checkpoint Every", default=10, min=1, max=1000, description=(
            "Frames between checkpoints of the full simulation state, in memory and on disk")),
        "cache_every_frame": BoolProperty(name="Every Frame", default=False, description=(
            "Write the state of every frame to the disk cache (scrubbing never re-simulates; more disk)")),
    }},
)


def simulation_range(scene) -> tuple[int, int]:
    """(start, end) of the scene's simulation (Simulation Cache panel), as Blender's point caches keep theirs.

    Unset, they are the scene's frame range; they are set (fixed at the scene's range then) when the scene's
    first effect is made and when a file whose effects predate them is loaded (:func:`fix_simulation_range`),
    and by editing them.  So ``blender -b shot.blend -s 29 -e 30 -a`` still simulates from the shot's start.
    """
    settings = scene.gpu_particles
    return settings.simulation_start, settings.simulation_end


def fix_simulation_range(scene) -> None:
    """Keep the simulation range where it reads now, the scene's while unset: a later change of the scene's
    range (a farm's chunk) no longer moves it."""
    settings = scene.gpu_particles
    for name in ("simulation_start", "simulation_end"):
        if f"_{name}" not in settings:
            settings[f"_{name}"] = getattr(settings, name)


@bpy.app.handlers.persistent
def _fix_loaded_ranges(*args) -> None:
    """A file saved before the simulation range existed: fixed at the scene's range as saved, before a
    command line's ``-s``/``-e`` changes the scene's."""
    for scene in bpy.data.scenes:
        if any(has_effects(obj) for obj in scene.objects):
            fix_simulation_range(scene)


@bpy.app.handlers.persistent
def _migrate_loaded_settings(*args) -> None:
    """Effects of a file saved before settings.RENAMED_FIELDS keep simulating as saved: an old setting's stored
    value (an ID property no panel shows any more) goes to its new name as ``settings.migrated`` says, and is
    removed.  Linked objects are read-only here: their files migrate when opened themselves."""
    for obj in bpy.data.objects:
        for effect in obj.gpu_particles.effects if obj.library is None else ():
            stored = {old: effect[old] for old in RENAMED_FIELDS if old in effect}
            if not stored:
                continue
            for name, value in migrated({"interaction": effect.interaction, **stored}).items():
                setattr(effect, name, value)
            for old in stored:
                del effect[old]


def effect_settings_of(effect):
    """Validated engine settings of an effect, numbers past their bounds clamped (``effect_clamps`` says which;
    raises SettingsError with the reason for what no clamp mends)."""
    return _validated(effect_settings, tuple(_values(effect, EFFECT_FIELDS).items()))[0]


def effect_clamps(effect) -> tuple[str, ...]:
    """What reading an effect clamps ("Spawn Count 0 raised to 1"): its stored values stay as given."""
    return _validated(effect_settings, tuple(_values(effect, EFFECT_FIELDS).items()))[1]


def named_clamps(obj, effect) -> list[str]:
    """``effect_clamps`` as the panel's neighbours, the bake and the command line name them:
    "Emitter/Crackle: Spawn Count 0 raised to 1"."""
    return [f"{obj.name}/{effect.name}: {clamp}" for clamp in effect_clamps(effect)]


def render_settings_of(scene):
    return _validated(render_settings, tuple(_values(scene.gpu_particles, RENDER_FIELDS).items()))[0]


def render_clamps(scene) -> tuple[str, ...]:
    return _validated(render_settings, tuple(_values(scene.gpu_particles, RENDER_FIELDS).items()))[1]


def scene_clamps(scene) -> list[str]:
    """``render_clamps`` named as ``named_clamps`` names an effect's: "scene 'Scene': Emax 0 raised to 1e-06"."""
    return [f"scene '{scene.name}': {clamp}" for clamp in render_clamps(scene)]


@functools.lru_cache(maxsize=256)
def _validated(build, items: tuple):
    """(settings, clamps): settings are frozen, so equal values give the one object built before: the viewport and
    the bake read every effect each frame, and validating every field again on each read would add up (errors
    are not cached)."""
    values, clamps = clamped(EFFECT_FIELDS if build is effect_settings else RENDER_FIELDS, dict(items))
    return build(values), clamps


def assign(group, settings) -> None:
    """Copy engine settings (a dataclass) onto a property group."""
    for name, value in vars(settings).items():
        setattr(group, name, value)


def has_effects(obj) -> bool:
    """Whether the object carries effects (enabled or not)."""
    return len(obj.gpu_particles.effects) > 0


def scene_effects(scene, objects=None):
    """(object, effect) for every enabled effect on an object of the scene (``objects``: the scene's, or
    those of them that may carry effects, in the scene's order: scene/index.py)."""
    return [(obj, effect) for obj in (scene.objects if objects is None else objects)
            for effect in obj.gpu_particles.effects if effect.enabled]


def register_factory(classes, pointers, handlers_of=()):
    """``register_classes_factory`` that also hangs property groups on Blender's types: ``pointers`` is
    ((owner type, attribute, group), ...), removed in reverse order before the classes go; ``handlers_of``:
    ((``bpy.app.handlers`` list, function), ...) added after them."""
    register_classes, unregister_classes = bpy.utils.register_classes_factory(classes)

    def register():
        register_classes()
        for owner, attribute, group in pointers:
            setattr(owner, attribute, PointerProperty(type=group))
        for handlers, function in handlers_of:
            handlers.append(function)

    def unregister():
        for handlers, function in handlers_of:
            while function in handlers:
                handlers.remove(function)
        for owner, attribute, _ in reversed(pointers):
            delattr(owner, attribute)
        unregister_classes()

    return register, unregister


CLASSES = (GPU_PARTICLES_PG_effect, GPU_PARTICLES_PG_object, GPU_PARTICLES_PG_collider, GPU_PARTICLES_PG_scene)
register, unregister = register_factory(CLASSES, ((bpy.types.Object, "gpu_particles", GPU_PARTICLES_PG_object),
                                                  (bpy.types.Object, "gpu_particles_collider",
                                                   GPU_PARTICLES_PG_collider),
                                                  (bpy.types.Scene, "gpu_particles", GPU_PARTICLES_PG_scene)),
                                        ((bpy.app.handlers.load_post, _fix_loaded_ranges),
                                         (bpy.app.handlers.load_post, _migrate_loaded_settings),
                                         (bpy.app.handlers.load_post, families.link_loaded)))
