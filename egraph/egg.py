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

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
    ne,
    rewrite,
    rule,
    ruleset,
    union,
    vars_,
)

from aquas.egraph.terms import Term, walk


class E(Expr):
    @classmethod
    def c(cls, w: i64Like, v: BigIntLike) -> E: ...
    @classmethod
    def v(cls, name: StringLike, w: i64Like) -> E: ...
    @classmethod
    def op(cls, name: StringLike, w: i64Like, a: E, b: E) -> E: ...
    @classmethod
    def cmp(cls, pred: StringLike, a: E, b: E) -> E: ...
    @classmethod
    def sel(cls, c: E, a: E, b: E) -> E: ...
    @classmethod
    def cast(cls, kind: StringLike, w: i64Like, src: i64Like, a: E) -> E: ...
    @classmethod
    def ld(cls, w: i64Like, addr: E) -> E: ...
    @classmethod
    def isax(cls, name: StringLike, args: Vec[E]) -> E: ...


@function
def Sum(w: i64Like, xs: MultiSet[E]) -> E: ...


@function
def Prod(w: i64Like, xs: MultiSet[E]) -> E: ...


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
    add = lambda w, a, b: E.op("add", w, a, b)  # noqa: E731
    mul = lambda w, a, b: E.op("mul", w, a, b)  # noqa: E731
    ALGEBRA.register(
        # sums and products as flat multisets
        rewrite(add(_w, _a, _b)).to(Sum(_w, MultiSet(_a, _b))),
        rewrite(mul(_w, _a, _b)).to(Prod(_w, MultiSet(_a, _b))),
        rewrite(E.op("sub", _w, _a, _b)).to(
            Sum(_w, MultiSet(_a, Prod(_w, MultiSet(_b, E.c(_w, Mask(_w))))))
        ),
        rule(eq(_s).to(Sum(_w, _xs)), eq(_t).to(Sum(_w, _ys)), _xs.contains(_t)).then(
            union(_s).with_(Sum(_w, _xs.remove(_t) + _ys))
        ),
        rule(eq(_s).to(Prod(_w, _xs)), eq(_t).to(Prod(_w, _ys)), _xs.contains(_t)).then(
            union(_s).with_(Prod(_w, _xs.remove(_t) + _ys))
        ),
        # a single-element multiset is its element; identities
        rule(eq(_s).to(Sum(_w, _xs)), eq(_xs.length()).to(i64(1))).then(
            union(_s).with_(_xs.pick())
        ),
        rule(eq(_s).to(Prod(_w, _xs)), eq(_xs.length()).to(i64(1))).then(
            union(_s).with_(_xs.pick())
        ),
        rule(eq(_s).to(Sum(_w, _xs)), _xs.contains(E.c(_w, BigInt(0)))).then(
            union(_s).with_(Sum(_w, _xs.remove(E.c(_w, BigInt(0)))))
        ),
        rule(eq(_s).to(Prod(_w, _xs)), _xs.contains(E.c(_w, BigInt(1)))).then(
            union(_s).with_(Prod(_w, _xs.remove(E.c(_w, BigInt(1)))))
        ),
        rule(eq(_s).to(Prod(_w, _xs)), _xs.contains(E.c(_w, BigInt(0)))).then(
            union(_s).with_(E.c(_w, BigInt(0)))
        ),
        # distributivity, both ways (on binary nodes, which stay in their e-classes)
        rewrite(mul(_w, _a, add(_w, _b, _c))).to(add(_w, mul(_w, _a, _b), mul(_w, _a, _c))),
        rewrite(add(_w, mul(_w, _a, _b), mul(_w, _a, _c))).to(mul(_w, _a, add(_w, _b, _c))),
        rewrite(E.op("sub", _w, mul(_w, _a, _b), mul(_w, _a, _c))).to(
            mul(_w, _a, E.op("sub", _w, _b, _c))
        ),
        rewrite(mul(_w, _a, E.op("sub", _w, _b, _c))).to(
            E.op("sub", _w, mul(_w, _a, _b), mul(_w, _a, _c))
        ),
        # shifts by constants are multiplications
        *[
            rewrite(E.op("shl", _w, _a, E.c(_w, BigInt(k)))).to(
                mul(_w, _a, E.c(_w, BigInt.from_string(str(1 << k)) & Mask(_w))), _w > i64(k)
            )
            for k in range(1, 64)
        ],
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
        rewrite(E.sel(E.cast("zext", _w, i64(1), _c), _a, _b)).to(E.sel(_c, _a, _b)),
        # commutativity of the bitwise ops
        rewrite(E.op("and", _w, _a, _b)).to(E.op("and", _w, _b, _a)),
        rewrite(E.op("or", _w, _a, _b)).to(E.op("or", _w, _b, _a)),
        rewrite(E.op("xor", _w, _a, _b)).to(E.op("xor", _w, _b, _a)),
    )
    trunc = lambda w, s, a: E.cast("trunc", w, s, a)  # noqa: E731
    homomorphic = ("add", "sub", "mul", "and", "or", "xor")
    for op in homomorphic:
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
    fold2 = {
        "add": lambda a, b, w: (a + b) & Mask(w),
        "mul": lambda a, b, w: (a * b) & Mask(w),
        "sub": lambda a, b, w: (a + (Mask(w) - b) + BigInt(1)) & Mask(w),
        "and": lambda a, b, w: a & b,
        "or": lambda a, b, w: a | b,
        "xor": lambda a, b, w: a ^ b,
    }
    for op, fn in fold2.items():
        FOLD.register(
            rewrite(E.op(op, _w, E.c(_w, _n), E.c(_w, _m))).to(E.c(_w, fn(_n, _m, _w))),
        )
    FOLD.register(
        rewrite(trunc(_w, _w2, E.c(_w2, _n))).to(E.c(_w, _n & Mask(_w))),
        rewrite(E.cast("zext", _w, _w2, E.c(_w2, _n))).to(E.c(_w, _n)),
        rule(
            eq(_s).to(Sum(_w, _xs)),
            eq(_c1).to(E.c(_w, _n)),
            eq(_c2).to(E.c(_w, _m)),
            _xs.contains(_c1),
            _xs.remove(_c1).contains(_c2),
        ).then(
            union(_s).with_(
                Sum(_w, _xs.remove(_c1).remove(_c2).insert(E.c(_w, (_n + _m) & Mask(_w))))
            )
        ),
        rule(
            eq(_s).to(Prod(_w, _xs)),
            eq(_c1).to(E.c(_w, _n)),
            eq(_c2).to(E.c(_w, _m)),
            _xs.contains(_c1),
            _xs.remove(_c1).contains(_c2),
        ).then(
            union(_s).with_(
                Prod(_w, _xs.remove(_c1).remove(_c2).insert(E.c(_w, (_n * _m) & Mask(_w))))
            )
        ),
    )


