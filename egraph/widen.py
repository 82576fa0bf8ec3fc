"""Exact signed arithmetic at one width: the same computation written at different widths.

A fixed-point kernel is the same computation in C (``int64_t`` products, a result
truncated to ``int32_t``, a saturation compared at 32 bits) and in a spec (``i40``
products, the comparison at 40 bits): neither ever wraps, so both are the same integers.
The e-graph compares terms modulo 2^w and cannot see that; value ranges can. ``widen``
rewrites a term into an equal term whose signed arithmetic runs at 64 bits wherever the
operands' ranges prove it exact:

- the signed value of ``add``/``sub``/``mul``/``shl`` at width w whose result range fits
  in signed w bits is the 64-bit operation on its operands' signed values;
- ``shrs`` by a constant is an exact floor division at any width;
- ``sext`` keeps the signed value; ``zext`` of a non-negative value too; ``trunc`` to a
  width that holds the value's range keeps it;
- a signed comparison or equality compares signed values, so it compares them at 64 bits;
- a term of width w whose signed value ``v`` is known as a 64-bit term is ``trunc_w(v)``
  (the low bits of a signed value are the term's bits).

Everything else keeps its operation, with its operands widened. Each rule is a theorem
with its side condition (the interval); ``tests/test_widen.py`` checks the result on random
terms and values. Written by hand: the rules are over this project's term language.
"""

from __future__ import annotations

from aquas.egraph.terms import Term, binop, cast, cmp, const, mk, select

W = 64
_LO, _HI = -(1 << (W - 1)), (1 << (W - 1)) - 1


def _fits(lo: int, hi: int, w: int) -> bool:
    return -(1 << (w - 1)) <= lo and hi <= (1 << (w - 1)) - 1


def _signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) & 1 else v


class _Widen:
    def __init__(self) -> None:
        self.exact: dict[Term, tuple[Term, int, int]] = {}
        self.same: dict[Term, Term] = {}

    def value(self, t: Term) -> tuple[Term, int, int]:
        """A 64-bit term whose signed value is the signed value of ``t``, with bounds."""
        got = self.exact.get(t)
        if got is not None:
            return got
        out = self._value(t)
        self.exact[t] = out
        return out

    def _opaque(self, t: Term) -> tuple[Term, int, int]:
        n = self.term(t, inner=True)
        w = t.w
        return cast("sext", W, n), -(1 << (w - 1)), (1 << (w - 1)) - 1

    def _value(self, t: Term) -> tuple[Term, int, int]:
        w, a = t.w, t.args
        if w > W or w < 2:
            return self._opaque(t) if 2 <= w <= W else (t, _LO, _HI)
        if t.op == "const":
            v = _signed(int(t.val), w)
            return const(W, v), v, v
        if t.op == "sext":
            return self.value(a[0]) if a[0].w >= 2 else self._opaque(t)
        if t.op == "zext" and a[0].w >= 2:
            x, lo, hi = self.value(a[0])
            if lo >= 0:
                return x, lo, hi
            return cast("zext", W, self.term(a[0])), 0, (1 << a[0].w) - 1
        if t.op == "trunc" and a[0].w <= W:
            x, lo, hi = self.value(a[0])
            if _fits(lo, hi, w):
                return x, lo, hi
            return self._opaque(t)
        if t.op in ("add", "sub", "mul"):
            x, xl, xh = self.value(a[0])
            y, yl, yh = self.value(a[1])
            if t.op == "add":
                lo, hi = xl + yl, xh + yh
            elif t.op == "sub":
                lo, hi = xl - yh, xh - yl
            else:
                ps = (xl * yl, xl * yh, xh * yl, xh * yh)
                lo, hi = min(ps), max(ps)
            if _fits(lo, hi, w):
                return binop(t.op, x, y), lo, hi
            return self._opaque(t)
        if t.op == "shrs" and a[1].op == "const" and int(a[1].val) < w:
            k = int(a[1].val)
            x, lo, hi = self.value(a[0])
            return binop("shrs", x, const(W, k)), lo >> k, hi >> k
        if t.op == "select":
            x, xl, xh = self.value(a[1])
            y, yl, yh = self.value(a[2])
            return _select(self.term(a[0]), x, y), min(xl, yl), max(xh, yh)
        return self._opaque(t)

    def term(self, t: Term, inner: bool = False) -> Term:
        """``t`` rewritten (same width, same value). ``inner``: only its operands (the
        node itself stays, e.g. inside an opaque value)."""
        if not inner:
            got = self.same.get(t)
            if got is not None:
                return got
        out = t
        if (
            not inner
            and 2 <= t.w <= W
            and t.op not in ("var", "load", "const")
            and not (t.op in ("sext", "zext", "trunc") and t.args[0].op in ("var", "load"))
        ):
            x, _, _ = self.value(t)
            if not (x.op == "sext" and x.args[0].w == t.w):  # not merely opaque
                out = x if t.w == W else cast("trunc", t.w, x)
                self.same[t] = out
                return out
        signed_cmp = t.op == "cmp" and (str(t.val)[0] == "s" or t.val in ("eq", "ne"))
        if signed_cmp and 2 <= t.args[0].w <= W:
            x, _, _ = self.value(t.args[0])
            y, _, _ = self.value(t.args[1])
            out = _cmp(str(t.val), x, y)
            if not inner:
                self.same[t] = out
            return out
        if t.args:
            args = tuple(self.term(x) for x in t.args)
            if t.op == "trunc" and args[0].op == "trunc":  # the low bits of the low bits
                out = cast("trunc", t.w, args[0].args[0])
            elif any(n is not o for n, o in zip(args, t.args, strict=True)):
                out = mk(t.op, t.w, args, t.val)
        if not inner:
            self.same[t] = out
        return out


