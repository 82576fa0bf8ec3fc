"""C99-subset frontend of the matcher: C kernels -> xDSL ``func``/``scf``/``arith``/``memref``.

pycparser parses; this module types the tree with C's RV32 rules (int = long = 32 bits),
makes every conversion explicit, keeps scalars in SSA form and turns loops and branches into
``scf`` ops.  A function that uses a construct outside the subset is not lowered: it gets one
diagnostic and ``func=None``.  ``docs/c-subset.md`` lists the subset and its IR mapping.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pycparser import c_ast, c_parser
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Builtin,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from aquas.diagnostics import AquasError, SourceLoc

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

    def c_name(self) -> str:
        base = f"{'' if self.signed else 'u'}int{self.width}_t"
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


@dataclass
class CProgram:
    filename: str
    source: str
    module: ModuleOp
    functions: list[CFunction]
    diagnostics: list[AquasError]
    globals: dict[str, CVar]


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
_PRELUDE = "".join(f"typedef int {n};\n" for n in _STDINT) + "typedef _Bool bool;\n"

_BASIC: dict[tuple[str, ...], CType] = {}
for _words, _ty in [
    (("char",), CType(8, True)),
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
    v &= (1 << width) - 1
    return v - (1 << width) if signed and v >> (width - 1) else v


# ---------------------------------------------------------------------------------------
# Source text: preprocessing and lexical statement extents

_DEFINE_RE = re.compile(r"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\(?)(.*)")
_DIRECTIVE_RE = re.compile(r"[ \t]*#[ \t]*(\w*)")
_LINE_MARK_RE = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+):\s*(?P<msg>.*)$", re.S)


def _blank_comments(src: str) -> str:
    """Comments become spaces (newlines kept), so every line and column stays put."""
    out = list(src)
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            i = j + 1
        elif src.startswith("//", i):
            while i < n and src[i] != "\n":
                out[i] = " "
                i += 1
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        else:
            i += 1
    return "".join(out)


class _Text:
    """Offsets of lines, and a lexical scanner over comment-free, directive-free text."""

    def __init__(self, source: str, clean: str):
        self.source = source
        self.text = "\n".join(
            " " * len(ln) if ln.lstrip().startswith("#") else ln for ln in clean.split("\n")
        )
        self.line_starts = [0]
        for m in re.finditer("\n", source):
            self.line_starts.append(m.end())

    def offset(self, line: int, col: int) -> int:
        line = min(max(line, 1), len(self.line_starts))
        return min(self.line_starts[line - 1] + max(col, 1) - 1, len(self.source))

    def skip_ws(self, i: int) -> int:
        while i < len(self.text) and self.text[i].isspace():
            i += 1
        return i

    def word_at(self, i: int) -> str:
        m = re.match(r"[A-Za-z_]\w*", self.text[i:])
        return m.group(0) if m else ""

    def match(self, i: int) -> int:
        """``i`` is at an opening bracket: the offset just past its partner."""
        depth, n = 0, len(self.text)
        while i < n:
            c = self.text[i]
            if c in "\"'":
                j = i + 1
                while j < n and self.text[j] != c:
                    j += 2 if self.text[j] == "\\" else 1
                i = j
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return n

    def to_semicolon(self, i: int) -> int:
        n = len(self.text)
        while i < n:
            c = self.text[i]
            if c in "([{\"'":
                i = self.match(i) if c in "([{" else self.match_quote(i)
                continue
            if c == ";":
                return i + 1
            i += 1
        return n

    def match_quote(self, i: int) -> int:
        q, j, n = self.text[i], i + 1, len(self.text)
        while j < n and self.text[j] != q:
            j += 2 if self.text[j] == "\\" else 1
        return j + 1

    def paren_after(self, i: int) -> Span:
        """The first ``( ... )`` at or after ``i``."""
        j = self.text.find("(", i)
        j = len(self.text) if j < 0 else j
        return Span(j, self.match(j))

    def stmt_end(self, i: int) -> int:
        i = self.skip_ws(i)
        if i >= len(self.text):
            return i
        if self.text[i] == "{":
            return self.match(i)
        w = self.word_at(i)
        if w in ("for", "while", "if"):
            end = self.stmt_end(self.paren_after(i).end)
            if w == "if":
                j = self.skip_ws(end)
                if self.word_at(j) == "else":
                    end = self.stmt_end(j + 4)
            return end
        if w == "do":
            j = self.skip_ws(self.stmt_end(i + 2))
            return self.to_semicolon(self.paren_after(j).end)
        return self.to_semicolon(i)

    def stmt_start(self, coord_off: int) -> int:
        """Walk back from a node's coordinate to the first token of its statement."""
        i = coord_off
        while i > 0 and self.text[i - 1] not in ";{})":
            i -= 1
        i = self.skip_ws(i)
        while i < coord_off and self.word_at(i) in ("else", "do"):
            i = self.skip_ws(i + len(self.word_at(i)))
        return i

    def trimmed(self, start: int, end: int) -> Span | None:
        while start < end and self.text[start].isspace():
            start += 1
        while end > start and self.text[end - 1].isspace():
            end -= 1
        return Span(start, end) if end > start else None


def _preprocess(source: str, filename: str) -> tuple[str, str, dict[str, tuple[str, int, int]]]:
    """(comment-free text for scanning, text for pycparser, object-like macros).

    ``#include`` and ``#define`` lines are blanked (line numbers stay); macros are kept as
    expression text and expanded by the lowering, so columns stay exact too."""
    clean = _blank_comments(source)
    lines = clean.split("\n")
    macros: dict[str, tuple[str, int, int]] = {}
    for no, line in enumerate(lines, start=1):
        m = _DIRECTIVE_RE.match(line)
        if not m or not line.lstrip().startswith("#"):
            continue
        kind = m.group(1)
        if kind == "pragma":
            continue
        if kind == "define":
            d = _DEFINE_RE.match(line)
            if d is None or d.group(2) == "(":
                raise AquasError(
                    "only object-like macros `#define NAME <constant>` are supported",
                    SourceLoc(filename, no, line.find("#") + 1),
                    source=source,
                    hint="write the function-like macro as a function or expand it by hand",
                )
            macros[d.group(1)] = (d.group(3).strip(), no, line.find(d.group(1)) + 1)
        elif kind != "include":
            raise AquasError(
                f"unsupported preprocessor directive '#{kind}'",
                SourceLoc(filename, no, line.find("#") + 1),
                source=source,
                hint="preprocess the file first (only #include, #define and #pragma are understood)",
            )
        lines[no - 1] = " " * len(line)
    # pycparser reads `#pragma` lines itself; everything else of the preprocessor is gone.
    pragmas_kept = [
        raw if raw.lstrip().startswith("#pragma") else ln
        for raw, ln in zip(clean.split("\n"), lines, strict=True)
    ]
    return clean, "\n".join(pragmas_kept), macros


# ---------------------------------------------------------------------------------------
# Lowering


class _Unsupported(Exception):
    def __init__(self, construct: str, node: c_ast.Node | None):
        super().__init__(construct)
        self.construct = construct
        self.node = node


@dataclass
class _Val:
    """An integer rvalue; ``i1`` marks a comparison result of C type int held as ``i1``."""

    v: SSAValue
    ty: CType
    i1: bool = False


@dataclass
class _Ptr:
    base: SSAValue
    off: SSAValue | None  # i32 element offset, None = 0
    elem: CType


@dataclass
class _Bind:
    kind: str  # "scalar" | "ptr" | "array"
    ty: CType
    value: SSAValue | None = None
    base: SSAValue | None = None
    off: SSAValue | None = None


@dataclass
class _Global:
    var: CVar
    mtype: MemRefType
    array: bool


_UNSUPPORTED_STMTS: dict[type[c_ast.Node], str] = {
    c_ast.Break: "'break' statement",
    c_ast.Continue: "'continue' statement",
    c_ast.Goto: "'goto' statement",
    c_ast.Label: "label",
    c_ast.Switch: "'switch' statement",
    c_ast.Case: "'case' label",
    c_ast.Default: "'default' label",
    c_ast.FuncCall: "function call",
    c_ast.Struct: "struct type",
    c_ast.Union: "union type",
    c_ast.Enum: "enum type",
    c_ast.StructRef: "struct member access",
    c_ast.ExprList: "comma operator",
    c_ast.CompoundLiteral: "compound literal",
    c_ast.StaticAssert: "static assertion",
}


