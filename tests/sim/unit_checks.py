"""The checks every synthesized unit of the simulator tier passes, shared by
``test_synth_cosim.py`` (the example extensions) and ``test_spec_cosim.py`` (the specs in
``tests/sim/specs``), which each provide the module-scoped ``unit`` fixture: (spec path,
synthesis result at ``CLOCK_NS`` with memory latency ``FIXED_L``). Two files so that the two
CI workers share the work (pytest runs one file per worker).

Per unit: ``RANDOM_CASES`` random cases per ISAX with random memory latency and
back-pressure (0 mismatches in rd, memory writes and state); fixed-latency runs whose
measured cycles equal the scheduled latency; verilator -Wall lint clean (with the
documented waivers); and ``check_yosys``: Yosys area/depth with the longest path inside the
clock period."""

from __future__ import annotations

from pathlib import Path

from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import SynthResult, synthesize
from aquas.synth.lint import lint
from aquas.synth.oplib import OperatorLibrary

from helpers import check_fixed_cycles

ROOT = Path(__file__).resolve().parents[2]
CLOCK_NS = 10.0
FIXED_L = 4
RANDOM_CASES = 64
"""Per ISAX and unit. The cases are cheap to find bugs with but slow to simulate (cocotb
steps every cycle from Python); benchmarks and ``aquas synth --cosim N`` run more."""


def synth_unit(spec: Path, out: Path) -> tuple[Path, SynthResult]:
    return spec, synthesize(lower_spec_file(spec), out, CLOCK_NS, mem_latency=FIXED_L)


def test_random_cases_match_the_golden_interpreter(unit: tuple[Path, SynthResult]) -> None:
    spec, res = unit
    cs = run_cosim(
        spec,
        res.verilog_path,
        res.unit.name,
        cases=RANDOM_CASES,
        seed=7,
        mode="random",
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    assert {k: v["cases"] for k, v in cs.stats.items()} == {k: RANDOM_CASES for k in res.reports}


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
    for name, st in cs.stats.items():
        lat = res.reports[name]["latency"]
        if lat["cycles_min"] == lat["cycles_max"]:
            assert set(st["cycles"]) == {lat["cycles_min"]}, name


def test_lint_clean(unit: tuple[Path, SynthResult]) -> None:
    _, res = unit
    assert lint(res.verilog_path) == []


def check_yosys(res: SynthResult) -> None:
    """Yosys area and depth: the longest path fits the clock period."""
    from aquas.synth.yosys import measure

    fig = measure(res.verilog_path, res.unit.name, cache_dir=ROOT / "build" / "yosys")
    lib = OperatorLibrary.load()
    assert fig.cells > fig.flops > 32
    assert fig.depth * lib.ns_per_level <= CLOCK_NS
