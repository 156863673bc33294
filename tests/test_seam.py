"""The seam between Python and GLSL: named constants, shared tables, one registry of kernels.

Pure Python (no GPU): the compile tests of every registered kernel are
test_compositor.test_every_kernel_and_raster_compiles (Blender) and
test_simulation.test_moderngl_host_runs_the_same_kernels (moderngl).
"""

import re

import numpy as np
import pytest

from addon.engine import registry, simulation, tables
from addon.engine.kernels import Constant, Kernel
from addon.engine.resources import resource_dir
from addon.engine.settings import effect_settings

SHADERS = resource_dir("shaders")


def glsl_files():
    return sorted(SHADERS.glob("*.glsl")) + sorted((SHADERS / "include").glob("*.glsl"))


def code_of(text: str) -> str:
    """GLSL without its comments (names in prose are fine)."""
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", " ", text, flags=re.S))


def call_arguments(code: str, function: str):
    """The top-level argument lists of every call of ``function`` in ``code``."""
    for match in re.finditer(rf"\b{function}\s*\(", code):
        depth, start, args = 1, match.end(), []
        i = start
        while depth:
            c = code[i]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif c == "," and depth == 1:
                args.append(code[start:i].strip())
                start = i + 1
            i += 1
        args.append(code[start:i - 1].strip())
        yield args


def declared_constants() -> dict[str, Constant]:
    return {c.name: c for kernel in registry.KERNELS for c in kernel.constants}


TABLE_NAMES = {name for name, _ in tables.TABLE_DEFINES}
LITERAL = re.compile(r"(?<![\w.])\d+u?(?![\w.])")


def seam_problems(code: str, constants: dict[str, Constant]) -> list[str]:
    """What a GLSL text does that the seam forbids (empty: nothing)."""
    problems = []
    swizzles: dict[str, set[str]] = {}
    for name, constant in constants.items():
        if constant.type.startswith(("VEC", "IVEC")) and not constant.size:
            used = set(re.findall(rf"\b{name}\.([xyzwrgba]+)\b", code))
            if constant.components and used:
                problems.append(f"{name}.{sorted(used)[0]}: use its named components "
                                f"({', '.join(n for n, _ in constant.components)})")
            swizzles[name] = used
    problems += [f"{name} is read as {sorted(used)}: it packs several values, name them (Constant.components)"
                 for name, used in swizzles.items() if len(used) > 1]
    for name in TABLE_NAMES:
        if re.search(rf"(\bconst\s+\w+\s+{name}\b|#define\s+{name}\b)", code):
            problems.append(f"{name} is defined in GLSL: it comes from tables.py")
    for function, position in (("random_unit", 2), ("variation", 2)):
        for args in call_arguments(code, function):
            if len(args) > position and LITERAL.search(args[position]):
                problems.append(f"{function}(..., {args[position]}): name the stream (tables.RANDOM_STREAMS)")
    for match in re.finditer(r"\bcolliders\s*\[([^\]]*)\]", code):
        if any(int(n.rstrip("u")) >= 3 for n in LITERAL.findall(match.group(1))):
            problems.append(f"colliders[{match.group(1)}]: name the row (tables.COLLIDER_ROW)")
    for args in call_arguments(code, "triangle_texel"):
        if LITERAL.search(args[-1]):
            problems.append(f"triangle_texel(..., {args[-1]}): name the texel (tables.TRIANGLE_TEXEL)")
    for match in re.finditer(r"imageLoad\s*\(\s*fields\s*,\s*ivec2\s*\(\s*(\d+)", code):
        problems.append(f"fields texel {match.group(1)}: name it (tables.FIELD_TEXEL)")
    problems += [f"case {m}: switch over table names" for m in re.findall(r"\bcase\s+(\d+)", code)]
    problems += [f"{m}: compare a table value with switch and its names" for m in
                 re.findall(r"\b(?:emitter_shape|head\.x|key_mode)\s*[=!]=\s*[\w.]+", code)]
    problems += [f"{m}: seeds own STREAM_PER_SEED (or CSG_STREAM_PER_SEED) streams" for m in
                 re.findall(r"\buint\(\w*seed\)\s*\*\s*\d+u?", code)]
    problems += [f"{m}: TRIANGLE_ROW" for m in re.findall(r"(?<![\w.])4096(?![\w.])", code)]
    return problems


@pytest.mark.parametrize("path", glsl_files(), ids=lambda p: p.relative_to(SHADERS).as_posix())
def test_glsl_uses_named_components_and_tables(path):
    assert seam_problems(code_of(path.read_text()), declared_constants()) == []


@pytest.mark.parametrize("snippet, complaint", [
    ("float w = lifetime_range.w;", "named components"),
    ("vec3 p = state_origin.xyz + state_origin.w;", "packs several values"),
    ("const float SHAPE_BOX = 2.0;", "tables.py"),
    ("float u = random_unit(i, step, stream + 2u);", "name the stream"),
    ("float v = variation(index, size_random, 12u);", "name the stream"),
    ("vec4 row = colliders[r + 6];", "name the row"),
    ("vec4 t = triangle_texel(t, 3);", "name the texel"),
    ("vec4 head = imageLoad(fields, ivec2(0, f));", "FIELD_TEXEL"),
    ("switch (k) { case 2: break; }", "switch over table names"),
    ("if (head.x == 1.0) {}", "compare a table value"),
    ("uint stream = uint(seed) * 16u;", "STREAM_PER_SEED"),
    ("int row = linear / 4096;", "TRIANGLE_ROW"),
])
def test_the_seam_check_catches_magic_numbers_and_components(snippet, complaint):
    problems = seam_problems(snippet, declared_constants())
    assert any(complaint in p for p in problems), problems


