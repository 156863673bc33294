"""Registration leaves nothing behind; properties carry the engine's defaults and bounds."""

import gc
import inspect

import bpy
import pytest

import addon
from addon import viewport
from addon.engine.settings.settings import EFFECT_FIELDS, RENDER_FIELDS
from addon.hosts.base import Texture


def our_functions():
    """Every function defined in the add-on's modules (to look for in handler and timer lists)."""
    import addon.output.bake
    import addon.output.export
    import addon.properties
    import addon.ui.operators
    import addon.ui.panels

    modules = (addon.output.bake, addon.output.export, addon.ui.operators, addon.ui.panels, addon.properties, viewport)
    return {f for m in modules for _, f in inspect.getmembers(m, inspect.isfunction) if f.__module__ == m.__name__}


def live_textures():
    gc.collect()
    return sum(isinstance(o, Texture) for o in gc.get_objects())


def handler_functions():
    return {f for name in dir(bpy.app.handlers) if not name.startswith("_")
            for f in (getattr(bpy.app.handlers, name) if isinstance(getattr(bpy.app.handlers, name), list) else ())}


def test_hundred_register_cycles_leave_nothing_behind(host, tmp_path):
    from addon.cli import build_scene
    from addon.engine.settings.presets import load_preset
    from addon.scene.renderer import camera_of
    from tests.scene.test_viewport import draw_offscreen

    scene, _ = build_scene(load_preset("default"), (1, 4), (32, 18), tmp_path)
    baseline_textures, baseline_handlers = live_textures(), handler_functions()
    handles = []
    for cycle in range(100):
        addon.register()
        try:
            handles.append(viewport._draw_handle)
            assert viewport._on_frame_change in bpy.app.handlers.frame_change_post
            if cycle % 40 == 0:  # now and then draw, so the overlay holds GPU textures when unregistered
                if not bpy.context.active_object.gpu_particles.effects:
                    bpy.ops.gpu_particles.add(preset="default")
                    bpy.context.active_object.gpu_particles.active_effect.count = 1000
                viewport.stats_panel_drawn()
                draw_offscreen(scene, camera_of(scene, 32, 18).view_proj, 32, 18)
                assert viewport.last_stats() is not None and live_textures() > baseline_textures
        finally:
            addon.unregister()
    assert handler_functions() == baseline_handlers
    assert not (handler_functions() & our_functions())
    assert not any(bpy.app.timers.is_registered(f) for f in our_functions())
    for handle in handles:  # every draw handler was removed: removing again is refused
        with pytest.raises(ValueError, match="already removed"):
            bpy.types.SpaceView3D.draw_handler_remove(handle, "WINDOW")
    assert viewport._overlay is None and viewport._draw_handle is None
    assert live_textures() == baseline_textures
    from addon.properties import ON_CHANGE

    assert ON_CHANGE == []
    assert not hasattr(bpy.types.Object, "gpu_particles") and not hasattr(bpy.types.Scene, "gpu_particles")
    assert not hasattr(bpy.types, "GPU_PARTICLES_PT_effects") and not hasattr(bpy.types, "GPU_PARTICLES_OT_bake")


def soft_max(field):
    """Blender's IntProperty holds int32: larger integer bounds are clamped there; a color's slider ends at 1."""
    return min(field.max, 2**31 - 1) if field.kind == "int" else min(field.max, 1.0) if field.kind == "color" \
        else field.max


def test_property_defaults_and_bounds_come_from_the_field_tables(scene):
    from addon.properties import GPU_PARTICLES_PG_effect, GPU_PARTICLES_PG_scene

    for group, fields in ((GPU_PARTICLES_PG_effect, EFFECT_FIELDS), (GPU_PARTICLES_PG_scene, RENDER_FIELDS)):
        rna = group.bl_rna.properties
        for field in fields:
            prop = rna[field.name]
            if field.kind == "enum":
                assert prop.default == field.default and {i.identifier for i in prop.enum_items} == set(field.items)
                continue
            if field.kind in ("string", "bool"):  # an image's name or a file, a switch: no bounds
                assert prop.default == field.default and prop.description == field.description
                continue
            default = tuple(prop.default_array) if field.kind in ("vec3", "color") else prop.default
            assert default == pytest.approx(field.default), field.name
            assert prop.soft_min == pytest.approx(field.min), field.name
            assert prop.soft_max == pytest.approx(soft_max(field)), field.name
            assert prop.description == field.description


def test_every_setting_out_of_range_is_kept_and_read_clamped_saying_so(scene):
    """A value past a field's bounds (typed, from a script or an old file) stays as given in the property; reading
    the settings clamps it to the bound and names the setting, the value and the bound."""
    from addon.properties import effect_clamps, effect_settings_of, render_clamps, render_settings_of

    bpy.ops.gpu_particles.add()
    effect = bpy.context.active_object.gpu_particles.active_effect
    for field in EFFECT_FIELDS + RENDER_FIELDS:
        render = field in RENDER_FIELDS
        owner = scene.gpu_particles if render else effect
        if field.kind == "enum":
            with pytest.raises(TypeError):
                setattr(owner, field.name, "NOT_AN_ITEM")
            continue
        if field.kind in ("string", "bool"):
            continue
        low, high = field.min - 1e9, field.max * 10 + 1e12
        if field.kind == "int":
            low, high = -(2**31), 2**31 - 1
        for value, bound, verb in ((low, field.min, "raised"), (high, field.max, "lowered")):
            setattr(owner, field.name, (value,) * 3 if field.kind in ("vec3", "color") else value)
            stored = getattr(owner, field.name)
            assert (stored[0] if field.kind in ("vec3", "color") else stored) == pytest.approx(value, rel=1e-6)
            read = getattr(render_settings_of(scene) if render else effect_settings_of(effect), field.name)
            for part in (read if field.kind in ("vec3", "color") else (read,)):
                assert part == pytest.approx(bound, rel=1e-6), (field.name, value)
            clamps = render_clamps(scene) if render else effect_clamps(effect)
            assert value == bound or any(c.startswith(f"{field.label} ") and f" {verb} to " in c for c in clamps), (field.name, clamps)
        setattr(owner, field.name, field.default)


def test_panel_sections_cover_every_field_and_register_a_sub_panel_each(scene):
    from addon.ui.panels import SECTION_PANELS, SECTIONS

    assert [title for title, _ in SECTIONS][:2] == ["Emission", "Forces"]
    assert {"Emission", "Forces", "Collision", "Look", "Sorting", "Render & Bake"} <= {t for t, _ in SECTIONS}
    for panel in SECTION_PANELS:
        assert panel.bl_parent_id == "GPU_PARTICLES_PT_effects"
        assert hasattr(bpy.types, panel.__name__)
    assert hasattr(bpy.types, "GPU_PARTICLES_PT_stats")

