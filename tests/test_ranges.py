"""Value ranges and the range-justified rewrites of aquas.egraph.ranges, checked by brute force.

Every rewrite is compared with the original term on *all* inputs at 8 bits (one or two
variables), so a wrong side condition fails here rather than as a false match.
"""

from __future__ import annotations

import itertools
import random

import pytest

from aquas.egraph.ranges import interval, simplify
from aquas.egraph.terms import RandomMemory, Term, binop, cast, cmp, const, evaluate, select, var

X8, Y8 = var("x", 8), var("y", 8)
Q = 13
MEM = RandomMemory(0)


# y: the edges of the ranges used here plus a spread; x: every value
Y_SAMPLE = sorted({0, 1, 2, 6, 7, 12, 13, 14, 25, 26, 27, 64, 127, 128, 129, 200, 254, 255})


def values(t: Term, exhaustive: bool = False) -> list[int]:
    ys = range(256) if exhaustive else Y_SAMPLE
    return [evaluate(t, {"x": x, "y": y}, MEM) for x, y in itertools.product(range(256), ys)]


def same_everywhere(a: Term, b: Term, exhaustive: bool = True) -> bool:
    return values(a, exhaustive) == values(b, exhaustive)


def inside(t: Term) -> bool:
    lo, hi = interval(t)
    for v in set(values(t)):
        if lo >= 0:
            if not lo <= v <= hi:
                return False
        else:
            s = v - 256 if v >= 128 else v
            if not lo <= s <= hi:
                return False
    return True


def rx(x: Term) -> Term:
    return binop("remu", x, const(8, Q))


def cond_sub(s: Term, q: int = Q, pred: str = "uge") -> Term:
    return select(cmp(pred, s, const(s.w, q)), binop("sub", s, const(s.w, q)), s)


def test_conditional_subtraction_of_a_sum_below_2q_is_a_remainder() -> None:
    s = binop("add", rx(X8), rx(Y8))
    t = cond_sub(s)
    r = simplify(t)
    assert r is not None and r.op == "remu"
    assert same_everywhere(t, r)
    assert same_everywhere(r, binop("remu", s, const(8, Q)))


@pytest.mark.parametrize("pred", ["ult", "ule", "ugt", "sge", "sgt", "slt"])
def test_every_spelling_of_the_conditional_subtraction(pred: str) -> None:
    s = binop("add", rx(X8), rx(Y8))
    k = {"ult": Q, "ule": Q - 1, "ugt": Q - 1, "sge": Q, "sgt": Q - 1, "slt": Q}[pred]
    c = cmp(pred, s, const(8, k))
    sub = binop("sub", s, const(8, Q))
    t = select(c, s, sub) if pred in ("ult", "ule", "slt") else select(c, sub, s)
    r = simplify(t)
    assert r is not None and r.op == "remu"
    assert same_everywhere(t, r)


def test_a_possibly_large_operand_is_not_a_remainder() -> None:
    t = cond_sub(X8)  # x may be >= 2q: one subtraction does not reduce it
    assert simplify(t) is None
    wrong_k = select(cmp("uge", X8, const(8, Q + 1)), binop("sub", X8, const(8, Q)), X8)
    assert simplify(wrong_k) is None


def test_signed_add_back_of_a_difference() -> None:
    d = binop("sub", rx(X8), rx(Y8))
    t = select(cmp("slt", d, const(8, 0)), binop("add", d, const(8, Q)), d)
    r = simplify(t)
    assert r is not None
    assert same_everywhere(t, r)
    # the same select on a difference that may leave [-q, q) is kept
    wide = binop("sub", X8, rx(Y8))
    assert (
        simplify(select(cmp("slt", wide, const(8, 0)), binop("add", wide, const(8, Q)), wide))
        is None
    )


def test_remainder_of_a_small_value_is_the_value_and_narrows() -> None:
    small = binop("and", X8, const(8, 7))
    assert simplify(binop("remu", small, const(8, Q))) is small
    x32 = cast("zext", 32, X8)
    r = simplify(binop("remu", x32, const(32, Q)))
    assert r is not None and r.op == "zext" and r.args[0].w == 8


def test_signed_remainder_only_of_non_negative_values() -> None:
    assert simplify(binop("rems", X8, const(8, Q))) is None  # x may be negative as i8
    pos = binop("shru", X8, const(8, 1))
    r = simplify(binop("rems", pos, const(8, Q)))
    assert r is not None and same_everywhere(r, binop("rems", pos, const(8, Q)))


def test_masks_casts_and_disjoint_or() -> None:
    low = binop("shru", X8, const(8, 4))  # < 16
    assert simplify(cast("zext", 8, cast("trunc", 4, low))) is low
    assert simplify(binop("and", low, const(8, 15))) is low
    assert simplify(binop("and", X8, const(8, 15))) is None
    t = binop("or", binop("shl", Y8, const(8, 4)), low)
    r = simplify(t)
    assert r is not None and r.op == "add" and same_everywhere(t, r)
    assert simplify(binop("or", binop("shl", Y8, const(8, 3)), low)) is None  # may overlap
    t = binop("shru", binop("shl", X8, const(8, 3)), const(8, 3))
    r = simplify(t)
    assert r is not None and same_everywhere(t, r)


def _random_term(rng: random.Random, depth: int) -> Term:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([X8, Y8, const(8, rng.randrange(256)), const(8, rng.randrange(16))])
    op = rng.choice(
        ["add", "sub", "mul", "and", "or", "xor", "shru", "shl", "remu", "select", "trunc"]
    )
    a, b = _random_term(rng, depth - 1), _random_term(rng, depth - 1)
    if op in ("shru", "shl"):
        return binop(op, a, const(8, rng.randrange(8)))
    if op == "remu":
        return binop(op, a, const(8, rng.randrange(1, 40)))
    if op == "select":
        c = cmp(rng.choice(["ult", "uge", "slt", "sge"]), a, const(8, rng.randrange(40)))
        return select(c, binop("sub", a, const(8, rng.randrange(40))), b)
    if op == "trunc":
        return cast("zext", 8, cast("trunc", rng.choice([2, 4, 6]), a))
    return binop(op, a, b)