def _first_unsupported(body: c_ast.Node) -> tuple[str, c_ast.Node] | None:
    """The syntactically unsupported construct that comes first in the source."""
    found: list[tuple[int, int, str, c_ast.Node]] = []
    statements = _statement_positions(body)

    def visit(n: c_ast.Node) -> None:
        what = _UNSUPPORTED_STMTS.get(type(n))
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID):
            what = f"call of function '{n.name.name}'"
        elif isinstance(n, c_ast.Constant) and n.type == "string":
            what = "string literal"
        elif isinstance(n, c_ast.Constant) and n.type in ("float", "double", "long double"):
            what = "floating-point constant"
        elif isinstance(n, c_ast.TypeDecl) and "volatile" in n.quals:
            what = "'volatile' qualifier"
        elif isinstance(n, c_ast.IdentifierType) and {"float", "double"} & set(n.names):
            what = "floating-point type"
        elif _is_update(n) and id(n) not in statements:
            what = "assignment inside an expression"
        if what is not None and n.coord is not None:
            found.append((n.coord.line, n.coord.column or 1, what, n))
        for _, child in n.children():
            visit(child)

    visit(body)
    if not found:
        return None
    _, _, what, node = min(found, key=lambda t: (t[0], t[1]))
    return what, node


_UPDATE_OPS = ("++", "--", "p++", "p--")


def _is_update(n: c_ast.Node) -> bool:
    return isinstance(n, c_ast.Assignment) or (isinstance(n, c_ast.UnaryOp) and n.op in _UPDATE_OPS)


def _statement_positions(body: c_ast.Node) -> set[int]:
    """ids of the nodes that stand as statements (where an assignment may appear)."""
    allowed: set[int] = set()

    def collect(x: c_ast.Node) -> None:
        if isinstance(x, c_ast.Compound):
            allowed.update(id(item) for item in x.block_items or [])
        elif isinstance(x, c_ast.For):
            allowed.update({id(x.init), id(x.next), id(x.stmt)})
        elif isinstance(x, c_ast.While | c_ast.DoWhile):
            allowed.add(id(x.stmt))
        elif isinstance(x, c_ast.If):
            allowed.update({id(x.iftrue), id(x.iffalse)})
        for _, c in x.children():
            collect(c)

    collect(body)
    return allowed


def _assigned(n: c_ast.Node | None) -> list[str]:
    """Names of variables assigned anywhere inside ``n``, in source order."""
    out: dict[str, None] = {}

    def visit(x: c_ast.Node) -> None:
        if isinstance(x, c_ast.Assignment) and isinstance(x.lvalue, c_ast.ID):
            out[x.lvalue.name] = None
        elif isinstance(x, c_ast.UnaryOp) and x.op in _UPDATE_OPS and isinstance(x.expr, c_ast.ID):
            out[x.expr.name] = None
        for _, c in x.children():
            visit(c)

    if n is not None:
        visit(n)
    return list(out)


def _reads(n: c_ast.Node) -> tuple[set[str], bool]:
    """(identifiers read, whether memory is read) of an expression."""
    names: set[str] = set()
    mem = False

    def visit(x: c_ast.Node) -> None:
        nonlocal mem
        if isinstance(x, c_ast.ID):
            names.add(x.name)
        elif isinstance(x, c_ast.ArrayRef) or (isinstance(x, c_ast.UnaryOp) and x.op == "*"):
            mem = True
        for _, c in x.children():
            visit(c)

    visit(n)
    return names, mem


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
        self.macros: dict[str, c_ast.Node] = {}
        self.globals: dict[str, _Global] = {}
        self.bad_globals: dict[str, str] = {}

    def loc(self, node: c_ast.Node | None) -> SourceLoc:
        coord = getattr(node, "coord", None)
        if coord is None:
            return SourceLoc(self.filename, 1, 1)
        return SourceLoc(self.filename, coord.line, coord.column or 1)

    def scalar_type(self, t: c_ast.Node) -> CType | None:
        """The integer type named by a TypeDecl / Typename type; None for void."""
        if isinstance(t, c_ast.TypeDecl):
            if "volatile" in t.quals:
                raise _Unsupported("'volatile' qualifier", t)
            t = t.type
        if isinstance(t, c_ast.Struct | c_ast.Union):
            raise _Unsupported(f"{type(t).__name__.lower()} type", t)
        if isinstance(t, c_ast.Enum):
            raise _Unsupported("enum type", t)
        if not isinstance(t, c_ast.IdentifierType):
            raise _Unsupported(f"type '{type(t).__name__}'", t)
        names = t.names
        if names == ["void"]:
            return None
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

    def var_type(self, t: c_ast.Node) -> tuple[CType, int | None]:
        """(type, array length or None) of a declared object; pointers and arrays of ints."""
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
                raise _Unsupported("multi-dimensional array", t)
            elem = self.scalar_type(t.type)
            if elem is None:
                raise _Unsupported("array of void", t)
            n = None if t.dim is None else self.const_eval(t.dim)
            if n is not None and n <= 0:
                raise _Unsupported("array of non-positive length", t)
            return CType(elem.width, elem.signed, const="const" in t.type.quals), n
        ty = self.scalar_type(t)
        if ty is None:
            raise _Unsupported("'void' object", t)
        return CType(ty.width, ty.signed, const="const" in getattr(t, "quals", [])), None

    def const_eval(self, e: c_ast.Node, seen: frozenset[str] = frozenset()) -> int:
        """An integer constant expression (array sizes, global initialisers)."""
        if isinstance(e, c_ast.Constant):
            if e.type == "char":
                return _char_literal(e.value)
            try:
                return _int_literal(e.value)[0]
            except ValueError:
                raise _Unsupported(f"constant '{e.value}'", e) from None
        if isinstance(e, c_ast.ID) and e.name in self.macros and e.name not in seen:
            return self.const_eval(self.macros[e.name], seen | {e.name})
        if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+", "~", "!"):
            v = self.const_eval(e.expr, seen)
            return {"-": -v, "+": v, "~": ~v, "!": int(v == 0)}[e.op]
        if isinstance(e, c_ast.Cast):
            ty = self.scalar_type(e.to_type.type)
            v = self.const_eval(e.expr, seen)
            return v if ty is None else _wrap(v, ty.width, ty.signed)
        if isinstance(e, c_ast.BinaryOp) and e.op in _CONST_OPS:
            a, b = self.const_eval(e.left, seen), self.const_eval(e.right, seen)
            if e.op in ("/", "%") and b == 0:
                raise _Unsupported("division by zero in a constant", e)
            return _CONST_OPS[e.op](a, b)
        if isinstance(e, c_ast.TernaryOp):
            c = self.const_eval(e.cond, seen)
            return self.const_eval(e.iftrue if c else e.iffalse, seen)
        raise _Unsupported("non-constant expression where a constant is required", e)


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_CONST_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _cdiv,
    "%": lambda a, b: a - b * _cdiv(a, b),
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "<": lambda a, b: int(a < b),
    ">": lambda a, b: int(a > b),
    "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "&&": lambda a, b: int(bool(a) and bool(b)),
    "||": lambda a, b: int(bool(a) or bool(b)),
}

_BinOp = Callable[[SSAValue, SSAValue], Operation]
_ARITH: dict[str, tuple[_BinOp, _BinOp]] = {
    "+": (arith.AddiOp, arith.AddiOp),
    "-": (arith.SubiOp, arith.SubiOp),
    "*": (arith.MuliOp, arith.MuliOp),
    "/": (arith.DivSIOp, arith.DivUIOp),
    "%": (arith.RemSIOp, arith.RemUIOp),
    "&": (arith.AndIOp, arith.AndIOp),
    "|": (arith.OrIOp, arith.OrIOp),
    "^": (arith.XOrIOp, arith.XOrIOp),
}
_CMP: dict[str, tuple[str, str]] = {
    "<": ("slt", "ult"),
    "<=": ("sle", "ule"),
    ">": ("sgt", "ugt"),
    ">=": ("sge", "uge"),
    "==": ("eq", "eq"),
    "!=": ("ne", "ne"),
}


