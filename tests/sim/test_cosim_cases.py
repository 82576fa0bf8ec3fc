"""Fewer co-simulation cases for an ISAX of long calls (``synth/cosim.py``,
``cases_by_isax``): the test bench runs exactly the cases asked per ISAX, and the others
keep the count requested."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.spec.frontend import lower_spec
from aquas.synth.cosim import cases_by_isax, run_cosim
from aquas.synth.flow import synthesize

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]

SPEC = """
extension cases;

#[opcode(custom0), funct7(0)]
isax short(rs1, rs2) -> rd {
    return rs1 + rs2;
}

#[opcode(custom0), funct7(1)]
isax long(rs1, rs2) -> rd {
    var acc: u32 = rs2;
    for i in 0..400 {
        acc = (acc ^ rs1) + i;
    }
    return acc;
}
"""


def _report(fixed: int, per_l: int = 0, beats: int = 0) -> dict[str, object]:
    return {"latency": {"fixed_max": fixed, "per_mem_latency_max": per_l}, "memory_beats": beats}


def test_cases_by_isax_caps_only_long_calls() -> None:
    reports = {"a": _report(10), "b": _report(1000, 2, 100), "c": _report(100_000)}
    # b: 1000 + 2 * 9 + 100 = 1118 cycles a call, 20,000 // 1118 = 17 cases; c: the floor
    assert cases_by_isax(reports, 50, cycles=20_000, floor=5) == {"a": 50, "b": 17, "c": 5}
    assert cases_by_isax(reports, 3, cycles=20_000, floor=5) == {"a": 3, "b": 3, "c": 3}


def test_the_bench_runs_the_cases_asked_per_isax(tmp_path: Path) -> None:
    spec = tmp_path / "cases.isax"
    spec.write_text(SPEC)
    res = synthesize(lower_spec(SPEC, str(spec)), tmp_path / "out", 10.0, mem_latency=4)
    assert res.reports["long"]["latency"]["fixed_max"] >= 400
    by_isax = cases_by_isax(res.reports, 40, cycles=4_000, floor=4)
    assert by_isax["short"] == 40 and 4 <= by_isax["long"] <= 10, by_isax
    cs = run_cosim(
        spec,
        res.verilog_path,
        res.unit.name,
        cases=40,
        seed=3,
        cache_dir=ROOT / "build" / "cosim",
        by_isax={"long": by_isax["long"]},
    )
    assert cs.mismatches == []
    assert cs.stats["short"]["cases"] == 40
    assert cs.stats["long"]["cases"] == by_isax["long"]
    assert cs.cases == 40 + by_isax["long"]
