"""Multi-cycle operators (synth/multicycle.py): the sequential divider against Python
integer division in RTL simulation, the oplib entry, and the schedule of ISAXs with `/`
and `%` (latency and occupancy)."""

from __future__ import annotations

import itertools
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from aquas.spec.frontend import lower_spec
from aquas.synth.flow import build_unit, export_verilog
from aquas.synth.fsm import State
from aquas.synth.multicycle import divider_latency, divider_module
from aquas.synth.oplib import DEFAULT_PATH, OperatorLibrary
from aquas.synth.rtlgen import Unit, hw_text
from aquas.synth.schedule import Schedule

ROOT = Path(__file__).resolve().parents[1]


def py_divrem(a: int, b: int, w: int, signed: bool) -> tuple[int, int]:
    """RISC-V division written out with Python integers (not aquas.intops)."""
    m = (1 << w) - 1
    if b == 0:
        return m, a
    if not signed:
        return a // b, a % b
    sa = a - (1 << w) if a >> (w - 1) else a
    sb = b - (1 << w) if b >> (w - 1) else b
    q = abs(sa) // abs(sb)
    if (sa < 0) != (sb < 0):
        q = -q
    r = sa - q * sb  # truncating division: the remainder has the dividend's sign
    return q & m, r & m


def corner_vectors(w: int) -> list[tuple[int, int, int]]:
    m = (1 << w) - 1
    mn = 1 << (w - 1)
    vals = [0, 1, 2, 3, m, m - 1, mn, mn - 1, mn + 1, 7, 3329]
    out = []
    for s in (0, 1):
        for a in vals:
            for b in (0, 1, m, mn, 2, 3, 3329, mn - 1):
                out.append((s, a & m, b & m))
    return out


def simulate_divider(
    w: int, vectors: list[tuple[int, int, int, int]], tmp: Path, k: int = 1
) -> list[str]:
    """Runs the divider under Icarus Verilog: vector i = (sgn, a, b, gap) starts in the
    cycle ``gap`` cycles after the previous start. Returns one line per cycle:
    ``cycle quo rem`` (hex), sampled mid-cycle."""
    name = f"t_div{w}"
    sv = export_verilog(hw_text(ModuleOp([divider_module(name, w, radix_bits=k)])))
    (tmp / "div.sv").write_text(sv)
    hexw = (w + 3) // 4
    lines = [f"{s:x} {a:0{hexw}x} {b:0{hexw}x} {g:x}" for s, a, b, g in vectors]
    (tmp / "vec.txt").write_text("\n".join(lines) + "\n")
    n = len(vectors)
    total = sum(v[3] for v in vectors) + 2 * w // k + 8
    tb = f"""
module tb;
  reg clk = 0, rst = 1, start = 0, sgn = 0;
  reg [{w - 1}:0] a = 0, b = 0;
  wire [{w - 1}:0] quo, rem;
  reg [{w - 1}:0] va [0:{n - 1}];
  reg [{w - 1}:0] vb [0:{n - 1}];
  reg vs [0:{n - 1}];
  integer vg [0:{n - 1}];
  integer fd, i, k, cyc, next_start, r;
  {name} dut(.clk(clk), .rst(rst), .start(start), .sgn(sgn), .a(a), .b(b), .quo(quo), .rem(rem));
  always #5 clk = ~clk;
  initial begin
    fd = $fopen("vec.txt", "r");
    for (i = 0; i < {n}; i = i + 1) begin
      r = $fscanf(fd, "%h %h %h %h\\n", vs[i], va[i], vb[i], vg[i]);
    end
    @(negedge clk); @(negedge clk); rst = 0;
    i = 0; next_start = vg[0];
    for (cyc = 0; cyc < {total}; cyc = cyc + 1) begin
      start = 0;
      if (i < {n} && cyc == next_start) begin
        start = 1; sgn = vs[i]; a = va[i]; b = vb[i];
        i = i + 1;
        if (i < {n}) next_start = cyc + vg[i];
      end else begin
        a = $random; b = $random; sgn = $random;  // ignored without start
      end
      #1 $display("%0d %h %h", cyc, quo, rem);
      @(negedge clk);
    end
    $finish;
  end
endmodule
"""
    return _icarus(tmp, tb, "div.sv")


