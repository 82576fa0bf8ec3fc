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

Usage: .venv/bin/python benchmarks/bench_plans.py [--soc vexriscv] [--mem-latency L]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from aquas.interpreter import find_extension
from aquas.plans.choose import apply_interface
from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import isax_latencies
from aquas.synth.fsm import MEM_OPS
from aquas.synth.oplib import OperatorLibrary
from aquas.target import load_target

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ("pointcloud/pointcloud", "dsp/dsp", "llm/llm")


def cycles(
    spec: Path, interface: str, clock_ns: float, mem_latency: int, max_beats: int
) -> tuple[dict[str, int], dict[str, str]]:
    """ISAX -> worst-case cycles at ``mem_latency``, and ISAX -> the plan chosen."""
    lib = OperatorLibrary.load()
    module = lower_spec_file(spec)
    choice = apply_interface(module, interface, clock_ns, mem_latency, lib, max_beats)
    lat = isax_latencies(module, clock_ns, mem_latency, lib)
    return {n: hi for n, (_, hi) in lat.items()}, choice.plans


def touches_memory(spec: Path) -> set[str]:
    ext = find_extension(lower_spec_file(spec))
    return {
        i.sym_name.data for i in ext.isaxs() if any(isinstance(o, MEM_OPS) for o in i.body.walk())
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--soc", default="vexriscv")
    ap.add_argument("--mem-latency", type=int, default=None, help="default: the target's")
    ap.add_argument("--clock-ns", type=float, default=10.0)
    args = ap.parse_args()
    target = load_target(soc=args.soc)
    L = args.mem_latency if args.mem_latency is not None else target.isax_mem_latency
    beats = target.isax_master.max_burst_beats
    console = Console()
    table = Table(title=f"Interface plans, scheduled cycles at L = {L} ({args.soc})")
    for col in ("ISAX", "hand", "hand+auto", "naive", "naive+auto", "naive+auto / hand"):
        table.add_column(col, justify="right" if col != "ISAX" else "left")
    worst, within = 0.0, 0
    total = 0
    for d in DOMAINS:
        hand = ROOT / "examples" / f"{d}.isax"
        naive = hand.parent / "naive" / hand.name
        h, _ = cycles(hand, "as-written", args.clock_ns, L, beats)
        ha, hplans = cycles(hand, "auto", args.clock_ns, L, beats)
        n, _ = cycles(naive, "as-written", args.clock_ns, L, beats)
        na, nplans = cycles(naive, "auto", args.clock_ns, L, beats)
        for isax in sorted(touches_memory(hand), key=list(h).index):
            ratio = na[isax] / h[isax]
            worst = max(worst, ratio)
            within += ratio <= 1.10
            total += 1
            table.add_row(
                isax,
                str(h[isax]),
                f"{ha[isax]} [{hplans[isax]}]",
                str(n[isax]),
                f"{na[isax]} [{nplans[isax]}]",
                f"{ratio:.2f}" + ("" if ratio <= 1.10 else "  > 1.10"),
            )
    console.print(table)
    console.print(
        f"naive + auto within 10% of hand-written (or better): {within} of {total} ISAXs; "
        f"worst ratio {worst:.2f}"
    )


if __name__ == "__main__":
    main()
