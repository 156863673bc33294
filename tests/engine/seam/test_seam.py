"""The seam between Python and GLSL: named constants, shared tables, one registry of kernels.

Pure Python (no GPU): the compile tests of every registered kernel are
test_compositor.test_every_kernel_and_raster_compiles (Blender) and
test_simulation.test_moderngl_host_runs_the_same_kernels (moderngl).
"""

import re

import numpy as np
import pytest

from addon.engine import registry
from addon.engine.seam import records, state, tables
from addon.engine.seam.kernels import Constant, Image, Kernel
from addon.engine.seam.resources import resource_dir
from addon.engine.settings.settings import effect_settings
from addon.engine.simulate import simulation

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


TABLE_NAMES = {name for name, _ in (*tables.TABLE_DEFINES, *records.RECORD_DEFINES)}
LITERAL = re.compile(r"(?<![\w.])\d+u?(?![\w.])")
# Table values from DISTINCT up are told apart from counts, flags and bit shifts: a named number with one of
# these values copies the table (GLSL const or #define, a reference module's constant); from SPELLED up, any
# literal with one does.
DISTINCT, SPELLED = 16, 4096
TABLE_VALUES = {value for table in tables.TABLES for _, value in table.values if value >= DISTINCT}
NUMBER = r"(0x[0-9A-Fa-f]+|\d+(?:\.\d*)?(?:e\d+)?)[uUfF]?"


def _value(number: str) -> float:
    return int(number, 16) if number.lower().startswith("0x") else float(number)


def _tables_of(value: float) -> str:
    return " or ".join(f"tables.{name}" for name in dir(tables) if isinstance(getattr(tables, name), tables.Table)
                       and value in {v for _, v in getattr(tables, name).values})


def copied_numbers(code: str) -> list[str]:
    """GLSL that writes out a number a table names (``const int SPRITE_TILE = 16;``, ``hi & 0x1FFFFFu``)."""
    named = re.findall(rf"(?:\bconst\s+\w+\s+(\w+)\s*=|#define\s+(\w+))\s*\(?\s*{NUMBER}\s*\)?\s*[;\n]", code + "\n")
    problems = [f"{a or b} = {number}: duplicates {_tables_of(_value(number))}" for a, b, number in named
                if _value(number) in TABLE_VALUES]
    problems += [f"{m.group(1)}: duplicates {_tables_of(_value(m.group(1)))}"
                 for m in re.finditer(rf"(?<![\w.]){NUMBER}(?![\w.])", code)
                 if _value(m.group(1)) >= SPELLED and _value(m.group(1)) in TABLE_VALUES
                 and _value(m.group(1)).is_integer() and "." not in m.group(1)]
    return problems


def record_reads(code: str) -> list[str]:
    """A record's texels read or written by position instead of through its generated load_/store_ (records.py):
    read, where the record has a load."""
    problems = []
    for record in records.RECORDS:
        for r in set(record.places):
            if (record.fetch and
                    re.search(rf"\b(?:imageLoad|texelFetch)\s*\(\s*{r}\b|(?<![\w.]){r}\s*\[", code)):
                problems.append(f"{r} read by position: load_{record.name}() names its lanes (records.{record.type})")
            if re.search(rf"\bimageStore\s*\(\s*{r}\b", code):
                problems.append(f"{r} written by position: store_{record.name}() (records.{record.type})")
    return problems


# The particle state (records.PARTICLE) under any binding name (child_pos_age, copy_vel_life, ...): a texel
# loaded or stored, or a vec4 named after the images read by swizzle.
STATE_BY_POSITION = re.compile(r"\b(?:imageLoad|imageStore|texelFetch)\s*\(\s*\w*(?:pos_age|vel_life)\b"
                               r"|\b\w*(?:pos_age|vel_life)\w*\.[xyzw]+\b")
