"""Reports of `aquas run` for a core whose area is not measured (the descriptor's
core.area_unmeasured, CV32E40X): the unit's figures and the reason instead of a ratio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aquas.report import markdown, write_reports

REASON = "Yosys 0.23 cannot read the CV32E40X SystemVerilog (packages, interfaces)"


def doc_without_core_area() -> dict[str, Any]:
    return {
        "project": "p",
        "soc": "cv32e40x",
        "clock_ns": 10.0,
        "memory_latency": 10,
        "extension": "pointcloud",
        "end_to_end": {
            "baseline_cycles": 1200,
            "isax_cycles": 400,
            "speedup": 3.0,
            "outputs_identical": True,
            "output": "ok\n",
        },
        "regions": [
            {
                "id": 1,
                "label": "kernel",
                "baseline_cycles": 1000,
                "isax_cycles": 200,
                "count": 1,
                "speedup": 5.0,
            }
        ],
        "latency": [
            {
                "isax": "v3ddist",
                "cycles": 30,
                "compute_cycles": 6,
                "memory_cycles": 24,
                "interface_ops": {"burst": 2},
                "memory_beats": 64,
            }
        ],
        "area": {
            "unit": {"cells": 5000, "flops": 1000, "gates": 4000, "depth": 30},
            "core": None,
            "core_module": "cv32e40x_core",
            "core_unmeasured": REASON,
            "overhead_percent": None,
        },
        "timing": {
            "unit_depth": 30,
            "core_depth": None,
            "unit_depth_ns": 6.0,
            "meets_clock": True,
            "frequency_factor": None,
        },
        "cosim": {"cases": 400},
        "matches": [],
        "match_notes": [],
        "sizes": {},
        "stages": [],
    }


def test_markdown_names_the_unmeasured_core(tmp_path: Path) -> None:
    doc = doc_without_core_area()
    md = markdown(doc)
    assert f"- Area: unit 5000 cells; the core is not measured ({REASON})" in md
    assert "- Logic depth: unit 30 gate levels; unit clock target met (6.00 ns)" in md
    assert (
        "| core (cv32e40x_core) | not measured | not measured | not measured | not measured |" in md
    )
    assert f"| unit / core | n/a % |  |  | {REASON} |" in md
    written = write_reports(doc, tmp_path)
    assert set(written) == {"json", "md", "html"}
    assert "not measured" in (tmp_path / "report.html").read_text()


def test_predicted_next_to_measured_cycles_per_isax(tmp_path: Path) -> None:
    """The run's per-ISAX rows: the model's prediction from the synthesis report beside the
    measured mean, range and calls, and the error relative to the measured mean."""
    from aquas.flow import isax_cycles

    reports = {
        "vgemv4": {"interface": {"plan": "burst", "predicted_cycles": 180.0}},
        "v3ddist": {
            "interface": {
                "plan": "as-written",
                "predicted_cycles": 174.0,
                "resident": ["pb"],
                "predicted_cycles_kept": 118.0,
            }
        },
    }
    measured = {
        "v3ddist": {"mean": 174.0, "min": 174, "max": 174, "calls": 8},
        "vgemv4": {"mean": 200.0, "min": 190, "max": 210, "calls": 8},
    }
    kept = {"v3ddist": {"mean": 118.0, "min": 118, "max": 118, "calls": 4}}
    rows = isax_cycles(reports, measured, kept)
    assert [r["isax"] for r in rows] == ["v3ddist", "vgemv4"]
    assert rows[0]["error"] == 0.0
    assert rows[1]["error"] == 0.1  # |180 - 200| / 200
    doc = doc_without_core_area() | {
        "isax_cycles": rows,
        "isax_cycles_note": "measured: RTL behind aquas_mem_ctrl",
    }
    md = markdown(doc)
    assert "## ISAX cycles, predicted vs measured (measured: RTL behind aquas_mem_ctrl)" in md
    assert "| vgemv4 | burst | 180.0 | 200.0 | 190..210 | 8 | 10.0 % | n/a | n/a |" in md
    # a repeated call of an ISAX with a resident scratchpad: predicted and measured
    assert "| v3ddist | as-written | 174.0 | 174.0 | 174..174 | 8 | 0.0 % | 118.0 | 118.0 |" in md
    # an ISAX the measurement did not reach says so instead of inventing a figure
    (row,) = isax_cycles({"x": {"interface": {"plan": "single", "predicted_cycles": 5}}}, {})
    assert (row["measured_mean"], row["calls"], row["error"]) == (None, 0, None)
    write_reports(doc, tmp_path)
    assert "predicted vs measured" in (tmp_path / "report.html").read_text()


def test_area_and_timing_on_the_cell_library(tmp_path: Path) -> None:
    """aquas.area's sections: the ratio over total area (logic + SRAM, the same method for
    both), its logic/memory split, both critical paths and where the clock came from."""
    import json

    from aquas.area import Clock, area_timing
    from aquas.synth.sta import Memory, StaFigures

    unit = StaFigures("osu018", "u", 9.5, 100_000.0, 4000, 500, 8.0)
    core = StaFigures(
        "osu018", "VexRiscv", 10.0, 800_000.0, 30000, 3000, 9.5,
        memories=[Memory("ways_0_tags", 128, 22, 1, 1), Memory("banks_0", 1024, 32, 1, 1)],
    )  # fmt: skip
    unit_y = {"cells": 5000, "flops": 1000, "gates": 4000, "depth": 30, "depth_ns": 3.0,
              "meets_clock": True}  # fmt: skip
    core_y = {"cells": 20000, "flops": 3000, "gates": 17000, "depth": 40}
    clock = Clock(9.5, "core", "the VexRiscv core's critical path on osu018 (9.5 ns)")
    area, timing = area_timing(clock, unit, core, unit_y, core_y)
    # the core's memories priced by the table: 2816 bits at 45 %, 32768 bits at 60 %
    core_mem = 2816 * 5.59 / 0.45 + 32768 * 5.59 / 0.60
    assert area["core_um2"]["memory"] == round(core_mem, 1)
    assert area["overhead_percent"] == 100 * 100_000 / (800_000 + core_mem)
    assert area["overhead_logic_percent"] == area["overhead_percent"]
    assert area["overhead_memory_percent"] == 0.0
    assert (timing["unit_critical_path_ns"], timing["core_critical_path_ns"]) == (8.0, 9.5)
    assert timing["meets_clock"] and timing["frequency_factor"] == 1.0
    assert timing["clock_source"] == "core"

    doc = doc_without_core_area() | {"clock_ns": 9.5}
    doc["area"] = {"unit": unit_y, "core": core_y, "core_module": "VexRiscv", **area}
    doc["timing"] = timing
    md = markdown(doc)
    assert f"= **{area['overhead_percent']:.1f} %** of the core" in md
    assert "- Critical path (OpenSTA): unit 8.00 ns vs core 9.50 ns (no frequency loss)" in md
    assert "| ISAX unit | 100,000 | 0 (0 bits) | 100,000 | 8.00 | 30 |" in md
    write_reports(doc, tmp_path)
    back = json.loads((tmp_path / "report.json").read_text())
    assert back["timing"]["core_critical_path_ns"] == 9.5
    assert back["area"]["core_um2"]["memory_bits"] == 2816 + 32768

    assert timing["unit_map_ns"] is None and "mapped by ABC" not in md

    # a unit slower than the core costs the core frequency, and says so
    slow = StaFigures("osu018", "u", 9.5, 100_000.0, 4000, 500, 11.875)
    _, t2 = area_timing(clock, slow, core, unit_y, core_y)
    assert not t2["meets_clock"] and t2["frequency_factor"] == 0.8

    # a unit timing closure mapped for delay (a narrow miss remapped): the report says so
    remapped = StaFigures("osu018", "u", 9.5, 110_000.0, 4200, 500, 9.4, map_ns=7.6)
    _, t3 = area_timing(clock, remapped, core, unit_y, core_y)
    assert t3["unit_map_ns"] == 7.6 and t3["meets_clock"]
    doc["timing"] = t3
    assert "- The unit is mapped by ABC for 7.60 ns (timing closure" in markdown(doc)


def test_estimate_is_labelled_when_the_tools_are_missing() -> None:
    from aquas.area import ESTIMATE_METHOD, Clock, area_timing

    unit_y = {"cells": 5000, "flops": 1000, "gates": 4000, "depth": 30, "depth_ns": 3.0,
              "meets_clock": True}  # fmt: skip
    core_y = {"cells": 20000, "flops": 3000, "gates": 17000, "depth": 40}
    area, timing = area_timing(Clock(10.0, "fallback", "x"), None, None, unit_y, core_y)
    assert area["method"] == timing["method"] == ESTIMATE_METHOD
    assert "ESTIMATE" in ESTIMATE_METHOD
    assert area["overhead_percent"] == 25.0
    assert (timing["unit_critical_path_ns"], timing["core_critical_path_ns"]) == (3.0, 4.0)


def test_cell_library_figures_with_an_unmeasured_core(tmp_path: Path) -> None:
    from aquas.area import Clock, area_timing
    from aquas.synth.sta import StaFigures

    unit = StaFigures("osu018", "u", 10.0, 50_000.0, 2000, 300, 4.5)
    unit_y = {"cells": 5000, "flops": 1000, "gates": 4000, "depth": 30, "depth_ns": 3.0,
              "meets_clock": True}  # fmt: skip
    clock = Clock(10.0, "fallback", "10 ns: the cv32e40x_core core is not measured (x)")
    area, timing = area_timing(clock, unit, None, unit_y, None)
    assert area["overhead_percent"] is None and area["core_um2"] is None
    assert timing["core_critical_path_ns"] is None and timing["frequency_factor"] is None
    doc = doc_without_core_area()
    doc["area"] = doc["area"] | area
    doc["timing"] = timing
    md = markdown(doc)
    assert f"the core is not measured ({REASON})" in md
    assert "- Critical path (OpenSTA): unit 4.50 ns; clock target 10.00 ns" in md
    assert f"| core (cv32e40x_core) | {REASON} |" in md
    write_reports(doc, tmp_path)
    assert "not measured" in (tmp_path / "report.html").read_text()
