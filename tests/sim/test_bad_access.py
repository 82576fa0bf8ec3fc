"""Every access to an address that is neither RAM nor a device ends the simulation with
``bad_access``, naming the master, the address and the pc (issue D3: such accesses used to
alias into RAM). Programs: programs/bad_access.c, one case per build."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import TEST_UNIT, symbol

from aquas.runtime.build import build_program
from aquas.sim import run
from aquas.target import load_target, target_names

pytestmark = pytest.mark.sim

SOCS = target_names()
PROGRAM = Path(__file__).parent / "programs" / "bad_access.c"
(
    STORE_PAST_END,
    IO_LOAD,
    FETCH_PAST_END,
    UNIT_LOAD,
    UNIT_BURST_READ,
    UNIT_BURST_WRITE,
    IN_RAM_EDGE,
) = range(1, 8)


@pytest.fixture(scope="module")
def case_elf(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int], Path]:
    out = tmp_path_factory.mktemp("bad-access")

    def make(soc: str, case: int) -> Path:
        mem = load_target(soc=soc).memory
        defines = {"CASE": case, "RAM_BASE": mem.ram_base, "RAM_SIZE": mem.ram_size}
        return build_program([PROGRAM], out / f"{soc}-{case}", platform=soc, defines=defines)

    return make


def ram_end(soc: str) -> int:
    mem = load_target(soc=soc).memory
    return mem.ram_base + mem.ram_size


def run_case(soc: str, case: int, case_elf, soc_binary, *, unit: bool = False):
    elf = case_elf(soc, case)
    r = run(soc_binary(soc, isax=unit), elf, max_cycles=2_000_000)
    assert r.reason == "bad_access", (r.reason, r.report, r.output)
    assert r.output == "before\n"  # nothing after the access ran
    assert r.bad_access is not None
    return r, r.bad_access, elf


@pytest.mark.parametrize("soc", SOCS)
def test_core_store_past_ram_end(soc, case_elf, soc_binary):
    r, bad, elf = run_case(soc, STORE_PAST_END, case_elf, soc_binary)
    target = symbol(elf, "x") + load_target(soc=soc).memory.ram_size
    pc = symbol(elf, "bad_insn")
    assert (bad.master, bad.channel, bad.write) == ("core_data", None, True)
    assert (bad.address, bad.start, bad.beats, bad.pc) == (target, target, 1, pc)
    assert r.report == f"core data store to unmapped address {target:#010x} at pc {pc:#010x}"


@pytest.mark.parametrize("soc", SOCS)
def test_core_load_from_unmapped_io(soc, case_elf, soc_binary):
    r, bad, elf = run_case(soc, IO_LOAD, case_elf, soc_binary)
    pc = symbol(elf, "bad_insn")
    assert (bad.master, bad.write, bad.address, bad.pc) == ("core_data", False, 0xF0000040, pc)
    assert r.report == f"core data load from unmapped address 0xf0000040 at pc {pc:#010x}"


@pytest.mark.parametrize("soc", SOCS)
def test_core_fetch_past_ram_end(soc, case_elf, soc_binary):
    r, bad, _ = run_case(soc, FETCH_PAST_END, case_elf, soc_binary)
    end = ram_end(soc)
    assert (bad.master, bad.write, bad.address, bad.pc) == ("core_fetch", False, end, None)
    assert r.report == f"core instruction fetch from unmapped address {end:#010x}"


@pytest.mark.parametrize("soc", SOCS)
def test_unit_load_from_unmapped_address(soc, case_elf, soc_binary):
    r, bad, elf = run_case(soc, UNIT_LOAD, case_elf, soc_binary, unit=True)
    pc = symbol(elf, "bad_insn")
    assert (bad.master, bad.channel, bad.write) == ("isax", 0, False)
    assert (bad.address, bad.start, bad.beats, bad.pc) == (0x90000000, 0x90000000, 1, pc)
    assert r.report == (
        "ISAX unit channel 0 read from unmapped address 0x90000000 "
        f"by the custom instruction at pc {pc:#010x}"
    )


@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize(
    ("case", "write", "start_before_end"),
    [(UNIT_BURST_READ, False, 32), (UNIT_BURST_WRITE, True, 16)],
)
def test_unit_burst_crossing_ram_end(soc, case, write, start_before_end, case_elf, soc_binary):
    r, bad, elf = run_case(soc, case, case_elf, soc_binary, unit=True)
    end = ram_end(soc)
    start = end - start_before_end
    pc = symbol(elf, "bad_insn")
    assert (bad.master, bad.channel, bad.write) == ("isax", 0, write)
    # the reported address is the first byte past RAM, not the (mapped) start of the burst
    assert (bad.address, bad.start, bad.beats, bad.pc) == (end, start, 16, pc)
    assert f"(16-beat burst from {start:#010x})" in r.report


def test_cli_reports_bad_access(case_elf, soc_binary):
    soc_binary("picorv32", isax=True)  # warm the cache
    elf = case_elf("picorv32", UNIT_LOAD)
    cmd = [sys.executable, "-m", "aquas.cli", "sim", str(elf), "--soc", "picorv32"]
    cmd += ["--isax", str(TEST_UNIT)]
    r = subprocess.run([*cmd, "--json"], capture_output=True, text=True)
    assert r.returncode == 3, r.stderr
    doc = json.loads(r.stdout)
    pc = symbol(elf, "bad_insn")
    assert doc["reason"] == "bad_access"
    assert doc["bad_access"] == {
        "master": "isax",
        "channel": 0,
        "write": False,
        "address": 0x90000000,
        "start": 0x90000000,
        "beats": 1,
        "pc": pc,
    }
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 3
    assert (
        "bad_access: ISAX unit channel 0 read from unmapped address 0x90000000 "
        f"by the custom instruction at pc {pc:#010x}"
    ) in r.stderr


@pytest.mark.parametrize("soc", SOCS)
def test_last_ram_words_stay_mapped(soc, case_elf, soc_binary):
    # no off-by-one at the end of RAM: the last word for the core and the unit, and a
    # 16-word unit burst ending exactly there
    r = run(soc_binary(soc, isax=True), case_elf(soc, IN_RAM_EDGE), max_cycles=2_000_000)
    assert (r.reason, r.exit_code, r.bad_access) == ("exit", 0, None), r.report
    assert r.output == "before\nafter 1234 1\n"
