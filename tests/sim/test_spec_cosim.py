"""The test specs of ``tests/sim/specs`` (storage accesses sharing a cycle, chained state
updates, compares folded by range, ROMs, strided bursts, requests sent ahead, ...) through
the checks of ``unit_checks.py``: random co-simulation against the golden interpreter,
fixed-latency cycles, lint, Yosys depth."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.synth.flow import SynthResult

from unit_checks import (  # noqa: F401  (collected here, with this module's `unit`)
    ROOT,
    check_yosys,
    synth_unit,
    test_fixed_latency_cycles_equal_the_schedule,
    test_lint_clean,
    test_random_cases_match_the_golden_interpreter,
)

pytestmark = pytest.mark.sim

SPECS = sorted((ROOT / "tests" / "sim" / "specs").glob("*.isax"))


@pytest.fixture(scope="module", params=SPECS, ids=[p.stem for p in SPECS])
def unit(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, SynthResult]:
    spec: Path = request.param
    return synth_unit(spec, tmp_path_factory.mktemp(spec.stem))


def test_yosys_area_and_depth_fit_the_clock(unit: tuple[Path, SynthResult]) -> None:
    check_yosys(unit[1])
