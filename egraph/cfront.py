"""C99-subset frontend of the matcher: C kernels -> xDSL ``func``/``scf``/``arith``/``memref``.

pycparser parses; this module types the tree with C's RV32 rules (int = long = 32 bits),
makes every conversion explicit, keeps scalars in SSA form and turns loops and branches into
``scf`` ops.  A function that uses a construct outside the subset is not lowered: it gets one
diagnostic and ``func=None``.  ``docs/c-subset.md`` lists the subset and its IR mapping.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
from collections.abc import Collection, Sequence
from pathlib import Path

from pycparser import c_ast, c_generator, c_parser
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    Builtin,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from aquas.diagnostics import AquasError, SourceLoc
from aquas.egraph.cdecl import (
    _PRELUDE,
    _STDINT,
    CFunction,
    CProgram,
    CStmt,
    CType,
    CVar,
    Span,
    _Global,
    _Program,
    _Unsupported,
    _wrap,
)
from aquas.egraph.cpre import _LINE_MARK_RE, ColumnMap, Preprocessed, _Text, preprocess
from aquas.egraph.cstmt import _first_unsupported, _Function

# ---------------------------------------------------------------------------------------
# Entry points


def _parse_error(
    e: Exception, parser: c_parser.CParser, filename: str, source: str, columns: ColumnMap
) -> AquasError:
    m = _LINE_MARK_RE.match(str(e))
    if m is not None:
        line, col = int(m.group("line")), int(m.group("col"))
        same = m.group("file") == filename
        loc = SourceLoc(m.group("file"), line, columns.column(line, col) if same else col)
        return AquasError(f"C syntax error: {m.group('msg')}", loc, source=source if same else None)
    msg = str(e).removeprefix(f"{filename}: ")
    try:  # some pycparser errors carry no coordinate: use the next unread token
        tok = parser._peek()
        coord = parser._tok_coord(tok) if tok is not None else None
    except Exception:
        coord = None
    if coord is not None and coord.file == filename:
        loc = SourceLoc(filename, coord.line, columns.column(coord.line, coord.column or 1))
        return AquasError(f"C syntax error: {msg}", loc, source=source)
    if msg == "At end of input" and source.strip():
        # nothing left to read: point just past the file's last token
        end = source.rstrip()
        line = end.count("\n") + 1
        loc = SourceLoc(filename, line, len(end) - (end.rfind("\n") + 1) + 1)
        return AquasError("C syntax error: unexpected end of input", loc, source=source)
    return AquasError(f"C syntax error: {msg}", filename=filename, source=source)


def _global_decl(
    prog: _Program, d: c_ast.Decl, symbol: str | None = None
) -> memref.GlobalOp | None:
    """``memref.global`` for a file-scope integer scalar or 1-D array (or, with ``symbol``,
    a function-local ``static`` one, under that symbol). An ``extern`` declaration is a
    global without initial value; the final check defines its storage
    (``prog.extern_defs``) unless the file defines it too."""
    if isinstance(d.type, c_ast.FuncDecl) or d.name is None:
        return None
    extern = "extern" in d.storage
    if extern and d.name in prog.globals:
        return None  # declared again after its definition (or declaration)
    if extern and d.init is not None:
        raise _Unsupported("'extern' variable with an initialiser", d)
    if extern and isinstance(d.type, c_ast.ArrayDecl) and d.type.dim is None:
        raise _Unsupported("'extern' array without a length (its storage is unknown)", d)
    struct = prog.is_aggregate(d.type)
    if struct:  # a struct object: laid out as an array of one struct
        if d.init is not None and not isinstance(d.init, c_ast.InitList):
            raise _Unsupported("struct initialiser that is not a brace list", d.init)
        one = c_ast.Constant("int", "1", d.coord)
        d = c_ast.Decl(
            d.name,
            d.quals,
            d.align,
            d.storage,
            d.funcspec,
            c_ast.ArrayDecl(d.type, one, [], d.coord),
            None if d.init is None else c_ast.InitList([d.init], d.coord),
            d.bitsize,
            d.coord,
        )
    ty, length = prog.var_type(d.type)
    if ty.pointer:
        raise _Unsupported("global pointer", d)
    array = isinstance(d.type, c_ast.ArrayDecl)
    init = d.init
    if array:
        if init is not None and not isinstance(init, c_ast.InitList):
            raise _Unsupported("array initialiser that is not a brace list", init)
        exprs = list(init.exprs) if isinstance(init, c_ast.InitList) else []
        if ty.obj is not None:
            if length is None:
                raise _Unsupported("array of aggregates without a length", d)
            if isinstance(init, c_ast.InitList):
                exprs = prog.flat_init(init, ty, length)
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
    sym = symbol or d.name
    op = memref.GlobalOp.get(
        StringAttr(sym),
        mtype,
        UnitAttr() if extern else dense,  # no initial value: defined elsewhere
        StringAttr("private" if "static" in d.storage else "public"),
        UnitAttr() if ty.const else None,
    )
    loc = prog.loc(d)
    op.location = FileLineColLoc(StringAttr(loc.filename), IntAttr(loc.line), IntAttr(loc.column))
    var = CVar(d.name, ty, loc.line, loc.column)
    prog.globals[sym] = _Global(var, mtype, array and not struct, struct)
    if extern:
        prog.extern_defs[sym] = _extern_definition(d, ty.const and not struct, length)
    else:
        prog.extern_defs.pop(sym, None)
    return op


def _extern_definition(d: c_ast.Decl, const: bool, length: int) -> str:
    """A C definition of an extern global for the final check's translation unit: zero
    storage, or, for a const array of integers (which the check cannot refill), small
    distinct values, so a rewrite reading the wrong elements shows."""
    decl = c_ast.Decl(d.name, d.quals, d.align, [], d.funcspec, d.type, None, d.bitsize, d.coord)
    text = c_generator.CGenerator().visit(decl)
    if const:
        rng = random.Random(f"extern/{d.name}")
        vals = ", ".join(str(rng.randrange(1, 100)) for _ in range(length))
        text += f" = {{{vals}}}" if isinstance(d.type, c_ast.ArrayDecl) else f" = {vals}"
    return text + ";\n"


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
    source: str,
    filename: str = "<input>",
    functions: Collection[str] | None = None,
    include_dirs: Sequence[str | Path] = (),
    defines: Sequence[str] = (),
) -> CProgram:
    """Preprocess (``gcc -E``, see :mod:`aquas.egraph.cpre`), parse and lower every supported
    function of the file itself (not of its headers); see the module docstring.
    ``include_dirs`` extend the include path after the source's own directory; ``defines``
    are ``NAME[=VALUE]`` macro definitions, as the compiler gets them."""
    pre = preprocess(source, filename, include_dirs, defines)
    text = _Text(source)
    prog = _Program(source, filename)
    parser = c_parser.CParser()
    try:
        ast = parser.parse(_PRELUDE + pre.text, filename)
    except Exception as e:  # pycparser raises ParseError, and occasionally others
        raise _parse_error(e, parser, filename, source, pre.columns) from None
    _original_columns(ast, filename, pre)
    # functions defined in headers are not this file's to match or rewrite
    ext = [
        n
        for n in ast.ext
        if not isinstance(n, c_ast.FuncDef) or n.decl.coord is None or n.decl.coord.file == filename
    ]
    selected = _selection(ext, functions, filename)
    module_ops: list[Operation] = []
    functions_out: list[CFunction] = []
    diagnostics: list[AquasError] = []
    defined: dict[str, c_ast.FuncDef] = {}
    for n in ext:
        if isinstance(n, c_ast.FuncDef):
            prog.fdefs.setdefault(n.decl.name, n)
        d = n.decl if isinstance(n, c_ast.FuncDef) else n
        if isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.FuncDecl) and d.name:
            prog.protos.setdefault(d.name, d.type)
    ast_protos = [
        n for n in ast.ext if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.FuncDecl)
    ]
    for d in ast_protos:  # prototypes from headers too
        if d.name:
            prog.protos.setdefault(d.name, d.type)
    for n in ext[len(_STDINT) + 1 :]:
        if isinstance(n, c_ast.Typedef) and prog.is_aggregate(n.type):
            try:
                st = prog.struct_of(n.type)
                if st.name == "anonymous struct":  # messages name it by its typedef
                    st = dataclasses.replace(st, name=n.name)
                prog.aggregates[n.name] = st
            except _Unsupported as u:
                prog.aggregates[n.name] = f"typedef '{n.name}' ({u.construct})"
        elif isinstance(n, c_ast.Typedef) and not isinstance(n.type, c_ast.TypeDecl):
            what = "an array" if isinstance(n.type, c_ast.ArrayDecl) else "a pointer or function"
            prog.typedefs[n.name] = f"typedef '{n.name}' of {what} type"
        elif isinstance(n, c_ast.Typedef):
            try:
                ty, _ = prog.var_type(n.type)
                prog.typedefs[n.name] = ty
            except _Unsupported as u:
                prog.typedefs[n.name] = f"typedef '{n.name}' ({u.construct})"
        elif isinstance(n, c_ast.Decl) and n.name is None and isinstance(n.type, c_ast.Enum):
            # enum { N = 16 }; (the constants of an enum in a typedef or in a variable's
            # type register when the type is read); a refused one says why at its uses
            with contextlib.suppress(_Unsupported):
                prog.enum(n.type)
        elif isinstance(n, c_ast.Decl) and n.name is None and isinstance(n.type, c_ast.Struct):
            # a struct definition registers its tag (a refused one says why at its uses)
            with contextlib.suppress(_Unsupported):
                prog.struct(n.type)
        elif isinstance(n, c_ast.Decl):
            try:
                deep = _too_deep(n)
                if deep is not None:
                    raise _nesting_error(deep)
                g = _global_decl(prog, n)
            except _Unsupported as u:
                if n.name is not None:
                    prog.bad_globals[n.name] = u.construct
                continue
            if g is not None:
                # a definition after an extern declaration replaces it
                same = [k for k, o in enumerate(module_ops) if isinstance(o, memref.GlobalOp)
                        and o.sym_name == g.sym_name]  # fmt: skip
                if same:
                    module_ops[same[0]] = g
                else:
                    module_ops.append(g)
        elif isinstance(n, c_ast.FuncDef):
            first = defined.setdefault(n.decl.name, n)
            if first is not n:  # C forbids it; the first definition is the one matched
                diagnostics.append(_redefinition(prog, n, first))
                continue
            fn, diag = _lower_function(prog, text, n, n.decl.name in selected)
            functions_out.append(fn)
            if diag is not None:
                diagnostics.append(diag)
            elif fn.func is not None:
                module_ops.extend(prog.local_globals)  # its function-local statics
                module_ops.append(fn.func)
            prog.local_globals = []
    # extern globals the file never defines, as the file ends: all of them, because the
    # final check compiles the whole file and another function may use one
    extern_defs = [prog.extern_defs[g] for g in sorted(prog.extern_defs)]
    for fn in functions_out:
        fn.extern_defs = extern_defs
    called = {
        op.callee.root_reference.data
        for f in module_ops
        if isinstance(f, func.FuncOp)
        for op in f.walk()
        if isinstance(op, func.CallOp)
    }
    externs = [d for name, d in prog.externs.items() if name in called]
    module = ModuleOp(module_ops + externs)
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
        pre.dependencies,
        {
            **{f"struct {k}": v for k, v in prog.structs.items() if not isinstance(v, str)},
            **{k: v for k, v in prog.aggregates.items() if not isinstance(v, str)},
        },
    )


def _redefinition(prog: _Program, n: c_ast.FuncDef, first: c_ast.FuncDef) -> AquasError:
    loc, at = prog.loc(n.decl), prog.loc(first.decl)
    return AquasError(
        f"redefinition of function '{n.decl.name}' (first defined at line {at.line}); "
        "this definition is left untouched",
        loc,
        source=prog.source_of(loc),
    )


def _original_columns(ast: c_ast.Node, filename: str, pre: Preprocessed) -> None:
    """Coordinates in the file itself get their original columns (line markers already gave
    the lines).  Coordinates may be shared between nodes: each node gets a new one."""
    done: dict[int, object] = {}  # pycparser's Coord (its module differs across versions)
    stack = [ast]
    while stack:
        n = stack.pop()
        c = n.coord
        if c is not None and c.file == filename and c.column:
            if id(c) not in done:
                done[id(c)] = type(c)(c.file, c.line, pre.columns.column(c.line, c.column))
            n.coord = done[id(c)]
        stack.extend(child for _, child in n.children())


# Nesting of statements and expressions in one function or initialiser.  The lowering and
# the matcher recurse over it; real code stays far below (a hand-unrolled 64-term sum is 65
# levels deep), and a deeper tree is one function's diagnostic instead of a RecursionError.
MAX_NESTING = 200


def _too_deep(n: c_ast.Node) -> c_ast.Node | None:
    """The first node found deeper than :data:`MAX_NESTING` levels under ``n`` (iterative)."""
    stack = [(n, 0)]
    while stack:
        x, d = stack.pop()
        if d > MAX_NESTING:
            return x
        stack.extend((c, d + 1) for _, c in x.children())
    return None


def _nesting_error(deep: c_ast.Node) -> _Unsupported:
    return _Unsupported(
        f"statements or expressions nested more than {MAX_NESTING} levels deep "
        "(the frontend's limit, aquas.egraph.cfront.MAX_NESTING)",
        deep,
    )


def _lower_function(
    prog: _Program, text: _Text, fdef: c_ast.FuncDef, selected: bool
) -> tuple[CFunction, AquasError | None]:
    decl = fdef.decl
    line, col = decl.coord.line, decl.coord.column or 1
    start = text.stmt_start(text.offset(line, col))
    body = fdef.body.coord
    end = text.match(text.offset(body.line, body.column or 1))
    lowerer = _Function(prog, text, fdef, selected)
    deep = _too_deep(fdef.body)
    if deep is None:
        lowerer.collect(fdef.body, 0)
    fn = CFunction(decl.name, Span(start, end), line, col, selected, None, [], None,
                   lowerer.order, {}, set())  # fmt: skip
    try:
        if deep is not None:
            raise _nesting_error(deep)
        bad = _first_unsupported(fdef.body)
        if bad is not None:
            raise _Unsupported(*bad)
        fn.func, fn.params, fn.ret = lowerer.lower()
        # a frontend bug in this function must not fail the whole file's verification below
        _verify_alone(fn.func, prog)
    except _Unsupported as u:
        for cs in fn.stmts:
            cs.op, cs.value, cs.writes, cs.iv = None, None, {}, None
        loc = prog.loc(u.node if u.node is not None else decl)
        if isinstance(u.node, c_ast.Struct | c_ast.Union) and loc.filename == prog.filename:
            # pycparser places a struct type at its declarator; point at the keyword.
            kw = type(u.node).__name__.lower()
            at = text.source.rfind(kw, 0, text.offset(loc.line, loc.column))
            if at >= 0:
                line = text.source.count("\n", 0, at) + 1
                loc = SourceLoc(loc.filename, line, at - text.line_starts[line - 1] + 1)
        diag = AquasError(
            f"unsupported C construct: {u.construct}; function '{decl.name}' is left untouched",
            loc,
            source=prog.source_of(loc),
        )
        fn.params, fn.ret = _signature(prog, fdef)
        fn.locals, fn.globals_used = lowerer.locals, lowerer.globals_used
        return fn, diag
    except Exception as e:  # a frontend bug: this function's located diagnostic, never a traceback
        for cs in fn.stmts:
            cs.op, cs.value, cs.writes, cs.iv = None, None, {}, None
        fn.func = None
        diag = AquasError(
            f"internal error while lowering '{decl.name}' ({type(e).__name__}: {e}); the "
            "function is left untouched",
            prog.loc(decl),
            source=prog.source,
            hint="please report this as a bug, with the C file",
        )
        return fn, diag
    fn.locals, fn.globals_used = lowerer.locals, lowerer.globals_used
    fn.global_vars = {
        g: (prog.globals[g].var, _global_kind(prog.globals[g]))
        for g in lowerer.globals_used
        if g in prog.globals
    }
    return fn, None


def _global_kind(g: _Global) -> str:
    return "array" if g.array else "struct" if g.struct else "scalar"


def _verify_alone(fop: func.FuncOp, prog: _Program) -> None:
    """Verify one function in a module of its own with the opaque callees' declarations
    (calls are verified against a symbol table)."""
    scratch = ModuleOp([d.clone() for d in prog.externs.values()])
    scratch.body.block.add_op(fop)
    try:
        scratch.verify()
    finally:
        fop.detach()


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


def parse_c_file(
    path: str | Path,
    functions: Collection[str] | None = None,
    include_dirs: Sequence[str | Path] = (),
    defines: Sequence[str] = (),
) -> CProgram:
    """:func:`parse_c` on a file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise AquasError(f"cannot read C file: {e.strerror}", filename=str(p)) from None
    try:
        source = data.decode()
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise AquasError(
            f"C file is not UTF-8 text: {e.reason} (byte 0x{data[e.start]:02x})",
            SourceLoc(str(p), line, col),
        ) from None
    return parse_c(source, str(p), functions, include_dirs, defines)


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


__all__ = [
    "CFunction",
    "CProgram",
    "CStmt",
    "CType",
    "CVar",
    "Span",
    "parse_c",
    "parse_c_file",
    "parse_mlir",
]
