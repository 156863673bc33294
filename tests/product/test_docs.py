"""Docs that stay true: the module map of docs/features.md is the code's (tools/module_map.py writes it), the
performance page's records exist, and ``addon/`` imports one way.  No Blender needed."""

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import module_map  # noqa: E402

STALE = f"docs/features.md's module map is stale: run `{module_map.COMMAND}` and commit docs/features.md"


def mapped_modules(text: str) -> set[str]:
    """The modules the map in features.md names, as paths under the repository ('addon/engine/sdf.py')."""
    section = text[text.index(module_map.BEGIN):text.index(module_map.END)]
    found, package = set(), None
    for line in section.splitlines():
        if heading := re.fullmatch(r"#### `(addon/[\w/]*)`", line):
            package = heading.group(1)
        elif row := re.match(r"\| `(\w+\.py)` \|", line):
            found.add(package + row.group(1))
    return found


def test_the_module_map_names_every_module_under_addon():
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "addon").rglob("*.py")}
    missing = modules - mapped_modules(module_map.FEATURES.read_text(encoding="utf-8"))
    assert not missing, f"{STALE} (it lacks {', '.join(sorted(missing))})"


def test_the_module_map_is_what_the_generator_writes_from_the_docstrings():
    text = module_map.FEATURES.read_text(encoding="utf-8")
    assert module_map.with_map(text, module_map.module_map()) == text, STALE


def make_addon(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / "addon" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "addon" / name).write_text(text)


def test_a_package_table_takes_each_modules_first_sentence(tmp_path):
    make_addon(tmp_path, {
        "__init__.py": '"""The add-on."""\n',
        "engine/__init__.py": '"""Engine core (no bpy)."""\n',
        "engine/scan.py": '"""Block scan of uint32 values,\nwrapped over two lines.  Then detail.\n\nMore."""\n',
        "engine/a.py": '"""Pipes | in a cell."""\n',
        "engine/__pycache__/scan.cpython-313.pyc": "",
        "shaders_not_a_package/x.py": '"""Not in a package."""\n',
    })
    assert module_map.module_map(tmp_path) == "\n".join([
        "#### `addon/`", "", "| module | what it is |", "|---|---|", "| `__init__.py` | The add-on. |", "",
        "#### `addon/engine/`", "", "| module | what it is |", "|---|---|",
        "| `__init__.py` | Engine core (no bpy). |", "| `a.py` | Pipes \\| in a cell. |",
        "| `scan.py` | Block scan of uint32 values, wrapped over two lines. |", ""])


def test_a_module_without_a_docstring_is_named_in_the_error(tmp_path):
    make_addon(tmp_path, {"__init__.py": '"""The add-on."""\n', "silent.py": "VALUE = 1\n"})
    with pytest.raises(module_map.ModuleMapError, match=r"addon/silent\.py has no docstring"):
        module_map.module_map(tmp_path)


def test_a_new_module_makes_the_map_stale_and_the_generator_puts_it_in():
    text = module_map.FEATURES.read_text(encoding="utf-8")
    new_map = module_map.module_map() + "#### `addon/scene/`\n\n| `edits.py` | What an edit costs. |\n"
    rewritten = module_map.with_map(text, new_map)
    assert rewritten != text
    assert "addon/scene/edits.py" in mapped_modules(rewritten)
    assert module_map.with_map(rewritten, module_map.module_map()) == text  # the map alone changed


def test_features_md_without_the_markers_is_refused_naming_them():
    with pytest.raises(module_map.ModuleMapError, match="lacks the module map's markers"):
        module_map.with_map("# Features\n\nno map here\n", "anything")


def test_the_check_command_says_stale_and_leaves_the_file_alone(tmp_path, monkeypatch, capsys):
    features = tmp_path / "features.md"
    features.write_text(f"before\n{module_map.BEGIN}\n\nold map\n{module_map.END}\nafter\n")
    monkeypatch.setattr(module_map, "FEATURES", features)
    monkeypatch.setattr(module_map, "ROOT", tmp_path)
    monkeypatch.setattr(module_map, "module_map", lambda: "new map\n")
    assert module_map.main(["--check"]) == 1
    assert "stale; run `python tools/module_map.py`" in capsys.readouterr().err
    assert "old map" in features.read_text()
    assert module_map.main([]) == 0
    assert features.read_text() == f"before\n{module_map.BEGIN}\n\nnew map\n\n{module_map.END}\nafter\n"
    assert module_map.main(["--check"]) == 0


