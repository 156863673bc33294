"""Suite ``csg``: adding one primitive to a large CSG point cloud (the seed's case).

    python3 bench/csg_bench.py [--primitives 256] [--persisted 10000000] [--new 150000]

The stack holds ``primitives - 1`` spheres whose ``persisted`` kept samples are
already on the GPU; the timed step adds the last sphere: generate its ``new``
samples, test the kept ones against it (mode A) and the new ones against every
earlier primitive (B.1), scan, compact.  ``samples_per_s`` counts every sample
the step tests (kept + new) per second of GPU time (GL timer queries).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from addon.engine.reference.seam.random import random_direction  # noqa: E402
from addon.engine.simulate import csg  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402
from bench import records  # noqa: E402


def persisted_cloud(host, stack, persisted, new, rng):
    """A cloud already holding ``persisted`` samples on the stack's spheres (as if built)."""
    cloud = csg.PointCloud(host, persisted + new, new)
    owner = rng.integers(0, len(stack), persisted)
    centers = np.array([p.center for p in stack], np.float32)[owner]
    radii = np.array([p.size[0] for p in stack], np.float32)[owner]
    normal = random_direction(rng.random(persisted, dtype=np.float32), rng.random(persisted, dtype=np.float32))
    padded = cloud.width * cloud.rows
    pos = np.zeros((padded, 4), np.float32)
    attr = np.zeros((padded, 4), np.float32)
    pos[:persisted] = np.concatenate([centers + normal * radii[:, None], owner[:, None]], axis=1)
    attr[:persisted, :3] = normal
    for name, data in (("pos", pos), ("attr", attr)):
        cloud.buffers[0][name].native.write(data.tobytes())
    cloud.sample_count.native.write(np.array([persisted], np.uint32).tobytes())
    cloud.upload(stack)
    cloud.primitives, cloud.bound = stack[:-1], persisted
    return cloud


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--primitives", type=int, default=256)
    parser.add_argument("--persisted", type=int, default=10_000_000)
    parser.add_argument("--new", type=int, default=150_000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    host = ModernGLHost()
    rng = np.random.default_rng(3)
    stack = [csg.sphere(rng.uniform(-10, 10, 3), rng.uniform(0.5, 2.0)) for _ in range(args.primitives)]
    cloud = persisted_cloud(host, stack, args.persisted, args.new, rng)
    start_buffers = list(cloud.buffers)

    def restore():
        cloud.buffers[:] = start_buffers
        cloud.bound = args.persisted
        cloud.sample_count.native.write(np.array([args.persisted], np.uint32).tobytes())

    ms = records.gl_ms(host.ctx, lambda: cloud.add(args.primitives - 1, args.primitives), args.repeats, restore)
    kept = cloud.read_count()
    tested = args.persisted + args.new
    records.write("csg", host.device, [{
        "case": f"{args.primitives} primitives, {args.persisted:,} kept + {args.new:,} new",
        "n": tested, "ms": ms, "samples_per_s": tested / (ms / 1e3), "kept_after": kept,
    }])


if __name__ == "__main__":
    main()
