"""What the panel adds and shows: a CSG Sculpture from the + menu builds its primitives; the count's GPU limit."""

import bpy
import pytest

from addon.engine.settings.settings import max_particles
from tests.conftest import add_effect


def test_csg_sculpture_from_the_add_menu_builds_its_primitives(scene):
    """The + menu runs gpu_particles.add(preset=...): the preset's CSG stage comes with it, around the object."""
    from addon.scene.csg import scene_primitives

    emitter = bpy.context.active_object
    emitter.location = (3.0, 1.0, 2.4)  # the stage's emitter sits at (0, 0, 1.4)
    bpy.context.view_layer.update()
    assert bpy.ops.gpu_particles.add(preset="csg_sculpture") == {"FINISHED"}
    primitives = scene_primitives(scene)
    assert [p.name for p in primitives] == ["Core", "Plinth", "Cut", "Bore", "Cap"]
    assert primitives[0].center == pytest.approx((3.0, 1.0, 1.0)), "placed around the emitter as on the stage"
    assert bpy.context.active_object == emitter and emitter.gpu_particles.active_effect.name == "CSG Sculpture"
    scene.gpu_particles_csg.samples_per_primitive = 2_000
    assert bpy.ops.gpu_particles.csg_export() == {"FINISHED"}
    assert len(bpy.data.objects["CSG Points"].data.points) > 1_000
    bpy.context.view_layer.objects.active = emitter
    assert bpy.ops.gpu_particles.add(preset="csg_sculpture") == {"FINISHED"}
    assert len(scene_primitives(scene)) == 5, "a second sculpture effect adds no second set"


def test_count_shows_this_gpus_limit(scene, host):
    from addon.ui.panels import count_note, gpu_count_limit

    limit = gpu_count_limit()
    assert limit == max_particles(host.max_texture_size)
    effect = add_effect(count=1_000_000)
    text, icon = count_note(effect, limit)
    assert f"up to {limit:,} particles" in text and "31 MB" in text and icon == "INFO"
    effect.count = 2**31 - 1  # the property keeps the engine's hard maximum ...
    text, icon = count_note(effect, limit)
    assert icon == "ERROR" and f"limit of {limit:,}" in text  # ... and the panel says it is this GPU's limit
