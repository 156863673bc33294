"""Particle simulation on the GPU: emission, forces, integration.

The particle state (two images, two layouts) is described in ``state.py``.

Its kernels vary by the state layout (the images' shape: tables keyed by layout); what an effect asks for beyond
that is a feature of the simulate kernel (``Kernel.for_effect``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from ..look.look import inherits_color
from ..primitives.compaction import LiveParticles
from ..seam.kernels import Constant, Feature, Image, Kernel, Sampler, Shared
from ..seam.records import PARTICLE
from ..seam.state import LAYOUTS, StateLayout, state_size
from ..seam.tables import EMITTER_SHAPES, SIMULATE_FLAGS, SIZES
from ..settings.settings import EffectSettings, SettingsError, check_for_gpu
from .effectors import (
    MAX_COLLIDERS,
    MAX_FORCE_FIELDS,
    SDF_REACH_ROWS,
    SDF_SAMPLING,
    SDF_TRACE_STEPS,
    Collider,
    EmitterMesh,
    ForceField,
    collider_rows,
    pack_force_fields,
    pack_triangles,
    sdf_reach,
)
from .interactions import Interactions, check_interaction
from .trails import TrailBuffer
from .turbulence import check_resolution, curl_noise

# The SDF contact pass's threads at most (each steps every so many listed slots): enough to fill a large GPU,
# few enough that a step with few contacts does not launch a workgroup for every slot of the state.
SDF_CONTACT_THREADS = 1 << 19




def _init_kernel(layout: StateLayout) -> Kernel:
    return Kernel(
        "init_particles",
        images=layout.images(),
        constants=(Constant("INT", "count"), Constant("FLOAT", "birth_interval")),
    )


EVENT_IMAGES = ("event_position", "event_velocity")  # a parent's events per slot (simulate.glsl, EVENTS)


def event_images(access: str) -> tuple[Image, ...]:
    return tuple(Image(name, "RGBA32F", access) for name in EVENT_IMAGES)


# What only emit() reads: a spawned effect's variant binds none of it (spawn_events.glsl gives its births).
EMIT_ONLY = frozenset(("triangles", "emitter_prev", "emitter_cur", "emit_shape", "emit_extent", "emit_velocity"))


# The effect has children (events.py) and records its particles' events.
EVENTS = Feature("events", defines=(("EVENTS", "1"),), images=event_images("WRITE"),
                 wants=lambda settings, frame: frame["events"], binds=lambda system: system.events)
# It is a child, born from its parent's events: it binds none of emit()'s inputs.
SPAWNED = Feature("spawned", defines=(("SPAWNED", "1"),), drops=EMIT_ONLY,
                  wants=lambda settings, frame: bool(settings.spawn_from))

# A granular effect's settle pass (granular.py): each grain takes its contact correction's velocity, then collides
# again; with events, the simulate pass's record is kept and added to (GRAIN_EVENTS reads it).
# It binds none of what only births and forces read (simulate.glsl leaves that code out).
SETTLE_DROPS = EMIT_ONLY | {"fields", "noise", "field_count", "gravity_drag", "turbulence", "turbulence_offset",
                            "origin_in"}
GRAINS = Feature("grains", defines=(("GRAINS", "1"),),
                 images=(Image("grain_iterate", "RGBA32F", "READ"),),
                 drops=frozenset(SETTLE_DROPS),
                 wants=lambda settings, frame: frame.get("grains", False),
                 binds=lambda system: {"grain_iterate": system.interactions.settled})
GRAIN_EVENTS = Feature("grain_events", defines=(("GRAIN_EVENTS", "1"),), drops=frozenset(("event_velocity",)),
                       images=(Image("event_velocity", "RGBA32F", "READ_WRITE"),), requires=("events", "grains"),
                       wants=lambda settings, frame: True)


def _simulate_kernel(layout: StateLayout) -> Kernel:
    """The kernel every effect runs; its features EVENTS and SPAWNED for the families of sub-emitters, GRAINS
    (and GRAIN_EVENTS) for a granular effect's settle pass."""
    return Kernel(
        "simulate",
        images=(*layout.images(), Image("triangles", "RGBA32F", "READ"), Image("fields", "RGBA32F", "READ")),
        # sdf_atlas: R32F, sdf.SdfAtlas, sampled linearly (ParticleSystem.set_sdf_atlas)
        samplers=(Sampler("noise", "FLOAT_3D"), Sampler("sdf_atlas", "FLOAT_3D")),
        constants=(
            Constant("INT", "count"),
            Constant("INT", "step_index"),
            Constant("INT", "seed"),
            Constant("INT", "flags"),
            Constant("INT", "field_count"),
            Constant("INT", "collider_count"),
            Constant("FLOAT", "dt"),
            Constant("FLOAT", "time"),  # seconds since reset at the end of this step
            Constant("MAT4", "emitter_prev"),
            Constant("MAT4", "emitter_cur"),
            Constant("VEC4", "emit_shape", components=(
                ("emitter_shape", "x"),  # tables.EMITTER_SHAPES
                ("inherit_velocity", "y"),  # fraction of the emitter's velocity
                ("triangle_count", "z"),  # mesh shape: triangles in the triangle image
            )),
            # sphere radii, box half sizes along the emitter's axes (emitter_radius x emitter_scale)
            Constant("VEC4", "emit_extent", components=(("emitter_extent", "xyz"),)),
            Constant("VEC4", "emit_velocity", components=(("initial_velocity", "xyz"), ("velocity_random", "w"))),
            Constant("VEC4", "emit_direction", components=(
                ("normal_speed", "x"),  # speed along the emitter's normal
                ("cone_cos", "y"),  # cos of the cone angle around initial_velocity
                ("slot_period", "z"),  # seconds from one birth of a slot to its next (simulation.slot_period)
            )),
            Constant("VEC4", "lifetime_range", components=(
                ("lifetime", "x"),
                ("lifetime_random", "y"),  # fraction
                ("respawn_skip", "z"),  # seconds a respawning particle waits hidden
                ("burst_interval", "w"),  # seconds between repeating bursts (0: none)
            )),
            Constant("VEC4", "gravity_drag", components=(("gravity", "xyz"), ("drag", "w"))),
            Constant("VEC4", "turbulence", components=(
                ("turbulence_strength", "x"),
                ("turbulence_frequency", "y"),  # noise tiles per world unit
                ("noise_size", "z"),  # texels a side of the noise volume
            )),
            Constant("VEC4", "turbulence_offset", components=(("noise_offset", "xyz"),)),  # animated, in tiles
            Constant("VEC4", "origin_in", components=(("loaded_origin", "xyz"),)),  # state origin of the loaded positions
            Constant("VEC4", "origin_out", components=(("stored_origin", "xyz"),)),  # state origin of the stored positions
            Constant("VEC4", "colliders", MAX_COLLIDERS * SIZES["COLLIDER_ROWS"]),  # effectors.collider_rows, tables.COLLIDER_ROW
            Constant("VEC4", "sdf_reach", MAX_COLLIDERS * SDF_REACH_ROWS),  # effectors.sdf_reach
            Constant("MAT4", "sdf_reach_spread"),
        ),
        includes=("common.glsl", "random.glsl", "cone.glsl", "sdf_sample.glsl"),
        defines=(("STATE_LIMIT", layout.limit), ("SDF_TRACE_STEPS", str(SDF_TRACE_STEPS)),
                 ("SDF_REACH_ROWS", str(SDF_REACH_ROWS)), *SDF_SAMPLING),
        features=(EVENTS, SPAWNED, GRAINS, GRAIN_EVENTS),
    )


