"""Before and after picture of particles in Blender's own render (issue 16), rendered by Blender.

A preset's stage with a cube half in front of the emitter, rendered with F12's operator
(``bpy.ops.render.render(write_still=True)``): on the left with the particle layer switched off
(what a render gave before), on the right as the add-on composites it (the particles hidden where
the cube is in front, by the render's own depth pass)::

    .venv/bin/python tools/render_before_after.py --out docs/render_before_after.png [--engine BLENDER_EEVEE]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def add_cube_in_front(scene, emitter, fraction=0.45, shift=0.7, size=1.0):
    """A cube part of the way from the emitter to the camera, shifted to the camera's right."""
    import bpy
    from mathutils import Vector

    camera = scene.camera.matrix_world
    right = camera.to_3x3() @ Vector((1.0, 0.0, 0.0))
    center = emitter.location.lerp(camera.translation, fraction) + right * shift + Vector((0.0, 0.0, 0.5))
    bpy.ops.mesh.primitive_cube_add(size=size, location=center)
    bpy.context.active_object.rotation_euler = (0.0, 0.0, 0.5)
    bpy.context.view_layer.objects.active = emitter


def render_still(scene, path: Path, with_particles: bool):
    import bpy
    import numpy as np

    scene.gpu_particles_output.use_render = with_particles
    scene.render.use_compositing = with_particles
    scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(str(path), check_existing=False)
    width, height = image.size
    pixels = np.array(image.pixels[:], np.float32).reshape(height, width, 4)
    bpy.data.images.remove(image)
    return pixels


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "docs" / "render_before_after.png"))
    parser.add_argument("--preset", default="fire")
    parser.add_argument("--engine", default="BLENDER_WORKBENCH")
    parser.add_argument("--res", default="480x270")
    args = parser.parse_args(argv)

    import bpy
    import numpy as np

    import addon
    from addon.cli import add_preset_effect, build_scene
    from addon.engine.settings.presets import load_preset
    from addon.output.compositor_nodes import ensure_compositing

    preset = load_preset(args.preset)
    frame = int(preset.stage.get("poster_frame", 24))
    size = tuple(int(v) for v in args.res.lower().split("x"))
    with tempfile.TemporaryDirectory() as scratch:
        scene, emitter = build_scene(preset, (1, frame), size, Path(scratch))
        addon.register()
        add_preset_effect(scene, args.preset, preset)
        add_cube_in_front(scene, emitter)
        scene.render.engine = args.engine
        scene.render.image_settings.color_mode = "RGB"
        scene.gpu_particles_output.layer_path = str(Path(scratch) / "layer") + "/"
        scene.frame_set(frame)
        ensure_compositing(scene)
        before = render_still(scene, Path(scratch) / "before.png", False)
        after = render_still(scene, Path(scratch) / "after.png", True)
    gap = np.ones((before.shape[0], 4, 4), np.float32)
    sheet = np.concatenate([before, gap, after], axis=1)
    image = bpy.data.images.new("before_after", sheet.shape[1], sheet.shape[0])
    image.pixels.foreach_set(sheet.ravel())  # already display-encoded PNG values: saved as is
    image.filepath_raw = args.out
    image.file_format = "PNG"
    image.save()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
