"""The extension zip installs into a fresh Blender session and bakes through the installed operator
(what the zip holds and leaves out: test_package_contents.py)."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

INSTALL_AND_BAKE = r"""
import sys
from pathlib import Path
import bpy

zip_path, out = sys.argv[1], Path(sys.argv[2])
assert bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True) == {"FINISHED"}
module = sys.modules["bl_ext.user_default.gpu_particles"]
assert "user_default" in module.__file__, module.__file__

scene = bpy.context.scene
for obj in list(scene.objects):
    bpy.data.objects.remove(obj)
bpy.ops.mesh.primitive_uv_sphere_add(radius=0.3, location=(0, 0, 0))
mesh = bpy.context.active_object
bpy.ops.object.camera_add(location=(0, -6, 1), rotation=(1.45, 0, 0))
scene.camera = bpy.context.active_object
bpy.context.view_layer.objects.active = mesh
bpy.ops.gpu_particles.add(preset="default")
mesh.gpu_particles.active_effect.count = 3000
scene.frame_start, scene.frame_end = 1, 3
scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 80, 45, 100
scene.render.image_settings.file_format = "PNG"
scene.gpu_particles_output.bake_path = str(out / "shot_##")
assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
print("BAKED", sorted(p.name for p in out.iterdir()))
"""


def test_zip_installs_and_bakes(tmp_path):
    build = subprocess.run([sys.executable, str(ROOT / "tools" / "package.py"), str(tmp_path / "dist")],
                           capture_output=True, text=True, check=True)
    zip_path = Path(build.stdout.strip())
    names = zipfile.ZipFile(zip_path).namelist()
    assert {"blender_manifest.toml", "__init__.py", "shaders/splat_aggregate.glsl", "presets/default.json"} <= set(names)
    assert not any("__pycache__" in n for n in names)

    user_resources = tmp_path / "blender_user"
    out = tmp_path / "frames"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["BLENDER_USER_RESOURCES"] = str(user_resources)
    result = subprocess.run([sys.executable, "-c", INSTALL_AND_BAKE, str(zip_path), str(out)], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "BAKED ['gpu_particles_bake.json', 'shot_01.png', 'shot_02.png', 'shot_03.png']" in result.stdout
    assert (user_resources / "extensions" / "user_default" / "gpu_particles" / "shaders" / "simulate.glsl").is_file()
