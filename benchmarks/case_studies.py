"""The four domain case studies on VexRiscv and PicoRV32, in one table.

Runs ``aquas run`` on every project below (cached stages are skipped, so a second call with
nothing changed takes seconds) and prints, per domain and core: the hottest offloaded
region's speedup, the end-to-end speedup, what was offloaded, the unit's area relative to
the core and the unit's and core's timing, from each run's ``report.json``.

Usage: .venv/bin/python benchmarks/case_studies.py [--soc vexriscv picorv32] [--domain ...]
       [-p PARALLEL]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

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


# The order runs start in, longest first (cold, measured on 2 cores: point cloud on
# VexRiscv about 510 s, Kyber 480-580 s, DSP 220-270 s, LLM about 150 s), so that two at a
# time end together. Point cloud on PicoRV32 comes last: its unit is the VexRiscv one (the
# project's 10 ns target), whose timing closure it then finds in the cache.
RUN_ORDER = [
    ("point cloud", "vexriscv"),
    ("Kyber NTT", "vexriscv"),
    ("Kyber NTT", "picorv32"),
    ("DSP chain", "picorv32"),
    ("DSP chain", "vexriscv"),
    ("LLM int8", "picorv32"),
    ("LLM int8", "vexriscv"),
    ("point cloud", "picorv32"),
]
assert {(d, c) for d, cores in PROJECTS.items() for c in cores} == set(RUN_ORDER)


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


def run_all(jobs: list[tuple[str, str, Path]], parallel: int) -> dict[tuple[str, str], int]:
    """``aquas run`` on every project, ``parallel`` at a time (Yosys and the simulations are
    single-threaded, so two runs keep two cores busy). Every line a run prints is shown as
    it comes, prefixed with its domain and core. Returns each run's exit status."""
    status: dict[tuple[str, str], int] = {}
    lock = threading.Lock()

    def one(domain: str, soc: str, project: Path) -> None:
        tag = f"[{domain} / {soc}]"
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "aquas.cli", "run", str(project)]
        with lock:
            print(f"{tag} aquas run {project.relative_to(ROOT)}", file=sys.stderr, flush=True)
        proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            with lock:
                print(f"{tag} {line.rstrip()}", file=sys.stderr, flush=True)
        status[(domain, soc)] = proc.wait()
        with lock:
            print(f"{tag} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)

    rank = {k: i for i, k in enumerate(RUN_ORDER)}
    ordered = sorted(jobs, key=lambda j: rank.get((j[0], j[1]), len(rank)))
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        for f in [pool.submit(one, *j) for j in ordered]:
            f.result()
    return status


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--soc", nargs="+", default=["vexriscv", "picorv32"])
    ap.add_argument("--domain", nargs="+", default=list(PROJECTS))
    ap.add_argument("-p", "--parallel", type=int, default=2, help="aquas runs at a time")
    args = ap.parse_args()
    jobs = [(d, s, ROOT / PROJECTS[d][s]) for d in args.domain for s in args.soc]
    status = run_all(jobs, args.parallel)
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
    failed = []
    for domain, soc, project in jobs:
        if status[(domain, soc)] != 0:
            failed.append(f"{domain} on {soc}")
            table.add_row(domain, soc, "[red]aquas run failed[/red]", *[""] * 5)
            continue
        report = ROOT / "build" / load_project(project).name / "report.json"
        table.add_row(*row(domain, soc, json.loads(report.read_text())))
    Console(file=sys.stdout, width=200).print(table)
    if failed:
        sys.exit(f"failed: {', '.join(failed)} (their output is above)")


if __name__ == "__main__":
    main()
