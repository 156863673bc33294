"""The helper scene whose render engine hands the particle layer to the compositor as render passes.

A generated full-size Image node costs Blender 5.2's compositor about as much as the whole render of a
Workbench frame (290 against 172 ms at 1080p on an H200, whether its pixels change or not), while a Render
Layers node reads render passes as they are.  So every scene that composites particles gets a helper scene,
``GPU Particles Layer (<scene>)``, rendered by :class:`GPU_PARTICLES_RE_layer`: for each frame Blender renders
every scene that the compositing tree's Render Layers nodes name, at the main render's size, percentage and
border, after the main render and before compositing (``do_render_compositor_scenes``).  Its render copies the
layer that ``render_pre`` made for that very frame into its passes; a frame without one gets the empty layer
(no light, every particle infinitely far), which makes the chain an exact pass-through.

The passes are :data:`PASSES`: one more image of the layer (a shadow term, say) is one more :class:`LayerPass`
there and one more array under its name in :func:`hand_over`; the Render Layers node then has a socket of that
name.  The helper is found through the node that reads it (``compositor_nodes.LIGHT``), so a renamed helper keeps
working and a deleted one is made again by the next render or *Set Up Compositing*.  Opened without the add-on,
the helper renders with Blender's fallback engine: an empty scene, transparent film, its depth far, which the
chain's depth test passes through.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..engine.draw.particle_depth import FAR

ENGINE = "GPU_PARTICLES_LAYER"


@dataclass(frozen=True)
class LayerPass:
    """One image of the particle layer as a render pass of the helper scene."""

    name: str  # the pass, and the socket of the Render Layers node
    channels: str  # Blender's channel ids ("RGBA", "Z", "X"): their count is the pass's
    kind: str  # "COLOR" or "VALUE"
    empty: float  # every channel of a pixel without particles: the chain passes the render through there

    def nothing(self, height: int, width: int) -> np.ndarray:
        return np.full((height, width, len(self.channels)), self.empty, np.float32)


LIGHT_PASS = LayerPass("Combined", "RGBA", "COLOR", 0.0)  # premultiplied light, alpha the sprites' coverage
DEPTH_PASS = LayerPass("Depth", "Z", "VALUE", FAR)  # the nearest particle's depth along the camera axis
# the particles' shadow on the scene's surfaces: the darkening 1 - factor (engine/light/surface_shadow.py)
SHADOW_PASS = LayerPass("Particle Shadow", "X", "VALUE", 0.0)
PASSES = [LIGHT_PASS, DEPTH_PASS, SHADOW_PASS]
_OWN = {LIGHT_PASS.name, DEPTH_PASS.name}  # Blender's own passes (Combined; Depth by use_pass_z): not added

_handed: dict[str, tuple[int, dict[str, np.ndarray]]] = {}  # helper scene name: (frame, pixels by pass name)


def hand_over(helper: str, frame: int, passes: dict[str, np.ndarray]) -> None:
    """The layer of ``frame`` for the next render of the helper scene named ``helper`` (bottom row first, the
    render's size or its border's)."""
    _handed[helper] = (frame, passes)


def handed(helper: str, frame: int) -> dict[str, np.ndarray]:
    """The pixels handed over for ``frame`` of the helper named ``helper`` by pass name (none: the empty layer)."""
    handed_frame, passes = _handed.get(helper, (None, {}))
    return passes if handed_frame == frame else {}


def withdraw(helper: str | None = None) -> None:
    """The helper (every helper when None) renders the empty layer until the next hand-over."""
    if helper is None:
        _handed.clear()
    else:
        _handed.pop(helper, None)


def helper_name(scene) -> str:
    return f"GPU Particles Layer ({scene.name})"


def is_helper(scene) -> bool:
    return scene is not None and scene.render.engine == ENGINE


def ensure_helper(scene, helper=None):
    """``helper`` (the scene the node reads) when it is one of ours, else a helper made for ``scene``; its
    camera follows the scene's (Blender refuses a compositing scene without one)."""
    if not is_helper(helper):
        helper = bpy.data.scenes.get(helper_name(scene))
        if not is_helper(helper) or helper.library is not None:
            helper = bpy.data.scenes.new(helper_name(scene))
            helper.render.engine = ENGINE
            helper.render.film_transparent = True  # Blender's fallback engine (no add-on): nothing, see-through
            helper.view_layers[0].use_pass_z = True
            helper.view_layers[0].update()  # evaluated once: a render that makes it (render_init) crashed copying it
    if helper.camera != scene.camera and scene.camera is not None:
        helper.camera = scene.camera
    return helper


class GPU_PARTICLES_RE_layer(bpy.types.RenderEngine):
    """Renders the particle layer that the add-on made for this frame into the passes of its helper scene."""

    bl_idname = ENGINE
    bl_label = "GPU Particles Layer"
    bl_use_postprocess = True  # (without it Blender renders no scene for the compositor)

    def render(self, depsgraph):
        scene = depsgraph.scene
        for layer_pass in PASSES:
            if layer_pass.name not in _OWN:
                self.add_pass(layer_pass.name, len(layer_pass.channels), layer_pass.channels)
        result = self.begin_result(0, 0, self.resolution_x, self.resolution_y)
        height, width = result.resolution_y, result.resolution_x  # the border's when there is one
        pixels = handed(scene.name, scene.frame_current)
        passes = result.layers[0].passes
        for layer_pass in PASSES:
            image = pixels.get(layer_pass.name)
            if image is not None and image.shape[:2] != (height, width):
                print(f"GPU Particles: the layer of '{scene.name}' is {image.shape[1]}x{image.shape[0]}, its render "
                      f"{width}x{height}: rendered without particles")
                image = None
            if image is None:
                image = layer_pass.nothing(height, width)
            passes[layer_pass.name].rect.foreach_set(np.ascontiguousarray(image, np.float32).ravel())
        self.end_result(result)

    def update_render_passes(self, scene=None, renderlayer=None):
        for layer_pass in PASSES:
            self.register_pass(scene, renderlayer, layer_pass.name, len(layer_pass.channels), layer_pass.channels,
                               layer_pass.kind)


def register():
    bpy.utils.register_class(GPU_PARTICLES_RE_layer)


def unregister():
    withdraw()
    bpy.utils.unregister_class(GPU_PARTICLES_RE_layer)
