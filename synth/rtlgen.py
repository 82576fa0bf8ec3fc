"""RTL generation: the state machines of an extension → xDSL ``hw``/``comb``/``seq`` IR.

One module per extension, ``<ext>_isax_unit``, with the canonical port of
``docs/isax-port.md``. The IR is built with xDSL's ``hw``/``comb``/``seq`` dialects
(``synth/hwemit.py``) and handed to CIRCT as MLIR *text* (``synth/flow.py:export_verilog``):
the Python builder API differs between the circt wheels for Python 3.11 (1.62) and 3.13
(1.162), the textual forms parse on both. Scratchpads are flip-flop arrays (one register
per element, named ``<spm>_<k>_q``) whose port use per bank is limited by the scheduler.

Names: registers carry the spec's names (``<isax>_<let>_q``, ``<state>_q``,
``<spm>_<k>_q``), datapath wires ``<isax>_<let>`` (or the op's kind when the spec gives no
name), FSM states are ``localparam`` constants (``S_IDLE``, ``S_RESP``,
``S_<isax>_<k>``), and every op carries the ``file.isax:line:col`` of its spec source.
"""

from __future__ import annotations

import io
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, cast

from xdsl.dialects import arith, hw, seq
from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    ModuleOp,
    StringAttr,
    UnknownLoc,
    i1,
)
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue, TypeAttribute
from xdsl.printer import Printer

from aquas.dialects import aquas as aq
from aquas.dialects.aquas import constant_value
from aquas.dialects.linear import linear_form
from aquas.intops import BY_ARITH, PREDICATES
from aquas.synth.binding import Binding, SharedUnits, emit_mul, square
from aquas.synth.fsm import (
    WIDENING_OPS,
    Branch,
    FsmBuilder,
    Goto,
    IsaxFsm,
    LoopInfo,
    LoopLatch,
    RegisterUse,
    State,
    bank_row,
    cleared_srams,
    elem_bytes,
    index_only,
    op_error,
    resident_states,
    spm_banks,
    spm_of,
)
from aquas.synth.hwemit import HwBuilder, basename_loc, width
from aquas.synth.multicycle import MultiCycleUnits
from aquas.synth.sram import SramBanks, SramShape


def in_ports(bus_width: int = 32) -> list[tuple[str, TypeAttribute]]:
    """The unit's input ports; the memory master's read data is ``bus_width`` bits."""
    return [(n, IntegerType(bus_width) if n == "mem_rsp_rdata" else t) for n, t in IN_PORTS]


IN_PORTS: list[tuple[str, TypeAttribute]] = [
    ("clk", seq.clock),
    ("rst", i1),
    ("cmd_valid", i1),
    ("cmd_opcode", IntegerType(7)),
    ("cmd_funct3", IntegerType(3)),
    ("cmd_funct7", IntegerType(7)),
    ("cmd_rs1", IntegerType(32)),
    ("cmd_rs2", IntegerType(32)),
    ("rsp_ready", i1),
    ("mem_req_ready", i1),
    ("mem_wdata_ready", i1),
    ("mem_rsp_valid", i1),
    ("mem_rsp_rdata", IntegerType(32)),
    ("mem_rsp_last", i1),
]


SNOOP_PORTS: list[tuple[str, TypeAttribute]] = [
    ("snoop_valid", i1),
    ("snoop_addr", IntegerType(32)),
]
"""Inputs of a unit that keeps scratchpads resident: a beat was written to RAM, by any
master, at this byte address (``aquas_mem_ctrl``'s snoop port)."""


@dataclass
class Unit:
    """The generated unit: the ``hw.module`` (in a ``builtin.module``) plus what the
    reports need."""

    name: str
    module: ModuleOp
    fsms: list[IsaxFsm]
    states: list[State]
    state_bits: int
    registers: dict[str, int] = field(default_factory=dict)  # name → width
    state_names: dict[int, str] = field(default_factory=dict)  # state id → localparam
    bus_width: int = 32  # the memory master's data width
    binding: Binding = field(default_factory=Binding)  # the shared multipliers
    adders: Binding = field(default_factory=Binding)  # binding.accumulator_adders
    # ISAX → its loop-pipelining reports (synth/flow.loop_reports)
    loop_reports: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # ISAXs whose sums were rebuilt as trees (synth/balance.py), where that saved cycles
    balanced: set[str] = field(default_factory=set)
    # the estimated area (synth/area_model.py) and, under --area-budget, what was chosen
    area_estimate: dict[str, Any] = field(default_factory=dict)
    area_budget: dict[str, Any] | None = None
    # scratchpads not kept across calls (fsm.registerless_scratchpads: register ones whose
    # elements may have no register of their own, SRAM ones not cleared after reset),
    # listed in the header for the test benches
    registerless: list[str] = field(default_factory=list)
    # cycles after reset while the SRAM scratchpads kept across calls are zeroed
    # (UnitGenerator.clear_srams): cmd_ready stays low
    clear_cycles: int = 0

    _text: str = ""

    @property
    def circt_text(self) -> str:
        """The module as MLIR text with source locations, the form CIRCT parses."""
        if not self._text:
            self._text = hw_text(self.module)
        return self._text


class _LocPrinter(Printer):
    """xDSL's printer with source locations, and a fast path for plain string literals
    (xDSL escapes them byte by byte; a unit has tens of thousands of file names in its
    locations and name hints)."""

    def print_string_literal(self, string: str) -> None:
        if string.isascii() and string.isprintable() and '"' not in string and "\\" not in string:
            self.print_string(f'"{string}"')
        else:
            super().print_string_literal(string)


# xDSL prints no location after a port in the ``hw.module`` header, and CIRCT's parser
# then gives each port the position of the text itself (``// -:2:33`` in the Verilog):
# ports get an explicit ``loc(unknown)``, which CIRCT accepts there.
_PORT_END = re.compile(r"(: (?:!seq\.clock|i\d+))(?=, |\) )")


def hw_text(module: ModuleOp) -> str:
    """``module`` as MLIR text with source locations, the form CIRCT parses."""
    buf = io.StringIO()
    _LocPrinter(stream=buf, print_debuginfo=True).print_op(module)
    lines = buf.getvalue().split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith("hw.module @"):
            lines[i] = _PORT_END.sub(r"\1 loc(unknown)", line)
    return "\n".join(lines) + "\n"


def spec_loc(op: Operation) -> LocationAttr:
    """The op's spec location; for an op xDSL's canonicalization patterns created (they
    leave the location unknown, e.g. a reassociated multiply by a constant), that of the
    first user that has one: the spec expression the value was folded into."""
    loc = basename_loc(op.location)
    if isinstance(loc, UnknownLoc):
        for res in op.results:
            for use in res.uses:
                user_loc = basename_loc(use.operation.location)
                if not isinstance(user_loc, UnknownLoc):
                    return user_loc
    return loc


