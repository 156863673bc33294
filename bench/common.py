"""Benchmark records: one format for the CPU run (Blender) and the device run (moderngl).

A results file is a JSON list of records, one per measurement::

    {"suite": "splat", "case": "normal", "n": 2000000, "device": "NVIDIA H100 ...",
     "date": "2026-11-21", "command": "bash bench/device_run.sh", "ms": 0.13,
     "peer": "gl_points", "peer_ms": 4.3, "bound_ms": 0.09,     # where they apply
     "width": 3296, "height": 1776, "bytes": 312000000, ...}    # extras per suite

``ms`` is a median in milliseconds (None for records that time nothing, such as
correctness checks); ``peer_ms`` is the same work done another way in the same
run; ``bound_ms`` is the fewest bytes the work must move over the bandwidth a
copy kernel reached in the same run.  Files are ``bench/results/<slug>-<date>.json``
where slug names the device (``h100``, ``h200``, ``llvmpipe-cpu``).

Kept free of numpy and the add-on so it imports anywhere (Python 3.11+).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shlex
import statistics
import sys
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"
REQUIRED = ("suite", "case", "n", "device", "date", "command", "ms")
# Records with equal values here replace each other when a file is rewritten.
IDENTITY = ("suite", "case", "n", "width", "height", "peer")


def today() -> str:
    return datetime.date.today().isoformat()


def command_line() -> str:
    """What reproduces this run: $BENCH_COMMAND if the wrapper set it, else argv."""
    return os.environ.get("BENCH_COMMAND") or " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv])


def device_slug(renderer: str) -> str:
    """Short file-name form of a GL renderer string."""
    text = renderer.lower()
    for chip in ("h200", "h100", "a100", "l40s", "l4"):
        if re.search(rf"\b{chip}\b", text):
            return chip
    if "llvmpipe" in text or "softpipe" in text:
        return "llvmpipe-cpu"
    slug = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    return slug[:40] or "unknown"


def median_ms(samples_ms: list[float]) -> float:
    return float(statistics.median(samples_ms))


def record(suite: str, case: str, n: int | None, device: str, ms: float | None, **extra) -> dict:
    """One measurement in the common format; extra keys (peer, peer_ms, bound_ms, width, ...) ride along."""
    rec = {"suite": suite, "case": case, "n": n, "device": device, "date": today(), "command": command_line(),
           "ms": None if ms is None else round(float(ms), 5)}
    for key, value in extra.items():
        if isinstance(value, float):
            value = round(value, 5)
        rec[key] = value
    return rec


def results_path(slug: str, date: str | None = None, directory: Path | str | None = None) -> Path:
    return Path(directory or RESULTS_DIR) / f"{slug}-{date or today()}.json"


def write_records(records: list[dict], path: Path | str, merge: bool = True) -> Path:
    """Write records as a JSON list; with merge, keep earlier records this run did not measure again."""
    path = Path(path)
    for rec in records:
        missing = [k for k in REQUIRED if k not in rec]
        if missing:
            raise ValueError(f"record {rec.get('suite')}/{rec.get('case')} lacks {missing}")
    old = []
    if merge and path.exists():
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError):
            old = []
    keys = {tuple(r.get(k) for k in IDENTITY) for r in records}
    kept = [r for r in old if tuple(r.get(k) for k in IDENTITY) not in keys]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(kept + records, indent=1) + "\n")
    return path


def _fmt(value, digits=3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if abs(value) < 1e4 else f"{value:.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def table(records: list[dict]) -> str:
    """Aligned text table: case, size, ms, peer, ratio (peer_ms / ms), bound and its share of ms."""
    header = ("suite", "case", "n", "target", "ms", "peer", "peer_ms", "ratio", "bound_ms", "bound/ms", "GB/s", "note")
    rows = []
    for r in records:
        target = f"{r['width']}x{r['height']}" if r.get("width") else "-"
        ratio = r["peer_ms"] / r["ms"] if r.get("peer_ms") and r.get("ms") else None
        share = r["bound_ms"] / r["ms"] if r.get("bound_ms") and r.get("ms") else None
        rows.append((
            r["suite"], r["case"], _fmt(r.get("n")), target, _fmt(r.get("ms"), 4), r.get("peer") or "-",
            _fmt(r.get("peer_ms"), 3), "-" if ratio is None else f"{ratio:.1f}x", _fmt(r.get("bound_ms"), 4),
            "-" if share is None else f"{share:.0%}", _fmt(r.get("gb_per_s"), 0), r.get("note", ""),
        ))
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    right = {2, 4, 6, 7, 8, 9, 10}
    lines = []
    for i, row in enumerate((header, *rows)):
        lines.append("  ".join(str(c).rjust(w) if j in right else str(c).ljust(w)
                               for j, (c, w) in enumerate(zip(row, widths))).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def finish(records: list[dict], slug: str, out_dirs: list[Path | str] | None = None) -> list[Path]:
    """Write the JSON file(s), then print the table last (the device tool keeps the tail)."""
    paths = [write_records(records, results_path(slug, directory=d)) for d in (out_dirs or [RESULTS_DIR])]
    for path in paths:
        print(f"wrote {path}")
    print()
    print(table(records))
    return paths
