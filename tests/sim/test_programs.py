"""Test programs on the reference SoCs (Verilator): the RV32IM self-checking suite, C
programs compared byte for byte with a native host build, and the cycle counters.

Programs are built with aquas.runtime.build; SoCs with aquas.sim.build (cached under
the user cache directory); runs with aquas.sim.run."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from aquas.runtime.build import build_program
from aquas.target import target_names

pytestmark = pytest.mark.sim

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"


def rv32im_suite() -> Path:
    """The generated RV32IM self-checking suite (written under build/, not committed)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "gen_rv32im_tests", PROGRAMS / "gen_rv32im_tests.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ensure_suite()


SOCS = target_names()
C_PROGRAMS = ["crc32", "insertion_sort", "matmul", "strings", "fir", "div64"]
MAX_CYCLES = 20_000_000


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sim-programs")


@pytest.fixture(scope="module", params=SOCS)
def soc(request: pytest.FixtureRequest):
    """(name, SimBinary) of a reference SoC without ISAX unit."""
    import aquas.sim

    if shutil.which("riscv64-unknown-elf-gcc") is None:
        pytest.fail(
            "riscv64-unknown-elf-gcc missing: install gcc-riscv64-unknown-elf (scripts/setup.sh)"
        )
    return request.param, aquas.sim.build(request.param, quiet=True)


def _run(soc, elf: Path, max_cycles: int = MAX_CYCLES):
    import aquas.sim

    _name, binary = soc
    res = aquas.sim.run(binary, elf, max_cycles=max_cycles)
    assert not res.timed_out, f"timed out after {res.cycles} cycles; output so far:\n{res.output}"
    return res


def test_rv32im_instruction_suite(soc, out_dir: Path) -> None:
    name, _ = soc
    elf = build_program([rv32im_suite()], out_dir, platform=name)
    res = _run(soc, elf)
    assert res.output == "PASS\n", res.output + getattr(res, "report", "")
    assert res.exit_code == 0


@pytest.fixture(scope="module")
def host_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("host")
    outs = {}
    for name in C_PROGRAMS:
        exe = tmp / name
        subprocess.run(
            [
                "gcc",
                "-O2",
                "-I",
                str(PROGRAMS / "host"),
                str(PROGRAMS / f"{name}.c"),
                "-o",
                str(exe),
            ],
            check=True,
        )
        outs[name] = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    return outs


@pytest.mark.parametrize("name", C_PROGRAMS)
def test_c_program_matches_host(
    name: str, soc, out_dir: Path, host_outputs: dict[str, str]
) -> None:
    elf = build_program([PROGRAMS / f"{name}.c"], out_dir, platform=soc[0])
    res = _run(soc, elf)
    assert res.exit_code == 0, res.output + getattr(res, "report", "")
    assert res.output == host_outputs[name]


@pytest.mark.parametrize("name", ["crc32", "matmul", "fir", "insertion_sort"])
def test_c_program_regions_are_measured(name: str, soc, out_dir: Path) -> None:
    elf = build_program([PROGRAMS / f"{name}.c"], out_dir, platform=soc[0])
    res = _run(soc, elf)
    assert 1 in res.regions
    region = res.regions[1]
    cycles = region.cycles if hasattr(region, "cycles") else int(region)
    assert 0 < cycles < res.cycles


def test_cycle_counters_and_regions_agree(soc, out_dir: Path) -> None:
    """rdcycle, the memory-mapped counter and the harness's region accounting tell the same
    time (up to the few cycles between the measuring instructions)."""
    elf = build_program([PROGRAMS / "timing.c"], out_dir, platform=soc[0])
    res = _run(soc, elf)
    assert res.exit_code == 0
    m = re.search(r"csr_delta=(\d+) mmio_delta=(\d+)", res.output)
    assert m, res.output
    csr, mmio = int(m.group(1)), int(m.group(2))
    assert 1000 * 3 <= mmio <= csr  # at least 3 instructions per loop iteration
    assert csr - mmio < 200
    r7, r8 = res.regions[7], res.regions[8]
    assert r7.count == 1 and r8.count == 3
    assert 0.5 * mmio < r7.cycles <= mmio + 50
    # three 100-iteration runs vs one 1000-iteration run
    assert 0.15 * r7.cycles < r8.cycles < 0.6 * r7.cycles
    assert "cycles64_hi=0 cycles64_lo_nonzero=1" in res.output
    assert res.cycles >= csr


