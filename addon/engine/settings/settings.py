"""Effect settings: one table of fields drives validation, presets and the UI.

The add-on builds its ``PropertyGroup`` from ``EFFECT_FIELDS`` (same bounds,
defaults and descriptions), so the panel, presets and the command line can
never disagree about what a setting means or which values are allowed.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..primitives.sort_schedule import MAX_SORT_PASSES
from ..seam.kernels import hash_once

# Particle slots are texels of 2D state images; this caps what any GPU gets
# (2^28 particles = 8 GiB of full-precision state) before its texture limit.
HARD_MAX_PARTICLES = 1 << 28
# Particles one event of a parent particle gives birth to, at most (sub-emitters: events.py).
MAX_SPAWN_COUNT = 4096


# What an edit of a setting touches (``Field.affects``); costs.py says what each costs.
AFFECTS = (
    "simulation",  # where particles are born, how they move, die or spawn: their history
    "look",  # how an effect's particles are drawn, never their history
    "render",  # how the scene's particles are composited (compositor, occlusion, shadows' resolution)
    "glints",  # the glints laid over the composited frame, read at every draw
)


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # 'int', 'float', 'vec3', 'color', 'enum', 'string', 'bool'
    default: Any
    min: float | None = None
    max: float | None = None
    description: str = ""
    items: tuple[str, ...] = ()
    unit: str = "NONE"  # Blender property unit: 'NONE', 'LENGTH', 'TIME_ABSOLUTE', 'VELOCITY', 'ACCELERATION'
    affects: str = "simulation"  # one of AFFECTS

    def __post_init__(self):
        if self.affects not in AFFECTS:
            raise ValueError(f"field {self.name}: affects must be one of {', '.join(AFFECTS)}, not {self.affects!r}")

    @property
    def label(self) -> str:
        """The name the panel shows (and messages use): ``spawn_count`` is Spawn Count."""
        return self.name.replace("_", " ").title()


EFFECT_FIELDS: tuple[Field, ...] = (
    Field("count", "int", 200_000, 1, HARD_MAX_PARTICLES, "Number of particle slots; every slot respawns when it dies"),
    Field("emission", "enum", "CONTINUOUS", items=("CONTINUOUS", "BURST"),
          description="Continuous: slots are born evenly over one lifetime (or at a set rate) and respawn; Burst: all are born together, once or every burst interval"),
    Field("rate", "float", 0.0, 0.0, 1e10,
          "Continuous: particles born per second (0: every slot is reborn as soon as it dies)"),
    Field("burst_interval", "float", 0.0, 0.0, 1e4, "Burst emission: seconds between repeated bursts (0: one burst)", unit="TIME_ABSOLUTE"),
    Field("emitter_shape", "enum", "SPHERE", items=("POINT", "SPHERE", "BOX", "MESH"),
          description="Where particles are born, in the emitter object's space; Mesh: on the evaluated mesh's faces, by area"),
    Field("emitter_radius", "float", 0.1, 0.0, 1e4, "Radius of the sphere volume emitter, half size of the box", unit="LENGTH"),
    Field("emitter_scale", "vec3", (1.0, 1.0, 1.0), 0.0, 1e4,
          "Scale of the sphere or box along the emitter's X, Y and Z, leaving the object's own scale and the "
          "velocities alone (a flat box emits a slab, a long thin one a bar)"),
    Field("lifetime", "float", 2.0, 1e-3, 1e4, "Longest lifetime of a particle in seconds", unit="TIME_ABSOLUTE"),
    Field("lifetime_random", "float", 0.5, 0.0, 0.999, "Fraction by which lifetimes are randomly shortened"),
    Field("velocity", "vec3", (0.0, 0.0, 4.0), -1e5, 1e5, "Initial velocity in the emitter's space", unit="VELOCITY"),
    Field("velocity_random", "float", 1.0, 0.0, 1e5, "Largest random speed added in a random direction", unit="VELOCITY"),
    Field("normal_velocity", "float", 0.0, -1e5, 1e5, "Speed along the surface normal (outward from the center for volumes)", unit="VELOCITY"),
    Field("cone_angle", "float", 0.0, 0.0, math.pi, "Initial velocity direction spread randomly within this cone", unit="ROTATION"),
    Field("inherit_velocity", "float", 0.0, 0.0, 10.0, "Fraction of the moving emitter's velocity passed on at birth"),
    Field("spawn_from", "string", "",
          description="The effect whose events give birth to this one's particles, which then start from the "
                      "event rather than this object (in a preset its label, here 'Object/Effect' or an effect name; "
                      "in Blender a reference that follows renames and copies); empty: emitted from this object. "
                      "Spawned slots never respawn, and step with their parent at its substeps"),
    Field("spawn_on", "enum", "DEATH", items=("DEATH", "COLLISION", "RATE"),
          description="Spawned: the parent's event that gives birth: a parent particle's death, its impact on a "
                      "collider, or a steady rate over its life"),
    Field("spawn_count", "int", 10, 1, MAX_SPAWN_COUNT, "Spawned: particles born per event"),
    Field("spawn_count_random", "float", 0.0, 0.0, 1.0, "Spawned: fraction by which each event's count is randomly lowered"),
    Field("spawn_rate", "float", 10.0, 0.0, 1e4, "Spawned on Rate: events per second of each parent particle's life"),
    Field("spawn_impact_speed", "float", 0.5, 0.0, 1e5,
          "Spawned on Collision: slowest impact (speed into the surface) that spawns", unit="VELOCITY"),
    Field("spawn_velocity", "float", 0.0, 0.0, 10.0, "Spawned: fraction of the parent particle's velocity inherited"),
    Field("spawn_cone", "float", 0.0, 0.0, math.pi, "Spawned: the inherited velocity's direction spread within this cone",
          unit="ROTATION"),
    Field("spawn_offset", "vec3", (0.0, 0.0, 0.0), -1e4, 1e4, "Spawned: world offset of the births from the event",
          unit="LENGTH"),
    Field("spawn_inherit_color", "float", 0.0, 0.0, 1.0,
          "Spawned: fraction of the parent particle's color at the event mixed into this one's color over life"),
    Field("gravity", "vec3", (0.0, 0.0, -9.81), -1e5, 1e5, "Constant acceleration", unit="ACCELERATION"),
    Field("drag", "float", 0.1, 0.0, 1e3, "Linear air drag per second"),
    Field("turbulence_strength", "float", 0.0, 0.0, 1e5, "Acceleration of the curl-noise turbulence (0: off)", unit="ACCELERATION"),
    Field("turbulence_scale", "float", 2.0, 1e-4, 1e5, "World size of one tile of the turbulence volume", unit="LENGTH"),
    Field("turbulence_resolution", "int", 32, 4, 256, "Voxels per side of the turbulence volume (a 3D texture)"),
    Field("turbulence_speed", "vec3", (0.0, 0.0, 0.0), -1e5, 1e5, "Velocity of the turbulence pattern through the world", unit="VELOCITY"),
    Field("substeps", "int", 1, 1, 64, "Simulation steps per frame"),
    Field("respawn_skip", "float", 0.0, 0.0, 1e4, "Continuous emission: seconds a dead particle stays hidden before it respawns", unit="TIME_ABSOLUTE"),
    Field("interaction", "enum", "NONE", items=("NONE", "GRANULAR", "FLUID", "FLOCKING"),
          description="How this effect's particles act on each other (each effect on its own particles only): "
                      "None: each moves alone; Granular: grains of Size that pile up; Fluid: a position-based "
                      "liquid; Flocking: boids. Needs the Full state layout"),
    Field("interaction_radius", "float", 0.05, 0.0, 1e4,
          "Interactions: how far a particle reaches its neighbours (the edge of the neighbour grid's cells); "
          "Granular: at least twice the Size, where grains touch", unit="LENGTH"),
    Field("friction", "float", 0.5, 0.0, 1.0,
          "Granular: friction between grains (static; sliding grains 80% of it): higher piles steeper"),
    Field("cohesion", "float", 0.0, 0.0, 1.0,
          "Granular: how strongly grains that touch or nearly touch hold together (0: dry sand, 1: damp clumps); "
          "Fluid: how strongly sparse fluid pulls together (surface tension: drops and sheets)"),
    Field("iterations", "int", 4, 1, 64, "Granular: contact solver iterations per substep (more: stiffer piles); "
          "Fluid: solver iterations per substep (more: stiffer, less compressible)"),
    Field("fluid_viscosity", "float", 0.05, 0.0, 1.0, "Fluid: how much each particle takes its neighbours' velocity (XSPH; 0: water, 0.5: honey)"),
    Field("fluid_vorticity", "float", 0.0, 0.0, 10.0, "Fluid: vorticity confinement, keeps swirls alive that the solver damps"),
    Field("fluid_tension", "float", 0.01, 0.0, 1.0, "Fluid: pushes close particles apart so they do not clump (s_corr); higher: finer spray"),
    Field("flock_view_angle", "float", 1.5 * math.pi, 0.0, 2 * math.pi, "Flocking: the angle a bird sees its neighbours in, around its heading", unit="ROTATION"),
    Field("flock_separation", "float", 1.5, 0.0, 100.0, "Flocking: steering away from neighbours, harder the closer"),
    Field("flock_alignment", "float", 1.0, 0.0, 100.0, "Flocking: steering toward the neighbours' mean heading"),
    Field("flock_cohesion", "float", 1.0, 0.0, 100.0, "Flocking: steering toward the neighbours' centre"),
    Field("flock_seek", "float", 0.5, 0.0, 100.0, "Flocking: steering toward the Target object (none set: no seeking)"),
    Field("flock_avoid", "float", 2.0, 0.0, 100.0, "Flocking: steering away from colliders nearer than Avoid Distance"),
    Field("flock_avoid_distance", "float", 0.5, 0.0, 1e4, "Flocking: how near a collider is before birds steer away", unit="LENGTH"),
    Field("flock_max_speed", "float", 5.0, 0.0, 1e5, "Flocking: the fastest a bird flies", unit="VELOCITY"),
    Field("flock_max_force", "float", 10.0, 0.0, 1e6, "Flocking: the most a bird's steering changes its velocity per second", unit="ACCELERATION"),
    Field("state_layout", "enum", "FULL", items=("FULL", "COMPACT"),
          description="Full: 32 bytes per particle in float32; Compact: 16 bytes in half floats around the emitter (half the memory, less precise far from it)"),
    Field("color_start", "color", (1.0, 0.6, 0.2), 0.0, 1e4, "Color at birth (linear, HDR); by Speed: when still", affects="look"),
    Field("color_end", "color", (0.8, 0.1, 0.02), 0.0, 1e4,
          "Color at death (linear, HDR); by Speed: at Color Speed and faster", affects="look"),
    Field("color_by", "enum", "AGE", items=("AGE", "SPEED"),
          description="What the color (start to end, or the color ramp; Lit: the albedo too) follows: Age: birth "
                      "to death; Speed: still to Color Speed, so fast spray stands out from a slow body",
          affects="look"),
    Field("color_speed", "float", 5.0, 1e-4, 1e5, "Color by Speed: the speed that has the end color",
          unit="VELOCITY", affects="look"),
    Field("emission_strength", "float", 1.0, 0.0, 1e6, "Brightness multiplier of the particle color", affects="look"),
    Field("size", "float", 0.005, 1e-7, 1e3, "Particle radius in world units; below one pixel particles get darker", unit="LENGTH"),
    Field("size_end", "float", 1.0, 0.0, 1e3, "Size at death as a fraction of the size at birth (linear over life)", affects="look"),
    Field("color_random", "float", 0.0, 0.0, 1.0, "Fraction by which each particle's brightness is randomly lowered", affects="look"),
    Field("size_random", "float", 0.0, 0.0, 1.0, "Fraction by which each particle's size is randomly lowered", affects="look"),
    Field("particle_type", "enum", "POINT", items=("POINT", "SPRITE", "STRETCHED"),
          description="Point: one pixel, splatted with atomics; Sprite: a round camera-facing quad; "
                      "Stretched: a quad stretched along the velocity", affects="look"),
    Field("stretch", "float", 0.05, 0.0, 1e2, "Seconds of motion a stretched quad spans behind the particle",
          unit="TIME_ABSOLUTE", affects="look"),
    Field("sprite_image", "string", "",
          description="Sprite and Stretched: a Blender image (its name) or an image file (a path; a preset's is "
                      "relative to presets/) giving each sprite its color and alpha, tinted by the color over life "
                      "(empty: the soft round sprite)", affects="look"),
    Field("flipbook_columns", "int", 1, 1, 256, "Frames across the sprite image (a sheet read left to right, "
          "top to bottom)", affects="look"),
    Field("flipbook_rows", "int", 1, 1, 256, "Frames down the sprite image", affects="look"),
    Field("flipbook_mode", "enum", "LIFE", items=("LIFE", "RATE"),
          description="Life: the sheet plays once over each particle's life; Rate: at Flipbook Rate, looping", affects="look"),
    Field("flipbook_rate", "float", 24.0, 0.0, 1e4, "Rate mode: sheet frames per second", affects="look"),
    Field("flipbook_random_start", "float", 0.0, 0.0, 1.0,
          "Fraction of the sheet by which each particle's first frame is randomly advanced (1: any frame)", affects="look"),
    Field("flipbook_blend", "enum", "FRAMES", items=("NONE", "FRAMES", "MOTION_VECTORS"),
          description="None: each frame held; Frames: the two nearest frames mixed; Motion Vectors: mixed along "
                      "the motion of the vector sheet (EmberGen's: RG the UV offset, 0.5 still)", affects="look"),
    Field("flipbook_vectors", "string", "",
          description="Motion Vectors blend: the motion vector sheet (a Blender image or file) of the same frames", affects="look"),
    Field("flipbook_vector_strength", "float", 0.1, 0.0, 10.0,
          "Motion Vectors blend: a frame's UV offset at full vector (R or G at 0 or 1)", affects="look"),
    Field("sprite_normals", "string", "",
          description="Lit sprites with Relief: a normal map sheet (a Blender image or file, tangent space, green up) "
                      "of the same frames; empty: normals from the sprite's alpha, its edges sloping away", affects="look"),
    Field("rotation", "float", 0.0, -2 * math.pi, 2 * math.pi, "Textured sprites: angle at birth", unit="ROTATION", affects="look"),
    Field("rotation_random", "float", 0.0, 0.0, math.pi, "Largest random change of the angle at birth",
          unit="ROTATION", affects="look"),
    Field("spin", "float", 0.0, -1e3, 1e3, "Textured sprites: angular velocity in radians per second", affects="look"),
    Field("spin_random", "float", 0.0, 0.0, 2.0,
          "Fraction by which each particle's spin is randomly changed (above 1 some spin the other way)", affects="look"),
    Field("rotation_align", "enum", "NONE", items=("NONE", "VELOCITY"),
          description="None: angle and spin alone; Velocity: turned to the particle's motion on screen too", affects="look"),
    Field("trail_points", "int", 0, 0, 64,
          "Points of each particle's trail, drawn as a camera-facing ribbon through its last positions (0: no trail)"),
    Field("trail_sampling", "enum", "SUBSTEP", items=("SUBSTEP", "DISTANCE"),
          description="Substep: a trail point every simulation step (the trail spans points x step seconds); "
                      "Distance: a point whenever the particle has moved the trail distance since the last one"),
    Field("trail_distance", "float", 0.05, 1e-6, 1e4, "Distance sampling: world distance between trail points",
          unit="LENGTH"),
    Field("trail_width", "float", 1.0, 0.0, 1e3, "Ribbon width at the head as a multiple of the particle's size", affects="look"),
    Field("trail_width_end", "float", 0.0, 0.0, 1e3, "Ribbon width at the tail as a fraction of the head's width", affects="look"),
    Field("trail_color_end", "color", (1.0, 1.0, 1.0), 0.0, 1e4,
          "Tint at the tail of the trail (the particle's own color at the head, tinted towards this)", affects="look"),
    Field("trail_fade", "float", 1.0, 0.0, 1.0, "How much the trail fades out towards its tail (0: no fade)", affects="look"),
    Field("preroll", "float", 0.0, 0.0, 1e3, "Seconds simulated before the first frame", unit="TIME_ABSOLUTE"),
    Field("seed", "int", 0, 0, 2**31 - 1, "Random seed; the same seed gives the same particles"),
    Field("blend_mode", "enum", "ADD", items=("ADD", "ALPHA"),
          description="Add: particles add light (fire, sparks), order does not matter; "
                      "Alpha: soft sprites composited nearest first per pixel, in screen tiles (smoke, dust)", affects="look"),
    Field("opacity", "float", 0.5, 0.0, 1.0, "Alpha mode: opacity at the center of each soft sprite", affects="look"),
    Field("sort_order", "enum", "AUTO", items=("AUTO", "NONE", "BACK_TO_FRONT", "GRID_CELL"),
          description="Auto: none (Alpha sprites are ordered per pixel without it); "
                      "Back to Front: keep a drawing order by view depth; "
                      "Grid Cell: Morton order of the grid cells, by a counting sort, so volume lookups hit the cache"),
    Field("sort_passes", "int", 16, 0, MAX_SORT_PASSES,
          "Odd-even merge sort passes per frame; each leaves the particles at least as sorted "
          "(a full sort runs at the start, at camera cuts and in bakes)"),
    Field("sort_cell_size", "float", 0.05, 1e-4, 1e4, "Grid Cell sort: edge of one grid cell", unit="LENGTH"),
    Field("lighting", "enum", "EMISSION", items=("EMISSION", "LIT", "BOTH"),
          description="Emission: particles glow in their own color; Lit: the scene's lights and the World light "
                      "them (albedo), shadowed by the particles between them and each light; Both: the two added", affects="look"),
    Field("albedo", "color", (0.8, 0.8, 0.8), 0.0, 1.0, "Lit: fraction of the light a particle scatters, at birth", affects="look"),
    Field("albedo_end", "color", (0.8, 0.8, 0.8), 0.0, 1.0, "Lit: albedo at death (linear over life)", affects="look"),
    Field("density", "float", 1.0, 0.0, 1e6,
          "Lit: extinction cross-section of a particle as a multiple of its disc (pi r^2): how much light it stops", affects="look"),
    Field("anisotropy", "float", 0.0, -0.95, 0.95,
          "Lit: Henyey-Greenstein g: positive scatters forward (bright when looking into the light), "
          "negative backward, 0 evenly", affects="look"),
    Field("sprite_relief", "float", 0.0, 0.0, 4.0,
          "Lit textured sprites: how strongly the lights shade each sprite across its face, from its normals "
          "(the sheet's alpha or its normal map; 0: lit evenly)", affects="look"),
    Field("shadow_density", "float", 1.0, 0.0, 1e6,
          "Lit: multiplies the extinction particles cast on each other (0: lit without self-shadowing)", affects="look"),
    Field("shadows_on_scene", "bool", True,
          description="Lit: the particles shadow the scene's surfaces in renders and the viewport, by what they "
                      "let through toward each light that casts particle shadows (needs Occlusion: Scene)",
          affects="look"),
)

# Effect settings that change only how particles are drawn (tagged "look"): an edit of one redraws the simulated
# history (and keeps the disk cache) instead of simulating it again.  SceneSnapshot.effect_key leaves them out,
# except the colors a spawned effect inherits from its parent (spawn_tint); tests/scene/test_look_edits.py steps effects
# with every one of them changed and finds the same state.
LOOK_FIELDS = frozenset(f.name for f in EFFECT_FIELDS if f.affects == "look")


@dataclass(frozen=True)
class Renamed:
    """An effect setting folded into another of the same meaning: ``name`` serves every interaction now, where the
    old setting served ``interaction`` alone (with ``default`` when a file left it unset)."""

    name: str
    interaction: str
    default: Any


# Effect settings by their old names (preset format 1, files saved before): one setting per meaning, used by
# whichever interaction is on.
RENAMED_FIELDS = {
    "fluid_iterations": Renamed("iterations", "FLUID", 4),
    "fluid_cohesion": Renamed("cohesion", "FLUID", 0.0),
}


def migrated(values: dict[str, Any]) -> dict[str, Any]:
    """An effect's settings saved before RENAMED_FIELDS (a format 1 preset, an old file's stored values), as they
    simulate now: where the effect's interaction is the one an old setting served, the new name takes the old
    one's value (given or its default), which was the one in use; elsewhere the new name's own value was."""
    values = dict(values)
    for old, renamed in RENAMED_FIELDS.items():
        value = values.pop(old, renamed.default)
        if values.get("interaction", "NONE") == renamed.interaction:
            values[renamed.name] = value
    return values

RENDER_FIELDS: tuple[Field, ...] = (
    Field("emax", "float", 8.0, 1e-6, 1e9,
          "Brightest value one pixel can accumulate before it overflows; lower keeps more precision in dim areas", affects="render"),
    Field("cache_memory", "float", 512.0, 0.0, 1e6,
          "Megabytes of GPU memory for simulation checkpoints, kept for scrubbing the timeline back (0: re-simulate from the start)"),
    Field("emax_mode", "enum", "MANUAL", items=("MANUAL", "AUTO"),
          description="Manual: Emax as set; Auto: the previous frame's brightest pixel times the headroom "
                      "(grows fourfold after a frame that overflowed)", affects="render"),
    Field("emax_headroom", "float", 2.0, 1.0, 1e3, "Auto Emax: how far above the last frame's brightest pixel", affects="render"),
    Field("occlusion", "enum", "SCENE", items=("SCENE", "NONE"),
          description="Scene: particles behind the scene's opaque meshes are hidden; None: drawn over everything", affects="render"),
    Field("soft_distance", "float", 0.0, 0.0, 1e6,
          "Alpha sprites fade over this distance before the scene's opaque meshes instead of cutting a hard line "
          "(soft particles; needs Occlusion: Scene; 0: off)", unit="LENGTH", affects="render"),
    Field("point_filter", "enum", "ANTIALIASED", items=("ANTIALIASED", "ONE_PIXEL"),
          description="Bakes and the command line: Antialiased: each point's light goes to the 2x2 pixels around "
                      "its exact position (no shimmer on moving shots); One Pixel: all into the pixel it falls in (faster)", affects="render"),
    Field("viewport_point_filter", "enum", "ONE_PIXEL", items=("ANTIALIASED", "ONE_PIXEL"),
          description="The viewport overlay: Antialiased: each point's light goes to the 2x2 pixels around its "
                      "exact position; One Pixel: all into the pixel it falls in (the fastest)", affects="render"),
    Field("point_mode", "enum", "ATOMIC", items=("ATOMIC", "GL_POINTS"),
          description="How point particles are composited: the atomic compute splat, or rasterized GL_POINTS "
                      "into a half-float target (the slower classic path, for comparison)", affects="render"),
    Field("trail_draw", "enum", "SPLAT", items=("SPLAT", "RIBBONS"),
          description="How Add effects' trails are drawn: Splat: each segment added by compute over 16x16 "
                      "screen tiles, anti-aliased (the fastest for millions of thin trails); Ribbons: rasterized "
                      "quads (for comparison, and wide ribbons close to the camera)", affects="render"),
    Field("glints", "enum", "NONE", items=("NONE", "STAR", "FLARE"),
          description="After compositing, the brightest pixel of each 8x8 tile above the glint threshold gets a "
                      "sprite, added over the frame: Star: thin rays; Flare: rays with a soft halo and a ring; "
                      "None: off", affects="glints"),
    Field("glint_threshold", "float", 2.0, 0.0, 1e6,
          "Luminance a pixel must pass to get a glint; only the part above it lights the glint", affects="glints"),
    Field("glint_intensity", "float", 1.0, 0.0, 1e4, "Brightness of the glints", affects="glints"),
    Field("glint_length", "float", 0.04, 1e-3, 1.0, "Length of the rays as a fraction of the frame height", affects="glints"),
    Field("glint_rays", "int", 4, 2, 16, "Number of rays of each star", affects="glints"),
    Field("glint_rotation", "float", math.pi / 4, -2 * math.pi, 2 * math.pi, "Angle of the first ray",
          unit="ROTATION", affects="glints"),
    Field("glint_tint", "float", 1.0, 0.0, 1.0,
          "How much the bright pixel's color tints its glint (0: white, 1: the pixel's color)", affects="glints"),
    Field("shadow_resolution", "int", 64, 16, 256,
          "Lit effects: voxels along the longest side of the volume the particles' shadows are worked out in "
          "(higher: sharper shadows, slower)", affects="render"),
)

# The render settings a simulation is made for (tagged "simulation"): the memory its checkpoints may take.  Every
# other render setting only draws (compositing, occlusion, glints, shadows' resolution).
RENDER_SIMULATION_FIELDS = frozenset(f.name for f in RENDER_FIELDS if f.affects == "simulation")


class SettingsError(ValueError):
    """Settings a user gave that cannot be simulated; the message says which and why."""


def _make_settings_class(name: str, fields: tuple[Field, ...]):
    return dataclasses.make_dataclass(
        name, [(f.name, Any, dataclasses.field(default=f.default)) for f in fields], frozen=True,
        namespace={"__hash__": hash_once},  # settings key the per-draw caches (look tables, packed constants)
    )


EffectSettings = _make_settings_class("EffectSettings", EFFECT_FIELDS)
RenderSettings = _make_settings_class("RenderSettings", RENDER_FIELDS)


def _number(value) -> str:
    return f"{value:,}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def _check(field: Field, value: Any) -> tuple[Any, str | None]:
    """The value normalised to the field's kind, or an error message."""
    if field.kind == "string":
        return value, None if isinstance(value, str) else f"{field.name} must be text, not {value!r}"
    if field.kind == "bool":
        return value, None if isinstance(value, bool) else f"{field.name} must be true or false, not {value!r}"
    if field.kind == "enum":
        if value not in field.items:
            return value, f"{field.name} must be one of {', '.join(field.items)}, not {value!r}"
        return value, None
    if field.kind in ("vec3", "color"):
        try:
            value = tuple(float(v) for v in value)
        except (TypeError, ValueError):
            return value, f"{field.name} must be three numbers, not {value!r}"
        parts = value
        if len(parts) != 3:
            return value, f"{field.name} must be three numbers, not {len(parts)}"
    else:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value, f"{field.name} must be a number, not {value!r}"
        if field.kind == "int":
            if value != int(value):
                return value, f"{field.name} must be a whole number, not {value}"
            value = int(value)
        else:
            value = float(value)
        parts = (value,)
    if field.kind != "int":
        parts = tuple(_to_bounds(field, part) for part in parts)
        value = parts if field.kind in ("vec3", "color") else parts[0]
    for part in parts:
        if not math.isfinite(part):
            return value, f"{field.name} must be finite, not {part}"
        if field.min is not None and part < field.min:
            return value, f"{field.name} must be at least {_number(field.min)}, not {_number(part)}"
        if field.max is not None and part > field.max:
            return value, f"{field.name} must be at most {_number(field.max)}, not {_number(part)}"
    return value, None


