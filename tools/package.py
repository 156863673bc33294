"""Build dist/gpu_particles-<version>.zip, the extension Blender installs.

The zip's root is the add-on package (``addon/``'s contents) with the
manifest, ``shaders/`` and ``presets/`` beside ``__init__.py``.
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP_PARTS = {"__pycache__"}


def manifest_version() -> str:
    text = (ROOT / "blender_manifest.toml").read_text()
    match = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if not match:
        raise SystemExit("package: blender_manifest.toml has no version")
    return match.group(1)


def package_files():
    """(path on disk, name in the zip) for everything the extension ships."""
    yield ROOT / "blender_manifest.toml", "blender_manifest.toml"
    for folder, prefix in ((ROOT / "addon", ""), (ROOT / "shaders", "shaders/"), (ROOT / "presets", "presets/")):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not SKIP_PARTS & set(path.parts) and path.suffix != ".pyc":
                yield path, prefix + path.relative_to(folder).as_posix()


def build(dist: Path = ROOT / "dist") -> Path:
    dist.mkdir(exist_ok=True)
    target = dist / f"gpu_particles-{manifest_version()}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, name in package_files():
            archive.write(path, name)
    return target


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist"))
