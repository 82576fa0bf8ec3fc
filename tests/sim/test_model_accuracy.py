"""The memory-interface model against RTL: point-cloud ISAXs measured through the SoC's
aquas_mem_ctrl (L2 on, memory latency 10), predicted by aquas.model.

The measured cycles come from the simulated hardware (a counter in the measurement top,
command handshake to the first rsp_valid), never from the model. benchmarks/bench_model.py
runs the full grid; this is its regression check at one setting.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from aquas.model import predict_module
from aquas.model.measure import measure
from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import SynthResult, synthesize
from aquas.target import load_target

from helpers import require_tool

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "pointcloud" / "pointcloud.isax"
TARGET = load_target(soc="vexriscv").replace(l2={"enable": True})
CHECKED = ("v3ddist", "vcovmat3d", "vgemv4")


@pytest.fixture(scope="module")
def unit(tmp_path_factory: pytest.TempPathFactory) -> SynthResult:
    require_tool("make", "make")
    require_tool("g++", "g++")
    return synthesize(lower_spec_file(SPEC), tmp_path_factory.mktemp("pc"))


def test_warm_l2_is_exact(unit: SynthResult) -> None:
    m = measure(SPEC, unit.verilog_path, unit.unit.name, TARGET, l2="warm", cases=4)
    assert not m.mismatches
    pred = {p.isax: p.total for p in predict_module(lower_spec_file(SPEC), TARGET, l2="warm")}
    for name in CHECKED:
        got = m.cycles[name]
        assert len(got) == 4
        # every warm call costs the same; the model's formula gives exactly that
        assert set(got) == {pred[name]}, (name, got, pred[name])
        assert all(h == 0 for h in m.l2_misses[name]), "a warm call missed in the L2"


def test_cold_l2_mean_within_tolerance(unit: SynthResult) -> None:
    m = measure(SPEC, unit.verilog_path, unit.unit.name, TARGET, l2="cold", cases=24)
    assert not m.mismatches
    pred = {p.isax: p for p in predict_module(lower_spec_file(SPEC), TARGET, l2="cold")}
    for name in CHECKED:
        mean = statistics.fmean(m.cycles[name])
        assert abs(pred[name].total - mean) / mean <= 0.05, (name, pred[name].total, mean)
        misses = statistics.fmean(m.l2_misses[name])
        want = sum(t.l2_misses for t in pred[name].transfers)
        assert abs(misses - want) <= 0.5, (name, misses, want)
