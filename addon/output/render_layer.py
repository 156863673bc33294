"""The particle render layer: one frame's particle light and depth, written as EXR files.

What Blender's compositor reads while a scene renders (``compositor_nodes.py``)
and what an artist can take to another compositor.  Per frame, under the
scene's layer folder (``Scene.gpu_particles_output.layer_path``):

``light_####.exr``
    Premultiplied linear RGBA, 32-bit float.  RGB is all particle light;
    A is the coverage of the alpha-blended (sprite) effects only, so
    additive light has alpha 0.  "Alpha over" with this premultiplied
    image is therefore exact for both kinds: ``render * (1 - A) + RGB``
    adds the glow of additive particles whatever its brightness (a
    straight-alpha RGBA PNG cannot: its alpha below 1/255 rounds to 0 and
    takes the light with it) and lets smoke cover what is behind it.
``depth_####.exr``
    R: the nearest particle's depth along the camera axis in scene units (the
    meaning of Blender's depth pass, Cycles' too); 2^34 where no particle is
    (beyond the 1e10 Blender's depth pass holds where nothing was hit).
    G: the particles' shadow on the scene's surfaces, as the darkening
    ``1 - factor`` the render's color is multiplied by the factor of
    (``engine/light/surface_shadow.py``; 0: no shadow, so a blank image is
    none).  B: 0, A: 1.

A render does not write these files unless asked (*Write Layer Files*): it
hands the same pixels to the compositor in memory, as render passes of a helper
scene (``layer_scene.py``), cropped to the render's border; the files are
cropped or empty outside it as the render is.

The frame is made by the same :class:`SceneRenderer` as the bake (the same
simulation, look and occlusion against the scene's meshes), plus the depth.
"""

from __future__ import annotations

import os
from pathlib import Path

import bpy
import numpy as np

from ..engine.draw.particle_depth import FAR, ParticleDepth
from ..hosts.blender import BlenderHost
from ..scene.cache import blend_path
from ..scene.renderer import SceneRenderer, camera_of, check_effects
from ..scene.snapshot import read_snapshot
from .layer_scene import DEPTH_PASS, LIGHT_PASS, SHADOW_PASS

_SCRATCH = "GPU Particles Layer (scratch)"


def frame_file(template: str, frame: int, suffix: str) -> Path:
    """Blender's frame path rule for ``template``: the last run of ``#`` is the zero-padded
    frame, or four digits are appended when there is none; ``//`` is the blend file's folder."""
    folder, before, digits, after = frame_pattern(template)
    return Path(folder, f"{before}{frame:0{digits}d}{after}{suffix}")


def frame_pattern(template: str) -> tuple[str, str, int, str]:
    """(folder, the name before the frame number, its digits, the name after it) of :func:`frame_file`'s rule."""
    path = blend_path(template)  # a .blend never saved: UnsavedBlendError says so
    head, name = os.path.split(path)
    if "#" not in name:
        return head or ".", name, 4, ""
    end = name.rindex("#") + 1
    start = end - 1
    while start > 0 and name[start - 1] == "#":
        start -= 1
    return head or ".", name[:start], end - start, name[end:]


def layer_files(scene, frame: int) -> tuple[Path, Path]:
    """(light, depth) files of ``frame``."""
    folder = blend_path(scene.gpu_particles_output.layer_path, unsaved_folder=bpy.app.tempdir)  # removed on quit
    return frame_file(os.path.join(folder, "light_"), frame, ".exr"), frame_file(os.path.join(folder, "depth_"), frame, ".exr")


def render_size(scene) -> tuple[int, int]:
    """The render's pixel size: resolution times percentage, truncated as Blender does."""
    percent = scene.render.resolution_percentage  # in integers, as Blender: 100 px at 29% is 29, not 28.99
    return scene.render.resolution_x * percent // 100, scene.render.resolution_y * percent // 100


def border_region(scene, width: int, height: int) -> tuple[slice, slice] | None:
    """(rows, columns) of the border render's region, bottom row first, truncated as Blender's
    ``render_init_from_main`` does, in single precision: 0.7 x 90 is 63 there, 62 in double; None without a
    border."""
    render = scene.render
    if not render.use_border:
        return None

    def edge(fraction: float, size: int) -> int:
        return int(np.float32(fraction) * np.float32(size))

    return (slice(edge(render.border_min_y, height), edge(render.border_max_y, height)),
            slice(edge(render.border_min_x, width), edge(render.border_max_x, width)))


