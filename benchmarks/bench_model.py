"""Accuracy of the memory-interface model: predicted vs measured ISAX cycles.

For every example ISAX (``examples/**/*.isax``) x memory latency {2, 10, 40} x L2 {off, on}
(on: cold and warm, both measured on the same build), the model's prediction
(``aquas.model.predict_module`` on the VexRiscv descriptor with those keys changed) is
compared with the cycles measured in RTL simulation of the synthesized unit behind the
SoC's real ``aquas_mem_ctrl`` (``aquas.model.measure``), command handshake to the first
``rsp_valid``, random operands and RAM contents, rd checked against the golden interpreter.

A cold L2's cost depends on where each pointer falls within a line, so each call differs;
the model predicts the mean over placements, and the table compares it with the measured
mean (the per-call spread is printed beside it).

    .venv/bin/python benchmarks/bench_model.py            # full table (24 Verilator builds)
    .venv/bin/python benchmarks/bench_model.py --latencies 10 --cases 8 --json out.json

Builds are cached (a second run only simulates).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aquas.model import predict_module
from aquas.model.measure import measure
from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import synthesize
from aquas.target import load_target

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latencies", default="2,10,40")
    ap.add_argument("--l2", default="off,on", help="off, on, or both")
    ap.add_argument("--cases", type=int, default=32, help="calls per ISAX and setting")
    ap.add_argument("--soc", default="vexriscv")
    ap.add_argument("--spec", action="append", type=Path, help="only these specs")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args()
    specs = args.spec or sorted((ROOT / "examples").rglob("*.isax"))
    latencies = [int(x) for x in args.latencies.split(",")]
    l2s = args.l2.split(",")
    base = load_target(soc=args.soc)
    rows: list[dict[str, object]] = []
    t_start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            module = lower_spec_file(spec)
            res = synthesize(module, Path(tmp) / spec.stem)
            for lat in latencies:
                for l2 in l2s:
                    target = base.replace(memory={"latency": lat}, l2={"enable": l2 == "on"})
                    for mode in ("cold", "warm") if l2 == "on" else ("cold",):
                        t0 = time.time()
                        m = measure(
                            spec, res.verilog_path, res.unit.name, target, l2=mode, cases=args.cases
                        )
                        label = f"L2 {mode}" if l2 == "on" else "no L2"
                        print(
                            f"  measured {spec.stem} L={lat} {label}: {time.time() - t0:.0f} s"
                            + (f", {len(m.mismatches)} rd mismatches" if m.mismatches else ""),
                            file=sys.stderr,
                            flush=True,
                        )
                        preds = predict_module(module, target, l2=mode)  # type: ignore[arg-type]
                        for p in preds:
                            got = m.cycles[p.isax]
                            mean = statistics.fmean(got)
                            rows.append(
                                {
                                    "spec": spec.stem,
                                    "isax": p.isax,
                                    "latency": lat,
                                    "l2": label,
                                    "memory": bool(p.transfers),
                                    "predicted": round(p.total, 1),
                                    "measured_mean": round(mean, 1),
                                    "measured_min": min(got),
                                    "measured_max": max(got),
                                    "calls": len(got),
                                    "error": abs(p.total - mean) / mean,
                                    "call_errors": [abs(p.total - g) / g for g in got],
                                }
                            )
    print_table(rows)
    print(f"\n{len(rows)} rows in {time.time() - t_start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def print_table(rows: list[dict[str, object]]) -> None:
    head = f"{'spec':<11} {'isax':<17} {'L':>3} {'L2':<8} {'pred':>7} {'meas':>7} {'spread':>11} {'err':>6}"
    print(head)
    print("-" * len(head))
    for r in rows:
        spread = f"{r['measured_min']}..{r['measured_max']}"
        print(
            f"{r['spec']:<11} {r['isax']:<17} {r['latency']:>3} {r['l2']:<8} "
            f"{r['predicted']:>7} {r['measured_mean']:>7} {spread:>11} {pct(float(r['error'])):>6}"  # type: ignore[arg-type]
        )
    print()
    groups = {
        "all rows": rows,
        "ISAXs touching memory": [r for r in rows if r["memory"]],
        "  no L2": [r for r in rows if r["memory"] and r["l2"] == "no L2"],
        "  L2 warm": [r for r in rows if r["memory"] and r["l2"] == "L2 warm"],
        "  L2 cold": [r for r in rows if r["memory"] and r["l2"] == "L2 cold"],
    }
    print(f"{'group':<24} {'rows':>5} {'median err':>11} {'max err':>8}")
    for name, rs in groups.items():
        if not rs:
            continue
        errs = [float(r["error"]) for r in rs]  # type: ignore[arg-type]
        print(f"{name:<24} {len(rs):>5} {pct(statistics.median(errs)):>11} {pct(max(errs)):>8}")
    cold = [e for r in rows if r["l2"] == "L2 cold" and r["memory"] for e in r["call_errors"]]  # type: ignore[attr-defined]
    if cold:
        print(
            f"L2 cold, per call (not the mean): {len(cold)} calls, median "
            f"{pct(statistics.median(cold))}, max {pct(max(cold))}"
        )


if __name__ == "__main__":
    sys.exit(main())
