"""One unit from IR to checked, measured Verilog: synthesis, lint, Yosys area and timing.

:func:`synthesize_unit` is the single implementation behind ``aquas synth`` and the synth
stage of ``aquas run``; the callers decide what a lint warning means to them.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp

from aquas.diagnostics import AquasError, check_clock
from aquas.synth.flow import SynthResult, synthesize
from aquas.synth.oplib import OperatorLibrary

if TYPE_CHECKING:
    from aquas.plans.choose import InterfaceChoice
    from aquas.synth.budget import AreaBudget
    from aquas.synth.sta import StaFigures
    from aquas.target import Target


@dataclass
class UnitResult:
    synth: SynthResult
    ns_per_level: float
    lint_warnings: list[str] | None = None  # None: lint not run
    yosys: dict[str, Any] | None = None  # None: Yosys not run
    interface: InterfaceChoice | None = None  # the plan of each ISAX and why
    plan_mlir: str = ""  # the extension after the interface plans, before synthesis
    plan_isax: str = ""  # the same as an .isax spec (aquas/spec/printer.py) ...
    plan_isax_error: str = ""  # ... or why it cannot be printed as one
    # timing closure (close_timing=True): one entry per attempt, {"derate", "unit_path_ns"}
    timing_closure: list[dict[str, Any]] | None = None
    # ABC's delay target the kept unit meets the clock with, when tighter than the clock
    # (a remapped narrow miss, REMAP_RATIO); its area and path are those of that mapping
    map_ns: float | None = None


#: Timing closure: at most this many mapping rounds (each on a different schedule) and
#: schedules in all; each round derates the chained delays by the measured ratio of path to
#: clock times the margin, and by at least the step (also the step when a derating leaves
#: the schedule as it was).
CLOSURE_ROUNDS = 4
CLOSURE_SCHEDULES = 12
CLOSURE_MARGIN = 1.03
CLOSURE_STEP = 1.1
#: A round that meets the clock only once the derated delays also decide what fits a cycle
#: (``fit``: more multi-cycle and sequential units) is not the only way to meet it; at most
#: this many more rounds take the other branch, derating further without ``fit``, and the
#: met round with the smallest area x cycles^2 is kept (:func:`_area_delay`).
CLOSURE_BRANCH_ROUNDS = 2
#: A round that meets the clock after a round that missed it may have derated much more
#: than needed (the step is the missed path's ratio to the clock, and paths do not scale
#: with the derating): at most this many more rounds bisect the derating between the
#: highest one that missed and the lowest one that met (geometric midpoint), while the two
#: are more than ``CLOSURE_BISECT_RATIO`` apart. The point cloud with predicated kernels:
#: derated by 1.0 and 1.1866 it misses, by 1.339 it meets with split multipliers in 1,134
#: ISAX cycles; by 1.2605 it meets in 904.
CLOSURE_BISECT_ROUNDS = 2
CLOSURE_BISECT_RATIO = 1.03
#: A round whose path misses the clock by at most this ratio is first mapped again, the
#: same Verilog, with ABC's delay target at ``REMAP_TARGET`` times the clock (``map -D``
#: with up- and down-sizing then buys delay with area). Rescheduling is a coarse tool for a
#: narrow miss: the whole DSP extension misses VexRiscv's 5.67 ns by 0.14 ns in round 1
#: (982,143 um^2); derated by 1.02 it meets in 1,237,278 um^2 (multiplies lose their
#: sharing), by 1.04 in 1,994,648, with the same cycles; remapped at 0.8 of the clock, round
#: 1 meets at 5.64 ns in 1,121,483 um^2. ABC recovers a few per cent at most: the point
#: cloud's 5.90 ns (4 % over) stays at 5.94. Targets from 0.85 down to 0.75 of the clock
#: give the DSP unit the same netlist; 0.88 and 0.92 do not meet. A remap that meets is
#: one more met round to choose from (least area x cycles^2), not the round's verdict: the
#: closure derates on as after a miss, since a derated schedule may meet in less area (the
#: whole LLM extension: 1,305,366 um^2 remapped, 1,187,531 derated by 1.0388, both in 192
#: ISAX cycles).
REMAP_RATIO = 1.05
REMAP_TARGET = 0.8


def synthesize_unit(
    module: ModuleOp,
    out_dir: Path,
    clock_ns: float,
    mem_latency: int,
    *,
    lint: bool = True,
    yosys: bool = True,
    lib: OperatorLibrary | None = None,
    interface: str = "auto",
    max_burst_beats: int = 256,
    progress: Callable[[str], None] | None = None,
    bus_width: int = 32,
    target: Target | None = None,
    scratchpads: str | None = None,
    close_timing: bool = False,
    share: bool = True,
    pipeline: str = "directive",
    area_budget: float | None = None,
) -> UnitResult:
    """Synthesizes ``module``'s extension into ``out_dir``, then lints the Verilog and
    measures its area and logic depth with Yosys (each optional).

    ``interface`` is the memory-interface plan (``auto``, ``as-written``, ``single``,
    ``burst``; docs/synthesis.md) applied per ISAX first; ``max_burst_beats`` is the
    target's ``isax_master.max_burst_beats``; ``bus_width`` the ISAX memory master's data
    width (the target's ``isax_master.bus_width``). With a ``target`` both come from it
    (the arguments are ignored), ``auto`` keeps per ISAX the plan the memory-interface
    model predicts fastest on it, and each ISAX's report carries that prediction.
    ``scratchpads`` (``auto``, ``sram``, ``regs``) overrides every scratchpad's ``impl``
    directive (``None`` keeps the spec's). ``share=False`` gives every multiply its own
    multiplier (docs/synthesis.md, "Sharing"). ``pipeline`` is the loop-pipelining mode
    (``auto``, ``directive``, ``off``; synth/loop_pipeline.py). ``area_budget``: a
    fraction of the target core's area (measured by ``synth/sta.py``) the unit's
    estimated area must fit; the shared and sequential multipliers are chosen for the
    fewest cycles within it (``synth/budget.py``; docs/synthesis.md, "Area budget").

    ``close_timing``: map the unit onto the cell library and time it (``synth/sta.py``);
    while its critical path exceeds ``clock_ns``, schedule again with the operator delays
    derated by the measured ratio (plus :data:`CLOSURE_MARGIN`), at most
    :data:`CLOSURE_ROUNDS` rounds, plus :data:`CLOSURE_BRANCH_ROUNDS` on the branch not
    taken when a round met the clock through multi-cycle fits (the met round with the
    smallest area x cycles^2 is kept). The scheduler then chains less per cycle; the verdict
    is always the static timing analysis, never the model. ``module`` is left as given."""
    check_clock(clock_ns)
    lib = lib or OperatorLibrary.load()
    budget = None if area_budget is None else resolve_budget(area_budget, target, progress)
    args: dict[str, Any] = dict(
        area_budget=budget,
        interface=interface,
        max_burst_beats=max_burst_beats,
        progress=progress,
        bus_width=bus_width,
        target=target,
        scratchpads=scratchpads,
        share=share,
        pipeline=pipeline,
    )
    if not close_timing:
        result = _synthesize(module, out_dir, clock_ns, mem_latency, lib, **args)
    else:
        result = _close_timing(module, out_dir, clock_ns, mem_latency, lib, args)
    if lint:
        from aquas.synth.lint import lint as run_lint

        result.lint_warnings = run_lint(result.synth.verilog_path)
    if yosys:
        from aquas.area import progress_printer
        from aquas.synth.yosys import measure

        unit = result.synth.unit.name
        say = args["progress"] or (lambda _m: None)
        fig = measure(  # cached by content
            result.synth.verilog_path,
            unit,
            progress=progress_printer(say, f"logic depth of {unit}"),
        )
        depth_ns = fig.depth * lib.ns_per_level
        result.yosys = fig.as_dict() | {
            "depth_ns": round(depth_ns, 3),
            "meets_clock": depth_ns <= clock_ns,
        }
    return result


def resolve_budget(
    fraction: float, target: Target | None, progress: Callable[[str], None] | None = None
) -> AreaBudget:
    """``--area-budget``: the fraction checked, and the target core's area by ``synth/sta.py``
    (cached per core; the first run maps the core, about a minute)."""
    from aquas.area import core_figures
    from aquas.synth import sta
    from aquas.synth.budget import AreaBudget, check_fraction

    check_fraction(fraction)
    if target is None:
        raise AquasError("--area-budget is a fraction of the target core's area: give a target")
    if not sta.tools_available():
        raise AquasError(
            "--area-budget needs the core's area on the cell library (Yosys, OpenSTA and "
            "the Liberty file)",
            hint=sta.SETUP_HINT,
        )
    core = core_figures(target, progress)
    if core is None:
        raise AquasError(
            f"--area-budget: the {target.core.module} core's area is not measured "
            f"({target.core.area_unmeasured})"
        )
    return AreaBudget(fraction, core.total_area_um2, target.core.module)


def _close_timing(
    module: ModuleOp,
    out_dir: Path,
    clock_ns: float,
    mem_latency: int,
    lib: OperatorLibrary,
    args: dict[str, Any],
) -> UnitResult:
    from aquas.synth import sta

    if not sta.tools_available():
        raise AquasError(
            f"timing closure needs Yosys, OpenSTA and a Liberty file: {sta.SETUP_HINT}"
        )
    say = args["progress"] or (lambda _m: None)
    attempts: list[dict[str, Any]] = []
    met: list[tuple[dict[str, Any], dict[str, int]]] = []  # (round, cycles per ISAX)
    derate, fit = 1.0, False
    branch: float | None = None  # the derating of the branch not taken when `fit` came on
    limit = CLOSURE_ROUNDS
    round_of: dict[str, dict[str, Any]] = {}  # each schedule timed so far: its round
    current: dict[str, Any] | None = None  # the round whose unit ``result`` holds
    bisect: list[float] | None = None  # [missed, met] deratings while bisecting
    for _ in range(CLOSURE_SCHEDULES):
        try:
            result = _synthesize(
                module.clone(), out_dir, clock_ns, mem_latency, lib.derated(derate, fit), **args
            )
        except AquasError as e:
            if not fit and not met:
                raise
            # an operator too slow for a cycle, with no multi-cycle unit: stop here
            first = str(e).splitlines()[0]
            say(f"timing closure: derated by {derate:.3g}, the schedule fails ({first}); stopping")
            break
        verilog = result.synth.verilog_path.read_text()
        current = round_of.get(verilog)
        if current is not None and bisect is not None:
            # bisecting reached a schedule timed before: its verdict narrows the interval
            mid = _narrow(bisect, current["unit_path_ns"] <= clock_ns, derate)
            if mid is None:
                break
            derate = mid
            continue
        if current is not None:  # a schedule timed before: derate further before timing it
            derate *= CLOSURE_STEP
            continue
        k = closure_rounds(attempts) + 1
        earlier = list(attempts)
        say(f"timing closure, round {k}: mapping {result.synth.unit.name} onto {sta.LIBRARY_NAME}")
        cycles = _cycles(result)
        fig = _map(result, clock_ns, say)
        path = fig.critical_path_ns
        attempts.append(_attempt(fig, derate, fit, cycles, f"round {k}", say))
        current = round_of[verilog] = attempts[-1]
        if clock_ns < path <= clock_ns * REMAP_RATIO:
            map_ns = round(clock_ns * REMAP_TARGET, 3)
            say(f"timing closure, round {k}: a narrow miss; mapping again for {map_ns:g} ns")
            remap = _map(result, clock_ns, say, map_ns)
            attempts.append(_attempt(remap, derate, fit, cycles, f"round {k}", say))
            if remap.critical_path_ns <= clock_ns:
                # a candidate among the met rounds; the closure goes on as after a miss,
                # since a derated schedule may meet in less area (the LLM extension)
                met.append((attempts[-1], cycles))
        if bisect is not None:
            if path <= clock_ns:
                met.append((attempts[-1], cycles))
            mid = _narrow(bisect, path <= clock_ns, derate)
            if k >= limit or mid is None:
                break
            derate = mid
            continue
        if path <= clock_ns:
            met.append((attempts[-1], cycles))
            # the earlier rounds: this one's recorded derating is rounded, and may be below
            # ``derate`` (PicoRV32's point cloud, 1.3505: bisection was skipped)
            missed = [a["derate"] for a in earlier if a["fit"] == fit and a["derate"] < derate]
            # the first round that meets without fits (the branch's, after a fit round)
            # (a remap that met is not a round that met: the bisection is still to come)
            first_met = (
                not fit
                and branch is None
                and sum(not a["fit"] and "map_ns" not in a for a, _ in met) == 1
            )
            if first_met and missed and derate / max(missed) > CLOSURE_BISECT_RATIO:
                say("timing closure: met; trying deratings between the last miss and this")
                bisect = [max(missed), derate]
                derate = math.sqrt(bisect[0] * bisect[1])
                limit = k + CLOSURE_BISECT_ROUNDS
                continue
            if branch is None:
                break
            say("timing closure: met with multi-cycle fits; trying the branch without them")
            derate, fit, branch = branch, False, None
            limit = k + CLOSURE_BRANCH_ROUNDS
            continue
        if k >= limit:
            break
        switch = (
            not fit and not met and k > 1 and path > 0.99 * min(a["unit_path_ns"] for a in earlier)
        )
        derate *= max(path / clock_ns * CLOSURE_MARGIN, CLOSURE_STEP)
        if switch:
            # chaining less did not help: the path is a single operator the model thinks
            # fits a cycle; from now on the derated delays decide that too
            fit, branch = True, derate
    if met:
        best = min(met, key=lambda m: _area_delay(m, [c for _, c in met]))[0]
        why = "meets the clock with the smallest area x cycles^2"
    else:  # no round met the clock: keep the fastest one
        best = min(attempts, key=lambda a: a["unit_path_ns"])
        why = "the shortest path"
    # the last schedule synthesized may be one timed before (bisection reaching a
    # schedule of an earlier round: PicoRV32's point cloud, whose last try at derate
    # 1.0241 gave round 1's unit, which misses): synthesize the kept round again then
    if best is not current:
        n = closure_rounds(attempts[: attempts.index(best) + 1])
        how = "" if "map_ns" not in best else f" mapped for {best['map_ns']:g} ns"
        say(f"timing closure: keeping round {n}{how}, {why}")
        result = _synthesize(
            module.clone(),
            out_dir,
            clock_ns,
            mem_latency,
            lib.derated(best["derate"], best["fit"]),
            **args,
        )
    result.timing_closure = attempts
    result.map_ns = best.get("map_ns")
    return result


def closure_rounds(attempts: list[dict[str, Any]]) -> int:
    """The mapping rounds among closure ``attempts``: a remap of a round (``map_ns``) is
    not one."""
    return sum("map_ns" not in a for a in attempts)


def _map(
    result: UnitResult,
    clock_ns: float,
    say: Callable[[str], None],
    map_ns: float | None = None,
) -> StaFigures:
    """The synthesized unit mapped onto the cell library and timed at ``clock_ns``, by ABC
    for ``map_ns`` if given (``synth/sta.py``), saying how long it takes."""
    from aquas.area import progress_printer
    from aquas.synth import sta

    unit = result.synth.unit.name
    what = f"mapping {unit}" if map_ns is None else f"mapping {unit} for delay"
    return sta.measure(
        result.synth.verilog_path,
        unit,
        clock_ns,
        progress=progress_printer(say, what),
        map_ns=map_ns,
    )


def _attempt(
    fig: StaFigures,
    derate: float,
    fit: bool,
    cycles: dict[str, int],
    what: str,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """A closure round's record from its mapping ``fig`` (``synth/sta.py``), said."""
    a: dict[str, Any] = {
        "derate": round(derate, 4),
        "fit": fit,
        "unit_path_ns": fig.critical_path_ns,
        "logic_um2": round(fig.logic_area_um2),
        "cycles": sum(cycles.values()),
    }
    if fig.map_ns is not None:
        a["map_ns"] = fig.map_ns
        what += f", mapped for {fig.map_ns:g} ns"
    verdict = "meets" if fig.critical_path_ns <= fig.clock_ns else "misses"
    say(
        f"timing closure, {what}: critical path {fig.critical_path_ns:g} ns {verdict} "
        f"{fig.clock_ns:g} ns ({fig.logic_area_um2:,.0f} um^2 of logic, {a['cycles']} ISAX "
        "cycles)"
    )
    return a


def _narrow(bisect: list[float], met: bool, derate: float) -> float | None:
    """Moves the met (or missed) end of the bisected interval ``[missed, met]`` to
    ``derate``; returns the next derating to try, its geometric midpoint, or None once
    the ends are within ``CLOSURE_BISECT_RATIO``."""
    bisect[met] = derate
    if bisect[1] / bisect[0] <= CLOSURE_BISECT_RATIO:
        return None
    return math.sqrt(bisect[0] * bisect[1])


def _cycles(result: UnitResult) -> dict[str, int]:
    """The longest cycles of each ISAX at the unit's memory latency."""
    return {n: r["latency"]["cycles_max"] for n, r in result.synth.reports.items()}


def _area_delay(m: tuple[dict[str, Any], dict[str, int]], rounds: list[dict[str, int]]) -> float:
    """A met round's cost among the met ``rounds`` (their cycles per ISAX, the first the
    reference): its logic area times the square of the mean, over the ISAXs whose cycles
    differ between the rounds, of its cycles relative to the first round's (relative, so a
    long ISAX does not outweigh a short one; an ISAX no round changes says nothing, and
    would only pull the mean towards 1). Squared, because speed is what the unit is for:
    twice the area is worth it for more than 1.41 times fewer cycles. v3ddist alone at
    VexRiscv's clock: 313,098 um^2 for 375 cycles against 727,250 um^2 for 218; area x
    cycles would keep the first, this the second."""
    attempt, cycles = m
    ref = rounds[0]
    changed = [n for n in ref if len({r[n] for r in rounds}) > 1]
    if not changed:
        return float(attempt["logic_um2"])
    mean = sum(cycles[n] / max(1, ref[n]) for n in changed) / len(changed)
    return attempt["logic_um2"] * mean * mean


def _synthesize(
    module: ModuleOp,
    out_dir: Path,
    clock_ns: float,
    mem_latency: int,
    lib: OperatorLibrary,
    *,
    interface: str,
    max_burst_beats: int,
    progress: Callable[[str], None] | None,
    bus_width: int,
    target: Target | None,
    scratchpads: str | None,
    share: bool,
    pipeline: str,
    area_budget: AreaBudget | None = None,
) -> UnitResult:
    if target is not None:
        bus_width = target.isax_master.bus_width
        max_burst_beats = target.isax_master.max_burst_beats
    if mem_latency < 0:
        raise AquasError(f"the memory latency must be >= 0 cycles, got {mem_latency}")
    from aquas.interpreter import find_extension
    from aquas.outdir import check_name

    # these name output files: refuse what the file system cannot hold before writing any
    ext = find_extension(module)
    check_name(ext.sym_name.data, "the extension name")
    for isax in ext.isaxs():
        check_name(isax.sym_name.data, "the ISAX name")
    from xdsl.printer import Printer

    from aquas.synth.sram import apply_scratchpad_impl

    apply_scratchpad_impl(module, scratchpads)

    from aquas.plans.choose import apply_interface

    choice = apply_interface(
        module,
        interface,
        clock_ns,
        mem_latency,
        lib,
        max_burst_beats,
        progress=progress,
        target=target,
        bus_width=bus_width,
    )
    apply_scratchpad_impl(module, scratchpads)  # scratchpads the plans added, too
    buf = io.StringIO()
    Printer(stream=buf).print_op(module)
    plan_mlir = buf.getvalue() + "\n"
    from aquas.spec.printer import print_spec

    try:
        plan_isax, plan_isax_error = print_spec(module), ""
    except AquasError as e:
        plan_isax, plan_isax_error = "", str(e)
    extra = {n: {"interface": choice.report(n)} for n in choice.plans}
    res = synthesize(
        module,
        out_dir,
        clock_ns,
        mem_latency,
        lib,
        extra=extra,
        bus_width=bus_width,
        share=share,
        pipeline=pipeline,
        area_budget=area_budget,
        progress=progress,
    )
    return UnitResult(
        res,
        lib.ns_per_level,
        interface=choice,
        plan_mlir=plan_mlir,
        plan_isax=plan_isax,
        plan_isax_error=plan_isax_error,
    )
