"""How often the Blender host should flush (``addon/hosts/gl_flush.py``): the viewport cases of
``bench/blender_gpu.py`` with a glFlush once k workgroups wait unflushed (k = 0: never; 1: after
every dispatch), in one run.

Without a flush the driver holds a draw's dispatches until the bench's drain, so the GPU starts
only when Python has recorded the whole draw; ``ms`` (drained before and after) against ``cpu_ms``
(until ``draw_view`` returns) shows the overlap.  Records: suite ``viewport-flush``, case
``<case>-flush-<k>`` with ``ms``, ``cpu_ms``, ``redraw_ms``, ``dispatches``, ``flush_groups``.

    source /tmp/bgpu/env && .venv/bin/python bench/viewport_flush.py [--quick] [--out DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from addon.hosts.gl_flush import Flusher  # noqa: E402
from bench import blender_gpu, records  # noqa: E402
from bench.counting import CountingHost  # noqa: E402

GROUPS = (0, 1, 1024, 4096, 16384)


def host_flushing_at(groups: int):
    class Host(CountingHost):
        def __init__(self):
            super().__init__()
            self._flusher = Flusher(self._flusher.flush if groups else None, groups)
    return Host


def main(argv=None) -> int:
    args, draws = blender_gpu.viewport_bench_arguments(__doc__, argv)
    rows = []
    for case, width, height, count, mode in blender_gpu.viewport_cases(args.quick):
        for groups in GROUPS:
            blender_gpu.CountingHost = host_flushing_at(groups)
            result = blender_gpu.measure_viewport(count, width, height, mode, draws)
            rows.append({"case": f"{case}-flush-{groups}", "flush_groups": groups, "ms": result["ms"],
                         "cpu_ms": result["cpu_ms"], "redraw_ms": result["redraw_ms"],
                         "dispatches": result["dispatches"], "n": count, "width": width, "height": height})
            blender_gpu.log(f"{rows[-1]['case']}: {result['ms']:.3f} ms (cpu {result['cpu_ms']:.3f})")
    records.write("viewport-flush", blender_gpu.BlenderHost().device, rows, results=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