class _Function:
    """Lowers one function definition."""

    def __init__(self, prog: _Program, text: _Text, fdef: c_ast.FuncDef, selected: bool):
        self.prog = prog
        self.text = text
        self.fdef = fdef
        self.selected = selected
        self.scopes: list[dict[str, _Bind]] = []
        self.locals: dict[str, CVar] = {}
        self.globals_used: set[str] = set()
        self.stmts: dict[int, CStmt] = {}
        self.order: list[CStmt] = []
        self.block = Block()
        self.entry = self.block
        self.global_refs: dict[str, SSAValue] = {}

    # -- statement structure (independent of lowering) --------------------------------

    def collect(self, n: c_ast.Node | None, depth: int) -> None:
        """Create a CStmt for every statement of the body, in source order."""
        if n is None or isinstance(n, c_ast.Pragma | c_ast.EmptyStatement):
            return
        if isinstance(n, c_ast.Compound):
            for item in n.block_items or []:
                if isinstance(item, c_ast.Compound):
                    start = self.text.offset(item.coord.line, item.coord.column or 1)
                    cs = CStmt(
                        "block",
                        Span(start, self.text.match(start)),
                        item.coord.line,
                        item.coord.column or 1,
                        depth,
                    )
                    self.stmts[id(item)] = cs
                    self.order.append(cs)
                    self.collect(item, depth + 1)
                else:
                    self.collect(item, depth)
            return
        kind = {
            c_ast.For: "for",
            c_ast.While: "while",
            c_ast.DoWhile: "do",
            c_ast.If: "if",
            c_ast.Decl: "decl",
            c_ast.Return: "return",
        }.get(type(n))
        if kind is None:
            if isinstance(n, c_ast.Label | c_ast.Case | c_ast.Default):
                self.collect(n.stmt, depth)
                return
            if isinstance(n, c_ast.Break | c_ast.Continue | c_ast.Goto | c_ast.Switch):
                return
            kind = "assign" if _is_update(n) else "expr"
        line, col = n.coord.line, n.coord.column or 1
        start = self.text.stmt_start(self.text.offset(line, col))
        end = self.text.stmt_end(start)
        s_line = self.text.source.count("\n", 0, start) + 1
        s_col = start - self.text.line_starts[s_line - 1] + 1
        cs = CStmt(kind, Span(start, end), s_line, s_col, depth)
        self.stmts[id(n)] = cs
        self.order.append(cs)
        if kind in ("for", "while", "if"):
            hs = self.text.paren_after(start + len(kind))
            cs.header_span = hs
            body_start = self.text.skip_ws(hs.end)
            cs.body_span = Span(body_start, self.text.stmt_end(body_start))
            if kind == "for":
                inner = self.text.text[hs.start + 1 : hs.end - 1]
                parts, d, last = [], 0, 0
                for k, ch in enumerate(inner):
                    d += ch in "([{"
                    d -= ch in ")]}"
                    if ch == ";" and d == 0:
                        parts.append((last, k))
                        last = k + 1
                parts.append((last, len(inner)))
                if len(parts) == 3:
                    base = hs.start + 1
                    cs.init_span, cs.cond_span, cs.step_span = (
                        self.text.trimmed(base + a, base + b) for a, b in parts
                    )
        elif kind == "do":
            body_start = self.text.skip_ws(start + 2)
            cs.body_span = Span(body_start, self.text.stmt_end(body_start))
            cs.header_span = self.text.paren_after(self.text.skip_ws(cs.body_span.end))
        if isinstance(n, c_ast.For | c_ast.While | c_ast.DoWhile):
            self.collect(n.stmt, depth + 1)
        elif isinstance(n, c_ast.If):
            self.collect(n.iftrue, depth + 1)
            self.collect(n.iffalse, depth + 1)

    # -- emission helpers ------------------------------------------------------------

    def emit(self, op: Operation, at: c_ast.Node | None) -> Operation:
        loc = self.prog.loc(at)
        op.location = FileLineColLoc(
            StringAttr(loc.filename), IntAttr(loc.line), IntAttr(loc.column)
        )
        self.block.add_op(op)
        return op

    def const(self, value: int, ty: CType, at: c_ast.Node | None) -> SSAValue:
        v = _wrap(value, ty.width, True)
        return self.emit(arith.ConstantOp(IntegerAttr(v, ty.ir)), at).results[0]

    def index(self, v: SSAValue, at: c_ast.Node | None) -> SSAValue:
        return self.emit(arith.IndexCastOp(v, IndexType()), at).results[0]

    def convert(self, v: _Val, to: CType, at: c_ast.Node | None) -> SSAValue:
        """``v`` converted to ``to`` (C11 6.3.1.3, wrapping)."""
        if v.i1:
            src = self.emit(arith.ExtUIOp(v.v, IntegerType(32)), at).results[0]
            return self.convert(_Val(src, INT), to, at)
        if v.ty.width == to.width:
            return v.v
        if v.ty.width < to.width:
            ext = arith.ExtSIOp if v.ty.signed else arith.ExtUIOp
            return self.emit(ext(v.v, to.ir), at).results[0]
        return self.emit(arith.TruncIOp(v.v, to.ir), at).results[0]

    def cond(self, e: c_ast.Node) -> SSAValue:
        v = self.rvalue(e)
        if v.i1:
            return v.v
        zero = self.const(0, v.ty, e)
        return self.emit(arith.CmpiOp(v.v, zero, "ne"), e).results[0]

    # -- scopes ----------------------------------------------------------------------

    def lookup(self, name: str) -> _Bind | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def declare(self, name: str, b: _Bind, at: c_ast.Node, param: bool = False) -> None:
        if self.lookup(name) is not None or name in self.prog.macros:
            raise _Unsupported(f"declaration of '{name}' shadowing another variable", at)
        self.scopes[-1][name] = b
        if not param and name not in self.locals:
            self.locals[name] = CVar(name, b.ty, at.coord.line, at.coord.column or 1)

    def visible(self) -> Iterator[tuple[str, _Bind]]:
        seen: set[str] = set()
        for scope in reversed(self.scopes):
            for n, b in scope.items():
                if n not in seen and b.kind != "array":
                    seen.add(n)
                    yield n, b

    def state(self, b: _Bind) -> SSAValue | None:
        return b.value if b.kind == "scalar" else b.off

    def carried_value(self, b: _Bind, at: c_ast.Node | None) -> SSAValue:
        if b.kind == "scalar":
            assert b.value is not None
            return b.value
        return b.off if b.off is not None else self.const(0, INT, at)

    def set_carried(self, b: _Bind, v: SSAValue) -> None:
        if b.kind == "scalar":
            b.value = v
        else:
            b.off = v

    def global_ref(self, name: str) -> SSAValue:
        if name not in self.global_refs:
            g = self.prog.globals[name]
            op = memref.GetGlobalOp(name, g.mtype)
            loc = g.var
            op.location = FileLineColLoc(
                StringAttr(self.prog.filename), IntAttr(loc.line), IntAttr(loc.col)
            )
            self.entry.insert_op_before(
                op, self.entry.first_op
            ) if self.entry.first_op else self.entry.add_op(op)
            self.global_refs[name] = op.results[0]
        self.globals_used.add(name)
        return self.global_refs[name]

    # -- top level -------------------------------------------------------------------

    def lower(self) -> tuple[FuncOp, list[CVar], CType | None]:
        decl = self.fdef.decl
        ftype = decl.type
        if self.fdef.param_decls:
            raise _Unsupported("K&R-style function definition", self.fdef)
        if not isinstance(ftype, c_ast.FuncDecl):
            raise _Unsupported("function definition without a parameter list", decl)
        if not isinstance(ftype.type, c_ast.TypeDecl):
            raise _Unsupported("function returning a pointer", decl)
        ret = self.prog.scalar_type(ftype.type)
        params: list[CVar] = []
        self.scopes.append({})
        arg_types: list[Attribute] = []
        binds: list[tuple[str, _Bind]] = []
        for p in ftype.args.params if ftype.args else []:
            if isinstance(p, c_ast.EllipsisParam):
                raise _Unsupported("variadic function", p)
            if isinstance(p, c_ast.Typename):
                if self.prog.scalar_type(p.type) is None:
                    continue
                raise _Unsupported("unnamed parameter", p)
            ty, _ = self.prog.var_type(p.type)
            if isinstance(p.type, c_ast.ArrayDecl):
                ty = CType(ty.width, ty.signed, True, ty.const)
            params.append(CVar(p.name, ty, p.coord.line, p.coord.column or 1))
            if ty.pointer:
                arg_types.append(MemRefType(IntegerType(ty.width), [DYNAMIC_INDEX]))
                binds.append((p.name, _Bind("ptr", ty)))
            else:
                arg_types.append(ty.ir)
                binds.append((p.name, _Bind("scalar", ty)))
        self.entry = self.block = Block(arg_types=arg_types)
        for (name, b), arg, p in zip(
            binds, self.block.args, ftype.args.params if ftype.args else [], strict=False
        ):
            if b.kind == "ptr":
                b.base = arg
            else:
                b.value = arg
            self.declare(name, b, p, param=True)
        items = [
            i
            for i in (self.fdef.body.block_items or [])
            if not isinstance(i, c_ast.Pragma | c_ast.EmptyStatement)
        ]
        for k, item in enumerate(items):
            if isinstance(item, c_ast.Return):
                if k != len(items) - 1:
                    raise _Unsupported("early 'return'", item)
                self.ret_stmt(item, ret)
            else:
                self.stmt(item)
        if not items or not isinstance(items[-1], c_ast.Return):
            if ret is not None:
                raise _Unsupported("non-void function without a final 'return'", self.fdef.body)
            self.emit(func.ReturnOp(), self.fdef.body)
        results = [] if ret is None else [ret.ir]
        fop = FuncOp(decl.name, (arg_types, results), Region(self.block))
        fop.location = FileLineColLoc(
            StringAttr(self.prog.filename),
            IntAttr(decl.coord.line),
            IntAttr(decl.coord.column or 1),
        )
        return fop, params, ret

    def ret_stmt(self, n: c_ast.Return, ret: CType | None) -> None:
        cs = self.stmts.get(id(n))
        if ret is None:
            if n.expr is not None:
                raise _Unsupported("'return' with a value in a void function", n)
            self.emit(func.ReturnOp(), n)
            return
        if n.expr is None:
            raise _Unsupported("'return' without a value", n)
        v = self.convert(self.rvalue(n.expr), ret, n)
        self.emit(func.ReturnOp(v), n)
        if cs is not None:
            cs.value = v

    # -- statements ------------------------------------------------------------------

    def stmt(self, n: c_ast.Node) -> None:
        if isinstance(n, c_ast.Pragma | c_ast.EmptyStatement):
            return
        cs = self.stmts.get(id(n))
        before = {name: self.state(b) for name, b in self.visible()}
        if isinstance(n, c_ast.Compound):
            self.scopes.append({})
            for item in n.block_items or []:
                if isinstance(item, c_ast.Return):
                    raise _Unsupported("early 'return'", item)
                self.stmt(item)
            self.scopes.pop()
        elif isinstance(n, c_ast.Decl):
            self.decl(n, cs)
        elif isinstance(n, c_ast.For):
            self.for_stmt(n, cs)
        elif isinstance(n, c_ast.While):
            self.while_stmt(n.cond, n.stmt, None, n, cs, do=False)
        elif isinstance(n, c_ast.DoWhile):
            self.while_stmt(n.cond, n.stmt, None, n, cs, do=True)
        elif isinstance(n, c_ast.If):
            self.if_stmt(n, cs)
        elif isinstance(n, c_ast.Return):
            raise _Unsupported("early 'return'", n)
        elif isinstance(n, c_ast.Assignment):
            self.assign(n, cs)
        elif isinstance(n, c_ast.UnaryOp) and n.op in _UPDATE_OPS:
            op = "+=" if n.op.endswith("++") else "-="
            self.assign(
                c_ast.Assignment(op, n.expr, c_ast.Constant("int", "1", n.coord), n.coord), cs
            )
        elif isinstance(n, c_ast.Node) and type(n) in _UNSUPPORTED_STMTS:
            raise _Unsupported(_UNSUPPORTED_STMTS[type(n)], n)
        elif isinstance(n, c_ast.Typedef | c_ast.DeclList):
            raise _Unsupported("local typedef", n)
        else:
            self.rvalue(n)  # an expression statement without effect
        if cs is not None:
            for name, b in self.visible():
                st = self.state(b)
                if st is not None and (name not in before or before[name] is not st):
                    cs.writes[name] = st

    def decl(self, n: c_ast.Decl, cs: CStmt | None) -> None:
        if n.storage:
            raise _Unsupported(f"'{n.storage[0]}' local variable", n)
        if isinstance(n.type, c_ast.FuncDecl):
            raise _Unsupported("local function declaration", n)
        ty, length = self.prog.var_type(n.type)
        if isinstance(n.type, c_ast.ArrayDecl):
            if isinstance(n.type.dim, c_ast.Node) and length is None:
                raise _Unsupported("variable-length array", n)
            init = n.init
            if length is None:
                if not isinstance(init, c_ast.InitList):
                    raise _Unsupported("array without a length", n)
                length = len(init.exprs)
            buf = self.emit(memref.AllocaOp.get(ty.ir, shape=[length]), n).results[0]
            self.declare(n.name, _Bind("array", ty, base=buf), n)
            if init is not None:
                if not isinstance(init, c_ast.InitList) or len(init.exprs) > length:
                    raise _Unsupported("array initialiser that is not a brace list", init)
                values = [self.convert(self.rvalue(e), ty, e) for e in init.exprs]
                values += [self.const(0, ty, init)] * (length - len(values))
                for k, v in enumerate(values):
                    idx = self.emit(arith.ConstantOp(IntegerAttr(k, IndexType())), init).results[0]
                    self.emit(memref.StoreOp.get(v, buf, [idx]), init)
            return
        if ty.pointer:
            if n.init is None:
                raise _Unsupported("pointer local without an initialiser", n)
            p = self.pointer(n.init)
            self.check_elem(ty, p.elem, n.init)
            self.declare(n.name, _Bind("ptr", ty, base=p.base, off=p.off), n)
            if cs is not None:
                cs.target = n.name
            return
        if isinstance(n.init, c_ast.InitList):
            raise _Unsupported("brace initialiser for a scalar", n.init)
        v = (
            self.convert(self.rvalue(n.init), ty, n.init)
            if n.init is not None
            else self.const(0, ty, n)
        )
        self.declare(n.name, _Bind("scalar", ty, value=v), n)
        if cs is not None:
            cs.target = n.name
            if n.init is not None:
                cs.value = v

    def check_elem(self, want: CType, got: CType, at: c_ast.Node) -> None:
        if (want.width, want.signed) != (got.width, got.signed):
            raise _Unsupported(
                f"pointer conversion from '{got.c_name()} *' to '{want.c_name()}'", at
            )

    def assign(self, n: c_ast.Assignment, cs: CStmt | None) -> None:
        lv, op = n.lvalue, n.op
        if (
            isinstance(lv, c_ast.ID)
            and lv.name not in self.prog.macros
            and (b := self.lookup(lv.name))
        ):
            if b.kind == "array":
                raise _Unsupported("assignment to an array", n)
            if b.kind == "ptr":
                self.ptr_assign(b, n)
                if cs is not None:
                    cs.target = lv.name
                return
            cur = _Val(b.value, b.ty) if b.value is not None else None
            v = self.compute(cur, op, n)
            b.value = self.convert(v, b.ty, n)
            if cs is not None:
                cs.target, cs.value = lv.name, b.value
            return
        if isinstance(lv, c_ast.ID) and lv.name in self.prog.globals:
            g = self.prog.globals[lv.name]
            if g.array:
                raise _Unsupported("assignment to an array", n)
            ptr = _Ptr(self.global_ref(lv.name), None, g.var.ctype)
        elif isinstance(lv, c_ast.ArrayRef | c_ast.UnaryOp) and (
            isinstance(lv, c_ast.ArrayRef) or lv.op == "*"
        ):
            ptr = self.element(lv)
        else:
            raise _Unsupported("assignment target", lv)
        if ptr.elem.const:
            raise _Unsupported("store through a pointer to const", n)
        cur = self.load(ptr, lv) if op != "=" else None
        stored = self.convert(self.compute(cur, op, n), ptr.elem, n)
        self.store(ptr, stored, n)
        if cs is not None:
            cs.value = stored

    def compute(self, cur: _Val | None, op: str, n: c_ast.Assignment) -> _Val:
        if op == "=":
            return self.rvalue(n.rvalue)
        assert cur is not None
        return self.binary(op[:-1], cur, self.rvalue(n.rvalue), n)

    def ptr_assign(self, b: _Bind, n: c_ast.Assignment) -> None:
        if n.op == "=":
            p = self.pointer(n.rvalue)
            self.check_elem(b.ty, p.elem, n.rvalue)
            if p.base is not b.base:
                raise _Unsupported("pointer local reassigned to a different array", n)
            b.off = p.off
            return
        if n.op not in ("+=", "-="):
            raise _Unsupported(f"pointer operator '{n.op}'", n)
        delta = self.convert(self.rvalue(n.rvalue), INT, n.rvalue)
        cur = b.off if b.off is not None else self.const(0, INT, n)
        cls = arith.AddiOp if n.op == "+=" else arith.SubiOp
        b.off = self.emit(cls(cur, delta), n).results[0]

    def if_stmt(self, n: c_ast.If, cs: CStmt | None) -> None:
        c = self.cond(n.cond)
        outer = list(self.visible())
        before = {name: (b.value, b.base, b.off) for name, b in outer}
        saved = self.block
        branches: list[tuple[Block, dict[str, tuple[SSAValue | None, ...]]]] = []
        for arm in (n.iftrue, n.iffalse):
            self.block = Block()
            if arm is not None:
                self.scopes.append({})
                self.stmt(arm)
                self.scopes.pop()
            branches.append((self.block, {name: (b.value, b.base, b.off) for name, b in outer}))
            for name, b in outer:
                b.value, b.base, b.off = before[name]
        self.block = saved
        changed = [
            (name, b)
            for name, b in outer
            if any(vals[name] != before[name] for _, vals in branches)
        ]
        for name, b in changed:
            if any(vals[name][1] is not b.base for _, vals in branches):
                raise _Unsupported(f"pointer local '{name}' reassigned to a different array", n)
        for blk, vals in branches:
            self.block = blk
            out = []
            for name, b in changed:
                b.value, b.base, b.off = vals[name]
                out.append(self.carried_value(b, n))
            self.emit(scf.YieldOp(*out), n)
            for name, b in outer:
                b.value, b.base, b.off = before[name]
        self.block = saved
        has_else = n.iffalse is not None or bool(changed)
        types = [INT.ir if b.kind == "ptr" else b.ty.ir for _, b in changed]
        if_op = scf.IfOp(
            c, types, Region(branches[0][0]), Region(branches[1][0]) if has_else else None
        )
        self.emit(if_op, n)
        for (_, b), r in zip(changed, if_op.results, strict=True):
            self.set_carried(b, r)
        if cs is not None:
            cs.op = if_op

    def carried(self, names: list[str]) -> list[tuple[str, _Bind]]:
        out = []
        for name in names:
            b = self.lookup(name)
            if b is not None and b.kind != "array" and name not in self.prog.macros:
                out.append((name, b))
        return out

    def loop_body(
        self, carried: list[tuple[str, _Bind]], args: tuple[SSAValue, ...], at: c_ast.Node
    ) -> list[SSAValue | None]:
        """Bind the carried variables to ``args``; returns the pointer bases to check."""
        bases = [b.base for _, b in carried]
        for (_, b), a in zip(carried, args, strict=True):
            self.set_carried(b, a)
        return bases

    def check_bases(
        self, carried: list[tuple[str, _Bind]], bases: list[SSAValue | None], at: c_ast.Node
    ) -> None:
        for (name, b), base in zip(carried, bases, strict=True):
            if b.base is not base:
                raise _Unsupported(f"pointer local '{name}' reassigned to a different array", at)

    def for_stmt(self, n: c_ast.For, cs: CStmt | None) -> None:
        self.scopes.append({})
        if isinstance(n.init, c_ast.DeclList):
            for d in n.init.decls:
                self.decl(d, None)
        elif n.init is not None:
            if not _is_update(n.init):
                raise _Unsupported("for-loop initialiser without effect", n.init)
            self.stmt(n.init)
        canon = self.canonical(n)
        if canon is None:
            self.while_stmt(n.cond, n.stmt, n.next, n, cs, do=False)
        else:
            self.scf_for(n, cs, *canon)
        self.scopes.pop()

    def canonical(self, n: c_ast.For) -> tuple[str, _Bind, SSAValue, int, bool] | None:
        """(iv, binding, upper bound, step, iv declared outside) for a loop that is an
        ``scf.for``; the upper bound (+1 for ``<=``) is emitted before the loop."""
        init, cond, nxt = n.init, n.cond, n.next
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init:
            iv, outside = init.decls[0].name, False
        elif (
            isinstance(init, c_ast.Assignment)
            and init.op == "="
            and isinstance(init.lvalue, c_ast.ID)
        ):
            iv, outside = init.lvalue.name, True
        else:
            return None
        b = self.lookup(iv)
        if b is None or b.kind != "scalar" or b.ty.width not in (32, 64):
            return None
        if not isinstance(cond, c_ast.BinaryOp):
            return None
        op, lhs, rhs = cond.op, cond.left, cond.right
        if isinstance(rhs, c_ast.ID) and rhs.name == iv and op in (">", ">="):
            op, lhs, rhs = {">": "<", ">=": "<="}[op], rhs, lhs
        if op not in ("<", "<=", "!=") or not (isinstance(lhs, c_ast.ID) and lhs.name == iv):
            return None
        step = self.step_of(iv, nxt)
        if step is None or (op == "!=" and step != 1):
            return None
        body_writes = set(_assigned(n.stmt))
        names, mem = _reads(rhs)
        if (
            iv in body_writes
            or mem
            or iv in names
            or names & body_writes
            or any(x in self.prog.globals and not self.prog.globals[x].array for x in names)
        ):
            return None
        scratch, saved = Block(), self.block
        self.block = scratch
        try:
            ub = self.rvalue(rhs)
        finally:
            self.block = saved
        ok = _common(b.ty, ub.ty) == b.ty and not ub.i1
        if ok and not b.ty.signed:
            # scf.for compares signed: only bounds known to stay below 2^(w-1) are safe.
            lb_c, ub_c = _const_value(b.value), _const_value(ub.v)
            ok = (
                lb_c is not None
                and ub_c is not None
                and 0 <= lb_c < (1 << (b.ty.width - 1)) - step
                and 0 <= ub_c < (1 << (b.ty.width - 1)) - 1
            )
        if not ok:
            for op_ in reversed(list(scratch.ops)):
                op_.erase(safe_erase=False)
            return None
        for op_ in list(scratch.ops):
            op_.detach()
            self.block.add_op(op_)
        ub_v = ub.v
        if op == "<=":
            one = self.const(1, b.ty, rhs)
            ub_v = self.emit(arith.AddiOp(ub_v, one), rhs).results[0]
        return iv, b, ub_v, step, outside

    def step_of(self, iv: str, nxt: c_ast.Node | None) -> int | None:
        def is_iv(x: c_ast.Node) -> bool:
            return isinstance(x, c_ast.ID) and x.name == iv

        def const(x: c_ast.Node) -> int | None:
            if isinstance(x, c_ast.Constant) and x.type == "int":
                try:
                    return _int_literal(x.value)[0]
                except ValueError:
                    return None
            if isinstance(x, c_ast.ID) and x.name in self.prog.macros:
                try:
                    return self.prog.const_eval(x)
                except _Unsupported:
                    return None
            return None

        c: int | None = None
        if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++") and is_iv(nxt.expr):
            c = 1
        elif isinstance(nxt, c_ast.Assignment) and is_iv(nxt.lvalue):
            if nxt.op == "+=":
                c = const(nxt.rvalue)
            elif nxt.op == "=" and isinstance(nxt.rvalue, c_ast.BinaryOp) and nxt.rvalue.op == "+":
                left, right = nxt.rvalue.left, nxt.rvalue.right
                c = const(right) if is_iv(left) else const(left) if is_iv(right) else None
        return c if c is not None and 0 < c < (1 << 31) else None

    def scf_for(
        self,
        n: c_ast.For,
        cs: CStmt | None,
        iv: str,
        ivb: _Bind,
        ub: SSAValue,
        step: int,
        outside: bool,
    ) -> None:
        lb = ivb.value
        assert lb is not None
        st = self.const(step, ivb.ty, n.next)
        carried = [(nm, b) for nm, b in self.carried(_assigned(n.stmt)) if nm != iv]
        inits = [self.carried_value(b, n) for _, b in carried]
        body = Block(arg_types=[ivb.ty.ir, *[v.type for v in inits]])
        saved = self.block
        self.block = body
        ivb.value = body.args[0]
        bases = self.loop_body(carried, body.args[1:], n)
        self.scopes.append({})
        self.stmt(n.stmt)
        self.scopes.pop()
        self.check_bases(carried, bases, n)
        self.emit(scf.YieldOp(*[self.carried_value(b, n) for _, b in carried]), n)
        self.block = saved
        for_op = scf.ForOp(lb, ub, st, inits, body)
        self.emit(for_op, n)
        for (_, b), r in zip(carried, for_op.results, strict=True):
            self.set_carried(b, r)
        ivb.value = lb
        if outside:
            # The C loop leaves i at lb + ceil((ub - lb) / step) * step (or lb if no trip).
            t = ivb.ty
            diff = self.emit(arith.SubiOp(ub, lb), n.cond).results[0]
            one = self.const(1, t, n.cond)
            dm1 = self.emit(arith.SubiOp(diff, one), n.cond).results[0]
            trips = self.emit(arith.DivUIOp(dm1, st), n.cond).results[0]
            trips = self.emit(arith.AddiOp(trips, one), n.cond).results[0]
            adv = self.emit(arith.MuliOp(trips, st), n.cond).results[0]
            last = self.emit(arith.AddiOp(lb, adv), n.cond).results[0]
            runs = self.emit(arith.CmpiOp(lb, ub, "slt"), n.cond).results[0]
            ivb.value = self.emit(arith.SelectOp(runs, last, lb), n.cond).results[0]
        if cs is not None:
            cs.op, cs.iv = for_op, iv

    def while_stmt(
        self,
        cond: c_ast.Node | None,
        body_n: c_ast.Node,
        nxt: c_ast.Node | None,
        n: c_ast.Node,
        cs: CStmt | None,
        do: bool,
    ) -> None:
        names = _assigned(body_n) + _assigned(nxt)
        carried = self.carried(list(dict.fromkeys(names)))
        inits = [self.carried_value(b, n) for _, b in carried]
        types = [v.type for v in inits]
        saved = self.block

        def run_body() -> None:
            self.scopes.append({})
            self.stmt(body_n)
            self.scopes.pop()
            if nxt is not None:
                self.stmt(nxt)

        def condition() -> SSAValue:
            if cond is None:
                return self.emit(arith.ConstantOp(IntegerAttr(1, I1)), n).results[0]
            return self.cond(cond)

        before, after = Block(arg_types=types), Block(arg_types=types)
        self.block = before
        bases = self.loop_body(carried, before.args, n)
        if do:
            run_body()
            self.check_bases(carried, bases, n)
        c = condition()
        self.emit(scf.ConditionOp(c, *[self.carried_value(b, n) for _, b in carried]), n)
        self.block = after
        self.loop_body(carried, after.args, n)
        if not do:
            run_body()
            self.check_bases(carried, bases, n)
        self.emit(scf.YieldOp(*[self.carried_value(b, n) for _, b in carried]), n)
        self.block = saved
        op = scf.WhileOp(inits, types, Region(before), Region(after))
        self.emit(op, n)
        for (_, b), r in zip(carried, op.results, strict=True):
            self.set_carried(b, r)
        if cs is not None:
            cs.op = op

    # -- memory ----------------------------------------------------------------------

    def pointer(self, e: c_ast.Node) -> _Ptr:
        if isinstance(e, c_ast.ID):
            b = self.lookup(e.name) if e.name not in self.prog.macros else None
            if b is not None and b.kind in ("ptr", "array"):
                assert b.base is not None
                return _Ptr(b.base, b.off, CType(b.ty.width, b.ty.signed, const=b.ty.const))
            if b is None and e.name in self.prog.globals and self.prog.globals[e.name].array:
                g = self.prog.globals[e.name]
                return _Ptr(self.global_ref(e.name), None, g.var.ctype)
            self.undeclared(e)
            raise _Unsupported(f"'{e.name}' used as a pointer", e)
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            if self.is_pointer(e.left):
                if self.is_pointer(e.right):
                    raise _Unsupported("pointer subtraction", e)
                p, k = self.pointer(e.left), e.right
            elif e.op == "+" and self.is_pointer(e.right):
                p, k = self.pointer(e.right), e.left
            else:
                raise _Unsupported("integer used as a pointer", e)
            delta = self.convert(self.rvalue(k), INT, k)
            if p.off is None and e.op == "+":
                return _Ptr(p.base, delta, p.elem)
            cur = p.off if p.off is not None else self.const(0, INT, e)
            cls = arith.AddiOp if e.op == "+" else arith.SubiOp
            return _Ptr(p.base, self.emit(cls(cur, delta), e).results[0], p.elem)
        if isinstance(e, c_ast.UnaryOp) and e.op == "&":
            if isinstance(e.expr, c_ast.ArrayRef):
                return self.element(e.expr)
            raise _Unsupported("address of a scalar", e)
        if isinstance(e, c_ast.Cast):
            ty, _ = self.prog.var_type(e.to_type.type)
            p = self.pointer(e.expr)
            if not ty.pointer:
                raise _Unsupported("pointer converted to an integer", e)
            if (ty.width, ty.signed) != (p.elem.width, p.elem.signed):
                raise _Unsupported(f"pointer cast from '{p.elem.c_name()} *' to '{ty.c_name()}'", e)
            return _Ptr(p.base, p.off, CType(p.elem.width, p.elem.signed, const=ty.const))
        raise _Unsupported(f"pointer expression '{type(e).__name__}'", e)

    def is_pointer(self, e: c_ast.Node) -> bool:
        if isinstance(e, c_ast.ID):
            if e.name in self.prog.macros:
                return False
            b = self.lookup(e.name)
            if b is not None:
                return b.kind in ("ptr", "array")
            return e.name in self.prog.globals and self.prog.globals[e.name].array
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            return self.is_pointer(e.left) or self.is_pointer(e.right)
        if isinstance(e, c_ast.UnaryOp) and e.op == "&":
            return True
        if isinstance(e, c_ast.Cast):
            return isinstance(e.to_type.type, c_ast.PtrDecl)
        return False

    def element(self, e: c_ast.ArrayRef | c_ast.UnaryOp) -> _Ptr:
        """The element addressed by ``a[i]`` or ``*p`` (as a pointer with its final offset)."""
        if isinstance(e, c_ast.ArrayRef):
            if not self.is_pointer(e.name):
                raise _Unsupported("subscript of a non-pointer", e)
            p = self.pointer(e.name)
            i = self.convert(self.rvalue(e.subscript), INT, e.subscript)
            off = i if p.off is None else self.emit(arith.AddiOp(p.off, i), e).results[0]
            return _Ptr(p.base, off, p.elem)
        return self.pointer(e.expr)

    def load(self, p: _Ptr, at: c_ast.Node) -> _Val:
        off = p.off if p.off is not None else self.const(0, INT, at)
        idx = self.index(off, at)
        v = self.emit(memref.LoadOp.get(p.base, [idx]), at).results[0]
        return _Val(v, CType(p.elem.width, p.elem.signed))

    def store(self, p: _Ptr, v: SSAValue, at: c_ast.Node) -> None:
        off = p.off if p.off is not None else self.const(0, INT, at)
        idx = self.index(off, at)
        self.emit(memref.StoreOp.get(v, p.base, [idx]), at)

    # -- expressions -----------------------------------------------------------------

    def undeclared(self, e: c_ast.ID) -> None:
        if e.name in self.prog.bad_globals:
            raise _Unsupported(f"global '{e.name}' ({self.prog.bad_globals[e.name]})", e)
        if (
            self.lookup(e.name) is None
            and e.name not in self.prog.globals
            and e.name not in self.prog.macros
        ):
            raise _Unsupported(f"undeclared identifier '{e.name}'", e)

    def rvalue(self, e: c_ast.Node, seen: frozenset[str] = frozenset()) -> _Val:
        if isinstance(e, c_ast.Constant):
            if e.type == "char":
                return _Val(self.const(_char_literal(e.value), INT, e), INT)
            if e.type == "string":
                raise _Unsupported("string literal", e)
            try:
                value, ty = _int_literal(e.value)
            except ValueError:
                raise _Unsupported(f"floating-point constant '{e.value}'", e) from None
            return _Val(self.const(value, ty, e), ty)
        if isinstance(e, c_ast.ID):
            if e.name in self.prog.macros:
                if e.name in seen:
                    raise _Unsupported(f"recursive macro '{e.name}'", e)
                return self.rvalue(self.prog.macros[e.name], seen | {e.name})
            b = self.lookup(e.name)
            if b is not None and b.kind == "scalar":
                assert b.value is not None
                return _Val(b.value, CType(b.ty.width, b.ty.signed))
            if b is None and e.name in self.prog.globals and not self.prog.globals[e.name].array:
                g = self.prog.globals[e.name]
                return self.load(_Ptr(self.global_ref(e.name), None, g.var.ctype), e)
            self.undeclared(e)
            raise _Unsupported(f"pointer or array '{e.name}' used as an integer", e)
        if isinstance(e, c_ast.ArrayRef):
            return self.load(self.element(e), e)
        if isinstance(e, c_ast.UnaryOp):
            return self.unary(e)
        if isinstance(e, c_ast.BinaryOp):
            if e.op in ("&&", "||"):
                a, b2 = self.cond(e.left), self.cond(e.right)
                cls = arith.AndIOp if e.op == "&&" else arith.OrIOp
                return _Val(self.emit(cls(a, b2), e).results[0], INT, i1=True)
            if self.is_pointer(e.left) or self.is_pointer(e.right):
                what = "pointer comparison" if e.op in _CMP else "pointer arithmetic as a value"
                raise _Unsupported(what, e)
            return self.binary(e.op, self.rvalue(e.left), self.rvalue(e.right), e)
        if isinstance(e, c_ast.TernaryOp):
            c = self.cond(e.cond)
            tv, fv = self.rvalue(e.iftrue), self.rvalue(e.iffalse)
            t = _common(tv.ty, fv.ty)
            av, bv = self.convert(tv, t, e), self.convert(fv, t, e)
            return _Val(self.emit(arith.SelectOp(c, av, bv), e).results[0], t)
        if isinstance(e, c_ast.Cast):
            if isinstance(e.to_type.type, c_ast.PtrDecl):
                raise _Unsupported("pointer cast", e)
            to = self.prog.scalar_type(e.to_type.type)
            if to is None:
                raise _Unsupported("cast to void", e)
            v = self.rvalue(e.expr)
            return _Val(self.convert(v, to, e), CType(to.width, to.signed))
        if _is_update(e):
            raise _Unsupported("assignment inside an expression", e)
        if type(e) in _UNSUPPORTED_STMTS:
            raise _Unsupported(_UNSUPPORTED_STMTS[type(e)], e)
        raise _Unsupported(f"expression '{type(e).__name__}'", e)

    def unary(self, e: c_ast.UnaryOp) -> _Val:
        op = e.op
        if op == "*":
            return self.load(self.element(e), e)
        if op == "sizeof":
            if isinstance(e.expr, c_ast.Typename):
                ty = self.prog.scalar_type(e.expr.type)
                size = 1 if ty is None else ty.width // 8
            elif (
                isinstance(e.expr, c_ast.ID)
                and (b := self.lookup(e.expr.name))
                and b.kind == "array"
            ):
                base_type = b.base.type if b.base is not None else None
                assert isinstance(base_type, MemRefType)
                size = b.ty.width // 8 * base_type.get_shape()[0]
            elif self.is_pointer(e.expr):
                size = 4
            else:
                size = self.rvalue(e.expr).ty.width // 8
            return _Val(self.const(size, UINT, e), UINT)
        if op in ("&",):
            raise _Unsupported("address-of used as an integer", e)
        if op in _UPDATE_OPS:
            raise _Unsupported("assignment inside an expression", e)
        if isinstance(e.expr, c_ast.Constant) and op == "-" and e.expr.type == "int":
            value, ty = _int_literal(e.expr.value)
            return _Val(self.const(-value, ty, e), ty)
        v = self.rvalue(e.expr)
        if op == "!":
            zero = self.const(0, _promote(v.ty), e)
            x = self.convert(v, _promote(v.ty), e)
            return _Val(self.emit(arith.CmpiOp(x, zero, "eq"), e).results[0], INT, i1=True)
        t = _promote(v.ty)
        x = self.convert(v, t, e)
        if op == "+":
            return _Val(x, t)
        if op == "-":
            zero = self.const(0, t, e)
            return _Val(self.emit(arith.SubiOp(zero, x), e).results[0], t)
        if op == "~":
            ones = self.const(-1, t, e)
            return _Val(self.emit(arith.XOrIOp(x, ones), e).results[0], t)
        raise _Unsupported(f"unary operator '{op}'", e)

    def binary(self, op: str, a: _Val, b: _Val, at: c_ast.Node) -> _Val:
        if op in ("<<", ">>"):
            t = _promote(a.ty)
            x = self.convert(a, t, at)
            s = self.convert(_Val(self.convert(b, _promote(b.ty), at), _promote(b.ty)), t, at)
            if op == "<<":
                cls: _BinOp = arith.ShLIOp
            else:
                cls = arith.ShRSIOp if t.signed else arith.ShRUIOp
            return _Val(self.emit(cls(x, s), at).results[0], t)
        t = _common(a.ty, b.ty)
        x, y = self.convert(a, t, at), self.convert(b, t, at)
        if op in _CMP:
            pred = _CMP[op][0 if t.signed else 1]
            return _Val(self.emit(arith.CmpiOp(x, y, pred), at).results[0], INT, i1=True)
        if op not in _ARITH:
            raise _Unsupported(f"operator '{op}'", at)
        cls = _ARITH[op][0 if t.signed else 1]
        return _Val(self.emit(cls(x, y), at).results[0], t)


