"""``aquas synth``: spec → verified, lint-checked Verilog with per-ISAX reports."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import click
from rich.table import Table

from aquas.cliutil import err, out, user_errors, write_atomic
from aquas.diagnostics import AquasError


def lint(verilog: Path) -> list[str]:
    """``verilator --lint-only -Wall``; returns the warning lines (empty when clean)."""
    from aquas.sim.builder import verilator_root

    root = verilator_root()
    if shutil.which("perl") is None:
        raise AquasError("perl is needed to run verilator", hint="run scripts/setup.sh")
    waiver = Path(__file__).with_name("lint_waivers.vlt")
    cmd = [
        "perl",
        str(root / "bin" / "verilator"),
        "--lint-only",
        "-Wall",
        str(waiver),
        str(verilog),
    ]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env={"VERILATOR_ROOT": str(root), "PATH": "/usr/bin:/bin"},
    )
    lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.startswith("%")]
    if proc.returncode != 0 and not lines:
        lines = [proc.stderr.strip() or "verilator failed"]
    return lines


@click.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--clock-ns", default=10.0, show_default=True, help="Target clock period (ns).")
@click.option(
    "-o",
    "--out-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Output directory (default build/synth/<ext>).",
)
@click.option(
    "--mem-latency",
    default=4,
    show_default=True,
    help="Memory response latency L the latency report is evaluated at.",
)
@click.option("--no-yosys", is_flag=True, help="Skip the Yosys area/depth run.")
@click.option("--no-lint", is_flag=True, help="Skip verilator --lint-only -Wall.")
@click.option(
    "--cosim",
    "cosim_cases",
    default=0,
    show_default=True,
    help="Also co-simulate N random cases against the golden interpreter.",
)
@user_errors
def synth(
    spec: Path,
    clock_ns: float,
    out_dir: Path | None,
    mem_latency: int,
    no_yosys: bool,
    no_lint: bool,
    cosim_cases: int,
) -> None:
    """Synthesize an .isax extension into a Verilog unit with the canonical ISAX port."""
    from aquas.spec.frontend import lower_spec_file
    from aquas.synth.flow import synthesize
    from aquas.synth.oplib import OperatorLibrary

    if clock_ns <= 0:
        raise AquasError(f"--clock-ns must be positive, got {clock_ns}")
    module = lower_spec_file(spec)
    lib = OperatorLibrary.load()
    from aquas.interpreter import find_extension

    ext = find_extension(module).sym_name.data
    out_dir = out_dir or Path("build") / "synth" / ext
    res = synthesize(module, out_dir, clock_ns, mem_latency, lib)
    unit_doc: dict[str, object] = {
        "unit": res.unit.name,
        "verilog": str(res.verilog_path),
        "seconds_to_verilog": round(res.seconds, 3),
    }
    if not no_lint:
        warnings = lint(res.verilog_path)
        unit_doc["lint_warnings"] = warnings
        if warnings:
            err.print("verilator --lint-only -Wall:\n  " + "\n  ".join(warnings), markup=False)
    if not no_yosys:
        from aquas.synth.yosys import measure

        fig = measure(res.verilog_path, res.unit.name)
        depth_ns = fig.depth * lib.ns_per_level
        unit_doc["yosys"] = fig.as_dict() | {
            "depth_ns": round(depth_ns, 3),
            "meets_clock": depth_ns <= clock_ns,
        }
    if cosim_cases:
        from aquas.synth.cosim import run_cosim

        cs = run_cosim(spec, res.verilog_path, res.unit.name, cases=cosim_cases)
        unit_doc["cosim"] = {"cases": cs.cases, "mismatches": cs.mismatches}
        if cs.mismatches:
            raise AquasError("co-simulation mismatches:\n  " + "\n  ".join(cs.mismatches[:5]))
    write_atomic(out_dir / "unit.json", json.dumps(unit_doc, indent=2) + "\n")

    table = Table(title=f"{res.unit.name} @ {clock_ns:g} ns  ({res.seconds:.2f} s to Verilog)")
    for col in ("isax", "states", "cycles @L", "fixed + per-L", "interface ops", "beats"):
        table.add_column(col)
    for name, rep in res.reports.items():
        lat = rep["latency"]
        cyc = (
            f"{lat['cycles_min']}"
            if lat["cycles_min"] == lat["cycles_max"]
            else f"{lat['cycles_min']}..{lat['cycles_max']}"
        )
        form = f"{lat['fixed_min']} + {lat['per_mem_latency_min']}L"
        if (
            lat["fixed_min"] != lat["fixed_max"]
            or lat["per_mem_latency_min"] != lat["per_mem_latency_max"]
        ):
            form += f" .. {lat['fixed_max']} + {lat['per_mem_latency_max']}L"
        iface = ", ".join(f"{k} x{v}" for k, v in rep["interface_ops"].items()) or "registers only"
        table.add_row(name, str(rep["states"]), cyc, form, iface, str(rep["memory_beats"]))
    out.print(table)
    if "yosys" in unit_doc:
        y = unit_doc["yosys"]
        assert isinstance(y, dict)
        verdict = "meets" if y["meets_clock"] else "MISSES"
        out.print(
            f"area: {y['cells']} cells ({y['flops']} flip-flops); logic depth {y['depth']} gates = {y['depth_ns']} ns -> {verdict} the {clock_ns:g} ns clock"
        )
    if "lint_warnings" in unit_doc:
        n = len(unit_doc["lint_warnings"])  # type: ignore[arg-type]
        out.print("lint: clean (verilator -Wall)" if n == 0 else f"lint: {n} warning(s)")
    out.print(f"wrote {out_dir}/")
