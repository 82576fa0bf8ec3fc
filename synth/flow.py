"""The synthesis flow: spec → prepared IR → state machines → CIRCT → Verilog + reports.

``synthesize(spec, clock_ns, out_dir)`` writes ``<ext>_isax_unit.sv``, the CIRCT input
(``.mlir``) and one JSON report per ISAX, all atomically, and returns a summary.
"""

from __future__ import annotations

import io
import json
import time
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64

from aquas.diagnostics import AquasError, loc_of
from aquas.dialects import aquas as aq
from aquas.interpreter import find_extension
from aquas.outdir import write_atomic
from aquas.synth.binding import ShareConfig
from aquas.synth.fsm import (
    MEM_OPS,
    FsmBuilder,
    IsaxFsm,
    LoopLatch,
    call_local_registers,
    mem_beats,
    registerless_scratchpads,
)
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.prepare import prepare_balancing
from aquas.synth.rtlgen import Unit, UnitGenerator
from aquas.synth.timing import schedule_extension

if TYPE_CHECKING:
    from aquas.synth.budget import AreaBudget


@dataclass
class SynthResult:
    extension: str
    unit: Unit
    verilog_path: Path
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0


def isax_report(
    fsm: IsaxFsm, states: list[Any], clock_ns: float, mem_latency: int, bus_width: int = 32
) -> dict[str, Any]:
    isax = fsm.isax
    mine = [s for s in states if s.isax == isax.sym_name.data]
    ops = list(isax.body.walk())
    lat = fsm.reported
    lo, hi = lat.at(mem_latency)
    lo, hi = lo + 1, hi + 1  # the dispatch cycle in which the command is accepted
    iface: dict[str, int] = {}
    for o in ops:
        if isinstance(o, MEM_OPS):
            key = o.name.split(".")[1]
            iface[key] = iface.get(key, 0) + 1
    return {
        "isax": isax.sym_name.data,
        "encoding": {
            "opcode": isax.opcode_value,
            "funct3": isax.funct3_value,
            "funct7": isax.funct7_value,
            "uses": list(isax.used),
        },
        "states": len(mine),
        "wait_states": sum(1 for s in mine if s.wait is not None),
        "multicycle": multicycle_report(mine),
        "latency": {
            "formula": "cycles = fixed + per_mem_latency * L (L = memory response latency)",
            "fixed_min": lat.min_fixed + 1,
            "fixed_max": lat.max_fixed + 1,
            "per_mem_latency_min": lat.min_mem,
            "per_mem_latency_max": lat.max_mem,
            "control_min": lat.min_ctl + 1,
            "control_max": lat.max_ctl + 1,
            "at_L": mem_latency,
            "cycles_min": lo,
            "cycles_max": hi,
            "note": "cycles from the command handshake to the first cycle with rsp_valid; "
            "control_*: the fixed cycles without data beats (each beat takes one cycle)",
        },
        "interface_ops": iface,
        "memory_beats": sum(mem_beats(o, bus_width) for o in ops if isinstance(o, MEM_OPS)),
        "bus_width": bus_width,
        "clock_ns": clock_ns,
    }


def multicycle_report(states: list[Any]) -> list[dict[str, Any]]:
    """The ISAX's operations on multi-cycle units (synth/multicycle.py), in state order:
    the op, its unit, the states it starts and is read in (ISAX-relative), and whether
    it shares another op's division (quotient and remainder of one)."""
    index = {s.id: k for k, s in enumerate(states)}
    issued = {op: index[s.id] for s in states for op in s.issues}
    out = []
    for s in states:
        for op in s.completes:
            spec = s.units[op]
            loc = loc_of(op)
            out.append(
                {
                    "op": op.name,
                    "unit": spec.key,
                    # a product in flight is read in a state of the next iteration
                    "issue_state": issued.get(op, index[s.id] - spec.latency),
                    "result_state": index[s.id],
                    "shares_division": not any(op in t.issues for t in states),
                    "source": f"{Path(loc.filename).name}:{loc.line}:{loc.column}" if loc else None,
                }
            )
    return out


