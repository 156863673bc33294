"""The product host: kernels as ``GPUShaderCreateInfo`` through Blender's ``gpu``."""

from __future__ import annotations

import os
import sys
import tempfile
import time
import weakref
from contextlib import contextmanager

import numpy as np

from ..engine.seam.kernels import Kernel, Raster
from .base import (
    CHANNELS,
    DTYPES,
    MIN_MAX_3D_TEXTURE_SIZE,
    TEXEL_BYTES,
    UNORM8,
    GPUMemoryError,
    Host,
    NoGPUError,
    ReadbackBuffer,
    Texture,
    check_bindings,
    column_major,
    compile_error,
    volume_layout,
)
from .blender_images import SpriteImages
from .gl_flush import Flusher, gl_finish, gl_flush
from .gl_readback import PixelPack, PixelPackBuffer

_IMAGE_TYPES = {"RGBA32F": "FLOAT", "RGBA16F": "FLOAT", "R32F": "FLOAT", "R32UI": "UINT"}  # + _2D / _3D
_TEXTURE_FORMATS = {"DEPTH32F": "DEPTH_COMPONENT32F"}
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


def gpu_context_bound() -> bool:
    """Whether Blender has a GPU context bound on this thread (initialising the GPU first in background).

    Most ``gpu`` calls dereference the active context and segfault without one (``GPU_shader_bind``,
    ``gpu.state.active_framebuffer_get``); ``GPUOffScreen`` checks ``GPU_context_active_get()`` first and
    raises instead (``pygpu_offscreen__tp_new`` in ``gpu_py_offscreen.cc``), so a 1x1 one is the probe."""
    gpu = _gpu()
    try:
        gpu.types.GPUOffScreen(1, 1).free()
    except RuntimeError:
        return False
    return True


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


def shader_info(gpu, kernel: Kernel):
    """The ``GPUShaderCreateInfo`` of a kernel declaration (``kernels.py``)."""
    info = gpu.types.GPUShaderCreateInfo()
    if not isinstance(kernel, Raster):
        info.local_group_size(*kernel.local_size)
    for slot, image in enumerate(kernel.images):
        image_type = f"{_IMAGE_TYPES[image.format]}_{image.dimensions}D{'_ATOMIC' if image.atomic else ''}"
        info.image(slot, image.format, image_type, image.name, qualifiers=_ACCESS[image.access])
    for slot, sampler in enumerate(kernel.samplers):
        info.sampler(slot, sampler.type, sampler.name)
    for constant in kernel.constants:
        info.push_constant(constant.type, constant.name, constant.size)
    for name, value in kernel.all_defines():
        info.define(name, value)
    if kernel.shared:
        # Blender's preprocessor strips shared arrays from compute_source.
        info.typedef_source("".join(f"shared {s.type} {s.name}[{s.size}];\n" for s in kernel.shared))
    if isinstance(kernel, Raster):
        _raster_stages(gpu, info, kernel)
    else:
        info.compute_source(kernel.body())
    return info


def _raster_stages(gpu, info, raster) -> None:
    """Vertex and fragment stage from one file; Blender defines GPU_VERTEX_SHADER / GPU_FRAGMENT_SHADER."""
    for slot, (glsl_type, name) in enumerate(raster.vertex_inputs):
        info.vertex_in(slot, glsl_type, name)
    if raster.varyings:
        interface = gpu.types.GPUStageInterfaceInfo(f"{raster.name}_interface")
        for glsl_type, name in raster.varyings:
            interface.smooth(glsl_type, name)
        info.vertex_out(interface)
    info.fragment_out(0, "VEC4", "out_color")
    info.vertex_source(raster.body())
    info.fragment_source(raster.body())


_BLENDS = {"ADD": "ADDITIVE_PREMULT", "OVER": "ALPHA_PREMULT"}


