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

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from aquas.diagnostics import AquasError
from aquas.egraph import cfront, clayout, fields
from aquas.egraph.driver import MatchResult
from aquas.egraph.matcher import AppStmt, Decision, params_of_mlir
from aquas.egraph.patterns import UNSUPPORTED
from aquas.egraph.regions import is_pure
from aquas.egraph.semantics import Executor, Unsupported
from aquas.egraph.stateful import PRELOAD_REG
from aquas.egraph.terms import Linear, Term, cmp, linear, linear_term, substitute
from aquas.intops import to_signed
from aquas.model.sites import SITE_BASE

if TYPE_CHECKING:
    from aquas.egraph.finalcheck import Checker

HEADER = "aquas_isax.h"


class EmitError(AquasError):
    pass


class Names(dict[str, str]):
    """Variable name -> its C text as a 32-bit operand; ``structs`` names the pointers to a
    struct (parameters and locals), whose byte offsets are spelled as members."""

    def __init__(
        self,
        texts: dict[str, str],
        structs: dict[str, clayout.Struct],
        scalars: dict[str, tuple[str, int]] | None = None,
        objects: set[str] | None = None,
    ):
        super().__init__(texts)
        self.structs = structs
        self.objects = objects or set()  # global structs (not arrays): ``g.f``, not ``g->f``
        # global scalars by address name (``@g``): C name and width; a load of the whole
        # scalar is spelled as its name
        self.scalars = scalars or {}


def _member_path(t: object, off: int) -> tuple[str, int, bool]:
    """The member of the RV32 object ``t`` holding byte ``off``: its C path (``.a[4]``),
    the bytes left past its start, and whether a variable offset may be added to it: the
    path goes through an array and every array on it has pointer-free elements (which
    stride alike on every ABI; the pointer-free types are the same size on the host)."""
    if isinstance(t, clayout.Struct):
        for f in t.fields:
            size = clayout.size_align(f.type)[0]
            if f.offset <= off < f.offset + size:
                path, rest, flat = _member_path(f.type, off - f.offset)
                return f".{f.name}{path}", rest, flat
        raise EmitError(f"byte {off} of {t.name} is padding")
    if isinstance(t, clayout.Array):
        es = clayout.size_align(t.elem)[0]
        path, rest, _ = _member_path(t.elem, off % es)
        return f"[{off // es}]{path}", rest, not clayout.has_pointer(t.elem)
    return "", off, False


