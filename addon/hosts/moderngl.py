"""The benchmark host: the same kernel bodies as plain ``#version 430`` under moderngl.

Used on the lent GPU machines (no Blender there) and, optionally, on Mesa.
"""

from __future__ import annotations

import numpy as np

from ..engine.seam.kernels import Kernel, Raster
from .base import (
    CHANNELS,
    DTYPES,
    UNORM8,
    Host,
    NoGPUError,
    ShaderCompileError,
    Texture,
    check_bindings,
    column_major,
    compile_error,
    volume_layout,
)

_GLSL_FORMATS = {"RGBA32F": ("rgba32f", "image"), "RGBA16F": ("rgba16f", "image"), "R32F": ("r32f", "image"),
                 "R32UI": ("r32ui", "uimage")}  # + 2D / 3D
_GLSL_ACCESS = {"READ": "readonly ", "WRITE": "writeonly ", "READ_WRITE": ""}
_GLSL_TYPES = {
    "INT": "int", "FLOAT": "float", "VEC2": "vec2", "VEC3": "vec3", "VEC4": "vec4",
    "IVEC2": "ivec2", "IVEC3": "ivec3", "IVEC4": "ivec4", "MAT4": "mat4",
}
_SAMPLERS = {"FLOAT_2D": "sampler2D", "FLOAT_3D": "sampler3D", "UINT_2D": "usampler2D"}
_STORED = {"RGBA32F": "f4", "RGBA16F": "f2", "RGBA8": "u1", "SRGB8_A8": "u1", "R32F": "f4", "R32UI": "u4",
           "DEPTH32F": "f4"}  # numpy dtype as stored
_MODERNGL_DTYPES = {"RGBA8": "f1", "SRGB8_A8": "f1"}  # moderngl's own where it differs (f1: normalized bytes)
_INTERNAL_FORMATS = {"SRGB8_A8": 0x8C43}  # GL_SRGB8_ALPHA8
_GLSL_VARYING_TYPES = {"FLOAT": "float", "VEC2": "vec2", "VEC3": "vec3", "VEC4": "vec4"}
# glClearTexImage's (format, type) of a texel value per texture format (GL_RED_INTEGER, GL_RED, GL_RGBA,
# GL_DEPTH_COMPONENT; GL_UNSIGNED_INT, GL_FLOAT).
_CLEAR_FORMATS = {"R32UI": (0x8D94, 0x1405), "R32F": (0x1903, 0x1406), "RGBA32F": (0x1908, 0x1406),
                  "RGBA16F": (0x1908, 0x1406), "RGBA8": (0x1908, 0x1406), "SRGB8_A8": (0x1908, 0x1406),
                  "DEPTH32F": (0x1902, 0x1406)}


def _stored(data, format: str) -> np.ndarray:
    """``data`` (DTYPES[format]) as the texture stores it: 8-bit formats' [0, 1] values rounded to bytes."""
    if format in UNORM8:
        return np.rint(np.clip(np.asarray(data, np.float32), 0.0, 1.0) * 255.0).astype(np.uint8)
    return np.ascontiguousarray(data, dtype=_STORED[format])


def _clear_tex_image():
    """glClearTexImage (GL 4.4) of the current context, or None (then a clear uploads zeros)."""
    import ctypes

    from .gl_native import gl_function

    for name in ("libOpenGL.so.0", "libGL.so.1"):
        try:
            library = ctypes.CDLL(name)
        except OSError:
            continue
        function = gl_function(library, "glClearTexImage", [ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
                                                             ctypes.c_uint, ctypes.c_void_p])
        if function is not None:
            return function
    return None