# Every line of a shader that still reads or writes the state by position (at most 10), and why.
STATE_READS_ALLOWED = {
    ("copy_state.glsl", "imageStore(copy_pos_age, texel, imageLoad(pos_age, texel));"):
        "a checkpoint copies the texels whole, lanes unread",
    ("copy_state.glsl", "imageStore(copy_vel_life, texel, imageLoad(vel_life, texel));"):
        "a checkpoint copies the texels whole, lanes unread",
    ("sort_gather.glsl", "imageStore(sorted_pos_age, texel, imageLoad(pos_age, source));"):
        "the sort moves the texels whole into the sorted copy, lanes unread",
    ("sort_gather.glsl", "imageStore(sorted_vel_life, texel, imageLoad(vel_life, source));"):
        "the sort moves the texels whole into the sorted copy, lanes unread",
    ("csg_points.glsl", "imageStore(vel_life, texel, vec4(0.0));"):
        "a slot past the samples is marked never born by its life alone; its position stays unwritten",
    ("spawn_events.glsl", "if (imageLoad(child_vel_life, child).w >= 0.0) {"):
        "the child's state is bound beside the parent's events as child_pos_age, child_vel_life",
    ("spawn_events.glsl", "imageStore(child_pos_age, child, vec4(clamp(position - child_origin, -STATE_LIMIT, "
                          "STATE_LIMIT), over - dt));"):
        "the child's state is bound beside the parent's events as child_pos_age, child_vel_life",
    ("spawn_events.glsl", "imageStore(child_vel_life, child, vec4(clamp(velocity, -STATE_LIMIT, STATE_LIMIT), "
                          "0.0));"):
        "the child's state is bound beside the parent's events as child_pos_age, child_vel_life",
}


def state_by_position(name: str, code: str) -> list[str]:
    """The lines of shader ``name`` that read or write the particle state by position, less the allowed."""
    lines = [line.strip() for line in code.splitlines() if STATE_BY_POSITION.search(line)]
    return [line for line in lines if (name, line) not in STATE_READS_ALLOWED]


# A test's particle state read by channel: an array named after a state image (pos_age, ref_vel_life, ...) or a
# read_state() result, subscripted down to a channel ([:, 3], [alive, :3], [0, 2]): records.PARTICLE names them
# (read_images; read_image for one image).
_CHANNEL = r"\[[^\]\n]*,\s*-?:?\d+(?::\d*)?\s*\]"
TEST_STATE_BY_POSITION = re.compile(rf"\b\w*(?:pos_age|vel_life)\w*(?:\[[^\]\n]*\])*{_CHANNEL}"
                                    rf"|\bread_state\(\)(?:\[[^\]\n]*\])*{_CHANNEL}"
                                    rf"|(?:pos_age|vel_life)\b[^\n]*?\.reshape\(-1, 4\)(?:\[[^\]\n]*\])*{_CHANNEL}")
# Every line of a test that still reads the state by channel, and why.
TEST_STATE_READS_ALLOWED = {
    ("test_seam.py", "assert pos_age[0, 3] == 9"): "checks that the record's lanes are views of the state's channels",
}


def python_code(source: str) -> list[str]:
    """The lines of Python ``source`` with its strings and comments blanked (snippets and prose are fine)."""
    import io
    import tokenize

    lines = [list(line) for line in source.splitlines()]
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.STRING, tokenize.COMMENT):
            (row, start), (end_row, end) = token.start, token.end
            for r in range(row, end_row + 1):
                line = lines[r - 1]
                line[start if r == row else 0:end if r == end_row else len(line)] = " " * (
                    (end if r == end_row else len(line)) - (start if r == row else 0))
    return ["".join(line) for line in lines]


def state_channel_reads(name: str, source: str) -> list[str]:
    """The lines of test module ``name`` that read the particle state by channel, less the allowed."""
    lines = [line.strip() for line in python_code(source) if TEST_STATE_BY_POSITION.search(line)]
    return [line for line in lines if (name, line) not in TEST_STATE_READS_ALLOWED]


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
    problems += [f"case {m}: switch over table names" for m in re.findall(r"\bcase\s+(\d+)", code)]
    problems += [f"{m}: compare a table value with switch and its names" for m in
                 re.findall(r"\b(?:emitter_shape|\w+\.kind|key_mode)\s*[=!]=\s*[\w.]+", code)]
    problems += [f"{m}: seeds own STREAM_PER_SEED (or CSG_STREAM_PER_SEED) streams" for m in
                 re.findall(r"\buint\(\w*seed\)\s*\*\s*\d+u?", code)]
    return problems + record_reads(code) + copied_numbers(code)


