"""Suite ``final-render``: what the particles add to each frame of Blender's own Render Animation.

The scene is the preset's, built as ``make bake`` builds it (bench/bake_throughput.py's ``effect_scene``),
rendered with ``bpy.ops.render.render(animation=True)`` as ``blender -b file.blend -a`` does: ``ms`` per
rendered frame with the effect composited into the render (render_pre renders the layer, the compositor lays
it over), ``peer_ms`` the plain render (effects off, no compositing), and the stages between them (see
``measure``), and each route's floor: the compositor without our layer, with one full-size Image node,
with the Render Layers of a helper scene.  A frame's time is the interval between
consecutive ``render_post`` handlers (the median over the frames after the first, which carries the shader
compiles and the preroll).

    .venv/bin/python bench/final_render.py               # workbench-1080p-1M and shadows-1080p-1M, 3 rounds of 8 frames
    .venv/bin/python bench/final_render.py --quick       # a tiny version (240x135, 20K particles, 4 frames)
    .venv/bin/python bench/final_render.py --quick --size 1920x1080   # the compositor's full-size cost, 20K
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import records  # noqa: E402

CASES = {"workbench-1080p-1M": dict(engine="BLENDER_WORKBENCH", width=1920, height=1080, count=1_000_000),
         # the same, Lit under a sun, shadowing a ground plane (Shadows on Scene, on by default for Lit effects)
         "shadows-1080p-1M": dict(engine="BLENDER_WORKBENCH", width=1920, height=1080, count=1_000_000, shadows=True)}
ALPHA_MODES = ("PREMUL", "STRAIGHT", "CHANNEL_PACKED", "NONE")  # the layer's images are PREMUL
QUICK = dict(width=240, height=135, count=20_000)


def frame_times_ms(scene) -> tuple[list[float], list[float]]:
    """ms of each frame of one Render Animation of ``scene`` (the first frame apart), and of its ``render_pre``
    handlers (where the add-on renders the particle layer)."""
    import bpy

    ends, pre_starts, pre_ms = [], [], []

    def on_post(*_):
        ends.append(time.perf_counter())

    def on_pre_start(*_):
        pre_starts.append(time.perf_counter())

    def on_pre_end(*_):
        pre_ms.append((time.perf_counter() - pre_starts[-1]) * 1e3)

    handlers = bpy.app.handlers
    handlers.render_pre.insert(0, on_pre_start)
    handlers.render_pre.append(on_pre_end)
    handlers.render_post.append(on_post)
    try:
        assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    finally:
        handlers.render_post.remove(on_post)
        handlers.render_pre.remove(on_pre_start)
        handlers.render_pre.remove(on_pre_end)
    return [(b - a) * 1e3 for a, b in zip(ends, ends[1:])], pre_ms[1:]


class StageTimes:
    """Median ms of the layer's stages (wrapped while measuring, put back after): inside ``render_pre``,
    ``draw_ms`` recording the frame's dispatches, ``read_ms`` the rest of ``ParticleLayer.render`` (the depth,
    both reads and the wait for the GPU), ``show_ms`` handing the pixels over; after the scene's render,
    ``passes_ms`` the helper scene's render (copying the layer into its passes)."""

    def __init__(self):
        from addon.output import compositor_nodes, layer_scene, render_layer
        from addon.scene.renderer import SceneRenderer

        self.times: dict[str, list[float]] = {"draw_ms": [], "render_ms": [], "show_ms": [], "passes_ms": []}
        self.wrapped = [(SceneRenderer, "draw", "draw_ms"), (render_layer.ParticleLayer, "render", "render_ms"),
                        (compositor_nodes, "show_layer", "show_ms"),
                        (layer_scene.GPU_PARTICLES_RE_layer, "render", "passes_ms")]
        self.originals = [getattr(owner, name) for owner, name, _ in self.wrapped]

    def __enter__(self):
        for (owner, name, field), original in zip(self.wrapped, self.originals):
            setattr(owner, name, self._timed(original, self.times[field]))
        return self

    def __exit__(self, *_):
        for (owner, name, _), original in zip(self.wrapped, self.originals):
            setattr(owner, name, original)

    @staticmethod
    def _timed(function, into: list):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                into.append((time.perf_counter() - started) * 1e3)

        def timed_render(engine, depsgraph):  # Blender passes a RenderEngine's method only the arguments it names
            return timed(engine, depsgraph)
        return timed_render if function.__qualname__ == "GPU_PARTICLES_RE_layer.render" else timed

    def medians(self) -> dict:
        times = {field: values[1:] for field, values in self.times.items()}  # the first carries compiles
        result = {field: round(statistics.median(values), 1) for field, values in times.items() if values}
        if "render_ms" in result:
            result["read_ms"] = round(result.pop("render_ms") - result["draw_ms"], 1)
        return result


