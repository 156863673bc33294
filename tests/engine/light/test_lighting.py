"""Lit particles (issue 29): Blender's light units, the light pass against its numpy reference, what the frame
draws, lights read from a Blender scene, bad lights."""

import dataclasses
import hashlib
import math

import numpy as np
import pytest

from addon.engine import pipeline
from addon.engine.draw import sprites
from addon.engine.draw.compositing import Camera, Compositor
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.light.light_pass import light_particles
from addon.engine.look import lighting
from addon.engine.look.lighting import Light, SceneLights
from addon.engine.reference.look import lighting as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate.simulation import ParticleSystem

HALF = 2.0**-10  # relative rounding of the RGBA16F particle_light, with float32 arithmetic before it

LIGHTS = (
    Light("SUN", (1.0, 0.9, 0.8), 3.0, (0.0, 0.0, 0.0), (0.6, 0.0, -0.8), name="sun"),
    Light("POINT", (1.0, 0.5, 0.25), 400.0, (1.0, 2.0, 1.5), radius=0.3, name="point"),
    Light("SPOT", (0.2, 1.0, 0.4), 900.0, (0.0, 0.0, 4.0), (0.0, 0.0, -1.0), spot_size=1.2, spot_blend=0.4,
          name="spot"),
    Light("AREA", (1.0, 1.0, 1.0), 250.0, (-2.0, 0.0, 0.5), (1.0, 0.0, 0.0), area_shape="RECTANGLE", size_x=1.0,
          size_y=0.5, name="rectangle"),
    Light("AREA", (0.5, 0.5, 1.0), 250.0, (0.0, -2.0, 0.5), (0.0, 1.0, 0.0), area_shape="DISK", size_x=0.8,
          size_y=0.8, name="disc"),
)


