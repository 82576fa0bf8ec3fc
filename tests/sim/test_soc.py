"""Reference SoCs end to end: console, exit codes, determinism, limits, errors, ISAX path."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import symbol

from aquas.diagnostics import AquasError
from aquas.sim import run
from aquas.target import target_names

pytestmark = pytest.mark.sim
SOCS = target_names()


@pytest.mark.parametrize("soc", SOCS)
def test_hello_world(soc, program, soc_binary):
    r = run(soc_binary(soc), program("hello", soc), max_cycles=200_000)
    assert r.output == "hello, world\n"
    assert (r.exit_code, r.reason, r.timed_out) == (0, "exit", False)
    assert 100 < r.cycles < 20_000


def test_exit_code(program, soc_binary):
    r = run(soc_binary("vexriscv"), program("exitcode", "vexriscv"), max_cycles=200_000)
    assert r.output == "bye\n"
    assert r.exit_code == 42


@pytest.mark.parametrize("soc", SOCS)
def test_cycles_are_deterministic(soc, program, soc_binary):
    a = run(soc_binary(soc, isax=True), program("memcheck", soc), max_cycles=500_000)
    b = run(soc_binary(soc, isax=True), program("memcheck", soc), max_cycles=500_000)
    assert a.exit_code == 0
    assert a.cycles == b.cycles
    assert {k: v.cycles for k, v in a.regions.items()} == {
        k: v.cycles for k, v in b.regions.items()
    }


def test_cycle_limit(program, soc_binary):
    r = run(soc_binary("vexriscv"), program("forever", "vexriscv"), max_cycles=20_000)
    assert r.timed_out and r.reason == "timeout"
    assert r.cycles == 20_000
    assert r.exit_code == -1
    assert "did not exit within 20000 cycles" in r.report


@pytest.mark.parametrize("soc", SOCS)
def test_empty_isax_slot_reports(soc, program, soc_binary):
    elf = program("unattached", soc)
    r = run(soc_binary(soc), elf, max_cycles=200_000)
    assert r.reason == "unattached" and not r.timed_out
    pc = symbol(elf, "the_custom_insn")
    assert r.report == (
        "custom instruction with no ISAX unit attached: opcode custom-0 (0x0b) "
        f"funct3=3 funct7=0x05 at pc 0x{pc:08x}"
    )


def test_vexriscv_custom1_is_illegal(program, soc_binary):
    # VexRiscv routes only custom-0 to the CFU; custom-1 traps (mcause 2 -> exit 0x1002).
    r = run(soc_binary("vexriscv", isax=True), program("custom1", "vexriscv"), max_cycles=200_000)
    assert r.exit_code == 0x1002


def test_picorv32_custom1_reaches_unit(program, soc_binary):
    r = run(soc_binary("picorv32", isax=True), program("custom1", "picorv32"), max_cycles=200_000)
    assert (r.reason, r.exit_code) == ("exit", 0)


@pytest.mark.parametrize("soc", SOCS)
def test_isax_unit(soc, program, soc_binary):
    # isax.S checks rd of an add, store->ISAX-read ordering, a 16-word burst copy (with the
    # destination cached in the D-cache beforehand) and a single-word ISAX write.
    r = run(soc_binary(soc, isax=True), program("isax", soc), max_cycles=500_000)
    assert (r.reason, r.exit_code) == ("exit", 0), r.report


def test_bad_elf(tmp_path: Path, soc_binary):
    bad = tmp_path / "bad.elf"
    bad.write_bytes(b"this is not an ELF file")
    with pytest.raises(AquasError, match="not an ELF file"):
        run(soc_binary("vexriscv"), bad)
    with pytest.raises(AquasError, match="cannot read program"):
        run(soc_binary("vexriscv"), tmp_path / "missing.elf")


def test_elf_outside_ram(tmp_path: Path, program, soc_binary):
    import subprocess

    from conftest import FIXTURES

    elf = tmp_path / "high.elf"
    subprocess.run(
        [
            "riscv64-unknown-elf-gcc",
            "-march=rv32im_zicsr",
            "-mabi=ilp32",
            "-nostdlib",
            "-Wl,--no-warn-rwx-segments",
            "-Wl,-Ttext=0x40000000",
            "-Wl,-e,0",
            str(FIXTURES / "forever.S"),
            "-o",
            str(elf),
        ],
        check=True,
    )
    with pytest.raises(AquasError):
        run(soc_binary("vexriscv"), elf)


def test_build_is_cached(soc_binary):
    from aquas.sim import build

    b = build("vexriscv", quiet=True)
    assert b.cached and b.path == soc_binary("vexriscv").path
