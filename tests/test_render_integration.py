"""Particles in Blender's own renders: render_pre writes the particle layer, the compositor lays it over.

Rendered headless through ``bpy.ops.render.render(animation=True)`` with Workbench and EEVEE, a cube
half in front of the emitter: each composited frame must equal the render's own beauty and depth
passes (written beside it by a File Output node in the same render) combined with the particle
layer by the compositor's rule, ``beauty * (1 - m * A) + m * light`` with ``m = particle depth <
render depth``; particles show on the open side and are hidden behind the cube.
"""

import bpy
import numpy as np
import pytest
from conftest import add_effect
from test_occlusion import add_cube

from addon.engine.particle_depth import FAR
from addon.output import compositor_nodes
from addon.output.render_layer import frame_file, layer_files

W, H = 64, 36


def read_exr(path):
    image = bpy.data.images.load(str(path), check_existing=False)
    try:
        width, height = image.size
        return np.array(image.pixels[:], np.float32).reshape(height, width, 4)
    finally:
        bpy.data.images.remove(image)


def add_pass_outputs(scene, folder):
    """A File Output node beside the particle nodes: the render's own beauty and depth, per frame."""
    tree = scene.compositing_node_group
    files = tree.nodes.new("CompositorNodeOutputFile")
    files.directory = str(folder) + "/"
    files.file_name = ""
    files.format.media_type = "IMAGE"
    files.format.file_format = "OPEN_EXR"
    files.format.color_depth = "32"
    render = tree.nodes[compositor_nodes.RENDER]
    for name, socket_type in (("beauty", "RGBA"), ("depth", "FLOAT")):
        files.file_output_items.new(socket_type, name)
        tree.links.new(render.outputs["Image" if name == "beauty" else "Depth"], files.inputs[name])
    return files


def pass_file(folder, name, frame):
    matches = sorted(folder.glob(f"*{name}*{frame:04d}.exr"))
    assert len(matches) == 1, f"{name} of frame {frame}: {sorted(p.name for p in folder.iterdir())}"
    return matches[0]


