"""Register patterns with a packed result and packed operands (the Kyber butterfly
``ntt_bfly(rs1 = {b:16, a:16}, rs2 = zeta) -> rd = {diff:16, sum:16}``).

Application code computes such an ISAX as a few statements that store two values
(``p[j + len] = (a + q - t) % q; p[j] = (a + t) % q;``). The matcher (``Matcher.match_fields``)
takes short windows of consecutive statements with exactly two stores, executes them
symbolically and compares each stored value with one bit field of the ISAX's result; the
operands may be values packed by the rewrite (``(uint32_t)b << 16 | a`` for 16-bit ``a``,
``b``). This module holds the pure parts: the fields of a result, the packed operand and
the ISAX side with a packed operand substituted.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func, memref, scf

from aquas.egraph.regions import AppStmt
from aquas.egraph.terms import Term, binop, cast, const, substitute, var

FIELD_W = 16  # the width of a packed field (rs1 = {b:16, a:16}, rd = {diff:16, sum:16})
MAX_WINDOW = 5  # statements in one window: a butterfly is four


def result_fields(rd: Term | None) -> list[tuple[int, Term]] | None:
    """``[(0, lo), (16, hi)]`` when ``rd`` is ``zext(hi) << 16 | zext(lo)`` for 16-bit
    ``hi`` and ``lo`` (how the spec's ``return {hi:16, lo:16}`` executes), else None."""
    if rd is None or rd.w != 2 * FIELD_W or rd.op != "or":
        return None
    out: dict[int, Term] = {}
    for x in rd.args:
        if (
            x.op == "shl"
            and x.args[1].op == "const"
            and int(x.args[1].val) == FIELD_W
            and x.args[0].op == "zext"
            and x.args[0].args[0].w == FIELD_W
        ):
            out[FIELD_W] = x.args[0].args[0]
        elif x.op == "zext" and x.args[0].w == FIELD_W:
            out[0] = x.args[0]
    return sorted(out.items()) if len(out) == 2 else None


def pack(hi: Term, lo: Term) -> Term:
    """The 32-bit operand ``{hi:16, lo:16}`` the rewrite builds: ``(uint32_t)hi << 16 | lo``."""
    assert hi.w == lo.w == FIELD_W
    w = 2 * FIELD_W
    return binop("or", binop("shl", cast("zext", w, hi), const(w, FIELD_W)), cast("zext", w, lo))


def with_operands(t: Term, env: dict[Term, Term]) -> Term:
    """``t`` (the ISAX side, over ``rs1``/``rs2``) with the operands of ``env``; a packed
    operand's fields are substituted where the ISAX extracts them: ``rs[15:0]`` (the node
    ``trunc16(rs)``) is ``lo`` and ``rs[31:16]`` (``trunc16(rs >> 16)``) is ``hi``. Both
    are identities of bit fields (``(zext(hi) << 16 | zext(lo))[15:0] = lo``, and ``hi``
    for bits 31..16), so the proof does not have to rediscover them."""
    full: dict[Term, Term] = dict(env)
    for reg, t_op in env.items():
        parts = packed_parts(t_op)
        if parts is None:
            continue
        hi, lo = parts
        w = 2 * FIELD_W
        full[cast("trunc", FIELD_W, reg)] = lo
        full[cast("trunc", FIELD_W, binop("shru", reg, const(w, FIELD_W)))] = hi
    return substitute(t, full)


def packed_parts(t: Term) -> tuple[Term, Term] | None:
    """``(hi, lo)`` of a term built by :func:`pack`, else None."""
    if t.op != "or" or t.w != 2 * FIELD_W:
        return None
    shl, lo = t.args
    if shl.op != "shl" or lo.op != "zext" or shl.args[0].op != "zext":
        return None
    return shl.args[0].args[0], lo.args[0]


def is_store(st: AppStmt) -> bool:
    """A C statement that stores one value and does nothing else (``p[j] = e;``)."""
    inner = [o for op in st.ops for o in op.walk()]
    return (
        st.src is not None
        and st.kind == "assign"
        and st.target is None
        and sum(isinstance(o, memref.StoreOp) for o in inner) == 1
        and not any(isinstance(o, func.CallOp | scf.ForOp | scf.WhileOp | scf.IfOp) for o in inner)
    )


def is_local_def(st: AppStmt) -> bool:
    """A C declaration or assignment of one scalar with no other effect (``uint16_t a = p[j];``)."""
    inner = [o for op in st.ops for o in op.walk()]
    return (
        st.src is not None
        and st.kind in ("decl", "assign")
        and st.target is not None
        and not any(
            isinstance(o, memref.StoreOp | func.CallOp | scf.ForOp | scf.WhileOp | scf.IfOp)
            for o in inner
        )
    )


def load_after_store(window: Sequence[AppStmt]) -> bool:
    """Whether a load follows a store in the window (the rewrite evaluates every operand,
    loads included, before the stores: only windows that load first keep their meaning
    without an alias analysis)."""
    stored = False
    for st in window:
        for op in st.ops:
            for o in op.walk():
                if isinstance(o, memref.StoreOp):
                    stored = True
                elif isinstance(o, memref.LoadOp) and stored:
                    return True
    return False


def regs_of(uses: Sequence[str]) -> list[Term]:
    return [var(r, 2 * FIELD_W) for r in ("rs1", "rs2") if r in uses]
