"""Move the test files into folders that mirror the house (``tests/engine/<room>/``, ``tests/scene/``, ...) and fix
what names them: imports between test files, the repository root each file computes, and paths in the docs.

Re-runnable: a file already in its folder is left alone, so after a merge brings new files to ``tests/`` the
script moves those and fixes their imports.  A test file at ``tests/`` that ``PLACES`` does not name stops the
script before anything moves: add it to the table.  Each folder is a package (``__init__.py``), so two folders may
hold files of one name and a test imports another by its full name (``from tests.engine.test_kernels import
splat_case``); imports are sorted again with ruff, so run it with the project's venv.

    .venv/bin/python tools/move_tests.py           # move and fix, with git mv (the lead re-runs it after merges)
    .venv/bin/python tools/move_tests.py --check   # exit 1, naming them, when a file at tests/ is still to move
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
# Shared by tests of many folders, so they stay at tests/ beside the fixtures.
KEPT = ("__init__.py", "conftest.py", "gpu_fill.py")
# Folder under tests/ -> the files it holds; engine/<room> mirrors addon/engine/<room>/, product/ tests the whole
# product (packaging, docs, command line, farm, benchmarks' tools).
PLACES = {
    "engine": ("test_kernels.py", "test_pipeline.py"),
    "engine/seam": ("test_seam.py", "test_features.py", "test_exact_math.py", "test_row_buffers.py"),
    "engine/primitives": ("test_scan.py", "test_binning.py", "test_compaction.py", "test_sort_schedule.py"),
    "engine/settings": ("test_settings.py",),
    "engine/simulate": ("test_simulation.py", "gpu_arithmetic.py", "test_csg.py", "test_events.py", "test_sdf.py",
                        "test_sdf_collision.py", "test_trails.py", "test_timeline.py", "test_neighbours.py", "test_granular.py",
                        "test_fluids.py", "test_flocking.py"),
    "engine/order": ("test_sorting.py", "test_tile_rows.py"),
    "engine/light": ("test_lighting.py", "test_shadow_volume.py", "test_volume_grids.py", "test_surface_shadow.py"),
    "engine/look": ("test_look.py", "test_sprite_relief.py", "test_sprite_textures.py", "test_point_records.py"),
    "engine/draw": ("test_bokeh.py", "test_compositor.py", "test_draw_caches.py", "test_footprints.py",
                    "test_glints.py", "test_particle_depth.py", "test_quad_tiles.py", "test_readback.py",
                    "test_soft_particles.py", "test_splat_layouts.py", "test_sprites.py", "test_sprites_reference.py",
                    "test_trail_tiles.py"),
    "hosts": ("test_moderngl_host.py", "test_sort_moderngl.py", "test_egl_probe.py", "test_gl_flush.py"),
    "scene": ("test_edits.py", "test_look_edits.py", "test_families.py", "test_footprints_blender.py",
              "test_sdf_blender.py", "test_csg_blender.py", "test_evaluated_colliders.py", "test_occlusion.py",
              "test_sort_render.py", "test_viewport.py", "test_visibility.py", "test_sim_cache.py",
              "test_simulation_range.py", "test_lit_presets.py", "test_preset_stage.py"),
    "output": ("test_bake.py", "test_bake_modal.py", "test_bake_warnings.py", "test_chunked_render.py",
               "test_compositor_migration.py", "test_cpu_compositor.py", "test_display_shader.py", "test_export.py",
               "test_failed_layer.py", "test_formats.py", "test_frame_writer.py", "test_render_handoff.py",
               "test_render_integration.py", "test_render_visibility.py", "test_point_cache.py", "test_vdb.py",
               "test_vdb_file.py",
               "test_volume_bake.py", "test_volume_object.py", "test_scene_shadows.py", "test_layer_scene.py"),
    "ui": ("test_panels.py", "test_panel_fixes.py", "test_presets_ui.py", "test_registration.py"),
    "product": ("test_cli.py", "test_docs.py", "test_package.py", "test_package_contents.py", "test_tree_size.py",
                "test_own_process.py", "test_reliability.py", "test_contact_sheet.py", "test_blender_gpu_bench.py",
                "test_exr_encode_bench.py", "test_fidelity_bench.py", "test_shimmer_metric.py", "test_flamenco.py",
                "test_openjd.py", "farm_shot.py", "test_move_tests.py"),
}
# Where a path to a test file is rewritten: the tracked text files but the records (their logs are history).
PATH_SUFFIXES = (".py", ".md", ".toml", ".sh", ".txt", ".json", ".yaml", ".yml", ".js")
PATH_SKIPPED = ("bench/results/", "tools/move_tests.py")
_OPEN = r"Path\(__file__\)\.resolve\(\)"
_UP = re.compile(_OPEN + r"((?:\.parent\b)+|\.parents\[(\d+)\])")


class MoveError(RuntimeError):
    """A test file the table does not place, or a bare import that names two files."""


def folder_of() -> dict[str, str]:
    """File name -> its folder under tests/; a name the table gives twice is an error."""
    placed: dict[str, str] = {}
    for folder, names in PLACES.items():
        for name in names:
            if name in placed:
                raise MoveError(f"{name} is placed twice in PLACES ({placed[name]}, {folder})")
            placed[name] = folder
    return placed


def to_move() -> list[tuple[Path, str]]:
    """(file at tests/, its folder) for each file still to move; unknown files stop everything."""
    placed = folder_of()
    loose = sorted(path for path in TESTS.glob("*.py") if path.name not in KEPT)
    unknown = [path.name for path in loose if path.name not in placed]
    if unknown:
        raise MoveError(f"tests/ holds files tools/move_tests.py does not place: {', '.join(unknown)}; add each to "
                        "PLACES (the folder of the room, or product/ for the whole product) and run it again")
    return [(path, placed[path.name]) for path in loose]


def git(*args: str) -> None:
    subprocess.run(["git", *args], cwd=ROOT, check=True)


def make_packages() -> None:
    """Every folder of the table, and tests/ itself, a package (new __init__.py added to git)."""
    folders = {TESTS} | {TESTS / part for folder in PLACES for part in _parents(folder)}
    for folder in sorted(folders):
        init = folder / "__init__.py"
        if not init.exists():
            folder.mkdir(parents=True, exist_ok=True)
            init.write_text("")
            git("add", str(init.relative_to(ROOT)))


def _parents(folder: str) -> list[str]:
    parts = folder.split("/")
    return ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]


def moved_up(text: str, extra: int) -> str:
    """``Path(__file__).resolve().parent...`` of a file moved ``extra`` folders down reaches as far up as before."""

    def deeper(match: re.Match) -> str:
        ups = match.group(1).count(".parent") if match.group(2) is None else int(match.group(2)) + 1
        ups += extra
        return match.group(0)[:match.start(1) - match.start(0)] + (".parent" if ups == 1 else f".parents[{ups - 1}]")

    return _UP.sub(deeper, text)


def modules() -> dict[str, str]:
    """Module name of each Python file under tests/ -> its full name ('test_kernels' -> 'tests.engine.test_kernels');
    a name held by two files maps to ''."""
    found: dict[str, str] = {}
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[path.stem] = "" if path.stem in found else dotted
    return found


def full_imports(text: str, names: dict[str, str], where: str) -> str:
    """``from test_x import ...``, ``from tests.test_x import ...``, ``from tests import test_x, test_y`` and
    ``import test_x [as y]`` -> the modules' full names under tests."""

    def full(name: str) -> str:
        if not names[name]:
            raise MoveError(f"{where} imports {name}, which two files under tests/ are named: import it by its "
                            "full name")
        return names[name]

    bare = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    text = re.sub(rf"^(\s*)from (?:tests\.)?({bare}) import ", lambda m: f"{m.group(1)}from {full(m.group(2))} import ",
                  text, flags=re.MULTILINE)

    def from_tests(match: re.Match) -> str:
        packages: dict[str, list[str]] = {}
        for name in match.group(2).split(","):
            package, _, module = full(name.strip()).rpartition(".")
            packages.setdefault(package, []).append(module)
        return "\n".join(f"{match.group(1)}from {package} import {', '.join(found)}"
                         for package, found in packages.items())

    text = re.sub(rf"^(\s*)from tests import ((?:{bare})(?:, (?:{bare}))*)[ \t]*$", from_tests, text,
                  flags=re.MULTILINE)

    def package_import(match: re.Match) -> str:
        package, _, module = full(match.group(2)).rpartition(".")
        return f"{match.group(1)}from {package} import {module}{match.group(3) or ''}"

    return re.sub(rf"^(\s*)import ({bare})( as \w+)?[ \t]*$", package_import, text, flags=re.MULTILINE)


