"""Textured sprites (sprite_sheets.py): poses, flipbook frames and sheet sampling against the numpy reference,
through the alpha tile compositor and the additive quads; bad images refused with a clear message."""

import dataclasses
import math
import os

import bpy
import numpy as np
import pytest

from addon.engine.draw import compositing
from addon.engine.draw.footprint import Shutter
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.draw.sprites import SpriteLayer
from addon.engine.look.sprite_sheets import SPRITE_FRAMES, SheetImage, SpriteSheets, check_images, sheet_reach
from addon.engine.reference.look import sprite_sheets as ref
from addon.engine.seam import records
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import SettingsError, effect_settings, render_settings
from addon.engine.simulate import simulation
from addon.output.display import image_modules

SIZE = 32
TINT = np.array([1.0, 0.5, 0.25])


def sheet_image(name, pixels):
    """A float Blender image of straight-alpha ``pixels`` (h, w, 4), replacing one of that name (Blender keeps
    float images premultiplied)."""
    if name in bpy.data.images:
        bpy.data.images.remove(bpy.data.images[name])
    h, w = pixels.shape[:2]
    image = bpy.data.images.new(name, w, h, alpha=True, float_buffer=True)
    premultiplied = np.concatenate([pixels[..., :3] * pixels[..., 3:], pixels[..., 3:]], axis=-1)
    image.pixels.foreach_set(np.ascontiguousarray(premultiplied, np.float32).ravel())
    return image


def smooth_sheet(rng, columns, rows, frame_px=8):
    """A sheet whose frames are smooth and distinct (bilinear sampling of it is well conditioned)."""
    h, w = rows * frame_px, columns * frame_px
    y, x = np.mgrid[0:h, 0:w] / max(h, w)
    phase = rng.uniform(0, 6, 4)
    pixels = np.stack([0.5 + 0.4 * np.sin(3 * x + 2 * y + p) for p in phase], axis=-1)
    return pixels.astype(np.float32)


def textured(host, pos_age, vel_life=None, blend_mode="ALPHA", **values):
    """An effect drawing exactly ``pos_age`` (life 1 unless ``vel_life`` says) with a sprite image."""
    pos_age = np.asarray(pos_age, np.float32)
    settings = effect_settings({"count": len(pos_age), "blend_mode": blend_mode, "particle_type": "SPRITE",
                                "opacity": 1.0, "size": 6.0, "color_start": tuple(TINT), "color_end": tuple(TINT),
                                "emission_strength": 1.0, **values})
    system = simulation.ParticleSystem(host, settings)
    if vel_life is None:
        vel_life = np.zeros((len(pos_age), 4), np.float32)
        PARTICLE.read_image("vel_life", vel_life)["life"][:] = 1.0
    system.write_state(pos_age, np.asarray(vel_life, np.float32))
    return system


def draw_alpha(host, systems, size=SIZE):
    layer = SpriteLayer(host, size, size)
    layer.draw(systems, FrameResources(host, size, size), compositing.Camera.pixel_grid(size, size))
    return layer


def poses(host, layer, count):
    """(cos, sin, flipbook position) the footprints wrote for the first ``count`` sprites."""
    pose = records.SPRITE_ENTRY.read_image(SPRITE_FRAMES, host.read(layer.list.frames).reshape(-1, 4)[:count])
    return pose["turn"][:, 0], pose["turn"][:, 1], pose["flipbook"]