def test_intervals_contain_every_value_and_rewrites_keep_values() -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(300):
        t = _random_term(rng, 3)
        assert inside(t), t
        r = simplify(t)
        if r is not None:
            assert same_everywhere(t, r, exhaustive=False), (t, r)
            checked += 1
    assert checked >= 5


def test_barrett_step_is_a_remainder_and_a_wrong_constant_is_not() -> None:
    q = 3329
    x32 = var("x", 32)
    x = cast("zext", 64, binop("and", x32, const(32, 0xFFFF)))
    x = binop("mul", x, cast("zext", 64, binop("shru", x32, const(32, 16))))  # < 2^32

    def barrett(m: int) -> Term:
        est = binop("shru", binop("mul", x, const(64, m)), const(64, 32))
        return cond_sub(binop("sub", x, binop("mul", est, const(64, q))), q)

    t = barrett((1 << 32) // q)
    r = simplify(t)
    assert r is not None
    rng = random.Random(3)
    probes = [0, 1, q - 1, q, 2 * q - 1, 0xFFFFFFFF, 0xFFFF0001, 0x0CFF0CFF]
    probes += [rng.randrange(1 << 32) for _ in range(3000)]
    for v in probes:
        assert (
            evaluate(t, {"x": v}, MEM)
            == evaluate(r, {"x": v}, MEM)
            == ((v & 0xFFFF) * (v >> 16)) % q
        )
    assert simplify(barrett((1 << 32) // q + 1)) is None


def test_bit_tests_counting_selects_and_shift_chains() -> None:
    bit3 = cmp("ne", binop("and", X8, const(8, 8)), const(8, 0))
    r = simplify(bit3)
    assert r is not None and r.op == "trunc" and r.w == 1 and same_everywhere(bit3, r)
    low = cmp("ne", binop("and", binop("shru", X8, const(8, 5)), const(8, 1)), const(8, 0))
    r = simplify(low)
    assert r is not None and same_everywhere(low, r)
    for k in (0, 1, 7, 254):
        c = cmp("ult", X8, Y8)
        t = select(c, const(8, k + 1), const(8, k))
        r = simplify(t)
        assert r is not None and same_everywhere(t, r)
    assert simplify(select(cmp("ult", X8, Y8), const(8, 5), const(8, 3))) is None
    for op, a, b in (("shru", 3, 2), ("shl", 3, 2), ("shru", 5, 4)):
        t = binop(op, binop(op, X8, const(8, a)), const(8, b))
        r = simplify(t)
        assert r is not None and same_everywhere(t, r)


def test_an_added_inner_remainder_is_dropped_only_when_no_sum_wraps() -> None:
    """(a mod q + t) mod q = (a + t) mod q when neither sum wraps (the Kyber butterfly
    reduces a first, C code does not); a subtracted remainder, or a sum that may wrap,
    keeps its inner reduction. Every result is compared on all inputs."""
    a, b = binop("and", X8, const(8, 127)), binop("and", Y8, const(8, 127))

    def inner_remainders(t: Term) -> int:
        from aquas.egraph.terms import walk

        return sum(1 for n in walk(t) if n.op == "remu") - 1

    added = rx(binop("add", rx(a), b))
    r = simplify(added)
    assert r is not None and inner_remainders(r) == 0 and same_everywhere(added, r)
    both = rx(binop("add", rx(a), rx(b)))  # both terms: a + b <= 254 still fits
    r = simplify(both)
    assert r is not None and inner_remainders(r) == 0 and same_everywhere(both, r)
    # a - (b mod q) + q: the subtracted remainder stays (a - b may be negative)
    diff = rx(binop("add", binop("sub", a, rx(b)), const(8, Q)))
    r = simplify(diff) or diff
    assert inner_remainders(r) == 1 and same_everywhere(diff, r)
    # x mod q + y for any 8-bit y may wrap: kept
    wraps = rx(binop("add", rx(X8), Y8))
    r = simplify(wraps) or wraps
    assert inner_remainders(r) == 1 and same_everywhere(wraps, r)


def test_an_inner_reduction_is_dropped_only_when_its_operand_cannot_wrap() -> None:
    """``(k + (x - y) mod q) mod q`` at 16 bits: the reduced operand ``x - y`` wraps when
    x < y, so reading it as its parts (``(k + x - y) mod q``) would be wrong although that
    sum never wraps; ``x + y`` cannot wrap and its reduction is dropped. Chained: the
    outer level drops what the inner one rebuilt. Compared on all inputs."""
    from aquas.egraph.ranges import modulo
    from aquas.egraph.terms import walk

    x, y = cast("zext", 16, X8), cast("zext", 16, Y8)
    k, q = const(16, 300), const(16, Q)
    for inner, dropped in ((binop("sub", x, y), False), (binop("add", x, y), True)):
        t = binop("add", k, binop("remu", inner, q))
        m = modulo(t, Q)
        assert same_everywhere(m, binop("remu", t, q))
        assert sum(1 for n in walk(m) if n.op == "remu") == (1 if dropped else 2)
    level1 = binop("remu", binop("add", binop("remu", binop("add", x, y), q), k), q)
    t = binop("add", binop("remu", y, q), level1)
    m = modulo(t, Q)
    assert same_everywhere(m, binop("remu", t, q))
    assert sum(1 for n in walk(m) if n.op == "remu") == 1
