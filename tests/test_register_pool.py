"""Value registers pooled across ISAXs (``FsmBuilder.pooled_registers``): one ISAX runs at a
time and no value register outlives its call, so the k-th register of a width of every
ISAX is one flip-flop row. Co-simulation interleaves the ISAXs' calls in random order, so a
call always finds the pooled registers holding another ISAX's values."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path
from typing import Any

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


def _bits(builder, v, name: str) -> int:  # type: ignore[no-untyped-def]
    """A value register's width: its value's, or a loop counter's narrower one."""
    return int(builder.reg_bits.get(name, v.type.width.data))


def _value_registers(builder) -> dict[str, Counter[int]]:  # type: ignore[no-untyped-def]
    """ISAX -> registers per width, from the registers the builder allocated."""
    per: dict[str, Counter[int]] = {}
    seen = set()
    for v, name in builder.value_regs.items():
        if name in seen:
            continue
        seen.add(name)
        per.setdefault(builder.reg_owner[name], Counter())[_bits(builder, v, name)] += 1
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
    widths = {name: _bits(builder, v, name) for v, name in builder.value_regs.items()}
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


def _states(n: int, wait: frozenset[int] = frozenset()) -> list[Any]:
    """States 2 .. n+1 of ISAX ``t`` in a straight line (``Goto`` the next)."""
    from aquas.synth.fsm import Goto, State

    sts = [State(2 + k, "t") for k in range(n)]
    for a, b in itertools.pairwise(sts):
        a.next = Goto(b.id)
    for st in sts:
        if st.id in wait:
            st.wait = object()
    return sts


def test_conflicts_follow_liveness_across_states() -> None:
    from aquas.synth.fsm import RegisterUse, register_conflicts

    w = {"a": 32, "b": 32, "c": 32, "d": 8}
    owner = dict.fromkeys(w, "t")
    # a: written in 2, last read in 3; b: written at the end of 3, read in 4; so a and b
    # may share. c: written in 2, read in 4: live beside both. d: another width.
    use = RegisterUse(
        reads={"a": {3}, "b": {4}, "c": {4}, "d": {4}},
        kills={"a": {2}, "b": {3}, "c": {2}, "d": {2}},
    )
    got = register_conflicts(_states(3), w, owner, use)
    assert got == {"a": {"c"}, "b": {"c"}, "c": {"a", "b"}, "d": set()}
    # state 3 waits (its writes repeat in every cycle): a, read there, and b, written
    # there, no longer fit one register
    got = register_conflicts(_states(3, wait=frozenset({3})), w, owner, use)
    assert got["a"] == {"b", "c"}


def test_a_loop_keeps_its_registers_live_around_the_back_edge() -> None:
    from aquas.synth.fsm import Goto, LoopInfo, LoopLatch, RegisterUse, register_conflicts

    sts = _states(4)  # 2 init, 3 body, 4 latch (back to 3), 5 after the loop
    info = LoopInfo(None, "iv", [], 0, 4, 1)
    sts[2].next = LoopLatch(info, body=3, exit=5)
    sts[3].next = Goto(1)
    w = {"iv": 32, "x": 32, "y": 32, "z": 32}
    owner = dict.fromkeys(w, "t")
    # iv: set in 2, read and stepped in 4, read in 3; x: made in 3, read in 4 (inside an
    # iteration); y: made in 2, read only after the loop (in 5), so live through it;
    # z: made in 4, read in 5 after the loop
    use = RegisterUse(
        reads={"iv": {3, 4}, "x": {4}, "y": {5}, "z": {5}},
        kills={"iv": {2, 4}, "x": {3}, "y": {2}, "z": {4}},
    )
    got = register_conflicts(sts, w, owner, use)
    assert got["x"] == {"iv", "y"}
    assert got["y"] == {"iv", "x", "z"}
    assert got["z"] == {"iv", "y"}  # written in the latch while iv is still live
    # a register read before anything writes it holds its value through the call
    use.reads["x"] = {2, 4}
    assert register_conflicts(sts, w, owner, use)["x"] == {"iv", "y", "z"}