def test_rotation_and_flipbook_frames_match_the_reference(host, rng):
    sheet_image("poses", smooth_sheet(rng, 4, 2))
    count = 64
    pos_age = np.column_stack([rng.uniform(4, 28, (count, 2)), rng.uniform(-1, 1, count), rng.uniform(0, 0.95, count)])
    vel_life = np.column_stack([rng.normal(0, 5, (count, 3)), np.full(count, 1.0)])
    particle = PARTICLE.read_images(pos_age, vel_life)
    for values in ({"rotation": 0.5, "rotation_random": 1.0, "spin": 3.0, "spin_random": 0.5,
                    "flipbook_random_start": 0.7},
                   {"rotation_align": "VELOCITY", "flipbook_mode": "RATE", "flipbook_rate": 11.0, "seed": 3}):
        system = textured(host, pos_age, vel_life, sprite_image="poses", flipbook_columns=4, flipbook_rows=2, **values)
        layer = draw_alpha(host, [system])
        cos, sin, position = poses(host, layer, count)
        s = system.settings
        index = np.arange(count)
        velocity = particle["velocity"][:, :2] * (SIZE / 2) * (2 / SIZE)  # pixel_grid: world units are pixels
        angle = ref.sprite_angle(index, particle["age"], s, velocity)
        np.testing.assert_allclose(cos, np.cos(angle), atol=2e-5)
        np.testing.assert_allclose(sin, np.sin(angle), atol=2e-5)
        want = ref.flipbook_position(index, particle["age"], particle["life"], s)
        np.testing.assert_allclose(position, want, atol=1e-4)
        assert len(np.unique(np.floor(want))) > 4, "many frames chosen"


def test_frame_choice_over_life_ends_on_the_last_frame(host, rng):
    sheet_image("life", smooth_sheet(rng, 3, 3))
    ages = np.array([0.0, 0.25, 0.5, 0.999])
    system = textured(host, [(16, 16, 0, a) for a in ages], sprite_image="life", flipbook_columns=3, flipbook_rows=3)
    _, _, position = poses(host, draw_alpha(host, [system]), len(ages))
    np.testing.assert_allclose(position, ages * 8, atol=1e-4)


def single_sprite_layer(host, pixels, angle=0.0, age=0.5, **values):
    """The alpha layer of one textured sprite (radius 6 px: a 12-pixel square) at pixel (16, 16)'s corner."""
    sheet_image("single", pixels)
    system = textured(host, [(16.0, 16.0, 0.0, age)], sprite_image="single", rotation=angle, **values)
    return draw_alpha(host, [system]).read(), system.settings


def expected_layer(sheet, settings, angle, position, vectors=None):
    """Premultiplied tint x texel (opacity 1) at every pixel center the sprite's square covers."""
    y, x = np.mgrid[0:SIZE, 0:SIZE] + 0.5
    offset = np.column_stack([x.ravel() - 16.0, y.ravel() - 16.0]) / 6.0
    c, s = math.cos(angle), math.sin(angle)
    local = np.column_stack([c * offset[:, 0] + s * offset[:, 1], c * offset[:, 1] - s * offset[:, 0]])
    inside = np.abs(local).max(axis=1) < 1
    texel = ref.flipbook_texel(sheet, vectors, settings, np.full(len(local), position), local * 0.5 + 0.5)
    want = np.zeros((SIZE * SIZE, 4))
    want[inside, :3] = TINT * texel[inside, :3] * texel[inside, 3:]
    want[inside, 3] = texel[inside, 3]
    return want.reshape(SIZE, SIZE, 4)


@pytest.mark.parametrize("angle", [0.0, 0.7, -2.0])
def test_texture_sampling_and_rotation_match_the_reference(host, rng, angle):
    sheet = smooth_sheet(rng, 1, 1, 16)
    got, settings = single_sprite_layer(host, sheet, angle)
    want = expected_layer(sheet, settings, angle, 0.0)
    np.testing.assert_allclose(got, want, atol=4e-3)
    assert (got[..., 3] > 0).sum() > 100


def test_a_turned_sprite_is_the_image_turned(host):
    """An arrow pointing right (+x), turned a quarter, points up (+y) on screen."""
    pixels = np.zeros((12, 12, 4), np.float32)
    pixels[5:7, 6:12] = 1.0  # the right half of the middle rows
    still, _ = single_sprite_layer(host, pixels, 0.0)
    turned, _ = single_sprite_layer(host, pixels, math.pi / 2)
    assert still[16, 20, 3] > 0.9 and still[20, 16, 3] == 0
    assert turned[20, 16, 3] > 0.9 and turned[16, 20, 3] == 0


