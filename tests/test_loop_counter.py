"""Loop counters at the width of their range (``fsm.counter_bits``), not of the induction
variable's type: a loop ``0..16`` steps a 6-bit register with a 6-bit incrementer and
compare instead of 32-bit ones. The induction variable's value is the register
zero-extended, and the unit stays bit-exact against the golden interpreter."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aquas.spec.frontend import lower_spec
from aquas.synth.flow import schedule_isaxs
from aquas.synth.fsm import counter_bits
from aquas.synth.oplib import OperatorLibrary

ROOT = Path(__file__).resolve().parent.parent

# the counter doubles as data (n * 3, + k), so a wrong extension or truncation of the
# narrow register shows in the results; 0..8 ends on a power of two, 3..40 step 5 has a
# non-zero start and a last increment (43) past the bound
SPEC = """extension counters;
#[opcode(custom0), funct7(0)]
isax copy8(rs1, rs2) {
    for n in 0..8 {
        mem<u32>[rs2 + 4 * n] = mem<u32>[rs1 + 4 * n] + n * 3;
    }
}

#[opcode(custom0), funct7(1)]
isax stride(rs1, rs2) -> rd {
    var s: u32 = rs2;
    for k in 3..40 step 5 {
        s = s * 5 + k + rs1;
    }
    return s;
}
"""


@pytest.mark.parametrize(
    ("lb", "ub", "step", "width", "bits"),
    [
        (0, 16, 1, 32, 6),  # 0..15, next up to 16: 5 bits and a sign bit
        (0, 8, 1, 32, 5),
        (0, 1, 1, 32, 2),
        (3, 40, 5, 32, 7),  # the last increment is 43
        (100, 101, 1, 32, 8),  # the start is the largest value
        (0, 200, 1, 8, 8),  # never wider than the induction variable
        (-4, 4, 1, 32, 32),  # a negative start keeps the full width
    ],
)
def test_counter_bits(lb: int, ub: int, step: int, width: int, bits: int) -> None:
    assert counter_bits(lb, ub, step, width) == bits


def test_the_counters_are_narrow_registers() -> None:
    builder, _ = schedule_isaxs(lower_spec(SPEC, "c.isax"), 10.0, OperatorLibrary.load())
    assert builder.reg_bits == {"copy8_n_q": 5, "stride_k_q": 7}


def test_narrow_counters_cosimulate_bit_exact_and_lint_clean(tmp_path: Path) -> None:
    from aquas.synth.cosim import run_cosim
    from aquas.synth.flow import synthesize
    from aquas.synth.lint import lint

    path = tmp_path / "counters.isax"
    path.write_text(SPEC)
    res = synthesize(lower_spec(SPEC, str(path)), tmp_path / "out", 10.0, mem_latency=4)
    assert lint(res.verilog_path) == []
    text = res.verilog_path.read_text()
    # the incrementers and compares of the two loops are 5 and 7 bits wide
    assert re.search(r"\[4:0\]\s+copy8_n_next = ", text)
    assert re.search(r"\[6:0\]\s+stride_k_next = ", text)
    cs = run_cosim(
        path,
        res.verilog_path,
        res.unit.name,
        cases=64,
        seed=9,
        mode="random",
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    assert all(cs.stats[n]["cases"] == 64 for n in ("copy8", "stride"))
