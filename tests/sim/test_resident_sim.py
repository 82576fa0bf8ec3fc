"""Resident scratchpads in hardware (aquas-interface-resident, docs/isax-port.md "Snoop"):
co-simulation with repeated operands and foreign writes, a unit that ignores the snoop
port caught by it, and a program on every SoC that changes a resident cloud by core
stores, a byte store and the unit's own writes, with every answer checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.model import predict_module
from aquas.model.measure import measure
from aquas.plans.choose import apply_interface
from aquas.plans.resident import mark_resident
from aquas.sim.builder import unit_snoops
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import synthesize
from aquas.synth.pipeline import synthesize_unit
from aquas.target import load_target, target_names

from helpers import run_program_both_ways

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
POINTCLOUD = ROOT / "examples" / "pointcloud" / "pointcloud.isax"
PROGRAM = Path(__file__).parent / "programs" / "resident.c"
CACHE = ROOT / "build" / "cosim"
ELIG = Path(__file__).parent / "fixtures" / "resident_elig.isax"  # only s1 is resident


@pytest.fixture(scope="module")
def elig(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    m = lower_spec_file(ELIG)
    assert mark_resident(m) == {"once": ["s1"]}
    unit = synthesize(m, tmp_path_factory.mktemp("elig"), 10.0, mem_latency=4)
    return ELIG, unit.verilog_path


def test_repeated_calls_skip_the_burst_and_stay_exact(elig: tuple[Path, Path]) -> None:
    spec, verilog = elig
    cs = run_cosim(spec, verilog, "elig_isax_unit", cases=64, seed=3, cache_dir=CACHE)
    assert cs.mismatches == []
    once = cs.stats["once"]
    assert once["cases"] == 64 and len(once["resident_cycles"]) > 10
    # a skipped burst: faster than any call that moved the 8 words (cycles of the cases
    # with new operands, all of which fill)
    assert min(once["resident_cycles"]) < min(once["cycles"]) - 8
    # ISAXs without a resident scratchpad never skip
    assert min(cs.stats["looped"]["resident_cycles"]) >= min(cs.stats["looped"]["cycles"]) - 10


def test_a_unit_deaf_to_the_snoop_port_is_caught(elig: tuple[Path, Path], tmp_path: Path) -> None:
    spec, verilog = elig
    text = verilog.read_text()
    assert text.count("snoop_valid &") >= 2
    deaf = tmp_path / verilog.name
    deaf.write_text(text.replace("snoop_valid &", "1'b0 &"))
    bad = run_cosim(spec, deaf, "elig_isax_unit", cases=64, seed=3, cache_dir=CACHE).mismatches
    assert any(m.startswith("once(") for m in bad), bad


@pytest.fixture(scope="module")
def pointcloud_unit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    u = synthesize_unit(
        lower_spec_file(POINTCLOUD),
        tmp_path_factory.mktemp("pc"),
        10.0,
        12,
        yosys=False,
        target=load_target(None, soc="vexriscv"),
    )
    assert u.lint_warnings == []
    assert unit_snoops([u.synth.verilog_path])
    return u.synth.verilog_path


def test_the_model_predicts_calls_that_keep_their_claims(pointcloud_unit: Path) -> None:
    """Warm measurement repeats each call with the same operands: on VexRiscv (no L2) the
    repeated call differs from the first only by the bursts its resident scratchpads
    skip, and the model's warm prediction (resident_total) gives its cycles exactly."""
    target = load_target(None, soc="vexriscv")
    m = measure(POINTCLOUD, pointcloud_unit, "pointcloud_isax_unit", target, l2="warm", cases=4)
    assert not m.mismatches
    module = lower_spec_file(POINTCLOUD)
    cold = apply_interface(module, "auto", 10.0, 12, target=target).predictions
    warm = {p.isax: p for p in predict_module(module, target, l2="warm")}
    for name, got in m.cycles.items():
        want = warm[name].total
        assert set(got) == {want}, (name, got, want)
        # vmaxarg's scratchpad is also written element-wise; vgemv4's buffers and
        # vcovmat3d's centroid are registers (the flow keeps SRAM scratchpads resident
        # only), and its points' SRAM is written by v3ddist too: not resident
        if name in ("vmaxarg", "vgemv4", "vcovmat3d"):
            assert warm[name].resident_total is None and want == cold[name].total
        else:
            assert want == warm[name].resident_total < cold[name].total
    # vnearest skips the cloud's burst (192 beats), not the query point's (registers)
    assert cold["vnearest"].total - warm["vnearest"].total > 192


@pytest.mark.parametrize("soc", target_names())
def test_a_resident_cloud_follows_every_writer(
    soc: str, pointcloud_unit: Path, tmp_path: Path
) -> None:
    base, fast = run_program_both_ways(
        POINTCLOUD, PROGRAM, soc, pointcloud_unit, tmp_path, max_cycles=20_000_000
    )
    assert fast.output == base.output
    assert fast.output.rstrip().endswith("errors 0")
    # 16 calls on an unchanged cloud against 16 after a store into it: all but the first
    # of the former skip the 192-word burst (about 200 cycles each)
    fixed, stored = fast.regions[1].cycles, fast.regions[2].cycles
    print(f"{soc}: unchanged cloud {fixed} cycles, stored-to cloud {stored}")
    assert fixed + 15 * 150 < stored
