"""GPU Particles: millions of particles simulated, composited and baked with compute shaders.

``bpy`` is imported only inside ``register()``, so the engine (``addon.engine``)
and the hosts import anywhere: tests, the command line, the GPU benchmark.
"""

_unregister = None


def register():
    global _unregister
    import bpy

    from . import cache_ui, csg_ui, operators, panels, properties, viewport

    register_classes, unregister_classes = bpy.utils.register_classes_factory(
        properties.CLASSES + operators.CLASSES + panels.CLASSES + csg_ui.CLASSES + cache_ui.CLASSES
    )
    register_classes()
    properties.register_properties()
    csg_ui.register_properties()
    viewport.register()

    def unregister_all():
        viewport.unregister()
        csg_ui.unregister_properties()
        properties.unregister_properties()
        unregister_classes()

    _unregister = unregister_all


def unregister():
    global _unregister
    if _unregister is not None:
        _unregister()
        _unregister = None
