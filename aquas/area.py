"""Area and timing of an ISAX unit beside its core, by one method for both.

Both are mapped onto the same cell library and timed with OpenSTA (:mod:`aquas.synth.sta`):
logic area in um^2, memories cut out and priced by shape, the critical path in ns. The core's
figures are what the unit is measured against and what sets the default clock target: a unit
scheduled within the core's own critical path costs the core no frequency. Mapping a core
takes minutes; its figures are cached per core (its RTL and parameters) and library.

When the tools are missing (scripts/setup.sh installs them) the old estimate stands in,
labelled as such: Yosys generic gates for area and 0.1 ns per gate level for timing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aquas.synth import sta

if TYPE_CHECKING:
    from pathlib import Path

    from aquas.target.schema import Target

#: The period ABC maps a core for and OpenSTA times it at. The critical path reported is the
#: period less the worst slack, so it does not depend much on this target (see docs/synthesis.md).
CORE_MAP_CLOCK_NS = 10.0
#: The clock target when the core's critical path cannot be measured (the old default).
FALLBACK_CLOCK_NS = 10.0
STA_METHOD = (
    f"cells of the {sta.LIBRARY_NAME} library (Yosys dfflibmap + ABC), memories priced as "
    "SRAM macros by shape; critical path by OpenSTA"
)
ESTIMATE_METHOD = (
    "ESTIMATE (OpenSTA or the cell library is missing: run scripts/setup.sh): Yosys generic "
    "cells, memories as flip-flops; 0.1 ns per gate level"
)


@dataclass(frozen=True)
class Clock:
    """A clock target and where it came from."""

    ns: float
    source: str  # "project" (given), "core" (its critical path) or "fallback"
    note: str


def progress_printer(
    say: Callable[[str], None], what: str, every_s: float = 15.0
) -> Callable[[str, float], None]:
    """A :func:`aquas.synth.sta.measure` progress callback that says every ``every_s``
    seconds how long ``what`` has been running."""
    next_at = [every_s]

    def progress(step: str, seconds: float) -> None:
        if seconds >= next_at[0]:
            next_at[0] = seconds + every_s
            say(f"  {what}: {step} running for {seconds:.0f} s")

    return progress


def core_figures(target: Target, say: Callable[[str], None] | None = None) -> sta.StaFigures | None:
    """The core's area and critical path (None when the descriptor says the core cannot be
    read: ``core.area_unmeasured``). Cached; the first run maps the core and takes minutes."""
    if target.core.area_unmeasured:
        return None
    from aquas.flow import core_params
    from aquas.sim.builder import core_rtl

    what = f"mapping the {target.core.module} core onto {sta.LIBRARY_NAME} (once per core)"
    progress = progress_printer(say, what) if say else None
    return sta.measure(
        core_rtl(target),
        target.core.module,
        CORE_MAP_CLOCK_NS,
        params=core_params(target),
        progress=progress,
    )


def default_clock(target: Target, say: Callable[[str], None] | None = None) -> Clock:
    """The clock target when none is given: the core's critical path, rounded down to 0.01 ns
    (never above the core's, so a unit that meets it costs the core no frequency)."""
    if not sta.tools_available():
        return Clock(
            FALLBACK_CLOCK_NS,
            "fallback",
            f"{FALLBACK_CLOCK_NS:g} ns: OpenSTA or the cell library is missing, the core's "
            "critical path is not measured (run scripts/setup.sh)",
        )
    core = core_figures(target, say)
    if core is None:
        return Clock(
            FALLBACK_CLOCK_NS,
            "fallback",
            f"{FALLBACK_CLOCK_NS:g} ns: the {target.core.module} core is not measured "
            f"({target.core.area_unmeasured})",
        )
    ns = math.floor(core.critical_path_ns * 100 + 1e-6) / 100
    return Clock(
        ns,
        "core",
        f"the {target.core.module} core's critical path on {sta.LIBRARY_NAME} "
        f"({core.critical_path_ns:g} ns)",
    )


def resolve_clock(
    given: float | None, target: Target, say: Callable[[str], None] | None = None
) -> Clock:
    """``given`` (a project's clock_ns or --clock-ns) when set, else :func:`default_clock`."""
    if given is not None:
        return Clock(float(given), "project", f"{given:g} ns as given")
    return default_clock(target, say)


def unit_figures(
    verilog: Path,
    top: str,
    clock_ns: float,
    say: Callable[[str], None] | None = None,
    map_ns: float | None = None,
) -> sta.StaFigures:
    """The unit's area and critical path at ``clock_ns`` (cached by content), mapped by ABC
    for ``map_ns`` when timing closure kept such a mapping (``UnitResult.map_ns``)."""
    progress = progress_printer(say, f"mapping {top} onto {sta.LIBRARY_NAME}") if say else None
    return sta.measure(verilog, top, clock_ns, progress=progress, map_ns=map_ns)


def _um2(fig: sta.StaFigures | None) -> dict[str, Any] | None:
    if fig is None:
        return None
    return {
        "logic": round(fig.logic_area_um2, 1),
        "memory": round(fig.memory_area_um2, 1),
        "total": round(fig.total_area_um2, 1),
        "memory_bits": fig.memory_bits,
        "memories": [
            {"name": m.name, "words": m.words, "bits": m.bits, "area": round(m.area_um2, 1)}
            for m in fig.memories
        ],
        "cells": fig.cells,
        "flops": fig.flops,
    }


def area_timing(
    clock: Clock,
    unit_sta: sta.StaFigures | None,
    core_sta: sta.StaFigures | None,
    unit_yosys: dict[str, Any],
    core_yosys: dict[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report's ``area`` and ``timing`` sections (without the core's module name).

    ``unit_sta`` None: the tools are missing and the gate-level estimate is reported, labelled.
    ``core_sta`` None with ``unit_sta`` set: the core is not measured (no ratio)."""
    if unit_sta is None:  # the estimate, as before this module
        core = core_yosys
        area = {
            "method": ESTIMATE_METHOD,
            "library": None,
            "unit_um2": None,
            "core_um2": None,
            "overhead_percent": 100.0 * unit_yosys["cells"] / core["cells"]
            if core and core["cells"]
            else None,
            "overhead_logic_percent": None,
            "overhead_memory_percent": None,
        }
        timing = {
            "method": ESTIMATE_METHOD,
            "unit_critical_path_ns": unit_yosys["depth_ns"],
            "core_critical_path_ns": round(
                core["depth"] * unit_yosys["depth_ns"] / unit_yosys["depth"], 3
            )
            if core and unit_yosys["depth"]
            else None,
            "meets_clock": unit_yosys["meets_clock"],
            "frequency_factor": (
                min(1.0, core["depth"] / unit_yosys["depth"]) if unit_yosys["depth"] else 1.0
            )
            if core
            else None,
        }
    else:
        core_total = core_sta.total_area_um2 if core_sta else 0.0

        def pct(x: float) -> float | None:
            return 100.0 * x / core_total if core_total else None

        area = {
            "method": STA_METHOD,
            "library": sta.LIBRARY_NAME,
            "unit_um2": _um2(unit_sta),
            "core_um2": _um2(core_sta),
            "overhead_percent": pct(unit_sta.total_area_um2),
            "overhead_logic_percent": pct(unit_sta.logic_area_um2),
            "overhead_memory_percent": pct(unit_sta.memory_area_um2),
        }
        ucp = unit_sta.critical_path_ns
        ccp = core_sta.critical_path_ns if core_sta else None
        timing = {
            "method": STA_METHOD,
            "unit_critical_path_ns": ucp,
            "core_critical_path_ns": ccp,
            "meets_clock": ucp <= clock.ns,
            # the unit lengthens the core's clock only where its path is longer
            "frequency_factor": (min(1.0, ccp / ucp) if ucp else 1.0) if ccp else None,
            # ABC's delay target for the unit when timing closure mapped it tighter than
            # the clock (synth/pipeline.py, REMAP_RATIO); None: mapped for the clock, as
            # the core is mapped for its own
            "unit_map_ns": unit_sta.map_ns,
        }
    timing |= {
        "clock_ns": clock.ns,
        "clock_source": clock.source,
        "clock_note": clock.note,
        # the generic-gate depth, kept beside the timing for comparison with older reports
        "unit_depth": unit_yosys["depth"],
        "core_depth": core_yosys["depth"] if core_yosys else None,
        "unit_depth_ns": unit_yosys["depth_ns"],
    }
    return area, timing
