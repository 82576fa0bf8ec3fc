"""``aquas run``: one project from spec to measured speedup, stage by stage, with caching.

Data flow (each stage writes into its own directory under the output directory)::

    spec ──reencode──> the extension with every ISAX on an opcode the target's core routes
                       (aquas.reencode; every stage below sees this one module, and the
                       report's "Encoding" section shows the map)
    spec ──synth──> unit Verilog (interface plans chosen by the memory-interface model on the
              │         project's target), per-ISAX latency reports with the model's
              │         predicted cycles, lint, Yosys area/depth of the unit
              ├─cosim──> the unit against the golden interpreter on random cases
              └─measure──> cycles per ISAX call measured in RTL simulation of the unit behind
                           the SoC's memory controller with the target's parameters
                           (aquas.model.measure), to set beside the prediction
    sources + spec ──match──> rewritten sources (only matched regions replaced), aquas_isax.h,
                              the match table
    sources / rewritten sources ──build──> baseline ELF, ISAX ELF (the project's RISC-V runtime)
    unit + ELFs ──sim──> cycles, regions and output of both programs on the reference SoC
                         (Verilator; one SoC binary with the unit attached -- the baseline
                         never issues a custom instruction, so the idle unit cannot change
                         its timing); outputs must be identical or the run fails
    core ──area──> Yosys area and logic depth of the core, the same method as the unit
    everything ──report──> report.json, report.md, report.html (plots)

Caching: every stage has a key -- a hash of its inputs' contents, its options and the
sources of aquas itself -- stored in ``<stage>/stage.json``.  A stage whose key is
unchanged and whose outputs exist is skipped.  A stage runs in a temporary directory that
replaces the old one only when it succeeded, so an interrupted or failed run never leaves
a half-written stage behind.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from aquas.diagnostics import AquasError
from aquas.outdir import OutputDir, write_atomic
from aquas.project import Project
from aquas.reencode import EncodingMap, spec_for_target
from aquas.target import Target, load_target

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

STAGES = ("synth", "cosim", "measure", "match", "build", "sim", "area")

#: calls per ISAX the measure stage times (random operands; the mean is reported)
MEASURE_CALLS = 8
KEPT_CALLS = 4
"""Repeated calls measured per ISAX with resident scratchpads (their claims kept)."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str:
    return _sha(path.read_bytes())


_TOOL_DIGEST: str | None = None


def tool_digest() -> str:
    """A hash of aquas' own sources and templates: a new version invalidates every stage."""
    global _TOOL_DIGEST
    if _TOOL_DIGEST is None:
        import importlib

        # The packages' own folders, wherever they are: installed, aquas/ holds the rest;
        # in the checkout (editable), synth/, egraph/ ... are folders of their own.
        files: dict[Path, str] = {}
        for name in (
            "aquas",
            *(f"aquas.{s}" for s in ("synth", "egraph", "dialects", "rtl_templates")),
        ):
            for root in importlib.import_module(name).__path__:
                for f in Path(root).rglob("*"):
                    if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                        files.setdefault(f.resolve(), f"{name}:{f.relative_to(root)}")
        h = hashlib.sha256()
        for rel, f in sorted((rel, f) for f, rel in files.items()):
            h.update(rel.encode())
            h.update(f.read_bytes())
        _TOOL_DIGEST = h.hexdigest()
    return _TOOL_DIGEST


@dataclass
class StageLog:
    name: str
    cached: bool
    seconds: float


@dataclass
class RunResult:
    out_dir: Path
    doc: dict[str, Any]
    stages: list[StageLog] = field(default_factory=list)
    seconds: float = 0.0


