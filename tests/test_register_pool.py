"""Value registers pooled across ISAXs (``FsmBuilder.pooled_registers``): one ISAX runs at a
time and no value register outlives its call, so the k-th register of a width of every
ISAX is one flip-flop row. Co-simulation interleaves the ISAXs' calls in random order, so a
call always finds the pooled registers holding another ISAX's values."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from aquas.spec.frontend import lower_spec
from aquas.synth.flow import schedule_isaxs
from aquas.synth.oplib import OperatorLibrary

from helpers import cosim_random

SPEC = """
extension pool;
state total: u32 = 0;

// four loads held across their wait states, combined at the end
#[opcode(custom0), funct7(1)]
isax dot2(rs1, rs2) -> rd {
    let a0: u32 = mem<u32>[rs1];
    let a1: u32 = mem<u32>[rs1 + 4];
    let b0: u32 = mem<u32>[rs2];
    let b1: u32 = mem<u32>[rs2 + 4];
    total = total + (a0 * b0 ^ a1 * b1);
    return total + a0 * b0 + a1 * b1;
}

// a loop: induction variable and iteration values in registers
#[opcode(custom0), funct7(2)]
isax mix(rs1, rs2) -> rd {
    var h: u32 = rs2;
    var s: u32 = 0;
    for i in 0..4 {
        let w: u32 = mem<u32>[rs1 + 4 * i];
        h = (h ^ w) * 16777619;
        s = s + w;
    }
    return h ^ s;
}

// 64-bit values: a width of their own
#[opcode(custom0), funct7(3)]
isax wide(rs1, rs2) -> rd {
    let x: u64 = mem<u64>[rs1];
    let y: u64 = mem<u64>[rs2];
    mem<u64>[rs1] = x + y;
    return trunc<u32>((x ^ y) >> 7);
}
"""


def _value_registers(builder) -> dict[str, Counter[int]]:  # type: ignore[no-untyped-def]
    """ISAX -> registers per width, from the registers the builder allocated."""
    per: dict[str, Counter[int]] = {}
    seen = set()
    for v, name in builder.value_regs.items():
        if name in seen:
            continue
        seen.add(name)
        per.setdefault(builder.reg_owner[name], Counter())[v.type.width.data] += 1
    return per


def test_registers_of_different_isaxs_share_flip_flops() -> None:
    builder, _ = schedule_isaxs(lower_spec(SPEC, "pool.isax"), 10.0, OperatorLibrary.load())
    builder.allocate_registers()
    per = _value_registers(builder)
    assert set(per) == {"dot2", "mix", "wide"}
    alias = builder.pooled_registers()
    # every register keeps its own ISAX: no two registers of one ISAX share a row
    rows: dict[str, set[str]] = {}
    for name, row in alias.items():
        owner = builder.reg_owner[name]
        assert owner not in rows.setdefault(row, set()), (name, row)
        rows[row].add(owner)
    # per width, the unit has the registers of its largest ISAX, not their sum
    widths = {name: v.type.width.data for v, name in builder.value_regs.items()}
    physical: Counter[int] = Counter()
    for row in {alias.get(n, n) for n in widths}:
        physical[widths[next(n for n in widths if alias.get(n, n) == row)]] += 1
    for w in {w for c in per.values() for w in c}:
        assert physical[w] == max(c[w] for c in per.values())
    assert physical[32] < sum(c[32] for c in per.values())


def test_pooled_registers_cosimulate(tmp_path: Path) -> None:
    spec = tmp_path / "pool.isax"
    spec.write_text(SPEC)
    res = cosim_random(spec, tmp_path / "out", cases=200, seed=7)
    sv = res.verilog_path.read_text()
    pooled = set(re.findall(r"\bpool_w32_\d+_q\b", sv))
    assert pooled, "no pooled 32-bit register in the Verilog"
