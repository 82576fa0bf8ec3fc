"""Value ranges and the rewrites they justify: modular reductions, redundant masks and casts.

Integer kernels written by hand reduce modulo a constant in many ways: ``x % q``; one
conditional subtraction ``s >= q ? s - q : s`` when ``s < 2q``; ``d < 0 ? d + q : d`` when
``-q <= d < q``; a Barrett step ``r = x - ((x * m) >> 32) * q`` followed by a conditional
subtraction.  Which of them is exact depends on the *range* of the operand, which no local
rewrite rule can see.  This module computes intervals bottom-up over hash-consed terms and
turns each exact idiom into one canonical ``remu`` at the narrowest width that holds the
operand, so that the e-graph compares reductions by their operands only.

The same ranges make casts and masks that cannot change a value disappear
(``zext(trunc16(s))`` for ``s < 2^16``, ``s & 0xffff``), and turn ``a | b`` into ``a + b``
when the set bits of ``a`` and ``b`` cannot overlap (``hi << 16 | lo`` with ``lo < 2^16``).

Intervals are on the mathematical value ``v`` whose bit pattern (modulo ``2^w``) is the
term's: ``lo <= v <= hi`` with either ``0 <= lo`` (an unsigned reading) or
``-2^(w-1) <= lo`` and ``hi < 2^(w-1)`` (a signed reading).  Anything wider is unknown:
the full unsigned range.

Every rewrite here is a theorem about fixed-width integers (stated at each function); they
are checked exhaustively at small widths by ``tests/test_ranges.py``.
"""

from __future__ import annotations

from aquas.egraph.terms import Term, binop, cast, const, linear_parts, mask, signed

_IV: dict[Term, tuple[int, int]] = {}
_SIMPLE: dict[Term, Term | None] = {}


def _fit(lo: int, hi: int, w: int) -> tuple[int, int]:
    """The interval of ``v mod 2^w`` for ``lo <= v <= hi``: read unsigned when it lies in
    one period, signed when it straddles a multiple of 2^w by less than half of one, else
    the full unsigned range."""
    if hi - lo > mask(w):
        return 0, mask(w)
    k = lo >> w
    lo, hi = lo - (k << w), hi - (k << w)
    if hi <= mask(w):
        return lo, hi
    lo, hi = lo - (1 << w), hi - (1 << w)
    if lo >= -(1 << (w - 1)) and hi < 1 << (w - 1):
        return lo, hi
    return 0, mask(w)


def interval(t: Term) -> tuple[int, int]:
    """Bounds on the value of ``t`` (see the module docstring)."""
    iv = _IV.get(t)
    if iv is None:
        iv = _interval(t)
        _IV[t] = iv
    return iv


def unsigned(t: Term) -> tuple[int, int]:
    lo, hi = interval(t)
    return (lo, hi) if lo >= 0 else (0, mask(t.w))


def signed_iv(t: Term) -> tuple[int, int] | None:
    lo, hi = interval(t)
    if hi < 1 << (t.w - 1):
        return lo, hi
    if lo >= 1 << (t.w - 1):  # entirely negative when read as signed
        return lo - (1 << t.w), hi - (1 << t.w)
    return None