def cloud(rng, n, spread=1.0):
    """(pos_age, vel_life) of n particles around the origin at random ages, a tenth of them dead or unborn."""
    pos_age, vel_life = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:] = rng.normal(0.0, spread, (n, 3))
    particle["life"][:] = 2.0
    particle["age"][:] = rng.uniform(0.0, 2.0, n)
    particle["age"][: n // 10] = -1.0
    return pos_age, vel_life


def lit_system(host, pos_age, vel_life, **values):
    settings = effect_settings({"count": len(pos_age), "lighting": "LIT", **values})
    system = ParticleSystem(host, settings)
    system.write_state(pos_age, vel_life)
    return system


def view_from(eye):
    """A world to view matrix of a camera at ``eye`` (turned as the world is)."""
    view = np.eye(4)
    view[:3, 3] = -np.asarray(eye, np.float64)
    return view


def gpu_light(host, system, lights, eye):
    compositor = Compositor(FrameResources(host, 4, 4), render_settings())
    light_particles(host, system, lights, view_from(eye), compositor.resources.look_texture(system))
    return host.read(system.particle_light).reshape(-1, 4)[: system.count, :3]


@pytest.mark.parametrize("values", [
    {"anisotropy": 0.0},
    {"anisotropy": 0.6, "albedo": (1.0, 0.5, 0.2), "albedo_end": (0.1, 0.2, 0.9)},
    {"anisotropy": -0.4, "lighting": "BOTH", "size": 0.4},
], ids=["isotropic", "forward-albedo-over-life", "backward-both-inside"])
def test_light_pass_matches_reference(host, rng, values):
    pos_age, vel_life = cloud(rng, 3000)
    system = lit_system(host, pos_age, vel_life, **values)
    lights = SceneLights(LIGHTS, (0.05, 0.04, 0.03))
    eye = (3.0, -4.0, 2.0)
    got = gpu_light(host, system, lights, eye)
    want = ref.particle_light(system.settings, lights, eye, pos_age, vel_life)
    assert np.isfinite(got).all() and (want > 0).any()
    np.testing.assert_allclose(got, want, rtol=4 * HALF, atol=1e-6)
    assert (got[: len(pos_age) // 10] == 0).all(), "dead and unborn slots get no light"


def test_lit_albedo_follows_the_speed_with_color_by_speed(host, rng):
    """Color by Speed, Lit: the albedo from albedo (still) to albedo_end (at color_speed), GPU vs reference."""
    pos_age, vel_life = cloud(rng, 3000)
    PARTICLE.read_images(pos_age, vel_life)["velocity"][:] = rng.normal(0.0, 1.5, (3000, 3))
    values = {"albedo": (1.0, 0.5, 0.2), "albedo_end": (0.1, 0.2, 0.9), "color_by": "SPEED", "color_speed": 3.0}
    system = lit_system(host, pos_age, vel_life, **values)
    lights = SceneLights(LIGHTS, (0.05, 0.04, 0.03))
    eye = (3.0, -4.0, 2.0)
    got = gpu_light(host, system, lights, eye)
    want = ref.particle_light(system.settings, lights, eye, pos_age, vel_life)
    np.testing.assert_allclose(got, want, rtol=4 * HALF, atol=1e-6)
    by_age = ref.particle_light(dataclasses.replace(system.settings, color_by="AGE"), lights, eye, pos_age, vel_life)
    assert not np.allclose(want, by_age, rtol=0.05), "the speed shows"


# One particle at the origin, albedo 1, g = 0: its radiance is E / pi, E written out per type.
D = 2.0
ONE_PARTICLE = {
    "sun": (Light("SUN", (1.0, 1.0, 1.0), 3.0, (9.0, 9.0, 9.0), (0.0, 0.0, -1.0)), 3.0),
    "point": (Light("POINT", (1.0, 1.0, 1.0), 1000.0, (0.0, 0.0, D), radius=0.5), 1000.0 / (4 * math.pi * 4.25)),
    "spot-edge": (Light("SPOT", (1.0, 1.0, 1.0), 1000.0, (0.0, D * math.sin(0.4), D * math.cos(0.4)),
                        (0.0, 0.0, -1.0), spot_size=1.0, spot_blend=0.5),
                  1000.0 / (4 * math.pi * D * D) * (lambda x: x * x * (3 - 2 * x))(
                      (math.cos(0.4) - math.cos(0.5)) / ((1 - math.cos(0.5)) * 0.5))),
    "area-square": (Light("AREA", (1.0, 1.0, 1.0), 1000.0, (0.0, 0.0, D), area_shape="SQUARE", size_x=0.01,
                          size_y=0.01), 1000.0 / (math.pi * D * D)),
    "area-disc": (Light("AREA", (1.0, 1.0, 1.0), 1000.0, (0.0, 0.0, D), area_shape="DISK", size_x=2.0, size_y=2.0),
                  1000.0 / (math.pi * (D * D + 1.0))),
    "area-tilted": (Light("AREA", (1.0, 1.0, 1.0), 1000.0, (0.0, 0.0, D), (0.0, math.sin(0.6), -math.cos(0.6)),
                          area_shape="SQUARE", size_x=0.01, size_y=0.01), 1000.0 / (math.pi * D * D) * math.cos(0.6)),
}


@pytest.mark.parametrize("case", ONE_PARTICLE)
def test_one_particle_under_each_light_type_matches_the_formula(host, case):
    light, irradiance = ONE_PARTICLE[case]
    pos_age = np.array([[0.0, 0.0, 0.0, 0.5]], np.float32)
    vel_life = np.array([[0.0, 0.0, 0.0, 1.0]], np.float32)
    system = lit_system(host, pos_age, vel_life, albedo=(1.0, 1.0, 1.0), albedo_end=(1.0, 1.0, 1.0), size=1e-4)
    got = gpu_light(host, system, SceneLights((light,)), (0.0, -5.0, 0.0))
    np.testing.assert_allclose(got[0], irradiance / math.pi, rtol=2 * HALF)
    np.testing.assert_allclose(lighting.irradiance(light, [[0.0, 0.0, 0.0]], 1e-4)[0][0], irradiance, rtol=1e-4)


@pytest.mark.parametrize("mode", ["EMISSION", "LIT", "BOTH"])
def test_the_frame_draws_the_light_pass_radiance(host, mode):
    """One particle covering its pixel, splatted: Emission draws its color, Lit the light pass's radiance,
    Both their sum; sprites (alpha) and rasterized points take the same color."""
    width = height = 8
    camera = Camera.pixel_grid(width, height)
    pos_age = np.array([[3.5, 4.5, 0.0, 0.5]], np.float32)
    vel_life = np.array([[0.0, 0.0, 0.0, 1.0]], np.float32)
    values = {"size": 2.0, "color_start": (0.2, 0.1, 0.0), "color_end": (0.2, 0.1, 0.0), "albedo": (1.0, 1.0, 1.0),
              "albedo_end": (1.0, 1.0, 1.0)}
    system = lit_system(host, pos_age, vel_life, **values, lighting=mode)
    lights = SceneLights((Light("SUN", (1.0, 1.0, 1.0), math.pi, (0.0, 0.0, 0.0)),), (0.5, 0.5, 0.5))
    compositor = Compositor(FrameResources(host, width, height), render_settings({"emax": 8.0}))
    if mode != "EMISSION":
        light_particles(host, system, lights, view_from((0.0, 0.0, 10.0)), compositor.resources.look_texture(system))
    want = ref.drawn_radiance(system.settings, np.array([1.5, 1.5, 1.5]), np.array([0.2, 0.1, 0.0]))
    for particle_type, blend in (("POINT", "ADD"), ("POINT", "ALPHA"), ("SPRITE", "ADD")):
        system.settings = dataclasses.replace(system.settings, particle_type=particle_type, blend_mode=blend,
                                              opacity=1.0)
        layer = sprites.SpriteLayer(host, width, height) if blend == "ALPHA" else None
        frame = pipeline.composite([system], compositor, camera, layer)
        center = frame[4, 3, :3]
        if particle_type == "POINT" and blend == "ADD":
            np.testing.assert_allclose(center, want, rtol=1e-3, atol=1e-5)
        else:
            assert center.sum() > 0.5 * want.sum(), (particle_type, blend, center)
            np.testing.assert_allclose(center / center.sum(), want / want.sum(), atol=0.01)


def test_bad_lights_give_finite_frames(host, rng):
    """A light inside the cloud, a huge one, zero density: finite radiance, never NaN or inf."""
    pos_age, vel_life = cloud(rng, 500, spread=0.2)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][100] = 0.0  # exactly at the point light
    system = lit_system(host, pos_age, vel_life, density=0.0, size=0.01)
    lights = SceneLights((Light("POINT", (1.0, 1.0, 1.0), lighting.MAX_POWER, (0.0, 0.0, 0.0)),
                          Light("AREA", (1.0, 1.0, 1.0), 1e3, (0.0, 0.0, 0.0), area_shape="SQUARE")))
    got = gpu_light(host, system, lights, (0.0, 0.0, 0.0))
    assert np.isfinite(got).all()
    assert got.max() == lighting.RADIANCE_LIMIT, "saturates at the largest half float"


def test_shadow_slots_go_to_the_four_brightest_casting_lights():
    lights = [Light("POINT", (1.0, 1.0, 1.0), 10.0 * (k + 1), (0.0, 0.0, 1.0), shadow=k % 2 == 0, name=f"L{k}")
              for k in range(100)]
    ranked, warnings = lighting.assign_shadow_slots(lights, (0.0, 0.0, 0.0))
    assert len(ranked) == lighting.MAX_LIGHTS and ranked[0].name == "L99"
    assert [(light.name, light.shadow_slot) for light in ranked if light.shadow_slot >= 0] == [
        ("L98", 0), ("L96", 1), ("L94", 2), ("L92", 3)]
    assert "100 lights" in warnings[0] and "L0" in warnings[0]
    assert "only the 4 brightest (L98, L96, L94, L92) cast particle shadows" in warnings[1]


def test_light_rows_pack_the_record():
    rows = lighting.light_rows(LIGHTS)
    assert rows.shape == (lighting.MAX_LIGHTS * 4, 4)
    read = lighting.LIGHT.read(rows.reshape(lighting.MAX_LIGHTS, 4, 4))
    assert read["radius"][1] == np.float32(0.3) and read["shadow_slot"][0] == -1
    np.testing.assert_allclose(read["radiant"][0], np.array(LIGHTS[0].color) * 3.0)
    assert read["kind"][3] == lighting.LIGHT_TYPES["AREA_RECTANGLE"] and read["kind"][4] == lighting.LIGHT_TYPES[
        "AREA_DISC"]


# Blender's units: a white diffuse plane facing each light, rendered by Cycles, is E / pi.
def _render_plane(kind, power, rotation=0.0, **light_values):
    import bpy

    scene = bpy.data.scenes.new("units")
    scene.render.engine = "CYCLES"
    scene.cycles.device, scene.cycles.samples, scene.cycles.use_denoising = "CPU", 16, False
    scene.render.resolution_x = scene.render.resolution_y = 8
    scene.view_settings.view_transform, scene.view_settings.look = "Standard", "None"
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.world = bpy.data.worlds.new("black")
    scene.world.color = (0.0, 0.0, 0.0)
    scene.world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.0, 0.0, 0.0, 1.0)
    mesh = bpy.data.meshes.new("plane")
    mesh.from_pydata([(-50, -50, 0), (50, -50, 0), (50, 50, 0), (-50, 50, 0)], [], [(0, 1, 2, 3)])
    material = bpy.data.materials.new("white")
    nodes = material.node_tree.nodes
    nodes.clear()
    diffuse, output = nodes.new("ShaderNodeBsdfDiffuse"), nodes.new("ShaderNodeOutputMaterial")
    diffuse.inputs["Color"].default_value = (1.0, 1.0, 1.0, 1.0)
    material.node_tree.links.new(diffuse.outputs[0], output.inputs[0])
    mesh.materials.append(material)
    scene.collection.objects.link(bpy.data.objects.new("plane", mesh))
    camera = bpy.data.cameras.new("camera")
    camera.type, camera.ortho_scale = "ORTHO", 0.02
    scene.camera = bpy.data.objects.new("camera", camera)
    scene.camera.location = (0.0, 0.0, 5.0)
    scene.collection.objects.link(scene.camera)
    data = bpy.data.lights.new(kind, kind)
    data.energy = power
    for name, value in light_values.items():
        setattr(data, name, value)
    obj = bpy.data.objects.new(kind, data)
    obj.location, obj.rotation_euler, obj.visible_camera = (0.0, 0.0, D), (rotation, 0.0, 0.0), False
    scene.collection.objects.link(obj)
    scene.view_layers[0].update()  # the world matrices
    return scene, obj


UNITS = {
    "sun": ("SUN", 3.0, 0.0, {}),
    "point": ("POINT", 1000.0, 0.0, {"shadow_soft_size": 0.0}),
    "point-sphere": ("POINT", 1000.0, 0.0, {"shadow_soft_size": 1.0}),
    "spot-blend": ("SPOT", 1000.0, 0.4, {"shadow_soft_size": 0.0, "spot_size": 1.0, "spot_blend": 0.5}),
    "area-square": ("AREA", 1000.0, 0.0, {"shape": "SQUARE", "size": 0.1}),
    "area-tilted": ("AREA", 1000.0, 0.6, {"shape": "SQUARE", "size": 0.1}),
    "area-disk": ("AREA", 1000.0, 0.0, {"shape": "DISK", "size": 2.0}),
    "area-rectangle": ("AREA", 1000.0, 0.0, {"shape": "RECTANGLE", "size": 2.0, "size_y": 1.0}),
}


@pytest.mark.parametrize("case", UNITS)
def test_blender_light_units_match_cycles(host, tmp_path, case):
    """Cycles' pixel of a white diffuse plane facing the light against E / pi of the light as
    scene/lights.py reads it (within 2%)."""
    import bpy

    from addon.scene.lights import read_light

    kind, power, rotation, values = UNITS[case]
    scene, obj = _render_plane(kind, power, rotation, **values)
    light, problem = read_light(obj)
    assert problem is None
    scene.render.filepath = str(tmp_path / "plane.exr")
    with bpy.context.temp_override(scene=scene):
        bpy.ops.render.render(write_still=True, scene=scene.name)
    image = bpy.data.images.load(scene.render.filepath)
    pixel = np.array(image.pixels[:]).reshape(-1, 4)[:, :3].mean()
    bpy.data.images.remove(image)
    bpy.data.scenes.remove(scene)
    expected = lighting.irradiance(light, [[0.0, 0.0, 0.0]])[0][0, 0] / math.pi
    assert pixel == pytest.approx(expected, rel=0.02)


def test_read_light_and_world(host):
    import bpy

    from addon.scene.lights import read_light, scene_lights, world_ambient

    scene = bpy.data.scenes.new("lights")
    made = {}
    for kind in ("SUN", "POINT", "SPOT", "AREA"):
        data = bpy.data.lights.new(kind, kind)
        data.energy, data.color = 10.0, (1.0, 0.5, 0.25)
        obj = bpy.data.objects.new(kind, data)
        obj.location, obj.rotation_euler = (1.0, 2.0, 3.0), (math.pi / 2, 0.0, 0.0)
        scene.collection.objects.link(obj)
        made[kind] = obj
    made["AREA"].data.shape, made["AREA"].data.size, made["AREA"].data.size_y = "RECTANGLE", 2.0, 0.5
    made["SPOT"].data.spot_size, made["SPOT"].data.spot_blend = 0.7, 0.3
    made["POINT"].data.shadow_soft_size = 0.25
    scene.view_layers[0].update()
    area = read_light(made["AREA"])[0]
    assert (area.type, area.area_shape) == ("AREA", "RECTANGLE")
    assert (area.size_x, area.size_y) == pytest.approx((2.0, 0.5))
    np.testing.assert_allclose(area.direction, (0.0, 1.0, 0.0), atol=1e-6)  # -Z turned a quarter about X
    np.testing.assert_allclose(area.position, (1.0, 2.0, 3.0))
    assert area.color == (1.0, 0.5, 0.25) and area.power == 10.0
    spot = read_light(made["SPOT"])[0]
    assert spot.spot_size == pytest.approx(0.7) and spot.spot_blend == pytest.approx(0.3)
    assert read_light(made["POINT"])[0].radius == 0.25
    made["SUN"].hide_render = True
    found = scene_lights(scene, (1.0, 2.0, 3.0))
    assert {light.name for light in found.lights} == {made[kind].name for kind in ("POINT", "SPOT", "AREA")}
    # Bad power: zero and negative light nothing, with a warning; huge is clamped.
    made["POINT"].data.energy = 0.0
    made["SPOT"].data.energy = -5.0
    made["AREA"].data.energy = 1e12
    found = scene_lights(scene, (1.0, 2.0, 3.0))
    assert [light.name for light in found.lights] == [made["AREA"].name] and found.lights[0].power == lighting.MAX_POWER
    assert any("no power" in w for w in found.warnings) and any("negative" in w for w in found.warnings)
    assert any("clamped" in w for w in found.warnings)
    # The World: a Background node's color x strength.
    world = bpy.data.worlds.new("world")
    background = world.node_tree.nodes["Background"]
    background.inputs["Color"].default_value = (0.2, 0.4, 0.6, 1.0)
    background.inputs["Strength"].default_value = 2.0
    np.testing.assert_allclose(world_ambient(world)[0], (0.4, 0.8, 1.2), rtol=1e-6)
    bpy.data.scenes.remove(scene)


def test_lit_bake_is_lit_animated_and_repeatable(scene, tmp_path):
    """A lit effect with no emission baked under a sun: not black; the sun's strength keyed up makes the
    last frame brighter; a second bake is byte-identical; no light and a black World warn."""
    import bpy

    from addon.scene.snapshot import read_lights
    from tests.conftest import add_effect
    from tests.output.test_bake import bake

    effect = add_effect(count=20_000, lighting="LIT", emission_strength=0.0, particle_type="SPRITE",
                        blend_mode="ALPHA", size=0.05)
    effect.emission_strength = 0.0
    scene.world = bpy.data.worlds.new("black")
    scene.world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.0, 0.0, 0.0, 1.0)
    scene.world.color = (0.0, 0.0, 0.0)
    emitters = [np.identity(4)]
    found = read_lights(scene, emitters, [(bpy.context.active_object, effect)])
    assert found.dark and any("lit with no light" in w for w in found.warnings)
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    scene.collection.objects.link(sun)
    sun.data.energy = 1.0
    sun.data.keyframe_insert("energy", frame=1)
    sun.data.energy = 8.0
    sun.data.keyframe_insert("energy", frame=4)
    digests = []
    for run in ("a", "b"):
        scene.gpu_particles_output.bake_path = str(tmp_path / run / "f_####")
        bake()
        digests.append([hashlib.sha256((tmp_path / run / f"f_{n:04d}.png").read_bytes()).hexdigest()
                        for n in range(1, 5)])
    assert digests[0] == digests[1]
    first, last = (np.array(bpy.data.images.load(str(tmp_path / "a" / f"f_{n:04d}.png")).pixels[:])
                   .reshape(-1, 4)[:, :3] for n in (1, 4))
    assert first.max() > 0.02, "lit by the sun where the emission is zero"
    assert last.mean() > 1.5 * first.mean(), "the keyed sun brightens the frame"
