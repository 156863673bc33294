"""GPU Particles: millions of particles simulated, composited and baked with compute shaders.

``bpy`` is imported only inside ``register()``, so the engine (``addon.engine``)
and the hosts import anywhere: tests, the command line, the GPU benchmark.
"""

_unregister = None


def _glue_modules():
    """The Blender glue, settings first, then operators and panels (sub-panels after their parents); each registers itself."""
    from . import cache_ui, csg_scene, csg_ui, operators, panels, properties, render_integration, viewport

    return (properties, csg_scene, operators, panels, csg_ui, cache_ui, render_integration, viewport)


def register():
    global _unregister
    modules = _glue_modules()
    for module in modules:
        module.register()

    def unregister_all():
        for module in reversed(modules):
            module.unregister()

    _unregister = unregister_all


def unregister():
    global _unregister
    if _unregister is not None:
        _unregister()
        _unregister = None