def _interval(t: Term) -> tuple[int, int]:
    w, op, a = t.w, t.op, t.args
    full = (0, mask(w))
    simple = simplify(t)
    if simple is not None:
        return interval(simple)
    if op == "const":
        return int(t.val), int(t.val)
    if op == "cmp":
        return 0, 1
    if op == "zext":
        return unsigned(a[0])
    if op == "sext":
        s = signed_iv(a[0])
        return s if s is not None else full
    if op == "trunc":
        return _fit(*interval(a[0]), w)
    if op == "select":
        (l1, h1), (l2, h2) = interval(a[1]), interval(a[2])
        return _fit(min(l1, l2), max(h1, h2), w)
    if op in ("add", "sub"):
        (l1, h1), (l2, h2) = interval(a[0]), interval(a[1])
        if op == "add":
            return _fit(l1 + l2, h1 + h2, w)
        return _fit(l1 - h2, h1 - l2, w)
    if op == "mul":
        (l1, h1), (l2, h2) = unsigned(a[0]), unsigned(a[1])
        return _fit(l1 * l2, h1 * h2, w)
    if op == "and":
        return 0, min(unsigned(a[0])[1], unsigned(a[1])[1])
    if op in ("or", "xor"):
        bits = max(unsigned(a[0])[1].bit_length(), unsigned(a[1])[1].bit_length())
        return 0, mask(bits)
    if op in ("shru", "shl") and a[1].op == "const":
        k = int(a[1].val)
        lo, hi = unsigned(a[0])
        if op == "shru":
            return lo >> k, hi >> k
        return _fit(lo << k, hi << k, w)
    if op == "divu" and a[1].op == "const" and int(a[1].val):
        lo, hi = unsigned(a[0])
        return lo // int(a[1].val), hi // int(a[1].val)
    if op == "remu" and a[1].op == "const" and int(a[1].val):
        return 0, min(unsigned(a[0])[1], int(a[1].val) - 1)
    return full


def trailing_zeros(t: Term) -> int:
    """A lower bound on the number of low zero bits of ``t``."""
    if t.op == "const":
        v = int(t.val)
        return t.w if v == 0 else (v & -v).bit_length() - 1
    if t.op == "shl" and t.args[1].op == "const":
        return min(t.w, int(t.args[1].val) + trailing_zeros(t.args[0]))
    if t.op == "mul":
        return min(t.w, trailing_zeros(t.args[0]) + trailing_zeros(t.args[1]))
    if t.op in ("zext", "sext", "trunc"):
        return min(t.w, trailing_zeros(t.args[0]))
    if t.op == "and":
        return max(trailing_zeros(t.args[0]), trailing_zeros(t.args[1]))
    return 0


# ---------------------------------------------------------------------------------------
# Rewrites
# ---------------------------------------------------------------------------------------


def simplify(t: Term) -> Term | None:
    """A canonical replacement for ``t`` justified by ranges, or None."""
    if t in _SIMPLE:
        return _SIMPLE[t]
    _SIMPLE[t] = None  # cycles through interval() see "no rewrite"
    r = _simplify(t)
    _SIMPLE[t] = r if r is not t else None
    return _SIMPLE[t]


