"""Predicted cycles of every ISAX of a lowered spec on a target (the memory-interface model).

Data flow: the ``aquas`` dialect module → the synthesis scheduler on a clone
(``synth/flow.schedule_isaxs``: the same prepare passes and FSM builder ``aquas synth``
uses) → per ISAX its compute cycles (every state that is not a memory wait state, plus the
dispatch cycle) and the dynamic sequence of its memory-interface ops (loops expanded by
their trip counts, addresses as affine forms of rs1/rs2) → each transfer costed by
:mod:`aquas.model.formulas` with the descriptor's parameters → the ISAX's total.

With a cold L2 the hit/miss of each access depends on where the pointers lie within a
line; the model averages over every placement of each pointer at its natural alignment
(the widest access through it, at least a word) and simulates the L2's tag rules exactly
as ``aquas_mem_ctrl`` applies them (lookup at the request and at each line crossing inside
a burst). Distinct pointers are assumed not to conflict in the L2 (no dirty evictions).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from aquas.diagnostics import loc_of
from aquas.dialects import aquas as aq
from aquas.dialects.aquas import constant_value
from aquas.model.formulas import (
    MemParams,
    access_wait,
    bank_beat_cycles,
    beat_bytes,
    group_cycles,
    overlapped_cycles,
    request_cycles,
    split_bursts,
)
from aquas.target import Target

if TYPE_CHECKING:
    from aquas.synth.fsm import IsaxFsm, StreamWindow
    from aquas.synth.oplib import OperatorLibrary

#: The most pointer placements averaged for a cold L2 (a deterministic stride beyond).
MAX_PLACEMENTS = 512
#: A data-dependent address term of at most this many unsigned bits is a window within a
#: pointer's region (4 KiB at most), not a pointer of its own.
MAX_SPREAD_BITS = 12


@dataclass(frozen=True)
class _Access:
    """One dynamic execution of a memory-interface op."""

    op: Operation
    write: bool
    base: frozenset[tuple[Hashable, int]]  # run-time terms of the address (rs1, rs2, ...)
    offset: int  # the constant part once loop counters are substituted (signed)
    elem_bytes: int
    nbytes: int
    banks: int
    partition: str
    # bytes a bounded data-dependent part of the address (a loaded count masked to 5 bits,
    # a narrow index) may add to ``offset``: the access lands somewhere in that window
    spread: int = 0


@dataclass
class TransferPrediction:
    """One memory-interface op of an ISAX, over all its dynamic executions."""

    kind: str  # load, store, burst_read, burst_write
    where: str  # spec location
    write: bool
    bytes: int  # per execution
    beats: int  # per execution
    requests: int  # per execution (bursts split at the port's limit)
    count: int  # executions per ISAX call (loop trip counts)
    cycles: float  # all executions, expected value over pointer placements
    l2_misses: float  # all executions, expected

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "where": self.where,
            "write": self.write,
            "bytes": self.bytes,
            "beats": self.beats,
            "requests": self.requests,
            "count": self.count,
            "cycles": round(self.cycles, 2),
            "l2_misses": round(self.l2_misses, 2),
        }


@dataclass(frozen=True)
class ResidentBurst:
    """A burst whose scratchpad the unit keeps resident (docs/synthesis.md, Resident
    scratchpads): it fills ``nbytes`` from ``base + offset`` (``base``: ``rs1``, ``rs2`` or
    ``0``), and a call that keeps its claim saves ``saving`` cycles (its wait state lasts one
    cycle instead of the transfer's)."""

    scratchpad: str
    where: str
    base: str
    offset: int
    nbytes: int
    saving: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "scratchpad": self.scratchpad,
            "where": self.where,
            "base": self.base,
            "offset": self.offset,
            "bytes": self.nbytes,
            "saving": round(self.saving, 2),
        }


