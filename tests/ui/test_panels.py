"""The sidebar's draw code run against a recording layout (there is no UI in background mode)."""

from types import SimpleNamespace

import bpy

from addon.engine.settings.settings import RENDER_FIELDS
from addon.ui import panels
from tests.conftest import add_effect

RENDER_NAMES = {f.name for f in RENDER_FIELDS}


class RecordingLayout:
    """Stands in for UILayout: records what would be drawn."""

    def __init__(self, log=None):
        self.log = [] if log is None else log
        self.use_property_split = self.use_property_decorate = False

    def prop(self, owner, name, **kw):
        self.log.append(("prop", owner, name))

    def prop_search(self, owner, name, search_owner, search_name, **kw):  # a name picked from a collection
        self.log.append(("prop", owner, name))

    def operator(self, idname, **kw):
        self.log.append(("operator", idname))
        return SimpleNamespace()

    def operator_menu_enum(self, idname, prop, **kw):
        self.log.append(("operator", idname))

    def menu(self, idname, **kw):
        self.log.append(("menu", idname))

    def label(self, text="", **kw):
        self.log.append(("label", text))

    def template_list(self, *args, **kw):
        self.log.append(("list", args[0]))

    def separator(self):
        pass

    def row(self, **kw):
        return RecordingLayout(self.log)

    column = row


def draw(panel_class, method="draw"):
    layout = RecordingLayout()
    getattr(panel_class, method)(SimpleNamespace(layout=layout), bpy.context)
    return layout.log


SHOWN_AS = {"spawn_from": ("spawn_object", "spawn_effect_name")}


def test_each_section_draws_its_fields_from_their_owner(scene):
    effect = add_effect()
    for (title, names), panel in zip(panels.SECTIONS, panels.SECTION_PANELS):
        assert panel.bl_label == title
        if not names:
            assert panel.poll(bpy.context) == (title in panels.SECTION_EXTRAS), f"{title} waits for its fields"
            continue
        assert panel.poll(bpy.context)
        props = [(owner, name) for kind, owner, *rest in draw(panel) if kind == "prop" for name in rest]
        drawn = [name for owner, name in props if owner in (effect, scene.gpu_particles)]
        # Spawn From is drawn as the parent's object, then a search of its effects: a reference, not a name
        expected = [shown for name in names for shown in SHOWN_AS.get(name, (name,))]
        assert drawn[: len(expected)] == expected
        for owner, name in props[: len(expected)]:
            assert owner == (scene.gpu_particles if name in RENDER_NAMES else effect)


def test_render_and_bake_section_offers_bake_and_export(scene):
    panel = dict(zip([t for t, _ in panels.SECTIONS], panels.SECTION_PANELS))["Render & Bake"]
    log = draw(panel)
    assert ("operator", "gpu_particles.bake") in log and ("operator", "gpu_particles.export_pointcloud") in log
    assert panel.poll(bpy.context), "render settings show without an effect"


def test_effect_sections_hide_without_an_effect(scene):
    emission = panels.SECTION_PANELS[0]
    assert not emission.poll(bpy.context)
    add_effect()
    assert emission.poll(bpy.context)


def test_main_panel_lists_effects_and_the_preset_menu(scene):
    log = draw(panels.GPU_PARTICLES_PT_effects)
    assert ("list", "GPU_PARTICLES_UL_effects") in log and ("operator", "gpu_particles.add") in log
    assert draw(panels.GPU_PARTICLES_PT_effects, "draw_header_preset") == []  # no effect yet
    add_effect()
    header = draw(panels.GPU_PARTICLES_PT_effects, "draw_header_preset")
    assert ("menu", "GPU_PARTICLES_MT_presets") in header and ("operator", "gpu_particles.save_preset") in header


def test_the_panels_name_each_setting_read_past_its_bounds(scene):
    effect = add_effect(trail_points=65)
    scene.gpu_particles.emax = 0.0
    assert ("label", "Trail Points 65 lowered to 64") in draw(panels.GPU_PARTICLES_PT_effects)
    render = dict(zip([t for t, _ in panels.SECTIONS], panels.SECTION_PANELS))["Render & Bake"]
    assert ("label", "Emax 0 raised to 1e-06") in draw(render)
    effect.trail_points = 64
    assert not [entry for entry in draw(panels.GPU_PARTICLES_PT_effects) if entry[0] == "label"]