def one_image_tree(scene, image):
    """The least any compositing of a layer costs: Render Layers, one full-size image and an Alpha Over."""
    tree = passthrough_tree(scene)
    render, output = tree.nodes["Render Layers"], tree.nodes["Group Output"]
    light = tree.nodes.new("CompositorNodeImage")
    light.image = image
    over = tree.nodes.new("CompositorNodeAlphaOver")
    tree.links.new(render.outputs["Image"], over.inputs[1])
    tree.links.new(light.outputs["Image"], over.inputs[2])
    tree.links.new(over.outputs["Image"], output.inputs[0])
    return tree


def color_over_tree(scene):
    """Render Layers under an Alpha Over of a constant color: the node's own full-size cost, no second image."""
    tree = passthrough_tree(scene)
    render, output = tree.nodes["Render Layers"], tree.nodes["Group Output"]
    over = tree.nodes.new("CompositorNodeAlphaOver")
    over.inputs["Foreground"].default_value = (0.25, 0.25, 0.25, 0.25)
    tree.links.new(render.outputs["Image"], over.inputs["Background"])
    tree.links.new(over.outputs["Image"], output.inputs[0])
    return tree


def z_combine_tree(scene, image):
    """Render Layers and one full-size image met by a Z Combine (a node with a fixed shader, no pixel node the
    compositor compiles from the tree), the image's depth a constant: that route's floor."""
    tree = passthrough_tree(scene)
    render, output = tree.nodes["Render Layers"], tree.nodes["Group Output"]
    light = tree.nodes.new("CompositorNodeImage")
    light.image = image
    combine = tree.nodes.new("CompositorNodeZcombine")
    combine.inputs["Depth B"].default_value = 5.0
    combine.inputs["Use Alpha"].default_value = True
    combine.inputs["Anti-Alias"].default_value = False
    tree.links.new(render.outputs["Image"], combine.inputs["A"])
    tree.links.new(render.outputs["Depth"], combine.inputs["Depth A"])
    tree.links.new(light.outputs["Image"], combine.inputs["B"])
    tree.links.new(combine.outputs["Result"], output.inputs[0])
    return tree


def helper_scene_tree(scene):
    """The least the helper-scene route costs: Render Layers, the Render Layers of a helper scene whose engine
    fills full-size light and depth passes every frame (``helper_handed``), and an Alpha Over."""
    from addon.output import layer_scene

    tree = passthrough_tree(scene)
    render, output = tree.nodes["Render Layers"], tree.nodes["Group Output"]
    light = tree.nodes.new("CompositorNodeRLayers")
    light.scene = layer_scene.ensure_helper(scene)
    over = tree.nodes.new("CompositorNodeAlphaOver")
    tree.links.new(render.outputs["Image"], over.inputs["Background"])
    tree.links.new(light.outputs["Image"], over.inputs["Foreground"])
    tree.links.new(over.outputs["Image"], output.inputs[0])
    return tree