def _simplify(t: Term) -> Term | None:
    op, a = t.op, t.args
    if op in ("remu", "rems") and a[1].op == "const" and int(a[1].val) > 0:
        q = int(a[1].val)
        if op == "rems":  # C's % equals the unsigned one for x >= 0 and 0 < q < 2^(w-1)
            s = signed_iv(a[0])
            if s is None or s[0] < 0 or q >= 1 << (t.w - 1):
                return None
        return modulo(a[0], q)
    if op == "select":
        one, zero = a[1], a[2]
        if one.op == zero.op == "const" and (int(one.val) - int(zero.val)) & mask(t.w) == 1:
            # c ? k + 1 : k is k + the condition as an integer (counting)
            bit = cast("zext", t.w, a[0])
            return bit if int(zero.val) == 0 else binop("add", bit, zero)
        return _reduction(t)
    inner = simplify(a[0]) or a[0] if op == "zext" else None
    if inner is not None and inner.op == "trunc":
        # zext(trunc_k(y)) = y when y < 2^k
        y = inner.args[0]
        if unsigned(y)[1] <= mask(inner.w):
            return _resize(y, t.w)
    if op in ("shl", "shru", "shrs") and a[1].op == "const" and int(a[1].val) == 0:
        return a[0]
    if op == "cmp" and t.val in ("ne", "eq") and a[1].op == "const" and int(a[1].val) == 0:
        x = simplify(a[0]) or a[0]
        if t.val == "ne" and x.op == "zext" and int(x.val) == 1:
            return x.args[0]  # (int)c != 0 is c
        if t.val == "ne" and x.op == "and" and x.args[1].op == "const":
            m = int(x.args[1].val)
            if m and m & (m - 1) == 0:  # (x & 2^k) != 0 is bit k of x
                return cast("trunc", 1, simplify_shift(x.args[0], m.bit_length() - 1))
        return None
    if op == "and" and a[1].op == "const" and int(a[1].val) == 1 and t.w > 1:
        return cast("zext", t.w, cast("trunc", 1, a[0]))  # x & 1 is bit 0 of x
    if op in ("shru", "shl") and a[0].op == op and a[1].op == "const":
        inner = a[0].args[1]
        if inner.op == "const":  # (x >> a) >> b is x >> (a + b)
            k = int(a[1].val) + int(inner.val)
            return const(t.w, 0) if k >= t.w else binop(op, a[0].args[0], const(t.w, k))
    if op == "shru" and a[0].op == "shl" and a[1].op == "const" and a[0].args[1] is a[1]:
        k = int(a[1].val)  # (x << k) >> k keeps the low w - k bits
        if 0 < k < t.w:
            return cast("zext", t.w, cast("trunc", t.w - k, a[0].args[0]))
    if op == "and" and a[1].op == "const":
        m = int(a[1].val)
        if m & (m + 1) == 0 and unsigned(a[0])[1] <= m:  # a low mask that keeps every bit
            return a[0]
    if op == "or":
        x, y = a
        if trailing_zeros(x) >= unsigned(y)[1].bit_length():
            return binop("add", x, y)  # no bit is set in both: | is +
        if trailing_zeros(y) >= unsigned(x)[1].bit_length():
            return binop("add", x, y)
    return None


def simplify_shift(x: Term, k: int) -> Term:
    return x if k == 0 else binop("shru", x, const(x.w, k))


def _resize(y: Term, w: int) -> Term:
    if y.w == w:
        return y
    return cast("zext" if y.w < w else "trunc", w, y)


_WIDTHS = (8, 16, 32, 64)


def modulo(x: Term, q: int) -> Term:
    """``x mod q`` (unsigned ``x``) in canonical form, at the width of ``x``: ``x`` itself when
    ``x < q``; otherwise a ``remu`` at the narrowest of 8/16/32/64 bits that holds both ``x``
    and ``q`` (the remainder is below q, so zero-extending it back is exact)."""
    x, known = _drop_inner_reductions(x, q)
    hi = known if known is not None else unsigned(x)[1]
    if hi < q:
        return x
    need = max(hi.bit_length(), q.bit_length())
    n = next((k for k in _WIDTHS if k >= need and k < x.w), x.w)
    if n < x.w:
        return cast("zext", x.w, binop("remu", cast("trunc", n, x), const(n, q)))
    return binop("remu", x, const(x.w, q))


def _sum_parts(t: Term, w: int, k: int, acc: dict[Term, int]) -> int:
    """``t`` (simplified) as a sum of atoms with integer coefficients plus a constant, over
    add/sub/mul-by-constant chains of width ``w``; returns the constant."""
    t = simplify(t) or t
    if t.op == "const":
        return k * signed(int(t.val), w) if t.w == w else k * int(t.val)
    if t.w == w and t.op in ("add", "sub"):
        c = _sum_parts(t.args[0], w, k, acc)
        return c + _sum_parts(t.args[1], w, -k if t.op == "sub" else k, acc)
    if t.w == w and t.op == "mul" and t.args[1].op == "const":
        return _sum_parts(t.args[0], w, k * signed(int(t.args[1].val), w), acc)
    acc[t] = acc.get(t, 0) + k
    return 0


def _peel(t: Term) -> Term:
    """``t`` simplified, without the extensions and truncations that keep its value."""
    while True:
        t = simplify(t) or t
        if t.op == "zext" or (t.op == "trunc" and unsigned(t.args[0])[1] <= mask(t.w)):
            t = t.args[0]
            continue
        return t