def _to_bounds(field: Field, part: float) -> float:
    """A bound as Blender stores it (float32, e.g. 0.999 -> 0.99900001) is the bound itself:
    a property dragged to its limit must pass the check that compares in float64."""
    for bound in (field.min, field.max):
        if bound is not None and abs(part - bound) <= 1e-6 * abs(bound) and np.float32(part) == np.float32(bound):
            return float(bound)
    return part


def clamped(fields: tuple[Field, ...], values: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``values`` with every number outside its field's bounds moved to the bound, and a message per setting
    moved ("Spawn Count 0 raised to 1"): a Blender property keeps what the panel, a script or an old file gave it,
    and reading it clamps and says so.  What is not a finite number (text, NaN, infinity) is left to validation."""
    by_name = {f.name: f for f in fields}
    values, messages = dict(values), []
    for name, value in values.items():
        field = by_name.get(name)
        if field is None or field.kind not in ("int", "float", "vec3", "color"):
            continue
        given = tuple(value) if field.kind in ("vec3", "color") and isinstance(value, (list, tuple)) else (value,)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in given):
            continue
        parts = tuple(_to_bounds(field, float(v)) for v in given)
        inside = tuple(_inside(field, part) for part in parts)
        if inside == parts:
            continue
        moved = [(part, to) for part, to in zip(parts, inside) if to != part]
        verb = "raised" if all(to > part for part, to in moved) else \
            "lowered" if all(to < part for part, to in moved) else "clamped"
        values[name] = inside if field.kind in ("vec3", "color") else int(inside[0]) if field.kind == "int" else inside[0]
        messages.append(f"{field.label} {_numbers(parts)} {verb} to {_numbers(inside)}")
    return values, tuple(messages)


def _numbers(parts: tuple[float, ...]) -> str:
    shown = [_number(int(p) if p.is_integer() and abs(p) < 1e15 else p) for p in parts]
    return shown[0] if len(shown) == 1 else f"({', '.join(shown)})"


def _inside(field: Field, part: float) -> float:
    """``part`` within the field's bounds (NaN and infinities stay: validation names them)."""
    if not math.isfinite(part):
        return part
    if field.min is not None and part < field.min:
        return float(field.min)
    if field.max is not None and part > field.max:
        return float(field.max)
    return part


def _build(cls, fields: tuple[Field, ...], values: dict[str, Any], what: str):
    by_name = {f.name: f for f in fields}
    unknown = sorted(set(values) - set(by_name))
    problems = [f"unknown {what} setting '{name}'" + (f" (now '{RENAMED_FIELDS[name].name}')" if name in RENAMED_FIELDS else "")
                for name in unknown]
    normalised = {}
    for name, value in values.items():
        if name in by_name:
            normalised[name], problem = _check(by_name[name], value)
            if problem:
                problems.append(problem)
    if problems:
        raise SettingsError("; ".join(problems))
    return cls(**normalised)


def effect_settings(values: dict[str, Any] | None = None) -> EffectSettings:
    """Validated effect settings from a (partial) dict; missing fields take defaults."""
    return _build(EffectSettings, EFFECT_FIELDS, dict(values or {}), "effect")


def render_settings(values: dict[str, Any] | None = None) -> RenderSettings:
    return _build(RenderSettings, RENDER_FIELDS, dict(values or {}), "render")


def as_dict(settings) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(settings).items()}


def simulated(settings) -> dict[str, Any]:
    """The effect settings that shape its simulation (all but LOOK_FIELDS), as :func:`as_dict` gives them."""
    return {name: value for name, value in as_dict(settings).items() if name not in LOOK_FIELDS}


def max_particles(max_texture_size: int) -> int:
    """Most particle slots the state images can hold on a GPU with this texture limit."""
    return min(max_texture_size * max_texture_size, HARD_MAX_PARTICLES)


def check_count(count: int, max_texture_size: int) -> None:
    limit = max_particles(max_texture_size)
    if count > limit:
        raise SettingsError(
            f"count {count:,} is more than this GPU can hold: at most {limit:,} particles "
            f"(texture limit {max_texture_size})"
        )


def check_for_gpu(settings: EffectSettings, max_texture_size: int) -> None:
    check_count(settings.count, max_texture_size)
