"""Extensions re-encoded into VexRiscv's routed opcode (custom-0) run on VexRiscv: the
co-simulation of a re-encoded unit, a program calling every ISAX of the LLM extension
through the generated header on the VexRiscv SoC, and ``aquas run`` of the small Kyber
project on VexRiscv (the primary core), whose spec encodes its ISAXs on custom-2."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from test_run import expected_checksum  # the host reference of tests/projects/kyber

from aquas.interpreter import find_extension
from aquas.reencode import spec_for_target
from aquas.target import load_target

from helpers import kyber_scalar

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
# kyber's register ISAXs (modmul_q, ntt_bfly): the small project of tests/projects/kyber
(ROOT / "build" / "tests").mkdir(parents=True, exist_ok=True)
KYBER = kyber_scalar(ROOT / "build" / "tests")
LLM = ROOT / "examples" / "llm" / "llm.isax"
PROGRAMS = Path(__file__).parent / "programs"
VEX = load_target(soc="vexriscv")


def test_cosim_of_a_reencoded_unit(tmp_path: Path) -> None:
    """kyber synthesized with its VexRiscv encodings (custom-0): the test bench drives the
    re-encoded fields and the unit agrees with the golden interpreter on every case; driven
    with the spec's encodings (custom-2) the same unit executes nothing (rd = 0)."""
    from aquas.synth.cosim import cycle_budget, run_cosim
    from aquas.synth.flow import synthesize

    module, emap = spec_for_target(KYBER, VEX)
    moves = [(m.isax, m.new) for m in emap.moves]
    assert [(n, e.opcode) for n, e in moves] == [("modmul_q", 0x0B), ("ntt_bfly", 0x0B)]
    res = synthesize(module, tmp_path / "unit", clock_ns=10.0)
    assert "cmd_opcode == 7'hB" in res.verilog_path.read_text()
    budgets = {n: cycle_budget(r) for n, r in res.reports.items()}
    t0 = time.perf_counter()
    ok = run_cosim(
        KYBER, res.verilog_path, res.unit.name, cases=100, budgets=budgets, encodings=moves
    )
    secs = time.perf_counter() - t0
    print(f"cosim of the re-encoded kyber unit: {ok.cases} cases in {secs:.1f} s")
    assert ok.cases == 200 and ok.mismatches == []
    assert secs < 600
    bad = run_cosim(
        KYBER, res.verilog_path, res.unit.name, cases=2, budgets=budgets, seed=3
    ).mismatches
    # the unit does not decode custom-2: it answers rd = 0 instead of the ISAX's result
    assert bad and all(": rd 0x0 != " in m for m in bad), bad


def test_llm_program_on_vexriscv_with_the_reencoded_unit(tmp_path: Path) -> None:
    """tests/sim/programs/isax_llm.c calls every LLM ISAX (custom-1 in the spec) through
    the header generated from the re-encoded extension and checks each result against a C
    reference, on the VexRiscv SoC with the unit synthesized from the same module."""
    import aquas.sim
    from aquas.runtime.build import build_program
    from aquas.runtime.header import write_header
    from aquas.synth.flow import synthesize

    module, emap = spec_for_target(LLM, VEX)
    assert len(emap.moves) == 4
    header = write_header(find_extension(module), VEX, tmp_path / "inc" / "aquas_isax.h")
    text = header.read_text()
    assert "deprecated" not in text and ".insn r 0x2B" not in text
    unit = synthesize(module, tmp_path / "unit", clock_ns=10.0)
    elf = build_program([PROGRAMS / "isax_llm.c"], tmp_path / "b", platform="vexriscv",
                        header_dirs=[tmp_path / "inc"])  # fmt: skip
    binary = aquas.sim.build("vexriscv", VEX, [unit.verilog_path], quiet=True)
    run = aquas.sim.run(binary, elf, max_cycles=2_000_000)
    assert run.reason == "exit", run.report
    assert "MISMATCH" not in run.output and run.output.endswith("errors=0\n"), run.output
    assert run.exit_code == 0
    assert "sparse_decomp_i8 used" in run.output and "dot4_i8" in run.output


@pytest.fixture(scope="module")
def vex_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/projects/kyber retargeted at VexRiscv (the spec stays on custom-2)."""
    d = tmp_path_factory.mktemp("kyber-vex")
    for f in (ROOT / "tests" / "projects" / "kyber").iterdir():
        shutil.copy(f, d / f.name)
    toml = d / "project.toml"
    text = toml.read_text()
    text = text.replace('spec = "../../../examples/crypto/kyber.isax"', f'spec = "{KYBER}"')
    text = text.replace('soc = "picorv32"', 'soc = "vexriscv"')
    assert 'soc = "vexriscv"' in text and str(KYBER) in text
    toml.write_text(text)
    return toml


def test_aquas_run_of_a_reencoded_extension_on_vexriscv(vex_project: Path, tmp_path: Path) -> None:
    from aquas.flow import run_project
    from aquas.project import load_project

    out = tmp_path / "out"
    res = run_project(load_project(vex_project), out, jobs=2)
    doc = res.doc
    assert doc["soc"] == "vexriscv"
    # the program's output is the host reference's, in both builds
    assert doc["end_to_end"]["output"] == f"checksum {expected_checksum()}\n"
    matched = {(m["function"], m["isax"]) for m in doc["matches"] if m["status"] == "matched"}
    assert matched == {("mulmod", "modmul_q"), ("butterfly", "ntt_bfly")}
    for r in doc["regions"]:
        assert 0 < r["isax_cycles"] < r["baseline_cycles"], r
    assert doc["cosim"]["cases"] == 2 * 20 and not doc["cosim"]["mismatches"]
    # the map, in the report document and in report.md / report.html
    enc = doc["encoding"]
    assert enc["target"] == "vexriscv" and enc["routed"] == ["custom-0"] and enc["error"] == ""
    assert [(m["isax"], m["old"]["opcode"], m["new"]["opcode"], m["new"]["funct7"])
            for m in enc["moves"]] == [("modmul_q", 0x5B, 0x0B, 0), ("ntt_bfly", 0x5B, 0x0B, 1)]  # fmt: skip
    assert json.loads((out / "report.json").read_text())["encoding"] == enc
    md = (out / "report.md").read_text()
    assert "## Encoding (re-encoded for vexriscv: its core routes only custom-0)" in md
    assert "| ntt_bfly | custom-2 funct3=0 funct7=1 | custom-0 funct3=0 funct7=1 |" in md
    assert "<h2>Encoding (re-encoded for vexriscv" in (out / "report.html").read_text()
    header = (out / "match" / "include" / "aquas_isax.h").read_text()
    assert "deprecated" not in header and ".insn r 0x0B, 0, 1," in header
    unit = next((out / "synth").glob("*.sv")).read_text()
    assert "cmd_opcode == 7'hB" in unit and "7'h5B" not in unit
    print(
        "kyber on vexriscv: end to end "
        f"{doc['end_to_end']['baseline_cycles']} -> {doc['end_to_end']['isax_cycles']} cycles; "
        + ", ".join(f"{r['label']} {r['speedup']:.2f}x" for r in doc["regions"])
    )
