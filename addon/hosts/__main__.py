"""Print a kernel as a host compiles it: its declarations, then the body both hosts share.

    python -m addon.hosts show simulate --host blender|moderngl [--variant N]
    python -m addon.hosts list
    python -m addon.hosts features sprite_blend

``blender`` prints the ``GPUShaderCreateInfo`` calls that ``hosts.blender.shader_info``
makes (recorded, so no GPU or bpy is needed); ``moderngl`` prints the
``#version 430`` header it prepends.  A file declared in several variants
(state layouts, splat paths) shows variant 0 unless ``--variant`` says which;
``features`` lists what a file can become: its declared kernels, the features
each accepts (kernels.Feature), and every variant by number.
"""

from __future__ import annotations

import argparse
import sys
from types import SimpleNamespace

from ..engine import registry
from ..engine.seam.kernels import Kernel, Raster
from .blender import shader_info
from .moderngl import declarations, stage_declarations


class _Recorder:
    """Stands in for a create-info (or stage interface): writes each call down instead."""

    def __init__(self, lines: list[str], prefix: str = "info"):
        self._lines, self._prefix = lines, prefix

    def __getattr__(self, method):
        def record(*args, **kwargs):
            shown = [repr(a) for a in args if not isinstance(a, _Recorder) and not _is_source(a)]
            shown += [f"{key}={value!r}" for key, value in kwargs.items()]
            self._lines.append(f"{self._prefix}.{method}({', '.join(shown)})")
        return record


def _is_source(value) -> bool:
    return isinstance(value, str) and "\n" in value


def blender_text(kernel: Kernel) -> str:
    lines: list[str] = []
    gpu = SimpleNamespace(types=SimpleNamespace(
        GPUShaderCreateInfo=lambda: _Recorder(lines),
        GPUStageInterfaceInfo=lambda name: _Recorder(lines, f"interface[{name!r}]"),
    ))
    shader_info(gpu, kernel)
    stages = "vertex_source = fragment_source" if isinstance(kernel, Raster) else "compute_source"
    return "\n".join(f"// {line}" for line in lines) + f"\n// {stages}:\n" + kernel.body()


def moderngl_text(kernel: Kernel) -> str:
    if isinstance(kernel, Raster):
        header = "\n".join(f"// {stage} stage:\n{stage_declarations(kernel, stage)}" for stage in ("VERTEX", "FRAGMENT"))
        return header + "// both stages then take the body:\n" + kernel.body()
    return declarations(kernel) + kernel.body()


def show(name: str, host: str, variant: int = 0) -> str:
    variants = registry.variants(name)
    if not 0 <= variant < len(variants):
        raise KeyError(f"'{name}' has variants 0-{len(variants) - 1}, not {variant}")
    text = (blender_text if host == "blender" else moderngl_text)(variants[variant])
    return f"// {name}.glsl, variant {variant} of {len(variants)}, as the {host} host compiles it\n" + text


def _feature_line(feature) -> str:
    parts = [f"{name}={value}" for name, value in feature.defines]
    for kind in ("images", "samplers", "constants", "shared"):
        names = [resource.name for resource in getattr(feature, kind)]
        parts += [f"+{kind} {', '.join(names)}"] if names else []
    parts += [f"+includes {', '.join(feature.includes)}"] if feature.includes else []
    parts += [f"+varyings {', '.join(name for _, name in feature.varyings)}"] if feature.varyings else []
    parts += [f"-{', '.join(sorted(feature.drops))}"] if feature.drops else []
    parts += [f"requires {', '.join(feature.requires)}"] if feature.requires else []
    parts += [f"one of group '{feature.group}' in the registry"] if feature.group else []
    return f"  {feature.name:12} {'; '.join(parts)}"


def features(name: str) -> str:
    """What ``shaders/<name>.glsl`` can become: its declared kernels, their features, every variant by number."""
    declared = registry.declared(name)
    accepted = {feature.name: feature for kernel in declared for feature in kernel.features}
    lines = [f"{name}.glsl: {len(registry.variants(name))} variants of {len(declared)} declared "
             f"kernel{'s' if len(declared) > 1 else ''} "
             f"(python -m addon.hosts show {name} --variant N)", "features:" if accepted else "features: none"]
    lines += [_feature_line(feature) for feature in accepted.values()]
    number = 0
    for kernel in declared:
        own = " ".join(f"{key}={value}" for key, value in kernel.defines) or "no defines"
        lines.append(f"declared: {own}; accepts {', '.join(f.name for f in kernel.features) or 'nothing'}")
        for variant in kernel.variants():
            lines.append(f"  {number:3}  {' + '.join(variant.chosen) or '-'}")
            number += 1
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m addon.hosts", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    show_parser = commands.add_parser("show", help="print a kernel as a host compiles it")
    show_parser.add_argument("name", help="shader file name without .glsl (see 'list')")
    show_parser.add_argument("--host", choices=("blender", "moderngl"), default="blender")
    show_parser.add_argument("--variant", type=int, default=0)
    commands.add_parser("list", help="every declared kernel and its number of variants")
    features_parser = commands.add_parser("features", help="what a kernel can become: its features and variants")
    features_parser.add_argument("name", help="shader file name without .glsl (see 'list')")
    args = parser.parse_args(argv)
    if args.command == "list":
        for name, variants in registry.by_file().items():
            print(f"{name:20} {len(variants)} variant{'s' if len(variants) > 1 else ''}")
        return 0
    try:
        print(features(args.name) if args.command == "features" else show(args.name, args.host, args.variant), end="")
    except KeyError as error:
        print(error.args[0], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
