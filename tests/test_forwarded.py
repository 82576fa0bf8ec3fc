"""Forwarded scratchpads (``fsm.forwarded_scratchpads``): a register scratchpad that only
stages values for burst writes gets no flip-flops of its own; its bursts read the registers
already holding the values. The point cloud's ``vcovmat3d`` stages its six 64-bit sums so
(the store coalescing plan's buffer); other uses keep their buffer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.dialects import scf

from aquas.interpreter import find_extension
from aquas.spec.frontend import lower_spec
from aquas.synth.cosim import registerless_scratchpads
from aquas.synth.flow import schedule_isaxs
from aquas.synth.fsm import forwarded_scratchpads
from aquas.synth.oplib import OperatorLibrary

from helpers import cosim_random

ROOT = Path(__file__).resolve().parents[1]
# at the core's clock with the delays derated as timing closure does: the 64-bit multiply
# is a split unit whose product the next kernel iteration takes in flight
LIB = OperatorLibrary.load().derated(1.2312)
CLOCK = 5.67

SPEC = """
extension fwd;
scratchpad out: [u32; 4];
scratchpad acc: [u64; 3];
scratchpad src: [u32; 32] partition(cyclic, 2) impl(sram);

// values of every kind staged: a sum, a product, an operand, a constant
#[opcode(custom0), funct7(0)]
isax stage4(rs1, rs2) -> rd {
    let a: u32 = mem<u32>[rs1];
    let b: u32 = mem<u32>[rs1 + 4];
    out[0] = a + b;
    out[1] = a * b;
    out[2] = rs2;
    out[3] = 7;
    burst mem[rs2 + 8] <- out[0 +: 4];
    return a - b;
}

// the results of a pipelined loop on one split 64-bit multiplier (as vcovmat3d's)
#[opcode(custom0), funct7(1), mul_units(1)]
isax sums(rs1, rs2) -> rd {
    burst src[0 +: 32] <- mem[rs1];
    var s: i64 = 0;
    var t: i64 = 0;
    var u: i64 = 0;
    #[pipeline]
    for i in 0..16 {
        let x: i64 = sext<i64>(src[2 * i] as i32) - 3;
        let y: i64 = sext<i64>(src[2 * i + 1] as i32);
        s += x * x;
        t += x * y;
        u += y * y;
    }
    acc[2] = u as u64;
    acc[0] = s as u64;
    acc[1] = t as u64;
    burst mem[rs2] <- acc[0 +: 3];
    return trunc<u32>(s ^ t ^ u);
}
"""

KEPT = """
extension kept;
scratchpad r: [u32; 2];
scratchpad twice: [u32; 2];
scratchpad looped: [u32; 2];
scratchpad part: [u32; 2];

#[opcode(custom0), funct7(0)]
isax a(rs1, rs2) -> rd {
    r[0] = rs1;
    r[1] = rs2;
    burst mem[rs1] <- r[0 +: 2];
    return r[1];                      // read as an element: a buffer
}

#[opcode(custom0), funct7(1)]
isax b(rs1, rs2) {
    twice[0] = rs1;
    twice[1] = rs2;
    twice[0] = rs2;                   // written twice
    burst mem[rs1] <- twice[0 +: 2];
}

#[opcode(custom0), funct7(2)]
isax c(rs1, rs2) {
    for i in 0..2 {
        looped[i] = rs1 + i;          // written in a loop
    }
    burst mem[rs1] <- looped[0 +: 2];
}

#[opcode(custom0), funct7(3)]
isax d(rs1, rs2) {
    part[0] = rs1;                    // element 1 is not written in the call
    burst mem[rs1] <- part[0 +: 2];
}
"""


def _builder(text: str, name: str):  # type: ignore[no-untyped-def]
    builder, _ = schedule_isaxs(lower_spec(text, name), CLOCK, LIB)
    builder.allocate_registers()
    return builder


def test_which_scratchpads_are_forwarded() -> None:
    b = _builder(SPEC, "fwd.isax")
    assert set(b.forwarded) == {"out", "acc"}
    assert sorted(b.forwarded["out"]) == [0, 1, 2, 3]
    assert sorted(b.forwarded["acc"]) == [0, 1, 2]
    # the loop's results: the bursts read them from the loop's iteration registers
    for v in b.forwarded["acc"].values():
        assert isinstance(v.owner, scf.ForOp) and v in b.value_regs
    assert forwarded_scratchpads(find_extension(lower_spec(KEPT, "kept.isax"))) == {}


def test_the_point_clouds_sums_have_no_buffer() -> None:
    from aquas.plans.choose import apply_interface
    from aquas.spec.frontend import lower_spec_file
    from aquas.target import load_target

    module = lower_spec_file(ROOT / "examples/pointcloud/pointcloud.isax")
    target = load_target(soc="vexriscv")
    apply_interface(module, "auto", 5.68, target.isax_mem_latency, target=target)
    fwd = forwarded_scratchpads(find_extension(module))
    assert set(fwd) == {"vcovmat3d_st0"} and sorted(fwd["vcovmat3d_st0"]) == list(range(6))


def _cosim(tmp_path: Path, text: str, name: str, seed: int) -> str:
    """200 random cases per ISAX of the spec ``text`` against the interpreter, lint
    clean; the unit's Verilog."""
    from aquas.synth.lint import lint

    spec = tmp_path / name
    spec.write_text(text)
    res = cosim_random(spec, tmp_path / "out", cases=200, seed=seed, clock_ns=CLOCK, lib=LIB)
    assert lint(res.verilog_path) == []
    return res.verilog_path.read_text()


@pytest.mark.sim
def test_forwarded_bursts_write_the_staged_values(tmp_path: Path) -> None:
    sv = _cosim(tmp_path, SPEC, "fwd.isax", 5)
    regs = set(re.findall(r"reg\s+(?:\[\d+:0\]\s+)?(\w+);", sv))
    assert not {r for r in regs if r.startswith(("out_", "acc_"))}, regs
    # the header tells the test benches which scratchpads are not kept across calls: the
    # forwarded ones, whose element registers are missing, and the call-local SRAM `src`
    assert registerless_scratchpads(sv) == ["acc", "out", "src"]


@pytest.mark.sim
def test_kept_buffers_still_work(tmp_path: Path) -> None:
    sv = _cosim(tmp_path, KEPT, "kept.isax", 6)
    # looped and part keep element registers; r and twice are filled by every call
    # before they are read, so theirs share flip-flop rows (fsm.call_local_registers)
    for name in ("looped_0_q", "looped_1_q", "part_0_q", "part_1_q"):
        assert re.search(rf"reg\s+\[31:0\]\s+{name};", sv), name
    assert re.search(r"reg\s+\[31:0\]\s+pool_w32_1_q;", sv)


def test_a_missing_element_register_fails_the_bench() -> None:
    """The test benches compare every scratchpad element after each case. A scratchpad
    with no element register at all is skipped only when the unit's header lists it
    (or no ISAX reads it); a single missing element is a dead one (never read)."""
    from types import SimpleNamespace

    from aquas.synth.cosim_tb import spm_handles

    ext = find_extension(lower_spec(KEPT, "kept.isax"))
    part = next(s for s in ext.scratchpads() if s.sym_name.data == "part")
    with pytest.raises(AssertionError, match="no element register of scratchpad part"):
        spm_handles(SimpleNamespace(), part, ["looped"])
    assert spm_handles(SimpleNamespace(), part, ["part"]) == [None, None]
    assert spm_handles(SimpleNamespace(part_0_q="h0"), part, []) == ["h0", None]
