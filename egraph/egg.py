"""The e-graph: dataflow terms in egglog, the rule sets, and bounded equality proofs.

Encoding (one egglog sort, :class:`E`):

* ``E.c(w, v)`` constants (``v`` a BigInt, the unsigned value), ``E.v(name, w)`` variables;
* ``E.op(name, w, a, b)`` binary integer operations (``add``, ``mul``, ``shru``, ...), with
  wrap-around modulo 2^w; ``E.cmp(pred, a, b)``, ``E.sel(c, a, b)``;
* ``E.cast(kind, w, src_w, a)`` for sext/zext/trunc, ``E.ld(w, addr)`` for memory reads;
* ``Sum(w, xs)`` / ``Prod(w, xs)``: commutative-associative sums and products over a
  *multiset* of e-classes.  Flattening nested sums into one multiset makes two sums equal
  as soon as their summands are -- association and commutation cost no search, which is
  what keeps 16- and 64-term reductions tractable (pairwise AC rules would enumerate
  2^n sub-sums);
* ``E.isax(name, a, b)``: an ISAX call; pattern rules for register-only ISAXs add it to the
  e-class of every application expression that computes the ISAX.

Rule sets (each run with iteration, node and time limits by :class:`Prover`):

* ``algebra`` -- sums/products into multisets and flattening, subtraction as a sum with a
  ``-1`` coefficient, distributivity of ``mul`` over ``add`` (both directions), identities
  (``+0``, ``*1``, ``*0``), shift-by-constant <-> multiply by 2^k, comparison mirroring
  (``a > b`` = ``b < a``), ``select`` of a negated condition, max/min-select equivalence;
* ``casts`` -- truncation distributes over ``add``/``mul``/``sub``/bitwise ops (they are
  homomorphisms modulo 2^w), cast composition, ``x & (2^k-1)`` = ``zext(trunc_k(x))``,
  bit-field extraction ``trunc(x >> k)``;
* ``fold`` -- constant folding (BigInt arithmetic, masked to the width), including
  constants inside sums and products.
"""

from __future__ import annotations

import hashlib
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from egglog import (
    BigInt,
    BigIntLike,
    EGraph,
    Expr,
    MultiSet,
    StringLike,
    Vec,
    eq,
    function,
    i64,
    i64Like,
    rewrite,
    rule,
    ruleset,
    union,
    vars_,
)

from aquas.egraph.ranges import condition, simplify
from aquas.egraph.terms import (
    RandomMemory,
    Term,
    binop,
    canonical_address,
    cast,
    const,
    evaluate,
    load,
)


class E(Expr):  # constructors: egglog supplies the bodies
    @classmethod
    def c(cls, w: i64Like, v: BigIntLike) -> E: ...  # type: ignore[empty-body]
    @classmethod
    def v(cls, name: StringLike, w: i64Like) -> E: ...  # type: ignore[empty-body]
    @classmethod
    def op(cls, name: StringLike, w: i64Like, a: E, b: E) -> E: ...  # type: ignore[empty-body]
    @classmethod
    def cmp(cls, pred: StringLike, a: E, b: E) -> E: ...  # type: ignore[empty-body]
    @classmethod
    def sel(cls, c: E, a: E, b: E) -> E: ...  # type: ignore[empty-body]
    @classmethod
    def cast(cls, kind: StringLike, w: i64Like, src: i64Like, a: E) -> E: ...  # type: ignore[empty-body]
    @classmethod
    def ld(cls, w: i64Like, addr: E) -> E: ...  # type: ignore[empty-body]
    @classmethod
    def isax(cls, name: StringLike, args: Vec[E]) -> E: ...  # type: ignore[empty-body]


@function
def Sum(w: i64Like, xs: MultiSet[E]) -> E: ...  # type: ignore[empty-body]


@function
def Prod(w: i64Like, xs: MultiSet[E]) -> E: ...  # type: ignore[empty-body]


@function
def Max(kind: StringLike, w: i64Like, xs: MultiSet[E]) -> E: ...  # type: ignore[empty-body]


@function
def ArgFirst(kind: StringLike, values: Vec[E], payloads: Vec[E]) -> E: ...  # type: ignore[empty-body]


def Mask(w: i64) -> BigInt:
    """2^w - 1, computed inside a rule."""
    return (BigInt(1) << w) - BigInt(1)


ALGEBRA = ruleset(name="algebra")
CASTS = ruleset(name="casts")
FOLD = ruleset(name="fold")
RULESETS = {"algebra": ALGEBRA, "casts": CASTS, "fold": FOLD}