def _const_value(v: SSAValue | None) -> int | None:
    if v is not None and isinstance(v.owner, arith.ConstantOp):
        attr = v.owner.value
        if isinstance(attr, IntegerAttr):
            return int(attr.value.data)
    return None


# ---------------------------------------------------------------------------------------
# Entry points


def _parse_error(e: Exception, parser: c_parser.CParser, filename: str, source: str) -> AquasError:
    m = _LINE_MARK_RE.match(str(e))
    if m is not None:
        loc = SourceLoc(filename, int(m.group("line")), int(m.group("col")))
        return AquasError(f"C syntax error: {m.group('msg')}", loc, source=source)
    msg = str(e).removeprefix(f"{filename}: ")
    try:  # some pycparser errors carry no coordinate: use the next unread token
        tok = parser._peek()
        coord = parser._tok_coord(tok) if tok is not None else None
    except Exception:
        coord = None
    if coord is not None and coord.file == filename:
        loc = SourceLoc(filename, coord.line, coord.column or 1)
        return AquasError(f"C syntax error: {msg}", loc, source=source)
    return AquasError(f"C syntax error: {msg}", filename=filename, source=source)


def _global_decl(prog: _Program, d: c_ast.Decl) -> memref.GlobalOp | None:
    """``memref.global`` for a file-scope integer scalar or 1-D array."""
    if isinstance(d.type, c_ast.FuncDecl) or d.name is None:
        return None
    if "extern" in d.storage:
        raise _Unsupported("'extern' variable", d)
    ty, length = prog.var_type(d.type)
    if ty.pointer:
        raise _Unsupported("global pointer", d)
    array = isinstance(d.type, c_ast.ArrayDecl)
    init = d.init
    if array:
        if init is not None and not isinstance(init, c_ast.InitList):
            raise _Unsupported("array initialiser that is not a brace list", init)
        exprs = list(init.exprs) if isinstance(init, c_ast.InitList) else []
        length = len(exprs) if length is None else length
        if length == 0 or len(exprs) > length:
            raise _Unsupported("array length does not match its initialiser", d)
        values = [prog.const_eval(e) for e in exprs] + [0] * (length - len(exprs))
    else:
        if isinstance(init, c_ast.InitList):
            raise _Unsupported("brace initialiser for a scalar", init)
        values = [0 if init is None else prog.const_eval(init)]
        length = 1
    values = [_wrap(v, ty.width, True) for v in values]
    mtype = MemRefType(ty.ir, [length])
    dense = DenseIntOrFPElementsAttr.from_list(TensorType(ty.ir, [length]), values)
    op = memref.GlobalOp.get(
        StringAttr(d.name),
        mtype,
        dense,
        StringAttr("private" if "static" in d.storage else "public"),
        UnitAttr() if ty.const else None,
    )
    loc = prog.loc(d)
    op.location = FileLineColLoc(StringAttr(prog.filename), IntAttr(loc.line), IntAttr(loc.column))
    var = CVar(d.name, ty, loc.line, loc.column)
    prog.globals[d.name] = _Global(var, mtype, array)
    return op


