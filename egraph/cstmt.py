"""C frontend, statements and loops: the statement structure of a function body (with
source extents for the rewriter), SSA form for scalars, and ``scf`` loops and branches."""

from __future__ import annotations

from pycparser import c_ast
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    UnrealizedConversionCastOp,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from aquas.egraph import clayout
from aquas.egraph.ccall import _Calls, _returns
from aquas.egraph.cdecl import (
    I1,
    INT,
    CStmt,
    CType,
    CVar,
    Span,
    _common,
    _int_literal,
    _Program,
    _Unsupported,
    _wrap,
)
from aquas.egraph.cexpr import (
    _UNSUPPORTED_STMTS,
    _UPDATE_OPS,
    _Bind,
    _is_update,
    _Ptr,
    _Val,
)
from aquas.egraph.cpre import _Text

# Elements of a local array with an initialiser: each element is one store in the IR (the
# rest zero-filled), about 0.1 ms apiece, so the limit keeps one declaration under a second.
MAX_INITIALISED_LOCAL = 4096


def _comma_items(n: c_ast.Node) -> list[c_ast.Node]:
    """The operands of a comma expression in evaluation order (nested ones flattened); a
    non-comma expression is its own single item."""
    if isinstance(n, c_ast.ExprList):
        return [x for e in n.exprs for x in _comma_items(e)]
    return [n]


def _first_unsupported(body: c_ast.Node) -> tuple[str, c_ast.Node] | None:
    """The syntactically unsupported construct that comes first in the source."""
    found: list[tuple[int, int, str, c_ast.Node]] = []
    statements = _statement_positions(body)
    sequenced, refused = _sequenced_updates(body)

    def visit(n: c_ast.Node) -> None:
        what = _UNSUPPORTED_STMTS.get(type(n))
        if isinstance(n, c_ast.FuncCall):
            what = None  # inlined or opaque (egraph/ccall.py), or refused where it is
        elif isinstance(n, c_ast.Constant) and n.type == "string":
            what = "string literal"
        elif isinstance(n, c_ast.Constant) and n.type in ("float", "double", "long double"):
            what = "floating-point constant"
        elif isinstance(n, c_ast.TypeDecl) and "volatile" in n.quals:
            what = "'volatile' qualifier"
        elif isinstance(n, c_ast.IdentifierType) and {"float", "double"} & set(n.names):
            what = "floating-point type"
        elif isinstance(n, c_ast.ExprList) and id(n) in statements:
            what = None  # a comma expression standing as a statement: its operands in order
        elif _is_update(n) and id(n) not in statements and id(n) not in sequenced:
            what = refused.get(id(n), "assignment inside an expression")
        if what is not None and n.coord is not None:
            found.append((n.coord.line, n.coord.column or 1, what, n))
        children = [c for _, c in n.children()]
        if isinstance(n, c_ast.FuncCall) and n.args is not None:  # arguments, not a comma
            children = [n.name, *n.args.exprs]
        for child in children:
            visit(child)

    visit(body)
    if not found:
        return None
    _, _, what, node = min(found, key=lambda t: (t[0], t[1]))
    return what, node


def _full_expressions(body: c_ast.Node) -> tuple[list[c_ast.Node], list[c_ast.Node]]:
    """(the full expressions of a body whose evaluation the frontend orders: expression
    statements, initialisers, 'return' and 'if' operands, a 'for' loop's init and step;
    the loop conditions, evaluated again on every iteration)."""
    full: list[c_ast.Node] = []
    conds: list[c_ast.Node] = []

    def stmt(x: c_ast.Node | None) -> None:
        if x is None or isinstance(x, c_ast.Pragma | c_ast.EmptyStatement):
            return
        if isinstance(x, c_ast.Compound):
            for item in x.block_items or []:
                stmt(item)
        elif isinstance(x, c_ast.Decl):
            if isinstance(x.init, c_ast.InitList):
                full.extend(x.init.exprs)
            elif x.init is not None:
                full.append(x.init)
        elif isinstance(x, c_ast.DeclList):
            for d in x.decls:
                stmt(d)
        elif isinstance(x, c_ast.For):
            stmt(x.init)
            if x.cond is not None:
                conds.append(x.cond)
            if x.next is not None:
                full.extend(_comma_items(x.next))
            stmt(x.stmt)
        elif isinstance(x, c_ast.While | c_ast.DoWhile):
            conds.append(x.cond)
            stmt(x.stmt)
        elif isinstance(x, c_ast.If):
            full.append(x.cond)
            stmt(x.iftrue)
            stmt(x.iffalse)
        elif isinstance(x, c_ast.Return):
            if x.expr is not None:
                full.append(x.expr)
        elif isinstance(x, c_ast.Label | c_ast.Case | c_ast.Default):
            for s in getattr(x, "stmts", None) or [getattr(x, "stmt", None)]:
                stmt(s)
        elif isinstance(x, c_ast.Switch):
            full.append(x.cond)
            stmt(x.stmt)
        elif not isinstance(x, c_ast.Break | c_ast.Continue | c_ast.Goto | c_ast.Typedef):
            full.extend(_comma_items(x))  # the comma operator sequences its operands

    stmt(body)
    return full, conds


