"""Fuzzing at scale: generated specs, C applications and hostile project files through the CLI.

Every generated spec goes through ``aquas check`` and, when check accepts it, through
``aquas synth --no-yosys`` (with ``--cosim-every N``, every N-th spec's unit is also
co-simulated against the golden interpreter: a differential test of synthesis on specs
nobody shaped; a mismatch counts as internal); every generated C file through ``aquas match`` with every
example spec; every project file through ``aquas run``. Inputs come from the deterministic
generators in ``tests/fuzzing/`` (case ``i`` of stream ``--seed`` is the same everywhere).

Commands run in-process through click's CliRunner, which goes through the CLI's real error
boundary, in worker processes (``--jobs``); every ``--subprocess-every``-th input instead
runs through real ``python -m aquas.cli`` processes. Each command has a timeout
(``tests/fuzzing/runner.py: TIMEOUTS``, scaled by ``--timeout-scale``); a worker that does
not answer is killed with its process group and its input counted as a hang.

Prints one row per command kind: inputs, runs, ok, clean diagnostics, diagnostics without
the location their input allows, internal errors, tracebacks, hangs, other exit statuses,
and the wall time; then every failure family with one reproducer. The guarantee the issue
asks for is 0 in the unlocated, internal, traceback, hang and other columns.

Usage: nice .venv/bin/python benchmarks/bench_fuzz.py [--seed S] [--specs N] [--c N]
       [--projects N] [--jobs J] [--cosim-every N] [--save-failures DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import multiprocessing as mp
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fuzzing import cfiles, projects, specs  # noqa: E402
from fuzzing.cases import Case  # noqa: E402
from fuzzing.runner import (  # noqa: E402
    EXAMPLE_SPECS,
    FAILURES,
    TIMEOUTS,
    Result,
    commands,
    materialize,
    run_case,
)

GENERATORS = {"spec": specs.generate, "c": cfiles.generate, "project": projects.generate}
ROWS = (("spec", "check"), ("spec", "synth"), ("c", "match"), ("project", "run"))
COLUMNS = ("ok", "diagnostic", "unlocated", "internal", "traceback", "hang", "other")


def case_budget(case: Case, scale: float, cosim_every: int) -> float:
    """Seconds after which the parent kills a worker on this case (its commands' limits)."""
    main = Path("/CASE") / case.main
    keys = (k for k, _ in commands(case, main, cosim_every=cosim_every))
    return sum(TIMEOUTS[k] for k in keys) * scale + 30.0


def dedup_key(case: Case, lint_every: int, cosim_every: int) -> str:
    """Identical inputs run with identical commands give identical answers (the CLI is
    deterministic): the hostile families draw from small sets of variants, so most of
    their cases repeat one another, and a runaway variant is run once, not hundreds of
    times."""
    h = hashlib.sha256(case.kind.encode())
    for rel in sorted(case.files):
        h.update(rel.encode() + b"\0" + case.files[rel] + b"\0")
    h.update(repr(sorted(case.symlinks.items())).encode())
    cmds = commands(case, Path("/CASE") / case.main, lint_every=lint_every, cosim_every=cosim_every)
    h.update(repr(cmds).encode())
    return h.hexdigest()


def worker(
    conn: Connection,
    seed: int,
    workdir: str,
    scale: float,
    mem_gb: float,
    lint_every: int,
    cosim_every: int,
) -> None:
    """Runs the cases the parent sends; one answer (a list of results) per case."""
    os.setpgrp()  # so the parent can kill the worker with the tools it started
    if mem_gb > 0:  # a hostile input must not take the shared machine down with it
        limit = int(mem_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import aquas.cli  # noqa: F401  (import once, not per case)

    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if task is None:
            return
        kind, index, sub = task
        case = GENERATORS[kind](seed, index)
        where = Path(workdir) / case.ident
        try:
            results = run_case(
                case,
                where,
                subprocess_mode=sub,
                scale=scale,
                lint_every=lint_every,
                cosim_every=cosim_every,
            )
        except BaseException as e:  # the harness itself failed: report it as "other"
            results = [
                Result(case.ident, kind, case.family, [], -1, f"harness: {e!r}", 0.0, "other", "?")
            ]
        shutil.rmtree(where, ignore_errors=True)
        try:
            conn.send([asdict(r) for r in results])
        except OSError:  # the parent is gone
            return
        if any(r.verdict == "hang" for r in results):
            return  # an interrupted command may leave the process in any state


class Pool:
    """``jobs`` worker processes, each on one case at a time, killed when a case overruns."""

    def __init__(
        self,
        jobs: int,
        seed: int,
        workdir: Path,
        scale: float,
        mem_gb: float,
        lint_every: int,
        cosim_every: int = 0,
    ):
        self.args = (seed, str(workdir), scale, mem_gb, lint_every, cosim_every)
        self.lint_every = lint_every
        self.cosim_every = cosim_every
        self.seen: dict[str, list[Result]] = {}  # dedup key -> the results of its first run
        self.waiting: dict[str, list[Case]] = {}  # dedup key -> repeats of a running case
        self.reused = 0
        self.scale = scale
        self.seed = seed
        self.slots: list[dict[str, Any]] = [self._spawn() for _ in range(jobs)]

    def _spawn(self) -> dict[str, Any]:
        parent, child = mp.Pipe()
        proc = mp.get_context("fork").Process(target=worker, args=(child, *self.args), daemon=True)
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "task": None, "deadline": 0.0}

    def run(self, tasks: list[tuple[str, int, bool]], on_result: Any) -> None:
        pending = list(reversed(tasks))
        while pending or any(s["task"] for s in self.slots):
            for i, s in enumerate(self.slots):
                if s["task"] is None and pending:
                    if not s["proc"].is_alive():
                        self.slots[i] = s = self._spawn()
                    task = pending.pop()
                    case = GENERATORS[task[0]](self.seed, task[1])
                    key = "" if task[2] else dedup_key(case, self.lint_every, self.cosim_every)
                    if key in self.seen:
                        on_result(self._repeat(case, self.seen[key]))
                        continue
                    if key in self.waiting:
                        self.waiting[key].append(case)
                        continue
                    if key:
                        self.waiting[key] = []
                    s["task"], s["case"], s["key"] = task, case, key
                    budget = case_budget(case, self.scale, self.cosim_every)
                    s["deadline"] = time.monotonic() + budget
                    s["conn"].send(task)
            busy = [s for s in self.slots if s["task"]]
            ready = wait([s["conn"] for s in busy], timeout=1.0)
            now = time.monotonic()
            for i, s in enumerate(self.slots):
                if not s["task"]:
                    continue
                if s["conn"] in ready:
                    try:
                        got = [Result(**d) for d in s["conn"].recv()]
                    except (EOFError, OSError):  # the worker died without answering (a crash)
                        got = [self._lost(s, "the worker process died", "other")]
                    self._finish(s, got, on_result)
                    if any(r.verdict in ("hang", "other") for r in got):
                        self._kill(s)  # it exits after a hang: never send to a closing pipe
                        self.slots[i] = self._spawn()
                elif now > s["deadline"] or not s["proc"].is_alive():
                    why = "timeout" if s["proc"].is_alive() else "the worker process died"
                    self._kill(s)
                    lost = [self._lost(s, why, "hang" if why == "timeout" else "other")]
                    self._finish(s, lost, on_result)
                    self.slots[i] = self._spawn()

    def _finish(self, s: dict[str, Any], results: list[Result], on_result: Any) -> None:
        on_result(results)
        key = s["key"]
        if key:
            self.seen[key] = results
            for case in self.waiting.pop(key, []):
                on_result(self._repeat(case, results))
        s["task"] = None

    def _repeat(self, case: Case, results: list[Result]) -> list[Result]:
        self.reused += 1
        return [
            Result(
                case.ident,
                r.kind,
                case.family,
                r.command,
                r.exit_code,
                r.output,
                0.0,
                r.verdict,
                "repeat",
                r.lint_warnings,
            )
            for r in results
        ]

    def _lost(self, s: dict[str, Any], why: str, verdict: str) -> Result:
        case: Case = s["case"]
        return Result(case.ident, case.kind, case.family, ["(whole case)"], None, why, 0.0,
                      verdict, "subprocess" if s["task"][2] else "inprocess")  # fmt: skip

    def _kill(self, s: dict[str, Any]) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(s["proc"].pid, signal.SIGKILL)
        s["proc"].join(5)

    def close(self) -> None:
        for s in self.slots:
            if s["proc"].is_alive():
                s["conn"].send(None)
                s["proc"].join(10)
                if s["proc"].is_alive():
                    self._kill(s)


def row_of(r: Result) -> tuple[str, str]:
    if r.kind == "spec":
        # a whole spec case lost to a killed worker counts as synth: check has a shorter
        # limit and its soft timeout fires in Python code, synthesis is what runs away
        return ("spec", "check" if r.command and r.command[0] == "check" else "synth")
    return (r.kind, "match" if r.kind == "c" else "run")


def first_error(text: str) -> str:
    for line in text.splitlines():
        if "error" in line or "Traceback" in line or "timeout" in line:
            return line.strip()[:200]
    return text.strip().splitlines()[-1][:200] if text.strip() else "(no output)"


def save_failure(where: Path, seed: int, r: Result) -> None:
    kind, _, index = r.case.split("-")[:3]
    case = GENERATORS[kind](seed, int(index))
    d = where / r.case
    if not d.exists():
        materialize(case, d)
    with (d / "output.txt").open("a") as f:
        f.write(
            f"$ aquas {' '.join(r.command)}\n[{r.verdict}, exit {r.exit_code}, {r.seconds:.1f} s, {r.mode}]\n"
        )
        f.write(r.output + "\n\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--specs", type=int, default=10_000, help="generated specs (default 10000)")
    ap.add_argument("--c", type=int, default=1_000, help="generated C files (default 1000)")
    ap.add_argument("--projects", type=int, default=100, help="project files (default 100)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument(
        "--subprocess-every", type=int, default=100,
        help="run every N-th spec/C input (every N/10-th project) in real subprocesses",
    )  # fmt: skip
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    ap.add_argument(
        "--lint-every", type=int, default=1,
        help="run verilator lint in synth for every N-th spec (default 1: all)",
    )  # fmt: skip
    ap.add_argument(
        "--cosim-every", type=int, default=0,
        help="co-simulate the unit of every N-th spec against the golden interpreter "
        "(default 0: none); a mismatch counts as internal",
    )  # fmt: skip
    ap.add_argument("--mem-limit-gb", type=float, default=8.0, help="per worker (0: none)")
    ap.add_argument("--save-failures", type=Path, default=None, metavar="DIR")
    ap.add_argument("--json", type=Path, default=None, metavar="FILE")
    args = ap.parse_args()
    if min(args.jobs, args.subprocess_every, args.lint_every) < 1:
        ap.error("--jobs, --subprocess-every and --lint-every must be at least 1")
    # SIGINT or SIGTERM: stop and print the figures so far (a shell may have started us
    # with SIGINT ignored, as it does for background jobs)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)

    every = {"spec": args.subprocess_every, "c": args.subprocess_every}
    every["project"] = max(1, args.subprocess_every // 10)
    per_kind = {"spec": args.specs, "c": args.c, "project": args.projects}
    queues = {
        k: [(k, i, i % every[k] == every[k] - 1) for i in range(n)] for k, n in per_kind.items()
    }
    # interleave the kinds, so a long tail of one kind does not idle a worker
    tasks: list[tuple[str, int, bool]] = []
    longest = max(per_kind.values(), default=0)
    for i in range(longest):
        for k in ("project", "c", "spec"):
            if i < len(queues[k]):
                tasks.append(queues[k][i])

    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    seconds: dict[tuple[str, str], float] = defaultdict(float)
    inputs: dict[tuple[str, str], set[str]] = defaultdict(set)
    modes: Counter[str] = Counter()
    lint = Counter[str]()
    failures: dict[tuple[str, str, str], list[Result]] = defaultdict(list)
    done = [0]
    t0 = time.monotonic()
    last = [t0]

    def on_result(results: list[Result]) -> None:
        done[0] += 1
        for r in results:
            row = row_of(r)
            counts[row][r.verdict] += 1
            seconds[row] += r.seconds
            inputs[row].add(r.case)
            modes[r.mode] += 1
            if r.lint_warnings:
                lint[r.family] += 1
            if r.verdict in FAILURES:
                failures[(r.kind, r.family, r.verdict)].append(r)
                if args.save_failures:
                    save_failure(args.save_failures, args.seed, r)
        if time.monotonic() - last[0] > 30:
            last[0] = time.monotonic()
            bad = sum(len(v) for v in failures.values())
            print(f"  {done[0]}/{len(tasks)} inputs, {bad} failing runs, "
                  f"{time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)  # fmt: skip

    with tempfile.TemporaryDirectory(prefix="aquas-fuzz-") as tmp:
        pool = Pool(
            args.jobs,
            args.seed,
            Path(tmp),
            args.timeout_scale,
            args.mem_limit_gb,
            args.lint_every,
            args.cosim_every,
        )
        partial = False
        try:
            pool.run(tasks, on_result)
        except KeyboardInterrupt:  # Ctrl-C / SIGINT: report what has run so far
            partial = True
        finally:
            pool.close()
    wall = time.monotonic() - t0
    if partial:
        print(f"\nINTERRUPTED: partial figures, {done[0]} of {len(tasks)} inputs ran")

    head = ("command", "inputs", "runs", *COLUMNS, "cmd s")
    print(f"\nfuzz benchmark: seed {args.seed}, {args.jobs} job(s), wall {wall:.0f} s, "
          f"{modes['inprocess']} in-process and {modes['subprocess']} subprocess runs, "
          f"{modes['repeat']} runs of repeated inputs answered by their first run "
          f"({pool.reused} inputs); lint on every {args.lint_every}. spec; "
          f"co-simulation on every {args.cosim_every or 'no'}. spec; "
          f"C files matched with {len(EXAMPLE_SPECS)} example specs")  # fmt: skip
    print(" | ".join(f"{h:>10}" for h in head))
    labels = {("spec", "check"): "spec check", ("spec", "synth"): "spec synth",
              ("c", "match"): "C match", ("project", "run"): "project run"}  # fmt: skip
    doc: dict[str, Any] = {"seed": args.seed, "jobs": args.jobs, "wall_seconds": round(wall, 1)}
    for row in ROWS:
        c = counts[row]
        cells = [labels[row], len(inputs[row]), sum(c.values()), *(c[k] for k in COLUMNS)]
        print(" | ".join(f"{x:>10}" for x in [*cells, f"{seconds[row]:.0f}"]))
        doc[labels[row]] = {"inputs": len(inputs[row]), "runs": sum(c.values()), **dict(c)}
    if lint:
        print(f"\nsynth runs with verilator lint warnings, by family: {dict(lint)}")
    if failures:
        print("\nfailures (kind, family, verdict: count; first error; one reproducer):")
        for (kind, family, verdict), rs in sorted(failures.items()):
            r = rs[0]
            print(f"  {kind} {family} {verdict}: {len(rs)}; {first_error(r.output)}")
            print(f"      aquas {' '.join(r.command)}   [{r.case}, seed {args.seed}]")
    doc["failures"] = [
        {"kind": k, "family": f, "verdict": v, "count": len(rs), "example": rs[0].case,
         "error": first_error(rs[0].output)}
        for (k, f, v), rs in sorted(failures.items())
    ]  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