_w, _w2, _w3, _k = vars_("w w2 w3 k", i64)
_a, _b, _c, _x, _y, _s, _t, _c1, _c2 = vars_("a b c x y s t c1 c2", E)
_xs, _ys = vars_("xs ys", MultiSet[E])
_n, _m = vars_("n m", BigInt)


def _register_rules() -> None:
    ALGEBRA.register(
        # sums and products stay flat when rules merge a summand with a sum
        rule(eq(_s).to(Sum(_w, _xs)), eq(_t).to(Sum(_w, _ys)), _xs.contains(_t)).then(
            union(_s).with_(Sum(_w, _xs.remove(_t) + _ys))
        ),
        rule(eq(_s).to(Prod(_w, _xs)), eq(_t).to(Prod(_w, _ys)), _xs.contains(_t)).then(
            union(_s).with_(Prod(_w, _xs.remove(_t) + _ys))
        ),
        # comparisons and selects
        rewrite(E.cmp("sgt", _a, _b)).to(E.cmp("slt", _b, _a)),
        rewrite(E.cmp("sge", _a, _b)).to(E.cmp("sle", _b, _a)),
        rewrite(E.cmp("ugt", _a, _b)).to(E.cmp("ult", _b, _a)),
        rewrite(E.cmp("uge", _a, _b)).to(E.cmp("ule", _b, _a)),
        rewrite(E.cmp("eq", _a, _b)).to(E.cmp("eq", _b, _a)),
        rewrite(E.cmp("ne", _a, _b)).to(E.cmp("ne", _b, _a)),
        rewrite(E.sel(E.cmp("slt", _a, _b), _c, _x)).to(E.sel(E.cmp("sle", _b, _a), _x, _c)),
        rewrite(E.sel(E.cmp("ult", _a, _b), _c, _x)).to(E.sel(E.cmp("ule", _b, _a), _x, _c)),
        rewrite(E.sel(E.cmp("sle", _a, _b), _c, _x)).to(E.sel(E.cmp("slt", _b, _a), _x, _c)),
        rewrite(E.sel(E.cmp("ule", _a, _b), _c, _x)).to(E.sel(E.cmp("ult", _b, _a), _x, _c)),
        rewrite(E.sel(E.cmp("eq", _a, _b), _c, _x)).to(E.sel(E.cmp("ne", _a, _b), _x, _c)),
        rewrite(E.sel(E.cmp("ne", _a, _b), _c, _x)).to(E.sel(E.cmp("eq", _a, _b), _x, _c)),
        # max/min: on equality both arms are the same value
        rewrite(E.sel(E.cmp("slt", _a, _b), _b, _a)).to(E.sel(E.cmp("sle", _a, _b), _b, _a)),
        rewrite(E.sel(E.cmp("sle", _a, _b), _b, _a)).to(E.sel(E.cmp("slt", _a, _b), _b, _a)),
        rewrite(E.sel(E.cmp("ult", _a, _b), _b, _a)).to(E.sel(E.cmp("ule", _a, _b), _b, _a)),
        rewrite(E.sel(E.cmp("ule", _a, _b), _b, _a)).to(E.sel(E.cmp("ult", _a, _b), _b, _a)),
        rewrite(E.sel(_c, _a, _a)).to(_a),
        # a conditional increment is the addition of the condition (counting loops)
        rule(
            eq(_s).to(E.sel(_c, Sum(_w, _xs), _a)),
            eq(_xs).to(MultiSet(_a, E.c(_w, BigInt(1)))),
        ).then(union(_s).with_(Sum(_w, MultiSet(_a, E.cast("zext", _w, i64(1), _c))))),
        rule(
            eq(_s).to(E.sel(_c, Sum(_w, _xs), Sum(_w, _ys))),
            eq(_xs).to(_ys.insert(E.c(_w, BigInt(1)))),
        ).then(union(_s).with_(Sum(_w, _ys.insert(E.cast("zext", _w, i64(1), _c))))),
        # bit tests: (x & 2^k) != 0 is bit k of x
        *[
            rewrite(
                E.cmp(
                    "ne",
                    E.op("and", _w, _a, E.c(_w, BigInt.from_string(str(1 << k)))),
                    E.c(_w, BigInt(0)),
                )
            ).to(E.cast("trunc", i64(1), _w, E.op("shru", _w, _a, E.c(_w, BigInt(k)))), _w > i64(k))
            for k in range(64)
        ],
        # booleans as integers
        rewrite(E.cmp("ne", E.cast("zext", _w, i64(1), _c), E.c(_w, BigInt(0)))).to(_c),
        rewrite(E.cmp("eq", E.cast("zext", _w, i64(1), _c), E.c(_w, BigInt(1)))).to(_c),
        rewrite(E.sel(_c, E.c(_w, BigInt(1)), E.c(_w, BigInt(0)))).to(
            E.cast("zext", _w, i64(1), _c), _w > i64(1)
        ),
        rewrite(E.sel(E.cast("zext", _w, i64(1), _c), _a, _b)).to(E.sel(_c, _a, _b)),
        # commutativity of the bitwise ops
        rewrite(E.op("and", _w, _a, _b)).to(E.op("and", _w, _b, _a)),
        rewrite(E.op("or", _w, _a, _b)).to(E.op("or", _w, _b, _a)),
        rewrite(E.op("xor", _w, _a, _b)).to(E.op("xor", _w, _b, _a)),
    )
    trunc = lambda w, s, a: E.cast("trunc", w, s, a)  # noqa: E731
    for op in ("and", "or", "xor"):  # ring operations are truncated on insertion
        CASTS.register(
            rewrite(trunc(_w, _w2, E.op(op, _w2, _a, _b))).to(
                E.op(op, _w, trunc(_w, _w2, _a), trunc(_w, _w2, _b))
            ),
        )
    CASTS.register(
        # truncating an extension: back to the source, or a narrower truncation
        rewrite(trunc(_w, _w2, E.cast("sext", _w2, _w, _a))).to(_a),
        rewrite(trunc(_w, _w2, E.cast("zext", _w2, _w, _a))).to(_a),
        rule(eq(_s).to(trunc(_w, _w2, E.cast("sext", _w2, _w3, _a))), _w < _w3).then(
            union(_s).with_(trunc(_w, _w3, _a))
        ),
        rule(eq(_s).to(trunc(_w, _w2, E.cast("zext", _w2, _w3, _a))), _w < _w3).then(
            union(_s).with_(trunc(_w, _w3, _a))
        ),
        rule(eq(_s).to(trunc(_w, _w2, E.cast("sext", _w2, _w3, _a))), _w > _w3).then(
            union(_s).with_(E.cast("sext", _w, _w3, _a))
        ),
        rule(eq(_s).to(trunc(_w, _w2, E.cast("zext", _w2, _w3, _a))), _w > _w3).then(
            union(_s).with_(E.cast("zext", _w, _w3, _a))
        ),
        rewrite(trunc(_w, _w2, trunc(_w2, _w3, _a))).to(trunc(_w, _w3, _a)),
        # extensions compose; zext of a value whose sign bit is clear is its sext
        rewrite(E.cast("sext", _w, _w2, E.cast("sext", _w2, _w3, _a))).to(
            E.cast("sext", _w, _w3, _a)
        ),
        rewrite(E.cast("zext", _w, _w2, E.cast("zext", _w2, _w3, _a))).to(
            E.cast("zext", _w, _w3, _a)
        ),
        rule(eq(_s).to(E.cast("sext", _w, _w2, E.cast("zext", _w2, _w3, _a))), _w3 < _w2).then(
            union(_s).with_(E.cast("zext", _w, _w3, _a))
        ),
        # masks are truncations: x & (2^k - 1) = zext(trunc_k(x))
        *[
            rewrite(E.op("and", _w, _a, E.c(_w, BigInt((1 << k) - 1)))).to(
                E.cast("zext", _w, i64(k), trunc(i64(k), _w, _a)), _w > i64(k)
            )
            for k in (1, 8, 16, 24, 32)
        ],
        # a right shift then truncation is a bit field; the same field of an extension
        *[
            rule(
                eq(_s).to(
                    trunc(_w, _w2, E.op("shru", _w2, E.cast("zext", _w2, _w3, _a), E.c(_w2, _n)))
                ),
                eq(_n).to(BigInt(k)),
                _w + i64(k) <= _w3,
            ).then(union(_s).with_(trunc(_w, _w3, E.op("shru", _w3, _a, E.c(_w3, _n)))))
            for k in (8, 16, 24, 32)
        ],
        *[
            rule(
                eq(_s).to(trunc(_w, _w2, E.op("shrs", _w2, _a, E.c(_w2, _n)))),
                eq(_n).to(BigInt(k)),
                _w + i64(k) <= _w2,
            ).then(union(_s).with_(trunc(_w, _w2, E.op("shru", _w2, _a, E.c(_w2, _n)))))
            for k in (8, 16, 24, 32)
        ],
    )
    for op, fn in {
        "and": lambda a, b: a & b,
        "or": lambda a, b: a | b,
        "xor": lambda a, b: a ^ b,
    }.items():
        FOLD.register(rewrite(E.op(op, _w, E.c(_w, _n), E.c(_w, _m))).to(E.c(_w, fn(_n, _m))))
    FOLD.register(
        rewrite(trunc(_w, _w2, E.c(_w2, _n))).to(E.c(_w, _n & Mask(_w))),
        rewrite(E.cast("zext", _w, _w2, E.c(_w2, _n))).to(E.c(_w, _n)),
        *[rewrite(E.op(op, _w, _a, E.c(_w, BigInt(0)))).to(_a) for op in ("shru", "shrs", "shl")],
    )