@pytest.mark.parametrize("blend", ["NONE", "FRAMES"])
def test_frames_blend_into_the_next(host, blend):
    """Frames of flat colors: at 0.3 of the way from frame 1 to 2, 0.7 of one and 0.3 of the other."""
    colors = np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1], [1, 1, 1, 0.5]], np.float32)
    sheet = np.zeros((16, 16, 4), np.float32)
    for frame, color in enumerate(colors):  # 2x2, frame 0 top left
        row, column = frame // 2, frame % 2
        sheet[8 * (1 - row):8 * (2 - row), 8 * column:8 * (column + 1)] = color
    age = (1.3 / 3) * 0.999  # over life: position 3 * age / life = 1.3
    got, _ = single_sprite_layer(host, sheet, age=age / 0.999 * 1.0, flipbook_columns=2, flipbook_rows=2,
                                 flipbook_blend=blend)
    mixed = colors[1] if blend == "NONE" else 0.7 * colors[1] + 0.3 * colors[2]
    np.testing.assert_allclose(got[16, 16], np.append(TINT * mixed[:3] * mixed[3], mixed[3]), atol=4e-3)


def test_motion_vectors_move_each_frame_towards_the_other(host, rng):
    sheet = smooth_sheet(rng, 2, 2)
    vectors = np.clip(0.5 + 0.3 * smooth_sheet(rng, 2, 2) - 0.15, 0, 1).astype(np.float32)
    vectors[..., 2:] = 1.0
    sheet_image("vectors", vectors)  # a float image: read as stored (8-bit ones are too: vectors are not colors)
    values = {"flipbook_columns": 2, "flipbook_rows": 2, "flipbook_blend": "MOTION_VECTORS",
              "flipbook_vectors": "vectors", "flipbook_vector_strength": 1.0}
    got, settings = single_sprite_layer(host, sheet, age=0.55 / 3, **values)
    want = expected_layer(sheet, settings, 0.0, 0.55, vectors)
    np.testing.assert_allclose(got, want, atol=4e-3)
    plain = expected_layer(sheet, effect_settings({**values, "flipbook_blend": "FRAMES"}), 0.0, 0.55)
    assert np.abs(want - plain).max() > 0.02, "the vectors move what is sampled"


def test_textured_and_round_sprites_share_a_frame(host, rng):
    """A textured effect and a round one in one blend: the round one draws as it does alone."""
    sheet_image("shared", smooth_sheet(rng, 1, 1))
    round_alone = textured(host, [(8.0, 8.0, 0.0, 0.5)], size=4.0)
    alone = draw_alpha(host, [round_alone]).read()
    puff = textured(host, [(24.0, 24.0, 0.0, 0.5)], sprite_image="shared")
    both = draw_alpha(host, [round_alone, puff]).read()
    np.testing.assert_array_equal(both[:14, :14], alone[:14, :14])
    assert both[24, 24, 3] > 0


def test_additive_quads_draw_the_texture(host, rng):
    sheet = np.ones((8, 8, 4), np.float32)
    sheet[:, :4, 3] = 0.0  # the left half transparent
    sheet_image("additive", sheet)
    system = textured(host, [(16.0, 16.0, 0.0, 0.5)], blend_mode="ADD", sprite_image="additive")
    target = compositing.Compositor(FrameResources(host, SIZE, SIZE), render_settings())
    target.add(system, compositing.Camera.pixel_grid(SIZE, SIZE))
    target.resolve()
    frame = target.read_frame()
    np.testing.assert_allclose(frame[16, 19, :3], TINT, rtol=2e-3)
    assert not frame[16, 13, :3].any() and not frame[16, 23, :3].any()


