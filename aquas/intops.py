"""The one definition of w-bit integer semantics in aquas.

Every value is an unsigned Python int in ``0 .. 2**w - 1``; signed views are taken with
:func:`to_signed`. Each operation is defined once here and read by every consumer:

- the golden interpreter (``aquas/interpreter.py``) and the RISC-V ISS (``aquas/runtime/iss.py``);
- constant folding in the spec frontend and in the C frontend;
- e-graph term evaluation (``aquas.egraph.terms``);
- RTL generation, through :attr:`BinaryOp.comb` and the operator library's kinds.

The cases MLIR leaves poison are defined as RISC-V defines them: ``x / 0`` is all ones,
``x % 0`` is ``x``, the signed overflow ``MIN / -1`` is ``MIN`` (remainder 0), and a shift by
``w`` or more gives 0 (logical) or the sign fill (arithmetic).

To add a binary op: one :class:`BinaryOp` entry in :data:`BINARY` (its evaluation, its arith
name, its comb name) and, if the hardware needs more than the comb op, its case in the RTL
generator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def mask(w: int) -> int:
    return (1 << w) - 1


def to_signed(v: int, w: int) -> int:
    """The two's-complement value of the low ``w`` bits of ``v``."""
    v &= mask(w)
    return v - (1 << w) if w and v >> (w - 1) else v


def to_unsigned(v: int, w: int) -> int:
    return v & mask(w)


def _divs(a: int, b: int, w: int) -> int:
    if b == 0:
        return mask(w)
    sa, sb = to_signed(a, w), to_signed(b, w)
    q = abs(sa) // abs(sb)
    return (q if (sa < 0) == (sb < 0) else -q) & mask(w)


def _rems(a: int, b: int, w: int) -> int:
    if b == 0:
        return a
    sa, sb = to_signed(a, w), to_signed(b, w)
    r = abs(sa) % abs(sb)
    return (r if sa >= 0 else -r) & mask(w)


def _shrs(a: int, b: int, w: int) -> int:
    return (to_signed(a, w) >> min(b, w)) & mask(w)


@dataclass(frozen=True)
class BinaryOp:
    """One binary integer operation: ``fn(a, b, w)`` takes and returns values in ``0..2**w-1``."""

    name: str  # short name, used by e-graph terms and diagnostics
    arith: str  # the MLIR arith op
    comb: str  # the CIRCT comb op computing it (special cases aside, see the module doc)
    fn: Callable[[int, int, int], int]
    commutative: bool = False
    c_operator: str | None = None  # its C spelling (for unsigned operands), if it has one


def _op(
    name: str,
    arith: str,
    comb: str,
    fn: Callable[[int, int, int], int],
    *,
    commutative: bool = False,
    c: str | None = None,
) -> BinaryOp:
    return BinaryOp(name, arith, comb, fn, commutative, c)


_OPS = [
    _op(
        "add", "arith.addi", "comb.add", lambda a, b, w: (a + b) & mask(w), commutative=True, c="+"
    ),
    _op("sub", "arith.subi", "comb.sub", lambda a, b, w: (a - b) & mask(w), c="-"),
    _op(
        "mul", "arith.muli", "comb.mul", lambda a, b, w: (a * b) & mask(w), commutative=True, c="*"
    ),
    _op("divu", "arith.divui", "comb.divu", lambda a, b, w: a // b if b else mask(w), c="/"),
    _op("remu", "arith.remui", "comb.modu", lambda a, b, w: a % b if b else a, c="%"),
    _op("divs", "arith.divsi", "comb.divs", _divs),
    _op("rems", "arith.remsi", "comb.mods", _rems),
    _op("and", "arith.andi", "comb.and", lambda a, b, w: a & b, commutative=True, c="&"),
    _op("or", "arith.ori", "comb.or", lambda a, b, w: a | b, commutative=True, c="|"),
    _op("xor", "arith.xori", "comb.xor", lambda a, b, w: a ^ b, commutative=True, c="^"),
    _op(
        "shl", "arith.shli", "comb.shl", lambda a, b, w: (a << b) & mask(w) if b < w else 0, c="<<"
    ),
    _op("shru", "arith.shrui", "comb.shru", lambda a, b, w: a >> b if b < w else 0, c=">>"),
    _op("shrs", "arith.shrsi", "comb.shrs", _shrs),
]

#: Binary ops by short name.
BINARY: dict[str, BinaryOp] = {o.name: o for o in _OPS}
#: Binary ops by MLIR arith op name.
BY_ARITH: dict[str, BinaryOp] = {o.arith: o for o in _OPS}


def binary(name: str, w: int, a: int, b: int) -> int:
    """``a <name> b`` at width ``w``; operands are reduced to ``w`` bits first."""
    m = mask(w)
    return BINARY[name].fn(a & m, b & m, w)


#: Comparison predicates in the order of MLIR's ``arith.cmpi`` encoding (0 = eq ... 9 = uge).
PREDICATES: tuple[str, ...] = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")

#: The predicate with its operands swapped (``a p b`` == ``b swap[p] a``).
SWAPPED: dict[str, str] = {
    "eq": "eq",
    "ne": "ne",
    "slt": "sgt",
    "sle": "sge",
    "sgt": "slt",
    "sge": "sle",
    "ult": "ugt",
    "ule": "uge",
    "ugt": "ult",
    "uge": "ule",
}

#: The predicate's negation (``not (a p b)`` == ``a negated[p] b``).
NEGATED: dict[str, str] = {
    "eq": "ne",
    "ne": "eq",
    "slt": "sge",
    "sle": "sgt",
    "sgt": "sle",
    "sge": "slt",
    "ult": "uge",
    "ule": "ugt",
    "ugt": "ule",
    "uge": "ult",
}


def compare(pred: str, w: int, a: int, b: int) -> bool:
    """``a <pred> b`` at width ``w`` for an ``arith.cmpi`` predicate name."""
    a, b = a & mask(w), b & mask(w)
    if pred[0] == "s":
        a, b = to_signed(a, w), to_signed(b, w)
    rel = pred if pred in ("eq", "ne") else pred[1:]
    if rel == "eq":
        return a == b
    if rel == "ne":
        return a != b
    if rel == "lt":
        return a < b
    if rel == "le":
        return a <= b
    if rel == "gt":
        return a > b
    if rel == "ge":
        return a >= b
    raise ValueError(f"unknown predicate {pred!r}")


def zext(v: int, w_in: int) -> int:
    return v & mask(w_in)


def sext(v: int, w_in: int, w_out: int) -> int:
    return to_signed(v, w_in) & mask(w_out)


def trunc(v: int, w_out: int) -> int:
    return v & mask(w_out)


def cast(kind: str, v: int, w_in: int, w_out: int) -> int:
    """``extui`` / ``extsi`` / ``trunci`` of a ``w_in``-bit value to ``w_out`` bits."""
    if kind == "extui":
        return zext(v, w_in)
    if kind == "extsi":
        return sext(v, w_in, w_out)
    if kind == "trunci":
        return trunc(v, w_out)
    raise ValueError(f"unknown cast {kind!r}")


def mulh(a: int, b: int, w: int, *, a_signed: bool, b_signed: bool) -> int:
    """The high ``w`` bits of the ``2w``-bit product (RISC-V ``mulh``/``mulhsu``/``mulhu``)."""
    x = to_signed(a, w) if a_signed else a & mask(w)
    y = to_signed(b, w) if b_signed else b & mask(w)
    return ((x * y) >> w) & mask(w)