_register_rules()

_COMBINED: dict[tuple[str, ...], Any] = {}
_KEEP: list[Any] = []


def _combined(names: tuple[str, ...]) -> Any:
    """One combined rule set per selection, created once and kept alive: egglog-python
    names a combined rule set after its Python ``id()``, so a combination that is freed and
    re-created could alias an earlier, different one."""
    if names not in _COMBINED:
        parts = [RULESETS[n] for n in names]
        schedule: Any = parts[0]
        for rs in parts[1:]:
            schedule = schedule | rs
            _KEEP.append(schedule)  # intermediates too: never freed, never re-used ids
        _COMBINED[names] = schedule
    return _COMBINED[names]


# ---------------------------------------------------------------------------------------
# Terms -> e-graph
# ---------------------------------------------------------------------------------------


class Normalizer:
    """Ring normal form on insertion: maximal ``add``/``sub``/``mul`` chains become flat
    :func:`Sum`/:func:`Prod` multisets (constants folded, ``x << k`` as ``x * 2^k``), and
    truncations are pushed through ring operations and casts (arithmetic modulo 2^w is a
    homomorphism).  Associativity and commutativity then hold by construction -- egglog
    keeps the multisets canonical as e-classes merge -- instead of being searched for by
    rewrite rules, whose cost grows exponentially with the length of a sum."""

    def __init__(self) -> None:
        self.memo: dict[tuple[int, int], E] = {}  # (term id, truncation width) -> expr
        self.steps: dict[tuple[int, int], int | None] = {}
        self.linears: dict[tuple[int, int], tuple[dict[int, tuple[Term, int]], int]] = {}
        self.views: dict[int, ArgView | None] = {}
        self.factors: dict[tuple[int, int], tuple[E, bool]] = {}  # oriented sum factors
        self.keys: dict[int, tuple[object, bytes]] = {}  # id(expr decl) -> (decl, order key)

    def multiset(self, elems: Sequence[E]) -> Any:
        """A multiset whose elements are listed in a canonical order (by structure).

        egglog should identify two multisets of the same elements whatever their order, but
        egglog 13 does so only depending on a per-process (randomly seeded) hash order: the
        same question was proven at insertion in most processes and left unproven in
        others.  Listing the elements in an order that depends only on their structure
        makes equal multisets identical expressions, which every process hash-conses
        alike."""
        return MultiSet(*sorted(elems, key=self._order_key))

    def _order_key(self, e: E) -> bytes:
        # egglog-python's typed declaration of the expression: a frozen tree of dataclasses
        # (the public str() pretty-prints with let-bindings, which is far slower).
        return self._decl_key(e.__egg_typed_expr__)  # type: ignore[attr-defined]

    def _decl_key(self, d: Any) -> bytes:
        hit = self.keys.get(id(d))
        if hit is not None:
            return hit[1]
        ex = d.expr
        args = getattr(ex, "args", None)
        if isinstance(args, tuple) and all(hasattr(a, "expr") for a in args):
            parts = repr((type(ex).__name__, repr(getattr(ex, "callable", None)), repr(d.tp)))
            data = parts.encode() + b"".join(self._decl_key(a) for a in args)
        else:
            data = repr(d).encode()
        key = hashlib.blake2b(data, digest_size=12).digest()
        self.keys[id(d)] = (d, key)  # the entry keeps ``d`` alive: its id is not reused
        return key

    def expr(self, t: Term, w: int | None = None) -> E:
        """``t`` truncated to ``w`` bits (``None``: its own width)."""
        w = t.w if w is None or w >= t.w else w
        key = (id(t), w)
        e = self.memo.get(key)
        if e is None:
            e = self._expr(t, w)
            self.memo[key] = e
        return e

    def _expr(self, t: Term, w: int) -> E:
        op = t.op
        if op == "const":
            return E.c(w, BigInt.from_string(str(int(t.val) & ((1 << w) - 1))))
        if op in ("or", "add") and (wide := _assembled_load(t)) is not None:
            return self.expr(wide, w)
        if (simple := simplify(t)) is not None:
            return self.expr(simple, w)
        if op == "zext" and (pushed := _zext_ring(t)) is not None:
            return self.expr(pushed, w)
        if op in ("add", "sub", "mul", "shl") and (op != "shl" or t.args[1].op == "const"):
            return self._chain(t, w)
        if w < t.w:
            if op == "and":  # a mask that keeps every bit of the truncation
                for x, m in (t.args, t.args[::-1]):
                    if m.op == "const" and int(m.val) & ((1 << w) - 1) == (1 << w) - 1:
                        return self.expr(x, w)
            if op in ("and", "or", "xor"):
                return E.op(op, w, self.expr(t.args[0], w), self.expr(t.args[1], w))
            if op == "select":  # truncation commutes with a choice
                c, x, y = t.args
                return E.sel(self.expr(c), self.expr(x, w), self.expr(y, w))
            if op in ("sext", "zext"):
                src = int(t.val)
                if w <= src:
                    return self.expr(t.args[0], w)
                return E.cast(op, w, src, self.expr(t.args[0]))
            if op == "trunc":
                return self.expr(t.args[0], w)
            return E.cast("trunc", w, t.w, self.expr(t))
        if op == "select" and self._step(t, w) is not None:
            return self._chain(binop("add", t, const(t.w, 0)), w)
        if (
            op in ("select", "zext", "sext", "trunc")
            and (view := self.argview(t)) is not None
            and len(view.values) > 2
        ):
            vals = [self.expr(v) for v in view.values]
            if view.payloads == view.values:
                return Max(view.kind, t.w, self.multiset(vals))
            return ArgFirst(view.kind, Vec(*vals), Vec(*[self.expr(p) for p in view.payloads]))
        a = t.args
        match op:
            case "var":
                return E.v(str(t.val), t.w)
            case "cmp":
                return E.cmp(str(t.val), self.expr(a[0]), self.expr(a[1]))
            case "select":
                return E.sel(self.expr(a[0]), self.expr(a[1]), self.expr(a[2]))
            case "sext" | "zext":
                return E.cast(op, t.w, int(t.val), self.expr(a[0]))
            case "trunc":
                return self.expr(a[0], t.w)
            case "load":
                return E.ld(t.w, self.expr(a[0]))
        return E.op(op, t.w, self.expr(a[0]), self.expr(a[1]))

    def argview(self, t: Term) -> ArgView | None:
        """``t`` as "the payload of the first maximum" of an ordered list, when it is a
        select chain comparing maxima (see :class:`ArgView`)."""
        key = id(t)
        if key not in self.views:
            self.views[key] = self._find_argview(t)
        return self.views[key]

    def _find_argview(self, t: Term) -> ArgView | None:
        if t.op in ("zext", "sext", "trunc"):  # casts of the payloads (index widths)
            inner = self.argview(t.args[0])
            if inner is None:
                return None
            return ArgView(
                inner.kind, inner.values, tuple(cast(t.op, t.w, p) for p in inner.payloads)
            )
        if t.op != "select":
            return None
        cond = condition(t.args[0])
        if cond is None:
            return None
        pred, a, b, negated = cond
        x, y = (t.args[2], t.args[1]) if negated else (t.args[1], t.args[2])
        if pred[1:] in ("lt", "le"):  # a < b is b > a, a <= b is b >= a
            a, b, pred = b, a, pred[0] + {"lt": "gt", "le": "ge"}[pred[1:]]
        if pred[1:] not in ("gt", "ge"):
            return None
        kind = pred[0]
        va, vb = self._maxima(a, kind), self._maxima(b, kind)
        pa, pb = self._payloads(x, va, kind), self._payloads(y, vb, kind)
        if pa is None or pb is None:
            return None
        # strict a > b: ties keep b's side, so b's elements come first
        if pred[1:] == "gt":
            vals, pays = vb + va, pb + pa
        else:
            vals, pays = va + vb, pa + pb
        return _simplify(kind, vals, pays)

    def _maxima(self, a: Term, kind: str) -> tuple[Term, ...]:
        v = self.argview(a)
        if v is not None and v.kind == kind and v.payloads == v.values:
            return v.values
        return (a,)

    def _payloads(self, x: Term, vals: tuple[Term, ...], kind: str) -> tuple[Term, ...] | None:
        v = self.argview(x)
        if v is not None and v.kind == kind and v.values == vals:
            return v.payloads
        return (x,) if len(vals) == 1 else None

    def _chain(self, t: Term, w: int) -> E:
        m = (1 << w) - 1
        if t.op == "mul" or t.op == "shl":
            factors: list[Term] = []
            k = 1
            stack = [t]
            while stack:
                n = stack.pop()
                if n.op == "mul" and n.w >= w:
                    stack.extend(n.args)
                elif n.op == "shl" and n.w >= w and n.args[1].op == "const":
                    sh = int(n.args[1].val)
                    k = (k << sh) & m if sh < n.w else 0
                    stack.append(n.args[0])
                elif n.op == "const":
                    k = (k * int(n.val)) & m
                elif _narrowable(n, w):
                    stack.append(n.args[0])
                else:
                    factors.append(n)
            if k == 0:
                return E.c(w, BigInt(0))
            return self._prod(factors, k, w)
        terms, k0 = self._linear(t, w)
        return self._sum(terms, k0, w)

    def _linear(self, t: Term, w: int) -> tuple[dict[int, tuple[Term, int]], int]:
        """Leaves of an add/sub chain with their coefficients, and the constant."""
        key = (id(t), w)
        if key not in self.linears:
            self.linears[key] = self._find_linear(t, w)
        return self.linears[key]

    def _find_linear(self, t: Term, w: int) -> tuple[dict[int, tuple[Term, int]], int]:
        m = (1 << w) - 1
        terms: dict[int, tuple[Term, int]] = {}
        k0 = 0
        stack: list[tuple[Term, int]] = [(t, 1)]
        while stack:
            n, c = stack.pop()
            if n.op == "add" and n.w >= w:
                stack.extend((x, c) for x in n.args)
            elif n.op == "sub" and n.w >= w:
                stack.append((n.args[0], c))
                stack.append((n.args[1], -c))
            elif n.op == "const":
                k0 += c * int(n.val)
            elif _narrowable(n, w):
                stack.append((n.args[0], c))
            elif (simple := simplify(n)) is not None:
                stack.append((simple, c))
            elif n.op == "select" and (k := self._step(n, w)) is not None:
                # c ? x + k : x  is  x + zext(c) * k  (counting loops written with if)
                stack.append((n.args[2], c))
                stack.append((cast("zext", w, n.args[0]), c * k))
            else:
                prev = terms.get(id(n))
                terms[id(n)] = (n, (prev[1] if prev else 0) + c)
        return {i: (n, c & m) for i, (n, c) in terms.items() if c & m}, k0 & m

    def _sum(self, terms: dict[int, tuple[Term, int]], k0: int, w: int) -> E:
        elems = []
        for n, c in terms.values():
            if n.op in ("mul", "shl"):
                elems.append(self._scaled(n, c, w))
            else:
                elems.append(self.expr(n, w) if c == 1 else self._prod([n], c, w))
        if k0 or not elems:
            elems.append(E.c(w, BigInt.from_string(str(k0))))
        return elems[0] if len(elems) == 1 else Sum(w, self.multiset(elems))

    def _step(self, t: Term, w: int) -> int | None:
        """k when ``t`` is ``c ? x + k : x`` (modulo 2^w), else None."""
        key = (id(t), w)
        if key not in self.steps:
            self.steps[key] = self._find_step(t, w)
        return self.steps[key]

    def _find_step(self, t: Term, w: int) -> int | None:
        _, a, b = t.args
        if a.op not in ("add", "sub") or a.w < w:
            return None
        ta, ka = self._linear(a, w)
        tb, kb = self._linear(b, w)
        if ta.keys() != tb.keys() or any(ta[i][1] != tb[i][1] for i in ta):
            return None
        return (ka - kb) & ((1 << w) - 1)

    def _scaled(self, n: Term, c: int, w: int) -> E:
        inner = self.expr(n, w)  # memoised: a product shared by many sums is built once
        return (
            inner if c == 1 else Prod(w, self.multiset([inner, E.c(w, BigInt.from_string(str(c)))]))
        )

    def _prod(self, factors: list[Term], k: int, w: int) -> E:
        """A product; a sum factor is oriented canonically (``(a-b)`` or ``(b-a)``), its
        sign moving into the constant, so ``(a-b)*(a-b)`` and ``(b-a)*(b-a)`` coincide."""
        m = (1 << w) - 1
        elems = []
        for f in factors:
            if f.op in ("add", "sub") and f.w >= w:
                key = (id(f), w)
                if key not in self.factors:
                    terms, k0 = self._linear(f, w)
                    v = fingerprint(f) & m
                    flip = (-v & m) < v  # orient by value, so equal sums orient alike
                    if flip:
                        terms = {i: (n, -c & m) for i, (n, c) in terms.items()}
                        k0 = -k0 & m
                    self.factors[key] = (self._sum(terms, k0, w), flip)
                e, flip = self.factors[key]
                if flip:
                    k = -k & m
                elems.append(e)
            else:
                elems.append(self.expr(f, w))
        if k != 1 or not elems:
            elems.append(E.c(w, BigInt.from_string(str(k))))
        return elems[0] if len(elems) == 1 else Prod(w, self.multiset(elems))