def _math_range(parts: dict[Term, int], k0: int) -> tuple[int, int]:
    lo = hi = k0
    for atom, c in parts.items():
        a, b = unsigned(atom)
        lo, hi = lo + min(c * a, c * b), hi + max(c * a, c * b)
    return lo, hi


def _drop_inner_reductions(x: Term, q: int) -> tuple[Term, int | None]:
    """``x`` with every added term ``y mod q`` (coefficient +1) replaced by ``y``, when the
    sum neither wraps before nor after: then the two sums differ by ``q * floor(y / q)``
    as integers, so they are equal modulo q. ``(a mod q + t) mod q`` is ``(a + t) mod q``
    (the Kyber butterfly reduces ``a`` first, C code often does not). Returns the new sum
    and its upper bound (None: unchanged); the bound comes from the sum's parts, which
    ``interval`` cannot see in the rebuilt term (a negative coefficient is a product by
    2^w - 1 there)."""
    w = x.w
    parts: dict[Term, int] = {}
    k0 = _sum_parts(x, w, 1, parts)
    lo, hi = _math_range(parts, k0)
    if lo < 0 or hi > mask(w):
        return x, None
    changed = False
    for atom, c in list(parts.items()):
        inner = _peel(atom)
        if c != 1 or inner.op != "remu" or inner.args[1].op != "const":
            continue
        y = inner.args[0]
        if int(inner.args[1].val) != q or unsigned(y)[1] > mask(w):
            continue
        # y's own parts, not y as an atom: a y rebuilt by an inner drop has negative
        # coefficients, products by 2^w - 1 whose interval is the full range. They stand
        # for y's value only when their sum cannot wrap either.
        ys: dict[Term, int] = {}
        ky = _sum_parts(_resize(y, w), w, 1, ys)
        ylo, yhi = _math_range(ys, ky)
        if ylo < 0 or yhi > mask(w):
            continue
        new = dict(parts)
        del new[atom]
        for t, c in ys.items():
            new[t] = new.get(t, 0) + c
        k = k0 + ky
        new = {t: c for t, c in new.items() if c}
        nlo, nhi = _math_range(new, k)
        if nlo < 0 or nhi > mask(w):
            continue
        parts, k0, changed, hi = new, k, True, nhi
    if not changed:
        return x, None
    out: Term | None = None
    for atom, c in sorted(parts.items(), key=lambda p: show_key(p[0])):
        if c == 0:
            continue
        term = atom if c == 1 else binop("mul", atom, const(w, c))
        out = term if out is None else binop("add", out, term)
    if out is None:
        return const(w, k0), k0
    return (binop("add", out, const(w, k0)) if k0 else out), hi


def show_key(t: Term) -> int:
    from aquas.egraph.terms import digest

    return digest(t)


def condition(c: Term) -> tuple[str, Term, Term, bool] | None:
    """``(pred, a, b, negated)`` for a comparison, seen through ``!``, ``x ^ 1`` and
    ``(int)cmp != 0``."""
    neg = False
    while True:
        if c.op == "cmp" and c.val in ("eq", "ne") and c.args[1].op == "const":
            inner = c.args[0]
            if inner.op == "zext" and int(inner.val) == 1 and int(c.args[1].val) in (0, 1):
                neg ^= (c.val == "eq") == (int(c.args[1].val) == 0)
                c = inner.args[0]
                continue
        if c.op == "xor" and c.w == 1 and c.args[1].op == "const" and int(c.args[1].val) == 1:
            neg, c = not neg, c.args[0]
            continue
        break
    if c.op != "cmp" or c.val in ("eq", "ne"):
        return None
    return str(c.val), c.args[0], c.args[1], neg


