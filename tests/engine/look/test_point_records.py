"""A point cache's PLY body built on the GPU (engine/look/point_records.py): byte for byte the numpy reference's
records (output/point_cache.ply_records of output/export.particle_attributes) in both state layouts, dead and
unborn slots left out, ids from the system's first id; no live particle reads an empty body."""

import numpy as np
import pytest

from addon.engine.look.look import LOOK_SIZE, look_table
from addon.engine.look.point_records import PLY_TEXELS, PointRecords, body_size
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import SettingsError, effect_settings
from addon.engine.simulate import simulation


def spinning_effect(host, rng, n, layout="FULL", **values):
    """``n`` slots, some dead or unborn, moving, of random ages, sizes, brightness, turning; stored relative to an
    origin away from the world's (what read_state adds back).  COMPACT: as its simulation leaves them."""
    settings = effect_settings({"count": n, "size": 0.05, "size_end": 0.4, "size_random": 0.5, "lifetime": 4.0,
                                "emission_strength": 3.0, "color_random": 0.3, "color_start": (1.0, 0.5, 0.2),
                                "color_end": (0.1, 0.2, 0.9), "rotation": 0.3, "rotation_random": 0.7, "spin": 2.5,
                                "spin_random": 0.4, "state_layout": layout, "seed": 7, **values})
    system = simulation.ParticleSystem(host, settings)
    look = host.texture("look", LOOK_SIZE, 1, "RGBA32F", look_table(settings))
    if layout == "COMPACT":  # its halves are written by the simulation alone: two seconds of it
        for _ in range(48):
            system.step(1 / 24, np.identity(4), np.identity(4))
        return system, look
    system.origin = np.array([3.25, -1.5, 0.75], np.float32)
    pos_age = np.concatenate([rng.normal(0.0, 0.3, (n, 3)) + system.origin, rng.uniform(0, 4, (n, 1))], axis=1)
    vel_life = np.concatenate([rng.normal(0.0, 2.0, (n, 3)), np.full((n, 1), 4.0)], axis=1)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["life"][:n // 10] = 0.5  # dead: age past life
    particle["age"][n // 10:n // 5] = -1.0  # not born yet
    system.write_state(pos_age.astype(np.float32), vel_life.astype(np.float32))
    return system, look


@pytest.mark.parametrize("layout, color_by", [("FULL", "AGE"), ("COMPACT", "AGE"), ("FULL", "SPEED"),
                                              ("COMPACT", "SPEED")])
def test_the_gpu_body_is_the_numpy_records_byte_for_byte(host, rng, layout, color_by):
    """Colored by age, or by speed (still: color_start, at color_speed: color_end)."""
    from addon.output.export import particle_attributes
    from addon.output.point_cache import ply_records

    system, look = spinning_effect(host, rng, 5000, layout, color_by=color_by, color_speed=2.5)
    records = PointRecords(host, system)
    records.pack(system, look, first_id=70000)  # ids past 65536: id_high is not 0
    body = records.read().records
    expected = ply_records(particle_attributes(*system.read_state(), system.settings, None, 70000))
    assert 1000 < len(expected) < 4500  # the unborn and the dead left out
    assert body.dtype == np.float32 and body.tobytes() == expected.tobytes()


def test_no_live_particle_reads_an_empty_body(host, rng):
    system, look = spinning_effect(host, rng, 300)
    pos_age, vel_life = system.read_state()
    PARTICLE.read_image("vel_life", vel_life)["life"][:] = -1.0
    system.write_state(pos_age, vel_life)
    records = PointRecords(host, system)
    records.pack(system, look, first_id=0)
    assert records.read().records.size == 0


def test_memory_a_writer_gave_back_is_read_into_again_and_the_body_is_the_next_frames(host, rng):
    """A body not given back stays as read while later frames are read (into new memory); once given back, the
    next frame is read into it."""
    system, look = spinning_effect(host, rng, 3000)
    records = PointRecords(host, system)
    records.pack(system, look, first_id=0)
    first = records.read()
    held = first.records.copy()
    pos_age, vel_life = system.read_state()
    PARTICLE.read_images(pos_age, vel_life)["position"][:] += 1.0  # the next frame: every particle moved
    system.write_state(pos_age, vel_life)
    records.pack(system, look, first_id=0)
    second = records.read()  # the first not given back: new memory
    np.testing.assert_array_equal(first.records, held)
    first.give_back()
    records.pack(system, look, first_id=0)
    third = records.read()
    assert not np.shares_memory(second.records, first.records) and np.shares_memory(third.records, first.records)
    assert third.records.tobytes() == second.records.tobytes() != held.tobytes()


def test_a_body_image_holds_every_slot_in_whole_records_within_the_texture_size_or_is_refused():
    assert body_size(1000, 16384) == (4096, 1)
    assert body_size(1_000_000, 16384) == (4096, 977)
    for slots in (1 << 24, (1 << 26) - 3):
        width, rows = body_size(slots, 16384)
        assert width <= 16384 and rows <= 16384 and width * rows >= slots * PLY_TEXELS and width % PLY_TEXELS == 0
    with pytest.raises(SettingsError, match="A point cache holds at most 67,108,864 particles an effect"):
        body_size((1 << 26) + 1, 16384)
