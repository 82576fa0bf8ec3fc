"""Area and timing of every example unit beside the core, on a real cell library.

For every example extension (examples/*/*.isax), synthesized for the target (default
VexRiscv) at the default clock (the core's critical path, aquas.area.default_clock) or
--clock-ns: the unit's logic and memory (SRAM) area in um^2 on OSU018, its total as a
percentage of the core's (logic + caches priced the same way), and the unit's and the
core's critical paths by OpenSTA. Each unit goes through timing closure (docs/synthesis.md,
"Timing closure"; --no-closure times the model's schedule only): "first path" is the
model's schedule, "rounds" the schedules timed. Mapping the core takes minutes the first
time; its figures are cached per core and library. The last column is the synthesis, Yosys
and OpenSTA time of the unit (the mapping is cached by content).

With --area-budget F every unit is synthesized under that budget (docs/synthesis.md, "Area
budget"); the "est. %" column is the area estimate the flow chose by, beside the measured
figure, and "cycles" the fixed cycles per ISAX (memory latency 0; the default's first when
the budget changed them).

With --per-isax a second table gives each ISAX synthesized on its own (``aquas synth
--isax``: the ISAX with the scratchpads and state registers it names), with timing closure
like the whole unit: where the area is. The ISAXs of a unit share multipliers and value
registers (docs/synthesis.md, "Sharing"), so their areas alone add up to more than the
unit's logic.

Usage: .venv/bin/python benchmarks/bench_area.py [--soc vexriscv] [--clock-ns N] [--only NAME]
       [--no-closure] [--area-budget F] [--per-isax] [--isaxs A,B]

With --isaxs only those ISAXs of each extension are synthesized (``aquas synth --isax``):
``--only pointcloud --isaxs v3ddist,vcovmat3d,vnearest`` is the point-cloud project's unit.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from xdsl.dialects.builtin import ModuleOp

from aquas.area import core_figures, resolve_clock
from aquas.interpreter import find_extension
from aquas.reencode import spec_for_target
from aquas.spec.subset import keep_isaxs
from aquas.synth import sta
from aquas.synth.pipeline import UnitResult, closure_rounds, synthesize_unit
from aquas.target import load_target

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--soc", default="vexriscv")
    ap.add_argument("--clock-ns", type=float, default=None, help="default: the core's path")
    ap.add_argument("--only", action="append", help="only this extension (repeatable)")
    ap.add_argument(
        "--no-closure", action="store_true", help="time the model's schedule only (no closure)"
    )
    ap.add_argument("--area-budget", type=float, default=None, help="a fraction of the core")
    ap.add_argument("--per-isax", action="store_true", help="also each ISAX on its own")
    ap.add_argument(
        "--isaxs",
        default=None,
        help="comma-separated: only these ISAXs of each extension (a project's part)",
    )
    args = ap.parse_args()
    console = Console(width=220)
    say = console.print
    target = load_target(soc=args.soc)
    if not sta.tools_available():
        raise SystemExit("yosys, OpenSTA or the OSU018 library is missing: run scripts/setup.sh")
    t0 = time.perf_counter()
    core = core_figures(target, say)
    if core is None:
        raise SystemExit(f"the {target.core.module} core is not measured")
    core_secs = time.perf_counter() - t0
    clock = resolve_clock(args.clock_ns, target, say)
    console.print(
        f"core {target.core.module}: logic {core.logic_area_um2:,.0f} um^2, memory "
        f"{core.memory_area_um2:,.0f} um^2 ({core.memory_bits} bits in "
        f"{len(core.memories)} memories: "
        + ", ".join(f"{m.name} {m.words}x{m.bits}" for m in core.memories)
        + f"), critical path {core.critical_path_ns:.2f} ns ({core_secs:.1f} s, "
        f"measured in {core.seconds:.0f} s)"
    )
    console.print(f"clock target: {clock.ns:g} ns ({clock.note})")
    table = Table(title=f"unit area and timing on {sta.LIBRARY_NAME} vs {target.core.module}")
    cols = ["extension", "logic um^2", "memory um^2", "total um^2", f"% of {target.core.module}"]
    cols += ["logic %", "memory %", "first path ns", "rounds", "unit path ns", "core path ns"]
    cols += ["verdict", "cells", "est. %", "cycles (fixed, L = 0)", "synth + STA s"]
    for c in cols:
        table.add_column(c, justify="left" if c in ("extension", "verdict") else "right")
    core_total = core.total_area_um2
    per = Table(title=f"each ISAX on its own on {sta.LIBRARY_NAME} vs {target.core.module}")
    for c in ["extension", "isax", "logic um^2", "% of its unit's logic", "logic % of core"]:
        per.add_column(c, justify="left" if c in ("extension", "isax") else "right")
    for c in ["memory um^2", "flip-flops", "rounds", "unit path ns", "cycles (fixed, L = 0)"]:
        per.add_column(c, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in sorted((ROOT / "examples").glob("*/*.isax")):
            if args.only and spec.stem not in args.only:
                continue
            module, _ = spec_for_target(spec, target, strict=False)
            if args.isaxs:
                keep_isaxs(module, args.isaxs.split(","))

            def measured(mod: ModuleOp, name: str) -> tuple[UnitResult, sta.StaFigures]:
                u = synthesize_unit(
                    mod,
                    Path(tmp) / name,
                    clock.ns,
                    target.isax_mem_latency,
                    lint=False,
                    yosys=False,
                    target=target,
                    close_timing=not args.no_closure,
                    progress=lambda m: say(f"  {name}: {m}"),
                    area_budget=args.area_budget,
                )
                fig = sta.measure(
                    u.synth.verilog_path, u.synth.unit.name, clock.ns, map_ns=u.map_ns
                )
                return u, fig

            t1 = time.perf_counter()
            # synthesis rewrites the module it is given: the ISAXs alone start from copies
            u, fig = measured(module.clone(), spec.stem)
            secs = time.perf_counter() - t1
            rounds = u.timing_closure or []
            first = f"{rounds[0]['unit_path_ns']:.2f}" if rounds else "-"
            ucp = fig.critical_path_ns
            verdict = "0 % fmax loss" if ucp <= core.critical_path_ns else "SLOWER than core"
            unit = u.synth.unit
            est = unit.area_estimate.get("total_um2", 0.0)
            cyc = []
            for name, rep in u.synth.reports.items():
                now = rep["latency"]["fixed_max"]
                ab = unit.area_budget
                before = ab["cycles_default"][name][1] + 1 if ab else now
                cyc.append(f"{name} {before}" + (f"->{now}" if before != now else ""))
            table.add_row(
                spec.stem,
                f"{fig.logic_area_um2:,.0f}",
                f"{fig.memory_area_um2:,.0f}",
                f"{fig.total_area_um2:,.0f}",
                f"{100 * fig.total_area_um2 / core_total:.1f}",
                f"{100 * fig.logic_area_um2 / core_total:.1f}",
                f"{100 * fig.memory_area_um2 / core_total:.1f}",
                first,
                _rounds(u),
                f"{ucp:.2f}",
                f"{core.critical_path_ns:.2f}",
                verdict,
                f"{fig.cells:,}",
                f"{100 * est / core_total:.1f}",
                ", ".join(cyc),
                f"{secs:.1f}",
            )
            if not args.per_isax:
                continue
            for isax in [i.sym_name.data for i in find_extension(module).isaxs()]:
                alone = module.clone()
                keep_isaxs(alone, [isax])
                ua, fa = measured(alone, f"{spec.stem}-{isax}")
                per.add_row(
                    spec.stem,
                    isax,
                    f"{fa.logic_area_um2:,.0f}",
                    f"{100 * fa.logic_area_um2 / fig.logic_area_um2:.1f}",
                    f"{100 * fa.logic_area_um2 / core_total:.1f}",
                    f"{fa.memory_area_um2:,.0f}",
                    f"{fa.flops:,}",
                    _rounds(ua),
                    f"{fa.critical_path_ns:.2f}",
                    str(ua.synth.reports[isax]["latency"]["fixed_max"]),
                )
    console.print(table)
    if args.per_isax:
        console.print(per)


def _rounds(u: UnitResult) -> str:
    """Timing closure's mapping rounds, and the ABC target of the unit kept, if tighter than
    the clock (a remapped narrow miss, synth/pipeline.py)."""
    n = closure_rounds(u.timing_closure or [])
    return f"{n}" + (f", mapped for {u.map_ns:g} ns" if u.map_ns is not None else "")


if __name__ == "__main__":
    main()
