"""Simulation cache codecs, measured on real checkpoints: size and speed of each way to store a state.

Simulates a preset (full and compact layouts) to a frame with the product's
simulation, snapshots the state as a cache checkpoint does, and times
encode/decode (``addon/engine/simulate/cache_format.py``) per codec, with and without
the byte shuffle.  ``python bench/cache_format.py [--count N] [--frames F]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench.records import write  # noqa: E402


def checkpoint(layout: str, count: int, frames: int):
    from addon.engine.settings.presets import load_preset
    from addon.engine.settings.settings import effect_settings
    from addon.engine.simulate.simulation import ParticleSystem
    from addon.hosts.blender import BlenderHost

    host = BlenderHost()
    preset = load_preset("default")
    settings = effect_settings({**vars(preset.effect), "count": count, "state_layout": layout,
                                "turbulence_strength": 2.0})
    system = ParticleSystem(host, settings)
    emitter = np.identity(4)
    for _ in range(frames):
        system.step(1 / 24, emitter, emitter)
    state = system.snapshot()
    return host.device, [*state.arrays, state.origin]


def timed(function, *args, repeats=3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None) -> None:
    from addon.engine.simulate import cache_format

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--frames", type=int, default=48)
    args = parser.parse_args(argv)
    rows = []
    for layout in ("FULL", "COMPACT"):
        device, arrays = checkpoint(layout, args.count, args.frames)
        raw = sum(a.nbytes for a in arrays)
        for codec in cache_format.CODECS:
            for shuffle in (False, True):
                data = cache_format.encode(arrays, {}, codec, shuffle)
                encode_s = timed(cache_format.encode, arrays, {}, codec, shuffle)
                decode_s = timed(cache_format.decode, data)
                rows.append({"case": f"{layout.lower()}-{codec}{'-shuffle' if shuffle else ''}", "particles": args.count,
                             "raw_mb": round(raw / 2**20, 2), "file_mb": round(len(data) / 2**20, 2),
                             "ratio": round(raw / len(data), 3), "encode_mb_s": round(raw / 2**20 / encode_s, 1),
                             "decode_mb_s": round(raw / 2**20 / decode_s, 1)})
    write("cache_format", device, rows)


if __name__ == "__main__":
    main()