def declarations(kernel: Kernel) -> str:
    """What Blender's create-info generates, spelled out for a plain GL program."""
    lines = ["#version 430", *(f"#extension {name} : require" for name in kernel.extensions)]
    lines += [f"#define {name} {value}" for name, value in kernel.all_defines()]
    if not isinstance(kernel, Raster):
        lines.append("layout(local_size_x = {}, local_size_y = {}, local_size_z = {}) in;".format(*kernel.local_size))
    for slot, image in enumerate(kernel.images):
        layout, glsl_type = _GLSL_FORMATS[image.format]
        lines.append(f"layout(binding = {slot}, {layout}) uniform {_GLSL_ACCESS[image.access]}{glsl_type}"
                     f"{image.dimensions}D {image.name};")
    for slot, sampler in enumerate(kernel.samplers):
        lines.append(f"layout(binding = {slot}) uniform {_SAMPLERS[sampler.type]} {sampler.name};")
    lines += [f"uniform {_GLSL_TYPES[c.type]} {c.name}{f'[{c.size}]' if c.size else ''};" for c in kernel.constants]
    lines += [f"shared {s.type} {s.name}[{s.size}];" for s in kernel.shared]
    return "\n".join(lines) + "\n"


def stage_declarations(raster: Raster, stage: str) -> str:
    """The declarations of one raster stage: Blender's stage define and interface, spelled out."""
    direction = "out" if stage == "VERTEX" else "in"
    lines = [f"#define GPU_{stage}_SHADER"]
    if stage == "VERTEX":
        lines += [f"layout(location = {slot}) in {_GLSL_VARYING_TYPES[t]} {name};"
                  for slot, (t, name) in enumerate(raster.vertex_inputs)]
    lines += [f"{direction} {_GLSL_VARYING_TYPES[t]} {name};" for t, name in raster.varyings]
    if stage == "FRAGMENT":
        lines.append("layout(location = 0) out vec4 out_color;")
    header = declarations(raster)
    return header + "\n".join(lines) + "\n"


