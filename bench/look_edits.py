"""What an artist waits for after editing a setting in the viewport, inside Blender: a look edit (a color, the
relief: settings.LOOK_FIELDS) redraws the simulated history, where until 5e7c8c1 every edit simulated it again.

Per case, the viewport (``viewport.draw_view`` into an offscreen target, as ``blender_gpu.py``'s viewport suite)
plays a preset from frame 1 to ``FRAME``, then alternately, ``--rounds`` times each:

* ``ms``: a look edit (of an effect or of the scene's render settings) through its Blender property (its update
  callback runs), then the next draw of that frame, the GPU drained before and after;
* ``peer_ms``: the same edit as every edit was handled before: the overlay marked stale (what the settings'
  update callback does), so the draw simulates from the start again (with a long preroll, the draws until the
  frame shows);
* ``redraw_ms``: the same frame drawn again with no edit.

Medians over the rounds; records: suite ``look-edits``.

    source /tmp/bgpu/env && .venv/bin/python bench/look_edits.py [--quick] [--rounds N] [--out DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import addon  # noqa: E402
from addon import viewport  # noqa: E402
from addon.engine.settings.presets import load_preset  # noqa: E402
from addon.hosts.blender import BlenderHost  # noqa: E402
from bench import records  # noqa: E402
from bench.bake_throughput import effect_scene  # noqa: E402
from bench.blender_gpu import OffscreenView, log  # noqa: E402

FRAME = 120
# (case, preset, count (None: the preset's), what is edited (None: the active effect; an effect's label; SCENE: the
# scene's render settings), the setting, its two values)
CASES = (
    ("1080p-1M-default-color", "default", 1_000_000, None, "color_start", ((1.0, 0.6, 0.2), (0.2, 0.6, 1.0))),
    ("1080p-smoke_puffs-relief", "smoke_puffs", None, None, "sprite_relief", (0.8, 1.5)),
    ("1080p-fireworks-crackle-color", "fireworks", None, "Crackle", "color_start", ((1.0, 1.0, 1.0), (0.3, 1.0, 0.3))),
    ("1080p-smoke_puffs-soft-distance", "smoke_puffs", None, "SCENE", "soft_distance", (0.0, 0.3)),
)
SCENE = "SCENE"


def until_drawn(view: OffscreenView, frame: int) -> float:
    """ms of the draws until ``frame`` shows (a long preroll runs a piece a draw)."""
    start = time.perf_counter()
    view.timed_draw(frame)
    while viewport._overlay.preroll_progress() is not None:
        view.timed_draw(frame)
    return (time.perf_counter() - start) * 1e3


def measure(preset: str, count: int, label: str | None, name: str, values: tuple, width: int, height: int,
            frame: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as out:
        scene = effect_scene(preset, count, width, height, (1, frame + 10), Path(out))
        emitter = next(o for o in scene.objects if o.gpu_particles.effects)
        effect = emitter.gpu_particles.effects[label] if label not in (None, SCENE) else \
            emitter.gpu_particles.active_effect
        count = effect.count
        edited = scene.gpu_particles if label == SCENE else effect
        viewport.free()
        viewport._overlay = viewport.Overlay(BlenderHost())
        view = OffscreenView(scene, width, height)
        try:
            for f in range(1, frame + 1):
                view.timed_draw(f)
            simulation = viewport._overlay.renderer.simulation
            look, peer, redraw = [], [], []
            for _ in range(rounds):
                setattr(edited, name, values[1])
                look.append(until_drawn(view, frame))
                assert viewport._overlay.renderer.simulation is simulation, "a look edit kept the simulation"
                redraw.append(view.timed_draw(frame)[0])
                setattr(edited, name, values[0])
                viewport._overlay.mark_stale()  # as every edit was handled before
                peer.append(until_drawn(view, frame))
                simulation = viewport._overlay.renderer.simulation
        finally:
            view.free()
            viewport.free()
            addon.unregister()
    ms, peer_ms = statistics.median(look), statistics.median(peer)
    return {"ms": round(ms, 2), "peer_ms": round(peer_ms, 2), "speedup": round(peer_ms / ms, 1),
            "redraw_ms": round(statistics.median(redraw), 2), "frame": frame, "setting": name, "rounds": rounds,
            "preset": preset, "count": count}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="64x36, counts / 100, frame 12, 2 rounds")
    parser.add_argument("--rounds", type=int, default=None, help="edits of each kind timed (5; --quick 2)")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default bench/results/)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (2 if args.quick else 5)
    width, height, frame = (64, 36, 12) if args.quick else (1920, 1080, FRAME)
    device = BlenderHost().device
    rows = []
    for case, preset, count, label, name, values in CASES:
        log(f"{case}: {preset}, {name}, frame {frame}")
        count = count or load_preset(preset).effect.count
        count = count // 100 if args.quick and count >= 10_000 else count
        rows.append({"case": case, **measure(preset, count, label, name, values, width, height, frame, rounds)})
    records.write("look-edits", device, rows, results=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
