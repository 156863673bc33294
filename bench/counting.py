"""A product host that counts what it is asked to do: the GPU waits (``read``, ``finish``) and the work queued.

It changes nothing: every call goes to :class:`~addon.hosts.blender.BlenderHost`
as it is.  The viewport test counts a draw's GPU waits with it, the benchmark
a draw's dispatches, draws and readbacks.  ``timed_passes`` times a host's passes one by one instead (the export
suite's profiles).
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager

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


@contextmanager
def timed_passes(host):
    """Inside: the GPU waited for after every clear and dispatch (a fence, hosts/gl_readback.py, where the host
    has one; llvmpipe runs each before it returns) and each read; yields a Counter of ms by kernel name, "clear" and
    "read", where a frame's GPU time goes.  The waits cost a little each: for a profile, not for timings."""
    spent = Counter()

    def timed(name, label):
        real = getattr(host, name)

        def call(*args, **kwargs):
            started = time.perf_counter()
            result = real(*args, **kwargs)
            host.sleep_until_idle()
            spent[label(args)] += (time.perf_counter() - started) * 1e3
            return result
        return call

    for name, label in (("dispatch", lambda args: args[0].name), ("clear", lambda args: "clear"),
                        ("read", lambda args: "read"), ("read_rows", lambda args: "read")):
        setattr(host, name, timed(name, label))
    try:
        yield spent
    finally:
        for name in ("dispatch", "clear", "read", "read_rows"):
            delattr(host, name)