def reference_copies(source: str) -> list[str]:
    """A numpy reference module's constants that copy a table's number (``GRID_CELLS = 256``, ``F(16)``)."""
    import ast

    problems = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = node.value.args[0] if isinstance(node.value, ast.Call) and len(node.value.args) == 1 \
                else node.value
            if isinstance(value, ast.Constant) and type(value.value) in (int, float) and value.value in TABLE_VALUES:
                problems.append(f"{ast.unparse(node)}: duplicates {_tables_of(value.value)}")
    problems += [f"{node.value}: duplicates {_tables_of(node.value)}" for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= SPELLED
                 and node.value in TABLE_VALUES]
    return problems


REFERENCE = SHADERS.parent / "addon" / "engine" / "reference"


@pytest.mark.parametrize("path", sorted(REFERENCE.rglob("*.py")), ids=lambda p: p.relative_to(REFERENCE).as_posix())
def test_the_reference_names_table_numbers(path):
    assert reference_copies(path.read_text()) == []


@pytest.mark.parametrize("source", [
    "GRID_CELLS = 256  # cells per axis",
    "TILE = F(16)",
    "rows = np.zeros((n, 4096, 4))",
])
def test_the_reference_check_catches_copied_numbers(source):
    assert any("tables.SIZES" in p for p in reference_copies(source)), reference_copies(source)


@pytest.mark.parametrize("path", glsl_files(), ids=lambda p: p.relative_to(SHADERS).as_posix())
def test_glsl_uses_named_components_and_tables(path):
    code = code_of(path.read_text())
    allowed = {line for name, line in STATE_READS_ALLOWED if name == path.name}
    named = "\n".join(line for line in code.splitlines() if line.strip() not in allowed)
    assert seam_problems(named, declared_constants()) == []


@pytest.mark.parametrize("path", glsl_files(), ids=lambda p: p.relative_to(SHADERS).as_posix())
def test_shaders_read_the_particle_state_through_its_record(path):
    assert state_by_position(path.name, code_of(path.read_text())) == []


def test_at_most_ten_positional_state_reads_are_left_and_each_is_still_there():
    assert len(STATE_READS_ALLOWED) <= 10
    for name, line in STATE_READS_ALLOWED:
        assert line in [s.strip() for s in code_of((SHADERS / name).read_text()).splitlines()], (name, line)


@pytest.mark.parametrize("snippet", [
    "float age = imageLoad(pos_age, texel).w;",
    "vec4 p = texelFetch(vel_life, texel, 0);",
    "imageStore(child_pos_age, child, vec4(position, age));",
    "float t = pos_age_in.w / vel_life_in.w;",
])
def test_the_state_check_catches_positional_reads(snippet):
    assert state_by_position("simulate.glsl", snippet) == [snippet]