@dataclass(frozen=True)
class ArgView:
    """``payloads[j]`` for the first ``j`` at which ``values[j]`` is the maximum (signed
    for kind ``s``, unsigned for ``u``); a plain maximum has ``payloads == values``.

    A running maximum with a strict ``>`` update, a scan with ``>=`` from the end and a
    tournament tree whose left operand wins ties all compute the same "first index of the
    maximum" -- the same list here, whatever the order of comparisons.  Combining two
    views ``A`` (maximum ``a``) and ``B`` (maximum ``b``) by ``a > b ? A : B`` gives
    ``B ++ A`` (ties keep ``B``, and when ``a > b`` no element of ``B`` reaches ``a``);
    ``a >= b ? A : B`` gives ``A ++ B``.  A maximum is associative and commutative, so it
    is inserted as a multiset."""

    kind: str
    values: tuple[Term, ...]
    payloads: tuple[Term, ...]


def _simplify(kind: str, vals: tuple[Term, ...], pays: tuple[Term, ...]) -> ArgView:
    """Drop elements that can never be the first maximum: a value seen earlier, and the
    bottom of the order (INT_MIN or 0) unless it is first with a payload differing from
    the next one's (when every value is the bottom, the first payload is the result)."""
    plain = vals == pays
    seen: set[int] = set()
    vs: list[Term] = []
    ps: list[Term] = []
    for v, p in zip(vals, pays, strict=True):
        if id(v) not in seen:
            seen.add(id(v))
            vs.append(v)
            ps.append(p)
    i = 0
    while i < len(vs) and len(vs) > 1:
        v = vs[i]
        bottom = v.op == "const" and int(v.val) == (1 << (v.w - 1) if kind == "s" else 0)
        if bottom and (i > 0 or plain or ps[0] is ps[1]):
            del vs[i], ps[i]
            continue
        i += 1
    return ArgView(kind, tuple(vs), tuple(ps))


