"""The lowered extension printed back as an .isax spec (aquas/spec/printer.py): the text
lowers again, and the module it gives behaves as the original on the golden interpreter
(rd and memory over random calls that share state), before and after the interface plans."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from aquas.cli import main
from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.interpreter import find_extension
from aquas.spec.frontend import lower_spec_file
from aquas.spec.printer import print_spec
from tests.helpers import wrap_isax
from tests.plan_harness import assert_same_behaviour

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted((ROOT / "examples").glob("*/*.isax")) + sorted(
    (ROOT / "examples").glob("*/naive/*.isax")
)


def _reprinted(spec: Path, tmp_path: Path) -> Path:
    out = tmp_path / "printed.isax"
    out.write_text(print_spec(lower_spec_file(spec)))
    return out


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_every_example_prints_and_behaves_the_same(spec: Path, tmp_path: Path) -> None:
    printed = _reprinted(spec, tmp_path)
    assert (
        assert_same_behaviour(lower_spec_file(spec), lower_spec_file(printed), calls=200, seed=3)
        >= 100
    )


@pytest.mark.parametrize("name", ["pointcloud", "dsp"])
def test_the_plans_result_prints_as_a_spec_that_behaves_as_the_naive_one(
    name: str, tmp_path: Path
) -> None:
    naive = ROOT / f"examples/{name}/naive/{name}.isax"
    plan = tmp_path / "plan.isax"
    r = CliRunner().invoke(
        main,
        [
            *("synth", str(naive), "--clock-ns", "10", "--no-yosys", "--no-lint"),
            *("-o", str(tmp_path / "u"), "--emit-plan-isax", str(plan)),
        ],
    )
    assert r.exit_code == 0, r.output
    text = plan.read_text()
    # the naive spec has no burst and no scratchpad; the plans added both
    assert "burst" not in naive.read_text() and "burst " in text and "scratchpad " in text
    assert (
        assert_same_behaviour(lower_spec_file(naive), lower_spec_file(plan), calls=200, seed=4)
        >= 100
    )


def test_signed_operations_keep_their_signedness(tmp_path: Path) -> None:
    # every value prints as uN; the signed shift, division, remainder and comparison
    # reinterpret their operands as iN
    body = """
    let a: i32 = rs1 as i32;
    let b: i32 = rs2 as i32;
    let q: i32 = a / b;
    let r: i32 = a % b;
    let s: i32 = a >> 3;
    let lt: bool = a < b;
    let w: i64 = sext<i64>(a) * sext<i64>(b);
    return trunc<u32>(w >> 32) ^ (q as u32) ^ (r as u32) ^ (s as u32) ^ zext<u32>(lt);
    """
    spec = tmp_path / "signed.isax"
    spec.write_text(wrap_isax(body))
    text = print_spec(lower_spec_file(spec))
    assert " as i32) / (" in text and " as i32) % (" in text and " as i32) >> " in text
    assert " as i32) < (" in text and " as i64) >> " in text
    printed = _reprinted(spec, tmp_path)
    assert (
        assert_same_behaviour(lower_spec_file(spec), lower_spec_file(printed), calls=300, seed=5)
        >= 250
    )


def test_a_loop_that_swaps_its_values_prints_a_swap(tmp_path: Path) -> None:
    # a, b = b, a: the loop yields its own two arguments crosswise, so the printed
    # assignments must read both old values before either is assigned
    body = """
    var a: u32 = rs1;
    var b: u32 = rs2;
    for i in 0..5 {
        let old: u32 = a;
        a = b;
        b = old;
    }
    return a ^ (b << 1);
    """
    spec = tmp_path / "swap.isax"
    spec.write_text(wrap_isax(body))
    printed = _reprinted(spec, tmp_path)
    assert (
        assert_same_behaviour(lower_spec_file(spec), lower_spec_file(printed), calls=100, seed=6)
        == 100
    )


def test_rd_written_before_the_end_is_refused(tmp_path: Path) -> None:
    # the language's `return` is the last statement; IR with an op after aquas.write_rd
    # (a read of rs1 appended) has no spec form, and is refused rather than reordered
    spec = tmp_path / "t.isax"
    spec.write_text(wrap_isax("return rs1 + rs2;"))
    module = lower_spec_file(spec)
    isax = next(find_extension(module).isaxs())
    assert isinstance(isax.body.block.last_op, aq.WriteRdOp)
    isax.body.block.add_op(aq.ReadRs1Op())
    with pytest.raises(AquasError, match="writes rd before its last op"):
        print_spec(module)
