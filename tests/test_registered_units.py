"""Spread and registered shared multipliers (synth/binding.py). Spread: a class whose ops do
not fit behind the select of all its users gets more units, each with fewer users.
Registered: when no multiply
of a class fits a cycle behind its units' input select but each fits alone, the units
register their operands and result: an op is issued behind the select and read two states
later, and the unit still serves every state."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from aquas.dialects.aquas import KERNEL_CYCLE_ATTR
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.balance import _isax_of
from aquas.synth.binding import REGISTERED_LATENCY, UnitClass
from aquas.synth.flow import schedule_isaxs
from aquas.synth.loop_pipeline import pipeline_loops as PIPELINE_LOOPS
from aquas.synth.oplib import OperatorLibrary

from helpers import cosim_random

ROOT = Path(__file__).resolve().parents[1]
LIB = OperatorLibrary.load()
MUL32 = UnitClass("mul", 32)

# 4.7 ns leaves 3.7 ns of datapath: a 32-bit multiply (3.6 ns in the library) fits alone,
# not behind a select of two or more users (an AND and an OR: 0.2 ns)
TIGHT_NS = 4.7

SPEC = """
extension reg;
state acc: u32 = 0;

#[opcode(custom0), funct7(1){mac}]
isax mac4(rs1, rs2) -> rd {{
    let p0: i32 = sext<i32>(rs1[15:0] as i16) * sext<i32>(rs2[15:0] as i16);
    let p1: i32 = sext<i32>(rs1[31:16] as i16) * sext<i32>(rs2[31:16] as i16);
    let p2: i32 = sext<i32>(rs1[15:0] as i16) * sext<i32>(rs2[31:16] as i16);
    let p3: i32 = sext<i32>(rs1[31:16] as i16) * sext<i32>(rs2[15:0] as i16);
    acc = acc + ((p0 + p1) + (p2 + p3)) as u32;
    return acc;
}}

#[opcode(custom0), funct7(2){sq}]
isax sqmul(rs1, rs2) -> rd {{
    let d: i32 = sext<i32>(rs1[15:0] as i16) - sext<i32>(rs2[15:0] as i16);
    let q: i32 = sext<i32>(d[15:0] as i16) * sext<i32>(d[15:0] as i16);
    return (sext<i32>(q[15:0] as i16) * sext<i32>(rs2[31:16] as i16)) as u32;
}}
"""


def spec(mac: str = ", mul_units(2)", sq: str = ", mul_units(1)") -> str:
    return SPEC.format(mac=mac, sq=sq)


def schedule(src: str, clock_ns: float, lib: OperatorLibrary = LIB):  # type: ignore[no-untyped-def]
    return schedule_isaxs(lower_spec(src, "reg.isax"), clock_ns, lib)


def test_a_class_that_does_not_fit_behind_its_select_gets_registered_units() -> None:
    builder, fsms = schedule(spec(), TIGHT_NS)
    sharing, binding = builder.sharing, builder.binding
    assert sharing is not None and binding is not None
    assert sharing.registered == {MUL32}
    assert binding.registered == frozenset({MUL32})
    assert {c.key: n for c, n in binding.counts().items()} == {"mul32": 2}
    muls = [op for op in binding.unit_of]
    assert len(muls) == 6 and binding.dedicated == []
    for op in muls:
        # issued in one state, read from the result register two states later
        assert builder.def_state[op] - builder.issue_state[op] == REGISTERED_LATENCY
        assert builder.multicycle[op].pipelined and builder.multicycle[op].occupancy == 1
    for problem, sched in builder.schedules:
        assert problem.verify(sched) == []
    # mac4: two products issued in each of states 0 and 1 (two units), read in 2 and 3;
    # p0 + p1 in 2, and (p2 + p3) + that + acc (two adders of 1.8 ns chained) in 3
    # sqmul: d and the select in 0, q read in 2 and issued again, the product read in 4
    got = {f.isax.sym_name.data: f.latency.at(0) for f in fsms}
    assert got == {"mac4": (4, 4), "sqmul": (5, 5)}


def test_units_that_fit_with_their_select_stay_combinational() -> None:
    builder, fsms = schedule(spec(), 10.0)
    assert builder.sharing is not None and builder.sharing.registered == set()
    assert builder.binding is not None and builder.binding.registered == frozenset()
    assert all(op not in builder.multicycle for op in builder.binding.unit_of)
    got = {f.isax.sym_name.data: f.latency.at(0) for f in fsms}
    assert got["sqmul"][0] < 5


def test_without_a_directive_the_ten_percent_rule_still_applies() -> None:
    """Two more states for a 3-state ISAX is far more than 10 %: without a directive each
    ISAX keeps operators of its own, as before registered units existed."""
    _, plain_fsms = schedule_isaxs(lower_spec(spec("", ""), "reg.isax"), TIGHT_NS, LIB, share=False)
    builder, fsms = schedule(spec("", ""), TIGHT_NS)
    assert builder.binding is None or builder.binding.unit_of == {}
    assert [f.latency.at(0) for f in fsms] == [f.latency.at(0) for f in plain_fsms]


# loads (wait states as long as the memory's latency) between a multiply's issue and its
# read, and the one unit issuing again in a wait state: the unit's registers hold while the
# state machine waits (loaded in every cycle, the second issue overwrote the first result)
WAITS = """
extension rw;

