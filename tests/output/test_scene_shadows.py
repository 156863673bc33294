"""Particles shadow the scene's surfaces in Blender's renders (Shadows on Scene): a lit slab of particles
hovering over a ground plane under a sun, rendered through ``bpy.ops.render.render`` with Workbench, EEVEE and
Cycles.  The render's own beauty pass (written beside it in the same render) times the layer's shadow
(``1 - darkening``, the layer depth's G) is what the compositor lays the particles over; the ground beneath
the slab darkens, and nothing darkens with the effect off, Shadows on Scene off or no scene depth."""

import bpy
import numpy as np
import pytest
from mathutils import Vector

from addon.output import compositor_nodes, render_integration
from addon.output.render_layer import frame_file, layer_files
from tests.conftest import add_effect
from tests.output.test_render_integration import add_pass_outputs, pass_file, read_exr

W, H = 64, 36


def add_ground(size=30.0):
    mesh = bpy.data.meshes.new("Ground")
    half = size / 2
    mesh.from_pydata([(-half, -half, 0), (half, -half, 0), (half, half, 0), (-half, half, 0)], [], [(0, 1, 2, 3)])
    ground = bpy.data.objects.new("Ground", mesh)
    bpy.context.scene.collection.objects.link(ground)
    return ground


def shadow_scene(scene, tmp_path, engine, ortho=False):
    """The ground, a sun from above (a little to the side), no World, and a lit slab hovering 2 m up."""
    emitter = bpy.context.active_object
    emitter.animation_data_clear()  # the preset's stage orbits it
    emitter.location = (0.0, 0.0, 2.0)
    effect = add_effect(count=20_000, emitter_shape="BOX", emitter_radius=1.5, emitter_scale=(1.0, 1.0, 0.1),
                        velocity=(0.0, 0.0, 0.0), velocity_random=0.0, gravity=(0.0, 0.0, 0.0), emission="BURST",
                        lifetime=100.0, lifetime_random=0.0, size=0.08, lighting="LIT", density=4.0)
    add_ground()
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    sun.data.energy = 3.0
    sun.rotation_euler = (0.3, 0.2, 0.0)
    scene.collection.objects.link(sun)
    scene.world = None
    camera = scene.camera
    camera.location = (0.0, -9.0, 7.0)
    camera.rotation_euler = (Vector((0.0, 0.0, 0.5)) - camera.location).to_track_quat("-Z", "Y").to_euler()
    if ortho:
        camera.data.type, camera.data.ortho_scale = "ORTHO", 10.0
    bpy.context.view_layer.objects.active = emitter
    bpy.context.view_layer.update()  # the objects' world matrices, which the layer reads, as the render sees them
    scene.render.engine = engine
    scene.render.resolution_x, scene.render.resolution_y = W, H
    scene.cycles.samples, scene.cycles.use_denoising = 1, False
    scene.eevee.taa_render_samples = 1
    scene.frame_start = scene.frame_end = scene.frame_current = 2
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"
    scene.render.filepath = str(tmp_path / "render" / "f_####")
    scene.gpu_particles_output.write_layer_files = True
    compositor_nodes.ensure_compositing(scene)
    add_pass_outputs(scene, tmp_path / "passes")
    return effect


def rendered(scene, tmp_path):
    """(result, beauty, darkening) of frame 2."""
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    result = read_exr(frame_file(str(tmp_path / "render" / "f_####"), 2, ".exr"))
    beauty = read_exr(pass_file(tmp_path / "passes", "beauty", 2))
    return result, beauty, read_exr(layer_files(scene, 2)[1])[..., 1]


@pytest.mark.slow
@pytest.mark.parametrize("engine, ortho", [("BLENDER_WORKBENCH", False), ("BLENDER_EEVEE", False), ("CYCLES", False),
                                           ("BLENDER_WORKBENCH", True)])
def test_the_ground_under_a_lit_slab_darkens_in_every_engine(scene, tmp_path, engine, ortho):
    effect = shadow_scene(scene, tmp_path, engine, ortho)
    on, beauty, darkening = rendered(scene, tmp_path)
    assert darkening.max() > 0.5, "the ground beneath the slab is in its shadow"
    assert (darkening > 0.05).mean() > 0.03 and (darkening < 1e-3).mean() > 0.3, "a shadow with lit ground beside"
    effect.shadows_on_scene = False
    off, beauty_off, no_shadow = rendered(scene, tmp_path)
    assert not no_shadow.any()
    # Alpha over of additive light: the particles' light is added either way, the render darkened beneath
    np.testing.assert_allclose(off[..., :3] - on[..., :3], beauty[..., :3] * darkening[..., None], atol=2e-3)
    np.testing.assert_array_equal(on[..., 3], off[..., 3])
    shaded = (darkening > 0.3) & (beauty[..., :3].max(axis=-1) > 0.02)
    assert shaded.sum() > 10 and (on[shaded, :3].sum(axis=-1) < off[shaded, :3].sum(axis=-1)).all()