CLEAR_REG = "sram_clear_q"
"""Set by reset while the SRAM scratchpads kept across calls are being zeroed
(:meth:`UnitGenerator.clear_srams`)."""
CLEAR_ROW_REG = "sram_clear_row_q"


class UnitGenerator:
    """Generates the unit's ``hw`` IR. ``pooled``: register name -> the flip-flop row it
    shares (``FsmBuilder.pooled_registers``; empty: a register per name).
    ``call_local``: the element registers of call-local scratchpads
    (``fsm.call_local_registers``), which get no reset. While
    generating, ``use`` records where each value register is read and written, from
    which a second generation can pool registers of one ISAX too (``flow.build_unit``)."""

    def __init__(
        self,
        ext: aq.ExtensionOp,
        builder: FsmBuilder,
        fsms: list[IsaxFsm],
        pooled: dict[str, str],
        call_local: Collection[str],
    ):
        self.ext = ext
        self.b = builder
        self.fsms = fsms
        self.name = f"{ext.sym_name.data}_isax_unit"
        self.bus_width = builder.bus_width
        self.in_ports = in_ports(self.bus_width)
        # wait states of bursts whose scratchpad stays resident across calls
        # (aquas-interface-resident): the unit then snoops RAM writes (docs/isax-port.md)
        self.resident = resident_states(builder.states, self.bus_width)
        if self.resident:
            self.in_ports += SNOOP_PORTS
        self.block = Block(arg_types=[t for _, t in self.in_ports])
        self.port: dict[str, SSAValue] = {}
        for arg, (pname, _) in zip(self.block.args, self.in_ports, strict=True):
            arg.name_hint = pname
            self.port[pname] = arg
        self.h = HwBuilder(self.block, self.port["clk"], self.port["rst"])
        self.regs: dict[str, int] = {}
        self.reg_sources: dict[str, list[tuple[SSAValue, SSAValue]]] = {}
        self.wires: dict[tuple[SSAValue, int], SSAValue] = {}
        # stand-ins for the data of carried SRAM reads used before their read's state
        self.carried_ph: dict[Operation, hw.ConstantOp] = {}
        self.is_state: dict[int, SSAValue] = {}
        self.state_const: dict[int, SSAValue] = {}
        self.state_names: dict[int, str] = {}
        self.spm = {p.sym_name.data: p for p in ext.scratchpads()}
        self.state_regs = {s.sym_name.data: s for s in ext.states()}
        self.spm_writes: dict[str, list[tuple[SSAValue, SSAValue, SSAValue, int | None]]] = {}
        self.sram = SramBanks(self.h, self.name, self.spm)
        self.cleared = cleared_srams(ext)
        # the deepest bank of those: the clearing takes as many cycles as it has words
        self.clear_shape = max(
            (SramShape.of(s) for s in self.cleared), key=lambda x: x.depth, default=None
        )
        # ports of an SRAM bank taken so far in a state: (state, scratchpad, bank) -> count
        self.sram_ports_used: dict[tuple[int, str, int], int] = {}
        self.pooled = pooled
        # registers without a reset: the datapath's value registers and the element
        # registers of call-local scratchpads (pooled or not). Each is written in its
        # ISAX's call before any state of the call reads it (a value is defined before its
        # uses, loop and branch registers are set by the states entering them, a
        # call-local scratchpad is filled before it is read: FsmBuilder.pooled_registers),
        # so its value after reset is never seen; co-simulation with random initial
        # values checks that (synth/cosim.py, random_init; tests/test_unreset.py).
        local = [*builder.value_regs.values(), *call_local]
        self.unreset = {*local, *(pooled.get(r, r) for r in local)}
        self.use = RegisterUse()
        self.ctx: State | None = None  # the state whose logic is being generated
        self.enable_state: dict[SSAValue, int] = {}  # a state's enable -> its id
        # streamed burst reads (aquas.stream): window state -> its burst's wait state; per
        # window state the stand-in of its gate (it runs once the elements it reads have
        # arrived), the indices it reads the streamed scratchpad at, and whether it is
        # present (the state register holds it; ``is_state`` is present and gated)
        self.stream_of: dict[int, State] = {
            sid: w for w in builder.states if w.stream is not None for sid in w.stream.states
        }
        self.gate_ph: dict[int, hw.ConstantOp] = {}
        self.gates: dict[int, SSAValue] = {}
        # per window state: linear terms of a read's index -> (its constant, its wire); of
        # reads differing only by a constant the highest element gates for all
        self.stream_reads: dict[int, dict[Any, tuple[int, SSAValue]]] = {}
        self.stream_banks: dict[int, set[int]] = {}  # SRAM banks a window state reads
        self.present: dict[int, SSAValue] = {}
        # per state selecting a shared unit's operands: the name of the flip-flop holding
        # ``state_q == sid`` (:meth:`selects`)
        self.select_flags: dict[int, str] = {}
        self.stream_block: dict[int, SSAValue] = {}  # wait state -> a beat must wait
        self.reg_locs = self._register_locations()
        self.h.reserved.update(self.reg_locs)
        # the shared multi-cycle units (sequential dividers), one instance per width
        read = {
            op: builder.multicycle[op]
            for st in builder.states
            for op in st.completes
            if not builder.multicycle[op].pipelined
        }
        self.mc = MultiCycleUnits(self.h, self.name, read)
        # the shared multipliers (synth/binding.py)
        self.shared = SharedUnits(self.h, builder.binding or Binding())
        # the adders of a multiplier's products (binding.accumulator_adders)
        self.adders = SharedUnits(self.h, builder.adders)
        # squarers and constant multiplies of different ISAXs on one operator
        # (binding.isax_operators)
        self.xops = builder.isax_operators
        self.xsq_in: dict[int, dict[str, SSAValue]] = {}
        self.xcm_in: dict[int, list[tuple[SSAValue, SSAValue]]] = {}  # (presence, operand)
        self.xop_ph: dict[int, hw.ConstantOp] = {}
        self.xop_out: dict[int, SSAValue] = {}
        self.is_isax: dict[str, SSAValue] = {}  # the command decodes as this ISAX
        self.cmd_fire: SSAValue | None = None

    def _register_locations(self) -> dict[str, LocationAttr]:
        """Register name → the spec location it comes from (a let, a loop, a state)."""
        locs: dict[str, LocationAttr] = {}
        for v, rname in self.b.value_regs.items():
            owner = v.owner if isinstance(v, OpResult) else v.block.parent_op()
            rname = self.pooled.get(rname, rname)  # a pooled register: its first value's
            if rname not in locs:
                locs[rname] = basename_loc(owner.location if owner is not None else None)
        for s in self.state_regs.values():
            locs[f"{s.sym_name.data}_q"] = basename_loc(s.location)
        for p in self.spm.values():
            if p.sym_name.data in self.sram or p.sym_name.data in self.b.forwarded:
                continue
            for k in range(p.size):
                locs[f"{p.sym_name.data}_{k}_q"] = basename_loc(p.location)
        return locs

    # -- registers ---------------------------------------------------------------------

    def reg(self, name: str, w: int) -> SSAValue:
        name = self.pooled.get(name, name)
        if name not in self.regs:
            self.regs[name] = w
            self.reg_sources[name] = []
        return self.h.reg(name, w, self.reset_value(name), self.reg_locs.get(name))

    def write(self, name: str, enable: SSAValue, value: SSAValue) -> None:
        sid = self.enable_state.get(enable)
        if sid is not None:
            self.use.kills.setdefault(name, set()).add(sid)
        elif self.ctx is None:
            self.use.pinned.add(name)
        elif self.ctx.wait is not None:
            # a beat's write: the wait state is left only after it
            self.use.kills.setdefault(name, set()).add(self.ctx.id)
        else:
            self.use.partial.setdefault(name, set()).add(self.ctx.id)
        self.reg_sources[self.pooled.get(name, name)].append((enable, value))

    def read(self, name: str, w: int, sid: int) -> SSAValue:
        """Value register ``name`` as read in state ``sid``."""
        self.use.reads.setdefault(name, set()).add(sid)
        return self.reg(name, w)

    def read_value(self, v: SSAValue, sid: int) -> SSAValue:
        """Value ``v`` read from its register in state ``sid`` (zero-extended from a
        narrower loop counter, ``FsmBuilder.reg_bits``)."""
        name, w = self.b.value_regs[v], width(v)
        bits = self.b.reg_bits.get(name, w)
        q = self.read(name, bits, sid)
        return q if bits == w else self.h.zext(q, w, f"{name[:-2]}_ext")

    def write_value(self, name: str, enable: SSAValue, v: SSAValue) -> None:
        """Writes ``v`` to value register ``name``, truncated to a narrower loop counter."""
        bits = self.b.reg_bits.get(name, width(v))
        self.reg(name, bits)
        if bits < width(v):
            v = self.h.extract(v, 0, bits, f"{name[:-2]}_init")
        self.write(name, enable, v)

    def reset_value(self, rname: str) -> int | None:
        """The register's value after reset: a state register's initial value, none for
        a datapath register (:attr:`unreset`), else 0."""
        for s in self.state_regs.values():
            if rname == f"{s.sym_name.data}_q":
                return int(s.init.value.data) & ((1 << s.width) - 1)
        if rname == CLEAR_REG:
            return 1
        return None if rname in self.unreset else 0

    # -- values ------------------------------------------------------------------------

    def ref(self, v: SSAValue, st: State) -> SSAValue:
        v = self.b.resolve(v)
        if (v, st.id) in self.b.bypass and (v, st.id) not in self.wires:
            # a value carried in an SRAM read port (or a product in flight): in the loop's
            # first state (the state the product arrives in), the port's data (the unit's
            # result) from the second iteration on, the register before that; in the state
            # the loop exits into, the port's data
            op, info = self.b.bypass[(v, st.id)]
            data = self.carried_data(op)
            if isinstance(v, BlockArgument):
                reg = self.read_value(v, st.id)
                run = self.reg(info.run_reg, 1)
                data = self.h.mux(run, data, reg, f"{self.b.value_regs[v][:-2]}_port")
            self.wires[(v, st.id)] = data
        if (v, st.id) in self.wires:  # computed in this state (also again, by ref_at)
            return self.wires[(v, st.id)]
        w = width(v)
        if isinstance(v, OpResult):
            owner = v.owner
            if isinstance(owner, arith.ConstantOp):
                attr = owner.value
                assert isinstance(attr, IntegerAttr)
                return self.h.const(int(attr.value.data), w)
            if isinstance(owner, aq.ReadRs1Op):
                return self.reg("rs1_q", 32)
            if isinstance(owner, aq.ReadRs2Op):
                return self.reg("rs2_q", 32)
            home = self.b.def_state.get(owner)
            if home == st.id and not isinstance(owner, aq.LoadOp):
                return self.wires[(v, st.id)]
        if v in self.b.value_regs:
            return self.read_value(v, st.id)
        if isinstance(v, OpResult) and isinstance(v.owner, WIDENING_OPS):
            # read after its home state: extended again here from its held operand
            x = self.ref(v.owner.operands[0], st)
            hint = f"{st.isax}_{v.name_hint or 'ext'}"
            ext = self.h.sext if isinstance(v.owner, arith.ExtSIOp) else self.h.zext
            self.wires[(v, st.id)] = ext(x, w, hint)
            return self.wires[(v, st.id)]
        if isinstance(v, BlockArgument):
            raise AssertionError(f"unmapped block argument {v}")
        raise AssertionError(f"value without a home: {v} in state {st.id}")

    def ref_at(self, v: SSAValue, st: State) -> SSAValue:
        """``v`` in the earlier state ``st`` of a run (a request sent ahead): index
        arithmetic whose home is a later state is computed again here
        (``FsmBuilder.formable`` has checked that its leaves hold their values in ``st``)."""
        v = self.b.resolve(v)
        if isinstance(v, OpResult) and (v, st.id) not in self.wires:
            home = self.b.def_state.get(v.owner)
            if home is not None and home > st.id:
                for x in v.owner.operands:
                    self.ref_at(x, st)
                self.comb_op(v.owner, st)
        return self.ref(v, st)

    # -- top level ---------------------------------------------------------------------

    def clear_srams(self) -> SSAValue | None:
        """After reset, zeroes every word of the SRAM scratchpads kept across calls
        (``fsm.cleared_srams``): the spec starts them at zero, and an SRAM macro takes no
        reset. One row per cycle on port 0 of all their banks at once, while the unit is
        idle and refuses commands (``cmd_ready`` low) for as many cycles as the deepest
        bank has words. Returns the clearing flag, or None when nothing is cleared."""
        if self.clear_shape is None:
            return None
        h = self.h
        depth, bits = self.clear_shape.depth, self.clear_shape.abits
        on = self.reg(CLEAR_REG, 1)
        row = self.reg(CLEAR_ROW_REG, bits)
        last = h.icmp("eq", row, h.const(depth - 1, bits), "sram_clear_last")
        self.write(CLEAR_ROW_REG, on, h.binop("comb.add", row, h.const(1, bits), "sram_clear_next"))
        self.write(CLEAR_REG, h.and_(on, last, hint="sram_clear_done"), h.const(0, 1))
        for spm in self.cleared:
            name, shape = spm.sym_name.data, SramShape.of(spm)
            en = on
            if shape.depth < depth and shape.depth != 1 << shape.abits:
                # rows past a shallower bank's last word would address no word of it
                inside = h.icmp("ult", row, h.const(shape.depth, bits), f"{name}_clear_in")
                en = h.and_(on, inside, hint=f"{name}_clear_en")
            zero = h.const(0, shape.width)
            for b in range(spm.factor_value):
                self.sram.access(name, [b], 0, en, None, zero, f"{name}_clear", row=row)
        return on

    def state_value(self, sid: int) -> SSAValue:
        return self.state_const[sid]

    def name_states(self, sbits: int) -> None:
        """One ``localparam`` per state: S_IDLE, S_RESP, S_<isax>_<k> (k counts the
        ISAX's states in creation order)."""
        names = {0: "S_IDLE", 1: "S_RESP"}
        per_isax: dict[str, int] = {}
        for st in self.b.states:
            k = per_isax.get(st.isax, 0)
            per_isax[st.isax] = k + 1
            names[st.id] = f"S_{st.isax}_{k}"
        for sid in sorted(names):
            self.state_const[sid] = self.h.param(names[sid], sid, sbits)
        self.state_names = names

    def generate(self) -> Unit:
        h = self.h
        n_states = self.b.next_id  # ids 0 (idle) and 1 (respond) are fixed
        sbits = max(1, (n_states - 1).bit_length())
        self.name_states(sbits)
        st_q = self.reg("state_q", sbits)
        for sid, sname in self.state_names.items():
            self.is_state[sid] = h.icmp("eq", st_q, self.state_const[sid], f"in_{sname}")
            if sid in self.stream_of:
                # a window state runs (its writes, reads and issues) only when its gate
                # opens (``stream_gates``)
                self.present[sid] = self.is_state[sid]
                ph = self.gate_ph[sid] = hw.ConstantOp(1, 1)
                h.block.add_op(ph)
                self.is_state[sid] = h.and_(self.present[sid], ph.result, hint=f"run_{sname}")
        self.enable_state = {v: sid for sid, v in self.is_state.items() if sid > 1}
        idle, resp = self.is_state[0], self.is_state[1]
        clearing = self.clear_srams()
        ready = idle if clearing is None else h.and_(idle, h.not_(clearing), hint="ready")

        cmd_fire = self.cmd_fire = h.and_(self.port["cmd_valid"], ready, hint="cmd_fire")
        self.reg("rs1_q", 32)
        self.reg("rs2_q", 32)
        self.write("rs1_q", cmd_fire, self.port["cmd_rs1"])
        self.write("rs2_q", cmd_fire, self.port["cmd_rs2"])
        self.reg("rd_q", 32)
        self.write("rd_q", cmd_fire, h.const(0, 32))

        # decode: first matching ISAX, unknown encodings answer rd = 0 at once
        dispatch = self.state_value(1)
        for fsm in reversed(self.fsms):
            isax = fsm.isax
            iname = isax.sym_name.data
            h.loc = basename_loc(isax.location)
            fields = (
                ("opcode", isax.opcode_value, 7),
                ("funct3", isax.funct3_value, 3),
                ("funct7", isax.funct7_value, 7),
            )
            m = h.and_(
                *(
                    h.icmp("eq", self.port[f"cmd_{f}"], h.const(v, w), f"{iname}_{f}")
                    for f, v, w in fields
                ),
                hint=f"is_{iname}",
            )
            target = fsm.entry if fsm.entry >= 0 else 1
            dispatch = h.mux(m, self.state_value(target), dispatch, f"go_{iname}")
            self.is_isax[iname] = m
        h.loc = basename_loc(None)
        idle_next = h.mux(cmd_fire, dispatch, st_q, "idle_next")
        resp_next = h.mux(self.port["rsp_ready"], self.state_value(0), st_q, "resp_next")
        next_by_state: dict[int, SSAValue] = {0: idle_next, 1: resp_next}

        # memory engine registers
        from aquas.synth.memengine import MemEngine

        mem = MemEngine(self, self.reg("mem_phase_q", 2), self.reg("mem_beat_q", 9))

        for st in self.b.states:
            self.ctx = st
            self.state_datapath(st)
        self.ctx = None
        self.carried_loops()
        stalls: list[SSAValue] = []  # a wait state still waiting: the FSM holds
        registered = bool(self.shared.binding.registered)
        for sid, gate in self.stream_gates(mem).items():
            if registered:
                stalls.append(h.and_(self.present[sid], h.not_(gate), hint=None))
        for st in self.b.states:
            self.ctx = st
            nxt = self.transition(st)
            if st.id in self.stream_of:
                nxt = h.mux(self.gates[st.id], nxt, st_q, f"{self.state_names[st.id]}_hold")
            if st.wait is not None:
                done = mem.wait_state(st)
                h.loc = basename_loc(None)
                nxt = h.mux(done, nxt, st_q, f"{self.state_names[st.id]}_wait")
                if registered:
                    name = self.state_names[st.id]
                    stall = h.and_(self.is_state[st.id], h.not_(done), hint=f"{name}_stall")
                    stalls.append(stall)
            next_by_state[st.id] = nxt
        self.ctx = None
        mem.finish()

        # state register: select the next state by the current one
        items = [next_by_state.get(i, self.state_value(0)) for i in range(1 << sbits)]
        state_next = h.select_tree(st_q, items, "state_next")
        self.write("state_q", h.const(1, 1), state_next)
        self.select_flags_next(state_next)

        self.scratchpad_registers()
        self.state_registers()
        self.shared_operators()
        sub_modules = self.mc.finish()
        # registered shared units advance with the state machine, which a wait state holds
        advance = h.not_(h.or_tree(stalls, 1, "stall"), "advance") if registered else h.const(1, 1)
        self.shared.finish(advance)
        self.adders.finish(advance)

        outputs: list[tuple[str, SSAValue]] = [
            ("cmd_ready", ready),
            ("rsp_valid", resp),
            ("rsp_rd", self.reg("rd_q", 32)),
            *mem.outputs(),
        ]
        for rname in self.regs:
            # a register's write enables are mutually exclusive: they come from different
            # states, or from exclusive phases/halves of one wait state
            h.loc = self.reg_locs.get(rname, basename_loc(None))
            cur = h.regs[rname].data
            h.drive(rname, h.onehot_select(self.reg_sources[rname], cur, f"{rname}_n"))
        # last: the banks' read data stand-ins are replaced by the instances' outputs
        externs = self.sram.finish()
        outputs = [(n, self.sram.resolved(v)) for n, v in outputs]
        self.block.add_op(hw.OutputOp([v for _, v in outputs]))
        ports = [
            hw.ModulePort(StringAttr(n), t, hw.DirectionAttr(hw.Direction.INPUT))
            for n, t in self.in_ports
        ] + [
            hw.ModulePort(
                StringAttr(n), cast(TypeAttribute, v.type), hw.DirectionAttr(hw.Direction.OUTPUT)
            )
            for n, v in outputs
        ]
        mod = hw.HWModuleOp(
            StringAttr(self.name), hw.ModuleType(ArrayAttr(ports)), Region(self.block)
        )
        mod.location = basename_loc(self.ext.location)
        top = ModuleOp([*sub_modules, *externs, mod])
        return Unit(
            self.name,
            top,
            self.fsms,
            self.b.states,
            sbits,
            dict(self.regs),
            self.state_names,
            self.bus_width,
            self.shared.binding,
            adders=self.adders.binding,
            clear_cycles=self.clear_shape.depth if self.clear_shape else 0,
        )

    # -- per-state datapath ------------------------------------------------------------

    def state_datapath(self, st: State) -> None:
        h = self.h
        en = self.is_state[st.id]
        for op in st.completes:  # a multi-cycle op's result, read from its unit
            if op in self.shared:  # a registered shared multiplier's result register
                self.define(op, st.id, self.shared.result(op))
                continue
            self.define(op, st.id, self.mc.result(self.b.multicycle[op], op))
        for op in st.ops:
            h.loc = spec_loc(op)
            self.comb_op(op, st)
        for op in st.issues:  # after the datapath computing their operands
            h.loc = spec_loc(op)
            a, b = self.ref(op.operands[0], st), self.ref(op.operands[1], st)
            if op in self.shared:
                self.shared.issue(op, self.selects(st.id), a, b)
                continue
            self.mc.issue(self.b.multicycle[op], op, en, a, b)
        for op in [*st.ops, *st.completes]:
            # an SRAM read's value is there in the cycle after the read (a multi-cycle
            # op's in the state that reads it from its unit: this one)
            home = self.b.def_state.get(op, st.id)
            for res in op.results:
                if res in self.b.value_regs and not isinstance(op, aq.LoadOp):
                    rn = self.b.value_regs[res]
                    self.reg(rn, width(res))
                    self.write(rn, self.is_state[home], self.wires[(res, home)])
        for rn, v in st.writes:
            self.write_value(rn, en, self.ref(v, st))
        for info in st.latches:
            h.loc = basename_loc(info.op.location)
            iv = self.read(info.iv_reg, info.bits, st.id)
            self.write(
                info.iv_reg,
                en,
                h.binop("comb.add", iv, h.const(info.step, info.bits), f"{info.iv_reg[:-2]}_inc"),
            )

    def transition(self, st: State) -> SSAValue:
        h = self.h
        t = st.next
        h.loc = basename_loc(None)
        sname = self.state_names[st.id]
        if isinstance(t, Goto):
            return self.state_value(t.target)
        if isinstance(t, Branch):
            c = self.ref(t.cond, st)
            h.loc = basename_loc(t.cond.owner.location if isinstance(t.cond, OpResult) else None)
            return h.mux(
                c, self.state_value(t.if_true), self.state_value(t.if_false), f"{sname}_br"
            )
        assert isinstance(t, LoopLatch)
        more = self.loop_more(t.loop, st)
        return h.mux(more, self.state_value(t.body), self.state_value(t.exit), f"{sname}_loop")

    def loop_more(self, info: LoopInfo, st: State) -> SSAValue:
        """In the latch state ``st`` of loop ``info``: whether it iterates again."""
        h = self.h
        h.loc = basename_loc(info.op.location)
        iv = self.read(info.iv_reg, info.bits, st.id)
        base = info.iv_reg[:-2]  # without "_q"
        inc = h.binop("comb.add", iv, h.const(info.step, info.bits), f"{base}_next")
        return h.icmp("slt", inc, h.const(info.ub, info.bits), f"{base}_more")

    # -- streamed burst reads (aquas.stream, FsmBuilder.mark_stream) -----------------------

    def selects(self, sid: int) -> SSAValue:
        """What selects state ``sid``'s operands at a shared unit: its presence, not its
        gate (a window state's gate, an index compare, would otherwise lie in front of
        the multiply). A present state that does not run writes nothing, and a registered
        unit loads only when the state machine advances.

        The presence is a flip-flop loaded with ``state_next == sid`` (:meth:`select_flags_next`),
        so it equals ``state_q == sid`` in every cycle without the decode: on OSU018 the
        compare of a 7-bit state and its fan-out buffers take about 0.9 ns in front of
        the select, which the scheduler's select delay (``binding.select_ns``) does not
        count. The compare moves to the end of the cycle, after the next state."""
        name = self.select_flags.setdefault(sid, f"{self.state_names[sid].lower()}_sel_q")
        return self.h.reg(name, 1, 0)  # reset: S_IDLE

    def select_flags_next(self, state_next: SSAValue) -> None:
        """Loads every select flag (:meth:`selects`) from the next state."""
        for sid, name in sorted(self.select_flags.items()):
            nxt = self.h.icmp("eq", state_next, self.state_const[sid], f"{name[:-2]}_n")
            self.h.drive(name, nxt)

    def stream_gates(self, mem: Any) -> dict[int, SSAValue]:
        """The gate of every window state of a streamed burst read, replacing its stand-in:
        while the burst's beats are still arriving (``<pre>_stream_q``), the state runs only
        when each element of the burst it reads has arrived (its beat is below the beat
        counter), and a state that may leave the window only after the last beat. Records,
        per burst, whether a state reading its SRAM scratchpad runs this cycle (a beat
        then waits: the banks' port 0 is taken). Returns the gates."""
        h = self.h
        for w in {id(w): w for w in self.stream_of.values()}.values():
            op, win = w.wait, w.stream
            assert isinstance(op, aq.BurstReadOp) and win is not None
            pre = self.state_names[w.id][2:]
            h.loc = basename_loc(op.location)
            streaming = self.reg(f"{pre}_stream_q", 1)
            first = constant_value(op.offset)
            assert first is not None
            eb, bb = elem_bytes(op), self.bus_width // 8
            per, n = bb // eb, op.length_value
            # the compares are as narrow as the scratchpad's indices (an index of it is
            # below its size; one bit more keeps those before the burst apart from those
            # after it): they sit in front of every enable of the window's states
            k = spm_of(op).size.bit_length() + 1
            wk = max(k, 9)
            beat_q = h.zext(mem.beat_q, wk, f"{pre}_got")
            log2 = (per - 1).bit_length()
            runs: list[SSAValue] = []
            bank = mem.stream_bank(w, pre) if win.cyclic else None
            for sid in sorted(win.states):
                st = self.b.state(sid)
                sname = self.state_names[sid]
                ok: list[SSAValue] = []
                for j, (_, idx) in enumerate(self.stream_reads.get(sid, {}).values()):
                    hint = f"{sname}_need{j}"
                    low = h.zext(h.extract(idx, 0, k, f"{hint}_low"), wk)
                    rel = h.binop("comb.sub", low, h.const(first, wk), f"{hint}_rel")
                    rel = h.zext(h.extract(rel, 0, k, None), wk, f"{hint}_relk")
                    outside = h.icmp("uge", rel, h.const(n, wk), f"{hint}_outside")
                    if per > 1:  # elements before the burst's first in its first beat
                        lanes = h.extract(
                            mem.stream_skip(w, pre), (eb - 1).bit_length(), log2, f"{hint}_lanes"
                        )
                        skip = h.zext(lanes, wk, f"{hint}_skip")
                        at = h.binop("comb.add", rel, skip, f"{hint}_slot")
                        rel = h.binop("comb.shru", at, h.const(log2, wk), f"{hint}_beat")
                    have = h.icmp("ult", rel, beat_q, f"{hint}_have")
                    ok.append(h.binop("comb.or", outside, have, f"{hint}_ok"))
                # a window that reads the burst's last element has all beats in before it
                # can leave: no gate on leaving then
                leaving = None if win.drained else self.leaves(st, win.states)
                if leaving is not None:
                    ok.append(h.not_(leaving, f"{sname}_stays"))
                gate = (
                    h.binop("comb.or", h.not_(streaming), h.and_(*ok), f"{sname}_gate")
                    if ok
                    else h.const(1, 1)
                )
                ph = self.gate_ph.pop(sid)
                ph.results[0].replace_all_uses_with(gate)
                ph.detach()
                ph.erase()
                self.gates[sid] = gate
                banks = self.stream_banks.get(sid)
                if banks and bank is not None:  # only a read of the next beat's bank
                    bits = bank.type.width.data
                    at = [h.icmp("eq", bank, h.const(b, bits), None) for b in sorted(banks)]
                    runs.append(h.and_(self.is_state[sid], h.or_tree(at, 1, f"{sname}_bank")))
                elif banks:
                    runs.append(self.is_state[sid])
            self.stream_block[w.id] = h.or_tree(runs, 1, f"{pre}_port_taken")
        return self.gates

    def leaves(self, st: State, window: frozenset[int]) -> SSAValue | None:
        """Whether ``st`` (running) leaves ``window`` this cycle; None: it never does."""
        h, t = self.h, st.next
        if isinstance(t, Goto):
            return None if t.target in window else h.const(1, 1)
        if isinstance(t, Branch):
            return h.const(1, 1)
        assert isinstance(t, LoopLatch)
        if t.body in window and t.exit in window:
            return None
        more = self.loop_more(t.loop, st)
        if t.body in window:
            return h.not_(more)
        if t.exit in window:
            return more
        return h.const(1, 1)

    def comb_op(self, op: Operation, st: State) -> None:
        h = self.h
        hint = (op.results[0].name_hint if op.results else None) or op.name.split(".")[-1]
        hint = f"{st.isax}_{hint}"

        def r(i: int) -> SSAValue:
            return self.ref(op.operands[i], st)

        def out(val: SSAValue) -> None:
            self.wires[(op.results[0], st.id)] = val

        name = op.name
        if isinstance(op, aq.WriteRdOp):
            self.write("rd_q", self.is_state[st.id], r(0))
            return
        if isinstance(op, aq.StateReadOp):
            s = op.state.root_reference.data
            out(self.reg(f"{s}_q", width(op.result)))
            return
        if isinstance(op, aq.StateWriteOp):
            s = op.state.root_reference.data
            self.reg(f"{s}_q", width(op.value))
            self.write(f"{s}_q", self.enable(op, st), r(0))
            return
        if isinstance(op, aq.SpmReadOp):
            spm = op.scratchpad.root_reference.data
            w = self.stream_of.get(st.id)
            if w is not None and spm_of(w.wait) is spm_of(op):
                c, terms = linear_form(self.b.resolve(op.index), 32)
                key = frozenset(terms.items())
                reads = self.stream_reads.setdefault(st.id, {})
                if key not in reads or reads[key][0] < c:
                    reads[key] = (c, self.index_of(op, st, hint))
                if spm in self.sram:  # the state's first access of a bank takes port 0
                    self.stream_banks.setdefault(st.id, set()).update(spm_banks(op))
            if op.result.name_hint is None:
                hint = f"{st.isax}_{spm}_elem"
            if spm in self.sram:
                self.sram_read(op, st, hint)
            else:
                out(self.spm_read(spm, r(0), hint, st))
            return
        if isinstance(op, aq.SpmWriteOp) and op.scratchpad.root_reference.data in self.sram:
            spm = op.scratchpad.root_reference.data
            self.sram_access(op, st, r(0), f"{st.isax}_{spm}_w")
            return
        if isinstance(op, aq.SpmWriteOp):
            spm = op.scratchpad.root_reference.data
            if spm not in self.b.forwarded:  # else its burst reads the value's register
                self.spm_writes.setdefault(spm, []).append((self.enable(op, st), r(1), r(0), None))
            return
        w = width(op.results[0])
        if name in ("arith.divui", "arith.remui", "arith.divsi", "arith.remsi"):
            out(self.division(name, r(0), r(1), w, hint))
        elif name in ("arith.shli", "arith.shrui", "arith.shrsi"):
            kind = BY_ARITH[name].comb
            a, b = r(0), r(1)
            val = h.binop(kind, a, b, hint)
            amt = op.operands[1]
            const_amt = None
            if isinstance(amt, OpResult) and isinstance(amt.owner, arith.ConstantOp):
                cv = amt.owner.value
                assert isinstance(cv, IntegerAttr)
                const_amt = int(cv.value.data)
            if const_amt is None or not 0 <= int(const_amt) < w:
                # aquas defines shifts by >= width (MLIR: poison): 0, or the sign fill
                over = h.icmp("uge", b, h.const(w, w), f"{hint}_over")
                fill = (
                    h.sext(h.extract(a, w - 1, 1, f"{hint}_sign"), w, f"{hint}_fill")
                    if kind == "comb.shrs"
                    else h.const(0, w)
                )
                val = h.mux(over, fill, val, hint)
            out(val)
        elif op in self.shared:  # a multiply on a shared unit: its inputs select this state's
            out(self.shared.use(op, self.selects(st.id), r(0), r(1)))
        elif op in self.adders and self.b.def_state.get(op) == st.id:
            a, b = r(0), r(1)  # the held value, then the product (the same at every user)
            a, b = (b, a) if op in self.adders.binding.swapped else (a, b)
            out(self.adders.use(op, self.selects(st.id), a, b))
        elif op in self.xops.unit_of:  # a squarer, or a multiply by a constant (on the right)
            out(self.shared_operator(op, st, r(0)))  # shared with other ISAXs or states
        elif name == "arith.muli":  # its own multiplier, as narrow as its operands allow
            out(emit_mul(h, op, r(0), r(1), hint))
        elif name in BY_ARITH:
            out(h.binop(BY_ARITH[name].comb, r(0), r(1), hint))
        elif name == "arith.cmpi":
            assert isinstance(op, arith.CmpiOp)
            out(h.icmp(PREDICATES[op.predicate.value.data], r(0), r(1), hint))
        elif name == "arith.select":
            out(h.mux(r(0), r(1), r(2), hint))
        elif name == "arith.extui":
            out(h.zext(r(0), w, hint))
        elif name == "arith.extsi":
            out(h.sext(r(0), w, hint))
        elif name == "arith.trunci":
            out(h.extract(r(0), 0, w, hint))
        else:
            raise op_error(op, f"synthesis does not support {name}", "express it with arith ops")

    def division(self, name: str, a: SSAValue, b: SSAValue, w: int, hint: str) -> SSAValue:
        """The comb divider with the RISC-V answers for the cases MLIR leaves poison
        (aquas.intops): x / 0 = all ones, x % 0 = x, MIN / -1 = MIN (remainder 0)."""
        h = self.h
        op = BY_ARITH[name].comb
        ones = h.const(-1, w)
        zero_div = h.icmp("eq", b, h.const(0, w), f"{hint}_by0")
        if name == "arith.divui":
            return h.mux(zero_div, ones, h.binop(op, a, b, f"{hint}_q"), hint)
        if name == "arith.remui":
            return h.mux(zero_div, a, h.binop(op, a, b, f"{hint}_r"), hint)
        overflow = h.and_(
            h.icmp("eq", a, h.const(1 << (w - 1), w), f"{hint}_min"),
            h.icmp("eq", b, ones, f"{hint}_m1"),
            hint=f"{hint}_ovf",
        )
        if name == "arith.divsi":
            q = h.mux(overflow, a, h.binop(op, a, b, f"{hint}_q"), f"{hint}_q")
            return h.mux(zero_div, ones, q, hint)
        rem = h.mux(overflow, h.const(0, w), h.binop(op, a, b, f"{hint}_r"), f"{hint}_r")
        return h.mux(zero_div, a, rem, hint)

    # -- scratchpads and state ---------------------------------------------------------

    def spm_elements(self, name: str) -> list[SSAValue]:
        p = self.spm[name]
        return [self.reg(f"{name}_{k}_q", p.width) for k in range(p.size)]

    def spm_read(self, name: str, index: SSAValue, hint: str, st: State) -> SSAValue:
        """Element ``index`` of register scratchpad ``name`` as read in state ``st``; of a
        forwarded one (``FsmBuilder.forwarded``), the value written there, from its own
        register (elements never written are never read: zero)."""
        staged = self.b.forwarded.get(name)
        if staged is None:
            elems = self.spm_elements(name)
        else:
            p = self.spm[name]
            zero = self.h.const(0, p.width)
            elems = [self.ref(staged[k], st) if k in staged else zero for k in range(p.size)]
        return self.h.select_tree(index, elems, hint)

    def sram_port(self, st: State, name: str, banks: set[int]) -> int:
        """The port of ``name``'s ``banks`` an access of state ``st`` uses: the scheduler
        lets no more accesses into a state than the banks have ports."""
        port = max(self.sram_ports_used.get((st.id, name, b), 0) for b in banks)
        assert port < self.spm[name].ports_value, f"SRAM ports of {name} oversubscribed"
        for b in banks:
            self.sram_ports_used[(st.id, name, b)] = port + 1
        return port

    def affine(
        self, const: int, terms: tuple[tuple[SSAValue, int], ...], st: State, hint: str
    ) -> SSAValue:
        """``const + sum(k * v)`` as a 32-bit wire, over values readable in ``st``."""
        h = self.h
        acc: SSAValue | None = None
        for v, k in terms:
            x = self.ref(v, st)
            if k != 1:
                x = h.mul_const(x, k, f"{hint}_term")
            acc = x if acc is None else h.binop("comb.add", acc, x, f"{hint}_sum")
        if acc is None:
            return h.const(const % (1 << 32), 32)
        if const % (1 << 32):
            acc = h.binop("comb.add", acc, h.const(const % (1 << 32), 32), hint)
        return acc

    def enable(self, op: aq.SpmReadOp | aq.SpmWriteOp | aq.StateWriteOp, st: State) -> SSAValue:
        """When ``op`` accesses its storage: in ``st``, and where it is predicated (a
        stage of a predicated kernel, ``synth/loop_pipeline.py``) when its predicate holds."""
        en = self.is_state[st.id]
        if op.pred is None:
            return en
        return self.h.and_(en, self.ref(op.pred, st))

    def index_of(self, op: aq.SpmReadOp | aq.SpmWriteOp, st: State, hint: str) -> SSAValue:
        """The element index of scratchpad access ``op`` in ``st``: its index operand, or,
        where no hardware computes that (``fsm.index_only``), the same sum over the
        induction variables (the stream gates compare it with the beats received)."""
        v = self.b.resolve(op.index)
        br = bank_row(op)
        if br is None or not (isinstance(v, OpResult) and index_only(v.owner)):
            return self.ref(v, st)
        f = self.spm[op.scratchpad.root_reference.data].factor_value
        terms = tuple((t, k * f) for t, k in br.terms)
        return self.affine(f * br.const + br.bank, terms, st, f"{hint}_index")

    def sram_access(
        self, op: aq.SpmReadOp | aq.SpmWriteOp, st: State, wdata: SSAValue | None, hint: str
    ) -> tuple[set[int], int, SSAValue | None]:
        """Issues ``op``'s access to its SRAM bank in ``st``, its row read off the
        induction variables where it can be (``fsm.bank_row``); returns the banks it may
        touch, the port, and the bank number for a read of several banks."""
        name = op.scratchpad.root_reference.data
        banks = spm_banks(op)
        port = self.sram_port(st, name, banks)
        en = self.enable(op, st)
        br = bank_row(op)
        if br is None:
            index = self.index_of(op, st, hint)
            return banks, port, self.sram.access(name, banks, port, en, index, wdata, hint)
        row = self.affine(br.const, br.terms, st, f"{hint}_row")
        return banks, port, self.sram.access(name, banks, port, en, None, wdata, hint, row=row)

    def sram_read(self, op: aq.SpmReadOp, st: State, hint: str) -> None:
        """Issues the read in ``st``; its data is the wire of the next state (the op's home
        in the builder), from the bank's read port."""
        h = self.h
        name = op.scratchpad.root_reference.data
        banks, port, bank = self.sram_access(op, st, None, hint)
        home = self.b.def_state[op]
        if bank is None:
            (b,) = banks
            data = self.sram.read_data(name, b, port)
        else:
            # which bank answered: remembered from the read cycle for the data cycle
            bits = max(1, (self.spm[name].factor_value - 1).bit_length())
            rn = f"{hint}_bank_q"
            n = 1
            while rn in self.regs:
                n += 1
                rn = f"{hint}_bank{n}_q"
            sel = self.reg(rn, bits)
            self.write(rn, self.is_state[st.id], h.extract(bank, 0, bits, f"{hint}_bank"))
            items = [
                (
                    h.icmp("eq", sel, h.const(b, bits), f"{hint}_from{b}"),
                    self.sram.read_data(name, b, port),
                )
                for b in sorted(banks)
            ]
            data = h.onehot_select(items, h.const(0, self.spm[name].width), hint)
        self.define(op, home, data)

    def define(self, op: Operation, home: int, data: SSAValue) -> None:
        """``op``'s result is ``data`` in state ``home``, also where a carried value's
        stand-in (``carried_data``) took its place before."""
        self.wires[(op.results[0], home)] = data
        ph = self.carried_ph.pop(op, None)
        if ph is not None:
            ph.results[0].replace_all_uses_with(data)
            ph.detach()
            ph.erase()

    def carried_data(self, op: Operation) -> SSAValue:
        """The data of the carried read or the product in flight ``op``
        (``fsm.LoopInfo.carried``) in the state where the iteration register takes it; a
        stand-in that ``define`` replaces when that state comes after the state using it."""
        home = self.b.def_state[op]
        if (op.results[0], home) in self.wires:
            return self.wires[(op.results[0], home)]
        if op not in self.carried_ph:
            ph = hw.ConstantOp(0, width(op.results[0]))
            self.h.block.add_op(ph)
            self.carried_ph[op] = ph
        return self.carried_ph[op].results[0]

    def carried_loops(self) -> None:
        """The registers of iteration values carried in SRAM read ports or taken in
        flight from a pipelined multiplier (``fsm.LoopInfo.carried``): written from the
        port in the body's first state (from the unit in the state the product arrives)
        from the second iteration on, and in the state the loop exits into; ``run_reg``
        tells the first iteration (the register holds the initial value) from the others."""
        for info in self.b.carried_loops:
            run = self.reg(info.run_reg, 1)
            self.write(info.run_reg, self.is_state[info.init], self.h.const(0, 1))
            self.write(info.run_reg, self.is_state[info.last], self.h.const(1, 1))
            for k, op in info.carried.items():
                rn = info.iter_regs[k]
                self.reg(rn, width(op.results[0]))
                data = self.carried_data(op)
                take = self.h.and_(self.is_state[self.b.def_state[op]], run, hint=f"{rn[:-2]}_take")
                self.write(rn, take, data)
                if info.catch >= 0:
                    self.write(rn, self.is_state[info.catch], data)

    def scratchpad_registers(self) -> None:
        h = self.h
        for name, p in self.spm.items():
            if name in self.sram or name in self.b.forwarded:
                continue
            h.loc = basename_loc(p.location)
            elems = self.spm_elements(name)
            # the element decoder looks at the index bits an element number has, as the
            # read side's mux tree does (HwBuilder.select_tree): an index out of bounds is
            # an execution error of the spec (docs/dialect.md), and a predicated write
            # whose index is out of bounds is disabled by its enable
            nb = max(1, (p.size - 1).bit_length())
            for en, idx, val, half in self.spm_writes.get(name, []):
                low = h.extract(idx, 0, nb, f"{name}_idx") if width(idx) > nb else idx
                for k in range(min(p.size, 1 << width(low))):  # a narrow index reaches fewer
                    at = h.icmp("eq", low, h.const(k, width(low)), f"{name}_at{k}")
                    hit = h.and_(en, at, hint=f"{name}_{k}_we")
                    rn = f"{name}_{k}_q"
                    if half is None:
                        self.write(rn, hit, val)
                    else:  # 64-bit element filled by two 32-bit beats
                        lo = h.extract(elems[k], 0, 32, f"{name}_{k}_lo")
                        hi = h.extract(elems[k], 32, 32, f"{name}_{k}_hi")
                        newv = h.concat(hi, val) if half == 0 else h.concat(val, lo)
                        self.write(rn, hit, newv)

    def xname(self, unit: int) -> str:
        """A shared operator's name: ``xsq<unit>`` for a squarer, ``xcm<unit>`` for a
        multiply by a constant."""
        return f"{'xcm' if unit in self.xops.const else 'xsq'}{unit}"

    def shared_operator(self, op: Operation, st: State, a: SSAValue) -> SSAValue:
        """``op``'s result: the output of the squarer or multiply by a constant it shares
        with other ISAXs or states, whose operand in state ``st`` is ``a`` (narrowed as
        its own squarer would be, or zero-extended to a wider constant multiply). The
        operator is built at its first use on a stand-in operand, which
        :meth:`shared_operators` replaces by the select once every operand is known."""
        unit = self.xops.unit_of[op]
        w, bits = self.xops.units[unit][:2]
        name = self.xname(unit)
        if width(a) > bits:
            a = self.h.extract(a, 0, bits, f"{name}_{st.isax}")
        elif width(a) < bits:  # a narrower multiply by the unit's constant: its low bits
            a = self.h.zext(a, bits, f"{name}_{st.isax}")
        c = self.xops.const.get(unit)
        if c is None:
            self.xsq_in.setdefault(unit, {})[st.isax] = a
        else:
            self.xcm_in.setdefault(unit, []).append((self.selects(st.id), a))
        if unit not in self.xop_ph:
            ph = self.xop_ph[unit] = hw.ConstantOp(0, bits)
            self.h.block.add_op(ph)
            self.xop_out[unit] = (
                square(self.h, ph.result, w, name)
                if c is None
                else self.h.mul_const(ph.result, c, name)
            )
        own = width(op.results[0])
        if own < w:
            return self.h.extract(self.xop_out[unit], 0, own, f"{name}_{st.isax}_lo")
        return self.xop_out[unit]

    def shared_operators(self) -> None:
        """Each shared operator's operand. A squarer's: a multiplexer chain over its
        ISAXs, selected by registers that say which ISAX the unit runs, set on the
        command. (Yosys merges the identical registers of one ISAX into one flip-flop,
        which drives every squarer's operand bits through a buffer tree: 0.56 ns on OSU018
        for the point cloud's three. The select delay ``binding.isax_operators`` reserves
        does not count it; STA times it: the point cloud's unit, 5.13 ns against the
        core's 5.67.) A multiply by a constant's: an AND-OR select over its states'
        presence flags (:meth:`selects`)."""
        h = self.h
        h.loc = basename_loc(None)
        assert self.cmd_fire is not None
        for unit, (_w, bits, isaxs) in enumerate(self.xops.units):
            ph = self.xop_ph.pop(unit, None)
            if ph is None:
                continue
            name = self.xname(unit)
            if unit in self.xops.const:
                groups = h.by_value(self.xcm_in[unit], f"{name}_x")
                x = groups[0][1] if len(groups) == 1 else h.and_or(groups, bits, f"{name}_x")
            else:
                ins = self.xsq_in[unit]
                used = [i for i in isaxs if i in ins]
                x = ins[used[0]]
                for i in used[1:]:
                    sel = self.reg(f"{name}_{i}_q", 1)
                    self.write(f"{name}_{i}_q", self.cmd_fire, self.is_isax[i])
                    x = h.mux(sel, ins[i], x, f"{name}_x")
            ph.result.replace_all_uses_with(x)
            ph.detach()
            ph.erase()

    def state_registers(self) -> None:
        for s in self.state_regs.values():
            self.reg(f"{s.sym_name.data}_q", s.width)


__all__ = ["Unit", "UnitGenerator", "hw_text"]