class _Binding:
    """A kernel's shader with its bindings resolved once: what a dispatch does per resource, its constants
    grouped by how Blender takes them (a loop per kind, no call per constant to choose a conversion)."""

    def __init__(self, kernel, shader):
        self.kernel, self.shader = kernel, shader
        self.images = tuple((i.name, i.format) for i in kernel.images)
        self.samplers = tuple(s.name for s in kernel.samplers)
        plain = [c for c in kernel.constants if not c.size]
        self.ints = tuple(c.name for c in plain if c.type == "INT")
        self.int_vectors = tuple(c.name for c in plain if c.type in _INT_TYPES and c.type != "INT")
        self.floats = tuple(c.name for c in plain if c.type == "FLOAT")
        self.matrices = tuple(c.name for c in plain if c.type == "MAT4")
        self.vectors = tuple(c.name for c in plain if c.type not in _INT_TYPES and c.type not in ("FLOAT", "MAT4"))
        self.arrays = tuple((c.name, shader.uniform_from_name(c.name), c.size) for c in kernel.constants if c.size)
        self.texture_names = frozenset(name for name, _ in self.images) | frozenset(self.samplers)
        self.constant_names = frozenset(c.name for c in kernel.constants)

    def bind(self, textures, constants) -> None:
        if textures.keys() != self.texture_names or constants.keys() != self.constant_names:
            check_bindings(self.kernel, textures, constants)  # raises, naming what is wrong
        shader = self.shader
        shader.bind()
        for name, image_format in self.images:
            texture = textures[name]
            if texture.format != image_format:
                check_bindings(self.kernel, textures, constants)
            shader.image(name, texture.native)
        for name in self.samplers:
            shader.uniform_sampler(name, textures[name].native)
        for name in self.ints:
            shader.uniform_int(name, int(constants[name]))
        for name in self.int_vectors:
            shader.uniform_int(name, tuple(map(int, constants[name])))
        for name in self.floats:
            shader.uniform_float(name, float(constants[name]))
        for name in self.vectors:  # any sequence of numbers: Blender converts each
            shader.uniform_float(name, constants[name])
        for name in self.matrices:
            shader.uniform_float(name, column_major(constants[name]))
        for name, location, size in self.arrays:  # (size, n) arrays
            array = np.ascontiguousarray(constants[name], dtype=np.float32)
            shader.uniform_vector_float(location, array.ravel(), array.shape[-1], size)


