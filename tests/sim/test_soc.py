"""Reference SoCs end to end: console, exit codes, determinism, limits, errors, ISAX path."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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


def _sim_cli(*args: object) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "aquas.cli", "sim", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_vcd_to_unwritable_path_fails_before_the_run(tmp_path: Path, program, soc_binary):
    soc_binary("picorv32")
    elf = program("hello", "picorv32")
    for bad in (tmp_path / "missing-dir" / "wave.vcd", tmp_path):
        r = _sim_cli(elf, "--soc", "picorv32", "--vcd", bad)
        assert r.returncode == 2, r.stderr
        assert "cannot write the waveform file" in r.stderr and "Traceback" not in r.stderr
        assert "hello" not in r.stdout and "waveform:" not in r.stdout  # nothing ran
    assert not (tmp_path / "missing-dir").exists()


def test_vcd_is_written(tmp_path: Path, program, soc_binary):
    wave = tmp_path / "hello.vcd"
    r = run(soc_binary("picorv32"), program("hello", "picorv32"), max_cycles=200_000, vcd=wave)
    assert (r.reason, r.output) == ("exit", "hello, world\n")
    text = wave.read_text()
    assert "$enddefinitions" in text and "ev_valid" in text


def test_failed_build_leaves_no_temporary_directory(tmp_path: Path):
    from aquas.sim import build

    unit = tmp_path / "broken_isax_unit.v"
    unit.write_text("module broken_isax_unit(input wire clk); this is not verilog endmodule\n")
    cache = tmp_path / "cache"
    with pytest.raises(AquasError, match="Verilator build of the picorv32 SoC failed") as e:
        build("picorv32", None, [unit], quiet=True, cache_root=cache)
    leftovers = sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock"))
    assert len(leftovers) == 1 and leftovers[0].endswith(".failed.log"), leftovers
    assert str(cache / leftovers[0]) in str(e.value)
    assert "syntax error" in (cache / leftovers[0]).read_text()


def test_interrupted_build_leaves_no_temporary_directory(tmp_path: Path):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) during a real build."""
    cache = tmp_path / "cache"
    code = (
        "from pathlib import Path; from aquas.sim import build; "
        f"build('picorv32', quiet=True, cache_root=Path({str(cache)!r}))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(cache.glob(".*.tmp*/build.log")) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
        time.sleep(2.0)  # Verilator is running
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock")) == []


def test_cv32e40x_reset_edge_and_counters(program, soc_binary):
    """CV32E40X resets on the falling edge of rst_ni (its sleep unit gates the clock during
    reset): the SoC top produces that edge, so mcountinhibit comes out of reset as the
    core specifies (0xD: mcycle and minstret inhibited); after start.S clears it, rdcycle
    advances (bit 8 of the exit code)."""
    r = run(soc_binary("cv32e40x"), program("mcountinhibit", "cv32e40x"), max_cycles=200_000)
    assert (r.reason, r.exit_code) == ("exit", 0x10D), r.report