def _sequenced_updates(body: c_ast.Node) -> tuple[set[int], dict[int, str]]:
    """Assignments and ``++``/``--`` used as values inside a full expression: (ids of those
    the frontend lowers, in evaluation order with the side effect right after the read;
    id -> why the others are refused).  Admitted: an update of a scalar variable that the
    rest of the full expression neither reads nor writes (C leaves that unsequenced, or
    the order would matter), not inside an operand evaluated only conditionally (the right
    of ``&&``/``||``, the arms of ``?:``), and not in a loop condition."""
    ok: set[int] = set()
    bad: dict[int, str] = {}
    full, conds = _full_expressions(body)

    def updates(x: c_ast.Node, cond: bool, out: list[tuple[c_ast.Node, bool]]) -> None:
        if _is_update(x):
            out.append((x, cond))
        if isinstance(x, c_ast.BinaryOp) and x.op in ("&&", "||"):
            updates(x.left, cond, out)
            updates(x.right, True, out)
            return
        if isinstance(x, c_ast.TernaryOp):
            updates(x.cond, cond, out)
            updates(x.iftrue, True, out)
            updates(x.iffalse, True, out)
            return
        for _, c in x.children():
            updates(c, cond, out)

    def ids(x: c_ast.Node, name: str, skip: c_ast.Node | None, out: list[c_ast.ID]) -> None:
        if x is skip:
            return
        if isinstance(x, c_ast.ID) and x.name == name:
            out.append(x)
        children = [c for _, c in x.children()]
        if isinstance(x, c_ast.StructRef):
            children = [x.name]  # not the member's name
        elif isinstance(x, c_ast.FuncCall):
            children = list(x.args.exprs) if x.args is not None else []
        for c in children:
            ids(c, name, skip, out)

    # A loop condition is evaluated before every trip (``while (n--)``): its updates are
    # lowered like a full expression's, in the loop's condition block, so they happen on
    # every evaluation, the last (failing) one included.
    cond_ids = {id(c) for c in conds}
    for root in full + conds:
        found: list[tuple[c_ast.Node, bool]] = []
        updates(root, False, found)
        for u, cond in found:
            if u is root and id(root) not in cond_ids:
                continue  # the statement itself
            target = u.lvalue if isinstance(u, c_ast.Assignment) else u.expr
            if not isinstance(target, c_ast.ID):
                bad[id(u)] = "assignment to memory inside an expression"
            elif cond:
                bad[id(u)] = (
                    f"'{target.name}' assigned in an operand evaluated only conditionally "
                    "(&&, ||, ?:)"
                )
            else:
                others: list[c_ast.ID] = []
                ids(root, target.name, u, others)
                if others:
                    bad[id(u)] = (
                        f"'{target.name}' assigned and also read or assigned elsewhere in the "
                        "same expression (unsequenced in C)"
                    )
                else:
                    ok.add(id(u))
    return ok, bad


def _statement_positions(body: c_ast.Node) -> set[int]:
    """ids of the nodes that stand as statements (where an assignment may appear)."""
    allowed: set[int] = set()

    def collect(x: c_ast.Node) -> None:
        here: list[c_ast.Node | None] = []
        if isinstance(x, c_ast.Compound):
            here = list(x.block_items or [])
        elif isinstance(x, c_ast.For):
            here = [x.init, x.next, x.stmt]
        elif isinstance(x, c_ast.While | c_ast.DoWhile):
            here = [x.stmt]
        elif isinstance(x, c_ast.If):
            here = [x.iftrue, x.iffalse]
        for h in here:
            allowed.add(id(h))
            if isinstance(h, c_ast.ExprList):  # ``i++, p++``: each operand is a statement
                allowed.update(id(e) for e in _comma_items(h))
                allowed.update(id(e) for e in h.exprs)
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


