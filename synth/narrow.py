"""``aquas-narrow-arith``: multiplications, additions and subtractions at the width of
their operands' values, not of their types.

Specs widen before they compute, as C does: ``sext<i64>(x) - cx`` for two 32-bit values,
``(a as i32) * (b as i32)`` for two ``i8``. The type's width is then what a datapath
builds: a 64-bit subtracter and a 64-by-64 multiplier where 33 bits and 33-by-33 hold
every value. A multiplier's area grows with the square of its width and its delay with
its logarithm, so this decides both the unit's area and whether a multiply-accumulate
fits the core's clock. Yosys cannot narrow an operator whose inputs are sign-extended
(its ``wreduce`` drops only constant-zero high bits), hence this pass.

For a value ``v`` of type ``iW``, :func:`signed_bits` is a width ``n <= W`` such that
``v``'s value, read as a signed ``W``-bit number, is ``sext(trunc(v, n))``: it is derived
from how ``v`` is computed (``extsi`` of an ``iN`` gives ``N``, or less if the ``iN`` is
narrower still; a truncation keeps its operand's width when that fits; a constant its own
two's-complement width; ``a + b`` and ``a - b`` one more than the wider operand, ``a * b``
the sum, a select the wider; a value of ``k`` unsigned bits ``k + 1``; anything else
``W``). :func:`unsigned_bits` is the same for zero extension (``extui``, truncation,
constants, ``and`` with a narrow mask, a constant right shift, ``+``, ``*``, select).
The shared multipliers (``synth/binding.py``) read the same analysis.

A ``W``-bit ``a op b`` whose exact result needs ``P < W`` bits that way becomes
``ext(trunc(a, P) op trunc(b, P), W)``: the ``P``-bit operation gives the exact result
modulo ``2^P``, the exact result fits in ``P`` bits, so extending it gives the exact result,
and the ``W``-bit operation's value is that modulo ``2^W``. The truncations and extensions
are wiring. The pass runs in ``aquas synth``'s preparation (``synth/prepare.py``) and is
checked against the golden interpreter on every example spec (tests/test_narrow.py).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from aquas import intops
from aquas.dialects import aquas as aq

#: How far back through the operand chain the widths are derived.
DEPTH = 12


def _w(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, IntegerType)
    return t.width.data


def _const(v: SSAValue) -> int | None:
    """The constant's value modulo ``2^W``, or None."""
    if isinstance(v, OpResult) and isinstance(v.owner, arith.ConstantOp):
        value = v.owner.value
        data = getattr(value, "value", None)
        if data is not None and isinstance(data.data, int):
            return data.data % (1 << _w(v))
    return None


def _incoming(v: SSAValue) -> list[SSAValue] | None:
    """The values an iteration argument of an ``scf.for``, or a result of one, takes: its
    initial value and the value the body yields (a pipelined loop's stage registers are
    such arguments, and the epilogue reads them as results: ``synth/loop_pipeline.py``),
    or None for any other value."""
    if isinstance(v, BlockArgument) and v.index > 0:
        loop, i = v.block.parent_op(), v.index - 1
    elif isinstance(v, OpResult) and isinstance(v.owner, scf.ForOp):
        loop, i = v.owner, v.index
    else:
        return None
    if not isinstance(loop, scf.ForOp):
        return None
    y = loop.body.block.last_op
    assert isinstance(y, scf.YieldOp)
    return [loop.iter_args[i], y.arguments[i]]


def unsigned_bits(v: SSAValue, depth: int = DEPTH) -> int:
    """Bits that hold ``v``'s value as an unsigned number (see the module docstring);
    ``0`` for the constant 0."""
    w = _w(v)
    c = _const(v)
    if c is not None:
        return c.bit_length()
    if depth > 0 and (vals := _incoming(v)) is not None:
        return min(w, max(unsigned_bits(x, depth - 1) for x in vals))
    if depth == 0 or not isinstance(v, OpResult):
        return w
    op, d = v.owner, depth - 1
    n = w
    if isinstance(op, arith.ExtUIOp | arith.TruncIOp):
        n = unsigned_bits(op.input, d)
    elif isinstance(op, arith.AndIOp):
        n = min(unsigned_bits(op.lhs, d), unsigned_bits(op.rhs, d))
    elif isinstance(op, arith.ShRUIOp) and (k := _const(op.rhs)) is not None:
        n = max(0, unsigned_bits(op.lhs, d) - k) if k < w else 0
    elif isinstance(op, arith.AddiOp):
        n = max(unsigned_bits(op.lhs, d), unsigned_bits(op.rhs, d)) + 1
    elif isinstance(op, arith.MuliOp):
        n = unsigned_bits(op.lhs, d) + unsigned_bits(op.rhs, d)
    elif isinstance(op, arith.SelectOp):
        n = max(unsigned_bits(op.lhs, d), unsigned_bits(op.rhs, d))
    return min(w, n)


