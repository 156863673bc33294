"""Kernel variants as declared features (kernels.Feature): what a dispatch asks for is what the registry compiles.

The compile tests (test_compositor's every kernel, test_simulation's moderngl host) walk ``registry.KERNELS``;
these tests pin that it is every declared kernel's feature combinations, and that ``for_effect`` picks, for a few
representative effects, the variant the dispatch built by hand before the features (its defines, in order).
"""

import dataclasses
from types import SimpleNamespace

import pytest

from addon.engine import registry
from addon.engine.draw import bokeh, compositing, particle_depth, quad_tiles, raster, ribbons, sprites, trail_tiles
from addon.engine.light import light_pass, shadow_volume
from addon.engine.look.lighting import LIT, TINTED
from addon.engine.seam.kernels import Feature, Kernel
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate import simulation
from addon.hosts.__main__ import features, main

SHEETS = ([0], {}, {})  # SpriteSheets.blend_slots' answer for a frame with a textured effect
STILL = SimpleNamespace(shutter=None, focus=None)  # a camera without motion blur or depth of field
UNTEXTURED = {"sheet_slot": None, "relief": False}  # sprite_footprint's frame without textured sprites
TEXTURED_RELIEF = {"sprite_image": "smoke.png", "sprite_relief": 1.0, "lighting": "LIT", "blend_mode": "ALPHA"}


def added_defines(variant: Kernel, base: Kernel) -> list[str]:
    return [name for name, _ in variant.defines[len(base.defines):]]


def test_the_registry_is_every_declared_kernel_with_each_combination_of_its_features():
    assert registry.KERNELS == tuple(v for kernel in registry.DECLARED for v in kernel.variants())
    # 342, the open surfaces' contact passes, the textured rasterized quads under a shutter or a focus (18), the
    # neighbour grid's (grid_order with and without velocities) and granular_solve's kernels with simulate's
    # settle variants (17), fluids' and flocking's six, the VDB grids' seventeen, surface_shadow and the point caches'
    # ply_records (a state layout each)
    assert len(registry.KERNELS) == len(set(registry.KERNELS)) == 405
    assert len(registry.by_file()) == 88


def test_a_kernel_without_features_is_its_only_variant():
    kernel = registry.declared("copy_tint")[0]
    assert kernel.variants() == (kernel,) and kernel.for_effect(effect_settings()) is kernel


def test_a_feature_appends_its_declarations_and_drops_what_it_names():
    base = Kernel("k", constants=simulation.SIMULATE.constants[:2], defines=(("A", "1"),))
    dropping = Feature("f", defines=(("F", "1"),), drops=frozenset({base.constants[0].name}))
    variant = dataclasses.replace(base, features=(dropping,)).with_features("f")
    assert variant.defines == (("A", "1"), ("F", "1")) and variant.constants == base.constants[1:]
    assert variant.chosen == ("f",)


def test_an_unknown_feature_is_refused_by_name():
    with pytest.raises(KeyError, match="accepts"):
        simulation.SIMULATE.with_features("lit")


def test_variants_are_made_once_so_hosts_find_their_shader_by_the_very_kernel():
    s = effect_settings({"lighting": "LIT"})
    first = sprites.SPRITE_FOOTPRINT.for_effect(s, camera=STILL, **UNTEXTURED)
    assert first is sprites.SPRITE_FOOTPRINT.for_effect(s, camera=STILL, **UNTEXTURED)


def test_a_spawned_child_with_children_steps_with_events_and_without_emit_inputs():
    s = effect_settings({"spawn_from": "Rockets"})
    kernel = simulation.SIMULATE.for_effect(s, events=True)
    assert added_defines(kernel, simulation.SIMULATE) == ["EVENTS", "SPAWNED"]
    assert {i.name for i in kernel.images} & simulation.EMIT_ONLY == set()
    assert {"event_position", "event_velocity"} <= {i.name for i in kernel.images}
    assert kernel in registry.KERNELS
    assert simulation.SIMULATE.for_effect(effect_settings(), events=False) is simulation.SIMULATE


def test_the_events_feature_binds_the_systems_event_images():
    kernel = simulation.SIMULATE.for_effect(effect_settings(), events=True)
    system = SimpleNamespace(events={"event_position": "p", "event_velocity": "v"})
    assert kernel.bindings(system=system) == system.events