def _selection(ext: list[c_ast.Node], functions: Collection[str] | None, filename: str) -> set[str]:
    names = [n.decl.name for n in ext if isinstance(n, c_ast.FuncDef)]
    if functions is not None:
        unknown = sorted(set(functions) - set(names))
        if unknown:
            raise AquasError(
                f"no function named {', '.join(repr(u) for u in unknown)} in the file",
                filename=filename,
                hint=f"defined functions: {', '.join(names) or 'none'}",
            )
        return set(functions)
    marked: set[str] = set()
    pending = False
    for n in ext:
        if isinstance(n, c_ast.Pragma):
            pending = pending or n.string.split() == ["aquas", "match"]
        elif isinstance(n, c_ast.FuncDef):
            if pending:
                marked.add(n.decl.name)
            pending = False
        else:
            pending = False
    return marked if marked else set(names)


def parse_c(
    source: str, filename: str = "<input>", functions: Collection[str] | None = None
) -> CProgram:
    """Parse C source and lower every supported function; see the module docstring."""
    clean, pp, macro_text = _preprocess(source, filename)
    text = _Text(source, clean)
    prog = _Program(source, filename)
    parser = c_parser.CParser()
    for name, (body, line, col) in macro_text.items():
        try:
            tree = parser.parse(f"int __aquas_macro = ({body});", filename)
            init = tree.ext[0].init
        except Exception:
            raise AquasError(
                f"macro '{name}' is not an integer constant expression",
                SourceLoc(filename, line, col),
                source=source,
            ) from None
        prog.macros[name] = _relocate(init, line, col)
    try:
        ast = parser.parse(f'{_PRELUDE}# 1 "{filename}"\n{pp}', filename)
    except Exception as e:  # pycparser raises ParseError, and occasionally others
        raise _parse_error(e, parser, filename, source) from None
    ext = list(ast.ext)
    selected = _selection(ext, functions, filename)
    module_ops: list[Operation] = []
    functions_out: list[CFunction] = []
    diagnostics: list[AquasError] = []
    for n in ext[len(_STDINT) + 1 :]:
        if isinstance(n, c_ast.Typedef):
            try:
                ty, _ = prog.var_type(n.type)
                prog.typedefs[n.name] = ty
            except _Unsupported as u:
                prog.typedefs[n.name] = f"typedef '{n.name}' ({u.construct})"
        elif isinstance(n, c_ast.Decl):
            try:
                g = _global_decl(prog, n)
            except _Unsupported as u:
                if n.name is not None:
                    prog.bad_globals[n.name] = u.construct
                continue
            if g is not None:
                module_ops.append(g)
        elif isinstance(n, c_ast.FuncDef):
            fn, diag = _lower_function(prog, text, n, n.decl.name in selected)
            functions_out.append(fn)
            if diag is not None:
                diagnostics.append(diag)
            elif fn.func is not None:
                module_ops.append(fn.func)
    module = ModuleOp(module_ops)
    try:
        module.verify()
    except VerifyException as e:  # a frontend bug, never the user's fault
        raise AquasError(f"generated IR failed verification: {e}", filename=filename) from e
    return CProgram(
        filename,
        source,
        module,
        functions_out,
        diagnostics,
        {name: g.var for name, g in prog.globals.items()},
    )