@dataclass
class IsaxPrediction:
    isax: str
    compute_cycles: int
    transfer_cycles: float
    total: float
    bound: Literal["memory", "compute"]
    transfers: list[TransferPrediction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # a call whose resident scratchpads keep their claims (synth/memengine.py): each such
    # burst's wait state lasts one cycle; None without resident bursts
    resident_total: float | None = None
    resident: list[ResidentBurst] = field(default_factory=list)

    @property
    def written_bytes(self) -> int:
        return sum(t.bytes * t.count for t in self.transfers if t.write)

    def as_dict(self) -> dict[str, Any]:
        return {
            "isax": self.isax,
            "cycles": round(self.total, 2),
            "compute_cycles": self.compute_cycles,
            "transfer_cycles": round(self.transfer_cycles, 2),
            "bound": self.bound,
            "written_bytes": self.written_bytes,
            "transfers": [t.as_dict() for t in self.transfers],
            "notes": self.notes,
            **(
                {"cycles_resident": round(self.resident_total, 2)}
                if self.resident_total is not None
                else {}
            ),
        }


# -- the dynamic access sequence ------------------------------------------------------------


def _width(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, IntegerType)
    return t.width.data


def _mem_count(block: Block) -> int:
    n = 0
    for op in block.walk():
        if isinstance(op, aq.LoadOp | aq.StoreOp | aq.BurstReadOp | aq.BurstWriteOp):
            n += 1
    return n


def _access(op: Operation, ivs: dict[SSAValue, int]) -> _Access:
    from aquas.synth.fsm import affine_index, spm_of
    from aquas.synth.narrow import unsigned_bits

    single = isinstance(op, aq.LoadOp | aq.StoreOp)
    form = affine_index(op.addr)  # type: ignore[attr-defined]
    offset = form.const
    spread = 0
    base: list[tuple[Hashable, int]] = []
    for term, k in form.terms:
        if isinstance(term, BlockArgument) and term in ivs:
            offset += k * ivs[term]
        elif single and k > 0 and (bits := unsigned_bits(term)) <= MAX_SPREAD_BITS:
            # a data-dependent term known to be small: a window above the rest of the
            # address, not a pointer of its own
            spread += k * ((1 << bits) - 1)
        else:
            base.append((term, k))
    offset &= 0xFFFFFFFF
    if offset >= 1 << 31:
        offset -= 1 << 32
    if isinstance(op, aq.LoadOp | aq.StoreOp):
        w = _width(op.result if isinstance(op, aq.LoadOp) else op.value)
        return _Access(
            op,
            isinstance(op, aq.StoreOp),
            frozenset(base),
            offset,
            w // 8,
            w // 8,
            1,
            "none",
            spread,
        )
    assert isinstance(op, aq.BurstReadOp | aq.BurstWriteOp)
    spm = spm_of(op)
    eb = spm.width // 8
    return _Access(
        op,
        isinstance(op, aq.BurstWriteOp),
        frozenset(base),
        offset,
        eb,
        eb * op.length_value,
        spm.factor_value,
        spm.partition.data,
    )


def dynamic_accesses(isax: aq.IsaxOp) -> tuple[list[_Access], bool]:
    """The memory-interface ops ``isax`` executes, in order (prepared IR: constant loop
    bounds), and whether that sequence is the only one (False when a side-effecting
    branch holds memory ops: the branch with more of them is taken)."""
    out: list[_Access] = []
    exact = True

    def walk(block: Block, ivs: dict[SSAValue, int]) -> None:
        nonlocal exact
        for op in block.ops:
            if isinstance(op, scf.ForOp):
                if not _mem_count(op.body.block):
                    continue  # no access: its iterations need no walk (2^60 of them may be)
                lb, ub, step = (constant_value(v) for v in (op.lb, op.ub, op.step))
                assert lb is not None and ub is not None and step is not None
                iv = op.body.block.args[0]
                for t in range(max(0, (ub - lb + step - 1) // step)):
                    walk(op.body.block, {**ivs, iv: t})
            elif isinstance(op, scf.IfOp):
                regions = [r for r in (op.true_region, op.false_region) if r.blocks]
                counts = [_mem_count(r.block) for r in regions]
                if any(counts):
                    if len(set(counts)) > 1 or len(counts) == 1:
                        exact = False
                    walk(regions[counts.index(max(counts))].block, ivs)
            elif isinstance(op, aq.LoadOp | aq.StoreOp | aq.BurstReadOp | aq.BurstWriteOp):
                out.append(_access(op, ivs))

    walk(isax.body.block, {})
    return out, exact


# -- costing -------------------------------------------------------------------------------


def _base_name(base: frozenset[tuple[Hashable, int]]) -> str:
    parts = []
    for term, k in sorted(base, key=lambda tk: str(tk[0])):
        name = "?"
        if isinstance(term, OpResult) and isinstance(term.owner, aq.ReadRs1Op):
            name = "rs1"
        elif isinstance(term, OpResult) and isinstance(term.owner, aq.ReadRs2Op):
            name = "rs2"
        elif isinstance(term, SSAValue) and term.name_hint:
            name = term.name_hint
        parts.append(name if k == 1 else f"{k}*{name}")
    return " + ".join(parts) or "0"


def _packed(acc: _Access, bus_bytes: int) -> bool:
    """A burst of elements narrower than the port: the engine packs ``bus_bytes`` per
    beat from the aligned address below its start (docs/isax-port.md, Beats)."""
    return isinstance(acc.op, aq.BurstReadOp | aq.BurstWriteOp) and acc.elem_bytes < bus_bytes


def _beats_at(acc: _Access, bus_bytes: int, addr: int) -> int:
    """Bus beats of one execution at byte address ``addr`` (as ``synth/fsm.mem_beats``
    counts them: the engine and the schedule use that function)."""
    from aquas.synth.fsm import mem_beats

    return mem_beats(acc.op, 8 * bus_bytes, addr % bus_bytes if _packed(acc, bus_bytes) else 0)


def _window_miss(
    acc: _Access, addr: int, line: int, lines: set[tuple[Any, int]], touches: dict[Any, int]
) -> float:
    """The probability that a single access landing anywhere in its window (``spread``)
    misses a cold L2: each window line neither present before nor touched by the ``t``
    earlier accesses to the window (each on a line chosen uniformly) is still missing with
    probability ``(1 - 1/W)^t``."""
    first, last = addr // line, (addr + acc.spread + acc.nbytes - 1) // line
    w = last - first + 1
    absent = sum((acc.base, k) not in lines for k in range(first, last + 1))
    key = (acc.base, first, w)
    t = touches.get(key, 0)
    touches[key] = t + 1
    return absent / w * (1 - 1 / w) ** t


def early_saving(p: MemParams, wait: int, early: int) -> int:
    """Cycles a request sent ``early`` compute cycles before its wait state saves: the
    controller took it in the window's first cycle, so its DMA setup and ``wait`` ran
    under the compute, up to ``early`` cycles of them; the wait state keeps its own first
    cycle and the beats."""
    return min(p.setup + wait, early) if early > 0 else 0


def stream_saving(
    p: MemParams, window: StreamWindow, beats: int, wait: int, skip: int, elem_bytes: int
) -> int:
    """Cycles a streamed burst read saves (``FsmBuilder.mark_stream``): its wait state
    plus its window's compute, ``request_cycles + V`` with one cycle per window visit,
    against the cycle-level run of the two together (``synth/fsm.stream_cycles``: the
    request in cycle 0, beat ``k`` from cycle ``1 + setup + wait + k``, each window state
    once the elements it reads are in, a beat delayed a cycle by a window state reading
    the scratchpad's SRAM port). L2 stalls inside the burst are counted before its first
    beat."""
    from aquas.synth.fsm import stream_cycles

    per = max(1, p.bus_bytes // elem_bytes)
    v = len(window.visits)
    plain = request_cycles(p, beats, False, wait) + v
    return plain - stream_cycles(window, beats, 1 + p.setup + wait, per, skip)


def _cost_once(
    p: MemParams,
    acc: _Access,
    lines: set[tuple[Any, int]] | None,
    base_at: dict[frozenset[tuple[Hashable, int]], int],
    ahead: bool = False,
    touches: dict[Any, int] | None = None,
    early: int = 0,
    stream: StreamWindow | None = None,
) -> tuple[float, float]:
    """(cycles, L2 misses) of one execution. ``lines`` is the set of present L2 lines for
    a cold-L2 simulation (None: off or warm, no lookups). ``ahead``: the request was sent
    ahead in a run (``synth/fsm.py``, ``FsmBuilder.mark_runs``) and its latency ran under
    the transactions before it, so only its data cycles (and a write's acknowledgement)
    remain; a run needs a controller as deep as the run (``isax_master.outstanding``),
    which the target schema allows only without an L2. ``touches`` counts the accesses to
    each window of a single access with a ``spread`` (:func:`_window_miss`). ``early``:
    the request was sent that many compute cycles before its wait state
    (``FsmBuilder.mark_early``), so its DMA setup and wait ran under them, up to as many
    cycles (:func:`early_saving`). ``stream``: a burst read whose beats arrive while its
    window runs (``FsmBuilder.mark_stream``); its cycles are those the window's run takes
    beyond the window's own compute cycles (:func:`stream_saving`)."""
    addr = base_at.get(acc.base, 0) + acc.offset
    skip = (addr % p.bus_bytes) // acc.elem_bytes if _packed(acc, p.bus_bytes) else 0
    if _packed(acc, p.bus_bytes):
        per = p.bus_bytes
        addr -= addr % per  # the first beat is the aligned block holding the start
    else:
        per = beat_bytes(acc.elem_bytes, p.bus_bytes)
    n = _beats_at(acc, p.bus_bytes, base_at.get(acc.base, 0) + acc.offset)
    if ahead:
        return n + int(acc.write), 0
    # the engine writes every element of a beat into the scratchpad in the same cycle
    # (a write port per element), so a beat costs one cycle whatever the banks
    bank = bank_beat_cycles(1, acc.banks, acc.partition)
    occ: list[int] = []
    data: list[int] = []
    misses = 0
    line = p.l2_line_bytes
    if lines is not None and acc.spread:
        # one request somewhere in the window: its cost expected over hit and miss
        q = _window_miss(acc, addr, line, lines, touches if touches is not None else {})
        hit, miss = (
            request_cycles(p, n * bank, acc.write, access_wait(p, h))
            - early_saving(p, access_wait(p, h), early)
            for h in (True, False)
        )
        return q * miss + (1 - q) * hit, q
    for req in split_bursts(n, p.max_burst_beats):
        stalls = 0
        if lines is None:
            wait = access_wait(p)
        else:
            key = (acc.base, addr // line)
            hit = key in lines
            lines.add(key)
            misses += not hit
            wait = access_wait(p, hit)
            for i in range(1, req):
                a = addr + i * per
                if a % line == 0:  # the beat starts a new line: looked up at the crossing
                    k2 = (acc.base, a // line)
                    if k2 not in lines:
                        misses += 1
                        stalls += p.miss_penalty
                        lines.add(k2)
        occ.append(request_cycles(p, req * bank, acc.write, wait, stalls))
        if not data:  # the first request is the one sent ahead
            occ[-1] -= early_saving(p, wait, early)
        if stream is not None:  # one request: the plans split bursts at the limit
            occ[-1] -= stream_saving(p, stream, req, wait + stalls, skip, acc.elem_bytes)
        data.append(req * bank)
        addr += req * per
    return group_cycles(occ, data, p.channels * p.outstanding), misses


def _placements(
    accesses: list[_Access], p: MemParams
) -> list[dict[frozenset[tuple[Hashable, int]], int]]:
    """Every placement of each pointer at its natural alignment within an L2 line (cold
    L2: which accesses miss depends on it) or within a bus beat (a packed burst's beats
    depend on its start's offset in the beat); one placement when neither matters."""
    align: dict[frozenset[tuple[Hashable, int]], int] = {}
    for a in accesses:
        align[a.base] = max(align.get(a.base, 4), a.elem_bytes if a.elem_bytes <= 8 else 8)
    span = p.l2_line_bytes if p.l2 == "cold" else p.bus_bytes
    bases = list(align)
    choices = [range(0, span, align[b]) if b and span > align[b] else range(1) for b in bases]
    combos = list(itertools.product(*choices))
    if len(combos) > MAX_PLACEMENTS:
        stride = -(-len(combos) // MAX_PLACEMENTS)
        combos = combos[::stride]
    # pointers far apart (1 MiB): distinct pointers never share a line
    return [
        {b: (i + 1) * (1 << 20) + off for i, (b, off) in enumerate(zip(bases, c, strict=True))}
        for c in combos
    ]


def cost_accesses(
    accesses: list[_Access],
    p: MemParams,
    ahead: Collection[Operation] = (),
    early: Mapping[Operation, int] | None = None,
    stream: Mapping[Operation, StreamWindow] | None = None,
) -> tuple[dict[Operation, float], dict[Operation, float], float]:
    """Expected cycles and L2 misses per op, and the first transfer's latency (for
    overlap), over the pointer placements (:func:`_placements`); the ops in ``ahead``
    have their requests sent ahead in a run, those in ``early`` across that many compute
    cycles, those in ``stream`` overlap their window (:func:`_cost_once`)."""
    early = early or {}
    stream = stream or {}
    cycles: dict[Operation, float] = {a.op: 0.0 for a in accesses}
    misses: dict[Operation, float] = {a.op: 0.0 for a in accesses}
    places = _placements(accesses, p)
    first: float = 0.0
    for place in places:
        lines: set[tuple[Any, int]] | None = set() if p.l2 == "cold" else None
        touches: dict[Any, int] = {}
        for i, a in enumerate(accesses):
            ci, mi = _cost_once(
                p,
                a,
                lines,
                place,
                a.op in ahead,
                touches,
                early.get(a.op, 0),
                stream.get(a.op),
            )
            cycles[a.op] += ci / len(places)
            misses[a.op] += mi / len(places)
            if i == 0:
                first += ci / len(places)
    return cycles, misses, first


# -- per ISAX ------------------------------------------------------------------------------


def _where(op: Operation) -> str:
    loc = loc_of(op)
    if loc is None:
        return "?"
    return f"{loc.filename.rsplit('/', 1)[-1]}:{loc.line}:{loc.column}"


def claims_survive(accesses: list[_Access], resident: frozenset[Operation], bus_bytes: int) -> bool:
    """Whether a call's own writes leave its resident scratchpads' claims intact: no write
    at the same run-time base may touch a bus block a resident burst filled. (Writes at
    another base register are taken to miss them, as the operands of the accuracy
    benchmark do; a program whose buffers meet drops the claim, which costs a refill.)"""

    def blocks(a: _Access) -> range:
        return range(a.offset // bus_bytes, (a.offset + a.nbytes - 1) // bus_bytes + 1)

    for r in (a for a in accesses if a.op in resident):
        rb = blocks(r)
        for w in accesses:
            if (
                w.write
                and w.base == r.base
                and range(max(rb.start, blocks(w).start), min(rb.stop, blocks(w).stop))
            ):
                return False
    return True


def predict_module(
    module: ModuleOp,
    target: Target,
    *,
    l2: Literal["cold", "warm"] = "cold",
    clock_ns: float = 10.0,
    outstanding: int = 1,
    overlap: bool = False,
    lib: OperatorLibrary | None = None,
) -> list[IsaxPrediction]:
    """Predicted cycles (command handshake to the first ``rsp_valid``) of every ISAX of the
    extension in ``module`` (left unchanged) on ``target``: the module is scheduled at the
    target's ISAX bus width with ``lib`` (default: the packaged library), as synthesis
    schedules it."""
    from aquas.synth.flow import schedule_isaxs
    from aquas.synth.oplib import OperatorLibrary

    width = target.isax_master.bus_width
    _, fsms = schedule_isaxs(module.clone(), clock_ns, lib or OperatorLibrary.load(), width)
    return predict_scheduled(fsms, target, l2=l2, outstanding=outstanding, overlap=overlap)


def predict_scheduled(
    fsms: list[IsaxFsm],
    target: Target,
    *,
    l2: Literal["cold", "warm"] = "cold",
    outstanding: int = 1,
    overlap: bool = False,
) -> list[IsaxPrediction]:
    """:func:`predict_module` on ISAXs already scheduled (``synth/flow.schedule_isaxs`` at
    the target's bus width): the plan chooser schedules each plan once for both its
    latency report and the model."""
    from aquas.synth.fsm import mem_beats

    p = MemParams.of(target, l2, outstanding)
    width = 8 * p.bus_bytes
    preds = []
    for fsm in fsms:
        isax = fsm.isax
        accesses, exact = dynamic_accesses(isax)
        notes = []
        if not exact:
            notes.append("a data-dependent branch holds memory ops: the longer path is predicted")
        lat = fsm.latency
        waiting = sum(a.op not in fsm.ahead for a in accesses)  # ahead ones wait no latency
        if waiting != lat.max_mem:
            notes.append(
                f"the schedule has {lat.max_mem} wait states on its longest path, the model "
                f"{waiting} accesses"
            )
        # the scheduler's fixed cycles include each wait state's beats at the worst
        # alignment (+ the write acknowledgement): what remains are the compute states and
        # the dispatch cycle
        mem_fixed = sum(mem_beats(a.op, width) + int(a.write) for a in accesses)
        compute = lat.max_fixed + 1 - mem_fixed
        cyc, miss, first = cost_accesses(accesses, p, fsm.ahead, fsm.early, fsm.stream)
        # one row per spec access: the unrolled copies of one access are merged
        rows: dict[tuple[Any, ...], TransferPrediction] = {}
        done: set[Operation] = set()
        for a in accesses:
            n = _beats_at(a, p.bus_bytes, a.offset)  # the pointer aligned to the beat
            key = (a.op.name, _where(a.op), a.write, a.nbytes)
            row = rows.get(key)
            if row is None:
                row = rows[key] = TransferPrediction(
                    kind=a.op.name.split(".", 1)[1],
                    where=key[1],
                    write=a.write,
                    bytes=a.nbytes,
                    beats=n,
                    requests=len(split_bursts(n, p.max_burst_beats)),
                    count=0,
                    cycles=0.0,
                    l2_misses=0.0,
                )
            row.count += 1
            if a.op not in done:  # cyc and miss hold an op's executions together
                done.add(a.op)
                row.cycles += cyc[a.op]
                row.l2_misses += miss[a.op]
        transfers = list(rows.values())
        transfer = sum(cyc.values())
        total = overlapped_cycles(compute, transfer, first, overlap)
        kept = None
        resident = []
        if fsm.resident:
            from aquas.synth.fsm import spm_of

            # a skipped burst's wait state ends in its request cycle
            kept = total - sum(cyc[op] - 1 for op in fsm.resident)
            resident = [
                ResidentBurst(
                    spm_of(a.op).sym_name.data,
                    _where(a.op),
                    _base_name(a.base),
                    a.offset,
                    a.nbytes,
                    cyc[a.op] - 1,
                )
                for a in accesses
                if a.op in fsm.resident
            ]
            if l2 == "warm" and claims_survive(accesses, fsm.resident, p.bus_bytes):
                # a warm call repeats the one before with the same operands: its resident
                # scratchpads still hold what that call filled
                notes.append("warm: the repeated call keeps its resident scratchpads")
                total = kept
        preds.append(
            IsaxPrediction(
                isax=isax.sym_name.data,
                compute_cycles=compute,
                transfer_cycles=transfer,
                total=total,
                bound="memory" if transfer > compute else "compute",
                transfers=transfers,
                notes=notes,
                resident_total=kept,
                resident=resident,
            )
        )
    return preds


__all__ = [
    "IsaxPrediction",
    "ResidentBurst",
    "TransferPrediction",
    "claims_survive",
    "dynamic_accesses",
    "predict_module",
    "predict_scheduled",
]