def _has_member(n: c_ast.Node) -> bool:
    stack = [n]
    while stack:
        x = stack.pop()
        if isinstance(x, c_ast.StructRef):
            return True
        stack.extend(c for _, c in x.children())
    return False


def _reads(n: c_ast.Node) -> tuple[set[str], bool]:
    """(identifiers read, whether memory is read) of an expression."""
    names: set[str] = set()
    mem = False

    def visit(x: c_ast.Node) -> None:
        nonlocal mem
        if isinstance(x, c_ast.ID):
            names.add(x.name)
        elif isinstance(x, c_ast.ArrayRef | c_ast.StructRef | c_ast.FuncCall) or (
            isinstance(x, c_ast.UnaryOp) and x.op == "*"
        ):
            mem = True
        for _, c in x.children():
            visit(c)

    visit(n)
    return names, mem


class _Function(_Calls):
    """Lowers one function definition."""

    def __init__(self, prog: _Program, text: _Text, fdef: c_ast.FuncDef, selected: bool):
        self.prog = prog
        self.text = text
        self.fdef = fdef
        self.selected = selected
        self.sequenced: set[int] = set()  # set by lower(), after the nesting check
        self.scopes: list[dict[str, _Bind]] = []
        self.locals: dict[str, CVar] = {}
        self.globals_used: set[str] = set()
        self.stmts: dict[int, CStmt] = {}
        self.order: list[CStmt] = []
        self.owned: set[Operation] = set()  # ops some statement's ``ops`` holds
        self.block = Block()
        self.entry = self.block
        self.global_refs: dict[str, SSAValue] = {}
        self.inline_stack: list[str] = []
        self.views: dict[tuple[SSAValue, int], SSAValue] = {}
        self.views_of: dict[SSAValue, SSAValue] = {}
        self.inline_at: c_ast.Node | None = None
        self.no_stores = 0  # > 0: inside an inlined helper after a conditional 'return'

    # -- statement structure (independent of lowering) --------------------------------

    def once(self, n: c_ast.Node) -> bool:
        """``do { ... } while (0)`` (a constant false condition): the body runs once, a
        block of its own (the statement macros' idiom)."""
        if not isinstance(n, c_ast.DoWhile):
            return False
        try:
            return self.prog.const_eval(n.cond) == 0
        except _Unsupported:
            return False

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
        if self.once(n):  # do { ... } while (0): the macro idiom, a plain block
            self.collect(n.stmt, depth)
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

    # -- top level -------------------------------------------------------------------

    def lower(self) -> tuple[FuncOp, list[CVar], CType | None]:
        self.sequenced = _sequenced_updates(self.fdef.body)[0]
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
            if isinstance(p, c_ast.ID):  # an identifier list: a K&R declarator
                raise _Unsupported(f"parameter '{p.name}' without a type", p)
            if isinstance(p, c_ast.Typename):
                if self.prog.scalar_type(p.type) is None:
                    continue
                raise _Unsupported("unnamed parameter", p)
            ty, _ = self.prog.var_type(p.type)
            if isinstance(p.type, c_ast.ArrayDecl):
                ty = CType(ty.width, ty.signed, True, ty.const, obj=ty.obj)
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
        early = any(
            isinstance(i, c_ast.If) and (_returns(i.iftrue) or _returns(i.iffalse)) for i in items
        )
        selected = early and ret is not None and isinstance(items[-1], c_ast.Return)
        if selected:
            # 'if (c) return a; ... return b;' as for an inlined helper: c ? a : (...)
            v = self.inline_items(items, ret, self.fdef)
            assert v is not None
            self.emit(func.ReturnOp(v), items[-1])
            cs = self.stmts.get(id(items[-1]))
            if cs is not None:
                cs.value = v
            items = []
        for k, item in enumerate(items):
            if isinstance(item, c_ast.Return):
                if k != len(items) - 1:
                    raise _Unsupported("early 'return'", item)
                self.ret_stmt(item, ret)
            else:
                self.stmt(item)
        if not selected and (not items or not isinstance(items[-1], c_ast.Return)):
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
        blk, last = self.block, self.block.last_op
        self.lower_stmt(n, cs)
        if cs is not None and self.block is blk:  # the ops it added that no inner one did
            op = last.next_op if last is not None else blk.first_op
            while op is not None:
                if op not in self.owned:
                    self.owned.add(op)
                    cs.ops.append(op)
                op = op.next_op

    def lower_stmt(self, n: c_ast.Node, cs: CStmt | None) -> None:
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
            self.counted_while(n, cs)
        elif self.once(n):
            self.stmt(c_ast.Compound([n.stmt], n.coord))  # a scope of its own
        elif isinstance(n, c_ast.DoWhile):
            self.while_stmt(n.cond, n.stmt, None, n, cs, do=True)
        elif isinstance(n, c_ast.If):
            self.if_stmt(n, cs)
        elif isinstance(n, c_ast.Return):
            raise _Unsupported("early 'return'", n)
        elif isinstance(n, c_ast.Assignment):
            self.assign(n, cs)
        elif isinstance(n, c_ast.FuncCall):
            self.call_stmt(n)
        elif isinstance(n, c_ast.ExprList):  # the comma operator: its operands in order
            for e in _comma_items(n):
                self.stmt(e)
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
        if n.storage == ["static"] and isinstance(n.type, c_ast.ArrayDecl):
            self.static_local(n)
            return
        if n.storage:
            what = "scalar" if n.storage == ["static"] else "variable"
            raise _Unsupported(f"'{n.storage[0]}' local {what}", n)
        if isinstance(n.type, c_ast.FuncDecl):
            raise _Unsupported("local function declaration", n)
        if self.prog.is_aggregate(n.type):
            self.struct_local(n)
            return
        ty, length = self.prog.var_type(n.type)
        if isinstance(n.type, c_ast.ArrayDecl):
            if isinstance(n.type.dim, c_ast.Node) and length is None:
                raise _Unsupported("variable-length array", n)
            init = n.init
            if length is None:
                if not isinstance(init, c_ast.InitList):
                    raise _Unsupported("array without a length", n)
                length = len(init.exprs)
            if init is not None and length > MAX_INITIALISED_LOCAL:
                raise _Unsupported(
                    f"initialised local array of {length} elements (more than the frontend's "
                    f"limit of {MAX_INITIALISED_LOCAL}, aquas.egraph.cstmt.MAX_INITIALISED_LOCAL)",
                    n,
                )
            buf = self.emit(memref.AllocaOp.get(ty.ir, shape=[length]), n).results[0]
            self.declare(n.name, _Bind("array", ty, base=buf), n)
            if init is not None:
                if not isinstance(init, c_ast.InitList) or len(init.exprs) > length:
                    raise _Unsupported("array initialiser that is not a brace list", init)
                exprs = list(init.exprs)
                if ty.obj is not None:
                    exprs = self.prog.flat_init(init, ty, length)
                values = [self.convert(self.rvalue(e), ty, e) for e in exprs]
                values += [self.const(0, ty, init)] * (length - len(values))
                for k, v in enumerate(values):
                    idx = self.emit(arith.ConstantOp(IntegerAttr(k, IndexType())), init).results[0]
                    self.emit(memref.StoreOp.get(v, buf, [idx]), init)
            return
        if ty.pointer:
            if n.init is None:
                raise _Unsupported("pointer local without an initialiser", n)
            p = self.pointer(n.init)
            self.check_elem(ty, p, n.init)
            if _has_member(n.init):
                p = self.rebase(p, n.name, n.init)
            self.declare(n.name, _Bind("ptr", ty, base=p.base, off=p.off), n)
            if cs is not None:
                cs.target = n.name
            return
        if isinstance(n.init, c_ast.InitList):
            raise _Unsupported("brace initialiser for a scalar", n.init)
        if isinstance(n.init, c_ast.FuncCall):
            v = self.convert(self.call_result(n.init), ty, n.init)
        elif n.init is not None:
            v = self.convert(self.rvalue(n.init), ty, n.init)
        else:
            v = self.const(0, ty, n)
        self.declare(n.name, _Bind("scalar", ty, value=v), n)
        if cs is not None:
            cs.target = n.name
            if n.init is not None:
                cs.value = v

    def static_local(self, n: c_ast.Decl) -> None:
        """A function-local ``static`` array is a global of its own (``memref.global`` named
        ``function.name``; its initialiser is constant data, as at file scope) that only
        its scope names: an ISAX operand like a global, spelled by its C name at the call
        site (the region that uses it is in its scope)."""
        from aquas.egraph.cfront import _global_decl  # (cfront imports this module)

        if self.inline_at is not None:
            raise _Unsupported("'static' local array of an inlined helper", n)
        base = f"{self.fdef.decl.name}.{n.name}"
        symbol, k = base, 0
        while symbol in self.prog.globals or symbol in self.prog.bad_globals:
            k += 1
            symbol = f"{base}.{k}"
        op = _global_decl(self.prog, n, symbol)
        assert op is not None
        self.prog.local_globals.append(op)
        g = self.prog.globals[symbol]
        if g.struct or not g.array or g.var.ctype.obj is not None:
            raise _Unsupported("'static' local array of structs", n)
        self.declare(n.name, _Bind("array", g.var.ctype, base=self.global_ref(symbol)), n)

    def enter_helper(self, call: c_ast.FuncCall) -> object:
        """A scope of its own for an inlined helper; its ops get the call's location."""
        saved = (self.scopes, dict(self.locals), self.inline_at)
        self.scopes = [{}]
        if self.inline_at is None:
            self.inline_at = call
        return saved

    def leave_helper(self, saved: object) -> None:
        assert isinstance(saved, tuple)
        self.scopes, self.locals, self.inline_at = saved

    def struct_local(self, n: c_ast.Decl) -> None:
        """A struct local lives in memory (``memref.alloca`` of its units); an initialiser
        stores every unit (members it does not list are zero)."""
        obj = self.prog.struct_of(n.type)
        w = self.prog.leaf_width(obj, n)
        units = clayout.units(obj, w)
        const = "const" in n.type.quals
        ty = CType(w, True, const=const, obj=obj)
        buf = self.emit(memref.AllocaOp.get(ty.ir, shape=[units]), n).results[0]
        self.declare(n.name, _Bind("object", ty, base=buf), n)
        if n.init is None:
            return
        if not isinstance(n.init, c_ast.InitList):
            raise _Unsupported("struct initialised from another struct", n.init)
        exprs = self.prog.flat_init(c_ast.InitList([n.init], n.init.coord), ty, units)
        for k, e in enumerate(exprs):
            v = self.convert(self.rvalue(e), CType(w, True), e)
            idx = self.emit(arith.ConstantOp(IntegerAttr(k, IndexType())), n.init).results[0]
            self.emit(memref.StoreOp.get(v, buf, [idx]), n.init)

    def pointer_store(self, lv: c_ast.StructRef, n: c_ast.Assignment) -> None:
        """``f->coef = coef;``: the pointer's 32-bit address (a cast of memref and
        element offset) stored in the pointer member."""
        place = self.place(lv)
        target = place.obj
        assert isinstance(target, clayout.Pointer)
        if n.op != "=":
            raise _Unsupported(f"pointer member updated with '{n.op}'", n)
        if place.elem.const:
            raise _Unsupported("store through a pointer to const", n)
        if self.no_stores:
            raise _Unsupported("store after a conditional 'return' (returns become selections)", n)
        p = self.pointer(n.rvalue)
        t = target.target
        got = p.obj if p.obj is not None else clayout.Scalar(p.elem.width, p.elem.signed)
        if got != t:
            what = clayout.describe(got)
            raise _Unsupported(
                f"'{what} *' stored in a '{clayout.describe(target)}' member", n.rvalue
            )
        off = p.off if p.off is not None else self.const(0, INT, n)
        addr = self.emit(UnrealizedConversionCastOp.get([p.base, off], [IntegerType(32)]), n)
        self.store(_Ptr(place.base, place.off, CType(32, False)), addr.results[0], n)

    def rebase(self, p: _Ptr, name: str, at: c_ast.Node) -> _Ptr:
        """A pointer local initialised from a struct member's address (``&f->delay[f->pos]``,
        ``f->coef``) gets a memref of its own: ``unrealized_conversion_cast(base, offset)``
        tagged with the local's name. The matcher names that address after the local
        when nothing assigns it again (its value then holds wherever it is in scope), so a
        call site can pass ``x`` instead of an address built from values loaded earlier."""
        off = p.off if p.off is not None else self.const(0, INT, at)
        t = p.base.type
        op = UnrealizedConversionCastOp.get([p.base, off], [t])
        op.attributes["aquas.local"] = StringAttr(name)
        self.emit(op, at)
        return _Ptr(op.results[0], None, p.elem, p.obj)

    def call_result(self, e: c_ast.FuncCall) -> _Val:
        v = self.call_stmt(e)
        if v is None:
            raise _Unsupported("value of a void function used", e)
        return v

    def check_elem(self, want: CType, p: _Ptr, at: c_ast.Node) -> None:
        got = p.elem
        if want.obj is not None or p.obj is not None:
            if want.obj != p.obj:
                what = clayout.describe(p.obj) if p.obj is not None else got.c_name()
                raise _Unsupported(f"pointer conversion from '{what} *' to '{want.c_name()}'", at)
            return
        if (want.width, want.signed) != (got.width, got.signed):
            raise _Unsupported(
                f"pointer conversion from '{got.c_name()} *' to '{want.c_name()}'", at
            )

    def assign(self, n: c_ast.Assignment, cs: CStmt | None) -> None:
        lv, op = n.lvalue, n.op
        if isinstance(lv, c_ast.ID) and (b := self.lookup(lv.name)):
            if b.kind == "array":
                raise _Unsupported("assignment to an array", n)
            if b.kind == "object":
                raise _Unsupported("assignment of a whole struct", n)
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
            if g.array or g.struct:
                raise _Unsupported(f"assignment to an {'array' if g.array else 'struct'}", n)
            ptr = _Ptr(self.global_ref(lv.name), None, g.var.ctype)
        elif isinstance(lv, c_ast.ArrayRef | c_ast.StructRef | c_ast.UnaryOp) and (
            not isinstance(lv, c_ast.UnaryOp) or lv.op == "*"
        ):
            if isinstance(lv, c_ast.StructRef) and isinstance(
                self.static_type(lv), clayout.Pointer
            ):
                self.pointer_store(lv, n)
                return
            ptr = self.scalar_place(lv)
        else:
            raise _Unsupported("assignment target", lv)
        if ptr.elem.const:
            raise _Unsupported("store through a pointer to const", n)
        if self.no_stores:
            raise _Unsupported("store after a conditional 'return' (returns become selections)", n)
        cur = self.load(ptr, lv) if op != "=" else None
        stored = self.convert(self.compute(cur, op, n), ptr.elem, n)
        self.store(ptr, stored, n)
        if cs is not None:
            cs.value = stored

    def compute(self, cur: _Val | None, op: str, n: c_ast.Assignment) -> _Val:
        if op == "=" and isinstance(n.rvalue, c_ast.FuncCall):
            return self.call_result(n.rvalue)
        if op == "=":
            return self.rvalue(n.rvalue)
        assert cur is not None
        return self.binary(op[:-1], cur, self.rvalue(n.rvalue), n)

    def ptr_assign(self, b: _Bind, n: c_ast.Assignment) -> None:
        if n.op == "=":
            p = self.pointer(n.rvalue)
            self.check_elem(b.ty, p, n.rvalue)
            if p.base is not b.base:
                raise _Unsupported("pointer local reassigned to a different array", n)
            b.off = p.off
            return
        if n.op not in ("+=", "-="):
            raise _Unsupported(f"pointer operator '{n.op}'", n)
        delta = self.convert(self.rvalue(n.rvalue), INT, n.rvalue)
        if b.ty.obj is not None:
            assert b.base is not None
            delta = self.scaled(delta, _Ptr(b.base, None, b.ty, b.ty.obj), n)
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
            if b is not None and b.kind not in ("array", "object"):
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
            for e in _comma_items(n.init):
                if not _is_update(e):
                    raise _Unsupported("for-loop initialiser without effect", e)
            self.stmt(n.init)
        n = _comma_step(n)
        canon = self.canonical(n)
        if canon is None:
            self.while_stmt(n.cond, n.stmt, n.next, n, cs, do=False)
        else:
            self.scf_for(n, cs, *canon)
        self.scopes.pop()

    def counted_while(self, n: c_ast.While, cs: CStmt | None) -> None:
        """``while (i < n) { ...; i++; }`` -- a counter declared before the loop, compared
        as a canonical ``for`` condition, stepped by a constant in the body's last statement
        and assigned nowhere else in it -- is the ``for`` loop ``for (; i < n; i++) { ... }``
        and becomes an ``scf.for`` (strip-mined like one for a run-time bound); any other
        ``while`` loop is an ``scf.while``."""
        body = n.stmt
        items = body.block_items if isinstance(body, c_ast.Compound) else None
        iv = None
        if items and isinstance(n.cond, c_ast.BinaryOp):
            for side in (n.cond.left, n.cond.right):
                if isinstance(side, c_ast.ID) and self.step_of(side.name, items[-1]) is not None:
                    iv = side.name
                    break
        if items and iv is not None:
            init = c_ast.Assignment("=", c_ast.ID(iv, n.coord), c_ast.ID(iv, n.coord), n.coord)
            rest = c_ast.Compound(items[:-1], body.coord)
            loop = c_ast.For(init, n.cond, items[-1], rest, n.coord)
            canon = self.canonical(loop)
            if canon is not None:
                self.scopes.append({})
                self.scf_for(loop, cs, *canon)
                self.scopes.pop()
                return
        self.while_stmt(n.cond, n.stmt, None, n, cs, do=False)

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
            _assigned(cond)  # an update in the condition happens on every trip
            or iv in body_writes
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
            if ub_c is not None:  # constants are stored wrapped signed; the bound's C type decides
                ub_c = _wrap(ub_c, ub.ty.width, ub.ty.signed)
            ok = (
                lb_c is not None
                and ub_c is not None
                and 0 <= lb_c < (1 << (b.ty.width - 1)) - step
                and 0 <= ub_c < (1 << (b.ty.width - 1)) - 1
            )
        if not ok:
            for op_ in reversed(list(scratch.ops)):  # users first; detached, then erased
                op_.detach()
                op_.erase(safe_erase=False)
            return None
        for op_ in list(scratch.ops):
            op_.detach()
            self.block.add_op(op_)
        # the bound may be narrower than the iv (``long long i < 0xffffffffu``): C compares
        # in the common type, which is the iv's here
        ub_v = self.convert(ub, b.ty, rhs)
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
            if not isinstance(x, c_ast.ID):  # a constant expression (a macro's expansion)
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
        names = _assigned(cond) + _assigned(body_n) + _assigned(nxt)
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
        # the C names of the carried variables, for the matcher (block arguments it may name)
        op.attributes["aquas.carried"] = ArrayAttr([StringAttr(name) for name, _ in carried])
        self.emit(op, n)
        if cs is not None:
            cs.counter = self.down_counter(cond, body_n, nxt, do)
        for (_, b), r in zip(carried, op.results, strict=True):
            self.set_carried(b, r)
        if cs is not None:
            cs.op = op

    def down_counter(
        self, cond: c_ast.Node | None, body_n: c_ast.Node, nxt: c_ast.Node | None, do: bool
    ) -> tuple[str, int, int] | None:
        """(n, s, b) when the loop is counted down by the integer scalar ``n``, ``s`` per
        iteration, while ``n > b``, and nothing else assigns ``n``: ``while (n--)``; a
        condition ``n > b``, ``b < n``, ``n >= b + 1``, ``n != b`` or ``n`` (b = 0) with
        the step ``n--``, ``--n`` or ``n -= s`` as a ``for`` loop's step or the last
        statement of the body; ``do { ... } while (--n)`` (s = 1, b = 1: the body runs
        before the first test, so after k trips from ``v > k`` the counter is at least 1
        and the original loop can run the rest).  From any value ``v >= b + k * s`` the next
        k conditions hold (each sees a value above ``b``): what a chunk of k iterations
        needs (egraph/matcher.py, strip-mining); ``b`` is a constant in 0..2^31-1."""
        rest: list[c_ast.Node] = [body_n] if body_n is not None else []
        name, step, bound = self.counter_test(cond, body_n, nxt, do, rest)
        if name is None or step is None:
            return None
        b = self.lookup(name)
        if b is None or b.kind != "scalar" or b.ty.pointer or b.ty.obj is not None:
            return None
        if any(name in _assigned(x) for x in rest if x is not None):
            return None
        return name, step, bound

    def counter_test(
        self,
        cond: c_ast.Node | None,
        body_n: c_ast.Node,
        nxt: c_ast.Node | None,
        do: bool,
        rest: list[c_ast.Node],
    ) -> tuple[str | None, int | None, int]:
        """:meth:`down_counter`'s counter, step and bound, without the checks on the
        variable; ``rest`` becomes the statements that must not assign it."""
        if do:  # do { ... } while (--n): no other form of do loop is counted
            if isinstance(cond, c_ast.UnaryOp) and cond.op == "--" and nxt is None:
                target = cond.expr
                if isinstance(target, c_ast.ID):
                    return target.name, 1, 1
            return None, None, 0
        if isinstance(cond, c_ast.UnaryOp) and cond.op == "p--" and isinstance(cond.expr, c_ast.ID):
            rest.append(nxt)
            return cond.expr.name, 1, 0
        name, bound = None, 0
        if isinstance(cond, c_ast.ID):
            name = cond.name
        elif isinstance(cond, c_ast.BinaryOp) and cond.op in (">", "<", ">=", "<=", "!="):
            lhs, rhs, op = cond.left, cond.right, cond.op
            if isinstance(rhs, c_ast.ID) and not isinstance(lhs, c_ast.ID):  # 3 < n: n > 3
                lhs, rhs = rhs, lhs
                op = {">": "<", "<": ">", ">=": "<=", "<=": ">="}.get(op, op)
            c = _counter_bound(rhs)
            if isinstance(lhs, c_ast.ID) and c is not None:
                if op in (">", "!="):
                    name, bound = lhs.name, c
                elif op == ">=" and c >= 1:
                    name, bound = lhs.name, c - 1
        if name is None:
            return None, None, 0
        dec = nxt
        if nxt is None:  # a while loop: the body's last statement
            items = body_n.block_items if isinstance(body_n, c_ast.Compound) else None
            if not items:
                return None, None, 0
            dec = items[-1]
            rest[:] = [c_ast.Compound(items[:-1], body_n.coord)]
        return name, self.decrement_of(name, dec), bound

    def decrement_of(self, name: str, n: c_ast.Node | None) -> int | None:
        if isinstance(n, c_ast.UnaryOp) and n.op in ("--", "p--"):
            ok = isinstance(n.expr, c_ast.ID) and n.expr.name == name
            return 1 if ok else None
        if (
            isinstance(n, c_ast.Assignment)
            and n.op == "-="
            and isinstance(n.lvalue, c_ast.ID)
            and n.lvalue.name == name
            and isinstance(n.rvalue, c_ast.Constant)
            and n.rvalue.type == "int"
        ):
            try:
                c = _int_literal(n.rvalue.value)[0]
            except ValueError:
                return None
            return c if 0 < c < (1 << 31) else None
        return None