def _relocate(n: c_ast.Node, line: int, col: int) -> c_ast.Node:
    """Macro bodies report the location of their ``#define``."""
    for _, c in n.children():
        _relocate(c, line, col)
    if n.coord is not None:
        n.coord = type(n.coord)(n.coord.file, line, col)
    return n


def _lower_function(
    prog: _Program, text: _Text, fdef: c_ast.FuncDef, selected: bool
) -> tuple[CFunction, AquasError | None]:
    decl = fdef.decl
    line, col = decl.coord.line, decl.coord.column or 1
    start = text.stmt_start(text.offset(line, col))
    body = fdef.body.coord
    end = text.match(text.offset(body.line, body.column or 1))
    lowerer = _Function(prog, text, fdef, selected)
    lowerer.collect(fdef.body, 0)
    fn = CFunction(decl.name, Span(start, end), line, col, selected, None, [], None,
                   lowerer.order, {}, set())  # fmt: skip
    try:
        bad = _first_unsupported(fdef.body)
        if bad is not None:
            raise _Unsupported(*bad)
        fn.func, fn.params, fn.ret = lowerer.lower()
    except _Unsupported as u:
        for cs in fn.stmts:
            cs.op, cs.value, cs.writes, cs.iv = None, None, {}, None
        loc = prog.loc(u.node if u.node is not None else decl)
        if isinstance(u.node, c_ast.Struct | c_ast.Union):
            # pycparser places a struct type at its declarator; point at the keyword.
            kw = type(u.node).__name__.lower()
            at = text.source.rfind(kw, 0, text.offset(loc.line, loc.column))
            if at >= 0:
                line = text.source.count("\n", 0, at) + 1
                loc = SourceLoc(loc.filename, line, at - text.line_starts[line - 1] + 1)
        diag = AquasError(
            f"unsupported C construct: {u.construct}; function '{decl.name}' is left untouched",
            loc,
            source=prog.source,
        )
        fn.params, fn.ret = _signature(prog, fdef)
        fn.locals, fn.globals_used = lowerer.locals, lowerer.globals_used
        return fn, diag
    except Exception as e:  # a frontend bug: still a located error, never a traceback
        raise AquasError(f"internal error while lowering '{decl.name}': {e}",
                         prog.loc(decl), source=prog.source) from e  # fmt: skip
    fn.locals, fn.globals_used = lowerer.locals, lowerer.globals_used
    return fn, None


