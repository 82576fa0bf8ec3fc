"""C frontend, expressions: values, pointers and scopes of the function being lowered, and
the lowering of C expressions to ``arith``/``memref`` ops with every conversion explicit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pycparser import c_ast
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Block, Operation, SSAValue

from aquas.egraph import clayout
from aquas.egraph.cdecl import (
    INT,
    UINT,
    CStmt,
    CType,
    CVar,
    _char_literal,
    _common,
    _int_literal,
    _Program,
    _promote,
    _Unsupported,
    _wrap,
)


@dataclass
class _Val:
    """An integer rvalue; ``i1`` marks a comparison result of C type int held as ``i1``."""

    v: SSAValue
    ty: CType
    i1: bool = False


@dataclass
class _Ptr:
    """A pointer (or the place it designates): memref, element offset and element type.
    ``obj`` is the aggregate pointed at (a struct, or an array row), None for an integer;
    offsets then count the aggregate's leaf elements (``elem.width`` bits each)."""

    base: SSAValue
    off: SSAValue | None  # i32 element offset, None = 0
    elem: CType
    obj: object = None


@dataclass
class _Bind:
    kind: str  # "scalar" | "ptr" | "array" | "object" (a struct local in memory)
    ty: CType
    value: SSAValue | None = None
    base: SSAValue | None = None
    off: SSAValue | None = None


_UNSUPPORTED_STMTS: dict[type[c_ast.Node], str] = {
    c_ast.Break: "'break' statement",
    c_ast.Continue: "'continue' statement",
    c_ast.Goto: "'goto' statement",
    c_ast.Label: "label",
    c_ast.Switch: "'switch' statement",
    c_ast.Case: "'case' label",
    c_ast.Default: "'default' label",
    c_ast.FuncCall: "function call",
    c_ast.Union: "union type",
    c_ast.ExprList: "comma operator",
    c_ast.CompoundLiteral: "compound literal",
    c_ast.StaticAssert: "static assertion",
}


_UPDATE_OPS = ("++", "--", "p++", "p--")


def _is_update(n: c_ast.Node) -> bool:
    return isinstance(n, c_ast.Assignment) or (isinstance(n, c_ast.UnaryOp) and n.op in _UPDATE_OPS)


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


