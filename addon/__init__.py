"""GPU Particles: millions of particles simulated, composited and baked with compute shaders.

``bpy`` is imported only inside ``register()``, so the engine (``addon.engine``)
and the hosts import anywhere: tests, the command line, the GPU benchmark.
"""

_unregister = None


def _glue_modules():
    """The Blender glue, settings first, then operators and panels (sub-panels after their parents); each registers itself."""
    from . import properties, viewport
    from .output import render_integration
    from .scene import csg
    from .ui import add_to_scene, cache_panel, csg_panel, operators, panels

    return (properties, csg, operators, add_to_scene, panels, csg_panel, cache_panel, render_integration, viewport)


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