class ModernGLHost(Host):
    name = "moderngl"

    def __init__(self, ctx=None):
        try:
            import moderngl
        except ImportError as error:
            raise NoGPUError("moderngl is not installed") from error
        try:
            self.ctx = ctx or moderngl.create_context(standalone=True, require=430, backend="egl")
        except Exception as error:
            raise NoGPUError(f"No OpenGL 4.3 context through EGL: {error}") from error
        self.max_texture_size = self.ctx.info["GL_MAX_TEXTURE_SIZE"]
        self.max_work_group_count = self.ctx.info["GL_MAX_COMPUTE_WORK_GROUP_COUNT"][0]
        self.max_texture_3d_size = self.ctx.info["GL_MAX_3D_TEXTURE_SIZE"]
        self.device = self.ctx.info["GL_RENDERER"]
        self._programs = {}
        self._clear_texture = _clear_tex_image()
        self._framebuffers = {}
        self._vertex_arrays = {}

    def texture(self, name, width, height, format, data=None):
        if format == "DEPTH32F":
            native = self.ctx.depth_texture((width, height))
            native.compare_func = ""  # sampled as plain float depth, like Blender's
        else:
            native = self.ctx.texture((width, height), CHANNELS[format], dtype=_MODERNGL_DTYPES.get(format, _STORED[format]),
                                      internal_format=_INTERNAL_FORMATS.get(format))
        texture = Texture(name, width, height, format, native)
        if data is None:
            self.clear(texture)
        else:
            native.write(_stored(data, format).tobytes())
        return texture

    def volume(self, name, data=None, *, shape=None, format="R32F"):
        (depth, height, width), format = volume_layout(data, shape, format)
        native = self.ctx.texture3d((width, height, depth), CHANNELS[format], dtype=_STORED[format])
        texture = Texture(name, width, height, format, native, depth, dimensions=3)
        if data is None:
            self.clear(texture)
        else:
            native.write(np.ascontiguousarray(data, dtype=_STORED[format]).tobytes())
        return texture

    def sampling(self, texture, linear):
        import moderngl

        filtering = moderngl.LINEAR if linear else moderngl.NEAREST
        texture.native.filter = (filtering, filtering)
        texture.native.repeat_x = texture.native.repeat_y = False
        if texture.dimensions == 3:
            texture.native.repeat_z = False

    def clear(self, texture, value=0):
        """On the GPU (glClearTexImage), as Blender's ``GPUTexture.clear``: an upload of a 3D stack would put a
        PCIe transfer inside the benches' timings."""
        if self._clear_texture is None:
            texture.native.write(np.full(texture.shape, value, dtype=_STORED[texture.format]).tobytes())
            return
        gl_format, gl_type = _CLEAR_FORMATS[texture.format]
        texel = np.full(4, value, dtype=np.uint32 if texture.format == "R32UI" else np.float32)
        self._clear_texture(texture.native.glo, 0, gl_format, gl_type, texel.ctypes.data)

    def read(self, texture):
        array = np.frombuffer(texture.native.read(), dtype=_STORED[texture.format]).reshape(texture.shape)
        return array / np.float32(255) if texture.format in UNORM8 else array.astype(DTYPES[texture.format])

    def compile(self, kernel: Kernel):
        program = self._programs.get(kernel)
        if program is None:
            if isinstance(kernel, Raster):
                vertex, fragment = (stage_declarations(kernel, stage) for stage in ("VERTEX", "FRAGMENT"))
                header = vertex
                build = lambda: self.ctx.program(vertex_shader=vertex + kernel.body(),  # noqa: E731
                                                 fragment_shader=fragment + kernel.body())
            else:
                header = declarations(kernel)
                build = lambda: self.ctx.compute_shader(header + kernel.body())  # noqa: E731
            try:
                program = build()
            except Exception as error:
                raise compile_error(kernel, str(error), body_line_offset=header.count("\n")) from None
            self._programs[kernel] = program
        return program

    def dispatch(self, kernel, groups, textures, constants):
        program = self._bind(kernel, textures, constants)
        program.run(*groups)
        self.ctx.memory_barrier()

    def draw(self, raster, primitive, vertices, instances, target, depth, textures, constants, blend="ADD"):
        import moderngl

        program = self._bind(raster, textures, constants)
        key = (target.native.glo, depth.native.glo if depth is not None else 0)
        if key not in self._framebuffers:
            self._framebuffers[key] = self.ctx.framebuffer(
                color_attachments=[target.native], depth_attachment=depth.native if depth is not None else None
            )
        if raster not in self._vertex_arrays:
            self._vertex_arrays[raster] = self.ctx.vertex_array(program, [])
        framebuffer = self._framebuffers[key]
        framebuffer.use()
        self.ctx.enable_only(moderngl.BLEND | (moderngl.DEPTH_TEST if depth is not None else 0))
        self.ctx.blend_func = moderngl.ONE, moderngl.ONE if blend == "ADD" else moderngl.ONE_MINUS_SRC_ALPHA
        self.ctx.depth_func = "<="
        framebuffer.depth_mask = False
        mode = moderngl.POINTS if primitive == "POINTS" else moderngl.TRIANGLES
        self._vertex_arrays[raster].render(mode, vertices=vertices, instances=instances)
        self.ctx.memory_barrier()

    def _bind(self, kernel, textures, constants):
        check_bindings(kernel, textures, constants)
        program = self.compile(kernel)
        for slot, image in enumerate(kernel.images):
            textures[image.name].native.bind_to_image(
                slot, read=image.access != "WRITE", write=image.access != "READ"
            )
        for slot, sampler in enumerate(kernel.samplers):
            textures[sampler.name].native.use(location=slot)
        for constant in kernel.constants:
            if constant.name not in program:
                continue  # optimised away by the driver
            value = constants[constant.name]
            if constant.size:
                program[constant.name].write(np.ascontiguousarray(value, dtype="f4").tobytes())
                continue
            if constant.type == "MAT4":
                value = tuple(column_major(value))
            elif constant.type.startswith("IVEC"):
                value = tuple(int(v) for v in value)
            elif constant.type.startswith("VEC"):
                value = tuple(float(v) for v in value)
            program[constant.name].value = value
        return program

    def finish(self):
        self.ctx.finish()


__all__ = ["ModernGLHost", "ShaderCompileError", "declarations"]
