"""Requests sent ahead across compute, in hardware: the unit of tests/sim/specs/early.isax
under ``aquas-interface-early`` through the checks of ``unit_checks.py`` (random latency
and back-pressure against the golden interpreter; fixed latency within the schedule's
range; lint), and measured behind the SoC's
``aquas_mem_ctrl`` on the VexRiscv descriptor, where every call takes the model's
predicted cycles and each request sent ahead saves the DMA setup and memory latency, up
to the compute cycles before its wait state, against the same ISAX without the plan. The
measured cycles come from the simulated hardware's counter, never from the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.model import predict_module
from aquas.model.measure import measure
from aquas.plans.early import set_early
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import SynthResult, synthesize
from aquas.target import load_target

from helpers import require_tool
from unit_checks import (  # noqa: F401  (collected here, with this module's `unit`)
    CLOCK_NS,
    FIXED_L,
    ROOT,
    test_fixed_latency_cycles_equal_the_schedule,
    test_lint_clean,
    test_random_cases_match_the_golden_interpreter,
)

pytestmark = pytest.mark.sim

SPEC = ROOT / "tests" / "sim" / "specs" / "early.isax"


def build(early: bool, out: Path, mem_latency: int = FIXED_L) -> SynthResult:
    m = lower_spec_file(SPEC)
    if early:
        set_early(m)
    return synthesize(m, out, CLOCK_NS, mem_latency=mem_latency)


@pytest.fixture(scope="module")
def unit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SynthResult]:
    """The unit with every request it can send ahead sent ahead, for the checks of
    ``unit_checks.py`` (random co-simulation, fixed-latency cycles within the schedule's
    range, lint) collected here; tests/sim/test_spec_cosim.py checks the unit without."""
    require_tool("make", "make")
    res = build(True, tmp_path_factory.mktemp("early"))
    assert "mem_early_q" in res.verilog_path.read_text()
    return SPEC, res


def test_a_request_sent_ahead_leaves_one_cycle_of_its_latency(
    unit: tuple[Path, SynthResult],
) -> None:
    """At fixed latency L = 4, ``mix``'s 17-cycle window hides all but the wait state's
    first cycle: each call takes the schedule's worst case less L - 1."""
    _, res = unit
    cs = run_cosim(
        SPEC,
        res.verilog_path,
        res.unit.name,
        cases=4,
        seed=5,
        mode="fixed",
        latency=FIXED_L,
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    lat = res.reports["mix"]["latency"]
    assert set(cs.stats["mix"]["cycles"]) == {lat["cycles_max"] - (FIXED_L - 1)}


def test_measured_behind_the_controller(tmp_path: Path) -> None:
    """On the VexRiscv descriptor (DMA setup 2, memory latency 10): ``scale``'s write is
    sent 8 loop cycles ahead and saves 8; ``mix``'s load 17 cycles ahead and saves all 12;
    ``chain`` and ``pick`` send nothing ahead."""
    t = load_target(soc="vexriscv")
    lat = t.memory.latency + t.isax_master.setup_latency
    plain, early = build(False, tmp_path / "plain", lat), build(True, tmp_path / "early", lat)
    m0 = measure(SPEC, plain.verilog_path, plain.unit.name, t, cases=6)
    m1 = measure(SPEC, early.verilog_path, early.unit.name, t, cases=6)
    assert m0.mismatches == [] and m1.mismatches == []
    me = lower_spec_file(SPEC)
    set_early(me)
    predicted = {p.isax: p.total for p in predict_module(me, t)}
    for name, saved in (("scale", 8), ("mix", lat), ("chain", 0), ("pick", 0)):
        assert len(set(m1.cycles[name])) == 1 and len(set(m0.cycles[name])) == 1, name
        assert m1.cycles[name][0] == predicted[name], name
        assert m1.cycles[name][0] == m0.cycles[name][0] - saved, name