def multicycle_units(unit: Unit, lib: OperatorLibrary) -> list[dict[str, Any]]:
    """The unit's multi-cycle units (one divider or multiplier per width) with the
    library's figures and the number of operations started on each."""
    specs = {spec.key: spec for s in unit.states for spec in s.units.values()}
    issues = [s.units[op].key for s in unit.states for op in s.issues]
    out = []
    for key in sorted(specs, key=lambda k: (specs[k].unit, specs[k].width)):
        spec = specs[key]
        out.append(
            {
                "unit": key,
                "width": spec.width,
                "latency": spec.latency,
                "initiation_interval": spec.ii,
                "cells": spec.cells,
                "depth": spec.depth,
                "issues": issues.count(key),
            }
            | {"bits_per_cycle": spec.digit}
        )
    return out


def schedule_isaxs(
    module: ModuleOp,
    clock_ns: float,
    lib: OperatorLibrary,
    bus_width: int = 32,
    share: bool = True,
    pipeline: str = "directive",
) -> tuple[FsmBuilder, list[IsaxFsm]]:
    """Prepare ``module`` in place and schedule every ISAX of its extension, binding its
    multiplies to shared units unless ``share`` is false.

    ``pipeline``: ``directive`` (the default) pipelines the loops with a ``#[pipeline]``
    directive, ``auto`` also the loops over scratchpad data that are not unrolled (when
    it saves cycles), ``off`` none (``synth/loop_pipeline.py``); the reports are in
    ``builder.loop_reports``."""
    from aquas.synth.loop_pipeline import PIPELINE_MODES, pipeline_loops
    from aquas.synth.sram import fit_partitions

    if pipeline not in PIPELINE_MODES:
        raise AquasError(
            f"unknown loop pipelining mode {pipeline!r}", hint="use auto, directive or off"
        )

    def run(
        m: ModuleOp, balance: Collection[str] | None
    ) -> tuple[set[str], FsmBuilder, list[IsaxFsm]]:
        rebuilt = prepare_balancing(m, balance)
        fit_partitions(find_extension(m), bus_width)
        reports = []
        if pipeline != "off":
            reports = pipeline_loops(m, clock_ns, lib, auto=pipeline == "auto")
        builder, fsms = schedule_extension(
            find_extension(m), clock_ns, lib, bus_width=bus_width, share=share
        )
        builder.loop_reports = reports
        return rebuilt, builder, fsms

    # Balanced sums (synth/balance.py) are shallower, but where shared units hand out the
    # operands one after another the chain as written adds each as it comes: the sums
    # are balanced in the ISAXs that schedule in fewer cycles that way (sharing couples
    # the ISAXs, so a subset is scheduled once more), unless that takes more shared
    # multipliers than the sums as written.
    original = module.clone()
    rebuilt, builder, fsms = run(module, None)
    keep = set(rebuilt)
    if rebuilt:
        plain_module = original.clone()
        _, plain_builder, plain = run(plain_module, ())
        before = {f.isax.sym_name.data: _fixed(f) for f in plain}
        keep = {f.isax.sym_name.data for f in fsms if _fixed(f) < before[f.isax.sym_name.data]}
        capped = original.clone() if keep else None
        if keep and keep < rebuilt:
            _move_body(original, module)
            _, builder, fsms = run(module, keep)
        if capped is not None and _more_units(builder, plain_builder):
            # Shallower sums may let more multiplies share a cycle (a pipelined kernel
            # at a lower II): try them within the units the sums as written take.
            got = _within_units(capped, keep, plain_builder, before, run)
            if got is not None:
                _move_body(capped, module)
                builder, fsms = got
        if not keep or _more_units(builder, plain_builder):
            # no faster, or faster only with more shared multipliers: not worth the area
            _move_body(plain_module, module)
            builder, fsms, keep = plain_builder, plain, set()
    builder.balanced = keep
    return builder, fsms


