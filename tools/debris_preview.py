"""The Debris preset's preview: its point cache on the stage, rocks instanced by Add to Scene, rendered by Cycles.

    .venv/bin/python tools/debris_preview.py [--frame 16] [--samples 32] [--out docs/previews/debris.jpg]

What a user gets: bake with Write Point Cache, Add Point Cache to Scene, F12 in Cycles (the rocks cast
shadows on the ground; the particle layer is left out, so the picture is Blender's own render alone).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frame", type=int, default=16)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--res", default="480x270")
    parser.add_argument("--out", default=str(ROOT / "docs" / "previews" / "debris.jpg"))
    args = parser.parse_args()
    import bpy

    import addon
    from addon.cli import add_preset_effect, build_scene, parse_resolution
    from addon.engine.settings.presets import load_preset
    from bench.pictures import save_file

    folder = Path(tempfile.mkdtemp(prefix="debris_preview_"))
    resolution = parse_resolution(args.res)
    scene, _ = build_scene(load_preset("debris"), (1, args.frame), resolution, folder)
    addon.register()
    add_preset_effect(scene, "debris", load_preset("debris"))
    output = scene.gpu_particles_output
    output.bake_path, output.write_points, output.use_render = str(folder / "f_####"), True, False
    scene.render.resolution_percentage = 10  # the frames are not the picture: only the point cache is used
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    scene.render.resolution_percentage = 100
    assert bpy.ops.gpu_particles.add_cached_geometry() == {"FINISHED"}
    scene.frame_set(args.frame)
    scene.render.engine = "CYCLES"
    scene.cycles.device, scene.cycles.samples, scene.cycles.use_denoising = "CPU", args.samples, False
    scene.render.filepath = str(folder / "render.png")
    bpy.ops.render.render(write_still=True)
    print(f"debris preview: {save_file(folder / 'render.png', Path(args.out))}")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