def test_textured_sprites_streak_under_motion_blur(host, rng):
    """Both paths take a shutter: the sprite is swept along its motion (here 16 pixels along x)."""
    sheet_image("streaked", np.ones((8, 8, 4), np.float32))
    grid = compositing.Camera.pixel_grid(SIZE, SIZE)
    camera = compositing.Camera(grid.view_proj, SIZE, SIZE, Shutter.still(grid.view_proj, -0.5, 0.5))
    vel_life = [(16.0, 0.0, 0.0, 1.0)]
    for blend_mode in ("ADD", "ALPHA"):
        system = textured(host, [(16.0, 16.0, 0.0, 0.5)], vel_life, blend_mode=blend_mode, sprite_image="streaked",
                          size=2.0)
        target = compositing.Compositor(FrameResources(host, SIZE, SIZE), render_settings())
        if blend_mode == "ADD":
            target.add(system, camera)
            target.resolve()
            drawn = target.read_frame()
        else:
            layer = SpriteLayer(host, SIZE, SIZE)
            layer.draw([system], target.resources, camera, shutter=1.0)
            drawn = layer.read()
        row = drawn[16, :, 3 if blend_mode == "ALPHA" else 0]
        assert np.isfinite(drawn).all() and (row > 0).sum() >= 16, blend_mode


def save_png(path, pixels):
    """An 8-bit PNG of (h, w, 4) ``pixels`` at ``path``, through a Blender image removed afterwards."""
    image = bpy.data.images.new("saved_png", pixels.shape[1], pixels.shape[0], alpha=True)
    image.pixels.foreach_set(np.ascontiguousarray(pixels, np.float32).ravel())
    image.filepath_raw, image.file_format = str(path), "PNG"
    image.save()
    bpy.data.images.remove(image)


@pytest.mark.parametrize("kind", ["png", "exr", "packed"])
def test_images_from_files_8_bit_float_or_packed(host, tmp_path, kind):
    """A flat 8-bit sRGB PNG draws its linear color, a premultiplied EXR its color unpremultiplied; a packed image
    outlives its file."""
    path = tmp_path / f"flat.{'exr' if kind == 'exr' else 'png'}"
    flat = np.full((8, 8, 4), 0.5, np.float32)
    if kind == "exr":
        oiio, _ = image_modules()
        out = oiio.ImageOutput.create(str(path))
        out.open(str(path), oiio.ImageSpec(8, 8, 4, "half"))
        out.write_image(flat)  # premultiplied, as EXR keeps color: straight white at half alpha
        out.close()
    else:
        save_png(path, flat)
    source = str(path)
    if kind == "packed":
        packed = bpy.data.images.load(source)
        packed.pack()
        path.unlink()
        source = packed.name
    system = textured(host, [(16.0, 16.0, 0.0, 0.5)], sprite_image=source)
    center = draw_alpha(host, [system]).read()[16, 16]
    stored = round(0.5 * 255) / 255
    color, alpha = (1.0, 0.5) if kind == "exr" else (((stored + 0.055) / 1.055) ** 2.4, stored)
    np.testing.assert_allclose(center, [*(TINT * color * alpha), alpha], atol=2e-3)


def test_an_image_file_is_remembered_yet_a_change_on_disk_or_its_removal_is_seen(host, tmp_path, monkeypatch):
    """A file setting's image is found by searching the paths once: later draws stat its file once (not every
    candidate path), a file changed on disk still gives a new key (its pixels read again), a removed one still its
    clear message, and one put back is found again."""
    path = tmp_path / "remembered.png"
    save_png(path, np.full((4, 4, 4), 0.5, np.float32))
    first = host.sprite_image(str(path))
    stats = []
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda *args, **kwargs: stats.append(args[0]) or real_stat(*args, **kwargs))
    assert host.sprite_image(str(path)).key == first.key
    assert stats == [str(path)]
    os.utime(path, (path.stat().st_atime, path.stat().st_mtime + 10))
    assert host.sprite_image(str(path)).key != first.key
    path.unlink()
    with pytest.raises(SettingsError, match="no such image file"):
        host.sprite_image(str(path))
    save_png(path, np.full((4, 4, 4), 0.5, np.float32))
    assert host.sprite_image(str(path)).size == (4, 4)


# Bad input: a clear message, nothing lost.

