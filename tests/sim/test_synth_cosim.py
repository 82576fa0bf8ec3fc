"""Generated units against the golden interpreter (cocotb + Verilator), lint and Yosys.

For every example extension: 200 random cases per ISAX with random memory latency and
back-pressure (0 mismatches in rd, memory writes and state); fixed-latency runs whose
measured cycles equal the scheduled latency; verilator -Wall lint clean (with the
documented waivers); Yosys area/depth with the longest path inside the clock period.
The same for the specs in ``tests/sim/specs`` (storage accesses sharing a cycle, chained
state updates, compares folded by range)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from aquas.cli import main
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import SynthResult, synthesize
from aquas.synth.lint import lint
from aquas.synth.oplib import OperatorLibrary

from helpers import check_fixed_cycles

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.isax"))
EXAMPLES += sorted((ROOT / "tests" / "sim" / "specs").glob("*.isax"))
CLOCK_NS = 10.0
FIXED_L = 4


@pytest.fixture(
    scope="module",
    params=EXAMPLES,
    ids=[f"naive/{p.stem}" if p.parent.name == "naive" else p.stem for p in EXAMPLES],
)
def unit(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, SynthResult]:
    spec: Path = request.param
    out = tmp_path_factory.mktemp(spec.stem)
    return spec, synthesize(lower_spec_file(spec), out, CLOCK_NS, mem_latency=FIXED_L)


def test_random_cases_match_the_golden_interpreter(unit: tuple[Path, SynthResult]) -> None:
    spec, res = unit
    cs = run_cosim(
        spec,
        res.verilog_path,
        res.unit.name,
        cases=200,
        seed=7,
        mode="random",
        cache_dir=ROOT / "build" / "cosim",
    )
    assert cs.mismatches == []
    assert {k: v["cases"] for k, v in cs.stats.items()} == {k: 200 for k in res.reports}


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


def test_yosys_area_and_depth_fit_the_clock(unit: tuple[Path, SynthResult]) -> None:
    from aquas.synth.yosys import measure

    _, res = unit
    fig = measure(res.verilog_path, res.unit.name, cache_dir=ROOT / "build" / "yosys")
    lib = OperatorLibrary.load()
    assert fig.cells > fig.flops > 32
    assert fig.depth * lib.ns_per_level <= CLOCK_NS


def test_synth_cosim_reports_its_cases_and_mismatches(tmp_path: Path) -> None:
    spec = ROOT / "tests" / "sim" / "specs" / "share.isax"
    args = ["synth", str(spec), "--no-yosys", "--no-lint", "--cosim", "20", "-o", str(tmp_path)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    # 20 cases for each of the 5 ISAXs
    assert "co-simulation: 100 case(s), 0 mismatches against the interpreter" in r.output


def test_the_lint_count_is_the_number_of_warnings(tmp_path: Path) -> None:
    v = tmp_path / "one.v"
    v.write_text("module one(input wire [3:0] a, output wire y);\n  assign y = a[0];\nendmodule\n")
    (only,) = lint(v)  # a[3:1] unused; Verilator's closing summary line is not counted
    assert only.startswith("%Warning-UNUSEDSIGNAL:") and "'a'" in only


def test_cosim_build_key_names_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cached Verilator model from another environment (another cocotb or Verilator
    install, e.g. an installed wheel's venv since deleted) is never reused: its Makefile
    points at that environment's files. CI once failed on exactly this."""
    import cocotb

    from aquas.synth import cosim

    v = tmp_path / "u.sv"
    v.write_text("module u; endmodule\n")
    here = cosim.build_key(v)
    assert cosim.build_key(v) == here
    monkeypatch.setattr(cocotb, "__file__", str(tmp_path / "other" / "cocotb" / "__init__.py"))
    assert cosim.build_key(v) != here
    monkeypatch.undo()
    monkeypatch.setattr(cosim, "verilator_root", lambda: tmp_path / "other-verilator")
    assert cosim.build_key(v) != here
