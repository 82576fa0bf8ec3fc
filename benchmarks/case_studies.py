"""The four domain case studies on VexRiscv and PicoRV32, in one table.

Runs ``aquas run`` on every project below (cached stages are skipped, so a second call with
nothing changed takes seconds) and prints, per domain and core: the hottest offloaded
region's speedup, the end-to-end speedup, what was offloaded, the unit's area relative to
the core and the unit's and core's timing, from each run's ``report.json``.

Usage: .venv/bin/python benchmarks/case_studies.py [--soc vexriscv picorv32] [--domain ...]
       [-j JOBS]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from aquas.flow import run_project
from aquas.project import load_project

ROOT = Path(__file__).resolve().parents[1]

# domain -> project file per core (relative to the repository)
PROJECTS: dict[str, dict[str, str]] = {
    "point cloud": {
        "vexriscv": "examples/pointcloud/project.toml",
        "picorv32": "examples/pointcloud/project-picorv32.toml",
    },
    "LLM int8": {
        "vexriscv": "examples/llm/project.toml",
        "picorv32": "examples/llm/project-picorv32.toml",
    },
    "Kyber NTT": {
        "vexriscv": "examples/crypto/project.toml",
        "picorv32": "examples/crypto/project-picorv32.toml",
    },
    "DSP chain": {
        "vexriscv": "examples/dsp/project.toml",
        "picorv32": "examples/dsp/project-picorv32.toml",
    },
}


def hottest(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The region that takes the most baseline cycles among those the ISAX build changed."""
    regions = [r for r in doc["regions"] if r["baseline_cycles"] != r["isax_cycles"]]
    return max(regions, key=lambda r: r["baseline_cycles"], default=None)


def row(domain: str, soc: str, doc: dict[str, Any]) -> list[str]:
    e2e = doc["end_to_end"]
    hot = hottest(doc)
    offloaded = sorted({m["isax"] for m in doc["matches"] if m["status"] == "matched"})
    area = doc.get("area") or {}
    timing = doc.get("timing") or {}
    unit_ns, core_ns = timing.get("unit_critical_path_ns"), timing.get("core_critical_path_ns")
    paths = f"{unit_ns:.2f} / {core_ns:.2f} ns" if unit_ns and core_ns else "-"
    return [
        domain,
        soc,
        f"{hot['label']}: {hot['speedup']:.2f}x" if hot else "-",
        f"{e2e['speedup']:.2f}x",
        ", ".join(offloaded) or "-",
        f"{area['overhead_percent']:.1f} %" if "overhead_percent" in area else "-",
        paths,
        "yes" if e2e["outputs_identical"] else "NO",
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--soc", nargs="+", default=["vexriscv", "picorv32"])
    ap.add_argument("--domain", nargs="+", default=list(PROJECTS))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()
    console = Console(stderr=True)
    rows = []
    for domain in args.domain:
        for soc in args.soc:
            proj = load_project(ROOT / PROJECTS[domain][soc])
            t0 = time.perf_counter()
            console.print(f"[bold]{domain} on {soc}[/bold]: aquas run {PROJECTS[domain][soc]}")
            res = run_project(proj, ROOT / "build" / proj.name, jobs=args.jobs, console=console)
            console.print(f"  done in {time.perf_counter() - t0:.1f} s")
            rows.append(row(domain, soc, res.doc))
    table = Table(title="Case studies: speedup, area and timing per domain and core")
    for col in (
        "domain",
        "core",
        "hottest offloaded region",
        "end to end",
        "ISAXs used",
        "unit area / core",
        "critical path unit / core",
        "outputs identical",
    ):
        table.add_column(col)
    for r in rows:
        table.add_row(*r)
    Console(file=sys.stdout).print(table)


if __name__ == "__main__":
    main()
