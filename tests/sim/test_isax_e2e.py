"""A real program calls generated ISAX hardware through aquas_isax.h on every SoC: same
output as its plain-C build, in fewer cycles."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.interpreter import find_extension
from aquas.runtime.build import build_program
from aquas.runtime.header import write_header
from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import synthesize
from aquas.target import target_names

from helpers import run_program_both_ways

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "pointcloud" / "pointcloud.isax"
PROGRAM = Path(__file__).parent / "programs" / "pointcloud_kernels.c"


@pytest.fixture(scope="module")
def unit_verilog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    res = synthesize(lower_spec_file(SPEC), tmp_path_factory.mktemp("unit"), clock_ns=10.0)
    return res.verilog_path


@pytest.mark.parametrize("soc", target_names())
def test_pointcloud_kernels_offloaded(soc: str, unit_verilog: Path, tmp_path: Path) -> None:
    base, fast = run_program_both_ways(
        SPEC, PROGRAM, soc, unit_verilog, tmp_path, max_cycles=5_000_000
    )
    assert fast.output == base.output
    assert len(base.output.splitlines()) == 4
    sw_cycles, hw_cycles = base.regions[1].cycles, fast.regions[1].cycles
    print(f"{soc}: kernels {sw_cycles} cycles in software, {hw_cycles} with the ISAX unit")
    assert hw_cycles < sw_cycles


@pytest.mark.parametrize("width", [32, 128])
def test_pointcloud_kernels_on_the_wide_isax_port(width: int, tmp_path: Path) -> None:
    """The packaged ``vexriscv-wide`` platform (a 128-bit ISAX port) against the reference
    32-bit one: a unit synthesized for each width runs the kernels (v3ddist and the other
    burst ISAXs) with the plain-C program's output; the wide port needs fewer cycles."""
    import aquas.sim
    from aquas.target import load_target

    plat = load_target("vexriscv-wide" if width == 128 else None, soc="vexriscv")
    assert plat.isax_master.bus_width == width
    assert plat.verilog_params()["ISAX_WIDTH"] == width
    unit = synthesize(lower_spec_file(SPEC), tmp_path / "unit", clock_ns=10.0, bus_width=width)
    ext = find_extension(lower_spec_file(SPEC))
    write_header(ext, "vexriscv", tmp_path / "inc" / "aquas_isax.h", allow_unrouted=False)
    sw_elf = build_program([PROGRAM], tmp_path / "sw", platform="vexriscv")
    hw_elf = build_program(
        [PROGRAM],
        tmp_path / "hw",
        platform="vexriscv",
        header_dirs=[tmp_path / "inc"],
        defines={"USE_ISAX": "1"},
    )
    base = aquas.sim.run(
        aquas.sim.build("vexriscv", plat, quiet=True), sw_elf, max_cycles=5_000_000
    )
    fast = aquas.sim.run(
        aquas.sim.build("vexriscv", plat, [unit.verilog_path], quiet=True),
        hw_elf,
        max_cycles=5_000_000,
    )
    for res in (base, fast):
        assert res.reason == "exit" and res.exit_code == 0, res.report
    assert fast.output == base.output
    assert len(base.output.splitlines()) == 4
    print(
        f"W={width}: kernels {base.regions[1].cycles} cycles in software, "
        f"{fast.regions[1].cycles} with the ISAX unit"
    )
    WIDE_CYCLES[width] = fast.regions[1].cycles
    assert fast.regions[1].cycles < base.regions[1].cycles
    if 32 in WIDE_CYCLES and 128 in WIDE_CYCLES:
        assert WIDE_CYCLES[128] < WIDE_CYCLES[32]


WIDE_CYCLES: dict[int, int] = {}


def test_a_unit_of_another_width_is_refused(tmp_path: Path) -> None:
    import aquas.sim
    from aquas.diagnostics import AquasError
    from aquas.target import load_target

    unit = synthesize(lower_spec_file(SPEC), tmp_path, clock_ns=10.0, bus_width=64)
    with pytest.raises(AquasError, match=r"memory master is 64 bits wide, but .* is 128"):
        aquas.sim.build("vexriscv", load_target("vexriscv-wide"), [unit.verilog_path], quiet=True)
