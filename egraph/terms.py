"""Dataflow terms: the value language shared by ISAX patterns and application regions.

Symbolic execution (:mod:`aquas.egraph.semantics`) turns a region of MLIR -- an ISAX body in
the ``aquas`` dialect or a loop of application code in func/scf/arith/memref -- into terms
over its live-in values: register operands, pointer bases and loop-carried scalars.  Terms
are hash-consed (one Python object per distinct node), so a fully unrolled kernel is a DAG,
not a tree, and identity comparison is structural equality.

Addresses are 32-bit byte addresses (RV32).  A memory read is the node ``load`` whose only
child is the address term; address arithmetic with concrete loop indices folds to
``base + constant`` when terms are built (:func:`mk` folds operations whose operands are all
constants -- the smallest form of constant folding, which also keeps unrolled addresses
small).  Everything else -- commutativity, association, identities, casts -- is the
e-graph's job (:mod:`aquas.egraph.egg`).

Widths: every node has the width of its result (comparisons give 1).  Casts record their
source width in ``val`` so the e-graph rules can reason about them.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import ClassVar

from aquas import intops

BINARY = (
    "add",
    "sub",
    "mul",
    "and",
    "or",
    "xor",
    "shl",
    "shru",
    "shrs",
    "divu",
    "divs",
    "remu",
    "rems",
)
CASTS = ("sext", "zext", "trunc")


# w-bit integer semantics are aquas.intops' (the one definition shared with the interpreter,
# the ISS, the frontends and RTL generation); these names stay for the matcher's callers.
mask = intops.mask
signed = intops.to_signed


class Term:
    """One hash-consed node: ``op`` with result width ``w``, children ``args`` and a payload.

    ``val`` is the constant's unsigned value, a variable's name, a comparison predicate or a
    cast's source width.  Create nodes only through :func:`mk` and the helpers below.
    """

    __slots__ = ("__weakref__", "args", "op", "size", "val", "w")
    _table: ClassVar[dict[tuple[object, ...], Term]] = {}

    op: str
    w: int
    args: tuple[Term, ...]
    val: int | str
    size: int

    def __repr__(self) -> str:
        return show(self)


def mk(op: str, w: int, args: tuple[Term, ...] = (), val: int | str = 0) -> Term:
    if op in BINARY and all(a.op == "const" for a in args):
        return const(w, intops.binary(op, w, int(args[0].val), int(args[1].val)))
    if op in CASTS and args[0].op == "const":
        v = int(args[0].val)
        return const(w, signed(v, int(val)) if op == "sext" else v)
    if op == "cmp" and all(a.op == "const" for a in args):
        return const(
            1, int(intops.compare(str(val), args[0].w, int(args[0].val), int(args[1].val)))
        )
    if op == "select" and args[0].op == "const":
        return args[1] if args[0].val else args[2]
    key = (op, w, tuple(id(a) for a in args), val)
    t = Term._table.get(key)
    if t is None:
        t = Term.__new__(Term)
        t.op, t.w, t.args, t.val = op, w, args, val
        t.size = 1 + sum(a.size for a in args)
        Term._table[key] = t
    return t


def const(w: int, v: int) -> Term:
    return mk("const", w, (), v & mask(w))


def var(name: str, w: int) -> Term:
    return mk("var", w, (), name)


def binop(op: str, a: Term, b: Term) -> Term:
    return mk(op, a.w, (a, b))


def cmp(pred: str, a: Term, b: Term) -> Term:
    return mk("cmp", 1, (a, b), pred)


def select(c: Term, a: Term, b: Term) -> Term:
    if a is b:
        return a
    if c.op == "cmp" and {a, b} == set(c.args) and (k := _tests_equality(c)) is not None:
        # c ? x : K with c true exactly when x != K (x < UINT_MAX, x > INT_MIN, ...) is x:
        # on x == K both arms are K. A running minimum seeded with UINT_MAX has this as
        # its first step, a running minimum seeded with the first element does not.
        return a if k == "ne" else b
    return mk("select", a.w, (c, a, b))


def _tests_equality(c: Term) -> str | None:
    """ "ne" when the comparison ``c`` is true exactly when its operands differ, "eq" when
    exactly when they are equal: besides == and !=, a strict comparison with the extreme
    constant of its order (x < UINT_MAX) or an inclusive one (x >= UINT_MAX); None
    otherwise."""
    x, y = c.args
    pred = str(c.val)
    if pred in ("eq", "ne"):
        return pred
    if y.op != "const":  # K < x is x > K
        if x.op != "const":
            return None
        x, y = y, x
        pred = pred[0] + {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}[pred[1:]]
    w, k = y.w, int(y.val)
    top, bottom = (mask(w), 0) if pred[0] == "u" else (mask(w - 1), 1 << (w - 1))
    return {
        ("lt", top): "ne",
        ("gt", bottom): "ne",
        ("ge", top): "eq",
        ("le", bottom): "eq",
    }.get((pred[1:], k))


def cast(op: str, w: int, a: Term) -> Term:
    """sext/zext/trunc ``a`` to ``w`` bits; a cast to the same width is ``a`` itself."""
    if w == a.w:
        return a
    return mk(op, w, (a,), a.w)


def load(w: int, addr: Term) -> Term:
    return mk("load", w, (addr,))


def walk(t: Term) -> Iterator[Term]:
    """Every distinct node under ``t`` (children before parents)."""
    seen: set[int] = set()
    stack: list[tuple[Term, bool]] = [(t, False)]
    while stack:
        n, done = stack.pop()
        if done:
            yield n
            continue
        if id(n) in seen:
            continue
        seen.add(id(n))
        stack.append((n, True))
        stack.extend((a, False) for a in n.args)


def substitute(t: Term, env: Mapping[Term, Term], memo: dict[Term, Term] | None = None) -> Term:
    """Replace variables (or any node) by terms, rebuilding the DAG bottom-up.

    ``memo`` keeps every node's substitute under the same ``env`` across calls, so terms
    sharing a sub-DAG (the regions of one binding) rebuild it once."""
    memo = {} if memo is None else memo
    stack: list[tuple[Term, bool]] = [(t, False)]
    while stack:
        n, done = stack.pop()
        if n in memo:
            continue
        if n in env:
            memo[n] = env[n]
        elif not n.args:
            memo[n] = n
        elif done:
            memo[n] = mk(n.op, n.w, tuple(memo[a] for a in n.args), n.val)
        else:
            stack.append((n, True))
            stack.extend((a, False) for a in n.args if a not in memo)
    return memo[t]


def variables(t: Term) -> set[Term]:
    return {n for n in walk(t) if n.op == "var"}


def evaluate(
    t: Term,
    env: Mapping[str, int],
    memory: Callable[[int, int], int],
    memo: dict[Term, int] | None = None,
) -> int:
    """Concrete value of ``t`` under variable values and a memory read function.
    ``memo`` keeps the values of every node evaluated so far under the same ``env`` and
    ``memory`` across calls (a shared sub-term is computed once)."""
    memo = {} if memo is None else memo
    stack = [t]
    while stack:
        n = stack[-1]
        if n in memo:
            stack.pop()
            continue
        todo = [x for x in n.args if x not in memo]
        if todo:
            stack.extend(todo)
            continue
        stack.pop()
        a = [memo[x] for x in n.args]
        match n.op:
            case "const":
                v = int(n.val)
            case "var":
                v = env[str(n.val)] & mask(n.w)
            case "cmp":
                v = int(intops.compare(str(n.val), n.args[0].w, a[0], a[1]))
            case "select":
                v = a[1] if a[0] else a[2]
            case "sext":
                v = signed(a[0], int(n.val)) & mask(n.w)
            case "zext":
                v = a[0]
            case "trunc":
                v = a[0] & mask(n.w)
            case "load":
                v = memory(a[0], n.w)
            case _:
                v = intops.binary(n.op, n.w, a[0], a[1])
        memo[n] = v
    return memo[t]


class RandomMemory:
    """A deterministic pseudo-random little-endian memory: byte ``a`` is a hash of ``a``."""

    def __init__(self, seed: int):
        self.seed = seed
        self.bytes: dict[int, int] = {}

    def byte(self, a: int) -> int:
        b = self.bytes.get(a)
        if b is None:
            b = random.Random(a * 0x9E3779B1 ^ self.seed).getrandbits(8)
            self.bytes[a] = b
        return b

    def __call__(self, addr: int, w: int) -> int:
        return sum(self.byte((addr + i) & mask(32)) << (8 * i) for i in range(w // 8))


# ---------------------------------------------------------------------------------------
# Addresses as linear forms
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Linear:
    """``sum(coeff * atom) + offset`` modulo 2^32: the shape of an address."""

    terms: tuple[tuple[Term, int], ...]  # sorted by id of the atom; coefficients non-zero
    offset: int

    @property
    def base(self) -> tuple[tuple[Term, int], ...]:
        return self.terms

    def shifted(self, d: int) -> Linear:
        return Linear(self.terms, (self.offset + d) & mask(32))


def linear(t: Term) -> Linear:
    """The linear form of a 32-bit address term; non-linear sub-terms become atoms."""
    acc, off = linear_parts(t, 32)
    return Linear(tuple(sorted(acc.items(), key=_key)), off)


def linear_parts(t: Term, w: int | None = None) -> tuple[dict[Term, int], int]:
    """``t`` modulo 2^w (default: its width) as atoms with coefficients plus a constant:
    add/sub/mul-by-constant/shift-by-constant chains of width w are opened."""
    w = t.w if w is None else w
    acc: dict[Term, int] = {}
    off = _linear(t, 1, acc, w)
    return {a: c & mask(w) for a, c in acc.items() if c & mask(w)}, off & mask(w)


def _key(item: tuple[Term, int]) -> tuple[str, int]:
    """Variables by name, other atoms by structure: the same atoms always sort alike."""
    a = item[0]
    return (str(a.val), 0) if a.op == "var" else ("~", digest(a))


def _linear(t: Term, k: int, acc: dict[Term, int], w: int) -> int:
    if t.op == "const":
        return k * int(t.val)
    if (
        t.w >= w
    ):  # arithmetic modulo 2^w sees through wider operations (truncation is a homomorphism)
        a = t.args
        if t.op == "add":
            return _linear(a[0], k, acc, w) + _linear(a[1], k, acc, w)
        if t.op == "sub":
            return _linear(a[0], k, acc, w) + _linear(a[1], -k, acc, w)
        if t.op == "mul" and a[1].op == "const":
            return _linear(a[0], k * int(a[1].val), acc, w)
        if t.op == "mul" and a[0].op == "const":
            return _linear(a[1], k * int(a[0].val), acc, w)
        if t.op == "shl" and a[1].op == "const":
            return _linear(a[0], k << int(a[1].val), acc, w)
        if t.op in ("sext", "trunc", "zext") and a[0].w >= w:
            return _linear(a[0], k, acc, w)
    acc[t] = acc.get(t, 0) + k
    return 0


def to32(t: Term) -> Term:
    """``t`` as a 32-bit value (sign-extended or truncated)."""
    return cast("sext" if t.w < 32 else "trunc", 32, t)


def linear_term(lin: Linear) -> Term:
    """The canonical 32-bit term of a linear form (atoms in a fixed order)."""
    t: Term | None = None
    for atom, c in lin.terms:
        x = to32(atom)
        if c != 1:
            x = binop("mul", x, const(32, c))
        t = x if t is None else binop("add", t, x)
    if t is None:
        return const(32, lin.offset)
    return binop("add", t, const(32, lin.offset)) if lin.offset else t


def canonical_address(t: Term) -> Term:
    return linear_term(linear(t))


_DIGESTS: dict[int, int] = {}


def digest(t: Term) -> int:
    """A structural hash of the whole term (deterministic within a run), for canonical
    choices between terms that must not depend on where a term came from."""
    for n in walk(t):
        if id(n) not in _DIGESTS:
            parts = (n.op, n.w, n.val, *(_DIGESTS[id(a)] for a in n.args))
            _DIGESTS[id(n)] = zlib.crc32(repr(parts).encode())
    return _DIGESTS[id(t)]


def show(t: Term, depth: int = 6) -> str:
    """A compact, deterministic rendering (for diagnostics and sorting)."""
    if t.op == "const":
        return str(t.val) if t.w == 32 else f"{t.val}:i{t.w}"
    if t.op == "var":
        return str(t.val)
    if depth == 0:
        return "…"
    inner = ", ".join(show(a, depth - 1) for a in t.args)
    tag = t.op if t.op not in ("cmp",) else f"cmp.{t.val}"
    if t.op in CASTS:
        tag = f"{t.op}{t.val}→{t.w}"
    elif t.op not in ("cmp", "select"):
        tag = f"{t.op}{t.w}"
    return f"{tag}({inner})"


__all__ = [
    "BINARY",
    "CASTS",
    "Linear",
    "RandomMemory",
    "Term",
    "binop",
    "canonical_address",
    "cast",
    "cmp",
    "const",
    "digest",
    "evaluate",
    "linear",
    "linear_term",
    "load",
    "mask",
    "mk",
    "select",
    "show",
    "signed",
    "substitute",
    "to32",
    "var",
    "variables",
    "walk",
]
