"""Synthesis speed and ISAX latency next to a software reference.

For every example extension: seconds from spec text to Verilog (floor: < 2 s per
extension), and per ISAX the scheduled hardware latency at the platform's memory latency
next to an estimate of the same computation in software on VexRiscv. The estimate counts
the golden interpreter's dynamic operations on a random case and charges RV32IM costs:
1 cycle per ALU op, 1 per multiply (VexRiscv_FullCfu multiplies in one pass), 34 per
division, 2 per load (cache hit), 1 per store, 1 per scratchpad access (a load or store
in software) plus 1 for its address, and 3 per loop iteration (increment, compare,
taken branch). `--yosys` adds each unit's Yosys figures (cells, flip-flops, depth) and
its wire census (declared wires and how many carry no spec name, `_GEN_*`). `--measure`
also runs the point-cloud program of tests/sim on the VexRiscv SoC in both builds and
prints the measured cycles.

Usage: .venv/bin/python benchmarks/bench_synth.py [--clock-ns 10] [--yosys] [--only NAME]
       [--measure]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from xdsl.dialects import scf

from aquas.dialects import aquas as aq
from aquas.interpreter import ExecError, IsaxState, execute, find_extension
from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import synthesize
from aquas.synth.hwgen import wire_census
from aquas.target import load_target

ROOT = Path(__file__).resolve().parents[1]
VEX = load_target(soc="vexriscv").cost  # the matcher's cost model of the core


def sw_estimate(isax: aq.IsaxOp, ext: aq.ExtensionOp) -> int:
    """RV32IM cycles for one invocation, from dynamic op counts (see the module doc)."""
    from aquas.interpreter import NoiseMemory
    from aquas.synth.cosim_tb import operand

    rng = random.Random(5)
    for _ in range(200):
        try:
            r = execute(isax, operand(rng), operand(rng), NoiseMemory(1), IsaxState.reset(ext))
            break
        except ExecError:
            continue
    else:
        return -1
    trips = 0
    for op in isax.body.walk():
        if isinstance(op, scf.ForOp):
            lb, ub, st = (o.owner.value.value.data for o in (op.lb, op.ub, op.step))  # type: ignore[union-attr]
            trips += max(0, (ub - lb + st - 1) // st)
    cycles = r.ops  # every executed op at least one cycle
    cycles += int(r.loads * (VEX.load - 1) + r.burst_beats * (VEX.load + VEX.store - 1))
    cycles += sum(
        int(VEX.div) - 1
        for op in isax.body.walk()
        if op.name in ("arith.divui", "arith.divsi", "arith.remui", "arith.remsi")
    )
    cycles += trips * int(VEX.branch)
    return cycles


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clock-ns", type=float, default=10.0)
    ap.add_argument(
        "--mem-latency",
        type=int,
        default=12,
        help="memory latency L (platform: latency 10 + DMA setup 2)",
    )
    ap.add_argument(
        "--measure", action="store_true", help="also run the point-cloud program on the SoC"
    )
    ap.add_argument("--yosys", action="store_true", help="add Yosys cells and depth per unit")
    ap.add_argument("--only", action="append", help="only this extension (repeatable)")
    args = ap.parse_args()
    console = Console(width=150)
    speed = Table(title=f"spec -> Verilog at {args.clock_ns:g} ns")
    cols = ["extension", "ISAXs", "seconds", "CPU s", "floor < 2 s", "lines", "wires"]
    cols += ["_GEN_ wires", "regs"]
    if args.yosys:
        cols += ["cells", "flops", "depth"]
    for c in cols:
        speed.add_column(c)
    lat = Table(title=f"ISAX latency (L = {args.mem_latency}) vs software estimate on VexRiscv")
    for c in ("isax", "hw cycles", "sw estimate", "ratio"):
        lat.add_column(c, justify="right" if c != "isax" else "left")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in sorted((ROOT / "examples").rglob("*.isax")):
            if args.only and spec.stem not in args.only:
                continue
            t0, c0 = time.perf_counter(), time.process_time()
            module = lower_spec_file(spec)
            res = synthesize(module, Path(tmp) / spec.stem, args.clock_ns, args.mem_latency)
            secs, cpu = time.perf_counter() - t0, time.process_time() - c0
            text = res.verilog_path.read_text()
            census = wire_census(text)
            row = [spec.stem, str(len(res.reports)), f"{secs:.2f}", f"{cpu:.2f}"]
            row += ["met" if secs < 2 else "MISSED", str(text.count("\n")), str(census.wires)]
            row += [f"{census.gen_wires} ({census.gen_share:.0%})", str(census.regs)]
            if args.yosys:
                from aquas.synth.yosys import measure as yosys_measure

                fig = yosys_measure(res.verilog_path, res.unit.name, ROOT / "build" / "yosys")
                row += [str(fig.cells), str(fig.flops), str(fig.depth)]
            speed.add_row(*row)
            ext = find_extension(lower_spec_file(spec))
            for isax in ext.isaxs():
                rep = res.reports[isax.sym_name.data]["latency"]
                hw = rep["cycles_max"]
                sw = sw_estimate(isax, ext)
                lat.add_row(isax.sym_name.data, str(hw), str(sw), f"{sw / hw:.1f}x" if hw else "-")
    console.print(speed)
    console.print(lat)
    if args.measure:
        measure(console)


def measure(console: Console) -> None:
    import aquas.sim
    from aquas.runtime.build import build_program
    from aquas.runtime.header import write_header

    spec = ROOT / "examples" / "pointcloud" / "pointcloud.isax"
    prog = ROOT / "tests" / "sim" / "programs" / "pointcloud_kernels.c"
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        res = synthesize(lower_spec_file(spec), t / "unit", 10.0)
        ext = find_extension(lower_spec_file(spec))
        table = Table(title="point-cloud kernels (v3ddist, vcovmat3d, vgemv4, vmaxarg), measured")
        for c in ("SoC", "software cycles", "with ISAX unit", "speedup"):
            table.add_column(c)
        for soc in ("vexriscv", "picorv32"):
            write_header(ext, soc, t / soc / "inc" / "aquas_isax.h", allow_unrouted=False)
            sw = build_program([prog], t / soc / "sw", platform=soc)
            hw = build_program(
                [prog],
                t / soc / "hw",
                platform=soc,
                header_dirs=[t / soc / "inc"],
                defines={"USE_ISAX": "1"},
            )
            a = aquas.sim.run(aquas.sim.build(soc, quiet=True), sw, max_cycles=5_000_000)
            b = aquas.sim.run(
                aquas.sim.build(soc, None, [res.verilog_path], quiet=True), hw, max_cycles=5_000_000
            )
            assert a.output == b.output, "outputs differ"
            sc, hc = a.regions[1].cycles, b.regions[1].cycles
            table.add_row(soc, str(sc), str(hc), f"{sc / hc:.2f}x")
        console.print(table)


if __name__ == "__main__":
    main()
