"""Loops that run a stateful filter ISAX once per iteration (the pattern: egraph/stateful.py).

``match_filter_loop`` executes one iteration of a ``for`` loop from a symbolic index, binds
the filter's state layouts to the memory the iteration reads at the start and stores at the
end (or, ``_match_locals``, to the local scalars the loop carries), and proves the iteration
equal to one call; ``FilterLoop`` is what the emitter needs (egraph/emit.py,
``_filter_text``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from xdsl.dialects import func, memref, scf

from aquas.egraph.cost import software_cycles
from aquas.egraph.patterns import (
    DEPENDENCE,
    LIVEOUT,
    PROFIT,
    RULE,
    SHAPE,
    TARGET,
    UNSUPPORTED,
    VALUE,
    Pattern,
)
from aquas.egraph.regions import AppBlock, AppFunction, Binding, Decision, loop_of
from aquas.egraph.semantics import Access, Effects, Executor, Unsupported, width_of
from aquas.egraph.stateful import Filter, Layout
from aquas.egraph.terms import (
    Linear,
    Term,
    cast,
    linear_term,
    load,
    show,
    substitute,
    var,
    variables,
)
from aquas.egraph.widen import widen
from aquas.target import OPCODE_NAMES

if TYPE_CHECKING:
    from aquas.egraph.matcher import Matcher


@dataclass
class FilterLoop:
    """A matched filter loop: the layouts' bases, the per-call operands and output, and
    the sample accesses the run-time guard keeps apart from the state."""

    filter: Filter
    coef_base: Term | None  # rs1 of the loader
    hist_base: Term | None  # rs1 of the restorer and the saver (None: hist_locals)
    operands: dict[str, Term]  # rs1/rs2 of each call, over the loop index
    output: tuple[Term, int] | None  # address and bits of the stored rd
    samples: list[tuple[Term, int]]  # every varying access: address over the index, bits
    iv: Term  # the loop index variable
    lb: Term
    ub: Term
    # the history kept in local scalars the loop carries: their C names in the saver's slot
    # order (None: the history is in memory at hist_base)
    hist_locals: tuple[str, ...] | None = None


def _varies(lin: Linear, iv: Term) -> int:
    """The coefficient of the loop index in an address (0: invariant)."""
    return next((c for a, c in lin.terms if a is iv), 0)


def _bases(layout: Layout, accesses: list[Access]) -> list[Linear]:
    """Candidate bases for ``layout``: an access at ``base + off`` of a slot's width."""
    out: list[Linear] = []
    for a in accesses:
        for _, off, w in layout.slots:
            if a.width == w:
                b = a.lin.shifted(-off)
                if b not in out:
                    out.append(b)
    return out


def _at(base: Linear, off: int) -> Term:
    return linear_term(base.shifted(off))


