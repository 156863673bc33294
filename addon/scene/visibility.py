"""Which objects the particles treat as there: render visibility for renders and bakes, viewport visibility
for the overlay.

A render of a view layer sees an object when the object is enabled in renders (``hide_render`` off) and at
least one of its collections is reached from the view layer through collections that are neither excluded
(the view layer's checkbox) nor disabled in renders; what the viewport shows (``H``, *Disable in Viewports*)
plays no part.  Such an object is seen by the camera as itself, as a holdout (the object's or its
collection's *Holdout*: it cuts out what is behind it) or, in Cycles, not at all (*Indirect Only*: it
lights and shadows, the camera does not see it; other engines render it as usual).

The particles follow it: an emitter's particles draw where the camera sees the emitter as itself; a mesh
hides the particles behind it where the camera sees it, as itself or as a holdout; every mesh that renders
casts its shadow on them.  The viewport overlay follows what the viewport shows instead
(``Object.visible_get``: hidden, disabled in viewports, a hidden or excluded collection).
"""

from __future__ import annotations

CAMERA, HOLDOUT, INDIRECT = "CAMERA", "HOLDOUT", "INDIRECT"  # how a render sees an object that renders


def render_view_layer(scene):
    """The view layer whose visibility a render or bake of ``scene`` follows: the first that renders
    (*Use for Rendering*), else the first (None without one)."""
    layers = scene.view_layers
    return next((layer for layer in layers if layer.use), layers[0] if len(layers) else None)


def layer_depsgraph(view_layer):
    """``view_layer``'s depsgraph, evaluated first where Blender has made none yet (a view layer other than
    the active one, a scene no window shows)."""
    if view_layer.depsgraph is None:
        view_layer.update()
    return view_layer.depsgraph


def _rendered(layer_collection, found: set) -> None:
    """Add to ``found`` (as pointers) the objects of ``layer_collection`` and its children that a render reaches:
    an excluded or render-disabled collection hides its own objects and its children's."""
    if layer_collection.exclude or layer_collection.collection.hide_render:
        return
    found.update(obj.as_pointer() for obj in layer_collection.collection.objects)
    for child in layer_collection.children:
        _rendered(child, found)


class RenderVisibility:
    """How a render of ``view_layer`` sees each object, worked out once (a frame's: visibility can be keyed)."""

    def __init__(self, view_layer, engine: str):
        self.view_layer = view_layer
        self.cycles = engine == "CYCLES"  # Indirect Only is Cycles' alone
        self._reached = set()
        _rendered(view_layer.layer_collection, self._reached)

    def seen(self, obj) -> str | None:
        """CAMERA, HOLDOUT or INDIRECT (see the module), None where ``obj`` does not render."""
        obj = obj.original
        if obj.hide_render or obj.as_pointer() not in self._reached:
            return None
        if obj.holdout_get(view_layer=self.view_layer):  # the object's own Holdout or a collection's
            return HOLDOUT
        if self.cycles and obj.indirect_only_get(view_layer=self.view_layer):
            return INDIRECT
        return CAMERA

    def shows_particles(self, obj) -> bool:
        """Whether the effects on ``obj`` draw: the camera sees it as itself."""
        return self.seen(obj) == CAMERA

    def occludes(self, obj) -> bool:
        """Whether ``obj`` hides what is behind it from the camera (a holdout too: it cuts the particles out)."""
        return self.seen(obj) in (CAMERA, HOLDOUT)

    def shadows(self, obj) -> bool:
        """Whether ``obj`` renders at all, and so shadows the particles (a holdout or indirect-only one too)."""
        return self.seen(obj) is not None


class ViewportVisibility:
    """What the 3D viewport of ``view_layer`` shows (None: the context's), for the overlay's emitters (its
    occluders and shadows: ``depth_prepass.may_occlude``, the same rule kept between edits)."""

    def __init__(self, view_layer=None):
        self.view_layer = view_layer

    def shows_particles(self, obj) -> bool:
        return obj.original.visible_get(view_layer=self.view_layer)


def render_visibility(scene, depsgraph) -> RenderVisibility:
    """The render visibility of ``depsgraph``'s view layer, with ``scene``'s render engine."""
    return RenderVisibility(depsgraph.view_layer, scene.render.engine)
