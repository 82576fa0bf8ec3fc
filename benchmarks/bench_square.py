"""Squarers: an own multiply of a value by itself (``binding.square``) against a multiply.

Synthesizes two one-ISAX units per width, ``x * x`` (the flow emits a squarer) and
``x * y`` (a multiplier), maps both onto the cell library with OpenSTA (``synth/sta.py``,
the method of the reports) and prints logic area and critical path. The units differ only
in that operator: the command port, operand registers and result register are the same.

Usage: .venv/bin/python benchmarks/bench_square.py [--clock-ns 10]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from aquas.spec.frontend import lower_spec
from aquas.synth import sta
from aquas.synth.flow import synthesize

SPEC = """extension sq;
#[opcode(custom0), funct7(1)]
isax f(rs1, rs2) -> rd {{
    let x: {t} = {x};
    let y: {t} = {y};
    return {ret};
}}
"""

WIDTHS = (8, 16, 32)


def spec(bits: int, square: bool) -> str:
    expr = "x * x" if square else "x * y"
    if bits == 32:
        return SPEC.format(t="u32", x="rs1", y="rs2", ret=expr)
    t = f"u{bits}"
    return SPEC.format(t=t, x=f"trunc<{t}>(rs1)", y=f"trunc<{t}>(rs2)", ret=f"zext<u32>({expr})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clock-ns", type=float, default=10.0)
    args = ap.parse_args()
    table = Table(title=f"x * x (squarer) against x * y, one ISAX each, {sta.LIBRARY_NAME}")
    for col in ("bits", "operator", "logic um^2", "path ns", "squarer / multiplier"):
        table.add_column(col, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        for bits in WIDTHS:
            figs = []
            for square in (True, False):
                what = "x * x" if square else "x * y"
                print(f"{bits} bits, {what}: synthesizing and mapping ...", flush=True)
                out = Path(tmp) / f"{bits}_{square}"
                res = synthesize(lower_spec(spec(bits, square), "sq.isax"), out, args.clock_ns, 4)
                assert ("_diag" in res.verilog_path.read_text()) is square
                figs.append(sta.measure(res.verilog_path, res.unit.name, args.clock_ns))
            sq, mul = figs
            for name, fig in (("x * x", sq), ("x * y", mul)):
                ratio = f"{sq.logic_area_um2 / mul.logic_area_um2:.2f}" if fig is sq else ""
                table.add_row(
                    str(bits),
                    name,
                    f"{fig.logic_area_um2:,.0f}",
                    f"{fig.critical_path_ns:.2f}",
                    ratio,
                )
    Console().print(table)


if __name__ == "__main__":
    main()
