"""Constant tables (``rom``, docs/spec-language.md "Constant tables"): parsing and checks,
the IR a read becomes (an entry, or a multiplexer tree over the index bits), folding of
reads at unrolled indices, a differential test of ``tests/sim/specs/rom.isax`` on the
interpreter against hand-written Python models (1,000 cases per ISAX), and the synthesized
unit against the interpreter in co-simulation (300 random cases per ISAX; the 64-case
run, lint and Yosys of the same spec are ``tests/sim/test_spec_cosim.py -k rom``)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.dialects.aquas import constant_value
from aquas.interpreter import IsaxState, execute, find_extension, find_isax
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.spec.limits import SpecBudgets
from aquas.synth.prepare import prepare

from helpers import cosim_random, run, wrap_isax

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "tests" / "sim" / "specs" / "rom.isax"
M32 = 0xFFFF_FFFF
M64 = (1 << 64) - 1


def ops_of(src: str, isax: str = "t") -> list[str]:
    ext = find_extension(lower_spec(src, "t.isax"))
    return [o.name for o in find_isax(ext, isax).walk()]


# -- reads ------------------------------------------------------------------------------

TABLE = "rom tw: [i16; 6] = [1, -2, 0x7fff, -32768, 0xFFFF, 5,];\n"


@pytest.mark.parametrize(
    ("index", "want"),
    [("0", 1), ("1", 0xFFFE), ("2", 0x7FFF), ("3", 0x8000), ("4", 0xFFFF), ("5", 5)],
)
def test_constant_index_reads_the_entry_as_a_constant(index: str, want: int) -> None:
    src = wrap_isax(f"return zext<u32>(tw[{index}] as u16);", decls=TABLE)
    assert run(src).rd == want
    names = ops_of(src)
    assert "arith.select" not in names and "arith.cmpi" not in names


@pytest.mark.parametrize(
    ("rs1", "want"),
    [(0, 1), (1, 0xFFFE), (2, 0x7FFF), (3, 0x8000), (4, 0xFFFF), (5, 5), (6, 0), (7, 0)],
)
def test_run_time_index_reads_the_entry_or_zero_past_the_end(rs1: int, want: int) -> None:
    src = wrap_isax("return zext<u32>(tw[trunc<u3>(rs1)] as u16);", decls=TABLE)
    assert run(src, rs1=rs1).rd == want
    assert run(src, rs1=rs1 + 8).rd == want  # trunc<u3> keeps the low bits


def test_wide_index_past_the_end_reads_zero() -> None:
    src = wrap_isax("return zext<u32>(tw[rs1] as u16);", decls=TABLE)
    assert [run(src, rs1=r).rd for r in (5, 6, 8, 1 << 31, M32)] == [5, 0, 0, 0, 0]


def test_dynamic_read_is_a_multiplexer_tree() -> None:
    # 6 entries over 3 index bits: 5 selects (the missing entries 6 and 7 are don't-cares),
    # one compare and one select for indices past the end
    names = ops_of(wrap_isax("return zext<u32>(tw[trunc<u3>(rs1)] as u16);", decls=TABLE))
    assert names.count("arith.select") == 5 + 1
    assert names.count("arith.cmpi") == 1


def test_index_type_within_the_table_needs_no_compare() -> None:
    decls = "rom k: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];\n"
    names = ops_of(wrap_isax("return zext<u32>(k[trunc<u3>(rs1)]);", decls=decls))
    assert names.count("arith.select") == 7 and "arith.cmpi" not in names
    # a u2 index reaches entries 0..3 only: a tree of 3
    names = ops_of(wrap_isax("return zext<u32>(k[trunc<u2>(rs1)]);", decls=decls))
    assert names.count("arith.select") == 3 and "arith.cmpi" not in names
    assert run(wrap_isax("return zext<u32>(k[trunc<u2>(rs1)]);", decls=decls), rs1=7).rd == 4


def test_repeated_entries_share_multiplexers() -> None:
    decls = "rom r: [u16; 8] = [7, 7, 7, 7, 9, 9, 7, 7];\n"
    src = wrap_isax("return zext<u32>(r[trunc<u3>(rs1)]);", decls=decls)
    # pairs (7,7) (7,7) (9,9) (7,7) need no select; then (7, 7) none and (9, 7) one;
    # then (7, that) one
    assert ops_of(src).count("arith.select") == 2
    assert [run(src, rs1=r).rd for r in range(8)] == [7, 7, 7, 7, 9, 9, 7, 7]


def test_rom_is_shared_by_isaxs_and_readable_in_loops() -> None:
    src = (
        "rom sq: [u32; 4] = [0, 1, 4, 9];\n"
        "#[opcode(custom0), funct7(1)]\n"
        "isax a(rs1) -> rd { var s: u32 = 0; for i in 0..4 { s = s + sq[i] * rs1; } return s; }\n"
        "#[opcode(custom0), funct7(2)]\n"
        "isax b(rs1) -> rd { return sq[rs1 & 3]; }\n"
    )
    assert run(src, "a", rs1=3).rd == 14 * 3
    assert [run(src, "b", rs1=r).rd for r in range(4)] == [0, 1, 4, 9]


def test_unrolled_reads_fold_to_the_entries() -> None:
    src = wrap_isax(
        "var s: u32 = 0;\n#[unroll] for i in 0..8 { s = s + zext<u32>(k[i]) * rs1; }\nreturn s;",
        decls="rom k: [u8; 8] = [3, 1, 4, 1, 5, 9, 2, 6];\n",
    )
    assert run(src, rs1=2).rd == 31 * 2
    module = lower_spec(src, "t.isax")
    before = [o.name for o in module.walk()]
    assert before.count("arith.select") > 0
    names = [o.name for o in prepare(module).walk()]
    assert "arith.select" not in names and "arith.cmpi" not in names


def test_the_rom_spec_folds_its_constant_indices() -> None:
    ext = find_extension(prepare(lower_spec_file(SPEC)))
    fir = [o.name for o in find_isax(ext, "fir").walk()]
    assert "arith.select" not in fir  # coef[i] in the unrolled loop: constants
    assert fir.count("arith.muli") == 8


# -- diagnostics ------------------------------------------------------------------------

NOP = "#[opcode(custom0), funct7(127)]\nisax nop() {}\n"


@pytest.mark.parametrize(
    ("src", "fragment", "line", "col"),
    [
        (
            "rom t: [u8; 3] = [1, 2, 3, 4];\n",
            "declared with 3 entries but initialised with 4",
            1,
            28,
        ),
        ("rom t: [u8; 3] = [1, 2];\n", "declared with 3 entries but initialised with 2", 1, 18),
        ("rom t: [u8; 3] = [];\n", "initialised with 0", 1, 18),
        ("rom t: [u8; 3] = [1, 256, 3];\n", "constant 256 is out of range for u8", 1, 22),
        ("rom t: [i8; 2] = [1, -129];\n", "constant -129 is out of range for i8", 1, 22),
        ("rom t: [u8; 2] = [1, rs1];\n", "a ROM entry must be a constant", 1, 22),
        ("rom t: [u8; 2] = [1, 2u8];\n", "ROM entries must be constants", 1, 22),
        ("rom t: [u8; 0] = [];\n", "ROM size must be positive", 1, 13),
        ("rom t: [u9x; 1] = [0];\n", "unknown type 'u9x'", 1, 9),
        ("state t: u8;\nrom t: [u8; 1] = [0];\n", "'t' is already defined at line 1", 2, 5),
        (
            "rom tb: [u8; 2] = [1, 2];\n" + wrap_isax("tb[0] = 3u8; return 0;"),
            "ROM 'tb' is read-only",
            5,
            1,
        ),
        (
            "rom tb: [u8; 2] = [1, 2];\n" + wrap_isax("tb[rs1] += 3u8; return 0;"),
            "ROM 'tb' is read-only",
            5,
            1,
        ),
        (
            "rom tb: [u8; 2] = [1, 2];\n" + wrap_isax("tb = 3; return 0;"),
            "ROM 'tb' is read-only",
            5,
            1,
        ),
        (
            "rom tb: [u32; 2] = [1, 2];\n" + wrap_isax("burst tb[0 +: 2] <- mem[rs1]; return 0;"),
            "ROM 'tb' cannot take part in a burst",
            5,
            7,
        ),
        (
            "rom tb: [u32; 2] = [1, 2];\n" + wrap_isax("burst mem[rs1] <- tb[0 +: 2]; return 0;"),
            "ROM 'tb' cannot take part in a burst",
            5,
            19,
        ),
        ("rom tb: [u32; 2] = [1, 2];\n" + wrap_isax("return tb;"), "ROM 'tb' is not a value", 5, 8),
        (
            "rom tb: [u32; 2] = [1, 2];\n" + wrap_isax("return tb[2];"),
            "index 2 out of bounds for ROM 'tb' of 2 entries",
            5,
            11,
        ),
        (
            "rom tb: [u32; 2] = [1, 2];\n" + wrap_isax("return tb[rs1 as i32];"),
            "ROM index must be unsigned, got i32",
            5,
            11,
        ),
        ("rom t: [u8; 2] = [1, 2]\n", "syntax error: unexpected '#'", 2, 1),
    ],
)
def test_bad_roms_are_located_errors(src: str, fragment: str, line: int, col: int) -> None:
    with pytest.raises(AquasError) as info:
        lower_spec(src + NOP, "s.isax")
    e = info.value
    assert fragment in e.message, e.message
    assert e.loc is not None and (e.loc.line, e.loc.column) == (line, col), e.loc


def test_rom_size_budget() -> None:
    src = "rom t: [u8; 5] = [1, 2, 3, 4, 5];\n" + NOP
    lower_spec(src, "s.isax", SpecBudgets(rom_entries=5))
    with pytest.raises(AquasError) as info:
        lower_spec(src, "s.isax", SpecBudgets(rom_entries=4))
    assert "exceeds the synthesis budget of 4 entries" in info.value.message
    assert info.value.hint is not None and "AQUAS_MAX_ROM_ENTRIES" in info.value.hint


# -- differential: interpreter against independent models ------------------------------

ATAN = [round(math.atan(2.0**-i) * 65536) for i in range(16)]
ZETA = [-1044, -758, -359, -1517, 1493, 1422, 287, 202]
COEF = [3, -5, 12, 64, 64, 12, -5, 3]
WIDE = [0x0123_4567_89AB_CDEF, M64, 0, 1, 1 << 63]
ODD = [1, 0, 1]
REP = [7, 7, 7, 7, 9, 9, 7, 7]


def sx(v: int, w: int) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def ref_cordic(rs1: int, rs2: int, st: dict[str, object]) -> int:
    x, y, z = sx(rs1, 32) >> 2, sx(rs2, 32) >> 2, 0
    for i in range(16):
        xs, ys = x >> i, y >> i
        if y < 0:
            x, y, z = sx(x - ys, 32), sx(y + xs, 32), sx(z - ATAN[i], 32)
        else:
            x, y, z = sx(x + ys, 32), sx(y - xs, 32), sx(z + ATAN[i], 32)
    return z & M32


def ref_twiddle(rs1: int, rs2: int, st: dict[str, object]) -> int:
    p = sx(sx(rs1, 16) * ZETA[rs2 & 7], 32)
    r = abs(p) % 3329
    return (-r if p < 0 else r) & M32


def ref_fir(rs1: int, rs2: int, st: dict[str, object]) -> int:
    hist = st["hist"]
    assert isinstance(hist, list)
    hist[:] = [rs1 & 0xFFFF, *hist[:7]]
    s = sx(sum(sx(h, 16) * c for h, c in zip(hist, COEF, strict=True)), 32)
    st["acc"] = (int(st["acc"]) + s) & M32  # type: ignore[call-overload]
    return s & M32


def ref_wide_rd(rs1: int, rs2: int, st: dict[str, object]) -> int:
    v = (WIDE[rs1] if rs1 < len(WIDE) else 0) ^ ((1 << (rs2 & 63)) & M64)
    return (v ^ (v >> 32)) & M32


def ref_small(rs1: int, rs2: int, st: dict[str, object]) -> int:
    i = rs1 & 0xFF
    b = ODD[i] if i < len(ODD) else 0
    r = (REP[rs2 & 3] + REP[(rs2 >> 8) & 7]) & 0xFFFF
    c = COEF[(rs1 >> 8) & 7] & 0xFF
    return ((b << 16 | r) + c + int(st["acc"])) & M32  # type: ignore[call-overload]


MODELS: dict[str, Callable[[int, int, dict[str, object]], int]] = {
    "cordic": ref_cordic,
    "twiddle": ref_twiddle,
    "fir": ref_fir,
    "wide_rd": ref_wide_rd,
    "small": ref_small,
}
N_CASES = 1000


def operand(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.3:
        return rng.randrange(0, 20)
    if r < 0.45:
        return rng.choice([M32, 1 << 31, (1 << 31) - 1, 0xFFFF, 0x8000, 0x7FFF])
    if r < 0.6:
        return rng.randrange(0, 1 << 16)
    return rng.getrandbits(32)


def test_models_cover_every_isax() -> None:
    ext = find_extension(lower_spec_file(SPEC))
    assert sorted(i.sym_name.data for i in ext.isaxs()) == sorted(MODELS)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_interpreter_matches_the_model(name: str) -> None:
    ext = find_extension(lower_spec_file(SPEC))
    isax = find_isax(ext, name)
    rng = random.Random(f"rom/{name}")
    state = IsaxState.reset(ext)
    model: dict[str, object] = {"acc": 0, "hist": [0] * 8}
    for case in range(N_CASES):
        if case % 50 == 0:  # fresh random state now and then
            model = {"acc": rng.getrandbits(32), "hist": [rng.getrandbits(16) for _ in range(8)]}
            state.regs["acc"] = int(model["acc"])  # type: ignore[call-overload]
            state.spms["hist"] = list(model["hist"])  # type: ignore[call-overload]
        rs1, rs2 = operand(rng), operand(rng)
        res = execute(isax, rs1, rs2, None, state)
        want = MODELS[name](rs1, rs2, model)
        assert res.rd == want, (name, case, hex(rs1), hex(rs2), hex(res.rd or 0), hex(want))
        state = res.state
        assert state.regs["acc"] == model["acc"], (name, case)
        assert state.spms["hist"] == model["hist"], (name, case)


# -- the synthesized unit against the interpreter ---------------------------------------


@pytest.mark.sim
def test_synthesized_unit_matches_the_interpreter_on_300_cases_per_isax(tmp_path: Path) -> None:
    res = cosim_random(SPEC, tmp_path, cases=300, seed=11)
    assert set(res.reports) == set(MODELS)


# -- aquas-fold-constants (before/after) ------------------------------------------------

FOLD_INPUT = """\
builtin.module {
  aquas.extension @g {
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      %c5 = arith.constant 5 : i32
      %c1 = arith.constant 1 : i32
      %sh = arith.shrui %c5, %c1 {aquas.rom} : i32
      %b = arith.trunci %sh {aquas.rom} : i32 to i1
      %lt = arith.cmpi ult, %c5, %c1 {aquas.rom} : i32
      %n = arith.extsi %b {aquas.rom} : i1 to i32
      %s1 = arith.select %b, %c1, %0 {aquas.rom} : i32
      %s2 = arith.select %lt, %s1, %n {aquas.rom} : i32
      %u = arith.shrui %c5, %c1 : i32
      %r = arith.addi %s1, %s2 : i32
      %r2 = arith.addi %r, %u : i32
      aquas.write_rd %r2 : i32
    }
  }
}
"""

# 5 >> 1 = 2, its low bit 0; 5 < 1 false; sext of 0 is 0; both selects pick their false
# side (rs1, which takes the select's name, then 0); the add of rs1 stays; the unmarked
# shift of constants folds as well (to 2), and the constants nothing uses go
FOLD_EXPECTED = """\
builtin.module {
  aquas.extension @g {
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rd"] {
      %s1 = aquas.rs1 : i32
      %n = arith.constant 0 : i32
      %u = arith.constant 2 : i32
      %r = arith.addi %s1, %n : i32
      %r2 = arith.addi %r, %u : i32
      aquas.write_rd %r2 : i32
    }
  }
}
"""


def test_fold_constants_golden() -> None:
    import io

    from xdsl.parser import Parser
    from xdsl.printer import Printer

    from aquas.context import make_context
    from aquas.passes import parse_pipeline

    ctx = make_context()
    module = Parser(ctx, FOLD_INPUT).parse_module()
    parse_pipeline("aquas-fold-constants,dce").apply(ctx, module)
    module.verify()
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    assert out.getvalue() + "\n" == FOLD_EXPECTED


def test_fold_constants_keeps_aquas_edge_semantics() -> None:
    """Division by zero, MIN / -1 and shifts past the width are defined in aquas (the
    RISC-V rules): folding a ROM index uses the interpreter's semantics, not MLIR's
    poison."""
    src = wrap_isax(
        "return k[(7u32 / 0u32) & 3] + k[(7u32 % 0u32) & 3]"
        " + k[((0x80000000i32 / -1i32) as u32) >> 30u32] + k[(5u32 << 40u32) & 3];",
        decls="rom k: [u32; 4] = [10, 11, 12, 13];",
    )
    # 7 / 0 = 0xFFFFFFFF -> 3; 7 % 0 = 7 -> 3; MIN / -1 = MIN -> 2; 5 << 40 = 0
    assert run(src).rd == 13 + 13 + 12 + 10
    m = prepare(lower_spec(src, "edge.isax"))
    isax = next(find_extension(m).isaxs())
    names = [o.name for o in isax.walk()]
    for folded in ("arith.divui", "arith.remui", "arith.divsi", "arith.shli", "arith.select"):
        assert folded not in names, folded
    assert execute(isax).rd == 48


def test_fold_constants_folds_constant_arithmetic_anywhere_with_aquas_semantics() -> None:
    """Constant arithmetic outside ROM reads folds too, by the RISC-V rules the interpreter
    uses (division by zero, MIN / -1, shifts past the width); a division of a run-time
    value by zero stays for the hardware."""
    src = (ROOT / "tests" / "edge_cases.isax").read_text()
    m = prepare(lower_spec(src, "edge.isax"))
    isax = next(find_extension(m).isaxs())
    divs = [o for o in isax.walk() if o.name in ("arith.divui", "arith.divsi", "arith.remui")]
    assert len(divs) == 1 and all(constant_value(v) is None for v in divs[0].operands[:1])
    assert not [o for o in isax.walk() if o.name in ("arith.shli", "arith.shrsi", "arith.shrui")]
    spec = next(find_extension(lower_spec(src, "edge.isax")).isaxs())
    for rs1 in (0, 5, 0xFFFFFFFF, 0x80000000):
        assert execute(isax, rs1).rd == execute(spec, rs1).rd


def test_synthesis_preparation_preserves_semantics() -> None:
    from test_passes import assert_equivalent

    assert_equivalent(lower_spec_file(SPEC), prepare(lower_spec_file(SPEC)), cases=200, seed=5)


def test_cli_check_reports_a_bad_rom_with_its_location(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from aquas.cli import main

    bad = tmp_path / "bad.isax"
    bad.write_text("rom t: [u8; 2] = [1, 300];\n" + NOP)
    r = CliRunner().invoke(main, ["check", str(bad)])
    assert r.exit_code == 2
    assert "bad.isax:1:22: error: constant 300 is out of range for u8 (0..255)" in r.output
    assert "Traceback" not in r.output
