"""Multi-cycle operators: cycles per ISAX and area, with `%`/`/`/`*` on sequential units.

Synthesizes the multi-cycle test specs (tests/sim/specs/divrem.isax, kyber_mod.isax) and
the hand-written Barrett Kyber (examples/crypto/kyber.isax) at a 10 ns clock, and a
64-bit-multiply spec at 5 ns, and prints per ISAX its scheduled cycles (at the memory
latency L = 4 of the co-simulation tests) and the operations on multi-cycle units; then
per unit its Yosys cells, flip-flops and depth, and the dividers/multipliers inside it
with the operator library's figures. Scheduled cycles are what the fixed-latency
co-simulation measures (tests/sim/test_synth_cosim.py checks them equal).

Usage: .venv/bin/python benchmarks/bench_multicycle.py [--no-yosys]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.flow import SynthResult, multicycle_units, synthesize
from aquas.synth.oplib import OperatorLibrary

ROOT = Path(__file__).resolve().parents[1]
MUL64 = """extension mul64;
#[opcode(custom0), funct7(1)]
isax mulhi(rs1, rs2) -> rd {
    let p: u64 = zext<u64>(rs1) * zext<u64>(rs2);
    return trunc<u32>(p >> 32);
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-yosys", action="store_true", help="skip the Yosys area figures")
    args = ap.parse_args()
    lib = OperatorLibrary.load()
    con = Console()
    runs: list[tuple[str, float, SynthResult]] = []
    with tempfile.TemporaryDirectory() as tmp:
        specs = [
            ("divrem", ROOT / "tests/sim/specs/divrem.isax", 10.0),
            ("kyber with %", ROOT / "tests/sim/specs/kyber_mod.isax", 10.0),
            ("kyber Barrett", ROOT / "examples/crypto/kyber.isax", 10.0),
        ]
        for label, path, clock in specs:
            res = synthesize(lower_spec_file(path), Path(tmp) / label.replace(" ", "_"), clock, 4)
            runs.append((label, clock, res))
        res = synthesize(lower_spec(MUL64, "mul64.isax"), Path(tmp) / "mul64", 5.0, 4)
        runs.append(("64-bit multiply", 5.0, res))

        t = Table(title="ISAX cycles (command to response, L = 4)")
        for c in ("unit", "clock ns", "ISAX", "cycles", "on multi-cycle units"):
            t.add_column(c, justify="right" if c in ("clock ns", "cycles") else "left")
        for label, clock, res in runs:
            for name, rep in res.reports.items():
                lat = rep["latency"]
                cyc = str(lat["cycles_min"])
                if lat["cycles_max"] != lat["cycles_min"]:
                    cyc += f"..{lat['cycles_max']}"
                ops = ", ".join(
                    f"{m['op'].split('.')[1]}@{m['unit']}"
                    + (" (shared)" if m["shares_division"] else "")
                    for m in rep["multicycle"]
                )
                t.add_row(label, f"{clock:g}", name, cyc, ops or "-")
        con.print(t)

        u = Table(title="Units")
        for c in (
            "unit",
            "cells",
            "flip-flops",
            "depth",
            "sequential units (cells, depth, latency)",
        ):
            u.add_column(c, justify="left" if c.startswith(("unit", "seq")) else "right")
        for label, _, res in runs:
            seq = ", ".join(
                f"{m['unit']} ({m['cells']}, {m['depth']}, {m['latency']})"
                for m in multicycle_units(res.unit, lib)
            )
            if args.no_yosys:
                u.add_row(label, "-", "-", "-", seq or "-")
                continue
            from aquas.synth.yosys import measure

            fig = measure(res.verilog_path, res.unit.name)
            u.add_row(label, f"{fig.cells:,}", f"{fig.flops:,}", str(fig.depth), seq or "-")
        con.print(u)


if __name__ == "__main__":
    main()
