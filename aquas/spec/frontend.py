"""Spec frontend: ``*.isax`` text → ``aquas`` dialect (xDSL IR).

Data flow: Lark (LALR) parse tree → one checking-and-lowering walk → ``builtin.module``
holding one ``aquas.extension``.  The walk type-checks every expression against the
language's exact-width rules and builds SSA on the fly: mutable locals (``var``) become
``scf.for`` iteration arguments and ``scf.if`` results, so the IR has no local memory.
Every op carries the spec location it came from (``FileLineColLoc``), so later stages can
name the spec line in their diagnostics.  All user errors raise :class:`AquasError` with a
precise location; no partial IR escapes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import lark
from lark import Token, Tree
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from aquas.diagnostics import AquasError, SourceLoc
from aquas.dialects import aquas as aq
from aquas.spec.types import U1, U32, IntTy, parse_type_name

_GRAMMAR = Path(__file__).with_name("isax.lark")


@functools.cache
def _parser() -> lark.Lark:
    return lark.Lark(
        _GRAMMAR.read_text(),
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=True,
    )


# ---------------------------------------------------------------------------------------
# Values during lowering
# ---------------------------------------------------------------------------------------


@dataclass
class Typed:
    """An SSA value with its spec-level type (IR integers are signless)."""

    value: SSAValue
    ty: IntTy


@dataclass
class Const:
    """An untyped integer constant; it takes its type from context."""

    value: int
    bit_pattern: bool  # written in hex/binary: may fill the sign bit of a signed type


Val = Typed | Const
Where = Tree | Token | SourceLoc | None
"""Anything a diagnostic can point at (None: start of file)."""


@dataclass
class Binding:
    kind: str  # "let" | "var" | "loopvar"
    ty: IntTy
    value: SSAValue
    loc: SourceLoc


@dataclass
class _Isax:
    name: str
    params: tuple[str, ...]
    rs: dict[str, SSAValue]


class SpecFrontend:
    """Lowers one spec file. Use :func:`lower_spec` rather than this class directly."""

    def __init__(self, source: str, filename: str):
        self.source = source
        self.filename = filename
        self.states: dict[str, tuple[IntTy, SourceLoc]] = {}
        self.scratchpads: dict[str, tuple[IntTy, int, SourceLoc]] = {}
        self.globals: dict[str, SourceLoc] = {}
        self.encodings: dict[tuple[int, int, int], tuple[str, SourceLoc]] = {}
        self.scopes: list[dict[str, Binding]] = []
        self.block: Block = Block()
        self.isax: _Isax | None = None

    # -- diagnostics -------------------------------------------------------------------

    def loc(self, node: Where) -> SourceLoc:
        if node is None:
            return SourceLoc(self.filename, 1, 1)
        if isinstance(node, SourceLoc):
            return node
        if isinstance(node, Token):
            return SourceLoc(self.filename, node.line or 1, node.column or 1)
        meta = node.meta
        if getattr(meta, "empty", True):
            return SourceLoc(self.filename, 1, 1)
        return SourceLoc(self.filename, meta.line, meta.column)

    def error(self, node: Where, msg: str, hint: str | None = None) -> AquasError:
        loc = self.loc(node)
        return AquasError(msg, loc, hint=hint, source=self.source)

    # -- emission ----------------------------------------------------------------------

    def emit(self, op: Operation, at: Where) -> Operation:
        loc = self.loc(at)
        op.location = FileLineColLoc(
            StringAttr(loc.filename), IntAttr(loc.line), IntAttr(loc.column)
        )
        self.block.add_op(op)
        return op

    def const(self, value: int, ty: IntTy, at: Where) -> Typed:
        op = self.emit(arith.ConstantOp(IntegerAttr(value, IntegerType(ty.width))), at)
        return Typed(op.results[0], ty)

    # -- top level ---------------------------------------------------------------------

    def run(self, tree: Tree) -> ModuleOp:
        children = list(tree.children)
        name = Path(self.filename).stem.replace("-", "_").replace(".", "_") or "extension"
        if children and isinstance(children[0], Tree) and children[0].data == "header":
            name = str(children[0].children[0])
            children = children[1:]
        ext_ops: list[Operation] = []
        for item in children:
            assert isinstance(item, Tree)
            if item.data == "state_decl":
                ext_ops.append(self.state_decl(item))
            elif item.data == "spm_decl":
                ext_ops.append(self.spm_decl(item))
            elif item.data == "isax_def":
                ext_ops.append(self.isax_def(item))
        if not any(isinstance(o, aq.IsaxOp) for o in ext_ops):
            raise AquasError(
                "the spec defines no ISAX",
                SourceLoc(self.filename, 1, 1),
                hint="add an `isax name(rs1, rs2) -> rd { ... }` definition",
                source=self.source,
            )
        ext = aq.ExtensionOp(name, ext_ops)
        module = ModuleOp([ext])
        try:
            module.verify()
        except VerifyException as e:  # the checks above should have caught it first
            raise AquasError(
                f"generated IR failed verification: {e}", filename=self.filename
            ) from e
        return module

    def declare_global(self, tok: Token) -> str:
        name = str(tok)
        if name in ("rs1", "rs2", "rd", "mem"):
            raise self.error(tok, f"'{name}' is reserved and cannot be declared")
        if name in self.globals:
            prev = self.globals[name]
            raise self.error(tok, f"'{name}' is already defined at line {prev.line}")
        self.globals[name] = self.loc(tok)
        return name

    def type_of(self, tok: Token | Tree | None) -> IntTy:
        assert isinstance(tok, Token)
        ty = parse_type_name(str(tok))
        if ty is None:
            raise self.error(
                tok, f"unknown type '{tok}'", hint="types are u1..u64, i1..i64 (and bool = u1)"
            )
        return ty

    def state_decl(self, t: Tree) -> Operation:
        name_tok, ty_tok, init = t.children
        assert isinstance(name_tok, Token) and isinstance(ty_tok, Token)
        name = self.declare_global(name_tok)
        ty = self.type_of(ty_tok)
        value = 0
        if init is not None:
            v = self.const_expr(init)
            value = self.check_const_fits(v, ty, init)
        self.states[name] = (ty, self.loc(name_tok))
        op = aq.StateOp(name, ty.width, _signless(value, ty.width))
        op.location = _loc_attr(self.loc(t))
        return op

    def spm_decl(self, t: Tree) -> Operation:
        name_tok, ty_tok, size_tok, part = t.children
        assert isinstance(name_tok, Token) and isinstance(ty_tok, Token)
        assert isinstance(size_tok, Token)
        name = self.declare_global(name_tok)
        ty = self.type_of(ty_tok)
        size = self.int_token(size_tok)
        if size <= 0 or size > 1 << 20:
            raise self.error(size_tok, f"scratchpad size must be in 1..{1 << 20}, got {size}")
        kind, factor = "none", 1
        if part is not None:
            kind_tok, factor_tok = part.children
            kind = str(kind_tok)
            if kind not in ("cyclic", "block"):
                raise self.error(
                    kind_tok, f"unknown partition kind '{kind}'", hint="use cyclic or block"
                )
            factor = self.int_token(factor_tok)
            if not 1 <= factor <= size:
                raise self.error(factor_tok, f"partition factor must be in 1..{size}, got {factor}")
            if factor == 1:
                kind = "none"
        self.scratchpads[name] = (ty, size, self.loc(name_tok))
        op = aq.ScratchpadOp(name, ty.width, size, kind, factor)
        op.location = _loc_attr(self.loc(t))
        return op

    def int_token(self, tok: Token | Tree) -> int:
        if not isinstance(tok, Token) or tok.type != "INT":
            raise self.error(tok, "expected an integer literal")
        value, suffix, _ = _parse_int(str(tok))
        if suffix is not None:
            raise self.error(tok, "a type suffix is not allowed here")
        return value

    # -- ISAX definitions --------------------------------------------------------------

    def isax_def(self, t: Tree) -> Operation:
        *attrs, name_tok, params, result, body = t.children
        assert isinstance(name_tok, Token) and isinstance(body, Tree)
        name = self.declare_global(name_tok)
        enc = self.encoding(attrs, name_tok)
        key = enc
        if key in self.encodings:
            other, oloc = self.encodings[key]
            raise self.error(
                name_tok,
                f"ISAX '{name}' has the same encoding (opcode={enc[0]:#09b}, funct3={enc[1]}, "
                f"funct7={enc[2]:#09b}) as '{other}' at line {oloc.line}",
                hint="give each ISAX of an extension a distinct funct7/funct3",
            )
        self.encodings[key] = (name, self.loc(name_tok))

        uses: list[str] = []
        if params is not None:
            for p in params.children:
                assert isinstance(p, Token)
                if str(p) not in ("rs1", "rs2"):
                    raise self.error(p, f"parameter '{p}' must be rs1 or rs2")
                if str(p) in uses:
                    raise self.error(p, f"parameter '{p}' listed twice")
                uses.append(str(p))
        if result is not None:
            rtok = result.children[0]
            if str(rtok) != "rd":
                raise self.error(rtok, f"the result must be named rd, not '{rtok}'")
            uses.append("rd")

        self.block = Block()
        self.scopes = [{}]
        rs: dict[str, SSAValue] = {}
        for p in ("rs1", "rs2"):
            if p in uses:
                op = aq.ReadRs1Op() if p == "rs1" else aq.ReadRs2Op()
                rs[p] = self.emit(op, name_tok).results[0]
        self.isax = _Isax(name, tuple(uses), rs)

        stmts = list(body.children)
        for i, s in enumerate(stmts):
            assert isinstance(s, Tree)
            if s.data == "return_stmt":
                if i != len(stmts) - 1:
                    raise self.error(s, "return must be the last statement of the ISAX body")
                if "rd" not in uses:
                    raise self.error(
                        s,
                        f"ISAX '{name}' returns a value but declares no result",
                        hint=f"declare it: isax {name}(...) -> rd",
                    )
                v = self.expr(s.children[0], U32)
                tv = self.materialize(v, U32, s.children[0])
                if tv.ty.width != 32:
                    raise self.error(
                        s.children[0],
                        f"the result written to rd must be 32 bits wide, got {tv.ty}",
                        hint="extend it with zext<u32>(...) or sext<i32>(...)",
                    )
                self.emit(aq.WriteRdOp(tv.value), s)
            else:
                self.stmt(s)
        if "rd" in uses and not (
            stmts and isinstance(stmts[-1], Tree) and stmts[-1].data == "return_stmt"
        ):
            raise self.error(
                name_tok,
                f"ISAX '{name}' declares -> rd but never returns a value",
                hint="end the body with `return <expr>;`",
            )
        op = aq.IsaxOp(name, enc[0], enc[1], enc[2], uses)
        # Move the lowered ops into the ISAX's region.
        op.body.detach_block(0)
        op.body.add_block(self.block)
        op.location = _loc_attr(self.loc(name_tok))
        self.isax = None
        self.block = Block()
        return op

    def encoding(self, attrs: list[Tree | Token | None], name_tok: Token) -> tuple[int, int, int]:
        opcode: int | None = None
        funct3 = 0
        funct7: int | None = None
        for a in attrs:
            assert isinstance(a, Tree)
            for item in a.children:
                assert isinstance(item, Tree)
                key_tok, arg = item.children
                key = str(key_tok)
                if arg is None:
                    raise self.error(key_tok, f"attribute '{key}' needs a value, e.g. {key}(1)")
                if key == "opcode":
                    if isinstance(arg, Token) and arg.type == "NAME":
                        if str(arg) not in aq.CUSTOM_OPCODES:
                            raise self.error(
                                arg, f"unknown opcode '{arg}'", hint="use custom0..custom3"
                            )
                        opcode = aq.CUSTOM_OPCODES[str(arg)]
                    else:
                        opcode = self.int_token(arg)
                        if opcode not in aq.CUSTOM_OPCODES.values():
                            raise self.error(
                                arg,
                                f"opcode {opcode:#09b} is not a custom opcode",
                                hint="use custom0..custom3 (0b0001011, 0b0101011, 0b1011011, 0b1111011)",
                            )
                elif key == "funct3":
                    funct3 = self.int_token(arg)
                    if not 0 <= funct3 < 8:
                        raise self.error(arg, f"funct3 must be in 0..7, got {funct3}")
                elif key == "funct7":
                    funct7 = self.int_token(arg)
                    if not 0 <= funct7 < 128:
                        raise self.error(arg, f"funct7 must be in 0..127, got {funct7}")
                else:
                    raise self.error(
                        key_tok,
                        f"unknown ISAX attribute '{key}'",
                        hint="use opcode, funct3, funct7",
                    )
        if opcode is None or funct7 is None:
            missing = "opcode" if opcode is None else "funct7"
            raise self.error(
                name_tok,
                f"ISAX '{name_tok}' has no {missing}",
                hint="write #[opcode(custom0), funct7(1)] before `isax`",
            )
        return opcode, funct3, funct7

    # -- scopes ------------------------------------------------------------------------

    def lookup(self, name: str) -> Binding | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def bind(self, tok: Token, kind: str, ty: IntTy, value: SSAValue) -> None:
        name = str(tok)
        prev = self.lookup(name)
        if prev is not None:
            raise self.error(
                tok,
                f"'{name}' is already defined at line {prev.loc.line}",
                hint="pick a new name; shadowing is not allowed",
            )
        if name in self.globals or name in ("rs1", "rs2", "rd", "mem"):
            raise self.error(tok, f"'{name}' shadows a declaration of the extension or a register")
        if value.name_hint is None and not isinstance(value.owner, arith.ConstantOp):
            # Spec names flow into the IR and from there into RTL register names.
            value.name_hint = name
        self.scopes[-1][name] = Binding(kind, ty, value, self.loc(tok))

    def mutable_bindings(self) -> Iterator[tuple[str, Binding]]:
        seen: set[str] = set()
        for scope in reversed(self.scopes):
            for name, b in scope.items():
                if b.kind == "var" and name not in seen:
                    seen.add(name)
                    yield name, b

    # -- statements --------------------------------------------------------------------

    def stmt(self, s: Tree) -> None:
        getattr(self, "s_" + s.data)(s)

    def body(self, blk: Tree) -> None:
        self.scopes.append({})
        for s in blk.children:
            assert isinstance(s, Tree)
            if s.data == "return_stmt":
                raise self.error(
                    s,
                    "return must be the last statement of the ISAX body",
                    hint="assign the result to a `var` and return it at the end",
                )
            self.stmt(s)
        self.scopes.pop()

    def s_let_stmt(self, s: Tree) -> None:
        self._decl(s, "let")

    def s_var_stmt(self, s: Tree) -> None:
        self._decl(s, "var")

    def _decl(self, s: Tree, kind: str) -> None:
        name_tok, ty_tok, e = s.children
        assert isinstance(name_tok, Token)
        ty = self.type_of(ty_tok) if ty_tok is not None else None
        v = self.expr(e, ty)
        if ty is None:
            if isinstance(v, Const):
                raise self.error(
                    e,
                    f"cannot infer the type of '{name_tok}' from an untyped literal",
                    hint=f"annotate it: {kind} {name_tok}: u32 = ...; or use a suffix like 5u32",
                )
            ty = v.ty
        tv = self.coerce(v, ty, e)
        self.bind(name_tok, kind, ty, tv.value)

    def s_assign_stmt(self, s: Tree) -> None:
        lv, e = s.children
        assert isinstance(lv, Tree)
        self.assign(lv, lambda ty: self.expr(e, ty), e, s)

    def s_compound_stmt(self, s: Tree) -> None:
        lv, op_tree, e = s.children
        assert isinstance(lv, Tree) and isinstance(op_tree, Tree)
        op = str(op_tree.children[0])[:-1]

        def value(ty: IntTy | None) -> Val:
            cur = self.lvalue_read(lv)
            rhs = self.expr(e, cur.ty)
            return self.binop(_BINOPS[op], cur, rhs, s, e)

        self.assign(lv, value, e, s)

    def lvalue_read(self, lv: Tree) -> Typed:
        if lv.data == "lv_name":
            return self.name_value(lv.children[0])
        name_tok, idx = lv.children
        return self.spm_read(name_tok, idx, lv)

    def assign(self, lv: Tree, compute, e: Tree, s: Tree) -> None:  # type: ignore[no-untyped-def]
        name_tok = lv.children[0]
        assert isinstance(name_tok, Token)
        name = str(name_tok)
        if lv.data == "lv_index":
            if name not in self.scratchpads:
                raise self.error(
                    name_tok,
                    f"'{name}' is not a scratchpad; only scratchpads can be indexed on the left of =",
                )
            ety, _, _ = self.scratchpads[name]
            idx = self.index_value(lv.children[1], name)
            tv = self.coerce(compute(ety), ety, e)
            self.emit(aq.SpmWriteOp(tv.value, name, idx), s)
            return
        b = self.lookup(name)
        if b is not None:
            if b.kind != "var":
                what = "a loop variable" if b.kind == "loopvar" else "an immutable let binding"
                raise self.error(
                    name_tok,
                    f"cannot assign to '{name}': it is {what}",
                    hint=f"declare it with `var {name}: {b.ty} = ...`" if b.kind == "let" else None,
                )
            tv = self.coerce(compute(b.ty), b.ty, e)
            b.value = tv.value
            return
        if name in self.states:
            sty, _ = self.states[name]
            tv = self.coerce(compute(sty), sty, e)
            self.emit(aq.StateWriteOp(tv.value, name), s)
            return
        if name in ("rs1", "rs2"):
            raise self.error(name_tok, f"cannot assign to source register {name}")
        if name == "rd":
            raise self.error(name_tok, "rd is written with `return <expr>;`")
        if name in self.scratchpads:
            raise self.error(
                name_tok,
                f"cannot assign a whole scratchpad '{name}'",
                hint=f"write {name}[i] = ...",
            )
        raise self.error(
            name_tok, f"undefined name '{name}'", hint=f"declare it with `var {name}: u32 = ...`"
        )

    def s_store_stmt(self, s: Tree) -> None:
        ty_tok, addr_e, val_e = s.children
        ty = self.access_type(ty_tok)
        addr = self.address(addr_e)
        tv = self.coerce(self.expr(val_e, ty), ty, val_e)
        self.emit(aq.StoreOp(tv.value, addr), s)

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

    def _burst(
        self, s: Tree, name_tok: Token, off_e: Tree, n_tok: Token, addr_e: Tree, write: bool
    ) -> None:
        name = str(name_tok)
        if name not in self.scratchpads:
            raise self.error(
                name_tok,
                f"'{name}' is not a scratchpad",
                hint="bursts move data between memory and a scratchpad",
            )
        ety, size, _ = self.scratchpads[name]
        if ety.width not in aq.MEMORY_ACCESS_WIDTHS:
            raise self.error(
                name_tok,
                f"bursts need scratchpad elements of 8, 16, 32 or 64 bits; '{name}' holds {ety}",
            )
        n = self.int_token(n_tok)
        if n <= 0:
            raise self.error(n_tok, f"burst length must be positive, got {n}")
        off_v = self.expr(off_e, U32)
        if isinstance(off_v, Const):
            if off_v.value < 0 or off_v.value + n > size:
                raise self.error(
                    n_tok if off_v.value >= 0 else off_e,
                    f"burst of {n} elements at offset {off_v.value} does not fit scratchpad "
                    f"'{name}' of {size} elements",
                    hint=f"enlarge the scratchpad to at least {max(off_v.value, 0) + n} elements",
                )
        elif n > size:
            raise self.error(
                n_tok, f"burst of {n} elements is longer than scratchpad '{name}' ({size} elements)"
            )
        off = self.index_value(off_e, name, off_v)
        addr = self.address(addr_e)
        op = aq.BurstWriteOp(name, off, addr, n) if write else aq.BurstReadOp(name, off, addr, n)
        self.emit(op, s)

    def s_burst_read_stmt(self, s: Tree) -> None:
        name_tok, off_e, n_tok, addr_e = s.children
        self._burst(s, name_tok, off_e, n_tok, addr_e, write=False)  # type: ignore[arg-type]

    def s_burst_write_stmt(self, s: Tree) -> None:
        addr_e, name_tok, off_e, n_tok = s.children
        self._burst(s, name_tok, off_e, n_tok, addr_e, write=True)  # type: ignore[arg-type]

    def condition(self, e: Tree | Token | None) -> SSAValue:
        v = self.expr(e, U1)
        tv = self.materialize(v, U1, e)
        if tv.ty.width != 1:
            raise self.error(
                e, f"a condition must be u1 (bool), got {tv.ty}", hint="compare it, e.g. `x != 0`"
            )
        return tv.value

    def s_if_stmt(self, s: Tree) -> None:
        cond_e, then_b, else_b = s.children
        cond = self.condition(cond_e)
        outer = list(self.mutable_bindings())
        before = {n: b.value for n, b in outer}
        branches: list[tuple[Block, dict[str, SSAValue]]] = []
        saved_block = self.block
        for blk in (then_b, else_b):
            self.block = Block()
            if blk is not None:
                assert isinstance(blk, Tree)
                if blk.data == "if_stmt":
                    self.scopes.append({})
                    self.s_if_stmt(blk)
                    self.scopes.pop()
                else:
                    self.body(blk)
            branches.append((self.block, {n: b.value for n, b in outer}))
            for n, b in outer:
                b.value = before[n]
        self.block = saved_block
        changed = [n for n, _ in outer if any(vals[n] is not before[n] for _, vals in branches)]
        for blk, vals in branches:
            blk.add_op(scf.YieldOp(*[vals[n] for n in changed]))
        types = [before[n].type for n in changed]
        has_else = else_b is not None or bool(changed)
        if_op = scf.IfOp(
            cond, types, Region(branches[0][0]), Region(branches[1][0]) if has_else else None
        )
        self.emit(if_op, s)
        bindings = dict(outer)
        for n, r in zip(changed, if_op.results, strict=True):
            bindings[n].value = r

    def s_for_stmt(self, s: Tree) -> None:
        *attrs, var_tok, ty_tok, lo_e, hi_e, step_e, blk = s.children
        assert isinstance(var_tok, Token) and isinstance(blk, Tree)
        ty = self.type_of(ty_tok) if ty_tok is not None else U32
        lo = self.const_expr(lo_e, "loop bounds must be constants")
        hi = self.const_expr(hi_e, "loop bounds must be constants")
        step = (
            self.const_expr(step_e, "the loop step must be a constant") if step_e is not None else 1
        )
        if step <= 0:
            raise self.error(step_e or s, f"the loop step must be positive, got {step}")
        for v, e in ((lo, lo_e), (hi, hi_e)):
            if not -(1 << 31) <= v < (1 << 31):
                raise self.error(e, f"loop bound {v} does not fit 32 bits")
        if hi > lo and not (ty.min <= lo and hi - 1 <= ty.max):
            raise self.error(
                var_tok,
                f"loop variable '{var_tok}' of type {ty} cannot hold {lo}..{hi}",
                hint="widen its type, e.g. `for i: u32 in ...`",
            )
        trip = max(0, (hi - lo + step - 1) // step)
        unroll: int | None = None
        for a in attrs:
            assert isinstance(a, Tree)
            for item in a.children:
                assert isinstance(item, Tree)
                key_tok, arg = item.children
                if str(key_tok) != "unroll":
                    raise self.error(
                        key_tok,
                        f"unknown loop directive '{key_tok}'",
                        hint="loops accept #[unroll] or #[unroll(N)]",
                    )
                unroll = trip if arg is None else self.int_token(arg)
                if arg is not None and not 1 <= unroll <= max(trip, 1):
                    raise self.error(
                        arg,
                        f"unroll factor must be in 1..{max(trip, 1)} (the trip count), got {unroll}",
                    )

        carried_names = [
            n for n in _assigned_names(blk) if (b := self.lookup(n)) is not None and b.kind == "var"
        ]
        # Keep a deterministic order (order of first assignment in the body).
        carried = [(n, self.lookup(n)) for n in dict.fromkeys(carried_names)]
        lb = self.const(lo, IntTy(32, True), lo_e)
        ub = self.const(hi, IntTy(32, True), hi_e)
        st = self.const(step, IntTy(32, True), step_e or s)
        body = Block(arg_types=[i32, *[b.value.type for _, b in carried]])  # type: ignore[union-attr]
        saved_block, saved_vals = self.block, [b.value for _, b in carried]  # type: ignore[union-attr]
        self.block = body
        iv: SSAValue = body.args[0]
        if ty.width < 32:
            iv = self.emit(arith.TruncIOp(iv, IntegerType(ty.width)), var_tok).results[0]
        elif ty.width > 32:
            ext = arith.ExtSIOp if ty.signed else arith.ExtUIOp
            iv = self.emit(ext(iv, IntegerType(ty.width)), var_tok).results[0]
        for (_, b), arg in zip(carried, body.args[1:], strict=True):
            b.value = arg  # type: ignore[union-attr]
        self.scopes.append({})
        self.bind(var_tok, "loopvar", ty, iv)
        self.body(blk)
        self.scopes.pop()
        body.add_op(scf.YieldOp(*[b.value for _, b in carried]))  # type: ignore[union-attr]
        self.block = saved_block
        for_op = scf.ForOp(lb.value, ub.value, st.value, saved_vals, body)
        if unroll is not None:
            for_op.attributes[aq.UNROLL_ATTR] = IntegerAttr(unroll, i64)
        self.emit(for_op, s)
        for (_, b), r in zip(carried, for_op.results, strict=True):
            b.value = r  # type: ignore[union-attr]

    # -- expressions -------------------------------------------------------------------

    def const_expr(self, e: Tree | Token | None, msg: str = "expected a constant") -> int:
        saved = self.block
        self.block = Block()
        try:
            v = self.expr(e, None)
        finally:
            scratch, self.block = self.block, saved
        if not isinstance(v, Const) or scratch.first_op is not None:
            raise self.error(e, msg, hint="write an integer literal without a type suffix")
        return v.value

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
        return self.const(_signless(value, ty.width), ty, at)

    def coerce(self, v: Val, ty: IntTy, at: Where) -> Typed:
        """Materialize ``v`` as ``ty``; a typed value must already have exactly that type."""
        tv = self.materialize(v, ty, at)
        if tv.ty != ty:
            raise self.error(
                at, f"type mismatch: expected {ty}, got {tv.ty}", hint=_conv_hint(tv.ty, ty)
            )
        return tv

    def expr(self, e: Tree | Token | None, expected: IntTy | None) -> Val:
        assert e is not None
        if isinstance(e, Token):  # only INT/NAME reach here through inlined rules
            raise self.error(e, f"unexpected token '{e}'")
        fn = getattr(self, "e_" + e.data, None)
        if fn is not None:
            return fn(e, expected)
        if e.data in _BINOPS.values():
            lhs_e, rhs_e = e.children
            return self.binary(e, lhs_e, rhs_e, expected)
        raise self.error(e, f"unsupported expression '{e.data}'")

    def e_literal(self, e: Tree, expected: IntTy | None) -> Val:
        tok = e.children[0]
        assert isinstance(tok, Token)
        try:
            value, suffix, pattern = _parse_int(str(tok))
        except ValueError as exc:
            raise self.error(tok, f"malformed integer literal '{tok}'") from exc
        if suffix is None:
            return Const(value, pattern)
        ty = parse_type_name(suffix)
        if ty is None:
            raise self.error(
                tok, f"unknown type suffix '{suffix}'", hint="suffixes are u1..u64, i1..i64"
            )
        self.check_const_fits(Const(value, pattern), ty, tok)
        return self.const(_signless(value, ty.width), ty, tok)

    def name_value(self, tok: Token | Tree | None) -> Typed:
        assert isinstance(tok, Token)
        name = str(tok)
        b = self.lookup(name)
        if b is not None:
            return Typed(b.value, b.ty)
        if self.isax is None:  # outside every ISAX: a state's initial value
            raise self.error(
                tok,
                f"'{name}' cannot be used here: a state's initial value must be a constant",
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
        if name == "rd":
            raise self.error(tok, "rd is write-only")
        raise self.error(tok, f"undefined name '{name}'")

    def e_name(self, e: Tree, expected: IntTy | None) -> Val:
        return self.name_value(e.children[0])

    def index_value(self, e: Tree | Token | None, spm: str, v: Val | None = None) -> SSAValue:
        _, size, _ = self.scratchpads[spm]
        v = self.expr(e, U32) if v is None else v
        if isinstance(v, Const):
            if not 0 <= v.value < size:
                raise self.error(
                    e, f"index {v.value} out of bounds for scratchpad '{spm}' of {size} elements"
                )
            return self.const(v.value, U32, e).value
        if v.ty.signed:
            raise self.error(
                e, f"scratchpad index must be unsigned, got {v.ty}", hint="convert with `as u..`"
            )
        if v.ty.width < 32:
            return self.emit(arith.ExtUIOp(v.value, i32), e).results[0]
        if v.ty.width > 32:
            raise self.error(
                e,
                f"scratchpad index must be at most 32 bits, got {v.ty}",
                hint="trunc<u32>(...) it",
            )
        return v.value

    def spm_read(
        self, name_tok: Token | Tree | None, idx_e: Tree | Token | None, at: Tree
    ) -> Typed:
        assert isinstance(name_tok, Token)
        name = str(name_tok)
        ty, _, _ = self.scratchpads[name]
        idx = self.index_value(idx_e, name)
        op = self.emit(aq.SpmReadOp(name, idx, ty.width), at)
        return Typed(op.results[0], ty)

    def e_index(self, e: Tree, expected: IntTy | None) -> Val:
        base_e, idx_e = e.children
        assert isinstance(base_e, Tree)
        if (
            base_e.data == "name"
            and str(base_e.children[0]) in self.scratchpads
            and self.lookup(str(base_e.children[0])) is None
        ):
            return self.spm_read(base_e.children[0], idx_e, e)
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
                hint=_conv_hint(x.ty, ty),
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
                at, f"operand types differ: {ta.ty} and {tb.ty}", hint=_conv_hint(tb.ty, ta.ty)
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
                return Const(
                    lhs.value << rhs.value if kind == "shl" else lhs.value >> rhs.value,
                    lhs.bit_pattern,
                )
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
            return Const(folded, a0.bit_pattern and b0.bit_pattern)
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
                at, f"operand types differ: {ta.ty} and {tb.ty}", hint=_conv_hint(tb.ty, ta.ty)
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


_BINOPS = {
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


def _parse_int(text: str) -> tuple[int, str | None, bool]:
    """(value, type suffix or None, written as a bit pattern) of an INT token."""
    t = text.replace("_", "")
    suffix = None
    low = t.lower()
    if low.startswith(("0x", "0b")):
        digits = t[2:]
        for i, ch in enumerate(digits):
            if ch in "ui":
                digits, suffix = digits[:i], digits[i:]
                break
        return int(digits, 16 if low.startswith("0x") else 2), suffix, True
    for i, ch in enumerate(t):
        if ch in "ui":
            return int(t[:i]), t[i:], False
    return int(t), None, False


def _signless(value: int, width: int) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def _loc_attr(loc: SourceLoc) -> FileLineColLoc:
    return FileLineColLoc(StringAttr(loc.filename), IntAttr(loc.line), IntAttr(loc.column))


def _conv_hint(have: IntTy, want: IntTy) -> str:
    if have.width == want.width:
        return f"reinterpret the sign with `as {want}`"
    if have.width < want.width:
        return f"extend explicitly: zext<{want}>(...) or sext<{want}>(...)"
    return f"narrow explicitly: trunc<{want}>(...)"


def _assigned_names(t: Tree) -> Iterator[str]:
    for sub in t.iter_subtrees_topdown():
        if sub.data in ("assign_stmt", "compound_stmt"):
            lv = sub.children[0]
            if isinstance(lv, Tree) and lv.data == "lv_name":
                yield str(lv.children[0])


def _syntax_error(e: lark.exceptions.LarkError, source: str, filename: str) -> AquasError:
    line = getattr(e, "line", 1) or 1
    col = getattr(e, "column", 1) or 1
    if isinstance(e, lark.exceptions.UnexpectedEOF):
        lines = source.splitlines() or [""]
        line, col = len(lines), len(lines[-1]) + 1
        msg = "unexpected end of file"
    elif isinstance(e, lark.exceptions.UnexpectedCharacters):
        pos = e.pos_in_stream or 0
        ch = source[pos] if 0 <= pos < len(source) else "?"
        msg = f"unexpected character {ch!r}"
    elif isinstance(e, lark.exceptions.UnexpectedToken):
        tok = e.token
        shown = "end of file" if tok.type == "$END" else repr(str(tok))
        msg = f"syntax error: unexpected {shown}"
        if tok.type == "$END":
            lines = source.splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
    else:
        msg = f"syntax error: {e}"
    expected = sorted(getattr(e, "expected", None) or getattr(e, "allowed", None) or [])
    hint = None
    if expected:
        names = sorted({_describe_terminal(x) for x in expected if not x.startswith("__")})
        if names:
            hint = "expected " + ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")
    return AquasError(msg, SourceLoc(filename, line, col), hint=hint, source=source)


def _describe_terminal(name: str) -> str:
    if name == "NAME":
        return "a name"
    if name == "INT":
        return "an integer"
    if name == "$END":
        return "end of file"
    try:
        pattern = _parser().get_terminal(name).pattern
    except KeyError:
        return name.lower()
    if isinstance(pattern, lark.lexer.PatternStr):
        return repr(pattern.value)
    return name.lower()


def parse_spec(source: str, filename: str = "<input>") -> Tree:
    """Parse spec text into a Lark tree; syntax errors raise :class:`AquasError`."""
    try:
        return _parser().parse(source)
    except lark.exceptions.LarkError as e:
        raise _syntax_error(e, source, filename) from None


def lower_spec(source: str, filename: str = "<input>") -> ModuleOp:
    """Parse, check and lower spec text to a verified module holding one aquas.extension."""
    tree = parse_spec(source, filename)
    try:
        return SpecFrontend(source, filename).run(tree)
    except RecursionError:
        raise AquasError(
            "the spec nests expressions or blocks too deeply",
            SourceLoc(filename, 1, 1),
            hint="split deep expressions into `let` bindings",
            source=source,
        ) from None


def lower_spec_file(path: str | Path) -> ModuleOp:
    p = Path(path)
    try:
        source = p.read_text()
    except OSError as e:
        raise AquasError(f"cannot read spec: {e.strerror}", filename=str(p)) from None
    except UnicodeDecodeError:
        raise AquasError("spec is not valid UTF-8 text", filename=str(p)) from None
    return lower_spec(source, str(p))
