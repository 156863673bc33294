"""GPU hosts: the same kernels on Blender's ``gpu`` module or on moderngl.

Both implement :class:`addon.hosts.base.Host`; the engine's recordings only
talk to that interface.
"""
