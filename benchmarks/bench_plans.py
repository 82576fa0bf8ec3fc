"""Interface plans on the naive specs: how close ``--interface auto`` gets to hand-written.

For every example ISAX that touches memory, the scheduled latency (cycles from the command
handshake to the response, worst case over control paths, ``fixed_max + per_L_max * L``)
at the target descriptor's ISAX memory latency ``L`` (memory latency + DMA setup) of:

* the hand-written spec (examples/<domain>/<name>.isax) as written, and under ``auto``;
* its naive variant (examples/<domain>/naive/<name>.isax: single-shot accesses only, no
  scratchpads) as written, and under ``auto`` (the plan ``auto`` chose in brackets).

``naive+auto / hand`` is the issue's floor: at most 1.10. These are *scheduled* cycles of
the generated state machines; co-simulation (tests/sim/test_plans_cosim.py) checks that the
RTL takes exactly them at a fixed latency.

Choice quality (``--section choice``): for every hand-written example ISAX, the *measured*
cycles of the unit synthesized for the target under as-written, single, burst and auto
(the plan the memory-interface model picks per ISAX): RTL simulation of the unit behind
the SoC's real ``aquas_mem_ctrl`` with the descriptor's memory parameters
(``aquas.model.measure``: command handshake to the first ``rsp_valid``, random
word-aligned operands, rd checked against the golden interpreter), the mean over
``--cases`` calls. It reports whether auto is <= the best of the three fixed plans on
every ISAX, and on how many memory ISAXs auto is strictly faster than as-written. One
Verilator build per distinct unit (identical units share it; builds are cached).

Usage: .venv/bin/python benchmarks/bench_plans.py [--soc vexriscv | --platform FILE]
       [--mem-latency L] [--section scheduled|choice|all] [--cases N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from aquas.interpreter import find_extension
from aquas.plans.choose import apply_interface
from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import isax_latencies
from aquas.synth.fsm import MEM_OPS
from aquas.synth.oplib import OperatorLibrary
from aquas.target import Target, load_target

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ("pointcloud/pointcloud", "dsp/dsp", "llm/llm")
HAND_SPECS = ("pointcloud/pointcloud", "dsp/dsp", "llm/llm", "crypto/kyber")
FIXED = ("as-written", "single", "burst")


def cycles(
    spec: Path, interface: str, clock_ns: float, mem_latency: int, target: Target
) -> tuple[dict[str, int], dict[str, str]]:
    """ISAX -> worst-case scheduled cycles at ``mem_latency``, and ISAX -> the plan chosen
    (``auto``: the memory-interface model's choice on ``target``)."""
    lib = OperatorLibrary.load()
    module = lower_spec_file(spec)
    choice = apply_interface(module, interface, clock_ns, mem_latency, lib, target=target)
    width = target.isax_master.bus_width
    lat = isax_latencies(module, clock_ns, mem_latency, lib, width)
    return {n: hi for n, (_, hi) in lat.items()}, choice.plans


def touches_memory(spec: Path) -> set[str]:
    ext = find_extension(lower_spec_file(spec))
    return {
        i.sym_name.data for i in ext.isaxs() if any(isinstance(o, MEM_OPS) for o in i.body.walk())
    }


def scheduled_section(args: argparse.Namespace, target: Target, console: Console) -> None:
    L = args.mem_latency if args.mem_latency is not None else target.isax_mem_latency
    table = Table(title=f"Interface plans, scheduled cycles at L = {L} ({target.name})")
    for col in ("ISAX", "hand", "hand+auto", "naive", "naive+auto", "naive+auto / hand"):
        table.add_column(col, justify="right" if col != "ISAX" else "left")
    worst, within = 0.0, 0
    total = 0
    for d in DOMAINS:
        hand = ROOT / "examples" / f"{d}.isax"
        naive = hand.parent / "naive" / hand.name
        h, _ = cycles(hand, "as-written", args.clock_ns, L, target)
        ha, hplans = cycles(hand, "auto", args.clock_ns, L, target)
        n, _ = cycles(naive, "as-written", args.clock_ns, L, target)
        na, nplans = cycles(naive, "auto", args.clock_ns, L, target)
        for isax in sorted(touches_memory(hand), key=list(h).index):
            ratio = na[isax] / h[isax]
            worst = max(worst, ratio)
            within += ratio <= 1.10
            total += 1
            table.add_row(
                isax,
                str(h[isax]),
                escape(f"{ha[isax]} [{hplans[isax]}]"),
                str(n[isax]),
                escape(f"{na[isax]} [{nplans[isax]}]"),
                f"{ratio:.2f}" + ("" if ratio <= 1.10 else "  > 1.10"),
            )
    console.print(table)
    console.print(
        f"naive + auto within 10% of hand-written (or better): {within} of {total} ISAXs; "
        f"worst ratio {worst:.2f}"
    )


def measured(
    spec: Path, interface: str, target: Target, cases: int, work: Path, clock_ns: float
) -> tuple[dict[str, float], dict[str, str], dict[str, float], list[str]]:
    """Synthesize ``spec`` for ``target`` under ``interface`` and measure it: ISAX ->
    mean measured cycles, plan applied, predicted cycles; and the rd mismatches."""
    from aquas.model.measure import measure
    from aquas.synth.pipeline import synthesize_unit

    module = lower_spec_file(spec)
    out = work / f"{spec.stem}-{interface}"
    u = synthesize_unit(
        module,
        out,
        clock_ns,
        target.isax_mem_latency,
        lint=False,
        yosys=False,
        interface=interface,
        target=target,
    )
    res = u.synth
    assert u.interface is not None
    t0 = time.time()
    m = measure(spec, res.verilog_path, res.unit.name, target, l2="cold", cases=cases)
    print(f"  measured {spec.stem} {interface}: {time.time() - t0:.0f} s", file=sys.stderr)
    means = {n: statistics.fmean(c) for n, c in m.cycles.items()}
    preds = {n: p.total for n, p in u.interface.predictions.items()}
    return means, u.interface.plans, preds, m.mismatches


def choice_section(args: argparse.Namespace, target: Target, console: Console) -> dict[str, Any]:
    l2 = "no L2" if not target.l2.enable else "L2 cold"
    table = Table(
        title=f"Choice quality: measured cycles per call on {target.name} (L = "
        f"{target.isax_mem_latency}, {target.isax_master.bus_width}-bit port, {l2})"
    )
    for col in (
        "ISAX",
        *FIXED,
        escape("auto [plan]"),
        "auto predicted",
        "auto <= best",
        "auto < as-written",
    ):
        table.add_column(col, justify="left" if col == "ISAX" else "right")
    rows: list[dict[str, Any]] = []
    mismatches: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for d in HAND_SPECS:
            spec = ROOT / "examples" / f"{d}.isax"
            mem = touches_memory(spec)
            got: dict[str, dict[str, float]] = {}
            plans: dict[str, str] = {}
            preds: dict[str, float] = {}
            for interface in (*FIXED, "auto"):
                means, chosen, pr, bad = measured(
                    spec, interface, target, args.cases, Path(tmp), args.clock_ns
                )
                mismatches += [f"{spec.stem} {interface}: {b}" for b in bad]
                got[interface] = means
                if interface == "auto":
                    plans, preds = chosen, pr
            for isax in got["auto"]:
                c = {k: got[k][isax] for k in (*FIXED, "auto")}
                best = min(c[k] for k in FIXED)
                row = {
                    "isax": isax,
                    "memory": isax in mem,
                    **c,
                    "plan": plans[isax],
                    "predicted": preds[isax],
                    "auto_le_best": c["auto"] <= best,
                    "auto_lt_written": c["auto"] < c["as-written"],
                }
                rows.append(row)
                table.add_row(
                    isax + ("" if isax in mem else " (no memory)"),
                    *(f"{c[k]:g}" for k in FIXED),
                    escape(f"{c['auto']:g} [{plans[isax]}]"),
                    f"{preds[isax]:g}",
                    "yes" if row["auto_le_best"] else "NO",
                    "yes" if row["auto_lt_written"] else "no",
                )
    console.print(table)
    le = sum(r["auto_le_best"] for r in rows)
    memrows = [r for r in rows if r["memory"]]
    faster = sum(r["auto_lt_written"] for r in memrows)
    exact = sum(r["predicted"] == r["auto"] for r in rows)
    console.print(
        f"auto <= best of as-written/single/burst: {le} of {len(rows)} ISAXs; auto strictly "
        f"faster than as-written: {faster} of {len(memrows)} memory ISAXs (required: half); "
        f"model's prediction of auto = measured on {exact} of {len(rows)}; "
        f"rd mismatches: {len(mismatches)}"
    )
    for b in mismatches[:10]:
        console.print(f"  mismatch: {b}", markup=False)
    return {"rows": rows, "mismatches": mismatches}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--soc", default="vexriscv")
    ap.add_argument("--platform", default=None, help="a platform file or packaged variant")
    ap.add_argument("--mem-latency", type=int, default=None, help="default: the target's")
    ap.add_argument("--clock-ns", type=float, default=10.0)
    ap.add_argument("--section", choices=("scheduled", "choice", "all"), default="all")
    ap.add_argument("--cases", type=int, default=4, help="measured calls per ISAX and plan")
    ap.add_argument("--json", type=Path, help="also write the choice rows as JSON")
    args = ap.parse_args()
    target = load_target(args.platform, soc=args.soc)
    console = Console(width=200)  # the tables are wide; a pipe would cut them at 80
    if args.section in ("scheduled", "all"):
        scheduled_section(args, target, console)
    if args.section in ("choice", "all"):
        if args.mem_latency is not None:
            from aquas.cli.synth import synth_target

            target = synth_target(args.platform, args.soc, args.mem_latency)
        t0 = time.time()
        doc = choice_section(args, target, console)
        console.print(f"choice section: {time.time() - t0:.0f} s")
        if args.json:
            import json

            args.json.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
