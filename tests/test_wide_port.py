"""The ISAX memory master at 32, 64 and 128 bits (issue 12 item 3; issue 18 defect 2):
beat counts of packed bursts, the latency range they give, the unit's port widths, and the
target descriptor's bus width (no simulator needed; co-simulation is in
tests/sim/test_wide_cosim.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.flow import build_unit, synthesize
from aquas.synth.fsm import mem_beats
from aquas.synth.oplib import OperatorLibrary
from aquas.target import load_target, parse_target, platform_names

LIB = OperatorLibrary.load()

BURSTS = """
extension b;
scratchpad c8: [u8; 32];
scratchpad c16: [u16; 16];
scratchpad c32: [u32; 16];
scratchpad c64: [u64; 8];
#[opcode(custom0), funct7(0)]
isax r8(rs1) { burst c8[0 +: 10] <- mem[rs1]; }
#[opcode(custom0), funct7(1)]
isax r16(rs1) { burst c16[0 +: 7] <- mem[rs1]; }
#[opcode(custom0), funct7(2)]
isax w32(rs1) { burst mem[rs1] <- c32[0 +: 5]; }
#[opcode(custom0), funct7(3)]
isax r64(rs1) { burst c64[0 +: 3] <- mem[rs1]; }
"""

# (isax, width) -> beats at offsets 0 .. B - eb (step eb), counted by hand: ceil((o + n*eb) / B)
HAND = {
    # 10 bytes
    ("r8", 32): {0: 3, 1: 3, 2: 3, 3: 4},
    ("r8", 64): {0: 2, 6: 2, 7: 3},
    ("r8", 128): {0: 1, 6: 1, 7: 2, 15: 2},
    # 14 bytes
    ("r16", 32): {0: 4, 2: 4},
    ("r16", 64): {0: 2, 2: 2, 4: 3, 6: 3},
    ("r16", 128): {0: 1, 2: 1, 4: 2, 14: 2},
    # 20 bytes
    ("w32", 32): {0: 5},
    ("w32", 64): {0: 3, 4: 3},
    ("w32", 128): {0: 2, 4: 2, 12: 2},
    # 24 bytes: two 32-bit beats per element at W = 32
    ("r64", 32): {0: 6},
    ("r64", 64): {0: 3},
    ("r64", 128): {0: 2, 8: 2},
}


def burst_op(module: object, isax: str) -> aq.BurstReadOp | aq.BurstWriteOp:
    for op in module.walk():  # type: ignore[attr-defined]
        if isinstance(op, aq.IsaxOp) and op.sym_name.data == isax:
            for o in op.body.walk():
                if isinstance(o, aq.BurstReadOp | aq.BurstWriteOp):
                    return o
    raise KeyError(isax)


@pytest.mark.parametrize(("isax", "width"), sorted(HAND))
def test_burst_beats_pack_the_port(isax: str, width: int) -> None:
    op = burst_op(lower_spec(BURSTS, "b.isax"), isax)
    for offset, beats in HAND[(isax, width)].items():
        assert mem_beats(op, width, offset) == beats, offset
    worst = max(HAND[(isax, width)].values())
    assert mem_beats(op, width) == worst


def test_i8_bursts_no_longer_move_one_element_per_32_bit_beat() -> None:
    """Issue 18 defect 2: 10 bytes take 3 beats (4 when unaligned), not 10."""
    unit = build_unit(lower_spec(BURSTS, "b.isax"), 10.0, LIB, bus_width=32)
    (r8,) = [f for f in unit.fsms if f.isax.sym_name.data == "r8"]
    lat = r8.latency
    # a read wait state: beats + L; the beats range over the alignment of the address
    assert (lat.min_fixed, lat.max_fixed, lat.min_mem, lat.max_mem) == (3, 4, 1, 1)
    assert (lat.min_ctl, lat.max_ctl) == (0, 0)


@pytest.mark.parametrize("width", [32, 64, 128])
def test_port_widths_follow_the_bus_width(width: int, tmp_path: Path) -> None:
    res = synthesize(lower_spec(BURSTS, "b.isax"), tmp_path, 10.0, 4, bus_width=width)
    v = res.verilog_path.read_text()

    def decl(name: str) -> str:
        m = re.search(rf"(input|output)\s+(\[\d+:0\])?\s*{name}\b", v)
        assert m is not None, name
        return m.group(2) or ""

    assert decl("mem_rsp_rdata") == f"[{width - 1}:0]"
    assert decl("mem_wdata") == f"[{width - 1}:0]"
    assert decl("mem_wstrb") == f"[{width // 8 - 1}:0]"
    assert decl("mem_req_size") == "[2:0]"
    assert decl("mem_req_addr") == "[31:0]"
    assert f"memory master {width} bits wide" in v
    assert all(r["bus_width"] == width for r in res.reports.values())


def test_an_unsupported_bus_width_is_an_error() -> None:
    with pytest.raises(AquasError, match="32, 64 or 128"):
        build_unit(lower_spec(BURSTS, "b.isax"), 10.0, LIB, bus_width=48)


def test_descriptor_bus_width_is_validated_and_passed_to_the_soc() -> None:
    assert load_target(soc="vexriscv").verilog_params()["ISAX_WIDTH"] == 32
    wide = parse_target({"base": "vexriscv", "isax_master": {"bus_width": 64}}, "w.toml")
    assert wide.verilog_params()["ISAX_WIDTH"] == 64
    with pytest.raises(AquasError, match=r"isax_master\.bus_width: Input should be 32, 64 or 128"):
        parse_target({"base": "vexriscv", "isax_master": {"bus_width": 256}}, "w.toml")
    with pytest.raises(AquasError, match=r"l2\.line_bytes \(8\) must be at least an ISAX beat"):
        parse_target(
            {
                "base": "vexriscv",
                "isax_master": {"bus_width": 128},
                "l2": {"enable": True, "line_bytes": 8},
            },
            "w.toml",
        )


def test_the_packaged_wide_variant() -> None:
    assert "vexriscv-wide" in platform_names()
    base, wide = load_target(soc="vexriscv"), load_target("vexriscv-wide", soc="vexriscv")
    assert wide.isax_master.bus_width == 128 and wide.name == "vexriscv"
    assert wide.verilog_params() == base.verilog_params() | {"ISAX_WIDTH": 128}
    assert wide.cost == base.cost and wide.dcache == base.dcache


SINGLES = Path(__file__).resolve().parent / "sim" / "specs" / "single_lanes.isax"


@pytest.mark.parametrize(
    ("width", "lanes"),
    [(32, [1, 1, 2, 2]), (64, [1, 1, 2, 2, 3, 3]), (128, [1, 1, 2, 2, 3, 3, 4, 4])],
)
def test_single_accesses_select_lanes_by_natural_alignment(width: int, lanes: list[int]) -> None:
    """A single access of ``eb`` bytes is naturally aligned (the golden interpreter stops
    on a misaligned one), so its lane is the address's bits [log2(eb), log2(W/8)): the
    u8 load and store take all of them, each wider element one bit fewer, and an element
    as wide as the beat none (no shifter; an u64 on the 32-bit port is two such beats).
    Co-simulated at each width in tests/sim/test_wide_cosim.py."""
    unit = build_unit(lower_spec_file(SINGLES), 10.0, LIB, bus_width=width)
    got = sorted(
        o.results[0].type.width.data  # type: ignore[attr-defined]
        for o in unit.module.walk()
        if o.name == "comb.extract" and (o.results[0].name_hint or "").endswith("_lane")
    )
    assert got == lanes
    shifts = [
        o
        for o in unit.module.walk()
        if o.name in ("comb.shru", "comb.shl")
        and (o.results[0].name_hint or "").endswith(("_rdata", "_wdata"))
    ]
    assert len(shifts) == len(lanes)