@pytest.mark.slow
@pytest.mark.parametrize("engine, frames", [("BLENDER_WORKBENCH", 3), ("BLENDER_EEVEE", 2)])
def test_render_animation_composites_particles_behind_and_in_front(scene, tmp_path, engine, frames):
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    add_cube((2.5, -6.0, 1.5), 5.0)  # covers the right half of the view, between camera and emitter
    bpy.context.view_layer.objects.active = emitter
    scene.render.engine = engine
    scene.frame_start, scene.frame_end = 1, frames
    scene.frame_current = 5
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"
    scene.render.filepath = str(tmp_path / "render" / "f_####")
    scene.gpu_particles_output.layer_path = str(tmp_path / "layer") + "/"
    compositor_nodes.ensure_compositing(scene)
    add_pass_outputs(scene, tmp_path / "passes")

    assert bpy.ops.render.render(animation=True) == {"FINISHED"}

    assert scene.frame_current == 5
    for frame in range(1, frames + 1):
        result = read_exr(frame_file(str(tmp_path / "render" / "f_####"), frame, ".exr"))
        beauty = read_exr(pass_file(tmp_path / "passes", "beauty", frame))
        render_depth = read_exr(pass_file(tmp_path / "passes", "depth", frame))[..., 0]
        light_path, depth_path = layer_files(scene, frame)
        light, particle_depth = read_exr(light_path), read_exr(depth_path)[..., 0]

        in_front = (particle_depth < render_depth)[..., None]
        expected = beauty[..., :3] * (1 - in_front * light[..., 3:]) + in_front * light[..., :3]
        np.testing.assert_allclose(result[..., :3], expected, atol=1 / 255)

        added = (result[..., :3] - beauty[..., :3]).max(axis=-1)
        cube = render_depth < 9.0  # the cube's faces are 3.5 to 8.5 from the camera, the emitter about 12
        assert cube[:, W // 2:].mean() > 0.9 and not cube[:, : W // 4].any()
        assert (added[:, : W // 2][~cube[:, : W // 2]] > 1 / 255).sum() > 20, "particles show beside the cube"
        lit_behind = (light[..., :3].max(axis=-1) > 0) & cube
        assert np.abs(added[cube]).max() < 1e-6, "hidden where the cube is in front"
        assert not lit_behind.any() or (particle_depth[lit_behind] > render_depth[lit_behind]).all()
        lit = light[..., :3].max(axis=-1) > 0
        assert ((particle_depth[lit] > 9.0) & (particle_depth[lit] < 15.0)).all(), "around the emitter, 12 away"
        assert (particle_depth[:, : W // 4][~lit[:, : W // 4]] >= FAR).mean() > 0.5, "far where no particle is"


def test_layer_light_is_the_bake(scene, tmp_path):
    """The layer a render composites is the bake's frame (same renderer); the bake keeps its own output."""
    add_effect(count=5_000)
    scene.frame_end = 2
    scene.render.filepath = str(tmp_path / "render" / "f_####")
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.gpu_particles_output.bake_path = str(tmp_path / "bake" / "b_###")
    scene.gpu_particles_output.layer_path = str(tmp_path / "layer") + "/"
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.frame_current = 3
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    assert scene.frame_current == 3, "the bake restores the frame"
    assert sorted(p.name for p in (tmp_path / "bake").iterdir()) == ["b_001.exr", "b_002.exr", "gpu_particles_bake.json"]
    assert not (tmp_path / "render").exists(), "the bake never writes to the render's output"
    assert scene.compositing_node_group is None
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}  # as `blender -b file.blend -a` does
    assert compositor_nodes.OVER in scene.compositing_node_group.nodes, "the render set the nodes up itself"
    assert sorted(p.name for p in (tmp_path / "bake").iterdir())[:2] == ["b_001.exr", "b_002.exr"]
    for frame in (1, 2):
        baked = read_exr(tmp_path / "bake" / f"b_{frame:03d}.exr")
        light = read_exr(layer_files(scene, frame)[0])
        assert light[..., :3].max() > 0
        np.testing.assert_allclose(light[..., :3], baked[..., :3], rtol=2e-3, atol=1e-4)  # the bake's EXR is half float
        assert not light[..., 3].any() and not baked[..., 3].any(), "additive light covers nothing in either"
        rendered = read_exr(tmp_path / "render" / f"f_{frame:04d}.exr")
        assert (rendered[..., :3] >= light[..., :3] - 1e-6).all() and rendered[..., :3].max() > 0, "light added"


def test_layer_alpha_is_the_sprites_coverage(scene):
    """The layer's alpha is the frame's own: 0 under additive light, the alpha sprites' coverage where they are."""
    from addon.output.render_layer import ParticleLayer

    add_effect(count=3000)
    add_effect(count=3000, blend_mode="ALPHA", opacity=0.8, size=0.05)
    layer = ParticleLayer(scene)
    light, _ = layer.render(2)
    coverage = layer.renderer.sprites.read()[..., 3]
    assert coverage.max() > 0.1 and (coverage == 0).any()
    np.testing.assert_array_equal(light[..., 3], coverage)
    assert light[coverage == 0, :3].max() > 0, "additive light where no sprite covers"


def test_layer_light_has_the_glints(scene):
    """Glints on: the light a render composites gains the bake's stars, added (alpha stays the sprites' coverage)."""
    from addon.output.render_layer import ParticleLayer

    add_effect(count=3000, emission_strength=40.0)
    settings = scene.gpu_particles
    settings.emax_mode, settings.glints = "MANUAL", "NONE"
    plain, _ = ParticleLayer(scene).render(2)
    settings.glints, settings.glint_threshold, settings.glint_length = "STAR", 1.0, 0.3
    layer = ParticleLayer(scene)
    light, _ = layer.render(2)
    assert len(layer.renderer.glints.read_points().pixels) > 0
    added = light[..., :3] - plain[..., :3]
    assert added.min() >= -1e-6 and added.sum() > 0.05 * plain[..., :3].sum()
    assert np.array_equal(light[..., 3], plain[..., 3])


def test_frame_file_follows_blenders_rule():
    assert frame_file("/x/f_####", 7, ".png").as_posix() == "/x/f_0007.png"
    assert frame_file("/x/f_##_v#", 12, ".exr").as_posix() == "/x/f_##_v12.exr"
    assert frame_file("/x/", 3, ".png").as_posix() == "/x/0003.png"
    assert frame_file("/x/shot", 1234567, ".png").as_posix() == "/x/shot1234567.png"


def test_nodes_splice_into_the_artists_tree_and_keep_their_edits(scene):
    tree = bpy.data.node_groups.new("Mine", "CompositorNodeTree")
    tree.interface.new_socket("Image", in_out="OUTPUT", socket_type="NodeSocketColor")
    render = tree.nodes.new("CompositorNodeRLayers")
    glare = tree.nodes.new("CompositorNodeGlare")
    output = tree.nodes.new("NodeGroupOutput")
    tree.links.new(render.outputs["Image"], glare.inputs["Image"])
    tree.links.new(glare.outputs["Image"], output.inputs[0])
    scene.compositing_node_group = tree

    assert compositor_nodes.ensure_compositing(scene) == tree
    over = tree.nodes[compositor_nodes.OVER]
    assert over.inputs["Background"].links[0].from_node == glare, "the artist's result is what particles go over"
    assert output.inputs[0].links[0].from_node == over
    assert over.inputs["Factor"].links[0].from_node.name == compositor_nodes.IN_FRONT
    assert scene.view_layers[0].use_pass_z and scene.render.use_compositing

    tree.links.remove(over.inputs["Factor"].links[0])  # the artist's choice: no depth test
    compositor_nodes.ensure_compositing(scene)  # what every render does
    assert not over.inputs["Factor"].links, "left as the artist made it"
    assert bpy.ops.gpu_particles.setup_compositing() == {"FINISHED"}
    assert over.inputs["Factor"].links, "Set Up Compositing repairs it"
    assert [n.name for n in tree.nodes if n.name.startswith(compositor_nodes.PREFIX)] == [
        compositor_nodes.RENDER, compositor_nodes.LIGHT, compositor_nodes.DEPTH, compositor_nodes.DEPTH_CHANNEL,
        compositor_nodes.IN_FRONT, compositor_nodes.OVER]