def _address(lin: Linear, names: dict[str, str], what: Term, offset0: bool = False) -> str:
    """C text of a 32-bit address, a linear form over pointers, indices and scalars.  Byte
    offsets from a pointer to a struct are RV32's: they are spelled as the member they
    address (``&p->a[4]``, ``&p[i].y``) so that the host, whose layout of a struct with a
    pointer member differs, computes the same object's address."""
    structs: dict[str, clayout.Struct] = getattr(names, "structs", {})
    terms = list(lin.terms)
    offset = lin.offset
    base = None
    for atom, c in terms:
        if atom.op == "var" and str(atom.val) in structs and c == 1:
            base = atom
            break
    head: list[str] = []
    if base is not None:
        name = str(base.val)
        st = structs[name]
        terms.remove((base, 1))
        # coefficients and offset modulo 2^32, as signed byte counts
        idx = [
            (a, to_signed(c, 32) // st.size) for a, c in terms if to_signed(c, 32) % st.size == 0
        ]
        terms = [(a, c) for a, c in terms if to_signed(c, 32) % st.size != 0]
        offset = to_signed(offset, 32)
        path, rest, flat = _member_path(st, offset % st.size)
        if terms and not flat:
            raise EmitError(
                f"operand {what}: a variable offset into {st.name} that is not an index of "
                "a pointer-free array member"
            )
        parts = [str(offset // st.size)] if offset // st.size or not idx else []
        for atom, c in idx:
            if atom.op != "var" or str(atom.val) not in names:
                raise EmitError(f"operand {what} cannot be expressed in C at the call site")
            parts.append(str(atom.val) if c == 1 else f"{c} * {atom.val}")
        var = str(base.val).removeprefix("@")  # a global array: its C name
        lv = f"{var}->{path[1:]}" if parts == ["0"] else f"{var}[{' + '.join(parts)}]{path}"
        if parts == ["0"] and not path:
            lv = f"*{var}"
        if str(base.val).startswith("@") and var in getattr(names, "objects", ()):
            # a global struct object: its members, not through a pointer; an address past
            # it (the end of a range the overlap guard compares) as an array of one
            lv = f"{var}{path}" if parts == ["0"] else f"(&{var})[{' + '.join(parts)}]{path}"
        head.append(f"(uint32_t)(uintptr_t)&{lv}")
        offset = rest
    for atom, c in terms:
        if atom.op != "var" or str(atom.val) not in names:
            raise EmitError(f"operand {what} cannot be expressed in C at the call site")
        x = names[str(atom.val)]
        head.append(x if c == 1 else f"{c}u * {x}")
    if offset or not head or offset0:
        head.append(f"{offset}u")
    return " + ".join(head)


def c_operand(t: Term, names: dict[str, str]) -> str:
    """C text of a 32-bit operand: a linear form over pointers, loop indices and scalars;
    or a narrower value (a variable, or a load ``a[i]`` of the statement) zero- or
    sign-extended to 32 bits."""
    if t.op in ("zext", "sext") and t.w == 32 and t.args[0].w in (8, 16):
        w = t.args[0].w
        inner = _narrow(t.args[0], names)
        if t.op == "zext":
            return f"(uint32_t)(uint{w}_t){inner}"
        return f"(uint32_t)(int32_t)(int{w}_t){inner}"
    parts = fields.packed_parts(t)
    if parts is not None:  # {hi:16, lo:16} built by the rewrite (egraph/fields.py)
        hi, lo = (f"(uint32_t)(uint16_t){_narrow(x, names)}" for x in parts)
        return f"({hi} << 16 | {lo})"
    if t.op in ("zext", "sext") and t.w == 32 and t.args[0].op not in ("var", "load"):
        return f"(uint32_t){c_term(t, names)}"  # a computed operand
    if t.op == "load" and t.w == 32:
        return f"(uint32_t){_narrow(t, names)}"
    if t.op == "const":
        return f"{t.val}u"
    lin = linear(t)
    if all(atom.op == "var" for atom, _ in lin.terms):
        return _address(lin, names, t)  # its refusals stand (struct offsets)
    return f"(uint32_t){c_term(t, names)}"  # a computed operand


_C_BINARY = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}
_C_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def c_term(t: Term, names: dict[str, str]) -> str:
    """C text of a side-effect-free term (a computed register operand): its value as an
    unsigned integer of the term's width. Arithmetic runs in at least 32-bit unsigned
    types, so C's promotion to int never overflows; only shifts by constants below the
    width and divisions by non-zero constants (other than -1 when signed) are written,
    the cases whose C meaning is the term's. Written by hand: a term printer is a few
    lines over the term language, which no library knows."""
    w = t.w
    if w not in (1, 8, 16, 32, 64):
        raise EmitError(f"operand {t}: no C type of {w} bits")
    u = "uint64_t" if w == 64 else "uint32_t"  # the type the arithmetic runs in

    def sub(x: Term) -> str:
        return c_term(x, names)

    def typed(text: str) -> str:
        return f"(({u})({text}))" if w in (32, 64) else f"((uint{w}_t)({text}))" if w > 1 else text

    a = t.args
    if t.op == "const":
        if w in (32, 64):
            return f"{t.val}{'ull' if w == 64 else 'u'}"
        return f"((uint{w}_t){t.val}u)" if w > 1 else str(t.val)
    if t.op == "var":
        name = str(t.val)
        if name not in names:
            raise EmitError(f"operand {t} cannot be expressed in C at the call site")
        if name in getattr(names, "structs", {}):  # RV32 byte offsets: see _address
            raise EmitError(f"operand {t}: arithmetic on a pointer to a struct")
        return names[name] if w == 32 else f"((uint{w}_t){name})" if w > 1 else name
    if t.op == "load":
        return _narrow(t, names)
    if t.op in _C_BINARY:
        if w in (32, 64):  # both sides already have type u
            return f"({sub(a[0])} {_C_BINARY[t.op]} {sub(a[1])})"
        return typed(f"({u}){sub(a[0])} {_C_BINARY[t.op]} ({u}){sub(a[1])}")
    if t.op in ("shl", "shru", "shrs", "divu", "remu", "divs", "rems"):
        k = a[1]
        if k.op != "const":
            raise EmitError(f"operand {t}: a shift or division by a variable")
        val = int(k.val)
        signed_k = val - (1 << w) if val >> (w - 1) else val
        if t.op in ("shl", "shru", "shrs") and val >= w:
            raise EmitError(f"operand {t}: a shift by {val} of a {w}-bit value")
        if t.op in ("divu", "remu", "divs", "rems") and (
            val == 0 or (t.op in ("divs", "rems") and signed_k == -1)
        ):
            raise EmitError(f"operand {t}: a division by {signed_k}")
        if t.op == "shl":
            return typed(f"({u}){sub(a[0])} << {val}")
        if t.op == "shru":
            return typed(f"({u}){sub(a[0])} >> {val}")
        if t.op in ("divu", "remu"):
            return typed(f"({u}){sub(a[0])} {'/' if t.op == 'divu' else '%'} {val}u")
        if w == 1:
            raise EmitError(f"operand {t}: signed arithmetic on one bit")
        s = f"int{w}_t"
        if t.op == "shrs":
            return typed(f"({s}){sub(a[0])} >> {val}")
        op = "/" if t.op == "divs" else "%"
        return typed(f"({s}){sub(a[0])} {op} ({s}){signed_k}")
    if t.op == "cmp":
        pred = str(t.val)
        rel = pred if pred in ("eq", "ne") else pred[1:]
        x, y = sub(a[0]), sub(a[1])
        if pred[0] == "s":
            if a[0].w == 1:
                raise EmitError(f"operand {t}: a signed comparison of one bit")
            x, y = f"(int{a[0].w}_t){x}", f"(int{a[0].w}_t){y}"
        return f"({x} {_C_COMPARE[rel]} {y} ? 1u : 0u)"
    if t.op == "select":
        return typed(f"{sub(a[0])} ? {sub(a[1])} : {sub(a[2])}")
    if t.op == "zext":
        return typed(sub(a[0]))
    if t.op == "trunc":
        return typed(sub(a[0])) if w > 1 else f"({sub(a[0])} & 1u)"
    if t.op == "sext":
        src = a[0].w
        if src == 1:
            return typed(f"{sub(a[0])} ? ({u})-1 : 0u")
        if src not in (8, 16, 32):
            raise EmitError(f"operand {t}: no C type of {src} bits")
        return typed(f"(int{w if w > src else 32}_t)(int{src}_t){sub(a[0])}")
    raise EmitError(f"operand {t} cannot be expressed in C at the call site")


def _narrow(t: Term, names: dict[str, str]) -> str:
    if t.op == "var" and str(t.val) in names:
        return f"({names[str(t.val)]})"
    scalars: dict[str, tuple[str, int]] = getattr(names, "scalars", {})
    if t.op == "load" and t.args[0].op == "var" and str(t.args[0].val) in scalars:
        name, w = scalars[str(t.args[0].val)]
        if w == t.w:
            return f"({name})"
    if t.op == "load" and t.w in (8, 16, 32):
        # 32-bit address arithmetic, as the IR computes it (RV32: a pointer is 32 bits)
        addr = _address(linear(t.args[0]), names, t, offset0=True)
        return f"(*(const uint{t.w}_t *)(uintptr_t)({addr}))"
    if t.op not in ("var", "load"):  # a computed narrow value (a call's result field)
        return f"({c_term(t, names)})"
    raise EmitError(f"operand {t} cannot be expressed in C at the call site")


def _operand_names(cf: cfront.CFunction) -> Names:
    """Variable name -> its C text as a 32-bit operand (parameters shadow locals; globals,
    memory in the IR, are addresses)."""

    def text(name: str, pointer: bool) -> str:
        return f"(uint32_t)(uintptr_t){name}" if pointer else f"(uint32_t){name}"

    vs = [*cf.locals.values(), *cf.params]
    out = {v.name: text(v.name, v.ctype.pointer) for v in vs}
    structs = {
        v.name: v.ctype.obj
        for v in vs
        if v.ctype.pointer and isinstance(v.ctype.obj, clayout.Struct)
    }
    # a global is memory: its term is its address, ``@name`` (egraph/semantics.py)
    scalars = {}
    for g in cf.globals_used:
        if g in out:  # a local of the same name may shadow it at the call site
            continue  # (an operand naming the global then cannot be emitted)
        gv, kind = cf.global_vars.get(g, (None, "scalar"))
        # a function-local static (symbol ``function.name``) is spelled by its C name: the
        # frontend refuses shadowing declarations, so in its scope the name is the static
        c = gv.name if gv is not None else g
        out[f"@{g}"] = f"(uint32_t)(uintptr_t){'' if kind == 'array' else '&'}{c}"
        if gv is not None and kind != "scalar" and isinstance(gv.ctype.obj, clayout.Struct):
            structs[f"@{g}"] = gv.ctype.obj  # an array of structs, a struct: members
        if gv is not None and kind == "scalar" and not gv.ctype.pointer:
            scalars[f"@{g}"] = (g, gv.ctype.width)
    objects = {g for g, (_, k) in cf.global_vars.items() if k == "struct" and f"@{g}" in out}
    return Names(out, structs, scalars, objects)


def _call(d: Decision, names: dict[str, str]) -> str:
    assert d.pattern is not None and d.binding is not None
    regs = call_operands(d)
    args = [c_operand(regs[r], names) for r in ("rs1", "rs2") if r in d.pattern.uses]
    call = f"aquas_{d.isax}({', '.join(args)})"
    if d.pattern.preload is not None:  # fill the scratchpad it reads first (fir_load_taps)
        pre = c_operand(regs[PRELOAD_REG], names)
        return f"(aquas_{d.pattern.preload}({pre}), {call})"
    return call


def call_operands(d: Decision) -> dict[str, Term]:
    """The operands as the call site names them (a walked pointer by its C variable)."""
    assert d.binding is not None
    return d.binding.operands if d.binding.operands is not None else d.binding.regs


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
    """The source range of a matched region and its new text: under an alias guard, the
    rewrite where the guard holds and the original statements where it does not."""
    assert d.binding is not None
    if not d.binding.guard:
        return _replacement(d, cf, source)
    start, end, text = _replacement(d, cf, source, hoisted=True)
    names = _operand_names(cf)
    ind = _indent(source, start)
    # the region's declarations of variables used after it go before the guard; in the
    # original statements they become assignments
    after = source[end : cf.span.end]
    decls: list[str] = []
    orig = source[start:end]
    for s in sorted(d.region, key=lambda s: -(s.span or (0, 0))[0]):  # last first
        src = s.src
        if not (
            isinstance(src, cfront.CStmt)
            and src.kind == "decl"
            and src.target
            and re.search(rf"\b{re.escape(src.target)}\b", after)
        ):
            continue
        name = src.target
        decls.insert(0, f"{_ctype_of(cf, name).c_name()} {name};")
        a, b = src.span.start - start, src.span.end - start
        orig = orig[:a] + _decl_as_assignment(orig[a:b].strip(), name) + orig[b:]

    def addr(t: Term, off: int) -> str:
        return f"({c_operand(linear_term(linear(t).shifted(off)), names)})"

    cond = " && ".join(
        f"({addr(a, ahi)} <= {addr(b, blo)} || {addr(b, bhi)} <= {addr(a, alo)})"
        for (a, alo, ahi), (b, blo, bhi) in d.binding.guard
    )
    orig = orig.strip().replace("\n", "\n    ")
    text = text.replace("\n", "\n    ")
    head = "".join(f"{x}\n{ind}" for x in decls)
    return (
        start,
        end,
        (
            f"{head}if ({cond}) {{ /* aquas: the ranges do not overlap */\n{ind}    {text}\n"
            f"{ind}}} else {{\n{ind}    {orig}\n{ind}}}"
        ),
    )


def _decl_as_assignment(text: str, name: str) -> str:
    """``T name = init;`` as ``name = init;`` (``T name;``: nothing), for a declaration made
    before an alias guard; anything else (several declarators, an array) is refused."""
    m = re.match(rf"[\w\s*]*?\b{re.escape(name)}\s*(=|;)", text)
    depth = 0
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            m = None
    if m is None or not text.endswith(";"):
        raise EmitError(f"an alias guard around the declaration {text!r}")
    if m.group(1) == ";":
        return ""
    return f"{name} = {text[m.end() :].strip()}"


def _replacement(
    d: Decision, cf: cfront.CFunction, source: str, hoisted: bool = False
) -> tuple[int, int, str]:
    """``hoisted``: the region's declarations of variables used after it are made before
    it (an alias guard's), so the new text assigns them without declaring them."""
    start, end = _span(d.region)
    expansion = _macro_expansion(d, cf, source, start, end)
    ind = _indent(source, start)
    names = _operand_names(cf)
    if d.filter is not None:
        return start, end, _filter_text(d, cf, source, names, ind)
    if d.context is not None:  # ISAXs for parts of the value (Matcher.match_parts)
        calls = Names(dict(names), names.structs, names.scalars, names.objects)
        for ph, sub in d.calls:  # inner calls first: a later operand may name them
            calls[ph] = _call(sub, calls)
        call = c_term(d.context, calls)
    else:
        call = _call(d, names)
    assert d.binding is not None
    if d.binding.chunk is not None:
        return start, end, _strip_mined(d, cf, source, call, ind)
    if d.fields:
        return start, end, _fields_text(d, cf, source, call, ind, end, expansion)
    if expansion:
        raise EmitError(f"{source[start:end]!r}: only a packed result's stores are rewritten "
                        "in place of a whole macro invocation")  # fmt: skip
    if d.store:  # the store is kept: only its right-hand side becomes the call
        lhs = _assigned(source[start:end])
        steps = _pointer_steps(d, cf, lhs)
        return start, end, f"/* aquas: {d.isax} */ {lhs} = {call}{steps};"
    lines: list[str] = []
    after = source[end : cf.span.end]
    declared = {
        s.src.target: s.src
        for s in d.region
        if isinstance(s.src, cfront.CStmt) and s.src.kind == "decl" and s.src.target
    }
    for name in declared:
        if name != d.liveout and re.search(rf"\b{re.escape(name)}\b", after) and not hoisted:
            lines.append(f"{_ctype_of(cf, name).c_name()} {name};")
    if d.liveout is None:
        lines.append(f"{call};")
    elif d.liveout == "return":
        ret = cf.ret.c_name() if cf.ret else "uint32_t"
        lines.append(f"return ({ret}){call};")
    else:
        ty = _ctype_of(cf, d.liveout).c_name()
        op = "+=" if d.binding.accumulate else "="
        decl = f"{ty} " if d.liveout in declared and not hoisted else ""
        steps = _pointer_steps(d, cf, d.liveout)
        if steps and decl:  # a declaration is never a loop's unbraced body: two statements
            lines.append(f"{decl}{d.liveout} {op} ({ty}){call};")
            lines.append(f"{steps.removeprefix(', ')};")
        else:
            lines.append(f"{decl}{d.liveout} {op} ({ty}){call}{steps};")
    lines[0] = f"/* aquas: {d.isax} */ " + lines[0]
    return start, end, ("\n" + ind).join(lines)


def _macro_expansion(d: Decision, cf: cfront.CFunction, source: str, start: int, end: int) -> bool:
    """Whether the region's statements come from a function-like macro's expansion, which
    gives them all the invocation's source text. Such a region is rewritten only whole:
    the new text replaces the invocation, so no other statement may lie in its text
    (EmitError otherwise)."""
    mine = {id(s.src) for s in d.region}
    compound = [
        s.src.span
        for s in d.region
        if isinstance(s.src, cfront.CStmt) and s.src.kind in ("for", "while", "do", "if")
    ]
    expanded = _expanded(cf, source)
    # statements within the region's text that are neither in it nor inside one of its
    # loops or branches: the rest of a macro expansion (the other declarators of a
    # declaration list also share its text, and are not rewritten here)
    strays = [
        st
        for st in cf.stmts
        if st.kind != "block"
        and start <= st.span.start
        and st.span.end <= end
        and id(st) not in mine
        and not any(c.start <= st.span.start and st.span.end <= c.end for c in compound)
        and (st.kind != "decl" or id(st) in expanded)
    ]
    if strays:
        raise EmitError(
            "a part of a macro expansion (its statements share the invocation's text, "
            "which is replaced only whole)"
        )
    return any(id(s.src) in expanded for s in d.region)


def _expanded(cf: cfront.CFunction, source: str) -> set[int]:
    """ids of the statements of macro expansions: statements that share their text with
    another one, other than the declarators of one declaration (each named in it)."""
    by_span: dict[tuple[int, int], list[cfront.CStmt]] = {}
    for st in cf.stmts:
        if st.kind != "block":
            by_span.setdefault((st.span.start, st.span.end), []).append(st)
    out: set[int] = set()
    for (a, b), group in by_span.items():
        text = source[a:b]
        if len(group) > 1 and not all(
            st.kind == "decl" and st.target and re.search(rf"\b{re.escape(st.target)}\b", text)
            for st in group
        ):
            out.update(id(st) for st in group)
    return out


def _pointer_steps(d: Decision, cf: cfront.CFunction, lhs: str) -> str:
    """The pointer steps of a register pattern's statement outside its kept left-hand
    side (``*r++ = aquas_modmul_q(*b, *a), a += 1, b += 1;``): the call reads each pointer
    before its step, and every step still happens once, after the call (the comma
    operator sequences them; the statement stays one expression statement)."""
    assert d.binding is not None
    if d.binding.chunk is not None or not d.binding.walks:
        return ""
    out = []
    for name, (delta, _) in sorted(d.binding.walks.items()):
        if not delta:  # read at its value, walked by another statement
            continue
        if re.search(
            rf"(\+\+|--)\s*{re.escape(name)}\b|\b{re.escape(name)}\s*(\+\+|--|[-+]=)", lhs
        ):
            continue  # stepped by the left-hand side, which is kept
        ty = _ctype_of(cf, name)
        if not ty.pointer or ty.obj is not None:
            raise EmitError(f"{name} steps by elements of a struct")
        out.append(f", {name} {'-' if delta < 0 else '+'}= {abs(delta)}")
    return "".join(out)


def _fields_text(
    d: Decision,
    cf: cfront.CFunction,
    source: str,
    call: str,
    ind: str,
    end: int,
    expansion: bool = False,
) -> str:
    """A packed-result register pattern (egraph/fields.py): the statements become one call
    whose result's fields are stored to the original destinations, in the original order,
    after every operand (loads included) has been read, as the original read them first.
    Variables the replaced statements declared and later code names again are declared
    before the block (their values were not used after it: no live-outs)."""
    lines: list[str] = []
    after = source[end : cf.span.end]
    for s in d.region:
        src = s.src
        if (
            isinstance(src, cfront.CStmt)
            and src.kind == "decl"
            and src.target
            and re.search(rf"\b{re.escape(src.target)}\b", after)
        ):
            lines.append(f"{_ctype_of(cf, src.target).c_name()} {src.target};")
    lines.append(f"{{ /* aquas: {d.isax} */")
    lines.append(f"    uint32_t aquas_rd = {call};")
    names = _operand_names(cf)
    order = [id(s) for s in d.region]  # program order (source order but in a macro)
    stores = sorted(
        zip(d.fields, d.field_addrs, strict=True), key=lambda f: order.index(id(f[0][0]))
    )
    for (st, lo, w), addr in stores:
        assert st.span is not None
        if expansion:  # the macro's lvalue is not in the source: spelled from its address
            lhs = f"*(uint{w}_t *)(uintptr_t)({_address(linear(addr), names, addr)})"
        else:
            lhs = _assigned(source[st.span[0] : st.span[1]])
        field = f"aquas_rd >> {lo}" if lo else "aquas_rd"
        lines.append(f"    {lhs} = (uint{w}_t)({field});")
    lines.append("}")
    return ("\n" + ind).join(lines)


def _assigned(text: str) -> str:
    """The left-hand side of a simple assignment statement (up to its top-level '=')."""
    depth = 0
    for k, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "=" and depth == 0:
            if text[k + 1 : k + 2] == "=" or (k and text[k - 1] in "=!<>+-*/%&|^"):
                break
            return text[:k].rstrip()
    raise EmitError(f"not a simple assignment: {text.strip()}")


def _strip_mined(d: Decision, cf: cfront.CFunction, source: str, call: str, ind: str) -> str:
    st = d.anchor.src if d.anchor is not None else None
    if not isinstance(st, cfront.CStmt) or st.kind not in ("for", "while", "do"):
        raise EmitError("strip-mining needs a canonical for loop")
    if st.iv is None and st.counter is None:
        raise EmitError("strip-mining needs a loop index or a counter counted down")
    whole = source[st.span.start : st.span.end]
    if st.kind == "while" and st.iv is not None:  # a counted while loop
        hs = st.header_span  # (cstmt.counted_while): its header is the condition; the
        assert hs is not None  # original loop runs the remainder
        st = dataclasses.replace(
            st, init_span=None, cond_span=cfront.Span(hs.start + 1, hs.end - 1), step_span=None
        )
    assert d.binding is not None and d.binding.chunk is not None
    chunk = d.binding.chunk
    text = lambda sp: source[sp.start : sp.end] if sp is not None else ""  # noqa: E731
    remainder = True
    if st.iv is not None:
        loop = st.op
        assert isinstance(loop, scf.ForOp)
        step = _const(loop.step)
        k = chunk * step
        iv = st.iv
        lb, ub = _const_or_none(loop.lb), _const_or_none(loop.ub)
        if lb is not None and ub is not None:
            fits = f"{iv} + {k} <= {ub}"
            fits2 = f"{iv} + {2 * k} <= {ub}"
            remainder = max(0, (ub - lb + step - 1) // step) % chunk != 0
        else:  # a run-time bound: a chunk fits when its last iteration would run
            fits = _last_iteration_runs(text(st.cond_span), iv, k - step)
            fits2 = _last_iteration_runs(text(st.cond_span), iv, 2 * k - step)
        steps = [f"{iv} += {k}"]
        steps2 = [f"{iv} += {2 * k}"]
    else:  # counted down (cstmt.down_counter): k more trips run from n >= b + k * s
        n, dec, bound = st.counter
        if n not in d.binding.walks:
            raise EmitError(f"the counter {n} is not moved by a constant per chunk")
        fits = f"{n} >= {bound + chunk * dec}"
        fits2 = f"{n} >= {bound + 2 * chunk * dec}"
        steps, steps2 = [], []
    # the pointers and counters the loop walks, moved as the chunk's iterations move them
    for name, (delta, size) in sorted(d.binding.walks.items()):
        ty = _ctype_of(cf, name)
        if ty.pointer and (ty.obj is not None or (size > 0 and ty.width // 8 != size)):
            raise EmitError(f"pointer {name} walks {size}-byte elements as a {ty.c_name()}")
        if delta:
            for out, m in ((steps, 1), (steps2, 2)):
                out.append(f"{name} {'-' if delta < 0 else '+'}= {abs(delta) * m}")
    out = [f"{{ /* aquas: {d.isax} on {chunk}-iteration chunks */"]
    init = text(st.init_span).strip()
    if init:
        out.append(f"    {init};")
    assert d.pattern is not None
    if d.pattern.accumulator is not None:
        out += _accumulator_loop(d, cf, (fits2, ", ".join(steps2)), (fits, ", ".join(steps)))
        remainder = True  # the words must be aligned: otherwise all of it runs here
    else:
        out.append(f"    for (; {fits}; {', '.join(steps)})")
        if d.liveout is None:  # an ISAX without rd: its writes are the chunk's whole effect
            out.append(f"        {call};")
        else:
            ty = _ctype_of(cf, d.liveout).c_name()
            out.append(f"        {d.liveout} += ({ty}){call};")
    if remainder and st.kind in ("while", "do"):
        out.append("    " + whole.strip().replace("\n", "\n    "))
    elif remainder:
        out.append(f"    for (; {text(st.cond_span)}; {text(st.step_span)})")
        out.append(f"        {text(st.body_span).strip()}")
    out.append("}")
    return ("\n" + ind).join(out)


def _accumulator_loop(
    d: Decision, cf: cfront.CFunction, pair: tuple[str, str], single: tuple[str, str]
) -> list[str]:
    """The chunk loop of an accumulator ISAX (egraph/accum.py): the unit's state is set to
    the C variable once, then every call returns the new state into it. The packed
    operands are words loaded from the bound addresses, which must be 4-byte aligned (a
    chunk advances each by one word, so checking the first is enough).

    ``pair`` and ``single`` are (condition, step) of a loop over two chunks and of one
    over one chunk. The pair loop loads the four words before the two calls (the second
    chunk's words are one word further on) and keeps only the second call's ``rd``: the
    first call's new state is the second's input, inside the unit. Loading ahead hides the
    load-to-use stall of the call and halves the loop control per chunk (the LLM's MLP
    block on VexRiscv: 824,221 -> 759,619 cycles). The single loop takes the last chunk
    when their number is odd."""
    assert d.pattern is not None and d.pattern.accumulator is not None and d.binding
    acc = d.pattern.accumulator
    if d.liveout is None or d.liveout == "return" or not d.binding.accumulate:
        raise EmitError(f"{d.isax} updates unit state: it needs a variable accumulated over chunks")
    ty = _ctype_of(cf, d.liveout)
    if ty.pointer or ty.width > 32:
        raise EmitError(f"the 32-bit state of {d.isax} cannot hold '{d.liveout}' ({ty.c_name()})")
    names = _operand_names(cf)
    regs = call_operands(d)
    addrs = [f"({c_operand(regs[r], names)})" for r in acc.operands]
    words = ", ".join(f"aquas_ld32({a})" for a in addrs)
    w0 = [f"aquas_w{j}" for j in range(len(addrs))]
    w1 = [f"aquas_w{len(addrs) + j}" for j in range(len(addrs))]
    loads0 = ", ".join(f"{w} = aquas_ld32({a})" for w, a in zip(w0, addrs, strict=True))
    loads1 = ", ".join(f"{w} = aquas_ld32({a} + 4u)" for w, a in zip(w1, addrs, strict=True))
    return [
        f"    if ((({' | '.join(addrs)}) & 3u) == 0) {{ /* unit state {acc.state} = {d.liveout} */",
        f"        (void)aquas_{acc.preload}((uint32_t){d.liveout});",
        f"        for (; {pair[0]}; {pair[1]}) {{ /* two chunks, their words loaded first */",
        f"            uint32_t {loads0};",
        f"            uint32_t {loads1};",
        f"            (void)aquas_{d.isax}({', '.join(w0)});",
        f"            {d.liveout} = ({ty.c_name()})aquas_{d.isax}({', '.join(w1)});",
        "        }",
        f"        for (; {single[0]}; {single[1]})",
        f"            {d.liveout} = ({ty.c_name()})aquas_{d.isax}({words});",
        "    }",
    ]


def _filter_text(d: Decision, cf: cfront.CFunction, source: str, names: Names, ind: str) -> str:
    """A loop of stateful filter calls (egraph/stateful_loop.py): the unit's state is loaded
    from the coefficients and the history before the loop, each iteration is one call on
    the same sample (its output stored where the original stored it), and the history is
    saved after it. The original loop runs instead when a sample the loop touches
    overlaps the state or coefficient memory (the original would read those back changed)."""
    from aquas.egraph.stateful_loop import FilterLoop

    fl = d.filter
    assert isinstance(fl, FilterLoop)
    st = d.anchor.src if d.anchor is not None else None
    if not isinstance(st, cfront.CStmt) or st.kind not in ("for", "while") or st.body_span is None:
        raise EmitError("a stateful filter loop must be a canonical for loop")
    step = ""
    if st.kind == "while":  # a counted while loop (cstmt.counted_while): the body's last
        inner = [  # statement steps the counter and stays after the call
            s
            for s in cf.stmts
            if s.depth == st.depth + 1
            and st.body_span.start < s.span.start
            and s.span.end <= st.body_span.end
        ]
        if not inner:
            raise EmitError("the counted while loop's step statement was not found")
        last = max(inner, key=lambda s: s.span.start)
        step = " " + source[last.span.start : last.span.end].strip()
    f = fl.filter
    lo_h, hi_h = f.saver.size
    state: list[tuple[Term, int, int]] = []
    if fl.hist_base is not None:
        state.append((fl.hist_base, lo_h, hi_h))
    if fl.coef_base is not None and f.loader is not None:
        state.append((fl.coef_base, *f.loader.size))
    # the history kept in locals moves through a static buffer in the saver's layout
    # (static: the final check's ISAXs reach the library's data, not the host stack)
    hist = "((uint32_t)(uintptr_t)aquas_hist)"
    to_unit: list[str] = []
    from_unit: list[str] = []
    if fl.hist_locals is not None:
        slots = [(off, w) for _, off, w in f.saver.slots]
        if slots != [(2 * k, 16) for k in range(len(slots))] or f.restorer.slots != f.saver.slots:
            raise EmitError(f"the history layout of {f.saver.isax} is not consecutive 16-bit slots")
        to_unit.append(f"static uint16_t aquas_hist[{len(slots)}];")
        for k, name in enumerate(fl.hist_locals):
            ty = _ctype_of(cf, name).c_name()
            to_unit.append(f"aquas_hist[{k}] = (uint16_t){name};")
            from_unit.append(f"{name} = ({ty})aquas_hist[{k}];")

    def addr(t: Term, off: int = 0) -> str:
        return f"({c_operand(linear_term(linear(t).shifted(off)), names)})"

    # the original loop runs at least once: it then reads and writes every state field
    guard = [c_term(cmp("slt", fl.lb, fl.ub), names)]
    for a, w in dict.fromkeys(fl.samples):
        first = substitute(a, {fl.iv: fl.lb})
        past = substitute(a, {fl.iv: fl.ub})
        for base, lo, hi in state:
            guard.append(
                f"{addr(past, w // 8)} <= {addr(base, lo)} || {addr(base, hi)} <= {addr(first)}"
            )
    if fl.coef_base is not None and f.loader is not None and fl.hist_base is not None:
        (h, hl, hh), (c, cl, ch) = state
        guard.append(f"{addr(h, hh)} <= {addr(c, cl)} || {addr(c, ch)} <= {addr(h, hl)}")
    if fl.hist_base is not None:
        hist = addr(fl.hist_base)
    args = ", ".join(c_operand(fl.operands[r], names) for r in f.operands)
    call = f"aquas_{f.step}({args})"
    header = source[st.span.start : st.body_span.start].rstrip()
    if fl.output is not None:
        a, w = fl.output
        body = f"*(uint{w}_t *)(uintptr_t){addr(a)} = (uint{w}_t){call};"
    else:
        body = f"(void){call};"
    if step:
        body = f"{{ {body}{step} }}"
    loads = [f"aquas_{f.loader.isax}({addr(fl.coef_base)});"] if f.loader and fl.coef_base else []
    out = [
        f"{{ /* aquas: {f.step} per iteration; its state "
        + ", ".join(r for r, _, _ in f.saver.slots)
        + f" lives in the unit from {f.restorer.isax} to {f.saver.isax} */",
        f"    if ({' && '.join(f'({g})' for g in guard)}) {{",
        *(f"        {x}" for x in to_unit[:1] + loads + to_unit[1:]),
        f"        aquas_{f.restorer.isax}({hist});",
        f"        {header}",
        f"            {body}",
        f"        aquas_{f.saver.isax}({hist});",
        *(f"        {x}" for x in from_unit),
        "    } else",
        "        " + source[st.span.start : st.span.end].strip().replace("\n", "\n    "),
        "}",
    ]
    return ("\n" + ind).join(out)


def _last_iteration_runs(cond: str, iv: str, offset: int) -> str:
    """``cond`` (``iv < n`` or ``iv <= n``) for the iteration ``offset`` past ``iv``: true
    when a whole chunk of an increasing loop still runs. Other forms (``iv != n``, which
    would step past ``n``; a bound on the left) are not rewritten."""
    m = re.fullmatch(rf"\s*{re.escape(iv)}\s*(<=|<)(?!<)(.+)", cond, re.S)
    if m is None:
        raise EmitError(f"strip-mining a loop with a run-time bound needs '{iv} < bound': {cond}")
    return f"{iv} + {offset} {m.group(1)} ({m.group(2).strip()})"


def _const_or_none(v: SSAValue) -> int | None:
    try:
        return _const(v)
    except EmitError:
        return None


def _const(v: SSAValue) -> int:
    """A loop bound the matcher found constant, possibly an expression of constants
    (`NPTS / BLK` after preprocessing), folded as the matcher folded it."""
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data

    def resolve(x: SSAValue) -> Term:
        if isinstance(x, OpResult) and is_pure(x.op):
            ex.op(x.op)
            return ex.env[x]
        raise Unsupported("not a constant")

    ex = Executor(resolve=resolve, budget=10_000)
    try:
        t = ex.get(v)
    except Unsupported:
        t = None
    if t is None or t.op != "const":
        raise EmitError("loop bound is not a constant in the IR")
    return to_signed(int(t.val), t.w)


def rewrite_c(result: MatchResult, check: bool = True) -> str:
    """The application source with every matched region replaced (or unchanged).

    With ``check`` (the default; False only for what-if use) every rewrite first passes
    the final check (:mod:`aquas.egraph.finalcheck`): the rewritten function is run against
    the original on random inputs with the golden model standing in for the ISAX.  A
    rewrite that fails, or cannot be checked, is refused: its decision becomes a rejection
    with the reason, and the code stays in software."""
    prog = result.program
    assert prog is not None
    source = prog.source
    fns = {cf.name: cf for cf in prog.functions}
    edits = {}
    for d in result.matched:
        try:
            edits[id(d)] = replacement(d, fns[d.function], source)
        except EmitError as e:  # reported as the decision, never after "1 match(es)"
            d.status, d.reason, d.detail = "rejected", UNSUPPORTED, f"cannot be emitted: {e}"
    if check and result.matched:
        from aquas.egraph.finalcheck import Checker

        with Checker(source, result.extension, result.cflags) as checker:
            for d in result.matched:
                _final_check(result, checker, [d], {id(d): edits[id(d)]})
            by_fn: dict[str, list[Decision]] = {}
            for d in result.matched:
                by_fn.setdefault(d.function, []).append(d)
            for ds in by_fn.values():
                if len(ds) > 1:  # each alone passed: the function with all of them together
                    _final_check(result, checker, ds, {id(d): edits[id(d)] for d in ds})
    return _apply(source, [edits[id(d)] for d in result.matched])


RT_HEADER = "aquas_rt.h"

_LEAVES = re.compile(r"\b(return|goto|break|continue)\b")


@dataclasses.dataclass
class Site:
    """A rewritten region of an application file, measured between region markers of its
    own (``SITE_BASE + index``) in the site-instrumented builds."""

    index: int
    file: str
    function: str
    line: int
    isax: str
    instrumented: bool
    why_not: str = ""

    @property
    def region(self) -> int:
        return SITE_BASE + self.index


def instrumented(result: MatchResult, first: int) -> tuple[str, str, list[Site]]:
    """The application source as written and as :func:`rewrite_c` rewrites it, with every
    rewritten region between ``AQUAS_REGION_BEGIN``/``END`` markers of its own site (numbered
    from ``first``), and the sites: what ``aquas run`` measures the software and the
    offloaded code of each site with. Call it after :func:`rewrite_c` (its final check may
    refuse rewrites). A region that may leave its statements early (``return``, ``goto``,
    ``break``, ``continue``) would skip its end marker: it is not instrumented."""
    prog = result.program
    assert prog is not None
    source = prog.source
    fns = {cf.name: cf for cf in prog.functions}
    base: list[tuple[int, int, str]] = []
    isax: list[tuple[int, int, str]] = []
    sites: list[Site] = []
    for k, d in enumerate(result.matched, start=first):
        start, end, text = replacement(d, fns[d.function], source)
        site = Site(k, result.app.name, d.function, d.line, d.isax, True)
        sites.append(site)
        cf = fns[d.function]
        # the declarations just before the region that only it reads are the software it
        # replaces too: after the rewrite they are dead, and the compiler drops them
        first = _dead_prefix(cf, source, start, end, text)
        after = source[end : cf.span.end]
        # a region declaring no name read after it goes in braces (it may be the body of
        # a loop or a branch); one that does cannot be such a body
        braces = not any(
            first <= v.span_start < end and re.search(rf"\b{re.escape(v.name)}\b", after)
            for v in _declared(cf, source)
        )
        ind = _indent(source, first)
        ret = cf.ret.c_name() if cf.ret else None
        marked = [
            _between_markers(
                t, site.region, ind, braces, ret, *_live_scalars(cf, source, first, t, after)
            )
            for t in (source[first:end], source[first:start] + text)
        ]
        if isinstance(marked[0], str) and isinstance(marked[1], str):
            base.append((first, end, marked[0]))
            isax.append((first, end, marked[1]))
        else:
            site.instrumented = False
            site.why_not = next(m.why for m in marked if isinstance(m, _Unmarked))
            isax.append((start, end, text))
    return _with_rt(_apply(source, base, header=False)), _with_rt(_apply(source, isax)), sites


@dataclasses.dataclass(frozen=True)
class _Declared:
    name: str
    span_start: int  # where its declaration statement starts in the source
    ctype: cfront.CType
    param: bool


def _declared(cf: cfront.CFunction, source: str) -> list[_Declared]:
    """The function's parameters and its locals, each with where it is declared."""
    out = [_Declared(v.name, cf.span.start, v.ctype, True) for v in cf.params]
    starts = {st.target: st.span.start for st in cf.stmts if st.kind == "decl" and st.target}
    line_at = [0, *(m.end() for m in re.finditer("\n", source))]
    for v in cf.locals.values():
        # a declaration statement's start, else its declarator's (a for loop's counter)
        at = starts.get(v.name, line_at[v.line - 1] + v.col - 1 if v.line > 0 else cf.span.start)
        out.append(_Declared(v.name, at, v.ctype, False))
    return out


def _dead_prefix(cf: cfront.CFunction, source: str, start: int, end: int, text: str) -> int:
    """Where the site of a region ``[start, end)`` replaced by ``text`` starts: the region,
    extended back over the declarations right before it whose names neither the code
    after it nor ``text`` reads."""
    after = source[end : cf.span.end]
    prev = sorted(
        (st for st in cf.stmts if st.span.end <= start and st.span.start >= cf.span.start),
        key=lambda st: -st.span.end,
    )
    first = start
    for st in prev:
        if st.span.end > first:
            continue  # inside a statement already taken, or enclosing the region
        if source[st.span.end : first].strip() or st.kind != "decl" or not st.target:
            break
        used = re.compile(rf"\b{re.escape(st.target)}\b")
        if used.search(after) or used.search(text):
            break
        first = st.span.start
    return first


def _live_scalars(
    cf: cfront.CFunction, source: str, first: int, body: str, after: str
) -> tuple[list[str], list[str]]:
    """The scalar and pointer variables of at most 32 bits that ``body`` (the site's code,
    from ``first``) reads from before it (``ins``) and that the code ``after`` it may read
    (``outs``). The markers pin them (``AQUAS_PIN``: an empty ``asm`` that takes and gives
    the value in a register): the site's arithmetic then cannot move across its markers,
    which order only memory accesses (``AQUAS_BARRIER``)."""
    lines = source.splitlines()
    ins, outs = [], []
    for v in _declared(cf, source):
        n = v.name
        if not re.search(rf"\b{re.escape(n)}\b", body):
            continue
        if not (v.ctype.pointer or (v.ctype.obj is None and v.ctype.width <= 32)):
            continue
        if v.ctype.const and not v.ctype.pointer:
            continue  # a const scalar cannot be an asm output
        decl = "" if v.param else lines[source.count("\n", 0, v.span_start)]
        if re.search(rf"\b{re.escape(n)}\s*\[", decl):
            continue  # an array
        if (v.param or v.span_start < first) and n not in ins:
            ins.append(n)
        if re.search(rf"\b{re.escape(n)}\b", after) and n not in outs:
            outs.append(n)
    return ins, outs


@dataclasses.dataclass
class _Unmarked:
    why: str


_FINAL_RETURN = re.compile(r"\breturn\b(?P<value>[^;]*);\s*$", re.S)


def _between_markers(
    body: str,
    rid: int,
    ind: str,
    braces: bool,
    ret: str | None,
    ins: list[str],
    outs: list[str],
) -> str | _Unmarked:
    """``body`` (statements) between the begin and end markers of region ``rid``, its
    ``ins`` pinned after the begin marker and its ``outs`` before the end marker
    (:func:`_live_scalars`). A final ``return v;`` (the function's return type ``ret``)
    keeps its value and ends the region before returning it; any other way out of the
    statements would skip the end marker."""
    pin_in = "".join(f" AQUAS_PIN({n});" for n in ins)
    end = "".join(f"AQUAS_PIN({n}); " for n in outs) + f"AQUAS_REGION_END({rid:#x});"
    m = _FINAL_RETURN.search(body)
    if m is not None and ret is not None and m.group("value").strip():
        body = (
            f"{body[: m.start()]}{{ {ret} aquas_site_value = ({m.group('value').strip()}); "
            f"AQUAS_PIN(aquas_site_value); {end} return aquas_site_value; }}"
        )
        end = ""
    elif m is not None and ret is None:
        body, end = f"{body[: m.start()]}{{ {end} return; }}", ""
    leaves = _LEAVES.search(body[: m.start()] if m is not None else body)
    if leaves:
        return _Unmarked(f"the region may leave by {leaves.group(1)}")
    inner = f"AQUAS_REGION_BEGIN({rid:#x});{pin_in}\n{ind}{body}" + (f"\n{ind}{end}" if end else "")
    return f"{{ {inner} }}" if braces else inner


def _with_rt(text: str) -> str:
    return _with_include(text, RT_HEADER)


def _final_check(
    result: MatchResult,
    checker: Checker,
    ds: list[Decision],
    edits: dict[int, tuple[int, int, str]],
) -> None:
    from aquas.egraph.patterns import FINAL

    prog = result.program
    assert prog is not None
    cf = next(f for f in prog.functions if f.name == ds[0].function)
    verdict = checker.check(_apply(prog.source, list(edits.values())), cf)
    if not verdict.ok:
        for d in ds:
            d.status, d.reason, d.detail = "rejected", FINAL, verdict.reason
    else:
        for d in ds:
            if d.binding is not None:
                note = f"final check: same outputs and memory on {verdict.trials} random inputs"
                d.binding.proof = f"{d.binding.proof}; {note}" if d.binding.proof else note


def _apply(source: str, edits: list[tuple[int, int, str]], header: bool = True) -> str:
    if not edits:
        return source
    edits = sorted(edits)
    out, pos = [], 0
    for a, b, text in edits:
        if a < pos:
            raise EmitError("overlapping matched regions")
        out.append(source[pos:a])
        out.append(text)
        pos = b
    out.append(source[pos:])
    return _with_include("".join(out)) if header else "".join(out)


def _with_include(text: str, header: str = HEADER) -> str:
    line = f'#include "{header}"\n'
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
        if d.binding.chunk is not None or d.fields or d.filter is not None or d.binding.guard:
            raise EmitError(
                "strip-mined, packed-result, filter-loop and alias-guarded matches are emitted "
                "for C input only"
            )
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
            _mlir_operand(d.binding.regs[r], args, new, module)
            for r in ("rs1", "rs2")
            if r in d.pattern.uses
        ]
        if d.pattern.preload is not None:  # fill the scratchpad the ISAX reads first
            pre = f"aquas_{d.pattern.preload}"
            new.append(
                func.CallOp(
                    pre, [_mlir_operand(d.binding.regs[PRELOAD_REG], args, new, module)], []
                )
            )
            if pre not in declared:
                module.body.block.add_op(func.FuncOp.external(pre, [i32], []))
                declared.add(pre)
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


def _mlir_operand(
    t: Term, args: dict[str | None, SSAValue], new: list[Operation], module: ModuleOp | None = None
) -> SSAValue:
    """Ops computing a linear operand (pointer arguments and globals + offset) as i32;
    appended to new."""
    i32 = IntegerType(32)
    lin = linear(t)
    acc: SSAValue | None = None
    for atom, c in lin.terms:
        a = args.get(str(atom.val)) if atom.op == "var" else None
        name = str(atom.val)
        if a is None and atom.op == "var" and name.startswith("@") and module is not None:
            g = SymbolTable.lookup_symbol(module, name[1:])
            if isinstance(g, memref.GlobalOp):  # a global's address
                ref = memref.GetGlobalOp(name[1:], g.type)
                new.append(ref)
                a = ref.results[0]
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