def _icarus(tmp: Path, tb: str, design: str) -> list[str]:
    """Runs testbench ``tb`` against ``design`` (in ``tmp``) in Icarus: its cycle lines."""
    (tmp / "tb.v").write_text(tb)
    subprocess.run(
        ["iverilog", "-g2012", "-o", "sim", "tb.v", design],
        cwd=tmp,
        check=True,
        capture_output=True,
    )
    out = subprocess.run(["vvp", "-n", "sim"], cwd=tmp, check=True, capture_output=True, text=True)
    return [ln for ln in out.stdout.splitlines() if ln[:1].isdigit()]


def check_timeline(
    w: int, vectors: list[tuple[int, int, int, int]], lines: list[str], k: int = 1
) -> int:
    """Every cycle's outputs are the result of the latest operation started at least
    ``w + 2`` cycles before (exact latency; held until the next result). Returns the
    number of operations whose result was observed."""
    lat = divider_latency(w, k)
    starts, t = [], 0
    for _s, _a, _b, g in vectors:
        t += g
        starts.append(t)
    seen = set()
    for ln in lines:
        cyc_s, q_s, r_s = ln.split()
        cyc = int(cyc_s)
        done = [i for i, s in enumerate(starts) if s + lat <= cyc]
        if not done:
            continue
        i = done[-1]
        s, a, b, _ = vectors[i]
        want = py_divrem(a, b, w, bool(s))
        got = (int(q_s, 16), int(r_s, 16))
        assert got == want, (
            f"cycle {cyc}: op {i} ({'signed' if s else 'unsigned'} {a:#x} / {b:#x}, started "
            f"at {starts[i]}): got q={got[0]:#x} r={got[1]:#x}, want q={want[0]:#x} r={want[1]:#x}"
        )
        seen.add(i)
    return len(seen)


