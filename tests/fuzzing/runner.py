"""Running generated cases through the real CLI and judging what the user would see.

A case becomes one or more commands (``check`` then ``synth --no-yosys`` for a spec;
``match`` with each spec for a C file; ``run`` for a project). Each command runs either
in-process through click's CliRunner, which goes through the CLI's real error boundary
(``AquasGroup.invoke``), or as a real subprocess; either way with a timeout. The verdict
of one command is one of :data:`VERDICTS`.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from fuzzing.cases import Case

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SPECS = sorted((ROOT / "examples").glob("*/*.isax"))

#: ok: exit 0 with nothing unclean; diagnostic: exit 2 with located diagnostics;
#: unlocated: a diagnostic without file:line:col where the input has a source (or without
#: "error:"); internal: exit 1 / "internal error"; traceback: a Python traceback in the
#: output; hang: the timeout passed; other: any other exit status.
VERDICTS = ("ok", "diagnostic", "unlocated", "internal", "traceback", "hang", "other")
FAILURES = frozenset({"unlocated", "internal", "traceback", "hang", "other"})

# Per-command limits (seconds). check and validation are fast; synthesis of a small unit
# and one match take about a second, so these only catch inputs that run away.
TIMEOUTS = {
    "check": 20.0,
    "synth": 60.0,
    "synth-cosim": 600.0,  # a Verilator build of the unit, then the cases
    "match": 30.0,
    "run": 30.0,
    "run-valid": 600.0,
}
#: random co-simulation cases per ISAX of a spec synthesized with ``cosim_every``
COSIM_CASES = 20

_HEADER = re.compile(
    r"^(?:(?P<file>[^\s:][^:\n]*?)(?::(?P<line>\d+):(?P<col>\d+))?: )?error: ", re.MULTILINE
)


@dataclass
class Result:
    case: str
    kind: str
    family: str
    command: list[str]
    exit_code: int | None
    output: str
    seconds: float
    verdict: str
    mode: str  # "inprocess" | "subprocess"
    lint_warnings: int = 0


class FuzzTimeout(BaseException):
    """Raised by the interval timer inside a command that ran past its limit."""


@contextmanager
def soft_timeout(seconds: float) -> Iterator[list[bool]]:
    """Interrupts the calling (main) thread after ``seconds``; ``fired[0]`` says if it did."""
    fired = [False]

    def handler(signum: int, frame: FrameType | None) -> None:
        fired[0] = True
        raise FuzzTimeout(f"no answer after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def materialize(case: Case, where: Path) -> Path:
    """Writes the case's files (and symlinks) under ``where``; returns the main input."""
    where.mkdir(parents=True, exist_ok=True)
    for rel, data in case.files.items():
        p = where / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    for rel, target in case.symlinks.items():
        p = where / rel
        if not p.is_symlink():
            p.symlink_to(target)
    return where / case.main


def commands(
    case: Case,
    main: Path,
    specs: list[Path] | None = None,
    lint_every: int = 1,
    cosim_every: int = 0,
) -> list[tuple[str, list[str]]]:
    """(limit key, argv) of every command the case runs, in order.

    A spec's ``synth`` only runs when ``check`` accepted it (the caller decides), with
    Verilator's lint on every ``lint_every``-th spec, and on every ``cosim_every``-th spec
    (0: none) with a random co-simulation of the unit against the golden interpreter
    (:data:`COSIM_CASES` per ISAX; a mismatch is an internal error, :func:`judge`); a C
    file is matched against every spec in ``specs`` (default: every example spec).
    """
    out = main.parent / "out"
    if case.kind == "spec":
        clock = "50" if case.index % 3 == 0 else "10"  # a slow clock lets wide dividers fit
        synth = ["synth", "--no-yosys", "--clock-ns", clock, "-o", str(out), str(main)]
        if case.index % lint_every:
            synth.insert(2, "--no-lint")
        key = "synth"
        if cosim_every and case.index % cosim_every == 0:
            synth[2:2] = ["--cosim", str(COSIM_CASES)]
            key = "synth-cosim"
        return [("check", ["check", str(main)]), (key, synth)]
    if case.kind == "c":
        cmds = []
        for k, spec in enumerate(specs if specs is not None else EXAMPLE_SPECS):
            argv = ["match", str(main), "--ext", str(spec)]
            if (case.index + k) % 4 == 0:
                argv += ["--explain", "-o", str(out / f"{spec.stem}.c")]
            cmds.append(("match", argv))
        return cmds
    argv = ["run", str(main)]
    if case.index % 2:  # the other half uses the default build/<name> under the case dir
        argv += ["-o", str(out)]
    return [("run-valid" if case.valid else "run", argv)]