def match_filter_loop(
    m: Matcher, fn: AppFunction, blk: AppBlock, i: int, p: Pattern, f: Filter
) -> Decision:
    st = blk.stmts[i]
    d = Decision(fn.name, p.name, st.line, "rejected", UNSUPPORTED, pattern=p, anchor=st)
    d.region = [st]
    loop = loop_of(st)
    if not isinstance(loop, scf.ForOp) or st.iv is None:
        d.detail = "a stateful filter is matched on canonical for loops only"
        return d
    carried_names = [fn.names.get(r) for r in loop.results]
    if loop.iter_args and (
        None in carried_names
        or sorted(width_of(r.type) for r in loop.results) != sorted(w for _, _, w in f.saver.slots)
    ):
        d.reason = LIVEOUT
        d.detail = (
            f"the loop carries local variables ({', '.join(n or '?' for n in carried_names)}) "
            f"that are not exactly the filter's history ({', '.join(f'{r}: i{w}' for r, _, w in f.saver.slots)}); "
            "the state must be those locals or live in memory (fields read at the start of "
            "an iteration and written at its end)"
        )
        return d
    if any(isinstance(o, func.CallOp | scf.ForOp | scf.WhileOp) for o in loop.body.walk()):
        d.detail = "the loop body contains a call or a loop"
        return d
    try:
        step = m.resolver(fn, set())(loop.step)
        if step.op != "const" or not 0 < int(step.val) < 1 << 31:
            d.detail = "the loop's step is not a positive constant"
            return d
        ex = Executor(
            resolve=m.resolver(fn, set()), budget=m.opt.budget, plans=m.plans, shared=m.shared
        )
        inits = m.run_chunk(ex, fn, loop, 1)
        nexts = [ex.get(r) for r in loop.results]
        lb, ub = ex.get(loop.lb), ex.get(loop.ub)
    except Unsupported as e:
        d.detail = str(e)
        return d
    fx = ex.effects()
    iv = var(st.iv, lb.w)
    fx, hoisted = _with_hoisted_loads(m, fn, blk, i, fx, nexts)
    nexts = [substitute(t, hoisted) for t in nexts]
    fixed_w = [a for a in fx.writes if not _varies(a.lin, iv)]
    fixed_r = [a for a in fx.reads if not _varies(a.lin, iv)]
    moving = [a for a in [*fx.reads, *fx.writes] if _varies(a.lin, iv)]
    if any(_varies(a.lin, iv) >= 1 << 31 for a in moving):
        d.detail = "a sample's address does not grow with the loop index"
        return d
    out_writes = [a for a in fx.writes if _varies(a.lin, iv)]
    in_reads = [a for a in fx.reads if _varies(a.lin, iv)]
    if any(w.seq < r.seq for w in out_writes for r in in_reads):
        # the rewrite reads every sample (the call's operand) before it stores the result
        d.reason = DEPENDENCE
        d.detail = "an iteration stores a sample before it loads another"
        return d
    if inits:
        return _match_locals(m, fn, d, f, fx, iv, lb, ub, inits, nexts, carried_names, moving)
    if len(fixed_w) != len(f.saver.slots):
        d.reason = SHAPE
        d.detail = (
            f"an iteration stores {len(fixed_w)} loop-invariant location(s); {f.saver.isax} "
            f"saves {len(f.saver.slots)} state register(s) ({', '.join(r for r, _, _ in f.saver.slots)})"
        )
        return d
    if len(out_writes) > (1 if f.rd is not None else 0):
        d.reason = SHAPE
        d.detail = f"an iteration stores {len(out_writes)} samples; {f.step} returns one"
        return d
    last: tuple[str, str] = (SHAPE, "no binding of the state layouts to the loop's memory")
    for hist in _bases(f.saver, fixed_w):
        by_addr = {(a.lin, a.width): a for a in fixed_w}
        if any((hist.shifted(o), w) not in by_addr for _, o, w in f.saver.slots):
            continue
        reads_at = {(a.lin, a.width) for a in fixed_r}
        coef_cands: list[Linear | None] = [None]
        if f.loader is not None:
            coef_cands = [
                b
                for b in _bases(f.loader, [a for a in fixed_r if a.lin.terms != hist.terms])
                if all((b.shifted(o), w) in reads_at for _, o, w in f.loader.slots)
            ]
        if not coef_cands:
            assert f.loader is not None
            last = (
                SHAPE,
                (
                    f"the iteration does not read the memory {f.loader.isax} loads "
                    f"({', '.join(r for r, _, _ in f.loader.slots)} at offsets "
                    f"{', '.join(str(o) for _, o, _ in f.loader.slots)}) apart from the history"
                ),
            )
        for coef in coef_cands:
            r = _try_binding(m, fn, d, f, fx, iv, hist, coef, by_addr, out_writes, moving)
            if r is None:
                d.filter = FilterLoop(
                    f,
                    None if coef is None else linear_term(coef),
                    linear_term(hist),
                    dict(d.binding.regs) if d.binding else {},
                    (out_writes[0].addr, out_writes[0].width) if out_writes else None,
                    [(a.addr, a.width) for a in moving],
                    iv,
                    lb,
                    ub,
                )
                return _finish(m, d, f, fx, moving)
            last = r
            d.blockers.append(f"{r[0]}: {r[1]}")
    d.reason, d.detail = last
    return d


