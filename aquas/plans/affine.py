"""Affine address analysis for the interface plans.

An address is *affine* when it is ``base + c + sum(k_i * v_i)``: ``base`` is ``rs1``,
``rs2`` or nothing (an absolute address), ``c`` and ``k_i`` are compile-time integers and
each ``v_i`` is an induction variable of an enclosing ``scf.for`` with constant bounds, or
a run-time value with a small known range (``x & 31``, ``zext`` of an ``i4``): such an
address ranges over a known window, which a load burst can cover. The address arithmetic
is i32 and wraps modulo 2^32, which addition, subtraction, multiplication and left shift
by constants preserve, so the form is exact.

:func:`footprint` turns an access into the set of byte offsets from its base that it may
touch, which is what the plans' aliasing checks compare.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import BlockArgument, Operation, SSAValue

from aquas.dialects import aquas as aq
from aquas.dialects.aquas import constant_value
from aquas.plans.common import scratchpad_of

MAX_POINTS = 1 << 16
"""Enumerating the iteration space of an access stops here (the access is then unknown)."""
MAX_RANGE = 256
"""Largest range of a run-time index term (``x & 255`` at most)."""


@dataclass(frozen=True)
class Loop:
    """A constant-bound ``scf.for``: its induction variable's values."""

    iv: SSAValue
    values: tuple[int, ...]


@dataclass
class Affine:
    """``base + const + sum(coef[iv] * iv)``."""

    base: str | None
    const: int
    coefs: dict[SSAValue, int] = field(default_factory=dict)

    def loops(self) -> list[Loop]:
        """The domain of every term (a loop counter's values, or a run-time range)."""
        out = []
        for v in self.coefs:
            loop = domain_of(v)
            assert loop is not None
            out.append(loop)
        return out

    def runtime_terms(self) -> list[SSAValue]:
        """Terms that are not loop counters (their value is only known at run time)."""
        return [v for v in self.coefs if loop_of(v) is None]

    def values(self) -> list[int] | None:
        """Every value of ``const + sum(coef * iv)`` over the iteration space, or None when
        the space is larger than :data:`MAX_POINTS`."""
        loops = self.loops()
        n = 1
        for lp in loops:
            n *= max(1, len(lp.values))
            if n > MAX_POINTS:
                return None
        if any(not lp.values for lp in loops):
            return []
        coefs = [self.coefs[lp.iv] for lp in loops]
        return [
            self.const + sum(k * v for k, v in zip(coefs, point, strict=True))
            for point in itertools.product(*(lp.values for lp in loops))
        ]


