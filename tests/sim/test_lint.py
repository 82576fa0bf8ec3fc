"""verilator --lint-only -Wall on every template (and on both SoC tops, whole design)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import TEST_UNIT

from aquas.sim.builder import (
    COMMON_RTL,
    RTL,
    core_sources,
    soc_rtl,
    soc_top,
    verilator_cmd,
    verilator_env,
)
from aquas.target import load_target, target_names

pytestmark = pytest.mark.sim

WAIVERS = RTL / "harness" / "lint_waivers.vlt"
MODULES = [
    RTL / "soc" / "aquas_mem_ctrl.v",
    RTL / "soc" / "aquas_wb_port.v",
    RTL / "soc" / "aquas_isax_empty_slot.v",
    RTL / "devices" / "aquas_devices.v",
    RTL / "soc" / "aquas_isax_slot.v",
    RTL / "soc" / "aquas_mem_system.v",
    RTL / "adapters" / "cfu_adapter.v",
    RTL / "adapters" / "pcpi_adapter.v",
    TEST_UNIT,
    RTL / "soc" / "aquas_obi_port.v",
    RTL / "adapters" / "xif_adapter.v",
]


def lint(files: list[Path], *extra: str) -> None:
    cmd = [*verilator_cmd(), "--lint-only", "-Wall", *extra, *map(str, files)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=verilator_env())
    assert r.returncode == 0, r.stderr


# Templates that instantiate other templates are linted together with them.
DEPS = {
    "aquas_isax_slot.v": MODULES[2:3],
    "aquas_mem_system.v": MODULES[:5],
}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_lint_module(path: Path):
    deps = DEPS.get(path.name, [])
    lint([*deps, path], *(["--top-module", path.stem] if deps else []))


@pytest.mark.parametrize("soc", target_names())
@pytest.mark.parametrize("with_unit", [False, True])
def test_lint_soc(soc: str, with_unit: bool):
    t = load_target(soc=soc)
    core, incdirs = core_sources(t)
    files = [WAIVERS, *core, *COMMON_RTL, *soc_rtl(t)]
    extra = ["--top-module", soc_top(t), *[f"+incdir+{d}" for d in incdirs]]
    if with_unit:
        files.append(TEST_UNIT)
        extra.append("+define+AQUAS_ISAX_MODULE=aquastest_isax_unit")
    lint(files, *extra)


def test_unit_whose_operand_use_folds_away_is_lint_clean(tmp_path: Path) -> None:
    """Fuzz finding F11: `rs1[0] << 6252` folds to 0, so the unit never reads cmd_rs1; the
    canonical port's unused input must not fail the lint gate of `aquas run`."""
    from aquas.spec.frontend import lower_spec
    from aquas.synth.flow import synthesize
    from aquas.synth.lint import lint as lint_unit

    src = (
        "extension e;\n#[opcode(custom0), funct7(0)]\n"
        "isax f(rs1) -> rd { let b: u1 = rs1[0] << zext<u32>(6252u13); return zext<u32>(b); }\n"
    )
    res = synthesize(lower_spec(src, "f11.isax"), tmp_path, 10.0, 12)
    assert lint_unit(res.verilog_path) == []


def test_unit_whose_dispatch_folds_away_is_lint_clean(tmp_path: Path) -> None:
    """Fuzz finding: an ISAX without effects answers every command alike, so the dispatch
    folds away and cmd_opcode/cmd_funct3/cmd_funct7 are unused; that must not fail lint."""
    from aquas.spec.frontend import lower_spec
    from aquas.synth.flow import synthesize
    from aquas.synth.lint import lint as lint_unit

    src = (
        "extension e;\n#[opcode(custom2), funct7(87)]\n"
        "isax op(rs1, rs2) { for i in 4..10 { var v: u32 = rs1 + rs2; } }\n"
    )
    res = synthesize(lower_spec(src, "noeffect.isax"), tmp_path, 50.0, 12)
    assert lint_unit(res.verilog_path) == []