def helper_handed(scene, width: int, height: int):
    """A render_pre handler handing constant full-size passes to the scene's helper each frame."""
    import numpy as np

    from addon.output import layer_scene

    helper = layer_scene.ensure_helper(scene).name
    passes = {layer_scene.LIGHT_PASS.name: np.full((height, width, 4), 0.25, np.float32),
              layer_scene.DEPTH_PASS.name: np.full((height, width), 3.0, np.float32)}

    def hand_over(rendered, *_):
        layer_scene.hand_over(helper, rendered.frame_current, passes)
    return hand_over


def refilled_each_frame(image):
    """A render_pre handler that sets ``image``'s pixels every frame (what the add-on's layer does)."""
    import numpy as np

    pixels = np.full(len(image.pixels), 0.25, np.float32)

    def refill(*_):
        image.pixels.foreach_set(pixels)
    return refill


def rewrite_ms(folder: Path, width: int, height: int) -> float:
    """Median ms to open each frame in ``folder`` again with Blender's image API, lay a constant full-size
    premultiplied layer over it in numpy and save it in place: the floor of a route around the compositor (done
    after the render: Blender 5.2 crashes loading an image in a render_write handler during Render Animation)."""
    import bpy
    import numpy as np

    layer = np.full(width * height * 4, 0.25, np.float32)
    keep = 1.0 - layer[3::4].repeat(4)
    times = []
    for path in sorted(folder.iterdir()):
        started = time.perf_counter()
        image = bpy.data.images.load(str(path), check_existing=False)
        pixels = np.empty(len(image.pixels), np.float32)
        image.pixels.foreach_get(pixels)
        image.pixels.foreach_set(layer + pixels * keep)
        image.save()
        bpy.data.images.remove(image)
        times.append((time.perf_counter() - started) * 1e3)
    return statistics.median(times)


def sun_over_ground(scene) -> float:
    """The shadows case's scene: every effect Lit (Shadows on Scene on), a sun casting particle shadows, a ground
    plane a metre under the emitter for them to fall on; returns the fraction of the layer's pixels the shadow
    darkens (its first frame, rendered here: the case measures a shadow that is there)."""
    import bpy
    import numpy as np

    from addon.output.layer_scene import SHADOW_PASS
    from addon.output.render_layer import ParticleLayer

    emitter = next(obj for obj in scene.objects if obj.gpu_particles.effects)
    for effect in emitter.gpu_particles.effects:
        effect.lighting = "LIT"
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    sun.data.energy, sun.rotation_euler = 3.0, (0.5, 0.3, 0.0)
    mesh = bpy.data.meshes.new("Ground")
    z = emitter.matrix_world.translation.z - 1.0
    mesh.from_pydata([(-40, -40, z), (40, -40, z), (40, 40, z), (-40, 40, z)], [], [(0, 1, 2, 3)])
    for obj in (sun, bpy.data.objects.new("Ground", mesh)):
        scene.collection.objects.link(obj)
    bpy.context.view_layer.update()
    layer = ParticleLayer(scene)
    try:
        darkening = layer.layer(scene.frame_start)[SHADOW_PASS.name]
    finally:
        layer.free()
    return float(np.mean(darkening > 0.01))


def passthrough_tree(scene):
    """A compositing tree of the first view layer's Render Layers straight to the output: what compositing
    costs before any node of ours."""
    import bpy

    tree = bpy.data.node_groups.new("Passthrough", "CompositorNodeTree")
    tree.interface.new_socket("Image", in_out="OUTPUT", socket_type="NodeSocketColor")
    render = tree.nodes.new("CompositorNodeRLayers")
    render.scene = scene
    tree.links.new(render.outputs["Image"], tree.nodes.new("NodeGroupOutput").inputs[0])
    return tree


