"""Multiplies by a constant: the narrowing keeps the constant a constant, and the datapath
builds the product from the constant's signed digits where they are fewer than its one
bits (``HwBuilder.mul_const``, ``timing.const_mul_terms``). Kyber's Barrett reduction
multiplies by 1290167 (15 one bits, 7 signed digits); the narrowing used to turn the
constant into a truncation, which the state machine held in a register, so the product
was built as a data-by-data multiplier."""

from __future__ import annotations

import re
from pathlib import Path

from xdsl.dialects import arith

from aquas.spec.frontend import lower_spec
from aquas.synth.narrow import narrow_arith

ROOT = Path(__file__).resolve().parent.parent

# x < 2^28 (as the NTT's products are); the quotient estimate, the remainder and the
# product by 3303 (6 signed digits, 8 one bits) come back in rd; by 3329 (no shorter
# form) stays a multiply
SPEC = """extension barrett;
#[opcode(custom0), funct7(0)]
isax reduce(rs1, rs2) -> rd {
    let x: u32 = rs1 & 0xFFFFFFF;
    let t: u32 = trunc<u32>((zext<u64>(x) * 1290167) >> 32);
    let r: u32 = x - t * 3329;
    let y: u32 = (rs2 & 0xFFF) * 3303;
    return (r ^ (y << 12)) + t;
}
"""


def test_a_narrowed_multiply_by_a_constant_keeps_a_constant_operand() -> None:
    module = lower_spec(SPEC, "b.isax")
    assert narrow_arith(module) > 0
    muls = [op for op in module.walk() if isinstance(op, arith.MuliOp)]
    assert muls
    for op in muls:
        assert any(isinstance(v.owner, arith.ConstantOp) for v in op.operands), op
    assert not any(
        isinstance(op, arith.TruncIOp) and isinstance(op.input.owner, arith.ConstantOp)
        for op in module.walk()
    )


def test_constant_products_by_signed_digits_cosimulate_bit_exact(tmp_path: Path) -> None:
    from aquas.synth.cosim import run_cosim
    from aquas.synth.flow import synthesize
    from aquas.synth.lint import lint

    path = tmp_path / "barrett.isax"
    path.write_text(SPEC)
    res = synthesize(lower_spec(SPEC, str(path)), tmp_path / "out", 10.0, mem_latency=4)
    assert lint(res.verilog_path) == []
    text = res.verilog_path.read_text()
    # 1290167 and 3303 by their digits: shifted terms subtracted, no multiply by them
    assert not re.search(r"\*\s*\d+'h13AFB7", text)
    assert not re.search(r"\*\s*\d+'hCE7", text)
    assert re.search(r"_neg\b", text)
    assert re.search(r"\*\s*\d+'hD01", text)  # 3329 = 0xD01 is a multiply
    cs = run_cosim(
        path,
        res.verilog_path,
        res.unit.name,
        cases=200,
        seed=11,
        mode="random",
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    assert cs.stats["reduce"]["cases"] == 200
