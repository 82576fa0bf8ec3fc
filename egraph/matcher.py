"""Skeleton-components matching of ISAX semantics in application code, with soundness checks.

Data flow (docs/matcher.md has the full story)::

    ISAX (aquas dialect) --symbolic execution--> Effects over rs1/rs2   (pattern)
    app function (MLIR) --candidate regions-----> Effects over params    (per region)
        --> skeleton: footprints per base, trip-count alignment (strip-mining + remainder)
        --> binding: rs1/rs2 := app base + offset (memory ISAXs) or leaf values (register ISAXs),
            one binding shared by every component
        --> components: every written address and the result, proven equal in the e-graph
        --> soundness: write set exact, reads covered, live-outs produced, aliasing hazards
        --> cost: ISAX latency (scheduler) + invocation vs software estimate for the core
        --> Decision (matched / rejected + reason)

A *region* is a contiguous run of statements of one block (a loop with the statements that
prepare its inputs and consume its results) or, for register-only ISAXs, one statement whose
value is an expression.  Loops with constant bounds are executed symbolically (the
"unroll" external rewrite); a loop longer than the ISAX is strip-mined into ISAX-sized chunks
with the remainder left in software.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, StringAttr, UnrealizedConversionCastOp
from xdsl.ir import Operation, OpResult, SSAValue

from aquas.egraph import fields
from aquas.egraph.binding import BindingChecks, Options, RegionFx, global_names, iv_name
from aquas.egraph.cost import software_cycles
from aquas.egraph.egg import Normalizer
from aquas.egraph.patterns import (
    BOUND,
    DEPENDENCE,
    FINAL,
    LIVEOUT,
    PROFIT,
    RULE,
    SHAPE,
    TARGET,
    TYPE,
    UNSUPPORTED,
    VALUE,
    Pattern,
    patterns_of,
)
from aquas.egraph.ranges import unsigned
from aquas.egraph.regions import (
    AppBlock,
    AppFunction,
    AppParam,
    AppStmt,
    Binding,
    Decision,
    carried_names,
    chunkable,
    counter_of,
    defs_of,
    function_of,
    is_pure,
    loop_of,
    params_of_mlir,
    uses_of,
)
from aquas.egraph.semantics import (
    ADDR_W,
    Access,
    Budget,
    Effects,
    Executor,
    Unsupported,
    cast_address,
    width_of,
)
from aquas.egraph.soundness import (
    Trial,
    c_type_name,
    computed_operands,
    dedup,
    leaf_operands,
    pieces,
)
from aquas.egraph.stateful_loop import match_filter_loop
from aquas.egraph.terms import (
    Linear,
    Term,
    binop,
    cast,
    const,
    evaluate,
    linear,
    linear_parts,
    linear_term,
    mask,
    mk,
    show,
    substitute,
    var,
    variables,
    walk,
)
from aquas.intops import to_signed
from aquas.target import OPCODE_NAMES, Target, load_target

# ---------------------------------------------------------------------------------------
# The matcher
# ---------------------------------------------------------------------------------------


def _held_mask(t: Term) -> int | None:
    """``m`` when ``t == t & m`` by its form: ``s & m`` for a constant ``m``, or a zero
    extension (``m`` its source's bits)."""
    if t.op == "and":
        for c in t.args:
            if c.op == "const":
                return int(c.val) & ((1 << t.w) - 1)
    if t.op == "zext" and int(t.val) < t.w:
        return (1 << int(t.val)) - 1
    return None


def _software_work(nodes: Sequence[Term]) -> Effects:
    """What a register pattern's replaced computation costs in software: its operations,
    multiplications and divisions (the operands' own computation is not in ``nodes``)."""
    fx = Effects(ops=len(nodes))
    fx.muls = sum(1 for n in nodes if n.op == "mul")
    fx.divs = sum(1 for n in nodes if n.op in ("divu", "divs", "remu", "rems"))
    return fx


@dataclass
class _Run:
    """One symbolic execution of a block's statements from a start index, advanced on
    demand; ``inside`` holds the ops executed so far (the region for the resolver)."""

    ex: Executor
    inside: set[Operation]
    next: int  # index of the next statement to execute
    inits: dict[Operation, list[Term]] = field(default_factory=dict)  # per loop executed
    ret: Term | None = None
    error: Unsupported | None = None


@dataclass
class _Signature:
    """What the skeleton checks need of a memory pattern."""

    bases: dict[str, list[Access]]
    read_bytes: int
    npieces: int


class Matcher(BindingChecks):
    def __init__(self, patterns: Sequence[Pattern], options: Options | None = None):
        self.patterns = list(patterns)
        self.opt = options or Options()
        core = self.opt.core
        self.target = core if isinstance(core, Target) else load_target(soc=core)
        self.core = self.target.cost
        # proof results by term identity (terms are hash-consed: identity is structure)
        self.proven: set[tuple[Term, Term]] = set()
        self.refuted: set[frozenset[tuple[Term, Term]]] = set()
        self.normalizer: Normalizer | None = None  # shared by every proof (see prove)
        self.anon: dict[SSAValue, str] = {}
        # the SSA values a named variable term stood for (a C name can denote several)
        self.values: dict[Term, set[SSAValue]] = {}
        # per function (reset by match_function): region effects by statement range, the
        # executions they are prefixes of, candidate ranges, loop shapes for strip-mining
        self.regions: dict[tuple[object, ...], RegionFx | Unsupported] = {}
        self.runs: dict[tuple[object, ...], _Run] = {}
        self.ranges: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self.defuse: dict[int, tuple[list[set[SSAValue]], list[set[SSAValue]]]] = {}
        self.shapes: dict[int, tuple[int | None, int, int] | None] = {}
        self.sigs: dict[int, _Signature] = {}
        self.plans: dict[Operation, tuple[Any, ...]] = {}  # decoded ops (see Executor)
        self.substs: dict[tuple[tuple[str, Term], ...], dict[Term, Term]] = {}
        self.trials = [Trial(k) for k in range(self.opt.random_trials)]
        # concrete values of ISAX terms by register values (see concrete_equal)
        self.isax_values: dict[tuple[Term, tuple[tuple[str, int], ...]], int] = {}
        self.shared = Budget(self.opt.function_budget, "per function")
        self.rd_ranges: dict[tuple[int, int], tuple[int, int]] = {}  # see result_range
        # functions whose returned value a register ISAX computes whole (fqmul), by the
        # line of that statement: their inlined calls are ISAX calls already
        self.isax_helpers: dict[str, tuple[int, str]] = {}

    # -- entry -------------------------------------------------------------------------
    def match_function(self, fn: AppFunction) -> list[Decision]:
        self.shared = Budget(
            self.opt.function_budget, f"per function, Options.function_budget, in '{fn.name}'"
        )
        self.regions, self.runs, self.ranges, self.shapes, self.plans = {}, {}, {}, {}, {}
        self.defuse = {}
        _add_member_pointers(fn)
        decisions: list[Decision] = []
        mem = [p for p in self.patterns if p.kind == "memory"]
        reg = [p for p in self.patterns if p.kind == "register"]
        filters = [p for p in self.patterns if p.filter is not None]
        claimed: set[int] = set()  # ids of ops inside regions already replaced
        for blk in fn.blocks:
            for i, st in enumerate(blk.stmts):
                if st.kind not in ("for", "while", "do") or id(st.ops[-1]) in claimed:
                    continue
                best: Decision | None = None
                tried: list[Decision] = []
                for p in mem:
                    d = self.match_loop(fn, blk, i, p)
                    tried.append(d)
                    if d.status == "matched" and (best is None or _gain(d) > _gain(best)):
                        best = d
                for p in filters if st.kind == "for" or isinstance(loop_of(st), scf.ForOp) else []:
                    assert p.filter is not None
                    t0 = time.perf_counter()
                    d = match_filter_loop(self, fn, blk, i, p, p.filter)
                    d.seconds = time.perf_counter() - t0
                    tried.append(d)
                    if d.status == "matched" and (best is None or _gain(d) > _gain(best)):
                        best = d
                if best is not None:
                    claimed.update(id(o) for s in best.region for op in s.ops for o in op.walk())
                    decisions.append(best)
                    decisions.extend(d for d in tried if d is not best and d.status != "matched")
                else:
                    decisions.extend(tried)
        if reg:
            decisions.extend(self.match_fields(fn, reg, claimed))
            decisions.extend(self.match_expressions(fn, reg, claimed))
        return decisions

    # -- memory ISAXs over loops ----------------------------------------------------------
    def match_loop(self, fn: AppFunction, blk: AppBlock, i: int, p: Pattern) -> Decision:
        t0 = time.perf_counter()
        anchor = blk.stmts[i]
        best = Decision(fn.name, p.name, anchor.line, "rejected", UNSUPPORTED, "no region tried")
        best.anchor = anchor
        rank = _REASON_RANK
        blockers: dict[str, str] = {}  # every region's and binding's reason -> first region
        for lo, hi in self.region_ranges(blk, i):
            for chunk in self.chunk_options(fn, blk, anchor, p) if lo == hi else [None]:
                d = self.try_region(fn, blk, lo, hi, anchor, p, chunk)
                if d.status == "matched" or d.reason == TARGET:  # proven: the answer
                    d.seconds = time.perf_counter() - t0
                    return d
                where = _lines(d.region) + (f", chunks of {chunk}" if chunk else "")
                for b in d.blockers or [f"{d.reason}: {d.detail}"]:
                    blockers.setdefault(b, where)
                if rank.get(d.reason, 0) >= rank.get(best.reason, 0):
                    best = d
        blockers.pop(f"{best.reason}: {best.detail}", None)
        best.blockers = [f"{w}: {b}" for b, w in list(blockers.items())[:MAX_BLOCKERS]]
        best.seconds = time.perf_counter() - t0
        return best

    def region_ranges(self, blk: AppBlock, i: int) -> list[tuple[int, int]]:
        """Statement ranges around loop ``i``: the loop alone, and the loop with the
        statements that produce its inputs (backward closure over def-use) and consume its
        results (forward closure), each at most ``max_context`` statements away.  Computed
        once per loop (every pattern tries the same ranges)."""
        key = (id(blk), i)
        if key not in self.ranges:
            self.ranges[key] = self._region_ranges(blk, i)
        return self.ranges[key]

    def _region_ranges(self, blk: AppBlock, i: int) -> list[tuple[int, int]]:
        n = len(blk.stmts)
        if id(blk) not in self.defuse:
            self.defuse[id(blk)] = (
                [defs_of(st) for st in blk.stmts],
                [uses_of(st) for st in blk.stmts],
            )
        defs, uses = self.defuse[id(blk)]
        lo, hi = i, i
        for _ in range(n):
            inner = set().union(*defs[lo : hi + 1])
            later = [j for j in range(hi + 1, n) if uses[j] & inner]
            new_hi = max(later, default=hi)
            needed = set().union(*uses[lo : new_hi + 1])
            earlier = [j for j in range(lo) if defs[j] & needed and blk.stmts[j].span]
            new_lo = min(earlier, default=lo)
            new_lo = max(new_lo, i - self.opt.max_context)
            new_hi = min(new_hi, i + self.opt.max_context)
            if (new_lo, new_hi) == (lo, hi):
                break
            lo, hi = new_lo, new_hi
        # memory dependences are not def-use edges: also try the next few statements
        ends = [i, hi, *range(i + 1, min(n, i + 4))]
        ends += [e + 1 for e in ends if e + 1 < n and blk.stmts[e + 1].kind == "return"]
        out = [(a, b) for b in sorted(set(ends)) for a in (i, lo) if a <= b]
        return list(dict.fromkeys(out))

    def chunk_options(
        self, fn: AppFunction, blk: AppBlock, anchor: AppStmt, p: Pattern
    ) -> list[int | None]:
        """None = the whole loop; k = strip-mine the loop into chunks of k iterations."""
        loop = loop_of(anchor)
        if p.fx is None or not chunkable(anchor):
            return [None]
        assert isinstance(loop, scf.ForOp | scf.WhileOp)
        try:
            ex = Executor(
                resolve=self.resolver(fn, set()),
                budget=self.opt.budget,
                plans=self.plans,
                shared=self.shared,
            )
            if isinstance(loop, scf.ForOp):
                lb, ub, step = (ex.get(v) for v in (loop.lb, loop.ub, loop.step))
            else:  # counted down by a scalar (cstmt.down_counter): from its initial value
                name, dec, bound = counter_of(anchor)
                j = carried_names(fn, loop).index(name)
                lb, ub, step = const(32, 0), ex.get(loop.arguments[j]), const(32, dec)
        except (Unsupported, ValueError):
            return [None]
        if step.op != "const" or int(step.val) <= 0:
            return [None]
        # A bound known only at run time (a parameter n) strip-mines too: the emitted loop
        # runs whole chunks while they fit and the original loop does the rest.
        trips: int | None = None
        if lb.op == "const" and ub.op == "const":
            trips = max(0, (int(ub.val) - int(lb.val) + int(step.val) - 1) // int(step.val))
            if isinstance(loop, scf.WhileOp):
                v = to_signed(int(ub.val), ub.w) - bound
                # n != b from a value the step does not divide never stops: not counted
                trips = (v + int(step.val) - 1) // int(step.val) if v > 0 else 0
                if getattr(anchor.src, "kind", "") == "do":  # one trip before any test
                    trips = trips + 1 if v >= 0 else 1  # (from 0, --n wraps: not chunked)
        # bytes the ISAX reads per base vs bytes one loop iteration reads
        isax_bytes = sum(a.width // 8 for a in p.fx.reads)
        if id(loop) not in self.shapes:
            try:
                one = self.loop_effects(fn, loop, 1)
                self.shapes[id(loop)] = (
                    trips,
                    sum(a.width // 8 for a in one.reads),
                    sum(a.width // 8 for a in one.writes),
                )
            except Unsupported:
                self.shapes[id(loop)] = None
        shape = self.shapes[id(loop)]
        if shape is None:
            return [None]
        _, per_iter, per_iter_w = shape
        ks = []
        if per_iter and isax_bytes % per_iter == 0:
            ks.append(isax_bytes // per_iter)
        # a sliding window (fir8: 23 samples in, 16 outputs) reads more than k iterations
        # do; its writes still count the iterations
        isax_w = sum(a.width // 8 for a in p.fx.writes)
        if per_iter_w and isax_w % per_iter_w == 0 and isax_w // per_iter_w not in ks:
            ks.append(isax_w // per_iter_w)
        ks = [k for k in ks if k > 0 and (trips is None or k < trips)]
        return [None, *ks]

    def loop_effects(self, fn: AppFunction, loop: scf.ForOp | scf.WhileOp, k: int) -> Effects:
        """Effects of ``k`` iterations of ``loop`` from a symbolic start index."""
        ex = Executor(
            resolve=self.resolver(fn, set()),
            budget=self.opt.budget,
            plans=self.plans,
            shared=self.shared,
        )
        self.run_chunk(ex, fn, loop, k)
        return ex.effects()

    def run_chunk(
        self, ex: Executor, fn: AppFunction, loop: scf.ForOp | scf.WhileOp, k: int
    ) -> list[Term]:
        """Execute ``k`` iterations of ``loop`` from the symbolic index named after the C
        loop variable, with symbolic carried values; returns those initial values.  A
        ``while`` loop counted down (cstmt.down_counter) runs its condition and body ``k``
        times: the chunk loop runs only while the counter guarantees ``k`` more trips, so
        each condition holds; it must compute nothing but that test of the counter."""
        if isinstance(loop, scf.WhileOp):
            names = carried_names(fn, loop)
            inits = [
                var(f"{nm}@in", width_of(r.type)) for nm, r in zip(names, loop.results, strict=True)
            ]
            args = list(inits)
            for _ in range(k):
                out = ex.run_block(loop.before_region.block, args)
                test = out[0]
                if any(x.op == "load" for x in walk(test)) or len(variables(test)) > 1:
                    raise Unsupported(f"while loop condition {show(test)} is not a counter test")
                args = ex.run_block(loop.after_region.block, out[1:])
            ex.set(loop.results, args)
            return inits
        w = width_of(loop.lb.type)
        iv0 = var(iv_name(fn, loop), w)
        step = ex.get(loop.step)
        inits = [self.init_var(fn, loop, j) for j in range(len(loop.iter_args))]
        carried = list(inits)
        for j in range(k):
            ivj = binop("add", iv0, binop("mul", const(w, j), step))
            carried = ex.run_block(loop.body.block, [ivj, *carried])
        ex.set(loop.results, carried)
        return inits

    def init_var(self, fn: AppFunction, loop: scf.ForOp, j: int) -> Term:
        r = loop.results[j]
        name = fn.names.get(r, f"%carried{j}")
        return var(f"{name}@in", width_of(r.type))

    def resolver(
        self, fn: AppFunction, inside: set[Operation], reread_at: AppStmt | None = None
    ) -> Callable[[SSAValue], Term]:
        """Values defined outside a region: constants and pure computations (arithmetic,
        branches without memory access) are recomputed, parameters and other values become
        variables named after their C variable. ``reread_at``: a statement where a load of
        an earlier statement that no variable holds (``prod = p[i] * s;`` then
        ``p[i] = prod % q;``) is read again, a load term the call site can spell, when
        nothing may write memory between the two and its address's variables are not
        assigned between them."""
        params: dict[SSAValue, AppParam] = {
            a: fn.params[k] for k, a in enumerate(fn.func.body.block.args)
        }

        def address(op: UnrealizedConversionCastOp, v: SSAValue) -> Term:
            """A frontend cast as an address (semantics.cast_address); a pointer local
            based on a member's address is the local when nothing assigns it again."""
            local = op.attributes.get("aquas.local")
            if isinstance(local, StringAttr) and local.data not in fn.assigned:
                t = var(local.data, ADDR_W)
                self.values.setdefault(t, set()).add(v)
                return t
            return cast_address(op, resolve)

        def resolve(v: SSAValue) -> Term:
            if v in params:
                t = var(params[v].name, ADDR_W if params[v].pointer else width_of(v.type))
                self.values.setdefault(t, set()).add(v)
                return t
            if isinstance(v, OpResult) and v.op not in inside:
                op = v.op
                if (
                    reread_at is not None
                    and isinstance(op, memref.LoadOp)
                    and fn.names.get(v) is None
                    and _unwritten_since(op, reread_at)
                ):
                    ex = Executor(resolve=resolve, budget=10_000, shared=self.shared)
                    ex.op(op)
                    again = ex.env[v]
                    # only where the address's variables still hold the values the load
                    # used (not after ``*a++``: a masked local is then the operand)
                    if _stale_operand(fn, reread_at, [again], self.values) is None:
                        return again
                if is_pure(op):
                    ex = Executor(
                        resolve=resolve, budget=10_000, plans=self.plans, shared=self.shared
                    )
                    ex.op(op)
                    return ex.env[v]
                if isinstance(op, memref.GetGlobalOp):  # as the executor names it
                    return var(f"@{op.name_.root_reference.data}", ADDR_W)
                if isinstance(op, UnrealizedConversionCastOp):
                    return address(op, v)
            name = fn.names.get(v)
            if name is None:  # no C name: a unique placeholder (never emitted)
                name = self.anon.setdefault(v, f"%{v.name_hint or 'v'}.{len(self.anon)}")
            t = var(name, width_of(v.type))
            self.values.setdefault(t, set()).add(v)
            return t

        return resolve

    def region_effects(
        self,
        fn: AppFunction,
        blk: AppBlock,
        lo: int,
        hi: int,
        anchor: AppStmt,
        chunk: int | None,
    ) -> RegionFx:
        """Execute statements ``lo..hi`` of ``blk``; returns effects, the terms of its
        live-out values (key None: the returned value), and the symbolic initial values of
        the anchor loop's carried variables.

        Ranges with the same start share one execution, advanced statement by statement:
        executing ``lo..hi`` then ``hi+1..hi2`` is executing ``lo..hi2`` (values of later
        statements are never used by earlier ones, so the values the resolver sees as
        defined inside the region are the same)."""
        # the anchor matters to the execution only when it is strip-mined
        key = (id(blk), lo, id(anchor) if chunk is not None else None, chunk)
        run = self.runs.get(key)
        # a fresh execution when this one went past hi, or failed inside statement
        # run.next (its state is then partial)
        if run is None or run.next > hi + 1 or (run.error is not None and run.next > hi):
            inside: set[Operation] = set()
            ex = Executor(
                resolve=self.resolver(fn, inside),
                budget=self.opt.budget,
                plans=self.plans,
                shared=self.shared,
            )
            run = self.runs[key] = _Run(ex, inside, lo)
        ex = run.ex
        loop = loop_of(anchor)
        while run.next <= hi:
            if run.error is not None:
                raise run.error
            st = blk.stmts[run.next]
            run.inside.update(o for op in st.ops for o in op.walk())
            try:
                for op in st.ops:
                    if op is loop and loop is not None and chunk is not None:
                        assert isinstance(loop, scf.ForOp | scf.WhileOp)
                        run.inits[op] = self.run_chunk(ex, fn, loop, chunk)
                    elif isinstance(op, scf.ForOp):
                        run.inits[op] = [ex.get(v) for v in op.iter_args]
                        ex.op(op)
                    elif isinstance(op, func.ReturnOp):
                        run.ret = ex.get(op.operands[0]) if op.operands else None
                    else:
                        ex.op(op)
            except Unsupported as e:
                run.error = e
                raise
            run.next += 1
        liveouts: dict[SSAValue | None, Term] = {}
        for st in blk.stmts[lo : hi + 1]:
            for op in st.ops:
                for r in op.results:
                    if any(u.operation not in run.inside for u in r.uses):
                        liveouts[r] = ex.env[r]
        if run.ret is not None:
            liveouts[None] = run.ret
        inits = run.inits.get(loop, []) if loop is not None else []
        fx = RegionFx(ex.snapshot(), liveouts, list(inits))
        if loop is not None and chunk is not None:
            fx.outs = [ex.env[r] for r in loop.results]
        return fx

    def try_region(
        self,
        fn: AppFunction,
        blk: AppBlock,
        lo: int,
        hi: int,
        anchor: AppStmt,
        p: Pattern,
        chunk: int | None,
    ) -> Decision:
        d = Decision(fn.name, p.name, anchor.line, "rejected", pattern=p, anchor=anchor)
        d.region = blk.stmts[lo : hi + 1]
        assert p.fx is not None
        key = (id(blk), lo, hi, id(anchor), chunk)
        if key not in self.regions:  # the same region is tried against every pattern
            try:
                self.regions[key] = self.region_effects(fn, blk, lo, hi, anchor, chunk)
            except Unsupported as e:
                self.regions[key] = e
        cached = self.regions[key]
        if isinstance(cached, Unsupported):
            d.reason, d.detail = UNSUPPORTED, str(cached)
            return d
        fx = cached.fx
        liveouts = dict(cached.liveouts)
        inits = cached.inits
        ret_value = liveouts.pop(None, None)
        walks: dict[str, tuple[int, int]] = {}
        if chunk is not None:
            loop = loop_of(anchor)
            assert loop is not None
            walked = self.walks(fn, loop, cached)
            if isinstance(walked, str):
                d.reason, d.detail = UNSUPPORTED, walked
                return d
            walks = {nm: (delta, size) for nm, (_, delta, size) in walked.items()}
            # the chunk loop moves them as the loop would: their final values are exact
            moved = {r for r, _, _ in walked.values()}
            # so does the index of a for loop, declared before it (its value after the loop)
            iv = fn.names.get(loop.body.block.args[0]) if isinstance(loop, scf.ForOp) else None
            liveouts = {
                v: t
                for v, t in liveouts.items()
                if v not in moved and (iv is None or fn.names.get(v) != iv)
            }
        # -- skeleton: footprints per base ------------------------------------------------
        sig = self.signature(p)
        if not fx.writes and p.fx.writes:
            d.reason, d.detail = SHAPE, f"the loop stores nothing; {p.name} writes memory"
            return d
        if len(fx.writes) != len(p.fx.writes) and cached.npieces != sig.npieces:
            d.reason = SHAPE
            d.detail = (
                f"{len(fx.writes)} stored locations vs {len(p.fx.writes)} written by {p.name}"
            )
            return d
        app_read_bytes = cached.read_bytes
        isax_read_bytes = sig.read_bytes
        if app_read_bytes < isax_read_bytes // 2 or app_read_bytes > isax_read_bytes * 2:
            d.reason = BOUND
            d.detail = (
                f"the region reads {app_read_bytes} bytes, {p.name} reads {isax_read_bytes}"
                + (f" (chunks of {chunk} iterations)" if chunk else "")
            )
            return d
        # -- binding: rs -> app base + offset -------------------------------------------
        results = []
        if p.has_rd:
            outs: list[tuple[SSAValue | None, Term]] = list(liveouts.items())
            if ret_value is not None:
                outs.append((None, ret_value))
            if len(outs) > 1:
                d.reason = LIVEOUT
                names = [fn.names.get(v, "?") if v is not None else "return" for v, _ in outs]
                d.detail = (
                    f"{p.name} returns one value; the region has {len(outs)} live-out "
                    f"values ({', '.join(names) or 'none'})"
                )
                return d
            if not outs and not p.fx.writes:
                d.reason = LIVEOUT
                d.detail = f"the region computes nothing that is used; {p.name} writes no memory"
                return d
            results = outs  # none: rd is unused, the ISAX's writes are the whole effect
        elif liveouts or ret_value is not None:
            d.reason = LIVEOUT
            names = [fn.names.get(v, "?") for v in liveouts if v is not None]
            names += ["return"] if ret_value else []
            d.detail = f"{p.name} has no result but the region defines {', '.join(names)}"
            return d
        last_reason = (UNSUPPORTED, "no pointer of the region can be bound to rs1/rs2")
        tried = False
        first = blk.stmts[lo].span
        start = first[0] if first is not None and blk.block is fn.func.body.block else None
        for regs in self.bindings(sig.bases, cached.groups):
            b = Binding(regs, chunk, walks=walks)
            r = self.check_binding(fn, cached, p, b, results, inits, anchor, start)
            if r is None:
                d.binding = b
                if results:
                    v = results[0][0]
                    d.liveout = "return" if v is None else fn.names.get(v)
                    d.liveout_type = c_type_name(v.type) if v is not None else None
                return self.finish(d, fx, p)
            if not tried or _REASON_RANK[r[0]] > _REASON_RANK[last_reason[0]]:
                last_reason = r
            tried = True
            d.blockers.append(f"{r[0]}: {r[1]}")
        d.reason, d.detail = last_reason
        return d

    def walks(
        self, fn: AppFunction, loop: Operation, region: RegionFx
    ) -> dict[str, tuple[SSAValue, int, int]] | str:
        """The carried variables a chunk moves by a constant: C name -> (loop result,
        constant in the variable's C units, a pointer's element bytes or 0 for a scalar).
        A pointer is carried as its element offset from its base; its element size is the
        offset's coefficient in the addresses it forms.  Other carried variables are the
        accumulated result or values the rest of the function does not use."""
        out: dict[str, tuple[SSAValue, int, int]] = {}
        names = (
            carried_names(fn, loop)
            if isinstance(loop, scf.WhileOp)
            else [fn.names.get(r, "") for r in loop.results]
        )
        for r, nm, init, after in zip(loop.results, names, region.inits, region.outs, strict=True):
            atoms, off = linear_parts(after)
            if atoms != {init: 1} or not nm:
                continue
            size = 0
            if nm in fn.pointers:
                sizes = {
                    c
                    for a in region.fx.reads + region.fx.writes
                    for x, c in a.lin.terms
                    if x is init
                }
                if len(sizes) > 1:
                    return (
                        f"pointer {nm} walked by the loop addresses memory in "
                        f"{len(sizes)} element sizes"
                    )
                size = sizes.pop() if sizes else -1  # not dereferenced: its C type's
            out[nm] = (r, to_signed(off, after.w), size)
        return out

    def signature(self, p: Pattern) -> _Signature:
        sig = self.sigs.get(id(p))
        if sig is None:
            assert p.fx is not None
            sig = _Signature(
                p.bases(),
                sum(a.width // 8 for a in dedup(p.fx.reads)),
                len(pieces(p.fx.writes)),
            )
            self.sigs[id(p)] = sig
        return sig

    def bindings(
        self, isax_bases: dict[str, list[Access]], groups: dict[tuple, list[Access]]
    ) -> Iterable[dict[str, Term]]:
        """Candidate register values: each register at an application base, its lowest
        access aligned with the lowest access on that base; and, for a register the ISAX
        only reads (only writes), with the lowest read (store) on that base, for a region
        that reads an array and stores a result beside it (``h->bin[i]``, ``h->peak``).
        check_binding verifies every candidate's footprint."""
        regs = sorted(isax_bases)
        keys = [k for k in groups if k]
        choices = []
        for r in regs:
            isax_min = min(a.lin.offset for a in isax_bases[r])
            kinds = {a.value is None for a in isax_bases[r]}
            here: dict[Term, None] = {}
            for key in keys:
                accs = groups[key]
                offsets = [min(a.lin.offset for a in accs)]
                if len(kinds) == 1:
                    same = [a.lin.offset for a in accs if (a.value is None) in kinds]
                    offsets += [min(same)] if same else []
                for off in offsets:
                    here[linear_term(Linear(key, (off - isax_min) & mask(32)))] = None
            choices.append(list(here))
        for choice in itertools.product(*choices):
            yield dict(zip(regs, choice, strict=True))

    def finish(self, d: Decision, fx: Effects, p: Pattern) -> Decision:
        per_call_sw = software_cycles(fx, self.core)
        d.sw_cycles = per_call_sw
        d.hw_cycles = p.latency + p.maintenance + self.core.call_overhead
        if self.opt.check_profit and d.hw_cycles >= d.sw_cycles:
            d.status, d.reason = "rejected", PROFIT
            d.detail = f"{p.name} takes ~{d.hw_cycles} cycles, software ~{d.sw_cycles}"
            return d
        routed = self.target.routed_opcodes
        if p.opcode not in routed:  # never emit an instruction the core would trap on
            d.status, d.reason = "rejected", TARGET
            d.detail = (
                f"{p.name} is encoded on {OPCODE_NAMES.get(p.opcode, hex(p.opcode))} "
                f"(opcode {p.opcode:#04x}); {self.target.name} routes only "
                + ", ".join(f"{OPCODE_NAMES.get(o, hex(o))} ({o:#04x})" for o in routed)
                + " to its ISAX unit, so the code stays in software"
            )
            if p.reencode_error:
                d.detail += f"; re-encoding is impossible: {p.reencode_error}"
            return d
        d.status, d.reason = "matched", ""
        d.detail = (
            f"rs1/rs2 = {', '.join(f'{k}={show(v, 4)}' for k, v in sorted(_call_site(d.binding)))}"
            if d.binding
            else ""
        )
        return d

    def _nameable(self, fn: AppFunction) -> set[str]:
        """Names the call site can spell: the function's named values, parameters and the
        addresses of the globals it uses (``@g``)."""
        return {p.name for p in fn.params} | set(fn.names.values()) | global_names(fn)

    # -- register-only ISAXs over expressions -------------------------------------------
    def match_expressions(
        self, fn: AppFunction, pats: Sequence[Pattern], claimed: set[int]
    ) -> list[Decision]:
        out: list[Decision] = []
        # values computed by a candidate statement itself (not copies of earlier values)
        own = {
            st.value
            for blk in fn.blocks
            for st in blk.stmts
            if st.kind in ("return", "assign", "decl")
            and any(st.value in op.results for op in st.ops)
        }
        found: list[tuple[int, int, Decision]] = []
        matched: list[tuple[AppStmt, Decision]] = []
        # last statements first: a value used only by a statement an ISAX call replaces
        # is dead after the rewrite, and is then not replaced itself (see _dead_after)
        for b, blk in reversed(list(enumerate(fn.blocks))):
            for i in reversed(range(len(blk.stmts))):
                st = blk.stmts[i]
                if (
                    st.value is None
                    or id(st) in claimed
                    or any(id(o) in claimed for o in st.ops)
                    or st.kind
                    not in (
                        "return",
                        "assign",
                        "decl",
                    )
                ):
                    continue
                if st.value in own and not any(st.value in op.results for op in st.ops):
                    continue  # a copy (`return r;`): the statement defining it is the candidate
                try:
                    steps = self.pointer_steps(fn, st)
                    term = self.expression(fn, st, steps=steps)
                except Unsupported:
                    continue
                if term.size < 4:
                    continue
                here: list[Decision] = []
                for p in pats:
                    d = self.match_expression(fn, st, term, p, steps)
                    if d is None:
                        continue
                    here.append(d)
                    if d.status == "matched":
                        user = _dead_after(fn, st, matched)
                        if user is not None:
                            d.status, d.reason = "rejected", UNSUPPORTED
                            d.detail = (
                                f"its value is used only by line {user[0].line}, which "
                                f"{user[1].isax} replaces: it is dead after that rewrite"
                            )
                            continue
                        matched.append((st, d))
                        claimed.update(id(o) for op in st.ops for o in op.walk())
                        if st.kind == "return":
                            self.isax_helpers[fn.name] = (st.line, d.isax)
                        break
                if st.src is not None and not any(d.status == "matched" for d in here):
                    # no ISAX computes the whole value: ISAXs computing parts of it
                    parts = self.match_parts(fn, st, pats)
                    if parts is not None and parts.status == "matched":
                        user = _dead_after(fn, st, matched)
                        if user is None:
                            here = [parts]
                            matched.append((st, parts))
                            claimed.update(id(o) for op in st.ops for o in op.walk())
                    elif parts is not None:  # its reason is more precise than "not offered"
                        rest = [d for d in here if not d.detail.startswith("not offered")]
                        here = rest or [parts]
                found.extend((b, i, d) for d in here)
        out.extend(d for _, _, d in sorted(found, key=lambda x: (x[0], x[1])))
        return out

    def pointer_steps(self, fn: AppFunction, st: AppStmt) -> dict[str, _Step]:
        """The pointers a statement walks (``*r++ = f(*a++, *b++)``): C name -> its step.
        Each is stepped once by a constant, from its value before the statement, and the
        statement's loads or store through it address one base (C input only)."""
        writes: dict[str, SSAValue] = getattr(st.src, "writes", {})
        if not writes or st.src is None:
            return {}
        inner = {o for op in st.ops for o in op.walk()}
        out: dict[str, _Step] = {}
        for name, v in writes.items():
            if name not in fn.pointers or not isinstance(v, OpResult):
                continue
            op = v.op
            if op not in inner or not isinstance(op, arith.AddiOp | arith.SubiOp):
                continue
            before, c = op.operands
            delta = _const_int(c)
            if delta is None or (isinstance(before, OpResult) and before.op in inner):
                continue
            mrefs = {
                o.memref
                for o in inner
                if isinstance(o, memref.LoadOp | memref.StoreOp)
                and len(o.indices) == 1
                and _reaches(o.indices[0], before, inner)
            }
            if len(mrefs) != 1:
                continue
            [mref] = mrefs
            mtype = mref.type
            assert isinstance(mtype, MemRefType)
            base = self.resolver(fn, inner)(mref)
            size = width_of(mtype.element_type) // 8
            delta = delta if isinstance(op, arith.AddiOp) else -delta
            out[name] = _Step(before, delta, base, size)
        # pointers another statement walks (``x = f(*b); b += 2;``): read at their value
        for o in inner:
            if not isinstance(o, memref.LoadOp | memref.StoreOp) or len(o.indices) != 1:
                continue
            for v in _sources(o.indices[0], inner):
                name = fn.names.get(v)
                if name in out or name not in fn.pointers or isinstance(v.type, MemRefType):
                    continue
                assert name is not None and isinstance(o.memref.type, MemRefType)
                base = self.resolver(fn, inner)(o.memref)
                out[name] = _Step(v, 0, base, width_of(o.memref.type.element_type) // 8)
        return out

    def expression(
        self,
        fn: AppFunction,
        st: AppStmt,
        named: bool = False,
        steps: dict[str, _Step] | None = None,
    ) -> Term:
        """The statement's value, with the loads the statement itself performs as load
        terms (so they can become ISAX operands). ``named``: values of C variables the
        statement reads are variables, not their recomputed definitions (the statement's
        own computation only). ``steps``: pointers the statement walks, whose values before
        it are the variables ``p@at`` (an element offset from the pointer's base)."""
        assert st.value is not None
        inside = {o for op in st.ops for o in op.walk()}
        resolve = self.resolver(fn, inside, reread_at=st)
        if steps:
            at = {w.before: var(f"{nm}@at", width_of(w.before.type)) for nm, w in steps.items()}
            plain = resolve

            def resolve(v: SSAValue) -> Term:
                t = at.get(v)
                return t if t is not None else plain(v)

        if named:
            outer = resolve

            def resolve(v: SSAValue) -> Term:
                name = fn.names.get(v)
                if name is not None and isinstance(v, OpResult) and v.op not in inside:
                    return var(name, width_of(v.type))
                return outer(v)

        else:  # a local holding a mask of a value no variable holds (x = *a++ & 0xffff)
            computed = resolve

            def resolve(v: SSAValue) -> Term:
                t = computed(v)
                name = fn.names.get(v)
                if name is None or not isinstance(v, OpResult) or v.op in inside:
                    return t
                mask = _held_mask(t)
                # (a load in the value of a local defined before the statement is one
                # read again: the local is the better operand)
                if mask is None or not any(
                    (x.op == "var" and str(x.val).startswith("%")) or x.op == "load"
                    for x in walk(t)
                ):
                    return t
                # the local is the value (x == t == t & mask): an operand the call site
                # names, and the bits the mask clears stay known to be clear
                x = var(name, t.w)
                self.values.setdefault(x, set()).add(v)
                return binop("and", x, const(t.w, mask))

        ex = Executor(resolve=resolve, budget=self.opt.budget, shared=self.shared)
        for op in st.ops:
            if op.dialect_name() == "arith" or isinstance(op, memref.LoadOp | memref.GetGlobalOp):
                ex.op(op)
        return ex.get(st.value)

    def match_expression(
        self,
        fn: AppFunction,
        st: AppStmt,
        term: Term,
        p: Pattern,
        steps: dict[str, _Step] | None = None,
    ) -> Decision | None:
        t0 = time.perf_counter()
        assert p.rd is not None
        d = Decision(fn.name, p.name, st.line, "rejected", pattern=p, anchor=st, region=[st])
        if term.w > 32:
            return None
        steps = steps or {}
        walked = {f"{nm}@at" for nm in steps}
        leaves = value_leaves(term, self._nameable(fn) | walked)
        regs = [r for r in ("rs1", "rs2") if r in p.uses]
        if len(leaves) > MAX_LEAVES:
            d.reason = UNSUPPORTED
            d.detail = (
                f"{len(leaves)} candidate operands ({', '.join(show(x, 2) for x in leaves[:4])}, "
                f"...); register patterns try at most {MAX_LEAVES}"
            )
            return d
        names = self._nameable(fn) | walked
        # computed operands only where the statement does the ISAX's multiplications (a
        # cheap signature: every further candidate multiplies the choices to try)
        # (C input only: the MLIR emitter spells operands as argument + offset)
        computed = (
            computed_operands(term, names) + _identity(term, p)
            if st.src is not None and (_has_muls_of(term, p) or _identity(term, p))
            else []
        )
        choices = itertools.chain(
            self.operand_choices(term, p, regs, leaves),
            # constants and computed sub-expressions as operands, when leaves do not do
            self.operand_choices(term, p, regs, leaves + computed, skip_only=leaves),
        )
        first: tuple[str, str] | None = None
        proven = None
        seen: set[tuple[Term, ...]] = set()
        for env, cand in choices:
            # zext and sext of one value are one choice for the proof (the ISAX reads
            # their low bits alike, or the random filter would have told them apart)
            key = tuple(t.args[0] if t.op in ("zext", "sext") else t for t in env.values())
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > MAX_PROOFS:
                break
            # a walked pointer's value before the statement is its value at the call
            now = {r: _at_call(t, steps, "@now") for r, t in env.items()}
            if any(t is None for t in now.values()):
                first = first or (
                    UNSUPPORTED,
                    "an operand uses a walked pointer's offset other than as its address",
                )
                continue
            stale = _stale_operand(fn, st, [t for t in now.values() if t], self.values)
            if stale is not None:
                first = first or (UNSUPPORTED, stale)
                continue
            kept = _statement_effects(fn, st, {w.before for w in steps.values()})
            if isinstance(kept, str):  # every effect of the statement must be accounted for
                first = first or (UNSUPPORTED, kept)
                break
            ok, prover = self.prove([(term, cand)])
            if ok:
                proven = env
                d.store = kept
                break
            first = first or (
                RULE,
                f"equal on random inputs but not proven ({prover.stats.stopped} after "
                f"{prover.stats.iterations} iterations)",
            )
        if proven is None:
            if first is None:
                why = self.not_offered(fn, st, term, p, names)
                if why is None:
                    return None  # not this ISAX (most expressions compute other things)
                first = (UNSUPPORTED, why)
            d.reason, d.detail = first
            d.seconds = time.perf_counter() - t0
            return d
        env = proven
        d.binding = Binding({str(k.val): v for k, v in env.items()})
        if steps:  # the call reads the pointers' current values; the steps are kept
            ops = {str(k.val): _at_call(v, steps, "") for k, v in env.items()}
            d.binding.operands = {r: t for r, t in ops.items() if t is not None}
            d.binding.walks = {nm: (w.delta, w.size) for nm, w in steps.items()}
        d.liveout = None if d.store else ("return" if st.kind == "return" else st.target)
        # the operands' own computation stays in software: it is not saved
        kept_sw = {n for t in env.values() for n in walk(t)}
        nodes = [n for n in walk(term) if n not in kept_sw]
        d = self.finish(d, _software_work(nodes), p)
        d.seconds = time.perf_counter() - t0
        return d

    # -- register-only ISAXs with a packed result over a few statements ------------------
    def match_fields(
        self, fn: AppFunction, pats: Sequence[Pattern], claimed: set[int]
    ) -> list[Decision]:
        """Windows of consecutive statements that store two values, each one bit field of
        a packed ISAX result (egraph/fields.py). The largest window ending at a store is
        tried first (it includes the statements computing the operands' products)."""
        multi = [(p, f) for p in pats if (f := fields.result_fields(p.rd)) is not None]
        out: list[Decision] = []
        if not multi:
            return out
        for blk in fn.blocks:
            sts = blk.stmts
            for hi in range(len(sts)):
                if not fields.is_store(sts[hi]):
                    continue
                for lo in range(max(0, hi - fields.MAX_WINDOW + 1), hi):
                    window = sts[lo : hi + 1]
                    if any(id(o) in claimed for s in window for o in s.ops):
                        continue
                    if sum(map(fields.is_store, window)) != 2 or not all(
                        fields.is_store(s) or fields.is_local_def(s) for s in window
                    ):
                        continue
                    done = None
                    for p, fl in multi:
                        d = self.match_window(fn, blk, lo, hi, p, fl)
                        if d is not None:
                            out.append(d)
                            if d.status == "matched":
                                done = d
                                break
                    if done is not None:
                        claimed.update(id(o) for s in window for op in s.ops for o in op.walk())
                        break
        return out

    def match_window(
        self,
        fn: AppFunction,
        blk: AppBlock,
        lo: int,
        hi: int,
        p: Pattern,
        fl: list[tuple[int, Term]],
    ) -> Decision | None:
        t0 = time.perf_counter()
        window = blk.stmts[lo : hi + 1]
        if fields.load_after_store(window):
            return None
        try:
            rfx = self.region_effects(fn, blk, lo, hi, blk.stmts[hi], None)
        except Unsupported:
            return None
        writes = rfx.fx.writes
        if len(writes) != 2 or any(w.width != fields.FIELD_W or w.value is None for w in writes):
            return None
        values = [w.value for w in writes if w.value is not None]
        if not all(_has_muls_of(v, p) for v in values):
            return None
        names = self._nameable(fn)
        leaves = list(dict.fromkeys(x for v in values for x in value_leaves(v, names)))
        if not leaves or len(leaves) > MAX_LEAVES:
            return None
        half = [x for x in leaves if x.w == fields.FIELD_W]
        cands = list(dict.fromkeys(c for t in leaves for c in _extensions(t)))
        cands += [fields.pack(h, lo_) for h in half for lo_ in half if h is not lo_]
        regs = fields.regs_of(p.uses)
        d = Decision(fn.name, p.name, window[0].line, "rejected", pattern=p, anchor=window[0])
        d.region = list(window)
        found: tuple[dict[Term, Term], list[tuple[Term, Term]]] | None = None
        for choice in itertools.product(cands, repeat=len(regs)):
            env = dict(zip(regs, choice, strict=True))
            orders = [
                order
                for order in itertools.permutations(range(len(values)))
                if self.concrete_equal([(values[k], fl[j][1]) for j, k in enumerate(order)], env)
            ]
            if not orders:
                continue
            isax = [fields.with_operands(f, env) for _, f in fl]
            for order in orders:
                pairs = [(values[k], isax[j]) for j, k in enumerate(order)]
                if self.random_equal(pairs):
                    found = (env, pairs)
                    # final writes are in first-write order: the store statements' order
                    stores = [s for s in window if fields.is_store(s)]
                    d.fields = [(stores[k], fl[j][0], fields.FIELD_W) for j, k in enumerate(order)]
                    d.field_addrs = [writes[k].addr for k in order]
                    break
            if found is not None:
                break
        if found is None:
            return None  # not this ISAX
        env, pairs = found
        if rfx.liveouts:
            names_out = sorted({fn.names.get(v, "?") for v in rfx.liveouts if v is not None})
            d.reason = LIVEOUT
            d.detail = (
                f"{p.name}'s two fields are the stored values, but the statements also "
                f"define {', '.join(names_out) or 'the return value'}, used after line "
                f"{window[-1].line}"
            )
            return d
        why = _stale_operand(fn, window[0], env.values(), self.values) or self._moved_lvalue(
            fn, window
        )
        if why is not None:
            d.reason, d.detail = UNSUPPORTED, why
            return d
        ok, prover = self.prove(pairs)
        if not ok:
            d.reason = RULE
            d.detail = (
                f"both fields equal on random inputs but not proven ({prover.stats.stopped} "
                f"after {prover.stats.iterations} iterations)"
            )
            return d
        d.binding = Binding({str(k.val): v for k, v in env.items()})
        d.store = True
        kept_sw = {n for t in env.values() for n in walk(t)}
        nodes = list(dict.fromkeys(n for v in values for n in walk(v) if n not in kept_sw))
        d = self.finish(d, _software_work(nodes), p)
        d.seconds = time.perf_counter() - t0
        return d

    def _moved_lvalue(self, fn: AppFunction, window: Sequence[AppStmt]) -> str | None:
        """The rewrite stores after the call, where the statements it replaces no longer
        define their variables: a store's address must not use one of them."""
        defined = {s.target for s in window if not fields.is_store(s) and s.target}
        for s in window:
            if not fields.is_store(s):
                continue
            store = next(o for op in s.ops for o in op.walk() if isinstance(o, memref.StoreOp))
            used = _address_names(fn, store)
            clash = sorted(defined & used)
            if clash:
                return (
                    f"the store at line {s.line} addresses memory with {clash[0]}, which the "
                    f"replaced statements define"
                )
        return None

    def operands(
        self, term: Term, p: Pattern, regs: Sequence[str], cands: Sequence[Term]
    ) -> tuple[dict[Term, Term], Term] | None:
        """The first choice of operands (see :meth:`operand_choices`), or None."""
        return next(self.operand_choices(term, p, regs, cands), None)

    def operand_choices(
        self,
        term: Term,
        p: Pattern,
        regs: Sequence[str],
        cands: Sequence[Term],
        skip_only: Sequence[Term] = (),
    ) -> Iterator[tuple[dict[Term, Term], Term]]:
        """Choices of operands for ``regs`` among ``cands`` with which ``p``'s result
        equals ``term`` on the random inputs: the environment and the ISAX side. Choices
        made only of ``skip_only`` (already tried) are skipped."""
        assert p.rd is not None
        # a narrower operand enters rs zero- or sign-extended, whichever the ISAX needs
        wide = list(dict.fromkeys(c for t in cands for c in _extensions(t)))
        tried = {c for t in skip_only for c in _extensions(t)}
        # a register the ISAX reads only the low k <= 16 bits of: a sign- and a zero-
        # extension of a value of at least k bits, or a packed operand and its low half,
        # are one choice (the same bits reach the ISAX)
        low = _read_bits(p.rd)
        per = [
            [
                c
                for c in wide
                if low.get(r, 32) > 16
                or not (
                    fields.packed_parts(c) is not None
                    or (c.op == "sext" and c.args[0].w >= low.get(r, 32))
                )
            ]
            for r in regs
        ]
        for choice in itertools.product(*per):
            if tried and all(c in tried for c in choice):
                continue
            env = {var(r, 32): t for r, t in zip(regs, choice, strict=True)}
            if not self.concrete_equal([(term, p.rd)], env):
                continue
            # the low field of a packed result is that field's term itself
            # (trunc16(zext(hi) << 16 | zext(lo)) = lo, a bit-field identity)
            fl = fields.result_fields(p.rd) if term.w == fields.FIELD_W else None
            rd = fields.with_operands(p.rd if fl is None else fl[0][1], env)
            cand = cast("trunc", term.w, rd) if term.w < rd.w else rd
            if self.random_equal([(term, cand)]):
                yield env, cand

    def concrete_equal(self, pairs: Sequence[tuple[Term, Term]], env: dict[Term, Term]) -> bool:
        """The random filter before any term is built: on every trial, each application
        term against its ISAX term (over rs1/rs2, no memory: a register pattern) evaluated
        at the operands' values in that trial, truncated to the application's width.
        Substituting the operands into the ISAX's DAG for every choice was most of the
        matcher's time on real code; a choice that passes is then checked on the
        substituted terms as before."""
        for trial in self.trials:
            regs = {str(r.val): trial.value(t) for r, t in env.items()}
            key = tuple(sorted(regs.items()))
            for app, isax in pairs:
                v = self.isax_values.get((isax, key))
                if v is None:
                    v = self.isax_values[isax, key] = evaluate(isax, regs, trial.memory)
                if trial.value(app) != v & mask(app.w):
                    return False
        return True

    # -- register-only ISAXs computing parts of a statement's value ----------------------
    def match_parts(self, fn: AppFunction, st: AppStmt, pats: Sequence[Pattern]) -> Decision | None:
        """ISAXs that compute parts of a statement's value (``r[0] = (fqmul(fqmul(a1, b1),
        zeta) + fqmul(a0, b0)) % q``): the statement's own computation (variables it reads
        are variables, so every operand is a value current at the statement) is searched
        from the top; a node that an ISAX computes, proven as a whole-value match is, becomes
        a call whose operands are searched in turn (a call's operand may be another call),
        other nodes are searched in their operands. The statement is emitted as its value
        printed as C (``emit.c_term``) with each part replaced by its call, keeping its
        store, assignment or return (C input only). None when no part is an ISAX's, or the
        statement has effects a rewrite would drop."""
        t0 = time.perf_counter()
        try:  # pointers the statement walks: read at their values at the call
            steps = self.pointer_steps(fn, st)
        except Unsupported:
            return None
        kept = _statement_effects(fn, st, {w.before for w in steps.values()})
        if isinstance(kept, str):
            return None
        names = self._nameable(fn) | {f"{nm}@at" for nm in steps}
        calls: list[tuple[Term, Decision]] = []
        refused: list[Decision] = []
        memo: dict[Term, Term] = {}

        def rewrite(n: Term, depth: int) -> Term:
            out = memo.get(n)
            if out is not None:
                return out
            if (
                depth < MAX_PART_DEPTH
                and n.op not in ("var", "const", "load", "zext", "sext")
                and n.w <= 32
                and n.size >= 4
                and len(calls) < MAX_PART_CALLS
            ):
                for p in pats:
                    if not (_has_muls_of(n, p) or _identity(n, p)):
                        continue
                    sub = self.match_part(fn, st, n, p, names, steps)
                    if sub is None:
                        continue
                    if sub.status != "matched":
                        refused.append(sub)
                        continue
                    assert sub.binding is not None
                    sub.binding = Binding(
                        {r: rewrite(v, depth + 1) for r, v in sub.binding.regs.items()}
                    )
                    ph = var(f"aquas_call{len(calls)}", 32)
                    calls.append((ph, sub))
                    out = cast("trunc", n.w, ph) if n.w < 32 else ph
                    break
            if out is None and n.op == "load":  # an address is not a value
                out = n
            if out is None:
                args = tuple(rewrite(a, depth + 1) for a in n.args)
                out = n if args == n.args else mk(n.op, n.w, args, n.val)
            memo[n] = out
            return out

        context: Term | None = None
        # the statement's own computation first; then its value with the pure definitions
        # of the local variables it reads recomputed (`t = x * y; r += t % q;`), where every
        # variable the rewrite names must still hold, at the statement, the value used
        for named in (True, False):
            try:
                term = self.expression(fn, st, named=named, steps=steps)
            except Unsupported:
                continue
            if term.w > 32 or not any(_has_muls_of(term, p) or _identity(term, p) for p in pats):
                continue
            calls.clear()
            memo.clear()
            context = rewrite(term, 0)
            if calls and steps:  # the loads through walked pointers, as the call reads them
                now = [_at_call(context, steps, "")] + [
                    _at_call(v, steps, "")
                    for _, sub in calls
                    if sub.binding
                    for v in sub.binding.regs.values()
                ]
                if any(t is None for t in now):
                    calls.clear()
                    continue
                context = _at_call(context, steps, "")
                for _, sub in calls:
                    assert sub.binding is not None
                    sub.binding = Binding(
                        {r: _at_call(v, steps, "") or v for r, v in sub.binding.regs.items()}
                    )
            if calls and not named:
                used = [context] + [
                    v for _, sub in calls if sub.binding for v in sub.binding.regs.values()
                ]
                why = _stale_operand(fn, st, used, self.values)
                if why is not None:
                    stale = Decision(fn.name, calls[-1][1].isax, st.line, "rejected", anchor=st)
                    stale.reason, stale.detail = UNSUPPORTED, why
                    stale.pattern, stale.region = calls[-1][1].pattern, [st]
                    refused.insert(0, stale)
                    calls.clear()
            if calls:
                break
        done = sorted(st.calls & set(self.isax_helpers))
        if (
            calls
            and done
            and {sub.isax for _, sub in calls} <= {self.isax_helpers[h][1] for h in done}
        ):
            # the statement's parts are (at most) inlined calls of helpers rewritten to the
            # same ISAXs themselves: their call sites run the ISAX already, and printing the
            # statement as a term would only change how the compiler sees the code (basemul
            # stopped being inlined). A part that is another ISAX (ntt_bfly over fqmul's
            # product and the sum around it) does more than the helper and is kept.
            line, isax = self.isax_helpers[done[0]]
            d = Decision(fn.name, calls[-1][1].isax, st.line, "rejected", PROFIT, anchor=st)
            d.pattern, d.region = calls[-1][1].pattern, [st]
            d.detail = (
                f"parts of the value are calls of {', '.join(done)}, whose body (line {line}) "
                f"is rewritten to {isax} itself: these call sites run the ISAX already"
            )
            d.seconds = time.perf_counter() - t0
            return d
        if not calls or context is None:
            if refused:  # proven parts that do not pay off, or that the core cannot run
                r = refused[0]
                r.seconds = time.perf_counter() - t0
                return r
            return None
        main = calls[-1][1]
        assert main.pattern is not None
        d = Decision(fn.name, main.isax, st.line, "matched", pattern=main.pattern, anchor=st)
        d.region = [st]
        d.binding = main.binding
        if steps:  # kept once each, after the statement's calls (emit._pointer_steps)
            assert main.binding is not None
            d.binding = Binding(
                main.binding.regs, walks={nm: (w.delta, w.size) for nm, w in steps.items()}
            )
        d.context = context
        d.calls = [(str(ph.val), sub) for ph, sub in calls]
        d.store = kept
        d.liveout = None if d.store else ("return" if st.kind == "return" else st.target)
        d.sw_cycles = sum(sub.sw_cycles for _, sub in calls)
        d.hw_cycles = sum(sub.hw_cycles for _, sub in calls)
        d.detail = "parts of the value: " + "; ".join(
            f"{ph.val!s} = {sub.isax}("
            + ", ".join(
                f"{k}={show(v, 3)}" for k, v in sorted((sub.binding or Binding({})).regs.items())
            )
            + ")"
            for ph, sub in calls
        )
        d.seconds = time.perf_counter() - t0
        return d

    def result_range(self, p: Pattern, w: int) -> tuple[int, int]:
        """Bounds on ``p``'s result truncated to ``w`` bits (the low field of a packed
        result when that is 16 bits wide: ntt_bfly's sum is below q)."""
        assert p.rd is not None
        key = (id(p), w)
        r = self.rd_ranges.get(key)
        if r is None:
            fl = fields.result_fields(p.rd)
            if w == fields.FIELD_W and fl is not None:
                r = unsigned(fl[0][1])
            else:
                r = unsigned(cast("trunc", w, p.rd) if w < p.rd.w else p.rd)
            self.rd_ranges[key] = r
        return r

    def match_part(
        self,
        fn: AppFunction,
        st: AppStmt,
        n: Term,
        p: Pattern,
        names: set[str],
        steps: dict[str, _Step] | None = None,
    ) -> Decision | None:
        """``p`` computing the node ``n`` of statement ``st``'s value: operands among the
        node's named values and loads, its computed sub-expressions, and (for an ISAX that
        reads a register's upper half) two 16-bit values packed; the first choice equal on
        the random inputs that is proven. A Decision for the call (matched, or rejected by
        the cost model or the target), or None."""
        # a sound, cheap filter: the node's values must lie in the ISAX's result range
        # (modmul_q: [0, q); most nodes of a statement, its products and sums, do not)
        assert p.rd is not None
        lo, hi = self.result_range(p, n.w)
        if any(not lo <= trial.value(n) <= hi for trial in self.trials):
            return None
        leaves = value_leaves(n, names)
        if len(leaves) > MAX_LEAVES:
            return None
        regs = [r for r in ("rs1", "rs2") if r in p.uses]
        computed = computed_operands(n, names) + _identity(n, p)
        cands = leaves + computed
        packs: list[Term] = []
        if _reads_high_half(p):
            half = [c for c in cands if c.w == fields.FIELD_W][:MAX_PACKED]
            packs = [fields.pack(h, lo) for h in half for lo in half if h is not lo]
        # named values first, then packed operands (the fields the ISAX extracts), then
        # computed operands (a value below 2^16 as ntt_bfly's packed operand, its upper
        # field 0, is equal on random inputs but hard to prove: it comes last)
        choices: Iterable[tuple[dict[Term, Term], Term]] = itertools.chain(
            self.operand_choices(n, p, regs, leaves),
            self.operand_choices(n, p, regs, cands + packs, skip_only=leaves + computed)
            if packs
            else (),
            self.operand_choices(n, p, regs, cands, skip_only=leaves),
        )
        seen: set[tuple[Term, ...]] = set()
        stale: str | None = None
        for env, cand in choices:
            key = tuple(t.args[0] if t.op in ("zext", "sext") else t for t in env.values())
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > MAX_PROOFS:
                break
            now = [_at_call(t, steps or {}, "@now") for t in env.values()]
            if any(t is None for t in now):
                continue
            why = _stale_operand(fn, st, [t for t in now if t is not None], self.values)
            if why is not None:
                stale = stale or why
                continue
            ok, _ = self.prove([(n, cand)])
            if not ok:
                continue
            sub = Decision(fn.name, p.name, st.line, "rejected", pattern=p, anchor=st)
            sub.region = [st]
            sub.binding = Binding({str(k.val): v for k, v in env.items()})
            kept_sw = {x for t in env.values() for x in walk(t)}
            return self.finish(sub, _software_work([x for x in walk(n) if x not in kept_sw]), p)
        if stale is not None:  # equal on the random inputs, with an operand not current
            sub = Decision(fn.name, p.name, st.line, "rejected", UNSUPPORTED, stale, anchor=st)
            sub.pattern, sub.region = p, [st]
            return sub
        return None

    def not_offered(
        self, fn: AppFunction, st: AppStmt, term: Term, p: Pattern, names: set[str]
    ) -> str | None:
        """Why a statement that does contain ``p``'s computation is not rewritten
        (``--explain`` must never be silent about it), or None when it does not contain it:
        a part of the value equal to ``p`` on the random inputs but not proven (parts that
        are proven are rewritten by :meth:`match_parts`), or an operand that the call site
        cannot name: a temporary of the frontend, or a load of an earlier statement that
        only a local holding a value computed from it names (``t = x[i] * y[i]; r += t % q``)."""
        regs = [r for r in ("rs1", "rs2") if r in p.uses]
        # a part that does the ISAX's multiplications, if it has any (the reduction of a
        # sum alone, ntt_bfly with one operand 0, is not worth a report)
        if not _has_muls_of(term, p):
            return None
        orig = term
        try:  # the statement's own computation: a variable's earlier value is its candidate
            term = self.expression(fn, st, named=True)
        except Unsupported:
            return None
        for n in _parts(term, p):
            cands = value_leaves(n, names) + computed_operands(n, names, limit=4)
            if len(cands) > MAX_LEAVES:
                continue
            found = self.operands(n, p, regs, cands)
            if found is not None:
                ops = ", ".join(
                    f"{k.val}={show(v, 2)}"
                    for k, v in sorted(found[0].items(), key=lambda kv: str(kv[0].val))
                )
                return (
                    f"not offered: {p.name} equals a part of the value ({show(n, 3)}) with "
                    f"{ops} on the random inputs, but the part is not proven"
                )
        for n in [orig, *_parts(orig, p)]:
            temps = [x for x in walk(n) if x.op == "var" and str(x.val).startswith("%")]
            hidden = [
                t
                for t in temps + leaf_operands(n) + computed_operands(n)
                if any(
                    str(v.val).startswith("%") or str(v.val) not in names
                    for v in walk(t)
                    if v.op == "var"
                )
            ]
            if not hidden or len(hidden) > MAX_LEAVES:
                continue
            allc = leaf_operands(n, names) + computed_operands(n, names) + hidden
            if self.operands(n, p, regs, allc) is not None:
                where = self._defined_at_line(fn, hidden[0])
                return (
                    f"not offered: an operand of {p.name} is a value the call site cannot "
                    f"name ({show(hidden[0], 3)}"
                    + (
                        f": {where[1]} at line {where[0]} that no variable holds, only a "
                        f"value computed from it"
                        if where
                        else ""
                    )
                    + ")"
                )
        return None

    def _defined_at_line(self, fn: AppFunction, t: Term) -> tuple[int, str] | None:
        """The line of the innermost statement that computes the unnamed value ``t`` stands
        for, and what it is ("a load" or "a value")."""
        for leaf in walk(t):
            for v in self.values.get(leaf, ()):
                owner = v.owner
                if not isinstance(owner, Operation):
                    continue
                best: AppStmt | None = None
                for blk in fn.blocks:
                    for s in blk.stmts:
                        if s.span is None or not any(owner is o for op in s.ops for o in op.walk()):
                            continue
                        if best is None or (
                            best.span is not None
                            and s.span[1] - s.span[0] < best.span[1] - best.span[0]
                        ):
                            best = s
                if best is not None:
                    what = "a load" if isinstance(owner, memref.LoadOp) else "a value"
                    return best.line, what
        return None


def _parts(term: Term, p: Pattern) -> list[Term]:
    """The largest sub-expressions of ``term`` that do ``p``'s multiplications (at most
    MAX_PARTS), the candidates ``--explain`` reports on."""
    subs = [
        n
        for n in walk(term)
        if n is not term
        and n.w <= 32
        and n.size >= 4
        and n.op not in ("zext", "sext")
        and _has_muls_of(n, p)
    ]
    subs.sort(key=lambda n: -n.size)
    return subs[:MAX_PARTS]


def _add_member_pointers(fn: AppFunction) -> None:
    """Pointer locals the C frontend based on a struct member's address
    (``const int16_t *x = &f->delay[f->pos];``, tagged casts, see ``cast_address`` in
    :meth:`Matcher.resolver`) and that nothing assigns again hold one address wherever they
    are in scope: the call site can name them as it names parameters. They are added after
    the parameters (never restrict: they may alias anything)."""
    known = {p.name for p in fn.params}
    for op in fn.func.walk():
        if not isinstance(op, UnrealizedConversionCastOp):
            continue
        local = op.attributes.get("aquas.local")
        if not isinstance(local, StringAttr) or local.data in fn.assigned | known:
            continue
        mtype = op.results[0].type
        assert isinstance(mtype, MemRefType)
        fn.params.append(AppParam(local.data, True, False, width_of(mtype.element_type)))
        known.add(local.data)


def _unwritten_since(load: memref.LoadOp, st: AppStmt) -> bool:
    """Whether ``load`` comes earlier in the block of ``st`` (the same iteration of any
    loop around both) with no op between them that may write memory or call."""
    first = st.ops[0]
    if load.parent_block() is not first.parent_block() or load.parent_block() is None:
        return False
    op = load.next_op
    while op is not None and op is not first:
        if any(isinstance(o, memref.StoreOp | func.CallOp) for o in op.walk()):
            return False
        op = op.next_op
    return op is first


def _values_from(fn: AppFunction, start: int) -> set[SSAValue]:
    """The SSA values that code from source offset ``start`` on can read: the operands of
    the ops of every statement starting there or later, and backwards through the ops that
    compute them, but not into loops and branches (their results are the variables' values
    after them). ``Matcher.values`` names a C variable's values in every region tried; a
    value only an earlier region read (a parameter before a loop that reassigns it) is not
    one the code at ``start`` can use."""
    todo = [
        x
        for b in fn.blocks
        for s in b.stmts
        if s.span is not None and s.span[0] >= start
        for op in s.ops
        for o in op.walk()
        for x in o.operands
    ]
    return _backward(todo, into_regions=False)


def _backward(values: Iterable[SSAValue], into_regions: bool) -> set[SSAValue]:
    """``values`` and every value the ops computing them read, transitively (through ops
    with regions -- loops, branches -- only when ``into_regions``)."""
    todo = list(values)
    seen: set[SSAValue] = set()
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, OpResult) and (into_regions or not v.op.regions):
            todo.extend(v.op.operands)
    return seen


def _stale_operand(
    fn: AppFunction, st: AppStmt, regs: Iterable[Term], values: dict[Term, set[SSAValue]]
) -> str | None:
    """The operand that names a C variable assigned again between the value the
    expression uses and the statement (the call would read the newer value), if any."""
    if st.span is None:
        return None
    stmts = [s for b in fn.blocks for s in b.stmts if s.span is not None and s.src is not None]
    seen = _values_from(fn, st.span[0])
    for reg in regs:
        for leaf in walk(reg):
            if leaf.op != "var":
                continue
            name = str(leaf.val)
            for v in values.get(leaf, ()):
                if not _in_function(v, fn):  # the same name in another function
                    continue
                if v not in seen:  # the name stood for this value in another region
                    continue
                start = _defined_at(fn, v, stmts)
                for s in stmts:
                    w = getattr(s.src, "writes", {}).get(name)
                    assert s.span is not None
                    if s.kind == "if" and s.span[0] <= st.span[0] and st.span[1] <= s.span[1]:
                        # a branch enclosing the candidate (`if (c) r = f(r);`) assigns r
                        # by the candidate itself; an enclosing loop may assign an operand
                        # for the next iteration, and stays a reassignment
                        continue
                    if w is not None and w is not v and start < s.span[0] < st.span[0]:
                        return (
                            f"operand {name} is the value before line {s.line} assigns "
                            f"{name} again; the call at line {st.line} would read the new one"
                        )
    return None


def _dead_after(
    fn: AppFunction, st: AppStmt, matched: Sequence[tuple[AppStmt, Decision]]
) -> tuple[AppStmt, Decision] | None:
    """The replaced statement that ``st``'s value only feeds, if every use of the value
    is inside such statements (whose ISAX operands do not name it: the rewrite recomputes
    it from the operands) or in side-effect-free definitions of local scalars that are
    themselves used only so (``sum = (a + t) % q`` feeding a returned butterfly)."""
    by_op: dict[Operation, AppStmt] = {
        o: s for b in fn.blocks for s in b.stmts for op in s.ops for o in op.walk()
    }
    replaced: dict[int, tuple[AppStmt, Decision, set[str]]] = {}
    for other, d in matched:
        named = _named_vars(d)
        replaced[id(other)] = (other, d, named)

    def feeds(s: AppStmt, depth: int) -> tuple[AppStmt, Decision] | None:
        v = s.value
        if v is None or not s.target or not v.uses or depth > 8:
            return None
        found = None
        for u in v.uses:
            user = by_op.get(u.operation)
            if user is None or user is s:
                return None
            if id(user) in replaced:
                other, d, named = replaced[id(user)]
                if s.target in named:
                    return None
                found = found or (other, d)
                continue
            # a pure local definition, dead in turn
            if user.kind not in ("decl", "assign") or not user.target or user.src is None:
                return None
            inner = [o for op in user.ops for o in op.walk()]
            if any(isinstance(o, memref.StoreOp | func.CallOp | scf.IfOp) for o in inner):
                return None
            further = feeds(user, depth + 1)
            if further is None:
                return None
            found = found or further
        return found

    return feeds(st, 0)


def _identity(t: Term, p: Pattern) -> list[Term]:
    """``[1]``, the multiplicative identity as an operand, when the ISAX multiplies its
    operands and ``t`` reduces modulo a constant: ``modmul_q(s, 1)`` is ``s mod q`` for
    ``s < 2^16`` (Kyber's ``(a + b) % q``, a hardware divide in software). The proof
    decides whether the reduction is the ISAX's; this only offers the operand."""
    if p.rd is None or not any(n.op == "mul" and n.args[1].op != "const" for n in walk(p.rd)):
        return []
    if any(n.op in ("remu", "rems") and n.args[1].op == "const" for n in walk(t)):
        return [const(32, 1)]
    return []


def _has_muls_of(t: Term, p: Pattern) -> bool:
    """Whether ``t`` multiplies (by anything: an operand may be a constant), when the ISAX
    ``p`` multiplies its operands (a product of non-constants)."""
    if p.rd is None or not any(n.op == "mul" and n.args[1].op != "const" for n in walk(p.rd)):
        return True
    return any(n.op == "mul" for n in walk(t))


def _address_names(fn: AppFunction, store: memref.StoreOp) -> set[str]:
    """The C variables the address of ``store`` is computed from (conservatively: every
    named value its index and base operands depend on)."""
    deps = _backward([store.memref, *store.indices], into_regions=True)
    return {name for v in deps if (name := fn.names.get(v)) is not None}


def _in_function(v: SSAValue, fn: AppFunction) -> bool:
    owner = v.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    while op is not None and op is not fn.func:
        op = op.parent_op()
    return op is fn.func


def _defined_at(fn: AppFunction, v: SSAValue, stmts: Sequence[AppStmt]) -> int:
    """Source offset from which ``v`` is the C variable's value (-1: the function start)."""
    owner = v.owner
    op = owner.parent_op() if not isinstance(owner, Operation) else owner
    if op is None or op is fn.func:
        return -1
    best = -1
    for s in stmts:
        inner = {o for x in s.ops for o in x.walk()}
        if op in inner:
            assert s.span is not None
            # a loop's carried value holds from its header; a statement's result after it
            best = s.span[0] if not isinstance(owner, Operation) else s.span[1] - 1
    return best


@dataclass
class _Step:
    """A pointer a statement steps once: its element offset before the statement, the
    constant step (elements), its base's address and the element's bytes."""

    before: SSAValue
    delta: int
    base: Term
    size: int


def _const_int(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return int(op.value.value.data)
    return None


def _reaches(v: SSAValue, x: SSAValue, inner: set[Operation]) -> bool:
    """Whether ``v`` is computed from ``x`` by the ops in ``inner``."""
    stack, seen = [v], set()
    while stack:
        u = stack.pop()
        if u is x:
            return True
        if u in seen or not isinstance(u, OpResult) or u.op not in inner:
            continue
        seen.add(u)
        stack.extend(u.op.operands)
    return False


def _sources(v: SSAValue, inner: set[Operation]) -> list[SSAValue]:
    """The values from outside ``inner`` that ``v`` is computed from."""
    out: list[SSAValue] = []
    stack, seen = [v], set()
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if isinstance(u, OpResult) and u.op in inner:
            stack.extend(u.op.operands)
        else:
            out.append(u)
    return out


def _at_call(t: Term, steps: dict[str, _Step], suffix: str) -> Term | None:
    """``t`` with each load through a walked pointer addressed from the pointer's value
    at the call, the variable ``p`` + ``suffix`` (``base + size * p@at`` before); None when
    ``t`` uses ``p@at`` otherwise."""
    if not steps:
        return t
    ats = {var(f"{nm}@at", width_of(w.before.type)): nm for nm, w in steps.items()}
    if not any(n in ats for n in walk(t)):
        return t
    env: dict[Term, Term] = {}
    for n in walk(t):
        if n.op != "load" or not any(x in ats for x in walk(n.args[0])):
            continue
        terms = dict(linear(n.args[0]).terms)
        off = linear(n.args[0]).offset
        for x, nm in ats.items():
            if x not in terms:
                continue
            w = steps[nm]
            base = dict(linear(w.base).terms)
            if terms[x] != w.size or any(terms.get(y) != k for y, k in base.items()):
                return None
            del terms[x]
            for y in base:
                del terms[y]
            off -= linear(w.base).offset
            now = var(nm + suffix, 32)
            terms[now] = terms.get(now, 0) + 1
        env[n] = mk("load", n.w, (linear_term(Linear(tuple(terms.items()), off & mask(32))),))
    out = substitute(t, env)
    return None if any(n in ats for n in walk(out)) else out


def _statement_effects(
    fn: AppFunction, st: AppStmt, stepped: set[SSAValue] | None = None
) -> bool | str:
    """What a register-pattern statement does besides computing ``st.value``, each effect
    to be accounted for: True when it stores that value to memory (the store is kept and
    only its right-hand side is replaced), False when the value goes to the one scalar it
    defines or is returned; otherwise the reason the statement cannot be replaced."""
    inner = [o for op in st.ops for o in op.walk()]
    stores = [o for o in inner if isinstance(o, memref.StoreOp)]
    others = [o for o in inner if isinstance(o, func.CallOp | scf.ForOp | scf.WhileOp | scf.IfOp)]
    if others:
        return f"the statement also executes {others[0].name}, which an ISAX call would drop"
    if st.kind == "return":
        return "the statement also stores to memory" if stores else False
    if stores:
        if st.kind != "assign" or st.target is not None or len(stores) != 1:
            return "the statement stores to memory besides computing the value"
        if stores[0].value is not st.value:
            return "the statement stores a value other than the expression (compound assignment)"
        return True
    inside = set(inner)
    # a walked pointer's step (``*a++``) is kept by the rewrite (emit: after the call)
    steps = {
        r
        for op in inner
        if isinstance(op, arith.AddiOp | arith.SubiOp) and op.operands[0] in (stepped or ())
        for r in op.results
    }
    other = [
        r
        for op in st.ops
        for r in op.results
        if r is not st.value and r not in steps and any(u.operation not in inside for u in r.uses)
    ]
    if st.target is None or other:
        names = sorted({fn.names.get(r, "?") for r in other} | {st.target or "no variable"})
        return f"the statement assigns {', '.join(names)}; an ISAX call assigns one variable"
    return False


MAX_LEAVES = 6  # candidate operands of a register pattern (bindings grow as n^2)
MAX_PACKED = 6  # 16-bit candidates paired into packed operands {hi:16, lo:16} (n^2 pairs)
MAX_PART_CALLS = 8  # ISAX calls for parts of one statement's value
MAX_PART_DEPTH = 24  # how deep into a statement's value parts are searched


def value_leaves(t: Term, names: set[str] | None = None) -> list[Term]:
    """The candidate operands of :func:`leaf_operands` that ``t`` uses as values: a
    pointer that only addresses the statement's loads (``a`` in ``a[0] * a[1]``) is no
    register operand of a register ISAX, which reads no memory (it would have to compute
    the value from the address). Pruning them keeps a statement over two arrays within
    :data:`MAX_LEAVES`."""
    used: set[Term] = set()
    stack = [t]
    while stack:
        n = stack.pop()
        if n in used:
            continue
        used.add(n)
        if n.op != "load":  # a load's address is not a value of the expression
            stack.extend(n.args)
    return [x for x in leaf_operands(t, names) if x in used]


def _read_bits(rd: Term) -> dict[str, int]:
    """Register name -> how many low bits of it the ISAX result ``rd`` depends on at most
    (16 when every use truncates it to 16 bits; 32 otherwise)."""
    out: dict[str, int] = {}
    for n in walk(rd):
        for a in n.args:
            if a.op == "var":
                k = n.w if n.op == "trunc" else a.w
                out[str(a.val)] = max(out.get(str(a.val), 0), k)
    return out


def is_part(d: Decision) -> bool:
    """Whether ``d`` replaces only parts of its statement's value by ISAX calls (the rest
    of the value stays in software), rather than the whole value."""
    ctx = d.context
    if ctx is None:
        return False
    while ctx.op == "trunc":
        ctx = ctx.args[0]
    return ctx.op != "var"


def _reads_high_half(p: Pattern) -> bool:
    """Whether ``p`` reads bits 31..16 of a register (a packed operand ``{hi:16, lo:16}``)."""
    assert p.rd is not None
    return any(
        n.op == "shru" and n.args[0].op == "var" and n.args[1].op == "const" and n.args[1].val == 16
        for n in walk(p.rd)
    )


def _named_vars(d: Decision) -> set[str]:
    """The C variables a register-pattern rewrite names: its operands, and for a statement
    with ISAX calls for parts of its value, the rest of the value and every call's operands."""
    terms = list(d.binding.regs.values()) if d.binding else []
    if d.context is not None:
        terms.append(d.context)
        terms += [t for _, sub in d.calls if sub.binding for t in sub.binding.regs.values()]
    return {str(n.val) for t in terms for n in walk(t) if n.op == "var"}


MAX_PROOFS = 4  # operand choices equal on random inputs that a register pattern tries to prove
MAX_PARTS = 16  # sub-expressions of a statement's value --explain tries per pattern


def _extensions(t: Term) -> list[Term]:
    if t.w == 32:
        return [t]
    return [cast("zext", 32, t), cast("sext", 32, t)]


MAX_BLOCKERS = 8  # distinct other reasons --explain shows per loop and ISAX

_REASON_RANK = {  # how far a region got through the checks (the furthest is reported)
    UNSUPPORTED: 0,
    LIVEOUT: 1,
    BOUND: 2,
    SHAPE: 3,
    TYPE: 4,
    VALUE: 5,
    DEPENDENCE: 6,
    RULE: 7,
    PROFIT: 8,
    TARGET: 9,
    FINAL: 10,
}


def _call_site(b: Binding) -> Iterable[tuple[str, Term]]:
    """The operands as the call names them (a walked pointer by its variable)."""
    return (b.operands if b.operands is not None else b.regs).items()


def _lines(region: Sequence[AppStmt]) -> str:
    lines = [s.line for s in region if s.line]
    if not lines:
        return "region"
    lo, hi = min(lines), max(lines)
    return f"line {lo}" if lo == hi else f"lines {lo}-{hi}"


def _gain(d: Decision) -> int:
    return d.sw_cycles - d.hw_cycles


__all__ = [
    "BOUND",
    "DEPENDENCE",
    "FINAL",
    "LIVEOUT",
    "PROFIT",
    "RULE",
    "SHAPE",
    "TARGET",
    "TYPE",
    "UNSUPPORTED",
    "VALUE",
    "AppBlock",
    "AppFunction",
    "AppParam",
    "AppStmt",
    "Binding",
    "Decision",
    "Matcher",
    "Options",
    "Pattern",
    "function_of",
    "is_part",
    "params_of_mlir",
    "patterns_of",
    "software_cycles",
]
