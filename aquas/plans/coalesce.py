"""``aquas-interface-burst``: coalesce single-shot loads and stores into bursts.

For each ISAX, single-shot accesses with affine addresses (:mod:`aquas.plans.affine`) are
grouped by base register, element width and alignment. A group of loads becomes one
``aquas.burst_read`` into a new scratchpad, placed before the first load, and each load an
``aquas.spm_read`` of its element; a group of stores becomes ``aquas.spm_write``s into a new
scratchpad and one ``aquas.burst_write`` after the last store.

Soundness. A burst moves memory traffic: a load burst reads *earlier* than the loads did,
a store burst writes *later*. So every other access of the ISAX that may touch the group's
bytes (different base register, a non-affine address, or overlapping offsets) and sits
between the old and the new position is a *barrier*: the group is cut into epochs at the
barriers, each epoch with its own burst, and an access that shares a loop with a barrier
(so it runs both before and after it) is not coalesced. Stores also need every byte of the
burst to be written, on every execution: stores under an ``scf.if``, in a loop that may
not run, or leaving gaps stay single-shot. Every access left alone is reported with its
spec location in the pass's rejections (:mod:`aquas.plans.common`), never silently.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from aquas.dialects import aquas as aq
from aquas.plans.affine import Affine, Footprint, access_bytes, affine, footprint, loop_of
from aquas.plans.common import (
    Emitter,
    Rejection,
    conditional,
    extension_of,
    fresh_name,
    record,
    rejection,
    selected,
    top_level,
)
from aquas.spec.limits import SpecBudgets

PLAN = "aquas-interface-burst"
MEM = (aq.LoadOp, aq.StoreOp, aq.BurstReadOp, aq.BurstWriteOp)
MAX_FACTOR = 8
"""Largest cyclic partition the pass creates (each bank is a separate register file)."""


@dataclass
class _Access:
    op: Operation
    anchor: int  # index of its top-level op in the ISAX body
    write: bool
    fp: Footprint


@dataclass
class _Cand:
    op: aq.LoadOp | aq.StoreOp
    anchor: int
    aff: Affine
    size: int  # bytes per element
    starts: list[int]  # byte offsets from the base of every execution

    @property
    def elements(self) -> set[int]:
        return set(self.starts)


@dataclass
class _Run:
    """One burst: its elements are ``[lo, lo + n * size)`` from the base."""

    store: bool
    base: str | None
    size: int
    lo: int
    n: int
    cands: list[_Cand]


def _loops_always_run(isax: aq.IsaxOp, op: Operation) -> bool:
    p = op.parent_op()
    while p is not None and p is not isax:
        if isinstance(p, scf.ForOp):
            lp = loop_of(p.body.block.args[0])
            if lp is None or not lp.values:
                return False
        p = p.parent_op()
    return True


def _where(op: Operation) -> str:
    from aquas.diagnostics import loc_of

    loc = loc_of(op)
    return f"{op.name} at {loc}" if loc else op.name


class _Planner:
    def __init__(self, isax: aq.IsaxOp, max_gap: int, budgets: SpecBudgets):
        self.isax = isax
        self.max_gap = max_gap
        self.budgets = budgets
        self.top = list(isax.body.block.ops)
        index = {id(o): i for i, o in enumerate(self.top)}
        self.accesses = [
            _Access(
                o,
                index[id(top_level(isax, o))],
                isinstance(o, aq.StoreOp | aq.BurstWriteOp),
                footprint(o),
            )
            for o in isax.body.walk()
            if isinstance(o, MEM)
        ]
        self.rejected: list[Rejection] = []
        self.noalias = aq.NOALIAS_ATTR in isax.attributes

    def reject(self, op: Operation, reason: str) -> None:
        self.rejected.append(rejection(PLAN, self.isax, op, reason))

    def candidates(self) -> list[_Cand]:
        out = []
        for a in self.accesses:
            op = a.op
            if not isinstance(op, aq.LoadOp | aq.StoreOp):
                continue
            store = isinstance(op, aq.StoreOp)
            if conditional(self.isax, op):
                self.reject(
                    op,
                    "the access is conditional (inside an if): a burst would touch memory "
                    "the spec may not",
                )
                continue
            if store and not _loops_always_run(self.isax, op):
                self.reject(op, "the store is in a loop without constant, non-empty bounds")
                continue
            aff = affine(op.addr)
            if aff is None:
                self.reject(
                    op,
                    "the address is not affine in rs1/rs2 and the counters of constant-bound "
                    "loops (it depends on a value computed at run time)",
                )
                continue
            if store and aff.runtime_terms():
                self.reject(
                    op,
                    "the store's address depends on a run-time value: a burst would write "
                    "bytes the spec may not",
                )
                continue
            starts = aff.values()
            if starts is None:
                self.reject(op, "the access's iteration space is too large to enumerate")
                continue
            if any(not 0 <= x < 1 << 32 for x in starts):
                # the element index would be computed modulo 2^32 from a wrapped offset
                self.reject(op, "the address offset wraps around the 32-bit address space")
                continue
            size = access_bytes(op)
            out.append(_Cand(op, a.anchor, aff, size, starts))
        return out

    def plan(self) -> list[_Run]:
        groups: dict[tuple[bool, str | None, int, int], list[_Cand]] = defaultdict(list)
        for c in self.candidates():
            if not c.starts:
                continue  # never executes: nothing to move
            key = (isinstance(c.op, aq.StoreOp), c.aff.base, c.size, c.starts[0] % c.size)
            groups[key].append(c)
        runs: list[_Run] = []
        # stores first: their bursts go in before loads' bursts placed at the same point
        for key in sorted(groups, key=lambda k: (not k[0], str(k[1]), k[2], k[3])):
            store, base, size, _ = key
            runs += self._group(store, base, size, groups[key])
        return runs

    def _group(self, store: bool, base: str | None, size: int, cands: list[_Cand]) -> list[_Run]:
        members = {id(c.op) for c in cands}
        span = Footprint(
            base, frozenset(s + k for c in cands for s in c.starts for k in range(size))
        )
        barriers: dict[int, _Access] = {}
        for a in self.accesses:
            if id(a.op) in members or not (store or a.write):
                continue
            if a.fp.may_overlap(span, self.noalias):
                barriers.setdefault(a.anchor, a)
        cuts = sorted(barriers)
        epochs: dict[int, list[_Cand]] = defaultdict(list)
        for c in cands:
            if c.anchor in barriers:
                b = barriers[c.anchor]
                hint = ""
                if not self.noalias and b.fp.offsets is not None and b.fp.base != base:
                    hint = " (if the caller's buffers never overlap, declare #[noalias])"
                self.reject(
                    c.op,
                    f"{_where(b.op)} may touch the same bytes and shares a loop with this "
                    "access: "
                    + (
                        "a burst at the end would reorder the two"
                        if store
                        else "a burst before the loop would read before that write"
                    )
                    + hint,
                )
                continue
            epochs[bisect.bisect_left(cuts, c.anchor)].append(c)
        runs: list[_Run] = []
        for _, group in sorted(epochs.items()):
            runs += self._runs(store, base, size, group)
        return runs

    def _runs(self, store: bool, base: str | None, size: int, cands: list[_Cand]) -> list[_Run]:
        while True:
            elems = sorted({s for c in cands for s in c.starts})
            gap = 0 if store else self.max_gap
            # intervals of elements no more than `gap` elements apart
            bounds: list[list[int]] = []
            for e in elems:
                if bounds and (e - bounds[-1][1]) // size - 1 <= gap:
                    bounds[-1][1] = e
                else:
                    bounds.append([e, e])
            starts = [b[0] for b in bounds]

            def run_of(s: int, starts: list[int] = starts) -> int:
                return bisect.bisect_right(starts, s) - 1

            spanning = [c for c in cands if len({run_of(s) for s in c.starts}) > 1]
            if not spanning:
                break
            if store:
                for c in spanning:
                    self.reject(
                        c.op,
                        "the stores leave gaps between their elements: a burst write would "
                        "overwrite bytes the spec does not write",
                    )
                cands = [c for c in cands if c not in spanning]
                continue
            # a load's elements must come from one burst: bridge the gaps it spans
            merged: list[list[int]] = []
            for c in spanning:
                rs = {run_of(s) for s in c.starts}
                merged.append([bounds[min(rs)][0], bounds[max(rs)][1]])
            return self._runs_bridged(store, base, size, cands, bounds + merged)
        return self._make_runs(store, base, size, cands, bounds)

    def _runs_bridged(
        self, store: bool, base: str | None, size: int, cands: list[_Cand], bounds: list[list[int]]
    ) -> list[_Run]:
        bounds.sort()
        out: list[list[int]] = []
        for lo, hi in bounds:
            if out and lo <= out[-1][1]:
                out[-1][1] = max(out[-1][1], hi)
            else:
                out.append([lo, hi])
        return self._make_runs(store, base, size, cands, out)

    def _make_runs(
        self, store: bool, base: str | None, size: int, cands: list[_Cand], bounds: list[list[int]]
    ) -> list[_Run]:
        runs = []
        for lo, hi in bounds:
            mine = [c for c in cands if lo <= c.starts[0] <= hi]
            n = (hi - lo) // size + 1
            if n == 1 and len(mine) == 1 and len(set(mine[0].starts)) == 1:
                self.reject(
                    mine[0].op, "a lone one-element access: a burst of one beat saves nothing"
                )
                continue
            bad = [
                c
                for c in mine
                if (c.aff.const - lo) % size or any(k % size for k in c.aff.coefs.values())
            ]
            for c in bad:
                self.reject(c.op, "the address steps are not whole elements of the burst")
            mine = [c for c in mine if c not in bad]
            if mine:
                runs.append(_Run(store, _base(mine), size, lo, n, mine))
        return runs


def _base(cands: list[_Cand]) -> str | None:
    return cands[0].aff.base


def _factor(run: _Run) -> int:
    """Cyclic banks so the element accesses of one block (an unrolled body) can run in
    the same cycle, as they could not through the single memory port before."""
    per_block: dict[int, list[_Cand]] = defaultdict(list)
    for c in run.cands:
        per_block[id(c.op.parent_block())].append(c)
    stride = _stride_factor(run, list(per_block.values()))
    if stride is not None:
        return stride
    want = max(len(cands) for cands in per_block.values())
    f = 1
    while f < want and f < MAX_FACTOR:
        f *= 2
    return max(1, min(f, run.n))


def _stride_factor(run: _Run, blocks: list[list[_Cand]]) -> int | None:
    """``k`` when every block's accesses are elements ``k * i + r`` of a loop counter (or
    run-time term) ``i`` with the ``k`` residues ``r`` all different (a point's three
    coordinates, ``3j .. 3j + 2``): cyclic ``k`` gives each its own bank for every ``i``,
    and the bank of ``k * i + r`` is ``r``, a constant the scheduler sees. A power of two
    of banks would hold them too for some ``i``, but its bank is then a function of ``i``,
    which the scheduler's bank analysis takes as any bank, serialising the accesses (the
    naive point-cloud ``vnearest``: 412 scheduled cycles against 287 hand-written)."""
    ks: set[int] = set()
    for cands in blocks:
        terms = {tuple(c.aff.coefs.items()) for c in cands}
        if len(terms) != 1:
            return None
        (term,) = terms
        if len(term) != 1 or term[0][1] % run.size:
            return None
        k = term[0][1] // run.size
        residues = {(c.aff.const - run.lo) // run.size % k for c in cands if k > 0}
        if k < 2 or len(cands) != k or len(residues) != k:
            return None
        ks.add(k)
    if len(ks) != 1:
        return None
    (k,) = ks
    return k if k <= MAX_FACTOR and k <= run.n else None


def _apply(isax: aq.IsaxOp, runs: list[_Run], top: list[Operation]) -> None:
    ext = extension_of(isax)
    body = isax.body.block
    counters = {True: 0, False: 0}
    for run in runs:
        stem = f"{isax.sym_name.data}_{'st' if run.store else 'ld'}{counters[run.store]}"
        counters[run.store] += 1
        name = fresh_name(ext, stem)
        f = _factor(run)
        spm = aq.ScratchpadOp(name, 8 * run.size, run.n, "cyclic" if f > 1 else "none", f)
        spm.location = isax.location
        ext.body.block.insert_op_before(spm, isax)
        anchors = [c.anchor for c in run.cands]
        first = min(run.cands, key=lambda c: c.anchor).op
        if run.store:
            after = max(anchors) + 1
            at = top[after] if after < len(top) else None
            em = Emitter(body, at, max(run.cands, key=lambda c: c.anchor).op)
        else:
            em = Emitter(body, top[min(anchors)], first)
        addr = em.add_i32(em.base(run.base), run.lo)
        zero = em.const(0)
        burst: Operation
        if run.store:
            burst = aq.BurstWriteOp(name, zero, addr, run.n)
        else:
            burst = aq.BurstReadOp(name, zero, addr, run.n)
        em.add(burst)
        for c in run.cands:
            blk = c.op.parent_block()
            assert blk is not None
            e = Emitter(blk, c.op, c.op)
            idx = e.affine_i32(
                (c.aff.const - run.lo) // run.size,
                [(iv, k // run.size) for iv, k in c.aff.coefs.items()],
            )
            if isinstance(c.op, aq.LoadOp):
                new = e.add(aq.SpmReadOp(name, idx, 8 * run.size))
                c.op.result.replace_all_uses_with(new.results[0])
            else:
                e.add(aq.SpmWriteOp(c.op.value, name, idx))
            blk.erase_op(c.op)


def _spm_elements(ext: aq.ExtensionOp) -> int:
    """Elements of the extension's register scratchpads (the budget is theirs: an SRAM
    scratchpad is not unrolled into registers, synth/sram.py)."""
    from aquas.synth.sram import is_sram

    return sum(s.size for s in ext.scratchpads() if not is_sram(s))


def coalesce(module: ModuleOp, only: str = "", max_gap: int = 4) -> list[Rejection]:
    """Applies the plan to the selected ISAXs in place; returns what it left alone."""
    found: list[Rejection] = []
    budgets = SpecBudgets.from_env()
    for isax in list(selected(module, only)):
        p = _Planner(isax, max_gap, budgets)
        runs = p.plan()
        ext = extension_of(isax)
        room = budgets.scratchpad_elements - _spm_elements(ext)
        bursts = sum(1 for o in isax.body.walk() if isinstance(o, aq.BurstReadOp | aq.BurstWriteOp))
        kept = []
        for r in runs:
            if r.n > room or bursts >= budgets.bursts:
                for c in r.cands:
                    p.reject(
                        c.op,
                        "the extension's scratchpad or burst budget is exhausted "
                        f"({budgets.scratchpad_elements} elements, {budgets.bursts} bursts; "
                        f"{budgets.hint('scratchpad_elements')})",
                    )
                continue
            room -= r.n
            bursts += 1
            kept.append(r)
        _apply(isax, kept, p.top)
        record(isax, p.rejected)
        found += p.rejected
    module.verify()
    return found


@dataclass(frozen=True)
class AquasInterfaceBurstPass(ModulePass):
    """Coalesces single-shot loads/stores with affine addresses into scratchpad bursts.

    Accesses that cannot move soundly (aliasing a burst would reorder, non-affine or
    conditional addresses, gaps under a store burst) stay single-shot and are listed, with
    their spec location, in the ISAX's ``aquas.plan_rejections`` attribute. Accesses
    through different base registers may alias unless the ISAX is ``#[noalias]``."""

    name = "aquas-interface-burst"

    only: str = ""
    """Comma-separated ISAX names to rewrite (empty: every ISAX)."""

    max_gap: int = 4
    """Largest run of unused elements a load burst reads across instead of splitting."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        coalesce(op, self.only, self.max_gap)
