"""Units synthesized under every interface plan against the golden interpreter.

For the example extensions (hand-written and naive) under the plans other than
as-written (tests/sim/test_synth_cosim.py covers that one; CASES says which): random cases with random
memory latency and back-pressure, 0 mismatches in rd, the bytes written to memory, state
and the spec's own scratchpads, compared with the *original* spec on the interpreter;
and fixed-latency cases whose measured cycles equal the schedule. Verilator models are
cached by content (build/cosim), so a plan that leaves a unit unchanged costs no build."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.interpreter import find_extension
from aquas.plans.choose import apply_interface
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import SynthResult, synthesize
from aquas.synth.fsm import MEM_OPS
from aquas.synth.oplib import OperatorLibrary

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
# Every plan a unit can differ under, once: the hand-written extensions under the per-ISAX
# mix of auto, and DSP and LLM bursts -> single-shot; each naive extension under auto,
# which picks burst for every ISAX that touches memory (asserted below), so it is also the
# burst plan. (The hand-written point cloud under single and burst are the two largest
# units, a third of the simulator tier's time on their own: benchmarks/bench_plans.py
# measures them, and their plans are covered here on the other extensions.) Kyber is register-only: no plan changes
# it (tests/test_plans.py), and test_synth_cosim.py covers it as written.
CASES = [
    (EX / "pointcloud" / "pointcloud.isax", "auto"),
    (EX / "dsp" / "dsp.isax", "single"),
    (EX / "dsp" / "dsp.isax", "auto"),
    (EX / "llm" / "llm.isax", "single"),
    (EX / "llm" / "llm.isax", "auto"),
    (EX / "pointcloud" / "naive" / "pointcloud.isax", "auto"),
    (EX / "dsp" / "naive" / "dsp.isax", "auto"),
    (EX / "llm" / "naive" / "llm.isax", "auto"),
]
CLOCK_NS = 10.0
FIXED_L = 4
CACHE = ROOT / "build" / "cosim"


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.stem}" if p.parent.name == "naive" else p.stem


@pytest.fixture(scope="module", params=CASES, ids=[f"{_id(s)}-{p}" for s, p in CASES])
def unit(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, SynthResult, dict[str, str]]:
    spec, plan = request.param
    lib = OperatorLibrary.load()
    module = lower_spec_file(spec)
    choice = apply_interface(module, plan, CLOCK_NS, 12, lib, max_beats=16)
    if spec.parent.name == "naive":
        touching = {
            i.sym_name.data
            for i in find_extension(lower_spec_file(spec)).isaxs()
            if any(isinstance(o, MEM_OPS) for o in i.body.walk())
        }
        assert {n for n, p in choice.plans.items() if p == "burst"} == touching
    out = tmp_path_factory.mktemp(f"{spec.stem}-{plan}")
    return spec, synthesize(module, out, CLOCK_NS, FIXED_L, lib), choice.plans


def test_plan_units_match_the_original_spec(unit: tuple[Path, SynthResult, dict[str, str]]) -> None:
    spec, res, _ = unit
    cs = run_cosim(
        spec, res.verilog_path, res.unit.name, cases=40, seed=5, mode="random", cache_dir=CACHE
    )
    assert cs.mismatches == []
    assert {k: v["cases"] for k, v in cs.stats.items()} == {k: 40 for k in res.reports}


def test_plan_units_take_the_scheduled_cycles(
    unit: tuple[Path, SynthResult, dict[str, str]],
) -> None:
    spec, res, _ = unit
    cs = run_cosim(
        spec,
        res.verilog_path,
        res.unit.name,
        cases=4,
        seed=3,
        mode="fixed",
        latency=FIXED_L,
        cache_dir=CACHE,
    )
    assert cs.mismatches == []
    for name, st in cs.stats.items():
        lat = res.reports[name]["latency"]
        measured = set(st["cycles"])
        assert lat["cycles_min"] <= min(measured) and max(measured) <= lat["cycles_max"], name