def _within_units(
    module: ModuleOp,
    keep: set[str],
    plain: FsmBuilder,
    before: dict[str, tuple[int, int]],
    run: Callable[[ModuleOp, Collection[str] | None], tuple[set[str], FsmBuilder, list[IsaxFsm]]],
) -> tuple[FsmBuilder, list[IsaxFsm]] | None:
    """``module`` (unprepared) scheduled with the sums of ``keep`` balanced and each of
    those ISAXs without a ``#[mul_units]`` directive held to the most units a class has
    in ``plain`` (the schedule of the sums as written); the result when it takes no more
    units than ``plain`` and is faster for some ISAX of ``keep`` and slower for none,
    else None."""
    if plain.binding is None or not plain.binding.counts():
        return None
    units = max(plain.binding.counts().values())
    for isax in find_extension(module).isaxs():
        if isax.sym_name.data in keep and aq.MUL_UNITS_ATTR not in isax.attributes:
            isax.attributes[aq.MUL_UNITS_ATTR] = IntegerAttr(units, i64)
    _, builder, fsms = run(module, keep)
    after = {f.isax.sym_name.data: _fixed(f) for f in fsms}
    if _more_units(builder, plain) or any(after[n] > before[n] for n in keep):
        return None
    if not any(after[n] < before[n] for n in keep):
        return None
    return builder, fsms


def _more_units(a: FsmBuilder, b: FsmBuilder) -> bool:
    """Whether schedule ``a`` binds more shared units of some kind and width than ``b``."""
    if a.binding is None or b.binding is None:
        return False
    have = {c.key: n for c, n in b.binding.counts().items()}
    return any(n > have.get(c.key, 0) for c, n in a.binding.counts().items())


def _fixed(f: IsaxFsm) -> tuple[int, int]:
    """An ISAX's cycles without the memory latency (what balancing changes)."""
    return (f.latency.max_fixed, f.latency.min_fixed)


def _move_body(src: ModuleOp, dst: ModuleOp) -> None:
    """Replaces ``dst``'s contents by ``src``'s (callers hold ``dst``: it is changed in
    place)."""
    dst.body.detach_block(dst.body.block)
    dst.body.add_block(src.body.detach_block(src.body.block))


def isax_latencies(
    module: ModuleOp,
    clock_ns: float,
    mem_latency: int,
    lib: OperatorLibrary | None = None,
    bus_width: int = 32,
    share: bool = True,
    pipeline: str = "directive",
) -> dict[str, tuple[int, int]]:
    """ISAX name -> (min, max) cycles at memory latency ``mem_latency``, as in the reports.

    Schedules a clone of ``module`` (no RTL is generated), so callers keep their IR.
    """
    _, fsms = schedule_isaxs(
        module.clone(), clock_ns, lib or OperatorLibrary.load(), bus_width, share, pipeline
    )
    out = {}
    for f in fsms:
        lo, hi = f.reported.at(mem_latency)
        out[f.isax.sym_name.data] = (lo + 1, hi + 1)  # + the dispatch cycle
    return out


BUDGET_ROUNDS = 3
"""Searches under ``--area-budget`` (each from the last choice's own estimate)."""