def loop_of(v: SSAValue) -> Loop | None:
    """The loop whose induction variable ``v`` is, when its bounds are constants."""
    if not isinstance(v, BlockArgument) or v.index != 0:
        return None
    loop = v.block.parent_op()
    if not isinstance(loop, scf.ForOp):
        return None
    lb, ub, step = (constant_value(x) for x in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    t = loop.lb.type
    assert isinstance(t, IntegerType)
    w = t.width.data
    # the interpreter and the RTL compare bounds as signed values of the loop's type
    lb, ub = _signed(lb, w), _signed(ub, w)
    return Loop(v, tuple(range(lb, ub, step)))


def domain_of(v: SSAValue) -> Loop | None:
    """The values ``v`` can take: a loop counter's, or a small run-time range."""
    loop = loop_of(v)
    if loop is not None:
        return loop
    r = _bounded(v)
    return None if r is None else Loop(v, tuple(range(r[0], r[1] + 1)))


def _bounded(v: SSAValue) -> tuple[int, int] | None:
    """A small unsigned range of a run-time value: ``x & m`` or ``zext`` of a narrow one."""
    op = v.owner
    if isinstance(op, arith.AndIOp):
        for side in (op.lhs, op.rhs):
            m = constant_value(side)
            t = side.type
            if m is not None and isinstance(t, IntegerType):
                m &= (1 << t.width.data) - 1
                if m < MAX_RANGE and (m + 1) & m == 0:
                    return (0, m)
    if isinstance(op, arith.ExtUIOp):
        t = op.input.type
        if isinstance(t, IntegerType) and (1 << t.width.data) <= MAX_RANGE:
            return (0, (1 << t.width.data) - 1)
    return None


def _signed(x: int, w: int) -> int:
    x &= (1 << w) - 1
    return x - (1 << w) if x >> (w - 1) else x


def _scaled(a: Affine, k: int) -> Affine | None:
    if a.base is not None and k != 1:
        return None  # k * rs1 is not a pointer plus an offset
    return Affine(a.base, a.const * k, {iv: c * k for iv, c in a.coefs.items()})


def _sum(a: Affine, b: Affine, sign: int) -> Affine | None:
    if b.base is not None and (sign < 0 or a.base is not None):
        return None
    coefs = dict(a.coefs)
    for iv, c in b.coefs.items():
        coefs[iv] = coefs.get(iv, 0) + sign * c
    coefs = {iv: c for iv, c in coefs.items() if c}
    return Affine(a.base or b.base, a.const + sign * b.const, coefs)


def _iv_only_in_range(a: Affine, w: int, signed: bool) -> bool:
    """An extension or truncation keeps an IV-only expression when all its values fit."""
    if a.base is not None:
        return False
    vals = a.values()
    if vals is None:
        return False
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    return all(lo <= v <= hi for v in vals)


def affine(v: SSAValue) -> Affine | None:
    """``v`` in affine form, or None when it is not affine."""
    c = constant_value(v)
    if c is not None:
        t = v.type
        assert isinstance(t, IntegerType)
        return Affine(None, _signed(c, t.width.data))
    if loop_of(v) is not None:
        return Affine(None, 0, {v: 1})
    exact = _affine_op(v)
    if exact is None and _bounded(v) is not None:
        return Affine(None, 0, {v: 1})  # a run-time value in a small known range
    return exact


def _affine_op(v: SSAValue) -> Affine | None:
    op = v.owner
    if not isinstance(op, Operation):
        return None
    if isinstance(op, aq.ReadRs1Op):
        return Affine("rs1", 0)
    if isinstance(op, aq.ReadRs2Op):
        return Affine("rs2", 0)
    if isinstance(op, arith.AddiOp | arith.SubiOp):
        a, b = affine(op.lhs), affine(op.rhs)
        if a is None or b is None:
            return None
        return _sum(a, b, 1 if isinstance(op, arith.AddiOp) else -1)
    if isinstance(op, arith.MuliOp | arith.ShLIOp):
        a, b = affine(op.lhs), affine(op.rhs)
        if a is None or b is None:
            return None
        if isinstance(op, arith.ShLIOp):
            if b.base is not None or b.coefs or not 0 <= b.const < 32:
                return None
            return _scaled(a, 1 << b.const)
        if not b.coefs and b.base is None:
            return _scaled(a, b.const)
        if not a.coefs and a.base is None:
            return _scaled(b, a.const)
        return None
    if isinstance(op, arith.ExtUIOp | arith.ExtSIOp | arith.TruncIOp):
        a = affine(op.input)
        src, dst = op.input.type, op.result.type
        assert isinstance(src, IntegerType) and isinstance(dst, IntegerType)
        if a is None:
            return None
        narrow = min(src.width.data, dst.width.data)
        if _iv_only_in_range(a, narrow, isinstance(op, arith.ExtSIOp)):
            return a
        return None
    return None


@dataclass(frozen=True)
class Footprint:
    """Byte offsets from ``base`` an access may touch; ``None`` offsets: anything."""

    base: str | None
    offsets: frozenset[int] | None

    def may_overlap(self, other: Footprint, noalias: bool = False) -> bool:
        """``noalias``: regions addressed through different bases are disjoint (the
        ISAX's ``#[noalias]`` contract)."""
        if self.offsets is None or other.offsets is None:
            return True
        if self.base != other.base:
            return not noalias
        return not self.offsets.isdisjoint(other.offsets)


UNKNOWN = Footprint(None, None)


def access_bytes(op: Operation) -> int:
    """Bytes per element of a memory-interface op."""
    if isinstance(op, aq.LoadOp):
        t = op.result.type
    elif isinstance(op, aq.StoreOp):
        t = op.value.type
    else:
        assert isinstance(op, aq.BurstReadOp | aq.BurstWriteOp)
        spm = scratchpad_of(op)
        return (spm.width + 7) // 8
    assert isinstance(t, IntegerType)
    return t.width.data // 8


def footprint(op: Operation) -> Footprint:
    """The bytes a load, store or burst may touch (:data:`UNKNOWN` when not affine)."""
    addr = affine(op.addr)  # type: ignore[attr-defined]
    if addr is None:
        return UNKNOWN
    starts = addr.values()
    if starts is None:
        return UNKNOWN
    size = access_bytes(op)
    if isinstance(op, aq.BurstReadOp | aq.BurstWriteOp):
        size *= op.length_value
    mask = 0xFFFFFFFF
    return Footprint(addr.base, frozenset((s + k) & mask for s in starts for k in range(size)))
