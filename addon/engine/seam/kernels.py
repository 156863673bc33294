"""Kernel declarations: one GLSL file per stage plus the resources it binds.

A kernel's *body* (its include files from ``shaders/include/``, any text
generated at run time (``Kernel.generated``: OpenColorIO's display function),
then ``shaders/<name>.glsl``) is handed byte-for-byte to both hosts; only the
resource declarations around it are host-specific (see ``addon/hosts``).

The seam between Python and GLSL is named on this side: a vector constant
that packs several values names its components (``Constant.components``),
and both hosts ``#define`` each name as its swizzle, so GLSL reads
``turbulence_strength`` where Python packed it and the numpy reference reads
it back by the same name (``Kernel.named``).  The shared integer tables
(``tables.py``) are defined in every kernel the same way.

A kernel's variants are declared features (``Feature``: the defines and
resources one adds, what a dispatch binds for it, when an effect asks for it);
a kernel lists the features it accepts (``Kernel.features``), a dispatch asks
``kernel.for_effect(settings, **frame)`` for its variant and binds what the
chosen features say (``Kernel.bindings``), and ``Kernel.variants`` is every
combination, which ``registry.py`` compiles.

Each kernel is declared in the engine module that records its dispatches;
``registry.py`` lists them all, and ``python -m addon.hosts show
NAME --host blender|moderngl`` prints one as a host compiles it
(``python -m addon.hosts features NAME``: what it can become).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, cached_property

from .records import RECORD_DEFINES, RECORDS
from .resources import resource_dir
from .tables import TABLE_DEFINES

_SWIZZLE = "xyzw"


def hash_once(self) -> int:
    """``__hash__`` of a frozen dataclass that is a cache key on every dispatch (kernels, settings): its
    fields hashed on first use only (a dataclass's own hash walks every field, nested ones too, each time)."""
    hashed = self.__dict__.get("_hash")
    if hashed is None:
        hashed = self.__dict__["_hash"] = hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self)))
    return hashed


@dataclass(frozen=True)
class Image:
    """A 2D or 3D image read and written with imageLoad/imageStore/imageAtomic*."""

    name: str
    format: str  # 'RGBA32F', 'R32F' or 'R32UI'
    access: str = "READ_WRITE"  # 'READ', 'WRITE' or 'READ_WRITE'
    atomic: bool = False  # R32UI images that take imageAtomic* calls
    dimensions: int = 2  # 3: a volume (``Host.volume``), addressed by ivec3


@dataclass(frozen=True)
class Sampler:
    """A texture sampled with texture()/texelFetch()."""

    name: str
    type: str = "FLOAT_2D"  # 'FLOAT_2D' or 'FLOAT_3D'