def _sdf_pass_kernels(layout: StateLayout, open_surfaces: bool = False) -> tuple[Kernel, Kernel]:
    """The two passes of a step with SDF colliders (simulate.glsl's main): the list pass steps every particle
    whose step meets no SDF grid (most of them decided by the broad phase, effectors.sdf_reach) and appends the
    others' slots to ``contact_slots`` (``contact_count`` their number); the contact pass steps those, densely.
    ``open_surfaces``: a collider is an open mesh's slab (sdf.py), whose slides the contact pass traces too; the
    closed-only contact pass leaves that code out (it cost 2-3% of the step compiled in:
    bench/results/h200-2026-12-02-sdf-open-surface-ab.json)."""
    base = replace(_simulate_kernel(layout), features=())
    listing = replace(base, images=(*base.images, Image("contact_slots", "R32UI", "WRITE"),
                                    Image("contact_count", "R32UI", atomic=True)),
                      shared=(Shared("uint", "s_listed", 1), Shared("uint", "s_list_first", 1)),
                      defines=(*base.defines, ("SDF_CONTACT_LIST", "1")))
    contacts = replace(base, images=(*base.images, Image("contact_slots", "R32UI", "READ"),
                                     Image("contact_count", "R32UI", "READ")),
                       defines=(*base.defines, ("SDF_CONTACTS", "1"),
                                *((("SDF_OPEN_SURFACES", "1"),) if open_surfaces else ())))
    return listing, contacts


