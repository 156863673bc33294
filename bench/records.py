"""Benchmark records: a table on stdout and a JSON list in bench/results/<device>-<date>-<suite>.json."""

from __future__ import annotations

import datetime
import json
import re
import statistics
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def gl_ms(ctx, run, repeats: int, setup=None) -> float:
    """Median GPU time of ``run()`` in ms, from GL timer queries (after one warm-up).

    ``setup()`` runs before each timed call, outside the timing.  Drivers without timer queries (llvmpipe reports 1 ns) get wall time around a finish.
    """
    setup and setup()
    run()
    ctx.finish()
    times = []
    for _ in range(repeats):
        setup and setup()
        query = ctx.query(time=True)
        start = time.perf_counter()
        with query:
            run()
        ctx.finish()
        wall = (time.perf_counter() - start) * 1e3
        times.append(query.elapsed / 1e6 if query.elapsed > 1 else wall)
    return statistics.median(times)


def prefix(device: str, date: str) -> str:
    """What a results file's name starts with: the device's slug and the date (files beside it share it)."""
    return f"{re.sub(r'[^a-z0-9]+', '-', device.lower()).strip('-')[:40]}-{date}"


def write(suite: str, device: str, rows: list[dict], results: Path | None = None) -> Path:
    """Add ``rows`` to the suite's file of the day in ``results`` (default bench/results/); print them."""
    results = Path(results) if results is not None else RESULTS
    date = datetime.date.today().isoformat()
    command = " ".join(["python3", *sys.argv])
    records = [{"suite": suite, "device": device, "date": date, "command": command, **row} for row in rows]
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{prefix(device, date)}-{suite}.json"
    # Earlier cases of the same day stay; a case measured again is replaced.
    earlier = json.loads(path.read_text()) if path.exists() else []
    cases = {r["case"] for r in records}
    path.write_text(json.dumps([r for r in earlier if r["case"] not in cases] + records, indent=2) + "\n")
    keys = list(dict.fromkeys(k for r in rows for k in r))
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(f"{r[k]:.4g}" if isinstance(r.get(k), float) else str(r.get(k, "")) for k in keys))
    print(f"wrote {path}")
    return path
