"""Constant tables (``rom``) of the spec frontend: declarations and reads.

A ROM is a compile-time table, not storage: it never appears in the IR as a declaration.
A read with a constant index becomes the entry itself (an ``arith.constant``); a read with a
run-time index becomes a balanced tree of ``arith.select`` over the index bits, with the
entries at its leaves. That tree is the logic a synthesis tool makes of a constant case
table, so the golden interpreter, the scheduler, the RTL generator and the matcher all see
ordinary ``arith`` ops, and Yosys folds the constant leaves into logic. An index at or
beyond the table's length reads 0 (one compare, left out when the index type cannot reach
past the table). Entries are shared: equal leaves and equal subtrees are built once per
read, so a table of repeated values costs few multiplexers; a read costs at most
``SIZE - 1`` multiplexers for the tree.
"""

from __future__ import annotations

from lark import Token, Tree
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, UnitAttr
from xdsl.ir import Operation, SSAValue

from aquas.dialects import aquas as aq
from aquas.spec.lowering import Const, LoweringBase, Rom, Typed, Val, Where, signless
from aquas.spec.types import IntTy

_Node = tuple[str, int] | tuple[str, SSAValue]


class TableLowering(LoweringBase):
    """ROM reads; :class:`aquas.spec.expressions.ExprLowering` builds on it."""

    def rom_read(self, name: str, index: Val, at: Tree | Token) -> Typed:
        """Entry ``index`` (row-major, already bounds-checked when constant) of ROM ``name``."""
        rom = self.roms[name]
        if isinstance(index, Const):
            return self.const(signless(rom.values[index.value], rom.ty.width), rom.ty, at)
        return self._rom_tree(rom, index, at)

    def _rom_tree(self, rom: Rom, index: Typed, at: Where) -> Typed:
        start = len(self.block.ops)
        result = self._rom_tree_ops(rom, index, at)
        # Mark the tree and the arith ops computing the index (aq.ROM_ATTR), so the IR
        # says where they came from; aquas-fold-constants folds them (as any constant
        # arithmetic) when unrolling makes the index a constant.
        for op in list(self.block.ops)[start:]:
            op.attributes[aq.ROM_ATTR] = UnitAttr()
        todo = [index.value]
        while todo:
            v = todo.pop()
            owner = v.owner
            if not isinstance(owner, Operation) or not owner.name.startswith("arith."):
                continue
            if aq.ROM_ATTR in owner.attributes:
                continue
            owner.attributes[aq.ROM_ATTR] = UnitAttr()
            todo.extend(owner.operands)
        return result

    def _rom_tree_ops(self, rom: Rom, index: Typed, at: Where) -> Typed:
        n = len(rom.values)
        width = index.ty.width
        bits = min(max(n - 1, 0).bit_length(), width)
        # Leaves past the table are don't-cares: whenever the tree has them, the index type
        # reaches past the table and the compare below selects 0 for those indices.
        leaves = list(rom.values[: 1 << bits])
        consts: dict[int, SSAValue] = {}
        selects: dict[tuple[int, object, object], SSAValue] = {}
        bit_vals: dict[int, SSAValue] = {}

        def value(node: _Node) -> SSAValue:
            kind, v = node
            if kind == "v":
                assert isinstance(v, SSAValue)
                return v
            assert isinstance(v, int)
            if v not in consts:
                consts[v] = self.const(signless(v, rom.ty.width), rom.ty, at).value
            return consts[v]

        def key(node: _Node) -> object:
            return node[1] if node[0] == "c" else id(node[1])

        level: list[_Node] = [("c", v) for v in leaves]
        for b in range(bits):
            nxt: list[_Node] = []
            for j in range(0, len(level), 2):
                if j + 1 == len(level):  # the upper half lies past the table
                    nxt.append(level[j])
                    continue
                lo, hi = level[j], level[j + 1]
                if lo[0] == hi[0] and key(lo) == key(hi):
                    nxt.append(lo)  # both halves equal: this index bit does not matter
                    continue
                sk = (b, (lo[0], key(lo)), (hi[0], key(hi)))
                if sk not in selects:
                    if b not in bit_vals:
                        bit_vals[b] = self._bit(index, b, at)
                    op = self.emit(arith.SelectOp(bit_vals[b], value(hi), value(lo)), at)
                    selects[sk] = op.results[0]
                nxt.append(("v", selects[sk]))
            level = nxt
        result = value(level[0])
        if n < (1 << width):  # the index type reaches past the table: those read 0
            limit = self.const(signless(n, width), IntTy(width, False), at)
            inside = self.emit(arith.CmpiOp(index.value, limit.value, "ult"), at).results[0]
            zero = value(("c", 0))
            result = self.emit(arith.SelectOp(inside, result, zero), at).results[0]
        return Typed(result, rom.ty)

    def _bit(self, index: Typed, b: int, at: Where) -> SSAValue:
        v = index.value
        if b:
            amt = self.const(b, IntTy(index.ty.width, False), at)
            v = self.emit(arith.ShRUIOp(v, amt.value), at).results[0]
        if index.ty.width > 1:
            v = self.emit(arith.TruncIOp(v, IntegerType(1)), at).results[0]
        return v
