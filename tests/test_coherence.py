"""The coherence plan after an ISAX (aquas.runtime.coherence): the memory an ISAX writes as a
function of its operands, and the choice between whole-cache invalidation and evicting the
written lines. Expected spans are read off the specs by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.interpreter import find_extension
from aquas.runtime.coherence import Span, line_refill_cycles, max_lines, plan, write_footprint
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.target import load_target

ROOT = Path(__file__).resolve().parents[1]
VEX = load_target(soc="vexriscv")


def _isaxs(text: str) -> dict:
    ext = find_extension(lower_spec(text, "t.isax"))
    return {i.sym_name.data: i for i in ext.isaxs()}


def test_pointcloud_footprints() -> None:
    ext = find_extension(lower_spec_file(ROOT / "examples/pointcloud/pointcloud.isax"))
    got = {i.sym_name.data: write_footprint(i) for i in ext.isaxs()}
    assert got == {
        "v3ddist": (Span("rs2", 192, 256, 4),),  # burst of 16 u32 at rs2 + 192
        "vcovmat3d": (Span("rs2", 16, 64, 8),),  # six i64 at rs2 + 16 .. rs2 + 56
        "vgemv4": (Span("rs2", 0, 16, 4),),  # y[r] at rs2 + 4r, r in 0..4 (a loop)
        "vmaxarg": (Span("rs2", 0, 4, 4),),
        "vnearest": (),  # writes no memory
    }


SPECS = """
extension t;
scratchpad s: [u16; 64];
#[opcode(custom0), funct7(0)]
isax strided(rs1, rs2) {
    for i in 0..8 { mem<u32>[rs1 + 12 * i + 4] = rs2; }
}
#[opcode(custom0), funct7(1)]
isax down(rs1, rs2) {
    for i in 0..4 { mem<u16>[rs1 - 2 * i] = trunc<u16>(rs2); }
}
#[opcode(custom0), funct7(2)]
isax two_bases(rs1, rs2) {
    mem<u8>[rs1 + 3] = trunc<u8>(rs2);
    burst mem[rs2 - 8] <- s[0 +: 10];
}
#[opcode(custom0), funct7(3)]
isax indirect(rs1, rs2) {
    mem<u32>[mem<u32>[rs1]] = rs2;
}
#[opcode(custom0), funct7(4)]
isax absolute(rs1) {
    mem<u32>[4096] = rs1;
}
#[opcode(custom0), funct7(5)]
isax big(rs1) {
    burst mem[rs1] <- s[0 +: 64];
    burst mem[rs1 + 1920] <- s[0 +: 64];
}
#[opcode(custom0), funct7(6)]
isax reads(rs1) -> rd {
    return mem<u32>[rs1];
}
"""


def test_footprints_of_loops_bases_and_unknown_addresses() -> None:
    isaxs = _isaxs(SPECS)
    fp = {n: write_footprint(i) for n, i in isaxs.items()}
    assert fp["strided"] == (Span("rs1", 4, 4 + 12 * 7 + 4, 4),)
    assert fp["down"] == (Span("rs1", -6, 2, 2),)
    assert fp["two_bases"] == (Span("rs1", 3, 4, 1), Span("rs2", -8, 12, 2))
    assert fp["indirect"] is None
    assert fp["absolute"] == (Span("", 4096, 4100, 4),)
    assert fp["big"] == (Span("rs1", 0, 2048, 2),)
    assert fp["reads"] == ()


def test_max_lines_is_the_worst_alignment() -> None:
    assert max_lines(Span("rs1", 0, 4, 4), 32) == 1  # an aligned word is in one line
    assert max_lines(Span("rs1", 0, 4, 1), 32) == 2  # four bytes may straddle two
    assert max_lines(Span("rs1", 0, 32, 32), 32) == 1
    assert max_lines(Span("rs1", 0, 32, 4), 32) == 2
    assert max_lines(Span("rs1", 0, 64, 4), 32) == 3
    assert max_lines(Span("rs1", 0, 64, 8), 32) == 3
    assert max_lines(Span("rs1", 0, 0, 4), 32) == 0


def test_plans_on_vexriscv() -> None:
    isaxs = _isaxs(SPECS)
    miss = 1 + 10 + 8 + 1 + 1  # request, latency, 8 words, the load and its address
    assert (VEX.memory.latency, VEX.dcache.line_bytes, VEX.cost.load, VEX.cost.alu) == (
        10,
        32,
        1,
        1,
    )
    assert line_refill_cycles(VEX) == miss
    strided = plan(isaxs["strided"], VEX, True)
    assert strided.strategy == "evict-lines"
    assert strided.cycles == 4 * miss  # 88 bytes of aligned words: up to 4 lines
    assert plan(isaxs["indirect"], VEX, True).strategy == "invalidate-all"
    assert "data-dependent" in plan(isaxs["indirect"], VEX, True).reason
    # 2048 bytes is half the 4 KiB cache: 65 lines cost more than the invalidate
    big = plan(isaxs["big"], VEX, True)
    assert big.strategy == "invalidate-all" and "more than an invalidate" in big.reason
    assert plan(isaxs["reads"], VEX, False).strategy == "none"
    forced = VEX.replace(dcache={"coherence": "invalidate-all"})
    assert plan(isaxs["strided"], forced, True).strategy == "invalidate-all"
    # picorv32 has no data cache
    assert plan(isaxs["strided"], load_target(soc="picorv32"), True).strategy == "none"


def test_evict_lines_needs_a_direct_mapped_cache_and_room_in_ram() -> None:
    with pytest.raises(ValueError, match="direct-mapped"):
        VEX.replace(dcache={"coherence": "evict-lines", "ways": 2})
    with pytest.raises(ValueError, match="ram_size"):
        VEX.replace(dcache={"coherence": "evict-lines", "size": 1 << 20})
    two_way = VEX.replace(dcache={"ways": 2})
    isaxs = _isaxs(SPECS)
    p = plan(isaxs["strided"], two_way, True)
    assert p.strategy == "invalidate-all" and "cannot evict" in p.reason
