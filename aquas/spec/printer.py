"""The extension of a lowered module printed back as an ``.isax`` spec.

The interface plans rewrite the spec in the ``aquas`` dialect (``aquas synth
--emit-plan-mlir``); this prints the result in the spec language, so that an architect
reads what the flow made of a naive spec in the language they wrote it in (``aquas synth
--emit-plan-isax``). The text lowers again to a module that computes the same thing, which
the tests check with the golden interpreter.

The IR is signless, the language typed, so every value is printed as an unsigned ``uN``
and every signed operation (``>>`` of a signed value, signed division and remainder, signed
comparisons) reinterprets its operands with ``as iN``. Each operation is one ``let``; loop
and branch results become ``var``s assigned at the end of their block. Constructs the
printer does not know (an op the frontend never emits) are an error naming the op, never
printed approximately.
"""

from __future__ import annotations

import re

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from aquas.diagnostics import AquasError, loc_of
from aquas.dialects import aquas as aq
from aquas.dialects.aquas import (
    CUSTOM_OPCODES,
    MUL_UNITS_ATTR,
    NOALIAS_ATTR,
    PIPELINE_ATTR,
    UNROLL_ATTR,
    constant_value,
)
from aquas.interpreter import find_extension

# the spec's opcode names (custom0..custom3), by opcode
_OPCODE_NAMES = {v: k for k, v in CUSTOM_OPCODES.items()}