def _signature(prog: _Program, fdef: c_ast.FuncDef) -> tuple[list[CVar], CType | None]:
    """Parameters and return type as far as they are expressible (unsupported ones left out)."""
    params: list[CVar] = []
    ftype = fdef.decl.type
    ret: CType | None = None
    if not isinstance(ftype, c_ast.FuncDecl):
        return params, ret
    try:
        ret = prog.scalar_type(ftype.type)
    except _Unsupported:
        ret = None
    for p in ftype.args.params if ftype.args else []:
        if isinstance(p, c_ast.Decl) and p.name:
            try:
                ty, _ = prog.var_type(p.type)
            except _Unsupported:
                continue
            params.append(CVar(p.name, ty, p.coord.line, p.coord.column or 1))
    return params, ret


def parse_c_file(path: str | Path, functions: Collection[str] | None = None) -> CProgram:
    """:func:`parse_c` on a file."""
    p = Path(path)
    try:
        source = p.read_text()
    except OSError as e:
        raise AquasError(f"cannot read C file: {e.strerror}", filename=str(p)) from None
    return parse_c(source, str(p), functions)


def parse_mlir(source: str, filename: str = "<input>") -> ModuleOp:
    """Parse and verify MLIR text in the frontend's form (func/scf/arith/memref)."""
    ctx = Context()
    for d in (Builtin, func.Func, scf.Scf, arith.Arith, memref.MemRef):
        ctx.load_dialect(d)
    try:
        module = Parser(ctx, source, filename).parse_module()
        module.verify()
    except (ParseError, VerifyException) as e:
        raise AquasError(f"invalid MLIR: {e}", filename=filename, source=source) from None
    return module