def _assembled_load(t: Term) -> Term | None:
    """``b0 | b1 << 8 | b2 << 16 | ...`` over consecutive bytes in memory is one wide
    little-endian load (how C code reads a word from a byte array)."""
    byte_at: dict[int, Term] = {}
    stack = [(t, 0)]
    while stack:  # bytes at distinct offsets do not overlap: "+" and "|" agree
        n, shift = stack.pop()
        if n.op in ("or", "add") and n.w == t.w:
            stack.extend((x, shift) for x in n.args)
        elif n.op == "shl" and n.w == t.w and n.args[1].op == "const":
            stack.append((n.args[0], shift + int(n.args[1].val)))
        elif n.op == "mul" and n.w == t.w and n.args[1].op == "const":
            k = int(n.args[1].val)
            if k & (k - 1) or not k:
                return None
            stack.append((n.args[0], shift + k.bit_length() - 1))
        elif n.op == "const" and int(n.val) == 0:
            continue  # mask = 0; mask |= ...
        elif n.op == "zext" and int(n.val) == 8 and n.args[0].op == "load":
            if shift % 8 or shift // 8 in byte_at:
                return None
            byte_at[shift // 8] = n.args[0]
        else:
            return None
    n = len(byte_at)
    if n * 8 != t.w or sorted(byte_at) != list(range(n)):
        return None
    base = byte_at[0].args[0]
    for i in range(1, n):
        if canonical_address(binop("add", base, const(32, i))) is not byte_at[i].args[0]:
            return None
    return load(t.w, base)


def _zext_ring(t: Term) -> Term | None:
    """``zext(a * b)`` (or ``+``) when the narrow operation cannot wrap: the operation on
    the extended operands (both forms of one product appear in C and in specs)."""
    a = t.args[0]
    if a.op not in ("mul", "add") or _bits(a) > a.w:
        return None
    if a.op == "mul" and _bits(a.args[0]) + _bits(a.args[1]) > a.w:
        return None
    if a.op == "add" and max(_bits(a.args[0]), _bits(a.args[1])) + 1 > a.w:
        return None
    return binop(a.op, cast("zext", t.w, a.args[0]), cast("zext", t.w, a.args[1]))


def _bits(t: Term) -> int:
    """An upper bound on the number of significant bits of ``t`` (unsigned)."""
    if t.op == "const":
        return int(t.val).bit_length()
    if t.op == "zext":
        return min(int(t.val), _bits(t.args[0]))
    if t.op == "and":
        return min(t.w, min(_bits(a) for a in t.args))
    if t.op == "mul":
        return min(t.w, _bits(t.args[0]) + _bits(t.args[1]))
    if t.op == "add":
        return min(t.w, max(_bits(t.args[0]), _bits(t.args[1])) + 1)
    if t.op == "shru" and t.args[1].op == "const":
        return max(0, _bits(t.args[0]) - int(t.args[1].val))
    if t.op == "trunc":
        return min(t.w, _bits(t.args[0]))
    return t.w


def _narrowable(n: Term, w: int) -> bool:
    """Casts that do not matter modulo 2^w: extensions from at least w bits, truncations."""
    return (n.op in ("sext", "zext") and int(n.val) >= w) or (n.op == "trunc" and n.w >= w)


class _Names(dict[str, int]):
    def __missing__(self, key: str) -> int:
        v = zlib.crc32(key.encode()) * 0x9E3779B97F4A7C15 & ((1 << 64) - 1)
        self[key] = v
        return v


_FP_ENV = _Names()
_FP_MEM = RandomMemory(0xA9)


def fingerprint(t: Term) -> int:
    """The value of ``t`` at one fixed pseudo-random point: a semantic key, equal for
    equal terms however they are written (used to pick canonical orientations)."""
    return evaluate(t, _FP_ENV, _FP_MEM)


@dataclass
class Limits:
    """Per proof.  Iterations and e-nodes decide; the wall-clock limit is a safety net
    only (a proof's outcome should not depend on the machine's load)."""

    iterations: int = 20
    nodes: int = 60_000
    seconds: float = 10.0


@dataclass
class ProofStats:
    iterations: int = 0
    nodes: int = 0
    seconds: float = 0.0
    stopped: str = ""  # "proved", "saturated", "iterations", "nodes", "time"


class Prover:
    """One e-graph per question: are these pairs of terms equal (modulo the rule sets)?"""

    def __init__(
        self,
        limits: Limits | None = None,
        rulesets: Sequence[str] = tuple(RULESETS),
        normalizer: Normalizer | None = None,
    ):
        """``normalizer``: share one between proofs (normal forms are a pure function of
        the hash-consed terms, so a term shared by several questions is built once)."""
        self.limits = limits or Limits()
        self.egraph = EGraph()
        self.memo = normalizer or Normalizer()
        self.schedule = _combined(tuple(rulesets))
        self.stats = ProofStats()

    def add(self, t: Term) -> E:
        e = self.memo.expr(t)
        self.egraph.register(e)
        return e

    def nodes(self) -> int:
        return sum(n for _, n in self.egraph.all_function_sizes())

    def equal_all(self, pairs: Iterable[tuple[Term, Term]]) -> bool:
        """Saturate (within limits) until every pair is in one e-class."""
        goals = [(self.add(a), self.add(b)) for a, b in pairs]
        t0 = time.perf_counter()
        st = self.stats
        pending = [g for g in goals if g[0] is not g[1]]
        quiet = 0
        while True:
            pending = [g for g in pending if not self.egraph.check_bool(eq(g[0]).to(g[1]))]
            st.seconds = time.perf_counter() - t0
            if not pending:
                st.stopped = "proved"
                return True
            if st.iterations >= self.limits.iterations:
                st.stopped = "iterations"
                return False
            if st.seconds > self.limits.seconds:
                st.stopped = "time"
                return False
            st.nodes = self.nodes()
            if st.nodes > self.limits.nodes:
                st.stopped = "nodes"
                return False
            report = self.egraph.run(1, ruleset=self.schedule)
            st.iterations += 1
            quiet = 0 if report.updated else quiet + 1
            if quiet >= 2:  # two iterations without change: saturated
                st.stopped = "saturated"
                pending = [g for g in pending if not self.egraph.check_bool(eq(g[0]).to(g[1]))]
                return not pending


__all__ = [
    "RULESETS",
    "ArgFirst",
    "E",
    "Limits",
    "Max",
    "Normalizer",
    "Prod",
    "ProofStats",
    "Prover",
    "Sum",
]