@pytest.mark.slow
def test_no_scene_depth_skips_the_shadow_with_a_message_and_the_frame_renders(scene, tmp_path):
    shadow_scene(scene, tmp_path, "BLENDER_WORKBENCH")
    scene.gpu_particles.occlusion = "NONE"
    result, beauty, darkening = rendered(scene, tmp_path)
    assert not darkening.any()
    assert any("Shadows on Scene need Occlusion: Scene" in line for line in render_integration.last_errors[scene.name])
    assert result[..., :3].max() > 0.0


@pytest.mark.slow
def test_the_effect_off_leaves_the_ground_alone(scene, tmp_path):
    effect = shadow_scene(scene, tmp_path, "BLENDER_WORKBENCH")
    effect.enabled = False
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    result = read_exr(frame_file(str(tmp_path / "render" / "f_####"), 2, ".exr"))
    beauty = read_exr(pass_file(tmp_path / "passes", "beauty", 2))
    np.testing.assert_array_equal(result[..., :3], beauty[..., :3])


def test_the_viewport_darkens_the_scene_under_the_particles_before_laying_them(scene, tmp_path):
    """The overlay multiplies the view's scene pixels by the shadow's factor (in the display's sRGB encoding, as
    the frame is laid), then lays the particles; the ground beside the shadow is untouched."""
    import gpu
    from mathutils import Matrix

    from addon import viewport
    from addon.scene.renderer import camera_of
    from tests.scene.test_viewport import pixel_projection

    shadow_scene(scene, tmp_path, "BLENDER_WORKBENCH")
    view_proj = camera_of(scene, W, H).view_proj
    viewport.free()
    offscreen = gpu.types.GPUOffScreen(W, H, format="RGBA32F")
    with offscreen.bind():
        framebuffer = gpu.state.active_framebuffer_get()
        framebuffer.clear(color=(0.5, 0.5, 0.5, 1.0))  # the scene as the viewport drew it
        with gpu.matrix.push_pop():
            gpu.matrix.load_matrix(Matrix.Identity(4))
            gpu.matrix.load_projection_matrix(pixel_projection(W, H))
            viewport.draw_view(scene, view_proj, np.array(scene.camera.matrix_world.inverted()), W, H)
        pixels = np.array(framebuffer.read_color(0, 0, W, H, 4, 0, "FLOAT").to_list(), np.float32).reshape(H, W, 4)
    offscreen.free()
    overlay = viewport.overlay()
    target = overlay.targets[(W, H)]
    darkening = overlay.host.read(target.surface_shadow.image).reshape(H, W)
    light = overlay.host.read(target.compositor.resources.frame).reshape(H, W, 4)[..., :3].max(axis=-1)
    viewport.free()
    factor = 1.0 - darkening
    encoded = np.where(factor <= 0.0031308, 12.92 * factor, 1.055 * factor ** (1 / 2.4) - 0.055)
    bare = light == 0.0
    assert (darkening[bare] > 0.3).sum() > 10, "shadowed ground the particles do not cover"
    np.testing.assert_allclose(pixels[bare, 0], 0.5 * encoded[bare], atol=2e-3)
    assert (pixels[bare & (darkening == 0.0), :3] == 0.5).all()


@pytest.mark.slow
def test_borders_and_resolution_percentage_take_the_shadow_with_the_layer(scene, tmp_path):
    from addon.output.layer_scene import SHADOW_PASS
    from addon.output.render_layer import ParticleLayer, border_region

    def shadow_plane():
        layer = ParticleLayer(scene)
        try:
            return layer.layer(2)[SHADOW_PASS.name].copy()
        finally:
            layer.free()

    shadow_scene(scene, tmp_path, "BLENDER_WORKBENCH")
    full = shadow_plane()
    assert full.max() > 0.5
    render = scene.render
    render.use_border, render.use_crop_to_border = True, True
    render.border_min_x, render.border_max_x, render.border_min_y, render.border_max_y = 0.3, 0.8, 0.1, 0.7
    rows, columns = border_region(scene, W, H)
    np.testing.assert_array_equal(shadow_plane(), full[rows, columns])
    render.use_crop_to_border = False  # the helper renders the border alone either way; Blender fills the rest
    np.testing.assert_array_equal(shadow_plane(), full[rows, columns])
    render.use_border, render.resolution_percentage = False, 50
    half = shadow_plane()
    assert half.shape == (H // 2, W // 2) and half.max() > 0.5


@pytest.mark.slow
def test_the_shadows_benchmark_case_runs_and_measures_a_shadow(tmp_path):
    """bench/final_render.py's shadows-1080p-1M, tiny (--quick): ms against peer_ms, and a shadow on the ground."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "bench/final_render.py", "--quick", "--case", "shadows-1080p-1M", "--out",
                             str(tmp_path)], cwd=root, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [record] = json.loads(next(tmp_path.glob("*final-render.json")).read_text())
    assert record["suite"] == "final-render" and record["case"] == "shadows-1080p-1M-quick"
    assert record["ms"] > 0 and record["peer_ms"] > 0 and record["shadowed_fraction"] > 0.005
