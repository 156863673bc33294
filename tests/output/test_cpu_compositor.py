"""A background Render Animation with the CPU compositor: after the first frame Blender leaves no GPU
context bound (only the GPU compositor binds one again), and the particle layer's first ``gpu`` call
segfaulted.  The helper scene's render (``layer_scene.py``) leaves Blender's context bound again (before it,
Persistent Data was turned off and on each frame to do so, losing it); every frame gets its particles, the same as
with the GPU compositor.

Each render runs in a child process, as a crash would take the test run with it.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from addon.output.render_integration import GPU_COMPOSITOR

ROOT = Path(__file__).resolve().parents[2]
W, H = 48, 27

CHILD = """
import json, sys
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/bench"]
import bpy
import numpy as np
from bake_throughput import effect_scene
from addon.output import render_integration

out, engine, device, use_render = Path(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5] == "1"
if sys.argv[8] == "no-context":  # as if Blender left no context that could be bound again
    render_integration.gpu_context_bound = lambda: False
scene = effect_scene("default", 2000, int(sys.argv[6]), int(sys.argv[7]), (1, 2), out)
scene.render.engine = engine
scene.render.compositor_device = device
scene.gpu_particles_output.use_render = use_render
result = bpy.ops.render.render(animation=True)
frame = bpy.data.images.load(str(out / "frame_0002.png"))
pixels = np.array(frame.pixels[:], np.float32)
print("RESULT", json.dumps({"result": sorted(result), "errors": render_integration.last_errors.get(scene.name, []),
                            "pixels": pixels.tolist()}))
"""


def render_frame_2(tmp_path, engine, device, use_render=True, context="real"):
    """Frame 2 of a two-frame animation rendered in a child process: its report and its pixels."""
    out = tmp_path / f"{engine}_{device}_{int(use_render)}_{context}"
    child = subprocess.run([sys.executable, "-X", "faulthandler", "-c", CHILD, str(ROOT), str(out), engine, device,
                            str(int(use_render)), str(W), str(H), context],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, f"rc {child.returncode}\n{child.stdout[-3000:]}\n{child.stderr[-3000:]}"
    line = next(line for line in child.stdout.splitlines() if line.startswith("RESULT "))
    report = json.loads(line.removeprefix("RESULT "))
    return report, np.array(report.pop("pixels"), np.float32)


@pytest.mark.slow
def test_cpu_compositor_animation_renders_particles_in_every_frame(tmp_path):
    report, cpu = render_frame_2(tmp_path, "BLENDER_WORKBENCH", "CPU")
    assert report == {"result": ["FINISHED"], "errors": []}
    _, gpu = render_frame_2(tmp_path, "BLENDER_WORKBENCH", "GPU")
    _, plain = render_frame_2(tmp_path, "BLENDER_WORKBENCH", "CPU", use_render=False)
    assert np.abs(cpu - plain).max() > 0.1, "frame 2 has no particles"
    assert np.abs(cpu - gpu).max() <= 2 / 255, "frame 2's particles differ from the GPU compositor's"


@pytest.mark.slow
def test_frames_without_a_gpu_context_render_without_particles_and_name_the_fix(tmp_path):
    report, frame = render_frame_2(tmp_path, "BLENDER_WORKBENCH", "CPU", context="no-context")
    _, plain = render_frame_2(tmp_path, "BLENDER_WORKBENCH", "CPU", use_render=False)
    assert report["result"] == ["FINISHED"]
    assert len(report["errors"]) == 2, report["errors"]
    assert all(GPU_COMPOSITOR in error for error in report["errors"]), report["errors"]
    assert np.array_equal(frame, plain)