@pytest.mark.parametrize("lighting,inherit,expected", [
    ("EMISSION", 0.0, []), ("LIT", 0.0, ["PARTICLE_LIGHT"]), ("BOTH", 0.0, ["PARTICLE_LIGHT"]),
    ("EMISSION", 1.0, ["PARTICLE_TINT"]), ("LIT", 1.0, ["PARTICLE_LIGHT", "PARTICLE_TINT"]),
])
def test_the_look_features_follow_the_effects_lighting_and_inherited_color(lighting, inherit, expected):
    s = effect_settings({"lighting": lighting, "spawn_from": "Rockets", "spawn_inherit_color": inherit})
    kernel = sprites.SPRITE_FOOTPRINT.for_effect(s, camera=STILL, **UNTEXTURED)
    assert added_defines(kernel, sprites.SPRITE_FOOTPRINT) == expected
    system = SimpleNamespace(particle_light="light", tint="tint")
    assert kernel.bindings(system=system) == {n: v for n, v in (("particle_light", "light"), ("particle_tint", "tint"))
                                              if n.upper() in expected}


def test_the_registry_compiles_one_look_feature_at_a_time():
    names = [variant.chosen for variant in sprites.SPRITE_FOOTPRINT.variants() if "posed" not in variant.chosen]
    assert names == [(), ("focus",), (LIT.name,), (TINTED.name,), ("focus", LIT.name), ("focus", TINTED.name)]
    assert len(sprites.SPRITE_FOOTPRINT.variants()) == 3 * len(names), "untextured, posed, posed with relief"


def test_a_lit_splat_over_the_scene_depth_tests_it_then_reads_the_light():
    base = compositing.splat_variant(compositing.SPLAT_AGGREGATE, compositing.PAIRED)
    kernel = base.for_effect(effect_settings({"lighting": "LIT"}), depth=True)
    assert added_defines(kernel, base) == ["DEPTH_TEST", "COARSE_TILE", "PARTICLE_LIGHT"]
    assert [s.name for s in kernel.samplers][-3:] == ["coarse_depth", "scene_depth", "particle_light"]
    assert kernel in registry.KERNELS
    depth = SimpleNamespace(textures={"coarse_depth": "c", "scene_depth": "d"})
    assert kernel.bindings(system=SimpleNamespace(particle_light="l"), depth=depth) == {
        "coarse_depth": "c", "scene_depth": "d", "particle_light": "l"}


def test_the_light_pass_of_a_relief_effect_under_shadows_writes_its_light_direction():
    kernel = light_pass.LIGHT_PARTICLES.for_effect(effect_settings(TEXTURED_RELIEF), shadowed=True)
    assert added_defines(kernel, light_pass.LIGHT_PARTICLES) == ["SHADOW_VOLUME", "LIGHT_DIRECTION"]
    assert kernel in registry.KERNELS
    assert light_pass.LIGHT_PARTICLES.for_effect(effect_settings(), shadowed=False) is light_pass.LIGHT_PARTICLES


def test_a_textured_soft_frame_with_relief_blends_with_all_three_features():
    base = sprites.sprite_blend()
    kernel = base.for_effect(None, depth="depth", sheets=SHEETS, relief=True, soft_distance=0.5)
    assert added_defines(kernel, base) == ["SPRITE_DEPTH_TEST", "SPRITE_TEXTURE", "SPRITE_RELIEF", "SOFT_PARTICLES"]
    assert kernel in registry.KERNELS


def test_relief_without_a_textured_effect_blends_untextured():
    base = sprites.sprite_blend()
    assert base.for_effect(None, depth=None, sheets=None, relief=True, soft_distance=0.0) is base


def test_soft_sprites_fade_only_into_a_depth_they_test_and_only_on_the_sprites_walk():
    base = sprites.sprite_blend()
    assert base.for_effect(None, depth=None, sheets=None, relief=False, soft_distance=0.5) is base
    walked = sprites.sprite_blend("ALL").for_effect(None, depth="depth", sheets=None, relief=False, soft_distance=0.5)
    assert walked.chosen == ("depth_test",) and walked in registry.KERNELS


@pytest.mark.parametrize("make", [lambda: bokeh.BOKEH_ACCUMULATE, lambda: quad_tiles.quad_accumulate(),
                                  lambda: trail_tiles.trail_accumulate("RGBA32F", "BLOCKS")])