def test_unit_whose_division_feeds_only_unobservable_state_is_lint_clean(tmp_path: Path) -> None:
    """Fuzz finding (seed 303): a state updated only from itself through a division
    reaches nothing observable; the exporter removed its register, but the divider stayed,
    its output connected to nothing (PINCONNECTEMPTY). Now the write, and the division,
    go before scheduling (``aquas-drop-unobservable``)."""
    from aquas.spec.frontend import lower_spec
    from aquas.synth.flow import synthesize
    from aquas.synth.lint import lint as lint_unit

    src = (
        "extension e;\nstate st: u16 = 7;\n#[opcode(custom0), funct7(0)]\n"
        "isax f(rs1, rs2) -> rd { st = (0x1u61)[45:30] % (st | 0xffffu16); return rs1; }\n"
    )
    res = synthesize(lower_spec(src, "f303.isax"), tmp_path, 10.0, 12)
    assert "_div16" not in res.verilog_path.read_text()
    assert lint_unit(res.verilog_path) == []


@pytest.mark.parametrize("width", [64, 128])
def test_lint_soc_with_a_wide_isax_port(width: int, tmp_path: Path) -> None:
    """The vexriscv SoC with a W-bit ISAX DMA port, whole design, with the empty slot and
    with a generated unit of that width (burst reads and writes of i8 and i32)."""
    from aquas.spec.frontend import lower_spec
    from aquas.synth.flow import synthesize

    src = (
        "extension w;\nscratchpad a: [u8; 20];\nscratchpad b: [u32; 8];\n"
        "#[opcode(custom0), funct7(0)]\n"
        "isax cp(rs1, rs2) { burst a[0 +: 20] <- mem[rs1]; burst mem[rs2] <- a[0 +: 20]; }\n"
        "#[opcode(custom0), funct7(1)]\n"
        "isax cq(rs1, rs2) { burst b[0 +: 8] <- mem[rs1]; burst mem[rs2] <- b[0 +: 8]; }\n"
    )
    unit = synthesize(lower_spec(src, "w.isax"), tmp_path, 10.0, 12, bus_width=width)
    t = load_target(soc="vexriscv").replace(isax_master={"bus_width": width})
    core, _ = core_sources(t)
    files = [WAIVERS, *core, *COMMON_RTL, *soc_rtl(t)]
    extra = ["--top-module", soc_top(t), f"-GISAX_WIDTH={width}"]
    lint(files, *extra)
    from aquas.synth.lint import WAIVERS as UNIT_WAIVERS  # the generated units' own waivers

    with_unit = [UNIT_WAIVERS, *files, unit.verilog_path]
    lint(with_unit, *extra, "+define+AQUAS_ISAX_MODULE=w_isax_unit")


@pytest.mark.parametrize("soc", ["vexriscv", "picorv32"])
def test_lint_soc_with_a_pipelined_memory_controller(soc: str, tmp_path: Path) -> None:
    """The SoC with aquas_mem_ctrl accepting 4 requests at once (its FIFO), whole design,
    with a unit that sends requests ahead (tests/sim/specs/ahead.isax)."""
    from aquas.plans.outstanding import set_outstanding
    from aquas.spec.frontend import lower_spec_file
    from aquas.synth.flow import synthesize

    m = lower_spec_file(Path(__file__).parent / "specs" / "ahead.isax")
    set_outstanding(m, 4)
    unit = synthesize(m, tmp_path, 10.0, 12)
    t = load_target(soc=soc).replace(isax_master={"outstanding": 4})
    core, _ = core_sources(t)
    files = [WAIVERS, *core, *COMMON_RTL, *soc_rtl(t)]
    extra = ["--top-module", soc_top(t), "-GOUTSTANDING=4"]
    lint(files, *extra)
    from aquas.synth.lint import WAIVERS as UNIT_WAIVERS

    lint(
        [UNIT_WAIVERS, *files, unit.verilog_path],
        *extra,
        "+define+AQUAS_ISAX_MODULE=ahead_isax_unit",
    )
