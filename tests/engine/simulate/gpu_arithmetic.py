"""A GPU's float32 liberties emulated in the numpy reference, to check gpu_rounding.py's bound without a GPU.

NVIDIA's compiler fuses a * b + c (the product unrounded), divides, takes square roots and
normalizes approximately, and computes sin and cos with an absolute error; llvmpipe does none of
it.  The reference run on ``Emulated`` arrays perturbs each such result within those liberties,
times ``scale``, at random: a product moves one ulp toward its exact value half the time (fusing
moves it at most half an ulp), a matrix product is either numpy's or the exactly rounded one, a
quotient or square root moves up to 2 ulps, pow up to 4, sin and cos up to 2^-20.5 (NVIDIA's
documented error).  What the kernel computes ``precise`` (ages, lifetimes, the burst schedule,
the noise texel) stays exact, as on the GPU.

``python tests/engine/simulate/gpu_arithmetic.py`` prints, per test case, the worst ratio of the emulated GPU's
difference to the bound (and to the ad-hoc bound it replaced) over seeds, scales and roundings.
"""

from __future__ import annotations

import argparse
import contextlib
import linecache
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from addon.engine.reference.simulate import gpu_rounding  # noqa: E402
from addon.engine.reference.simulate import simulation as ref  # noqa: E402
from addon.engine.seam.records import PARTICLE  # noqa: E402

F = np.float32
ULPS = {"divide": 2, "sqrt": 2, "power": 4}
SINE = 2.0**-20.5
# Reference lines the kernel computes precise or exactly: their operations are not perturbed.
PRECISE_LINES = ("life", "death", "turbulence_frequency", "F(0.5)", "offset / place", "16777216")


class Emulated(np.ndarray):
    """float32 arrays whose fusable, approximate and transcendental results a GPU may round differently."""

    rng = np.random.default_rng(0)
    scale = 1.0

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [np.asarray(i) if isinstance(i, Emulated) else i for i in inputs]
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, Emulated) else o for o in out)
        result = getattr(ufunc, method)(*plain, **kwargs)
        if method == "__call__" and isinstance(result, np.ndarray) and result.dtype == F and result.size:
            frame = sys._getframe(1)
            if not any(s in linecache.getline(frame.f_code.co_filename, frame.f_lineno) for s in PRECISE_LINES):
                perturbed = self._perturb(ufunc.__name__, result, plain)
                if out is not None:
                    kwargs["out"][0][...] = perturbed
                else:
                    result = perturbed
        return result.view(Emulated) if isinstance(result, np.ndarray) else result

    def __array_function__(self, func, types, args, kwargs):
        if func is np.linalg.norm:  # numpy's norm drops the subclass: sqrt(sum of squares), as length() is
            return np.sqrt(np.add.reduce(args[0] * args[0], axis=kwargs.get("axis"),
                                         keepdims=kwargs.get("keepdims", False)))
        result = super().__array_function__(func, tuple(np.ndarray if t is Emulated else t for t in types),
                                            args, kwargs)
        return result.view(Emulated) if isinstance(result, np.ndarray) and result.dtype.kind == "f" else result

    @classmethod
    def _perturb(cls, name, x, inputs):
        rng, scale = cls.rng, cls.scale
        ulp = np.spacing(np.abs(x))
        if name == "multiply":
            exact = np.multiply(*(np.asarray(i, np.float64) for i in inputs))
            toward = np.sign(exact - x.astype(np.float64)).astype(F)
            return np.where(rng.random(x.shape) < 0.5, x, x + toward * ulp * F(scale)).astype(F)
        if name == "matmul":
            exact = np.matmul(*(np.asarray(i, np.float64) for i in inputs)).astype(F)
            return np.where(rng.random(x.shape) < 0.5, x, exact)
        if name in ("sin", "cos"):
            return (x + rng.uniform(-1, 1, x.shape) * SINE * scale).astype(F)
        if name in ULPS:
            return (x + rng.integers(-ULPS[name], ULPS[name] + 1, x.shape) * ulp * F(scale)).astype(F)
        return x


