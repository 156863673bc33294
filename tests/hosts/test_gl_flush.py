"""The host's glFlush as work queues up (addon/hosts/gl_flush.py): found on OpenGL, absent elsewhere,
counted right, and the GPU's results unchanged while it flushes; its glFinish, what the host's finish waits on."""

import numpy as np
import pytest

from addon.engine.primitives import scan
from addon.engine.reference.primitives import scan as ref_scan
from addon.hosts.gl_flush import Flusher, gl_finish, gl_flush
from tests.engine.primitives.test_scan import run_scan
from tests.gpu_fill import RANDOM, expected, fill


def test_opengl_on_a_hardware_gpu_gets_the_gl_librarys_flush_and_the_rest_none():
    assert callable(gl_flush("OPENGL", "NVIDIA H100 80GB HBM3/PCIe/SSE2"))
    assert gl_flush("VULKAN", "NVIDIA H100") is None and gl_flush("METAL", "Apple M3") is None
    assert gl_flush("OPENGL", "llvmpipe (LLVM 15.0.6, 256 bits)") is None  # software: nothing to overlap
    assert gl_flush("OPENGL", "NVIDIA H100", platform="an-unknown-os") is None


def test_opengl_gets_the_gl_librarys_finish_on_any_renderer_and_the_rest_none():
    assert callable(gl_finish("OPENGL"))
    assert gl_finish("VULKAN") is None and gl_finish("METAL") is None
    assert gl_finish("OPENGL", platform="an-unknown-os") is None


def test_the_blender_host_finishes_with_gl_finish_and_the_results_stay_exact(host, monkeypatch):
    """Blender's host waits for the GPU with glFinish where it draws with OpenGL (reading a texel back waits
    only for what wrote that texel on NVIDIA): the real call into Blender's context, then the work read back."""
    if getattr(host, "_gl_finish", None) is None:
        pytest.skip("this host is not Blender's on OpenGL")
    real, calls = host._gl_finish, []
    monkeypatch.setattr(host, "_gl_finish", lambda: (calls.append(1), real()))
    count = 100_003
    width, rows = scan.linear_size(count, 4096)
    values, out = host.texture("values", width, rows, "R32UI"), host.texture("out", width, rows, "R32UI")
    fill(host, values, count, RANDOM, 7)
    scan.Scan(host, count).run(values, out, count, inclusive=True)
    host.finish()
    assert calls == [1]
    np.testing.assert_array_equal(host.read(out).ravel()[:count], ref_scan.scan(expected(count, RANDOM, 7), True))


def test_flushes_once_so_many_workgroups_wait():
    flushes = []
    flusher = Flusher(lambda: flushes.append(1), groups=1000, clock=lambda: 0.0)  # no time passes
    flusher.dispatched((16384, 1, 1))  # a big dispatch goes at once
    assert len(flushes) == 1 and flusher.pending == 0
    for _ in range(9):
        flusher.dispatched((10, 5, 2))  # small ones together
    assert len(flushes) == 1 and flusher.pending == 900
    flusher.dispatched((100, 1, 1))
    assert len(flushes) == 2 and flusher.pending == 0
    Flusher(None).dispatched((1 << 20, 1, 1))  # no GL: nothing to call


def test_a_dispatch_long_after_the_last_flush_goes_at_once():
    """A draw's first dispatch, however small, is not kept back for the workgroups of the ones after it."""
    flushes, now = [], [10.0]
    flusher = Flusher(lambda: flushes.append(now[0]), groups=1000, idle_s=1.0, clock=lambda: now[0])
    flusher.dispatched((4, 1, 1))  # nothing flushed before: the GPU waits for this one
    assert flushes == [10.0] and flusher.pending == 0
    now[0] += 0.5
    flusher.dispatched((4, 1, 1))  # soon after: kept with the next
    assert flushes == [10.0] and flusher.pending == 4
    now[0] += 0.5
    flusher.dispatched((4, 1, 1))  # the last flush idle_s old
    assert flushes == [10.0, 11.0] and flusher.pending == 0


def test_the_blender_host_flushes_while_it_dispatches_and_results_stay_exact(host, monkeypatch):
    """The real glFlush into Blender's context after every dispatch (on a hardware GPU the host does it
    itself; here, llvmpipe, it is switched on for the test)."""
    real, calls = gl_flush("OPENGL", "a hardware GPU"), []
    monkeypatch.setattr(host._flusher, "flush", lambda: (calls.append(1), real()))
    monkeypatch.setattr(host._flusher, "groups", 1)  # after every dispatch
    got, total, _ = run_scan(host, 300_007, RANDOM, inclusive=False)
    data = expected(300_007, RANDOM, 7)
    np.testing.assert_array_equal(got, ref_scan.scan(data, False))
    assert total == ref_scan.total(data)
    assert len(calls) >= 3  # the scan's levels, each flushed
