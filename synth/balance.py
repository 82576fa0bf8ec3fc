"""``aquas-balance-sums``: a chain of additions becomes a tree, the latest operand last.

Unrolling ``acc += a[k] * b[k]`` by ``F`` leaves a chain ``((acc + p0) + p1) + ...`` of
``F`` adders: every product waits for the sum before it, so the body's datapath is
``F`` adders deep, and at a short clock the chain spreads over several states where the
products were ready together. Integer addition modulo ``2^W`` is associative and
commutative, so any tree over the same operands gives the same value on every input.

The pass takes each maximal tree of ``arith.addi`` of one type whose inner sums have no
other use, and rebuilds it by Huffman's rule on an estimate of when each operand is
ready (unit levels through the block's operations, a multiplication 4, a division 8):
the two earliest are added first. A loop-carried value (an argument of a loop body, such
as ``acc``) counts as the latest, so it is added at the root and the loop's recurrence
is one adder. A tree is rebuilt only when that makes it shallower, so chains of two or
three operands are left as written. xDSL's canonicalization reassociates constants only,
hence this pass. It runs in ``aquas synth``'s preparation (``synth/prepare.py``) and is
checked against the golden interpreter on every example spec (tests/test_balance.py).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Collection
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from aquas.dialects import aquas as aq

#: estimated levels of an operation's result after its operands
WEIGHT: dict[type[Operation], int] = {
    arith.MuliOp: 4,
    arith.DivSIOp: 8,
    arith.DivUIOp: 8,
    arith.RemSIOp: 8,
    arith.RemUIOp: 8,
}


def _inner(v: SSAValue, root: arith.AddiOp) -> arith.AddiOp | None:
    """The addition that computes ``v``, when it belongs to ``root``'s tree."""
    if not isinstance(v, OpResult) or not isinstance(v.owner, arith.AddiOp):
        return None
    op = v.owner
    if op.parent is not root.parent or v.type != root.result.type or not v.has_one_use():
        return None
    return op


def _tree(root: arith.AddiOp) -> tuple[list[SSAValue], list[arith.AddiOp]]:
    """The operands (left to right) and the inner additions (each after the one using
    it) of ``root``'s tree."""
    leaves: list[SSAValue] = []
    inner: list[arith.AddiOp] = []
    todo: list[SSAValue] = list(reversed(root.operands))
    while todo:  # chains are as long as the unrolled loop: no recursion
        v = todo.pop()
        sub = _inner(v, root)
        if sub is None:
            leaves.append(v)
        else:
            inner.append(sub)
            todo.extend(reversed(sub.operands))
    return leaves, inner


#: the level of a loop-carried value: later than anything the block computes
CARRIED = 1e9


def _levels(block: Block) -> dict[SSAValue, float]:
    """When each value of ``block`` is ready, in estimated levels (values from outside
    the block and the loop counter at 0, loop-carried values at ``CARRIED``)."""
    level: dict[SSAValue, float] = {}
    if isinstance(block.parent_op(), scf.ForOp):
        for arg in block.args[1:]:
            level[arg] = CARRIED
    for op in block.ops:
        ready = max((level.get(o, 0.0) for o in op.operands), default=0.0)
        for r in op.results:
            level[r] = ready + WEIGHT.get(type(op), 1)
    return level


def _depth(root: arith.AddiOp, inner: list[arith.AddiOp], level: dict[SSAValue, float]) -> float:
    """The level of ``root``'s result as its tree is written."""
    got: dict[SSAValue, float] = {}
    for op in [*reversed(inner), root]:  # operands before the sums using them
        got[op.result] = 1 + max(got.get(v, level.get(v, 0.0)) for v in op.operands)
    return got[root.result]


def balance_sums(module: ModuleOp, only: Collection[str] | None = None) -> set[str]:
    """Rebuilds every addition tree that a balanced order makes shallower, in the ISAXs
    named in ``only`` (all when None); returns the ISAXs where it rebuilt one."""
    from aquas.interpreter import find_extension

    roots: list[arith.AddiOp] = []
    isaxs = [i for i in find_extension(module).isaxs() if only is None or i.sym_name.data in only]
    for op in (o for isax in isaxs for o in isax.walk()):
        if not isinstance(op, arith.AddiOp):
            continue
        user = op.result.get_user_of_unique_use()
        if isinstance(user, arith.AddiOp) and _inner(op.result, user) is op:
            continue  # an inner sum: its root rebuilds it
        roots.append(op)
    done: set[str] = set()
    cache: dict[Block, dict[SSAValue, float]] = {}
    for root in roots:
        leaves, inner = _tree(root)
        if len(leaves) < 4:
            continue
        block = root.parent
        assert block is not None
        level = cache.get(block) or cache.setdefault(block, _levels(block))
        old = _depth(root, inner, level)
        seq = itertools.count()
        heap = [(level.get(v, 0.0), next(seq), v) for v in leaves]
        heapq.heapify(heap)
        new: list[arith.AddiOp] = []
        while len(heap) > 1:
            la, _, a = heapq.heappop(heap)
            lb, _, b = heapq.heappop(heap)
            add = arith.AddiOp(a, b)
            new.append(add)
            heapq.heappush(heap, (max(la, lb) + 1, next(seq), add.result))
        if heap[0][0] >= old:
            continue  # no shallower: keep the spec's order
        done.add(_isax_of(root))
        for add in new:
            add.location = root.location
            Rewriter.insert_op(add, InsertPoint.before(root))
        root.result.replace_all_uses_with(new[-1].result)
        for op in [root, *inner]:
            Rewriter.erase_op(op)
        cache.pop(block, None)  # its values changed
    return done


def _isax_of(op: Operation) -> str:
    p = op.parent_op()
    while not isinstance(p, aq.IsaxOp):
        assert p is not None
        p = p.parent_op()
    return p.sym_name.data


@dataclass(frozen=True)
class AquasBalanceSumsPass(ModulePass):
    """Rebuilds chains of integer additions as balanced trees, loop-carried operands last
    (exact: addition modulo ``2^W`` is associative and commutative). ``isaxs``: only in
    these ISAXs (``{isaxs=a,b}``; every ISAX without the option)."""

    name = "aquas-balance-sums"
    isaxs: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        balance_sums(op, self.isaxs or None)


__all__ = ["AquasBalanceSumsPass", "balance_sums"]
