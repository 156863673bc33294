"""What a draw keeps between dispatches so that it costs the CPU little: each cache must follow every change,
and the host's constant setting must stay exact however a recording gives the values."""

import dataclasses

import numpy as np
import pytest

from addon.engine.draw.compositing import Compositor
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.seam.kernels import Constant, Image, Kernel, Sampler
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate import simulation
from addon.engine.simulate.simulation import ParticleSystem
from tests.gpu_fill import InlineKernel

# Every constant kind the Blender host sets, written back as bits (a float's sign of zero included).
ECHO = InlineKernel(
    "echo_constants_for_test",
    images=(Image("bits", "R32UI", "WRITE"),),
    constants=(Constant("FLOAT", "value"), Constant("VEC4", "vector"), Constant("INT", "number"),
               Constant("IVEC2", "pair"), Constant("MAT4", "matrix")),
    includes=(),
    source="""
void main()
{
  imageStore(bits, ivec2(0, 0), uvec4(floatBitsToUint(value)));
  imageStore(bits, ivec2(1, 0), uvec4(floatBitsToUint(vector.y)));
  imageStore(bits, ivec2(2, 0), uvec4(uint(number)));
  imageStore(bits, ivec2(3, 0), uvec4(uint(pair.y)));
  imageStore(bits, ivec2(4, 0), uvec4(floatBitsToUint(matrix[3][1])));
}
""",
)


VECTORS = (lambda v: (1.0, v, 2.0, 3.0), lambda v: np.float32([1, v, 2, 3]), lambda v: [1, np.float64(v), 2, 3])


def echo(host, kernel, bits, value, vector=VECTORS[0]):
    matrix = np.identity(4)
    matrix[1, 3] = value  # row-major translation y: column 3, row 1 in GLSL
    host.dispatch(kernel, (1, 1, 1), {"bits": bits},
                  {"value": np.float32(value), "vector": vector(value), "number": np.int64(abs(value) * 2),
                   "pair": (7, int(abs(value) * 4)), "matrix": matrix})
    return host.read(bits)[0]


def expected(value):
    as_bits = np.float32(value).view(np.uint32)
    return [as_bits, as_bits, int(abs(value) * 2), int(abs(value) * 4), as_bits]


@pytest.mark.parametrize("vector", VECTORS, ids=["tuple", "float32-array", "numpy-scalars"])
def test_every_constant_kind_arrives_bit_for_bit(host, vector):
    """Each kind of constant as a recording gives it (numpy scalars and arrays too) reaches the kernel exactly,
    every change (to -0.0 too) on the same shader."""
    bits = host.texture("bits", 5, 1, "R32UI")
    for value in (1.5, 1.5, 2.5, 1.5, 0.0, -0.0, -0.0, 0.0, 3.0):
        assert list(echo(host, ECHO, bits, value, vector)) == expected(value), value


def test_equal_kernels_share_one_shader(host):
    """Two equal kernel objects (one made afresh) find the same compiled shader and bindings."""
    bits = host.texture("bits", 5, 1, "R32UI")
    twin = dataclasses.replace(ECHO)
    assert twin is not ECHO and twin == ECHO and hash(twin) == hash(ECHO)
    for kernel, value in ((ECHO, 1.0), (twin, 2.0), (ECHO, 1.0), (twin, 1.0), (ECHO, 2.0)):
        assert list(echo(host, kernel, bits, value)) == expected(value)
    assert host._binding(twin) is host._binding(ECHO)


def test_kernels_and_settings_hash_once_and_follow_their_fields():
    kernel = Kernel("k", images=(Image("a", "R32F"),), samplers=(Sampler("s"),))
    changed = dataclasses.replace(kernel, samplers=(Sampler("t"),))
    assert hash(kernel) == hash(dataclasses.replace(kernel)) and hash(kernel) == hash(kernel)
    assert changed != kernel and hash(changed) != hash(kernel)
    a, b = effect_settings({"count": 5}), effect_settings({"count": 5})
    assert a is not b and a == b and hash(a) == hash(b)
    assert hash(effect_settings({"count": 6})) != hash(a)
    assert len({render_settings(), render_settings({"emax": 2.0})}) == 2


def test_packer_packs_as_pack_does_with_mixed_vectors():
    kernel = Kernel("k", constants=(
        Constant("INT", "count"),
        Constant("VEC4", "motion", components=(("direction", "xyz"), ("speed", "w"))),  # fixed and per call
        Constant("IVEC2", "size", components=(("width", "x"), ("height", "y"))),  # fixed
        Constant("FLOAT", "time"),  # per call
    ))
    fixed = {"count": 3, "speed": 0.5, "width": 7.0, "height": 9}
    packer = kernel.packer(fixed)
    for direction, time in (((1, 2, 3), 0.25), ((4, 5, 6), 0.5)):
        values = {"direction": direction, "time": time}
        assert packer(values) == kernel.pack({**fixed, **values})
    with pytest.raises(ValueError, match="speed"):
        packer({"direction": (1, 2, 3), "time": 0.0, "speed": 1.0})
    with pytest.raises(ValueError, match="time"):
        packer({"direction": (1, 2, 3)})


@pytest.mark.parametrize("changes", [{}, {"gravity": (0.0, 0.0, -3.0)}, {"lifetime": 0.75, "drag": 0.5},
                                     {"emission": "BURST", "burst_interval": 1.5}, {"turbulence_scale": 3.0}])
def test_simulate_constants_follow_every_setting(changes):
    """The per-settings packed part is cached: a changed setting gets its own, equal to packing it all afresh."""
    settings = effect_settings(changes)
    values = dict(dt=0.02, step_index=3, time=0.06, emitter_prev=np.identity(4), emitter_cur=np.identity(4),
                  origin_in=np.zeros(3), origin_out=np.ones(3), triangle_count=5)
    constants = simulation.simulate_constants(settings, **values)
    named = simulation.SIMULATE.named(constants)
    for name, value in changes.items():
        if name in named:
            assert np.allclose(named[name], value), name
    assert named["turbulence_frequency"] == pytest.approx(1.0 / settings.turbulence_scale)
    assert named["triangle_count"] == 5 and named["step_index"] == 3 and named["stored_origin"] == (1.0, 1.0, 1.0)
    fresh = simulation.SIMULATE.pack({**simulation._simulate_packer(settings, 5).fixed, **{
        k: v for k, v in named.items() if k in simulation._simulate_packer(settings, 5).value_names}})
    assert fresh == constants


def test_look_texture_follows_settings_and_ramp(host):
    compositor = Compositor(FrameResources(host, 8, 8), render_settings())
    system = ParticleSystem(host, effect_settings({"count": 256}))
    first = compositor.resources.look_texture(system)
    assert compositor.resources.look_texture(system) is first, "nothing changed: the same texture"
    system.settings = effect_settings({"count": 256, "color_start": (0.0, 1.0, 0.0)})
    recolored = compositor.resources.look_texture(system)
    assert recolored is not first and host.read(recolored)[0, 0, 1] == 1.0
    system.ramp = np.tile(np.float32([0.25, 0.5, 0.75]), (64, 1))
    ramped = compositor.resources.look_texture(system)
    np.testing.assert_array_equal(host.read(ramped)[0, 0, :3], [0.25, 0.5, 0.75])
    system.ramp = system.ramp * 2
    np.testing.assert_array_equal(host.read(compositor.resources.look_texture(system))[0, 0, :3], [0.5, 1.0, 1.5])
