"""C frontend, calls: small ``static`` (or ``inline``) functions of the same file are
inlined at the call site; any other call is kept as an opaque ``func.call`` statement.

Inlining lowers the helper's body in a scope of its own, with the parameters bound to the
arguments (integers by value, pointers as the caller's memref and offset), and every op it
emits carries the location of the call, so the matcher sees the helper as part of the
calling statement.  An early ``return`` is lowered as a selection: ``if (c) return a;
rest`` becomes ``c ? a : rest`` (both sides evaluated, as the frontend does for ``?:``), so
a helper that stores to memory after a conditional return is refused.

An opaque call (``g(x);``, ``y = g(x);``, ``T y = g(x);``) becomes ``func.call @g`` with
a private declaration; a pointer argument is passed as its memref and its i32 element
offset.  The matcher cannot execute it, so no matched region contains it: it is a barrier
and the statements around it are still matched.
"""

from __future__ import annotations

from pycparser import c_ast
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, SSAValue

from aquas.egraph.cdecl import INT, CType, _promote, _Unsupported
from aquas.egraph.cexpr import _Bind, _Exprs, _Ptr, _Val

# Helpers larger than this (AST nodes) are called, not inlined.
MAX_INLINE_NODES = 400
MAX_INLINE_DEPTH = 8


def _size(n: c_ast.Node) -> int:
    count, stack = 0, [n]
    while stack:
        x = stack.pop()
        count += 1
        stack.extend(c for _, c in x.children())
    return count


def _returns(n: c_ast.Node | None) -> bool:
    """A branch that ends in ``return``: the statement itself or a block's last item."""
    if isinstance(n, c_ast.Return):
        return True
    return isinstance(n, c_ast.Compound) and bool(n.block_items) and _returns(n.block_items[-1])


def _items(n: c_ast.Node) -> list[c_ast.Node]:
    if isinstance(n, c_ast.Compound):
        return [i for i in n.block_items or [] if not isinstance(i, c_ast.Pragma)]
    return [n]


