"""Expression lowering of the spec frontend: type rules, constant folding and SSA emission
for every expression form, plus the typed operand helpers statements share (addresses,
conditions, scratchpad indices)."""

from __future__ import annotations

import math

from lark import Token, Tree
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i32
from xdsl.ir import Block, Operation, SSAValue

from aquas.dialects import aquas as aq
from aquas.spec.limits import MAX_CONST_BITS
from aquas.spec.lowering import Const, Typed, Val, Where, conv_hint, signless
from aquas.spec.tables import TableLowering
from aquas.spec.types import U1, U32, IntTy, parse_type_name


class ExprLowering(TableLowering):
    """Lowers expressions; every ``e_<rule>`` method handles one grammar rule."""

    def access_type(self, ty_tok: Token | Tree | None) -> IntTy:
        assert isinstance(ty_tok, Token)
        ty = self.type_of(ty_tok)
        if ty.width not in aq.MEMORY_ACCESS_WIDTHS:
            raise self.error(
                ty_tok, f"memory accesses are 8, 16, 32 or 64 bits wide, not {ty.width}"
            )
        return ty

    def address(self, e: Tree | Token | None) -> SSAValue:
        v = self.expr(e, U32)
        tv = self.materialize(v, U32, e)
        if tv.ty.width != 32 or tv.ty.signed:
            raise self.error(
                e, f"addresses are u32, got {tv.ty}", hint="convert with zext<u32>() or `as u32`"
            )
        return tv.value

    def condition(self, e: Tree | Token | None) -> SSAValue:
        v = self.expr(e, U1)
        tv = self.materialize(v, U1, e)
        if tv.ty.width != 1:
            raise self.error(
                e, f"a condition must be u1 (bool), got {tv.ty}", hint="compare it, e.g. `x != 0`"
            )
        return tv.value

    def const_expr(self, e: Tree | Token | None, msg: str = "expected a constant") -> int:
        return self.const_val(e, msg).value

    def const_val(self, e: Tree | Token | None, msg: str = "expected a constant") -> Const:
        """An untyped constant expression, with whether it was written as a bit pattern."""
        saved = self.block
        self.block = Block()
        try:
            v = self.expr(e, None)
        finally:
            scratch, self.block = self.block, saved
        if not isinstance(v, Const) or scratch.first_op is not None:
            raise self.error(e, msg, hint="write an integer literal without a type suffix")
        return v

    def check_const_fits(self, v: int | Const, ty: IntTy, at: Where) -> int:
        c = v if isinstance(v, Const) else Const(v, False)
        lo = ty.min if not c.bit_pattern else min(ty.min, 0)
        hi = ty.max if not c.bit_pattern else ty.mask
        if not lo <= c.value <= hi:
            raise self.error(
                at, f"constant {c.value} is out of range for {ty} ({ty.min}..{ty.max})"
            )
        return c.value

    def materialize(self, v: Val, ty: IntTy, at: Where) -> Typed:
        """A typed value: constants take ``ty``; typed values pass through unchanged."""
        if isinstance(v, Typed):
            return v
        value = self.check_const_fits(v, ty, at)
        return self.const(signless(value, ty.width), ty, at)

    def coerce(self, v: Val, ty: IntTy, at: Where) -> Typed:
        """Materialize ``v`` as ``ty``; a typed value must already have exactly that type."""
        tv = self.materialize(v, ty, at)
        if tv.ty != ty:
            raise self.error(
                at, f"type mismatch: expected {ty}, got {tv.ty}", hint=conv_hint(tv.ty, ty)
            )
        return tv

    def expr(self, e: Tree | Token | None, expected: IntTy | None) -> Val:
        assert e is not None
        if isinstance(e, Token):  # only INT/NAME reach here through inlined rules
            raise self.error(e, f"unexpected token '{e}'")
        fn = getattr(self, "e_" + e.data, None)
        if fn is not None:
            return fn(e, expected)
        if e.data in BINOPS.values():
            lhs_e, rhs_e = e.children
            return self.binary(e, lhs_e, rhs_e, expected)
        raise self.error(e, f"unsupported expression '{e.data}'")

    def e_literal(self, e: Tree, expected: IntTy | None) -> Val:
        tok = e.children[0]
        assert isinstance(tok, Token)
        value, suffix, pattern = self.literal(tok)
        if suffix is None:
            return Const(value, pattern)
        ty = parse_type_name(suffix)
        if ty is None:
            raise self.error(
                tok, f"unknown type suffix '{suffix}'", hint="suffixes are u1..u64, i1..i64"
            )
        self.check_const_fits(Const(value, pattern), ty, tok)
        return self.const(signless(value, ty.width), ty, tok)

    def name_value(self, tok: Token | Tree | None) -> Typed:
        assert isinstance(tok, Token)
        name = str(tok)
        b = self.lookup(name)
        if b is not None:
            return Typed(b.value, b.ty)
        if self.isax is None:  # outside every ISAX: a state's initial value
            raise self.error(
                tok,
                f"'{name}' cannot be used here: {self.const_context} must be a constant",
                hint="use an integer literal",
            )
        if name in ("rs1", "rs2"):
            if name not in self.isax.rs:
                raise self.error(
                    tok,
                    f"'{name}' is not a parameter of ISAX '{self.isax.name}'",
                    hint=f"list it: isax {self.isax.name}(rs1, rs2)",
                )
            return Typed(self.isax.rs[name], U32)
        if name in self.states:
            ty, _ = self.states[name]
            op = self.emit(aq.StateReadOp(name, ty.width), tok)
            return Typed(op.results[0], ty)
        if name in self.scratchpads:
            raise self.error(
                tok, f"scratchpad '{name}' is not a value", hint=f"read an element: {name}[i]"
            )
        if name in self.roms:
            raise self.error(tok, f"ROM '{name}' is not a value", hint=f"read an entry: {name}[i]")
        if name == "rd":
            raise self.error(tok, "rd is write-only")
        raise self.error(tok, f"undefined name '{name}'")

    def e_name(self, e: Tree, expected: IntTy | None) -> Val:
        return self.name_value(e.children[0])

    def shape_of(self, name: str) -> tuple[str, tuple[int, ...]]:
        """("scratchpad" or "ROM", the declared shape) of an indexable declaration."""
        if name in self.roms:
            return "ROM", self.roms[name].shape
        return "scratchpad", self.shapes[name]

    def element_index(
        self,
        name: str,
        idx_es: list[Tree | Token | None],
        at: Where,
        vals: list[Val] | None = None,
    ) -> Val:
        """The row-major index of ``name[i0][i1]...`` (one index per dimension): a constant
        when every index is one, else a u32 value (a 1-D index keeps its own type). Constant
        indices are checked against their dimension; run-time ones are not (docs:
        "Multi-dimensional scratchpads")."""
        what, shape = self.shape_of(name)
        assert len(idx_es) == len(shape)
        vals = [self.expr(e, U32) for e in idx_es] if vals is None else vals
        for d, (v, e) in enumerate(zip(vals, idx_es, strict=True)):
            if isinstance(v, Const):
                if 0 <= v.value < shape[d]:
                    continue
                if len(shape) > 1:
                    raise self.error(
                        e,
                        f"index {v.value} out of bounds for dimension {d + 1} of {what} "
                        f"'{name}' ({shape[d]} wide)",
                        hint=f"indices of dimension {d + 1} run from 0 to {shape[d] - 1}",
                    )
                if what == "ROM":
                    raise self.error(
                        e,
                        f"index {v.value} out of bounds for ROM '{name}' of {shape[0]} entries",
                        hint=f"ROM indices run from 0 to {shape[0] - 1}",
                    )
                raise self.error(
                    e,
                    f"index {v.value} out of bounds for scratchpad '{name}' of {shape[0]} elements",
                )
            if v.ty.signed:
                raise self.error(
                    e, f"{what} index must be unsigned, got {v.ty}", hint="convert with `as u..`"
                )
            if v.ty.width > 32 and (what == "scratchpad" or len(shape) > 1):
                raise self.error(
                    e,
                    f"{what} index must be at most 32 bits, got {v.ty}",
                    hint="trunc<u32>(...) it",
                )
        if len(shape) == 1:
            return vals[0]
        const_part = 0
        acc: SSAValue | None = None
        for d, (v, e) in enumerate(zip(vals, idx_es, strict=True)):
            stride = math.prod(shape[d + 1 :])
            if isinstance(v, Const):
                const_part += v.value * stride
                continue
            x = v.value
            if v.ty.width < 32:
                x = self.emit(arith.ExtUIOp(x, i32), e).results[0]
            if stride > 1:
                if stride & (stride - 1) == 0:
                    amt = self.const(stride.bit_length() - 1, U32, e)
                    x = self.emit(arith.ShLIOp(x, amt.value), e).results[0]
                else:
                    k = self.const(signless(stride, 32), U32, e)
                    x = self.emit(arith.MuliOp(x, k.value), e).results[0]
            acc = x if acc is None else self.emit(arith.AddiOp(acc, x), e).results[0]
        if acc is None:
            return Const(const_part, False)
        if const_part:
            c = self.const(signless(const_part, 32), U32, at)
            acc = self.emit(arith.AddiOp(acc, c.value), at).results[0]
        return Typed(acc, U32)

    def spm_index(self, v: Val, at: Where) -> SSAValue:
        """A checked element index (:meth:`element_index`) as the u32 the IR takes."""
        if isinstance(v, Const):
            return self.const(v.value, U32, at).value
        if v.ty.width < 32:
            return self.emit(arith.ExtUIOp(v.value, i32), at).results[0]
        return v.value

    def index_chain(self, e: Tree) -> tuple[str, list[Tree | Token | None]] | None:
        """``t[i][j]`` → ("t", [i, j]) when ``t`` names a scratchpad or ROM (not shadowed)."""
        idxs: list[Tree | Token | None] = []
        node: Tree | Token | None = e
        while isinstance(node, Tree) and node.data == "index":
            base, idx = node.children
            idxs.append(idx)
            node = base
        if not (isinstance(node, Tree) and node.data == "name"):
            return None
        name = str(node.children[0])
        if (name in self.scratchpads or name in self.roms) and self.lookup(name) is None:
            return name, idxs[::-1]
        return None

    def check_rank(self, name: str, given: int, at: Where, write: bool = False) -> None:
        what, shape = self.shape_of(name)
        if given < len(shape) or (write and given != len(shape)):
            subs = "".join(f"[{c}]" for c in "ijklmn"[: len(shape)])
            raise self.error(
                at,
                f"{what} '{name}' has {len(shape)} dimensions; {given} "
                f"{'index is' if given == 1 else 'indices are'} given",
                hint=f"index every dimension: {name}{subs}",
            )

    def spm_read(self, name: str, idx_es: list[Tree | Token | None], at: Tree) -> Typed:
        ty, _, _ = self.scratchpads[name]
        idx = self.spm_index(self.element_index(name, idx_es, at), at)
        op = self.emit(aq.SpmReadOp(name, idx, ty.width), at)
        return Typed(op.results[0], ty)

    def e_index(self, e: Tree, expected: IntTy | None) -> Val:
        base_e, idx_e = e.children
        assert isinstance(base_e, Tree)
        chain = self.index_chain(e)
        if chain is not None:
            name, idx_es = chain
            rank = len(self.shape_of(name)[1])
            self.check_rank(name, len(idx_es), e)
            if len(idx_es) == rank:
                if name in self.roms:
                    return self.rom_read(name, self.element_index(name, idx_es, e), e)
                return self.spm_read(name, idx_es, e)
            # more indices than dimensions: bits of the element (below)
        base = self.typed(self.expr(base_e, None), base_e)
        idx = self.expr(idx_e, None)
        if isinstance(idx, Const):
            if not 0 <= idx.value < base.ty.width:
                raise self.error(idx_e, f"bit index {idx.value} out of range for {base.ty}")
            return self.extract(base, idx.value, 1, e)
        shifted = self.binop("shr", Typed(base.value, IntTy(base.ty.width, False)), idx, e, idx_e)
        assert isinstance(shifted, Typed)
        return self.extract(shifted, 0, 1, e)

    def extract(self, v: Typed, lo: int, width: int, at: Tree) -> Typed:
        val = v.value
        if lo:
            amt = self.const(lo, IntTy(v.ty.width, False), at)
            val = self.emit(arith.ShRUIOp(val, amt.value), at).results[0]
        if width < v.ty.width:
            val = self.emit(arith.TruncIOp(val, IntegerType(width)), at).results[0]
        return Typed(val, IntTy(width, False))

    def e_slice(self, e: Tree, expected: IntTy | None) -> Val:
        base_e, hi_tok, lo_tok = e.children
        base = self.typed(self.expr(base_e, None), base_e)
        hi, lo = self.int_token(hi_tok), self.int_token(lo_tok)
        if not base.ty.width > hi >= lo >= 0:
            raise self.error(
                e,
                f"slice [{hi}:{lo}] out of range for {base.ty}",
                hint=f"bits are numbered {base.ty.width - 1}..0; write [hi:lo] with hi >= lo",
            )
        return self.extract(base, lo, hi - lo + 1, e)

    def e_concat(self, e: Tree, expected: IntTy | None) -> Val:
        parts = [self.typed(self.expr(c, None), c) for c in e.children]
        width = sum(p.ty.width for p in parts)
        if width > 64:
            raise self.error(e, f"concatenation is {width} bits wide; the maximum is 64")
        wt = IntegerType(width)
        acc: SSAValue | None = None
        shift = width
        for p in parts:
            shift -= p.ty.width
            v = p.value
            if p.ty.width < width:
                v = self.emit(arith.ExtUIOp(v, wt), e).results[0]
            if shift:
                amt = self.const(shift, IntTy(width, False), e)
                v = self.emit(arith.ShLIOp(v, amt.value), e).results[0]
            acc = v if acc is None else self.emit(arith.OrIOp(acc, v), e).results[0]
        assert acc is not None
        return Typed(acc, IntTy(width, False))

    def e_cast(self, e: Tree, expected: IntTy | None) -> Val:
        fn_tree, ty_tok, x_e = e.children
        assert isinstance(fn_tree, Tree) and isinstance(ty_tok, Token)
        fn = str(fn_tree.children[0])
        ty = self.type_of(ty_tok)
        x = self.expr(x_e, None)
        if isinstance(x, Const):
            raise self.error(
                x_e,
                f"{fn}<{ty}>() of an untyped literal",
                hint=f"write the literal with a suffix, e.g. {x.value}{ty}",
            )
        if fn in ("sext", "zext"):
            if ty.width < x.ty.width:
                raise self.error(e, f"{fn} to {ty} narrows {x.ty}", hint=f"use trunc<{ty}>()")
            if ty.width == x.ty.width:
                return Typed(x.value, ty)
            op = arith.ExtSIOp if fn == "sext" else arith.ExtUIOp
            return Typed(self.emit(op(x.value, IntegerType(ty.width)), e).results[0], ty)
        if ty.width > x.ty.width:
            raise self.error(
                e, f"trunc to {ty} widens {x.ty}", hint=f"use zext<{ty}>() or sext<{ty}>()"
            )
        if ty.width == x.ty.width:
            return Typed(x.value, ty)
        return Typed(self.emit(arith.TruncIOp(x.value, IntegerType(ty.width)), e).results[0], ty)

    def e_as_cast(self, e: Tree, expected: IntTy | None) -> Val:
        x_e, ty_tok = e.children
        assert isinstance(ty_tok, Token)
        ty = self.type_of(ty_tok)
        x = self.expr(x_e, None)
        if isinstance(x, Const):
            return self.materialize(x, ty, x_e)
        if x.ty.width != ty.width:
            raise self.error(
                e,
                f"`as` only reinterprets the sign of a same-width value ({x.ty} as {ty})",
                hint=conv_hint(x.ty, ty),
            )
        return Typed(x.value, ty)

    def e_load(self, e: Tree, expected: IntTy | None) -> Val:
        ty_tok, addr_e = e.children
        ty = self.access_type(ty_tok)
        addr = self.address(addr_e)
        return Typed(self.emit(aq.LoadOp(addr, ty.width), e).results[0], ty)

    def e_select(self, e: Tree, expected: IntTy | None) -> Val:
        c_e, a_e, b_e = e.children
        return self.choose(e, c_e, a_e, b_e, expected)

    def e_ternary(self, e: Tree, expected: IntTy | None) -> Val:
        c_e, a_e, b_e = e.children
        return self.choose(e, c_e, a_e, b_e, expected)

    def choose(self, e: Tree, c_e, a_e, b_e, expected: IntTy | None) -> Val:  # type: ignore[no-untyped-def]
        cond = self.condition(c_e)
        a, b = self.unify(a_e, b_e, expected, e)
        op = self.emit(arith.SelectOp(cond, a.value, b.value), e)
        return Typed(op.results[0], a.ty)

    def typed(self, v: Val, at: Where) -> Typed:
        if isinstance(v, Const):
            raise self.error(
                at,
                f"cannot infer the width of literal {v.value} here",
                hint=f"add a type suffix, e.g. {v.value}u32",
            )
        return v

    def unify(self, a_e, b_e, expected: IntTy | None, at: Tree) -> tuple[Typed, Typed]:  # type: ignore[no-untyped-def]
        """Lower two operands that must share one type; literals adopt the other's type."""
        a = self.expr(a_e, expected)
        b = self.expr(b_e, a.ty if isinstance(a, Typed) else expected)
        if isinstance(a, Const) and isinstance(b, Const):
            if expected is None:
                raise self.error(
                    at,
                    "cannot infer the type of an operation on two untyped literals",
                    hint="add a type suffix to one of them, e.g. 5u32",
                )
            return self.materialize(a, expected, a_e), self.materialize(b, expected, b_e)
        ty = a.ty if isinstance(a, Typed) else b.ty  # type: ignore[union-attr]
        ta, tb = self.materialize(a, ty, a_e), self.materialize(b, ty, b_e)
        if ta.ty != tb.ty:
            raise self.error(
                at, f"operand types differ: {ta.ty} and {tb.ty}", hint=conv_hint(tb.ty, ta.ty)
            )
        return ta, tb

    def binary(self, e: Tree, lhs_e, rhs_e, expected: IntTy | None) -> Val:  # type: ignore[no-untyped-def]
        kind = e.data
        if kind in ("shl", "shr"):
            lhs = self.expr(lhs_e, expected)
            rhs = self.expr(rhs_e, None)
            if isinstance(lhs, Const) and isinstance(rhs, Const):
                if rhs.value < 0:
                    raise self.error(rhs_e, "negative shift amount")
                # Clamping the amount keeps `1 << 100000` cheap and still over the limit.
                amount = min(rhs.value, MAX_CONST_BITS + 1)
                shifted = lhs.value << amount if kind == "shl" else lhs.value >> rhs.value
                return self.untyped(shifted, lhs.bit_pattern, e)
            if isinstance(lhs, Const):
                lhs = self.materialize(lhs, self.typed_or(expected, lhs, lhs_e), lhs_e)
            return self.binop(kind, lhs, rhs, e, rhs_e)
        if kind in ("land", "lor"):
            a = self.materialize(self.expr(lhs_e, U1), U1, lhs_e)
            b = self.materialize(self.expr(rhs_e, U1), U1, rhs_e)
            for v, x in ((a, lhs_e), (b, rhs_e)):
                if v.ty != U1:
                    raise self.error(
                        x,
                        f"operands of {'&&' if kind == 'land' else '||'} must be u1 (bool), got {v.ty}",
                        hint="compare it, e.g. `x != 0`",
                    )
            op = arith.AndIOp if kind == "land" else arith.OrIOp
            return Typed(self.emit(op(a.value, b.value), e).results[0], U1)
        is_cmp = kind in _CMP
        a0 = self.expr(lhs_e, None if is_cmp else expected)
        b0 = self.expr(rhs_e, a0.ty if isinstance(a0, Typed) else (None if is_cmp else expected))
        if isinstance(a0, Const) and isinstance(b0, Const):
            folded = _fold(kind, a0.value, b0.value)
            if folded is None:
                raise self.error(e, "division by zero in a constant expression")
            if is_cmp:
                return self.const(int(folded), U1, e)
            return self.untyped(folded, a0.bit_pattern and b0.bit_pattern, e)
        return self.binop(kind, a0, b0, e, rhs_e)

    def typed_or(self, expected: IntTy | None, c: Const, at: Where) -> IntTy:
        if expected is None:
            raise self.error(
                at,
                f"cannot infer the width of literal {c.value} here",
                hint=f"add a type suffix, e.g. {c.value}u32",
            )
        return expected

    def binop(self, kind: str, a: Val, b: Val, at: Tree, b_at: Where) -> Val:
        """Typed binary operation on already-lowered operands (at least one typed)."""
        if kind in ("shl", "shr"):
            assert isinstance(a, Typed)
            w = a.ty.width
            wt = IntegerType(w)
            if isinstance(b, Const):
                if b.value < 0:
                    raise self.error(b_at, "negative shift amount")
                amt = self.const(min(b.value, w), IntTy(w, False), b_at).value
            else:
                if b.ty.signed:
                    raise self.error(
                        b_at,
                        f"shift amount must be unsigned, got {b.ty}",
                        hint="convert with `as u..`",
                    )
                amt = b.value
                if b.ty.width < w:
                    amt = self.emit(arith.ExtUIOp(amt, wt), b_at).results[0]
                elif b.ty.width > w:
                    # Any amount >= w gives the same result: clamp, then narrow.
                    limit = self.const(w, b.ty, b_at).value
                    big = self.emit(arith.CmpiOp(amt, limit, "uge"), b_at).results[0]
                    amt = self.emit(arith.SelectOp(big, limit, amt), b_at).results[0]
                    amt = self.emit(arith.TruncIOp(amt, wt), b_at).results[0]
            if kind == "shl":
                op: Operation = arith.ShLIOp(a.value, amt)
            else:
                op = (arith.ShRSIOp if a.ty.signed else arith.ShRUIOp)(a.value, amt)
            return Typed(self.emit(op, at).results[0], a.ty)
        ty = a.ty if isinstance(a, Typed) else b.ty  # type: ignore[union-attr]
        ta = self.materialize(a, ty, at)
        tb = self.materialize(b, ty, b_at)
        if ta.ty != tb.ty:
            raise self.error(
                at, f"operand types differ: {ta.ty} and {tb.ty}", hint=conv_hint(tb.ty, ta.ty)
            )
        if kind in _CMP:
            pred = _CMP[kind]
            if pred[0] in "lg":
                pred = ("s" if ty.signed else "u") + pred
            return Typed(self.emit(arith.CmpiOp(ta.value, tb.value, pred), at).results[0], U1)
        cls = _ARITH[kind]
        if isinstance(cls, tuple):
            cls = cls[1] if ty.signed else cls[0]
        return Typed(self.emit(cls(ta.value, tb.value), at).results[0], ty)

    def e_neg(self, e: Tree, expected: IntTy | None) -> Val:
        x = self.expr(e.children[0], expected)
        if isinstance(x, Const):
            return Const(-x.value, False)
        zero = self.const(0, x.ty, e)
        return Typed(self.emit(arith.SubiOp(zero.value, x.value), e).results[0], x.ty)

    def e_bnot(self, e: Tree, expected: IntTy | None) -> Val:
        x = self.expr(e.children[0], expected)
        if isinstance(x, Const):
            x = self.materialize(x, self.typed_or(expected, x, e), e)
        ones = self.const(-1, x.ty, e)
        return Typed(self.emit(arith.XOrIOp(x.value, ones.value), e).results[0], x.ty)

    def e_lnot(self, e: Tree, expected: IntTy | None) -> Val:
        x = self.materialize(self.expr(e.children[0], U1), U1, e)
        if x.ty != U1:
            raise self.error(
                e, f"! needs a u1 (bool) operand, got {x.ty}", hint="use ~ for bitwise not"
            )
        one = self.const(-1, U1, e)
        return Typed(self.emit(arith.XOrIOp(x.value, one.value), e).results[0], U1)


