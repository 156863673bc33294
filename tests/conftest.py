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
