"""The product host: kernels as ``GPUShaderCreateInfo`` through Blender's ``gpu``."""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager

import numpy as np

from ..engine.kernels import Kernel
from .base import (
    CHANNELS,
    DTYPES,
    MIN_MAX_3D_TEXTURE_SIZE,
    GPUMemoryError,
    Host,
    NoGPUError,
    RenderTarget,
    Texture,
    check_bindings,
    column_major,
    compile_error,
)

_IMAGE_TYPES = {"RGBA32F": "FLOAT_2D", "RGBA16F": "FLOAT_2D", "R32F": "FLOAT_2D", "R32UI": "UINT_2D"}
_ACCESS = {"READ": {"READ"}, "WRITE": {"WRITE"}, "READ_WRITE": {"READ", "WRITE"}}
_INT_TYPES = {"INT", "IVEC2", "IVEC3", "IVEC4"}


def _gpu():
    """Import Blender's gpu module with a bound context, or say why there is none."""
    try:
        import bpy  # noqa: F401  (the bpy module provides gpu)
        import gpu
    except ImportError as error:
        raise NoGPUError("Blender's 'gpu' module is not available: run inside Blender 5.2+ or with the bpy module") from error
    try:
        if bpy.app.background:
            gpu.init()
        gpu.platform.renderer_get()
    except Exception as error:  # gpu.init() raises SystemError and friends
        raise NoGPUError(f"No GPU context could be created ({error}); on a headless machine install Mesa's EGL (libegl1 libegl-mesa0 libgl1-mesa-dri)") from error
    return gpu