def run_inprocess(argv: list[str], cwd: Path, timeout: float) -> tuple[int | None, str, float]:
    """Exit status (None on timeout), stdout + stderr, seconds: through the real boundary."""
    from click.testing import CliRunner

    from aquas.cli import main

    old = Path.cwd()
    os.chdir(cwd)
    t0 = time.monotonic()
    try:
        with soft_timeout(timeout) as fired:
            res = CliRunner().invoke(main, argv, catch_exceptions=True)
        code: int | None = None if fired[0] else res.exit_code
        text = res.stdout + res.stderr
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            # escaped the boundary: CliRunner caught it, a real process would print a traceback
            text += f"\nTraceback (most recent call last):\n  escaped the CLI boundary: {res.exception!r}\n"
    except FuzzTimeout:
        code, text = None, ""
    finally:
        os.chdir(old)
    return code, text, time.monotonic() - t0


def run_subprocess(argv: list[str], cwd: Path, timeout: float) -> tuple[int | None, str, float]:
    """The same through a fresh ``python -m aquas.cli`` process (killed with its group)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "aquas.cli", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        data, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        data, _ = proc.communicate()
        code = None
    return code, data.decode("utf-8", "replace"), time.monotonic() - t0


def judge(kind: str, code: int | None, text: str) -> str:
    """The verdict of one command's exit status and output (see :data:`VERDICTS`)."""
    if code is None:
        return "hang"
    if "Traceback (most recent call last)" in text:
        return "traceback"
    if code == 1 or "internal error" in text:
        return "internal"
    if "error: co-simulation" in text or "error: Verilator build" in text:
        return "internal"  # the unit disagrees with the golden interpreter: our bug
    headers = list(_HEADER.finditer(text))
    for h in headers:
        if not located(kind, h, text):
            return "unlocated"
    if code == 0:
        return "ok"
    if code == 2:
        return "diagnostic" if headers else "unlocated"
    return "other"


def located(kind: str, h: re.Match[str], text: str) -> bool:
    """Whether one diagnostic header carries the location its input allows.

    Specs and C files are sources with lines: every error must be ``file:line:col``. A
    project file's keys are validated after TOML parsing, which keeps no positions, so a
    key error must name the file; a syntax or encoding error must have line and column.
    """
    if h["file"] is None:
        return False
    if kind != "project":
        return h["line"] is not None
    rest = text[h.end() : text.find("\n", h.end()) if "\n" in text[h.end() :] else len(text)]
    return not (("TOML" in rest or "UTF-8" in rest) and h["line"] is None)


STAGES = frozenset({"synth", "cosim", "measure", "match", "build", "sim", "area"})


def stages_reached(where: Path) -> list[str]:
    """Stage directories (or their temporaries) that ``aquas run`` created under ``where``."""
    return sorted(
        str(p.relative_to(where))
        for p in where.rglob("*")
        if p.is_dir() and p.name.lstrip(".").removesuffix(".tmp") in STAGES
    )


def lint_warnings(text: str) -> int:
    m = re.search(r"lint: (\d+) warning", text)
    return int(m.group(1)) if m else 0


def run_case(
    case: Case,
    where: Path,
    *,
    subprocess_mode: bool = False,
    specs: list[Path] | None = None,
    scale: float = 1.0,
    lint_every: int = 1,
    synth: bool = True,
    cosim_every: int = 0,
) -> list[Result]:
    """Every command of ``case`` (materialized under ``where``) with its verdict;
    ``synth=False`` stops a spec after ``check``."""
    main = materialize(case, where)
    results: list[Result] = []
    runner = run_subprocess if subprocess_mode else run_inprocess
    for key, argv in commands(case, main, specs, lint_every, cosim_every):
        if key.startswith("synth") and (not synth or (results and results[-1].exit_code != 0)):
            break  # only what check accepts goes on to synthesis
        code, text, secs = runner(argv, where, TIMEOUTS[key] * scale)
        verdict = judge(case.kind, code, text)
        if case.kind == "project" and not case.valid and verdict in ("ok", "diagnostic"):
            ran = stages_reached(where)
            if code == 0 or ran:  # an invalid project must be refused before any stage
                verdict = "other"
                text += f"\n[fuzz] an invalid project was not refused in validation: {ran}\n"
        results.append(
            Result(
                case.ident,
                case.kind,
                case.family,
                argv,
                code,
                text,
                secs,
                verdict,
                "subprocess" if subprocess_mode else "inprocess",
                lint_warnings(text),
            )
        )
        if verdict == "hang" and not subprocess_mode:
            break  # the process state after an interrupted command is not trusted
    return results


__all__ = [
    "COSIM_CASES",
    "EXAMPLE_SPECS",
    "FAILURES",
    "TIMEOUTS",
    "VERDICTS",
    "FuzzTimeout",
    "Result",
    "commands",
    "judge",
    "materialize",
    "run_case",
    "run_inprocess",
    "run_subprocess",
    "soft_timeout",
    "stages_reached",
]
