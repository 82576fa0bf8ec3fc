"""IR preparation before scheduling.

1. ``aquas-unroll`` honours the spec's unroll directives (unrolled bodies become parallel
   datapaths, limited later by scratchpad bank ports);
2. ``canonicalize`` + ``cse`` fold the constant index arithmetic unrolling exposes, so that
   scratchpad banks become known at compile time;
3. ``aquas-if-convert``: an ``scf.if`` whose branches hold only pure ``arith`` ops becomes
   ``arith.select``s, so data-dependent choices cost no FSM states;
4. ``canonicalize``, ``cse`` and ``dce`` again, on what if-conversion exposed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from aquas.context import make_context
from aquas.passes import parse_pipeline


def _pure_region_ops(op: scf.IfOp) -> bool:
    for region in (op.true_region, op.false_region):
        for inner in region.walk():
            if isinstance(inner, scf.YieldOp):
                continue
            if not inner.name.startswith("arith."):
                return False
    return True


def if_convert(module: ModuleOp) -> int:
    """Turns pure ``scf.if`` ops into selects; returns how many were converted."""
    count = 0
    changed = True
    while changed:
        changed = False
        ifs = [o for o in module.walk() if isinstance(o, scf.IfOp)]
        # innermost first, so nested pure ifs collapse bottom-up
        for op in reversed(ifs):
            if not _pure_region_ops(op):
                continue
            block = op.parent_block()
            assert block is not None
            yields: list[list[SSAValue]] = []
            for region in (op.true_region, op.false_region):
                if not region.blocks:
                    yields.append([])
                    continue
                body = region.block
                for inner in list(body.ops):
                    if isinstance(inner, scf.YieldOp):
                        yields.append(list(inner.arguments))
                        continue
                    inner.detach()
                    block.insert_op_before(inner, op)
            for i, res in enumerate(op.results):
                sel: Operation = arith.SelectOp(op.cond, yields[0][i], yields[1][i])
                sel.location = op.location
                block.insert_op_before(sel, op)
                res.replace_all_uses_with(sel.results[0])
            block.erase_op(op)
            count += 1
            changed = True
            break
    return count


@dataclass(frozen=True)
class AquasIfConvertPass(ModulePass):
    """Turns each ``scf.if`` whose branches hold only ``arith`` ops into ``arith.select``s.

    The branch ops move in front of the ``if`` (they are pure, so computing both sides is
    safe) and each result becomes a select on the condition. Nested pure ifs collapse from
    the innermost out; an ``if`` with any other op (a memory access, a state write, a loop)
    is left alone and becomes a branch in the state machine.
    """

    name = "aquas-if-convert"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if_convert(op)


PIPELINE = "aquas-unroll,canonicalize,cse,aquas-if-convert,canonicalize,cse,dce"
"""What ``aquas synth`` runs before scheduling."""


def prepare(module: ModuleOp) -> ModuleOp:
    """Runs the preparation pipeline in place and returns the module."""
    parse_pipeline(PIPELINE).apply(make_context(), module)
    module.verify()
    return module
