"""The synthesis flow: spec → prepared IR → state machines → CIRCT → Verilog + reports.

``synthesize(spec, clock_ns, out_dir)`` writes ``<ext>_isax_unit.sv``, the CIRCT input
(``.mlir``) and one JSON report per ISAX, all atomically, and returns a summary.
"""

from __future__ import annotations

import io
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Operation, OpResult

from aquas.cliutil import write_atomic
from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.interpreter import find_extension
from aquas.synth.fsm import FREE_OPS, MEM_OPS, FsmBuilder, IsaxFsm, mem_beats
from aquas.synth.oplib import CMPI_PREDICATE_NAMES, OperatorLibrary, arith_kind
from aquas.synth.prepare import prepare
from aquas.synth.rtlgen import Unit, UnitGenerator

IDLE_STATE, RESP_STATE = 0, 1
# Gate levels of every cycle reserved for what surrounds the chained datapath: the
# register-input select (an AND-OR tree over the register's writers, then a hold mux) and
# the state decode feeding it. Checked against Yosys' depth of every example unit.
OVERHEAD_LEVELS = 10


def _w(op: Operation) -> int:
    t = op.results[0].type if op.results else op.operands[0].type
    assert isinstance(t, IntegerType)
    return t.width.data


def _const_rhs(op: Operation) -> bool:
    if len(op.operands) < 2:
        return False
    v = op.operands[1]
    return isinstance(v, OpResult) and isinstance(v.owner, arith.ConstantOp)


def op_delay(lib: OperatorLibrary, op: Operation) -> float:
    """Combinational delay (ns) of one IR op in the generated datapath."""
    if isinstance(op, (*FREE_OPS, *MEM_OPS, aq.StateReadOp, aq.StateWriteOp, aq.WriteRdOp)):
        return 0.0
    if isinstance(op, aq.SpmReadOp | aq.SpmWriteOp):
        # element select: a mux tree over the elements, plus the index compare for writes
        from aquas.synth.fsm import spm_of

        spm = spm_of(op)
        levels = max(1, (spm.size - 1).bit_length())
        d = levels * lib.delay_ns("mux", spm.width)
        if isinstance(op, aq.SpmWriteOp):
            d = lib.delay_ns("icmp_eq", 32)
        return d
    name = op.name
    pred = None
    if isinstance(op, arith.CmpiOp):
        pred = CMPI_PREDICATE_NAMES[op.predicate.value.data]
    kind = arith_kind(name, pred, _const_rhs(op))
    width = _w(op) if not isinstance(op, arith.CmpiOp) else _width_of(op.lhs.type)
    d = lib.delay_ns(kind, width)
    if name in ("arith.divui", "arith.divsi", "arith.remui", "arith.remsi"):
        d += 2 * lib.delay_ns("mux", width)  # RISC-V corner-case selects
    if name in ("arith.shli", "arith.shrui", "arith.shrsi") and not _const_rhs(op):
        d += lib.delay_ns("mux", width)  # shift-out guard
    return d


def _width_of(t: Any) -> int:
    assert isinstance(t, IntegerType)
    return t.width.data


@dataclass
class SynthResult:
    extension: str
    unit: Unit
    verilog_path: Path
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0


def isax_report(
    fsm: IsaxFsm, states: list[Any], clock_ns: float, mem_latency: int
) -> dict[str, Any]:
    isax = fsm.isax
    mine = [s for s in states if s.isax == isax.sym_name.data]
    ops = list(isax.body.walk())
    lo, hi = fsm.latency.at(mem_latency)
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
        "latency": {
            "formula": "cycles = fixed + per_mem_latency * L (L = memory response latency)",
            "fixed_min": fsm.latency.min_fixed + 1,
            "fixed_max": fsm.latency.max_fixed + 1,
            "per_mem_latency_min": fsm.latency.min_mem,
            "per_mem_latency_max": fsm.latency.max_mem,
            "at_L": mem_latency,
            "cycles_min": lo,
            "cycles_max": hi,
            "note": "cycles from the command handshake to the first cycle with rsp_valid",
        },
        "interface_ops": iface,
        "memory_beats": sum(mem_beats(o) for o in ops if isinstance(o, MEM_OPS)),
        "clock_ns": clock_ns,
    }