def _copy_state_kernel(layout: StateLayout) -> Kernel:
    return Kernel(
        "copy_state",
        images=(*layout.images("READ"), Image("copy_pos_age", layout.format, "WRITE"),
                Image("copy_vel_life", layout.format, "WRITE")),
        includes=(),
    )


INIT_KERNELS = {name: _init_kernel(layout) for name, layout in LAYOUTS.items()}
SIMULATE_KERNELS = {name: _simulate_kernel(layout) for name, layout in LAYOUTS.items()}
SDF_PASS_KERNELS = {name: _sdf_pass_kernels(layout) for name, layout in LAYOUTS.items()}
SDF_OPEN_PASS_KERNELS = {name: _sdf_pass_kernels(layout, open_surfaces=True) for name, layout in LAYOUTS.items()}
COPY_STATE_KERNELS = {name: _copy_state_kernel(layout) for name, layout in LAYOUTS.items()}
COPY_TINT = Kernel("copy_tint", images=(Image("particle_tint", "RGBA32F", "READ"), Image("copy_tint", "RGBA32F", "WRITE")),
                   includes=())
SIMULATE = SIMULATE_KERNELS["FULL"]


def birth_interval(settings: EffectSettings) -> float:
    """Seconds between slot births: 1 / rate (by default one lifetime spread over all slots), or a burst."""
    if settings.emission != "CONTINUOUS":
        return 0.0
    return 1.0 / settings.rate if settings.rate > 0 else settings.lifetime / settings.count


def slot_period(settings: EffectSettings) -> float:
    """Continuous emission at a set rate: seconds from one birth of a slot to its next (0: reborn at death).

    A particle that dies sooner waits (hidden) for the rest of the period; one
    that lives longer is reborn when it dies, so ``rate`` is only reached while
    count >= rate * lifetime (``rate_warning`` says when it is not)."""
    return settings.count / settings.rate if settings.emission == "CONTINUOUS" and settings.rate > 0 else 0.0


def rate_warning(settings: EffectSettings) -> str | None:
    if settings.emission == "CONTINUOUS" and settings.rate > 0 and settings.count < settings.rate * settings.lifetime:
        return (f"count {settings.count:,} is fewer than rate x lifetime ({settings.rate * settings.lifetime:,.0f}): "
                f"fewer than {settings.rate:g} particles per second are born")
    return None


def state_origin(settings: EffectSettings, emitter: np.ndarray) -> np.ndarray:
    """Where positions are stored relative to: the emitter (compact layout) or the world origin."""
    if settings.state_layout == "COMPACT":
        return np.asarray(emitter, np.float32)[:3, 3].copy()
    return np.zeros(3, np.float32)