@contextlib.contextmanager
def emulated(seed: int, scale: float = 1.0):
    """The reference's random draws (and so its emission) become ``Emulated`` too."""
    random_unit = ref.random_unit
    Emulated.rng, Emulated.scale = np.random.default_rng(seed), scale
    ref.random_unit = lambda *a: random_unit(*a).view(Emulated)
    try:
        yield
    finally:
        ref.random_unit = random_unit


def gpu_step_frame(pos_age, vel_life, *args, seed: int, scale: float = 1.0):
    """``ref.step_frame`` as an emulated GPU runs it."""
    with emulated(seed, scale):
        result = ref.step_frame(pos_age.view(Emulated), vel_life.view(Emulated), *args)
    return tuple(np.asarray(a) for a in result)


def frames(settings, inputs: dict, count: int, emitter: tuple, dt: float, seed: int, scale: float = 1.0,
           half_rounding: str = "NEAREST"):
    """Per frame of an emitter moving from ``emitter[0]`` to ``emitter[1]``, from the emulated GPU's own
    state: (its state, the reference's from that same state, the bound)."""
    ref_inputs = ref.inputs_for(settings, half_rounding=half_rounding, **inputs)
    mesh, colliders = inputs.get("mesh"), inputs.get("colliders", ())
    args = (settings, ref_inputs)
    frame_args = (dt, *emitter, mesh.count if mesh is not None else 0, colliders)
    state, clock = ref.init_particles(settings, half_rounding), ref.Clock()
    for frame in range(count):
        traces = []
        start = ref.Clock(clock.step_index, clock.time, clock.origin.copy())
        want = ref.step_frame(*(a.copy() for a in state), *args, start, *frame_args, traces=traces)
        state = gpu_step_frame(*(a.copy() for a in state), *args, clock, *frame_args, seed=seed + 1000 * frame,
                               scale=scale)
        yield state, want, gpu_rounding.frame_bound(traces, ref_inputs)


def main():
    from tests.engine.simulate import test_simulation as cases

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--scales", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    parser.add_argument("--roundings", nargs="+", default=["NEAREST", "ZERO"])
    parser.add_argument("--frames", type=int, default=12)
    args = parser.parse_args()
    print(f"{'case':17} {'scale':>5} {'rounding':8} {'worst':>7} {'over':>5} {'old':>6} {'over':>5} "
          f"{'bound/old median':>16} {'p99':>8} {'max':>9}")
    for scale in args.scales:
        for rounding in args.roundings:
            for case in sorted(cases.CASES):
                settings, inputs = cases.case_settings(case, "COMPACT")
                worst = worst_old = 0.0
                over = over_old = 0
                ratios = []
                for seed in range(args.seeds):
                    for got, want, bound in frames(settings, inputs, args.frames, cases.EMITTER, cases.DT, seed,
                                                   scale, rounding):
                        got, want = PARTICLE.read_images(*got), PARTICLE.read_images(*want)
                        for lane, b in zip(("position", "velocity"), bound):
                            g, w = got[lane], want[lane]
                            diff = np.abs(g.astype(np.float64) - w)
                            old = settings.substeps * gpu_rounding.half_spacing(w) + 2.0**-20 * np.maximum(
                                np.abs(w), 1.0)  # the ad-hoc bound this replaced
                            ratio = np.where(b > 0, diff / np.where(b > 0, b, 1), np.where(diff > 0, np.inf, 0))
                            worst, worst_old = max(worst, ratio.max()), max(worst_old, (diff / old).max())
                            over, over_old = over + int((ratio > 1).sum()), over_old + int((diff > old).sum())
                            ratios.append((b / old)[np.isfinite(old)])
                ratios = np.concatenate(ratios)
                print(f"{case:17} {scale:5g} {rounding:8} {worst:7.4f} {over:5d} {worst_old:6.2f} {over_old:5d} "
                      f"{np.median(ratios):16.3f} {np.percentile(ratios, 99):8.2f} {ratios.max():9.1f}", flush=True)


if __name__ == "__main__":
    main()
