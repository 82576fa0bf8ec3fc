"""Loop pipelining on the example specs: scheduled cycles per ISAX without and with it.

For every example ISAX (examples/*/*.isax and examples/*/naive/*.isax), the scheduled
latency (cycles from the command handshake to the response, worst case, at memory latency
``L``) with ``--pipeline off`` and ``--pipeline auto``, and for each loop pipelining
considered: the II achieved (the kernel's states in the state machine), ResMII, RecMII,
stages, the sequential cycles per iteration and what limits the II (or why the loop was
left alone). Only ISAXs with a loop are listed. These are *scheduled* cycles; the
co-simulation of ``aquas synth --cosim`` checks the RTL against the interpreter.

Usage: .venv/bin/python benchmarks/bench_pipeline.py [--clock-ns 10] [--mem-latency 4]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import isax_latencies, loop_reports, schedule_isaxs
from aquas.synth.oplib import OperatorLibrary

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clock-ns", type=float, default=10.0)
    ap.add_argument("--mem-latency", type=int, default=4)
    args = ap.parse_args()
    lib = OperatorLibrary.load()
    table = Table(title=f"loop pipelining @ {args.clock_ns:g} ns, L = {args.mem_latency}")
    for col in ("spec", "isax", "off", "auto", "loop", "II", "ResMII", "RecMII", "stages",
                "seq/iter", "limit or reason"):  # fmt: skip
        table.add_column(col)
    faster = 0
    for path in sorted(ROOT.glob("examples/*/*.isax")) + sorted(
        ROOT.glob("examples/*/naive/*.isax")
    ):
        module = lower_spec_file(path)
        off = isax_latencies(module, args.clock_ns, args.mem_latency, lib, pipeline="off")
        auto = isax_latencies(module, args.clock_ns, args.mem_latency, lib, pipeline="auto")
        builder, _ = schedule_isaxs(module.clone(), args.clock_ns, lib, pipeline="auto")
        reports = loop_reports(builder)
        for isax, loops in reports.items():
            faster += auto[isax][1] < off[isax][1]
            for k, lp in enumerate(loops):
                first = k == 0
                table.add_row(
                    str(path.relative_to(ROOT)) if first else "",
                    isax if first else "",
                    str(off[isax][1]) if first else "",
                    str(auto[isax][1]) if first else "",
                    str(lp["source"]),
                    str(lp["kernel_states"] or "-"),
                    str(lp["res_mii"] or "-"),
                    str(lp["rec_mii"] or "-"),
                    str(lp["stages"] or "-"),
                    str(lp["body_cycles"] or "-"),
                    str(lp["limit"] or lp["not_pipelined"]),
                )
    console = Console(width=220)
    console.print(table)
    console.print(f"{faster} ISAX(s) faster with pipelining")


if __name__ == "__main__":
    main()
