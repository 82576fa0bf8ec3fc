"""Emission of matched regions: a minimally changed C file, or MLIR with ISAX calls.

C: every matched region (a contiguous run of statements) is replaced in the source text by
a call of the generated intrinsic ``aquas_<isax>(rs1, rs2)`` from ``aquas_isax.h``;
everything else -- comments, formatting, unmatched code -- is copied byte for byte.  A
strip-mined loop becomes a loop of ISAX calls over whole chunks followed by the original
loop for the remainder.

MLIR: the region's ops are replaced by the address computation and a ``func.call`` of
``@aquas_<isax>`` (declared private), and the live-out value is replaced by the call's
result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from aquas.diagnostics import AquasError
from aquas.egraph import cfront
from aquas.egraph.driver import MatchResult
from aquas.egraph.matcher import AppStmt, Decision, params_of_mlir
from aquas.egraph.terms import Term, linear

HEADER = "aquas_isax.h"


class EmitError(AquasError):
    pass


def c_operand(t: Term, names: dict[str, str]) -> str:
    """C text of a 32-bit operand: a linear form over pointers, loop indices and scalars."""
    lin = linear(t)
    parts = []
    for atom, c in lin.terms:
        if atom.op != "var" or str(atom.val) not in names:
            raise EmitError(f"operand {t} cannot be expressed in C at the call site")
        x = names[str(atom.val)]
        parts.append(x if c == 1 else f"{c}u * {x}")
    if lin.offset or not parts:
        parts.append(f"{lin.offset}u")
    return " + ".join(parts)


def _operand_names(cf: cfront.CFunction) -> dict[str, str]:
    """Variable name -> its C text as a 32-bit operand (parameters shadow locals; globals,
    memory in the IR, are addresses)."""

    def text(name: str, pointer: bool) -> str:
        return f"(uint32_t)(uintptr_t){name}" if pointer else f"(uint32_t){name}"

    out = {v.name: text(v.name, v.ctype.pointer) for v in [*cf.locals.values(), *cf.params]}
    return out | {g: text(g, True) for g in cf.globals_used}


def _call(d: Decision, names: dict[str, str]) -> str:
    assert d.pattern is not None and d.binding is not None
    args = [c_operand(d.binding.regs[r], names) for r in ("rs1", "rs2") if r in d.pattern.uses]
    return f"aquas_{d.isax}({', '.join(args)})"


def _ctype_of(cf: cfront.CFunction, name: str) -> cfront.CType:
    if name in cf.locals:
        return cf.locals[name].ctype
    for p in cf.params:
        if p.name == name:
            return p.ctype
    raise EmitError(f"unknown variable {name}")


def _span(region: Sequence[AppStmt]) -> tuple[int, int]:
    spans = [s.span for s in region if s.span is not None]
    return min(a for a, _ in spans), max(b for _, b in spans)


def _indent(source: str, start: int) -> str:
    line_start = source.rfind("\n", 0, start) + 1
    m = re.match(r"[ \t]*", source[line_start:start])
    return m.group(0) if m else ""


def replacement(d: Decision, cf: cfront.CFunction, source: str) -> tuple[int, int, str]:
    """The source range of a matched region and its new text."""
    start, end = _span(d.region)
    ind = _indent(source, start)
    names = _operand_names(cf)
    call = _call(d, names)
    assert d.binding is not None
    if d.binding.chunk is not None:
        return start, end, _strip_mined(d, cf, source, call, ind)
    lines: list[str] = []
    after = source[end : cf.span.end]
    declared = {
        s.src.target: s.src
        for s in d.region
        if isinstance(s.src, cfront.CStmt) and s.src.kind == "decl" and s.src.target
    }
    for name in declared:
        if name != d.liveout and re.search(rf"\b{re.escape(name)}\b", after):
            lines.append(f"{_ctype_of(cf, name).c_name()} {name};")
    if d.liveout is None:
        lines.append(f"{call};")
    elif d.liveout == "return":
        ret = cf.ret.c_name() if cf.ret else "uint32_t"
        lines.append(f"return ({ret}){call};")
    else:
        ty = _ctype_of(cf, d.liveout).c_name()
        op = "+=" if d.binding.accumulate else "="
        decl = f"{ty} " if d.liveout in declared else ""
        lines.append(f"{decl}{d.liveout} {op} ({ty}){call};")
    lines[0] = f"/* aquas: {d.isax} */ " + lines[0]
    return start, end, ("\n" + ind).join(lines)


def _strip_mined(d: Decision, cf: cfront.CFunction, source: str, call: str, ind: str) -> str:
    st = d.anchor.src if d.anchor is not None else None
    if not isinstance(st, cfront.CStmt) or st.kind != "for" or st.iv is None:
        raise EmitError("strip-mining needs a canonical for loop")
    assert d.binding is not None and d.binding.chunk is not None and d.liveout
    loop = st.op
    assert isinstance(loop, scf.ForOp)
    lb, ub, step = (_const(v) for v in (loop.lb, loop.ub, loop.step))
    k = d.binding.chunk * step
    trips = max(0, (ub - lb + step - 1) // step)
    text = lambda sp: source[sp.start : sp.end] if sp is not None else ""  # noqa: E731
    ty = _ctype_of(cf, d.liveout).c_name()
    iv = st.iv
    out = [f"{{ /* aquas: {d.isax} on {d.binding.chunk}-iteration chunks */"]
    init = text(st.init_span).strip()
    if init:
        out.append(f"    {init};")
    out.append(f"    for (; {iv} + {k} <= {ub}; {iv} += {k})")
    out.append(f"        {d.liveout} += ({ty}){call};")
    if trips % d.binding.chunk:
        out.append(f"    for (; {text(st.cond_span)}; {text(st.step_span)})")
        out.append(f"        {text(st.body_span).strip()}")
    out.append("}")
    return ("\n" + ind).join(out)


def _const(v: SSAValue) -> int:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    raise EmitError("loop bound is not a constant in the IR")


def rewrite_c(result: MatchResult) -> str:
    """The application source with every matched region replaced (or unchanged)."""
    prog = result.program
    assert prog is not None
    source = prog.source
    fns = {cf.name: cf for cf in prog.functions}
    edits = []
    for d in result.matched:
        edits.append(replacement(d, fns[d.function], source))
    if not edits:
        return source
    edits.sort()
    out, pos = [], 0
    for a, b, text in edits:
        if a < pos:
            raise EmitError("overlapping matched regions")
        out.append(source[pos:a])
        out.append(text)
        pos = b
    out.append(source[pos:])
    return _with_include("".join(out))


def _with_include(text: str) -> str:
    line = f'#include "{HEADER}"\n'
    if line in text:
        return text
    includes = list(re.finditer(r"^[ \t]*#[ \t]*include[^\n]*\n", text, re.M))
    if includes:
        at = includes[-1].end()
        return text[:at] + line + text[at:]
    return line + text


# ---------------------------------------------------------------------------------------
# MLIR
# ---------------------------------------------------------------------------------------


def rewrite_mlir(result: MatchResult) -> ModuleOp:
    """``result.module`` with every matched region replaced by a ``func.call``."""
    module = result.module
    assert module is not None
    declared: set[str] = set()
    for d in result.matched:
        assert d.binding is not None and d.pattern is not None
        if d.binding.chunk is not None:
            raise EmitError("strip-mined matches are emitted for C input only")
        ops = [op for s in d.region for op in s.ops if not isinstance(op, func.ReturnOp)]
        fop = next(
            o for o in module.walk() if isinstance(o, func.FuncOp) and o.sym_name.data == d.function
        )
        args: dict[str | None, SSAValue] = {
            p.name: a for p, a in zip(params_of_mlir(fop), fop.body.block.args, strict=True)
        }
        i32 = IntegerType(32)
        new: list[Operation] = []

        operands = [
            _mlir_operand(d.binding.regs[r], args, new)
            for r in ("rs1", "rs2")
            if r in d.pattern.uses
        ]
        name = f"aquas_{d.isax}"
        results = [i32] if d.pattern.has_rd else []
        call = func.CallOp(name, operands, results)
        new.append(call)
        if name not in declared:
            decl = func.FuncOp.external(name, [i32] * len(operands), results)
            module.body.block.add_op(decl)
            declared.add(name)
        anchor = ops[0]
        Rewriter.insert_op(new, InsertPoint.before(anchor))
        inside = {o for op in ops for o in op.walk()}
        live = [
            r for op in ops for r in op.results if any(u.operation not in inside for u in r.uses)
        ]
        for ret in (op for s in d.region for op in s.ops if isinstance(op, func.ReturnOp)):
            live += [v for v in ret.operands if v.owner in inside]
        for r in live:
            v: SSAValue = call.results[0]
            if r.type != i32:
                assert isinstance(r.type, IntegerType)
                conv = (
                    arith.TruncIOp(v, r.type)
                    if r.type.width.data < 32
                    else arith.ExtUIOp(v, r.type)
                )
                Rewriter.insert_op(conv, InsertPoint.after(call))
                v = conv.result
            r.replace_all_uses_with(v)
        for op in reversed(ops):
            if not any(u.operation not in inside for r in op.results for u in r.uses):
                op.detach()
                op.erase(safe_erase=False)
    module.verify()
    return module


def _mlir_operand(t: Term, args: dict[str | None, SSAValue], new: list[Operation]) -> SSAValue:
    """Ops computing a linear operand (pointer arguments + offset) as i32; appended to new."""
    i32 = IntegerType(32)
    lin = linear(t)
    acc: SSAValue | None = None
    for atom, c in lin.terms:
        a = args.get(str(atom.val)) if atom.op == "var" else None
        if a is None:
            raise EmitError(f"operand {t} is not a function argument plus an offset")
        if isinstance(a.type, IntegerType):
            x: SSAValue = a
        else:
            p = memref.ExtractAlignedPointerAsIndexOp.get(a)
            cast = arith.IndexCastOp(p.aligned_pointer, i32)
            new.extend([p, cast])
            x = cast.result
        if c != 1:
            k = arith.ConstantOp(IntegerAttr(c, i32))
            m = arith.MuliOp(x, k.result)
            new.extend([k, m])
            x = m.result
        if acc is None:
            acc = x
        else:
            s = arith.AddiOp(acc, x)
            new.append(s)
            acc = s.result
    off = arith.ConstantOp(IntegerAttr(lin.offset, i32))
    new.append(off)
    if acc is None:
        return off.result
    total = arith.AddiOp(acc, off.result)
    new.append(total)
    return total.result


__all__ = ["HEADER", "EmitError", "c_operand", "replacement", "rewrite_c", "rewrite_mlir"]
