"""A seeded sample of the fuzz benchmark (``benchmarks/bench_fuzz.py``) on every push.

200 generated specs through ``aquas check`` (the generator's valid ones of the small size
also through ``synth --no-yosys``), 50 generated C files through ``aquas match`` with two
example specs, and 20 hostile project files through ``aquas run``, which must refuse each
in validation. In-process through the CLI's real error boundary, each command with a
timeout. Every run must end in success or a clean diagnostic: no traceback, no internal
error, no hang, and a location wherever the input is a source (see
``fuzzing.runner.judge``).

One test per generated family. A family that shows a known, reported defect (in a file
this suite's owner does not own) is marked ``xfail(strict=True, raises=KnownDefect)``: the
test still fails normally on any *other* failure in that family, raises ``KnownDefect``
only for runs matching the defect's pattern, and turns into a failure (XPASS) once the
defect is fixed, so the marker must then be removed. docs/reliability.md lists them.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from fuzzing import cfiles, projects, specs
from fuzzing.cases import Case
from fuzzing.runner import EXAMPLE_SPECS, FAILURES, Result, run_case, stages_reached

SEED = 17
N_SPECS, N_C, N_PROJECTS = 200, 50, 20
C_SPECS = [p for p in EXAMPLE_SPECS if p.stem in ("dsp", "kyber")]
# CI runs on one shared core: tighter limits than the benchmark's, still ten times what a
# command on these small inputs takes
SCALE = 0.5


class KnownDefect(Exception):
    """Every failure of a family is one already reported (docs/reliability.md)."""


@dataclass(frozen=True)
class Defect:
    reason: str
    pattern: str  # a run with this verdict and output is the defect, nothing else is

    def matches(self, r: Result) -> bool:
        verdict, _, regex = self.pattern.partition(":")
        return r.verdict == verdict and re.search(regex, r.output) is not None


# (kind, family) -> the defect its sample cases show. Reproducers in docs/reliability.md.
KNOWN: dict[tuple[str, str], Defect] = {}


def _sample(kind: str) -> list[Case]:
    if kind == "spec":
        return [specs.generate(SEED, i) for i in range(N_SPECS)]
    if kind == "c":
        return [cfiles.generate(SEED, i) for i in range(N_C)]
    cases: list[Case] = []
    i = 0
    while len(cases) < N_PROJECTS:  # validation only: leave out the valid, full-flow ones
        case = projects.generate(SEED, i)
        if not case.valid:
            cases.append(case)
        i += 1
    return cases


def _families(kind: str) -> list[object]:
    fams = sorted({c.family for c in _sample(kind)})
    out: list[object] = []
    for f in fams:
        d = KNOWN.get((kind, f))
        marks = [pytest.mark.xfail(strict=True, raises=KnownDefect, reason=d.reason)] if d else []
        out.append(pytest.param(f, marks=marks, id=f))
    return out


def _describe(r: Result, case: Case) -> str:
    src = case.files[case.main][:1500].decode("utf-8", "replace")
    return (
        f"{r.case} ({r.verdict}, exit {r.exit_code}, {r.seconds:.1f} s)\n"
        f"$ aquas {' '.join(r.command)}\n{r.output.strip()[-1500:]}\n"
        f"--- input {case.main} (seed {case.seed}, index {case.index}) ---\n{src}"
    )


def _run_family(
    kind: str, family: str, tmp_path: Path, check: Callable[[Case, Result], None]
) -> None:
    cases = [c for c in _sample(kind) if c.family == family]
    defect = KNOWN.get((kind, family))
    unknown: list[str] = []
    known: list[str] = []
    for case in cases:
        where = tmp_path / case.ident
        spec_list = C_SPECS if kind == "c" else None
        # synthesis only for a quarter of the small valid specs: the sample must stay fast
        small = case.files[case.main].startswith(b"// generated spec, size 1\n")
        synth = case.valid and small and case.index % 4 == 0
        for r in run_case(case, where, specs=spec_list, scale=SCALE, synth=synth):
            check(case, r)
            if r.verdict not in FAILURES:
                continue
            (known if defect and defect.matches(r) else unknown).append(_describe(r, case))
        shutil.rmtree(where, ignore_errors=True)
    assert not unknown, f"{len(unknown)} failing run(s):\n\n" + "\n\n".join(unknown[:3])
    if known:
        assert defect is not None
        raise KnownDefect(f"{len(known)} run(s) show: {defect.reason}\n\n" + known[0])


def _no_check(case: Case, r: Result) -> None:
    pass


@pytest.mark.parametrize("family", _families("spec"))
def test_spec_sample(family: str, tmp_path: Path) -> None:
    _run_family("spec", family, tmp_path, _no_check)


@pytest.mark.parametrize("family", _families("c"))
def test_c_sample(family: str, tmp_path: Path) -> None:
    _run_family("c", family, tmp_path, _no_check)


def _refused_before_stages(case: Case, r: Result) -> None:
    # an invalid project must be refused by validation: exit 2 and no stage ever ran
    ran = stages_reached(Path(r.command[1]).parent)
    assert r.exit_code == 2 and not ran, (
        f"{r.case}: an invalid project was not refused in validation "
        f"(exit {r.exit_code}, stage outputs {ran}):\n{r.output[-800:]}"
    )


@pytest.mark.parametrize("family", _families("project"))
def test_project_sample(family: str, tmp_path: Path) -> None:
    _run_family("project", family, tmp_path, _refused_before_stages)


def test_generators_are_deterministic() -> None:
    """The reproducer of a failure is its seed and index: the same bytes every time."""
    for gen in (specs.generate, cfiles.generate, projects.generate):
        for i in (0, 7, 123):
            assert gen(SEED, i) == gen(SEED, i)
    assert specs.generate(SEED, 0) != specs.generate(SEED + 1, 0)


def test_valid_specs_mostly_pass_check(tmp_path: Path) -> None:
    """The valid generator must reach synthesis: at least 90% of its specs pass check."""
    from aquas.diagnostics import AquasError
    from aquas.spec.frontend import lower_spec

    valid = [c for c in _sample("spec")[:100] if c.valid]
    rejected = []
    for c in valid:
        try:
            lower_spec(c.files[c.main].decode(), "fuzz.isax")
        except AquasError as e:
            rejected.append(f"{c.ident}: {e.render()}")
    assert len(valid) >= 50
    assert len(rejected) <= len(valid) // 10, "\n".join(rejected[:5])