BINOPS = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "div",
    "%": "rem",
    "&": "band",
    "|": "bor",
    "^": "bxor",
    "<<": "shl",
    ">>": "shr",
    "==": "eq",
    "!=": "ne",
    "<": "lt",
    "<=": "le",
    ">": "gt",
    ">=": "ge",
    "&&": "land",
    "||": "lor",
}
_CMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
_ARITH: dict[str, type | tuple[type, type]] = {
    "add": arith.AddiOp,
    "sub": arith.SubiOp,
    "mul": arith.MuliOp,
    "div": (arith.DivUIOp, arith.DivSIOp),
    "rem": (arith.RemUIOp, arith.RemSIOp),
    "band": arith.AndIOp,
    "bor": arith.OrIOp,
    "bxor": arith.XOrIOp,
}


def _fold(kind: str, a: int, b: int) -> int | bool | None:
    """Folds two untyped constants exactly, as the language defines (docs/spec-language.md):
    they have no width yet, so w-bit semantics (aquas.intops) do not apply; the result must
    fit the type the context gives it, checked when it is materialized."""
    if kind in ("div", "rem") and b == 0:
        return None
    return {
        "add": lambda: a + b,
        "sub": lambda: a - b,
        "mul": lambda: a * b,
        "div": lambda: _tdiv(a, b),
        "rem": lambda: a - b * _tdiv(a, b),
        "band": lambda: a & b,
        "bor": lambda: a | b,
        "bxor": lambda: a ^ b,
        "eq": lambda: a == b,
        "ne": lambda: a != b,
        "lt": lambda: a < b,
        "le": lambda: a <= b,
        "gt": lambda: a > b,
        "ge": lambda: a >= b,
    }[kind]()


def _tdiv(a: int, b: int) -> int:
    """Exact integer division truncating toward zero (C, RISC-V)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q