def _cmp(pred: str, x: Term, y: Term) -> Term:
    """A comparison of a select with a constant arm against a constant is a select of
    comparisons (``min(q, H) < L`` is ``q > H ? H < L : q < L``): a clamp written as two
    steps then has the shape of one written as nested selects."""
    if (
        x.op == "select"
        and y.op == "const"
        and (x.args[1].op == "const" or x.args[2].op == "const")
    ):
        return select(x.args[0], cmp(pred, x.args[1], y), cmp(pred, x.args[2], y))
    return cmp(pred, x, y)


def _assume(t: Term, c: Term, truth: int, memo: dict[Term, Term]) -> Term:
    """``t`` where the condition ``c`` is known to be ``truth``."""
    got = memo.get(t)
    if got is not None:
        return got
    if t is c:
        out = const(1, truth)
    elif t.op == "select" and t.args[0] is c:
        out = _assume(t.args[1 if truth else 2], c, truth, memo)
    elif t.args:
        args = tuple(_assume(x, c, truth, memo) for x in t.args)
        out = (
            t
            if all(n is o for n, o in zip(args, t.args, strict=True))
            else mk(t.op, t.w, args, t.val)
        )
        if out.op == "select":  # its condition may have become a constant
            out = select(*out.args)
    else:
        out = t
    memo[t] = out
    return out


def _select(c: Term, x: Term, y: Term) -> Term:
    """``c ? x : y`` with ``c`` assumed in each arm, and a condition that is itself a select
    with a constant arm distributed (``(p ? k : d) ? x : y`` is ``p ? (k ? x : y) : (d ? x
    : y)``)."""
    if c.op == "select" and c.args[1].op == "const":
        p, k, d = c.args
        return _select(p, x if k.val else y, _select(d, x, y))
    if c.op == "select" and c.args[2].op == "const":
        p, d, k = c.args
        return _select(p, _select(d, x, y), x if k.val else y)
    return select(c, _assume(x, c, 1, {}), _assume(y, c, 0, {}))


def widen(terms: list[Term]) -> list[Term]:
    """Every term rewritten with its exact signed arithmetic at 64 bits (see above)."""
    wd = _Widen()
    return [wd.term(t) for t in terms]


__all__ = ["widen"]
