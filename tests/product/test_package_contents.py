"""The extension zip is the product apart from the lab (no Blender needed; test_package.py installs it).

Left out: the numpy reference, the moderngl host and what only the lab reads (``package.LAB_MODULES``), and
the shader files of the kernels only the tests and benchmarks dispatch (``registry.LAB_KERNELS``).  In: every
file a product kernel is made of, and no shipped module imports one that was left out.
"""

import ast
import sys
import zipfile
from pathlib import Path

import pytest

from addon.engine import registry

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import package  # noqa: E402


@pytest.fixture(scope="module")
def names(tmp_path_factory) -> set[str]:
    return set(zipfile.ZipFile(package.build(tmp_path_factory.mktemp("dist"))).namelist())


def _module(name: str) -> tuple[str, ...]:
    """The dotted parts of a .py path relative to the package root (``()`` for its ``__init__.py``)."""
    parts = tuple(Path(name).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imported(name: str, source: str):
    """(line, module parts, None) for every module a file imports relatively and every name it imports from
    one (a name that is no module is in the source tree neither); (line, None, module) for absolute imports."""
    package_parts = _module(name) if name.endswith("__init__.py") else _module(name)[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package_parts[:len(package_parts) - node.level + 1] + tuple(filter(None, [node.module]))
            base = tuple(part for module in base for part in module.split("."))
            yield node.lineno, base, None
            yield from ((node.lineno, (*base, alias.name), None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, None, node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, None, alias.name) for alias in node.names)


def test_zip_leaves_the_lab_out(names):
    assert not [n for n in names if n.startswith(package.LAB_MODULES)]
    assert {"engine/reference/draw/compositing.py", "hosts/moderngl.py"} & names == set()
    assert {f"shaders/{kernel}.glsl" for kernel in registry.LAB_KERNELS} & names == set()


def test_zip_holds_every_file_the_product_kernels_are_made_of(names):
    needed = {f"shaders/{file}" for file in registry.shader_files(registry.product_kernels())}
    assert {n for n in names if n.startswith("shaders/")} == needed
    assert {"shaders/splat_aggregate.glsl", "shaders/include/common.glsl"} <= needed


def test_no_shipped_module_imports_one_left_out(names):
    """Imports inside functions too: the command line and the panels import on use."""
    shipped = {_module(n) for n in names if n.endswith(".py")}
    source = {_module(p.relative_to(ROOT / "addon").as_posix()) for p in (ROOT / "addon").rglob("*.py")}
    problems = []
    for name in sorted(n for n in names if n.endswith(".py")):
        for line, parts, absolute in _imported(name, (ROOT / "addon" / name).read_text()):
            if parts in source and parts not in shipped:
                problems.append(f"{name}:{line} imports {'.'.join(parts)}, left out of the zip")
            if absolute and absolute.split(".")[0] in ("addon", "bench", "tests", "moderngl"):
                problems.append(f"{name}:{line} imports {absolute}, which the extension does not have")
    assert not problems, "\n".join(problems)
