"""tools/move_tests.py: a file moved down reaches the same root, imports between test files take full names,
and a file the table does not place stops the move before anything moves.  No Blender needed."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import move_tests  # noqa: E402

NAMES = {"conftest": "tests.conftest", "gpu_fill": "tests.gpu_fill", "test_scan": "tests.engine.primitives.test_scan",
         "test_sorting": "tests.engine.order.test_sorting", "test_sort": "tests.engine.order.test_sort",
         "test_sprites": "tests.engine.draw.test_sprites", "test_twice": ""}


@pytest.mark.parametrize("before, extra, after", [
    ("Path(__file__).resolve().parent.parent", 2, "Path(__file__).resolve().parents[3]"),
    ("Path(__file__).resolve().parents[1]", 1, "Path(__file__).resolve().parents[2]"),
    ("Path(__file__).resolve().parent / 'x'", 2, "Path(__file__).resolve().parents[2] / 'x'"),
    ("Path(__file__).resolve().parent.parent.parent", 0, "Path(__file__).resolve().parents[2]"),
])
def test_a_moved_file_reaches_as_far_up_as_before(before, extra, after):
    assert move_tests.moved_up(before, extra) == after


def test_bare_and_top_level_imports_take_the_full_names():
    text = ("from conftest import add_effect\n"
            "    from test_sort import x\n"
            "from tests.test_sorting import key_cases\n"
            "from tests import test_sorting, test_sprites, gpu_fill\n"
            "import test_scan as scan\n"
            "from tests.engine.primitives.test_scan import run_scan\n"
            "from conftesting import y\n")
    assert move_tests.full_imports(text, NAMES, "t.py") == (
        "from tests.conftest import add_effect\n"
        "    from tests.engine.order.test_sort import x\n"
        "from tests.engine.order.test_sorting import key_cases\n"
        "from tests.engine.order import test_sorting\n"
        "from tests.engine.draw import test_sprites\n"
        "from tests import gpu_fill\n"
        "from tests.engine.primitives import test_scan as scan\n"
        "from tests.engine.primitives.test_scan import run_scan\n"
        "from conftesting import y\n")


def test_the_full_names_are_left_as_they_are_on_a_second_run():
    text = "from tests.engine.order import test_sorting\nfrom tests.conftest import add_effect\n"
    assert move_tests.full_imports(text, NAMES, "t.py") == text


def test_a_bare_import_of_a_name_two_files_hold_is_refused():
    with pytest.raises(move_tests.MoveError, match="t.py imports test_twice, which two files"):
        move_tests.full_imports("from test_twice import x\n", NAMES, "t.py")


def test_a_file_the_table_does_not_place_stops_the_move_naming_it(tmp_path, monkeypatch):
    for name in ("conftest.py", "gpu_fill.py", "test_scan.py", "test_brand_new.py"):
        (tmp_path / name).write_text("")
    monkeypatch.setattr(move_tests, "TESTS", tmp_path)
    with pytest.raises(move_tests.MoveError, match=r"does not place: test_brand_new\.py; add each to PLACES"):
        move_tests.to_move()
    (tmp_path / "test_brand_new.py").unlink()
    assert move_tests.to_move() == [(tmp_path / "test_scan.py", "engine/primitives")]


def test_every_file_of_the_table_is_placed_once_and_is_where_the_table_says():
    placed = move_tests.folder_of()
    tests = Path(__file__).resolve().parents[1]
    assert not [name for name, folder in placed.items() if not (tests / folder / name).is_file()]
