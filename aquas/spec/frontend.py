"""Spec frontend: ``*.isax`` text → ``aquas`` dialect (xDSL IR).

Data flow: Lark (LALR) parse tree → one checking-and-lowering walk → ``builtin.module``
holding one ``aquas.extension``.  The walk type-checks every expression against the
language's exact-width rules and builds SSA on the fly: mutable locals (``var``) become
``scf.for`` iteration arguments and ``scf.if`` results, so the IR has no local memory.
Every op carries the spec location it came from (``FileLineColLoc``), so later stages can
name the spec line in their diagnostics.  All user errors raise :class:`AquasError` with a
precise location; no partial IR escapes.

The pieces: :mod:`aquas.spec.parse` (grammar, literals, syntax errors),
:mod:`aquas.spec.lowering` (typed values, scopes, diagnostics, emission),
:mod:`aquas.spec.expressions` (expression type rules and lowering) and this module
(declarations, ISAX definitions, statements, entry points).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

from lark import Token, Tree
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from aquas.diagnostics import AquasError, SourceLoc, read_source
from aquas.dialects import aquas as aq
from aquas.spec.expressions import BINOPS, ExprLowering
from aquas.spec.limits import (
    MAX_BURST_BEATS,
    MAX_NAME_LENGTH,
    SpecBudgets,
    heaviest_unrolled_loop,
    loop_iterations,
    unrolled_counts,
)
from aquas.spec.lowering import (
    Binding,
    Const,
    IsaxScope,
    Rom,
    Typed,
    Val,
    Where,
    loc_attr,
    signless,
)
from aquas.spec.parse import _parser, parse_spec
from aquas.spec.types import U32, IntTy

# The lowering's pieces stay importable from here, where they used to live.
__all__ = [
    "Binding",
    "Const",
    "SpecFrontend",
    "Typed",
    "Val",
    "Where",
    "_parser",
    "lower_spec",
    "lower_spec_file",
    "parse_spec",
]


def _at_loop(loop: Operation | None, at: Token) -> Where:
    """Where a budget diagnostic points: the loop's own location, else ``at``."""
    if loop is not None and isinstance(loop.location, FileLineColLoc):
        fl = loop.location
        return SourceLoc(fl.filename.data, fl.line.data, fl.column.data)
    return at