def test_a_tile_walk_hides_what_is_behind_the_scenes_depth_when_the_frame_has_one(make):
    base = make()
    tested = base.for_effect(effect_settings(), depth="depth")
    assert added_defines(tested, base) == ["SPRITE_DEPTH_TEST"] and tested in registry.KERNELS
    assert tested.bindings(depth="depth") == {"scene_depth": "depth"}
    assert base.for_effect(effect_settings(), depth=None) is base


def test_features_prints_one_list_of_what_sprite_blend_can_become(capsys):
    text = features("sprite_blend")
    assert text.startswith(f"sprite_blend.glsl: {len(registry.variants('sprite_blend'))} variants")
    assert all(f"  {name} " in text for name in ("textured", "relief", "soft"))
    assert "textured + relief + soft" in text
    assert main(["features", "sprite_blend"]) == 0 and capsys.readouterr().out == text


def test_a_feature_that_binds_nothing_asks_for_no_source():
    kernel = sprites.sprite_blend().for_effect(None, depth="depth", sheets=None, relief=False, soft_distance=0.5)
    assert kernel.chosen == ("depth_test", "soft") and kernel.bindings(depth="depth", blend=None) == {
        "scene_depth": "depth"}


def test_the_resolve_lays_the_sprite_layer_over_the_frame_when_there_is_one_and_measures_the_peak_for_auto_emax():
    base = compositing.resolve_kernel(compositing.PAIRED)
    auto = render_settings({"emax_mode": "AUTO"})
    over = base.for_effect(auto, sprites="layer")
    assert added_defines(over, base) == ["MEASURE_PEAK", "SPRITES_OVER"] and over in registry.KERNELS
    assert over.bindings(sprites="layer") == {"sprites": "layer"} and over.shared[-1].name == "group_peak"
    assert base.for_effect(auto, sprites=None) is base.with_features("peak")
    assert base.for_effect(render_settings({"emax_mode": "MANUAL"}), sprites=None) is base


@pytest.mark.parametrize("shutter,focus,expected", [
    (None, None, []), ("open", None, ["MOTION_BLUR"]), (None, "near", ["DEPTH_OF_FIELD"]),
    ("open", "near", ["MOTION_BLUR", "DEPTH_OF_FIELD"]),
])
def test_the_footprint_splat_streaks_over_the_shutter_and_spreads_over_the_disc_of_the_focus(shutter, focus, expected):
    base = compositing.splat_variant(compositing.FOOTPRINT_KERNELS["FULL"], compositing.PAIRED)
    camera = SimpleNamespace(shutter=shutter, focus=focus)
    kernel = base.for_effect(effect_settings(), depth=False, camera=camera)
    assert [name for name in added_defines(kernel, base) if not name.startswith("DISC_")] == expected
    assert kernel in registry.KERNELS and kernel.includes.count("footprint.glsl") == 1
    assert ("disc" in {c.name for c in kernel.constants}) == (focus is not None)


@pytest.mark.parametrize("shutter,particle_type,expected", [
    (None, "POINT", []), ("open", "POINT", ["MOTION_BLUR", "WIDE_LIST"]), (None, "SPRITE", ["WIDE_LIST"]),
])
def test_the_particle_depth_lists_wide_reaches_only_where_the_camera_or_the_sprite_makes_them(
        shutter, particle_type, expected):
    base = particle_depth.PARTICLE_DEPTH_KERNELS["FULL"]
    camera = SimpleNamespace(shutter=shutter, focus=None)
    kernel = base.for_effect(effect_settings({"particle_type": particle_type}), camera=camera)
    assert added_defines(kernel, base) == expected and kernel in registry.KERNELS


def test_a_lit_quad_under_a_shutter_and_a_focus_is_swept_then_widened_then_lit_with_one_footprint_include():
    camera = SimpleNamespace(shutter="open", focus="near")
    base = quad_tiles.QUAD_FOOTPRINT
    kernel = base.for_effect(effect_settings({"lighting": "LIT"}), camera=camera)
    assert added_defines(kernel, base) == ["MOTION_BLUR", "DEPTH_OF_FIELD", "PARTICLE_LIGHT"]
    assert kernel.includes.count("footprint.glsl") == 1 and kernel in registry.KERNELS


