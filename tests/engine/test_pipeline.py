"""A frame recorded by the engine's pipeline from plain data (no scene), replayed by the numpy reference."""

import numpy as np

from addon.engine import pipeline
from addon.engine.draw.compositing import Camera, Compositor
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.look.look import LOOK_SIZE
from addon.engine.order.sorting import EffectSort
from addon.engine.reference.draw import compositing as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate import csg
from addon.engine.simulate.simulation import ParticleSystem

WIDTH, HEIGHT, EMAX = 64, 32, 256.0


def particles_in(rng, n, low, high):
    """(pos_age, vel_life) of ``n`` live particles on pixel centers of the pixel grid, x and y in [low, high)."""
    pixels = rng.integers(low, high, (n, 2))
    pos_age = np.concatenate([pixels + 0.5, np.zeros((n, 1)), rng.uniform(0.0, 0.9, (n, 1))], axis=1)
    vel_life = np.zeros((n, 4))
    PARTICLE.read_image("vel_life", vel_life)["life"][:] = 1.0
    return pos_age.astype(np.float32), vel_life.astype(np.float32)


def test_recording_from_plain_data_matches_the_reference(host, rng):
    """Two Add effects (the second colored by the ramp the frame data brings) and a CSG cloud, on separate
    pixels: the recorded frame is the reference's splat of each and its resolve, bit for bit."""
    camera = Camera.pixel_grid(WIDTH, HEIGHT)
    looks = [effect_settings({"count": 2000, "size": 10.0, "color_start": (3.0, 0.2, 1.0),
                              "color_end": (0.1, 2.5, 0.01), "emission_strength": 1.3}),
             effect_settings({"count": 1500, "size": 10.0, "emission_strength": 0.7, "seed": 5})]
    states = [particles_in(rng, 2000, (0, 0), (32, 12)), particles_in(rng, 1500, (32, 0), (64, 12))]
    systems = [ParticleSystem(host, look) for look in looks]
    for system, state in zip(systems, states):
        system.write_state(*state)
    ramp = np.stack([np.linspace(0.0, 2.0, LOOK_SIZE), np.full(LOOK_SIZE, 0.5), np.linspace(1.0, 0.0, LOOK_SIZE)],
                    axis=1).astype(np.float32)
    points = csg.CloudParticles(csg.PointCloud(host, 20_000, 3000),
                                effect_settings({"size": 1.0, "color_start": (1, 1, 1), "color_end": (0, 0, 1)}))
    data = pipeline.FrameData(1, (np.identity(4), np.identity(4)), (None, ramp),
                              pipeline.CloudFrame((csg.sphere((32, 24, 0), 5.0),), 0.5, 0.0, 0.0))
    compositor = Compositor(FrameResources(host, WIDTH, HEIGHT), render_settings({"emax": EMAX}))

    warnings = pipeline.record_frame(systems, [EffectSort(system) for system in systems], data, camera,
                                     np.identity(4), pipeline.Targets(compositor), points)
    frame = compositor.read_frame()

    assert warnings == [] and points.cloud.read_count() > 0
    cloud_state = (host.read(points.pos_age).reshape(-1, 4), host.read(points.vel_life).reshape(-1, 4))
    hi, lo = np.zeros((HEIGHT, WIDTH), np.uint32), np.zeros((HEIGHT, WIDTH), np.uint32)
    for (pos_age, vel_life), look, look_ramp in zip([*states, cloud_state], [*looks, points.settings], [None, ramp, None]):
        part_hi, part_lo, overflow = ref.splat(pos_age, vel_life, camera.view_proj, WIDTH, HEIGHT, look, EMAX,
                                               camera.pixels_per_unit, look_ramp)
        assert overflow == 0 and part_hi.any() and not ((hi | lo) & (part_hi | part_lo)).any(), \
            "each part on pixels of its own"
        hi, lo = hi + part_hi, lo + part_lo
    np.testing.assert_array_equal(frame, ref.resolve(hi, lo, EMAX))
    assert systems[1].ramp is ramp, "the look the frame data brought"