def build_unit(
    module: ModuleOp,
    clock_ns: float,
    lib: OperatorLibrary,
    bus_width: int = 32,
    share: bool = True,
    pipeline: str = "directive",
    area_budget: AreaBudget | None = None,
    progress: Callable[[str], None] | None = None,
) -> Unit:
    """``area_budget``: choose the shared and sequential multipliers for the fewest
    cycles within it (``synth/budget.py``); ``unit.area_budget`` reports the choice."""
    from aquas.synth.area_model import estimate_unit
    from aquas.synth.sram import check_supported, inventory

    ext = find_extension(module)
    builder, fsms = schedule_isaxs(module, clock_ns, lib, bus_width, share, pipeline)
    check_supported(ext, bus_width)
    reports = builder.loop_reports

    def generate(b: FsmBuilder, f: list[IsaxFsm]) -> Unit:
        b.allocate_registers()
        b.choose_isax_operators(lib)
        b.choose_accumulator_adders(lib)
        # generated twice: the first records where each register is read and written,
        # from which the second pools registers of one ISAX whose values never meet
        local = call_local_registers(ext)
        first = UnitGenerator(ext, b, f, pooled={}, call_local=local)
        first.generate()
        pooled = b.pooled_registers(first.use, local)
        u = UnitGenerator(ext, b, f, pooled, local).generate()
        u.registerless = registerless_scratchpads(ext)
        b.loop_reports = reports
        u.loop_reports = loop_reports(b)
        u.balanced = set(builder.balanced)
        return u

    unit = generate(builder, fsms)
    est = estimate_unit(unit.module, unit.name, inventory(ext), lib)
    unit.area_estimate = est.as_dict()
    unit_default_estimate = round(est.total, 1)
    if area_budget is None:
        return unit
    if not share:
        raise AquasError(
            "--area-budget chooses shared multipliers: it needs sharing (no --no-share)"
        )
    from aquas.synth.budget import NO_FIT_HINT, fit
    from aquas.synth.timing import schedule_extension

    def schedule(config: ShareConfig) -> tuple[FsmBuilder, list[IsaxFsm]]:
        return schedule_extension(ext, clock_ns, lib, bus_width=bus_width, config=config)

    # the choice's estimate is the default's less the multipliers it changes; the unit
    # it generates may differ (a sequential multiplier's states and registers): while
    # its own estimate exceeds the budget, search again from it (a few rounds)
    ref, ref_est, start = (builder, fsms), est.total, None
    steps: list[str] = []
    # every unit generated: (its own estimate, the choice, the search's estimate of it)
    generated: list[tuple[float, str, float]] = [(est.total, "the default", est.total)]
    for _ in range(BUDGET_ROUNDS):
        try:
            chosen, report = fit(
                ext, ref, ref_est, area_budget, schedule, lib, progress, start, base_fsms=fsms
            )
        except AquasError as err:
            if len(generated) == 1:
                raise  # estimates from the default unit: the search's own diagnostic
            raise _no_fit_after_rounds(area_budget, generated, err.hint) from None
        steps += report["steps"]
        if chosen.builder is ref[0]:
            break
        unit = generate(chosen.builder, chosen.fsms)
        est = estimate_unit(unit.module, unit.name, inventory(ext), lib)
        unit.area_estimate = est.as_dict()
        generated.append((est.total, "; ".join(chosen.config.describe()), chosen.estimate_um2))
        if est.total <= area_budget.um2:
            break
        ref, ref_est, start = (chosen.builder, chosen.fsms), est.total, chosen.config
    else:
        # every round's choice generated a unit over the budget (its estimate by the
        # multipliers it changes was under it): never return one of them silently
        raise _no_fit_after_rounds(area_budget, generated, NO_FIT_HINT)
    report["steps"] = steps
    report["default_estimate_um2"] = unit_default_estimate
    report["final_estimate_um2"] = round(est.total, 1)
    if steps:
        report["why"] = f"the fastest choice found within the budget after {len(steps)} step(s)"
    unit.area_budget = report
    return unit


def _no_fit_after_rounds(
    budget: AreaBudget, generated: list[tuple[float, str, float]], hint: str | None
) -> AquasError:
    """The diagnostic when a later round of the search finds no choice, or when the
    last round's choice still generated a unit over the budget: the search prices only
    the multipliers a choice changes, not the states, registers and selects it adds, so a
    later round starts from a unit that may be larger than the default, and the smallest
    unit is named among those generated."""
    size, what, _ = min(generated)
    core = budget.core_um2
    tried = "; ".join(
        f"{c} was estimated at {e:,.0f} um^2 and its unit at {g:,.0f} um^2"
        for g, c, e in generated[1:]
    )
    return AquasError(
        f"no choice of shared and sequential multipliers fits an area budget of "
        f"{budget.fraction:g} x {budget.core} ({budget.um2:,.0f} um^2): the smallest unit "
        f"generated is {what}, {size:,.0f} um^2 ({100 * size / core:.1f} % of the core). "
        f"The search estimates a choice by the multipliers it changes; {tried}",
        hint=hint,
    )


def loop_reports(builder: FsmBuilder) -> dict[str, list[dict[str, Any]]]:
    """ISAX → its pipelining candidates (``synth/loop_pipeline.LoopReport``), each with
    ``kernel_states``: the states the kernel took in the state machine (the II achieved)."""
    latches = {
        id(st.next.loop.op): st.id - st.next.body + 1
        for st in builder.states
        if isinstance(st.next, LoopLatch)
    }
    out: dict[str, list[dict[str, Any]]] = {}
    for rep in builder.loop_reports:
        d = rep.as_dict()
        d["kernel_states"] = latches.get(id(rep.kernel), 0) if rep.kernel is not None else 0
        d["kernel_limit"] = ""
        if rep.kernel is not None and d["kernel_states"] > rep.ii:
            # a multi-cycle op is issued and read within one kernel iteration: the
            # modulo schedule chained it in a cycle, the binding then made it multi-cycle
            slow = Counter(
                (spec.key, spec.latency)
                for o in rep.kernel.body.block.ops
                if (spec := builder.multicycle.get(o)) is not None
            )
            d["kernel_limit"] = ", ".join(
                f"{n} op(s) on {key} taking {lat} cycles from issue to result"
                for (key, lat), n in sorted(slow.items())
            )
        out.setdefault(rep.isax, []).append(d)
    return out


