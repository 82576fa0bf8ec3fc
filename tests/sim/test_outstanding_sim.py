"""Several memory requests in flight, in hardware: units whose requests are sent ahead
(tests/sim/specs/ahead.isax under ``aquas-interface-outstanding``) against the golden
interpreter with a memory that accepts several requests at once (random latency and
back-pressure; fixed latency, where every case's cycles are the schedule's), and measured
behind the SoC's pipelined ``aquas_mem_ctrl`` (``isax_master.outstanding``), where every
call takes the model's predicted cycles and each request sent ahead saves exactly its
handshake, DMA setup and memory latency against the same ISAX with one request in flight.
The measured cycles come from the simulated hardware's counter, never from the model."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from aquas.model import predict_module
from aquas.model.measure import measure
from aquas.plans.outstanding import set_outstanding
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import SynthResult, synthesize
from aquas.target import load_target

from helpers import check_fixed_cycles, require_tool

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "sim" / "specs" / "ahead.isax"
FIXED_L = 4


def build(k: int, out: Path, mem_latency: int = FIXED_L) -> SynthResult:
    m = lower_spec_file(SPEC)
    set_outstanding(m, k)
    return synthesize(m, out, 10.0, mem_latency=mem_latency)


@pytest.fixture(scope="module", params=[2, 4], ids=["k2", "k4"])
def unit(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> SynthResult:
    require_tool("make", "make")
    return build(request.param, tmp_path_factory.mktemp(f"ahead{request.param}"))


def test_random_cases_match_the_golden_interpreter(unit: SynthResult) -> None:
    assert "mem_sent_q" in unit.verilog_path.read_text()  # the memory accepts several
    cs = run_cosim(
        SPEC,
        unit.verilog_path,
        unit.unit.name,
        cases=150,
        seed=5,
        mode="random",
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    assert {k: v["cases"] for k, v in cs.stats.items()} == {"three": 150, "chase": 150}


def test_fixed_latency_cycles_equal_the_schedule(unit: SynthResult) -> None:
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


def test_measured_behind_the_pipelined_controller(tmp_path: Path) -> None:
    """k = 4 on the VexRiscv descriptor with a 4-deep controller, against k = 1 on the
    one-transaction controller: ``three`` sends 2 requests ahead, ``chase`` 3."""
    base = load_target(soc="vexriscv")
    deep = base.replace(isax_master={"outstanding": 4})
    lat = base.memory.latency + base.isax_master.setup_latency
    one = build(1, tmp_path / "k1", lat)
    four = build(4, tmp_path / "k4", lat)
    m1 = measure(SPEC, one.verilog_path, one.unit.name, base, cases=6)
    m4 = measure(SPEC, four.verilog_path, four.unit.name, deep, cases=6)
    assert m1.mismatches == [] and m4.mismatches == []
    mk = lower_spec_file(SPEC)
    set_outstanding(mk, 4)
    predicted = {p.isax: p.total for p in predict_module(mk, deep)}
    saved = 1 + lat
    for name, ahead in (("three", 2), ("chase", 3)):
        assert len(set(m1.cycles[name])) == 1 and len(set(m4.cycles[name])) == 1, name
        assert statistics.fmean(m4.cycles[name]) == predicted[name], name
        assert m4.cycles[name][0] == m1.cycles[name][0] - ahead * saved, name