def _match_locals(
    m: Matcher,
    fn: AppFunction,
    d: Decision,
    f: Filter,
    fx: Effects,
    iv: Term,
    lb: Term,
    ub: Term,
    inits: list[Term],
    nexts: list[Term],
    names: list[str | None],
    moving: list[Access],
) -> Decision:
    """The filter's history kept in local scalars the loop carries (``x2 = x1; x1 = x;``):
    each carried local is one of the saver's registers (every assignment of locals to
    registers of their width is tried; its entry value is the register's, its next value
    must be the register's next value), the coefficients are in memory (the loader's
    layout), and the iteration stores nothing but the output sample. The emitter moves the
    locals into the unit through a static buffer in the saver's layout (egraph/emit.py)."""
    fixed_w = [a for a in fx.writes if not _varies(a.lin, iv)]
    fixed_r = [a for a in fx.reads if not _varies(a.lin, iv)]
    out_writes = [a for a in fx.writes if _varies(a.lin, iv)]
    if fixed_w:
        d.reason = SHAPE
        d.detail = (
            f"an iteration carries the history in locals and also stores {len(fixed_w)} "
            "loop-invariant location(s)"
        )
        return d
    if len(out_writes) > (1 if f.rd is not None else 0):
        d.reason = SHAPE
        d.detail = f"an iteration stores {len(out_writes)} samples; {f.step} returns one"
        return d
    reads_at = {(a.lin, a.width) for a in fixed_r}
    coef_cands: list[Linear | None] = [None]
    if f.loader is not None:
        coef_cands = [
            b
            for b in _bases(f.loader, fixed_r)
            if all((b.shifted(o), w) in reads_at for _, o, w in f.loader.slots)
        ]
    if not coef_cands:
        assert f.loader is not None
        d.reason = SHAPE
        d.detail = (
            f"the iteration does not read the memory {f.loader.isax} loads "
            f"({', '.join(r for r, _, _ in f.loader.slots)})"
        )
        return d
    last: tuple[str, str] = (VALUE, "no assignment of the carried locals to the history")
    regs = [(r, w) for r, _, w in f.saver.slots]
    for perm in itertools.permutations(range(len(inits))):
        if any(inits[k].w != w for k, (_, w) in zip(perm, regs, strict=True)):
            continue
        local_state = {r: (inits[k], nexts[k]) for k, (r, _) in zip(perm, regs, strict=True)}
        for coef in coef_cands:
            r = _try_binding(m, fn, d, f, fx, iv, None, coef, {}, out_writes, moving, local_state)
            if r is None:
                d.filter = FilterLoop(
                    f,
                    None if coef is None else linear_term(coef),
                    None,
                    dict(d.binding.regs) if d.binding else {},
                    (out_writes[0].addr, out_writes[0].width) if out_writes else None,
                    [(a.addr, a.width) for a in moving],
                    iv,
                    lb,
                    ub,
                    tuple(str(names[k]) for k in perm),
                )
                return _finish(m, d, f, fx, moving)
            if _REASON_ORDER.get(r[0], 0) >= _REASON_ORDER.get(last[0], 0):
                last = r
    d.reason, d.detail = last
    d.detail = f"the history in locals {', '.join(str(n) for n in names)}: {d.detail}"
    return d


_REASON_ORDER = {VALUE: 1, RULE: 2, DEPENDENCE: 3}


def _with_hoisted_loads(
    m: Matcher, fn: AppFunction, blk: AppBlock, i: int, fx: Effects, extra: list[Term]
) -> tuple[Effects, dict[Term, Term]]:
    """The iteration's effects with every value loaded before the loop (``int16_t b0 =
    k[0];`` in an earlier statement of the loop's block) read as that load, when no
    statement from the load to the loop stores or calls: the memory then still holds the
    value when the loop starts, so a loader ISAX may read it there. Also returns the
    substitution, for the ``extra`` terms (the carried values' next values)."""
    values = [a.value for a in fx.writes if a.value is not None] + extra
    env: dict[Term, Term] = {}
    reads = list(fx.reads)
    for v in {x for t in values for x in variables(t)}:
        ssa = m.values.get(v, set())
        if len(ssa) != 1:
            continue
        (val,) = ssa
        op = val.owner
        if not isinstance(op, memref.LoadOp):
            continue
        j = next((k for k in range(i) if op in blk.stmts[k].ops), None)
        if j is None:
            continue
        between = [o for s in blk.stmts[j:i] for x in s.ops for o in x.walk()]
        if any(isinstance(o, memref.StoreOp | func.CallOp) for o in between):
            continue
        ex = Executor(resolve=m.resolver(fn, set()), budget=1_000, plans=m.plans, shared=m.shared)
        try:
            ex.op(op)
        except Unsupported:
            continue
        t = ex.env[op.results[0]]
        if t.op != "load" or t.w != v.w:
            continue
        env[v] = t
        reads += ex.effects().reads
    if not env:
        return fx, env
    writes = [
        Access(a.addr, a.lin, a.width, a.seq, None if a.value is None else substitute(a.value, env))
        for a in fx.writes
    ]
    return replace(fx, reads=reads, writes=writes), env


