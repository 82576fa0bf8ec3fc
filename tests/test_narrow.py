"""``aquas-narrow-arith`` (synth/narrow.py): the widths it derives, the widths it gives the
operators, and the same results as the spec on the golden interpreter."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, ModuleOp

from aquas.interpreter import execute, find_extension
from aquas.passes import PASSES
from aquas.spec.frontend import lower_spec_file
from aquas.synth.narrow import narrow_arith
from aquas.synth.prepare import prepare
from tests.plan_harness import assert_same_behaviour

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "tests/sim/specs/narrow.isax"
EXAMPLES = sorted((ROOT / "examples").rglob("*.isax"))


def widths(m: ModuleOp, isax: str, kind: type) -> list[int]:
    body = next(i for i in find_extension(m).isaxs() if i.sym_name.data == isax)
    out = []
    for o in body.walk():
        if isinstance(o, kind):
            t = o.results[0].type
            assert isinstance(t, IntegerType)
            out.append(t.width.data)
    return out


def test_the_pass_is_registered() -> None:
    assert "aquas-narrow-arith" in PASSES


def test_each_operator_gets_the_width_its_values_need() -> None:
    m = lower_spec_file(SPEC)
    assert widths(m, "dot4s", arith.MuliOp).count(16) == 0
    assert narrow_arith(m) == 10
    # sext(i8) * sext(i8): 8 + 8 bits; the shift amounts 8 * k stay 32-bit (k: the counter)
    assert sorted(widths(m, "dot4s", arith.MuliOp)) == [16, 32, 32]
    # i8 * (u8 as signed: 9 bits) = 17, 200 (9 bits) * i8 = 17; their difference 18;
    # u16 * u16 = 32 unsigned, h * 3 = 18, the sum 33
    assert sorted(widths(m, "mixed", arith.MuliOp)) == [17, 17, 18, 32]
    assert widths(m, "mixed", arith.SubiOp) == [18]
    assert widths(m, "mixed", arith.AddiOp) == [33]
    # i32 - i32 = 33 bits, u16 - u16 = 18; 33 x 33 needs 66 > 64 bits: stays; the select of
    # both (33) times e (18) = 51
    assert widths(m, "sqdiff", arith.SubiOp) == [33, 18]
    assert sorted(widths(m, "sqdiff", arith.MuliOp)) == [51, 64]
    assert narrow_arith(m) == 0  # nothing left to narrow


def _edge(rng: random.Random) -> int:
    return rng.choice(
        [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]
        + [rng.getrandbits(32)] * 4
    )


def test_the_narrowed_extension_computes_what_the_spec_says() -> None:
    spec, narrowed = lower_spec_file(SPEC), lower_spec_file(SPEC)
    assert narrow_arith(narrowed) > 0
    want = {i.sym_name.data: i for i in find_extension(spec).isaxs()}
    got = {i.sym_name.data: i for i in find_extension(narrowed).isaxs()}
    rng = random.Random(7)
    for name in want:
        for _ in range(700):
            rs1, rs2 = _edge(rng), _edge(rng)
            a, b = execute(want[name], rs1, rs2).rd, execute(got[name], rs1, rs2).rd
            assert a == b, f"{name}({rs1:#x}, {rs2:#x}): {b:#x}, spec {a:#x}"


@pytest.mark.parametrize("spec", EXAMPLES, ids=[f"{p.parent.name}/{p.stem}" for p in EXAMPLES])
def test_every_example_keeps_its_behaviour(spec: Path) -> None:
    narrowed = lower_spec_file(spec)
    narrow_arith(narrowed)
    assert assert_same_behaviour(lower_spec_file(spec), narrowed, calls=120, seed=3) >= 60


def test_synthesis_prepares_with_it() -> None:
    m = prepare(lower_spec_file(ROOT / "examples/llm/llm.isax"))
    # dot4_i8: the four int8 products are 8 x 8 multipliers (16 bits), not 32 x 32
    assert widths(m, "dot4_i8", arith.MuliOp) == [16, 16, 16, 16]