# ---- coherence between the core and ISAX memory traffic (generated aquas_isax.h) ----------

TEST_UNIT = Path(__file__).resolve().parent / "fixtures" / "aquastest_isax_unit.v"


@pytest.fixture(scope="module")
def memtest_ext():
    from aquas.interpreter import find_extension
    from aquas.spec.frontend import lower_spec_file

    return find_extension(lower_spec_file(PROGRAMS / "memtest.isax"))


def _memtest(soc_name: str, platform, ext, out_dir: Path, tag: str):
    import aquas.sim
    from aquas.runtime.header import write_header

    inc = out_dir / f"memtest-{soc_name}-{tag}"
    write_header(ext, platform, inc / "aquas_isax.h", allow_unrouted=False)
    elf = build_program([PROGRAMS / "memtest.c"], out_dir, platform=soc_name, header_dirs=[inc])
    binary = aquas.sim.build(soc_name, None, [TEST_UNIT], quiet=True)
    res = aquas.sim.run(binary, elf, max_cycles=MAX_CYCLES)
    assert not res.timed_out and res.reason == "exit", res.report
    return res


@pytest.mark.parametrize("soc_name", SOCS)
def test_isax_memory_coherence_with_generated_header(
    soc_name: str, memtest_ext, out_dir: Path
) -> None:
    """Stores right before an ISAX reads memory, and cached lines an ISAX overwrites, are
    handled by the header's cache maintenance on the real cores."""
    res = _memtest(soc_name, soc_name, memtest_ext, out_dir, "default")
    assert res.exit_code == 0 and res.output.endswith("errors=0\n"), res.output
    for rid in (1, 2, 3):
        assert res.regions[rid].count == 1


def test_vexriscv_line_eviction_is_the_default_and_cheaper(memtest_ext, out_dir: Path) -> None:
    """On VexRiscv's direct-mapped write-through cache the header evicts only the lines a
    writing ISAX may have written (dcache.coherence = auto picks evict-lines for memtest's
    ISAXs), which is correct (memtest, including a range over three lines) and cheaper per
    call than invalidating the whole cache (region 3: a one-word store ISAX)."""
    from aquas.runtime.header import generate_header
    from aquas.target import load_target

    vex = load_target(soc="vexriscv")
    assert "aquas_dcache_evict(rs2, 64u);" in generate_header(memtest_ext, vex)
    evict = _memtest("vexriscv", "vexriscv", memtest_ext, out_dir, "default")
    assert evict.exit_code == 0 and evict.output.endswith("errors=0\n"), evict.output
    whole = _memtest(
        "vexriscv",
        vex.replace(dcache={"coherence": "invalidate-all"}),
        memtest_ext,
        out_dir,
        "invalidate-all",
    )
    assert whole.exit_code == 0 and whole.output.endswith("errors=0\n"), whole.output
    per_call = {k: r.regions[3].cycles / 32 for k, r in (("evict", evict), ("whole", whole))}
    assert per_call["evict"] + 40 < per_call["whole"], per_call


def test_vexriscv_needs_the_invalidation(memtest_ext, out_dir: Path) -> None:
    """Negative control: without the D-cache invalidation after memory-writing ISAXs the
    core reads stale lines, so memtest does detect missing maintenance."""
    from aquas.target import load_target

    bare = load_target(soc="vexriscv").replace(dcache={"policy": "none"})
    res = _memtest("vexriscv", bare, memtest_ext, out_dir, "bare")
    assert res.exit_code != 0
    assert "store-then-load[0]: got 11110000 want 5eed0000" in res.output
    assert "load-after-store" not in res.output  # reads need no maintenance on this SoC