class Flow:
    """Runs the stages of one project (see the module docstring)."""

    def __init__(
        self,
        project: Project,
        out_dir: Path,
        *,
        jobs: int = 1,
        force: bool = False,
        console: Console | None = None,
    ):
        self.p = project
        self.out = Path(os.path.abspath(out_dir))
        self.guard: OutputDir | None = None
        self.jobs = max(1, jobs)
        self.force = force
        self.console = console or Console(stderr=True, highlight=False)
        self.log: list[StageLog] = []
        self.platform = load_target(project.platform, soc=project.soc)
        self.mem_latency = self.platform.isax_mem_latency
        self.synth_reports: dict[str, Any] | None = None  # the synth stage's, once it ran
        self._encoding: EncodingMap | None = None
        self._clock: Any = None  # aquas.area.Clock, resolved at the start of run()

    # -- stage machinery ----------------------------------------------------------------

    def stage(
        self,
        name: str,
        inputs: dict[str, Any],
        body: Callable[[Path], dict[str, Any]],
        *,
        spinner: bool = True,
    ) -> dict[str, Any]:
        n = STAGES.index(name) + 1
        key = _sha(json.dumps({"inputs": inputs, "tool": tool_digest()}, sort_keys=True).encode())
        final = self.out / name
        record = final / "stage.json"
        rec = _stage_record(record)
        if (
            not self.force
            and rec is not None
            and rec["key"] == key
            and all((final / f).exists() for f in rec["files"])
        ):
            self.console.print(f"[{n}/{len(STAGES)}] {name}: unchanged, skipped", markup=False)
            self.log.append(StageLog(name, True, 0.0))
            return dict(rec["result"])
        guard = self.guard
        assert guard is not None, "stages run inside Flow.run"
        tmp = guard.temporary(name)
        t0 = time.perf_counter()
        status: Any = contextlib.nullcontext()
        if spinner:
            status = self.console.status(f"[{n}/{len(STAGES)}] {name} ...")
        else:
            self.console.print(f"[{n}/{len(STAGES)}] {name} ...", markup=False)
        with status:
            try:
                result = body(tmp)
            except BaseException:
                guard.discard(tmp)
                raise
        secs = time.perf_counter() - t0
        files = sorted(str(f.relative_to(tmp)) for f in tmp.rglob("*") if f.is_file())
        write_atomic(
            tmp / "stage.json",
            json.dumps({"key": key, "files": files, "result": result}, indent=2) + "\n",
        )
        if not guard.owns(name) and _stage_record(record) is not None:
            guard.adopt(name)  # a stage directory of an older aquas (before the manifest)
        guard.replace(name, tmp)  # refuses to replace a directory aquas did not create
        self.console.print(f"[{n}/{len(STAGES)}] {name}: done in {secs:.1f} s", markup=False)
        self.log.append(StageLog(name, False, secs))
        return result

    # -- the stages ---------------------------------------------------------------------

    def run(self) -> RunResult:
        from aquas.outdir import OutputDir

        with OutputDir(self.out) as guard:
            self.guard = guard
            try:
                return self._run()
            finally:
                self.guard = None

    def spec_module(self) -> tuple[ModuleOp, EncodingMap]:
        """The project's spec lowered and re-encoded for the target: the one place that
        makes the module synthesis, the co-simulation, the matcher and the header see. A
        fresh module per call (synthesis rewrites its module); the allocation is
        deterministic, so every call gives the same encodings."""
        module, emap = spec_for_target(self.p.spec, self.platform, strict=False)
        if self.p.isaxs is not None:
            # the project's part of the extension (extension.isaxs): the unit, the
            # matcher's patterns and aquas_isax.h hold these ISAXs only. Re-encoding ran
            # on the whole extension first, so a kept ISAX's encoding does not depend on
            # which others are kept.
            from aquas.spec.subset import keep_isaxs

            try:
                keep_isaxs(module, self.p.isaxs)
            except AquasError as e:  # a name the spec lacks: say which project key has it
                raise AquasError(
                    f"'extension.isaxs': {e.message}", filename=str(self.p.path), hint=e.hint
                ) from None
        self._encoding = emap
        return module, emap

    def moves(self) -> list[tuple[str, Any]]:
        """The re-encoded ISAXs of the unit with their new encodings (for the test
        benches, which lower the spec again)."""
        assert self._encoding is not None  # set by spec_module before the synth stage
        kept = self.p.isaxs
        return [(m.isax, m.new) for m in self._encoding.moves if kept is None or m.isax in kept]

    @property
    def subset(self) -> tuple[str, ...]:
        """The ISAXs the unit holds when the project names them, else () (all)."""
        return self.p.isaxs or ()

    @property
    def clock_ns(self) -> float:
        """The clock target: the project's clock_ns, else the core's critical path."""
        return float(self.clock().ns)

    def clock(self) -> Any:
        """The clock target with where it came from (an aquas.area.Clock)."""
        if self._clock is None:
            from aquas.area import resolve_clock

            self._clock = resolve_clock(
                self.p.clock_ns, self.platform, lambda m: self.console.print(m, markup=False)
            )
            if self._clock.source != "project":
                self.console.print(
                    f"clock target {self._clock.ns:g} ns: {self._clock.note}", markup=False
                )
        return self._clock

    def _run(self) -> RunResult:
        t0 = time.perf_counter()
        p = self.p
        spec_digest = file_digest(p.spec)
        _, emap = self.spec_module()
        for line in emap.lines():
            self.console.print(line, markup=False)
        encoding = emap.to_json()
        synth = self.stage(
            "synth",
            {
                "spec": spec_digest,
                "encoding": encoding,
                "isaxs": p.isaxs,
                "clock_ns": self.clock_ns,
                "mem_latency": self.mem_latency,
                "interface": "auto",
                "target": self.platform.fingerprint(),
            },
            self._synth,
        )
        self.synth_reports = synth["isaxs"]
        unit_v = self.out / "synth" / synth["verilog"]
        unit_digest = file_digest(unit_v)
        cosim = self.stage(
            "cosim",
            {
                "spec": spec_digest,
                "encoding": encoding,
                "isaxs": p.isaxs,
                "unit": unit_digest,
                "cases": p.cosim_cases,
            },
            lambda d: self._cosim(d, unit_v, synth["unit"], synth["isaxs"]),
        )
        measured = self.stage(
            "measure",
            {
                "spec": spec_digest,
                "encoding": encoding,
                "isaxs": p.isaxs,
                "unit": unit_digest,
                "target": self.platform.fingerprint(),
                "calls": MEASURE_CALLS,
                "kept": KEPT_CALLS,
            },
            lambda d: self._measure(d, unit_v, synth["unit"], synth["isaxs"]),
        )
        sources = {str(s): file_digest(s) for s in p.sources}
        match = self.stage(
            "match",
            {
                "spec": spec_digest,
                "sources": {str(s): file_digest(s) for s in p.match},
                "isaxs": p.isaxs,
                "headers": self.dependencies(p.match),
                "functions": p.functions,
                "clock_ns": self.clock_ns,
                "target": self.platform.fingerprint(),
                "unit": unit_digest,  # the patterns' latencies are the built unit's
            },
            self._match,
            # the spinner is a thread: a garbage collection it triggers would drop the
            # matcher's e-graphs (pyo3 objects bound to this thread) there (see _match)
            spinner=False,
        )
        build = self.stage(
            "build",
            {
                "sources": sources,
                "headers": self.dependencies(p.sources),
                "rewritten": match["digests"],
                "header": match["header_digest"],
                "opt": p.opt,
                "defines": p.defines,
                "entry": p.entry,
                "target": self.platform.fingerprint(),
            },
            lambda d: self._build(d, match),
        )
        elfs = {k: self.out / "build" / v for k, v in build["elfs"].items()}
        sim = self.stage(
            "sim",
            {
                "elfs": {k: file_digest(v) for k, v in elfs.items()},
                "unit": unit_digest,
                "target": self.platform.fingerprint(),
                "max_cycles": p.max_cycles,
            },
            lambda d: self._sim(d, unit_v, elfs),
        )
        from aquas.sim.builder import core_rtl

        t = self.platform
        from aquas.synth.sta import tools_available

        core = {
            "soc": t.name,
            "rtl": file_digest(core_rtl(t)),
            "params": core_params(t),
            "unmeasured": t.core.area_unmeasured,
            "unit": unit_digest,
            "clock_ns": self.clock_ns,
            "map_ns": synth.get("map_ns"),
            "sta": tools_available(),
        }
        area = self.stage(
            "area",
            core,
            lambda d: self._area(d, unit_v, synth["unit"], synth.get("map_ns")),
            spinner=False,
        )
        doc = self._document(synth, cosim, match, build, sim, area, measured)
        from aquas.report import write_reports

        assert self.guard is not None
        for kind in ("json", "md", "html"):
            self.guard.entry(f"report.{kind}")  # claims them; refuses foreign files
        write_reports(doc, self.out)
        return RunResult(self.out, doc, self.log, time.perf_counter() - t0)

    def dependencies(self, sources: Iterable[Path]) -> dict[str, str]:
        """Digests of every file the compiler reads for ``sources`` (``gcc -M`` with the
        project's include path and defines): headers anywhere, not only the project's."""
        from aquas.runtime.build import define_flags, dependency_files

        deps = dependency_files(sources, [self.p.root], define_flags(self.p.defines))
        return {str(f): file_digest(f) for f in deps}

    def _synth(self, d: Path) -> dict[str, Any]:
        from aquas.synth.pipeline import synthesize_unit
        from aquas.synth.sta import tools_available

        module, _ = self.spec_module()
        u = synthesize_unit(
            module,
            d,
            self.clock_ns,
            self.mem_latency,
            interface="auto",
            target=self.platform,
            # with the cell library installed, the unit is scheduled until static timing
            # analysis says it meets the clock (the area stage then reads the same figures)
            close_timing=tools_available(),
            progress=lambda m: self.console.print(f"  {m}", markup=False),
            area_budget=self.p.area_budget,
        )
        if u.lint_warnings:
            raise AquasError(
                "verilator --lint-only -Wall reports warnings on the generated unit:\n  "
                + "\n  ".join(u.lint_warnings[:10])
            )
        res = u.synth
        return {
            "extension": res.extension,
            "unit": res.unit.name,
            "verilog": res.verilog_path.name,
            "isaxs": res.reports,
            "yosys": u.yosys,
            "ns_per_level": u.ns_per_level,
            "timing_closure": u.timing_closure,
            "map_ns": u.map_ns,
            "area_estimate": res.unit.area_estimate,
            "area_budget": res.unit.area_budget,
        }

    def _cosim(self, d: Path, unit_v: Path, unit: str, reports: dict[str, Any]) -> dict[str, Any]:
        if self.p.cosim_cases == 0:
            return {"cases": 0, "mismatches": [], "skipped": True}
        from aquas.synth.cosim import cases_by_isax, cycle_budget, run_cosim, worst_cycles

        budgets = {n: cycle_budget(r) for n, r in reports.items()}
        # an ISAX of very long calls gets fewer cases (synth/cosim.py, cases_by_isax)
        by_isax = cases_by_isax(reports, self.p.cosim_cases)
        for n, k in sorted(by_isax.items()):
            if k == self.p.cosim_cases:
                continue
            self.console.print(
                f"  cosim: {n} {k} cases (calls of up to {worst_cycles(reports[n]):,} cycles)",
                markup=False,
            )
        res = run_cosim(
            self.p.spec,
            unit_v,
            unit,
            cases=self.p.cosim_cases,
            budgets=budgets,
            encodings=self.moves(),
            by_isax=by_isax,
            subset=self.subset,
        )
        if res.mismatches:
            raise AquasError(
                f"co-simulation of {unit} against the golden interpreter: "
                f"{len(res.mismatches)} mismatch(es):\n  " + "\n  ".join(res.mismatches[:5])
            )
        if res.cases <= 0:
            raise AquasError(f"co-simulation of {unit} ran no case")
        (d / "cosim.json").write_text(json.dumps({"cases": res.cases}, indent=2) + "\n")
        return {"cases": res.cases, "by_isax": by_isax, "mismatches": [], "skipped": False}

    def _measure(
        self, d: Path, unit_v: Path, unit: str, reports: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """Cycles per call of every ISAX: the unit on DMA channel 0 of the SoC's
        aquas_mem_ctrl with the target's memory parameters (cold L2 per call when it has
        one), random operands, rd checked against the golden interpreter. With resident
        scratchpads also repeated calls (same operands: the claims kept)."""
        import statistics

        from aquas.model.measure import measure

        moves = self.moves()
        out: dict[str, Any] = {}
        resident = {n for n, r in reports.items() if r.get("interface", {}).get("resident")}
        runs = [("cycles", "cold", MEASURE_CALLS)]
        if resident:
            runs.append(("kept", "warm", KEPT_CALLS))
        for key, mode, calls in runs:
            m = measure(
                self.p.spec,
                unit_v,
                unit,
                self.platform,
                l2=mode,
                cases=calls,
                encodings=moves,
                subset=self.subset,
            )
            if m.mismatches:
                raise AquasError(
                    f"measuring {unit}: rd differs from the golden interpreter:\n  "
                    + "\n  ".join(m.mismatches[:5])
                )
            out[key] = {
                n: {"mean": statistics.fmean(c), "min": min(c), "max": max(c), "calls": len(c)}
                for n, c in m.cycles.items()
                if c and (key == "cycles" or n in resident)
            }
        (d / "measure.json").write_text(json.dumps(out, indent=2) + "\n")
        return out

    def _match(self, d: Path) -> dict[str, Any]:
        from aquas.egraph.driver import load_patterns, match_file
        from aquas.egraph.emit import instrumented, rewrite_c
        from aquas.runtime.build import define_flags, runtime_include_dirs
        from aquas.runtime.header import write_header

        p = self.p
        # the latencies of the unit synthesis built (its interface plans included); the
        # spec as written when the stage runs on its own
        lat = (
            {
                name: (r["latency"]["cycles_min"], r["latency"]["cycles_max"])
                for name, r in self.synth_reports.items()
            }
            if self.synth_reports is not None
            else None
        )
        ext, pats = load_patterns(
            p.spec, self.clock_ns, self.platform, lat, prepared=self.spec_module()
        )
        header = write_header(ext, self.platform, d / "include" / "aquas_isax.h")
        rows: list[dict[str, Any]] = []
        notes: list[str] = []
        digests: dict[str, str] = {}
        rewritten: dict[str, str] = {}
        # the same sources with each rewritten region between region markers of its own
        # site, as written and rewritten: the builds that measure the sites
        site_files: dict[str, dict[str, str]] = {"baseline": {}, "isax": {}}
        sites: list[dict[str, Any]] = []
        names = _unique_names(p.match)
        # the ISAXs the rewritten sources call: the offloaded ones and the ones a stateful
        # rewrite calls beside them (dot4_clr presetting dot4_i8's accumulator)
        isax_names = [i.sym_name.data for i in ext.isaxs()]
        called: set[str] = set()
        for src in p.match:
            res = match_file(
                src,
                p.spec,
                functions=p.functions,
                clock_ns=self.clock_ns,
                soc=self.platform,
                patterns=(ext, pats),
                # the code the program is built from: the project's include path and defines
                include_dirs=[p.root, header.parent, *runtime_include_dirs(self.platform)],
                defines=[f.removeprefix("-D") for f in define_flags(p.defines)],
            )
            notes += [e.render() for e in res.skipped]
            text = rewrite_c(res)  # first: the final check may refuse a rewrite
            called |= {n for n in isax_names if _calls_isax(text, n)}
            for dec in res.decisions:
                rows.append(
                    {
                        "file": src.name,
                        "function": dec.function,
                        "line": dec.line,
                        "isax": dec.isax,
                        "status": dec.status,
                        "reason": dec.reason,
                        "detail": dec.detail,
                        "hw_cycles": dec.hw_cycles,
                        "sw_cycles": dec.sw_cycles,
                    }
                )
            out = d / "src" / names[src]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
            rewritten[str(src)] = str(out.relative_to(d))
            digests[str(src)] = file_digest(out)
            if res.matched:
                base_text, isax_text, found = instrumented(res, len(sites))
                sites += [dataclasses.asdict(s) | {"region": s.region} for s in found]
                for kind, t in (("baseline", base_text), ("isax", isax_text)):
                    f = d / "sites" / kind / names[src]
                    f.parent.mkdir(parents=True, exist_ok=True)
                    f.write_text(t)
                    site_files[kind][str(src)] = str(f.relative_to(d))
                    digests[f"{kind}-sites:{src}"] = file_digest(f)
            del res
            # egglog's EGraph is "unsendable": it must be freed on the thread that made
            # it. The matcher's e-graphs sit in reference cycles, which only a garbage
            # collection frees -- and that runs on whichever thread allocates next (the
            # simulations' thread pool), where pyo3 reports "EGraph is unsendable, but is
            # being dropped on another thread". Collect them here, on their own thread.
            gc.collect()
        del pats, ext
        gc.collect()
        return {
            "rows": rows,
            "notes": notes,
            "rewritten": rewritten,
            "site_files": site_files,
            "sites": sites,
            "digests": digests,
            "header": str(header.relative_to(d)),
            "header_digest": file_digest(header),
            "called": sorted(called),
        }

    def _build(self, d: Path, match: dict[str, Any]) -> dict[str, Any]:
        from aquas.runtime.build import build_program, section_sizes

        p = self.p
        extra: list[Path] = []
        if p.entry != "main":
            stub = d / "entry_main.c"
            stub.write_text(f"int {p.entry}(void);\nint main(void) {{ return {p.entry}(); }}\n")
            extra.append(stub)
        mdir = self.out / "match"
        isax_sources = [
            mdir / match["rewritten"][str(s)] if str(s) in match["rewritten"] else s
            for s in p.sources
        ]
        include = (mdir / match["header"]).parent
        # A rewritten copy lives in match/src, away from its original: its original's
        # directory goes on the include path, so `#include "x.h"` next to it still resolves
        # (as it does for the original, where the compiler searches the file's own
        # directory first). The project's own directory stays on the path too.
        origins = dict.fromkeys(s.parent for s in p.sources if str(s) in match["rewritten"])
        common: dict[str, Any] = {"platform": self.platform, "opt": p.opt, "defines": p.defines}
        base = build_program([*p.sources, *extra], d / "baseline", header_dirs=[p.root], **common)
        isax = build_program(
            [*isax_sources, *extra], d / "isax", header_dirs=[include, *origins, p.root], **common
        )
        elfs = {"baseline": str(base.relative_to(d)), "isax": str(isax.relative_to(d))}
        # the builds with site markers (measuring each rewritten region, as written and
        # offloaded); the program's own figures come from the builds without them
        for kind, files in match.get("site_files", {}).items():
            if not files:
                continue
            srcs = [mdir / files[str(s)] if str(s) in files else s for s in p.sources]
            elf = build_program(
                [*srcs, *extra],
                d / f"{kind}-sites",
                header_dirs=[include, *origins, p.root],
                **common,
            )
            elfs[f"{kind}-sites"] = str(elf.relative_to(d))
        return {
            "elfs": elfs,
            "sizes": {"baseline": section_sizes(base), "isax": section_sizes(isax)},
        }

    def _sim(self, d: Path, unit_v: Path, elfs: dict[str, Path]) -> dict[str, Any]:
        from aquas.sim.builder import build
        from aquas.sim.runner import run

        binary = build(self.p.soc, self.platform, [unit_v], jobs=max(2, self.jobs), quiet=True)
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = {
                k: pool.submit(run, binary, elf, self.p.max_cycles) for k, elf in elfs.items()
            }
            results = {k: f.result() for k, f in futures.items()}
        for k, r in results.items():
            (d / f"{k}.out").write_text(r.output)
            if r.reason != "exit":
                raise AquasError(
                    f"the {k} program did not exit on {self.p.soc}: {r.reason}: {r.report}",
                    hint="raise target.max_cycles" if r.reason == "timeout" else None,
                )
        b, i = results["baseline"], results["isax"]
        for k, r in results.items():
            if k.endswith("-sites") and (r.output, r.exit_code) != (b.output, b.exit_code):
                raise AquasError(
                    f"the {k} build (site markers) prints other output than the baseline:\n"
                    + _first_difference(b.output, r.output),
                    hint=f"its output is in {d / f'{k}.out'}",
                )
        if (b.output, b.exit_code) != (i.output, i.exit_code):
            assert self.guard is not None
            keep = self.guard.entry("mismatch")
            keep.mkdir(exist_ok=True)
            for k, r in results.items():
                (keep / f"{k}.out").write_text(r.output)
            raise AquasError(
                "the ISAX build's output differs from the baseline's:\n"
                + _first_difference(b.output, i.output)
                + f"\n  exit codes: baseline {b.exit_code}, isax {i.exit_code}",
                hint=f"both outputs are in {keep}",
            )
        out: dict[str, Any] = {k: r.to_json() for k, r in results.items()}
        if "isax-sites" in elfs and self.synth_reports is not None:
            out["model"] = self._predict_sites(elfs, out)
        return out

    def _predict_sites(self, elfs: dict[str, Path], sims: dict[str, Any]) -> dict[str, Any]:
        """The model's cost of every ISAX call of the program (replayed on the ISS) per
        site, and per region the ISAX build's cycles it predicts (aquas.model.sites)."""
        from aquas.interpreter import find_extension
        from aquas.model.sites import predict_regions, replay

        assert self.synth_reports is not None
        ext = find_extension(self.spec_module()[0])
        rep = replay(elfs["isax-sites"], self.platform, ext, self.synth_reports)
        soft = replay(elfs["baseline-sites"], self.platform, ext, self.synth_reports)
        return predict_regions(
            rep,
            soft,
            ext,
            self.synth_reports,
            self.platform,
            sims["baseline"]["regions"],
            sims["baseline-sites"]["regions"],
        )

    def _area(self, d: Path, unit_v: Path, unit: str, map_ns: float | None) -> dict[str, Any]:
        """The core's generic Yosys figures (as before), and, with the tools installed, the
        unit's and the core's cell area and critical path on the cell library
        (aquas.area: one method for both; the core's figures are cached per core). The unit
        is mapped as timing closure kept it: for ``map_ns`` when that is set."""
        from aquas.area import core_figures, progress_printer, unit_figures
        from aquas.sim.builder import core_rtl
        from aquas.synth.sta import tools_available
        from aquas.synth.yosys import measure

        t = self.platform
        res: dict[str, Any] = {"core": t.core.module, "unit_sta": None, "core_sta": None}
        say = lambda m: self.console.print(m, markup=False)  # noqa: E731
        if tools_available():
            res["unit_sta"] = unit_figures(unit_v, unit, self.clock_ns, say, map_ns).as_dict()
            core_sta = core_figures(t, say)
            res["core_sta"] = core_sta.as_dict() if core_sta else None
        if t.core.area_unmeasured:  # reported as "not measured", with the reason
            return res | {"yosys": None, "reason": t.core.area_unmeasured}
        fig = measure(
            core_rtl(t),
            t.core.module,
            params=core_params(t),
            progress=progress_printer(say, f"logic depth of {t.core.module}"),
        )
        (d / "core.json").write_text(
            json.dumps({"yosys": fig.as_dict(), "sta": res["core_sta"]}, indent=2) + "\n"
        )
        return res | {"yosys": fig.as_dict()}

    # -- the report document ------------------------------------------------------------

    def _document(
        self,
        synth: dict[str, Any],
        cosim: dict[str, Any],
        match: dict[str, Any],
        build: dict[str, Any],
        sim: dict[str, Any],
        area: dict[str, Any],
        measured: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        p = self.p
        base, isax = sim["baseline"], sim["isax"]
        regions = []
        ids = sorted(
            {int(k) for k in base["regions"]} | {int(k) for k in isax["regions"]} | set(p.regions)
        )
        model = sim.get("model", {})
        for rid in ids:
            b = base["regions"].get(str(rid), {"cycles": 0, "count": 0})
            i = isax["regions"].get(str(rid), {"cycles": 0, "count": 0})
            pred = model.get("regions", {}).get(str(rid), {}).get("predicted")
            regions.append(
                {
                    "id": rid,
                    "label": p.regions.get(rid, f"region {rid}"),
                    "baseline_cycles": b["cycles"],
                    "isax_cycles": i["cycles"],
                    "count": b["count"],
                    "speedup": b["cycles"] / i["cycles"] if i["cycles"] else None,
                    "predicted_isax_cycles": pred,
                    "prediction_error": abs(pred - i["cycles"]) / i["cycles"]
                    if pred is not None and i["cycles"]
                    else None,
                }
            )
        from aquas.area import area_timing
        from aquas.synth.sta import StaFigures

        unit, core = synth["yosys"], area["yosys"]  # core: None when not measured
        unit_sta, core_sta = area.get("unit_sta"), area.get("core_sta")
        area_doc, timing_doc = area_timing(
            self.clock(),
            StaFigures.from_dict(unit_sta) if unit_sta else None,
            StaFigures.from_dict(core_sta) if core_sta else None,
            unit,
            core,
        )
        latencies = []
        for name, rep in sorted(synth["isaxs"].items()):
            lat = rep["latency"]
            mem = lat["per_mem_latency_max"] * lat["at_L"]
            latencies.append(
                {
                    "isax": name,
                    "cycles": lat["cycles_max"],
                    "compute_cycles": lat["cycles_max"] - mem,
                    "memory_cycles": mem,
                    "interface_ops": rep["interface_ops"],
                    "memory_beats": rep["memory_beats"],
                }
            )
        return {
            "project": p.name,
            "project_file": str(p.path),
            "soc": p.soc,
            "clock_ns": self.clock_ns,
            "memory_latency": self.mem_latency,
            "extension": synth["extension"],
            "isaxs": unit_isaxs(sorted(synth["isaxs"]), p.isaxs is not None, match["called"]),
            "encoding": self._encoding.to_json() if self._encoding else None,
            "end_to_end": {
                "baseline_cycles": base["cycles"],
                "isax_cycles": isax["cycles"],
                "speedup": base["cycles"] / isax["cycles"] if isax["cycles"] else None,
                "outputs_identical": True,
                "output": base["output"],
            },
            "regions": regions,
            "sites": site_rows(match.get("sites", []), sim),
            "sites_note": (
                "each rewritten region of the application measured between region markers of "
                "its own, in two more builds: as written (software) and offloaded (the ISAX "
                "call with its operands, cache maintenance and result); the markers' stores "
                "fall outside the measured span"
            ),
            "latency": latencies,
            "isax_cycles": isax_cycles(
                synth["isaxs"], (measured or {}).get("cycles", {}), (measured or {}).get("kept", {})
            ),
            "isax_cycles_note": (
                f"predicted: the memory-interface model on {self.platform.name} for the plan "
                f"synthesis chose; measured: RTL simulation of the generated unit behind the "
                f"SoC's memory controller (aquas_mem_ctrl, the target's latency, DMA setup, "
                f"bus width and L2, the L2 cold at each call), mean over "
                f"{MEASURE_CALLS} calls with random operands, command handshake to "
                f"response; not cycles inside the program, where the core's cache "
                f"maintenance and call overhead come on top; repeated call: the same "
                f"command again at once ({KEPT_CALLS} calls), which an ISAX with resident "
                f"scratchpads answers without their bursts"
            ),
            # area.overhead_percent: total area, unit over core, by the same method
            "area": {
                "unit": unit,
                "core": core,
                "core_module": area["core"],
                "core_unmeasured": area.get("reason", ""),
                **area_doc,
            },
            "timing": timing_doc,
            "cosim": cosim,
            "matches": match["rows"],
            "match_notes": match["notes"],
            "sizes": build["sizes"],
            "stages": [s.__dict__ for s in self.log],
        }


def _calls_isax(text: str, isax: str) -> bool:
    """Whether C ``text`` calls ``isax`` through aquas_isax.h (``aquas_<isax>`` or its
    ``_noflush`` variant, aquas.runtime.header)."""
    return re.search(rf"\baquas_{re.escape(isax)}(?:_noflush)?\s*\(", text) is not None


def unit_isaxs(built: list[str], chosen: bool, called: list[str]) -> dict[str, Any]:
    """The ISAXs the unit holds (``chosen``: the project's ``extension.isaxs``, else the
    whole extension), those the rewritten program calls, and those it never does: area the
    program does not use."""
    used = [n for n in built if n in called]
    return {
        "built": built,
        "from_project": chosen,
        "called": used,
        "unused": [n for n in built if n not in used],
    }


def site_rows(sites: list[dict[str, Any]], sim: dict[str, Any]) -> list[dict[str, Any]]:
    """Per rewritten region (``egraph.emit.Site``): its calls, and its cycles in total and
    per call as written and offloaded, from the site-instrumented builds."""
    soft = sim.get("baseline-sites", {}).get("regions", {})
    hard = sim.get("isax-sites", {}).get("regions", {})
    predicted = sim.get("model", {}).get("sites", {})
    rows = []
    for s in sites:
        b, h = soft.get(str(s["region"])), hard.get(str(s["region"]))
        row: dict[str, Any] = {
            k: s[k] for k in ("file", "function", "line", "isax", "instrumented", "why_not")
        }
        # a site's function may run more often as written (inside another site that the
        # ISAX build replaced): each build's figure is per its own entries
        sw = b["cycles"] / b["count"] if b and b["count"] else None
        hw = h["cycles"] / h["count"] if h and h["count"] else None
        row.update(
            calls=b["count"] if b else 0,
            calls_offloaded=h["count"] if h else 0,
            software_cycles=b["cycles"] if b else None,
            offloaded_cycles=h["cycles"] if h else None,
            software_per_call=sw,
            offloaded_per_call=hw,
            speedup=sw / hw if sw is not None and hw else None,
            predicted_per_call=predicted.get(str(s["index"]), {}).get("predicted_per_call"),
        )
        rows.append(row)
    return rows


def isax_cycles(
    reports: dict[str, dict[str, Any]],
    measured: dict[str, dict[str, Any]],
    kept: dict[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Per ISAX: the plan, the model's predicted cycles and the measured ones (mean, range,
    calls) with the prediction's error relative to the measured mean; with resident
    scratchpads also a repeated call's (claims kept), predicted and measured."""
    rows = []
    for name, rep in sorted(reports.items()):
        iface = rep.get("interface", {})
        pred = iface.get("predicted_cycles")
        meas = measured.get(name)
        mean = meas["mean"] if meas else None
        again = (kept or {}).get(name)
        rows.append(
            {
                "predicted_kept": iface.get("predicted_cycles_kept"),
                "measured_kept": again["mean"] if again else None,
                "isax": name,
                "plan": iface.get("plan"),
                "predicted": pred,
                "measured_mean": mean,
                "measured_min": meas["min"] if meas else None,
                "measured_max": meas["max"] if meas else None,
                "calls": meas["calls"] if meas else 0,
                "error": abs(pred - mean) / mean if pred is not None and mean else None,
            }
        )
    return rows


def _stage_record(path: Path) -> dict[str, Any] | None:
    """A stage's ``stage.json`` when it is one (a key, files and a result), else None."""
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if isinstance(rec, dict) and {"key", "files", "result"} <= set(rec):
        return rec
    return None


def core_params(target: Target) -> dict[str, int]:
    """The integer parameters the reference SoC sets on its core (read from the SoC's
    Verilog, so area and depth are those of the configuration that runs the programs).
    A core instantiated without a parameter list (VexRiscv: its netlist is generated with
    the configuration baked in) has none."""
    from aquas.sim.builder import soc_rtl

    top = soc_rtl(target)[-1]
    inst = re.search(
        rf"\b{re.escape(target.core.module)}\s*(?:#\((.*?)\))?\s*u_cpu\b", top.read_text(), re.S
    )
    if inst is None:
        raise AquasError(f"cannot find the {target.core.module} instance u_cpu", filename=str(top))
    if inst.group(1) is None:
        return {}
    return {k: int(v) for k, v in re.findall(r"\.(\w+)\((\d+)\)", inst.group(1))}


def _unique_names(paths: Iterable[Path]) -> dict[Path, str]:
    out: dict[Path, str] = {}
    used: set[str] = set()
    for i, pth in enumerate(paths):
        name = pth.name if pth.name not in used else f"{pth.stem}_{i}{pth.suffix}"
        used.add(name)
        out[pth] = name
    return out


def _first_difference(a: str, b: str) -> str:
    la, lb = a.splitlines(), b.splitlines()
    for n, (x, y) in enumerate(zip(la, lb, strict=False), 1):
        if x != y:
            return f"  line {n}:\n    baseline: {x}\n    isax:     {y}"
    return f"  baseline has {len(la)} lines, isax {len(lb)}"


def run_project(
    project: Project,
    out_dir: Path,
    *,
    jobs: int = 1,
    force: bool = False,
    console: Console | None = None,
) -> RunResult:
    return Flow(project, out_dir, jobs=jobs, force=force, console=console).run()
