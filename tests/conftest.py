"""Shared fixtures: one Blender GPU host per test session (bpy + gpu.init())."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def host():
    from addon.hosts.blender import BlenderHost

    return BlenderHost()


@pytest.fixture
def rng(request):
    import numpy as np

    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


@pytest.fixture
def scene(host, tmp_path):
    """A fresh factory scene with the add-on registered, a camera and an emitter empty.

    Bakes go to ``tmp_path / "frames" / "f_####"`` as PNG, 64x36, frames 1-4; render layers to ``tmp_path / "layer"``.
    """

    import addon
    from addon.cli import build_scene
    from addon.engine.presets import load_preset

    preset = load_preset("default")
    bpy_scene, emitter = build_scene(preset, (1, 4), (64, 36), tmp_path / "frames")
    addon.register()
    bpy_scene.gpu_particles_output.bake_path = str(tmp_path / "frames" / "f_####")
    bpy_scene.gpu_particles_output.layer_path = str(tmp_path / "layer") + "/"  # what a render writes
    yield bpy_scene
    addon.unregister()


def add_effect(count=2000, **values):
    """Add an effect to the active object through the operator, then override settings."""
    import bpy

    bpy.ops.gpu_particles.add(preset="default")
    effect = bpy.context.active_object.gpu_particles.active_effect
    effect.count = count
    for name, value in values.items():
        setattr(effect, name, value)
    return effect


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a large GPU case (seconds on llvmpipe), still part of the suite")
