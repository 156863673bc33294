"""A product host that counts what it is asked to do: the GPU waits (``read``, ``finish``) and the work queued.

It changes nothing: every call goes to :class:`~addon.hosts.blender.BlenderHost`
as it is.  The viewport test counts a draw's GPU waits with it, the benchmark
a draw's dispatches, draws and readbacks.
"""

from __future__ import annotations

from collections import Counter

from addon.hosts.blender import BlenderHost

WAITS = ("read", "finish")  # calls that block until the GPU has caught up


class CountingHost(BlenderHost):
    def __init__(self):
        self.calls = Counter()
        super().__init__()
        self.calls.clear()  # the host's own fence texture is not the caller's

    def waits(self) -> int:
        return sum(self.calls[name] for name in WAITS)

    def read(self, texture):
        self.calls["read"] += 1
        return super().read(texture)

    def finish(self):
        self.calls["finish"] += 1
        super().finish()

    def dispatch(self, kernel, groups, textures, constants):
        self.calls["dispatch"] += 1
        super().dispatch(kernel, groups, textures, constants)

    def draw(self, *args, **kwargs):
        self.calls["draw"] += 1
        super().draw(*args, **kwargs)

    def clear(self, texture, value=0):
        self.calls["clear"] += 1
        super().clear(texture, value)

    def texture(self, name, width, height, format, data=None):
        self.calls["upload" if data is not None else "texture"] += 1
        return super().texture(name, width, height, format, data)