def test_every_kernel_file_is_declared_and_includes_live_in_include():
    kernel_files = {p.stem for p in SHADERS.glob("*.glsl") if re.search(r"\bvoid\s+main\s*\(", p.read_text())}
    assert kernel_files == set(registry.by_file()), "every shaders/*.glsl with a main() is in registry.KERNELS"
    assert {p.stem for p in SHADERS.glob("*.glsl")} == kernel_files, "shaders/ holds kernels only"
    for path in (SHADERS / "include").glob("*.glsl"):
        assert not re.search(r"\bvoid\s+main\s*\(", path.read_text()), f"{path.name} is an include: no main()"
    for kernel in registry.KERNELS:
        assert all((SHADERS / "include" / f).is_file() for f in kernel.includes), kernel.name


def test_unknown_kernel_is_a_clear_error():
    with pytest.raises(KeyError, match="no kernel 'nope'"):
        registry.variants("nope")


@pytest.mark.parametrize("host", ["blender", "moderngl"])
def test_show_prints_declarations_then_the_body(host, capsys):
    from addon.hosts.__main__ import main

    assert main(["show", "simulate", "--host", host]) == 0
    text = capsys.readouterr().out
    kernel = registry.variants("simulate")[0]
    assert text.endswith(kernel.body())
    define = "info.define('turbulence_strength', 'turbulence.x')" if host == "blender" else \
        "#define turbulence_strength turbulence.x"
    assert define in text
    assert main(["show", "simulate", "--host", host, "--variant", "9"]) == 2


def test_components_define_each_name_as_its_swizzle():
    defines = dict(simulation.SIMULATE.all_defines())
    assert defines["turbulence_strength"] == "turbulence.x"
    assert defines["slot_period"] == "emit_direction.z"
    assert defines["burst_interval"] == "lifetime_range.w"
    assert defines["gravity"] == "gravity_drag.xyz"
    assert defines["SHAPE_MESH"] == "3" and defines["STREAM_SIZE"] == "12u"
    assert set(dict(tables.TABLE_DEFINES)) <= set(defines)


def test_pack_and_named_round_trip():
    kernel = Kernel("k", constants=(
        Constant("INT", "count"),
        Constant("VEC4", "motion", components=(("direction", "xyz"), ("speed", "w"))),
        Constant("IVEC2", "size", components=(("width", "x"), ("height", "y"))),
    ))
    packed = kernel.pack({"count": 3, "direction": (1, 2, 3), "speed": 0.5, "width": 7.0, "height": 9})
    assert packed == {"count": 3, "motion": (1.0, 2.0, 3.0, 0.5), "size": (7, 9)}
    named = kernel.named(packed)
    assert named["direction"] == (1.0, 2.0, 3.0) and named["speed"] == 0.5 and named["height"] == 9
    with pytest.raises(ValueError, match="speed"):
        kernel.pack({"count": 3, "direction": (1, 2, 3), "width": 7, "height": 9})
    with pytest.raises(ValueError, match="takes 3 values"):
        kernel.pack({"count": 3, "direction": (1, 2), "speed": 0.5, "width": 7, "height": 9})


def test_simulate_constants_pack_by_name():
    s = effect_settings({"emission": "BURST", "burst_interval": 1.5, "emitter_shape": "BOX", "drag": 0.25,
                         "turbulence_strength": 2.0})
    c = simulation.simulate_constants(s, dt=0.1, step_index=0, time=0.1, emitter_prev=np.identity(4),
                                      emitter_cur=np.identity(4), origin_in=np.zeros(3), origin_out=np.zeros(3))
    assert c["lifetime_range"][3] == 1.5 and c["gravity_drag"][3] == 0.25 and c["turbulence"][0] == 2.0
    assert c["emit_shape"][0] == tables.EMITTER_SHAPES["BOX"]
    named = simulation.SIMULATE.named(c)
    assert named["burst_interval"] == 1.5 and named["drag"] == 0.25 and named["emitter_shape"] == 2


def test_tables_are_integers_with_unique_names():
    assert all(isinstance(value, int) for table in tables.TABLES for _, value in table.values)
    names = [name for name, _ in tables.TABLE_DEFINES]
    assert len(names) == len(set(names))
    assert tables.RANDOM_STREAMS["SIZE"] == 12 and tables.EMITTER_SHAPES.key_of(3) == "MESH"


def test_rng_is_seeded_by_a_stable_hash_of_the_test_name(rng, request):
    from conftest import rng_seed

    seed = rng_seed(request.node.name)
    assert seed == 3287660467  # the same in every process (str hash() is not)
    assert rng.integers(2**32) == np.random.default_rng(seed).integers(2**32)
    assert ("rng_seed", seed) in request.node.user_properties


def test_nothing_below_the_ui_imports_the_ui():
    """addon/ui/ sits on top: the scene, output, engine and host packages never import it."""
    import ast

    addon = SHADERS.parent / "addon"
    below = [p for p in addon.rglob("*.py") if "ui" not in p.relative_to(addon).parts[:1]
             and p.name not in ("__init__.py", "cli.py")]
    for path in below:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "ui" not in (node.module or "").split("."), f"{path.relative_to(addon)} imports the UI"


def test_panels_name_operators_by_their_bl_idname():
    addon = SHADERS.parent / "addon"
    for name in ("ui/panels.py", "ui/csg_panel.py", "ui/cache_panel.py"):
        assert not re.search(r"operator\w*\(\s*\"gpu_particles\.", (addon / name).read_text()), name
