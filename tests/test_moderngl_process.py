"""The moderngl host's tests (test_moderngl_host.py) in a child process: its EGL display must not share a
process with Blender's (conftest.OWN_PROCESS says why)."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import OWN_PROCESS, OWN_PROCESS_FILES

HERE = Path(__file__).resolve().parent


def test_moderngl_host_tests_pass_in_their_own_process():
    files = [str(HERE / name) for name in OWN_PROCESS_FILES]
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider", *files],
                            env={**os.environ, OWN_PROCESS: "1"}, cwd=HERE.parent, capture_output=True, text=True,
                            timeout=1800)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in summary or " skipped" in summary, summary