CHAIN = """
extension chain;

// unrolled loads, each value dead once folded into the running hash
#[opcode(custom0), funct7(1)]
isax fold8(rs1, rs2) -> rd {
    var h: u32 = rs2;
    #[unroll]
    for i in 0..8 {
        h = (h ^ mem<u32>[rs1 + 4 * i]) * 16777619;
    }
    return h;
}

// a loop whose body values live inside one iteration, and a value live across it
#[opcode(custom0), funct7(2)]
isax scan(rs1, rs2) -> rd {
    let k: u32 = mem<u32>[rs2];
    var best: u32 = 0;
    for i in 0..6 {
        let v: u32 = mem<u32>[rs1 + 4 * i] ^ k;
        let m: u32 = v * v + k;
        best = select(m > best, m, best);
    }
    return best + k;
}
"""


def test_registers_of_one_isax_share_when_their_values_never_meet(tmp_path: Path) -> None:
    builder, _ = schedule_isaxs(lower_spec(CHAIN, "chain.isax"), 10.0, OperatorLibrary.load())
    builder.allocate_registers()
    logical = _value_registers(builder)
    assert logical["fold8"][32] >= 16  # 8 loads and 8 hash steps, at least
    spec = tmp_path / "chain.isax"
    spec.write_text(CHAIN)
    res = cosim_random(spec, tmp_path / "out", cases=200, seed=11)
    sv = res.verilog_path.read_text()
    value_rows = {
        n for n in re.findall(r"reg\s+\[31:0\]\s+(\w+);", sv) if n not in ("rs1_q", "rs2_q", "rd_q")
    }
    # across ISAXs alone the unit would keep fold8's registers; within it, values that
    # never meet share rows
    assert len(value_rows) < logical["fold8"][32] // 2, sorted(value_rows)


# Values made by a width extension and read in later states: the extension is wiring
# there, so the narrower operand is held (a load's 32 bits, a byte), not the extended value
EXTEND = """
extension ext;
scratchpad b: [u8; 2];

#[opcode(custom0), funct7(1)]
isax widen(rs1, rs2) -> rd {
    let x: i64 = sext<i64>(mem<i32>[rs1]);
    let y: u64 = zext<u64>(mem<u32>[rs2]);
    b[0] = trunc<u8>(rs1);
    b[1] = trunc<u8>(rs2 >> 3);
    let p: i32 = sext<i32>(b[0] as i8);
    let q: u32 = zext<u32>(b[1]);
    let z: u64 = mem<u64>[rs1 + 8];
    mem<i64>[rs2 + 8] = x * x + (z as i64) + sext<i64>(p * (q as i32));
    return trunc<u32>(y * y + z) ^ (p as u32) ^ q;
}
"""


def test_extended_values_are_held_at_their_narrow_width(tmp_path: Path) -> None:
    from xdsl.dialects import arith
    from xdsl.ir import OpResult

    from aquas.dialects import aquas as aq

    builder, _ = schedule_isaxs(lower_spec(EXTEND, "ext.isax"), 10.0, OperatorLibrary.load())
    builder.allocate_registers()
    held = list(builder.value_regs)
    assert not any(
        isinstance(v, OpResult) and isinstance(v.owner, arith.ExtSIOp | arith.ExtUIOp) for v in held
    )

    # the loads at their own widths (x and y at 32 bits, not 64), the byte reads at 8
    def widths(kind: type) -> list[int]:
        return sorted(
            v.type.width.data  # type: ignore[attr-defined]
            for v in held
            if isinstance(v, OpResult) and isinstance(v.owner, kind)
        )

    assert widths(aq.LoadOp) == [32, 32, 64]
    assert widths(aq.SpmReadOp) == [8, 8]
    path = tmp_path / "ext.isax"
    path.write_text(EXTEND)
    cosim_random(path, tmp_path / "out", 200, 3)


