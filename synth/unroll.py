"""``aquas-unroll``: unroll ``scf.for`` loops as the spec's ``#[unroll(F)]`` directives ask.

A loop with ``aquas.unroll = F`` and trip count ``T`` becomes a loop of ``T // F``
iterations whose body holds ``F`` copies of the original body, followed by ``T % F``
peeled copies for the remainder. ``F >= T`` unrolls fully (no loop remains). Inner loops
are processed before outer ones, so unrolling an outer loop replicates already-unrolled
inner bodies. xDSL's ``scf-for-loop-unroll`` only unrolls fully and ignores directives,
hence this pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from aquas.dialects.aquas import PIPELINE_ATTR, UNROLL_ATTR, constant_value


def _clone_body(
    body: Block, iv: SSAValue, carried: list[SSAValue], before: Operation
) -> list[SSAValue]:
    """Clones the loop body before ``before`` with the induction variable and iteration
    arguments substituted; returns the yielded values."""
    parent = before.parent_block()
    assert parent is not None
    mapper: dict[SSAValue, SSAValue] = {body.args[0]: iv}
    mapper.update(zip(body.args[1:], carried, strict=True))
    out: list[SSAValue] = []
    for op in body.ops:
        if isinstance(op, scf.YieldOp):
            out = [mapper.get(a, a) for a in op.arguments]
            break
        parent.insert_op_before(op.clone(mapper), before)
    return out


def unroll_loop(loop: scf.ForOp, factor: int) -> None:
    """Unrolls ``loop`` (constant bounds required) by ``factor`` in place."""
    lb, ub, step = (constant_value(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        raise ValueError("aquas-unroll needs constant loop bounds and a positive step")
    ty = loop.lb.type
    assert isinstance(ty, IntegerType)
    parent = loop.parent_block()
    assert parent is not None
    trip = max(0, (ub - lb + step - 1) // step)
    factor = max(1, min(factor, trip)) if trip else 1
    main = trip // factor
    body = loop.body.block

    def const(value: int) -> SSAValue:
        op = arith.ConstantOp(IntegerAttr(value, ty))
        op.location = loop.location
        parent.insert_op_before(op, loop)
        return op.result

    carried: list[SSAValue] = list(loop.iter_args)
    if factor == 1 and trip > 1:
        loop.attributes.pop(UNROLL_ATTR, None)
        return
    peeled = range(trip)
    if factor < trip:
        # A loop of `main` iterations holding `factor` body copies, then the remainder.
        new_body = Block(arg_types=[ty, *[a.type for a in carried]])
        new_iv = new_body.args[0]
        anchor = scf.YieldOp()
        new_body.add_op(anchor)
        vals: list[SSAValue] = list(new_body.args[1:])
        for k in range(factor):
            iv_k: SSAValue = new_iv
            if k:
                off = arith.ConstantOp(IntegerAttr(k * step, ty))
                add = arith.AddiOp(new_iv, off.result)
                new_body.insert_op_before(off, anchor)
                new_body.insert_op_before(add, anchor)
                iv_k = add.result
            vals = _clone_body(body, iv_k, vals, anchor)
        new_body.erase_op(anchor)
        new_body.add_op(scf.YieldOp(*vals))
        new_loop = scf.ForOp(
            const(lb), const(lb + main * factor * step), const(step * factor), carried, new_body
        )
        new_loop.location = loop.location
        if PIPELINE_ATTR in loop.attributes:  # #[unroll(F), pipeline]: pipeline the unrolled loop
            new_loop.attributes[PIPELINE_ATTR] = loop.attributes[PIPELINE_ATTR]
        parent.insert_op_before(new_loop, loop)
        carried = list(new_loop.results)
        peeled = range(main * factor, trip)
    for i in peeled:
        carried = _clone_body(body, const(lb + i * step), carried, loop)
    for r, v in zip(loop.results, carried, strict=True):
        r.replace_all_uses_with(v)
    parent.erase_op(loop)


@dataclass(frozen=True)
class AquasUnrollPass(ModulePass):
    """Unrolls loops carrying the ``aquas.unroll`` directive by their factor."""

    name = "aquas-unroll"

    full: bool = False
    """Fully unroll every constant-bound loop, whatever its directive says."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # walk() is pre-order; reversing gives inner loops before their parents.
        loops = [o for o in op.walk() if isinstance(o, scf.ForOp)]
        for loop in reversed(loops):
            attr = loop.attributes.get(UNROLL_ATTR)
            if self.full:
                unroll_loop(loop, 1 << 30)
            elif isinstance(attr, IntegerAttr):
                unroll_loop(loop, int(attr.value.data))
