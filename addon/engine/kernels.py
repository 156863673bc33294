"""Kernel declarations: one GLSL file per stage plus the resources it binds.

A kernel's *body* (its include files followed by ``shaders/<name>.glsl``) is
handed byte-for-byte to both hosts; only the resource declarations around it
are host-specific (see ``addon/hosts``).  Keep the declarations here, next to
each other, so that a newcomer sees every stage of the pipeline in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from .resources import resource_dir


@dataclass(frozen=True)
class Image:
    """A 2D image read and written with imageLoad/imageStore/imageAtomic*."""

    name: str
    format: str  # 'RGBA32F', 'R32F' or 'R32UI'
    access: str = "READ_WRITE"  # 'READ', 'WRITE' or 'READ_WRITE'
    atomic: bool = False  # R32UI images that take imageAtomic* calls


@dataclass(frozen=True)
class Sampler:
    """A texture sampled with texture()/texelFetch()."""

    name: str
    type: str = "FLOAT_2D"  # 'FLOAT_2D' or 'FLOAT_3D'


@dataclass(frozen=True)
class Constant:
    """A push constant (a plain uniform on OpenGL); ``size`` > 0: an array of that many, bound from an (size, n) array."""

    type: str  # 'INT', 'FLOAT', 'VEC2', 'VEC3', 'VEC4', 'IVEC2', 'IVEC4', 'MAT4'
    name: str
    size: int = 0


@dataclass(frozen=True)
class Shared:
    """A workgroup-shared array (declared in Blender's typedef source)."""

    type: str
    name: str
    size: int


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

    @property
    def path(self):
        return resource_dir("shaders") / f"{self.name}.glsl"

    def body(self) -> str:
        """The GLSL text both hosts compile: includes, then the kernel file."""
        return _body(self.includes, self.name)

    def source_lines(self) -> list[tuple[str, int]]:
        """(file, line) for every line of ``body()``, to map compiler errors back."""
        origin = []
        for file_name in (*self.includes, f"{self.name}.glsl"):
            text = _read(file_name)
            origin += [(file_name, n + 1) for n in range(text.count("\n"))]
        return origin

    def groups_for(self, width: int, height: int = 1) -> tuple[int, int, int]:
        """Workgroup counts covering a width x height grid of invocations."""
        lx, ly, _ = self.local_size
        return (-(-width // lx), -(-height // ly), 1)


@dataclass(frozen=True)
class Raster(Kernel):
    """A draw instead of a dispatch: vertex and fragment stage in one file.

    The file's ``#ifdef GPU_VERTEX_SHADER`` / ``GPU_FRAGMENT_SHADER`` parts
    (Blender defines these; the moderngl host does too) are the two stages;
    the vertex stage pulls particles from samplers by gl_VertexID /
    gl_InstanceID (no vertex attributes) and hands ``varyings`` on; the
    fragment stage writes ``out_color``.
    """

    varyings: tuple[tuple[str, str], ...] = ()  # (type, name), interpolated


@cache
def _read(file_name: str) -> str:
    text = (resource_dir("shaders") / file_name).read_text()
    return text if text.endswith("\n") else text + "\n"


@cache
def _body(includes: tuple[str, ...], name: str) -> str:
    return "".join(_read(f) for f in (*includes, f"{name}.glsl"))
