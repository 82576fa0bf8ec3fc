"""Soundness helpers of the matcher: the random-input equality filter (values of
hash-consed terms per trial), footprints of accesses (grouped, deduplicated, hulls,
coverage), writes split into RV32-sized pieces, and the names used in diagnostics."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from aquas.egraph.semantics import ADDR_W, Access, Effects, linear_form, width_of
from aquas.egraph.terms import (
    Linear,
    RandomMemory,
    Term,
    binop,
    cast,
    const,
    evaluate,
    linear,
    show,
    walk,
)


def _rand_value(rng: random.Random, trial: int) -> int:
    if trial % 4 == 0:
        return rng.choice([0, 1, 2, 0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF, 3329])
    return rng.getrandbits(64)


class _RandomEnv(dict[str, int]):
    """Variable values of one trial: a function of the variable's name, made on first use."""

    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def __missing__(self, name: str) -> int:
        v = self[name] = _rand_value(random.Random(f"{self.k}/{name}"), self.k)
        return v


class Trial:
    """One random input of the equality filter: variable values, a pseudo-random memory,
    and the value of every term evaluated so far (kept across calls)."""

    def __init__(self, k: int):
        self.env = _RandomEnv(k)
        self.memory = RandomMemory(k)
        self.memo: dict[Term, int] = {}

    def value(self, t: Term) -> int:
        return evaluate(t, self.env, self.memory, self.memo)


def access_of(addr: Term, w: int) -> Access:
    return Access(addr, linear_form(addr), w, 0)


def dedup(xs: Iterable[Access]) -> list[Access]:
    seen, out = set(), []
    for a in xs:
        k = (a.lin, a.width)
        if k not in seen:
            seen.add(k)
            out.append(a)
    return out


def groups(xs: Iterable[Access]) -> dict[tuple, list[Access]]:
    out: dict[tuple, list[Access]] = {}
    for a in xs:
        if all(t.op == "var" for t, _ in a.lin.terms):
            out.setdefault(a.lin.terms, []).append(a)
    return out


def hulls(xs: Iterable[Access]) -> dict[tuple, tuple[int, int]]:
    out: dict[tuple, tuple[int, int]] = {}
    for a in xs:
        lo, hi = out.get(a.lin.terms, (a.lin.offset, a.lin.offset + a.width // 8))
        out[a.lin.terms] = (min(lo, a.lin.offset), max(hi, a.lin.offset + a.width // 8))
    return out


def indirect_on(fx: Effects, key: tuple) -> bool:
    """True when the region also reads at data-dependent offsets from the same pointer."""
    names = {t for t, _ in key if t.op == "var"}
    for a in fx.reads:
        atoms = {t for t, _ in a.lin.terms}
        if names <= atoms and any(t.op != "var" for t in atoms):
            return True
    return False


def covered(a: Access, reads: set[tuple[Linear, int]]) -> bool:
    """A narrower read inside a wider read of the ISAX (e.g. a byte of a word)."""
    end = a.lin.offset + a.width // 8
    return any(
        lin.terms == a.lin.terms and lin.offset <= a.lin.offset and end <= lin.offset + w // 8
        for lin, w in reads
    )


def pieces(
    writes: Iterable[Access], s: Callable[[Term], Term] | None = None, values: bool = True
) -> list[Access]:
    """Writes split into at most 32-bit little-endian pieces (the granularity of RV32 code);
    ``s`` substitutes addresses and (unless ``values`` is False) values."""
    out = []
    for w in writes:
        addr = s(w.addr) if s else w.addr
        val = s(w.value) if (s and values and w.value is not None) else w.value
        assert val is not None
        if w.width <= 32:
            out.append(Access(addr, linear(addr), w.width, w.seq, val))
            continue
        for k in range(w.width // 32):
            a = binop("add", addr, const(ADDR_W, 4 * k))
            v = cast("trunc", 32, binop("shru", val, const(val.w, 32 * k)) if k else val)
            out.append(Access(a, linear(a), 32, w.seq, v))
    return out


def leaf_operands(t: Term, names: set[str] | None = None) -> list[Term]:
    """Candidate register operands, values the call site can name: variables of at most
    32 bits with a C name, and loads of at most 32 bits whose address is a linear form
    over such names (``a[i]``)."""
    out = []

    def nameable(x: Term) -> bool:
        return (
            x.op == "var"
            and not str(x.val).startswith("%")
            and (names is None or str(x.val) in names)
        )

    for n in walk(t):
        if n in out or n.w > 32:
            continue
        if (n.op == "var" and nameable(n)) or (
            n.op == "load" and all(nameable(a) for a, _ in linear(n.args[0]).terms)
        ):
            out.append(n)
    return out


def computed_operands(t: Term, names: set[str] | None = None, limit: int = 12) -> list[Term]:
    """Further candidate register operands: constants and side-effect-free sub-expressions
    of ``t`` of at most 32 bits over values the call site can name (variables with a C
    name, loads whose address is a linear form over them), the smallest first, at most
    ``limit``. The rewrite evaluates such an operand as the call's argument, in the
    statement that evaluated it before, so exactly once and at the same point."""
    leaves = set(leaf_operands(t, names))
    top = t  # the value itself, under its casts, is no operand: the ISAX must do the work
    while top.op in ("zext", "sext", "trunc"):
        top = top.args[0]

    def nameable(x: Term) -> bool:
        return (
            x.op == "var"
            and not str(x.val).startswith("%")
            and (names is None or str(x.val) in names)
        )

    ok: dict[Term, bool] = {}
    out = []
    for n in walk(t):  # children before parents
        if n.op == "var":
            ok[n] = nameable(n)
        elif n.op == "load":
            ok[n] = all(nameable(a) for a, _ in linear(n.args[0]).terms)
        else:
            ok[n] = all(ok[a] for a in n.args)
        if n is t or n is top or n in leaves or not ok[n] or n.w > 32 or n.w == 1:
            continue
        if n.op in ("zext", "sext") and n.args[0] in leaves:
            continue  # an extended leaf: tried as the leaf
        out.append(n)
    out.sort(key=lambda n: (n.op != "const", n.size))
    return out[:limit]


def base_name(a: Access, pointers: set[str] | None = None) -> str | None:
    """The pointer an access is based on: among the 32-bit variables of its address, the
    one in ``pointers`` (a global, ``@g``, always is one), so that a loop index of an
    enclosing loop (``sig + 32*blk``) is not taken for the base; None when the address
    has two such pointers (its base is unknown: it may alias anything). Without
    ``pointers``, the first variable."""
    names = [str(t.val) for t, _ in a.lin.terms if t.op == "var" and t.w == ADDR_W]
    if pointers is not None:
        ptrs = [n for n in names if n in pointers or n.startswith("@")]
        if len(ptrs) == 1:
            return ptrs[0]
        if len(ptrs) > 1:
            return None
    return names[0] if len(names) >= 1 else None


def where(key: tuple) -> str:
    terms, off, w = key
    base = " + ".join(f"{show(t)}" if c == 1 else f"{c}*{show(t)}" for t, c in terms) or "0"
    return f"[{base} + {off}] ({w}-bit)"


def c_type_name(ty: object) -> str:
    w = width_of(ty)
    return f"uint{w}_t" if w in (8, 16, 32, 64) else "uint32_t"