@pytest.mark.sim
@pytest.mark.skipif(shutil.which("iverilog") is None, reason="needs iverilog (scripts/setup.sh)")
@pytest.mark.parametrize(("w", "k"), [(8, 1), (32, 1), (64, 1), (16, 2), (32, 4), (64, 4), (48, 8)])
def test_divider_matches_python_division(w: int, k: int, tmp_path: Path) -> None:
    rng = random.Random(w * 10 + k)
    m = (1 << w) - 1
    vecs = corner_vectors(w)
    for _ in range(150):
        a = rng.getrandbits(w)
        b = rng.getrandbits(rng.choice([1, 3, w // 2, w]))  # small divisors too
        vecs.append((rng.getrandbits(1), a, b & m))
    # back to back at the unit's initiation interval (w/k + 1), or with idle cycles between
    ii = w // k + 1
    gaps = [ii if i % 3 else ii + rng.randrange(1, 9) for i in range(len(vecs))]
    vectors = [(s, a, b, g) for (s, a, b), g in zip(vecs, gaps, strict=True)]
    lines = simulate_divider(w, vectors, tmp_path, k)
    assert check_timeline(w, vectors, lines, k) == len(vectors)


def test_python_reference_agrees_with_intops() -> None:
    from aquas import intops

    rng = random.Random(1)
    for w in (8, 32, 64):
        cases = [(s, a, b) for s, a, b in corner_vectors(w)]
        cases += [(rng.getrandbits(1), rng.getrandbits(w), rng.getrandbits(w)) for _ in range(200)]
        for s, a, b in cases:
            q, r = py_divrem(a, b, w, bool(s))
            ops = ("arith.divsi", "arith.remsi") if s else ("arith.divui", "arith.remui")
            assert intops.BY_ARITH[ops[0]].fn(a, b, w) == q
            assert intops.BY_ARITH[ops[1]].fn(a, b, w) == r


# -- the operator library ---------------------------------------------------------------

LIB = OperatorLibrary.load()
BUDGET = 9.0  # ns: a 10 ns clock minus the 10 levels of register and state selection
# at 10 ns the flow chains 4 restoring steps per cycle (depth 64 <= 90 levels; 8: 122)
DIV32 = LIB.multicycle("div", 32, BUDGET)
LAT, OCC = DIV32.latency, DIV32.occupancy


def test_library_describes_the_divider() -> None:
    d32, d64 = LIB.multicycle("div", 32), LIB.multicycle("div", 64)  # 1 bit per cycle
    assert (d32.digit, d32.latency, d32.ii, d32.occupancy) == (1, 34, 33, 35)
    assert (d64.digit, d64.latency, d64.ii, d64.occupancy) == (1, 66, 65, 67)
    assert d32.key == "div32" and d32.resource == "div32 unit"
    # the widest step count per cycle that fits the budget
    assert (DIV32.digit, LAT, DIV32.ii, OCC) == (4, 10, 9, 11)
    f64 = LIB.multicycle("div", 64, BUDGET)
    assert (f64.digit, f64.latency) == (4, 18)
    assert LIB.multicycle("div", 32, 5.0).digit == 2  # depth 35 fits 4 ns, 64 does not
    assert (
        LIB.multicycle("div", 24, BUDGET).digit == 4
        and LIB.multicycle("div", 33, BUDGET).digit == 1
    )
    # measured: a fraction of the combinational divider's area, and a short internal path
    assert d32.cells < DIV32.cells < LIB.cost("divu", 32).cells / 3
    assert f64.cells < LIB.cost("divu", 64).cells / 8
    assert DIV32.depth * LIB.ns_per_level <= BUDGET and f64.depth * LIB.ns_per_level <= BUDGET
    # issue logic: the magnitude (a negation) and muxes, well inside a 10 ns cycle
    assert LIB.delay_ns("sub", 32) < d32.issue_ns < 4.0
    # between measured widths: the next measured width's figures; beyond them: an error
    d40 = LIB.multicycle("div", 40)
    assert d40.cells == LIB.multicycle("div", 48).cells and d40.latency == 42
    with pytest.raises(ValueError, match="outside"):
        LIB.multicycle("div", 65)
    with pytest.raises(KeyError, match="no multi-cycle unit 'sqrt'"):
        LIB.multicycle("sqrt", 32)


# -- scheduling --------------------------------------------------------------------------


def build(src: str, clock: float = 10.0) -> Unit:
    return build_unit(lower_spec(src, "mc.isax"), clock, LIB)


def isax_states(unit: Unit, name: str) -> list[State]:
    return [s for s in unit.states if s.isax == name]


ONE = """
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd {
    let q: u32 = rs1 / rs2;
    return q + 1;
}
"""


def test_a_division_issues_in_one_state_and_is_read_latency_states_later() -> None:
    unit = build(ONE)
    sts = isax_states(unit, "t")
    lat = LAT
    assert len(sts) == lat + 1  # issue state, 33 states of waiting, the result state
    assert [len(s.issues) for s in sts] == [1] + [0] * lat
    assert [len(s.completes) for s in sts] == [0] * lat + [1]
    (op,) = sts[0].issues
    assert sts[-1].completes == [op]
    # the add and the rd write chain behind the unit's output in the result state
    assert [o.name for o in sts[-1].ops] == ["arith.addi", "aquas.write_rd"]
    (fsm,) = unit.fsms
    assert fsm.latency.at(0) == (lat + 1, lat + 1)


TWO = """
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd {
    let q: u32 = rs1 / rs2;
    let r: u32 = rs2 / rs1;
    let x: u32 = rs1 * rs2 + rs1;
    return q ^ r ^ x;
}
"""


def test_the_unit_is_held_from_issue_through_the_result_state() -> None:
    unit = build(TWO)
    sts = isax_states(unit, "t")
    occ = OCC
    issues = [i for i, s in enumerate(sts) if s.issues]
    # two divisions on one shared unit: the second starts when the first has been read
    assert issues == [0, occ]
    assert len(sts) == 2 * occ
    # independent work does not wait for the divider: the multiply shares the issue state
    assert any(o.name == "arith.muli" for o in sts[0].ops)


def test_schedules_verify_occupancy_and_latency() -> None:
    from aquas.synth.flow import schedule_isaxs

    builder, _ = schedule_isaxs(lower_spec(TWO, "mc.isax"), 10.0, LIB)
    ((problem, sched),) = builder.schedules
    assert problem.verify(sched) == []
    divs = [op for op in problem.operations if op.name == "arith.divui"]
    assert [problem.occupancy[d] for d in divs] == [OCC, OCC] == [11, 11]
    assert problem.span(sched) == 22
    # the second division one cycle earlier overlaps the first one's occupancy
    bad = Schedule.chained(problem, sched.cycle | {divs[1]: sched.cycle[divs[1]] - 1})
    kinds = {v.kind for v in problem.verify(bad)}
    assert "resource" in kinds
    # a consumer earlier than the latency breaks its dependence
    user = next(op for op in problem.operations if any(v.owner is divs[0] for v in op.operands))
    early = Schedule.chained(problem, sched.cycle | {user: sched.cycle[divs[0]] + 9})
    msgs = [str(v) for v in problem.verify(early) if v.kind == "dependence"]
    assert msgs and "at least 10 cycles after" in msgs[0] and "data from div32" in msgs[0]


PAIR = """
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd {
    let q: u32 = rs1 / rs2;
    let r: u32 = rs1 % rs2;
    let s: i32 = (rs1 as i32) % (rs2 as i32);
    return q + r + (s as u32);
}
"""


def test_quotient_and_remainder_of_one_division_share_its_issue() -> None:
    unit = build(PAIR)
    sts = isax_states(unit, "t")
    occ = OCC
    issued = [op.name for s in sts for op in s.issues]
    # unsigned / and % of rs1, rs2 share one division; the signed % is a division of its own
    assert issued == ["arith.divui", "arith.remsi"]
    assert len(sts) == 2 * occ
    done = [sorted(op.name for op in s.completes) for s in sts if s.completes]
    assert done == [["arith.divui", "arith.remui"], ["arith.remsi"]]


LOOP = """
state acc: u32 = 0;
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd {
    var s: u32 = rs1;
    for i in 0..3 {
        s = s / (rs2 + i) + 7;
    }
    acc = s;
    return s;
}
"""


def test_a_division_in_a_loop_completes_within_the_body() -> None:
    unit = build(LOOP)
    (fsm,) = unit.fsms
    lat = LAT
    body = lat + 1  # issue .. result state; the latch is in the result state
    # the state initialising the loop, 3 iterations of the body, the state writing acc/rd
    assert fsm.latency.at(0) == (1 + 3 * body + 1,) * 2


def test_division_by_a_constant_is_a_barrett_reduction_up_to_32_bits() -> None:
    """``rs1 % 3329`` becomes multiplies by constants (``aquas-reduce-division``): no
    divider, and fewer states than the divider's ``LAT + 1``; at 64 bits the same remainder
    still runs on the divider."""
    src = "#[opcode(custom0), funct7(1)]\nisax t(rs1) -> rd {\n  return rs1 % 3329;\n}\n"
    unit = build(src)
    assert not any(s.units for s in unit.states)
    assert len(isax_states(unit, "t")) < LAT + 1
    wide = (
        "#[opcode(custom0), funct7(1)]\nisax t(rs1, rs2) -> rd {\n"
        "  return trunc<u32>((zext<u64>(rs1) << 32 | zext<u64>(rs2)) % 3329);\n}\n"
    )
    unit = build(wide)
    assert {m.unit for s in unit.states for m in s.units.values()} == {"div"}
    assert len(isax_states(unit, "t")) == LIB.multicycle("div", 64, BUDGET).latency + 1


def test_division_by_a_small_constant_is_costed_deeper_than_the_const_entry() -> None:
    # the *_const entries are measured for 3329 and 1000003 only; `a / 3` at 16 bits is
    # 194 levels in Yosys (measured with the library's script), not 65
    assert LIB.cost("divu_const", 16).depth == 65
    assert LIB.division_by_constant_depth("divu", 16, 3) >= 194
    # never below a measured variant
    raw = json.loads(DEFAULT_PATH.read_text())["ops"]
    checked = 0
    for kind, base in (("divu_const", "divu"), ("modu_const", "modu")):
        for w, entry in raw[kind].items():
            for v in entry.get("variants", {}).values():
                assert LIB.division_by_constant_depth(base, int(w), v["const"]) >= v["depth"]
                checked += 1
    assert checked == 44
    # (divisions by constants up to 32 bits are Barrett reductions before scheduling,
    # test_division_by_a_constant_is_a_barrett_reduction_up_to_32_bits; the depths time
    # the wider ones)


def test_the_unit_instantiates_one_divider_per_width() -> None:
    from aquas.synth.flow import export_verilog

    unit = build(ROOT.joinpath("tests/sim/specs/divrem.isax").read_text())
    sv = export_verilog(unit.circt_text)
    assert sv.count("module divrem_isax_unit_div32(") == 1
    assert sv.count("module divrem_isax_unit_div64(") == 1
    assert len(re.findall(r"^\s*divrem_isax_unit_div32 div32 \(", sv, re.M)) == 1
    assert len(re.findall(r"^\s*divrem_isax_unit_div64 div64 \(", sv, re.M)) == 1


# -- Kyber with `%` ----------------------------------------------------------------------


def test_kyber_with_remainder_matches_the_barrett_spec() -> None:
    from aquas.interpreter import execute, find_extension
    from aquas.spec.frontend import lower_spec_file

    mod = find_extension(lower_spec_file(ROOT / "tests/sim/specs/kyber_mod.isax"))
    bar = find_extension(lower_spec_file(ROOT / "tests/kyber_barrett.isax"))
    rng = random.Random(3329)
    ops = [(0, 0), (0xFFFF, 0xFFFF), (3329, 1), (3328, 3328), (0xFFFFFFFF, 0xFFFFFFFF)]
    ops += [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(500)]
    scalar = [i for i in bar.isaxs() if i.sym_name.data in ("modmul_q", "ntt_bfly")]
    for a_isax, b_isax in zip(mod.isaxs(), scalar, strict=True):
        assert a_isax.sym_name == b_isax.sym_name
        for rs1, rs2 in ops:
            assert execute(a_isax, rs1, rs2).rd == execute(b_isax, rs1, rs2).rd, (
                a_isax.sym_name.data,
                hex(rs1),
                hex(rs2),
            )


def test_kybers_example_with_remainders_matches_the_hand_written_barrett_steps() -> None:
    """examples/crypto/kyber.isax writes its reductions as ``% 3329``; on the golden
    interpreter its four ISAXs give what the hand-written Barrett steps give
    (tests/kyber_barrett.isax), the transforms on polynomials of any u16
    coefficients and of coefficients in [0, q], with random and reduced twiddles."""
    from aquas.interpreter import Memory, execute, find_extension
    from aquas.spec.frontend import lower_spec_file

    def isaxs(path: str):  # type: ignore[no-untyped-def]
        return {i.sym_name.data: i for i in find_extension(lower_spec_file(ROOT / path)).isaxs()}

    ex, bar = isaxs("examples/crypto/kyber.isax"), isaxs("tests/kyber_barrett.isax")
    rng = random.Random(17)
    for name in ("modmul_q", "ntt_bfly"):
        for _ in range(300):
            rs1, rs2 = rng.getrandbits(32), rng.getrandbits(32)
            assert execute(ex[name], rs1, rs2).rd == execute(bar[name], rs1, rs2).rd
    for name in ("ntt_fwd", "ntt_inv"):
        for case in range(4):
            mem = Memory()
            top = 0xFFFF if case % 2 else 3329
            mem.write_words(0x1000, 2, [rng.randint(0, top) for _ in range(256)])
            mem.write_words(
                0x2000, 2, [rng.randint(0, 0xFFFF if case < 2 else 3328) for _ in range(128)]
            )
            a, b = mem.copy(), mem.copy()
            execute(ex[name], 0x1000, 0x2000, a)
            execute(bar[name], 0x1000, 0x2000, b)
            assert a.read_words(0x1000, 2, 256) == b.read_words(0x1000, 2, 256), (name, case)


def test_reports_name_the_divisions_and_the_units() -> None:
    from aquas.synth.flow import isax_report, multicycle_units

    unit = build(PAIR)
    (fsm,) = unit.fsms
    rep = isax_report(fsm, unit.states, 10.0, 4)
    got = [
        (m["op"], m["unit"], m["issue_state"], m["result_state"], m["shares_division"])
        for m in rep["multicycle"]
    ]
    assert got == [
        ("arith.divui", "div32", 0, 10, False),
        ("arith.remui", "div32", 0, 10, True),
        ("arith.remsi", "div32", 11, 21, False),
    ]
    assert rep["multicycle"][0]["source"] == "mc.isax:4:18"
    assert rep["latency"]["cycles_max"] == 2 * 11 + 1
    (div,) = multicycle_units(unit, LIB)
    assert div == {
        "unit": "div32",
        "width": 32,
        "latency": 10,
        "initiation_interval": 9,
        "cells": DIV32.cells,
        "depth": DIV32.depth,
        "issues": 2,
        "bits_per_cycle": 4,
    }


def test_schedule_pass_annotates_issue_and_result_states() -> None:
    from aquas.synth.timing import AquasSchedulePass

    mod = lower_spec(ONE, "mc.isax")
    AquasSchedulePass(clock_ns=10.0).apply(None, mod)  # type: ignore[arg-type]
    (div,) = [op for op in mod.walk() if op.name == "arith.divui"]
    (add,) = [op for op in mod.walk() if op.name == "arith.addi"]
    first = 2  # 0 idle, 1 respond
    assert div.attributes["aquas.state"].value.data == first  # type: ignore[attr-defined]
    assert div.attributes["aquas.result_state"].value.data == first + 10  # type: ignore[attr-defined]
    assert add.attributes["aquas.state"].value.data == first + 10  # type: ignore[attr-defined]
    assert add.attributes["aquas.cycle"].value.data == 10  # type: ignore[attr-defined]


def test_a_clock_too_short_for_the_divider_step_is_still_a_diagnostic() -> None:
    from aquas.diagnostics import AquasError

    d = LIB.multicycle("div", 32)
    clock = d.depth * LIB.ns_per_level  # the budget (minus overhead) cannot hold one step
    with pytest.raises(AquasError, match=r"arith\.divui needs"):
        build(ONE, clock)


# -- the sequential multiplier -------------------------------------------------------------


def simulate_multiplier(
    w: int, d: int, vectors: list[tuple[int, int, int]], tmp: Path
) -> list[tuple[int, int | None]]:
    """Icarus run of the multiplier: vector i = (a, b, gap) starts ``gap`` cycles after the
    previous start. Returns (cycle, prod) per cycle."""
    from aquas.synth.multicycle import multiplier_module

    name = f"t_mul{w}"
    sv = export_verilog(hw_text(ModuleOp([multiplier_module(name, w, d)])))
    (tmp / "mul.sv").write_text(sv)
    hexw = (w + 3) // 4
    (tmp / "vec.txt").write_text(
        "".join(f"{a:0{hexw}x} {b:0{hexw}x} {g:x}\n" for a, b, g in vectors)
    )
    n = len(vectors)
    total = sum(g for *_, g in vectors) + w + 8
    tb = f"""
module tb;
  reg clk = 0, rst = 1, start = 0;
  reg [{w - 1}:0] a = 0, b = 0;
  wire [{w - 1}:0] prod;
  reg [{w - 1}:0] va [0:{n - 1}];
  reg [{w - 1}:0] vb [0:{n - 1}];
  integer vg [0:{n - 1}];
  integer fd, i, cyc, next_start, r;
  {name} dut(.clk(clk), .rst(rst), .start(start), .a(a), .b(b), .prod(prod));
  always #5 clk = ~clk;
  initial begin
    fd = $fopen("vec.txt", "r");
    for (i = 0; i < {n}; i = i + 1) r = $fscanf(fd, "%h %h %h\\n", va[i], vb[i], vg[i]);
    @(negedge clk); @(negedge clk); rst = 0;
    i = 0; next_start = vg[0];
    for (cyc = 0; cyc < {total}; cyc = cyc + 1) begin
      start = 0;
      if (i < {n} && cyc == next_start) begin
        start = 1; a = va[i]; b = vb[i];
        i = i + 1;
        if (i < {n}) next_start = cyc + vg[i];
      end else begin
        a = $random; b = $random;
      end
      #1 $display("%0d %h", cyc, prod);
      @(negedge clk);
    end
    $finish;
  end
endmodule
"""
    # the product is X until the first start's result (its registers have no reset)
    return [
        (int(c), None if "x" in p else int(p, 16))
        for c, p in (ln.split() for ln in _icarus(tmp, tb, "mul.sv"))
    ]


@pytest.mark.sim
@pytest.mark.skipif(shutil.which("iverilog") is None, reason="needs iverilog (scripts/setup.sh)")
@pytest.mark.parametrize(("w", "d"), [(16, 1), (32, 8), (64, 16), (48, 24), (24, 24)])
def test_multiplier_matches_python_multiplication(w: int, d: int, tmp_path: Path) -> None:
    from aquas.synth.multicycle import multiplier_steps

    rng = random.Random(w * 100 + d)
    m = (1 << w) - 1
    corners = [0, 1, 2, m, m - 1, 1 << (w - 1), 3329]
    pairs = [(a & m, b & m) for a in corners for b in corners]
    pairs += [(rng.getrandbits(w), rng.getrandbits(w)) for _ in range(100)]
    lat = multiplier_steps(w, d) + 1
    # back to back at the initiation interval (the latency), or with idle cycles
    vectors = [
        (a, b, lat if i % 3 else lat + rng.randrange(1, 7)) for i, (a, b) in enumerate(pairs)
    ]
    starts = list(itertools.accumulate(g for *_, g in vectors))
    # the product is valid from `lat` cycles after its start until the next start (the
    # accumulator clears at the end of that cycle)
    seen = set()
    for cyc, prod in simulate_multiplier(w, d, vectors, tmp_path):
        for i, s in enumerate(starts):
            nxt = starts[i + 1] if i + 1 < len(starts) else None
            if s + lat <= cyc and (nxt is None or cyc <= nxt):
                a, b, _ = vectors[i]
                assert prod == (a * b) & m, (cyc, i, hex(a), hex(b), hex(prod))
                seen.add(i)
    assert len(seen) == len(vectors)


MUL = """
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd {
    let p: u64 = zext<u64>(rs1) * zext<u64>(rs2);
    let s: i64 = sext<i64>(rs1 as i32) * sext<i64>(rs2 as i32);
    return trunc<u32>(p >> 32) ^ trunc<u32>((s as u64) >> 16);
}
"""


def test_a_multiply_slower_than_the_clock_runs_on_the_sequential_multiplier() -> None:
    from aquas.synth.flow import multicycle_units

    clock = 5.0  # budget 4 ns: the 64-bit multiply (4.6 ns) does not fit
    budget = clock - 1.0
    assert LIB.delay_ns("mul", 64) > budget
    spec = LIB.multicycle("mul", 64, budget)
    assert spec.digit == 16 and spec.depth * LIB.ns_per_level <= budget
    assert (spec.latency, spec.ii) == (5, 5)  # 4 steps of 16 bits, then the result
    unit = build(MUL, clock)
    sts = isax_states(unit, "t")
    issues = [i for i, s in enumerate(sts) if s.issues]
    assert issues == [0, spec.occupancy]  # two multiplies share one multiplier
    assert len(sts) == 2 * spec.occupancy
    (mul,) = multicycle_units(unit, LIB)
    assert mul["unit"] == "mul64" and mul["bits_per_cycle"] == 16 and mul["issues"] == 2
    # at 10 ns the multiply is combinational
    assert len(isax_states(build(MUL, 10.0), "t")) == 1


@pytest.mark.sim
def test_multiplier_unit_cosimulates_at_a_short_clock(tmp_path: Path) -> None:
    from aquas.synth.cosim import run_cosim
    from aquas.synth.flow import synthesize
    from aquas.synth.lint import lint
    from aquas.synth.yosys import measure

    spec = tmp_path / "mulclk.isax"
    spec.write_text("extension mulclk;\n" + MUL)
    res = synthesize(lower_spec(spec.read_text(), str(spec)), tmp_path / "out", 5.0, mem_latency=4)
    assert res.reports["t"]["latency"]["cycles_max"] == 2 * 6 + 1
    assert lint(res.verilog_path) == []
    cs = run_cosim(
        spec,
        res.verilog_path,
        res.unit.name,
        cases=200,
        seed=5,
        mode="random",
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == [] and cs.stats["t"]["cases"] == 200
    fig = measure(res.verilog_path, res.unit.name, cache_dir=ROOT / "build" / "yosys")
    assert fig.depth * LIB.ns_per_level <= 5.0
