"""``aquas match APP --ext SPEC``: find ISAX computations in application code and offload them."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from aquas.cli.common import err, out, soc_option, write_atomic
from aquas.diagnostics import AquasError, read_source


@click.command()
@click.argument("app", type=click.Path(path_type=Path))
@click.option(
    "--ext", "spec", required=True, type=click.Path(path_type=Path), help="The .isax spec."
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the rewritten program here (C or MLIR, like the input); for C, "
    "aquas_isax.h is written next to it.",
)
@click.option("--explain", is_flag=True, help="Say why each ISAX did or did not match each loop.")
@click.option(
    "--function",
    "functions",
    multiple=True,
    help="Only these functions (default: those marked `#pragma aquas match`, else all).",
)
@soc_option(
    "Target core: its descriptor gives the memory latency, the software cost model and the "
    "routed custom opcodes (ISAXs on other opcodes are re-encoded into them; the map is printed)."
)
@click.option("--clock-ns", default=10.0, show_default=True, help="Clock the ISAX is scheduled at.")
@click.option(
    "-I",
    "include_dirs",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Add a directory to the C include path (after the source's own), as for the compiler.",
)
@click.option(
    "-D",
    "defines",
    multiple=True,
    help="Define a macro (NAME or NAME=VALUE) for the C preprocessor, as for the compiler.",
)
@click.option(
    "--json", "json_path", type=click.Path(path_type=Path), help="Also write decisions as JSON."
)
def match(
    app: Path,
    spec: Path,
    output: Path | None,
    explain: bool,
    functions: tuple[str, ...],
    soc: str,
    clock_ns: float,
    include_dirs: tuple[Path, ...],
    defines: tuple[str, ...],
    json_path: Path | None,
) -> None:
    """Match ISAX semantics in C or MLIR code (e-graph) and rewrite matched regions."""
    from aquas.egraph.driver import load_patterns, match_file
    from aquas.egraph.emit import HEADER, rewrite_c, rewrite_mlir
    from aquas.egraph.matcher import Options
    from aquas.reencode import spec_for_target
    from aquas.runtime.build import runtime_include_dirs
    from aquas.runtime.header import write_header
    from aquas.synth.pipeline import check_clock
    from aquas.target import load_target

    check_clock(clock_ns)
    if app.suffix not in (".c", ".mlir"):
        raise AquasError(f"{app}: expected a .c or .mlir file")
    for given, what in ((output, "-o"), (json_path, "--json")):
        if given is not None and given.is_dir():
            raise AquasError(f"{what} {given} is a directory; expected a file name")
    read_source(app, "source file")  # a located diagnostic for a non-UTF-8 file, up front
    # the spec re-encoded into the opcodes the core routes: the map is printed, and the
    # unit must be synthesized the same way (aquas synth --reencode-for SOC)
    prepared = spec_for_target(spec, load_target(soc=soc), strict=False)
    for line in prepared[1].lines():
        err.print(line, markup=False)
    if prepared[1].moves:
        err.print(
            f"  (synthesize the unit with `aquas synth --reencode-for {soc}` to match)",
            markup=False,
        )
    pats = load_patterns(spec, clock_ns, soc, prepared=prepared)
    # after the caller's directories, the runtime's (aquas_rt.h, aquas_platform.h), as
    # build_program gives them to the compiler
    include_dirs = (*include_dirs, *runtime_include_dirs(soc))
    res = match_file(
        app,
        spec,
        functions=functions or None,
        options=Options(core=soc),
        patterns=pats,
        include_dirs=include_dirs,
        defines=defines,
    )
    for e in res.skipped:
        err.print(e.render(res.program.source if res.program else None), markup=False)
    # the final check runs before anything is reported or written: a refused rewrite is a
    # rejection with its reason
    text = rewrite_c(res) if output is not None and res.kind == "c" else None

    table = Table(title=f"{app.name}: {len(res.matched)} match(es) in {res.seconds:.2f} s")
    for col in ("function", "line", "isax", "operands", "calls", "sw cycles", "isax cycles"):
        table.add_column(col)
    for d in res.matched:
        assert d.binding is not None
        chunk = f"x chunks of {d.binding.chunk}" if d.binding.chunk else "1"
        if d.filter is not None and d.pattern is not None and d.pattern.filter is not None:
            f = d.pattern.filter
            chunk = f"1 per iteration (state: {', '.join(n for n in f.isaxs if n != f.step)})"
        elif d.pattern is not None and d.pattern.preload is not None:
            chunk += f" (each after {d.pattern.preload})"
        b = d.binding
        regs = b.operands if b.operands is not None else b.regs  # as the call names them
        ops = ", ".join(f"{k}={v}" for k, v in sorted(regs.items()))
        table.add_row(
            d.function, str(d.line), d.isax, ops, chunk, f"~{d.sw_cycles}", str(d.hw_cycles)
        )
    out.print(table)
    if explain:
        _explain(res)
    if output is not None:
        if text is not None:
            header = output.parent / HEADER
            had_header = header.exists()
            if res.matched:
                write_header(res.extension, soc, header)
            try:
                write_atomic(output, text)
            except BaseException:
                if not had_header:  # a failed command leaves nothing behind
                    header.unlink(missing_ok=True)
                raise
        else:
            write_atomic(output, str(rewrite_mlir(res)) + "\n")
        out.print(f"wrote {output}")
    if json_path is not None:
        write_atomic(json_path, json.dumps(decisions_json(res), indent=2) + "\n")


def _explain(res) -> None:  # type: ignore[no-untyped-def]
    for p in res.patterns:
        if p.kind == "unsupported":
            out.print(f"{p.name}: not a matching pattern: {p.why}", markup=False)
    for d in res.decisions:
        verdict = "matched" if d.status == "matched" else f"no ({d.reason})"
        detail = d.detail if d.status != "matched" or not d.binding else d.binding.proof
        out.print(f"{d.function}:{d.line}: {d.isax}: {verdict}: {detail}", markup=False)
        if d.status != "matched":
            for b in d.blockers:  # what stopped the other regions and bindings
                out.print(f"    also {b}", markup=False)


def decisions_json(res) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {
        "app": str(res.app),
        "extension": res.extension.sym_name.data,
        "seconds": round(res.seconds, 3),
        "functions": res.functions,
        "skipped": [e.render() for e in res.skipped],
        "decisions": [
            {
                "function": d.function,
                "line": d.line,
                "isax": d.isax,
                "status": d.status,
                "reason": d.reason,
                "detail": d.detail,
                "operands": {k: str(v) for k, v in d.binding.regs.items()} if d.binding else None,
                "chunk": d.binding.chunk if d.binding else None,
                "sw_cycles": d.sw_cycles,
                "isax_cycles": d.hw_cycles,
                "blockers": d.blockers,
            }
            for d in res.decisions
        ],
    }


__all__ = ["decisions_json", "match"]