@dataclass(frozen=True)
class Constant:
    """A push constant (a plain uniform on OpenGL); ``size`` > 0: an array of that many, bound from an (size, n) array.

    ``components``: (name, swizzle) of each value a vector packs, e.g.
    ``("drag", "w")``; the hosts ``#define drag gravity_drag.w``, and
    ``Kernel.pack`` / ``Kernel.named`` fill and read the vector by these names.
    """

    type: str  # 'INT', 'FLOAT', 'VEC2', 'VEC3', 'VEC4', 'IVEC2', 'IVEC4', 'MAT4'
    name: str
    size: int = 0
    components: tuple[tuple[str, str], ...] = ()

    def pack(self, values: dict):
        """The vector from its named components (unnamed lanes zero); a plain value without components."""
        if not self.components:
            return values[self.name]
        lanes: list = [0.0] * int(self.type[-1])
        for name, indices in self._lanes:
            value = values[name]
            parts = (value,) if len(indices) == 1 else tuple(value)
            if len(parts) != len(indices):
                raise ValueError(f"{self.name}: '{name}' ({dict(self.components)[name]}) takes {len(indices)} "
                                 f"values, not {len(parts)}")
            for lane, part in zip(indices, parts):
                lanes[lane] = part
        return tuple(map(int if self.type.startswith("IVEC") else float, lanes))

    @cached_property
    def _lanes(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """(name, lane indices) of each component (packed every step: the swizzles looked up once)."""
        return tuple((name, tuple(_SWIZZLE.index(lane) for lane in swizzle)) for name, swizzle in self.components)

    def unpack(self, value) -> dict:
        """Each named component of a packed vector (a scalar or a tuple), by name."""
        return {name: value[_SWIZZLE.index(swizzle)] if len(swizzle) == 1
                else tuple(value[_SWIZZLE.index(lane)] for lane in swizzle)
                for name, swizzle in self.components}


@dataclass(frozen=True)
class Shared:
    """A workgroup-shared array (declared in Blender's typedef source)."""

    type: str
    name: str
    size: int


def _never(settings, frame) -> bool:
    return False


@dataclass(frozen=True)
class Feature:
    """One way a kernel varies, declared: what it adds to the kernel (appended after the kernel's own, in the
    kernel's order of features; an include only where the kernel lacks it), the resources it drops, what a
    dispatch binds for it, and when it is wanted.

    ``wants(settings, frame)``: whether an effect's settings (and the dispatch's facts about the frame, the
    keywords of ``Kernel.for_effect``) ask for it; ``binds(source)``: the textures it binds, from the dispatch's
    source named ``source`` (``Kernel.bindings``: the particle system for the look features); ``requires``:
    features it is added after, never without; ``group``: the registry compiles one feature of a group at a
    time (the look group: one ``#ifdef`` each in particle_look.glsl's color, which dispatches do combine).
    """

    name: str
    defines: tuple[tuple[str, str], ...] = ()
    images: tuple[Image, ...] = ()
    samplers: tuple[Sampler, ...] = ()
    constants: tuple[Constant, ...] = ()
    shared: tuple[Shared, ...] = ()
    includes: tuple[str, ...] = ()
    drops: frozenset[str] = frozenset()  # images, samplers and constants (by name) the variant no longer binds
    wants: Callable[[object, dict], bool] = _never
    binds: Callable[[object], dict] | None = None  # None: it binds nothing of its own
    source: str = "system"
    requires: tuple[str, ...] = ()
    group: str = ""

    def add_to(self, kernel: Kernel) -> Kernel:
        """``kernel`` with this feature: its drops left out, its defines and resources appended."""
        return dataclasses.replace(
            kernel,
            images=(*(i for i in kernel.images if i.name not in self.drops), *self.images),
            constants=(*(c for c in kernel.constants if c.name not in self.drops), *self.constants),
            samplers=(*(s for s in kernel.samplers if s.name not in self.drops), *self.samplers),
            shared=(*kernel.shared, *self.shared),
            includes=(*kernel.includes, *(i for i in self.includes if i not in kernel.includes)),
            defines=(*kernel.defines, *self.defines),
            chosen=(*kernel.chosen, self.name))


@dataclass(frozen=True)
class Kernel:
    name: str
    images: tuple[Image, ...] = ()
    constants: tuple[Constant, ...] = ()
    samplers: tuple[Sampler, ...] = ()
    shared: tuple[Shared, ...] = ()
    local_size: tuple[int, int, int] = (256, 1, 1)
    includes: tuple[str, ...] = ("common.glsl",)
    defines: tuple[tuple[str, str], ...] = field(default=())
    extensions: tuple[str, ...] = ()  # GLSL extensions: the moderngl host enables them, Blender 5.2 cannot
    generated: str = ""  # GLSL made at run time (OpenColorIO's display function), between includes and the file
    features: tuple[Feature, ...] = ()  # the features it accepts, in the order they are added
    chosen: tuple[str, ...] = ()  # the features this variant has (Kernel.with_features)

    __hash__ = hash_once

    def with_features(self, *names: str) -> Kernel:
        """This kernel with the named features of those it accepts, added in its order; made once per set (the
        hosts find a shader by the very kernel)."""
        return _with_features(self, frozenset(names)) if names else self

    def for_effect(self, settings, **frame) -> Kernel:
        """The variant a dispatch for an effect with ``settings`` uses: every accepted feature that ``settings``
        and the ``frame`` facts want and whose required features it has."""
        chosen: list[str] = []
        for feature in self.features:
            if set(feature.requires) <= set(chosen) and feature.wants(settings, frame):
                chosen.append(feature.name)
        return self.with_features(*chosen)

    def bindings(self, **sources) -> dict:
        """The textures this variant's features bind, each from the one of ``sources`` it names (Feature.source)."""
        return {name: texture for f in self.features if f.name in self.chosen and f.binds is not None
                for name, texture in f.binds(sources[f.source]).items()}

    def variants(self) -> tuple[Kernel, ...]:
        """Every variant its features make: each combination whose features' requirements are in it, with at
        most one feature of a group; none first."""
        names = [f.name for f in self.features]
        combos = [set(c) for n in range(len(names) + 1) for c in itertools.combinations(names, n)]
        return tuple(self.with_features(*combo) for combo in combos if self._compiled(combo))

    def _compiled(self, combo: set[str]) -> bool:
        chosen = [f for f in self.features if f.name in combo]
        groups = [f.group for f in chosen if f.group]
        return all(set(f.requires) <= combo for f in chosen) and len(groups) == len(set(groups))

    @property
    def path(self):
        return resource_dir("shaders") / f"{self.name}.glsl"

    def all_defines(self) -> tuple[tuple[str, str], ...]:
        """What both hosts #define before the body: the shared tables, this kernel's defines, named components."""
        named = tuple((name, f"{c.name}.{swizzle}") for c in self.constants for name, swizzle in c.components)
        return (*TABLE_DEFINES, *RECORD_DEFINES, *self.defines, *named)

    @cached_property
    def records(self) -> str:
        """The GLSL of the records (records.py) in what this kernel binds: loads where it reads, stores where
        it writes; the start of its body."""
        bound = {c.name: (True, False, False) for c in self.constants}
        bound.update((s.name, (True, False, True)) for s in self.samplers)
        bound.update((i.name, (i.access != "WRITE", i.access != "READ", False)) for i in self.images)
        images = frozenset(i.name for i in self.images)
        return "\n".join(r.glsl(*bound[r.resource], bound=images) for r in RECORDS if r.resource in bound)

    @cached_property
    def value_names(self) -> frozenset[str]:
        """What ``pack`` takes: each constant's name, or its components' names (worked out once: packed every step)."""
        return frozenset(n for c in self.constants for n in ([m for m, _ in c.components] or [c.name]))

    def pack(self, values: dict) -> dict:
        """Constants for ``Host.dispatch`` from values keyed by constant or component name."""
        if values.keys() != self.value_names:
            raise ValueError(f"{self.name}: values {sorted(set(values) ^ self.value_names)} given but not declared, "
                             "or missing")
        return {c.name: c.pack(values) for c in self.constants}

    def packer(self, fixed: dict) -> Packer:
        """``pack`` in two parts: the constants that ``fixed`` values alone decide, packed now; the rest per call."""
        return Packer(self, fixed)

    def named(self, constants: dict) -> dict:
        """The inverse of ``pack``: every constant and named component by name (the numpy reference reads these)."""
        values = dict(constants)
        for constant in self.constants:
            values.update(constant.unpack(constants[constant.name]))
        return values

    def body(self) -> str:
        """The GLSL text both hosts compile: the records' GLSL, includes, the generated text, then the kernel
        file."""
        if not self.generated:
            return self.records + _body(self.includes, self.name)
        return self.records + "".join(_text_of(file_name, self.generated)
                                      for file_name in _files(self.includes, self.name, True))

    def source_lines(self) -> list[tuple[str, int]]:
        """(file, line) for every line of ``body()``, to map compiler errors back."""
        origin = [(RECORDS_TEXT, n + 1) for n in range(self.records.count("\n"))]
        for file_name in _files(self.includes, self.name, bool(self.generated)):
            text = _text_of(file_name, self.generated)
            origin += [(file_name, n + 1) for n in range(text.count("\n"))]
        return origin

    def groups_for(self, width: int, height: int = 1) -> tuple[int, int, int]:
        """Workgroup counts covering a width x height grid of invocations."""
        lx, ly, _ = self.local_size
        return (-(-width // lx), -(-height // ly), 1)


class Packer:
    """A kernel's constants where some values hold for many dispatches (an effect's settings): those constants
    are packed once, and each call packs only the constants its values reach (``Kernel.packer``)."""

    def __init__(self, kernel: Kernel, fixed: dict):
        self.kernel, self.fixed = kernel, dict(fixed)
        decided = {c.name for c in kernel.constants if _value_names(c) <= self.fixed.keys()}
        self.packed = {c.name: c.pack(self.fixed) for c in kernel.constants if c.name in decided}
        self.rest = tuple(c for c in kernel.constants if c.name not in decided)
        self.mixed = any(_value_names(c) & self.fixed.keys() for c in self.rest)
        self.value_names = kernel.value_names - self.fixed.keys()

    def __call__(self, values: dict) -> dict:
        """Every constant, as ``kernel.pack({**fixed, **values})`` gives it."""
        if values.keys() != self.value_names:
            raise ValueError(f"{self.kernel.name}: values {sorted(set(values) ^ self.value_names)} given but not "
                             "declared, fixed, or missing")
        merged = {**self.fixed, **values} if self.mixed else values
        return {**self.packed, **{c.name: c.pack(merged) for c in self.rest}}


class Plans(dict):
    """Parts of a recording (dispatches, bindings) worked out once per key and used again: a viewport draw records
    the same scans, binnings and sheet bindings every draw.  Keys hold the ``id`` of the images a plan binds: the
    plan holds the images, so no other image takes that id while it is kept.  The host gets the plan's own dicts
    each time, to read only."""

    LIMIT = 16  # plans kept; past it all are dropped (callers that bind ever-new images)

    def of(self, key, make, *args) -> tuple:
        """The plan kept for ``key``, else ``make(*args)``'s, kept."""
        plan = self.get(key)
        if plan is None:
            if len(self) >= self.LIMIT:
                self.clear()
            plan = self[key] = make(*args)
        return plan


def _value_names(constant: Constant) -> set[str]:
    return {name for name, _ in constant.components} or {constant.name}


@dataclass(frozen=True)
class Raster(Kernel):
    """A draw instead of a dispatch: vertex and fragment stage in one file.

    The file's ``#ifdef GPU_VERTEX_SHADER`` / ``GPU_FRAGMENT_SHADER`` parts
    (Blender defines these; the moderngl host does too) are the two stages;
    the vertex stage pulls particles from samplers by gl_VertexID /
    gl_InstanceID (no vertex attributes) and hands ``varyings`` on; the
    fragment stage writes ``out_color``.  Only a draw of Blender's own meshes
    (the depth pre-pass) takes ``vertex_inputs``.
    """

    varyings: tuple[tuple[str, str], ...] = ()  # (type, name), interpolated
    vertex_inputs: tuple[tuple[str, str], ...] = ()  # (type, name), one attribute each

    __hash__ = hash_once


def include_source(includes: tuple[str, ...]) -> str:
    """The include files' text, in order (for bench and test kernels whose body is not a shaders/ file)."""
    return "".join(_read(f"include/{file_name}") for file_name in includes)


GENERATED = "<generated>"  # the body's place for ``Kernel.generated`` in a file list
RECORDS_TEXT = "<records>"  # where ``Kernel.records`` stands in ``source_lines``


def _files(includes: tuple[str, ...], name: str, generated: bool = False) -> tuple[str, ...]:
    """The body's files, relative to ``shaders/``: includes live in ``shaders/include/``."""
    return (*(f"include/{file_name}" for file_name in includes), *((GENERATED,) if generated else ()), f"{name}.glsl")


def _text_of(file_name: str, generated: str) -> str:
    if file_name != GENERATED:
        return _read(file_name)
    return generated if generated.endswith("\n") else generated + "\n"


@cache
def _read(file_name: str) -> str:
    text = (resource_dir("shaders") / file_name).read_text()
    return text if text.endswith("\n") else text + "\n"


@cache
def _with_features(kernel: Kernel, names: frozenset[str]) -> Kernel:
    unknown = names - {f.name for f in kernel.features}
    if unknown:
        raise KeyError(f"{kernel.name} accepts {[f.name for f in kernel.features]}, not {sorted(unknown)}")
    for feature in kernel.features:
        if feature.name in names:
            kernel = feature.add_to(kernel)
    return kernel


@cache
def _body(includes: tuple[str, ...], name: str) -> str:
    return "".join(_read(f) for f in _files(includes, name))