SPM_SPEC = """
extension spool;
scratchpad buf: [u32; 8] partition(cyclic, 8);   // filled by a burst each call
scratchpad acc: [u32; 2] partition(cyclic, 2);   // read before written: kept across calls
scratchpad half: [u32; 4] partition(cyclic, 4);  // two of four elements written

// buf[7] is loaded but never read
#[opcode(custom0), funct7(1)]
isax red(rs1, rs2) -> rd {
    burst buf[0 +: 8] <- mem[rs1];
    let a: u32 = (buf[0] + buf[1]) ^ (buf[2] + buf[3]);
    let b: u32 = (buf[4] + buf[5]) ^ buf[6];
    return a + b + rs2;
}

#[opcode(custom0), funct7(2)]
isax keep(rs1, rs2) -> rd {
    let old: u32 = acc[0] + acc[1];
    acc[0] = rs1;
    acc[1] = rs2 ^ old;
    return old;
}

#[opcode(custom0), funct7(3)]
isax part(rs1, rs2) -> rd {
    half[0] = rs1;
    half[1] = rs2;
    return half[0] ^ half[1] ^ half[2];
}

// many 32-bit values held across wait states
#[opcode(custom0), funct7(4)]
isax vals(rs1, rs2) -> rd {
    let a: u32 = mem<u32>[rs1];
    let b: u32 = mem<u32>[rs1 + 4];
    let c: u32 = mem<u32>[rs1 + 8];
    let d: u32 = mem<u32>[rs1 + 12];
    let e: u32 = mem<u32>[rs2];
    return (a + b) ^ (c + d) ^ (e + rs2) ^ (a * c) ^ (b * d);
}
"""


def test_scratchpads_filled_each_call_pool_with_other_isaxs_registers(tmp_path: Path) -> None:
    """A register scratchpad that every call fills before reading holds nothing from one
    call to the next, like a value register: its elements share flip-flop rows with
    registers of other ISAXs (vmaxarg's 16-word ``mv`` in the point cloud: 480 flip-flops
    fewer). One read before it is written (``acc``), or not written whole (``half``),
    keeps its registers; an element never read (``buf[7]``) is not pooled (it is dead)."""
    from aquas.dialects.aquas import ExtensionOp
    from aquas.synth.fsm import call_local_registers

    module = lower_spec(SPM_SPEC, "spool.isax")
    ext = next(op for op in module.walk() if isinstance(op, ExtensionOp))
    local = call_local_registers(ext)
    assert local == {f"buf_{k}_q": ("red", 32) for k in range(7)}
    builder, _ = schedule_isaxs(module, 10.0, OperatorLibrary.load())
    builder.allocate_registers()
    alias = builder.pooled_registers(None, local)
    assert set(local) <= set(alias)  # all seven share a row with another ISAX's register
    owners = {name: builder.reg_owner.get(name, "red") for name in alias}
    rows: dict[str, list[str]] = {}
    for name, row in alias.items():
        rows.setdefault(row, []).append(owners[name])
    for row, who in rows.items():
        assert len(who) == len(set(who)), (row, who)  # never two of one ISAX

    spec = tmp_path / "spool.isax"
    spec.write_text(SPM_SPEC)
    res = cosim_random(spec, tmp_path / "out", cases=200, seed=11)
    sv = res.verilog_path.read_text()
    assert not re.search(r"\bbuf_\d_q\b", sv)
    assert re.search(r"\bacc_0_q\b", sv) and re.search(r"\bhalf_2_q\b", sv)


def test_a_resident_burst_keeps_its_scratchpad_registers() -> None:
    """A burst the unit may skip when the scratchpad still holds its bytes (set by the
    resident plan) leaves data for the next call: not pooled."""
    from xdsl.dialects.builtin import UnitAttr

    from aquas.dialects import aquas as aq
    from aquas.synth.fsm import RESIDENT_ATTR, call_local_registers

    module = lower_spec(SPM_SPEC, "spool.isax")
    ext = next(op for op in module.walk() if isinstance(op, aq.ExtensionOp))
    burst = next(op for op in module.walk() if isinstance(op, aq.BurstReadOp))
    burst.attributes[RESIDENT_ATTR] = UnitAttr()
    assert call_local_registers(ext) == {}
