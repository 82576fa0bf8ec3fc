"""The spec-level commands: ``aquas check``, ``lower``, ``opt`` and ``exec``.

Output files are written atomically: nothing is written when a command fails.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

import click

from aquas.cli.common import (
    err,
    is_debug,
    load_module,
    make_context,
    out,
    parse_int,
    print_ir,
    write_atomic,
)
from aquas.diagnostics import AquasError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from aquas.dialects import aquas as aq


def interface_style(isax: aq.IsaxOp) -> str:
    from aquas.dialects import aquas as aq

    kinds = []
    ops = list(isax.body.walk())
    if any(isinstance(o, aq.BurstReadOp | aq.BurstWriteOp) for o in ops):
        kinds.append("burst")
    if any(isinstance(o, aq.LoadOp | aq.StoreOp) for o in ops):
        kinds.append("single-shot")
    if not kinds:
        kinds.append("register")
    return "+".join(kinds)


# ---------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def check(files: tuple[Path, ...]) -> None:
    """Parse and verify spec files; print their ISAXs and encodings."""
    from rich.table import Table

    from aquas.dialects import aquas as aq
    from aquas.spec.frontend import lower_spec_file

    opcode_names = {v: k for k, v in aq.CUSTOM_OPCODES.items()}
    table = Table(title="ISAXs")
    for col in (
        "file",
        "extension",
        "isax",
        "opcode",
        "funct3",
        "funct7",
        "operands",
        "interface",
        "ops",
    ):
        table.add_column(col)
    failures = 0
    total = 0
    for f in files:
        try:
            module = lower_spec_file(f)
        except AquasError as e:
            if is_debug():
                traceback.print_exc()
            err.print(e.render(), markup=False)
            failures += 1
            continue
        ext = next(o for o in module.walk() if isinstance(o, aq.ExtensionOp))
        for isax in ext.isaxs():
            total += 1
            table.add_row(
                str(f),
                ext.sym_name.data,
                isax.sym_name.data,
                opcode_names.get(isax.opcode_value, str(isax.opcode_value)),
                str(isax.funct3_value),
                f"{isax.funct7_value:#09b}",
                ",".join(isax.used) or "-",
                interface_style(isax),
                str(sum(1 for _ in isax.body.walk())),
            )
    if total:
        out.print(table)
    if failures:
        err.print(f"{failures} of {len(files)} file(s) failed")
        sys.exit(2)
    out.print(f"ok: {len(files)} file(s), {total} ISAX(s)")


@click.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write MLIR here.")
@click.option("-p", "--passes", "pipeline", default="", help="Pass pipeline to run after lowering.")
@click.option("--debuginfo", is_flag=True, help="Print spec locations as loc(...) on each op.")
def lower(file: Path, output: Path | None, pipeline: str, debuginfo: bool) -> None:
    """Lower an .isax spec to the aquas MLIR dialect."""
    module = load_module(file)
    if pipeline:
        _run_pipeline(module, pipeline)
    _emit(print_ir(module, debuginfo), output)


@click.command()
@click.argument("file", type=click.Path(path_type=Path), required=False)
@click.option(
    "-p", "--passes", "pipeline", default="", help="Pipeline, e.g. aquas-unroll,canonicalize."
)
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write MLIR here.")
@click.option("--list-passes", is_flag=True, help="List the registered passes and exit.")
@click.option("--debuginfo", is_flag=True, help="Print op locations.")
def opt(
    file: Path | None, pipeline: str, output: Path | None, list_passes: bool, debuginfo: bool
) -> None:
    """Run registered passes over MLIR (or a lowered .isax): aquas opt in.mlir -p a,b{k=v}."""
    from aquas.passes import describe_passes

    if list_passes:
        passes = describe_passes()
        width = max(len(name) for name, _ in passes)
        for name, doc in passes:
            out.print(f"{name:{width}}  {doc}", markup=False)
        return
    if file is None:
        raise click.UsageError("missing input file")
    module = load_module(file)
    _run_pipeline(module, pipeline)
    _emit(print_ir(module, debuginfo), output)


def _run_pipeline(module: ModuleOp, pipeline: str) -> None:
    from xdsl.utils.exceptions import ArgSpecParseError, VerifyException

    from aquas.passes import PASSES, parse_pipeline

    try:
        pipe = parse_pipeline(pipeline)
    # xDSL raises ValueError / ParseError / TypeError for bad specs, and ArgSpecParseError,
    # which derives from BaseException, for a malformed option block such as 'cse{'
    except (Exception, ArgSpecParseError) as e:
        raise AquasError(
            f"bad pass pipeline '{pipeline}': {e}",
            hint="registered passes: " + ", ".join(sorted(PASSES)),
        ) from None
    pipe.apply(make_context(), module)
    try:
        module.verify()
    except VerifyException as e:  # a pass bug, not a user error
        raise RuntimeError(f"IR invalid after pipeline '{pipeline}': {e}") from e


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        write_atomic(output, text)
        err.print(f"wrote {output}")


@click.command(name="exec")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--isax", "isax_name", required=True, help="ISAX to execute.")
@click.option("--rs1", default="0", help="Value of rs1 (decimal, 0x.., 0b..).")
@click.option("--rs2", default="0", help="Value of rs2.")
@click.option(
    "--mem",
    "mem_images",
    multiple=True,
    metavar="FILE[@ADDR]",
    help="Load a raw binary image at ADDR (default 0).",
)
@click.option(
    "--word",
    "words",
    multiple=True,
    metavar="ADDR=VALUE[:BITS]",
    help="Store one little-endian value (default 32 bits).",
)
@click.option(
    "--state",
    "states",
    multiple=True,
    metavar="NAME=VALUE",
    help="Initial value of a state register.",
)
@click.option(
    "--dump",
    "dumps",
    multiple=True,
    metavar="ADDR:COUNT[:BITS]",
    help="Print COUNT words of memory after execution.",
)
@click.option(
    "--repeat",
    default=1,
    show_default=True,
    help="Execute this many times, carrying state and memory.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def exec_(
    file: Path,
    isax_name: str,
    rs1: str,
    rs2: str,
    mem_images: tuple[str, ...],
    words: tuple[str, ...],
    states: tuple[str, ...],
    dumps: tuple[str, ...],
    repeat: int,
    as_json: bool,
) -> None:
    """Execute one ISAX on the golden interpreter."""
    from aquas.interpreter import ExecError, IsaxState, Memory, execute, find_extension, find_isax

    if repeat < 1:
        raise AquasError(f"--repeat must be at least 1, got {repeat}")
    module = load_module(file)
    ext = find_extension(module)
    try:
        isax = find_isax(ext, isax_name)
    except KeyError as e:
        raise AquasError(str(e.args[0]), filename=str(file)) from None
    mem = Memory()
    for spec in mem_images:
        path, _, addr = spec.partition("@")
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            raise AquasError(f"--mem: cannot read {path}: {e.strerror}") from None
        mem.load_image(parse_int(addr, "--mem address") if addr else 0, data)
    for spec in words:
        addr_s, eq, rest = spec.partition("=")
        if not eq:
            raise AquasError(f"--word '{spec}': expected ADDR=VALUE[:BITS]")
        val_s, _, bits_s = rest.partition(":")
        bits = parse_int(bits_s, "--word bits") if bits_s else 32
        if bits not in (8, 16, 32, 64):
            raise AquasError(f"--word '{spec}': bits must be 8, 16, 32 or 64")
        mem.write(
            parse_int(addr_s, "--word address"),
            bits // 8,
            parse_int(val_s, "--word value") & ((1 << bits) - 1),
        )
    state = IsaxState.reset(ext)
    widths = {s.sym_name.data: s.width for s in ext.states()}
    for spec in states:
        name, eq, val = spec.partition("=")
        if not eq or name not in widths:
            raise AquasError(
                f"--state '{spec}': expected NAME=VALUE with NAME one of: {', '.join(widths) or '(none)'}"
            )
        value = parse_int(val, "--state value")
        if not -(1 << (widths[name] - 1)) <= value < (1 << widths[name]):
            raise AquasError(
                f"--state '{spec}': {value} does not fit the {widths[name]}-bit state {name}"
            )
        state.regs[name] = value & ((1 << widths[name]) - 1)
    a1, a2 = parse_int(rs1, "--rs1"), parse_int(rs2, "--rs2")
    if not (-(1 << 31) <= a1 < (1 << 32) and -(1 << 31) <= a2 < (1 << 32)):
        raise AquasError("--rs1/--rs2 must fit 32 bits")
    results = []
    try:
        for _ in range(repeat):
            r = execute(isax, a1, a2, mem, state)
            state = r.state
            results.append(r)
    except ExecError as e:
        raise AquasError(f"execution of {isax_name} failed: {e}", filename=str(file)) from None
    last = results[-1]
    dumped: dict[str, list[int]] = {}
    for spec in dumps:
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise AquasError(f"--dump '{spec}': expected ADDR:COUNT[:BITS]")
        bits = parse_int(parts[2], "--dump bits") if len(parts) == 3 else 32
        start = parse_int(parts[0], "--dump address")
        count = parse_int(parts[1], "--dump count")
        dumped[f"{start:#010x}"] = mem.read_words(start, bits // 8, count)
    writes = [w for r in results for w in r.writes]
    if as_json:
        doc = {
            "isax": isax_name,
            "rd": last.rd,
            "writes": [{"addr": w.addr, "size": w.size, "value": w.value} for w in writes],
            "state": {"regs": last.state.regs, "scratchpads": last.state.spms},
            "dump": dumped,
            "ops_executed": sum(r.ops for r in results),
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    if last.rd is not None:
        signed = last.rd - (1 << 32) if last.rd >> 31 else last.rd
        out.print(f"rd = {last.rd:#010x} ({last.rd} / {signed})")
    out.print(f"memory writes: {len(writes)}")
    for w in writes[:32]:
        out.print(f"  [{w.addr:#010x}] <- {w.value:#0{2 + 2 * w.size}x} ({8 * w.size} bits)")
    if len(writes) > 32:
        out.print(f"  ... {len(writes) - 32} more (use --json for all)")
    for reg, rval in last.state.regs.items():
        out.print(f"state {reg} = {rval:#x}")
    for addr, vals in dumped.items():
        out.print(f"dump {addr}: " + " ".join(f"{v:#x}" for v in vals))
