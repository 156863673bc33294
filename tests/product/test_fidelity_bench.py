"""bench/fidelity.py: our frame against Cycles' through FLIP, run end to end at a tiny size (no score checked)."""

import json
import math
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from fidelity import splat_radii  # noqa: E402

from addon.engine.draw.compositing import Camera  # noqa: E402


def test_exported_spheres_add_what_the_splat_adds():
    """A sphere of radius r px adds pi r^2 times its color: a point's coverage (at most one pixel), an additive
    sprite's coverage times half the area of its disc of at least one pixel."""
    camera = Camera.pixel_grid(64, 36)  # w = 1, one world unit a pixel
    positions = np.zeros((3, 3))
    radii = np.array([0.2, 0.5, 3.0])

    def energy(particle_type):
        system = SimpleNamespace(settings=SimpleNamespace(particle_type=particle_type))
        return math.pi * splat_radii(system, camera, positions, radii).astype(np.float64) ** 2

    coverage = np.minimum(math.pi * radii**2, 1.0)
    np.testing.assert_allclose(energy("POINT"), coverage, rtol=1e-6)
    np.testing.assert_allclose(energy("SPRITE"), coverage * 0.5 * math.pi * np.maximum(radii, 1.0) ** 2, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("frames", [True, False], ids=["frames", "error maps only"])
def test_tiny_run_writes_the_record_and_the_pictures(tmp_path, frames):
    # Cycles on the CPU: on a card's machine a first GPU render compiles OptiX's kernels (about 400 s).
    result = subprocess.run([sys.executable, "bench/fidelity.py", "--res", "64x36", "--samples", "2", "--presets",
                             "embers", "--cycles-cpu", "--out", str(tmp_path), *([] if frames else ["--no-frames"])],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (path,) = tmp_path.glob("*-fidelity.json")
    (record,) = json.loads(path.read_text())
    assert record["suite"] == "fidelity" and record["case"] == "embers" and record["samples"] == 2
    assert 0.0 <= record["flip_mean"] <= 1.0 and record["ours_ms"] > 0 and record["cycles_ms"] > 0
    assert record["energy_ratio"] > 0 and record["cycles_device"] == "CPU"
    stem = path.name.removesuffix(".json")
    assert (tmp_path / f"{stem}-embers-flip.jpg").stat().st_size > 0
    for picture in ("ours", "cycles"):
        assert (tmp_path / f"{stem}-embers-{picture}.jpg").exists() == frames