def _comma_step(n: c_ast.For) -> c_ast.For:
    """``for (i = 0; i < n; i++, p++) body`` as ``for (i = 0; i < n; i++) { body p++; }``,
    so that the loop over ``i`` can be counted: the counter's own step stays the step and
    the other operands run after the body, in their order (no ``continue`` skips them: it
    leaves the whole function untouched). Kept as written (a ``while`` loop running the
    whole step) when the initialiser does not name one counter, or when an operand after
    the counter's step reads or writes the counter."""
    if not isinstance(n.next, c_ast.ExprList):
        return n
    items = _comma_items(n.next)
    init = n.init
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        iv = init.decls[0].name
    elif isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
        iv = init.lvalue.name
    else:
        return n
    steps = [k for k, e in enumerate(items) if iv in _assigned(e)]
    if len(steps) != 1:
        return n
    k = steps[0]
    if any(iv in _reads(e)[0] or iv in _assigned(e) for e in items[k + 1 :]):
        return n
    body = c_ast.Compound([n.stmt, *items[:k], *items[k + 1 :]], n.stmt.coord)
    return c_ast.For(n.init, n.cond, items[k], body, n.coord)


def _counter_bound(n: c_ast.Node) -> int | None:
    """A down counter's bound: an integer literal in 0..2^31-1."""
    if not isinstance(n, c_ast.Constant) or n.type not in ("int", "unsigned int"):
        return None
    try:
        c = _int_literal(n.value)[0]
    except ValueError:
        return None
    return c if 0 <= c < (1 << 31) else None


def _const_value(v: SSAValue | None) -> int | None:
    if v is not None and isinstance(v.owner, arith.ConstantOp):
        attr = v.owner.value
        if isinstance(attr, IntegerAttr):
            return int(attr.value.data)
    return None