def routes(scene, width: int, height: int, ours) -> dict:
    """Each configuration timed, by the name of its figure: a context manager that sets it up on ``scene`` and
    puts the scene back (the effects are off in all but ``ms``; the trees are made once)."""
    import bpy

    image = bpy.data.images.new("One image", width, height, alpha=True, float_buffer=True)
    image.colorspace_settings.name = "Non-Color"
    trees = {"passthrough": passthrough_tree(scene), "color_over": color_over_tree(scene),
             "one_image": one_image_tree(scene, image), "z_combine": z_combine_tree(scene, image),
             "helper_scene": helper_scene_tree(scene)}
    refill, hand_over = refilled_each_frame(image), helper_handed(scene, width, height)

    @contextmanager
    def configured(effects: bool = False, tree=None, handler=None, alpha_mode: str = "PREMUL",
                   compositing: bool = True):
        for obj in scene.objects:
            for effect in obj.gpu_particles.effects:
                effect.enabled = effects
        scene.compositing_node_group = tree or ours
        scene.render.use_compositing = compositing
        image.alpha_mode = alpha_mode
        if handler is not None:
            bpy.app.handlers.render_pre.append(handler)
        try:
            yield
        finally:
            if handler is not None:
                bpy.app.handlers.render_pre.remove(handler)
            scene.compositing_node_group = ours
            scene.render.use_compositing = True

    table = {"ms": lambda: configured(effects=True), "disabled": configured,
             "peer_ms": lambda: configured(compositing=False)}
    table.update({name: (lambda name=name: configured(tree=trees[name]))
                  for name in ("passthrough", "color_over", "z_combine")})
    table.update({f"one_image_{mode}": (lambda mode=mode: configured(tree=trees["one_image"], handler=refill,
                                                                       alpha_mode=mode)) for mode in ALPHA_MODES})
    table["one_static_image"] = lambda: configured(tree=trees["one_image"])
    table["helper_scene"] = lambda: configured(tree=trees["helper_scene"], handler=hand_over)
    return table


