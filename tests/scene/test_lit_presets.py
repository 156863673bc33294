"""Lit presets (issue 29): their stages bring the lights, World and shadowing meshes their look was tuned under,
every preset still bakes, and the Lighting panel says what lights the particles and what is wrong."""

import bpy
import numpy as np
import pytest
from mathutils import Vector

from addon.cli import build_scene
from addon.engine.settings.presets import load_preset, preset_names
from addon.scene.stage_lights import OCCLUDER_PROPERTY, add_stage_light_setup
from tests.conftest import add_effect

LIT_PRESETS = ("smoke", "explosion", "dust")


def lights_of(scene) -> dict:
    return {obj.name: obj for obj in scene.objects if obj.type == "LIGHT"}


@pytest.mark.parametrize("name", LIT_PRESETS)
def test_lit_presets_are_lit_and_bring_their_lights(name, tmp_path):
    preset = load_preset(name)
    assert preset.effect.lighting in ("LIT", "BOTH")
    scene, _ = build_scene(preset, (1, 2), (32, 18), tmp_path)
    lights = lights_of(scene)
    assert sorted(light.data.type for light in lights.values()) == sorted(s["type"] for s in preset.stage["lights"])
    assert all(light.data.use_shadow for light in lights.values()), "every preset light casts particle shadows"
    assert tuple(scene.world.color) == pytest.approx(preset.stage["world"]["color"])


def test_a_stage_light_shines_at_its_target_with_its_power_and_color(tmp_path):
    scene, _ = build_scene(load_preset("smoke"), (1, 2), (32, 18), tmp_path)
    [sun] = lights_of(scene).values()
    [spec] = load_preset("smoke").stage["lights"]
    bpy.context.view_layer.update()
    shines = sun.matrix_world.to_quaternion() @ Vector((0.0, 0.0, -1.0))  # Blender's lights shine along -Z
    expected = np.subtract(spec["target"], spec["location"])
    assert np.asarray(shines) == pytest.approx(expected / np.linalg.norm(expected), abs=1e-5)
    assert sun.data.energy == pytest.approx(spec["power"]) and tuple(sun.data.color) == pytest.approx(spec["color"])


def test_the_fireballs_light_follows_its_flash(tmp_path):
    """explosion: the point light's power is keyframed: dark before the burst, brightest at the flash, then out."""
    scene, _ = build_scene(load_preset("explosion"), (1, 80), (32, 18), tmp_path)
    fireball = next(light for light in lights_of(scene).values() if light.data.type == "POINT")
    power = {}
    for frame in (1, 2, 20, 72):
        scene.frame_set(frame)
        power[frame] = fireball.data.energy
    assert power[1] == 0.0 and power[2] > power[20] > power[72] == 0.0


def test_dust_has_a_window_wall_between_its_sun_and_the_motes(tmp_path):
    preset = load_preset("dust")
    scene, _ = build_scene(preset, (1, 2), (32, 18), tmp_path)
    walls = [obj for obj in scene.objects if obj.get(OCCLUDER_PROPERTY)]
    assert len(walls) == len(preset.stage["occluders"]) and all(wall.type == "MESH" for wall in walls)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    boxes = [np.array([wall.matrix_world @ v.co for v in wall.evaluated_get(depsgraph).data.vertices])
             for wall in walls]
    [sun] = lights_of(scene).values()
    assert sun.location.y > max(box[:, 1].max() for box in boxes) > 0, "the wall stands between the sun and the motes"