class _Exprs:
    """Expression lowering of :class:`aquas.egraph.cstmt._Function` (its state is declared here)."""

    prog: _Program
    scopes: list[dict[str, _Bind]]
    locals: dict[str, CVar]
    globals_used: set[str]
    block: Block
    entry: Block
    global_refs: dict[str, SSAValue]
    views: dict[tuple[SSAValue, int], SSAValue]
    views_of: dict[SSAValue, SSAValue]

    # -- emission helpers ------------------------------------------------------------

    inline_at: c_ast.Node | None = None  # the call being inlined (egraph/ccall.py)

    def emit(self, op: Operation, at: c_ast.Node | None) -> Operation:
        loc = self.prog.loc(self.inline_at if self.inline_at is not None else at)
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
        if self.lookup(name) is not None:
            raise _Unsupported(f"declaration of '{name}' shadowing another variable", at)
        self.scopes[-1][name] = b
        if not param and name not in self.locals:
            self.locals[name] = CVar(name, b.ty, at.coord.line, at.coord.column or 1)

    def visible(self) -> Iterator[tuple[str, _Bind]]:
        seen: set[str] = set()
        for scope in reversed(self.scopes):
            for n, b in scope.items():
                if n not in seen and b.kind not in ("array", "object"):
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

    # -- memory ----------------------------------------------------------------------

    def pointer(self, e: c_ast.Node) -> _Ptr:
        if isinstance(e, c_ast.ID):
            b = self.lookup(e.name)
            if b is not None and b.kind in ("ptr", "array"):
                assert b.base is not None
                elem = CType(b.ty.width, b.ty.signed, const=b.ty.const)
                return _Ptr(b.base, b.off, elem, b.ty.obj)
            if b is None and e.name in self.prog.globals and self.prog.globals[e.name].array:
                g = self.prog.globals[e.name]
                return _Ptr(self.global_ref(e.name), None, g.var.ctype, g.var.ctype.obj)
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
            delta = self.scaled(self.convert(self.rvalue(k), INT, k), p, k)
            if p.off is None and e.op == "+":
                return _Ptr(p.base, delta, p.elem, p.obj)
            cur = p.off if p.off is not None else self.const(0, INT, e)
            cls = arith.AddiOp if e.op == "+" else arith.SubiOp
            return _Ptr(p.base, self.emit(cls(cur, delta), e).results[0], p.elem, p.obj)
        if isinstance(e, c_ast.UnaryOp) and e.op == "&":
            if isinstance(e.expr, c_ast.ArrayRef | c_ast.StructRef | c_ast.ID):
                return self.place(e.expr)
            if isinstance(e.expr, c_ast.UnaryOp) and e.expr.op == "*":
                return self.pointer(e.expr.expr)
            raise _Unsupported("address of a scalar", e)
        if isinstance(e, c_ast.ArrayRef | c_ast.StructRef) or (
            isinstance(e, c_ast.UnaryOp) and e.op == "*"
        ):
            p = self.place(e)
            if isinstance(p.obj, clayout.Array):  # an array decays to its first element
                return self.decay(p)
            if isinstance(p.obj, clayout.Pointer):
                return self.loaded_pointer(p, e)
            raise _Unsupported("pointer loaded from memory", e)
        if isinstance(e, c_ast.Cast):
            ty, _ = self.prog.var_type(e.to_type.type)
            p = self.pointer(e.expr)
            if not ty.pointer:
                raise _Unsupported("pointer converted to an integer", e)
            # Between element types of one width (uint8_t * <-> int8_t *, a buffer of bytes
            # read as signed values; int32_t * <-> a pointer to a struct of int32_t fields or
            # to rows of an int32_t matrix) only the signedness of the loaded values or the
            # grouping of the elements changes: the offsets count the same elements. Other
            # widths would re-tile the memory.
            if ty.width != p.elem.width:
                what = clayout.describe(p.obj) if p.obj is not None else p.elem.c_name()
                raise _Unsupported(f"pointer cast from '{what} *' to '{ty.c_name()}'", e)
            return _Ptr(p.base, p.off, CType(ty.width, ty.signed, const=ty.const), ty.obj)
        if isinstance(e, c_ast.UnaryOp) and e.op in _UPDATE_OPS:
            return self.pointer_update(e)
        raise _Unsupported(f"pointer expression '{type(e).__name__}'", e)

    def pointer_update(self, e: c_ast.UnaryOp) -> _Ptr:
        """``p++``, ``++p``, ``p--``, ``--p`` of a pointer variable used as a pointer (``*p++``,
        admitted by the sequencing check like a scalar's update): the variable moves by one
        pointee here, in evaluation order; the value is the old pointer (postfix) or the new
        one."""
        if id(e) not in self.sequenced:
            raise _Unsupported("assignment inside an expression", e)
        b = self.lookup(e.expr.name) if isinstance(e.expr, c_ast.ID) else None
        if b is None or b.kind != "ptr":
            raise _Unsupported("'++'/'--' of a pointer other than a pointer variable", e)
        old = self.pointer(e.expr)
        op = "+=" if e.op.endswith("++") else "-="
        self.assign(
            c_ast.Assignment(op, e.expr, c_ast.Constant("int", "1", e.coord), e.coord), None
        )
        return old if e.op.startswith("p") else self.pointer(e.expr)

    def loaded_pointer(self, p: _Ptr, at: c_ast.Node) -> _Ptr:
        """The pointer held in a pointer member: its 32-bit value loaded and cast to a memref
        (the matcher sees the loaded value as the address)."""
        assert isinstance(p.obj, clayout.Pointer)
        target = p.obj.target
        addr = self.load(_Ptr(p.base, p.off, CType(32, False)), at).v
        if isinstance(target, clayout.Scalar):
            elem, obj = CType(target.width, target.signed), None
        else:
            unit = min(clayout.leaf_widths(target))
            elem, obj = CType(unit, True), target
        t = MemRefType(IntegerType(elem.width), [DYNAMIC_INDEX])
        op = self.emit(UnrealizedConversionCastOp.get([addr], [t]), at)
        return _Ptr(op.results[0], None, elem, obj)

    def scaled(self, delta: SSAValue, p: _Ptr, at: c_ast.Node) -> SSAValue:
        """An offset in pointees converted to leaf elements (pointer arithmetic)."""
        if p.obj is None:
            return delta
        k = clayout.units(p.obj, p.elem.width)
        if k == 1:
            return delta
        return self.emit(arith.MuliOp(delta, self.const(k, INT, at)), at).results[0]

    def decay(self, p: _Ptr) -> _Ptr:
        """The pointer to the first element of the array at ``p``."""
        assert isinstance(p.obj, clayout.Array)
        elem = p.obj.elem
        if isinstance(elem, clayout.Scalar):
            return _Ptr(p.base, p.off, CType(elem.width, elem.signed, const=p.elem.const))
        return _Ptr(p.base, p.off, p.elem, elem)

    def place(self, e: c_ast.Node) -> _Ptr:
        """The object designated by ``a[i]``, ``*p``, ``p->f`` or ``s.f``."""
        if isinstance(e, c_ast.StructRef):
            return self.member(e)
        if isinstance(e, c_ast.ArrayRef) or (isinstance(e, c_ast.UnaryOp) and e.op == "*"):
            return self.element(e)
        if isinstance(e, c_ast.ID):
            b = self.lookup(e.name)
            if b is not None and b.kind == "object":
                assert b.base is not None
                return _Ptr(b.base, None, CType(b.ty.width, True, const=b.ty.const), b.ty.obj)
            if b is not None and b.kind == "scalar":
                raise _Unsupported("address of a scalar", e)
            if b is None and e.name in self.prog.globals and self.prog.globals[e.name].struct:
                ty = self.prog.globals[e.name].var.ctype
                return _Ptr(
                    self.global_ref(e.name), None, CType(ty.width, True, const=ty.const), ty.obj
                )
        raise _Unsupported(f"expression '{type(e).__name__}' used as an object", e)

    def member(self, e: c_ast.StructRef) -> _Ptr:
        p = self.pointer(e.name) if e.type == "->" else self.place(e.name)
        st = p.obj
        if not isinstance(st, clayout.Struct):
            raise _Unsupported(f"member access '{e.type}{e.field.name}' of a non-struct", e)
        f = st.field(e.field.name)
        if f is None:
            raise _Unsupported(f"no member '{e.field.name}' in '{st.name}'", e.field)
        # exact: a member is aligned to its own narrowest scalar, at least the unit width
        k = f.offset * 8 // p.elem.width
        off = p.off
        if k:
            kc = self.const(k, INT, e)
            off = kc if off is None else self.emit(arith.AddiOp(off, kc), e).results[0]
        const = p.elem.const or f.const
        at = _Ptr(p.base, off, CType(p.elem.width, True, const=const))
        if isinstance(f.type, clayout.Pointer):  # a place holding a pointer (32 bits)
            q = self.rewidth(at, 32, e)
            return _Ptr(q.base, q.off, CType(32, False, const=const), f.type)
        unit = min(clayout.leaf_widths(f.type))
        q = self.rewidth(at, unit, e)
        if isinstance(f.type, clayout.Scalar):
            return _Ptr(q.base, q.off, CType(f.type.width, f.type.signed, const=const))
        return _Ptr(q.base, q.off, CType(unit, True, const=const), f.type)

    def rewidth(self, p: _Ptr, width: int, at: c_ast.Node) -> _Ptr:
        """The same place seen through a memref of ``width``-bit elements (a view of the
        same memory, egraph/clayout.py): the offset is divided by the ratio of the widths,
        exactly, because the place is aligned to ``width``."""
        if width == p.elem.width:
            return p
        assert width > p.elem.width, (width, p.elem.width)
        ratio = width // p.elem.width
        off = p.off
        if off is not None:
            off = self.emit(arith.DivSIOp(off, self.const(ratio, INT, at)), at).results[0]
        return _Ptr(self.view(p.base, width), off, CType(width, p.elem.signed, const=p.elem.const))

    def view(self, base: SSAValue, width: int) -> SSAValue:
        """``base`` (a memref) as a memref of ``width``-bit elements: one
        ``builtin.unrealized_conversion_cast`` per memref and width, right after the
        memref's definition (the matcher and the evaluators read it as the same memory)."""
        root = self.views_of.get(base, base)
        rt = root.type
        assert isinstance(rt, MemRefType)
        if rt.element_type == IntegerType(width):
            return root
        key = (root, width)
        if key not in self.views:
            t = MemRefType(IntegerType(width), [DYNAMIC_INDEX])
            op = UnrealizedConversionCastOp.get([root], [t])
            op.location = (
                root.owner.location
                if isinstance(root.owner, Operation)
                else (self.entry.first_op.location if self.entry.first_op else op.location)
            )
            if isinstance(root.owner, Operation):
                root.owner.parent_block().insert_op_after(op, root.owner)  # type: ignore[union-attr]
            else:
                blk = root.owner
                if blk.first_op is not None:
                    blk.insert_op_before(op, blk.first_op)
                else:
                    blk.add_op(op)
            self.views[key] = op.results[0]
            self.views_of[op.results[0]] = root
        return self.views[key]

    def is_pointer(self, e: c_ast.Node) -> bool:
        if isinstance(e, c_ast.ArrayRef | c_ast.StructRef) or (
            isinstance(e, c_ast.UnaryOp) and e.op == "*"
        ):
            return isinstance(self.static_type(e), clayout.Array | clayout.Pointer)
        if isinstance(e, c_ast.ID):
            b = self.lookup(e.name)
            if b is not None:
                return b.kind in ("ptr", "array")
            return e.name in self.prog.globals and self.prog.globals[e.name].array
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            return self.is_pointer(e.left) or self.is_pointer(e.right)
        if isinstance(e, c_ast.UnaryOp) and e.op == "&":
            return True
        if isinstance(e, c_ast.UnaryOp) and e.op in _UPDATE_OPS:
            return self.is_pointer(e.expr)
        if isinstance(e, c_ast.Cast):
            return isinstance(e.to_type.type, c_ast.PtrDecl)
        return False

    def static_type(self, e: c_ast.Node) -> object:
        """The clayout type of an object expression without lowering it (None: unknown)."""
        if isinstance(e, c_ast.ID):
            b = self.lookup(e.name)
            ty = None
            if b is not None and b.kind == "object":
                return b.ty.obj
            if b is None and e.name in self.prog.globals and self.prog.globals[e.name].struct:
                return self.prog.globals[e.name].var.ctype.obj
            if b is not None and b.kind in ("ptr", "array"):
                ty = b.ty
            elif b is None and e.name in self.prog.globals and self.prog.globals[e.name].array:
                ty = self.prog.globals[e.name].var.ctype
            if ty is None:
                return None
            target = ty.obj if ty.obj is not None else clayout.Scalar(ty.width, ty.signed)
            return clayout.Pointer(target)
        if isinstance(e, c_ast.ArrayRef) or (isinstance(e, c_ast.UnaryOp) and e.op == "*"):
            inner = self.static_type(e.name if isinstance(e, c_ast.ArrayRef) else e.expr)
            if isinstance(inner, clayout.Pointer):
                return inner.target
            if isinstance(inner, clayout.Array):
                return inner.elem
            return None
        if isinstance(e, c_ast.StructRef):
            inner = self.static_type(e.name)
            if e.type == "->":
                inner = inner.target if isinstance(inner, clayout.Pointer) else None
            if isinstance(inner, clayout.Struct):
                f = inner.field(e.field.name)
                return f.type if f is not None else None
            return None
        if isinstance(e, c_ast.UnaryOp) and e.op == "&":
            inner = self.static_type(e.expr)
            return clayout.Pointer(inner) if inner is not None else None
        if isinstance(e, c_ast.UnaryOp) and e.op in _UPDATE_OPS:
            return self.static_type(e.expr)
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            for side in (e.left, e.right):
                t = self.static_type(side)
                if isinstance(t, clayout.Array):
                    return clayout.Pointer(t.elem)
                if isinstance(t, clayout.Pointer):
                    return t
            return None
        return None

    def element(self, e: c_ast.ArrayRef | c_ast.UnaryOp) -> _Ptr:
        """The element addressed by ``a[i]`` or ``*p`` (as a pointer with its final offset)."""
        if isinstance(e, c_ast.ArrayRef):
            if not self.is_pointer(e.name):
                if isinstance(e.name, c_ast.ID) and self.lookup(e.name.name) is None:
                    self.undeclared(e.name)  # a refused global array says why it was refused
                raise _Unsupported("subscript of a non-pointer", e)
            p = self.pointer(e.name)
            i = self.scaled(self.convert(self.rvalue(e.subscript), INT, e.subscript), p, e)
            off = i if p.off is None else self.emit(arith.AddiOp(p.off, i), e).results[0]
            return _Ptr(p.base, off, p.elem, p.obj)
        return self.pointer(e.expr)

    def scalar_place(self, e: c_ast.Node) -> _Ptr:
        p = self.place(e)
        if isinstance(p.obj, clayout.Pointer):
            raise _Unsupported("pointer member used as an integer", e)
        if p.obj is not None:
            what = clayout.describe(p.obj)
            raise _Unsupported(f"'{what}' object used as an integer", e)
        return p

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

    def call_value(self, e: c_ast.FuncCall) -> _Val:
        raise NotImplementedError  # egraph/ccall.py

    def assign(self, n: c_ast.Assignment, cs: CStmt | None) -> None:
        raise NotImplementedError  # egraph/cstmt.py

    sequenced: set[int]  # updates used as values that the sequencing check admitted

    def update_value(self, e: c_ast.Node) -> _Val:
        """An assignment or ``++``/``--`` used as a value, admitted by the sequencing check
        (``cstmt._sequenced_updates``: nothing else in the full expression reads or writes
        the variable, so doing the side effect here, in evaluation order, is exact). Its
        value is the variable's new value, or the old one for a postfix ``x++``/``x--``."""
        assert isinstance(e, c_ast.Assignment | c_ast.UnaryOp)
        if id(e) not in self.sequenced:
            raise _Unsupported("assignment inside an expression", e)
        lv = e.lvalue if isinstance(e, c_ast.Assignment) else e.expr
        b = self.lookup(lv.name) if isinstance(lv, c_ast.ID) else None
        if b is None or b.kind != "scalar":
            raise _Unsupported("assignment inside an expression (other than to a local scalar)", e)
        old = _Val(b.value, b.ty) if b.value is not None else None
        if isinstance(e, c_ast.Assignment):
            self.assign(e, None)
        else:
            op = "+=" if e.op.endswith("++") else "-="
            one = c_ast.Constant("int", "1", e.coord)
            self.assign(c_ast.Assignment(op, e.expr, one, e.coord), None)
        if isinstance(e, c_ast.UnaryOp) and e.op.startswith("p"):
            if old is None:
                raise _Unsupported(f"'{lv.name}' read before it is assigned", e)
            return old
        assert b.value is not None
        return _Val(b.value, b.ty)

    def undeclared(self, e: c_ast.ID) -> None:
        if e.name in self.prog.bad_globals:
            raise _Unsupported(f"global '{e.name}' ({self.prog.bad_globals[e.name]})", e)
        if (
            self.lookup(e.name) is None
            and e.name not in self.prog.globals
            and e.name not in self.prog.enum_consts
        ):
            raise _Unsupported(f"undeclared identifier '{e.name}'", e)

    def rvalue(self, e: c_ast.Node) -> _Val:
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
            b = self.lookup(e.name)
            if b is not None and b.kind == "scalar":
                assert b.value is not None
                return _Val(b.value, CType(b.ty.width, b.ty.signed))
            if b is None and e.name in self.prog.enum_consts:
                return _Val(self.const(self.prog.enum_consts[e.name], INT, e), INT)
            if b is None and e.name in self.prog.globals and self.prog.globals[e.name].struct:
                raise _Unsupported(f"struct '{e.name}' used as a value", e)
            if b is None and e.name in self.prog.globals and not self.prog.globals[e.name].array:
                g = self.prog.globals[e.name]
                return self.load(_Ptr(self.global_ref(e.name), None, g.var.ctype), e)
            self.undeclared(e)
            raise _Unsupported(f"pointer or array '{e.name}' used as an integer", e)
        if isinstance(e, c_ast.ArrayRef | c_ast.StructRef):
            return self.load(self.scalar_place(e), e)
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
        if isinstance(e, c_ast.FuncCall):
            return self.call_value(e)
        if _is_update(e):
            return self.update_value(e)
        if type(e) in _UNSUPPORTED_STMTS:
            raise _Unsupported(_UNSUPPORTED_STMTS[type(e)], e)
        raise _Unsupported(f"expression '{type(e).__name__}'", e)

    def unary(self, e: c_ast.UnaryOp) -> _Val:
        op = e.op
        if op == "*":
            return self.load(self.scalar_place(e), e)
        if op == "sizeof":
            if isinstance(e.expr, c_ast.Typename) and (
                self.prog.is_aggregate(e.expr.type) or not isinstance(e.expr.type, c_ast.TypeDecl)
            ):
                size = clayout.size_align(self.prog.layout_type(e.expr.type))[0]
            elif isinstance(e.expr, c_ast.Typename):
                ty = self.prog.scalar_type(e.expr.type)
                size = 1 if ty is None else ty.width // 8
            elif isinstance(e.expr, c_ast.ArrayRef | c_ast.StructRef | c_ast.UnaryOp) and (
                isinstance(st := self.static_type(e.expr), clayout.Array | clayout.Struct)
            ):
                size = clayout.size_align(st)[0]
            elif (
                isinstance(e.expr, c_ast.ID)
                and (b := self.lookup(e.expr.name))
                and b.kind == "object"
            ):
                size = clayout.size_align(b.ty.obj)[0]
            elif (
                isinstance(e.expr, c_ast.ID)
                and (b := self.lookup(e.expr.name))
                and b.kind == "array"
            ):
                base_type = b.base.type if b.base is not None else None
                assert isinstance(base_type, MemRefType)
                size = b.ty.width // 8 * base_type.get_shape()[0]
            elif (
                isinstance(e.expr, c_ast.ID)
                and self.lookup(e.expr.name) is None
                and (g := self.prog.globals.get(e.expr.name)) is not None
                and (g.array or g.struct)
            ):
                # a file-scope array or struct: its storage, not a pointer to it
                size = g.mtype.get_shape()[0] * g.mtype.get_element_type().width.data // 8
            elif self.is_pointer(e.expr):
                size = 4
            else:
                size = self.rvalue(e.expr).ty.width // 8
            return _Val(self.const(size, UINT, e), UINT)
        if op in ("&",):
            raise _Unsupported("address-of used as an integer", e)
        if op in _UPDATE_OPS:
            return self.update_value(e)
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
