"""The small shot both farm tests run (tests/product/test_flamenco.py, tests/product/test_openjd.py): baked once here
without the disk cache, then by the farm's tasks from the saved .blend; the frames, point caches and USD files
must be the same bytes."""

from pathlib import Path

import bpy

from tests.conftest import add_effect, has_pxr

FRAMES = 8


def bake_once_and_save(scene, tmp_path: Path) -> Path:
    """Bake the shot to tmp_path/single in one go, then save it as tmp_path/shot.blend with the disk cache
    on and frames going to tmp_path/farm (``//farm/``), as a farm's tasks will bake it."""
    add_effect(count=3000, turbulence_strength=1.0)
    scene.frame_end = scene.gpu_particles.simulation_end = FRAMES  # the simulate task caches the whole shot
    scene.gpu_particles.use_disk_cache = False
    scene.gpu_particles_output.write_points = True  # the chunks write them too, and USD where Blender has its module
    scene.gpu_particles_output.write_usd = has_pxr()
    scene.gpu_particles_output.bake_path = str(tmp_path / "single" / "f_####")
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    scene.gpu_particles.use_disk_cache = True
    scene.gpu_particles_output.bake_path = "//farm/f_####"
    blendfile = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blendfile), copy=True)
    return blendfile


def assert_farm_frames_match(tmp_path: Path, farm_folder: str = "farm") -> None:
    single, farm = (sorted((tmp_path / name).glob("*.png")) for name in ("single", farm_folder))
    assert [p.name for p in farm] == [p.name for p in single] and len(farm) == FRAMES
    for a, b in zip(single, farm, strict=True):
        assert a.read_bytes() == b.read_bytes(), f"{a.name} differs"
    usd = ("usd/*", "*.usda") if has_pxr() else ()
    for pattern in ("points/*.ply", *usd):  # the files beside the frames (output/extras.py)
        single, farm = (sorted((tmp_path / name).glob(pattern)) for name in ("single", farm_folder))
        assert [p.name for p in farm] == [p.name for p in single] and single, pattern
        for a, b in zip(single, farm, strict=True):
            assert a.read_bytes() == b.read_bytes(), f"{a.name} differs"
