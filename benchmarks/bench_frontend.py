"""Spec-frontend speed: parse + check + lower (+ verify) every example spec.

Prints a table per file and the total; the foundation issue's floor is < 2 s in total.
Usage: .venv/bin/python benchmarks/bench_frontend.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from aquas.dialects import aquas as aq
from aquas.spec.frontend import _parser, lower_spec, parse_spec

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5, help="runs per file; the best is reported")
    args = ap.parse_args()
    specs = sorted((ROOT / "examples").rglob("*.isax"))
    t0 = time.perf_counter()
    _parser()  # grammar compilation happens once per process; reported separately
    grammar_s = time.perf_counter() - t0

    table = Table(title=f"parse + lower + verify (best of {args.repeat})")
    for col in ("spec", "ISAXs", "IR ops", "parse only ms", "parse+lower+verify ms"):
        table.add_column(col, justify="right" if col != "spec" else "left")
    total = 0.0
    cold_start = time.perf_counter()
    for p in specs:
        src = p.read_text()
        lower_spec(src, str(p))  # the cold pass counts toward the cold total below
    cold = time.perf_counter() - cold_start + grammar_s
    for p in specs:
        src = p.read_text()
        best_parse = best_all = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            parse_spec(src, str(p))
            t1 = time.perf_counter()
            module = lower_spec(src, str(p))
            module.verify()
            t2 = time.perf_counter()
            best_parse = min(best_parse, t1 - t)
            best_all = min(best_all, t2 - t1)
        ext = next(o for o in module.walk() if isinstance(o, aq.ExtensionOp))
        n_isax = sum(1 for _ in ext.isaxs())
        n_ops = sum(1 for _ in module.walk())
        total += best_all
        table.add_row(
            str(p.relative_to(ROOT)),
            str(n_isax),
            str(n_ops),
            f"{best_parse * 1e3:.1f}",
            f"{best_all * 1e3:.1f}",
        )
    console = Console(width=140)
    console.print(table)
    console.print(f"grammar build (once per process): {grammar_s * 1e3:.0f} ms")
    console.print(f"all examples, warm (sum of best lowering times): {total * 1e3:.0f} ms")
    console.print(f"all examples, cold (first run incl. grammar build): {cold * 1e3:.0f} ms")
    console.print("floor: < 2000 ms in total -> " + ("MET" if cold < 2.0 else "NOT MET"))


if __name__ == "__main__":
    main()
