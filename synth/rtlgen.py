"""RTL generation: the state machines of an extension → CIRCT ``hw``/``comb``/``seq`` text →
Verilog through CIRCT's ExportVerilog.

One module per extension, ``<ext>_isax_unit``, with the canonical port of
``docs/isax-port.md``. We hand CIRCT *text* rather than builder objects because the Python
builder API differs between the circt wheels for Python 3.11 (1.62) and 3.13 (1.162); the
textual forms used here parse on both. Scratchpads are flip-flop arrays (one register per
element, named ``<spm>_<k>_q``) whose port use per bank is limited by the scheduler.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from aquas.dialects import aquas as aq
from aquas.synth.fsm import (
    Branch,
    FsmBuilder,
    Goto,
    IsaxFsm,
    LoopLatch,
    State,
    mem_beats,
    op_error,
    spm_of,
)
from aquas.synth.oplib import CMPI_PREDICATE_NAMES


def _w(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, IntegerType)
    return t.width.data


@dataclass
class Unit:
    """The generated unit: CIRCT text plus what the report needs."""

    name: str
    circt_text: str
    fsms: list[IsaxFsm]
    states: list[State]
    state_bits: int
    registers: dict[str, int] = field(default_factory=dict)  # name → width


class Emitter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: set[str] = set()
        self.consts: dict[tuple[int, int], str] = {}

    def fresh(self, hint: str) -> str:
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in hint) or "t"
        name = base
        n = 0
        while name in self.names:
            n += 1
            name = f"{base}_{n}"
        self.names.add(name)
        return "%" + name

    def emit(self, hint: str, rhs: str) -> str:
        name = self.fresh(hint)
        self.lines.append(f"    {name} = {rhs}")
        return name

    def const(self, value: int, width: int) -> str:
        value &= (1 << width) - 1
        key = (value, width)
        if key not in self.consts:
            signed = value - (1 << width) if value >> (width - 1) else value
            self.consts[key] = self.emit(f"c{width}_{value}", f"hw.constant {signed} : i{width}")
        return self.consts[key]

    # small combinational helpers -----------------------------------------------------

    def binop(self, op: str, a: str, b: str, w: int, hint: str = "t") -> str:
        return self.emit(hint, f"comb.{op} {a}, {b} : i{w}")

    def icmp(self, pred: str, a: str, b: str, w: int, hint: str = "c") -> str:
        return self.emit(hint, f"comb.icmp {pred} {a}, {b} : i{w}")

    def mux(self, c: str, a: str, b: str, w: int, hint: str = "m") -> str:
        return self.emit(hint, f"comb.mux {c}, {a}, {b} : i{w}")

    def and_(self, *xs: str) -> str:
        xs = tuple(x for x in xs if x)
        if len(xs) == 1:
            return xs[0]
        return self.emit("and", f"comb.and {', '.join(xs)} : i1")

    def or_(self, *xs: str, hint: str = "or") -> str:
        return self.or_tree(list(xs), 1, hint)

    def or_tree(self, xs: list[str], w: int, hint: str = "or") -> str:
        """A balanced OR (ExportVerilog prints variadic ops as left-leaning chains, which
        Yosys keeps as chains: depth N instead of log N)."""
        if not xs:
            return self.const(0, w)
        level = list(xs)
        while len(level) > 1:
            nxt = [
                self.emit(hint, f"comb.or {level[i]}, {level[i + 1]} : i{w}")
                for i in range(0, len(level) - 1, 2)
            ]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0]

    def onehot_select(self, items: list[tuple[str, str]], default: str, w: int, hint: str) -> str:
        """``value of the enabled item, else default`` for mutually exclusive enables, as an
        AND-OR tree: log depth in the number of items instead of a priority-mux chain."""
        if not items:
            return default
        if len(items) == 1:
            en, v = items[0]
            return self.mux(en, v, default, w, hint)
        masked = []
        for en, v in items:
            mask = en if w == 1 else self.emit("msk", f"comb.replicate {en} : (i1) -> i{w}")
            masked.append(self.emit(hint, f"comb.and {mask}, {v} : i{w}"))
        any_en = self.or_tree([en for en, _ in items], 1, f"{hint}_any")
        return self.mux(any_en, self.or_tree(masked, w, hint), default, w, hint)

    def not_(self, x: str) -> str:
        return self.emit("not", f"comb.xor {x}, {self.const(1, 1)} : i1")

    def extract(self, x: str, lo: int, w_in: int, w_out: int, hint: str = "x") -> str:
        if lo == 0 and w_in == w_out:
            return x
        return self.emit(hint, f"comb.extract {x} from {lo} : (i{w_in}) -> i{w_out}")

    def zext(self, x: str, w_in: int, w_out: int) -> str:
        if w_in == w_out:
            return x
        if w_in > w_out:
            return self.extract(x, 0, w_in, w_out)
        z = self.const(0, w_out - w_in)
        return self.emit("zx", f"comb.concat {z}, {x} : i{w_out - w_in}, i{w_in}")

    def sext(self, x: str, w_in: int, w_out: int) -> str:
        if w_in == w_out:
            return x
        sign = self.extract(x, w_in - 1, w_in, 1, "sign")
        rep = self.emit("rep", f"comb.replicate {sign} : (i1) -> i{w_out - w_in}")
        return self.emit("sx", f"comb.concat {rep}, {x} : i{w_out - w_in}, i{w_in}")

    def concat(self, hi: str, w_hi: int, lo: str, w_lo: int) -> str:
        return self.emit("cat", f"comb.concat {hi}, {lo} : i{w_hi}, i{w_lo}")

    def select_tree(self, index: str, idx_w: int, items: list[str], w: int, hint: str) -> str:
        """items[index] as a balanced mux tree on the index bits (out of range → last
        level's default, i.e. an existing element; such indices are errors in the spec)."""
        level = list(items)
        bit = 0
        while len(level) > 1:
            if bit >= idx_w:
                return level[0]
            sel = self.extract(index, bit, idx_w, 1, "ib")
            nxt = []
            for i in range(0, len(level), 2):
                if i + 1 < len(level):
                    nxt.append(self.mux(sel, level[i + 1], level[i], w, hint))
                else:
                    nxt.append(level[i])
            level = nxt
            bit += 1
        return level[0]


class UnitGenerator:
    def __init__(self, ext: aq.ExtensionOp, builder: FsmBuilder, fsms: list[IsaxFsm]):
        self.ext = ext
        self.b = builder
        self.fsms = fsms
        self.e = Emitter()
        self.regs: dict[str, int] = {}
        self.reg_sources: dict[str, list[tuple[str, str]]] = {}
        self.wires: dict[tuple[SSAValue, int], str] = {}
        self.is_state: dict[int, str] = {}
        self.spm = {p.sym_name.data: p for p in ext.scratchpads()}
        self.state_regs = {s.sym_name.data: s for s in ext.states()}

    # -- registers ---------------------------------------------------------------------

    def reg(self, name: str, width: int) -> str:
        if name not in self.regs:
            self.regs[name] = width
            self.reg_sources[name] = []
            self.e.names.add(name)
        return "%" + name

    def write(self, name: str, enable: str, value: str) -> None:
        self.reg_sources[name].append((enable, value))

    # -- values ------------------------------------------------------------------------

    def ref(self, v: SSAValue, st: State) -> str:
        v = self.b.resolve(v)
        w = _w(v)
        if isinstance(v, OpResult):
            owner = v.owner
            if isinstance(owner, arith.ConstantOp):
                attr = owner.value
                assert isinstance(attr, IntegerAttr)
                return self.e.const(int(attr.value.data), w)
            if isinstance(owner, aq.ReadRs1Op):
                return "%rs1_q"
            if isinstance(owner, aq.ReadRs2Op):
                return "%rs2_q"
            home = self.b.def_state.get(owner)
            if home == st.id and not isinstance(owner, aq.LoadOp):
                return self.wires[(v, st.id)]
        if v in self.b.value_regs:
            return self.reg(self.b.value_regs[v], w)
        if isinstance(v, BlockArgument):
            raise AssertionError(f"unmapped block argument {v}")
        raise AssertionError(f"value without a home: {v} in state {st.id}")

    # -- top level ---------------------------------------------------------------------

    def generate(self) -> Unit:
        e = self.e
        name = f"{self.ext.sym_name.data}_isax_unit"
        n_states = self.b.next_id  # ids 0 (idle) and 1 (respond) are fixed
        sbits = max(1, (n_states - 1).bit_length())
        st_q = self.reg("state_q", sbits)
        for sid in range(n_states):
            self.is_state[sid] = e.icmp("eq", st_q, e.const(sid, sbits), sbits, f"in_s{sid}")
        idle, resp = self.is_state[0], self.is_state[1]

        cmd_fire = e.and_("%cmd_valid", idle)
        self.reg("rs1_q", 32)
        self.reg("rs2_q", 32)
        self.write("rs1_q", cmd_fire, "%cmd_rs1")
        self.write("rs2_q", cmd_fire, "%cmd_rs2")
        self.reg("rd_q", 32)
        self.write("rd_q", cmd_fire, e.const(0, 32))

        # decode: first matching ISAX, unknown encodings answer rd = 0 at once
        dispatch = e.const(1, sbits)
        for fsm in reversed(self.fsms):
            isax = fsm.isax
            m = e.and_(
                e.icmp("eq", "%cmd_opcode", e.const(isax.opcode_value, 7), 7, "op_is"),
                e.icmp("eq", "%cmd_funct3", e.const(isax.funct3_value, 3), 3, "f3_is"),
                e.icmp("eq", "%cmd_funct7", e.const(isax.funct7_value, 7), 7, "f7_is"),
            )
            target = fsm.entry if fsm.entry >= 0 else 1
            dispatch = e.mux(m, e.const(target, sbits), dispatch, sbits, f"go_{isax.sym_name.data}")
        idle_next = e.mux(cmd_fire, dispatch, st_q, sbits, "idle_next")
        resp_next = e.mux("%rsp_ready", e.const(0, sbits), st_q, sbits, "resp_next")
        next_by_state: dict[int, str] = {0: idle_next, 1: resp_next}

        # memory engine registers
        mp_q = self.reg("mem_phase_q", 2)
        beat_q = self.reg("mem_beat_q", 9)
        mem = MemEngine(self, mp_q, beat_q)

        for st in self.b.states:
            self.state_datapath(st)
        for st in self.b.states:
            nxt = self.transition(st)
            if st.wait is not None:
                done = mem.wait_state(st)
                nxt = e.mux(done, nxt, st_q, sbits, f"s{st.id}_wait")
            next_by_state[st.id] = nxt
        mem.finish()

        # state register: select the next state by the current one
        items = [next_by_state.get(i, e.const(0, sbits)) for i in range(1 << sbits)]
        state_next = e.select_tree(st_q, sbits, items, sbits, "nx")
        self.write("state_q", e.const(1, 1), state_next)

        self.scratchpad_registers()
        self.state_registers()

        outputs = [
            ("cmd_ready", idle, 1),
            ("rsp_valid", resp, 1),
            ("rsp_rd", "%rd_q", 32),
            *mem.outputs(),
        ]
        reg_lines = []
        for rname, width in self.regs.items():
            # a register's write enables are mutually exclusive: they come from different
            # states, or from exclusive phases/halves of one wait state
            cur = e.onehot_select(self.reg_sources[rname], "%" + rname, width, f"{rname}_n")
            init = e.const(self.reset_value(rname), width)
            reg_lines.append(
                f"    %{rname} = seq.compreg {cur}, %clk reset %rst, {init} : i{width}"
            )
        text = self.module_text(name, reg_lines, outputs)
        return Unit(name, text, self.fsms, self.b.states, sbits, dict(self.regs))

    def reset_value(self, rname: str) -> int:
        for s in self.state_regs.values():
            if rname == f"{s.sym_name.data}_q":
                return int(s.init.value.data) & ((1 << s.width) - 1)
        return 0

    def module_text(
        self, name: str, reg_lines: list[str], outputs: list[tuple[str, str, int]]
    ) -> str:
        ins = [
            ("clk", "!seq.clock"),
            ("rst", "i1"),
            ("cmd_valid", "i1"),
            ("cmd_opcode", "i7"),
            ("cmd_funct3", "i3"),
            ("cmd_funct7", "i7"),
            ("cmd_rs1", "i32"),
            ("cmd_rs2", "i32"),
            ("rsp_ready", "i1"),
            ("mem_req_ready", "i1"),
            ("mem_wdata_ready", "i1"),
            ("mem_rsp_valid", "i1"),
            ("mem_rsp_rdata", "i32"),
            ("mem_rsp_last", "i1"),
        ]
        ports = [f"in %{n}: {t}" for n, t in ins] + [f"out {n}: i{w}" for n, _, w in outputs]
        lines = [f"hw.module @{name}(" + ", ".join(ports) + ") {"]
        vals = ", ".join(v for _, v, _ in outputs)
        lines += _prune_dead(self.e.lines, [*reg_lines, vals])
        lines += reg_lines
        tys = ", ".join(f"i{w}" for _, _, w in outputs)
        lines.append(f"    hw.output {vals} : {tys}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    # -- per-state datapath ------------------------------------------------------------

    def state_datapath(self, st: State) -> None:
        e = self.e
        en = self.is_state[st.id]
        for op in st.ops:
            self.comb_op(op, st)
        for op in st.ops:
            for res in op.results:
                if res in self.b.value_regs and not isinstance(op, aq.LoadOp):
                    rn = self.b.value_regs[res]
                    self.reg(rn, _w(res))
                    self.write(rn, en, self.wires[(res, st.id)])
        for rn, v in st.writes:
            self.reg(rn, _w(v))
            self.write(rn, en, self.ref(v, st))
        for info in st.latches:
            iv = self.reg(info.iv_reg, 32)
            self.write(
                info.iv_reg,
                en,
                e.binop("add", iv, e.const(info.step, 32), 32, f"{info.iv_reg}_inc"),
            )
        del e

    def transition(self, st: State) -> str:
        e = self.e
        sbits = self.regs["state_q"]
        t = st.next
        if isinstance(t, Goto):
            return e.const(t.target, sbits)
        if isinstance(t, Branch):
            c = self.ref(t.cond, st)
            return e.mux(
                c, e.const(t.if_true, sbits), e.const(t.if_false, sbits), sbits, f"s{st.id}_br"
            )
        assert isinstance(t, LoopLatch)
        info = t.loop
        iv = self.reg(info.iv_reg, 32)
        inc = e.binop("add", iv, e.const(info.step, 32), 32, f"{info.iv_reg}_nx")
        more = e.icmp("slt", inc, e.const(info.ub, 32), 32, f"{info.iv_reg}_more")
        return e.mux(more, e.const(t.body, sbits), e.const(t.exit, sbits), sbits, f"s{st.id}_loop")

    def comb_op(self, op: Operation, st: State) -> None:
        e = self.e
        hint = (op.results[0].name_hint if op.results else None) or op.name.split(".")[-1]
        hint = f"{st.isax}_{hint}"

        def r(i: int) -> str:
            return self.ref(op.operands[i], st)

        def out(val: str) -> None:
            self.wires[(op.results[0], st.id)] = val

        name = op.name
        if isinstance(op, aq.WriteRdOp):
            self.write("rd_q", self.is_state[st.id], r(0))
            return
        if isinstance(op, aq.StateReadOp):
            s = op.state.root_reference.data
            out(self.reg(f"{s}_q", _w(op.result)))
            return
        if isinstance(op, aq.StateWriteOp):
            s = op.state.root_reference.data
            self.reg(f"{s}_q", _w(op.value))
            self.write(f"{s}_q", self.is_state[st.id], r(0))
            return
        if isinstance(op, aq.SpmReadOp):
            out(self.spm_read(op.scratchpad.root_reference.data, r(0), hint))
            return
        if isinstance(op, aq.SpmWriteOp):
            self.spm_writes.setdefault(op.scratchpad.root_reference.data, []).append(
                (self.is_state[st.id], r(1), r(0), None)
            )
            return
        w = _w(op.results[0])
        simple = {
            "arith.addi": "add",
            "arith.subi": "sub",
            "arith.muli": "mul",
            "arith.andi": "and",
            "arith.ori": "or",
            "arith.xori": "xor",
        }
        if name in simple:
            out(e.binop(simple[name], r(0), r(1), w, hint))
        elif name in ("arith.divui", "arith.remui", "arith.divsi", "arith.remsi"):
            out(self.division(name, r(0), r(1), w, hint))
        elif name in ("arith.shli", "arith.shrui", "arith.shrsi"):
            kind = {"arith.shli": "shl", "arith.shrui": "shru", "arith.shrsi": "shrs"}[name]
            a, b = r(0), r(1)
            val = e.binop(kind, a, b, w, hint)
            amt = op.operands[1]
            const_amt = None
            if isinstance(amt, OpResult) and isinstance(amt.owner, arith.ConstantOp):
                cv = amt.owner.value
                assert isinstance(cv, IntegerAttr)
                const_amt = int(cv.value.data)
            if const_amt is None or not 0 <= int(const_amt) < w:
                # aquas defines shifts by >= width (MLIR: poison): 0, or the sign fill
                over = e.icmp("uge", b, e.const(w, w), w, "shover")
                fill = (
                    e.sext(e.extract(a, w - 1, w, 1, "sgn"), 1, w)
                    if kind == "shrs"
                    else e.const(0, w)
                )
                val = e.mux(over, fill, val, w, hint)
            out(val)
        elif name == "arith.cmpi":
            assert isinstance(op, arith.CmpiOp)
            pred = CMPI_PREDICATE_NAMES[op.predicate.value.data]
            out(e.icmp(pred, r(0), r(1), _w(op.lhs), hint))
        elif name == "arith.select":
            out(e.mux(r(0), r(1), r(2), w, hint))
        elif name == "arith.extui":
            out(e.zext(r(0), _w(op.operands[0]), w))
        elif name == "arith.extsi":
            out(e.sext(r(0), _w(op.operands[0]), w))
        elif name == "arith.trunci":
            out(e.extract(r(0), 0, _w(op.operands[0]), w, hint))
        else:
            raise op_error(op, f"synthesis does not support {name}", "express it with arith ops")

    def division(self, name: str, a: str, b: str, w: int, hint: str) -> str:
        e = self.e
        ones = e.const(-1, w)
        zero_div = e.icmp("eq", b, e.const(0, w), w, "divz")
        if name == "arith.divui":
            return e.mux(zero_div, ones, e.binop("divu", a, b, w, hint), w, hint)
        if name == "arith.remui":
            return e.mux(zero_div, a, e.binop("modu", a, b, w, hint), w, hint)
        overflow = e.and_(
            e.icmp("eq", a, e.const(1 << (w - 1), w), w, "isminv"),
            e.icmp("eq", b, ones, w, "ism1"),
        )
        if name == "arith.divsi":
            q = e.mux(overflow, a, e.binop("divs", a, b, w, hint), w, hint)
            return e.mux(zero_div, ones, q, w, hint)
        rem = e.mux(overflow, e.const(0, w), e.binop("mods", a, b, w, hint), w, hint)
        return e.mux(zero_div, a, rem, w, hint)

    # -- scratchpads and state ---------------------------------------------------------

    spm_writes: dict[str, list[tuple[str, str, str, int | None]]]

    def spm_elements(self, name: str) -> list[str]:
        p = self.spm[name]
        return [self.reg(f"{name}_{k}_q", p.width) for k in range(p.size)]

    def spm_read(self, name: str, index: str, hint: str) -> str:
        p = self.spm[name]
        elems = self.spm_elements(name)
        return self.e.select_tree(index, 32, elems, p.width, hint)

    def scratchpad_registers(self) -> None:
        e = self.e
        for name, p in self.spm.items():
            elems = self.spm_elements(name)
            for en, idx, val, half in self.spm_writes.get(name, []):
                for k in range(p.size):
                    hit = e.and_(en, e.icmp("eq", idx, e.const(k, 32), 32, f"{name}_at{k}"))
                    rn = elems[k][1:]
                    if half is None:
                        self.write(rn, hit, val)
                    else:  # 64-bit element filled by two 32-bit beats
                        lo = e.extract(elems[k], 0, 64, 32)
                        hi = e.extract(elems[k], 32, 64, 32)
                        newv = e.concat(hi, 32, val, 32) if half == 0 else e.concat(val, 32, lo, 32)
                        self.write(rn, hit, newv)

    def state_registers(self) -> None:
        for s in self.state_regs.values():
            self.reg(f"{s.sym_name.data}_q", s.width)


class MemEngine:
    """Drives the memory master port from the current wait state (docs/isax-port.md).

    Phase register: 0 = send the request, 1 = data (read beats in, or write beats out),
    2 = wait for the write acknowledgement. ``mem_beat_q`` counts beats."""

    def __init__(self, g: UnitGenerator, mp_q: str, beat_q: str):
        self.g = g
        self.e = g.e
        self.mp_q = mp_q
        self.beat_q = beat_q
        self.req: list[tuple[str, str, str, str, str]] = []  # (active, write, addr, size, len)
        self.wdata: list[tuple[str, str, str, str]] = []  # (active, data, strb, last)
        self.rsp_ready: list[str] = []
        self.phase_next: list[tuple[str, str]] = []
        self.beat_next: list[tuple[str, str]] = []
        e = self.e
        self.ph0 = e.icmp("eq", mp_q, e.const(0, 2), 2, "ph_req")
        self.ph1 = e.icmp("eq", mp_q, e.const(1, 2), 2, "ph_data")
        self.ph2 = e.icmp("eq", mp_q, e.const(2, 2), 2, "ph_ack")
        self.beat_inc = e.binop("add", beat_q, e.const(1, 9), 9, "beat_inc")
        g.spm_writes = {}

    def wait_state(self, st: State) -> str:
        """Emits the engine logic of one wait state; returns its 'done' signal."""
        g, e = self.g, self.e
        op = st.wait
        assert op is not None
        here = g.is_state[st.id]
        beats = mem_beats(op)
        write = isinstance(op, aq.StoreOp | aq.BurstWriteOp)
        if isinstance(op, aq.LoadOp | aq.StoreOp):
            width = _w(op.result) if isinstance(op, aq.LoadOp) else _w(op.value)
            ebytes = width // 8
        else:
            width = spm_of(op).width
            ebytes = width // 8
        size = min(ebytes, 4).bit_length() - 1  # log2(bytes per beat)
        addr = g.ref(op.addr, st)
        active_req = e.and_(here, self.ph0)
        self.req.append(
            (active_req, e.const(int(write), 1), addr, e.const(size, 2), e.const(beats - 1, 8))
        )
        req_fire = e.and_(active_req, "%mem_req_ready")
        self.phase_next.append((req_fire, e.const(1, 2)))
        self.beat_next.append((req_fire, e.const(0, 9)))
        last_beat = e.icmp("eq", self.beat_q, e.const(beats - 1, 9), 9, "lastbeat")
        # byte lane of the current beat: (addr + beat * min(ebytes, 4)) % 4
        step = min(ebytes, 4)
        beat_off = e.binop("mul", e.zext(self.beat_q, 9, 32), e.const(step, 32), 32, "boff")
        cur_addr = e.binop("add", addr, beat_off, 32, "baddr")
        lane_sh = e.concat(e.extract(cur_addr, 0, 32, 2, "lane"), 2, e.const(0, 3), 3)
        lane_sh32 = e.zext(lane_sh, 5, 32)
        elem_idx = (
            self.beat_q if width < 64 else e.binop("shru", self.beat_q, e.const(1, 9), 9, "eidx")
        )
        half = e.extract(self.beat_q, 0, 9, 1, "half")
        if not write:
            active = e.and_(here, self.ph1)
            self.rsp_ready.append(active)
            fire = e.and_(active, "%mem_rsp_valid")
            self.beat_next.append((fire, self.beat_inc))
            done = e.and_(fire, last_beat)
            self.phase_next.append((done, e.const(0, 2)))
            data = e.binop("shru", "%mem_rsp_rdata", lane_sh32, 32, "rdata_sh")
            if isinstance(op, aq.LoadOp):
                reg = g.b.value_regs[op.result]
                g.reg(reg, width)
                if width == 64:
                    cur = "%" + reg
                    lo = e.extract(cur, 0, 64, 32)
                    hi = e.extract(cur, 32, 64, 32)
                    first = e.icmp("eq", half, e.const(0, 1), 1, "lo_beat")
                    newv = e.mux(
                        first,
                        e.concat(hi, 32, "%mem_rsp_rdata", 32),
                        e.concat("%mem_rsp_rdata", 32, lo, 32),
                        64,
                        "ld64",
                    )
                    g.write(reg, fire, newv)
                else:
                    g.write(reg, fire, e.extract(data, 0, 32, width, "ldv"))
            else:
                spm = op.scratchpad.root_reference.data
                off = g.ref(op.offset, st)
                idx = e.binop("add", off, e.zext(elem_idx, 9, 32), 32, "bidx")
                if width == 64:
                    for h in (0, 1):
                        hsel = e.and_(fire, e.icmp("eq", half, e.const(h, 1), 1, "h"))
                        g.spm_writes.setdefault(spm, []).append((hsel, idx, "%mem_rsp_rdata", h))
                else:
                    g.spm_writes.setdefault(spm, []).append(
                        (fire, idx, e.extract(data, 0, 32, width, "bv"), None)
                    )
            return done
        # writes: data beats, then the acknowledgement
        active = e.and_(here, self.ph1)
        if isinstance(op, aq.StoreOp):
            v = g.ref(op.value, st)
            if width == 64:
                lo = e.extract(v, 0, 64, 32)
                hi = e.extract(v, 32, 64, 32)
                first = e.icmp("eq", half, e.const(0, 1), 1, "lo_beat")
                data = e.mux(first, lo, hi, 32, "st64")
            else:
                data = e.binop("shl", e.zext(v, width, 32), lane_sh32, 32, "wdata_sh")
        else:
            spm = op.scratchpad.root_reference.data
            off = g.ref(op.offset, st)
            idx = e.binop("add", off, e.zext(elem_idx, 9, 32), 32, "bidx")
            elem = g.spm_read(spm, idx, f"bw_{spm}")
            if width == 64:
                lo = e.extract(elem, 0, 64, 32)
                hi = e.extract(elem, 32, 64, 32)
                first = e.icmp("eq", half, e.const(0, 1), 1, "lo_beat")
                data = e.mux(first, lo, hi, 32, "bw64")
            else:
                data = e.binop("shl", e.zext(elem, width, 32), lane_sh32, 32, "wdata_sh")
        mask = {1: 0b1, 2: 0b11, 4: 0b1111, 8: 0b1111}[ebytes]
        strb = e.extract(
            e.binop(
                "shl",
                e.const(mask, 8),
                e.zext(e.extract(cur_addr, 0, 32, 2, "lane"), 2, 8),
                8,
                "strb",
            ),
            0,
            8,
            4,
            "strb4",
        )
        self.wdata.append((active, data, strb, last_beat))
        wfire = e.and_(active, "%mem_wdata_ready")
        self.beat_next.append((wfire, self.beat_inc))
        self.phase_next.append((e.and_(wfire, last_beat), e.const(2, 2)))
        ack = e.and_(here, self.ph2)
        self.rsp_ready.append(ack)
        done = e.and_(ack, "%mem_rsp_valid")
        self.phase_next.append((done, e.const(0, 2)))
        return done

    def finish(self) -> None:
        g = self.g
        for en, v in self.phase_next:
            g.write(self.mp_q[1:], en, v)
        for en, v in self.beat_next:
            g.write(self.beat_q[1:], en, v)

    def outputs(self) -> list[tuple[str, str, int]]:
        e = self.e

        def pick(items: list[tuple[str, str]], w: int, hint: str) -> str:
            return e.onehot_select(items, e.const(0, w), w, hint)

        req_valid = e.or_(*[a for a, *_ in self.req], hint="req_valid")
        return [
            ("mem_req_valid", req_valid, 1),
            ("mem_req_write", pick([(a, wr) for a, wr, *_ in self.req], 1, "req_wr"), 1),
            ("mem_req_addr", pick([(a, ad) for a, _, ad, *_ in self.req], 32, "req_addr"), 32),
            ("mem_req_size", pick([(a, s) for a, _, _, s, _ in self.req], 2, "req_size"), 2),
            ("mem_req_len", pick([(a, n) for a, *_, n in self.req], 8, "req_len"), 8),
            ("mem_wdata_valid", e.or_(*[a for a, *_ in self.wdata], hint="wd_valid"), 1),
            ("mem_wdata", pick([(a, d) for a, d, _, _ in self.wdata], 32, "wd"), 32),
            ("mem_wstrb", pick([(a, s) for a, _, s, _ in self.wdata], 4, "wstrb"), 4),
            ("mem_wlast", pick([(a, lst) for a, _, _, lst in self.wdata], 1, "wlast"), 1),
            ("mem_rsp_ready", e.or_(*self.rsp_ready, hint="rsp_rdy"), 1),
        ]


_SSA = re.compile(r"%[A-Za-z0-9_]+")


def _prune_dead(lines: list[str], roots: list[str]) -> list[str]:
    """Drops combinational definitions nothing uses (e.g. the memory engine's phase decode
    in a unit without memory ops). With one operator per Verilog expression, dead values
    would otherwise become unused wires."""
    defs = [(line.split("=", 1)[0].strip(), line) for line in lines]
    live: set[str] = set()
    for text in roots:
        live.update(_SSA.findall(text))
    changed = True
    kept = {name for name, _ in defs if name in live}
    while changed:
        changed = False
        for name, line in defs:
            if name in kept:
                for ref in _SSA.findall(line.split("=", 1)[1]):
                    if ref not in kept:
                        kept.add(ref)
                        changed = True
    return [line for name, line in defs if name in kept]


__all__ = ["Unit", "UnitGenerator"]
