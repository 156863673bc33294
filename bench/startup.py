"""Start-up of a one-frame bake, as issue 11 sets the goal: ``make bake PRESET=default FRAMES=1 RES=1920x1080``
from the shell's command to the process's exit, at most 3 s on the GPU host.

Each run is the real command in a fresh process: make, tools/setup.sh's check, the interpreter, ``import bpy``
(the GPU probe's child, hosts/egl_probe.py, alongside), the add-on, the bake, the exit.  The CLI's
``--timings FILE`` (``TIMINGS=`` through make) says when it started and how long each of its stages took, the bake's sidecar how long the
bake's own stages took (summed over threads where writers run in parallel), and the files' change times when
the last one was renamed.  The first run may meet a cold shader cache (the driver's, on disk), so the table
shows it apart from the median of the others.  Table + JSON records in bench/results/ (suite ``startup``):
case ``make-bake-1080p-1-frame`` (or ``cli-bake-1080p-1-frame`` where ``make`` is missing), and ``import-bpy``,
where ``import bpy`` goes (``python -X importtime``: Blender's own start-up and the add-ons it enables), and
``exit``, how long leaving takes where nothing of ours runs (after ``import bpy``, after ``gpu.init()``).

    .venv/bin/python bench/startup.py [--runs 5] [--via make|cli] [--out DIR]
    .venv/bin/python bench/startup.py --baseline OLDER_CHECKOUT   # the same command there, runs interleaved
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import records  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 3.0
LAPS = {"arguments": "arguments_s", "import bpy": "import_bpy_s", "scene": "scene_s",
        "register and add the effect": "register_s", "GPU probe (waiting for it)": "probe_wait_s", "bake": "bake_s"}


def command(args, repo: Path, out: Path, timings: Path | None) -> list[str]:
    if args.via == "make":
        return ["make", "--no-print-directory", "bake", f"PRESET={args.preset}", f"FRAMES={args.frames}",
                f"RES={args.res}", f"OUT={out}", *([f"COUNT={args.count}"] if args.count else []),
                *([f"TIMINGS={timings}"] if timings else [])]
    return [str(repo / ".venv/bin/python"), "-m", "addon.cli", "bake", "--preset", args.preset, "--frames",
            args.frames, "--res", args.res, "--out", str(out), *(["--count", str(args.count)] if args.count else []),
            *(["--timings", str(timings)] if timings else [])]


def slug(stage: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", stage.lower()).strip("_")


def run_once(args, repo: Path, wall_only: bool, scratch: Path) -> tuple[dict, str]:
    """One bake from the shell in the checkout ``repo``: its phases in seconds, and the device the sidecar names."""
    out, timings = scratch / "frames", None if wall_only else scratch / "timings.json"
    shutil.rmtree(out, ignore_errors=True)
    if timings:
        timings.unlink(missing_ok=True)
    started = time.time()
    result = subprocess.run(command(args, repo, out, timings), cwd=repo, capture_output=True, text=True)
    ended = time.time()
    if result.returncode != 0:
        raise SystemExit(f"startup: the bake failed with status {result.returncode}:\n{result.stderr[-3000:]}")
    files = list(out.iterdir())
    phases = {"wall_s": ended - started, "after_last_file_s": ended - max(p.stat().st_ctime for p in files)}
    sidecar = json.loads((out / "gpu_particles_bake.json").read_text())
    if timings:
        report = json.loads(timings.read_text())
        if report["interpreter_start_s"] is not None:
            phases["interpreter_start_s"] = report["interpreter_start_s"]
            phases[f"{args.via}_to_interpreter_s"] = report["started_at"] - report["interpreter_start_s"] - started
        phases.update({LAPS.get(stage, slug(stage) + "_s"): seconds for stage, seconds in report["laps"].items()})
        phases.update({slug(stage) + "_s": seconds for stage, seconds in report["probe"].items()})
        phases.update({"bake_" + slug(stage) + "_s": seconds for stage, seconds in report["bake_stages"].items()})
        phases["kernel_compile_s"] = report["kernel_compilation"]["seconds"]
        phases["kernels_compiled"] = report["kernel_compilation"]["kernels"]
        phases["exit_s"] = ended - report["exit_at"]
    return phases, sidecar["device"]


# Modules that ``import bpy`` loads from source, compiling them, because no .pyc is cached beside them (a
# venv packed without __pycache__ where PYTHONDONTWRITEBYTECODE is set compiles them every run: 3x slower here).
UNCOMPILED = """
import importlib.util, json, os, sys
import bpy
sources = [m.__file__ for m in list(sys.modules.values()) if (getattr(m, "__file__", None) or "").endswith(".py")]
print(json.dumps({"modules_without_pyc": sum(not os.path.exists(importlib.util.cache_from_source(f)) for f in sources),
                  "modules_from_py": len(sources), "dont_write_bytecode": bool(sys.flags.dont_write_bytecode)}))
