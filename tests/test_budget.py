"""The area estimate (synth/area_model.py) and ``--area-budget`` (synth/budget.py): the
table's fit, the choice of shared and sequential multipliers under a budget, its
diagnostic, and the chosen unit bit-exact against the interpreter."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from xdsl.dialects import comb

from aquas.cli import main
from aquas.diagnostics import AquasError
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.area_model import MUL_SHAPES, AreaModel, partial_products
from aquas.synth.budget import AreaBudget
from aquas.synth.flow import build_unit
from aquas.synth.hwemit import HwBuilder
from aquas.synth.oplib import OperatorLibrary

from helpers import kyber_scalar

ROOT = Path(__file__).resolve().parents[1]
# kyber's register ISAXs (no whole-NTT ISAX): a unit of a few multipliers
(ROOT / "build" / "tests").mkdir(parents=True, exist_ok=True)
KYBER = kyber_scalar(ROOT / "build" / "tests")
LIB = OperatorLibrary.load()
CLOCK = 5.68  # VexRiscv's critical path on OSU018, the default clock
CORE_UM2 = 1_626_806.0  # VexRiscv on OSU018, logic and memory (docs/synthesis.md)


def test_partial_products() -> None:
    assert partial_products(8, 8, 16) == 64  # the full product
    assert partial_products(8, 8, 8) == 36  # the low half: 8 + 7 + ... + 1
    assert partial_products(32, 32, 32) == 528
    assert partial_products(21, 21, 33) == 441 - 36  # 36 bits above bit 32
    assert partial_products(64, 64, 16) == partial_products(16, 16, 16)


def test_the_multiplier_line_fits_every_measured_shape() -> None:
    am = AreaModel.load()
    assert 190 < am.mul_um2_per_pp < 230
    for k, w in MUL_SHAPES:
        measured = am.measured[f"mul_{k}_{w}"]["um2"]
        assert abs(am.mul(k, k, w) / measured - 1) < 0.2, (k, w)
    # the calibration on the example units: operators map smaller in a unit than alone
    assert 0.3 < am.calibration < 1.0


def unit(fraction: float | None):  # type: ignore[no-untyped-def]
    budget = None if fraction is None else AreaBudget(fraction, CORE_UM2, "VexRiscv")
    return build_unit(lower_spec_file(KYBER), CLOCK, LIB, area_budget=budget)


# a 32 x 32 -> 64-bit product in two ISAXs: one multiplier of its own is most of the unit
# (Kyber's scalar ISAXs multiply by constants, by shifts and additions, and share one
# 16 x 16-bit multiplier: the sequential multiplier no longer makes their unit smaller)
WIDE = """extension wide;
#[opcode(custom0), funct7(0)]
isax mulhu(rs1, rs2) -> rd {
    return trunc<u32>((zext<u64>(rs1) * zext<u64>(rs2)) >> 32);
}

