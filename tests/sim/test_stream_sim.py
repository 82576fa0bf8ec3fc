"""Burst data streamed into the compute after it, in hardware: the unit of
tests/sim/specs/stream.isax under ``aquas-interface-stream`` through the checks of
``unit_checks.py`` (random latency and back-pressure against the golden interpreter;
fixed latency within the schedule's range; lint), and measured behind the SoC's
``aquas_mem_ctrl`` on the VexRiscv descriptor at 32 and 128 bits, where every call takes
the model's predicted cycles and fewer than the same ISAX without the plan. The measured
cycles come from the simulated hardware's counter, never from the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.model import predict_module
from aquas.model.measure import measure
from aquas.plans.stream import set_stream
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import SynthResult, schedule_isaxs, synthesize
from aquas.synth.fsm import mem_beats, stream_cycles
from aquas.synth.oplib import OperatorLibrary
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

SPEC = ROOT / "tests" / "sim" / "specs" / "stream.isax"


def build(stream: bool, out: Path, mem_latency: int = FIXED_L, width: int = 32) -> SynthResult:
    m = lower_spec_file(SPEC)
    if stream:
        set_stream(m)
    return synthesize(m, out, CLOCK_NS, mem_latency=mem_latency, bus_width=width)


@pytest.fixture(scope="module")
def unit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SynthResult]:
    """The unit with every burst read it can stream streamed, for the checks of
    ``unit_checks.py`` collected here; tests/sim/test_spec_cosim.py checks the unit
    without."""
    require_tool("make", "make")
    res = build(True, tmp_path_factory.mktemp("stream"))
    text = res.verilog_path.read_text()
    for isax in ("sdot", "snear", "shalf"):
        assert f"{isax}_" in text and "_stream_q" in text
    return SPEC, res


def test_fixed_latency_cycles_at_l4(unit: tuple[Path, SynthResult]) -> None:
    """At fixed latency L = 4 (the co-simulation's memory: beat k of a read in the k-th
    cycle after the L-th), every call of each ISAX takes the cycles of the unit without
    the plan less what the cycle-level run of burst and window saves, computed here from
    the schedule's windows: sdot 38 -> 23, snear 109 -> 79, shalf 45 -> 38 (the unit without
    the plan measured in ``test_spec_cosim.py``'s checks; here its schedule's fixed
    cycles)."""
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
    m = lower_spec_file(SPEC)
    set_stream(m)
    _, fsms = schedule_isaxs(m, CLOCK_NS, OperatorLibrary.load(), 32)
    for f in fsms:
        name = f.isax.sym_name.data
        assert len(f.stream) == 1, name  # snear's 3-word burst has no window: the next is a burst
        want = res.reports[name]["latency"]["cycles_max"]
        for op, w in f.stream.items():
            beats = mem_beats(op, 32)
            want += stream_cycles(w, beats, FIXED_L) - (FIXED_L + beats + len(w.visits))
        assert set(cs.stats[name]["cycles"]) == {want}, name
    assert {n: cs.stats[n]["cycles"][0] for n in cs.stats} == {"sdot": 23, "snear": 79, "shalf": 38}


@pytest.mark.parametrize("width", [32, 128])
def test_measured_behind_the_controller(tmp_path: Path, width: int) -> None:
    """On the VexRiscv descriptor (DMA setup 2, memory latency 10), with its 32-bit port
    and with the 128-bit one of ``vexriscv-wide``: every call of each streamed ISAX takes
    fewer cycles than any call of the same ISAX without the plan, and at 32 bits exactly
    the model's predicted cycles. At 128 bits a call's cycles depend on where its pointer
    falls in a 16-byte beat, which the model averages over the placements and the calls'
    random pointers sample: their mean is within 2 % of the prediction."""
    t = load_target("vexriscv-wide" if width == 128 else None, soc="vexriscv")
    lat = t.memory.latency + t.isax_master.setup_latency
    plain = build(False, tmp_path / "plain", lat, width)
    streamed = build(True, tmp_path / "stream", lat, width)
    m0 = measure(SPEC, plain.verilog_path, plain.unit.name, t, cases=8)
    m1 = measure(SPEC, streamed.verilog_path, streamed.unit.name, t, cases=8)
    assert m0.mismatches == [] and m1.mismatches == []
    ms = lower_spec_file(SPEC)
    set_stream(ms)
    predicted = {p.isax: p.total for p in predict_module(ms, t)}
    plain_pred = {p.isax: p.total for p in predict_module(lower_spec_file(SPEC), t)}
    for name in ("sdot", "snear", "shalf"):
        got, before = m1.cycles[name], m0.cycles[name]
        rel = 0.0 if width == 32 else 0.02
        assert sum(got) / len(got) == pytest.approx(predicted[name], rel=rel), name
        assert sum(before) / len(before) == pytest.approx(plain_pred[name], rel=rel), name
        assert max(got) < min(before), name


def test_resident_and_streamed(tmp_path: Path) -> None:
    """Bursts both resident (aquas-interface-resident) and streamed: a call whose claim
    holds skips the burst and runs its window at once, any other streams its fill, which
    then claims the scratchpad. Random co-simulation with repeated operands and foreign
    writes (the snoop port) against the golden interpreter."""
    from aquas.plans.resident import mark_resident

    m = lower_spec_file(SPEC)
    assert mark_resident(m) == {"sdot": ["a"], "snear": ["q", "p"], "shalf": ["h"]}
    set_stream(m)
    res = synthesize(m, tmp_path, CLOCK_NS, mem_latency=FIXED_L)
    cs = run_cosim(
        SPEC, res.verilog_path, res.unit.name, cases=64, seed=9, cache_dir=ROOT / "build" / "cosim"
    )
    assert cs.mismatches == []
    for name in ("sdot", "snear", "shalf"):
        st = cs.stats[name]
        assert st["cases"] == 64 and len(st["resident_cycles"]) > 5, name
        # a kept scratchpad: faster than any call that streamed its burst
        assert min(st["resident_cycles"]) < min(st["cycles"]), name
