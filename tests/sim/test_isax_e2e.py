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
    import aquas.sim

    ext = find_extension(lower_spec_file(SPEC))
    write_header(ext, soc, tmp_path / "inc" / "aquas_isax.h", allow_unrouted=False)
    sw_elf = build_program([PROGRAM], tmp_path / "sw", platform=soc)
    hw_elf = build_program(
        [PROGRAM],
        tmp_path / "hw",
        platform=soc,
        header_dirs=[tmp_path / "inc"],
        defines={"USE_ISAX": "1"},
    )
    base = aquas.sim.run(aquas.sim.build(soc, quiet=True), sw_elf, max_cycles=5_000_000)
    fast = aquas.sim.run(
        aquas.sim.build(soc, None, [unit_verilog], quiet=True), hw_elf, max_cycles=5_000_000
    )
    for res in (base, fast):
        assert res.reason == "exit" and res.exit_code == 0, res.report
    assert fast.output == base.output
    assert len(base.output.splitlines()) == 4
    sw_cycles, hw_cycles = base.regions[1].cycles, fast.regions[1].cycles
    print(f"{soc}: kernels {sw_cycles} cycles in software, {hw_cycles} with the ISAX unit")
    assert hw_cycles < sw_cycles