def signed_bits(v: SSAValue, depth: int = DEPTH) -> int:
    """Bits (at least 1) that hold ``v``'s value as a signed number (see the module
    docstring); a value of ``k`` unsigned bits holds ``k + 1``."""
    w = _w(v)
    c = _const(v)
    if c is not None:
        s = c - (1 << w) if c >> (w - 1) else c
        return min(w, (s if s >= 0 else ~s).bit_length() + 1)
    fallback = min(w, unsigned_bits(v, depth) + 1)
    if depth > 0 and (vals := _incoming(v)) is not None:
        return min(fallback, max(signed_bits(x, depth - 1) for x in vals))
    if depth == 0 or not isinstance(v, OpResult):
        return fallback
    op, d = v.owner, depth - 1
    n = w
    if isinstance(op, arith.ExtSIOp | arith.TruncIOp):
        n = signed_bits(op.input, d)
    elif isinstance(op, arith.AddiOp | arith.SubiOp):
        n = max(signed_bits(op.lhs, d), signed_bits(op.rhs, d)) + 1
    elif isinstance(op, arith.MuliOp):
        n = signed_bits(op.lhs, d) + signed_bits(op.rhs, d)
    elif isinstance(op, arith.SelectOp):
        n = max(signed_bits(op.lhs, d), signed_bits(op.rhs, d))
    return min(w, n, fallback)


def _needed(op: Operation) -> tuple[int, bool]:
    """(bits of the exact result, signed?) of a ``+``, ``-`` or ``*``."""
    a, b = op.operands
    if isinstance(op, arith.MuliOp):
        s = signed_bits(a) + signed_bits(b)
        u = unsigned_bits(a) + unsigned_bits(b)
    elif isinstance(op, arith.AddiOp):
        s = max(signed_bits(a), signed_bits(b)) + 1
        u = max(unsigned_bits(a), unsigned_bits(b)) + 1
    else:  # a - b may go below zero: only its signed width is exact
        return max(signed_bits(a), signed_bits(b)) + 1, True
    return (u, False) if u < s else (s, True)


def _truncated(v: SSAValue, narrow: IntegerType) -> Operation:
    """``v`` truncated to ``narrow``: a constant of that type for a constant (a truncation
    op would not fold before scheduling, and a multiply by it would be one of two data
    operands: Kyber's Barrett multiplies by 1290167 were 28 x 28-bit multipliers fed by a
    register holding the constant), else a truncation."""
    c = _const(v)
    if c is None:
        return arith.TruncIOp(v, narrow)
    p = narrow.width.data
    return arith.ConstantOp(IntegerAttr(intops.to_signed(c % (1 << p), p), narrow))


NARROWABLE = (arith.AddiOp, arith.SubiOp, arith.MuliOp)
ACCESS_OPS = (aq.LoadOp, aq.StoreOp, aq.BurstReadOp, aq.BurstWriteOp, aq.SpmReadOp, aq.SpmWriteOp)


def narrow_arith(module: ModuleOp) -> int:
    """Narrows every ``+``, ``-`` and ``*`` of ``module`` it can; returns how many."""
    count = 0
    for op in list(module.walk()):
        if not isinstance(op, NARROWABLE):
            continue
        w = _w(op.results[0])
        p, signed = _needed(op)
        if not 1 <= p < w or any(isinstance(u.operation, ACCESS_OPS) for u in op.results[0].uses):
            continue  # addresses and indices stay as written: storage analysis reads them
        narrow = IntegerType(p)
        ta, tb = (_truncated(v, narrow) for v in op.operands)
        new = type(op)(ta.results[0], tb.results[0])
        ext: Operation = (arith.ExtSIOp if signed else arith.ExtUIOp)(new.result, IntegerType(w))
        Rewriter.insert_op([ta, tb, new, ext], InsertPoint.before(op))
        for o in (ta, tb, new, ext):
            o.attributes.update({k: v for k, v in op.attributes.items() if k != "overflowFlags"})
        new.result.name_hint = op.results[0].name_hint
        ext.results[0].name_hint = op.results[0].name_hint
        op.results[0].replace_all_uses_with(ext.results[0])
        Rewriter.erase_op(op)
        count += 1
    return count


class AquasNarrowArithPass(ModulePass):
    """Computes ``+``, ``-`` and ``*`` at the width their operands' values need.

    A multiplication of two sign-extended ``i8`` values typed ``i32`` becomes a 16-bit
    multiplication, sign-extended; likewise for zero extension, constants and sums. The
    result is unchanged on every input (see ``aquas.synth.narrow``)."""

    name = "aquas-narrow-arith"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        narrow_arith(op)
