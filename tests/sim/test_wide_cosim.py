"""Generated units with a 64- and 128-bit memory master against the golden interpreter
(cocotb + Verilator): every example extension, random latency and back-pressure with
partial strobes (0 mismatches in rd, memory writes and state), and fixed-latency runs
whose cycles are the schedule's: ``control + per_L * L + beats`` for every case, where
``beats`` is the number of data beats the case moved (a burst's beat count depends on the
alignment of its address) and within the report's [min, max]. The 32-bit port is covered
by tests/sim/test_synth_cosim.py with the same checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import SynthResult, synthesize

from helpers import check_fixed_cycles

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
# The hand-written examples: the naive specs (examples/*/naive) are single-shot accesses,
# one beat each at any width, and are co-simulated at 32 bits by test_synth_cosim.py and
# under every plan by test_plans_cosim.py; leaving them out keeps this tier's builds bounded.
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*.isax") if "naive" not in p.parts)
# and single accesses of every element width, whose lanes depend on the port's width
EXAMPLES.append(ROOT / "tests" / "sim" / "specs" / "single_lanes.isax")
FIXED_L = 4
CASES = 50


@pytest.fixture(
    scope="module",
    params=[(p, w) for w in (64, 128) for p in EXAMPLES],
    ids=[f"{p.stem}-{w}" for w in (64, 128) for p in EXAMPLES],
)
def unit(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, SynthResult]:
    spec, width = request.param
    out = tmp_path_factory.mktemp(f"{spec.stem}{width}")
    res = synthesize(lower_spec_file(spec), out, 10.0, mem_latency=FIXED_L, bus_width=width)
    return spec, res


def test_random_cases_match_the_golden_interpreter(unit: tuple[Path, SynthResult]) -> None:
    spec, res = unit
    cs = run_cosim(
        spec,
        res.verilog_path,
        res.unit.name,
        cases=CASES,
        seed=11,
        mode="random",
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    assert {k: v["cases"] for k, v in cs.stats.items()} == {k: CASES for k in res.reports}


def test_fixed_latency_cycles_equal_the_schedule(unit: tuple[Path, SynthResult]) -> None:
    spec, res = unit
    cs = run_cosim(
        spec,
        res.verilog_path,
        res.unit.name,
        cases=8,
        seed=3,
        mode="fixed",
        latency=FIXED_L,
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    check_fixed_cycles(res.reports, cs.stats, FIXED_L)