@contextmanager
def _captured_output():
    """Collect what Blender's logger prints to fd 1/2 (the shader compile log)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        log = []
        try:
            yield log
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            sink.seek(0)
            log.append(sink.read().decode(errors="replace"))


class BlenderHost(Host):
    name = "blender"

    def __init__(self):
        self.gpu = _gpu()
        self.max_texture_size = self.gpu.capabilities.max_texture_size_get()
        self.max_work_group_count = self.gpu.capabilities.max_work_group_count_get(0)
        self.max_texture_3d_size = MIN_MAX_3D_TEXTURE_SIZE  # Blender's Python API does not report it
        self.device = self.gpu.platform.renderer_get()
        self._shaders = {}
        self._fence = self.texture("fence", 1, 1, "R32F")

    def texture(self, name, width, height, format, data=None):
        gpu = self.gpu
        if data is not None and DTYPES[format] is not np.float32:
            raise ValueError("Blender textures take FLOAT data only; create integer textures empty")
        try:
            if data is not None:
                flat = np.ascontiguousarray(data, dtype=np.float32).ravel()
                buffer = gpu.types.Buffer("FLOAT", flat.size, flat)
                native = gpu.types.GPUTexture((width, height), format=format, data=buffer)
            else:
                native = gpu.types.GPUTexture((width, height), format=format)
        except RuntimeError as error:
            megabytes = width * height * CHANNELS[format] * 4 / 2**20
            raise GPUMemoryError(
                f"The GPU could not allocate '{name}' ({width}x{height} {format}, {megabytes:,.0f} MB): {error}"
            ) from None
        texture = Texture(name, width, height, format, native)
        if data is None:
            self.clear(texture)
        return texture

    def volume(self, name, data):
        depth, height, width, _ = data.shape
        flat = np.ascontiguousarray(data, dtype=np.float32).ravel()
        try:
            native = self.gpu.types.GPUTexture((width, height, depth), format="RGBA32F",
                                               data=self.gpu.types.Buffer("FLOAT", flat.size, flat))
        except RuntimeError as error:
            raise GPUMemoryError(f"The GPU could not allocate '{name}' ({width}x{height}x{depth} RGBA32F): {error}") from None
        return Texture(name, width, height, "RGBA32F", native, depth)

    def clear(self, texture, value=0):
        if DTYPES[texture.format] is np.uint32:
            texture.native.clear(format="UINT", value=(int(value),))
        else:
            texture.native.clear(format="FLOAT", value=(float(value),) * CHANNELS[texture.format])

    def read(self, texture):
        array = np.frombuffer(texture.native.read(), dtype=DTYPES[texture.format])
        return array.reshape(texture.shape).copy()

    def compile(self, kernel: Kernel):
        shader = self._shaders.get(kernel)
        if shader is not None:
            return shader
        with _captured_output() as log:
            shader = self._create(kernel)
        if shader is None:
            lines = [line for line in log[0].splitlines() if "Push constants have a minimum" not in line]
            raise compile_error(kernel, "\n".join(lines))
        self._shaders[kernel] = shader
        return shader

    def _create(self, kernel: Kernel):
        """Build and compile the create-info; None on failure (the log tells why).

        Blender warns when push constants pass Vulkan's guaranteed 128 bytes; its
        Vulkan and Metal backends then move them to a uniform buffer themselves,
        so that warning is captured with the compile log rather than printed.
        """
        info = self.gpu.types.GPUShaderCreateInfo()
        info.local_group_size(*kernel.local_size)
        for slot, image in enumerate(kernel.images):
            image_type = "UINT_2D_ATOMIC" if image.atomic else _IMAGE_TYPES[image.format]
            info.image(slot, image.format, image_type, image.name, qualifiers=_ACCESS[image.access])
        for slot, sampler in enumerate(kernel.samplers):
            info.sampler(slot, sampler.type, sampler.name)
        for constant in kernel.constants:
            info.push_constant(constant.type, constant.name)
        for name, value in kernel.defines:
            info.define(name, value)
        if kernel.shared:
            # Blender's preprocessor strips shared arrays from compute_source.
            info.typedef_source("".join(f"shared {s.type} {s.name}[{s.size}];\n" for s in kernel.shared))
        info.compute_source(kernel.body())
        try:
            return self.gpu.shader.create_from_info(info)
        except Exception:
            return None

    def dispatch(self, kernel, groups, textures, constants):
        check_bindings(kernel, textures, constants)
        shader = self.compile(kernel)
        shader.bind()
        for image in kernel.images:
            shader.image(image.name, textures[image.name].native)
        for sampler in kernel.samplers:
            shader.uniform_sampler(sampler.name, textures[sampler.name].native)
        _set_constants(shader, kernel.constants, constants)
        self.gpu.compute.dispatch(shader, *groups)

    def finish(self):
        self._fence.native.read()

    def render_target(self, name, width, height):
        try:
            offscreen = self.gpu.types.GPUOffScreen(width, height, format="RGBA32F")
        except Exception as error:
            raise GPUMemoryError(f"The GPU could not allocate the render target '{name}' ({width}x{height}): {error}") from None
        target = RenderTarget(name, width, height, "RGBA32F", offscreen.texture_color, framebuffer=offscreen)
        self.clear_target(target)
        return target

    def clear_target(self, target):
        with target.framebuffer.bind():
            self.gpu.state.active_framebuffer_get().clear(color=(0.0, 0.0, 0.0, 0.0))

    def draw(self, raster, target, instances, textures, constants):
        check_bindings(raster, textures, constants)
        shader, batch = self._raster(raster)
        if instances <= 0:
            return
        with target.framebuffer.bind():
            self.gpu.state.blend_set("ALPHA_PREMULT")
            shader.bind()
            for sampler in raster.samplers:
                shader.uniform_sampler(sampler.name, textures[sampler.name].native)
            _set_constants(shader, raster.constants, constants)
            batch.draw_instanced(shader, instance_start=0, instance_count=instances)
            self.gpu.state.blend_set("NONE")

    def _raster(self, raster):
        """The compiled program and its quad batch (one vec2 'corner' per vertex)."""
        cached = self._shaders.get(raster)
        if cached is not None:
            return cached
        from gpu_extras.batch import batch_for_shader

        from ..engine.sprites import QUAD_CORNERS

        gpu = self.gpu
        info = gpu.types.GPUShaderCreateInfo()
        interface = gpu.types.GPUStageInterfaceInfo(f"{raster.name}_interface")
        for glsl_type, name in raster.varyings:
            interface.smooth(glsl_type, name)
        info.vertex_in(0, "VEC2", "corner")
        info.vertex_out(interface)
        info.fragment_out(0, "VEC4", "out_color")
        for slot, sampler in enumerate(raster.samplers):
            info.sampler(slot, sampler.type, sampler.name)
        for constant in raster.constants:
            info.push_constant(constant.type, constant.name)
        for name, value in raster.defines:
            info.define(name, value)
        info.vertex_source(raster.stage_body("vert"))
        info.fragment_source(raster.stage_body("frag"))
        with _captured_output() as log:
            try:
                shader = gpu.shader.create_from_info(info)
            except Exception:
                shader = None
        if shader is None:
            raise compile_error(raster, log[0])
        cached = (shader, batch_for_shader(shader, "TRIS", {"corner": QUAD_CORNERS}))
        self._shaders[raster] = cached
        return cached


def _set_constants(shader, declared, values):
    for constant in declared:
        value = values[constant.name]
        if constant.type == "MAT4":
            shader.uniform_float(constant.name, column_major(value))
        elif constant.type in _INT_TYPES:
            shader.uniform_int(constant.name, tuple(int(v) for v in value) if constant.type != "INT" else int(value))
        else:
            shader.uniform_float(constant.name, tuple(float(v) for v in value) if constant.type != "FLOAT" else float(value))