REGISTERLESS = (
    "// Scratchpads not kept across calls (no element registers, or SRAM words not cleared): "
)
"""The header line listing ``Unit.registerless`` (read by ``synth.cosim``)."""


def header_comment(unit: Unit, clock_ns: float) -> str:
    """The module's protocol and its ISAXs, for the engineer reading the Verilog."""
    lines = [
        f"// {unit.name}: ISAX unit generated by aquas from extension spec",
        f"// Target clock: {clock_ns:g} ns. Interface: the canonical ISAX port (docs/isax-port.md),",
        f"//   memory master {unit.bus_width} bits wide.",
        "// - cmd (valid/ready, opcode/funct3/funct7, rs1, rs2): accepted only when idle;",
        "//   one instruction in flight; an unknown encoding answers rd = 0.",
        "// - rsp (valid/ready, rd): exactly one response per accepted command, in order.",
        "// - memory master: req (write, addr, size = log2 bytes per beat, len = beats - 1),",
        "//   wdata (data, strb, last), rsp (rdata, last); any latency and back-pressure;",
        "//   at most one request outstanding; byte lanes follow the address (little-endian).",
        "// - rst is synchronous, active high; state registers reset to their spec values;",
        "//   datapath registers (values, shared units, call-local scratchpads) have none.",
        "// Names: registers <isax>_<let>_q, <state>_q, <scratchpad>_<k>_q; datapath wires",
        "//   <isax>_<let>; FSM states are localparams S_IDLE, S_RESP, S_<isax>_<k>;",
        "//   `// <file>.isax:line:col` comments give the spec source of a line.",
        "// ISAXs (latency from command handshake to rsp_valid, L = memory latency):",
    ]
    if unit.registerless:
        lines.insert(-1, f"{REGISTERLESS}{', '.join(unit.registerless)}")
    if any(op.name == "hw.module.extern" for op in unit.module.ops):
        lines.insert(
            -1,
            "// SRAM scratchpads: one instance <scratchpad>_bank<b> per bank of the SRAM model\n"
            "//   at the end of this file (registered read port: data the cycle after a read).",
        )
    if unit.clear_cycles:
        lines.insert(
            -1,
            f"// After reset the unit zeroes the SRAM scratchpads kept across calls, one row a\n"
            f"//   cycle: cmd_ready stays low for {unit.clear_cycles} cycles.",
        )
    for f in unit.fsms:
        i = f.isax
        lat = f.reported
        form = f"{lat.min_fixed + 1} + {lat.min_mem}L"
        if (lat.min_fixed, lat.min_mem) != (lat.max_fixed, lat.max_mem):
            form += f" .. {lat.max_fixed + 1} + {lat.max_mem}L"
        lines.append(
            f"//   {i.sym_name.data:<20} opcode={i.opcode_value:#09b} funct3={i.funct3_value} "
            f"funct7={i.funct7_value:#09b} uses={','.join(i.used) or '-'} cycles={form}"
        )
        units = [s.units[o].key for s in unit.states if s.isax == i.sym_name.data for o in s.issues]
        if units:
            lines.append(
                f"//   {'':<20} {len(units)} operation(s) on the multi-cycle unit(s) "
                f"{', '.join(sorted(set(units)))}"
            )
        mine = [unit.state_names[s.id] for s in unit.states if s.isax == i.sym_name.data]
        if mine:
            span = mine[0] if len(mine) == 1 else f"{mine[0]} .. {mine[-1]}"
            lines.append(f"//   {'':<20} states {span}")
    return "\n".join(lines) + "\n"