_BINARY = {
    "arith.addi": "+",
    "arith.subi": "-",
    "arith.muli": "*",
    "arith.andi": "&",
    "arith.ori": "|",
    "arith.xori": "^",
    "arith.shli": "<<",
    "arith.shrui": ">>",
    "arith.divui": "/",
    "arith.remui": "%",
}
_SIGNED = {"arith.shrsi": ">>", "arith.divsi": "/", "arith.remsi": "%"}
# arith.cmpi predicates: eq ne slt sle sgt sge ult ule ugt uge
_CMP = ["==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="]
_CASTS = {"arith.extui": "zext", "arith.extsi": "sext", "arith.trunci": "trunc"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _width(v: SSAValue) -> int:
    t = v.type
    if not isinstance(t, IntegerType):
        raise AquasError(f"cannot print a value of type {t} in the spec language")
    return t.width.data


def _ty(v: SSAValue) -> str:
    return f"u{_width(v)}"


class _Printer:
    def __init__(self, declared: set[str]):
        self.declared = declared
        self.names: dict[SSAValue, str] = {}
        self.count = 0
        self.lines: list[str] = []
        self.depth = 1

    def fresh(self, hint: str | None) -> str:
        self.count += 1
        base = hint if hint and _WORD.fullmatch(hint) else "v"
        name = f"{base}_{self.count}"
        while name in self.declared:
            self.count += 1
            name = f"{base}_{self.count}"
        return name

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def name(self, v: SSAValue) -> str:
        if v not in self.names:
            raise AquasError(f"cannot print a value defined outside the ISAX ({v})")
        return self.names[v]

    def let(self, v: SSAValue, expr: str) -> None:
        n = self.fresh(v.name_hint)
        self.names[v] = n
        self.emit(f"let {n}: {_ty(v)} = {expr};")

    def block(self, block: Block, results: list[str] | None = None) -> None:
        """The ops of ``block``; its terminator's operands assigned to ``results``."""
        for op in block.ops:
            if isinstance(op, scf.YieldOp):
                targets = results or []
                vals = []
                for v in op.operands:
                    n = self.name(v)
                    if n in targets:  # a var assigned here: read its old value first (a swap)
                        t = self.fresh(None)
                        self.emit(f"let {t}: {_ty(v)} = {n};")
                        n = t
                    vals.append(n)
                for target, val in zip(targets, vals, strict=True):
                    self.emit(f"{target} = {val};")
                continue
            self.op(op)

    def op(self, op: Operation) -> None:
        n = op.name
        r = op.results[0] if op.results else None
        if isinstance(op, arith.ConstantOp):
            assert r is not None
            value = op.value
            if not isinstance(value, IntegerAttr):
                raise AquasError(f"cannot print the constant {value}")
            w = _width(r)
            self.let(r, str(int(value.value.data) & ((1 << w) - 1)))
        elif n in _BINARY:
            assert r is not None
            self.let(r, f"{self.name(op.operands[0])} {_BINARY[n]} {self.name(op.operands[1])}")
        elif n in _SIGNED:
            assert r is not None
            s = f"i{_width(r)}"
            a, b = self.name(op.operands[0]), self.name(op.operands[1])
            rhs = b if n == "arith.shrsi" else f"({b} as {s})"
            self.let(r, f"(({a} as {s}) {_SIGNED[n]} {rhs}) as {_ty(r)}")
        elif isinstance(op, arith.CmpiOp):
            assert r is not None
            p = op.predicate.value.data
            a, b = self.name(op.lhs), self.name(op.rhs)
            if 2 <= p <= 5:
                s = f"i{_width(op.lhs)}"
                a, b = f"({a} as {s})", f"({b} as {s})"
            self.let(r, f"{a} {_CMP[p]} {b}")
        elif isinstance(op, arith.SelectOp):
            assert r is not None
            self.let(r, f"select({', '.join(self.name(v) for v in op.operands)})")
        elif n in _CASTS:
            assert r is not None
            self.let(r, f"{_CASTS[n]}<{_ty(r)}>({self.name(op.operands[0])})")
        elif isinstance(op, aq.ReadRs1Op | aq.ReadRs2Op):
            assert r is not None
            self.names[r] = "rs1" if isinstance(op, aq.ReadRs1Op) else "rs2"
        elif isinstance(op, aq.LoadOp):
            self.let(op.result, f"mem<{_ty(op.result)}>[{self.name(op.addr)}]")
        elif isinstance(op, aq.StoreOp):
            self.emit(f"mem<{_ty(op.value)}>[{self.name(op.addr)}] = {self.name(op.value)};")
        elif isinstance(op, aq.SpmReadOp):
            spm = op.scratchpad.root_reference.data
            self.let(op.result, f"{spm}[{self.name(op.index)}]")
        elif isinstance(op, aq.SpmWriteOp):
            spm = op.scratchpad.root_reference.data
            self.emit(f"{spm}[{self.name(op.index)}] = {self.name(op.value)};")
        elif isinstance(op, aq.StateReadOp):
            self.let(op.result, op.state.root_reference.data)
        elif isinstance(op, aq.StateWriteOp):
            self.emit(f"{op.state.root_reference.data} = {self.name(op.value)};")
        elif isinstance(op, aq.BurstReadOp | aq.BurstWriteOp):
            spm = op.scratchpad.root_reference.data
            side = f"{spm}[{self.name(op.offset)} +: {op.length_value}]"
            mem = f"mem[{self.name(op.addr)}]"
            if isinstance(op, aq.BurstReadOp):
                self.emit(f"burst {side} <- {mem};")
            else:
                self.emit(f"burst {mem} <- {side};")
        elif isinstance(op, aq.WriteRdOp):
            self.emit(f"return {self.name(op.value)};")
        elif isinstance(op, scf.ForOp):
            self.loop(op)
        elif isinstance(op, scf.IfOp):
            self.branch(op)
        else:
            where = loc_of(op)
            raise AquasError(
                f"cannot print {n} in the spec language"
                + (f" ({where.filename}:{where.line})" if where else ""),
                hint="--emit-plan-mlir prints every op",
            )

    def results_as_vars(self, op: Operation, inits: list[str]) -> list[str]:
        """A ``var`` for each result of ``op``, starting at ``inits``."""
        names = []
        for res, init in zip(op.results, inits, strict=True):
            v = self.fresh(res.name_hint)
            self.emit(f"var {v}: {_ty(res)} = {init};")
            names.append(v)
        return names

    def loop(self, op: scf.ForOp) -> None:
        bounds = [constant_value(v) for v in (op.lb, op.ub, op.step)]
        if any(b is None for b in bounds):
            raise AquasError("cannot print a loop whose bounds are not constants")
        lb, ub, step = bounds
        carried = self.results_as_vars(op, [self.name(v) for v in op.iter_args])
        attrs = []
        unroll = op.attributes.get(UNROLL_ATTR)
        if isinstance(unroll, IntegerAttr):
            attrs.append(f"unroll({unroll.value.data})")
        pipe = op.attributes.get(PIPELINE_ATTR)
        if isinstance(pipe, IntegerAttr):
            ii = int(pipe.value.data)
            attrs.append(
                "pipeline" if ii == 0 else "pipeline(off)" if ii < 0 else f"pipeline({ii})"
            )
        if attrs:
            self.emit(f"#[{', '.join(attrs)}]")
        body = op.body.block
        iv = body.args[0]
        ivn = self.fresh(iv.name_hint)
        self.names[iv] = ivn
        for a, v in zip(body.args[1:], carried, strict=True):
            self.names[a] = v
        step_text = "" if step == 1 else f" step {step}"
        self.emit(f"for {ivn}: {_ty(iv)} in {lb}..{ub}{step_text} {{")
        self.depth += 1
        self.block(body, carried)
        self.depth -= 1
        self.emit("}")
        for res, v in zip(op.results, carried, strict=True):
            self.names[res] = v

    def branch(self, op: scf.IfOp) -> None:
        names = self.results_as_vars(op, ["0"] * len(op.results))
        self.emit(f"if {self.name(op.cond)} {{")
        self.depth += 1
        self.block(op.true_region.block, names)
        self.depth -= 1
        if op.false_region.blocks and list(op.false_region.block.ops):
            self.emit("} else {")
            self.depth += 1
            self.block(op.false_region.block, names)
            self.depth -= 1
        self.emit("}")
        for res, v in zip(op.results, names, strict=True):
            self.names[res] = v


def print_spec(module: ModuleOp) -> str:
    """The extension of ``module`` as ``.isax`` text (module docstring); an op it cannot
    print is an :class:`AquasError`."""
    ext = find_extension(module)
    declared = {s.sym_name.data for s in (*ext.states(), *ext.scratchpads())}
    out = [f"extension {ext.sym_name.data};", ""]
    for st in ext.states():
        init = int(st.init.value.data) & ((1 << st.width) - 1)
        out.append(f"state {st.sym_name.data}: u{st.width} = {init};")
    for spm in ext.scratchpads():
        text = f"scratchpad {spm.sym_name.data}: [u{spm.width}; {spm.size}]"
        if spm.partition.data != "none":
            text += f" partition({spm.partition.data}, {spm.factor_value})"
        if spm.impl is not None:
            ports = spm.ports_value
            text += f" impl({spm.impl.data}{f'({ports})' if ports > 1 else ''})"
        out.append(text + ";")
    for isax in ext.isaxs():
        p = _Printer(declared)
        ops = list(isax.body.block.ops)
        for o in ops[:-1]:
            if isinstance(o, aq.WriteRdOp):
                raise AquasError(
                    f"cannot print @{isax.sym_name.data}: it writes rd before its last op "
                    "(the language's `return` is the last statement)"
                )
        for o in ops:
            p.op(o)
        attrs = [f"opcode({_OPCODE_NAMES[isax.opcode_value]})"]
        if isax.funct3_value:
            attrs.append(f"funct3({isax.funct3_value})")
        attrs.append(f"funct7({isax.funct7_value})")
        units = isax.attributes.get(MUL_UNITS_ATTR)
        if isinstance(units, IntegerAttr):
            attrs.append(f"mul_units({units.value.data})")
        if NOALIAS_ATTR in isax.attributes:
            attrs.append("noalias")
        params = ", ".join(r for r in ("rs1", "rs2") if r in isax.used)
        result = " -> rd" if "rd" in isax.used else ""
        out += ["", f"#[{', '.join(attrs)}]", f"isax {isax.sym_name.data}({params}){result} {{"]
        out += p.lines
        out.append("}")
    return "\n".join(out) + "\n"


__all__ = ["print_spec"]
