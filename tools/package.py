"""Build dist/gpu_particles-<version>.zip, the extension Blender installs.

The zip's root is the add-on package (``addon/``'s contents) with the
manifest, ``shaders/`` and ``presets/`` beside ``__init__.py``.  What only the
lab uses stays out: the numpy reference, the moderngl host, ``python -m
addon.hosts`` and the registry (``LAB_MODULES``), and the shader files of the
kernels only the tests and benchmarks dispatch (``registry.LAB_KERNELS``):
``shaders/`` ships what the product's kernels are made of.
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from addon.engine import registry  # noqa: E402

SKIP_PARTS = {"__pycache__"}
# Under addon/: the numpy reference (the tests' oracle), the benchmarks' host, the kernel printer
# (``make kernel``) and the list of every kernel it and the tests read.
LAB_MODULES = ("engine/reference/", "hosts/moderngl.py", "hosts/__main__.py", "engine/registry.py")


def manifest_version() -> str:
    text = (ROOT / "blender_manifest.toml").read_text()
    match = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if not match:
        raise SystemExit("package: blender_manifest.toml has no version")
    return match.group(1)


def _files_under(folder: Path):
    """(path, path relative to ``folder`` as posix) of every file under ``folder``, caches left out."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not SKIP_PARTS & set(path.parts) and path.suffix != ".pyc":
            yield path, path.relative_to(folder).as_posix()


def package_files():
    """(path on disk, name in the zip) for everything the extension ships."""
    yield ROOT / "blender_manifest.toml", "blender_manifest.toml"
    yield from ((path, name) for path, name in _files_under(ROOT / "addon") if not name.startswith(LAB_MODULES))
    shaders = registry.shader_files(registry.product_kernels())
    yield from ((path, f"shaders/{name}") for path, name in _files_under(ROOT / "shaders") if name in shaders)
    yield from ((path, f"presets/{name}") for path, name in _files_under(ROOT / "presets"))


def build(dist: Path = ROOT / "dist") -> Path:
    dist.mkdir(exist_ok=True)
    target = dist / f"gpu_particles-{manifest_version()}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, name in package_files():
            archive.write(path, name)
    return target


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist"))
