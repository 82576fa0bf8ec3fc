"""The timing model of a multiply by a constant (``synth/timing.const_mul_levels``) against
Yosys on the operator library's script: never below the measured depth (the schedule must
not chain more than fits), and within 6 levels above it (index arithmetic such as ``3 * j`` must not
cost a multiplier's delay). What is measured is what the datapath builds: ``x * c``, or the
shifts and additions of ``c``'s signed digits where they are fewer than its one bits
(``HwBuilder.mul_const``); ``x * c`` equals that sum modulo ``2^w`` on random operands."""

from __future__ import annotations

import random

import pytest

from aquas.synth.characterize import measure
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.timing import const_mul_levels, const_mul_terms

from helpers import require_tool

CASES = [
    (8, 3),
    (8, 12),
    (16, 5),
    (16, 7),
    (16, 3329),
    (32, 3),
    (32, 7),
    (32, 3329),
    (32, 3303),
    (49, 1290167),
]


def _built(width: int, c: int) -> str | None:
    """The Verilog of what the datapath builds for ``x * c`` when it is not ``a * c``."""
    terms = const_mul_terms(c, width)
    if all(sign > 0 for _, sign in terms):
        return None
    pos = " + ".join(f"(a << {n})" for n, sign in terms if sign > 0) or f"{width}'d0"
    neg = " + ".join(f"(a << {n})" for n, sign in terms if sign < 0)
    return f"module m(input [{width - 1}:0] a, output [{width - 1}:0] y);\n  assign y = ({pos}) - ({neg});\nendmodule\n"


@pytest.mark.parametrize(("width", "c"), CASES)
def test_const_mul_levels_bound_yosys_depth(width: int, c: int) -> None:
    require_tool("yosys", "yosys")
    lib = OperatorLibrary.load()
    measured = measure("mul_const", width, c, source=_built(width, c)).depth
    assert measured is not None
    model = const_mul_levels(lib, c, width)
    assert measured <= model <= measured + 6, (width, c, measured, model)


def test_power_of_two_and_zero_are_wiring() -> None:
    lib = OperatorLibrary.load()
    assert const_mul_levels(lib, 8, 32) == 0
    assert const_mul_levels(lib, 0, 32) == 0
    assert const_mul_levels(lib, 1 << 32, 32) == 0  # wraps to 0 at 32 bits
    assert const_mul_levels(lib, 3, 32) == lib.cost("add", 32).depth


def test_signed_digits_are_shorter_and_multiply_exactly() -> None:
    """1290167 (Barrett's 2^32 / 3329) has 15 one bits and 7 signed digits; 2^32 - 1 is
    one digit at 32 bits (-x); every recoding multiplies exactly modulo 2^w."""
    assert const_mul_terms(1290167, 64) == [
        (0, -1), (3, -1), (6, -1), (12, -1), (14, -1), (18, 1), (20, 1)
    ]  # fmt: skip
    assert const_mul_terms(2**32 - 1, 32) == [(0, -1)]
    assert const_mul_terms(3329, 32) == [(0, 1), (8, 1), (10, 1), (11, 1)]  # no shorter
    rng = random.Random(3)
    for _ in range(5000):
        w, c, x = rng.randint(1, 64), rng.getrandbits(70), rng.getrandbits(64)
        x %= 1 << w
        terms = const_mul_terms(c, w)
        assert len(terms) <= bin(c % (1 << w)).count("1")
        assert sum(sign * (x << n) for n, sign in terms) % (1 << w) == x * c % (1 << w)
