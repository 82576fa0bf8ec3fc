"""``aquas sim``: run a program on a reference SoC (cheap to import: heavy imports are lazy)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from aquas.cli.common import soc_option


@click.command(name="sim")
@click.argument("program", nargs=-1, required=True, type=click.Path(path_type=Path))
@soc_option("Reference SoC to run on.")
@click.option(
    "--isax",
    "isax",
    multiple=True,
    type=click.Path(path_type=Path),
    help="ISAX unit Verilog: a directory of .v/.sv files or files (repeatable).",
)
@click.option(
    "--platform", type=click.Path(path_type=Path), help="Platform file (default: the SoC's)."
)
@click.option("--max-cycles", default=50_000_000, show_default=True, help="Cycle limit.")
@click.option("--vcd", type=click.Path(path_type=Path), help="Dump a waveform (.vcd, or .fst).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def sim(
    program: tuple[Path, ...],
    soc: str,
    isax: tuple[Path, ...],
    platform: Path | None,
    max_cycles: int,
    vcd: Path | None,
    as_json: bool,
) -> None:
    """Run PROGRAM (an RV32 ELF, or .c/.S sources) on a cycle-accurate reference SoC.

    Prints the program's output, its exit code, the cycle count and the cycles of every
    region marked with the region devices. Exit status: 0 when the program exited with
    code 0; 4 when it exited with any other code (printed, and "exit_code" in --json);
    3 when it did not exit (cycle limit, trap, custom instruction without a unit);
    2 for errors in the input; 1 for internal errors.
    """
    if max_cycles < 1:
        from aquas.diagnostics import AquasError

        raise AquasError(f"--max-cycles must be at least 1, got {max_cycles}")
    sys.exit(_sim(program, soc, isax, platform, max_cycles, vcd, as_json))


#: ``aquas sim`` exit statuses beyond the common ones (0 ok, 1 internal, 2 user error).
EXIT_NO_EXIT = 3
EXIT_PROGRAM_FAILED = 4


def _sim(
    program: tuple[Path, ...],
    soc: str,
    isax: tuple[Path, ...],
    platform: Path | None,
    max_cycles: int,
    vcd: Path | None,
    as_json: bool,
) -> int:
    import json
    import tempfile

    from rich.console import Console
    from rich.table import Table

    from aquas.diagnostics import AquasError
    from aquas.sim.builder import build
    from aquas.sim.runner import run
    from aquas.target import load_target

    plat = load_target(platform, soc=soc)
    if vcd is not None and not _writable(vcd):
        raise AquasError("cannot write the waveform file here", filename=str(vcd))
    with tempfile.TemporaryDirectory(prefix="aquas-sim-prog-") as td:
        if len(program) == 1 and program[0].suffix not in (".c", ".S", ".s"):
            elf = program[0]
        else:
            bad = [p for p in program if p.suffix not in (".c", ".S", ".s")]
            if bad:
                raise AquasError(
                    "expected one ELF file or C/assembly sources", filename=str(bad[0])
                )
            try:
                from aquas.runtime.build import build_program
            except ImportError:
                raise AquasError(
                    "compiling sources needs aquas.runtime (not available)",
                    hint="pass a linked .elf instead",
                ) from None
            elf = build_program(list(program), Path(td), platform=soc)
        binary = build(soc, plat, list(isax) or None, quiet=as_json)
        result = run(binary, elf, max_cycles=max_cycles, vcd=vcd)

    if as_json:
        doc: dict[str, Any] = {"soc": soc, **result.to_json()}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(result.output)
        if result.output and not result.output.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
        con = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
        if result.reason == "exit":
            con.print(f"exit code: {result.exit_code}", markup=False)
        else:
            Console(stderr=True, highlight=False, soft_wrap=True).print(
                f"{result.reason}: {result.report}", markup=False
            )
        con.print(f"cycles: {result.cycles}", markup=False)
        if result.regions:
            table = Table(title="regions")
            for col in ("id", "cycles", "count", "cycles/count"):
                table.add_column(col, justify="right")
            for r in sorted(result.regions.values(), key=lambda r: r.id):
                table.add_row(str(r.id), str(r.cycles), str(r.count), f"{r.mean:.1f}")
            con.print(table)
        if plat.l2.enable:
            con.print(f"L2: {result.l2_hits} hits, {result.l2_misses} misses", markup=False)
        if vcd is not None:
            con.print(f"waveform: {vcd}", markup=False)
    if result.reason != "exit":
        return EXIT_NO_EXIT
    # never the code itself: it would wrap modulo 256 (256 looks like success) and
    # collide with the tool's own statuses
    return 0 if result.exit_code == 0 else EXIT_PROGRAM_FAILED


def _writable(path: Path) -> bool:
    """Whether a file can be created or overwritten at ``path`` (checked before the run, so a
    waveform that cannot be written is an error, not a report of one)."""
    import os

    if path.is_dir():
        return False
    if path.exists():
        return os.access(path, os.W_OK)
    parent = path.absolute().parent
    return parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)