#[opcode(custom0), funct7(1)]
isax mulsum(rs1, rs2) -> rd {
    let p: u64 = zext<u64>(rs1) * zext<u64>(rs2);
    return trunc<u32>(p >> 32) + trunc<u32>(p);
}
"""


def test_the_default_unit_gets_an_estimate(tmp_path: Path) -> None:
    from aquas.synth import sta
    from aquas.synth.flow import export_verilog

    u = unit(None)
    est = u.area_estimate
    assert u.area_budget is None
    parts = sum(v for k, v in est.items() if k != "total_um2")
    assert est["total_um2"] == pytest.approx(parts, abs=1.0)
    # one shared multiplier, 16 x 16 -> 32 bits, and three multiplies by 3329 (33, 33 and
    # 17 bits; no shorter signed digits), each costed below half a multiplier of its width;
    # the Barrett multiplies by 1290167 are shifts and additions (timing.const_mul_terms)
    am = AreaModel.load()
    variable = am.calibration * am.mul(16, 16, 32)
    consts = am.calibration * (2 * am.mul(33, 33, 33) + am.mul(17, 17, 17)) / 2
    assert variable < est["multipliers_um2"] < variable + consts
    # within 25 % of the unit's logic area measured on OSU018 by synth/sta.py (the
    # calibration's four example units are within 30 %: docs/synthesis.md, "The area
    # estimate"; this one is about 23 % under)
    v = tmp_path / f"{u.name}.sv"
    v.write_text(export_verilog(u.circt_text))
    measured = sta.measure(v, u.name, CLOCK).logic_area_um2
    assert 0.75 * measured < est["total_um2"] < 1.25 * measured, (est["total_um2"], measured)


def test_the_estimate_folds_what_circt_folds() -> None:
    """An unrolled loop's constant index reaches the unit as index arithmetic and a select
    tree on its bits, and a constant-index write as a decoder compare ANDed into the
    enable: all fold (area_model.fold), so they cost nothing; the same on a run-time
    index costs its muxes and compares."""
    from xdsl.dialects.builtin import IntegerType
    from xdsl.ir import Block

    from aquas.synth.area_model import fold, op_um2

    am = AreaModel.load()

    def priced(index_const: bool) -> float:
        block = Block(arg_types=[IntegerType(1), IntegerType(1), IntegerType(32)])
        clk, rst, rs1 = block.args
        h = HwBuilder(block, clk, rst)
        k = h.binop("comb.mul", h.const(3, 32), h.const(2, 32), "k")  # 2 * k, k = 3
        idx = k if index_const else rs1
        elems = [h.binop("comb.add", rs1, h.const(i + 1, 32), f"e{i}") for i in range(8)]
        read = h.select_tree(idx, elems, "rd")
        at = h.icmp("eq", h.extract(idx, 0, 3), h.const(5, 3), "at5")
        we = h.and_(h.extract(rs1, 0, 1), at, hint="we")
        consts = fold(block.ops)
        assert (read in consts, we in consts) == (False, index_const)
        ops = [o for o in block.ops if o.name in ("comb.mux", "comb.icmp", "comb.and")]
        return sum(op_um2(o, LIB, am, consts)[1] for o in ops)

    assert priced(index_const=True) == 0.0
    assert priced(index_const=False) > 7 * am.cells("mux", LIB.cost("mux", 32).cells)


def test_operand_bits_known_zero_through_selects_and_registers() -> None:
    """A shared unit's operand: an AND-OR select of a 21-bit constant, or a register only
    ever loaded with it (reset 0), has 11 leading zero bits, which Yosys removes; a
    register loaded with a full-width value has none."""
    from xdsl.dialects.builtin import IntegerType
    from xdsl.ir import Block

    from aquas.synth.area_model import effective_bits, high_zeros

    block = Block(arg_types=[IntegerType(1), IntegerType(1), IntegerType(32)])
    clk, rst, rs1 = block.args
    h = HwBuilder(block, clk, rst)
    en = h.extract(rs1, 0, 1)
    barrett = h.const(1290167, 32)  # 21 bits
    sel = h.add(comb.AndOp([h.replicate(en, 32), barrett]), "sel")
    held = h.reg("held", 32, 0)
    h.drive("held", h.mux(en, barrett, held, "held_n"))
    wide = h.reg("wide", 32, 0)
    h.drive("wide", h.mux(en, rs1, wide, "wide_n"))
    hz = high_zeros(block.ops)
    assert [effective_bits(v, hz) for v in (sel, held, wide, rs1)] == [21, 21, 32, 32]


def test_a_budget_the_default_fits_changes_nothing() -> None:
    default = unit(None)
    u = unit(0.5)
    rep = u.area_budget
    assert rep is not None
    assert rep["why"] == "the default fits the budget" and rep["steps"] == []
    assert rep["cycles_chosen"] == rep["cycles_default"]
    assert u.circt_text == default.circt_text


def test_a_tight_budget_trades_cycles_for_area() -> None:
    budget = AreaBudget(0.1, CORE_UM2, "VexRiscv")
    u = build_unit(lower_spec(WIDE, "wide.isax"), CLOCK, LIB, area_budget=budget)
    rep = u.area_budget
    assert rep is not None
    assert rep["default_estimate_um2"] > 0.1 * CORE_UM2  # the default does not fit
    assert rep["chosen_estimate_um2"] <= 0.1 * CORE_UM2
    assert rep["final_estimate_um2"] <= 0.1 * CORE_UM2
    # the 64-bit product goes to the sequential multiplier: both ISAXs slower
    assert any("mul64 multiplies on the sequential multiplier" in c for c in rep["chosen"])
    for name, (_, hi) in rep["cycles_chosen"].items():
        assert hi > rep["cycles_default"][name][1], name
    assert any(s.units for s in u.states)  # a multi-cycle unit in the state machine


def test_a_budget_no_choice_fits_is_a_diagnostic() -> None:
    with pytest.raises(AquasError) as e:
        unit(0.05)
    msg = str(e.value)
    assert "no choice of shared and sequential multipliers fits an area budget of 0.05" in msg
    assert "the smallest estimate is" in msg and "% of the core" in msg


def test_a_later_round_without_a_choice_names_the_smallest_unit_generated() -> None:
    """The point cloud's three project ISAXs at 0.50: the first search's choice (the 32-bit
    multiplies on the sequential multiplier) is estimated by its multipliers under the
    budget, but the unit it generates, with the sequential multiplier's states and
    registers, is larger than the default; so is the second search's, from that unit. The
    diagnostic names the default as the smallest unit generated, with its own estimate,
    and what each choice was estimated at against what it generated. (At 0.54 until the
    pipeliner planned for vcovmat3d's registered unit: its predicated kernel has one copy
    of the operators, and the default unit is smaller.)"""
    from aquas.spec.subset import keep_isaxs

    module = lower_spec_file(ROOT / "examples" / "pointcloud" / "pointcloud.isax")
    keep_isaxs(module, ["v3ddist", "vcovmat3d", "vnearest"])
    default = build_unit(module.clone(), CLOCK, LIB).area_estimate["total_um2"]
    with pytest.raises(AquasError) as e:
        build_unit(module, CLOCK, LIB, area_budget=AreaBudget(0.50, CORE_UM2, "VexRiscv"))
    msg = str(e.value)
    assert f"the smallest unit generated is the default, {default:,.0f} um^2 " in msg
    assert f"({100 * default / CORE_UM2:.1f} % of the core)" in msg
    est, gen = (
        float(x.replace(",", ""))
        for x in re.search(
            r"estimated at ([\d,]+) um\^2 and its unit at ([\d,]+) um\^2", msg
        ).groups()  # type: ignore[union-attr]
    )
    assert est <= 0.50 * CORE_UM2 < default < gen


def test_no_round_returns_a_unit_over_the_budget() -> None:
    """The point cloud's three project ISAXs at 0.54 (0.56 before the pipeliner planned
    for vcovmat3d's registered unit): each round's choice is estimated
    under the budget by the multipliers it changes, and each generates a unit over it.
    The flow used to return the last round's unit (over the budget, and larger than the
    default) as if it fitted; now it refuses, naming the units it generated."""
    from aquas.spec.subset import keep_isaxs

    module = lower_spec_file(ROOT / "examples" / "pointcloud" / "pointcloud.isax")
    keep_isaxs(module, ["v3ddist", "vcovmat3d", "vnearest"])
    budget = AreaBudget(0.54, CORE_UM2, "VexRiscv")
    with pytest.raises(AquasError) as e:
        build_unit(module, CLOCK, LIB, area_budget=budget)
    msg = str(e.value)
    pairs = re.findall(r"estimated at ([\d,]+) um\^2 and its unit at ([\d,]+) um\^2", msg)
    assert pairs, msg
    for est, gen in pairs:
        assert float(est.replace(",", "")) <= budget.um2 < float(gen.replace(",", ""))
    smallest = re.search(r"the smallest unit generated is .*?, ([\d,]+) um\^2", msg)
    assert smallest is not None and float(smallest.group(1).replace(",", "")) > budget.um2


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_bad_budgets_are_refused(value: str) -> None:
    r = CliRunner().invoke(
        main, ["synth", str(KYBER), "--area-budget", value, "--no-yosys", "--no-lint"]
    )
    assert r.exit_code == 2
    assert "--area-budget must be a positive fraction of the core's area" in r.output


@pytest.mark.sim
def test_the_chosen_unit_cosimulates_bit_exact(tmp_path: Path) -> None:
    from aquas.synth.cosim import run_cosim
    from aquas.synth.flow import synthesize
    from aquas.synth.lint import lint

    spec = tmp_path / "wide.isax"
    spec.write_text(WIDE)
    res = synthesize(
        lower_spec(WIDE, str(spec)),
        tmp_path / "out",
        CLOCK,
        mem_latency=4,
        area_budget=AreaBudget(0.1, CORE_UM2, "VexRiscv"),
    )
    assert res.unit.area_budget is not None and res.unit.area_budget["steps"]
    assert lint(res.verilog_path) == []
    cs = run_cosim(
        spec,
        res.verilog_path,
        res.unit.name,
        cases=200,
        seed=13,
        mode="random",
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    assert {k: v["cases"] for k, v in cs.stats.items()} == {"mulhu": 200, "mulsum": 200}