class BlenderHost(Host):
    name = "blender"
    compile_seconds = 0.0  # spent compiling kernels so far (a bake reports it)

    def __init__(self):
        self.gpu = _gpu()
        self.max_texture_size = self.gpu.capabilities.max_texture_size_get()
        self.max_work_group_count = self.gpu.capabilities.max_work_group_count_get(0)
        self.max_texture_3d_size = MIN_MAX_3D_TEXTURE_SIZE  # Blender's Python API does not report it
        self.device = self.gpu.platform.renderer_get()
        self._shaders = {}
        self._batches = {}
        self._bindings = {}  # kernel -> _Binding (kernels hash once: kernels.hash_once)
        self._framebuffers = {}  # (id(color), id(depth)) -> GPUFrameBuffer
        self._sprite_images = SpriteImages()
        self._fence = self.texture("fence", 1, 1, "R32F")
        backend = self.gpu.platform.backend_type_get()
        self._flusher = Flusher(gl_flush(backend, self.device))
        self._gl_finish = gl_finish(backend)
        self._pixel_pack = PixelPack.load(backend, self.device)

    def texture(self, name, width, height, format, data=None):
        gpu = self.gpu
        if data is not None and DTYPES[format] is not np.float32:
            raise ValueError("Blender textures take FLOAT data only; create integer textures empty")
        try:
            if data is not None:
                flat = np.ascontiguousarray(data, dtype=np.float32).ravel()
                buffer = gpu.types.Buffer("FLOAT", flat.size, flat)
                native = gpu.types.GPUTexture((width, height), format=_TEXTURE_FORMATS.get(format, format), data=buffer)
            else:
                native = gpu.types.GPUTexture((width, height), format=_TEXTURE_FORMATS.get(format, format))
        except RuntimeError as error:
            megabytes = width * height * TEXEL_BYTES[format] / 2**20
            raise GPUMemoryError(
                f"The GPU could not allocate '{name}' ({width}x{height} {format}, {megabytes:,.0f} MB): {error}"
            ) from None
        texture = Texture(name, width, height, format, native)
        if data is None:
            self.clear(texture)
        return texture

    def volume(self, name, data=None, *, shape=None, format="R32F"):
        (depth, height, width), format = volume_layout(data, shape, format)
        try:
            if data is None:
                native = self.gpu.types.GPUTexture((width, height, depth), format=format)
            else:
                flat = np.ascontiguousarray(data, dtype=np.float32).ravel()
                native = self.gpu.types.GPUTexture((width, height, depth), format=format,
                                                   data=self.gpu.types.Buffer("FLOAT", flat.size, flat))
        except RuntimeError as error:
            megabytes = width * height * depth * TEXEL_BYTES[format] / 2**20
            raise GPUMemoryError(f"The GPU could not allocate '{name}' ({width}x{height}x{depth} {format}, "
                                 f"{megabytes:,.0f} MB): {error}") from None
        texture = Texture(name, width, height, format, native, depth, dimensions=3)
        if data is None:
            self.clear(texture)
        return texture

    def sprite_image(self, source):
        return self._sprite_images(source)

    def sampling(self, texture, linear):
        texture.native.filter_mode(linear)
        texture.native.extend_mode("EXTEND")

    def clear(self, texture, value=0):
        if DTYPES[texture.format] is np.uint32:
            # Blender reads the value as a C int: values past 2**31 go as the int of the same bits
            texture.native.clear(format="UINT", value=(int(np.uint32(value).view(np.int32)),))
        else:
            texture.native.clear(format="FLOAT", value=(float(value),) * CHANNELS[texture.format])

    def read(self, texture):
        if texture.format in UNORM8:  # Blender reads 8-bit textures as bytes
            return (np.frombuffer(texture.native.read(), np.uint8).reshape(texture.shape) / np.float32(255)).astype(
                np.float32)
        array = np.frombuffer(texture.native.read(), dtype=DTYPES[texture.format])
        return array.reshape(texture.shape).copy()

    def read_rows(self, texture, rows, buffer=None):
        """Through a framebuffer, the rows alone (a packed list read back as far as it is filled)."""
        dtype, channels = DTYPES[texture.format], CHANNELS[texture.format]
        shape = (rows, texture.width, channels) if channels > 1 else (rows, texture.width)
        if rows == 0:
            return np.empty(shape, dtype)
        native = (self.gpu.types.Buffer("UINT" if dtype is np.uint32 else "FLOAT", int(np.prod(shape)))
                  if buffer is None else buffer.native)
        framebuffer = self.framebuffer(texture, None)
        with framebuffer.bind():
            framebuffer.read_color(0, 0, texture.width, rows, channels, 0,
                                   "UINT" if dtype is np.uint32 else "FLOAT", data=native)
        return np.frombuffer(native, dtype)[:int(np.prod(shape))].reshape(shape)

    def row_buffer(self, texture):
        """A ``gpu.types.Buffer`` of the whole texture that ``read_color`` fills in place (``read_into``,
        ``read_rows``), viewed by numpy without a copy."""
        kind = "UINT" if DTYPES[texture.format] is np.uint32 else "FLOAT"
        native = self.gpu.types.Buffer(kind, int(np.prod(texture.shape)))
        return ReadbackBuffer(np.frombuffer(native, DTYPES[texture.format]).reshape(texture.shape), native)

    def readback_buffer(self, texture):
        """A GL pixel-pack buffer that ``read_start`` fills without waiting (gl_readback.py), else a
        ``gpu.types.Buffer`` that ``read_color`` fills in place, viewed by numpy without a copy."""
        if self._pixel_pack is not None:
            try:
                return self._pixel_pack.buffer(texture.format, texture.shape, DTYPES[texture.format])
            except RuntimeError:  # the driver would not map one (no GL 4.4 buffer storage): Blender's read
                self._pixel_pack = None
        return self.row_buffer(texture)

    @property
    def reads_without_waiting(self) -> bool:
        """Whether readback buffers are GL pixel-pack buffers (gl_readback.py), not Blender's read."""
        return self._pixel_pack is not None

    def read_start(self, texture, buffer):
        if isinstance(buffer, PixelPackBuffer):
            with self.framebuffer(texture, None).bind():
                buffer.start(texture.width, texture.height)

    def read_finish(self, texture, buffer):
        if isinstance(buffer, PixelPackBuffer):
            return buffer.wait()
        return self.read_into(texture, buffer)

    def free_readback_buffer(self, buffer):
        if isinstance(buffer, PixelPackBuffer):
            buffer.free()

    def read_into(self, texture, buffer):
        """Read through a framebuffer into the reused buffer: on llvmpipe at 1080p 3.7 ms against 7.4 ms for
        ``GPUTexture.read()`` (a fresh buffer each time) and 20 ms with the copy :meth:`read` makes."""
        framebuffer = self.framebuffer(texture, None)
        kind = "UINT" if DTYPES[texture.format] is np.uint32 else "FLOAT"
        with framebuffer.bind():
            framebuffer.read_color(0, 0, texture.width, texture.height, CHANNELS[texture.format], 0, kind,
                                   data=buffer.native)
        return buffer.array

    @property
    def compiled(self) -> int:
        """Kernels compiled so far."""
        return len(self._shaders)

    def compile(self, kernel: Kernel):
        shader = self._shaders.get(kernel)
        if shader is not None:
            return shader
        if kernel.extensions:
            raise compile_error(kernel, f"needs {', '.join(kernel.extensions)}: Blender 5.2's GPUShaderCreateInfo "
                                        "cannot enable GLSL extensions (moderngl host only)")
        started = time.perf_counter()
        with _captured_output() as log:
            shader = self._create(kernel)
        self.compile_seconds += time.perf_counter() - started
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
        try:
            return self.gpu.shader.create_from_info(shader_info(self.gpu, kernel))
        except Exception:
            return None

    def _binding(self, kernel) -> _Binding:
        """The kernel's shader and resolved bindings; equal kernels (made afresh) find the same one."""
        binding = self._bindings.get(kernel)
        if binding is None:
            binding = self._bindings[kernel] = _Binding(kernel, self.compile(kernel))
        return binding

    def dispatch(self, kernel, groups, textures, constants):
        binding = self._binding(kernel)
        binding.bind(textures, constants)
        self.gpu.compute.dispatch(binding.shader, *groups)
        self.gpu.shader.unbind()  # dispatch leaves it bound; freeing a bound shader can crash Blender
        self._flusher.dispatched(groups)  # the GPU starts on what is queued while Python records the rest

    def draw(self, raster, primitive, vertices, instances, target, depth, textures, constants, blend="ADD"):
        state = self.gpu.state
        binding = self._binding(raster)
        with self.framebuffer(target, depth).bind():
            state.viewport_set(0, 0, target.width, target.height)
            state.blend_set(_BLENDS[blend])
            state.depth_test_set("LESS_EQUAL" if depth is not None else "NONE")
            state.depth_mask_set(False)
            state.program_point_size_set(False)
            state.point_size_set(1.0)
            binding.bind(textures, constants)
            self._batch(primitive, vertices).draw_instanced(binding.shader, instance_start=0, instance_count=instances)
            state.blend_set("NONE")
            state.depth_test_set("NONE")

    def framebuffer(self, color, depth):
        """A framebuffer of these textures (either may be None), made on first use and dropped with
        either of them: a new one per draw costs a driver flush."""
        key = (id(color), id(depth))
        framebuffer = self._framebuffers.get(key)
        if framebuffer is None:
            framebuffer = self.gpu.types.GPUFrameBuffer(color_slots=color.native if color is not None else None,
                                                        depth_slot=depth.native if depth is not None else None)
            self._framebuffers[key] = framebuffer
            for texture in (color, depth):
                if texture is not None:
                    weakref.finalize(texture, self._framebuffers.pop, key, None)
        return framebuffer

    def _batch(self, primitive, vertices):
        """An attribute-less batch: the vertex shader pulls everything from textures.

        Blender needs a vertex buffer to draw; it holds one unused float per
        vertex (allocated once per size), never particle data.
        """
        key = (primitive, vertices)
        if key not in self._batches:
            vertex_format = self.gpu.types.GPUVertFormat()
            vertex_format.attr_add(id="unused", comp_type="F32", len=1, fetch_mode="FLOAT")
            buffer = self.gpu.types.GPUVertBuf(vertex_format, vertices)
            self._batches[key] = self.gpu.types.GPUBatch(type=primitive, buf=buffer)
        return self._batches[key]

    def finish(self):
        """glFinish where Blender draws with OpenGL; elsewhere a texel read, which waits for the work queued
        before it on backends that submit in order."""
        if self._gl_finish is not None:
            self._gl_finish()
        else:
            self._fence.native.read()

    def sleep_until_idle(self):
        if self._pixel_pack is not None:
            self._pixel_pack.sleep_until_idle()