class _Calls(_Exprs):
    """Call lowering of :class:`aquas.egraph.cstmt._Function` (its state is declared here)."""

    fdef: c_ast.FuncDef
    inline_stack: list[str]
    no_stores: int

    def stmt(self, n: c_ast.Node) -> None:
        raise NotImplementedError  # egraph/cstmt.py

    def check_elem(self, want: CType, p: _Ptr, at: c_ast.Node) -> None:
        raise NotImplementedError  # egraph/cstmt.py

    def enter_helper(self, call: c_ast.FuncCall) -> object:
        raise NotImplementedError  # egraph/cstmt.py

    def leave_helper(self, saved: object) -> None:
        raise NotImplementedError  # egraph/cstmt.py

    def inlinable(self, name: str) -> c_ast.FuncDef | None:
        fdef = self.prog.fdefs.get(name)
        if fdef is None or fdef is self.fdef:
            return None
        storage = set(fdef.decl.storage) | set(getattr(fdef.decl, "funcspec", []) or [])
        if not {"static", "inline"} & storage:
            return None
        if _size(fdef.body) > MAX_INLINE_NODES:
            return None
        return fdef

    def call_value(self, e: c_ast.FuncCall) -> _Val:
        """The value of a call inside an expression: only inlined helpers have one."""
        name = e.name.name if isinstance(e.name, c_ast.ID) else None
        fdef = self.inlinable(name) if name is not None else None
        if fdef is None:
            raise _Unsupported(f"call of function '{name or '?'}' inside an expression", e)
        v = self.inline(fdef, e)
        if v is None:
            raise _Unsupported(f"value of void function '{name}' used", e)
        return v

    def call_stmt(self, e: c_ast.FuncCall) -> _Val | None:
        """A call as a statement (or the whole right-hand side of an assignment)."""
        if not isinstance(e.name, c_ast.ID):
            raise _Unsupported("call through a function pointer", e)
        fdef = self.inlinable(e.name.name)
        if fdef is not None:
            return self.inline(fdef, e)
        return self.opaque(e)

    # -- inlining ----------------------------------------------------------------------

    def inline(self, fdef: c_ast.FuncDef, e: c_ast.FuncCall) -> _Val | None:
        stack = self.inline_stack
        name = fdef.decl.name
        if name in stack or len(stack) >= MAX_INLINE_DEPTH:
            raise _Unsupported(f"recursive or deeply nested call of '{name}'", e)
        ftype = fdef.decl.type
        if not isinstance(ftype, c_ast.FuncDecl) or not isinstance(ftype.type, c_ast.TypeDecl):
            raise _Unsupported(f"call of '{name}', which returns a pointer", e)
        ret = self.prog.scalar_type(ftype.type)
        params = [
            p
            for p in (ftype.args.params if ftype.args else [])
            if not (isinstance(p, c_ast.Typename) and self.prog.scalar_type(p.type) is None)
        ]
        args = list(e.args.exprs) if e.args is not None else []
        if any(not isinstance(p, c_ast.Decl) for p in params):
            raise _Unsupported(f"call of '{name}', whose parameters are not all typed", e)
        if len(args) != len(params):
            raise _Unsupported(f"call of '{name}' with {len(args)} argument(s)", e)
        binds: list[tuple[str, _Bind, c_ast.Node]] = []
        for p, a in zip(params, args, strict=True):
            ty, _ = self.prog.var_type(p.type)
            if isinstance(p.type, c_ast.ArrayDecl):
                ty = CType(ty.width, ty.signed, True, ty.const, obj=ty.obj)
            if ty.pointer:
                ptr = self.pointer(a)
                self.check_elem(ty, ptr, a)
                binds.append((p.name, _Bind("ptr", ty, base=ptr.base, off=ptr.off), p))
            else:
                v = self.convert(self.rvalue(a), ty, a)
                binds.append((p.name, _Bind("scalar", ty, value=v), p))
        saved = self.enter_helper(e)
        stack.append(name)
        try:
            for pname, b, p in binds:
                self.declare(pname, b, p, param=True)
            out = self.inline_items(_items(fdef.body), ret, fdef)
        finally:
            stack.pop()
            self.leave_helper(saved)
        if ret is None:
            return None
        assert out is not None
        return _Val(out, CType(ret.width, ret.signed))

    def inline_items(
        self, items: list[c_ast.Node], ret: CType | None, fdef: c_ast.FuncDef
    ) -> SSAValue | None:
        for k, item in enumerate(items):
            if isinstance(item, c_ast.Return):
                if item.expr is None:
                    if ret is not None:
                        raise _Unsupported("'return' without a value", item)
                    return None
                if ret is None:
                    raise _Unsupported("'return' with a value in a void function", item)
                return self.convert(self.rvalue(item.expr), ret, item)
            if isinstance(item, c_ast.If) and (_returns(item.iftrue) or _returns(item.iffalse)):
                if ret is None:
                    raise _Unsupported("early 'return' in a void helper", item)
                c = self.cond(item.cond)
                taken, other = item.iftrue, item.iffalse
                swapped = not _returns(taken)
                if swapped:
                    taken, other = other, taken
                rest = ([] if other is None else _items(other)) + items[k + 1 :]
                before = {n: self.state(b) for n, b in self.visible()}
                self.no_stores += 1
                try:
                    tv = self.inline_items(_items(taken), ret, fdef)
                    self.restore(before)
                    fv = self.inline_items(rest, ret, fdef)
                finally:
                    self.no_stores -= 1
                assert tv is not None and fv is not None
                if swapped:
                    tv, fv = fv, tv
                return self.emit(arith.SelectOp(c, tv, fv), item).results[0]
            self.stmt(item)
        if ret is not None:
            raise _Unsupported(f"helper '{fdef.decl.name}' without a final 'return'", fdef.body)
        return None

    def restore(self, before: dict[str, SSAValue | None]) -> None:
        """Variables assigned on an inlined branch that returned get their values back."""
        for name, b in self.visible():
            if name in before and self.state(b) is not before[name]:
                self.set_carried(b, before[name])

    # -- opaque calls --------------------------------------------------------------------

    def opaque(self, e: c_ast.FuncCall) -> _Val | None:
        assert isinstance(e.name, c_ast.ID)
        name = e.name.name
        proto = self.prog.protos.get(name)
        if name == "__asm__":  # inline assembly (cpre.py): never lowered
            raise _Unsupported("call of function '__asm__' (inline assembly)", e)
        if proto is None:
            raise _Unsupported(f"call of undeclared function '{name}'", e)
        if not isinstance(proto.type, c_ast.TypeDecl):
            raise _Unsupported(f"call of '{name}', which returns a pointer", e)
        ret = self.prog.scalar_type(proto.type)
        params = list(proto.args.params) if proto.args is not None else []
        variadic = bool(params) and isinstance(params[-1], c_ast.EllipsisParam)
        if variadic:
            params = params[:-1]
        void = len(params) == 1 and isinstance(params[0], c_ast.Typename)
        if void and self.prog.scalar_type(params[0].type) is None:
            params = []  # (void)
        args = list(e.args.exprs) if e.args is not None else []
        if len(args) < len(params) or (len(args) > len(params) and not variadic):
            raise _Unsupported(f"call of '{name}' with {len(args)} argument(s)", e)
        operands: list[SSAValue] = []
        for k, a in enumerate(args):
            p = params[k] if k < len(params) else None
            if self.is_pointer(a):
                ptr = self.pointer(a)
                off = ptr.off if ptr.off is not None else self.const(0, INT, a)
                operands += [ptr.base, off]
                continue
            v = self.rvalue(a)
            if p is None:  # a variadic argument: the default promotions
                ty = _promote(v.ty)
            else:
                ty, _ = self.prog.var_type(p.type)
                if ty.pointer:
                    raise _Unsupported(f"integer passed as a pointer to '{name}'", a)
            operands.append(self.convert(v, ty, a))
        types: list[Attribute] = [o.type for o in operands]
        results: list[Attribute] = [] if ret is None else [IntegerType(ret.width)]
        # the declaration has a name of its own: the file may define a function `name` too
        symbol = f"opaque.{name}"
        decls: dict[str, func.FuncOp] = self.prog.externs
        known = decls.get(symbol)
        if known is None:
            decls[symbol] = func.FuncOp.external(symbol, types, results)
        elif list(known.function_type.inputs) != types:
            raise _Unsupported(f"call of '{name}' with other argument types than before", e)
        call = self.emit(func.CallOp(symbol, operands, results), e)
        if ret is None:
            return None
        return _Val(call.results[0], CType(ret.width, ret.signed))


__all__ = ["MAX_INLINE_DEPTH", "MAX_INLINE_NODES"]
