"""The software cost model, measured: cycles per dynamic instruction of each class the
matcher's cost model counts ([cost] in the target descriptors: alu, mul, div, load, store,
branch), on every reference SoC, next to the descriptor's values.

Each class runs as 16 copies of one instruction in a loop (benchmarks/programs/opcost.c);
cycles per instruction = (region - empty loop) / (16 * iterations). Loads hit the data
cache where there is one; stores go through to memory (write-through, no allocate).

Usage: .venv/bin/python benchmarks/bench_cost.py [--soc NAME ...]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from aquas.runtime.build import build_program
from aquas.sim import build, run
from aquas.target import load_target, target_names

PROGRAM = Path(__file__).resolve().parent / "programs" / "opcost.c"
ITER = 64
CLASSES = {2: "alu", 3: "mul", 4: "div", 5: "load", 6: "store", 7: "branch"}


def measure(soc: str, out: Path) -> dict[str, float]:
    elf = build_program([PROGRAM], out, platform=soc)
    res = run(build(soc, None, [], quiet=True), elf, max_cycles=20_000_000)
    if res.exit_code != 0:
        raise SystemExit(f"{soc}: opcost.c failed:\n{res.output}")
    empty = res.regions[1].cycles
    return {name: (res.regions[rid].cycles - empty) / (16 * ITER) for rid, name in CLASSES.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--soc", action="append", choices=target_names())
    args = ap.parse_args()
    table = Table(title="cycles per instruction: measured / descriptor [cost]")
    table.add_column("class")
    socs = args.soc or target_names()
    for soc in socs:
        table.add_column(soc, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        got = {soc: measure(soc, Path(tmp)) for soc in socs}
    for name in CLASSES.values():
        cells = []
        for soc in socs:
            want = getattr(load_target(soc=soc).cost, name)
            cells.append(f"{got[soc][name]:.2f} / {want:g}")
        table.add_row(name, *cells)
    Console().print(table)


if __name__ == "__main__":
    main()
