"""ISAX shapes of the peer project's suite: scheduled latency against a bound.

`benchmarks/specs/peer_shapes.isax` holds the shapes the scheduling-quality issue lists
(v3ddist with six coordinate bursts, a covariance with a read-modify-write accumulator
scratchpad, a 16 -> 1 tournament arg-max, gemv with a state accumulator, bitmask-sparse
int8 decompression, i16 gemm 4x4, an int8 gemv over a 2 KiB tile; CORDIC with a constant
angle table when the spec language has one), written for aquas from their descriptions.

Per ISAX, after the interface chooser (`auto`, scheduled cycles at L), at each clock:

* beats: bus beats moved at the port width (bytes moved / port bytes per beat);
* bodies: loop bodies executed after unrolling (an innermost loop of T trips unrolled by
  F runs ceil(T / F) bodies, times the trips of the loops around it; straight-line code
  counts as one);
* bound = beats + bodies: one beat per cycle and one cycle per unrolled body, the bound
  the issue states (it ignores the memory latency, which only overlapping requests hide);
* cycles: the scheduled worst case at memory latency L (command to response), and
  cycles - L * (requests): what is left once every request's latency is paid.

The peer project reports `v3ddist_vv` at 166 cycles for the whole call at a ~15-cycle
memory latency; the first table row is the same shape at L = 15.

With ``--outstanding K`` the units keep K memory requests in flight
(``aquas-interface-outstanding``, a target whose ``isax_master.outstanding`` is K): the
requests of consecutive accesses are sent ahead and only the first of each run pays L.
``--pipeline`` is ``aquas synth``'s loop pipelining mode (default ``auto``: the flow's
best, which also pipelines loops over scratchpad data without a directive).

With ``--cosim N`` the unit is also co-simulated in Verilator: 4 cases per ISAX at the
fixed latency L, whose cycles (the hardware's, from the test bench's cycle count) are the
``measured`` column, and N cases with random latency and back-pressure against the
golden interpreter, whose mismatches are printed.

Usage: .venv/bin/python benchmarks/bench_peer.py [--mem-latency 15] [--clock-ns 5.68 10]
       [--outstanding K] [--pipeline auto|directive|off] [--cosim N]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation

from aquas.dialects.aquas import UNROLL_ATTR, constant_value
from aquas.interpreter import find_extension
from aquas.plans.choose import apply_interface
from aquas.plans.outstanding import set_outstanding
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import synthesize
from aquas.synth.loop_pipeline import PIPELINE_MODES

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "benchmarks" / "specs" / "peer_shapes.isax"
PEER_V3DDIST = 166  # the peer's measured whole-call cycles of v3ddist_vv (issue 18)


def _span(xs: list[int]) -> str:
    return str(min(xs)) if min(xs) == max(xs) else f"{min(xs)}..{max(xs)}"


def _trips(loop: scf.ForOp) -> int:
    lb, ub, step = (constant_value(v) for v in (loop.lb, loop.ub, loop.step))
    assert lb is not None and ub is not None and step, "benchmark loops have constant bounds"
    return max(0, -(-(ub - lb) // step))


def _bodies(op: Operation, outer: int = 1) -> int:
    """Loop bodies executed after unrolling, below ``op`` (see the module doc)."""
    total = 0
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                if isinstance(inner, scf.ForOp):
                    t = _trips(inner)
                    f = inner.attributes.get(UNROLL_ATTR)
                    factor = f.value.data if isinstance(f, IntegerAttr) else 1
                    runs = outer * (1 if factor >= t else math.ceil(t / factor))
                    total += _bodies(inner, runs) or runs
                else:
                    total += _bodies(inner, outer)
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mem-latency", type=int, default=15, help="memory latency L (cycles)")
    ap.add_argument("--clock-ns", type=float, nargs="+", default=[5.68, 10.0])
    ap.add_argument("--outstanding", type=int, default=1, help="memory requests in flight")
    ap.add_argument("--pipeline", choices=PIPELINE_MODES, default="auto")
    ap.add_argument("--cosim", type=int, default=0, help="random co-simulation cases per ISAX")
    args = ap.parse_args()
    console = Console(width=160)
    ext = find_extension(lower_spec_file(SPEC))
    bodies = {i.sym_name.data: max(1, _bodies(i)) for i in ext.isaxs()}
    for clock in args.clock_ns:
        t0 = time.perf_counter()
        console.print(f"[dim]scheduling {SPEC.name} at {clock:g} ns, L = {args.mem_latency} ...")
        module = lower_spec_file(SPEC)
        choice = apply_interface(module, "auto", clock, args.mem_latency)
        set_outstanding(module, args.outstanding)
        res = synthesize(module, ROOT / "build" / "bench_peer" / f"{clock:g}ns", clock,
                         args.mem_latency, pipeline=args.pipeline)  # fmt: skip
        measured: dict[str, Any] = {}
        if args.cosim:
            console.print(f"[dim]co-simulating at L = {args.mem_latency} and at random ...")
            fixed, rand = (
                run_cosim(
                    SPEC,
                    res.verilog_path,
                    res.unit.name,
                    cases=n,
                    seed=3,
                    mode=mode,
                    latency=args.mem_latency,
                )
                for n, mode in ((4, "fixed"), (args.cosim, "random"))
            )
            measured = fixed.stats
            console.print(
                f"co-simulation: {args.cosim} random case(s) per ISAX, "
                f"{len(fixed.mismatches) + len(rand.mismatches)} mismatch(es)"
            )
        table = Table(
            title=f"peer shapes at {clock:g} ns, L = {args.mem_latency}, 32-bit port, "
            f"{args.outstanding} request(s) in flight, pipelining {args.pipeline} "
            f"({time.perf_counter() - t0:.0f} s)"
        )
        for c in ("isax", "plan", "beats", "bodies", "bound", "cycles", "measured",
                  "cycles - L x req", "cycles / bound"):  # fmt: skip
            table.add_column(c, justify="left" if c in ("isax", "plan") else "right")
        for isax in find_extension(module).isaxs():
            name = isax.sym_name.data
            rep = res.reports[name]
            lat = rep["latency"]
            beats = rep["memory_beats"]
            requests = lat["per_mem_latency_max"]
            bound = beats + bodies[name]
            cyc = lat["cycles_max"]
            table.add_row(
                name,
                choice.plans[name],
                str(beats),
                str(bodies[name]),
                str(bound),
                str(cyc) if lat["cycles_min"] == cyc else f"{lat['cycles_min']}..{cyc}",
                _span(measured[name]["cycles"]) if name in measured else "-",
                str(cyc - args.mem_latency * requests),
                f"{cyc / bound:.2f}",
            )
        console.print(table)
        v3 = max(measured["v3ddist6"]["cycles"]) if measured else \
            res.reports["v3ddist6"]["latency"]["cycles_max"]  # fmt: skip
        console.print(
            f"v3ddist6 (6 coordinate bursts, unroll 4): {v3} cycles at L = {args.mem_latency} "
            f"({'measured in RTL' if measured else 'scheduled'}); "
            f"the peer's whole-call figure is {PEER_V3DDIST}: "
            + ("met" if v3 <= PEER_V3DDIST else "NOT met")
        )


if __name__ == "__main__":
    main()