def test_adding_a_lit_preset_from_the_panel_adds_its_lights_once_around_the_emitter(scene):
    """A scene without lights gets the preset's (placed around the emitter, as fields are); a scene with lights
    keeps its own: the artist's lighting wins."""
    emitter = bpy.context.view_layer.objects.active
    emitter.location = (3.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    bpy.ops.gpu_particles.add(preset="dust")
    walls = [obj for obj in scene.objects if obj.get(OCCLUDER_PROPERTY)]
    stage = load_preset("dust").stage
    first = stage["occluders"][0]
    assert walls[0].location.x == pytest.approx(first["location"][0] + 3.0 - stage["emitter"]["location"][0])
    assert bpy.context.view_layer.objects.active == emitter
    count = len(scene.objects)
    bpy.ops.gpu_particles.add(preset="smoke")
    bpy.ops.gpu_particles.add(preset="dust")
    assert len(scene.objects) == count and len(lights_of(scene)) == 1, "nothing added twice"


def test_a_scene_with_its_own_lights_keeps_them_and_its_world(tmp_path):
    scene, _ = build_scene(load_preset("default"), (1, 2), (32, 18), tmp_path)
    bpy.ops.object.light_add(type="AREA")
    assert add_stage_light_setup(load_preset("smoke").stage, scene=scene) == []
    assert scene.world is None and list(lights_of(scene)) == ["Area"]


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_bakes_a_frame_on_its_own_stage(name, tmp_path):
    """Each shipped preset on the stage the command line builds (its lights and walls too), at a small count:
    a finite frame with particles in it."""
    import addon
    from addon.cli import add_preset_effect
    from addon.scene.renderer import SceneRenderer

    preset = load_preset(name)
    scene, emitter = build_scene(preset, (1, 3), (48, 27), tmp_path)
    addon.register()
    try:
        add_preset_effect(scene, name, preset)
        emitter.gpu_particles.active_effect.count = 3000
        pixels = SceneRenderer(scene, 48, 27).render(3)
    finally:
        addon.unregister()
    assert np.isfinite(pixels).all() and pixels[..., :3].max() > 1e-3, name


def lighting_panel_log():
    from addon.ui import panels
    from tests.ui.test_panels import draw

    return draw(dict(zip([title for title, _ in panels.SECTIONS], panels.SECTION_PANELS))["Lighting"])


def labels(log) -> list[str]:
    return [entry[1] for entry in log if entry[0] == "label"]


def point_lights(count: int, power: float = 100.0) -> list[dict]:
    """``count`` point lights along X, nearest (brightest at the emitter) first: L000, L001, ..."""
    return [{"type": "POINT", "name": f"L{i:03d}", "power": power, "location": [2.0 + i, 0.0, 0.0]}
            for i in range(count)]


def test_lighting_panel_draws_its_settings_and_names_the_lights_that_cast_particle_shadows(scene):
    from addon.scene.stage_lights import add_stage_lights

    effect = add_effect(lighting="LIT")
    add_stage_lights([{"type": "SUN", "name": "Sun", "power": 3.0},
                      {"type": "POINT", "name": "Lamp", "power": 50.0, "location": [1, 0, 0], "shadow": False}])
    log = lighting_panel_log()
    drawn = [entry[2] for entry in log if entry[0] == "prop"]
    assert drawn == ["lighting", "albedo", "albedo_end", "density", "anisotropy", "sprite_relief", "shadow_density",
                     "shadows_on_scene", "shadow_resolution"]
    assert labels(log) == ["Particle shadows from: Sun", "Shadows on the scene from: Sun",
                           "Lighting without particle shadows: Lamp"]
    effect.shadows_on_scene = False
    assert labels(lighting_panel_log()) == ["Particle shadows from: Sun", "Lighting without particle shadows: Lamp"]
    effect.shadows_on_scene, scene.gpu_particles.occlusion = True, "NONE"
    assert any(line.startswith("Shadows on Scene need Occlusion: Scene") for line in labels(lighting_panel_log()))
    effect.lighting = "EMISSION"
    assert labels(lighting_panel_log()) == ["Emission: the particles glow; the scene's lights are not used"]


def test_lit_without_any_light_says_so_and_draws_a_finite_frame(scene):
    from addon.scene.renderer import SceneRenderer

    add_effect(lighting="LIT")
    text = labels(lighting_panel_log())
    assert text[0] == "No light casts particle shadows"
    assert any(line.startswith("lit with no light: the lit effects on 'Emitter' are black") for line in text), text
    assert np.isfinite(SceneRenderer(scene, 32, 18).render(2)).all()


def test_a_hundred_lights_say_which_four_cast_particle_shadows(scene):
    from addon.scene.stage_lights import add_stage_lights

    add_effect(lighting="LIT")
    add_stage_lights(point_lights(100))
    text = labels(lighting_panel_log())
    assert text[:2] == ["Particle shadows from: L000, L001, L002, L003", "Shadows on the scene from: L000, L001, L002, L003"]
    assert text[2] == "Shadow slots taken (4 lights): no particle shadows from " + ", ".join(f"L{i:03d}" for i in range(4, 32))
    assert any("only the 4 brightest (L000, L001, L002, L003) cast particle shadows" in line for line in text), text
    assert any(line.startswith("100 lights: the 32 brightest") and "L099" in line for line in text), text


def test_a_light_with_negative_or_zero_power_is_named_and_lights_nothing(scene):
    from addon.scene.renderer import SceneRenderer
    from addon.scene.stage_lights import add_stage_lights

    add_effect(lighting="BOTH")
    [negative, zero] = add_stage_lights(point_lights(2))
    negative.data.energy, zero.data.energy = -50.0, 0.0
    text = labels(lighting_panel_log())
    assert "light 'L000' has negative power: it lights no particles" in text
    assert "light 'L001' has no power: it lights no particles" in text
    assert np.isfinite(SceneRenderer(scene, 32, 18).render(2)).all()



def frame_to_frame_changes(tmp_path, name: str, lighting: str, frames=range(2, 13), size=(120, 68)):
    """(mean absolute change from each frame to the next over the frames' mean, the shadow grid's voxel edge at
    each frame) of preset ``name`` (fewer particles) on an orbiting emitter: the cloud moves through the grid."""
    from dataclasses import replace

    import addon
    from addon.cli import add_preset_effect
    from addon.scene.renderer import SceneRenderer

    preset = load_preset(name)
    stage = {**preset.stage, "emitter": {**preset.stage["emitter"], "orbit_radius": 2.0, "orbit_seconds": 20.0},
             "motion_blur": {}}
    preset = replace(preset, stage=stage)
    scene, emitter = build_scene(preset, (1, frames[-1]), size, tmp_path)
    addon.register()
    try:
        add_preset_effect(scene, name, preset)
        effect = emitter.gpu_particles.active_effect
        effect.count, effect.lighting = 10000, lighting
        renderer = SceneRenderer(scene, *size, exact_sort=True)
        shots, voxels = [], []
        for frame in frames:
            shots.append(renderer.render(frame)[..., :3].sum(axis=-1))
            if renderer.shadows is not None:
                voxels.append(float(renderer.host.read(renderer.shadows.grid).ravel()[3]))
    finally:
        addon.unregister()
    shots = np.array(shots)
    return np.abs(np.diff(shots, axis=0)).mean(axis=(1, 2)) / shots.mean(), voxels


@pytest.mark.parametrize("name", ["smoke", "explosion"])
def test_a_moving_lit_cloud_changes_as_smoothly_as_the_unlit_one(name, tmp_path):
    """The moving-shot check of issue 29 (no banding or grid crawl): a lit cloud changes from frame to frame
    about as much as the same cloud unlit, with no frame that jumps, also where the growing fireball makes the
    shadow grid double its voxel (re-placed twice here, frames 4 and 7: no step there).  Sub-voxel crawl is
    test_shadow_volume's no-crawl test.  Measured here: lit / unlit medians 1.26 (smoke), 1.23 (explosion), the
    largest change 1.02x and 1.13x the median; the smoke preset's 120k particles orbiting at 960x540 over 72
    frames on an H200: lit 2.8-3.3 8-bit levels a frame, unlit 2.3-2.7, none above 1.1x the median."""
    (lit, voxels), (unlit, _) = (frame_to_frame_changes(tmp_path, name, lighting) for lighting in ("LIT", "EMISSION"))
    assert name != "explosion" or len(set(voxels)) > 1, "the growing fireball's grid doubled its voxel"
    assert lit.max() < 1.5 * np.median(lit)
    assert np.median(lit) < 1.6 * np.median(unlit)
