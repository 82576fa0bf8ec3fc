"""`aquas sim` on the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import TEST_UNIT

pytestmark = pytest.mark.sim


def aquas(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aquas.cli", *map(str, args)], capture_output=True, text=True
    )


def test_cli_runs_program(program, soc_binary):
    soc_binary("vexriscv", isax=True)  # warm the cache
    r = aquas("sim", program("memcheck", "vexriscv"), "--isax", TEST_UNIT)
    assert r.returncode == 0, r.stderr
    assert "exit code: 0" in r.stdout
    assert "regions" in r.stdout


def test_cli_json_and_exit_status(program, soc_binary):
    soc_binary("vexriscv")
    r = aquas("sim", program("exitcode", "vexriscv"), "--json")
    assert r.returncode == 4  # the program failed; its own code is in the JSON
    doc = json.loads(r.stdout)
    assert doc["exit_code"] == 42 and doc["output"] == "bye\n" and doc["cycles"] > 0


def test_cli_timeout_status(program, soc_binary):
    soc_binary("vexriscv")
    r = aquas("sim", program("forever", "vexriscv"), "--max-cycles", "5000")
    assert r.returncode == 3
    assert "did not exit within 5000 cycles" in r.stderr


def test_cli_errors_without_traceback(tmp_path):
    bad = tmp_path / "x.elf"
    bad.write_text("nope")
    r = aquas("sim", bad)
    assert r.returncode == 2
    assert "not an ELF file" in r.stderr and "Traceback" not in r.stderr
    r = aquas("sim", bad, "--platform", tmp_path / "missing.toml")
    assert r.returncode == 2 and "platform file" in r.stderr and "does not exist" in r.stderr
