"""Matcher quality and speed on the held-out corpus, and on a large generated application.

Prints, per ISAX, how many semantically equal variants (tests/match_corpus/<isax>/) are
found (matched, or found but rejected only as not profitable), false matches on the near
misses (tests/match_corpus/negative/), and the matching time per kernel file (median and
max).  ``--large`` also builds a 1000+ line application of 20+ functions from the corpus
kernels and times one ``match`` over it (floor: < 10 s; per kernel file: median < 1 s);
``--profile`` also profiles that run and prints where the time goes.

Usage: .venv/bin/python benchmarks/bench_match.py [--large [--profile]] [--explain]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from match_corpus.corpus import ISAX_SPECS, corpus_files, same_computation  # noqa: E402

from aquas.egraph.driver import load_patterns, match_file  # noqa: E402
from aquas.egraph.matcher import PROFIT, TARGET, is_part  # noqa: E402

# proven matches withheld only for the cost or because the default core (VexRiscv) does not
# route the ISAX's opcode are found: identification is what this measures
PROVEN = (PROFIT, TARGET)


def found(res, isax: str) -> bool:  # type: ignore[no-untyped-def]
    return any(
        d.isax in same_computation(isax) and (d.status == "matched" or d.reason in PROVEN)
        for d in res.decisions
    )


def _computed(d) -> bool:  # type: ignore[no-untyped-def]
    if is_part(d):  # ISAXs for parts of a statement's value, the rest in software
        return True
    regs = d.binding.regs.values() if d.binding is not None else ()
    plain = [t.args[0] if t.op in ("zext", "sext") else t for t in regs]
    return any(t.op not in ("var", "load") for t in plain)


def run_corpus(console: Console, explain: bool) -> tuple[float, int, list[float]]:
    pats = {spec: load_patterns(ROOT / spec) for spec in sorted(set(ISAX_SPECS.values()))}
    per: dict[str, list[bool]] = {}
    false: list[str] = []
    computed: list[str] = []
    guarded: list[str] = []
    times: list[float] = []
    real: list[bool] = []  # realistic positives found
    real_false: list[str] = []
    for cf in corpus_files():
        spec = ISAX_SPECS[cf.like]
        t0 = time.perf_counter()
        res = match_file(cf.path, ROOT / spec, patterns=pats[spec])
        times.append(time.perf_counter() - t0)
        if cf.positive and cf.isax is not None:
            ok = found(res, cf.isax)
            per.setdefault(cf.isax, []).append(ok)
            if cf.realistic:
                real.append(ok)
            if explain and not ok:
                for d in res.decisions:
                    if d.isax == cf.isax:
                        console.print(f"  {cf.name}:{d.line}: {d.reason}: {d.detail}", markup=False)
        else:
            hits = [d for d in res.decisions if d.status == "matched" or d.reason == TARGET]
            # a register ISAX on a computed operand (modmul_q(a & 0xfff, b & 0xfff)) is a
            # correct rewrite, not the near miss taken for the ISAX (tests/test_match.py)
            wrong = [d for d in hits if d.function == "kernel" and not _computed(d)]
            # nor is the ISAX of an alias near miss under a run-time alias guard: it runs
            # only on separate buffers, the original code on overlapping ones
            wrong = [d for d in wrong if not (cf.alias and d.binding and d.binding.guard)]
            guarded.extend(f"{cf.name}" for d in hits if cf.alias and d.binding and d.binding.guard)
            computed.extend(
                f"{cf.name}:{d.function}" for d in hits if d not in wrong and cf.name not in guarded
            )
            if wrong:
                false.append(f"{cf.name} -> {', '.join(d.isax for d in wrong)}")
                if cf.realistic:
                    real_false.append(cf.name)
    table = Table(title="Matcher on the held-out corpus")
    for c in ("isax", "variants", "found", "rate"):
        table.add_column(c)
    total = hit = 0
    for isax, oks in sorted(per.items()):
        table.add_row(isax, str(len(oks)), str(sum(oks)), f"{sum(oks) / len(oks):.0%}")
        total += len(oks)
        hit += sum(oks)
    table.add_row("all", str(total), str(hit), f"{hit / total:.1%}")
    console.print(table)
    negatives = sum(1 for cf in corpus_files() if not cf.positive)
    console.print(f"near misses: {negatives}, false matches: {len(false)} {false}")
    console.print(f"alias near misses rewritten under a run-time alias guard: {guarded}")
    real_neg = sum(1 for cf in corpus_files() if not cf.positive and cf.realistic)
    console.print(
        f"realistic section: {sum(real)} of {len(real)} found, "
        f"{len(real_false)} false matches on {real_neg} realistic near misses"
    )
    console.print(
        f"near misses with a correct match on computed operands or in a helper: {computed}"
    )
    console.print(
        f"time per kernel file: median {statistics.median(times):.2f} s, max {max(times):.2f} s"
    )
    return hit / total, len(false), times


def large_app(out: Path) -> tuple[Path, int, int]:
    """Concatenate corpus kernels (renamed) into one application file."""
    parts = ["#include <stdint.h>\n"]
    nfun = 0
    for k, cf in enumerate(f for f in corpus_files() if f.positive and f.like != "vdot16"):
        text = cf.path.read_text()
        text = re.sub(r"^#include[^\n]*\n", "", text, flags=re.M)
        text = re.sub(r"^#define\s+(\w+)", lambda m: f"#define {m.group(1)}", text, flags=re.M)
        parts.append(text.replace("kernel(", f"kernel_{k}("))
        nfun += 1
    out.write_text("\n".join(parts))
    return out, nfun, out.read_text().count("\n")


def run_large(console: Console, profile: bool = False) -> None:
    with tempfile.TemporaryDirectory() as d:
        for spec in ("examples/pointcloud/pointcloud.isax",):
            app, nfun, lines = large_app(Path(d) / "app.c")
            pats = load_patterns(ROOT / spec)
            prof = cProfile.Profile() if profile else None
            t0 = time.perf_counter()
            if prof is not None:
                prof.enable()
            res = match_file(app, ROOT / spec, patterns=pats)
            if prof is not None:
                prof.disable()
            dt = time.perf_counter() - t0
            console.print(
                f"large application: {lines} lines, {nfun} functions, {len(res.matched)} "
                f"matches ({spec}): {dt:.2f} s (floor < 10 s)"
                + (" (profiled: slower than unprofiled)" if profile else "")
            )
            if prof is not None:
                out = io.StringIO()
                pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(30)
                console.print(out.getvalue(), markup=False, highlight=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--explain", action="store_true")
    ap.add_argument("--profile", action="store_true", help="profile the --large run")
    args = ap.parse_args()
    console = Console()
    run_corpus(console, args.explain)
    if args.large:
        run_large(console, args.profile)


if __name__ == "__main__":
    main()