@pytest.mark.parametrize("shutter,focus,expected", [
    (None, None, ["SPRITE_TEXTURE"]), ("open", None, ["SPRITE_TEXTURE", "MOTION_BLUR"]),
    ("open", "near", ["SPRITE_TEXTURE", "MOTION_BLUR", "DEPTH_OF_FIELD"]),
])
def test_a_textured_add_quad_is_posed_then_swept_and_widened_by_the_camera_and_the_registry_has_each(
        shutter, focus, expected):
    """The rasterized quads' textured variants under a shutter or a focus were dispatched but not compiled by the
    registry before they were features."""
    s = effect_settings({"sprite_image": "smoke.png", "particle_type": "SPRITE"})
    kernel = raster.QUADS.for_effect(s, camera=SimpleNamespace(shutter=shutter, focus=focus), textured=True)
    assert added_defines(kernel, raster.QUADS) == expected and kernel in registry.KERNELS
    assert ("FLOAT", "v_frame") in kernel.varyings
    sheets = SimpleNamespace(pair=lambda settings: ("sheet", "vectors"))
    quads = SimpleNamespace(sheets=sheets, system=SimpleNamespace(settings=s))
    assert kernel.bindings(system=None, sheets=quads) == {"sheet_image": "sheet", "sheet_vectors": "vectors"}


def test_a_relief_quad_shades_by_the_particles_light_and_an_untextured_frame_never_asks_for_relief():
    s = effect_settings(TEXTURED_RELIEF)
    relief = raster.QUADS.for_effect(s, camera=STILL, textured=True)
    assert relief.chosen == ("textured", "relief", "lit") and relief in registry.KERNELS
    sheets = SimpleNamespace(pair=lambda settings: ("sheet", "vectors"), normals=lambda settings: "normals")
    system = SimpleNamespace(settings=s, particle_light_direction="direction", particle_light="light")
    assert relief.bindings(system=system, sheets=SimpleNamespace(sheets=sheets, system=system)) == {
        "sheet_image": "sheet", "sheet_vectors": "vectors", "sheet_normals": "normals",
        "particle_light_direction": "direction", "particle_light": "light"}
    assert raster.QUADS.for_effect(s, camera=STILL, textured=False).chosen == ("lit",)


def test_a_footprint_in_a_textured_frame_with_relief_writes_its_pose_and_light():
    base = sprites.SPRITE_FOOTPRINT
    posed = base.for_effect(effect_settings(), camera=STILL, sheet_slot=-1, relief=False)
    assert added_defines(posed, base) == ["SPRITE_TEXTURE"]
    lighted = base.for_effect(effect_settings(), camera=STILL, sheet_slot=0, relief=True)
    assert added_defines(lighted, base) == ["SPRITE_TEXTURE", "SPRITE_RELIEF"] and lighted in registry.KERNELS
    assert base.for_effect(effect_settings(), camera=STILL, sheet_slot=None, relief=True) is base, "relief needs a pose"
    list_ = SimpleNamespace(frames="frames", lights="lights")
    resources = SimpleNamespace(sheets=SimpleNamespace(blank="blank"))
    for settings, direction in ((effect_settings(), "blank"), (effect_settings(TEXTURED_RELIEF), "direction")):
        system = SimpleNamespace(settings=settings, particle_light_direction="direction")
        assert lighted.bindings(system=None, footprints=sprites.FootprintDraw(list_, system, resources)) == {
            "sprite_frames": "frames", "sprite_lights": "lights", "particle_light_direction": direction}


def test_trail_segments_in_a_textured_frame_write_their_pose_as_none():
    kernel = ribbons.TRAIL_SPRITES.for_effect(effect_settings(), textured=True)
    assert added_defines(kernel, ribbons.TRAIL_SPRITES) == ["SPRITE_TEXTURE"] and kernel in registry.KERNELS
    assert kernel.bindings(system=None, sprites=SimpleNamespace(frames="frames")) == {"sprite_frames": "frames"}
    assert ribbons.TRAIL_SPRITES.for_effect(effect_settings(), textured=False) is ribbons.TRAIL_SPRITES


def test_the_shadow_march_reads_the_scenes_shadow_maps_only_when_there_are_occluders():
    march = shadow_volume.MARCH
    assert march.for_effect(None, occluders=None) is march
    occluded = march.for_effect(None, occluders=SimpleNamespace(depth="maps"))
    assert added_defines(occluded, march) == ["SCENE_SHADOWS"] and occluded in registry.KERNELS
    assert occluded.bindings(occluders=SimpleNamespace(depth="maps")) == {"occluder_depth": "maps"}
