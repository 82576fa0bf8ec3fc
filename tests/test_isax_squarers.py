"""Squarers of different ISAXs on one operator (``binding.isax_operators``): one ISAX runs at
a time, so a squarer kept as an operator of its own (a pipelined scan's ``d * d`` at the
core's clock) can serve another ISAX's, behind a multiplexer selected by a register set
when the unit accepts the command. Co-simulation interleaves the ISAXs' calls."""

from __future__ import annotations

import re
from pathlib import Path

from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.flow import schedule_isaxs
from aquas.synth.oplib import OperatorLibrary

from helpers import cosim_random

ROOT = Path(__file__).resolve().parents[1]
LIB = OperatorLibrary.load()
DERATE = 1.2312  # the point cloud's kept timing-closure round on VexRiscv
CLOCK = 5.67

SPEC = """\
extension sqs;
scratchpad xa: [u32; 8] impl(sram);
scratchpad xb: [u32; 8] impl(sram);

#[opcode(custom0), funct7(0)]
isax ssq(rs1, rs2) -> rd {
    burst xa[0 +: 8] <- mem[rs1];
    var t: u32 = 0;
    #[pipeline]
    for i in 0..8 {
        let d: i32 = (xa[i] - rs2) as i32;
        t += (d * d) as u32;
    }
    return t;
}

#[opcode(custom0), funct7(1)]
isax smax(rs1, rs2) -> rd {
    burst xb[0 +: 8] <- mem[rs1];
    var m: u32 = 0;
    var k: u32 = 0;
    #[pipeline]
    for i in 0..8 {
        let d: u32 = rs2 - xb[i];
        let s: u32 = d * d;
        let more: bool = s > m;
        m = select(more, s, m);
        k = select(more, i, k);
    }
    return m ^ k;
}
"""


def _squarers(spec: str, derate: float = DERATE):  # type: ignore[no-untyped-def]
    lib = LIB.derated(derate)
    builder, _ = schedule_isaxs(lower_spec(spec, "sqs.isax"), CLOCK, lib)
    return builder, builder.choose_isax_operators(lib)


def test_the_scans_of_two_isaxs_share_one_squarer() -> None:
    """At the core's clock each kernel keeps its squarer (a shared registered unit would
    hold every iteration for its latency); both squarers fit a cycle with 0.24 ns to
    spare, more than the select's multiplexer (0.12 ns): one squarer serves both."""
    builder, x = _squarers(SPEC)
    assert builder.binding is None or not builder.binding.unit_of
    assert x.units == [(32, 32, ["smax", "ssq"])]
    assert len(x.unit_of) == 2 and x.isaxs() == {"smax", "ssq"}


def test_a_squarer_without_room_for_the_select_keeps_its_operator() -> None:
    """``rs2 ^ xb[i]`` chains before smax's squarer (0.12 ns): 0.12 ns is left in its
    cycle, less than the select's multiplexer needs, so nothing is shared."""
    spec = SPEC.replace("let d: u32 = rs2 - xb[i];", "let d: u32 = rs2 ^ xb[i];")
    _, x = _squarers(spec)
    assert x.units == [] and x.unit_of == {}


def test_shared_squarers_cosimulate_bit_exact_and_lint_clean(tmp_path: Path) -> None:
    from aquas.synth.lint import lint

    path = tmp_path / "sqs.isax"
    path.write_text(SPEC)
    res = cosim_random(path, tmp_path / "out", 200, 5, CLOCK, LIB.derated(DERATE))
    sv = res.verilog_path.read_text()
    assert re.search(r"\bxsq0 = ", sv) and not re.search(r"\bxsq1 = ", sv)
    assert not re.search(r"\b(ssq|smax)_muli\b", sv)  # no squarer of their own
    assert " * " not in sv
    assert lint(res.verilog_path) == []


def test_the_point_clouds_scans_share_their_three_squarers() -> None:
    """v3ddist and vnearest square a point's three coordinate differences in their II-1
    kernels: three squarers instead of six."""
    lib = LIB.derated(DERATE)
    module = lower_spec_file(ROOT / "examples" / "pointcloud" / "pointcloud.isax")
    builder, _ = schedule_isaxs(module, CLOCK, lib)
    x = builder.choose_isax_operators(lib)
    assert x.units == [(32, 32, ["v3ddist", "vnearest"])] * 3


SQUARES = """\
extension squ;

#[opcode(custom0), funct7(0)]
isax sq2(rs1, rs2) -> rd {
    let a: u32 = rs1 * rs1;
    let b: u32 = a ^ rs2;
    let c: u32 = b * b;
    return c + a;
}

#[opcode(custom0), funct7(1)]
isax sqm(rs1, rs2) -> rd {
    let d: u32 = rs1 - rs2;
    let e: u32 = d * d;
    let f: u32 = e + rs2;
    return f ^ e;
}
"""


def test_a_shared_unit_of_squares_only_is_a_squarer(tmp_path: Path) -> None:
    """One shared 32-bit unit serves three squares of two ISAXs: every use squares one
    value, so the unit is a squarer from one operand select (binding.SharedUnits); with a
    product of two values among its users it stays a multiplier. Both bit-exact."""
    from aquas.synth.lint import lint

    for name, spec, squarer in (
        ("squares", SQUARES, True),
        ("mixed", SQUARES.replace("let f: u32 = e + rs2;", "let f: u32 = e * rs2;"), False),
    ):
        path = tmp_path / f"{name}.isax"
        path.write_text(spec)
        res = cosim_random(path, tmp_path / name, 200, 7, CLOCK)
        sv = res.verilog_path.read_text()
        assert re.search(r"\bmul32_u0 = ", sv) and not re.search(r"\bmul32_u1 = ", sv)
        assert (" * " not in sv) == squarer, name
        assert ("mul32_u0_b" in sv) != squarer, name  # a squarer has one operand select
        assert lint(res.verilog_path) == []
