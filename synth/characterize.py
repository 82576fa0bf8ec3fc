"""Characterise the operator library with Yosys: logic depth and area per operator kind and width.

For every combinational operator kind of the CIRCT ``comb`` dialect that the scheduler has to
cost (see :mod:`aquas.synth.oplib`) and every width in :data:`WIDTHS`, this script writes a tiny
purely combinational Verilog module ``m`` (inputs -> one operator -> output, no registers), runs
Yosys on it with one fixed technology mapping (:data:`YOSYS_SCRIPT`), and records

* ``cells``: the number of cells after mapping to generic gates (``stat``), the area, and
* ``depth``: the longest topological path from an input to an output, counted in cells
  (``ltp -noff``), the logic depth in levels.

The results are written to ``synth/oplib.json``, read by :class:`aquas.synth.oplib.OperatorLibrary`.

Usage::

    .venv/bin/python -m aquas.synth.characterize [--out synth/oplib.json] [--jobs 2]
    .venv/bin/python -m aquas.synth.characterize --kinds add,mul --widths 8,16   # partial re-run

A partial run (``--kinds`` / ``--widths``) merges its measurements into an existing ``--out``
file instead of replacing it. Runs that exceed ``--timeout`` seconds (120 s by default) are
recorded with ``"timeout": true`` and their depth and cells are extrapolated from the two
widest measured widths of the same kind (power law fit, rounded up); see :func:`_extrapolate`.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import itertools
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The fixed technology mapping, the same as for whole units (``synth/yosys.py``): generic
#: RTL synthesis without ABC, so arithmetic keeps Yosys' own architectures (log-depth
#: carry-lookahead adders, array multipliers and dividers) mapped onto its internal
#: single-bit gates ($_AND_, $_OR_, $_XOR_, $_MUX_, $_NOT_). ABC would restructure for area
#: (ripple-like adders) and takes minutes on a whole unit; one mapping for operators and
#: units keeps the scheduler's estimates comparable with the measured unit depth.
YOSYS_SCRIPT = (
    "read_verilog -sv x.v; synth -flatten -top m -noabc; "
    "opt_clean; tee -q -o stat.txt stat; tee -q -o ltp.txt ltp -noff"
)

#: The widths characterised for every kind.
WIDTHS: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 64)

#: Technology assumption written into the JSON (see docs/synthesis.md, "Operator library").
TECHNOLOGY: dict[str, Any] = {
    "name": "yosys-generic-gates",
    "ns_per_level": 0.1,
    "area_unit": "Yosys generic single-bit gates",
    "note": (
        "Assumption: ~100 ps per generic gate level, a 130-nm-class standard-cell delay "
        "(the reference flow targets IHP 130 nm); the clock period in ns divided by "
        "ns_per_level gives the gate levels per cycle. Area is the count of Yosys' internal "
        "gates after 'synth -noabc' (AND, OR, XOR, MUX, NOT: one cell each)."
    ),
}

#: Kinds that are pure wiring: depth 0, area 0.
FREE_KINDS: tuple[str, ...] = (
    "extract",
    "concat",
    "replicate",
    "constant",
    "extui",
    "extsi",
    "trunci",
    "shl_const",
    "shru_const",
    "shrs_const",
)

#: The base constants of the ``*_const`` kinds. A constant that does not fit in ``w`` bits is
#: replaced according to its rule (see :func:`const_value`); the entry of a ``*_const`` kind
#: is the maximum (depth and cells separately) over these variants.
CONST_VARIANTS: dict[str, str] = {
    # 3329: the Kyber modulus. Does not fit below 12 bits -> the largest odd constant < 2^w.
    "3329": "fit-or-largest-odd",
    # 1000003: a typical non-power-of-two constant, truncated to the width (it is odd, so the
    # truncation is odd too).
    "1000003": "truncate",
}

#: Verilog expression per kind. ``a``, ``b`` are ``w`` bits, ``c`` is 1 bit and ``{C}`` is the
#: constant literal of the ``*_const`` kinds. Signedness follows CIRCT comb: operands are plain
#: bit vectors, the signed kinds reinterpret them with ``$signed``.
EXPRESSIONS: dict[str, str] = {
    "add": "a + b",
    "sub": "a - b",
    "mul": "a * b",
    "divu": "a / b",
    "divs": "$signed(a) / $signed(b)",
    "modu": "a % b",
    "mods": "$signed(a) % $signed(b)",
    "and": "a & b",
    "or": "a | b",
    "xor": "a ^ b",
    "not": "~a",
    "shl": "a << b",
    "shru": "a >> b",
    "shrs": "$signed(a) >>> b",
    "icmp_eq": "a == b",
    "icmp_ult": "a < b",
    "icmp_slt": "$signed(a) < $signed(b)",
    "mux": "c ? a : b",
    "mul_const": "a * {C}",
    "divu_const": "a / {C}",
    "modu_const": "a % {C}",
}

#: Kinds whose result is a single bit.
ONE_BIT_RESULT = frozenset({"icmp_eq", "icmp_ult", "icmp_slt"})


def const_value(base: str, width: int) -> int:
    """Return the constant used for variant ``base`` of a ``*_const`` kind at ``width`` bits."""
    value = int(base)
    rule = CONST_VARIANTS[base]
    if rule == "truncate":
        return value % (1 << width)
    if value < (1 << width):
        return value
    return (1 << width) - 1  # the largest odd constant < 2^w


def verilog_for(kind: str, width: int, const: int | None = None) -> str:
    """Return the Verilog source of the single-operator module ``m`` for ``kind`` at ``width``."""
    expr = EXPRESSIONS[kind]
    if "{C}" in expr:
        if const is None:
            raise ValueError(f"{kind} needs a constant")
        expr = expr.replace("{C}", f"{width}'d{const}")
    rng = f"[{width - 1}:0]"
    ports = [f"input {rng} a"]
    if "b" in re.findall(r"\b[abc]\b", expr):
        ports.append(f"input {rng} b")
    if "c ?" in expr:
        ports.append("input c")
    out_rng = "" if kind in ONE_BIT_RESULT else f"{rng} "
    ports.append(f"output {out_rng}y")
    return f"module m({', '.join(ports)});\n  assign y = {expr};\nendmodule\n"


@dataclass(frozen=True)
class Job:
    """One Yosys run: an operator kind at a width, optionally with a constant variant."""

    kind: str
    width: int
    variant: str | None = None  # base constant name for the *_const kinds

    @property
    def const(self) -> int | None:
        """The constant operand, for the ``*_const`` kinds."""
        return None if self.variant is None else const_value(self.variant, self.width)

    def estimated_cost(self) -> float:
        """A rough runtime estimate, to start the slowest jobs first."""
        weight = {"divu": 40, "divs": 45, "modu": 40, "mods": 45, "mul": 4}.get(self.kind, 1)
        return weight * self.width**2


@dataclass(frozen=True)
class Measurement:
    """The result of one run: depth (levels), cells, and the wall-clock seconds it took."""

    depth: int | None
    cells: int | None
    seconds: float
    timeout: bool = False


def yosys_version(yosys: str = "yosys") -> str:
    """Return the ``yosys -V`` string."""
    out = subprocess.run([yosys, "-V"], capture_output=True, text=True, check=True).stdout
    return out.strip()


def _parse(stat: str, ltp: str) -> tuple[int, int]:
    cells = re.search(r"Number of cells:\s+(\d+)", stat)
    depth = re.search(r"Longest topological path in \S+ \(length=(\d+)\)", ltp)
    if cells is None or depth is None:
        raise RuntimeError(f"cannot parse yosys output:\n{stat}\n{ltp}")
    return int(depth.group(1)), int(cells.group(1))


def measure(
    kind: str,
    width: int,
    const: int | None = None,
    *,
    timeout: float | None = 120.0,
    yosys: str = "yosys",
    source: str | None = None,
) -> Measurement:
    """Synthesise one operator with :data:`YOSYS_SCRIPT` and return its depth and cell count
    (``source``: the module ``m`` to synthesise instead of ``kind``'s)."""
    with tempfile.TemporaryDirectory(prefix="aquas-oplib-") as tmp:
        d = Path(tmp)
        (d / "x.v").write_text(source or verilog_for(kind, width, const))
        start = time.monotonic()
        try:
            proc = subprocess.run(
                [yosys, "-q", "-p", YOSYS_SCRIPT],
                cwd=d,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return Measurement(None, None, time.monotonic() - start, timeout=True)
        seconds = time.monotonic() - start
        if proc.returncode != 0:
            raise RuntimeError(f"yosys failed on {kind}/{width}:\n{proc.stderr}{proc.stdout}")
        depth, cells = _parse((d / "stat.txt").read_text(), (d / "ltp.txt").read_text())
    return Measurement(depth, cells, seconds)


def jobs_for(kinds: Iterable[str], widths: Iterable[int]) -> list[Job]:
    """All jobs for ``kinds`` x ``widths``, slowest first."""
    jobs: list[Job] = []
    for kind in kinds:
        for width in widths:
            if "{C}" in EXPRESSIONS[kind]:
                jobs.extend(Job(kind, width, v) for v in CONST_VARIANTS)
            else:
                jobs.append(Job(kind, width))
    return sorted(jobs, key=Job.estimated_cost, reverse=True)


def _extrapolate(points: dict[int, int], width: int) -> int:
    """Extrapolate a value at ``width`` from the two widest measured widths below it.

    Fits ``v = v1 * (w / w1) ** k`` through the two points (a power law: ~quadratic for the
    array dividers, ~linear for ripple structures) and rounds up.
    """
    below = sorted(w for w in points if w < width)
    if len(below) < 2:
        raise RuntimeError(f"cannot extrapolate to width {width}: need two smaller widths")
    w1, w2 = below[-2], below[-1]
    v1, v2 = points[w1], points[w2]
    if v1 <= 0 or v2 <= 0:
        return max(v1, v2)
    k = math.log(v2 / v1) / math.log(w2 / w1)
    return math.ceil(v2 * (width / w2) ** k)


def build_ops(
    results: dict[Job, Measurement], kinds: Iterable[str], widths: Iterable[int]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Turn the measurements into the ``ops`` section of the JSON (with extrapolation)."""
    ops: dict[str, dict[str, dict[str, Any]]] = {}
    by_key: dict[tuple[str, int], list[tuple[Job, Measurement]]] = {}
    for job, m in results.items():
        by_key.setdefault((job.kind, job.width), []).append((job, m))
    for kind in kinds:
        entries: dict[str, dict[str, Any]] = {}
        # per variant (None for plain kinds): width -> measured depth / cells
        variants = sorted(
            {j.variant or "" for (k, _), lst in by_key.items() if k == kind for j, _ in lst}
        )
        measured: dict[str, tuple[dict[int, int], dict[int, int]]] = {v: ({}, {}) for v in variants}
        for width in widths:
            for job, m in by_key.get((kind, width), []):
                if not m.timeout:
                    assert m.depth is not None and m.cells is not None
                    measured[job.variant or ""][0][width] = m.depth
                    measured[job.variant or ""][1][width] = m.cells
        for width in sorted(widths):
            parts: dict[str, dict[str, Any]] = {}
            for job, m in sorted(by_key.get((kind, width), []), key=lambda jm: jm[0].variant or ""):
                v = job.variant or ""
                depth_pts, cell_pts = measured[v]
                entry: dict[str, Any]
                if m.timeout:
                    entry = {
                        "depth": _extrapolate(depth_pts, width),
                        "cells": _extrapolate(cell_pts, width),
                        "timeout": True,
                        "extrapolated": True,
                        "seconds": round(m.seconds, 1),
                    }
                    depth_pts[width], cell_pts[width] = entry["depth"], entry["cells"]
                else:
                    entry = {"depth": m.depth, "cells": m.cells}
                if job.const is not None:
                    entry = {"const": job.const, **entry}
                parts[v] = entry
            if not parts:
                continue
            if list(parts) == [""]:
                entries[str(width)] = parts[""]
            else:
                entries[str(width)] = {
                    "depth": max(p["depth"] for p in parts.values()),
                    "cells": max(p["cells"] for p in parts.values()),
                    "variants": parts,
                }
                if any(p.get("timeout") for p in parts.values()):
                    entries[str(width)]["extrapolated"] = True
        ops[kind] = entries
    return ops


def check_monotone(ops: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Return warnings where depth or cells decrease with width for the arithmetic kinds."""
    warnings = []
    for kind in ("add", "sub", "mul", "divu", "divs", "modu", "mods"):
        entries = ops.get(kind, {})
        ws = sorted(int(w) for w in entries)
        for lo, hi in itertools.pairwise(ws):
            for field in ("depth", "cells"):
                if entries[str(hi)][field] < entries[str(lo)][field]:
                    warnings.append(
                        f"{kind}.{field} decreases: {lo}->{entries[str(lo)][field]}, "
                        f"{hi}->{entries[str(hi)][field]}"
                    )
    return warnings


def format_table(ops: dict[str, dict[str, dict[str, Any]]]) -> str:
    """A text table of depth/cells per kind (rows) and width (columns)."""
    widths = sorted({int(w) for entries in ops.values() for w in entries})
    head = f"{'kind':<11}" + "".join(f"{w:>12}" for w in widths)
    lines = [head, "-" * len(head)]
    for kind, entries in ops.items():
        cols = []
        for w in widths:
            e = entries.get(str(w))
            mark = "*" if e and e.get("extrapolated") else ""
            cols.append(f"{e['depth']}/{e['cells']}{mark}" if e else "-")
        lines.append(f"{kind:<11}" + "".join(f"{c:>12}" for c in cols))
    lines.append("(depth in levels / cells; * = extrapolated after a timeout)")
    return "\n".join(lines)


def run(
    jobs: list[Job],
    n_jobs: int,
    timeout: float | None,
    yosys: str = "yosys",
    progress: Callable[[str], None] | None = None,
) -> dict[Job, Measurement]:
    """Run all jobs on ``n_jobs`` parallel Yosys processes."""
    results: dict[Job, Measurement] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=n_jobs) as pool:
        futures = {
            pool.submit(measure, j.kind, j.width, j.const, timeout=timeout, yosys=yosys): j
            for j in jobs
        }
        for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            job = futures[fut]
            m = fut.result()
            results[job] = m
            if progress is not None:
                what = "TIMEOUT" if m.timeout else f"depth {m.depth:>5} cells {m.cells:>6}"
                var = f" [{job.variant}={job.const}]" if job.variant else ""
                progress(
                    f"[{i:>3}/{len(jobs)}] {job.kind:<10} w={job.width:<3}{var} {what} "
                    f"({m.seconds:.1f} s)"
                )
    return results


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def dumps(doc: dict[str, Any]) -> str:
    """Serialise the library: indented JSON, but one line per (kind, width) entry."""
    sep = (", ", ": ")
    lines = ["{"]
    items = list(doc.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if key == "ops":
            lines.append(f"  {json.dumps(key)}: {{")
            kinds = list(value.items())
            for j, (kind, entries) in enumerate(kinds):
                lines.append(f"    {json.dumps(kind)}: {{")
                ws = list(entries.items())
                for k, (w, e) in enumerate(ws):
                    c = "," if k < len(ws) - 1 else ""
                    lines.append(f"      {json.dumps(w)}: {json.dumps(e, separators=sep)}{c}")
                lines.append("    }" + ("," if j < len(kinds) - 1 else ""))
            lines.append("  }" + comma)
        elif isinstance(value, dict):
            inner = json.dumps(value, indent=2).replace("\n", "\n  ")
            lines.append(f"  {json.dumps(key)}: {inner}{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, separators=sep)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("oplib.json"))
    ap.add_argument("--jobs", type=int, default=2, help="parallel yosys processes (default 2)")
    ap.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per run, 0 = none (default 120)"
    )
    ap.add_argument("--kinds", help="comma-separated subset of kinds (merged into --out)")
    ap.add_argument("--widths", help="comma-separated subset of widths (merged into --out)")
    ap.add_argument("--yosys", default="yosys", help="yosys executable")
    ap.add_argument("--quiet", action="store_true", help="no per-run progress lines")
    args = ap.parse_args(argv)

    if shutil.which(args.yosys) is None:
        print(f"error: {args.yosys} not found", file=sys.stderr)
        return 2
    kinds = list(EXPRESSIONS) if args.kinds is None else args.kinds.split(",")
    unknown = [k for k in kinds if k not in EXPRESSIONS]
    if unknown:
        print(f"error: unknown kinds {unknown}; known: {list(EXPRESSIONS)}", file=sys.stderr)
        return 2
    widths = list(WIDTHS) if args.widths is None else [int(w) for w in args.widths.split(",")]
    partial = args.kinds is not None or args.widths is not None

    jobs = jobs_for(kinds, widths)
    print(
        f"characterising {len(kinds)} kinds x {len(widths)} widths = {len(jobs)} yosys runs "
        f"on {args.jobs} jobs",
        flush=True,
    )
    start = time.monotonic()
    log = None if args.quiet else (lambda s: print(s, flush=True))
    results = run(jobs, args.jobs, args.timeout if args.timeout > 0 else None, args.yosys, log)
    total = time.monotonic() - start
    ops = build_ops(results, kinds, widths)

    doc: dict[str, Any]
    if partial and args.out.exists():
        doc = json.loads(args.out.read_text())
        for kind, entries in ops.items():
            doc["ops"].setdefault(kind, {}).update(entries)
            doc["ops"][kind] = dict(sorted(doc["ops"][kind].items(), key=lambda kv: int(kv[0])))
        doc.setdefault("runtime", {}).setdefault("reruns", []).append(
            {
                "kinds": kinds,
                "widths": widths,
                "runs": len(jobs),
                "seconds": round(total, 1),
                "jobs": args.jobs,
                "timeout_seconds": args.timeout if args.timeout > 0 else None,
                "generated": _now(),
            }
        )
    else:
        slowest = sorted(results.items(), key=lambda jm: jm[1].seconds, reverse=True)[:8]
        doc = {
            "tool": yosys_version(args.yosys),
            "script": YOSYS_SCRIPT,
            "generated": _now(),
            "technology": TECHNOLOGY,
            "constants": {
                base: {"rule": rule, "values": {str(w): const_value(base, w) for w in widths}}
                for base, rule in CONST_VARIANTS.items()
            },
            "runtime": {
                "total_seconds": round(total, 1),
                "jobs": args.jobs,
                "timeout_seconds": args.timeout if args.timeout > 0 else None,
                "slowest": [
                    {"kind": j.kind, "width": j.width, "seconds": round(m.seconds, 1)}
                    | ({"const": j.const} if j.const is not None else {})
                    | ({"timeout": True} if m.timeout else {})
                    for j, m in slowest
                ],
            },
            "ops": ops,
            "free": list(FREE_KINDS),
        }
        if args.out.exists():  # the sequential units are measured by synth/multicycle.py
            old = json.loads(args.out.read_text()).get("multicycle")
            if old is not None:
                doc["multicycle"] = old
    args.out.write_text(dumps(doc))

    print()
    print(format_table(ops))
    for w in check_monotone(doc["ops"]):
        print(f"warning: {w}")
    print(f"\n{len(jobs)} runs in {total:.1f} s on {args.jobs} jobs; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
