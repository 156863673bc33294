"""bench/exr_encode.py's writer variants write every frame whole and as given (no timings checked): the thread
variants through FrameWriter, the process variant through shared memory and spawned writer processes."""

import sys

import numpy as np
import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import exr_encode  # noqa: E402


@pytest.mark.parametrize("variant", ["pool", "own-nice", "procs-nice"])
def test_writer_variants_write_every_frame_as_given(tmp_path, variant):
    pixels = exr_encode.synthetic_frame(40, 24)
    row = exr_encode.concurrent_writers("tiny", pixels, tmp_path, frames=5, workers=2, variant=variant)
    assert row["workers"] == 2 and row["fps"] > 0 and row["core_ms"] >= 0  # the files were checked inside
    assert list(tmp_path.iterdir()) == [], "the measurement removes its frames, and no partial file is left"


def test_concurrent_writers_checks_the_frames_it_wrote(tmp_path, monkeypatch):
    """The check that makes the test above mean something: a writer that loses a channel is caught."""
    from addon.output import frame_writer

    real = frame_writer.encode
    monkeypatch.setattr(frame_writer, "encode", lambda path, pixels, fmt: real(path, pixels * 0, fmt))
    with pytest.raises(AssertionError):
        exr_encode.concurrent_writers("tiny", exr_encode.synthetic_frame(40, 24), tmp_path, 3, 1, "own")
    assert np.any(exr_encode.synthetic_frame(40, 24) != 0)