class ParticleLayer:
    """Renders a scene's particle layer frame by frame (simulation follows, as in the bake)."""

    def __init__(self, scene):
        self.scene = scene
        self.width, self.height = render_size(scene)
        host = BlenderHost()
        snapshot = read_snapshot(scene)
        check_effects(snapshot.effects, host)  # an effect that cannot draw is named, before any GPU work
        self.renderer = SceneRenderer(scene, self.width, self.height, host=host, exact_sort=True, snapshot=snapshot,
                                      shadows_on_scene=True)
        self.depth = ParticleDepth(host, self.width, self.height)
        # Reused host memory the two images are read into, both copies queued before either is waited for
        # (GL pixel-pack buffers where the host has them: bench/final_render.py, layer_ms).
        self.buffers = (host.readback_buffer(self.renderer.resources.frame), host.readback_buffer(self.depth.image))
        self.shadow_buffer = None  # made when a frame first has the particles' shadow on the scene
        self.shadow: np.ndarray | None = None  # the last rendered frame's darkening of the scene's surfaces

    def render(self, frame: int) -> tuple[np.ndarray, np.ndarray]:
        """(premultiplied RGBA light, depth) of ``frame``, rows bottom to top, read-only views of host
        memory that the next frame reuses; ``shadow`` the same of the darkening of the scene's surfaces (None:
        no shadow on the scene this frame)."""
        renderer = self.renderer
        renderer.draw(frame)  # its light's alpha is the sprites' coverage, 0 under additive light
        self.depth.clear()
        camera = camera_of(self.scene, self.width, self.height)
        world_to_view = np.array(self.scene.camera.matrix_world.inverted())
        systems = list(renderer.drawn)  # the effects whose emitter the render sees
        if renderer.cloud is not None:
            systems.append(renderer.cloud.points)
        for system in systems:
            self.depth.add(system, camera, world_to_view, renderer.resources.look_texture(system))
        host, images, buffers = renderer.host, [renderer.resources.frame, self.depth.image], list(self.buffers)
        surface = renderer.surface_shadow
        if surface is not None and surface.drawn:
            if self.shadow_buffer is None:
                self.shadow_buffer = host.readback_buffer(surface.image)
            images.append(surface.image)
            buffers.append(self.shadow_buffer)
        for image, buffer in zip(images, buffers):
            host.read_start(image, buffer)
        light, depth_bits, *shadow = (host.read_finish(image, buffer) for image, buffer in zip(images, buffers))
        renderer.take_stats()
        self.shadow = shadow[0] if shadow else None
        return light, depth_bits.view(np.float32)

    def layer(self, frame: int) -> dict[str, np.ndarray]:
        """``frame``'s layer as the helper scene's passes (``layer_scene.PASSES``: the light, RGBA, the depth and
        the shadow's darkening) hold it: the render's pixels, or its border's, which is all a border render
        renders."""
        light, depth = self.render(frame)
        shadow = np.zeros_like(depth) if self.shadow is None else self.shadow
        region = border_region(self.scene, self.width, self.height)
        if region is not None:
            light, depth, shadow = light[region], depth[region], shadow[region]
        return {LIGHT_PASS.name: light, DEPTH_PASS.name: depth, SHADOW_PASS.name: shadow}

    def free(self) -> None:
        """Release the readback buffers (main thread)."""
        for buffer in (*self.buffers, *([self.shadow_buffer] if self.shadow_buffer is not None else [])):
            self.renderer.host.free_readback_buffer(buffer)
        self.buffers, self.shadow_buffer = (), None

    def write(self, frame: int, passes: dict[str, np.ndarray]) -> tuple[Path, Path]:
        """Write ``frame``'s :meth:`layer` as its two files (each under a temporary name, then renamed): the
        render's size, cropped to its border or empty outside it as the render is."""
        light, depth, shadow = (passes[p.name] for p in (LIGHT_PASS, DEPTH_PASS, SHADOW_PASS))
        region = border_region(self.scene, self.width, self.height)
        if region is not None and not self.scene.render.use_crop_to_border:
            light, depth, shadow = (_in_frame(pixels, region, (self.height, self.width), empty)
                                    for pixels, empty in ((light, 0.0), (depth, FAR), (shadow, 0.0)))
        planes = np.zeros((*depth.shape, 4), np.float32)
        planes[..., 0], planes[..., 1], planes[..., 3] = depth, shadow, 1.0  # the depth in R, the shadow in G
        paths = layer_files(self.scene, frame)
        paths[0].parent.mkdir(parents=True, exist_ok=True)
        for plane, path in zip((light, planes), paths):
            write_exr(plane, path)
        return paths


def _in_frame(pixels: np.ndarray, region, size: tuple[int, int], empty: float) -> np.ndarray:
    """A border's ``pixels`` in a frame of ``size`` (rows, columns) that holds ``empty`` around them."""
    frame = np.full(size + pixels.shape[2:], empty, np.float32)
    frame[region] = pixels
    return frame


def write_exr(pixels: np.ndarray, path: Path) -> None:
    """Float RGBA (height, width, 4), bottom row first, to a 32-bit float EXR as is (linear, premultiplied)."""
    height, width, _ = pixels.shape
    image = bpy.data.images.get(_SCRATCH)
    if image is None or tuple(image.size) != (width, height):
        if image is not None:
            bpy.data.images.remove(image)
        image = bpy.data.images.new(_SCRATCH, width, height, alpha=True, float_buffer=True)
        # Saved as is only when tagged Non-Color: Image.save() of a "Linear Rec.709" float image
        # writes display-encoded values (verified on 5.2.3).  The values are linear Rec.709.
        image.colorspace_settings.name = "Non-Color"
    image.pixels.foreach_set(np.ascontiguousarray(pixels, np.float32).ravel())
    image.file_format = "OPEN_EXR"
    partial = path.with_name(f".{path.name}.partial.exr")
    image.filepath_raw = str(partial)
    try:
        image.save()
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def free_scratch() -> None:
    image = bpy.data.images.get(_SCRATCH)
    if image is not None:
        bpy.data.images.remove(image)
