"""The logic in front of a cycle's datapath that the scheduler used to leave out, found on
Kyber's first timing-closure round (OSU018, 5.67 ns), which OpenSTA failed by 0.31 ns:

* a shared unit's operand select was driven by the state decode (``state_q == k``, a
  7-bit compare and its fan-out buffers: about 0.9 ns). The select is now driven by a
  flip-flop per state loaded with ``state_next == k`` (``UnitGenerator.selects``);
* a multi-bank SRAM read's word is selected by the registered bank index, whose fan-out
  to every bit of every bank ABC buffers (``timing.bank_select_ns``).
"""

from __future__ import annotations

import re
from pathlib import Path

from xdsl.dialects import arith

from aquas.dialects import aquas as aq
from aquas.spec.frontend import lower_spec
from aquas.synth.fsm import spm_banks
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.prepare import prepare
from aquas.synth.timing import BANK_FANOUT_LEVELS, bank_select_ns, op_delay

from helpers import cosim_random

LIB = OperatorLibrary.load()

# ``a[i]`` may come from either bank of ``a``; ``a[2 * i]`` only from bank 0
BANKS = """
extension banks;
scratchpad a: [u32; 32] partition(cyclic, 2) impl(sram);

#[opcode(custom0), funct7(0)]
isax mix(rs1, rs2) -> rd {
    for k in 0..32 {
        a[k] = rs1 + 0x9e3779b9 * k;
    }
    var s: u32 = 0;
    for i in 0..16 {
        s += a[i] * rs2;
        s ^= a[2 * i] * (rs2 + 1);
    }
    return s;
}
"""

# three ISAXs whose 32-bit products share multipliers (the 10 % rule keeps them shared)
SHARED = """
extension share;

#[opcode(custom0), funct7(0)]
isax p1(rs1, rs2) -> rd {
    return (rs1 * rs2) ^ ((rs1 + 7) * (rs2 ^ 3));
}

#[opcode(custom0), funct7(1)]
isax p2(rs1, rs2) -> rd {
    return (rs1 ^ 0x55) * (rs2 + rs1);
}

#[opcode(custom0), funct7(2)]
isax p3(rs1, rs2) -> rd {
    let t: u32 = (rs1 - rs2) * rs2;
    return t * (rs1 | 1);
}
"""


def _muls_by_bank_count(module: object) -> dict[int, list[arith.MuliOp]]:
    out: dict[int, list[arith.MuliOp]] = {}
    for op in module.walk():  # type: ignore[attr-defined]
        if not isinstance(op, arith.MuliOp):
            continue
        reads = [
            v.owner for v in op.operands if isinstance(v.owner, aq.SpmReadOp)
        ]  # prepared IR: the read feeds the multiply directly
        for r in reads:
            out.setdefault(len(spm_banks(r)), []).append(op)
    return out


def test_a_word_from_two_banks_arrives_after_the_bank_select() -> None:
    module = prepare(lower_spec(BANKS, "banks.isax"))
    by_banks = _muls_by_bank_count(module)
    assert set(by_banks) == {1, 2}, by_banks
    levels = BANK_FANOUT_LEVELS + 1 + 1  # fan-out, the AND, one OR for two banks
    for op in by_banks[2]:
        assert bank_select_ns(LIB, op) == LIB.levels_ns(levels)
    for op in by_banks[1]:  # one bank: its port's word, no select
        assert bank_select_ns(LIB, op) == 0.0
    # derated with the library, like every delay
    slow = LIB.derated(1.2, False)
    for op in by_banks[2]:
        assert bank_select_ns(slow, op) == slow.levels_ns(levels)
        assert op_delay(slow, op) > op_delay(LIB, op)
    # wiring passes the word on: a width change of a read costs nothing
    for op in module.walk():
        if isinstance(op, arith.ExtUIOp | arith.TruncIOp):
            assert op_delay(LIB, op) == 0.0


def test_the_bank_select_delays_the_product_in_the_schedule(tmp_path: Path) -> None:
    from aquas.synth import timing
    from aquas.synth.flow import synthesize

    def report(levels: int) -> dict[str, object]:
        old = timing.BANK_FANOUT_LEVELS
        timing.BANK_FANOUT_LEVELS = levels
        try:
            res = synthesize(
                lower_spec(BANKS, "banks.isax"), tmp_path / f"l{levels}", 5.4, mem_latency=2
            )
        finally:
            timing.BANK_FANOUT_LEVELS = old
        return dict(res.reports["mix"])

    # at 5.4 ns a 32-bit multiply (3.6 ns) fits the 4.4 ns a cycle leaves behind the AND
    # and OR of the select (0.2 ns), but not behind ten levels of fan-out as well: the
    # product of the two-bank read then takes a multi-cycle unit, and the ISAX cycles
    near, far = report(0), report(10)
    assert near["multicycle"] == []
    assert [m["op"] for m in far["multicycle"]] == ["arith.muli"]  # type: ignore[union-attr]
    assert far["latency"]["fixed_max"] > near["latency"]["fixed_max"]  # type: ignore[index]


def test_shared_unit_selects_are_flip_flops_loaded_from_the_next_state(tmp_path: Path) -> None:
    from aquas.synth.lint import lint

    path = tmp_path / "share.isax"
    path.write_text(SHARED)
    # co-simulated against the interpreter, 64 random cases per ISAX, no mismatch
    res = cosim_random(path, tmp_path / "out", cases=64, seed=11)
    assert lint(res.verilog_path) == []
    text = res.verilog_path.read_text()
    lines = [ln for ln in text.splitlines() if re.search(r"mul32_u\d+_[ab]_(sel|en)\w* =", ln)]
    assert lines, "no shared multiplier with an operand select"
    assert not any("in_S_" in ln for ln in lines)  # no state compare in front of the unit
    flags = set(re.findall(r"\b(s_\w+_sel_q)\b", "\n".join(lines)))
    assert len(flags) == 4  # p1, p2 and p3's two states
    nxt = re.findall(r"\bstate_q <= (\w+);", text)
    assert len(nxt) == 1
    for flag in flags:
        # a register per state, loaded with the compare of the state register's next value
        assert re.search(rf"reg\s+{flag};", text), flag
        assert re.search(rf"{flag} <= {flag[:-2]}_n;", text), flag
        assert re.search(rf"{flag[:-2]}_n = {nxt[0]} == S_", text), flag