def test_preset_menu_lists_every_shipped_preset(scene, tmp_path, monkeypatch):
    from addon.engine.settings.presets import preset_names
    from addon.ui import operators

    monkeypatch.setattr(operators, "user_preset_dir", lambda: tmp_path)
    applied = []
    layout = RecordingLayout()
    layout.operator = lambda idname, text="", **kw: applied.append(text) or SimpleNamespace()
    panels.GPU_PARTICLES_MT_presets.draw(SimpleNamespace(layout=layout), bpy.context)
    assert len(applied) >= len(preset_names()) and "Fire" in applied and "Galaxy Vortex" in applied


def test_stats_panel_shows_what_the_overlay_measured(scene):
    from addon import viewport
    from addon.scene.renderer import camera_of
    from tests.scene.test_viewport import scene_view

    viewport.free()
    assert ("label", "Shown once the overlay has drawn a frame") in draw(panels.GPU_PARTICLES_PT_stats)
    add_effect(count=2000)
    scene.frame_set(3)
    viewport.overlay().composite(scene, camera_of(scene, 32, 18).view_proj, scene_view(scene), 32, 18,
                                 measure=True)
    labels = [text for kind, text, *_ in draw(panels.GPU_PARTICLES_PT_stats) if kind == "label"]
    stats = viewport.last_stats()
    assert labels[0] == f"Frame 3: {stats.alive:,} of 2,000 particles alive"
    assert any(text.startswith("splat and resolve: ") for text in labels) and labels[-1] == "Emax overflows: 0"
    viewport.free()


def test_collision_section_lists_the_scenes_colliders(scene):
    import bmesh

    add_effect()
    collision = dict(zip([t for t, _ in panels.SECTIONS], panels.SECTION_PANELS))["Collision"]
    assert ("label", "Add Collision physics to a mesh") in draw(collision)
    mesh = bpy.data.meshes.new("Ground")
    shape = bmesh.new()
    bmesh.ops.create_grid(shape, x_segments=1, y_segments=1, size=2.0)
    shape.to_mesh(mesh)
    ground = bpy.data.objects.new("Ground", mesh)
    scene.collection.objects.link(ground)
    ground.modifiers.new("Collision", "COLLISION")
    ground.collision.damping_factor = 0.25
    labels = [text for kind, text, *_ in draw(collision) if kind == "label"]
    assert labels == ["Ground: plane, bounce 0.75, friction 0.00"]


def test_stats_panel_shows_the_automatic_emax(scene):
    from addon import viewport
    from addon.scene.renderer import camera_of
    from tests.scene.test_viewport import scene_view

    viewport.free()
    add_effect(count=2000)
    scene.gpu_particles.emax_mode = "AUTO"
    scene.frame_set(3)
    viewport.overlay().composite(scene, camera_of(scene, 32, 18).view_proj, scene_view(scene), 32, 18,
                                 measure=True)
    labels = [text for kind, text, *_ in draw(panels.GPU_PARTICLES_PT_stats) if kind == "label"]
    assert labels[-1] == f"Automatic Emax: {viewport.last_stats().emax:.4g}"
    assert viewport.last_stats().emax != scene.gpu_particles.emax, "it followed the frame"
    viewport.free()


def test_the_interactions_section_says_which_effects_interact(scene):
    panel = dict(zip([t for t, _ in panels.SECTIONS], panels.SECTION_PANELS))["Interactions"]
    add_effect()
    assert ("label", "No effect interacts") in draw(panel)
    add_effect(interaction="GRANULAR", interaction_radius=0.05, size=0.01)
    log = draw(panel)
    assert ("label", "Particles interact with those of their own effect") in log
    assert [entry for entry in log if entry[0] == "label" and entry[1].endswith(": Granular")], log
