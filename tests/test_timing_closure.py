"""Timing closure (synth/pipeline.py): schedule, map onto the cell library, time, and
schedule again with derated delays while the unit's critical path exceeds the clock.

Yosys, OpenSTA and the OSU018 Liberty file must be installed (scripts/setup.sh): a missing
one fails the real-tool test, it does not skip it."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aquas.cli import main
from aquas.spec.frontend import lower_spec_file
from aquas.synth import pipeline, sta
from aquas.synth.flow import schedule_isaxs
from aquas.synth.oplib import OperatorLibrary
from tests.helpers import require_tool

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "tests/sim/specs/narrow.isax"


def _states(lib: OperatorLibrary, clock_ns: float) -> dict[str, int]:
    """Cycles of each ISAX (register-only: no memory term)."""
    _, fsms = schedule_isaxs(lower_spec_file(SPEC), clock_ns, lib)
    return {f.isax.sym_name.data: f.latency.max_fixed for f in fsms}


def _close_with_fake_sta(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    paths: list[float],
    areas: list[float] | None = None,
    remap: bool = False,
) -> tuple[pipeline.UnitResult, list[str], list[str]]:
    """Closure of ``SPEC`` at 6 ns with OpenSTA replaced: the k-th mapping reports
    ``paths[k]`` and ``areas[k]``. Returns the result, the Verilog of each round timed, and
    the progress lines. Narrow misses are not mapped again for delay unless ``remap``."""
    path_it, area_it = iter(paths), iter(areas or [1.0] * len(paths))
    timed: list[str] = []

    def fake_measure(verilog: Path, top: str, clock_ns: float, **kw: Any) -> Any:
        timed.append(verilog.read_text())
        return sta.StaFigures(
            "fake", top, clock_ns, next(area_it), 1, 1, next(path_it), map_ns=kw.get("map_ns")
        )

    if not remap:
        monkeypatch.setattr(pipeline, "REMAP_RATIO", 1.0)
    monkeypatch.setattr(sta, "tools_available", lambda: True)
    monkeypatch.setattr(sta, "measure", fake_measure)
    said: list[str] = []
    u = pipeline.synthesize_unit(
        lower_spec_file(SPEC),
        tmp_path,
        6.0,
        12,
        lint=False,
        yosys=False,
        close_timing=True,
        progress=said.append,
    )
    return u, timed, said


def test_derating_chains_less_but_keeps_what_fits_a_cycle() -> None:
    lib = OperatorLibrary.load()
    assert lib.derated(2.0).delay_ns("add", 32) == pytest.approx(2 * lib.delay_ns("add", 32))
    assert lib.derated(2.0).derated(0.5).delay_ns("mul", 16) == lib.delay_ns("mul", 16)
    with pytest.raises(ValueError, match="positive"):
        lib.derated(0)
    base, slow = _states(lib, 10.0), _states(lib.derated(1.8), 10.0)
    assert all(slow[n] >= base[n] for n in base) and slow != base
    # an operator the derating makes slower than a cycle still gets a cycle of its own
    # (the 64-bit square of sqdiff: 46 levels = 4.6 ns; derated by 3, 13.8 ns > 9 ns)
    assert _states(lib.derated(3.0), 10.0)["sqdiff"] > base["sqdiff"]
    # unless `fit`: then it runs on the sequential multiplier, over more states
    fit = _states(lib.derated(3.0, fit=True), 10.0)
    assert fit["sqdiff"] > _states(lib.derated(3.0), 10.0)["sqdiff"]


def test_the_loop_keeps_the_shortest_path_and_records_every_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    u, timed, said = _close_with_fake_sta(tmp_path, monkeypatch, [7.0, 6.4, 6.6, 6.5])
    rounds = u.timing_closure
    assert rounds is not None and [r["unit_path_ns"] for r in rounds] == [7.0, 6.4, 6.6, 6.5]
    assert rounds[0]["derate"] == 1.0 and not rounds[0]["fit"]
    # derated by the measured ratio times the margin: 7.0 / 6.0 * 1.03
    assert rounds[1]["derate"] == pytest.approx(7.0 / 6.0 * 1.03, abs=1e-3)
    # round 3 did not beat round 2: from then on the derating also decides what fits a cycle
    assert rounds[3]["fit"] and not rounds[2]["fit"]
    assert len(set(timed)) == 4  # each round timed a different schedule
    # none met 6 ns: the unit written is round 2's, the shortest
    assert u.synth.verilog_path.read_text() == timed[1]
    assert "timing closure: keeping round 2, the shortest path" in said


@pytest.mark.parametrize("branch_smaller", [True, False])
def test_a_round_met_with_fits_is_weighed_against_the_branch_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, branch_smaller: bool
) -> None:
    # round 2 does not shorten round 1's path, so round 3 lets the derated delays decide
    # what fits a cycle and meets 6 ns; round 4 derates as much without that, and meets too
    areas = [500.0, 500.0, 1000.0, 10.0] if branch_smaller else [500.0, 500.0, 10.0, 1000.0]
    # (then the branch's met round is bisected towards round 2's miss: those rounds miss)
    paths = [7.0, 7.0, 5.9, 5.8, 6.5, 6.5]
    u, timed, said = _close_with_fake_sta(tmp_path, monkeypatch, paths, [*areas, 1.0, 1.0])
    rounds = u.timing_closure
    assert rounds is not None and [r["unit_path_ns"] for r in rounds][:4] == [7.0, 7.0, 5.9, 5.8]
    assert [r["fit"] for r in rounds] == [False, False, True, False] + [False] * (len(rounds) - 4)
    # the other branch starts at round 3's derating, derated further while its schedule is
    # one timed before
    assert rounds[3]["derate"] >= rounds[2]["derate"]
    assert all(rounds[1]["derate"] < r["derate"] < rounds[3]["derate"] for r in rounds[4:])
    assert len(set(timed)) == len(timed)
    # each round records its own area and cycles; the costs here differ by 100x in area,
    # far more than the cycles (a derating of 1.6 at most, squared) can make up
    assert [r["logic_um2"] for r in rounds][2:4] == ([1000, 10] if branch_smaller else [10, 1000])
    # the branch's met round is bisected: the rounds after it miss
    assert len(rounds) > 4 and all(r["unit_path_ns"] == 6.5 for r in rounds[4:])
    assert all(r["cycles"] > 0 for r in rounds)
    kept = 3 if branch_smaller else 2
    assert u.synth.verilog_path.read_text() == timed[kept]
    assert ("timing closure: keeping round 3" in "\n".join(said)) is (not branch_smaller)


def test_a_met_round_after_a_miss_is_bisected_towards_the_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # rounds 1 and 2 miss 6 ns, round 3 meets: the deratings between are tried
    # (geometric midpoints; a midpoint whose schedule was timed before narrows the
    # interval by that round's verdict without mapping again), a met round bounding the
    # interval from above, a missed one from below; the met round of least cost is kept
    paths = [7.0, 6.3, 5.0, 5.9, 6.1, 5.95]
    areas = [1.0, 1.0, 900.0, 100.0, 1.0, 50.0]
    u, timed, said = _close_with_fake_sta(tmp_path, monkeypatch, paths, areas)
    rounds = u.timing_closure
    # the second bisection maps again unless its midpoint schedules like a round timed
    # before (the spec's delays decide: with constant multiplies by signed digits, it does)
    assert rounds is not None and 4 <= len(rounds) <= 3 + pipeline.CLOSURE_BISECT_ROUNDS
    d = [r["derate"] for r in rounds]
    assert d[1] == pytest.approx(7.0 / 6.0 * 1.03, abs=1e-3)
    assert d[1] < d[3] < d[2]  # between the last miss and the met round
    assert len(rounds) == 4 or d[1] < d[4] < d[3]  # round 4 met: below it
    assert len(set(timed)) == len(timed)
    assert "timing closure: met; trying deratings between the last miss and this" in said
    # rounds 3 and 4 met; round 4 is 9 times smaller for 13 cycles against 12
    assert u.synth.verilog_path.read_text() == timed[3]


def _close_with_stand_ins(
    monkeypatch: pytest.MonkeyPatch,
    synthesize: Callable[..., Any],
    measure: Callable[..., Any],
) -> tuple[Any, list[str]]:
    """``pipeline._close_timing`` at PicoRV32's 5.74 ns with ``synthesize`` and ``measure``
    standing in for the synthesis and OpenSTA; the library's deratings are recorded as
    ``lib.d`` (and ``lib.fit``). Returns the result and the progress lines."""
    from types import SimpleNamespace

    class Lib:
        def derated(self, d: float, fit: bool) -> Any:
            return SimpleNamespace(d=d, fit=fit)

    monkeypatch.setattr(pipeline, "_synthesize", synthesize)
    monkeypatch.setattr(pipeline, "REMAP_RATIO", 1.0)  # no narrow miss mapped again
    monkeypatch.setattr(sta, "tools_available", lambda: True)
    monkeypatch.setattr(sta, "measure", measure)
    said: list[str] = []
    u = pipeline._close_timing(
        SimpleNamespace(clone=lambda: None), Path("."), 5.74, 12, Lib(), {"progress": said.append}
    )
    return u, said


def test_bisection_does_not_count_the_met_round_as_a_miss(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # PicoRV32's point cloud at 5.74 ns: rounds derated by 1.0 and 1.1931 miss (6.6488,
    # 6.3083 ns), the third (6.3083 / 5.74 x 1.03 further: 1.350536, recorded rounded to
    # 1.3505) meets. Its recorded derating is below the one it ran at, so counted among
    # the misses it made the interval look closed and bisection was skipped. Here with
    # the synthesis and OpenSTA replaced: each derating has a Verilog text of its own,
    # which meets from 1.2 on
    from types import SimpleNamespace

    def fake_synthesize(
        module: Any, out_dir: Any, clock: float, mem: int, lib: Any, **kw: Any
    ) -> Any:
        v = f"{lib.d:.6f}"
        return SimpleNamespace(
            synth=SimpleNamespace(
                verilog_path=SimpleNamespace(read_text=lambda: v),
                unit=SimpleNamespace(name="u"),
                reports={"a": {"latency": {"cycles_max": round(100 * lib.d)}}},
            ),
            timing_closure=None,
        )

    def fake_measure(verilog: Any, top: str, clock_ns: float, **kw: Any) -> Any:
        d = float(verilog.read_text())
        path = {1.0: 6.6488}.get(d, 6.3083 if d < 1.2 else 4.7289)
        return sta.StaFigures("fake", top, clock_ns, 1.0, 1, 1, path)

    u, said = _close_with_stand_ins(monkeypatch, fake_synthesize, fake_measure)
    d = [r["derate"] for r in u.timing_closure]
    assert d[:3] == [1.0, 1.1931, 1.3505]
    assert "timing closure: met; trying deratings between the last miss and this" in said
    assert len(d) == 3 + pipeline.CLOSURE_BISECT_ROUNDS
    assert 1.1931 < d[3] < 1.3505 and 1.1931 < d[4] < d[3]


def test_the_kept_round_is_the_unit_returned_when_bisection_reaches_an_old_schedule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # PicoRV32's point cloud (3 ISAXs) at 5.74 ns: derated by 1.0 it misses (5.947 ns),
    # by 1.1 and 1.0488 it meets (4.9157 ns); bisection then tries 1.0241, whose schedule
    # is round 1's. The loop stopped there with that unit in hand and returned it (it
    # misses the clock) instead of the kept round 3. Synthesis and OpenSTA replaced: the
    # schedules below 1.03 are round 1's Verilog
    from types import SimpleNamespace

    made: list[float] = []

    def fake_synthesize(
        module: Any, out_dir: Any, clock: float, mem: int, lib: Any, **kw: Any
    ) -> Any:
        made.append(lib.d)
        v = "slow" if lib.d < 1.03 else f"{lib.d:.6f}"
        return SimpleNamespace(
            synth=SimpleNamespace(
                verilog_path=SimpleNamespace(read_text=lambda: v),
                unit=SimpleNamespace(name="u"),
                reports={"a": {"latency": {"cycles_max": 667}}},
            ),
            timing_closure=None,
        )

    def fake_measure(verilog: Any, top: str, clock_ns: float, **kw: Any) -> Any:
        v = verilog.read_text()
        path = 5.947 if v == "slow" else 4.9157
        area = 1_247_069.0 if v == "slow" else 1_238_667.0 if float(v) > 1.09 else 1_234_177.0
        return sta.StaFigures("fake", top, clock_ns, area, 1, 1, path)

    monkeypatch.setattr(pipeline, "CLOSURE_MARGIN", 1.1 * 5.74 / 5.947)  # round 2 at 1.1
    u, said = _close_with_stand_ins(monkeypatch, fake_synthesize, fake_measure)
    d = [r["derate"] for r in u.timing_closure]
    assert d == [1.0, 1.1, 1.0488]
    assert made[3] == pytest.approx(math.sqrt(1.0488), abs=1e-3)  # round 1's schedule again
    # round 3 is kept (met, smallest area), so it is synthesized again and returned
    assert (
        "timing closure: keeping round 3, meets the clock with the smallest area x cycles^2" in said
    )
    assert made[-1] == pytest.approx(made[2], abs=1e-4)  # its recorded derating
    assert u.synth.verilog_path.read_text() != "slow"
    assert fake_measure(u.synth.verilog_path, "u", 5.74).critical_path_ns <= 5.74


@pytest.mark.parametrize("remap_smaller", [True, False])
def test_a_narrow_miss_is_mapped_again_for_delay_and_weighed_with_the_derated_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, remap_smaller: bool
) -> None:
    # round 1 misses 6 ns by 3 %: the same Verilog is mapped again with ABC's target at
    # 0.8 of the clock, and meets. That is one more met round, not round 1's verdict: the
    # closure derates on (round 2 meets, the deratings bisected after it miss by 7 %, too
    # much to map again), and the met round of least area x cycles^2 is kept
    paths = [6.2, 5.95, 5.8, 6.4, 6.4]
    areas = [10.0, 12.0 if remap_smaller else 500.0, 100.0, 1.0, 1.0]
    u, timed, said = _close_with_fake_sta(tmp_path, monkeypatch, paths, areas, True)
    rounds = u.timing_closure
    assert rounds is not None and [r["unit_path_ns"] for r in rounds] == paths[: len(rounds)]
    assert [r.get("map_ns") for r in rounds] == [None, 4.8] + [None] * (len(rounds) - 2)
    assert [r["derate"] for r in rounds][:3] == [1.0, 1.0, pipeline.CLOSURE_STEP]
    assert timed[0] == timed[1] != timed[2]  # round 1's schedule, mapped twice
    assert "timing closure, round 1: a narrow miss; mapping again for 4.8 ns" in said
    assert "timing closure, round 2: mapping narrow_isax_unit onto osu018" in said
    whole = "\n".join(said)
    assert "timing closure, round 1, mapped for 4.8 ns: critical path 5.95 ns meets 6 ns" in whole
    # round 2 is the first round that meets: the met remap does not skip the bisection
    assert "timing closure: met; trying deratings between the last miss and this" in said
    assert len(rounds) >= 4 and 1.0 < rounds[3]["derate"] < pipeline.CLOSURE_STEP
    if remap_smaller:
        # the unit is round 1's, as mapped for delay: its figures are measured so again
        assert u.map_ns == 4.8 and u.synth.verilog_path.read_text() == timed[0]
        assert "timing closure: keeping round 1 mapped for 4.8 ns, meets the clock" in whole
    else:
        assert u.map_ns is None and u.synth.verilog_path.read_text() == timed[2]


def test_a_remap_that_misses_costs_a_mapping_and_the_rounds_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the remap of round 1 misses too (ABC's delay mapping is no sure gain: the whole point
    # cloud's round 1, 0.009 ns over, is 0.15 ns over mapped for delay); the closure derates
    # from round 1's own path, and the remap is not a round. Round 2 meets; the deratings
    # bisected after it miss by 6 %, too much to map again
    paths = [6.2, 6.25, 5.8, 6.35, 6.35]
    u, timed, said = _close_with_fake_sta(tmp_path, monkeypatch, paths, remap=True)
    rounds = u.timing_closure
    assert rounds is not None and [r["unit_path_ns"] for r in rounds] == paths[: len(rounds)]
    assert [r.get("map_ns") for r in rounds] == [None, 4.8] + [None] * (len(rounds) - 2)
    assert rounds[2]["derate"] == pipeline.CLOSURE_STEP and not rounds[2]["fit"]
    assert "timing closure, round 2: mapping narrow_isax_unit onto osu018" in said
    assert u.map_ns is None and u.synth.verilog_path.read_text() == timed[2]


def test_the_cost_of_a_met_round_weighs_cycles_squared() -> None:
    # v3ddist alone at VexRiscv's clock (benchmarks/bench_area.py --per-isax): 313,098 um^2
    # for 375 cycles, or 727,250 um^2 for 218: 313,098 against 727,250 x (218/375)^2 =
    # 245,782, so the faster round is kept (by area x cycles, 422,787, it would not be)
    slow = ({"logic_um2": 313_098}, {"v3ddist": 375})
    fast = ({"logic_um2": 727_250}, {"v3ddist": 218})
    rounds = [slow[1], fast[1]]
    assert pipeline._area_delay(slow, rounds) == 313_098
    assert pipeline._area_delay(fast, rounds) == pytest.approx(727_250 * (218 / 375) ** 2)
    # relative per ISAX, then averaged over the ISAXs that differ: a long ISAX does not
    # outweigh a short one, and ntt_fwd, the same in both rounds, does not count (mean of
    # 10/8 and 14,968/15,352 = 1.1125, not 1.075 with ntt_fwd's 1)
    fit = {"modmul_q": 8, "ntt_fwd": 13_816, "ntt_inv": 15_352}
    branch = {"modmul_q": 10, "ntt_fwd": 13_816, "ntt_inv": 14_968}
    mean = (10 / 8 + 14_968 / 15_352) / 2
    cost = pipeline._area_delay(({"logic_um2": 1_000}, branch), [fit, branch])
    assert cost == pytest.approx(1_000 * mean * mean)
    # no ISAX differs: the area alone
    assert pipeline._area_delay(({"logic_um2": 5}, fit), [fit, fit]) == 5.0


def test_closure_on_the_cell_library_meets_the_clock(tmp_path: Path) -> None:
    require_tool("yosys", "yosys")
    require_tool("sta", "opensta")
    r = CliRunner().invoke(
        main,
        [
            *("synth", str(SPEC), "--clock-ns", "4.1", "--close-timing"),
            *("--no-yosys", "--no-lint", "-o", str(tmp_path / "u")),
        ],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "u/unit.json").read_text())
    rounds = doc["timing_closure"]
    # the model's schedule misses 4.1 ns on OSU018 (4.47 ns: the model's delays are
    # optimistic for this chain); a derated schedule meets it, by OpenSTA (it met 5.3 ns
    # without closure once extended values were held narrow, FsmBuilder.hold)
    assert rounds[0]["unit_path_ns"] > 4.1
    # (the round that meets may be followed by rounds bisecting the derating between it
    # and the miss; the unit written is a round that meets, as mapped when it met: a
    # bisected round that misses narrowly is mapped again for delay, and may meet so)
    assert any(r["unit_path_ns"] <= 4.1 for r in rounds[1:])
    unit = tmp_path / "u/narrow_isax_unit.sv"
    fig = sta.measure(unit, "narrow_isax_unit", 4.1, map_ns=doc["map_ns"])
    assert fig.critical_path_ns <= 4.1


def test_the_dsp_extension_meets_the_core_clock_by_a_remap_of_its_first_round(
    tmp_path: Path,
) -> None:
    """The whole DSP extension at VexRiscv's 5.67 ns: the model's schedule misses by 3.5 %
    on OSU018 (5.87 ns). Mapped again with ABC's target at 0.8 of the clock, the same
    schedule meets; the derated rounds that meet cost about twice the area for as many
    cycles or more, so the remap is kept, and the unit's figures are those of that
    mapping."""
    require_tool("yosys", "yosys")
    require_tool("sta", "opensta")
    out = tmp_path / "u"
    r = CliRunner().invoke(
        main,
        [
            *("synth", str(ROOT / "examples/dsp/dsp.isax"), "--clock-ns", "5.67"),
            *("--close-timing", "--no-yosys", "--no-lint", "-o", str(out)),
        ],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "unit.json").read_text())
    first, remap, *derated = doc["timing_closure"]
    assert 5.67 < first["unit_path_ns"] <= 5.67 * pipeline.REMAP_RATIO and "map_ns" not in first
    assert remap["map_ns"] == doc["map_ns"] == round(5.67 * pipeline.REMAP_TARGET, 3)
    assert remap["derate"] == 1.0 and remap["cycles"] == first["cycles"]
    # buying delay with area: more than the first mapping, far less than the derated
    # rounds that meet (their multiplies lose their sharing)
    assert first["logic_um2"] < remap["logic_um2"] < 1.2 * first["logic_um2"]
    met = [r for r in derated if r["unit_path_ns"] <= 5.67 and "map_ns" not in r]
    assert met and all(r["logic_um2"] > 1.5 * remap["logic_um2"] for r in met)
    assert all(r["cycles"] >= remap["cycles"] for r in derated)
    fig = sta.measure(out / "dsp_isax_unit.sv", "dsp_isax_unit", 5.67, map_ns=doc["map_ns"])
    assert fig.critical_path_ns == remap["unit_path_ns"] <= 5.67 and fig.map_ns == doc["map_ns"]
