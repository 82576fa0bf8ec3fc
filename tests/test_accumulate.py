"""Accumulator adders (synth/binding.accumulator_adders): additions of a shared
multiplier's products to held values share one adder, selected on the held operand only;
the schedule is unchanged, the unit bit-exact against the interpreter and lint clean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aquas.spec.frontend import lower_spec
from aquas.spec.subset import keep_isaxs
from aquas.synth.binding import UnitClass
from aquas.synth.flow import build_unit
from aquas.synth.oplib import OperatorLibrary

ROOT = Path(__file__).resolve().parents[1]
LIB = OperatorLibrary.load()

# one multiplier (mul_units(1)): mac3's three products come one a cycle, each added to
# its own accumulator (a state register), the last with the product as the first operand;
# chain's sum feeds an XOR in its own cycle, which at 10 ns leaves room for the select
MACC = """
extension macc;
state s0: i64 = 0;
state s1: i64 = 0;
state s2: i64 = 0;

#[opcode(custom0), funct7(1), mul_units(1)]
isax mac3(rs1, rs2) -> rd {
    let x: i64 = sext<i64>(rs1 as i32);
    let y: i64 = sext<i64>(rs2 as i32);
    s0 = s0 + x * y;
    s1 = s1 + x * x;
    s2 = (y * y) + s2;
    return rs1 ^ rs2;
}

#[opcode(custom0), funct7(2), mul_units(1)]
isax chain(rs1, rs2) -> rd {
    let x: i64 = sext<i64>(rs1 as i32);
    let t: i64 = s0 + x * x;
    return trunc<u32>(t ^ x);
}

#[opcode(custom0), funct7(3)]
isax peek(rs1) -> rd {
    return trunc<u32>(s1 ^ (s2 >> 32) ^ s0);
}
"""


def _isax_of(op: object) -> str:
    from aquas.dialects import aquas as aq

    p = op.parent_op()  # type: ignore[attr-defined]
    while not isinstance(p, aq.IsaxOp):
        p = p.parent_op()
    return p.sym_name.data


def test_products_added_to_held_values_share_one_adder() -> None:
    unit = build_unit(lower_spec(MACC, "macc.isax"), 10.0, LIB)
    users = unit.adders.users
    assert list(users) == [(UnitClass("add", 64), 0)]
    ops = users[(UnitClass("add", 64), 0)]
    assert [_isax_of(op) for op in ops] == ["mac3"] * 3 + ["chain"]
    # one a state: the products of the one multiplier
    homes = [next(s for s in unit.states if op in s.ops).id for op in ops]
    assert len(set(homes)) == 4
    # s2 = (y * y) + s2: the product reaches the adder second like the others
    assert [op in unit.adders.swapped for op in ops] == [False, False, True, False]
    assert len(re.findall(r"\badd64_u0\b = comb\.add", unit.circt_text)) == 1


def test_the_schedule_is_that_without_the_shared_adder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The binding is made after scheduling: the same states and cycles as the unit
    whose additions keep adders of their own."""
    from aquas.synth import fsm
    from aquas.synth.binding import Binding

    shared = build_unit(lower_spec(MACC, "macc.isax"), 10.0, LIB)
    monkeypatch.setattr(fsm, "accumulator_adders", lambda *a, **k: Binding())
    plain = build_unit(lower_spec(MACC, "macc.isax"), 10.0, LIB)
    assert shared.adders.users and not plain.adders.users
    assert [(s.id, s.isax, len(s.ops)) for s in shared.states] == [
        (s.id, s.isax, len(s.ops)) for s in plain.states
    ]
    assert {f.isax.sym_name.data: f.latency.at(0) for f in shared.fsms} == {
        f.isax.sym_name.data: f.latency.at(0) for f in plain.fsms
    }
    assert len(re.findall(r"= comb\.add", shared.circt_text)) < len(
        re.findall(r"= comb\.add", plain.circt_text)
    )


def test_pointcloud_covariance_accumulates_on_one_adder() -> None:
    from aquas.reencode import spec_for_target
    from aquas.target import load_target

    target = load_target(soc="vexriscv")
    module, _ = spec_for_target(ROOT / "examples/pointcloud/pointcloud.isax", target, strict=False)
    keep_isaxs(module, ["vcovmat3d"])
    unit = build_unit(module, 5.68, LIB)
    # the accumulations of the one 64-bit unit's products in the predicated kernel (since
    # the pipeliner plans for the registered unit, loop_pipeline.registered_unit_op):
    # four of its six, those in the state the product is read from the unit. The other
    # two add products issued in the previous kernel iteration, which the iteration
    # registers take in flight, so they add two registers. There is no epilogue.
    assert {u: len(ops) for u, ops in unit.adders.users.items()} == {(UnitClass("add", 64), 0): 4}


def test_accumulator_adders_cosimulate_bit_exact_and_lint_clean(tmp_path: Path) -> None:
    from aquas.synth.cosim import run_cosim
    from aquas.synth.flow import synthesize
    from aquas.synth.lint import lint

    path = tmp_path / "macc.isax"
    path.write_text(MACC)
    res = synthesize(lower_spec(MACC, str(path)), tmp_path / "out", 10.0, mem_latency=4)
    assert res.unit.adders.users
    assert lint(res.verilog_path) == []
    cs = run_cosim(
        path,
        res.verilog_path,
        res.unit.name,
        cases=64,
        seed=5,
        mode="random",
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    assert all(cs.stats[n]["cases"] == 64 for n in ("mac3", "chain", "peek"))


def test_an_addition_feeding_a_unit_in_its_cycle_is_refused() -> None:
    """A path from the shared adder into a unit's input could close a loop through the
    unit whose products it adds: such an addition keeps its own adder."""
    from xdsl.dialects import arith

    from aquas.synth.binding import Binding, _feeds_unit

    unit = build_unit(lower_spec(MACC, "macc.isax"), 10.0, LIB)
    st = next(s for s in unit.states if s.isax == "chain")
    add = next(op for op in st.ops if isinstance(op, arith.AddiOp))
    xor = next(op for op in st.ops if isinstance(op, arith.XOrIOp))
    mine = set(st.ops)
    assert not _feeds_unit(add, mine, Binding())
    on_unit = Binding(unit_of={xor: (UnitClass("mul", 32), 0)})
    assert _feeds_unit(add, mine, on_unit)
    assert not _feeds_unit(add, mine - {xor}, on_unit)  # another state's op: a register
