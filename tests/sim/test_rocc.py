"""The RoCC adapter (rtl_templates/adapters/rocc_adapter.v): lint-clean with -Wall, and a
cocotb bus-functional model of Rocket's RoCC port (tests/sim/rocc_tb.py) driving it with a
generated unit against the golden interpreter: >= 200 cases per ISAX, 0 mismatches.

The extension is examples/dsp re-encoded for RoCC: a RoCC instruction's funct3 bits are xd,
xs1 and xs2, so each ISAX gets funct3 = {has rd, reads rs1, reads rs2} (the header's
prototype says which); the rest of the spec is unchanged. dsp has ISAXs with and without rd,
state, scratchpads and memory bursts, so responses with xd = 0 and 1 are both exercised."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

from aquas.cachedir import cache_dir
from aquas.interpreter import find_extension
from aquas.runtime.header import generate_header
from aquas.sim.builder import RTL, verilator_cmd, verilator_env
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import build_key, registerless_scratchpads, verilator_tools
from aquas.synth.flow import synthesize

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = RTL / "adapters" / "rocc_adapter.v"
CASES = 200


@pytest.mark.parametrize("xlen", [32, 64])
def test_rocc_adapter_is_lint_clean(xlen: int) -> None:
    cmd = [*verilator_cmd(), "--lint-only", "-Wall", f"-GXLEN={xlen}", str(ADAPTER)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=verilator_env())
    assert r.returncode == 0, r.stderr


def rocc_encoded_spec(spec: Path, out: Path) -> Path:
    """``spec`` with every ISAX's funct3 set to RoCC's {xd, xs1, xs2}."""
    ext = find_extension(lower_spec_file(spec))
    header = generate_header(ext, "picorv32", allow_unrouted=True)
    protos = {
        m[1]: m
        for m in re.findall(
            r"^static inline .*? (void|uint32_t) aquas_(\w+)\(([^)]*)\)", header, re.M
        )
    }
    text = spec.read_text()
    for isax in ext.isaxs():
        ret, _, params = protos[isax.sym_name.data]
        f3 = (
            (ret == "uint32_t") << 2
            | bool(re.search(r"\brs1\b", params)) << 1
            | bool(re.search(r"\brs2\b", params))
        )
        text, n = re.subn(
            rf"funct7\({isax.funct7_value}\)\]", f"funct7({isax.funct7_value}), funct3({f3})]", text
        )
        assert n == 1, isax.sym_name.data
    out.write_text(text)
    return out


def test_rocc_bfm_matches_the_golden_interpreter(tmp_path: Path) -> None:
    from cocotb_tools.runner import get_runner

    spec = rocc_encoded_spec(ROOT / "examples" / "dsp" / "dsp.isax", tmp_path / "dsp_rocc.isax")
    ext = find_extension(lower_spec_file(spec))
    funct3 = {i.sym_name.data: i.funct3_value for i in ext.isaxs()}
    assert {f >> 2 for f in funct3.values()} == {0, 1}  # with and without a response
    unit = synthesize(lower_spec_file(spec), tmp_path / "unit", clock_ns=10.0)
    sources = [ADAPTER, FIXTURES / "rocc_top.v", unit.verilog_path]
    # the Verilator model is cached by content (and by the cocotb/Verilator installs its
    # Makefile names), like aquas.synth.cosim's: make recompiles nothing when unchanged
    build_dir = cache_dir("rocc") / build_key(*sources)
    build_dir.mkdir(parents=True, exist_ok=True)
    # a stable path for the unit (same content, same mtime), so make sees nothing new
    stable = build_dir / unit.verilog_path.name
    if not stable.exists():
        shutil.copyfile(unit.verilog_path, stable)
    sources[-1] = stable
    result = tmp_path / "result.json"
    with verilator_tools(tmp_path):
        runner = get_runner("verilator")
        runner.build(
            sources=sources,
            hdl_toplevel="rocc_top",
            build_dir=build_dir,
            defines={"AQUAS_ISAX_MODULE": unit.unit.name},
            build_args=["-O2", "-Wno-fatal", "-Wno-WIDTH"],
            timescale=("1ns", "1ps"),
            log_file=build_dir / "build.log",
        )
        runner.test(
            test_module="rocc_tb",
            hdl_toplevel="rocc_top",
            build_dir=build_dir,
            test_dir=tmp_path,
            results_xml=str(tmp_path / "results.xml"),
            extra_env={
                "ROCC_SPEC": str(spec),
                "ROCC_CASES": str(CASES),
                "ROCC_SEED": "11",
                "ROCC_RESULT": str(result),
                "ROCC_REGISTERLESS": json.dumps(
                    registerless_scratchpads(unit.verilog_path.read_text())
                ),
                "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path]),
            },
            log_file=tmp_path / "test.log",
        )
    assert result.exists(), (tmp_path / "test.log").read_text()[-3000:]
    doc = json.loads(result.read_text())
    assert doc["mismatches"] == []
    assert {k: v["cases"] for k, v in doc["stats"].items()} == {k: CASES for k in funct3}
    # every ISAX with xd = 1 answered every case through RoCC's response channel
    assert {k: v["responses"] for k, v in doc["stats"].items()} == {
        k: CASES if f >> 2 else 0 for k, f in funct3.items()
    }
