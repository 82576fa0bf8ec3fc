"""Register scratchpads against SRAM scratchpads, per example extension.

Each example (and the SRAM test spec) is synthesized twice: with every scratchpad built
from registers (``--scratchpads regs``, what the examples get by default) and with every
scratchpad an SRAM (``--scratchpads sram``); a spec over the register-scratchpad budget
(the LLM-tutorial-sized one) is built as SRAM only. Printed: per ISAX the scheduled cycles at the
memory latency L (worst case) in both builds; per unit the seconds to Verilog, the Yosys
figures (cells, flip-flops, logic depth; SRAM banks are black boxes, so the SRAM build's
cells are its logic only) and the SRAM bits. ``--cosim N`` also co-simulates the SRAM
build against the golden interpreter (N random cases per ISAX, random latency and
back-pressure; specs with more than 4096 scratchpad elements are not co-simulated: the
test bench reads every element after each case). A unit whose SRAM build is refused prints
the diagnostic.

Usage: .venv/bin/python benchmarks/bench_sram.py [--only NAME] [--no-yosys] [--cosim N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from aquas.diagnostics import AquasError
from aquas.interpreter import find_extension
from aquas.spec.frontend import lower_spec_file
from aquas.spec.limits import SpecBudgets
from aquas.synth.flow import SynthResult, synthesize
from aquas.synth.sram import apply_scratchpad_impl

ROOT = Path(__file__).resolve().parents[1]
SPECS = [*sorted((ROOT / "examples").rglob("*.isax")), ROOT / "tests/sim/specs/sram.isax"]
SPECS += sorted((ROOT / "benchmarks" / "specs").glob("*.isax"))  # LLM-tutorial sizes
#: The test bench reads every scratchpad element after each case: co-simulation of the
#: 64 Ki-element specs would take hours, so it is left to the small ones.
COSIM_MAX_ELEMENTS = 4096


def build(spec: Path, mode: str, out: Path, mem_latency: int) -> tuple[SynthResult, float]:
    module = lower_spec_file(spec)
    apply_scratchpad_impl(module, mode)
    t0 = time.perf_counter()
    res = synthesize(module, out, 10.0, mem_latency)
    return res, time.perf_counter() - t0


def sram_bits(res: SynthResult) -> int:
    """Bits of the unit's SRAM banks (every ISAX report lists the same scratchpads)."""
    rep = next(iter(res.reports.values()), {})
    return sum(int(s["total_bits"]) for s in rep.get("sram_scratchpads", []))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", help="only this extension (repeatable)")
    ap.add_argument("--mem-latency", type=int, default=12)
    ap.add_argument("--no-yosys", action="store_true")
    ap.add_argument("--cosim", type=int, default=0, help="co-simulate the SRAM build")
    args = ap.parse_args()
    console = Console(width=160)
    units = Table(title="units: registers vs SRAM scratchpads (Yosys: SRAM banks as black boxes)")
    for c in ("extension", "s regs", "s sram", "cells regs", "cells sram", "flops regs"):
        units.add_column(c)
    for c in ("flops sram", "depth regs", "depth sram", "SRAM bits", "cosim sram"):
        units.add_column(c)
    cyc = Table(title=f"ISAX cycles at L = {args.mem_latency} (worst case)")
    for c in ("extension", "isax", "regs", "sram", "change"):
        cyc.add_column(c, justify="left" if c in ("extension", "isax") else "right")
    budget = SpecBudgets.from_env().scratchpad_elements
    with tempfile.TemporaryDirectory() as tmp:
        for spec in SPECS:
            name = f"{spec.parent.name}/{spec.stem}"
            if args.only and spec.stem not in args.only and name not in args.only:
                continue
            elements = sum(p.size for p in find_extension(lower_spec_file(spec)).scratchpads())
            regs: SynthResult | None = None
            s_regs = 0.0
            if elements <= budget:
                regs, s_regs = build(spec, "regs", Path(tmp) / name / "regs", args.mem_latency)
            try:
                sram, s_sram = build(spec, "sram", Path(tmp) / name / "sram", args.mem_latency)
            except AquasError as e:
                units.add_row(name, f"{s_regs:.2f}", "refused: " + e.message[:60])
                console.print(f"{name}: SRAM build refused: {e.message}")
                continue
            # as registers, a spec over the budget is issue 18's defect 4: it does not finish
            row = [name, f"{s_regs:.2f}" if regs else f"over budget ({elements})", f"{s_sram:.2f}"]
            if args.no_yosys:
                row += ["-"] * 6
            else:
                from aquas.synth.yosys import measure

                fs = measure(sram.verilog_path, sram.unit.name)
                fr = measure(regs.verilog_path, regs.unit.name) if regs else None
                row += [str(fr.cells) if fr else "-", str(fs.cells)]
                row += [str(fr.flops) if fr else "-", str(fs.flops)]
                row += [str(fr.depth) if fr else "-", str(fs.depth)]
            row.append(str(sram_bits(sram)))
            if args.cosim and elements > COSIM_MAX_ELEMENTS:
                row.append(f"skipped ({elements} elements)")
            elif args.cosim:
                from aquas.synth.cosim import run_cosim

                cs = run_cosim(spec, sram.verilog_path, sram.unit.name, cases=args.cosim)
                row.append(f"{cs.cases} cases, {len(cs.mismatches)} mismatches")
            else:
                row.append("-")
            units.add_row(*row)
            console.print(" | ".join(row))
            for isax, rep in sram.reports.items():
                b = rep["latency"]["cycles_max"]
                if regs is None:
                    cyc.add_row(name, isax, "-", str(b), "-")
                    continue
                a = regs.reports[isax]["latency"]["cycles_max"]
                cyc.add_row(name, isax, str(a), str(b), f"{b - a:+d}")
    console.print(units)
    console.print(cyc)


if __name__ == "__main__":
    main()