"""


def compile_all(args) -> None:
    """Bytecode for the interpreter's standard library, the venv's packages and the add-on, as an installed
    Python and pip leave them (outside the timing).  ../shared/gpu/pack strips every __pycache__, the
    interpreter's too, and the GPU host sets PYTHONDONTWRITEBYTECODE: without this every run there compiles
    the standard library modules it imports (about 1 s of start-up on 2 cores here)."""
    started = time.perf_counter()
    python = str(args.repo / ".venv/bin/python")
    paths = subprocess.run([python, "-c", "import sysconfig; print(*map(sysconfig.get_path, ('stdlib', 'purelib')))"],
                           capture_output=True, text=True, check=True).stdout.split()
    subprocess.run([python, "-m", "compileall", "-q", "-j", "0", *paths, str(args.repo / "addon")], cwd=args.repo,
                   capture_output=True, text=True)
    print(f"compiled the standard library's, the venv's and the add-on's bytecode in "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)


def import_profile(args) -> dict:
    """Where ``import bpy`` goes (``python -X importtime -c 'import bpy'``): Blender's own start-up (loading the
    module, its C start-up) and the largest imports under it (its scripts, the add-ons it enables)."""
    result = subprocess.run([str(args.repo / ".venv/bin/python"), "-X", "importtime", "-c", "import bpy"],
                            cwd=args.repo, capture_output=True, text=True)
    entries = []
    for line in result.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( +)(\S.*)$", line)
        if match and len(match.group(3)) <= 3:  # top-level imports and those right under them
            entries.append((match.group(4), int(match.group(1)) / 1e6, int(match.group(2)) / 1e6,
                            len(match.group(3)) == 1))
    row = {"case": "import-bpy", "total_s": round(sum(c for _, _, c, top in entries if top), 3),
           "bpy_own_s": round(sum(own for name, own, _, top in entries if top and name == "bpy"), 3),
           **json.loads(subprocess.run([str(args.repo / ".venv/bin/python"), "-c", UNCOMPILED], cwd=args.repo,
                                       capture_output=True, text=True).stdout.splitlines()[-1])}
    largest = sorted((e for e in entries if e[0] != "bpy"), key=lambda e: -e[2])[:8]
    row.update({f"{name}_s": round(cumulative, 3) for name, _, cumulative, _ in largest})
    return row


# Leaving as the CLI leaves (os._exit, no teardown) after ``import bpy`` alone or after gpu.init() and a 1080p
# offscreen: the process's exit as the parent sees it, driver teardown included.
LEAVE = """
import os, sys, time
import bpy, gpu
if sys.argv[1] == "gpu":
    gpu.init()
    offscreen = gpu.types.GPUOffScreen(1920, 1080, format="RGBA16F")
