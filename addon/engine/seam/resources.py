"""Where the data folders (shaders/, presets/) live.

In the repository they sit beside ``addon/``; in the installed extension the
packager copies them inside the package.  Both layouts are searched.
"""

from functools import cache
from pathlib import Path

PACKAGE_DIR = next(p for p in Path(__file__).resolve().parents if p.name == "engine").parent  # holds engine/, at any depth


@cache
def resource_dir(name: str) -> Path:
    """The folder ``name``, looked for once (a draw asks for the presets folder per sprite image: 17 us a look)."""
    for base in (PACKAGE_DIR, PACKAGE_DIR.parent):
        if (base / name).is_dir():
            return base / name
    raise FileNotFoundError(f"GPU Particles: data folder '{name}' is missing next to {PACKAGE_DIR}")