def simulate_constants(settings: EffectSettings, *, dt: float, step_index: int, time: float,
                       emitter_prev, emitter_cur, origin_in, origin_out, triangle_count: int = 0,
                       field_count: int = 0, colliders: list[Collider] = (), substep: tuple[int, int] = (0, 1)) -> dict:
    """The simulate kernel's constants for one step (the numpy reference takes the same dict).

    ``substep``: (k, substeps) of this frame, where the colliders' poses are interpolated."""
    fractions = (substep[0] / substep[1], (substep[0] + 1) / substep[1])
    if settings.interaction == "GRANULAR":  # a grain's centre stays its radius off every surface
        colliders = [replace(c, thickness=c.thickness + settings.size) for c in colliders]
    return _simulate_packer(settings, triangle_count)({
        "step_index": step_index,
        "field_count": field_count,
        "collider_count": len(colliders),
        "dt": dt,
        "time": time,
        "emitter_prev": emitter_prev,
        "emitter_cur": emitter_cur,
        "noise_offset": np.asarray(settings.turbulence_speed, np.float64) * time / settings.turbulence_scale,
        "loaded_origin": origin_in,
        "stored_origin": origin_out,
        "colliders": collider_rows(colliders, *fractions, dt),
        **sdf_reach(colliders, *fractions, dt),
    })


@lru_cache(maxsize=64)
def _simulate_packer(settings: EffectSettings, triangle_count: int):
    """The simulate constants an effect's settings decide, packed once (every step packs only the rest)."""
    s = settings
    respawn = (s.emission == "CONTINUOUS" or s.burst_interval > 0) and not s.spawn_from  # spawned: never
    return SIMULATE.packer({
        "count": s.count,
        "seed": s.seed,
        "flags": SIMULATE_FLAGS["RESPAWN"] if respawn else 0,
        "emitter_shape": EMITTER_SHAPES[s.emitter_shape],
        "emitter_extent": tuple(s.emitter_radius * axis for axis in s.emitter_scale),
        "inherit_velocity": s.inherit_velocity,
        "triangle_count": triangle_count,
        "initial_velocity": s.velocity,
        "velocity_random": s.velocity_random,
        "normal_speed": s.normal_velocity,
        "cone_cos": math.cos(s.cone_angle),
        "slot_period": slot_period(s),
        "lifetime": s.lifetime,
        "lifetime_random": s.lifetime_random,
        "respawn_skip": s.respawn_skip if s.emission == "CONTINUOUS" else 0.0,
        "burst_interval": s.burst_interval if s.emission == "BURST" else 0.0,
        "gravity": s.gravity,
        "drag": s.drag,
        "turbulence_strength": s.turbulence_strength,
        "turbulence_frequency": 1.0 / s.turbulence_scale,
        "noise_size": s.turbulence_resolution,
    })


def check_mesh(settings: EffectSettings, mesh: EmitterMesh | None) -> None:
    if settings.emitter_shape == "MESH" and (mesh is None or mesh.count == 0):
        raise SettingsError("emitter_shape MESH needs an emitter mesh with at least one face")


def check_spawned(settings: EffectSettings) -> None:
    """A spawned effect's shape is where its births fall around each event of its parent (whatever the parent's
    own shape): a point, a sphere or a box; no mesh."""
    if settings.spawn_from and settings.emitter_shape == "MESH":
        raise SettingsError("a spawned effect is born around its parent's events: emitter_shape POINT, SPHERE or "
                            "BOX, not MESH")


def check_scene_inputs(fields: list, colliders: list) -> None:
    if len(fields) > MAX_FORCE_FIELDS:
        raise SettingsError(f"{len(fields)} force fields: at most {MAX_FORCE_FIELDS} act on one effect")
    if len(colliders) > MAX_COLLIDERS:
        raise SettingsError(f"{len(colliders)} colliders: at most {MAX_COLLIDERS} act on one effect")


@dataclass(frozen=True)
class SystemState:
    """A copy of a system's state in host memory (a timeline checkpoint)."""

    # pos_age, vel_life as stored (float16 for the compact layout), or copies on the GPU (Textures);
    # then, with trails, the trail ring and heads (trails.TrailBuffer); then, inheriting color, the tint
    arrays: tuple
    origin: np.ndarray
    step_index: int
    time: float
    cursor: object = None  # a spawned effect's ring cursor (events.Spawner): an int, a 1x1 Texture, or None


