"""The host's glFlush every few dispatches (addon/hosts/gl_flush.py): found on OpenGL, absent elsewhere,
counted right, and the GPU's results unchanged while it flushes."""

import numpy as np
from gpu_fill import RANDOM, expected
from test_scan import run_scan

from addon.engine.reference import scan as ref_scan
from addon.hosts.gl_flush import FLUSH_EVERY, Flusher, gl_flush


def test_opengl_gets_the_gl_librarys_flush_and_other_backends_none():
    assert callable(gl_flush("OPENGL"))
    assert gl_flush("VULKAN") is None and gl_flush("METAL") is None
    assert gl_flush("OPENGL", platform="an-unknown-os") is None


def test_flushes_once_every_so_many_dispatches():
    flushes = []
    flusher = Flusher(lambda: flushes.append(1), every=4)
    for _ in range(10):
        flusher.dispatched()
    assert len(flushes) == 2 and flusher.pending == 2
    Flusher(None).dispatched()  # no GL: nothing to call


def test_the_blender_host_flushes_while_it_dispatches_and_results_stay_exact(host, monkeypatch):
    assert host._flusher.flush is not None  # Blender draws with OpenGL here
    real, calls = host._flusher.flush, []
    monkeypatch.setattr(host._flusher, "flush", lambda: (calls.append(1), real()))
    got, total, _ = run_scan(host, 300_007, RANDOM, inclusive=False)
    data = expected(300_007, RANDOM, 7)
    np.testing.assert_array_equal(got, ref_scan.scan(data, False))
    assert total == ref_scan.total(data)
    assert calls and FLUSH_EVERY > 1
