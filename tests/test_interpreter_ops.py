"""Bit-exact semantics of every operator at every width 1..64, through the spec frontend
and the golden interpreter, against Python references written here from the spec-language
rules (wrap-around, RISC-V division, shift-out)."""

from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st

from aquas.dialects import aquas as aq
from aquas.interpreter import IsaxState, execute, find_extension
from aquas.spec.frontend import lower_spec


def sgn(x: int, w: int) -> int:
    x &= (1 << w) - 1
    return x - (1 << w) if x >> (w - 1) else x


def ref_div(a: int, b: int, w: int, signed: bool) -> tuple[int, int]:
    m = (1 << w) - 1
    if not signed:
        return (a // b, a % b) if b else (m, a)
    sa, sb = sgn(a, w), sgn(b, w)
    if sb == 0:
        return m, a
    if sa == -(1 << (w - 1)) and sb == -1:
        return a, 0
    q = int(sa / sb) if abs(sa) < 2**52 and abs(sb) < 2**52 else _trunc_div(sa, sb)
    return q & m, (sa - q * sb) & m


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def reference(op: str, a: int, b: int, w: int, signed: bool) -> int:
    m = (1 << w) - 1
    if op == "+":
        return (a + b) & m
    if op == "-":
        return (a - b) & m
    if op == "*":
        return (a * b) & m
    if op == "/":
        return ref_div(a, b, w, signed)[0]
    if op == "%":
        return ref_div(a, b, w, signed)[1]
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op == "<<":
        return (a << b) & m if b < w else 0
    if op == ">>":
        if signed:
            return (sgn(a, w) >> min(b, w)) & m
        return a >> b if b < w else 0
    x, y = (sgn(a, w), sgn(b, w)) if signed else (a, b)
    return int({"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op])


OPS = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">="]


@functools.cache
def compiled(op: str, w: int, signed: bool) -> aq.IsaxOp:
    t = f"{'i' if signed else 'u'}{w}"
    cmp = op in ("==", "!=", "<", "<=", ">", ">=")
    rt = "u1" if cmp else t
    # shift amounts are unsigned; use a u7 operand so amounts >= w are exercised
    bt = "u7" if op in ("<<", ">>") else t
    src = f"""
    state a: {t};
    state b: {bt};
    state r: {rt};
    #[opcode(custom0), funct7(0)]
    isax t() {{ r = a {op} b; }}
    """
    return next(find_extension(lower_spec(src, "op.isax")).isaxs())


@settings(max_examples=600, deadline=None)
@given(
    op=st.sampled_from(OPS),
    w=st.integers(1, 64),
    signed=st.booleans(),
    data=st.data(),
)
def test_binary_operator(op: str, w: int, signed: bool, data: st.DataObject) -> None:
    edge = st.sampled_from([0, 1, (1 << w) - 1, 1 << (w - 1), (1 << (w - 1)) - 1])
    a = data.draw(st.one_of(edge, st.integers(0, (1 << w) - 1)))
    if op in ("<<", ">>"):
        b = data.draw(st.integers(0, 127))
    else:
        b = data.draw(st.one_of(edge, st.integers(0, (1 << w) - 1)))
    isax = compiled(op, w, signed)
    ext = isax.parent_op()
    assert isinstance(ext, aq.ExtensionOp)
    state = IsaxState.reset(ext)
    state.regs["a"], state.regs["b"] = a, b
    got = execute(isax, 0, 0, None, state).state.regs["r"]
    assert got == reference(op, a, b, w, signed), (op, w, signed, a, b)


@settings(max_examples=300, deadline=None)
@given(w_in=st.integers(1, 64), w_out=st.integers(1, 64), x=st.integers(0, 2**64 - 1))
def test_conversions(w_in: int, w_out: int, x: int) -> None:
    x &= (1 << w_in) - 1
    src = f"""
    state x: u{w_in};
    state z: u{max(w_in, w_out)};
    state s: u{max(w_in, w_out)};
    state n: u{min(w_in, w_out)};
    #[opcode(custom0), funct7(0)]
    isax t() {{
        z = zext<u{max(w_in, w_out)}>(x);
        s = sext<i{max(w_in, w_out)}>(x as i{w_in}) as u{max(w_in, w_out)};
        n = trunc<u{min(w_in, w_out)}>(x);
    }}
    """
    ext = find_extension(lower_spec(src, "c.isax"))
    st_ = IsaxState.reset(ext)
    st_.regs["x"] = x
    r = execute(next(ext.isaxs()), 0, 0, None, st_).state.regs
    wide = max(w_in, w_out)
    assert r["z"] == x
    assert r["s"] == sgn(x, w_in) & ((1 << wide) - 1)
    assert r["n"] == x & ((1 << min(w_in, w_out)) - 1)
