"""Requests sent ahead across compute, in hardware: units of tests/sim/specs/early.isax
under ``aquas-interface-early`` against the golden interpreter (random latency and
back-pressure; fixed latency within the schedule's range), and measured behind the SoC's
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

from helpers import check_fixed_cycles, require_tool

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "sim" / "specs" / "early.isax"
FIXED_L = 4


def build(early: bool, out: Path, mem_latency: int = FIXED_L) -> SynthResult:
    m = lower_spec_file(SPEC)
    if early:
        set_early(m)
    return synthesize(m, out, 10.0, mem_latency=mem_latency)


@pytest.fixture(scope="module")
def unit(tmp_path_factory: pytest.TempPathFactory) -> SynthResult:
    require_tool("make", "make")
    return build(True, tmp_path_factory.mktemp("early"))


def test_random_cases_match_the_golden_interpreter(unit: SynthResult) -> None:
    assert "mem_early_q" in unit.verilog_path.read_text()
    cs = run_cosim(
        SPEC,
        unit.verilog_path,
        unit.unit.name,
        cases=200,
        seed=11,
        mode="random",
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    assert {k: v["cases"] for k, v in cs.stats.items()} == dict.fromkeys(
        ("scale", "mix", "chain", "pick"), 200
    )


def test_fixed_latency_cycles_lie_in_the_schedules_range(unit: SynthResult) -> None:
    cs = run_cosim(
        SPEC,
        unit.verilog_path,
        unit.unit.name,
        cases=8,
        seed=3,
        mode="fixed",
        latency=FIXED_L,
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    check_fixed_cycles(unit.reports, cs.stats, FIXED_L)
    # the window is longer than L = 4: each request sent ahead leaves its wait state one
    # cycle and its beats (reads) where it took 4 + beats
    lat = unit.reports["mix"]["latency"]
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
