"""Can Blender's GPUShaderCreateInfo compile subgroup operations on this machine?

    .venv/bin/python bench/subgroup_probe.py

Blender 5.2's create-info has no way to enable a GLSL extension: its GL
backend writes its own ``#extension`` lines (draw parameters, stencil
export, ...; none for subgroups) before the declarations, and our source
comes after them, where GLSL forbids the directive (Mesa: "#extension
directive is not allowed in the middle of a shader").  Some drivers accept a
late directive anyway; this tries the seed's wave match (subgroupPartitionNV)
every way the create-info allows and prints what compiled.  Where none does,
the binning's wave-match path stays a moderngl benchmark.
"""

from __future__ import annotations

import bpy  # noqa: F401  (provides gpu)
import gpu

BODY = """
void main()
{
  uvec4 peers = subgroupPartitionNV(gl_LocalInvocationID.x & 3u);
  imageStore(out_image, ivec2(gl_LocalInvocationID.x, 0), uvec4(subgroupBallotBitCount(peers)));
}
"""
EXTENSIONS = "".join(f"#extension {name} : enable\n" for name in (
    "GL_KHR_shader_subgroup_basic", "GL_KHR_shader_subgroup_ballot", "GL_NV_shader_subgroup_partitioned"))


def compiles(typedef: str, compute: str) -> bool:
    info = gpu.types.GPUShaderCreateInfo()
    info.local_group_size(64, 1, 1)
    info.image(0, "R32UI", "UINT_2D", "out_image", qualifiers={"WRITE"})
    if typedef:
        info.typedef_source(typedef)
    info.compute_source(compute)
    try:
        gpu.shader.create_from_info(info)
        return True
    except Exception:
        return False


def main() -> None:
    gpu.init()
    print(gpu.platform.renderer_get(), gpu.platform.version_get())
    for where, typedef, compute in (("no directive", "", BODY), ("directive in compute_source", "", EXTENSIONS + BODY),
                                    ("directive in typedef_source", EXTENSIONS, BODY)):
        print(f"subgroup match, {where}: {'compiles' if compiles(typedef, compute) else 'fails'}")


if __name__ == "__main__":
    main()