def _try_binding(
    m: Matcher,
    fn: AppFunction,
    d: Decision,
    f: Filter,
    fx: object,
    iv: Term,
    hist: Linear | None,
    coef: Linear | None,
    by_addr: dict[tuple[Linear, int], Access],
    out_writes: list[Access],
    moving: list[Access],
    local_state: dict[str, tuple[Term, Term]] | None = None,
) -> tuple[str, str] | None:
    """Prove one iteration equal to one call under this binding of the layouts; sets
    ``d.binding`` on success, else returns (reason, detail). ``local_state``: the history
    in carried locals instead of memory at ``hist``, register -> (entry value, next)."""
    env: dict[Term, Term] = {}
    if hist is not None:
        for reg, off, w in f.saver.slots:
            env[load(w, _at(hist, off))] = var(f"state@{reg}", w)
    else:
        assert local_state is not None
        for reg, _, w in f.saver.slots:
            env[local_state[reg][0]] = var(f"state@{reg}", w)
    if coef is not None and f.loader is not None:
        if hist is not None and coef.terms == hist.terms:
            lo_c, hi_c = f.loader.size
            lo_h, hi_h = f.saver.size
            if coef.offset + lo_c < hist.offset + hi_h and hist.offset + lo_h < coef.offset + hi_c:
                return DEPENDENCE, "the coefficients overlap the history the loop stores"
        for reg in f.coefficients:
            off, w = f.loader.slot(reg)
            env[load(w, _at(coef, off))] = var(f"state@{reg}", w)
    pairs_state: list[tuple[Term, Term]] = []
    for reg, off, w in f.saver.slots:
        if hist is not None:
            stored = by_addr[(hist.shifted(off), w)].value
        else:
            assert local_state is not None
            stored = local_state[reg][1]
        assert stored is not None
        pairs_state.append((substitute(stored, env), f.next_state[reg]))
    out_value = None
    if out_writes:
        assert out_writes[0].value is not None
        out_value = substitute(out_writes[0].value, env)
    # operand candidates: the iteration's sample loads, zero- or sign-extended to 32 bits
    loads = [load(a.width, a.addr) for a in moving if a.value is None and a.width <= 32]
    cands: list[Term] = []
    for t in loads:
        for kind in ("zext", "sext"):
            c = t if t.w == 32 else cast(kind, 32, t)
            if c not in cands:
                cands.append(c)
    if not cands and f.operands:
        return SHAPE, "the iteration loads no sample for the filter's register operand"
    last: tuple[str, str] = (VALUE, "no operand choice gives the same values")
    for choice in itertools.product(cands, repeat=len(f.operands)):
        regs = dict(zip(f.operands, choice, strict=True))
        sub = {var(r, 32): t for r, t in regs.items()}
        pairs = [(a, substitute(b, sub)) for a, b in pairs_state]
        if out_value is not None:
            assert f.rd is not None
            rd = substitute(f.rd, sub)
            pairs.append((out_value, rd if out_value.w == 32 else cast("trunc", out_value.w, rd)))
        if not m.random_equal(pairs):
            bad = next(
                (
                    reg
                    for (reg, _, _), pr in zip(f.saver.slots, pairs, strict=False)
                    if not m.random_equal([pr])
                ),
                "the stored output",
            )
            last = (
                VALUE,
                (
                    f"with {', '.join(f'{r}={show(t, 3)}' for r, t in regs.items())}: "
                    f"{bad if bad == 'the stored output' else 'the value stored to @' + bad} "
                    "differs on random inputs"
                ),
            )
            continue
        # the filter's fixed-point arithmetic at other widths than the C code's (egraph/widen.py)
        ok, prover = m.prove(
            list(zip(*[iter(widen([x for pr in pairs for x in pr]))] * 2, strict=True))
        )
        if not ok:
            last = (
                RULE,
                (
                    f"{len(pairs)} component(s) equal on random inputs but not proven "
                    f"({prover.stats.stopped})"
                ),
            )
            continue
        d.binding = Binding(regs)
        d.binding.proof = (
            f"one iteration = one {f.step} call: {len(pairs)} component(s) (state "
            f"{', '.join('@' + r for r in f.carried)}"
            + (", the stored sample" if out_value is not None else "")
            + f") proven in {prover.stats.iterations} e-graph iteration(s), "
            f"{prover.stats.nodes} e-nodes"
        )
        return None
    return last


def _finish(m: Matcher, d: Decision, f: Filter, fx: object, moving: list[Access]) -> Decision:
    from aquas.egraph.semantics import Effects

    assert isinstance(fx, Effects)
    p = d.pattern
    assert p is not None
    core = m.core
    d.sw_cycles = software_cycles(fx, core)
    kept = sum(core.load if a.value is None else core.store for a in moving)
    d.hw_cycles = p.latency + p.maintenance + core.call_overhead + int(kept)
    if m.opt.check_profit and d.hw_cycles >= d.sw_cycles:
        d.status, d.reason = "rejected", PROFIT
        d.detail = f"{p.name} takes ~{d.hw_cycles} cycles per sample, software ~{d.sw_cycles}"
        return d
    routed = m.target.routed_opcodes
    opcodes = {q.name: q.opcode for q in m.patterns}
    for name in f.isaxs:
        if opcodes.get(name) not in routed:
            op = opcodes.get(name, 0)
            d.status, d.reason = "rejected", TARGET
            d.detail = (
                f"{name} is encoded on {OPCODE_NAMES.get(op, hex(op))}; {m.target.name} "
                "does not route it to its ISAX unit, so the loop stays in software"
            )
            return d
    d.status, d.reason = "matched", ""
    assert d.binding is not None
    d.detail = ", ".join(f"{k}={show(v, 4)}" for k, v in sorted(d.binding.regs.items()))
    return d


__all__ = ["FilterLoop", "match_filter_loop"]
