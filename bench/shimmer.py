"""Shimmer as aliasing alone: the one-pixel splat against the anti-aliased (2x2) footprint.

The same particle state is rendered with the camera shifted by 0, 1/4, 1/2 and
3/4 of a pixel (diagonally); each render is shifted back by the same amount (a band-limited
shift: a phase ramp in the Fourier domain, which blurs nothing, so a render
free of aliasing comes back identical whatever its sub-pixel phase) and
blurred with a 3x3 box (what a viewer's eye integrates), and ``shimmer`` is
the mean absolute difference between every pair of those images over the mean
of them all (a border of 8 pixels left out: the shift wraps around).

Records (suite ``shimmer``, one per case and filter): ``shimmer`` (mean over
the six pairs), ``per_shift`` (each shifted render against the unshifted one),
and on the antialiased record ``ratio`` = one-pixel shimmer / antialiased
(issue 13 asks for at least 2).  Runs the product's kernels through a host:
Blender's ``gpu`` (default) or moderngl; the figures are integer-exact, so
llvmpipe gives the same numbers as a GPU.

    .venv/bin/python bench/shimmer.py [--quick] [--host moderngl]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench import cases, common  # noqa: E402

SHIFTS = (0.0, 0.25, 0.5, 0.75)
BORDER = 8  # pixels left out at every edge (the band-limited shift wraps around)


def shift_back(image: np.ndarray, shift: float) -> np.ndarray:
    """``image`` moved by -shift pixels in x and y, band-limited (a phase ramp in the Fourier domain):
    out[y, x] = image at (x + shift, y + shift).  Unlike interpolation it blurs nothing, so the zero
    shift and the others are treated alike and only aliasing is left to differ; edges wrap (cropped)."""
    height, width = image.shape
    ky = np.fft.fftfreq(height)[:, None]
    kx = np.fft.fftfreq(width)[None, :]
    return np.real(np.fft.ifft2(np.fft.fft2(image) * np.exp(2j * np.pi * (kx + ky) * shift)))


def box3(image: np.ndarray) -> np.ndarray:
    """3x3 box blur (mean of each pixel's neighbourhood; edges clamped)."""
    padded = np.pad(image.astype(np.float64), [(1, 1), (1, 1)] + [(0, 0)] * (image.ndim - 2), mode="edge")
    height, width = image.shape[:2]
    return sum(padded[dy:dy + height, dx:dx + width] for dy in range(3) for dx in range(3)) / 9.0


def shimmer(renders: list[np.ndarray], shifts=SHIFTS, border=BORDER) -> tuple[float, list[float]]:
    """(mean pairwise MAD / mean, [MAD / mean of each shift against the first]) of the aligned, blurred renders."""
    aligned = [box3(shift_back(image, s))[border:-border, border:-border] for image, s in zip(renders, shifts)]
    mean = float(np.mean([a.mean() for a in aligned]))
    if mean == 0.0:
        raise ValueError("the renders are black: nothing to measure")
    pairs = [float(np.abs(a - b).mean()) / mean for a, b in itertools.combinations(aligned, 2)]
    return float(np.mean(pairs)), [float(np.abs(a - aligned[0]).mean()) / mean for a in aligned[1:]]


def render_shifted(host, system, width, height, antialias: bool, emax: float) -> list[np.ndarray]:
    """The R + G + B of the splat + resolve at each camera shift (the product's kernels)."""
    from addon.engine.draw.compositing import Camera, Compositor
    from addon.engine.draw.frame_resources import FrameResources

    base = Camera.pixel_grid(width, height)
    compositor = Compositor(FrameResources(host, width, height), cases.render(emax))
    compositor.antialias = antialias
    renders = []
    for s in SHIFTS:
        view_proj = base.view_proj.copy()
        view_proj[0, 3] += 2.0 * s / width
        view_proj[1, 3] += 2.0 * s / height
        compositor.splat(system, Camera(view_proj, width, height))
        compositor.resolve()
        renders.append(compositor.read_frame()[..., :3].sum(axis=-1))
    return renders


def make_host(name: str):
    if name == "moderngl":
        from addon.hosts.moderngl import ModernGLHost

        return ModernGLHost()
    from addon.hosts.blender import BlenderHost

    return BlenderHost()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="640x360 and 200K particles (default 1920x1080, 2M)")
    parser.add_argument("--host", choices=("blender", "moderngl"), default="blender")
    parser.add_argument("--out", action="append", help="folder for <device>-<date>.json (default bench/results)")
    args = parser.parse_args(argv)
    n, width, height = (200_000, 640, 360) if args.quick else (2_000_000, 1920, 1080)
    from addon.engine.simulate.simulation import ParticleSystem

    host = make_host(args.host)
    device = getattr(host, "device", host.name)
    rng = np.random.default_rng(20261123)
    records = []
    for case in cases.CASES:
        xyz = cases.positions(case, n, width, height, rng)
        pos_age, vel_life = cases.state(xyz, rng)
        system = ParticleSystem(host, cases.settings(n))
        system.write_state(pos_age, vel_life)
        emax = cases.fitted_emax(cases.pixel_counts(xyz, width, height))
        measured = {}
        for name, antialias in (("one_pixel", False), ("antialiased", True)):
            value, per_shift = shimmer(render_shifted(host, system, width, height, antialias, emax))
            measured[name] = value
            extra = {"ratio": measured["one_pixel"] / value} if antialias else {}
            records.append(common.record("shimmer", f"{case}_{name}", n, device, None, width=width, height=height,
                                         shimmer=value, per_shift=[round(v, 5) for v in per_shift],
                                         shifts=list(SHIFTS), **extra))
            print(f"shimmer {case:7s} {name:12s} {value:.4f}  per shift {', '.join(f'{v:.4f}' for v in per_shift)}"
                  + (f"  one-pixel / antialiased {extra['ratio']:.2f}x" if extra else ""), flush=True)
    slug = common.device_slug(device)
    common.finish(records, slug if slug != "llvmpipe-cpu" else f"llvmpipe-{args.host}", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