#[opcode(custom0), funct7(4), mul_units(1)]
isax mw(rs1, rs2) -> rd {
    let a: u32 = mem<u32>[rs1];
    let b: u32 = mem<u32>[rs1 + 4];
    let c: u32 = mem<u32>[rs1 + 8];
    let p: i32 = sext<i32>(rs2[15:0] as i16) * sext<i32>(rs2[31:16] as i16);
    let q: i32 = sext<i32>(rs1[15:0] as i16) * sext<i32>(rs2[15:0] as i16);
    return a ^ b ^ c ^ (p as u32) ^ (q as u32);
}
"""


def test_registered_units_hold_through_wait_states(tmp_path: Path) -> None:
    builder, _ = schedule(WAITS, TIGHT_NS)
    assert builder.binding is not None and builder.binding.registered == frozenset({MUL32})
    # a multiply issued before the second load's wait state and read after it
    waits = {st.id for st in builder.states if st.wait is not None}
    assert any(
        any(w in waits for w in range(builder.issue_state[op] + 1, builder.def_state[op]))
        for op in builder.binding.unit_of
    )
    path = tmp_path / "rw.isax"
    path.write_text(WAITS)
    cosim_random(path, tmp_path / "out", 200, 21, TIGHT_NS)


def test_registered_units_cosimulate_bit_exact_and_lint_clean(tmp_path: Path) -> None:
    from aquas.synth.lint import lint

    path = tmp_path / "reg.isax"
    path.write_text(spec())
    res = cosim_random(path, tmp_path / "out", 200, 5, TIGHT_NS)
    verilog = res.verilog_path.read_text()
    for reg in ("mul32_u0_a_q", "mul32_u0_b_q", "mul32_u0_q", "mul32_u1_q"):
        assert reg in verilog
    assert lint(res.verilog_path) == []


def test_dsp_spreads_its_multiplies_over_units_at_the_core_clock_after_closure() -> None:
    """The case that motivated spread and registered units: DSP at VexRiscv's 5.68 ns
    with the delays derated by 1.13 (timing closure's second round). No 16-bit multiply
    (4.07 ns) fits behind the select of all 29 users (41 before vdot32's loop became a
    predicated kernel without prologue and epilogue copies) in 4.68 ns, so each used to
    keep an operator of its own; behind a select of ceil(29 / 2) = 15 they fit. All 29
    share 4 units (the most any state uses), 7 or 8 each, at the cycles of 29 operators."""
    from aquas.synth import timing

    lib = LIB.derated(1.13)
    module = lower_spec_file(ROOT / "examples" / "dsp" / "dsp.isax")
    # the delays of the time, without a two-bank SRAM word's select in front of the
    # multiplies that read one (timing.bank_select_ns). With it, the class runs on split
    # units instead (16 multiplies on 2), and the case the spread was made for is gone
    saved = timing.bank_select_ns
    timing.bank_select_ns = lambda lib, op: 0.0
    try:
        _, plain_fsms = schedule_isaxs(module.clone(), 5.68, lib, share=False)
        builder, fsms = schedule_isaxs(module, 5.68, lib)
    finally:
        timing.bank_select_ns = saved
    sharing, binding = builder.sharing, builder.binding
    assert sharing is not None and binding is not None
    assert sharing.spread == {MUL32: 2} and sharing.registered == set()
    assert len(binding.unit_of) == 29 and binding.dedicated == []
    assert {c.key: n for c, n in binding.counts().items()} == {"mul32": 4}
    per_unit = sorted(len(ops) for ops in binding.users.values())
    assert sum(per_unit) == 29 and per_unit[-1] <= 15 and per_unit[-1] - per_unit[0] <= 1
    assert sorted({_isax_of(op) for op in binding.unit_of}) == [
        "biquad",
        "fir8",
        "vdot16",
        "vdot32",
    ]
    base = {f.isax.sym_name.data: f.latency.at(0) for f in plain_fsms}
    assert {f.isax.sym_name.data: f.latency.at(0) for f in fsms} == base


def test_a_spread_class_cosimulates_bit_exact(tmp_path: Path) -> None:
    """Eight multiplies in eight states of one ISAX at a clock where they fit behind a
    select of 4 users, not of 8: two units of four users each."""
    path = tmp_path / "spr.isax"
    path.write_text(CHAIN)
    # 3.6 ns for the multiply + 0.3 ns for a select of 3 or 4 users (0.4 ns for 8)
    clock = 4.95
    builder, _ = schedule(CHAIN, clock)
    assert builder.sharing is not None and builder.sharing.spread == {MUL32: 2}
    assert builder.binding is not None
    assert sorted(len(v) for v in builder.binding.users.values()) == [4, 4]
    cosim_random(path, tmp_path / "out", 200, 9, clock)


# a chain of eight dependent 16-bit multiplies: one a state, eight users of one class
CHAIN = """
extension spr;

#[opcode(custom0), funct7(3)]
isax chain8(rs1, rs2) -> rd {
    let x0: i32 = sext<i32>(rs1[15:0] as i16) * sext<i32>(rs2[15:0] as i16);
    let x1: i32 = sext<i32>(x0[15:0] as i16) * sext<i32>(rs2[31:16] as i16);
    let x2: i32 = sext<i32>(x1[15:0] as i16) * sext<i32>(rs1[31:16] as i16);
    let x3: i32 = sext<i32>(x2[15:0] as i16) * sext<i32>(x0[31:16] as i16);
    let x4: i32 = sext<i32>(x3[15:0] as i16) * sext<i32>(x1[31:16] as i16);
    let x5: i32 = sext<i32>(x4[15:0] as i16) * sext<i32>(x2[31:16] as i16);
    let x6: i32 = sext<i32>(x5[15:0] as i16) * sext<i32>(x3[31:16] as i16);
    let x7: i32 = sext<i32>(x6[15:0] as i16) * sext<i32>(x4[31:16] as i16);
    return x7 as u32;
}
"""


# a pipelined kernel of 32-bit multiplies at the tight clock: its prologue and epilogue
# copy each multiply once per stage, and those copies share registered units
KERNEL = """
extension kr;
scratchpad a: [u32; 192] partition(cyclic, 3) impl(sram);

#[opcode(custom0), funct7(0)]
isax scan(rs1, rs2) -> rd {
    for i in 0..64 {
        a[3 * i] = rs1 + i;
        a[3 * i + 1] = rs2 ^ i;
        a[3 * i + 2] = rs1 - (rs2 << 3) + i;
    }
    var s: u32 = 0;
    #[pipeline]
    for j in 0..64 {
        let d: u32 = a[3 * j] - a[3 * j + 1];
        s = s + d * d + a[3 * j + 2] * rs2;
    }
    return s;
}
"""


def test_a_pipelined_kernel_keeps_its_multipliers_off_registered_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a registered unit each kernel multiply would wait two states for its product,
    in every iteration: the kernel would take three states, not its II. Its multiplies
    keep operators of their own (the square ``d * d`` a squarer, ``binding.square``).
    The flow makes the loop a predicated kernel, so there is nothing else to share; with
    prologue and epilogue, their copies are registered."""
    import aquas.synth.loop_pipeline as lp
    from aquas.synth.flow import loop_reports

    path = tmp_path / "kr.isax"
    path.write_text(KERNEL)
    _, plain = schedule_isaxs(lower_spec(KERNEL, "kr.isax"), TIGHT_NS, LIB, share=False)
    for predicate in ("auto", "never"):
        monkeypatch.setattr(lp, "pipeline_loops", partial(PIPELINE_LOOPS, predicate=predicate))
        builder, fsms = schedule(KERNEL, TIGHT_NS)
        binding = builder.binding
        [rep] = loop_reports(builder)["scan"]
        assert rep["ii"] == 1 and rep["kernel_states"] == 1, rep
        assert rep["predicated"] == (predicate == "auto")
        kernel_muls = [
            op
            for op in builder.def_state
            if op.name == "arith.muli" and KERNEL_CYCLE_ATTR in op.attributes
        ]
        assert len(kernel_muls) == 2
        assert not any(op in builder.multicycle for op in kernel_muls)
        if predicate == "auto":
            assert binding is None  # two multiplies, both the kernel's own
        else:
            assert binding is not None and binding.registered == frozenset({MUL32})
            assert not any(op in binding.unit_of for op in kernel_muls)
            copies = [op for op in binding.unit_of if op.name == "arith.muli"]
            assert copies
            assert all(builder.multicycle[op].latency == REGISTERED_LATENCY for op in copies)
        # as fast as with an operator for every multiply (no sharing at all)
        assert fsms[0].latency.at(0)[1] <= plain[0].latency.at(0)[1] * 1.1
        cosim_random(path, tmp_path / f"out_{predicate}", 200, 9, TIGHT_NS)
