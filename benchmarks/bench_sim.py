"""Reference-SoC simulation speed: simulated core cycles per second on every SoC (a long
ALU/load/store/mul loop, tests/sim/fixtures/spin.S), and Verilator build time cold vs cached.

Target: >= 1,000,000 cycles/s on vexriscv.
Usage: .venv/bin/python benchmarks/bench_sim.py [--cycles N] [--skip-cold] [--soc NAME ...]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from aquas.sim import build, run
from aquas.target import target_names

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "sim" / "fixtures"


def compile_spin(soc: str, out: Path) -> Path:
    elf = out / f"spin-{soc}.elf"
    subprocess.run(
        [
            "riscv64-unknown-elf-gcc",
            "-march=rv32im_zicsr",
            "-mabi=ilp32",
            "-nostdlib",
            "-Wl,--no-warn-rwx-segments",
            "-T",
            str(FIX / "link.ld"),
            f"-I{FIX}",
            f"-DSOC_{soc.upper()}",
            str(FIX / "start.S"),
            str(FIX / "spin.S"),
            "-o",
            str(elf),
        ],
        check=True,
    )
    return elf


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=5_000_000, help="cycles simulated per SoC")
    ap.add_argument("--skip-cold", action="store_true", help="do not measure cold builds")
    ap.add_argument("--soc", action="append", choices=target_names(), help="default: every SoC")
    args = ap.parse_args()
    con = Console()
    table = Table(title="aquas reference SoC simulation speed (Verilator)")
    for col in ("soc", "cold build [s]", "cached build [s]", "cycles", "wall [s]", "cycles/s"):
        table.add_column(col, justify="right")
    with tempfile.TemporaryDirectory() as td:
        for soc in args.soc or target_names():
            cold = float("nan")
            if not args.skip_cold:
                t0 = time.perf_counter()
                build(soc, cache_root=Path(td) / "cache", quiet=True)
                cold = time.perf_counter() - t0
            build(soc, quiet=True)  # make sure the shared cache has it
            t0 = time.perf_counter()
            b = build(soc, quiet=True)
            cached = time.perf_counter() - t0
            r = run(b, compile_spin(soc, Path(td)), max_cycles=args.cycles)
            table.add_row(
                soc,
                f"{cold:.1f}",
                f"{cached:.3f}",
                str(r.cycles),
                f"{r.wall_seconds:.2f}",
                f"{r.cycles_per_second:,.0f}",
            )
    con.print(table)


if __name__ == "__main__":
    main()
