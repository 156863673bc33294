"""Test files that run in a child process of their own, each its own pytest run (conftest.OWN_PROCESS
says which and why); a failure there shows the child's report."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import OWN_PROCESS, OWN_PROCESS_FILES

TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", OWN_PROCESS_FILES)
def test_file_passes_in_its_own_process(name):
    found = sorted(TESTS.rglob(name))
    assert len(found) == 1, f"{name}: {len(found)} files of that name under tests/ (the list names one each)"
    result = subprocess.run([sys.executable, "-X", "faulthandler", "-m", "pytest", "-q", "-ra", "-p",
                             "no:cacheprovider", str(found[0])],
                            env={**os.environ, OWN_PROCESS: "1"}, cwd=TESTS.parent, capture_output=True, text=True,
                            timeout=1800)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in summary or " skipped" in summary, summary
