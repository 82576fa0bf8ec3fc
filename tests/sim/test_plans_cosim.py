"""Units synthesized under every interface plan against the golden interpreter.

For every example extension (hand-written and naive) and every plan other than
as-written (tests/sim/test_synth_cosim.py covers that one): random cases with random
memory latency and back-pressure, 0 mismatches in rd, the bytes written to memory, state
and the spec's own scratchpads, compared with the *original* spec on the interpreter;
and fixed-latency cases whose measured cycles equal the schedule. Verilator models are
cached by content (build/cosim), so a plan that leaves a unit unchanged costs no build."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.plans.choose import apply_interface
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import SynthResult, synthesize
from aquas.synth.oplib import OperatorLibrary

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
SPECS = [
    ROOT / "examples" / d / f"{n}.isax"
    for d, n in (("pointcloud", "pointcloud"), ("dsp", "dsp"), ("llm", "llm"))
]
SPECS += [p.parent / "naive" / p.name for p in SPECS]
SPECS.append(ROOT / "examples" / "crypto" / "kyber.isax")
PLANS = ("single", "burst", "auto")
CLOCK_NS = 10.0
FIXED_L = 4
CACHE = ROOT / "build" / "cosim"


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.stem}" if p.parent.name == "naive" else p.stem


@pytest.fixture(
    scope="module",
    params=[(s, p) for s in SPECS for p in PLANS],
    ids=[f"{_id(s)}-{p}" for s in SPECS for p in PLANS],
)
def unit(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, SynthResult, dict[str, str]]:
    spec, plan = request.param
    lib = OperatorLibrary.load()
    module = lower_spec_file(spec)
    choice = apply_interface(module, plan, CLOCK_NS, 12, lib, max_beats=16)
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