@pytest.mark.parametrize("snippet, complaint", [
    ("float w = lifetime_range.w;", "named components"),
    ("vec3 p = state_origin.xyz + state_origin.w;", "packs several values"),
    ("const float SHAPE_BOX = 2.0;", "tables.py"),
    ("float u = random_unit(i, step, stream + 2u);", "name the stream"),
    ("float v = variation(index, size_random, 12u);", "name the stream"),
    ("switch (k) { case 2: break; }", "switch over table names"),
    ("if (field.kind == 1.0) {}", "compare a table value"),
    ("uint stream = uint(seed) * 16u;", "STREAM_PER_SEED"),
    # record texels by position (the head.y / place.w, center_code.w, shape.z, collider rows)
    ("vec4 head = imageLoad(fields, ivec2(0, f)); float s = head.y;", "load_force_field"),
    ("vec4 row = colliders[c * COLLIDER_ROWS + 6];", "load_collider"),
    ("float area = imageLoad(triangles, ivec2(t, 0)).w;", "load_triangle"),
    ("vec4 center_code = imageLoad(primitives, ivec2(k, 0)); bool cut = center_code.w >= 2.0;", "load_csg_primitive"),
    ("float radius = imageLoad(sprite_shapes, texel).z;", "load_sprite_shape"),
    ("imageStore(sprite_shapes, texel, vec4(center, radius, depth));", "store_sprite_shape"),
    ("float life = imageLoad(vel_life, texel).w;", "load_particle"),
    ("vec4 p = texelFetch(pos_age, texel, 0);", "load_particle"),
    ("imageStore(pos_age, texel, vec4(position, age));", "store_particle"),
    ("vec2 streak = imageLoad(sprite_streaks, texel).xy;", "load_footprint"),
    ("imageStore(sprite_colors, texel, vec4(color, 0.0));", "store_footprint"),
    ("share_frames(t, imageLoad(sprite_frames, texel));", "load_sprite_entry"),
    ("vec2 lights = texelFetch(sprite_lights, texel, 0).xy;", "load_sprite_entry"),
    # numbers copied from a table
    ("const int SPRITE_TILE = 16;", "tables.py"),
    ("const int STAT_PEAK = 1;", "tables.py"),
    ("const int TILE_PIXELS = 16;", "tables.SIZES"),
    ("const float CELLS = 256.0;", "duplicates tables.SIZES"),
    ("#define CELLS 256", "duplicates tables.SIZES"),
    ("const uint R_MAX = 0x1FFFFFu;", "duplicates tables.CHANNEL_MAX"),
    ("uint r = hi & 0x3FFFFFu;", "duplicates tables.CHANNEL_MAX"),
    ("int row = linear / 4096;", "duplicates tables.SIZES"),
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
    assert main(["show", "simulate", "--host", host, "--variant", str(len(registry.variants("simulate")))]) == 2


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
    from tests.conftest import rng_seed

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


def test_records_pack_and_read_lanes_by_name():
    field = {"kind": 2, "strength": 1.5, "falloff_power": 0.0, "max_distance": 4.0, "position": (1, 2, 3),
             "size": 0.5, "axis": (0, 0, 1)}
    texels = records.FORCE_FIELD.pack(field)
    assert texels.shape == (records.FORCE_FIELD.texels, 4) and texels[0, 1] == 1.5 and texels[1, 3] == 0.5
    named = records.FORCE_FIELD.read(records.FORCE_FIELD.pack_rows([field, field]))
    assert named["position"].shape == (2, 3) and (named["size"] == 0.5).all()
    shapes = records.SPRITE_SHAPE.pack({"center": np.ones((5, 2)), "radius": np.arange(5), "depth": np.zeros(5)})
    assert shapes.shape == (5, 4) and shapes[3, 2] == 3  # one texel: no texel axis
    assert (records.SPRITE_SHAPE.read(shapes)["radius"] == np.arange(5)).all()
    collider = records.COLLIDER.read(np.arange(records.COLLIDER.texels * 4.0).reshape(-1, 4))
    assert collider["to_local"].shape == (3, 4) and collider["start_z"][0] == 20
    with pytest.raises(ValueError, match="size"):
        records.FORCE_FIELD.pack({k: v for k, v in field.items() if k != "size"})
    with pytest.raises(ValueError, match="overlap"):
        records.Record("Bad", "bad", 1, (records.Lane("a", 0, "xy"), records.Lane("b", 0, "y")))


def test_record_glsl_follows_what_a_kernel_binds():
    """A kernel gets a record's struct where it binds its resource: a load where it reads, a store where it
    writes; the same body for both hosts (the body is host-independent)."""
    from addon.engine.draw import sprites

    writes, reads = sprites.SPRITE_FOOTPRINT.body(), sprites.SPRITE_TILE_COUNTS.body()
    assert "struct SpriteShape" in writes and "void store_sprite_shape(" in writes and "load_sprite_shape(" not in writes
    assert "SpriteShape load_sprite_shape(" in reads and "store_sprite_shape(" not in reads
    simulate = simulation.SIMULATE.body()
    assert all(f"load_{r.name}(int index)" in simulate for r in (records.FORCE_FIELD, records.COLLIDER,
                                                                    records.TRIANGLE))
    assert "CsgPrimitive" not in simulate
    assert dict(simulation.SIMULATE.all_defines())["STAT_PEAK"] == "1"


def test_both_sprite_list_writers_store_one_entry_into_only_the_images_their_variant_binds():
    from addon.engine.draw import ribbons, sprites
    from addon.engine.look import sprite_sheets

    def stored(kernel):
        return set(re.findall(r"imageStore\((\w+), index", kernel.body().split("void store_sprite_entry(")[1]))

    entry = set(records.SPRITE_ENTRY.images)
    assert stored(sprites.SPRITE_FOOTPRINT) == entry - {sprite_sheets.SPRITE_FRAMES, sprite_sheets.SPRITE_LIGHTS}
    assert stored(sprites.SPRITE_FOOTPRINT.with_features("posed")) == entry - {sprite_sheets.SPRITE_LIGHTS}
    assert stored(sprites.SPRITE_FOOTPRINT.with_features("posed", "relief")) == entry
    assert stored(ribbons.TRAIL_SPRITES) == stored(sprites.SPRITE_FOOTPRINT)
    assert stored(ribbons.TRAIL_SPRITES.with_features("posed")) == entry - {sprite_sheets.SPRITE_LIGHTS}
    assert "uvec4(r.key, 0u, 0u, 0u)" in sprites.SPRITE_FOOTPRINT.body()
    assert record_reads("imageStore(sprite_keys, texel, uvec4(key));") != []


def test_a_sprite_entry_packs_into_its_images_and_reads_back_by_name():
    entry = {"center": np.ones((3, 2)), "radius": np.arange(3), "depth": np.zeros(3), "streak": np.zeros((3, 2)),
             "end_depths": np.zeros((3, 2)), "color": np.full((3, 4), 0.5), "key": np.array([1, 2, 3]), "sheet": np.zeros(3),
             "turn": np.zeros((3, 2)), "flipbook": np.zeros(3), "lights": np.ones((3, 2))}
    images = records.SPRITE_ENTRY.pack_images(entry)
    assert len(images) == len(records.SPRITE_ENTRY.images) and images[3][:, 0].tolist() == [1, 2, 3]
    named = records.SPRITE_ENTRY.read_images(*images)
    assert (named["radius"] == np.arange(3)).all() and (named["lights"] == 1).all()
    assert records.SPRITE_ENTRY.read_image("sprite_keys", images[3]).keys() == {"key"}


def test_a_particle_loads_from_both_state_images_as_images_or_samplers_in_either_layout():
    from addon.engine.draw import raster

    for layout in state.LAYOUTS:
        simulate = simulation.SIMULATE_KERNELS[layout].body()
        assert "imageLoad(pos_age, index),\n    imageLoad(vel_life, index));" in simulate
        assert "imageStore(pos_age, index, vec4(r.position, r.age));" in simulate
        assert "imageStore(vel_life, index, vec4(r.velocity, r.life));" in simulate
    points = raster.POINTS.body()
    assert "texelFetch(pos_age, index, 0),\n    texelFetch(vel_life, index, 0));" in points
    assert "store_particle" not in points


def test_a_particle_reads_by_name_from_its_two_state_images():
    pos_age = np.arange(8, dtype=np.float16).reshape(2, 4)
    vel_life = -np.arange(8, dtype=np.float16).reshape(2, 4)
    particle = records.PARTICLE.read_images(pos_age, vel_life)
    assert particle["position"].shape == (2, 3) and (particle["age"] == [3, 7]).all()
    assert (particle["velocity"][1] == [-4, -5, -6]).all() and (particle["life"] == [-3, -7]).all()
    particle["age"][0] = 9  # views: writes go to the state
    assert pos_age[0, 3] == 9
    packed = records.PARTICLE.pack_images({name: lane.astype(np.float32) for name, lane in particle.items()})
    assert all(p.flags.c_contiguous for p in packed)
    np.testing.assert_array_equal(packed[0], pos_age)
    np.testing.assert_array_equal(packed[1], vel_life)


def test_a_footprint_is_the_sprite_shape_extended_and_a_sprite_entry_the_footprint_extended():
    footprint, entry = records.FOOTPRINT, records.SPRITE_ENTRY
    assert footprint.base is records.SPRITE_SHAPE and entry.base is footprint
    assert footprint.lanes == entry.lanes[:len(footprint.lanes)] and footprint.images == entry.images[:footprint.texels]
    with pytest.raises(ValueError, match="does not start with"):
        records.Record("Bad", "bad", 2, (records.Lane("streak", 1, "xy"),), images=("a", "b"), base=records.SPRITE_SHAPE)


def test_footprint_readers_load_only_the_footprint_images_they_bind():
    """sprite_instances binds sprite_shapes and sprite_streaks: its footprint's color loads as zero, and a kernel
    that binds only sprite_shapes gets the sprite shape alone."""
    from addon.engine.order import tile_lists

    instances = tile_lists.tile_instances(True).body()
    assert ("Footprint load_footprint(ivec2 index)\n{\n  return footprint_from(\n    imageLoad(sprite_shapes, index),\n"
            "    imageLoad(sprite_streaks, index),\n    vec4(0.0));") in instances
    assert "SpriteShape sprite_shape_of(Footprint r)" in instances
    assert "store_footprint" not in instances and "SpriteEntry" not in instances
    shapes_only = Kernel("k", images=(Image("sprite_shapes", "RGBA32F", "READ"),)).records
    assert "SpriteShape load_sprite_shape(" in shapes_only and "Footprint" not in shapes_only


def test_the_textured_blend_loads_the_sprite_entry_from_images_and_its_lights_through_a_sampler():
    from addon.engine.draw import sprites

    blend = sprites.sprite_blend(False)
    assert "SpriteEntry" not in blend.records and "Footprint load_footprint(" in blend.records
    for features, lights in ((("textured",), "vec4(0.0)"), (("textured", "relief"), "texelFetch(sprite_lights, index, 0)")):
        body = blend.with_features(*features).body()
        loaded = body.split("SpriteEntry load_sprite_entry(ivec2 index)")[1].split("}")[0]
        assert loaded.split("(\n    ")[1].split(",\n    ") == [
            "imageLoad(sprite_shapes, index)", "imageLoad(sprite_streaks, index)", "imageLoad(sprite_colors, index)",
            "uvec4(0u)", "imageLoad(sprite_frames, index)", f"{lights});\n"]
        assert "Footprint footprint_of(SpriteEntry r)" in body and "store_sprite_entry" not in body


def test_the_depth_pass_stores_its_wide_reaches_footprints_without_a_color():
    from addon.engine.draw import particle_depth

    kernel = next(k for k in registry.variants("particle_depth") if "wide_list" in k.chosen)
    stored = kernel.body().split("void store_footprint(ivec2 index, Footprint r)")[1].split("}")[0]
    assert re.findall(r"imageStore\((\w+), index", stored) == ["sprite_shapes", "sprite_streaks"]
    assert particle_depth.WIDE_LIST.name in kernel.chosen and "load_footprint" not in kernel.body()


TESTS = SHADERS.parent / "tests"


@pytest.mark.parametrize("path", sorted(TESTS.rglob("*.py")), ids=lambda p: p.relative_to(TESTS).as_posix())
def test_tests_read_the_particle_state_by_lane_name(path):
    assert state_channel_reads(path.name, path.read_text()) == []


def test_each_allowed_positional_state_read_in_a_test_is_still_there():
    for name, line in TEST_STATE_READS_ALLOWED:
        (path,) = TESTS.rglob(name)
        assert line in [s.strip() for s in path.read_text().splitlines()], (name, line)


@pytest.mark.parametrize("snippet", [
    "alive = (pos_age[:, 3] >= 0) & (vel_life[:, 3] > 0)",
    "points = ref_pos_age[alive, :3]",
    "pos_age[0, 0] = np.nan",
    "ages = system.read_state()[0][:, 3]",
    "radius = np.linalg.norm(pos_age[:n][first, :3], axis=1)",
    "life = host.read(points.vel_life).reshape(-1, 4)[:, 3]",
])
def test_the_test_state_check_catches_channel_reads(snippet):
    assert state_channel_reads("test_x.py", snippet) == [snippet]


@pytest.mark.parametrize("snippet", [
    "particle = PARTICLE.read_images(pos_age[order], vel_life[order])",
    'alive = particle["age"] >= 0',
    "dark = nearest_depth(pos_age[n // 2:], vel_life[n // 2:], camera.view_proj)",
])
def test_the_test_state_check_passes_rows_and_lanes(snippet):
    assert state_channel_reads("test_x.py", snippet) == []