def _reduction(t: Term) -> Term | None:
    """A select that is an exact reduction modulo q:

    * ``s >= q ? s - q : s`` with ``0 <= s < 2q`` is ``s mod q``; so is the same select
      when ``s = x - floor(x * m / 2^32) * q`` is a Barrett estimate with
      ``m = floor(2^32 / q)`` and ``x < 2^32`` (the estimate undershoots ``x / q`` by less
      than one, so ``0 <= s < 2q``), which is ``x mod q``;
    * ``d < 0 ? d + q : d`` with ``-q <= d < q`` (signed) is ``(d + q) mod q``.
    """
    w = t.w
    cond = condition(t.args[0])
    if cond is None:
        return None
    pred, a, b, negated = cond
    x, y = (t.args[2], t.args[1]) if negated else (t.args[1], t.args[2])
    kind, rel = pred[0], pred[1:]
    if a.op == "const" and b.op != "const":  # k < a is a > k
        a, b, rel = b, a, {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}[rel]
    if b.op != "const" or a.w != w or kind not in "su":
        return None
    k = int(b.val) if kind == "u" else signed(int(b.val), w)
    # as "a >= k picks x, else y"
    if rel in ("lt", "le"):
        x, y = y, x
    if rel in ("le", "gt"):
        k += 1
    if kind == "s" and k == 0:
        # d >= 0 ? d : d + q  with -q <= d < q  is  (d + q) mod q
        q = _offset(y, a)
        d = signed_iv(a)
        ok = x is a and q is not None and 0 < q < 1 << (w - 1) and d is not None
        if ok and q is not None and d is not None and -q <= d[0] and d[1] < q:
            return modulo(binop("add", a, const(w, q)), q)
        return None
    # s >= q ? s - q : s  (signed compares need s >= 0, where they agree with unsigned)
    if y is not a or k <= 0 or _offset(x, a) != (-k) & mask(w):
        return None
    if kind == "s" and ((d := signed_iv(a)) is None or d[0] < 0):
        return None
    q = k
    # The Barrett form first: when x < q its estimate is 0 and s < 2q holds too, but
    # ``s mod q`` would keep the (zero) estimate in the operand, unlike ``x mod q``.
    src = _barrett_input(a, q)
    if src is not None:
        return _resize(modulo(src, q), w)
    if unsigned(a)[1] < 2 * q:
        return modulo(a, q)
    return None


def _offset(x: Term, y: Term) -> int | None:
    """``c`` when ``x = y + c`` (modulo 2^w) for a constant ``c``, else None."""
    lx, kx = linear_parts(x)
    ly, ky = linear_parts(y)
    if lx != ly:
        return None
    return (kx - ky) & mask(x.w)


def _strip(t: Term) -> Term:
    while t.op in ("zext", "trunc") and (t.op == "zext" or unsigned(t.args[0])[1] <= mask(t.w)):
        t = t.args[0]
    return t


def _barrett_input(r: Term, q: int) -> Term | None:
    """``x`` when ``r = x - floor(x * floor(2^32/q) / 2^32) * q`` with ``x < 2^32``, the
    product formed in 64 bits."""
    terms, k0 = linear_parts(r)
    if r.op == "sub" and r.args[1].op == "mul" and r.args[1].args[1].op == "const":
        # x - est * q read as written: x may itself be a product by a constant
        # (linear_parts would open it into c * u, which is no longer the x of est)
        u, v = r.args[0], r.args[1].args[0]
        if int(r.args[1].args[1].val) != q:
            return None
    else:
        if k0 or len(terms) != 2:
            return None
        (u, cu), (v, cv) = terms.items()
        if cu != 1:
            (u, cu), (v, cv) = (v, cv), (u, cu)
        if cu != 1 or cv != (-q) & mask(r.w):
            return None
    x, est = _strip(u), _strip(v)
    if unsigned(x)[1] > mask(32) or est.op != "shru" or est.args[1].op != "const":
        return None
    prod = est.args[0]
    if int(est.args[1].val) != 32 or prod.op != "mul" or prod.w < 64:
        return None
    m = (1 << 32) // q
    for f, g in (prod.args, prod.args[::-1]):
        if g.op == "const" and int(g.val) == m and _strip(f) is x:
            return x
    return None
