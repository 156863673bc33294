"""The tree travels to the GPU machine with every command there (64 MiB a call, shared with the packed venv):
records' pictures stay JPEG of a few hundred KB and the tracked files stay small."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_RESULT_BYTES = 500 * 1024
MAX_TREE_BYTES = 12_000_000  # decimal MB, as `git ls-files | xargs du -cb` counts


def tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in listed.decode().split("\0") if name and (ROOT / name).is_file()]


def test_no_record_under_bench_results_is_larger_than_500_kb():
    large = [f"{path.name}: {path.stat().st_size // 1024} KB" for path in tracked_files()
             if path.parent.name == "results" and path.stat().st_size > MAX_RESULT_BYTES]
    assert not large, f"records above 500 KB (pictures belong as JPEG through bench/pictures.py): {large}"


def test_no_record_picture_is_a_png():
    pngs = [path.name for path in tracked_files() if path.parent.name == "results" and path.suffix == ".png"]
    assert not pngs, f"record pictures as PNG (bench/pictures.py writes JPEG): {pngs}"


def test_the_tracked_files_stay_within_12_mb():
    total = sum(path.stat().st_size for path in tracked_files())
    assert total <= MAX_TREE_BYTES, f"tracked files take {total / 1e6:.2f} MB (at most {MAX_TREE_BYTES / 1e6:.0f})"