def measure(engine: str, width: int, height: int, count: int, frames: int, compositor: str | None = None,
            shadows: bool = False, rounds: int = 3) -> dict:
    """``ms`` with the effect and ``peer_ms`` without (the plain render: effects off and no compositing),
    per rendered frame, on ``compositor`` (the device; Blender 5.2's default is GPU), each configuration rendered
    ``rounds`` times in turn (one Render Animation of ``frames`` + 1 each; the median over every round's frames
    after its first), so a drift of the machine's speed reaches every figure alike;
    ``layer_ms``: the part of ``ms`` spent in ``render_pre`` (the particle layer, handed to the helper);
    ``disabled_ms``: effects off, the add-on's nodes still passing the render through; ``passthrough_ms``: effects
    off, a tree of Render Layers to the output alone; ``color_over_ms``: that tree with an Alpha Over of a constant
    color (a pixel node, no second image); ``one_image_ms``: that tree plus one full-size PREMUL image refilled
    every frame and an Alpha Over (the floor of any compositing of a layer; ``one_image_ms_by_alpha_mode`` for
    each of Blender's alpha modes, ``one_static_image_ms`` with the pixels never changed); ``z_combine_ms``: the
    static image met by a Z Combine instead (a node of a fixed shader, where Alpha Over is a pixel node the
    compositor compiles from the tree); ``helper_scene_ms``: the pass-through tree plus the Render Layers of a
    helper scene handed full-size passes every frame and an Alpha Over (the floor of the helper-scene route the
    add-on takes); ``rewritten_ms``: the plain render plus opening each written frame again, laying a full-size
    layer over it in numpy and saving it in place (rewrite_ms: the floor of a route around the compositor);
    ``draw_ms``, ``read_ms``, ``show_ms``, ``passes_ms``: the stages (StageTimes); ``shadows``: the scene of
    sun_over_ground (``shadowed_fraction``: the pixels its shadow darkens), every run of it the same (the peers
    render the ground and the sun too)."""
    import bpy
    from bake_throughput import effect_scene

    import addon

    out_dir = Path(tempfile.mkdtemp(prefix="gpu_particles_final_render_"))
    try:
        scene = effect_scene("default", count, width, height, (1, frames + 1), out_dir)
        scene.render.engine = engine
        scene.render.resolution_percentage = 100
        scene.render.filepath = str(out_dir / "render" / "f_####")
        shadowed = {"shadowed_fraction": round(sun_over_ground(scene), 4)} if shadows else {}
        if compositor is not None:  # set before any render: switching devices between renders crashes Blender 5.2
            scene.render.compositor_device = compositor
        device = scene.render.compositor_device
        frame_times_ms(scene)  # a warm-up with the effect: compiles, and the add-on's passes (Depth) switched on
        table = routes(scene, width, height, scene.compositing_node_group)
        times = {name: [] for name in table}
        layers = []
        stages = StageTimes()  # timing the layer's stages in the runs with the effect only
        for _ in range(rounds):
            for name, configured in table.items():
                with configured(), (stages if name == "ms" else nullcontext()):
                    frame_times, layer_times = frame_times_ms(scene)
                times[name] += frame_times
                if name == "ms":
                    layers += layer_times
        median = {name: round(statistics.median(values), 1) for name, values in times.items()}
        rewritten = median["peer_ms"] + rewrite_ms(out_dir / "render", width, height)
        addon.unregister()
        bpy.ops.wm.read_factory_settings(use_empty=True)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    by_mode = {mode: median.pop(f"one_image_{mode}") for mode in ALPHA_MODES}
    return {"ms": median.pop("ms"), "peer_ms": median["peer_ms"],
            "added_ms": round(statistics.median(times["ms"]) - statistics.median(times["peer_ms"]), 1),
            "layer_ms": round(statistics.median(layers), 1), **stages.medians(),
            **{f"{name}_ms": value for name, value in median.items() if name not in ("peer_ms",)},
            "one_image_ms": by_mode["PREMUL"], "one_image_ms_by_alpha_mode": by_mode,
            "rewritten_ms": round(rewritten, 1), "compositor": device, **shadowed,
            "frames": frames, "rounds": rounds, "width": width, "height": height, "count": count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="default: all")
    parser.add_argument("--frames", type=int, default=8, help="frames measured after the first, a round")
    parser.add_argument("--rounds", type=int, default=3, help="times every configuration is rendered, in turn")
    parser.add_argument("--quick", action="store_true", help=f"a tiny version: {QUICK}, 4 frames")
    parser.add_argument("--size", help="WxH instead of the case's (e.g. 1920x1080 with --quick's count)")
    parser.add_argument("--count", type=int, help="particles instead of the case's")
    parser.add_argument("--compositor", choices=("GPU", "CPU"), help="the compositor's device (default: the scene's)")
    parser.add_argument("--out", type=Path, help="results folder (default bench/results/)")
    args = parser.parse_args()
    from addon.hosts.blender import BlenderHost

    device = BlenderHost().device
    rows = []
    for case in args.case or list(CASES):
        settings = {**CASES[case], **(QUICK if args.quick else {})}
        if args.size:
            settings["width"], settings["height"] = map(int, args.size.lower().split("x"))
        if args.count:
            settings["count"] = args.count
        name = f"{case}-quick" if args.quick else case
        if args.size or args.count:
            name += f"-{settings['width']}x{settings['height']}-{settings['count']}"
        if args.compositor:
            name += f"-{args.compositor.lower()}-compositor"
        rows.append({"case": name,
                     **measure(frames=4 if args.quick else args.frames, compositor=args.compositor,
                                      rounds=1 if args.quick else args.rounds, **settings)})
        print(rows[-1], flush=True)
    records.write("final-render", device, rows, results=args.out)


if __name__ == "__main__":
    main()