class ParticleSystem:
    """One effect's particle state on the GPU and the steps that advance it."""

    def __init__(self, host, settings: EffectSettings, mesh: EmitterMesh | None = None, ramp: np.ndarray | None = None):
        """``ramp``: colors over life sampled at look.LOOK_SIZE points (a Blender color ramp), or None: the one
        spawned children inherit (``tint_ramp``, fixed for the simulation: part of their history) and the first
        one drawn (``ramp``, which a draw replaces with the ramp as edited)."""
        check_for_gpu(settings, host.max_texture_size)
        check_resolution(settings.turbulence_resolution, host.max_texture_3d_size)
        check_mesh(settings, mesh)
        check_spawned(settings)
        check_interaction(settings)
        self.host = host
        self.settings = settings
        self.layout = LAYOUTS[settings.state_layout]
        self.count = settings.count
        self.ramp = ramp
        self.tint_ramp = ramp
        self.particle_light = None  # lit effects: the light pass's radiance per slot (light_pass.py)
        self.particle_light_direction = None  # lit effects with relief: where their light comes from
        width, rows = state_size(settings.count, host.max_texture_size)
        self.pos_age = host.texture("pos_age", width, rows, self.layout.format)
        self.vel_life = host.texture("vel_life", width, rows, self.layout.format)
        self._live = LiveParticles(host, width, rows, self.count, self.layout.format)
        self.trails = TrailBuffer(host, settings, width, rows) if settings.trail_points else None
        # Spawned effects that inherit their parent's color: a tint a slot (look.PARTICLE_TINT), none for the others.
        self.tint = host.texture("particle_tint", width, rows, "RGBA32F") if inherits_color(settings) else None
        # Particles acting on each other (interactions.py): the neighbour grid and its step; None: each moves alone.
        self.interactions = Interactions(host, settings, width, rows) if settings.interaction != "NONE" else None
        self.flock_target = None  # the world position flocking seeks (the effect's Target object), or None
        self._live_current = False  # _live holds the state's live slots (compacted since the last change)
        triangles, self.triangle_count = pack_triangles(mesh if settings.emitter_shape == "MESH" else None)
        self.triangles = host.texture("triangles", SIZES["TRIANGLE_ROW"], len(triangles), "RGBA32F", triangles)
        self.noise = host.volume("noise", curl_noise(settings.turbulence_resolution, settings.seed))
        self.fields, self.colliders = [], []
        self.field_texture = None
        self.set_scene_inputs([], [])
        self.no_sdf = host.volume("sdf_atlas", np.zeros((1, 1, 1), np.float32))  # bound while no SDF collider
        self.sdf_atlas = self.no_sdf
        self.contact_list = None  # (contact_slots, contact_count) of the SDF passes, made on first use
        self.origin = np.zeros(3, np.float32)
        self.step_index = 0
        self.time = 0.0
        self.spawner = None  # spawned and linked to its parent: events.Spawner (events.link_families)
        self.children: list[ParticleSystem] = []  # the effects spawned from this one's events
        self.events: dict | None = None  # with children: the event images simulate records (events.py)
        self.reset()

    @property
    def textures(self) -> dict:
        return {"pos_age": self.pos_age, "vel_life": self.vel_life}

    @property
    def live(self) -> LiveParticles:
        """The live slots and their count, compacted on first use after the state changed: only stats,
        exports and tests ask, so a frame (whose splat skips dead slots where it reads them) pays nothing."""
        if not self._live_current:
            self._live.compact(self.textures)
            self._live_current = True
        return self._live

    def state_changed(self) -> None:
        """The state images were written (a step, a reset, a restore, a reorder): the live slots are stale."""
        self._live_current = False

    @property
    def groups(self) -> tuple[int, int, int]:
        return SIMULATE.groups_for(self.pos_age.width, self.pos_age.height)

    @property
    def contact_groups(self) -> tuple[int, int, int]:
        """The SDF contact pass's dispatch: the state's width, as many rows as SDF_CONTACT_THREADS allows."""
        x, rows, _ = self.groups
        return x, min(rows, max(1, SDF_CONTACT_THREADS // self.pos_age.width)), 1

    def reset(self) -> None:
        self.step_index = 0
        self.time = 0.0
        self.origin = np.zeros(3, np.float32)
        self.host.dispatch(
            INIT_KERNELS[self.layout.name], self.groups, self.textures,
            {"count": self.count, "birth_interval": birth_interval(self.settings)},
        )
        if self.settings.spawn_from:  # born from events only: every slot starts dead for good (life -1)
            self.host.clear(self.vel_life, -1.0)
        if self.spawner is not None:
            self.spawner.reset()
        if self.trails is not None:
            self.trails.reset()
        if self.tint is not None:
            self.host.clear(self.tint)
        if self.interactions is not None:
            self.interactions.reset()
        self.state_changed()

    def record_events(self) -> None:
        """From now on simulate records each particle's events for children (events.link_families)."""
        if self.events is None:
            width, rows = self.pos_age.width, self.pos_age.height
            self.events = {name: self.host.texture(name, width, rows, "RGBA32F") for name in EVENT_IMAGES}

    def set_scene_inputs(self, fields: list[ForceField], colliders: list[Collider]) -> None:
        """Force fields and colliders for the next steps (the scene reads them every frame)."""
        check_scene_inputs(fields, colliders)
        self.fields, self.colliders = list(fields), list(colliders)
        packed = pack_force_fields(self.fields)
        if self.field_texture is None or not np.array_equal(packed, self._packed_fields):  # read every frame
            self.field_texture = self.host.texture("fields", SIZES["FIELD_TEXELS"], len(packed), "RGBA32F", packed)
            self._packed_fields = packed

    def set_sdf_atlas(self, atlas=None) -> None:
        """The R32F 3D texture (host.volume) holding this effect's SDF colliders' grids at their
        ``sdf_z_offset`` (sdf.SdfAtlas), for the next steps; None: no SDF collider (a 1x1x1 stand-in).
        Set to sample linearly: the sphere trace's distances come from the texture unit (sdf_distance,
        shaders/include/sdf_sample.glsl)."""
        if atlas is not None:
            self.host.sampling(atlas, linear=True)
        self.sdf_atlas = self.no_sdf if atlas is None else atlas

    def step(self, dt: float, emitter_prev: np.ndarray, emitter_cur: np.ndarray) -> None:
        """Advance one frame of ``dt`` seconds in ``substeps`` simulate dispatches (two each with an SDF
        collider: the list and contact passes, SDF_PASS_KERNELS; this effect alone: a family of sub-emitters
        steps substep by substep, events.step_family).

        The emitter's matrix is interpolated linearly across substeps.
        """
        for k in range(self.settings.substeps):
            self.substep(dt, k, self.settings.substeps, emitter_prev, emitter_cur)

    def substep(self, dt: float, k: int, substeps: int, emitter_prev: np.ndarray, emitter_cur: np.ndarray) -> None:
        """Simulate step ``k`` of a frame of ``dt`` seconds in ``substeps``."""
        h = dt / substeps
        prev = np.asarray(emitter_prev, dtype=np.float64)
        cur = np.asarray(emitter_cur, dtype=np.float64)
        kernel = SIMULATE_KERNELS[self.layout.name].for_effect(self.settings, events=self.events is not None)
        textures = {**self.textures, "triangles": self.triangles, "fields": self.field_texture, "noise": self.noise,
                    "sdf_atlas": self.sdf_atlas, **kernel.bindings(system=self)}
        passes = (kernel,)
        if kernel is SIMULATE_KERNELS[self.layout.name] and any(c.type == "SDF" for c in self.colliders):
            # effects with events step in one pass
            passes = (SDF_OPEN_PASS_KERNELS if any(c.type == "SDF" and c.sdf.surface for c in self.colliders)
                      else SDF_PASS_KERNELS)[self.layout.name]
            textures.update(zip(("contact_slots", "contact_count"), self._contact_list()))
        start = prev + (cur - prev) * (k / substeps)
        end = prev + (cur - prev) * ((k + 1) / substeps)
        origin = state_origin(self.settings, end)
        self.time += h
        constants = simulate_constants(
            self.settings, dt=h, step_index=self.step_index, time=self.time,
            emitter_prev=start, emitter_cur=end, origin_in=self.origin, origin_out=origin,
            triangle_count=self.triangle_count, field_count=len(self.fields), colliders=self.colliders,
            substep=(k, substeps),
        )
        if SPAWNED.name in kernel.chosen:
            textures = {name: t for name, t in textures.items() if name not in SPAWNED.drops}
            constants = {name: value for name, value in constants.items() if name not in SPAWNED.drops}
        if len(passes) > 1:
            self.host.clear(textures["contact_count"])
        for simulate in passes:
            groups = self.contact_groups if len(passes) > 1 and simulate is passes[1] else self.groups
            self.host.dispatch(simulate, groups, textures, constants)
        if self.interactions is not None:
            self.interactions.step(self, h, textures, constants)
        self.origin = origin
        self.step_index += 1
        if self.trails is not None:
            self.trails.record(self)
        self.state_changed()

    def settle(self, textures: dict, constants: dict) -> None:
        """Simulate's GRAINS pass after an interaction moved the particles (granular.py): velocities from the
        move, colliders again; ``textures`` and ``constants``: the substep's simulate dispatch's."""
        kernel = SIMULATE_KERNELS[self.layout.name].for_effect(self.settings, events=self.events is not None,
                                                               grains=True)
        bound = {**textures, **kernel.bindings(system=self)}
        names = [i.name for i in kernel.images] + [s.name for s in kernel.samplers]
        self.host.dispatch(kernel, self.groups, {name: bound[name] for name in names},
                           {c.name: constants[c.name] for c in kernel.constants})

    def _contact_list(self) -> tuple:
        """The SDF passes' list of slots (one entry a slot at most) and its length."""
        if self.contact_list is None:
            width, rows = self.pos_age.width, self.pos_age.height
            self.contact_list = (self.host.texture("contact_slots", width, rows, "R32UI"),
                                 self.host.texture("contact_count", 1, 1, "R32UI"))
        return self.contact_list

    @property
    def snapshot_nbytes(self) -> int:
        """What ``snapshot()`` holds in host memory, known without reading the state back."""
        texels = self.pos_age.width * self.pos_age.height
        trails = self.trails.nbytes if self.trails is not None else 0
        tint = texels * 16 if self.tint is not None else 0
        return 2 * texels * 4 * (2 if self.layout.format == "RGBA16F" else 4) + trails + tint

    def snapshot(self) -> SystemState:
        dtype = np.float16 if self.layout.format == "RGBA16F" else np.float32
        arrays = tuple(self.host.read(t).astype(dtype) for t in (self.pos_age, self.vel_life))
        trails = self.trails.read() if self.trails is not None else ()
        tint = (self.host.read(self.tint),) if self.tint is not None else ()
        cursor = self.spawner.read_cursor() if self.spawner is not None else None
        return SystemState((*arrays, *trails, *tint), self.origin.copy(), self.step_index, self.time, cursor)

    def snapshot_on_gpu(self, into: SystemState | None = None) -> SystemState:
        """A snapshot copied into GPU memory: taken (and restored) without waiting for a readback; into the
        textures of ``into`` (a GPU snapshot no longer kept) when they are this state's size and format."""
        width, rows = self.pos_age.width, self.pos_age.height
        if into is not None and all(not isinstance(t, np.ndarray) and t.shape == self.pos_age.shape
                                    and t.format == self.layout.format for t in into.arrays[:2]):
            copies = into.arrays[:2]
        else:
            copies = tuple(self.host.texture(name, width, rows, self.layout.format)
                           for name in ("pos_age", "vel_life"))
        self._copy_state(self.textures, copies)
        trails = self.trails.copy_on_gpu(into.arrays[2:4] if into is not None else None) if self.trails else ()
        tint = (self._copy_tint(into.arrays[-1] if into is not None else None),) if self.tint is not None else ()
        cursor = self.spawner.copy_cursor(into.cursor if into is not None else None) if self.spawner else None
        return SystemState((*copies, *trails, *tint), self.origin.copy(), self.step_index, self.time, cursor)

    def _copy_tint(self, into=None, back: bool = False):
        """The tint copied on the GPU into ``into`` (a new texture unless it is one of the tint's size); ``back``:
        from ``into`` into the tint."""
        if into is None or isinstance(into, np.ndarray) or into.shape != self.tint.shape:
            into = self.host.texture("particle_tint", self.tint.width, self.tint.height, "RGBA32F")
        source, target = (into, self.tint) if back else (self.tint, into)
        self.host.dispatch(COPY_TINT, self.groups, {"particle_tint": source, "copy_tint": target}, {})
        return into

    def _copy_state(self, source: dict, copies: tuple) -> None:
        self.host.dispatch(COPY_STATE_KERNELS[self.layout.name], self.groups,
                           {**source, "copy_pos_age": copies[0], "copy_vel_life": copies[1]}, {})

    def restore(self, state: SystemState) -> None:
        """Back to a snapshot: the following steps repeat bit for bit what followed it."""
        width, rows = self.pos_age.width, self.pos_age.height
        if isinstance(state.arrays[0], np.ndarray):
            self.pos_age, self.vel_life = (
                self.host.texture(name, width, rows, self.layout.format, array.astype(np.float32))
                for name, array in zip(("pos_age", "vel_life"), state.arrays))
        else:  # kept on the GPU: copied back, the checkpoint stays as it was
            self._copy_state(dict(zip(("pos_age", "vel_life"), state.arrays)), (self.pos_age, self.vel_life))
        if self.trails is not None:
            self.trails.restore(state.arrays[2:4])
        if self.tint is not None:
            self._restore_tint(state.arrays[-1])
        if self.spawner is not None:
            self.spawner.restore_cursor(state.cursor)
        self.origin, self.step_index, self.time = state.origin.copy(), state.step_index, state.time
        self.state_changed()

    def _restore_tint(self, tint) -> None:
        if isinstance(tint, np.ndarray):
            self.tint = self.host.texture("particle_tint", self.tint.width, self.tint.height, "RGBA32F",
                                          np.asarray(tint, np.float32).reshape(self.tint.height, self.tint.width, 4))
        else:
            self._copy_tint(tint, back=True)

    def write_state(self, pos_age: np.ndarray, vel_life: np.ndarray) -> None:
        """Replace the first len(pos_age) slots' state with (n, 4) float32 arrays in world space
        (the rest zero: never born), full layout only: tests and benchmarks set exact states."""
        if self.layout is not LAYOUTS["FULL"]:
            raise ValueError("write_state takes the full (RGBA32F) layout only")
        width, rows = self.pos_age.width, self.pos_age.height
        for name, values in (("pos_age", pos_age), ("vel_life", vel_life)):
            padded = np.zeros((rows * width, 4), np.float32)
            padded[: len(values)] = values
            if name == "pos_age":
                padded[: len(values), :3] -= self.origin
            setattr(self, name, self.host.texture(name, width, rows, "RGBA32F", padded.reshape(rows, width, 4)))
        self.state_changed()

    def read_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(pos_age, vel_life) of the live slots as (count, 4) float32 arrays, positions in world space."""
        pos_age, vel_life = (self.host.read(t).reshape(-1, 4)[: self.count] for t in (self.pos_age, self.vel_life))
        PARTICLE.read_images(pos_age, vel_life)["position"][:] += self.origin
        return pos_age, vel_life
