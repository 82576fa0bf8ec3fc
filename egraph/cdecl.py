"""C frontend, declarations and types: the public data model of a lowered C program, C's
integer types under RV32 rules (int = long = 32 bits) with the usual arithmetic
conversions, integer and character literals, and the file-level state (typedefs, globals)
with integer constant expressions."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pycparser import c_ast
from xdsl.dialects.builtin import (
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from aquas import intops
from aquas.diagnostics import AquasError, SourceLoc
from aquas.egraph import clayout

# ---------------------------------------------------------------------------------------
# Public data model


@dataclass(frozen=True)
class CType:
    """An integer type, or a pointer to one (``width``/``signed`` then describe the pointee)."""

    width: int
    signed: bool
    pointer: bool = False
    const: bool = False
    restrict: bool = False
    # For a pointer: the pointee when it is an aggregate (a struct, or an array row of a
    # 2-D array); for an array: its element when it is an aggregate.  A ``clayout`` type;
    # ``width`` is then the aggregate's leaf width (egraph/clayout.py).
    obj: object = None

    def c_name(self) -> str:
        base = f"{'' if self.signed else 'u'}int{self.width}_t"
        if self.obj is not None:
            base = clayout.describe(self.obj)
        if not self.pointer:
            return base
        return f"{'const ' if self.const else ''}{base} *{'restrict' if self.restrict else ''}"

    @property
    def ir(self) -> IntegerType:
        return IntegerType(self.width)


@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass
class CVar:
    name: str
    ctype: CType
    line: int
    col: int


@dataclass
class CStmt:
    """One C statement and what its lowering produced (IR fields are empty when the
    function was not lowered).  ``writes`` maps each scalar assigned by the statement to
    its SSA value right after it; for a pointer local the value is its i32 element offset."""

    kind: str
    span: Span
    line: int
    col: int
    depth: int
    op: Operation | None = None
    value: SSAValue | None = None
    target: str | None = None
    writes: dict[str, SSAValue] = field(default_factory=dict)
    iv: str | None = None
    header_span: Span | None = None
    body_span: Span | None = None
    init_span: Span | None = None
    cond_span: Span | None = None
    step_span: Span | None = None
    # a loop counted down by a scalar (``while (n--)``, ``for (; n > 3; n--)``,
    # ``while (n != 0) { ...; n -= 2; }``, ``do { ... } while (--n)``): (the scalar, its
    # decrement per iteration, the bound b it stays above); k more iterations run whenever
    # the scalar is at least b + k * decrement (cstmt.down_counter)
    counter: tuple[str, int, int] | None = None
    # the ops the statement's lowering added to its block that no statement inside it did
    # (how the matcher tells apart the statements of one macro expansion, whose locations
    # are all the invocation's)
    ops: list[Operation] = field(default_factory=list)


@dataclass
class CFunction:
    name: str
    span: Span
    line: int
    col: int
    selected: bool
    func: FuncOp | None
    params: list[CVar]
    ret: CType | None
    stmts: list[CStmt]
    locals: dict[str, CVar]
    globals_used: set[str]
    # the globals the function uses: declaration and kind ("array", "struct", "scalar")
    global_vars: dict[str, tuple[CVar, str]] = field(default_factory=dict)
    # C definitions of the extern globals the file declares but does not define (the final
    # check compiles the whole file and provides their storage)
    extern_defs: list[str] = field(default_factory=list)


@dataclass
class CProgram:
    filename: str
    source: str
    module: ModuleOp
    functions: list[CFunction]
    diagnostics: list[AquasError]
    globals: dict[str, CVar]
    # the files the preprocessor read (the source first, then every header it included)
    dependencies: list[Path] = field(default_factory=list)
    # the layouts of the file's structs, by tag ("struct point") and by typedef name
    structs: dict[str, clayout.Struct] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------
# Types

I1 = IntegerType(1)
INT = CType(32, True)
UINT = CType(32, False)

_STDINT: dict[str, CType] = {
    **{f"int{w}_t": CType(w, True) for w in (8, 16, 32, 64)},
    **{f"uint{w}_t": CType(w, False) for w in (8, 16, 32, 64)},
    "size_t": UINT,
    "uintptr_t": UINT,
    "intptr_t": INT,
    "ptrdiff_t": INT,
}
# Elements of one array.  A global's initial value is built element by element, so a
# fuzzed ``int big[1 << 30]`` took minutes and gigabytes before anything was said; 2^20
# (4 MiB of int32) is far above a kernel's working set on the RV32 targets.
MAX_ARRAY_ELEMENTS = 1 << 20

_PRELUDE = "".join(f"typedef int {n};\n" for n in _STDINT) + "typedef _Bool bool;\n"

_BASIC: dict[tuple[str, ...], CType] = {}
for _words, _ty in [
    # plain char is unsigned on RISC-V (psABI): riscv gcc loads it with lbu
    (("char",), CType(8, False)),
    (("signed", "char"), CType(8, True)),
    (("unsigned", "char"), CType(8, False)),
    (("short",), CType(16, True)),
    (("short", "int"), CType(16, True)),
    (("signed", "short"), CType(16, True)),
    (("signed", "short", "int"), CType(16, True)),
    (("unsigned", "short"), CType(16, False)),
    (("unsigned", "short", "int"), CType(16, False)),
    (("int",), INT),
    (("signed",), INT),
    (("signed", "int"), INT),
    (("unsigned",), UINT),
    (("unsigned", "int"), UINT),
    (("long",), INT),
    (("long", "int"), INT),
    (("signed", "long"), INT),
    (("signed", "long", "int"), INT),
    (("unsigned", "long"), UINT),
    (("unsigned", "long", "int"), UINT),
    (("long", "long"), CType(64, True)),
    (("long", "long", "int"), CType(64, True)),
    (("signed", "long", "long"), CType(64, True)),
    (("signed", "long", "long", "int"), CType(64, True)),
    (("unsigned", "long", "long"), CType(64, False)),
    (("unsigned", "long", "long", "int"), CType(64, False)),
]:
    _BASIC[tuple(sorted(_words))] = _ty


def _promote(t: CType) -> CType:
    return INT if t.width < 32 else CType(t.width, t.signed)


def _common(a: CType, b: CType) -> CType:
    """The usual arithmetic conversions (C11 6.3.1.8) for RV32."""
    a, b = _promote(a), _promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.width >= b.width else b
    u, s = (a, b) if not a.signed else (b, a)
    return u if u.width >= s.width else s


def _wrap(v: int, width: int, signed: bool) -> int:
    return intops.to_signed(v, width) if signed else intops.to_unsigned(v, width)


# ---------------------------------------------------------------------------------------
# Lowering


class _Unsupported(Exception):
    def __init__(self, construct: str, node: c_ast.Node | None):
        super().__init__(construct)
        self.construct = construct
        self.node = node


@dataclass
class _Global:
    var: CVar
    mtype: MemRefType
    array: bool
    struct: bool = False  # a struct object (its memref: the struct's units)


def _int_literal(text: str) -> tuple[int, CType]:
    """Value and C type of an integer constant (C11 6.4.4.1, RV32)."""
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)([uUlL]*)", text)
    if m is None:
        raise ValueError(text)
    digits, suffix = m.group(1), m.group(2).lower()
    if digits[:2].lower() in ("0x", "0b"):
        value = int(digits, 0)
    else:
        value = int(digits, 8) if digits.startswith("0") else int(digits)
    decimal = not digits.startswith("0") or digits == "0"
    unsigned = "u" in suffix
    long_long = "ll" in suffix
    candidates: list[CType] = []
    if not long_long:
        if not unsigned:
            candidates.append(INT)
        if unsigned or not decimal:
            candidates.append(UINT)
    if not unsigned:
        candidates.append(CType(64, True))
    if unsigned or not decimal:
        candidates.append(CType(64, False))
    for ty in candidates:
        if value < (1 << (ty.width - 1 if ty.signed else ty.width)):
            return value, ty
    return value & ((1 << 64) - 1), CType(64, False)


_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8,
            "f": 12, "v": 11, "?": 63}  # fmt: skip


def _char_literal(text: str) -> int:
    body = text[1:-1]
    if not body.startswith("\\"):
        if len(body) != 1:
            raise ValueError(text)
        return _wrap(ord(body), 8, True)
    esc = body[1:]
    if esc[:1] in ("x", "X"):
        return _wrap(int(esc[1:], 16), 8, True)
    if esc.isdigit():
        return _wrap(int(esc, 8), 8, True)
    if esc in _ESCAPES:
        return _ESCAPES[esc]
    raise ValueError(text)


class _Program:
    """File-level state shared by all functions of one translation unit."""

    def __init__(self, source: str, filename: str):
        self.source = source
        self.filename = filename
        # A str value says why the type is unsupported.
        self.typedefs: dict[str, CType | str] = {**_STDINT, "bool": "'bool' type"}
        self.globals: dict[str, _Global] = {}
        self.bad_globals: dict[str, str] = {}
        # struct tags and typedef names of structs (a str value says why unsupported)
        self.structs: dict[str, clayout.Struct | str] = {}
        # the file's function definitions (the first of each name) and prototypes, and the
        # declarations of opaque callees (egraph/ccall.py)
        self.fdefs: dict[str, c_ast.FuncDef] = {}
        self.protos: dict[str, c_ast.FuncDecl] = {}
        self.externs: dict[str, FuncOp] = {}
        self.aggregates: dict[str, clayout.Struct | str] = {}
        # enumeration constants (C11 6.4.4.3: type int)
        self.enum_consts: dict[str, int] = {}
        # storage the final check defines for ``extern`` globals the file only declares
        # (symbol -> a C definition), and the ``memref.global`` ops of function-local statics
        self.extern_defs: dict[str, str] = {}
        self.local_globals: list[Operation] = []

    def loc(self, node: c_ast.Node | None) -> SourceLoc:
        coord = getattr(node, "coord", None)
        if coord is None:
            return SourceLoc(self.filename, 1, 1)
        # a node from an included header keeps the header's name (line markers)
        return SourceLoc(coord.file or self.filename, coord.line, coord.column or 1)

    def source_of(self, loc: SourceLoc) -> str | None:
        """The text a diagnostic at ``loc`` quotes: this file's, not a header's."""
        return self.source if loc.filename == self.filename else None

    def scalar_type(self, t: c_ast.Node) -> CType | None:
        """The integer type named by a TypeDecl / Typename type; None for void."""
        if isinstance(t, c_ast.TypeDecl):
            if "volatile" in t.quals:
                raise _Unsupported("'volatile' qualifier", t)
            t = t.type
        if isinstance(t, c_ast.Struct | c_ast.Union):
            raise _Unsupported(f"{type(t).__name__.lower()} type", t)
        if isinstance(t, c_ast.Enum):
            self.enum(t)
            return INT  # every enumerator of the example's enums fits int (checked there)
        if not isinstance(t, c_ast.IdentifierType):
            raise _Unsupported(f"type '{type(t).__name__}'", t)
        names = t.names
        if names == ["void"]:
            return None
        if len(names) == 1 and names[0] in self.aggregates:
            agg = self.aggregates[names[0]]
            raise _Unsupported(
                agg
                if isinstance(agg, str)
                else f"struct '{agg.name}' object (pointers to and arrays of structs are lowered)",
                t,
            )
        if len(names) == 1 and names[0] in self.typedefs:
            ty = self.typedefs[names[0]]
            if isinstance(ty, str):
                raise _Unsupported(ty, t)
            return ty
        if {"float", "double"} & set(names):
            raise _Unsupported("floating-point type", t)
        if "_Bool" in names or "bool" in names:
            raise _Unsupported("'_Bool' type", t)
        key = tuple(sorted(names))
        if key not in _BASIC:
            raise _Unsupported(f"type '{' '.join(names)}'", t)
        return _BASIC[key]

    # -- aggregates (structs, arrays of arrays) -----------------------------------------

    def is_aggregate(self, t: c_ast.Node) -> bool:
        """Whether a TypeDecl names a struct (directly or through a typedef)."""
        if not isinstance(t, c_ast.TypeDecl):
            return False
        inner = t.type
        if isinstance(inner, c_ast.Struct):
            return True
        return (
            isinstance(inner, c_ast.IdentifierType)
            and len(inner.names) == 1
            and inner.names[0] in self.aggregates
        )

    def struct(self, s: c_ast.Struct) -> clayout.Struct:
        """The layout of a struct type node; a definition registers its tag."""
        if s.decls is None:
            got = self.structs.get(s.name or "")
            if got is None:
                raise _Unsupported(f"incomplete type 'struct {s.name}'", s)
            if isinstance(got, str):
                raise _Unsupported(got, s)
            return got
        name = f"struct {s.name}" if s.name else "anonymous struct"
        try:
            members: list[tuple[str, clayout.CType, bool]] = []
            for d in s.decls:
                if not isinstance(d, c_ast.Decl) or d.name is None:
                    raise _Unsupported("unnamed struct member", d)
                if d.bitsize is not None:
                    raise _Unsupported("bit-field", d)
                const = isinstance(d.type, c_ast.TypeDecl) and "const" in d.type.quals
                members.append((d.name, self.layout_type(d.type), const))
            if not members:
                raise _Unsupported("empty struct", s)
            layout = clayout.struct_layout(name, members)
        except _Unsupported as u:
            if s.name:
                self.structs[s.name] = f"{name} ({u.construct})"
            raise
        if s.name:
            self.structs[s.name] = layout
        return layout

    def struct_of(self, t: c_ast.Node) -> clayout.Struct:
        obj = self.layout_type(t)
        assert isinstance(obj, clayout.Struct)
        return obj

    def layout_type(self, t: c_ast.Node) -> clayout.CType:
        """Any object type the frontend can lay out: integers, pointers, arrays, structs."""
        if isinstance(t, c_ast.PtrDecl):
            if "volatile" in t.quals:
                raise _Unsupported("'volatile' qualifier", t)
            if isinstance(t.type, c_ast.ArrayDecl) or self.is_aggregate(t.type):
                return clayout.Pointer(self.layout_type(t.type))
            if not isinstance(t.type, c_ast.TypeDecl):
                raise _Unsupported("pointer to pointer or function", t)
            elem = self.scalar_type(t.type)
            if elem is None:
                raise _Unsupported("'void' pointer", t)
            return clayout.Pointer(clayout.Scalar(elem.width, elem.signed))
        if isinstance(t, c_ast.ArrayDecl):
            elem_t = self.layout_type(t.type)
            if t.dim is None:
                raise _Unsupported("array without a length inside an aggregate", t)
            n = self._length(t)
            assert n is not None
            return clayout.Array(elem_t, n)
        if isinstance(t, c_ast.TypeDecl):
            if "volatile" in t.quals:
                raise _Unsupported("'volatile' qualifier", t)
            inner = t.type
            if isinstance(inner, c_ast.Struct):
                return self.struct(inner)
            if self.is_aggregate(t):
                agg = self.aggregates[inner.names[0]]
                if isinstance(agg, str):
                    raise _Unsupported(agg, t)
                return agg
        ty = self.scalar_type(t)
        if ty is None:
            raise _Unsupported("'void' object", t)
        return clayout.Scalar(ty.width, ty.signed)

    def leaf_width(self, obj: clayout.CType, at: c_ast.Node) -> int:
        """The unit width of ``obj``: the narrowest scalar in it, the element type of its
        memref (wider members are read through views of the same memory)."""
        widths = clayout.leaf_widths(obj)
        if not widths:
            raise _Unsupported(f"'{clayout.describe(obj)}' has no members", at)
        return min(widths)

    def _length(self, t: c_ast.ArrayDecl) -> int | None:
        n = None if t.dim is None else self.const_eval(t.dim)
        if n is not None and n <= 0:
            raise _Unsupported("array of non-positive length", t)
        if n is not None and n > MAX_ARRAY_ELEMENTS:
            # refused before anything the size of the array is built (a global's
            # initial value is one attribute element per array element)
            raise _Unsupported(
                f"array of {n} elements (more than the frontend's limit of "
                f"{MAX_ARRAY_ELEMENTS}, aquas.egraph.cdecl.MAX_ARRAY_ELEMENTS)",
                t,
            )
        return n

    def _aggregate_var(self, elem_node: c_ast.Node, at: c_ast.Node) -> tuple[clayout.CType, CType]:
        """The aggregate an array holds or a pointer points to, and its element CType."""
        obj = self.layout_type(elem_node)
        w = self.leaf_width(obj, at)
        leaf: clayout.CType = obj
        while isinstance(leaf, clayout.Array):
            leaf = leaf.elem
        signed = leaf.signed if isinstance(leaf, clayout.Scalar) else True
        node = elem_node
        while isinstance(node, c_ast.ArrayDecl):
            node = node.type
        const = isinstance(node, c_ast.TypeDecl) and "const" in node.quals
        return obj, CType(w, signed, const=const, obj=obj)

    def flat_init(self, init: c_ast.InitList, ty: CType, length: int) -> list[c_ast.Node]:
        """The leaf expressions of a brace initialiser of an array of aggregates, in memory
        order (missing ones are zero-filled by the caller). Braces must follow the
        aggregate's structure; designators are refused."""
        assert ty.obj is not None
        if len(clayout.leaf_widths(ty.obj)) != 1:
            raise _Unsupported(
                f"initialiser of '{clayout.describe(ty.obj)}', which mixes member widths", init
            )
        out: list[c_ast.Node] = []

        def fill(node: c_ast.Node, t: clayout.CType) -> None:
            if isinstance(t, clayout.Scalar | clayout.Pointer):
                if isinstance(node, c_ast.InitList):
                    raise _Unsupported("braces around a scalar initialiser", node)
                if isinstance(t, clayout.Pointer):
                    raise _Unsupported("initialised pointer member", node)
                out.append(node)
                return
            if not isinstance(node, c_ast.InitList):
                raise _Unsupported("aggregate initialiser without braces", node)
            parts = [f.type for f in t.fields] if isinstance(t, clayout.Struct) else [t.elem] * t.n
            if len(node.exprs) > len(parts):
                raise _Unsupported("too many initialisers", node)
            start = len(out)
            for x, pt in zip(node.exprs, parts, strict=False):
                if isinstance(x, c_ast.NamedInitializer):
                    raise _Unsupported("designated initialiser", x)
                fill(x, pt)
            total = clayout.units(t, ty.width)
            out.extend([c_ast.Constant("int", "0", node.coord)] * (start + total - len(out)))

        n = length // clayout.units(ty.obj, ty.width)
        fill(init, clayout.Array(ty.obj, n))
        return out

    def var_type(self, t: c_ast.Node) -> tuple[CType, int | None]:
        """(type, array length or None) of a declared object: integers, pointers to
        integers or aggregates, arrays of them.  The length of an array of aggregates
        counts leaf elements (its memref's length)."""
        if isinstance(t, c_ast.PtrDecl) and (
            self.is_aggregate(t.type) or isinstance(t.type, c_ast.ArrayDecl)
        ):
            if "volatile" in t.quals:
                raise _Unsupported("'volatile' qualifier", t)
            _, ct = self._aggregate_var(t.type, t)
            return CType(ct.width, True, True, ct.const, "restrict" in t.quals, ct.obj), None
        if isinstance(t, c_ast.ArrayDecl) and (
            isinstance(t.type, c_ast.ArrayDecl) or self.is_aggregate(t.type)
        ):
            obj, ct = self._aggregate_var(t.type, t)
            n = self._length(t)
            if n is None:
                return ct, None
            total = n * clayout.units(obj, ct.width)
            if total > MAX_ARRAY_ELEMENTS:
                raise _Unsupported(
                    f"array of {total} elements (more than the frontend's limit of "
                    f"{MAX_ARRAY_ELEMENTS}, aquas.egraph.cdecl.MAX_ARRAY_ELEMENTS)",
                    t,
                )
            return ct, total
        if isinstance(t, c_ast.PtrDecl):
            inner = t.type
            if not isinstance(inner, c_ast.TypeDecl):
                raise _Unsupported("pointer to pointer or function", t)
            elem = self.scalar_type(inner)
            if elem is None:
                raise _Unsupported("'void' pointer", t)
            if "volatile" in t.quals:
                raise _Unsupported("'volatile' qualifier", t)
            return CType(
                elem.width, elem.signed, True, "const" in inner.quals, "restrict" in t.quals
            ), None
        if isinstance(t, c_ast.ArrayDecl):
            if not isinstance(t.type, c_ast.TypeDecl):
                raise _Unsupported("array of pointers", t)
            elem = self.scalar_type(t.type)
            if elem is None:
                raise _Unsupported("array of void", t)
            n = self._length(t)
            return CType(elem.width, elem.signed, const="const" in t.type.quals), n
        ty = self.scalar_type(t)
        if ty is None:
            raise _Unsupported("'void' object", t)
        return CType(ty.width, ty.signed, const="const" in getattr(t, "quals", [])), None

    def enum(self, t: c_ast.Enum) -> None:
        """Registers the constants of an enum definition (a reference by tag defines none).
        An enum's type is int here, as gcc makes it when every value fits int."""
        if t.values is None:
            return
        value = -1
        for en in t.values.enumerators:
            try:
                value = value + 1 if en.value is None else self.const_eval(en.value)
            except _Unsupported as u:
                self.bad_globals[en.name] = f"enumeration constant: {u.construct}"
                raise
            if not -(1 << 31) <= value < (1 << 31):
                self.bad_globals[en.name] = "enumeration constant beyond int"
                raise _Unsupported(f"enumeration constant '{en.name}' beyond int", en)
            self.enum_consts[en.name] = value

    def const_eval(self, e: c_ast.Node) -> int:
        """An integer constant expression (array sizes, global initialisers)."""
        if isinstance(e, c_ast.ID) and e.name in self.enum_consts:
            return self.enum_consts[e.name]
        if isinstance(e, c_ast.Constant):
            if e.type == "char":
                return _char_literal(e.value)
            try:
                return _int_literal(e.value)[0]
            except ValueError:
                raise _Unsupported(f"constant '{e.value}'", e) from None
        if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+", "~", "!"):
            v = self.const_eval(e.expr)
            return {"-": -v, "+": v, "~": ~v, "!": int(v == 0)}[e.op]
        if isinstance(e, c_ast.Cast):
            ty = self.scalar_type(e.to_type.type)
            v = self.const_eval(e.expr)
            return v if ty is None else _wrap(v, ty.width, ty.signed)
        if isinstance(e, c_ast.BinaryOp) and e.op in _CONST_OPS:
            a, b = self.const_eval(e.left), self.const_eval(e.right)
            if e.op in ("/", "%") and b == 0:
                raise _Unsupported("division by zero in a constant", e)
            return _const_binary(e.op, a, b)
        if isinstance(e, c_ast.TernaryOp):
            c = self.const_eval(e.cond)
            return self.const_eval(e.iftrue if c else e.iffalse)
        raise _Unsupported("non-constant expression where a constant is required", e)


# Integer constant expressions are folded with aquas.intops at a width far beyond any C
# type: + - * & | ^ << are exact modulo 2^1024, so the low 64 bits the user of a value keeps
# are exact, and / % >> and comparisons are exact while intermediates stay below 2^1023.
_CONST_W = 1024
_CONST_BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "divs", "%": "rems", "<<": "shl",
                 ">>": "shrs", "&": "and", "|": "or", "^": "xor"}  # fmt: skip
_CONST_COMPARE = {"<": "slt", ">": "sgt", "<=": "sle", ">=": "sge", "==": "eq", "!=": "ne"}


def _const_binary(op: str, a: int, b: int) -> int:
    if op in _CONST_BINARY:
        return intops.to_signed(intops.binary(_CONST_BINARY[op], _CONST_W, a, b), _CONST_W)
    if op in _CONST_COMPARE:
        return int(intops.compare(_CONST_COMPARE[op], _CONST_W, a, b))
    if op == "&&":
        return int(bool(a) and bool(b))
    return int(bool(a) or bool(b))  # "||"


_CONST_OPS = (*_CONST_BINARY, *_CONST_COMPARE, "&&", "||")
