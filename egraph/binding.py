"""Binding and proof of one candidate region: the ISAX's operands bound to application
terms, every component (written location, result) compared on random inputs and proven in
the e-graph, and the soundness checks (write set, reads, live-outs, aliasing) -- the
checks :class:`aquas.egraph.matcher.Matcher` runs for each binding it proposes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func, memref, scf
from xdsl.ir import SSAValue

from aquas.egraph.egg import Limits, Normalizer, Prover
from aquas.egraph.patterns import (
    DEPENDENCE,
    LIVEOUT,
    RULE,
    SHAPE,
    TYPE,
    UNSUPPORTED,
    VALUE,
    Pattern,
)
from aquas.egraph.ranges import unsigned
from aquas.egraph.regions import AppFunction, AppStmt, Binding, loop_of
from aquas.egraph.semantics import ADDR_W, Access, Effects
from aquas.egraph.soundness import (
    Trial,
    access_of,
    base_name,
    covered,
    dedup,
    groups,
    hulls,
    indirect_on,
    pieces,
    where,
)
from aquas.egraph.terms import (
    Linear,
    Term,
    binop,
    cast,
    linear,
    linear_term,
    show,
    substitute,
    var,
    walk,
)
from aquas.intops import to_signed
from aquas.target import DEFAULT as DEFAULT_SOC
from aquas.target import Target


@dataclass
class Options:
    core: str | Target = DEFAULT_SOC  # the target whose software cost model applies
    limits: Limits = field(default_factory=Limits)
    random_trials: int = 12  # a fast filter only: every match is proven in the e-graph
    max_context: int = 24  # statements considered before/after an anchor loop
    budget: int = 100_000  # symbolic operations per region
    function_budget: int = 2_000_000  # symbolic operations per function, all regions together
    check_profit: bool = True  # False: offload every proven match (tests, what-if runs)


class RegionFx:
    """A region's effects, live-out terms (key None: the returned value) and the initial
    values of the anchor loop's carried variables, with the footprint summaries every
    pattern and binding compares against (computed once per region)."""

    def __init__(
        self, fx: Effects, liveouts: dict[SSAValue | None, Term], inits: list[Term]
    ) -> None:
        self.fx, self.liveouts, self.inits = fx, liveouts, inits
        self.outs: list[Term] = []  # a chunk: the anchor loop's carried values after it
        self.groups = groups(fx.reads + fx.writes)
        self.reads = dedup(fx.reads)
        self.read_bytes = sum(a.width // 8 for a in self.reads)
        self.pieces = {(k.lin.terms, k.lin.offset, k.width): k.value for k in pieces(fx.writes)}
        self.npieces = len(pieces(fx.writes))
        self.hull = hulls(fx.reads + fx.writes)


def _globals(fn: AppFunction) -> set[str]:
    """The globals the function uses (computed once per function)."""
    if fn.globals_used is None:
        fn.globals_used = {
            op.name_.root_reference.data
            for op in fn.func.walk()
            if isinstance(op, memref.GetGlobalOp)
        }
    return fn.globals_used


def const_globals(fn: AppFunction) -> set[str]:
    """The ``const`` globals of the function's module, as terms name them (``@g``),
    computed once per function (every binding's dependence check asks)."""
    if fn.const_globals is None:
        module = fn.func.parent_op()
        fn.const_globals = {
            "@" + op.sym_name.data
            for op in (module.walk() if module is not None else ())
            if isinstance(op, memref.GlobalOp) and op.constant is not None
        }
    return fn.const_globals


def global_names(fn: AppFunction) -> set[str]:
    """The globals' addresses as terms name them (``@g``): constants the call site spells."""
    return {f"@{g}" for g in _globals(fn)}


def iv_name(fn: AppFunction, loop: scf.ForOp) -> str:
    return fn.names.get(loop.body.block.args[0], "%iv")


def enclosing_ivs(fn: AppFunction, anchor: AppStmt) -> set[str]:
    """The indices of the counted loops around a statement: at a call site inside their
    bodies they hold the values the region's terms name (an ``scf.for``'s index is not
    assigned in its body; the frontend makes no other loop an ``scf.for``)."""
    names: set[str] = set()
    at = anchor.ops[0].parent_op() if anchor.ops else None
    while at is not None and not isinstance(at, func.FuncOp):
        if isinstance(at, scf.ForOp) and not (n := iv_name(fn, at)).startswith("%"):
            names.add(n)
        at = at.parent_op()
    return names


class BindingChecks:
    """The checks of one binding; the state is the matcher's (declared here)."""

    opt: Options
    proven: set[tuple[Term, Term]]
    refuted: set[frozenset[tuple[Term, Term]]]
    normalizer: Normalizer | None
    substs: dict[tuple[tuple[str, Term], ...], dict[Term, Term]]
    trials: list[Trial]

    def check_binding(
        self,
        fn: AppFunction,
        region: RegionFx,
        p: Pattern,
        b: Binding,
        results: list[tuple[SSAValue | None, Term]],
        inits: list[Term],
        anchor: AppStmt,
        start: int | None = None,
    ) -> tuple[str, str] | None:
        """``start``: the region's first C source offset when it is in the function's
        outermost block (None otherwise)."""
        assert p.fx is not None
        fx = region.fx
        # a parameter the function assigns is, at the call site, no longer the value the
        # region's terms name -- unless the region is in the function's outermost block (it
        # runs once) and every assignment is inside it or after it: a pointer walked by the
        # replaced loop (``*d++ = ...``) still holds its entry value where the call goes (its
        # value after the loop, if used, is a live-out, refused as such)
        callable_names = {
            q.name
            for q in fn.params
            if q.name not in fn.assigned
            or (
                start is not None
                and all(a is not None and a >= start for a in fn.assigned_at.get(q.name, [None]))
            )
        }
        # a global's address is a constant the call site names (``(uint32_t)(uintptr_t)g``)
        callable_names |= global_names(fn)
        # so is the index of a loop around the region (a kernel applied per row or tile)
        callable_names |= enclosing_ivs(fn, anchor)
        regs = b.regs
        if b.chunk is not None:
            loop = loop_of(anchor)
            if isinstance(loop, scf.ForOp):
                callable_names.add(iv_name(fn, loop))
            # a variable the chunks move is, where the call goes, at its value at the
            # chunk's start: ``p`` for ``p's base + size * p@in``, ``j`` for ``j@in``
            callable_names -= set(b.walks)
            regs = {}
            for r, t in b.regs.items():
                now = at_chunk_start(t, b.walks, region)
                if isinstance(now, str):
                    return (UNSUPPORTED, f"{r} = {show(t, 4)}: {now}")
                regs[r] = now
            callable_names |= set(b.walks)
            if regs != b.regs:
                b.operands = regs
        for r, t in regs.items():
            atoms = {str(a.val) for a, _ in linear(t).terms if a.op == "var"}
            if any(a.op != "var" for a, _ in linear(t).terms) or not atoms <= callable_names:
                moved = sorted(a for a in atoms if a in fn.assigned)
                if moved:
                    return (
                        UNSUPPORTED,
                        f"{r} = {show(t, 4)}: parameter {moved[0]} is assigned in the function, "
                        "so the call site cannot name its original value",
                    )
                return (
                    UNSUPPORTED,
                    f"{r} = {show(t, 4)} depends on values the call site cannot name "
                    "(only parameters, globals and the indices of loops around it)",
                )
        env = {var(r, 32): t for r, t in b.regs.items()}
        # substitutions by binding, kept across regions and functions (the same binding,
        # e.g. rs1 = a, recurs in every region around a loop and in similar kernels)
        sub = self.substs.setdefault(tuple(sorted(b.regs.items(), key=lambda x: x[0])), {})

        def s(t: Term) -> Term:
            return substitute(t, env, sub)

        # the write set first, from the addresses alone (values are substituted only when
        # the addresses agree)
        aw = region.pieces
        ikeys = {(k.lin.terms, k.lin.offset, k.width) for k in pieces(p.fx.writes, s, False)}
        if ikeys != set(aw):
            missing = sorted(ikeys - set(aw), key=lambda x: x[1])
            extra = sorted(set(aw) - ikeys, key=lambda x: x[1])
            what = []
            if missing:
                what.append(f"{p.name} writes {where(missing[0])} which the region does not")
            if extra:
                what.append(f"the region stores to {where(extra[0])} which {p.name} does not")
            return (SHAPE, "; ".join(what))
        # reads: every read of the region must be one the ISAX performs
        iread = {(a.lin, a.width) for a in (access_of(s(a.addr), a.width) for a in p.fx.reads)}
        for a in region.reads:
            if not all(t.op == "var" for t, _ in a.lin.terms):
                continue  # data-dependent address: compared through the values that use it
            if (a.lin, a.width) not in iread and not covered(a, iread):
                return (SHAPE, f"the region reads {show(a.addr)} which {p.name} does not read")
        hull = region.hull
        for a in p.fx.reads:
            sa = access_of(s(a.addr), a.width)
            if sa.lin.terms in hull:
                lo, hi = hull[sa.lin.terms]
                outside = sa.lin.offset < lo or sa.lin.offset + sa.width // 8 > hi
                if outside and not indirect_on(fx, sa.lin.terms):
                    return (
                        SHAPE,
                        f"{p.name} reads {show(sa.addr)}, outside what the region touches",
                    )
        # components: values of every written location and the result
        iw = {(k.lin.terms, k.lin.offset, k.width): k.value for k in pieces(p.fx.writes, s)}
        pairs: list[tuple[Term, Term]] = []
        for key, v in iw.items():
            assert v is not None
            av = aw[key]
            assert av is not None
            if av.w != v.w:
                return (TYPE, f"store width {av.w} vs {v.w} at {where(key)}")
            pairs.append((av, s(v)))
        accumulate = False
        if results:
            rd = s(p.rd) if p.rd is not None else None
            assert rd is not None
            val, out = results[0]
            cand = cast("trunc", out.w, rd) if out.w < 32 else rd
            if out.w > 32:
                return (TYPE, f"the live-out value is {out.w} bits, rd is 32")
            loop = loop_of(anchor)
            acc_init = None
            if (
                isinstance(loop, scf.ForOp | scf.WhileOp)
                and val in loop.results
                and len(inits) == len(loop.results)  # (a while loop's, when strip-mined)
            ):
                acc_init = inits[list(loop.results).index(val)]  # type: ignore[arg-type]
            if b.chunk is not None:
                if acc_init is None:
                    return (LIVEOUT, "a strip-mined loop's result must be an accumulator")
                cand = binop("add", acc_init, cand)
                accumulate = True
            elif (
                acc_init is not None
                and acc_init.op == "var"
                and self.random_equal([(out, binop("add", acc_init, cand))])
            ):
                cand = binop("add", acc_init, cand)
                accumulate = True
            pairs.append((out, cand))
        b.accumulate = accumulate
        if not self.random_equal(pairs):
            bad = next(x for x in pairs if not self.random_equal([x]))
            return (VALUE, f"computes {show(bad[0], 3)}, {p.name} computes {show(bad[1], 3)}")
        # dependences: hazards between different bases need restrict, or a run-time guard
        # that the region's ranges on them are disjoint
        hazards = [
            *fx.hazards,
            *((access_of(s(x.addr), x.width), access_of(s(y.addr), y.width))
              for x, y in p.fx.hazards),
        ]  # fmt: skip
        b.guard = []
        hz = self.hazard(fn, hazards)
        if hz:
            # (C input only, whose statements have source spans: the guard is C text)
            guard = (
                None
                if b.chunk is not None or anchor.span is None
                else alias_guard(
                    self.aliasing(fn, hazards),
                    [
                        *fx.reads,
                        *fx.writes,
                        *(access_of(s(a.addr), a.width) for a in p.fx.reads + p.fx.writes),
                    ],
                    callable_names,
                    pointer_names(fn),
                )
            )
            if guard is None:
                return (DEPENDENCE, hz)
            b.guard = guard
        ok, prover = self.prove(pairs)
        if not ok:
            st = prover.stats
            if st.stopped == "time":  # never silent: this answer depends on the machine
                return (
                    RULE,
                    f"the proof hit the wall-clock safety limit ({self.opt.limits.seconds:g} s "
                    f"per proof, Options.limits.seconds) after {st.iterations} iterations and "
                    f"{st.nodes} e-nodes; the iteration and e-node limits did not decide",
                )
            return (
                RULE,
                f"equal on {self.opt.random_trials} random inputs but not proven by the rule sets "
                f"({st.stopped} after {st.iterations} iterations, {st.nodes} e-nodes)",
            )
        b.proof = (
            f"{len(pairs)} component(s) proven equal in {prover.stats.iterations} e-graph "
            f"iteration(s), {prover.stats.nodes} e-nodes"
        )
        return None

    def prove(self, pairs: Sequence[tuple[Term, Term]]) -> tuple[bool, Prover]:
        """Prove every pair equal in one e-graph; results are cached per pair (terms are
        hash-consed, so the same question from a neighbouring region is not asked twice),
        and a set of pairs that failed within the limits is not tried again.  Every proof
        of a matcher shares the prover's term normaliser (a pure function of the
        hash-consed terms), so the normal form of a term shared by several questions is
        built once."""
        prover = Prover(self.opt.limits, normalizer=self.normalizer)
        self.normalizer = prover.memo
        todo = [(a, b) for a, b in pairs if a is not b and (a, b) not in self.proven]
        key = frozenset(todo)
        if any(frozenset([k]) in self.refuted for k in key) or key in self.refuted:
            prover.stats.stopped = "known unprovable"
            return False, prover
        if prover.equal_all(todo):
            self.proven.update(key)
            return True, prover
        if len(todo) > 1 and prover.stats.stopped == "saturated":
            # egglog 13 can lose a multiset's multiplicities when its elements merge while
            # containers are rebuilt, depending on a per-process hash order: a joint proof
            # of many pairs then saturates short of the goal although every pair alone
            # proves (observed on vcovmat3d about once in 20 processes).  Prove them alone.
            singles = [Prover(self.opt.limits, normalizer=self.normalizer) for _ in todo]
            if all(pr.equal_all([pair]) for pr, pair in zip(singles, todo, strict=True)):
                self.proven.update(key)
                prover.stats.iterations = max(pr.stats.iterations for pr in singles)
                prover.stats.nodes = max(pr.stats.nodes for pr in singles)
                prover.stats.stopped = "proved"
                return True, prover
        if prover.stats.stopped != "time":  # a time-out may not repeat on a quieter machine
            self.refuted.add(key)
        return False, prover

    def aliasing(
        self, fn: AppFunction, pairs: Iterable[tuple[Access, Access]]
    ) -> list[tuple[Access, Access]]:
        """The pairs of accesses on different bases that may alias: neither base is a
        ``restrict`` parameter and they are not two distinct globals."""
        restrict = {p.name for p in fn.params if p.pointer and p.restrict}
        ptrs = pointer_names(fn)
        consts = const_globals(fn)
        out = []
        for x, y in pairs:
            bx, by = base_name(x, ptrs), base_name(y, ptrs)
            if bx == by and bx is not None:
                continue
            if bx in restrict or by in restrict:
                continue
            if bx in consts or by in consts:
                continue  # a const object is never written (through any pointer: C 6.7.3)
            if bx is not None and by is not None and bx.startswith("@") and by.startswith("@"):
                continue  # two distinct globals never overlap
            out.append((x, y))
        return out

    def hazard(self, fn: AppFunction, pairs: Iterable[tuple[Access, Access]]) -> str | None:
        ptrs = pointer_names(fn)
        for x, y in self.aliasing(fn, pairs):
            bx, by = base_name(x, ptrs), base_name(y, ptrs)
            kind = "read" if y.value is None else "written"
            return (
                f"{show(x.addr, 3)} is written and then {show(y.addr, 3)} is {kind}; "
                f"'{bx}' and '{by}' may alias (declare the pointers restrict)"
            )
        return None

    def random_equal(self, pairs: Sequence[tuple[Term, Term]]) -> bool:
        """A fast filter: equal values on random inputs (required before any proof).  A
        variable's value depends only on its name and the trial, so the value of every
        (hash-consed) term is computed once per trial for the whole run."""
        for trial in self.trials:
            for a, b in pairs:
                if trial.value(a) != trial.value(b):
                    return False
        return True


def pointer_names(fn: AppFunction) -> set[str]:
    """The function's pointer variables: parameters and locals of pointer type."""
    return {p.name for p in fn.params if p.pointer} | fn.pointers


def byte_range(
    a: Access, pointers: set[str] | None = None, names: set[str] | None = None
) -> tuple[Term, int, int] | None:
    """(base, lo, hi): the bytes ``[base + lo, base + hi)`` that ``a`` may touch, when its
    address is a pointer (the one in ``pointers``, or the only 32-bit variable), plus a
    constant, plus variables the call site spells (``names``: an enclosing loop's index,
    ``sig + 32*blk``, which are then part of ``base``), plus data-dependent terms whose
    value ranges (egraph/ranges.py) are known (``v[n]`` with ``n`` counted from a mask is
    within ``v[0 .. 31]``); None otherwise (two pointers, an unbounded index)."""
    name = base_name(a, pointers)
    spelled = names or set()
    head: list[tuple[Term, int]] = []  # the pointer and the spelled variables, in order
    lo = hi = to_signed(a.lin.offset, ADDR_W)
    for t, c in a.lin.terms:
        if t.op == "var" and t.w == ADDR_W and (str(t.val) == name or str(t.val) in spelled):
            head.append((t, c))
            continue
        if t.op == "var":
            return None
        k = to_signed(c, ADDR_W)
        tlo, thi = unsigned(t)
        lo, hi = lo + min(k * tlo, k * thi), hi + max(k * tlo, k * thi)
    if not any(str(t.val) == name and c == 1 for t, c in head):
        return None
    if hi - lo > 1 << 20:  # (a range this wide is no useful guard)
        return None
    return linear_term(Linear(tuple(head), 0)), lo, hi + a.width // 8


def alias_guard(
    pairs: list[tuple[Access, Access]],
    accesses: list[Access],
    names: set[str],
    pointers: set[str],
) -> list[tuple[tuple[Term, int, int], tuple[Term, int, int]]] | None:
    """The run-time guard that makes the aliasing ``pairs`` impossible: for each pair of
    bases, the byte ranges that the accesses on them (``accesses``: the region's and the
    ISAX's) may touch must be disjoint. A data-dependent address counts with the range of
    its index (:func:`byte_range`). None when a base is not a name the call site spells
    (``names``) or an access on a guarded base has no range the guard could state."""
    guarded = {base_name(a, pointers) for pair in pairs for a in pair}
    if None in guarded:
        return None
    hull: dict[str, tuple[Term, int, int]] = {}
    for a in accesses:
        name = base_name(a, pointers)
        if name not in guarded:
            continue
        r = byte_range(a, pointers, names)
        if r is None or name not in names:
            return None
        base, lo, hi = r
        base0, lo0, hi0 = hull.get(name, (base, lo, hi))
        if base0 is not base:  # (another multiple of an enclosing loop's index)
            return None
        hull[name] = (base, min(lo, lo0), max(hi, hi0))
    out: list[tuple[tuple[Term, int, int], tuple[Term, int, int]]] = []
    for x, y in pairs:
        bx, by = base_name(x, pointers), base_name(y, pointers)
        if bx not in hull or by not in hull:
            return None
        pair = (hull[bx], hull[by])
        if pair not in out and (pair[1], pair[0]) not in out:
            out.append(pair)
    return out


def at_chunk_start(t: Term, walks: dict[str, tuple[int, int]], region: RegionFx) -> Term | str:
    """``t``, an operand of a chunk over the variables' values at the chunk's start
    (``p@in``, a pointer's element offset from its base), as the call site names it: a
    walked pointer's C variable stands for ``base + size * p@in``, a walked scalar's for
    ``j@in``; a reason when ``t`` uses a start value some other way."""
    inits = {f"{nm}@in" for nm in walks}
    if not any(x.op == "var" and x.val in inits for x in walk(t)):
        return t
    ptrs = {f"{nm}@in": nm for nm, (_, size) in walks.items() if size}
    scalars = {
        var(f"{nm}@in", x.w): var(nm, x.w)
        for nm, (_, size) in walks.items()
        if not size
        for x in walk(t)
        if x.op == "var" and x.val == f"{nm}@in"
    }
    t = substitute(t, scalars) if scalars else t
    if not ptrs:
        return t
    lin = linear(t)
    terms = dict(lin.terms)
    for x, c in list(terms.items()):
        if x.op != "var" or x.val not in ptrs:
            continue
        nm = ptrs[str(x.val)]
        # the base: the other variable every address formed with p@in adds once
        bases = {
            frozenset((y, k) for y, k in a.lin.terms if y is not x)
            for a in region.fx.reads + region.fx.writes
            if any(y is x for y, _ in a.lin.terms)
        }
        if len(bases) != 1:
            return f"pointer {nm} is not one base plus its walked offset"
        [base] = bases
        size = walks[nm][1]
        if c != size or len(base) != 1 or not all(terms.get(y) == k for y, k in base):
            return f"it uses the offset of pointer {nm} other than as the pointer's address"
        [(y, k)] = base
        if k != 1:
            return f"pointer {nm} is not one base plus its walked offset"
        del terms[x], terms[y]
        now = var(nm, 32)
        terms[now] = terms.get(now, 0) + 1
    return linear_term(linear(linear_term(Linear(tuple(terms.items()), lin.offset))))
