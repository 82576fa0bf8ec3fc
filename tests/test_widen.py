"""egraph/widen.py: exact signed arithmetic moved to 64 bits must keep every term's value.

Random terms mix widths (8..64 and the spec's 40), wrapping and non-wrapping arithmetic,
casts, arithmetic shifts, selects and comparisons; each is evaluated before and after
``widen`` on random variable values, including the extremes where a narrow operation wraps.
"""

from __future__ import annotations

import random

from aquas.egraph.terms import Term, binop, cast, cmp, const, evaluate, select, var
from aquas.egraph.widen import widen

WIDTHS = (8, 16, 32, 40, 64)
PREDS = ("slt", "sle", "sgt", "sge", "eq", "ne", "ult", "ugt")


def _resize(rng: random.Random, t: Term, w: int) -> Term:
    if t.w == w:
        return t
    if t.w > w:
        return cast("trunc", w, t)
    return cast(rng.choice(("sext", "zext")), w, t)


def _term(rng: random.Random, depth: int, w: int) -> Term:
    if depth == 0 or rng.random() < 0.15:
        if rng.random() < 0.25:
            return const(w, rng.choice([0, 1, 8192, 32767, -32768, rng.getrandbits(w)]))
        v = var(rng.choice("abcd"), rng.choice((8, 16)))
        return _resize(rng, v, w)
    k = rng.random()
    if k < 0.45:
        op = rng.choice(("add", "sub", "mul"))
        return binop(op, _term(rng, depth - 1, w), _term(rng, depth - 1, w))
    if k < 0.6:
        return binop("shrs", _term(rng, depth - 1, w), const(w, rng.randrange(0, min(w, 20))))
    if k < 0.8:
        src = rng.choice(WIDTHS)
        return _resize(rng, _term(rng, depth - 1, src), w)
    cw = rng.choice(WIDTHS)
    c = cmp(rng.choice(PREDS), _term(rng, depth - 1, cw), _term(rng, depth - 1, cw))
    return select(c, _term(rng, depth - 1, w), _term(rng, depth - 1, w))


def _no_memory(addr: int, w: int) -> int:
    raise AssertionError("no loads in these terms")


def test_widen_keeps_values_on_random_terms() -> None:
    rng = random.Random(7)
    changed = 0
    for _ in range(1500):
        w = rng.choice(WIDTHS)
        t = _term(rng, rng.randint(1, 5), w)
        (u,) = widen([t])
        assert u.w == t.w
        changed += u is not t
        for _ in range(12):
            env = {
                n: rng.choice([0, 1, 0x7F, 0x80, 0x7FFF, 0x8000, 0xFFFF, rng.getrandbits(16)])
                for n in "abcd"
            }
            assert evaluate(u, env, _no_memory) == evaluate(t, env, _no_memory), (t, u, env)
    assert changed > 300  # the rewrite does apply (exact arithmetic is common here)


def test_widen_makes_the_biquad_rounding_one_term() -> None:
    """The C code's int64 accumulation, truncated to int32 and saturated at 32 bits, and
    the spec's i40 version become the same 64-bit arithmetic: equal terms."""
    x, c, h = var("x", 16), var("c", 16), var("h", 16)

    def dot(w: int) -> Term:
        p = binop("mul", cast("sext", w, c), cast("sext", w, x))
        q = binop("mul", cast("sext", w, h), cast("sext", w, x))
        return binop("sub", p, q)

    def sat(q: Term) -> Term:
        hi, lo = const(q.w, 32767), const(q.w, -32768)
        return select(cmp("sgt", q, hi), hi, select(cmp("slt", q, lo), lo, q))

    c_side = cast("trunc", 32, binop("shrs", binop("add", dot(64), const(64, 8192)), const(64, 14)))
    spec = binop("shrs", binop("add", dot(40), const(40, 8192)), const(40, 14))
    a, b = widen([cast("trunc", 16, sat(c_side)), cast("trunc", 16, sat(spec))])
    assert a is b
    # a wrong rounding constant stays a different term (and a different value)
    wrong = binop("shrs", binop("add", dot(40), const(40, 4096)), const(40, 14))
    (d,) = widen([cast("trunc", 16, sat(wrong))])
    assert d is not a


def test_a_two_step_clamp_is_the_nested_one() -> None:
    """``y = q > H ? H : q; y = y < L ? L : y`` and ``q > H ? H : (q < L ? L : q)`` become
    one term (comparisons of a select with a constant arm are distributed, and each arm of
    a select assumes its condition)."""
    q = binop("shrs", binop("add", cast("sext", 64, var("a", 16)), const(64, 99)), const(64, 2))
    hi, lo = const(64, 32767), const(64, -32768)
    step = select(cmp("sgt", q, hi), hi, q)
    two = select(cmp("slt", step, lo), lo, step)
    nested = select(cmp("sgt", q, hi), hi, select(cmp("slt", q, lo), lo, q))
    a, b = widen([cast("trunc", 16, two), cast("trunc", 16, nested)])
    assert a is b


def test_select_rules_keep_values_on_random_clamps() -> None:
    """Clamps and selects of selects with random constants and orders (including lo > hi,
    where the two-step and nested forms differ) keep their values after ``widen``."""
    rng = random.Random(11)
    for _ in range(400):
        w = rng.choice((16, 32, 64))
        q = _term(rng, 3, w)
        k = [const(w, rng.choice([0, 5, -5, 100, -100, rng.getrandbits(w)])) for _ in range(4)]
        p1, p2 = rng.choice(PREDS), rng.choice(PREDS)
        inner = (
            select(cmp(p1, q, k[0]), k[1], q)
            if rng.random() < 0.5
            else select(cmp(p1, q, k[0]), q, k[1])
        )
        t = select(cmp(p2, inner, k[2]), k[3], inner)
        if rng.random() < 0.5:
            t = select(select(cmp(p1, q, k[0]), const(1, 1), cmp(p2, q, k[2])), t, q)
        (u,) = widen([t])
        for _ in range(10):
            env = {n: rng.getrandbits(16) for n in "abcd"}
            assert evaluate(u, env, _no_memory) == evaluate(t, env, _no_memory), (t, u, env)