print(time.time(), flush=True)
os._exit(0)
"""


def exit_profile(args) -> dict:
    """How long the exit takes where nothing of ours runs: is ``exit_s`` the driver's teardown?"""
    seconds = {"import bpy": [], "gpu": []}
    for _ in range(max(args.runs, 1)):
        for what in seconds:
            result = subprocess.run([str(args.repo / ".venv/bin/python"), "-c", LEAVE, what], cwd=args.repo,
                                    capture_output=True, text=True)
            ended = time.time()
            if result.returncode == 0:
                seconds[what].append(ended - float(result.stdout.splitlines()[-1]))
    return {"case": "exit", "runs": max(args.runs, 1),
            **{f"exit_after_{slug(what)}_s": round(statistics.median(values), 4) for what, values in seconds.items()
               if values}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--via", choices=("make", "cli"), help="default: make where it is installed, else the CLI")
    parser.add_argument("--preset", default="default")
    parser.add_argument("--frames", default="1")
    parser.add_argument("--res", default="1920x1080")
    parser.add_argument("--count", type=int, help="particles (default: the preset's); fewer, where a software "
                                                   "renderer's simulation would hide the start-up")
    parser.add_argument("--repo", type=Path, default=ROOT, help="the checkout whose command runs (default: this one)")
    parser.add_argument("--baseline", type=Path, help="another checkout whose command runs after each of ours (wall "
                                                      "time only: one from before --timings took FILE)")
    parser.add_argument("--compile", action="store_true",
                        help="first write the .pyc files the venv and the add-on lack (a venv packed without them)")
    parser.add_argument("--case", help="record case name (default: VIA-bake-1080p-1-frame)")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default bench/results/)")
    args = parser.parse_args()
    args.repo = args.repo.resolve()
    args.via, note = args.via or ("make" if shutil.which("make") else "cli"), None
    if not shutil.which("make"):
        note = "the CLI command (python -m addon.cli bake): make is not installed here"
    elif args.via == "make":  # set up once, untimed; where that fails (no package registry) measure the CLI
        setup = subprocess.run(["make", "--no-print-directory", "setup"], cwd=args.repo, capture_output=True, text=True)
        if setup.returncode != 0:
            args.via = "cli"
            note = f"the CLI command (python -m addon.cli bake): make setup fails here: {setup.stderr.strip()[-300:]}"
    height = args.res.lower().split("x")[-1]
    case = args.case or (f"{args.via}-bake-{height}p-1-frame" + (f"-{args.count}-particles" if args.count else "")
                         + ("-precompiled" if args.compile else ""))
    if args.compile:
        compile_all(args)
    runs, baseline_runs, device = [], [], None
    with tempfile.TemporaryDirectory(prefix="gpu_particles_startup_") as scratch:
        for index in range(args.runs):
            phases, device = run_once(args, args.repo, False, Path(scratch))
            runs.append(phases)
            if args.baseline:
                baseline_runs.append(run_once(args, args.baseline.resolve(), True, Path(scratch))[0])
            print(f"run {index + 1}/{args.runs}: {phases['wall_s']:.2f} s"
                  + (f", baseline {baseline_runs[-1]['wall_s']:.2f} s" if args.baseline else ""), file=sys.stderr)
    rows = [summary(runs, case=case, via=args.via, goal_s=GOAL_S,
                    precompiled="standard library, venv, add-on" if args.compile else False)]
    if note:
        rows[0]["note"] = note
    if baseline_runs:
        rows.append(summary(baseline_runs, case=f"{case}-baseline", via=args.via, repo=str(args.baseline)))
    records.write("startup", device, [*rows, import_profile(args), exit_profile(args)], results=args.out)


def summary(runs: list[dict], **fields) -> dict:
    """The first run's wall time, every run's, and the median of each phase over the runs after the first."""
    later = runs[1:] or runs
    keys = list(dict.fromkeys(k for r in runs for k in r))
    return {**fields, "runs": len(runs), "first_wall_s": round(runs[0]["wall_s"], 3),
            "walls_s": [round(r["wall_s"], 3) for r in runs],
            **{k: round(statistics.median(r[k] for r in later if k in r), 4) for k in keys}}


if __name__ == "__main__":
    main()
