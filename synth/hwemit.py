"""Builder of xDSL ``hw``/``comb``/``seq`` ops for the generated units.

Every value gets a name hint (the ``sv.namehint`` attribute CIRCT's ExportVerilog uses
for the wire it declares, and the SSA name xDSL prints) and the source location of the
spec construct it comes from, so the exported Verilog reads in the spec's terms with
``// file.isax:line:col`` comments. FSM state numbers become ``sv.localparam`` constants.

xDSL 0.74 has no ``sv`` dialect, so ``sv.localparam`` is declared here as a minimal IRDL
op printed in MLIR's generic form, which CIRCT parses like its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects import comb, hw, seq
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, SSAValue
from xdsl.irdl import IRDLOperation, attr_def, irdl_op_definition, result_def

from aquas.intops import PREDICATES

NAMEHINT = "sv.namehint"


@irdl_op_definition
class LocalParamOp(IRDLOperation):
    """``sv.localparam``: a named Verilog constant (printed generically for CIRCT)."""

    name = "sv.localparam"

    value = attr_def(IntegerAttr)
    param_name = attr_def(StringAttr, attr_name="name")
    result = result_def(IntegerType)

    def __init__(self, name: str, value: int, width: int):
        ty = IntegerType(width)
        super().__init__(
            attributes={"value": IntegerAttr(_signed(value, width), ty), "name": StringAttr(name)},
            result_types=[ty],
        )


def _signed(value: int, width: int) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


_BAD = re.compile(r"[^A-Za-z0-9_]")


def ident(hint: str) -> str:
    """A Verilog-safe identifier from a spec name or hint."""
    name = _BAD.sub("_", hint).strip("_") or "t"
    return name if not name[0].isdigit() else f"v{name}"


def width(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, IntegerType)
    return t.width.data


def basename_loc(loc: Attribute | None) -> LocationAttr:
    """The op's spec location with the file's base name (no machine paths in RTL)."""
    if isinstance(loc, FileLineColLoc):
        name = loc.filename.data.rsplit("/", 1)[-1]
        return FileLineColLoc(StringAttr(name), IntAttr(loc.line.data), IntAttr(loc.column.data))
    return UnknownLoc()


class HwBuilder:
    """Appends comb ops to one ``hw.module`` body; registers are added at the end."""

    def __init__(self, block: Block, clk: SSAValue, rst: SSAValue):
        self.block = block
        self.clk = clk
        self.rst = rst
        self.loc: LocationAttr = UnknownLoc()
        self.consts: dict[tuple[int, int], SSAValue] = {}
        self.slices: dict[tuple[SSAValue, int, int], SSAValue] = {}
        self.params: list[LocalParamOp] = []
        self.regs: dict[str, seq.CompRegOp] = {}
        # register names: a datapath wire with the same hint would take the name first
        self.reserved: set[str] = set()

    # -- primitives --------------------------------------------------------------------

    def add(self, op: Operation, hint: str | None) -> SSAValue:
        res = op.results[0]
        if hint is not None:
            name = ident(hint)
            if name in self.reserved:
                name += "_v"
            res.name_hint = name
            op.attributes[NAMEHINT] = StringAttr(name)
        op.location = self.loc
        self.block.add_op(op)
        return res

    def const(self, value: int, w: int) -> SSAValue:
        key = (value & ((1 << w) - 1), w)
        if key not in self.consts:
            op = hw.ConstantOp(_signed(value, w), w)
            self.block.add_op(op)
            self.consts[key] = op.result
        return self.consts[key]

    def param(self, name: str, value: int, w: int) -> SSAValue:
        op = LocalParamOp(name, value, w)
        op.result.name_hint = name
        self.block.add_op(op)
        self.params.append(op)
        return op.result

    def reg(
        self, name: str, w: int, reset: int | None, loc: LocationAttr | None = None
    ) -> SSAValue:
        """A register named ``name``; its next value is given later by ``drive``.
        ``reset``: its value after ``rst``, or None for a datapath register that is
        always written before it is read (no reset: the synchronous reset costs a gate
        per bit in front of every flip-flop, and its net reaches all of them)."""
        if name not in self.regs:
            placeholder = self.const(0 if reset is None else reset, w)
            # the placeholder input is replaced in ``drive`` (registers feed back)
            op = seq.CompRegOp(
                placeholder,
                self.clk,
                None if reset is None else (self.rst, placeholder),
            )
            op.data.name_hint = name
            # explicit, so that the Verilog reg keeps the name whatever xDSL prints
            op.attributes["name"] = StringAttr(name)
            op.location = loc if loc is not None else UnknownLoc()
            self.regs[name] = op
        return self.regs[name].data

    def drive(self, name: str, nxt: SSAValue) -> None:
        op = self.regs[name]
        op.operands = [nxt, *op.operands[1:]]
        self.block.add_op(op)

    # -- combinational helpers ---------------------------------------------------------

    def binop(self, op_name: str, a: SSAValue, b: SSAValue, hint: str | None) -> SSAValue:
        """``a <op> b`` for a two-operand comb op by name (``"comb.add"``)."""
        zero = self.consts.get((0, width(b)))
        if op_name in _ZERO_IS_IDENTITY and b is zero:
            return a
        if op_name in ("comb.add", "comb.or", "comb.xor") and a is zero:
            return b  # e.g. a burst's element index at offset 0
        cls = _COMB[op_name]
        if issubclass(cls, comb.VariadicCombOperation):
            return self.add(cls([a, b]), hint)
        assert issubclass(cls, comb.BinCombOperation)
        return self.add(cls(a, b), hint)

    def icmp(self, pred: str, a: SSAValue, b: SSAValue, hint: str | None) -> SSAValue:
        return self.add(comb.ICmpOp(a, b, _PREDICATE_ATTRS[pred]), hint)

    def mux(self, c: SSAValue, a: SSAValue, b: SSAValue, hint: str | None) -> SSAValue:
        if c is self.consts.get((1, 1)):
            return a  # e.g. the state register, written in every cycle
        return self.add(comb.MuxOp(c, a, b), hint)

    def _tree(
        self, op: type[comb.AndOp] | type[comb.OrOp], xs: Sequence[SSAValue], hint: str | None
    ) -> SSAValue:
        """A balanced tree of binary ``op``s: ExportVerilog splits a variadic op into unnamed
        parts and prints it as a left-leaning chain, which Yosys keeps as a chain (depth N
        instead of log N)."""
        level = list(xs)
        while len(level) > 1:
            nxt = [
                self.add(op([level[i], level[i + 1]]), hint) for i in range(0, len(level) - 1, 2)
            ]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0]

    def and_(self, *xs: SSAValue, hint: str | None = None) -> SSAValue:
        """AND of 1-bit values."""
        return self._tree(comb.AndOp, xs, hint)

    def not_(self, x: SSAValue, hint: str | None = None) -> SSAValue:
        return self.add(comb.XorOp([x, self.const(1, 1)]), hint)

    def or_tree(self, xs: Sequence[SSAValue], w: int, hint: str) -> SSAValue:
        """OR of ``w``-bit values (0 when there are none)."""
        return self._tree(comb.OrOp, xs, hint) if xs else self.const(0, w)

    def onehot_select(
        self, items: Sequence[tuple[SSAValue, SSAValue]], default: SSAValue, hint: str
    ) -> SSAValue:
        """``value of the enabled item, else default`` for mutually exclusive enables, as an
        AND-OR tree: log depth in the number of items instead of a priority-mux chain."""
        if not items:
            return default
        groups = self.by_value(items, hint)
        if len(groups) == 1:
            en, v = groups[0]
            return self.mux(en, v, default, hint)
        w = width(default)
        masked = self.masked(groups, w, hint)
        any_en = self.or_tree([en for en, _ in groups], 1, f"{hint}_any")
        return self.mux(any_en, self.or_tree(masked, w, f"{hint}_or"), default, hint)

    def by_value(
        self, items: Sequence[tuple[SSAValue, SSAValue]], hint: str
    ) -> list[tuple[SSAValue, SSAValue]]:
        """(enable, value) items with one per distinct value, under the OR of its enables:
        a register written with one shared operator's result, or with the bus's read data,
        from many states costs one AND-OR input of a select, not one per state."""
        enables: dict[SSAValue, list[SSAValue]] = {}
        for en, v in items:
            enables.setdefault(v, []).append(en)
        return [(self.or_tree(ens, 1, f"{hint}_en"), v) for v, ens in enables.items()]

    def masked(
        self, groups: Sequence[tuple[SSAValue, SSAValue]], w: int, hint: str
    ) -> list[SSAValue]:
        """The ``w``-bit values each ANDed with its (1-bit) enable."""
        return [
            self.add(comb.AndOp([self.replicate(en, w, f"{hint}_en"), v]), f"{hint}_sel")
            for en, v in groups
        ]

    def and_or(self, groups: Sequence[tuple[SSAValue, SSAValue]], w: int, hint: str) -> SSAValue:
        """The OR of the ``w``-bit values each ANDed with its (1-bit) enable."""
        return self.or_tree(self.masked(groups, w, hint), w, f"{hint}_or")

    def extract(self, x: SSAValue, lo: int, w_out: int, hint: str | None = None) -> SSAValue:
        """Bits ``lo`` .. ``lo + w_out - 1`` of ``x``; one op per slice, so that selects
        over the same slice taken in several states see one value (``onehot_select``)."""
        if lo == 0 and width(x) == w_out:
            return x
        key = (x, lo, w_out)
        if key not in self.slices:
            op = comb.ExtractOp(x, IntegerAttr(lo, 32), IntegerType(w_out))
            self.slices[key] = self.add(op, hint)
        return self.slices[key]

    def concat(self, hi: SSAValue, lo: SSAValue, hint: str | None = None) -> SSAValue:
        op = comb.ConcatOp([hi, lo], IntegerType(width(hi) + width(lo)))
        return self.add(op, hint)

    def mul_const(self, x: SSAValue, c: int, hint: str) -> SSAValue:
        """``x * c`` at ``x``'s width: a ``comb.mul`` by the constant, or, when ``c``'s
        signed digits are fewer than its one bits, the shifted ``x`` of its positive
        digits added and those of its negative digits subtracted
        (``timing.const_mul_terms``)."""
        from aquas.synth.timing import const_mul_terms

        w = width(x)
        terms = const_mul_terms(c, w)
        if all(sign > 0 for _, sign in terms):
            return self.binop("comb.mul", x, self.const(c % (1 << w), w), hint)

        def total(shifts: list[int], tag: str) -> SSAValue:
            parts = [self.shl_const(x, n, f"{hint}_{tag}{n}") for n in shifts]
            if len(parts) == 1:
                return parts[0]
            return self.add(comb.AddOp(parts), f"{hint}_{tag}")

        pos = [n for n, sign in terms if sign > 0]
        neg = total([n for n, sign in terms if sign < 0], "neg")
        return self.binop("comb.sub", total(pos, "pos") if pos else self.const(0, w), neg, hint)

    def shl_const(self, x: SSAValue, n: int, hint: str) -> SSAValue:
        """``x << n`` within ``x``'s width: wiring (its low bits under ``n`` zeros)."""
        if n == 0:
            return x
        lo = self.extract(x, 0, width(x) - n, f"{hint}_lo")
        return self.concat(lo, self.const(0, n), hint)

    def zext(self, x: SSAValue, w_out: int, hint: str | None = None) -> SSAValue:
        w_in = width(x)
        if w_in == w_out:
            return x
        if w_in > w_out:
            return self.extract(x, 0, w_out, hint)
        return self.concat(self.const(0, w_out - w_in), x, hint)

    def sext(self, x: SSAValue, w_out: int, hint: str | None = None) -> SSAValue:
        w_in = width(x)
        if w_in == w_out:
            return x
        sign = self.extract(x, w_in - 1, 1, f"{hint or 'x'}_sign")
        rep = self.add(comb.ReplicateOp(sign, IntegerType(w_out - w_in)), f"{hint or 'x'}_fill")
        return self.concat(rep, x, hint)

    def replicate(self, x: SSAValue, n: int, hint: str | None = None) -> SSAValue:
        """``n`` copies of the 1-bit ``x`` (``{n{x}}``)."""
        if n == 1:
            return x
        return self.add(comb.ReplicateOp(x, IntegerType(n)), hint)

    def select_tree(
        self, index: SSAValue, items: Sequence[SSAValue], hint: str, idx_w: int | None = None
    ) -> SSAValue:
        """items[index] as a balanced mux tree on the index bits (out of range → last
        level's default, i.e. an existing element; such indices are errors in the spec)."""
        idx_w = width(index) if idx_w is None else idx_w
        level = list(items)
        bit = 0
        while len(level) > 1:
            if bit >= idx_w:
                return level[0]
            sel = self.extract(index, bit, 1, f"{hint}_b{bit}")
            nxt = []
            for i in range(0, len(level), 2):
                if i + 1 < len(level):
                    nxt.append(self.mux(sel, level[i + 1], level[i], hint))
                else:
                    nxt.append(level[i])
            level = nxt
            bit += 1
        return level[0]


#: comb op classes by op name ("comb.add" ...); the arith -> comb table is aquas.intops.
_COMB: dict[str, type[Operation]] = {op.name: op for op in comb.Comb.operations}


#: comb.icmp's predicate attributes by name (xDSL would build and verify one per op).
_PREDICATE_ATTRS = {p: IntegerAttr(i, 64) for i, p in enumerate(PREDICATES)}

#: ``x op 0 == x``: CIRCT folds only some of these, and only for the variadic ops.
_ZERO_IS_IDENTITY = frozenset(
    {"comb.add", "comb.sub", "comb.or", "comb.xor", "comb.shl", "comb.shru", "comb.shrs"}
)

#: The ``sv`` ops the generated units use, for contexts that parse them back.
SV = Dialect("sv", [LocalParamOp])

__all__ = ["SV", "HwBuilder", "LocalParamOp", "basename_loc", "ident", "width"]
