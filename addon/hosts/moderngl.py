"""The benchmark host: the same kernel bodies as plain ``#version 430`` under moderngl.

Used on the lent GPU machines (no Blender there) and, optionally, on Mesa.
"""

from __future__ import annotations

import numpy as np

from ..engine.kernels import Kernel
from .base import (
    CHANNELS,
    DTYPES,
    Host,
    NoGPUError,
    RenderTarget,
    ShaderCompileError,
    Texture,
    check_bindings,
    column_major,
    compile_error,
)

_GLSL_FORMATS = {"RGBA32F": ("rgba32f", "image2D"), "RGBA16F": ("rgba16f", "image2D"), "R32F": ("r32f", "image2D"), "R32UI": ("r32ui", "uimage2D")}
_GLSL_ACCESS = {"READ": "readonly ", "WRITE": "writeonly ", "READ_WRITE": ""}
_GLSL_TYPES = {
    "INT": "int", "FLOAT": "float", "VEC2": "vec2", "VEC3": "vec3", "VEC4": "vec4",
    "IVEC2": "ivec2", "IVEC3": "ivec3", "IVEC4": "ivec4", "MAT4": "mat4",
}
_SAMPLERS = {"FLOAT_2D": "sampler2D", "FLOAT_3D": "sampler3D", "UINT_2D": "usampler2D"}
_STORED = {"RGBA32F": "f4", "RGBA16F": "f2", "R32F": "f4", "R32UI": "u4"}  # numpy dtype as the texture stores it


def declarations(kernel: Kernel) -> str:
    """What Blender's create-info generates, spelled out for a plain GL program."""
    lines = ["#version 430"]
    lines += [f"#define {name} {value}" for name, value in kernel.defines]
    lines.append("layout(local_size_x = {}, local_size_y = {}, local_size_z = {}) in;".format(*kernel.local_size))
    for slot, image in enumerate(kernel.images):
        layout, glsl_type = _GLSL_FORMATS[image.format]
        lines.append(f"layout(binding = {slot}, {layout}) uniform {_GLSL_ACCESS[image.access]}{glsl_type} {image.name};")
    for slot, sampler in enumerate(kernel.samplers):
        lines.append(f"layout(binding = {slot}) uniform {_SAMPLERS[sampler.type]} {sampler.name};")
    lines += [f"uniform {_GLSL_TYPES[c.type]} {c.name};" for c in kernel.constants]
    lines += [f"shared {s.type} {s.name}[{s.size}];" for s in kernel.shared]
    return "\n".join(lines) + "\n"


def raster_declarations(raster, stage: str) -> str:
    """Header of a raster program's 'vert' or 'frag' stage, as Blender's create-info makes it."""
    lines = ["#version 430"]
    lines += [f"#define {name} {value}" for name, value in raster.defines]
    for slot, sampler in enumerate(raster.samplers):
        lines.append(f"layout(binding = {slot}) uniform {_SAMPLERS[sampler.type]} {sampler.name};")
    lines += [f"uniform {_GLSL_TYPES[c.type]} {c.name};" for c in raster.constants]
    direction = "out" if stage == "vert" else "in"
    lines += [f"{direction} {_GLSL_TYPES[t]} {name};" for t, name in raster.varyings]
    lines.append("in vec2 corner;" if stage == "vert" else "out vec4 out_color;")
    return "\n".join(lines) + "\n"


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

    def texture(self, name, width, height, format, data=None):
        native = self.ctx.texture((width, height), CHANNELS[format], dtype=_STORED[format])
        texture = Texture(name, width, height, format, native)
        if data is None:
            self.clear(texture)
        else:
            native.write(np.ascontiguousarray(data, dtype=_STORED[format]).tobytes())
        return texture

    def volume(self, name, data):
        depth, height, width, _ = data.shape
        native = self.ctx.texture3d((width, height, depth), 4, np.ascontiguousarray(data, dtype="f4").tobytes(), dtype="f4")
        return Texture(name, width, height, "RGBA32F", native, depth)

    def clear(self, texture, value=0):
        array = np.full(texture.shape, value, dtype=_STORED[texture.format])
        texture.native.write(array.tobytes())

    def read(self, texture):
        array = np.frombuffer(texture.native.read(), dtype=_STORED[texture.format])
        return array.reshape(texture.shape).astype(DTYPES[texture.format])

    def compile(self, kernel: Kernel):
        program = self._programs.get(kernel)
        if program is None:
            header = declarations(kernel)
            try:
                program = self.ctx.compute_shader(header + kernel.body())
            except Exception as error:
                raise compile_error(kernel, str(error), body_line_offset=header.count("\n")) from None
            self._programs[kernel] = program
        return program

    def dispatch(self, kernel, groups, textures, constants):
        check_bindings(kernel, textures, constants)
        program = self.compile(kernel)
        for slot, image in enumerate(kernel.images):
            textures[image.name].native.bind_to_image(
                slot, read=image.access != "WRITE", write=image.access != "READ"
            )
        for slot, sampler in enumerate(kernel.samplers):
            textures[sampler.name].native.use(location=slot)
        _set_constants(program, kernel.constants, constants)
        program.run(*groups)
        self.ctx.memory_barrier()

    def finish(self):
        self.ctx.finish()

    def render_target(self, name, width, height):
        native = self.ctx.texture((width, height), 4, dtype="f4")
        target = RenderTarget(name, width, height, "RGBA32F", native,
                              framebuffer=self.ctx.framebuffer(color_attachments=[native]))
        self.clear_target(target)
        return target

    def clear_target(self, target):
        target.framebuffer.clear(0.0, 0.0, 0.0, 0.0)

    def draw(self, raster, target, instances, textures, constants):
        import moderngl

        check_bindings(raster, textures, constants)
        program, vertex_array = self._raster(raster)
        if instances <= 0:
            return
        for slot, sampler in enumerate(raster.samplers):
            textures[sampler.name].native.use(location=slot)
        _set_constants(program, raster.constants, constants)
        target.framebuffer.use()
        self.ctx.enable(moderngl.BLEND)
        self.ctx.blend_func = moderngl.ONE, moderngl.ONE_MINUS_SRC_ALPHA
        vertex_array.render(moderngl.TRIANGLES, vertices=6, instances=instances)
        self.ctx.disable(moderngl.BLEND)

    def _raster(self, raster):
        cached = self._programs.get(raster)
        if cached is None:
            from ..engine.sprites import QUAD_CORNERS

            try:
                program = self.ctx.program(
                    vertex_shader=raster_declarations(raster, "vert") + raster.stage_body("vert"),
                    fragment_shader=raster_declarations(raster, "frag") + raster.stage_body("frag"),
                )
            except Exception as error:
                raise compile_error(raster, str(error), body_line_offset=raster_declarations(raster, "vert").count("\n")) from None
            corners = self.ctx.buffer(np.array(QUAD_CORNERS, dtype="f4").tobytes())
            cached = (program, self.ctx.vertex_array(program, [(corners, "2f", "corner")]))
            self._programs[raster] = cached
        return cached


def _set_constants(program, declared, values):
    for constant in declared:
        if constant.name not in program:
            continue  # optimised away by the driver
        value = values[constant.name]
        if constant.type == "MAT4":
            value = tuple(column_major(value))
        elif constant.type.startswith("IVEC"):
            value = tuple(int(v) for v in value)
        elif constant.type.startswith("VEC"):
            value = tuple(float(v) for v in value)
        program[constant.name].value = value


__all__ = ["ModernGLHost", "ShaderCompileError", "declarations"]
