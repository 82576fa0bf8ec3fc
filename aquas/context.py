"""The xDSL context with every dialect aquas IR uses (neutral ground: any room may import it)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf

from aquas.dialects import aquas as aq


def make_context() -> Context:
    ctx = Context()
    for d in (builtin.Builtin, arith.Arith, scf.Scf, aq.Aquas):
        ctx.load_dialect(d)
    return ctx
