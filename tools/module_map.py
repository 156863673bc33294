"""Write the module map of docs/features.md from the code: every module under ``addon/``, package by package,
with the first sentence of its docstring.

The map sits between two markers in docs/features.md, and only that part is rewritten, so the prose around it
stays hand-written while the list of modules cannot fall behind the code (tests/product/test_docs.py fails when it has).
Pure Python: it reads the files, it imports nothing of the add-on.

    python tools/module_map.py           # rewrite the map in docs/features.md (make module-map)
    python tools/module_map.py --check   # exit 1, saying so, when the map is stale
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FEATURES = ROOT / "docs" / "features.md"
COMMAND = "python tools/module_map.py"
BEGIN = f"<!-- module map: written by `{COMMAND}` from each module's docstring; edit the docstrings, not this -->"
END = "<!-- end of the module map -->"
_SENTENCE_END = re.compile(r"(?<=[.?!])\s{2,}")  # the code's docstrings put two spaces after a sentence


class ModuleMapError(ValueError):
    """A module the map cannot describe, or a features.md without the map's markers."""


def summary(path: Path, root: Path) -> str:
    """The first sentence of the module's docstring (its first paragraph up to two spaces after a full stop)."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    if not docstring:
        raise ModuleMapError(f"{path.relative_to(root).as_posix()} has no docstring: its first sentence is the "
                             f"module's line in the module map")
    paragraph = " ".join(line.strip() for line in docstring.split("\n\n")[0].splitlines())
    return _SENTENCE_END.split(paragraph)[0].replace("|", "\\|")


def packages(root: Path) -> dict[Path, list[Path]]:
    """Every package under ``root / "addon"`` (a folder with ``__init__.py``) and its modules, sorted by path."""
    found: dict[Path, list[Path]] = {}
    for init in sorted((root / "addon").rglob("__init__.py")):
        found[init.parent] = sorted(init.parent.glob("*.py"), key=lambda p: (p.name != "__init__.py", p.name))
    return found


def module_map(root: Path = ROOT) -> str:
    """The map's markdown: one table a package, its ``__init__.py`` first, then its modules by name."""
    lines = []
    for package, modules in packages(root).items():
        lines += [f"#### `{package.relative_to(root).as_posix()}/`", "", "| module | what it is |", "|---|---|"]
        lines += [f"| `{module.name}` | {summary(module, root)} |" for module in modules]
        lines.append("")
    return "\n".join(lines)


def with_map(text: str, new_map: str) -> str:
    """``text`` (features.md) with the part between the markers replaced by ``new_map``."""
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        raise ModuleMapError(f"{FEATURES.relative_to(ROOT).as_posix()} lacks the module map's markers, "
                             f"'{BEGIN}' then '{END}'")
    return f"{text[:begin + len(BEGIN)]}\n\n{new_map}\n{text[end:]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether the map is stale (exit 1)")
    args = parser.parse_args(argv)
    try:
        text = FEATURES.read_text(encoding="utf-8")
        written = with_map(text, module_map())
    except ModuleMapError as error:
        print(f"module map: {error}", file=sys.stderr)
        return 2
    if written == text:
        return 0
    if args.check:
        print(f"module map: {FEATURES.relative_to(ROOT).as_posix()} is stale; run `{COMMAND}`", file=sys.stderr)
        return 1
    FEATURES.write_text(written, encoding="utf-8")
    print(f"module map: rewrote {FEATURES.relative_to(ROOT).as_posix()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