def fix_paths(placed: dict[str, str]) -> list[str]:
    """``tests/test_x.py`` in the tracked text files -> ``tests/<folder>/test_x.py``; the files changed."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    pattern = re.compile(r"\btests/(\w+\.py)\b")
    changed = []
    for name in listed.split("\0"):
        path = ROOT / name
        if not name.endswith(PATH_SUFFIXES) or name.startswith(PATH_SKIPPED) or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        new = pattern.sub(lambda m: f"tests/{placed[m.group(1)]}/{m.group(1)}" if m.group(1) in placed
                          else m.group(0), text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(name)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say which files are still to move")
    args = parser.parse_args(argv)
    try:
        moves = to_move()
        if args.check:
            for path, folder in moves:
                print(f"tests/{path.name} -> tests/{folder}/")
            return 1 if moves else 0
        make_packages()
        for path, folder in moves:
            git("mv", str(path.relative_to(ROOT)), f"tests/{folder}/{path.name}")
            moved = TESTS / folder / path.name
            moved.write_text(moved_up(moved.read_text(encoding="utf-8"), folder.count("/") + 1), encoding="utf-8")
        names = modules()
        for path in sorted(TESTS.rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            new = full_imports(text, names, str(path.relative_to(ROOT)))
            if new != text:
                path.write_text(new, encoding="utf-8")
        changed = fix_paths(folder_of())
        # Full names sort with the add-on's imports (ruff's isort), as the project's lint wants.
        subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "I", "--fix", "-q", "tests"], cwd=ROOT,
                       check=True)
    except MoveError as error:
        print(f"move_tests: {error}", file=sys.stderr)
        return 1
    print(f"moved {len(moves)} files; paths fixed in {len(changed)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
