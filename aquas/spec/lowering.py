"""Lowering state shared by the spec frontend's walks: typed values, scopes, diagnostics
and IR emission. :mod:`aquas.spec.expressions` and :mod:`aquas.spec.frontend` build on it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from lark import Token, Tree
from xdsl.dialects import arith
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, IntegerAttr, IntegerType, StringAttr
from xdsl.ir import Block, Operation, SSAValue

from aquas import intops
from aquas.diagnostics import AquasError, SourceLoc
from aquas.spec.limits import MAX_CONST_BITS, SpecBudgets
from aquas.spec.parse import LiteralTooLarge, parse_int
from aquas.spec.types import IntTy, parse_type_name


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


@dataclass(frozen=True)
class Rom:
    """A declared constant table (``rom``): element type, entries (row-major) and shape."""

    ty: IntTy
    values: tuple[int, ...]
    shape: tuple[int, ...]
    loc: SourceLoc


@dataclass
class Binding:
    kind: str  # "let" | "var" | "loopvar"
    ty: IntTy
    value: SSAValue
    loc: SourceLoc


@dataclass
class IsaxScope:
    name: str
    params: tuple[str, ...]
    rs: dict[str, SSAValue]


class LoweringBase:
    """Declarations, scopes, diagnostics and emission of one spec file's lowering."""

    def __init__(self, source: str, filename: str, budgets: SpecBudgets | None = None):
        self.source = source
        self.filename = filename
        self.budgets = budgets if budgets is not None else SpecBudgets.from_env()
        self.states: dict[str, tuple[IntTy, SourceLoc]] = {}
        self.scratchpads: dict[str, tuple[IntTy, int, SourceLoc]] = {}
        self.roms: dict[str, Rom] = {}
        self.shapes: dict[str, tuple[int, ...]] = {}  # scratchpad → its declared dimensions
        self.globals: dict[str, SourceLoc] = {}
        self.encodings: dict[tuple[int, int, int], tuple[str, SourceLoc]] = {}
        self.scopes: list[dict[str, Binding]] = []
        self.block: Block = Block()
        self.isax: IsaxScope | None = None
        self.loop_depth = 0  # loops around the statement being lowered
        self.const_context = "a state's initial value"  # what a name outside an ISAX is in

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

    def type_of(self, tok: Token | Tree | None) -> IntTy:
        assert isinstance(tok, Token)
        ty = parse_type_name(str(tok))
        if ty is None:
            raise self.error(
                tok, f"unknown type '{tok}'", hint="types are u1..u64, i1..i64 (and bool = u1)"
            )
        return ty

    def int_token(self, tok: Token | Tree) -> int:
        if not isinstance(tok, Token) or tok.type != "INT":
            raise self.error(tok, "expected an integer literal")
        value, suffix, _ = self.literal(tok)
        if suffix is not None:
            raise self.error(tok, "a type suffix is not allowed here")
        return value

    def literal(self, tok: Token) -> tuple[int, str | None, bool]:
        """:func:`parse_int` of a literal token, its failures as diagnostics."""
        try:
            return parse_int(str(tok))
        except LiteralTooLarge:
            raise self.error(
                tok,
                f"integer literal of {len(tok)} characters exceeds {MAX_CONST_BITS} bits",
                hint="types are at most 64 bits wide",
            ) from None
        except ValueError:
            shown = str(tok) if len(tok) <= 40 else str(tok)[:40] + "..."
            raise self.error(tok, f"malformed integer literal '{shown}'") from None

    def untyped(self, value: int, bit_pattern: bool, at: Where) -> Const:
        """An untyped constant, kept within :data:`MAX_CONST_BITS` so folding stays cheap."""
        if value.bit_length() > MAX_CONST_BITS:
            raise self.error(
                at,
                f"constant expression exceeds {MAX_CONST_BITS} bits",
                hint="types are at most 64 bits wide; give an operand a type suffix, e.g. 1u64",
            )
        return Const(value, bit_pattern)

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


def signless(value: int, width: int) -> int:
    """The value an ``IntegerAttr`` of ``width`` bits holds for the bit pattern of ``value``."""
    return intops.to_signed(value, width)


def loc_attr(loc: SourceLoc) -> FileLineColLoc:
    return FileLineColLoc(StringAttr(loc.filename), IntAttr(loc.line), IntAttr(loc.column))


def conv_hint(have: IntTy, want: IntTy) -> str:
    if have.width == want.width:
        return f"reinterpret the sign with `as {want}`"
    if have.width < want.width:
        return f"extend explicitly: zext<{want}>(...) or sext<{want}>(...)"
    return f"narrow explicitly: trunc<{want}>(...)"