# CIRCT passes before ExportVerilog. `canonicalize` runs with no rewrite pattern enabled
# (the label matches none): what remains is MLIR's greedy driver, i.e. every op's folder
# (`1'h1 ? a : b` -> `a`, `{32{x}} & 32'h0` -> `0`, ...) and removal of dead ops. CIRCT's
# comb canonicalization patterns would also flatten the balanced AND-OR trees into
# variadic ops, which ExportVerilog rebalances into unnamed `_GEN_*` wires.
PRE_EXPORT = (
    "builtin.module(hw.module(canonicalize{enable-patterns=aquas-fold-only},cse),lower-seq-to-sv)"
)
# One operator per Verilog expression: ExportVerilog would otherwise inline the balanced
# AND-OR trees into flat `a | b | c ...` chains, which Yosys (and any synthesis tool
# without rebalancing) maps as chains of depth N instead of log N. Every such wire is
# named by its op's `sv.namehint`.
LOWERING_OPTIONS = "maximumNumberOfTermsPerExpression=1,locationInfoStyle=plain"


def export_verilog(circt_text: str) -> str:
    """CIRCT text → SystemVerilog: CIRCT's folders, CSE, then ExportVerilog."""
    try:
        import circt
        from circt import passmanager
        from circt.ir import Context, Module, StringAttr
    except ImportError as e:
        import importlib.util

        # only when it is really absent: an import interrupted by Ctrl-C, or a broken
        # install, must surface as what it is
        if importlib.util.find_spec("circt") is not None:
            raise
        raise AquasError(
            "the circt Python package is missing", hint="run scripts/setup.sh (pip install circt)"
        ) from e
    with Context() as ctx:
        circt.register_dialects(ctx)
        m = Module.parse(circt_text)
        m.operation.attributes["circt.loweringOptions"] = StringAttr.get(LOWERING_OPTIONS)
        passmanager.PassManager.parse(PRE_EXPORT).run(m.operation)
        buf = io.StringIO()
        circt.export_verilog(m, buf)
    return buf.getvalue()


def synthesize(
    module: ModuleOp,
    out_dir: Path,
    clock_ns: float = 10.0,
    mem_latency: int = 4,
    lib: OperatorLibrary | None = None,
    extra: dict[str, dict[str, Any]] | None = None,
    bus_width: int = 32,
    share: bool = True,
    pipeline: str = "directive",
    area_budget: AreaBudget | None = None,
    progress: Callable[[str], None] | None = None,
) -> SynthResult:
    """``extra``: per ISAX, more keys for its JSON report (the interface plan)."""
    t0 = time.perf_counter()
    lib = lib or OperatorLibrary.load()
    ext_name = find_extension(module).sym_name.data
    from aquas.synth.sram import SramShape, inventory, is_sram, render_model

    unit = build_unit(module, clock_ns, lib, bus_width, share, pipeline, area_budget, progress)
    verilog = header_comment(unit, clock_ns) + export_verilog(unit.circt_text)
    ext = find_extension(module)
    shapes = dict.fromkeys(SramShape.of(s) for s in ext.scratchpads() if is_sram(s))
    for shape in shapes:
        verilog += "\n" + render_model(unit.name, shape)
    srams = inventory(ext)
    seconds = time.perf_counter() - t0
    out_dir.mkdir(parents=True, exist_ok=True)
    vpath = out_dir / f"{unit.name}.sv"
    reports = {
        f.isax.sym_name.data: isax_report(f, unit.states, clock_ns, mem_latency, bus_width)
        | {"pipelined_loops": unit.loop_reports.get(f.isax.sym_name.data, [])}
        | {"balanced_sums": f.isax.sym_name.data in unit.balanced}
        | (extra or {}).get(f.isax.sym_name.data, {})
        | ({"sram_scratchpads": srams} if srams else {})
        for f in unit.fsms
    }
    write_atomic(out_dir / f"{unit.name}.mlir", unit.circt_text)
    write_atomic(vpath, verilog)
    for name, rep in reports.items():
        write_atomic(out_dir / f"{name}.json", json.dumps(rep, indent=2) + "\n")
    return SynthResult(ext_name, unit, vpath, reports, seconds)


__all__ = [
    "SynthResult",
    "build_unit",
    "export_verilog",
    "isax_latencies",
    "schedule_isaxs",
    "synthesize",
]