@pytest.mark.parametrize("texture_format", ["RGBA8", "SRGB8_A8"])
def test_8_bit_sheets_keep_their_bytes(host, texture_format):
    """An 8-bit image's sheet keeps its bytes (SpriteSheets: SRGB8_A8 for sRGB colors, RGBA8 for the rest)."""
    values = np.array([0.0, 0.25, 0.5, 1.0] * 4, np.float32).reshape(2, 2, 4)
    texture = host.texture("bytes", 2, 2, texture_format, values)
    np.testing.assert_allclose(host.read(texture), np.rint(values * 255) / 255, atol=1e-6)


def test_an_8_bit_srgb_sheet_draws_as_its_linear_float_copy(host, tmp_path):
    """The same 8-bit sRGB PNG drawn from its bytes (SRGB8_A8, decoded where sampled) and from a float image of its
    linear colors (RGBA16F): the same layer within 1/128 anywhere (the GPU's decode and filter of sRGB texels are
    its own: an H100 differs by 0.005 in one pixel of 4096) and 1/2000 on average; an undecoded sheet would be off
    by tenths."""
    pixels = np.random.default_rng(5).uniform(0, 1, (16, 16, 4)).astype(np.float32)
    pixels[..., 3] = np.clip(pixels[..., 3] + 0.3, 0, 1)
    path = tmp_path / "bytes.png"
    save_png(path, pixels)
    system = textured(host, [(16.0, 16.0, 0.0, 0.5)], sprite_image=str(path))
    from_bytes = draw_alpha(host, [system]).read()
    stored = np.rint(pixels * 255) / 255
    linear = stored.copy()
    linear[..., :3] = np.where(stored[..., :3] <= 0.04045, stored[..., :3] / 12.92,
                               ((stored[..., :3] + 0.055) / 1.055) ** 2.4)
    sheet_image("bytes_linear", linear)
    from_floats = draw_alpha(host, [textured(host, [(16.0, 16.0, 0.0, 0.5)], sprite_image="bytes_linear")]).read()
    assert from_bytes[..., 3].max() > 0.5
    np.testing.assert_allclose(from_bytes, from_floats, atol=1 / 128)
    assert np.abs(from_bytes - from_floats).mean() < 5e-4


def test_a_missing_image_file_is_named(host):
    system = textured(host, [(16.0, 16.0, 0.0, 0.5)], sprite_image="/no/such/puff.png")
    with pytest.raises(SettingsError, match="'/no/such/puff.png'.*no such image file"):
        draw_alpha(host, [system])


def test_a_bake_checks_the_images_before_it_starts(host):
    settings = effect_settings({"particle_type": "SPRITE", "sprite_image": "textures/smoke_puff_8x8.png",
                                "flipbook_columns": 8, "flipbook_rows": 8, "flipbook_vectors": "/no/vectors.png"})
    with pytest.raises(SettingsError, match="'/no/vectors.png'.*no such image file"):
        check_images(settings, host)
    check_images(dataclasses.replace(settings, flipbook_vectors="textures/smoke_puff_8x8_vectors.png"), host)
    with pytest.raises(SettingsError, match="does not divide into 7 columns"):
        check_images(dataclasses.replace(settings, flipbook_columns=7), host)


def test_a_sheet_whose_size_does_not_divide_is_refused(host, rng):
    sheet_image("odd", smooth_sheet(rng, 1, 1, 10))
    system = textured(host, [(16.0, 16.0, 0.0, 0.5)], sprite_image="odd", flipbook_columns=3)
    with pytest.raises(SettingsError, match=r"10x10 pixels\) does not divide into 3 columns and 1 rows"):
        draw_alpha(host, [system])


def test_zero_rows_or_columns_are_refused():
    for name in ("flipbook_rows", "flipbook_columns"):
        with pytest.raises(SettingsError, match=f"{name} must be at least 1, not 0"):
            effect_settings({name: 0})


class HugeImages:
    """A host whose images are all 16K a side and must never be read."""

    def __init__(self, host):
        self.host = host

    def __getattr__(self, name):
        return getattr(self.host, name)

    def sprite_image(self, source):
        def read(linear):
            raise AssertionError("a refused image is not read")

        return SheetImage((source,), (16384, 16384), read)


