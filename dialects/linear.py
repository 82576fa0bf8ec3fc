"""Linear forms of integer values of the ``aquas`` dialect: ``c + sum(k * term)``.

Shared by the scheduler (element indices of scratchpad accesses, ``aquas.synth.fsm``) and the
runtime (the memory an ISAX writes, ``aquas.runtime.coherence``). A loop's induction variable
is ``lb + step * t`` over its trip counter ``t``: its term is the induction variable itself
with coefficient ``step``, and :func:`trip_count` bounds ``t``.
"""

from __future__ import annotations

from collections.abc import Hashable

from xdsl.dialects import arith, scf
from xdsl.ir import BlockArgument, OpResult, SSAValue

from aquas.dialects.aquas import constant_value


def linear_form(v: SSAValue, depth: int) -> tuple[int, dict[Hashable, int]]:
    """``v`` as ``(c, {term: k})`` through constants, ``addi``, ``subi``, and
    ``muli``/``shli`` by a constant (coefficients are not reduced modulo the width). Any
    other value is a term of its own; ``depth`` bounds how far operands are followed."""
    c = constant_value(v)
    if c is not None:
        return c, {}
    if depth > 0 and isinstance(v, OpResult):
        op = v.owner
        if isinstance(op, arith.AddiOp | arith.SubiOp):
            c0, t0 = linear_form(op.lhs, depth - 1)
            c1, t1 = linear_form(op.rhs, depth - 1)
            sign = 1 if isinstance(op, arith.AddiOp) else -1
            out = dict(t0)
            for t, k in t1.items():
                out[t] = out.get(t, 0) + sign * k
            return c0 + sign * c1, out
        if isinstance(op, arith.MuliOp | arith.ShLIOp):
            x, factor = op.lhs, constant_value(op.rhs)
            if factor is None and isinstance(op, arith.MuliOp):
                x, factor = op.rhs, constant_value(op.lhs)
            if factor is not None and isinstance(op, arith.ShLIOp):
                w = getattr(v.type, "width", None)
                factor = (1 << factor) if w is not None and 0 <= factor < w.data else None
            if factor is not None:
                c0, t0 = linear_form(x, depth - 1)
                return c0 * factor, {t: m * factor for t, m in t0.items()}
    loop = induction_loop(v)
    if loop is not None:
        lb, step = constant_value(loop.lb), constant_value(loop.step)
        if lb is not None and step is not None:
            return lb, {v: step}
    return 0, {v: 1}


def induction_loop(v: Hashable) -> scf.ForOp | None:
    """The ``scf.for`` whose induction variable ``v`` is, else ``None``."""
    if not isinstance(v, BlockArgument):
        return None
    owner = v.owner.parent_op()
    if isinstance(owner, scf.ForOp) and v is owner.body.block.args[0]:
        return owner
    return None


def trip_count(loop: scf.ForOp) -> int | None:
    """Iterations of a loop with constant bounds (``None`` when they are not constant)."""
    lb, ub, step = (constant_value(x) for x in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, -(-(ub - lb) // step))