def test_every_record_the_performance_page_links_to_exists():
    for page in ("docs/performance.md", "bench/README.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        links = re.findall(r"\]\(([^)#\s]*bench/results/[^)#\s]+)\)|\]\((results/[^)#\s]+)\)", text)
        missing = [target for pair in links for target in pair
                   if target and not ((ROOT / page).parent / target).resolve().is_file()]
        assert not missing, f"{page} links to records that are not in bench/results/: {missing}"


def relative_imports(path: Path, package_root: Path) -> set[str]:
    """The modules under ``package_root`` that ``path`` imports relatively, wherever in it (functions and
    ``TYPE_CHECKING`` blocks too: a cycle there is still a cycle in the design), as dotted names."""
    package = path.relative_to(package_root).parent.parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            target = ".".join((*base, *(node.module.split(".") if node.module else ())))
            names = [f"{target}.{alias.name}" if target else alias.name for alias in node.names]
            found |= {name for name in names if module_file(name, package_root)} or {target}
    return {name for name in found if module_file(name, package_root)}


def module_file(name: str, package_root: Path) -> Path | None:
    path = package_root.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def test_the_addon_imports_go_one_way():
    """No module under addon/ reaches itself again through the others' imports (addon/output/ did: the frame
    writer, the formats and the display shader imported each other until display.py took what they share)."""
    addon = ROOT / "addon"
    graph = {".".join(path.relative_to(addon).with_suffix("").parts).removesuffix(".__init__"):
             relative_imports(path, addon) for path in addon.rglob("*.py")}
    cycles = []
    for start in graph:
        stack, seen = [(start, (start,))], set()
        while stack:
            name, trail = stack.pop()
            for target in graph.get(name, ()):
                if target == start:
                    cycles.append(" -> ".join((*trail, target)))
                elif target not in seen:
                    seen.add(target)
                    stack.append((target, (*trail, target)))
    assert not cycles, "addon/ imports in a circle: " + "; ".join(sorted(cycles))


# addon/engine/'s rooms, lowest first, in the order a frame reads them (each room's __init__.py says what it holds):
# a module imports from its own room or a lower one, and no room imports the top floor (pipeline.py,
# registry.py).  reference/ mirrors the rooms under the same rule.
ENGINE_ROOMS = ("seam", "primitives", "settings", "look", "simulate", "order", "light", "draw")
TOP_FLOOR_MOST = 12  # modules on engine/'s top floor


def engine_floor(name: str) -> int:
    """The rank of a module under addon/ ('engine.draw.sprites'): its room's index, one past the last room on
    engine/'s top floor (reference/ itself included)."""
    parts = name.split(".")[1:]
    if parts[:1] == ["reference"]:
        parts = parts[1:]
    return ENGINE_ROOMS.index(parts[0]) if len(parts) > 1 and parts[0] in ENGINE_ROOMS else len(ENGINE_ROOMS)


def test_the_engine_rooms_are_the_declared_ones_and_reference_mirrors_them():
    engine = ROOT / "addon" / "engine"
    assert {p.parent.name for p in engine.glob("*/__init__.py")} == {*ENGINE_ROOMS, "reference"}
    assert {p.parent.name for p in (engine / "reference").glob("*/__init__.py")} <= set(ENGINE_ROOMS)
    assert not list((engine / "reference").glob("[!_]*.py")), "a reference module lies outside the rooms"


def test_no_engine_import_climbs_back_up_a_room():
    addon = ROOT / "addon"
    climbs = []
    for path in (addon / "engine").rglob("*.py"):
        name = ".".join(path.relative_to(addon).with_suffix("").parts).removesuffix(".__init__")
        floor = engine_floor(name)
        if floor == len(ENGINE_ROOMS):
            continue
        climbs += [f"{name} -> {target}" for target in relative_imports(path, addon)
                   if target.startswith("engine.") and engine_floor(target) > floor]
    assert not climbs, "imports that climb back up (rooms, lowest first: " + ", ".join(ENGINE_ROOMS) + "): " \
        + "; ".join(sorted(climbs))


def test_the_engine_top_floor_holds_at_most_twelve_modules():
    top = sorted(path.name for path in (ROOT / "addon" / "engine").glob("*.py"))
    assert len(top) <= TOP_FLOOR_MOST, top


def test_each_engine_room_has_its_tests_folder_and_no_test_file_is_left_at_the_top():
    """tests/ mirrors the house (tools/move_tests.py places each file): a room of addon/engine/ has its folder of
    tests, and a file left at tests/ is one the script has not placed yet."""
    import move_tests

    rooms = {p.parent.name for p in (ROOT / "addon" / "engine").glob("*/__init__.py")} - {"reference"}
    missing = [room for room in sorted(rooms) if not list((ROOT / "tests" / "engine" / room).glob("test_*.py"))]
    assert not missing, f"rooms of addon/engine/ without tests in tests/engine/<room>/: {missing}"
    loose = [path.name for path in (ROOT / "tests").glob("*.py") if path.name not in move_tests.KEPT]
    assert not loose, f"test files at tests/ (run `python tools/move_tests.py`, with a row for each): {loose}"