class SpecFrontend(ExprLowering):
    """Lowers one spec file. Use :func:`lower_spec` rather than this class directly."""

    def run(self, tree: Tree) -> ModuleOp:
        children = list(tree.children)
        name = Path(self.filename).stem.replace("-", "_").replace(".", "_") or "extension"
        name_at: Where = None
        if children and isinstance(children[0], Tree) and children[0].data == "header":
            name_at = children[0].children[0]
            name = str(name_at)
            children = children[1:]
        self.check_name_length(name, "extension", name_at)
        ext_ops: list[Operation] = []
        for item in children:
            assert isinstance(item, Tree)
            if item.data == "state_decl":
                ext_ops.append(self.state_decl(item))
            elif item.data == "spm_decl":
                ext_ops.append(self.spm_decl(item))
            elif item.data == "rom_decl":
                self.rom_decl(item)
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

    def check_name_length(self, name: str, what: str, at: Where) -> None:
        if len(name) > MAX_NAME_LENGTH:
            hint = "it names generated files, Verilog modules and C functions"
            if what == "extension" and at is None:
                hint = "the name comes from the file name; declare a shorter one: extension NAME;"
            raise self.error(
                at,
                f"{what} name of {len(name)} characters is longer than {MAX_NAME_LENGTH}",
                hint=hint,
            )

    def declare_global(self, tok: Token) -> str:
        name = str(tok)
        if name in ("rs1", "rs2", "rd", "mem"):
            raise self.error(tok, f"'{name}' is reserved and cannot be declared")
        if name in self.globals:
            prev = self.globals[name]
            raise self.error(tok, f"'{name}' is already defined at line {prev.line}")
        self.globals[name] = self.loc(tok)
        return name

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
        op = aq.StateOp(name, ty.width, signless(value, ty.width))
        op.location = loc_attr(self.loc(t))
        return op

    def shape(self, what: str, size_tok: Token, dims: Tree) -> tuple[int, ...]:
        """``[T; D0][D1]...`` → (D0, D1, ...), each positive."""
        shape = []
        for tok in (size_tok, *dims.children):
            assert isinstance(tok, Token)
            d = self.int_token(tok)
            if d <= 0:
                raise self.error(tok, f"{what} size must be positive, got {d}")
            shape.append(d)
        return tuple(shape)

    def spm_decl(self, t: Tree) -> Operation:
        name_tok, ty_tok, size_tok, dims, *directives = t.children
        assert isinstance(name_tok, Token) and isinstance(ty_tok, Token)
        assert isinstance(size_tok, Token) and isinstance(dims, Tree)
        name = self.declare_global(name_tok)
        ty = self.type_of(ty_tok)
        shape = self.shape("scratchpad", size_tok, dims)
        size = math.prod(shape)
        part: Tree | None = None
        impl_dir: Tree | None = None
        for d in directives:
            assert isinstance(d, Tree)
            first = d.children[0]
            assert isinstance(first, Token)
            if d.data == "partition":
                if part is not None:
                    raise self.error(
                        first,
                        f"scratchpad '{name}' has two partition directives",
                        hint="keep one partition(...)",
                    )
                part = d
            else:
                if impl_dir is not None:
                    raise self.error(
                        first,
                        f"scratchpad '{name}' has two impl directives",
                        hint="keep one impl(...)",
                    )
                impl_dir = d
        kind, factor = "none", 1
        if part is not None:
            kind_tok, factor_tok = part.children
            assert isinstance(kind_tok, Token) and isinstance(factor_tok, Token)
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
        impl, ports = "auto", 1
        if impl_dir is not None:
            impl_tok, ports_tok = impl_dir.children
            assert isinstance(impl_tok, Token)
            impl = str(impl_tok)
            if impl not in aq.SPM_IMPLS:
                raise self.error(
                    impl_tok,
                    f"unknown scratchpad implementation '{impl}'",
                    hint="use impl(auto), impl(sram), impl(sram(2)) or impl(regs)",
                )
            if ports_tok is not None:
                assert isinstance(ports_tok, Token)
                if impl != "sram":
                    raise self.error(
                        ports_tok,
                        f"a port count applies to SRAM only, not to impl({impl})",
                        hint="write impl(sram(2)) for two read/write ports per bank",
                    )
                ports = self.int_token(ports_tok)
                if ports not in aq.SRAM_PORTS:
                    raise self.error(
                        ports_tok,
                        f"an SRAM bank has 1 or 2 read/write ports, got {ports}",
                        hint="impl(sram) is 1RW, impl(sram(2)) is 2RW",
                    )
        bank_words = -(-size // factor)
        as_regs = impl == "regs" or (impl == "auto" and bank_words <= aq.SRAM_AUTO_WORDS)
        if as_regs and size > self.budgets.scratchpad_elements:
            raise self.error(
                size_tok,
                f"scratchpad '{name}' of {size} elements exceeds the synthesis budget of "
                f"{self.budgets.scratchpad_elements} elements for register scratchpads",
                hint="use impl(sram) (or impl(auto)), or "
                + self.budgets.hint("scratchpad_elements"),
            )
        if not as_regs and size > self.budgets.sram_elements:
            raise self.error(
                size_tok,
                f"SRAM scratchpad '{name}' of {size} elements exceeds the synthesis budget of "
                f"{self.budgets.sram_elements} elements",
                hint=self.budgets.hint("sram_elements"),
            )
        self.scratchpads[name] = (ty, size, self.loc(name_tok))
        self.shapes[name] = shape
        op = aq.ScratchpadOp(name, ty.width, size, kind, factor)
        op.set_impl(impl, ports)
        op.location = loc_attr(self.loc(t))
        return op

    def rom_decl(self, t: Tree) -> None:
        """A constant table: checked here, read through :mod:`aquas.spec.tables`."""
        name_tok, ty_tok, size_tok, dims, init = t.children
        assert isinstance(name_tok, Token) and isinstance(ty_tok, Token)
        assert isinstance(size_tok, Token) and isinstance(dims, Tree) and isinstance(init, Tree)
        name = self.declare_global(name_tok)
        ty = self.type_of(ty_tok)
        shape = self.shape("ROM", size_tok, dims)
        size = math.prod(shape)
        if size > self.budgets.rom_entries:
            raise self.error(
                size_tok,
                f"ROM '{name}' of {size} entries exceeds the synthesis budget of "
                f"{self.budgets.rom_entries} entries",
                hint=self.budgets.hint("rom_entries"),
            )
        nested = any(isinstance(c, Tree) and c.data == "rom_init" for c in init.children)
        entries = self.rom_entries(name, shape, init) if nested else list(init.children)
        if len(entries) != size:
            at: Where = entries[size] if len(entries) > size else init
            raise self.error(
                at,
                f"ROM '{name}' is declared with {size} entries but initialised with {len(entries)}",
                hint="give exactly one value per entry"
                + (", in row-major order, or one list per row" if len(shape) > 1 else ""),
            )
        values = []
        self.const_context = "a ROM entry"
        for e in entries:
            v = self.const_val(e, "ROM entries must be constants")
            values.append(self.check_const_fits(v, ty, e) & ty.mask)
        self.const_context = "a state's initial value"
        # Entries are kept as bit patterns; a signed entry's value is its two's complement.
        self.roms[name] = Rom(ty, tuple(values), shape, self.loc(name_tok))

    def rom_entries(
        self, name: str, shape: tuple[int, ...], init: Tree
    ) -> list[Tree | Token | None]:
        """The entries of a nested ROM initialiser (one list per row), row-major."""
        hint = "nest one list per dimension: [[a, b], [c, d]] for [T; 2][2]"
        items = list(init.children)
        if len(items) != shape[0]:
            at: Where = items[shape[0]] if len(items) > shape[0] else init
            raise self.error(
                at,
                f"ROM '{name}': a list of {len(items)} where the shape asks for {shape[0]}",
                hint=hint,
            )
        out: list[Tree | Token | None] = []
        for item in items:
            is_list = isinstance(item, Tree) and item.data == "rom_init"
            if is_list != (len(shape) > 1):
                found = "a list where a value" if is_list else "a value where a list"
                raise self.error(item, f"ROM '{name}': {found} is expected", hint=hint)
            if is_list:
                assert isinstance(item, Tree)
                out.extend(self.rom_entries(name, shape[1:], item))
            else:
                out.append(item)
        return out

    def isax_def(self, t: Tree) -> Operation:
        *attrs, name_tok, params, result, body = t.children
        assert isinstance(name_tok, Token) and isinstance(body, Tree)
        name = self.declare_global(name_tok)
        self.check_name_length(name, "ISAX", name_tok)
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
        self.isax = IsaxScope(name, tuple(uses), rs)

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
        self.check_unrolled(name, name_tok)
        op = aq.IsaxOp(name, enc[0], enc[1], enc[2], uses)
        if self.noalias:
            op.attributes[aq.NOALIAS_ATTR] = UnitAttr()
        if self.mul_units is not None:
            op.attributes[aq.MUL_UNITS_ATTR] = IntegerAttr(self.mul_units, i64)
        # Move the lowered ops into the ISAX's region.
        op.body.detach_block(0)
        op.body.add_block(self.block)
        op.location = loc_attr(self.loc(name_tok))
        self.isax = None
        self.block = Block()
        return op

    def pipeline_arg(self, arg: Token | Tree | None) -> int:
        """``#[pipeline]`` → 0 (the lowest II), ``#[pipeline(N)]`` → N, ``#[pipeline(off)]``
        → -1 (``aquas.pipeline``, synth/loop_pipeline.py)."""
        if arg is None:
            return 0
        if isinstance(arg, Token) and arg.type == "NAME":
            if str(arg) != "off":
                raise self.error(
                    arg,
                    f"unknown pipeline option '{arg}'",
                    hint="write #[pipeline], #[pipeline(II)] with II from 1 to 64, or #[pipeline(off)]",
                )
            return -1
        ii = self.int_token(arg)
        if not 1 <= ii <= 64:
            raise self.error(arg, f"the initiation interval must be in 1..64, got {ii}")
        return ii

    def check_unrolled(self, name: str, at: Token) -> None:
        """The ISAX's size after unrolling, and the loop iterations one call runs, stay
        within the synthesis budgets."""
        runs, loop = loop_iterations(self.block)
        if runs > self.budgets.iterations:
            raise self.error(
                _at_loop(loop, at),
                f"ISAX '{name}' runs {runs:,} loop iterations a call, over the synthesis "
                f"budget of {self.budgets.iterations:,} (this loop runs most of them)",
                hint=self.budgets.hint("iterations"),
            )
        ops, bursts = unrolled_counts(self.block)
        for count, field, what in (
            (ops, "unrolled_ops", "operations"),
            (bursts, "bursts", "burst statements"),
        ):
            limit = getattr(self.budgets, field)
            if count <= limit:
                continue
            loop = heaviest_unrolled_loop(self.block, bursts=field == "bursts")
            raise self.error(
                _at_loop(loop, at),
                f"ISAX '{name}' has {count} {what} after unrolling, over the synthesis budget "
                f"of {limit}" + (" (this loop contributes most)" if loop is not None else ""),
                hint=self.budgets.hint(field),
            )

    def check_repeated(self, key_tok: Token, seen: dict[str, Token]) -> None:
        """An attribute given twice is an error: the later one would silently win."""
        key = str(key_tok)
        first = seen.get(key)
        if first is not None:
            raise self.error(
                key_tok,
                f"attribute '{key}' is given twice (first at line {first.line}, column "
                f"{first.column})",
                hint="keep one of them",
            )
        seen[key] = key_tok

    def encoding(self, attrs: list[Tree | Token | None], name_tok: Token) -> tuple[int, int, int]:
        opcode: int | None = None
        funct3 = 0
        funct7: int | None = None
        seen: dict[str, Token] = {}
        self.noalias = False
        self.mul_units: int | None = None
        for a in attrs:
            assert isinstance(a, Tree)
            for item in a.children:
                assert isinstance(item, Tree)
                key_tok, arg = item.children
                assert isinstance(key_tok, Token)
                key = str(key_tok)
                self.check_repeated(key_tok, seen)
                if key == "noalias":
                    # the caller's contract that plans may rely on (docs/spec-language.md)
                    if arg is not None:
                        raise self.error(key_tok, "attribute 'noalias' takes no value")
                    self.noalias = True
                    continue
                if arg is None:
                    raise self.error(key_tok, f"attribute '{key}' needs a value, e.g. {key}(1)")
                if key == "mul_units":
                    # a synthesis directive: multipliers of each width this ISAX may use
                    # in one cycle (docs/spec-language.md, docs/synthesis.md "Sharing")
                    n = self.int_token(arg)
                    if not 1 <= n <= aq.MAX_MUL_UNITS:
                        raise self.error(
                            arg,
                            f"mul_units must be in 1..{aq.MAX_MUL_UNITS}, got {n}",
                            hint="the number of multipliers of each width the ISAX may use "
                            "in one cycle",
                        )
                    self.mul_units = n
                    continue
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
                        hint="use opcode, funct3, funct7, noalias, mul_units",
                    )
        if opcode is None or funct7 is None:
            missing = "opcode" if opcode is None else "funct7"
            raise self.error(
                name_tok,
                f"ISAX '{name_tok}' has no {missing}",
                hint="write #[opcode(custom0), funct7(1)] before `isax`",
            )
        return opcode, funct3, funct7

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
            return self.binop(BINOPS[op], cur, rhs, s, e)

        self.assign(lv, value, e, s)

    def lvalue_read(self, lv: Tree) -> Typed:
        if lv.data == "lv_name":
            return self.name_value(lv.children[0])
        name_tok, *idx_es = lv.children
        return self.spm_read(str(name_tok), idx_es, lv)

    def assign(self, lv: Tree, compute, e: Tree, s: Tree) -> None:  # type: ignore[no-untyped-def]
        name_tok = lv.children[0]
        assert isinstance(name_tok, Token)
        name = str(name_tok)
        if name in self.roms and self.lookup(name) is None:
            raise self.error(
                name_tok,
                f"ROM '{name}' is read-only",
                hint="a rom is a constant table; use a scratchpad for data the ISAX writes",
            )
        if lv.data == "lv_index":
            if name not in self.scratchpads:
                raise self.error(
                    name_tok,
                    f"'{name}' is not a scratchpad; only scratchpads can be indexed on the left of =",
                )
            ety, _, _ = self.scratchpads[name]
            idx_es = lv.children[1:]
            self.check_rank(name, len(idx_es), name_tok, write=True)
            idx = self.spm_index(self.element_index(name, idx_es, lv), lv)
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

    def _burst(self, s: Tree, spm: Tree, mem_side: Tree, write: bool) -> None:
        """A burst statement: one ``aquas.burst_*`` op, or one per row of a 2-D burst
        (``R x C`` with ``stride(S)``: row ``r`` at ``addr + r * S`` in memory)."""
        name_tok, row_index, off_e, first_tok, tile = spm.children
        addr_e, stride_t = mem_side.children
        assert isinstance(name_tok, Token) and isinstance(row_index, Tree)
        assert isinstance(first_tok, Token)
        name = str(name_tok)
        if name in self.roms:
            raise self.error(
                name_tok,
                f"ROM '{name}' cannot take part in a burst",
                hint="a rom is a constant table inside the unit; bursts move data between "
                "memory and a scratchpad",
            )
        if name not in self.scratchpads:
            raise self.error(
                name_tok,
                f"'{name}' is not a scratchpad",
                hint="bursts move data between memory and a scratchpad",
            )
        ety, size, _ = self.scratchpads[name]
        shape = self.shapes[name]
        rows = _row_indices(row_index)
        if len(rows) != len(shape) - 1:
            subs = "".join(f"[{c}]" for c in "ijklmn"[: len(shape) - 1])
            raise self.error(
                name_tok,
                f"a burst of scratchpad '{name}' ({len(shape)} dimensions) names one row: "
                f"{len(shape) - 1} {'index' if len(shape) == 2 else 'indices'} before the "
                f"range, {len(rows)} given",
                hint=f"write {name}{subs}[j +: n]" if len(shape) > 1 else f"write {name}[j +: n]",
            )
        if ety.width not in aq.MEMORY_ACCESS_WIDTHS:
            raise self.error(
                name_tok,
                f"bursts need scratchpad elements of 8, 16, 32 or 64 bits; '{name}' holds {ety}",
            )
        n_rows = 1
        n_tok = first_tok
        if tile is not None:
            assert isinstance(tile, Tree)
            n_rows = self.int_token(first_tok)
            if n_rows <= 0:
                raise self.error(first_tok, f"a 2-D burst needs at least one row, got {n_rows}")
            cols_tok = tile.children[0]
            assert isinstance(cols_tok, Token)
            n_tok = cols_tok
        n = self.int_token(n_tok)
        if n <= 0:
            raise self.error(n_tok, f"burst length must be positive, got {n}")
        per_element = 2 if ety.width == 64 else 1  # 32-bit bus beats
        if n * per_element > MAX_BURST_BEATS:
            raise self.error(
                n_tok,
                f"burst of {n} {ety} elements is {n * per_element} bus beats; the memory port "
                f"moves at most {MAX_BURST_BEATS} per burst"
                + (" (a row of a 2-D burst is one burst)" if tile is not None else ""),
                hint=f"split it into bursts of at most {MAX_BURST_BEATS // per_element} elements",
            )
        width = shape[-1]  # elements the range may span: the row's, or the whole scratchpad's
        where = f"scratchpad '{name}' of {size} elements"
        if len(shape) > 1:
            where = f"a row of scratchpad '{name}' ({width} elements)"
        off_v = self.expr(off_e, U32)
        # A 2-D burst into a 1-D scratchpad fills R * C consecutive elements.
        span = n * n_rows if len(shape) == 1 else n
        what = f"{n_rows} x {n}" if tile is not None else f"{n}"
        if isinstance(off_v, Const):
            if off_v.value < 0 or off_v.value + span > width:
                raise self.error(
                    n_tok if off_v.value >= 0 else off_e,
                    f"burst of {what} elements at offset {off_v.value} does not fit {where}",
                    hint=f"enlarge the scratchpad to at least {max(off_v.value, 0) + span} elements"
                    if len(shape) == 1
                    else f"a row holds {width} elements; burst at most {width - off_v.value} "
                    "from this column",
                )
        elif span > width:
            raise self.error(n_tok, f"burst of {what} elements is longer than {where}")
        vals = [self.expr(e, U32) for e in rows] + [off_v]
        if tile is not None and len(shape) > 1:
            height, row_v = shape[-2], vals[-2]
            first = row_v.value if isinstance(row_v, Const) else 0
            if first + n_rows > height:
                at_row = f" from row {first}" if isinstance(row_v, Const) else ""
                raise self.error(
                    first_tok,
                    f"{n_rows} rows{at_row} do not fit scratchpad '{name}' ({height} rows)",
                    hint=f"a 2-D burst into '{name}' fills rows i .. i + R - 1 of its "
                    "second-to-last dimension",
                )
        flat = self.element_index(name, [*rows, off_e], off_e, vals)
        addr = self.address(addr_e)
        elem_bytes = ety.width // 8
        stride_c: int | None = n * elem_bytes  # contiguous rows unless stride(S) says
        stride_v: SSAValue | None = None
        if stride_t is not None:
            assert isinstance(stride_t, Tree)
            stride_e = stride_t.children[0]
            if tile is None:
                raise self.error(
                    stride_t,
                    "stride(S) applies to a 2-D burst",
                    hint=f"give the rows and columns: burst {name}[off +: R x C] ... stride(S)",
                )
            sv = self.expr(stride_e, U32)
            if isinstance(sv, Const):
                stride_c = self.check_const_fits(sv, U32, stride_e)
                if stride_c % elem_bytes:
                    raise self.error(
                        stride_e,
                        f"stride {stride_c} is not a multiple of the {elem_bytes}-byte element "
                        f"of '{name}'",
                        hint="every row must start naturally aligned",
                    )
            else:
                if sv.ty != U32:
                    raise self.error(
                        stride_e,
                        f"a burst stride is a u32 byte count, got {sv.ty}",
                        hint="convert with zext<u32>() or `as u32`",
                    )
                stride_c, stride_v = None, sv.value
        pitch = width if len(shape) > 1 else n  # scratchpad elements from row to row
        row_addr = addr
        for r in range(n_rows):
            if r:
                if stride_v is not None:  # a run-time stride: each row one add further
                    row_addr = self.emit(arith.AddiOp(row_addr, stride_v), s).results[0]
                else:
                    assert stride_c is not None
                    step = self.const(signless((r * stride_c) & 0xFFFF_FFFF, 32), U32, s)
                    row_addr = self.emit(arith.AddiOp(addr, step.value), s).results[0]
            row_off: Val = flat
            if r and isinstance(flat, Const):
                row_off = Const(flat.value + r * pitch, False)
            elif r:
                assert isinstance(flat, Typed)
                k = self.const(r * pitch, U32, s)
                base = self.spm_index(flat, off_e)
                row_off = Typed(self.emit(arith.AddiOp(base, k.value), s).results[0], U32)
            off = self.spm_index(row_off, off_e)
            op = (
                aq.BurstWriteOp(name, off, row_addr, n)
                if write
                else aq.BurstReadOp(name, off, row_addr, n)
            )
            self.emit(op, s)

    def s_burst_read_stmt(self, s: Tree) -> None:
        spm, mem_side = s.children
        self._burst(s, spm, mem_side, write=False)

    def s_burst_write_stmt(self, s: Tree) -> None:
        mem_side, spm = s.children
        self._burst(s, spm, mem_side, write=True)

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
        if self.loop_depth >= self.budgets.loop_depth:
            raise self.error(
                s,
                f"loops nested more than {self.budgets.loop_depth} deep",
                hint=self.budgets.hint("loop_depth"),
            )
        ty = self.type_of(ty_tok) if ty_tok is not None else U32
        lo = self.const_expr(lo_e, "loop bounds must be constants")
        hi = self.const_expr(hi_e, "loop bounds must be constants")
        step = (
            self.const_expr(step_e, "the loop step must be a constant") if step_e is not None else 1
        )
        if step <= 0:
            raise self.error(step_e or s, f"the loop step must be positive, got {step}")
        if step >= 1 << 31:  # the bounds and the step are 32-bit signed values in the IR
            raise self.error(step_e or s, f"the loop step {step} does not fit 32 bits")
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
        pipeline: int | None = None
        seen: dict[str, Token] = {}
        for a in attrs:
            assert isinstance(a, Tree)
            for item in a.children:
                assert isinstance(item, Tree)
                key_tok, arg = item.children
                assert isinstance(key_tok, Token)
                self.check_repeated(key_tok, seen)
                if str(key_tok) == "pipeline":
                    pipeline = self.pipeline_arg(arg)
                    continue
                if str(key_tok) != "unroll":
                    raise self.error(
                        key_tok,
                        f"unknown loop directive '{key_tok}'",
                        hint="loops accept #[unroll], #[unroll(N)], #[pipeline], "
                        "#[pipeline(II)] and #[pipeline(off)]",
                    )
                unroll = trip if arg is None else self.int_token(arg)
                if arg is not None and not 1 <= unroll <= max(trip, 1):
                    raise self.error(
                        arg,
                        f"unroll factor must be in 1..{max(trip, 1)} (the trip count), got {unroll}",
                    )
        if pipeline is not None and pipeline != -1 and unroll is not None and unroll >= trip:
            raise self.error(
                s,
                "a fully unrolled loop cannot be pipelined",
                hint="unroll by a factor below the trip count, or drop #[pipeline]",
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
        self.loop_depth += 1
        self.body(blk)
        self.loop_depth -= 1
        self.scopes.pop()
        body.add_op(scf.YieldOp(*[b.value for _, b in carried]))  # type: ignore[union-attr]
        self.block = saved_block
        for_op = scf.ForOp(lb.value, ub.value, st.value, saved_vals, body)
        if unroll is not None:
            for_op.attributes[aq.UNROLL_ATTR] = IntegerAttr(unroll, i64)
        if pipeline is not None:
            for_op.attributes[aq.PIPELINE_ATTR] = IntegerAttr(pipeline, i64)
        self.emit(for_op, s)
        for (_, b), r in zip(carried, for_op.results, strict=True):
            b.value = r  # type: ignore[union-attr]


def _row_indices(t: Tree) -> list[Tree | Token | None]:
    """The row indices before a burst's range: ``t[i][j][k +: n]`` → [i, j]."""
    out: list[Tree | Token | None] = []
    node: Tree | None = t
    while node is not None and node.children:
        inner, idx = node.children
        out.append(idx)
        node = inner if isinstance(inner, Tree) else None
    return out[::-1]


def _assigned_names(t: Tree) -> Iterator[str]:
    for sub in t.iter_subtrees_topdown():
        if sub.data in ("assign_stmt", "compound_stmt"):
            lv = sub.children[0]
            if isinstance(lv, Tree) and lv.data == "lv_name":
                yield str(lv.children[0])


def lower_spec(
    source: str, filename: str = "<input>", budgets: SpecBudgets | None = None
) -> ModuleOp:
    """Parse, check and lower spec text to a verified module holding one aquas.extension.

    ``budgets`` defaults to :meth:`SpecBudgets.from_env`."""
    tree = parse_spec(source, filename)
    try:
        return SpecFrontend(source, filename, budgets).run(tree)
    except RecursionError:
        raise AquasError(
            "the spec nests expressions or blocks too deeply",
            SourceLoc(filename, 1, 1),
            hint="split deep expressions into `let` bindings",
            source=source,
        ) from None


def lower_spec_file(path: str | Path) -> ModuleOp:
    return lower_spec(read_source(path, "spec"), str(path))
