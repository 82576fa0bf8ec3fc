"""``aquas run``: a project file from spec to measured speedup (see :mod:`aquas.flow`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command(name="run")
@click.argument("project_file", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Output directory (default build/<project name>).",
)
@click.option(
    "-j", "--jobs", default=2, show_default=True, help="Simulations run in parallel (>= 1)."
)
@click.option("--force", is_flag=True, help="Re-run every stage, ignoring the cache.")
@click.option("--json", "as_json", is_flag=True, help="Print every figure as JSON.")
@click.option(
    "--clock-ns",
    type=float,
    default=None,
    help="Clock target (ns), over the project's clock_ns (default: the core's critical path).",
)
def run(
    project_file: Path,
    out_dir: Path | None,
    jobs: int,
    force: bool,
    as_json: bool,
    clock_ns: float | None,
) -> None:
    """Run a project: synthesize and co-simulate the unit, match and rewrite the
    application, compile baseline and ISAX builds, simulate both on the SoC (their outputs
    must be identical), measure area and logic depth, and write report.{md,html,json}.

    Unchanged stages are skipped (content hashes). Exit status: 0 on success, 2 for
    errors in the project or a failed check (co-simulation mismatch, outputs differ).
    """
    _run(project_file, out_dir, jobs, force, as_json, clock_ns)


def _run(
    project_file: Path,
    out_dir: Path | None,
    jobs: int,
    force: bool,
    as_json: bool,
    clock_ns: float | None = None,
) -> None:
    import dataclasses

    from rich.table import Table

    from aquas.cli.common import err, out
    from aquas.diagnostics import AquasError
    from aquas.flow import run_project
    from aquas.project import load_project
    from aquas.report import summary_rows

    if jobs < 1:
        raise AquasError(f"--jobs must be at least 1, got {jobs}")
    project = load_project(project_file)
    if clock_ns is not None:
        from aquas.diagnostics import check_clock

        check_clock(clock_ns, "--clock-ns")
        project = dataclasses.replace(project, clock_ns=clock_ns)
    out_dir = out_dir or Path("build") / project.name
    res = run_project(project, out_dir, jobs=jobs, force=force, console=err)
    doc = res.doc
    if as_json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    table = Table(title=f"{project.name}: cycles on {project.soc}")
    for col in ("region", "baseline", "ISAX", "speedup"):
        table.add_column(col, justify="left" if col == "region" else "right")
    for row in summary_rows(doc):
        table.add_row(*row)
    out.print(table)
    if doc.get("isax_cycles"):
        it = Table(title="cycles per ISAX call: predicted (model) vs measured (RTL, see report)")
        for col in ("isax", "plan", "predicted", "measured", "error"):
            it.add_column(col, justify="left" if col in ("isax", "plan") else "right")
        for r in doc["isax_cycles"]:
            err_pct = "n/a" if r["error"] is None else f"{100 * r['error']:.1f} %"
            meas = "n/a" if r["measured_mean"] is None else f"{r['measured_mean']:.1f}"
            pred = "n/a" if r["predicted"] is None else f"{r['predicted']:.1f}"
            it.add_row(r["isax"], r["plan"] or "-", pred, meas, err_pct)
        out.print(it)
    a, t = doc["area"], doc["timing"]
    matched = sum(1 for m in doc["matches"] if m["status"] == "matched")
    if a.get("unit_um2"):  # on the cell library (aquas.area)
        u = a["unit_um2"]
        area = f"unit area {u['total']:,.0f} um^2 on {a['library']}"
        if a.get("core_um2"):
            area += (
                f" = {a['overhead_percent']:.1f} % of {a['core_module']} "
                f"({a['core_um2']['total']:,.0f} um^2); critical path "
                f"{t['unit_critical_path_ns']:.2f} ns vs core {t['core_critical_path_ns']:.2f} ns"
            )
        else:
            area += (
                f"; critical path {t['unit_critical_path_ns']:.2f} ns; "
                f"{a['core_module']} not measured ({a['core_unmeasured']})"
            )
        area += f"; clock target {t['clock_ns']:g} ns"
    elif a["core"] is None:  # the descriptor's core.area_unmeasured
        area = (
            f"unit area {a['unit']['cells']} cells, logic depth {t['unit_depth']}; "
            f"{a['core_module']} not measured ({a['core_unmeasured']})"
        )
    else:
        area = (
            f"unit area {a['unit']['cells']} cells = {a['overhead_percent']:.1f} % of "
            f"{a['core_module']} ({a['core']['cells']} cells); "
            f"logic depth {t['unit_depth']} vs core {t['core_depth']}"
        )
    out.print(f"matched regions: {matched}; {area}", markup=False)
    cached = sum(1 for s in res.stages if s.cached)
    out.print(
        f"reports: {res.out_dir}/report.md, report.html, report.json "
        f"({res.seconds:.1f} s, {cached}/{len(res.stages)} stages unchanged)",
        markup=False,
    )