def schedule_isaxs(
    module: ModuleOp, clock_ns: float, lib: OperatorLibrary
) -> tuple[FsmBuilder, list[IsaxFsm]]:
    """Prepare ``module`` in place and schedule every ISAX of its extension."""
    prepare(module)
    ext = find_extension(module)
    builder = FsmBuilder(
        clock_ns,
        lambda op: op_delay(lib, op),
        first_id=RESP_STATE + 1,
        overhead_ns=OVERHEAD_LEVELS * lib.ns_per_level,
    )
    fsms = []
    for isax in ext.isaxs():
        fsm = builder.build_isax(isax)
        builder.finish(RESP_STATE)
        if fsm.entry < 0:
            fsm.entry = RESP_STATE
        fsms.append(fsm)
    return builder, fsms


def isax_latencies(
    module: ModuleOp, clock_ns: float, mem_latency: int, lib: OperatorLibrary | None = None
) -> dict[str, tuple[int, int]]:
    """ISAX name -> (min, max) cycles at memory latency ``mem_latency``, as in the reports.

    Schedules a clone of ``module`` (no RTL is generated), so callers keep their IR.
    """
    _, fsms = schedule_isaxs(module.clone(), clock_ns, lib or OperatorLibrary.load())
    out = {}
    for f in fsms:
        lo, hi = f.latency.at(mem_latency)
        out[f.isax.sym_name.data] = (lo + 1, hi + 1)  # + the dispatch cycle
    return out


def build_unit(module: ModuleOp, clock_ns: float, lib: OperatorLibrary) -> Unit:
    ext = find_extension(module)
    builder, fsms = schedule_isaxs(module, clock_ns, lib)
    builder.allocate_registers()
    return UnitGenerator(ext, builder, fsms).generate()


def header_comment(unit: Unit, clock_ns: float) -> str:
    """The module's protocol and its ISAXs, for the engineer reading the Verilog."""
    lines = [
        f"// {unit.name}: ISAX unit generated by aquas from extension spec",
        f"// Target clock: {clock_ns:g} ns. Interface: the canonical ISAX port (docs/isax-port.md).",
        "// - cmd (valid/ready, opcode/funct3/funct7, rs1, rs2): accepted only when idle;",
        "//   one instruction in flight; an unknown encoding answers rd = 0.",
        "// - rsp (valid/ready, rd): exactly one response per accepted command, in order.",
        "// - memory master: req (write, addr, size = log2 bytes per beat, len = beats - 1),",
        "//   wdata (data, strb, last), rsp (rdata, last); any latency and back-pressure;",
        "//   at most one request outstanding; byte lanes follow the address (little-endian).",
        "// - rst is synchronous, active high; state registers reset to their spec values.",
        "// Names: registers <isax>_<let>_q, <state>_q, <scratchpad>_<k>_q; datapath wires",
        "//   <isax>_<let>; FSM states are localparams S_IDLE, S_RESP, S_<isax>_<k>;",
        "//   `// <file>.isax:line:col` comments give the spec source of a line.",
        "// ISAXs (latency from command handshake to rsp_valid, L = memory latency):",
    ]
    for f in unit.fsms:
        i = f.isax
        lat = f.latency
        form = f"{lat.min_fixed + 1} + {lat.min_mem}L"
        if (lat.min_fixed, lat.min_mem) != (lat.max_fixed, lat.max_mem):
            form += f" .. {lat.max_fixed + 1} + {lat.max_mem}L"
        lines.append(
            f"//   {i.sym_name.data:<20} opcode={i.opcode_value:#09b} funct3={i.funct3_value} "
            f"funct7={i.funct7_value:#09b} uses={','.join(i.used) or '-'} cycles={form}"
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
    except ImportError as e:  # pragma: no cover - setup installs circt
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
) -> SynthResult:
    t0 = time.perf_counter()
    lib = lib or OperatorLibrary.load()
    ext_name = find_extension(module).sym_name.data
    unit = build_unit(module, clock_ns, lib)
    verilog = header_comment(unit, clock_ns) + export_verilog(unit.circt_text)
    seconds = time.perf_counter() - t0
    out_dir.mkdir(parents=True, exist_ok=True)
    vpath = out_dir / f"{unit.name}.sv"
    reports = {
        f.isax.sym_name.data: isax_report(f, unit.states, clock_ns, mem_latency) for f in unit.fsms
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
