"""The timing model of a multiply by a constant (``synth/timing.const_mul_levels``) against
Yosys on the operator library's script: never below the measured depth (the schedule must
not chain more than fits), and within 6 levels above it (index arithmetic such as ``3 * j`` must not
cost a multiplier's delay)."""

from __future__ import annotations

import pytest

from aquas.synth.characterize import measure
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.timing import const_mul_levels

from helpers import require_tool

CASES = [(8, 3), (8, 12), (16, 5), (16, 7), (16, 3329), (32, 3), (32, 7), (32, 3329)]


@pytest.mark.parametrize(("width", "c"), CASES)
def test_const_mul_levels_bound_yosys_depth(width: int, c: int) -> None:
    require_tool("yosys", "yosys")
    lib = OperatorLibrary.load()
    measured = measure("mul_const", width, c).depth
    assert measured is not None
    model = const_mul_levels(lib, c, width)
    assert measured <= model <= measured + 6, (width, c, measured, model)


def test_power_of_two_and_zero_are_wiring() -> None:
    lib = OperatorLibrary.load()
    assert const_mul_levels(lib, 8, 32) == 0
    assert const_mul_levels(lib, 0, 32) == 0
    assert const_mul_levels(lib, 1 << 32, 32) == 0  # wraps to 0 at 32 bits
    assert const_mul_levels(lib, 3, 32) == lib.cost("add", 32).depth