def test_a_16k_image_is_refused_before_it_is_read(host):
    system = textured(host, [(16.0, 16.0, 0.0, 0.5)], sprite_image="huge")
    layer = SpriteLayer(host, SIZE, SIZE)
    target = compositing.Compositor(FrameResources(HugeImages(host), SIZE, SIZE), render_settings())
    with pytest.raises(SettingsError, match="16384x16384 pixels; sprite sheets may be at most 8192 a side"):
        layer.draw([system], target.resources, compositing.Camera.pixel_grid(SIZE, SIZE))


def test_an_image_removed_while_used_is_named_and_the_layer_still_draws(host, rng):
    sheet_image("removed", smooth_sheet(rng, 1, 1))
    system = textured(host, [(16.0, 16.0, 0.0, 0.5)], sprite_image="removed")
    layer = SpriteLayer(host, SIZE, SIZE)
    target = compositing.Compositor(FrameResources(host, SIZE, SIZE), render_settings())
    camera = compositing.Camera.pixel_grid(SIZE, SIZE)
    layer.draw([system], target.resources, camera)
    drawn = layer.read()
    bpy.data.images.remove(bpy.data.images["removed"])
    with pytest.raises(SettingsError, match="'removed': no image of that name"):
        layer.draw([system], target.resources, camera)
    assert system.settings.sprite_image == "removed"  # the setting is kept: bring the image back and it draws
    sheet_image("removed", smooth_sheet(np.random.default_rng(0), 1, 1))
    layer.draw([system], target.resources, camera)
    assert layer.read()[..., 3].max() > 0 and drawn[..., 3].max() > 0


def test_sheet_reach_is_the_farthest_alpha_plus_a_texel():
    disc = np.zeros((32, 64, 4), np.float32)  # 2x1 frames of 32 px, a disc of half the half side in each
    y, x = np.mgrid[0:32, 0:64] + 0.5
    disc[..., 3] = np.hypot(x % 32 - 16, y - 16) < 8
    margin = math.hypot(2 / 32, 2 / 32)
    farthest = max(np.hypot((x % 32 - 16) / 16, (y - 16) / 16)[disc[..., 3] > 0])
    assert sheet_reach(disc, 2, 1) == pytest.approx(farthest + margin)
    assert sheet_reach(disc, 2, 1, vector_strength=0.05) == pytest.approx(farthest + margin + 0.1 * math.sqrt(2))
    assert sheet_reach(np.ones((8, 8, 4), np.float32), 1, 1) == pytest.approx(math.sqrt(2))
    assert sheet_reach(np.zeros((8, 8, 4), np.float32), 1, 1) == pytest.approx(math.hypot(0.25, 0.25))


def test_a_round_puff_bins_its_circle_and_draws_the_same(host, rng, monkeypatch):
    """A sheet that shows a disc: the footprints reach the disc, not the square's corners, and the layer is the
    one the corners' reach draws (what is left out sampled alpha 0)."""
    y, x = np.mgrid[0:16, 0:16] + 0.5
    puff = smooth_sheet(rng, 1, 1, 16)
    puff[..., 3] *= np.hypot(x - 8, y - 8) < 7
    sheet_image("puff", puff)
    pos_age = np.column_stack([rng.uniform(8, 88, (40, 2)), rng.uniform(-1, 1, 40), np.full(40, 0.5)])

    def drawn():
        system = textured(host, pos_age, sprite_image="puff", rotation_random=3.0, size=20.0)
        layer = draw_alpha(host, [system], size=96)
        pairs = host.read(layer.list.instance_counts).ravel()[:40].sum()
        return layer.read(), pairs

    near, near_pairs = drawn()
    monkeypatch.setattr(SpriteSheets, "reach", lambda self, settings: math.sqrt(2.0))
    corners, corner_pairs = drawn()
    np.testing.assert_allclose(near, corners, atol=2e-4)  # the local uv rounds otherwise
    assert near[..., 3].max() > 0.5
    assert near_pairs < 0.8 * corner_pairs, (near_pairs, corner_pairs)
