"""What the interface-plan passes share: rejections, ISAX selection, IR helpers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, IntegerType, ModuleOp, StringAttr, i32
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import SymbolTable

from aquas.diagnostics import loc_of
from aquas.dialects import aquas as aq

REJECTIONS_ATTR = "aquas.plan_rejections"
"""Discardable ``aquas.isax`` attribute: why a plan left accesses as they were."""


@dataclass(frozen=True)
class Rejection:
    """An access a plan could not rewrite, with the spec location and the reason."""

    plan: str
    isax: str
    op: str
    location: str  # file:line:col of the access in the spec, or "" when it has none
    reason: str

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}{self.plan} on @{self.isax}: {self.op}: {self.reason}"

    def as_dict(self) -> dict[str, str]:
        return {
            "plan": self.plan,
            "isax": self.isax,
            "op": self.op,
            "location": self.location,
            "reason": self.reason,
        }


def rejection(plan: str, isax: aq.IsaxOp, op: Operation, reason: str) -> Rejection:
    loc = loc_of(op)
    return Rejection(plan, isax.sym_name.data, op.name, str(loc) if loc else "", reason)


def record(isax: aq.IsaxOp, found: list[Rejection]) -> None:
    """Keeps ``found`` on the ISAX (printed with the IR, read back by :func:`rejections`)."""
    if not found:
        return
    old = isax.attributes.get(REJECTIONS_ATTR)
    items = list(old.data) if isinstance(old, ArrayAttr) else []
    items += [StringAttr(str(r)) for r in found]
    isax.attributes[REJECTIONS_ATTR] = ArrayAttr(items)


def scratchpad_of(op: aq._BurstOp) -> aq.ScratchpadOp:
    """The scratchpad a burst names."""
    ext = op.parent_op()
    while ext is not None and not isinstance(ext, aq.ExtensionOp):
        ext = ext.parent_op()
    assert ext is not None
    target = SymbolTable.lookup_symbol(ext, op.scratchpad)
    assert isinstance(target, aq.ScratchpadOp), op.scratchpad
    return target


def selected(module: ModuleOp, only: str) -> Iterator[aq.IsaxOp]:
    """The ISAXs a plan applies to: all, or the comma-separated names in ``only``."""
    names = {n.strip() for n in only.split(",") if n.strip()}
    for op in module.walk():
        if isinstance(op, aq.IsaxOp) and (not names or op.sym_name.data in names):
            yield op


def extension_of(isax: aq.IsaxOp) -> aq.ExtensionOp:
    ext = isax.parent_op()
    assert isinstance(ext, aq.ExtensionOp)
    return ext


def fresh_name(ext: aq.ExtensionOp, stem: str) -> str:
    taken = {
        o.sym_name.data
        for o in ext.body.block.ops
        if isinstance(o, aq.IsaxOp | aq.StateOp | aq.ScratchpadOp)
    }
    name, k = stem, 1
    while name in taken:
        name, k = f"{stem}_{k}", k + 1
    return name


def top_level(isax: aq.IsaxOp, op: Operation) -> Operation:
    """The op of the ISAX body's block that is or contains ``op``."""
    cur = op
    while cur.parent_block() is not isax.body.block:
        parent = cur.parent_op()
        assert parent is not None
        cur = parent
    return cur


def conditional(isax: aq.IsaxOp, op: Operation) -> bool:
    """Whether ``op`` sits inside an ``scf.if`` (it may not execute)."""
    p = op.parent_op()
    while p is not None and p is not isax:
        if isinstance(p, scf.IfOp):
            return True
        p = p.parent_op()
    return False


class Emitter:
    """Inserts new ops before ``anchor``, each with ``loc`` as its location."""

    def __init__(self, block: Block, anchor: Operation | None, loc: Operation):
        self.block, self.anchor, self.loc = block, anchor, loc.location

    def add(self, op: Operation) -> Operation:
        op.location = self.loc
        if self.anchor is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.anchor)
        return op

    def const(self, value: int, t: IntegerType = i32) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(_wrap(value, t), t))).results[0]

    def add_i32(self, a: SSAValue, k: int) -> SSAValue:
        if k == 0:
            return a
        return self.add(arith.AddiOp(a, self.const(k))).results[0]

    def as_i32(self, v: SSAValue) -> SSAValue:
        t = v.type
        assert isinstance(t, IntegerType)
        w = t.width.data
        if w == 32:
            return v
        if w > 32:
            return self.add(arith.TruncIOp(v, i32)).results[0]
        from aquas.plans.affine import domain_of

        loop = domain_of(v)
        if loop is not None and all(x >= 0 for x in loop.values):
            return self.add(arith.ExtUIOp(v, i32)).results[0]
        return self.add(arith.ExtSIOp(v, i32)).results[0]

    def base(self, base: str | None) -> SSAValue:
        if base == "rs1":
            return self.add(aq.ReadRs1Op()).results[0]
        if base == "rs2":
            return self.add(aq.ReadRs2Op()).results[0]
        return self.const(0)

    def affine_i32(self, const: int, terms: list[tuple[SSAValue, int]]) -> SSAValue:
        """``const + sum(k * v)`` in i32."""
        acc: SSAValue | None = None
        for v, k in terms:
            x = self.as_i32(v)
            if k != 1:
                x = self.add(arith.MuliOp(x, self.const(k))).results[0]
            acc = x if acc is None else self.add(arith.AddiOp(acc, x)).results[0]
        if acc is None:
            return self.const(const)
        return self.add_i32(acc, const)


def _wrap(value: int, t: IntegerType) -> int:
    w = t.width.data
    value &= (1 << w) - 1
    return value - (1 << w) if value >> (w - 1) else value