_register_rules()


# ---------------------------------------------------------------------------------------
# Terms -> e-graph
# ---------------------------------------------------------------------------------------


def to_egg(t: Term, memo: dict[int, E]) -> E:
    """The egglog expression of a term (memoised per e-graph, so shared nodes stay shared)."""
    for n in walk(t):
        if id(n) in memo:
            continue
        a = [memo[id(x)] for x in n.args]
        match n.op:
            case "const":
                e = E.c(n.w, BigInt.from_string(str(n.val)))
            case "var":
                e = E.v(str(n.val), n.w)
            case "cmp":
                e = E.cmp(str(n.val), a[0], a[1])
            case "select":
                e = E.sel(a[0], a[1], a[2])
            case "sext" | "zext" | "trunc":
                e = E.cast(n.op, n.w, int(n.val), a[0])
            case "load":
                e = E.ld(n.w, a[0])
            case _:
                e = E.op(n.op, n.w, a[0], a[1])
        memo[id(n)] = e
    return memo[id(t)]


@dataclass
class Limits:
    iterations: int = 12
    nodes: int = 60_000
    seconds: float = 2.0


@dataclass
class ProofStats:
    iterations: int = 0
    nodes: int = 0
    seconds: float = 0.0
    stopped: str = ""  # "proved", "saturated", "iterations", "nodes", "time"


class Prover:
    """One e-graph per question: are these pairs of terms equal (modulo the rule sets)?"""

    def __init__(self, limits: Limits | None = None, rulesets: Sequence[str] = tuple(RULESETS)):
        self.limits = limits or Limits()
        self.egraph = EGraph()
        self.memo: dict[int, E] = {}
        self.schedule = None
        for name in rulesets:
            rs = RULESETS[name]
            self.schedule = rs if self.schedule is None else self.schedule | rs
        self.stats = ProofStats()

    def add(self, t: Term) -> E:
        e = to_egg(t, self.memo)
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
            if not report.updated:
                st.stopped = "saturated"
                pending = [g for g in pending if not self.egraph.check_bool(eq(g[0]).to(g[1]))]
                return not pending


__all__ = ["RULESETS", "E", "Limits", "Prod", "ProofStats", "Prover", "Sum", "ne", "to_egg"]
