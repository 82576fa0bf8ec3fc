"""Scheduling and binding: one ISAX body → a finite-state machine of control steps.

Data flow: prepared IR (``synth/prepare.py``) → for each straight-line segment, a
scheduling problem (``segment_problem``: dependences, chaining delays from the operator
library, scratchpad bank-port and memory-port limits, the clock) → a schedule by the
builder's algorithm (list scheduling by default, ``synth/schedule.py``), verified against
the problem → states. Structured control flow maps onto the state graph:

* ``scf.for`` (constant bounds, not unrolled): registers for the induction variable and the
  iteration arguments, initialised in the state before the loop; the body's last state
  updates them and branches back while ``iv + step < ub`` (a do-while: trip counts are
  known, zero-trip loops vanish at compile time);
* ``scf.if`` with side effects (pure ones were if-converted): a branch on the condition,
  result registers written by each branch's last state;
* memory-interface ops (``aquas.load/store/burst_*``) get a *wait state* that issues the
  request and waits on the handshake, so any response latency is handled;
* multi-cycle ops (``synth/multicycle.py``: a division slower than the clock) start on
  their shared unit in one state (``State.issues``) and are read ``latency`` states later
  (``State.completes``), within their segment; other work fills the states between.

Every value used outside the state that computes it is held in a register named after the
spec. Latency is returned as ``A + B*L`` for a memory answering at fixed latency ``L``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.ir import Block, Operation, OpResult, SSAValue

from aquas.diagnostics import AquasError, loc_of
from aquas.dialects import aquas as aq
from aquas.dialects.aquas import constant_value
from aquas.dialects.aquas import scratchpad_of as spm_of
from aquas.dialects.linear import induction_loop, linear_form, trip_count
from aquas.synth.binding import (
    Binding,
    IsaxOperators,
    Sharing,
    accumulator_adders,
    isax_operators,
)
from aquas.synth.oplib import MultiCycleOp, OperatorLibrary
from aquas.synth.prepare import unobservable_storage
from aquas.synth.schedule import (
    Access,
    Affine,
    InfeasibleError,
    Schedule,
    Scheduler,
    SchedulingProblem,
    list_schedule,
)
from aquas.synth.sram import is_sram

MEM_OPS = (aq.LoadOp, aq.StoreOp, aq.BurstReadOp, aq.BurstWriteOp)
FREE_OPS = (arith.ConstantOp, aq.ReadRs1Op, aq.ReadRs2Op)

WIDENING_OPS = (arith.ExtSIOp, arith.ExtUIOp)
"""Width extensions: wiring, so a value they make is never held in a register of its
own; the narrower operand is (``FsmBuilder.hold``)."""


def sram_read(op: Operation) -> bool:
    """A read of an SRAM scratchpad: its data arrives one cycle after the read."""
    return isinstance(op, aq.SpmReadOp) and is_sram(spm_of(op))


def carried_read(op: Operation) -> bool:
    """An SRAM read whose result only feeds the next iteration of its loop (every use is
    the body's ``scf.yield``). Issued in the body's last state, its data cycle is the
    next iteration's first state, or a state after the loop: the bank's read port holds
    the word until the bank is read again, so the body takes no extra state for it
    (``FsmBuilder.for_op``). A pipelined kernel whose last cycle reads an SRAM relies on
    this (II 1 with SRAM reads)."""
    if not sram_read(op):
        return False
    uses = list(op.results[0].uses)
    return bool(uses) and all(
        isinstance(u.operation, scf.YieldOp) and isinstance(u.operation.parent_op(), scf.ForOp)
        for u in uses
    )


@dataclass(frozen=True)
class Latency:
    """Cycles as ``fixed + per_mem * L`` (min and max over control paths and over the
    alignment of burst addresses). ``min_ctl``/``max_ctl`` are the fixed cycles without
    the data beats: at a fixed latency with no back-pressure, an ISAX whose control
    cycles do not vary takes exactly ``ctl + per_mem * L + beats`` cycles, ``beats``
    being the data beats it transferred."""

    min_fixed: int = 0
    max_fixed: int = 0
    min_mem: int = 0
    max_mem: int = 0
    min_ctl: int = 0
    max_ctl: int = 0

    @staticmethod
    def steps(n: int) -> Latency:
        """``n`` cycles that move no data."""
        return Latency(n, n, 0, 0, n, n)

    def __add__(self, o: Latency) -> Latency:
        return Latency(
            self.min_fixed + o.min_fixed,
            self.max_fixed + o.max_fixed,
            self.min_mem + o.min_mem,
            self.max_mem + o.max_mem,
            self.min_ctl + o.min_ctl,
            self.max_ctl + o.max_ctl,
        )

    def __sub__(self, o: Latency) -> Latency:
        return self + o.times(-1)

    def times(self, n: int) -> Latency:
        return Latency(
            self.min_fixed * n,
            self.max_fixed * n,
            self.min_mem * n,
            self.max_mem * n,
            self.min_ctl * n,
            self.max_ctl * n,
        )

    def either(self, o: Latency) -> Latency:
        return Latency(
            min(self.min_fixed, o.min_fixed),
            max(self.max_fixed, o.max_fixed),
            min(self.min_mem, o.min_mem),
            max(self.max_mem, o.max_mem),
            min(self.min_ctl, o.min_ctl),
            max(self.max_ctl, o.max_ctl),
        )

    def at(self, mem_latency: int) -> tuple[int, int]:
        return (
            self.min_fixed + self.min_mem * mem_latency,
            self.max_fixed + self.max_mem * mem_latency,
        )


@dataclass
class Goto:
    target: int = -1


@dataclass
class Branch:
    cond: SSAValue
    if_true: int = -1
    if_false: int = -1


@dataclass
class LoopLatch:
    loop: LoopInfo
    body: int = -1
    exit: int = -1


Transition = Goto | Branch | LoopLatch


@dataclass
class LoopInfo:
    op: scf.ForOp
    iv_reg: str
    iter_regs: list[str]
    lb: int
    ub: int
    step: int
    # width of the induction variable's register (``counter_bits``)
    bits: int = 32
    # iteration values carried in an SRAM bank's read port (``carried_read``): index into
    # ``iter_regs`` -> the read. Their register is written from the read port in the
    # body's first state (from the second iteration on: ``run_reg`` says so) and in
    # ``catch``, the state after the loop; in those states the value is the port's data.
    carried: dict[int, Operation] = field(default_factory=dict)
    run_reg: str = ""
    init: int = -1  # the state that enters the loop (writes the initial values)
    first: int = -1  # the body's first state
    last: int = -1  # the body's last state (the latch)
    catch: int = -1  # the state after the loop taking carried values (-1: none needed)


@dataclass
class State:
    id: int
    isax: str
    ops: list[Operation] = field(default_factory=list)
    wait: Operation | None = None
    # extra register writes at the end of the state: (register, value)
    writes: list[tuple[str, SSAValue]] = field(default_factory=list)
    # loop latch updates happen in the body's last state
    latches: list[LoopInfo] = field(default_factory=list)
    next: Transition = field(default_factory=Goto)
    # multi-cycle ops started on their unit in this state, and those whose result is read
    # from their unit in this state
    issues: list[Operation] = field(default_factory=list)
    completes: list[Operation] = field(default_factory=list)
    # the unit of each of them
    units: dict[Operation, MultiCycleOp] = field(default_factory=dict)
    # a run of consecutive wait states whose requests are issued ahead (outstanding > 1):
    # the run's states in order and this state's position in it; a state at position
    # > 0 is *ahead*: its request is sent from an earlier state of the run
    run: list[State] | None = None
    run_pos: int = 0
    # a request sent ahead across compute (aquas.early): the compute states before this
    # wait state in which the engine sends its request (FsmBuilder.mark_early; the cycles
    # spent in them are in IsaxFsm.early)
    early: tuple[int, ...] = ()
    # a burst read whose data streams into the compute after it (aquas.stream): its
    # window (FsmBuilder.mark_stream); the wait state itself only sends the request
    stream: StreamWindow | None = None

    @property
    def ahead(self) -> bool:
        return self.run is not None and self.run_pos > 0


@dataclass
class IsaxFsm:
    isax: aq.IsaxOp
    entry: int
    latency: Latency
    # memory ops whose request is issued ahead, from an earlier wait state (their wait
    # costs only their data beats and a write's acknowledgement)
    ahead: frozenset[Operation] = frozenset()
    # burst reads the unit skips while their scratchpad holds the same address's bytes
    # (resident_states)
    resident: frozenset[Operation] = frozenset()
    # memory ops whose request is sent ahead across compute (aquas.early) -> the cycles
    # of compute before their wait state, under which their latency runs
    early: dict[Operation, int] = field(default_factory=dict)
    # burst reads whose data streams into the compute after them (aquas.stream)
    stream: dict[Operation, StreamWindow] = field(default_factory=dict)

    @property
    def reported(self) -> Latency:
        """The latency as the reports give it: a streamed burst's window may run wholly
        under its beats, so the lower bound drops by the window's cycles. ``latency``
        itself stays the schedule's (without that overlap): resource sharing weighs the
        compute against it (``synth/timing.py``), which streaming does not change."""
        v = sum(len(w.visits) for w in self.stream.values())
        return self.latency - Latency(v, 0, 0, 0, v, 0)


BUS_WIDTHS = (32, 64, 128)
"""The ISAX master's data widths synthesis supports (``isax_master.bus_width``)."""


def elem_bytes(op: Operation) -> int:
    """Bytes of one element a memory-interface op moves."""
    if isinstance(op, aq.LoadOp):
        return _width(op.result) // 8
    if isinstance(op, aq.StoreOp):
        return _width(op.value) // 8
    return spm_of(op).width // 8


def resident_states(states: list[State], bus_width: int) -> dict[int, aq.BurstReadOp]:
    """State id -> its burst read, for the wait states that may skip their burst when the
    scratchpad still holds the same address's bytes (``RESIDENT_ATTR``, set by
    aquas-interface-resident): not in a run of requests sent ahead, elements no wider
    than a beat."""
    out = {}
    for st in states:
        op = st.wait
        if (
            isinstance(op, aq.BurstReadOp)
            and RESIDENT_ATTR in op.attributes
            and st.run is None
            and elem_bytes(op) <= bus_width // 8
        ):
            out[st.id] = op
    return out


def mem_beats(op: Operation, bus_width: int = 32, offset: int | None = None) -> int:
    """Bus beats a memory-interface op transfers on a ``bus_width``-bit port
    (docs/isax-port.md). A single access is one beat (an i64 on a 32-bit port: two). A
    burst of ``n`` elements of ``eb`` bytes packs ``B = bus_width / 8`` bytes per beat from
    the B-aligned address below its start: ``ceil((offset + n * eb) / B)`` beats, where
    ``offset`` is the start address modulo B (a multiple of ``eb``: bursts are aligned to
    their elements); ``offset=None`` gives the worst case, ``B - eb``. Elements wider than
    a beat take ``eb / B`` beats each."""
    bb = bus_width // 8
    eb = elem_bytes(op)
    if isinstance(op, aq.LoadOp | aq.StoreOp):
        return max(1, eb // bb)
    assert isinstance(op, aq.BurstReadOp | aq.BurstWriteOp)
    n = op.length_value
    if eb >= bb:
        return n * (eb // bb)
    off = bb - eb if offset is None else offset
    return (off + n * eb + bb - 1) // bb


def wait_cycles(op: Operation, bus_width: int = 32) -> Latency:
    """Cycles of a wait state at fixed memory latency L (see docs/synthesis.md):
    reads: request at cycle 0, beats at L .. L+beats-1, leave after the last beat;
    writes: request at 0, data beats 1..beats, acknowledgement L cycles after the last.
    ``beats`` ranges over the alignments of the address (``mem_beats``)."""
    lo, hi = mem_beats(op, bus_width, 0), mem_beats(op, bus_width)
    if isinstance(op, aq.LoadOp | aq.BurstReadOp):
        return Latency(lo, hi, 1, 1, 0, 0)
    return Latency(lo + 1, hi + 1, 1, 1, 1, 1)


def early_cycles(op: Operation, bus_width: int = 32) -> Latency:
    """Cycles of a wait state whose request was sent ahead across compute
    (``State.early``): at least its first cycle and its beats (+ a write's
    acknowledgement), when the latency ran under the compute; at most what
    :func:`wait_cycles` says, when the port took the request only as the state began."""
    lo, hi = mem_beats(op, bus_width, 0), mem_beats(op, bus_width)
    w = int(isinstance(op, aq.StoreOp | aq.BurstWriteOp))
    return Latency(lo + 1 + w, hi + w, 0, 1, 1 + w, w)


def ahead_cycles(op: Operation, bus_width: int = 32) -> Latency:
    """Cycles of a wait state whose request was issued ahead (``State.ahead``): its data
    beats follow the previous transaction's back to back, without the request handshake
    and the memory latency (which ran while earlier transactions moved their data), so
    reads take their beats, writes their beats and the acknowledgement."""
    lo, hi = mem_beats(op, bus_width, 0), mem_beats(op, bus_width)
    if isinstance(op, aq.LoadOp | aq.BurstReadOp):
        return Latency(lo, hi, 0, 0, 0, 0)
    return Latency(lo + 1, hi + 1, 0, 0, 1, 1)


OUTSTANDING_ATTR = "aquas.outstanding"
"""ISAX attribute (an integer >= 1): the memory requests its unit may keep in flight; set
by the interface plans from the target (``isax_master.outstanding``). Absent: 1."""

EARLY_ATTR = "aquas.early"
"""ISAX attribute (unit) set by the plans (``aquas-interface-early``): the unit sends the
request of a wait state ahead, during the compute states before it (:meth:`FsmBuilder.
mark_early`), so the memory's latency runs under that compute."""

STREAM_ATTR = "aquas.stream"
"""ISAX attribute (unit) set by the plans (``aquas-interface-stream``): a burst read's wait
state only sends the request, and the compute after it runs while the beats arrive, each
state waiting for the elements it reads (:meth:`FsmBuilder.mark_stream`)."""


@dataclass(frozen=True)
class StreamWindow:
    """The compute a streamed burst read overlaps (:meth:`FsmBuilder.mark_stream`): the
    states the FSM runs after the burst's wait state up to the next wait state (or the
    response, or a data-dependent branch), and, per cycle of that window as the FSM runs
    it, ``(need, banks)``: the highest element of the burst (counted from its first) the
    state reads from the scratchpad (-1: none of them), and the SRAM banks it reads
    (its first access of a bank takes port 0, the port the beats are written through: a
    beat for such a bank arriving in a cycle where the state runs waits one cycle)."""

    states: frozenset[int]
    visits: tuple[tuple[int, frozenset[int]], ...]
    # the beats' bank is known when each beat holds one element of a cyclic partition:
    # beat k writes bank (bank0 + k) % cyclic, and a beat waits only for a state reading
    # that bank; cyclic = 0: a beat waits for any state reading the SRAM scratchpad
    cyclic: int = 0
    bank0: int = 0
    # a window state reads the burst's last element: every beat is in before the window
    # is left (the unit needs no gate on leaving)
    drained: bool = False


def stream_cycles(
    window: StreamWindow, beats: int, first_beat: int, per: int = 1, skip: int = 0
) -> int:
    """Cycles from a streamed burst's wait state to the end of its window, as the unit
    spends them (``synth/memengine.py``; the model and the tests use it): the wait state
    sends the request in cycle 0 and the window starts in cycle 1; beat ``k`` can arrive
    from cycle ``first_beat + k`` on, one per cycle, and waits a cycle while a state
    reading its bank through the beats' SRAM port runs (:class:`StreamWindow`); a state
    runs once every element it reads has arrived (beat ``(skip + need) // per``: ``per``
    elements a beat, ``skip`` elements before the burst's first in its first beat), the
    window's last state once every beat has. A cycle-level simulation: the beats and the
    states wait on each other, which no closed formula captures."""
    c, got, offer = 1, 0, first_beat
    visits, f = window.visits, window.cyclic
    last = len(visits) - 1
    for i, (need, banks) in enumerate(visits):
        want = min((skip + need) // per, beats - 1) if need >= 0 else -1
        while not (want < got and (i < last or got == beats)):
            if got < beats and c >= offer:
                got, offer = got + 1, c + 1
            c += 1
        taken = bool(banks) and (not f or (window.bank0 + got) % f in banks)
        if got < beats and c >= offer and not taken:
            got, offer = got + 1, c + 1
        c += 1
    return c


RESIDENT_ATTR = "aquas.resident"
"""Unit attribute of an ``aquas.burst_read`` set by the plans (aquas-interface-resident,
``aquas/plans/resident.py``): the unit may skip the burst when its scratchpad still holds
the bytes of the same address, a claim it keeps by snooping RAM writes."""

# index arithmetic that may be computed again in an earlier state for a request sent
# ahead (pure, single-cycle, no shared unit)
_REMAT = (
    "arith.addi",
    "arith.subi",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "arith.shli",
    "arith.shrui",
    "arith.shrsi",
    "arith.extui",
    "arith.extsi",
    "arith.trunci",
    "arith.index_cast",
)


EARLY_WALK_LIMIT = 1_000_000
"""States :meth:`FsmBuilder.mark_early` walks at most (an ISAX's fixed cycles)."""


def static_address(v: SSAValue) -> bool:
    """Whether ``v`` is index arithmetic (:data:`_REMAT`) over ``rs1``, ``rs2`` and
    constants only: its value is the same in every cycle of a call."""
    if not isinstance(v, OpResult):
        return False
    o = v.owner
    if isinstance(o, arith.ConstantOp | aq.ReadRs1Op | aq.ReadRs2Op):
        return True
    return o.name in _REMAT and all(static_address(x) for x in o.operands)


def _width(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, IntegerType)
    return t.width.data


def spm_banks(op: Operation) -> set[int]:
    """Banks a scratchpad access may touch. A cyclic partition into a factor ``f`` reads
    the bank off the affine index ``c + sum(k_i * x_i)``: with ``g`` the gcd of ``f`` and
    the coefficients, only the banks ``c + g*j (mod f)`` are reachable (so ``a[4*i + 1]``
    in a cyclic-4 scratchpad touches bank 1 only, ``p[3*j + 2]`` in a cyclic-3 one bank
    2). The index is computed modulo ``2^bits``: a power-of-two ``f`` divides that
    modulus, so wrap-around keeps the residue; another ``f`` needs the index proven not
    to wrap (``_no_wrap_form``). Otherwise a constant index has one bank and a dynamic one
    all."""
    spm = spm_of(op)
    f = spm.factor_value
    if isinstance(op, aq.BurstReadOp | aq.BurstWriteOp):
        return set(range(f))
    idx = constant_value(op.index)  # type: ignore[attr-defined]
    if idx is None:
        if spm.partition.data != "cyclic":
            return set(range(f))
        form = affine_index(op.index)  # type: ignore[attr-defined]
        if f & (f - 1) == 0 and f <= 1 << form.bits:
            const, coeffs = form.const, [k for _, k in form.terms]
        else:
            exact = _no_wrap_form(op.index)  # type: ignore[attr-defined]
            if exact is None:
                return set(range(f))
            const, coeffs = exact
        g = f
        for k in coeffs:
            g = math.gcd(g, k)
        return {(const + g * j) % f for j in range(f // g)}
    if spm.partition.data == "cyclic":
        return {idx % f}
    if spm.partition.data == "block":
        return {idx // -(-spm.size // f)}
    return {0}


def _no_wrap_form(v: SSAValue) -> tuple[int, list[int]] | None:
    """``v`` as ``c + sum(k_i * t_i)`` over the trip counters ``t_i`` of loops with constant
    bounds, when that sum stays within ``[0, 2^width)`` for every trip (so the value
    computed modulo ``2^width`` is the sum itself, and its residue modulo any factor is
    the sum's); ``None`` when a term is not such a counter or the range may wrap."""
    const, terms = linear_form(v, AFFINE_DEPTH)
    lo = hi = const
    for t, k in terms.items():
        loop = induction_loop(t)
        trips = trip_count(loop) if loop is not None else None
        if trips is None or trips == 0:
            return None
        lo += min(0, k * (trips - 1))
        hi += max(0, k * (trips - 1))
    if lo < 0 or hi >= 1 << _width(v):
        return None
    return const, list(terms.values())


AFFINE_OPS = (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.ShLIOp)
"""Index arithmetic: what ``linear_form`` follows (by a constant, for multiplies and shifts)."""

AFFINE_DEPTH = 24
"""How far ``affine_index`` follows index arithmetic back (unrolled index expressions are
a few ops deep; deeper ones stay opaque terms)."""


def counter_bits(lb: int, ub: int, step: int, width: int) -> int:
    """Bits of a loop's counter register: its values ``lb, lb + step, ...`` and the
    incremented value compared with ``ub`` (at most ``ub + step - 1``) as signed numbers,
    so the loop's signed ``next < ub`` reads the same at that width. A loop ``0..16`` counts
    in 6 bits, not in its induction variable's 32: a 32-bit register, incrementer and
    compare for five bits of information, which Yosys cannot trim (it does not know the
    register's range). A negative bound keeps the full width."""
    if lb < 0 or ub < 0:
        return width
    top = max(lb, ub + step - 1)
    return min(width, top.bit_length() + 1)


def affine_index(v: SSAValue, depth: int = AFFINE_DEPTH) -> Affine:
    """``v`` as ``c + sum(k * term)`` modulo 2^width, through constants, ``addi``,
    ``subi``, and ``muli``/``shli`` by a constant. A loop's induction variable becomes
    ``lb + step * t`` over its trip counter ``t`` (so ``3*i`` in a loop stepping by 4 is a
    multiple of 12); any other value is a term of its own."""
    bits = _width(v)
    const, terms = linear_form(v, depth)
    return Affine.make(const, terms, bits)


@dataclass(frozen=True)
class BankRow:
    """Where an SRAM access's element lies, read off its index at compile time: always
    ``bank``, at row ``const + sum(k * iv)`` over the values of loop induction variables."""

    bank: int
    const: int
    terms: tuple[tuple[SSAValue, int], ...]


def bank_row(op: Operation) -> BankRow | None:
    """The bank and row of an access to a cyclic-``F`` SRAM scratchpad whose index is
    ``c + sum(a_i * iv_i)`` over loop induction variables with every ``a_i`` a multiple
    of ``F`` (``p[3 * j + 2]`` into a cyclic-3 one: bank 2, row ``j``), else None.

    The element is then ``F * (c // F + sum(a_i / F * iv_i)) + c % F``: its row is index
    arithmetic on the induction variables, without the element index and its division by
    ``F`` (a reciprocal multiply, ``sram.divmod_const``, in series with the index
    arithmetic in front of the bank's address). As in ``spm_banks``, a factor that is not
    a power of two needs the index proven not to wrap; a power of two divides the index's
    modulus, and the row is only ever taken modulo a power of two (its address bits)."""
    if not isinstance(op, aq.SpmReadOp | aq.SpmWriteOp) or constant_value(op.index) is not None:
        return None
    spm = spm_of(op)
    f = spm.factor_value
    if not is_sram(spm) or spm.partition.data != "cyclic" or f < 2:
        return None
    c, form = linear_form(op.index, AFFINE_DEPTH)
    terms: list[tuple[SSAValue, int]] = []
    for t, k in form.items():
        loop = induction_loop(t)
        lb, step = (
            (None, None) if loop is None else (constant_value(loop.lb), constant_value(loop.step))
        )
        if lb is None or step is None or k % (step * f) or _width(t) != 32:
            return None
        assert isinstance(t, SSAValue)
        a = k // step  # the induction variable's own coefficient: k = a * step
        c -= a * lb  # linear_form counts the loop's trips from lb
        terms.append((t, a // f))
    if f & (f - 1) and _no_wrap_form(op.index) is None:
        return None
    return BankRow(c % f, c // f, tuple(terms))


def index_only(op: Operation) -> bool:
    """Whether ``op`` is index arithmetic whose every use is the index of an SRAM access
    that takes its row from ``bank_row`` (or more such arithmetic): no hardware computes
    it, so it gets no state, no delay and no register."""
    if not isinstance(op, AFFINE_OPS) or not op.results[0].uses:
        return False
    for use in op.results[0].uses:
        user = use.operation
        if isinstance(user, aq.SpmReadOp | aq.SpmWriteOp):
            index_at = 0 if isinstance(user, aq.SpmReadOp) else 1  # the index operand
            if use.index != index_at or bank_row(user) is None:
                return False  # stored as a value, or an index the bank is divided off
        elif not index_only(user):
            return False
    return True


def op_error(op: Operation, msg: str, hint: str | None = None) -> AquasError:
    loc = loc_of(op)
    source = None
    if loc is not None:
        try:
            with open(loc.filename) as f:
                source = f.read()
        except OSError:
            source = None
    return AquasError(msg, loc, hint=hint, source=source)


class FsmBuilder:
    """Builds the states of all ISAXs of one extension (numbered globally).

    Control points: ``pending`` holds the transitions waiting for the next state's id;
    ``open`` is the state ending the current straight-line segment (its Goto is the only
    pending transition), to which loop initialisation and branch decisions are attached.
    Each segment is scheduled by ``scheduler`` (list scheduling unless another algorithm
    is given); ``schedules`` keeps every segment's problem and verified schedule, and
    ``cycle_of`` each op's cycle within its segment.
    """

    def __init__(
        self,
        clock_ns: float,
        delay: Callable[[Operation], float],
        first_id: int,
        overhead_ns: float = 0.0,
        scheduler: Scheduler = list_schedule,
        bus_width: int = 32,
        multicycle: Callable[[Operation], MultiCycleOp | None] | None = None,
        sharing: Sharing | None = None,
    ):
        if bus_width not in BUS_WIDTHS:
            raise AquasError(f"the ISAX bus width must be 32, 64 or 128 bits, got {bus_width}")
        self.bus_width = bus_width
        self.clock_ns = clock_ns
        # part of every cycle goes to register-input selection and state decoding
        self.budget_ns = clock_ns - overhead_ns
        self.overhead_ns = overhead_ns
        self.delay = delay
        self.states: list[State] = []
        self.next_id = first_id
        self.pending: list[Callable[[int], None]] = []
        self.open: State | None = None
        self.value_regs: dict[SSAValue, str] = {}
        self.def_state: dict[Operation, int] = {}
        self.reg_names: set[str] = set()
        self.reg_owner: dict[str, str] = {}  # register name -> the ISAX whose states use it
        # value registers narrower than their value (loop counters, ``counter_bits``): read
        # zero-extended, written truncated
        self.reg_bits: dict[str, int] = {}
        self.isax_name = ""
        self.aliases: dict[SSAValue, SSAValue] = {}
        self.scheduler = scheduler
        # every segment's problem and the schedule the scheduler gave it, in build order
        self.schedules: list[tuple[SchedulingProblem, Schedule]] = []
        self.cycle_of: dict[Operation, int] = {}
        # which ops run on a multi-cycle unit (None: none do), and the ones that do
        self.multicycle_of = multicycle
        self.multicycle: dict[Operation, MultiCycleOp] = {}
        self.issue_state: dict[Operation, int] = {}
        # a remainder (quotient) of the same operands as a quotient (remainder) before it
        # reads the other output of that division (its leader) instead of dividing again
        self.riders: dict[Operation, Operation] = {}
        # the state an op is issued in (its ``def_state`` differs for an SRAM read and a
        # multi-cycle op)
        self.state_of: dict[Operation, int] = {}
        # multiplies bound to shared units (synth/binding.py): their class, select delay
        # and per-ISAX limit; the binding itself is made after scheduling
        self.sharing = sharing
        self.binding: Binding | None = None
        # squarers and constant multiplies of different ISAXs on one operator, chosen
        # after scheduling
        self.isax_operators = IsaxOperators()
        # additions of the shared multipliers' products on shared adders, likewise
        self.adders = Binding()
        # what loop pipelining did before scheduling (synth/loop_pipeline.LoopReport)
        self.loop_reports: list[Any] = []
        self.balanced: set[str] = set()  # ISAXs whose sums were balanced (synth/balance.py)
        self.outstanding = 1  # requests in flight of the ISAX being built (OUTSTANDING_ATTR)
        # carried reads (``carried_read``) in the last state of the loop body just built,
        # for ``for_op`` to give a data state; and the body arguments they feed, by the
        # state whose references take the read port's data: (argument, state) -> read
        self.carry_pending: list[Operation] = []
        # multiplies of the body being built whose product the next iteration takes
        self.late_pending: list[Operation] = []
        self.bypass: dict[tuple[SSAValue, int], tuple[Operation, LoopInfo]] = {}
        # a loop whose carried results are used later: the next state created catches them
        self.catch_pending: LoopInfo | None = None
        self.carried_loops: list[LoopInfo] = []  # the loops with carried reads
        # scratchpads whose burst writes read the values' own registers instead
        # (:func:`forwarded_scratchpads`), set by ``allocate_registers``
        self.forwarded: dict[str, dict[int, SSAValue]] = {}
        self.extension: aq.ExtensionOp | None = None  # that of the ISAXs built

    # -- naming ------------------------------------------------------------------------

    def reg_name(self, hint: str | None, suffix: str = "q") -> str:
        base = (hint or "v").replace(".", "_").replace("-", "_")
        name = f"{self.isax_name}_{base}_{suffix}"
        n = 1
        while name in self.reg_names:
            n += 1
            name = f"{self.isax_name}_{base}{n}_{suffix}"
        self.reg_names.add(name)
        self.reg_owner[name] = self.isax_name
        return name

    # -- states ------------------------------------------------------------------------

    def state(self, sid: int) -> State:
        """The state numbered ``sid`` (ids are consecutive in creation order)."""
        return self.states[sid - self.states[0].id]

    def new_state(self) -> State:
        st = State(self.next_id, self.isax_name)
        self.next_id += 1
        self.states.append(st)
        for patch in self.pending:
            patch(st.id)
        self.pending = []
        self.open = None
        info, self.catch_pending = self.catch_pending, None
        if info is not None:
            # the loop exits into this state: its carried results are the ports' data here
            info.catch = st.id
            for k, op in info.carried.items():
                self.bypass[(info.op.results[k], st.id)] = (op, info)
        return st

    @staticmethod
    def goto_patcher(st: State) -> Callable[[int], None]:
        def patch(target: int) -> None:
            if isinstance(st.next, Goto) and st.next.target == -1:
                st.next.target = target

        return patch

    def anchor(self, reads: Sequence[SSAValue] = ()) -> tuple[State, bool]:
        """The state ending the current control point (created empty if there is none);
        afterwards its Goto is the only pending transition. Returns (state, created).

        ``reads``: the values the caller will write to registers (or branch on) there. A
        wait state whose load produces one of them is not reused: its register writes
        repeat in each of its cycles, the last one included, when the load's value is
        still on its way into its own register, so they would take the old value."""
        st = self.open
        if st is not None and isinstance(st.wait, aq.LoadOp):
            loaded = st.wait.results[0]
            if any(self.resolve(v) is loaded for v in reads):
                st = None
        if st is not None:
            return st, False
        st = self.new_state()
        self.pending = [self.goto_patcher(st)]
        self.open = st
        return st, True

    def build_isax(self, isax: aq.IsaxOp) -> IsaxFsm:
        self.isax_name = isax.sym_name.data
        ext = isax.parent_op()
        self.extension = ext if isinstance(ext, aq.ExtensionOp) else None
        k = isax.attributes.get(OUTSTANDING_ATTR)
        self.outstanding = int(k.value.data) if isinstance(k, IntegerAttr) else 1
        entry: list[int] = []
        self.pending = [entry.append]
        self.open = None
        self.catch_pending = None
        first = len(self.states)
        lat = self.block(isax.body.block)
        ahead = frozenset(st.wait for st in self.states[first:] if st.ahead and st.wait is not None)
        resident = frozenset(resident_states(self.states[first:], self.bus_width).values())
        return IsaxFsm(isax, entry[0] if entry else -1, lat, ahead, resident)

    def finish(self, target: int) -> None:
        """Resolves all pending transitions to ``target`` (the response state)."""
        for patch in self.pending:
            patch(target)
        self.pending = []
        self.open = None

    # -- blocks ------------------------------------------------------------------------

    def block(self, block: Block, loop_body: bool = False) -> Latency:
        lat = Latency()
        segment: list[Operation] = []
        whole = loop_body
        for op in block.ops:
            if isinstance(op, scf.YieldOp):
                break
            if isinstance(op, scf.ForOp | scf.IfOp):
                lat += self.segment(segment)
                segment, whole = [], False
                lat += self.for_op(op) if isinstance(op, scf.ForOp) else self.if_op(op)
            else:
                segment.append(op)
        return lat + self.segment(segment, carry=loop_body, whole=whole)

    def segment(self, ops: list[Operation], carry: bool = False, whole: bool = False) -> Latency:
        """States for straight-line ``ops``. With ``carry`` (the last segment of a loop
        body), a carried read may sit in the last state: its data cycle is left to
        ``for_op``. With ``whole`` (the segment is the loop body), a multiply on a
        pipelined unit may also be in flight across the latch (``in_flight``)."""
        work = [o for o in ops if not isinstance(o, FREE_OPS) and not index_only(o)]
        if not work:
            return Latency()
        cycles = self.schedule(work)
        problem, sched = self.schedules[-1]
        lat = Latency()
        if self.catch_pending is not None and any(
            isinstance(o, MEM_OPS) and cycles[o] == 0 for o in work
        ):
            # a wait state's register writes repeat in each of its cycles, and its
            # transfer may use the banks: the carried results get a state of their own
            catch = self.new_state()
            self.pending = [self.goto_patcher(catch)]
            lat += Latency.steps(1)
        carried = {o for o in work if carry and carried_read(o)}
        late = self.in_flight(work, cycles, problem, sched, carried) if whole else {}
        n = self.span(work, cycles, problem, sched, carried, late)
        states = [self.new_state() for _ in range(n)]
        for a, b in itertools.pairwise(states):
            a.next = Goto(b.id)
        self.late_pending.extend(late)
        for op in work:
            st = states[cycles[op]]
            self.state_of[op] = st.id
            self.cycle_of[op] = cycles[op]
            if op in self.multicycle:
                # the result is home in the state that reads it from the unit (in flight:
                # that state of the next iteration)
                done = states[late[op] if op in late else cycles[op] + self.multicycle[op].latency]
                if op not in self.riders:
                    st.issues.append(op)
                    st.units[op] = self.multicycle[op]
                done.completes.append(op)
                done.units[op] = self.multicycle[op]
                self.issue_state[op] = st.id
                self.def_state[op] = done.id
                continue
            # the state whose wires hold the op's results (an SRAM read's: the next one)
            if sram_read(op) and cycles[op] + 1 == n:
                self.carry_pending.append(op)  # a carried read in the last state
            else:
                self.def_state[op] = states[cycles[op] + 1].id if sram_read(op) else st.id
            if isinstance(op, MEM_OPS):
                st.wait = op
            else:
                st.ops.append(op)
        tail = states[-1]
        self.pending = [self.goto_patcher(tail)]
        self.open = tail
        if self.outstanding > 1:
            self.mark_runs(states)
        for st in states:
            if st.wait is None:
                lat += Latency.steps(1)
            elif st.ahead:
                lat += ahead_cycles(st.wait, self.bus_width)
            else:
                lat += wait_cycles(st.wait, self.bus_width)
        return lat

    @staticmethod
    def span(
        work: list[Operation],
        cycles: dict[Operation, int],
        problem: SchedulingProblem,
        sched: Schedule,
        carried: set[Operation],
        late: Collection[Operation],
    ) -> int:
        """The segment's states: through each op's cycle and each multi-cycle op's result
        cycle but those in flight across the latch (``late``), and the data cycle of each
        SRAM read but the carried ones."""
        return max(
            [
                *(
                    c + (0 if o in late else problem.latency.get(o, 0)) + 1
                    for o, c in sched.cycle.items()
                ),
                *(cycles[o] + 2 for o in work if sram_read(o) and o not in carried),
            ]
        )

    def in_flight(
        self,
        work: list[Operation],
        cycles: dict[Operation, int],
        problem: SchedulingProblem,
        sched: Schedule,
        carried: set[Operation],
    ) -> dict[Operation, int]:
        """The multiplies of a loop body (``work``, the whole body) whose products are
        taken in flight by the next iteration -> the state of the body (its index) in
        which the next iteration reads the product from the unit.

        A multiply on a pipelined unit (a registered or split shared multiplier,
        ``binding.Sharing``) whose only use is the loop's ``scf.yield`` (a pipelined
        kernel's product going to a later stage) need not finish within the body: issued
        in cycle ``c`` of an ``n``-state body, its product is in the unit's result register
        in cycle ``j = c + latency - n`` of the next iteration, where the iteration
        register takes it (from the second iteration on, like a carried SRAM read's data,
        ``LoopInfo.carried``). So the body keeps ``n`` states instead of waiting. Only when
        the body has no wait state (a state is a cycle), ``0 <= j < n``, every user of the
        iteration value in the body is in state ``j`` or later (the modulo schedule places
        them there: ``loop_pipeline.split_unit_op``), and the loop's result for it is unused
        after the loop (a predicated kernel's: the last products are of invalid
        iterations)."""
        if any(isinstance(o, MEM_OPS) for o in work):
            return {}
        inside = set(work)
        cand: dict[Operation, tuple[scf.ForOp, int]] = {}  # op -> its loop, yield index
        for o in work:
            spec = self.multicycle.get(o)
            if spec is None or not spec.pipelined or o in self.riders or len(o.results) != 1:
                continue
            uses = list(o.results[0].uses)
            if len(uses) != 1 or not isinstance(uses[0].operation, scf.YieldOp):
                continue
            loop = uses[0].operation.parent_op()
            if not isinstance(loop, scf.ForOp):
                continue
            k = uses[0].index
            arg = loop.body.block.args[k + 1]
            if not loop.results[k].uses and all(
                u.operation in inside or isinstance(u.operation, scf.YieldOp) for u in arg.uses
            ):
                cand[o] = (loop, k)
        while True:
            n = self.span(work, cycles, problem, sched, carried, cand.keys())
            late: dict[Operation, int] = {}
            for o, (loop, k) in cand.items():
                j = cycles[o] + self.multicycle[o].latency - n
                if not 0 <= j < n:
                    continue
                arg = loop.body.block.args[k + 1]
                if any(u.operation in inside and cycles[u.operation] < j for u in arg.uses):
                    continue
                late[o] = j
            if len(late) == len(cand):
                return late
            cand = {o: cand[o] for o in late}

    # -- requests in flight --------------------------------------------------------------

    def mark_runs(self, states: list[State]) -> None:
        """Groups consecutive wait states of a segment into runs whose requests the
        memory engine sends ahead, in order, each as soon as the one before it was
        accepted (synth/memengine.py), with at most ``outstanding`` in flight: a run has at
        most that many states, so every request of a run is sent while the first one's
        latency runs and each later one starts its data right after the one before.

        A state joins the run of the state before it when it is a plain wait state
        (its elements fit a beat; not a burst write from SRAM, whose first beat is read
        in its request cycle) and its request (address) can be formed in every earlier
        state of the run (:meth:`formable`)."""
        run: list[State] = []
        for st in states:
            op = st.wait
            plain = op is not None and elem_bytes(op) <= self.bus_width // 8
            if (
                plain
                and run
                and len(run) < self.outstanding
                and run[-1].id == st.id - 1
                and not (isinstance(op, aq.BurstWriteOp) and is_sram(spm_of(op)))
                and all(self.formable(op.addr, s, st) for s in run)  # type: ignore[union-attr]
            ):
                run.append(st)
                continue
            self._close_run(run)
            run = [st] if plain else []
        self._close_run(run)

    @staticmethod
    def _close_run(run: list[State]) -> None:
        if len(run) < 2:
            return
        for pos, st in enumerate(run):
            st.run, st.run_pos = run, pos

    def formable(self, v: SSAValue, at: State, owner_st: State) -> bool:
        """Whether ``v`` (needed in state ``owner_st``) has its final value in every cycle
        of the earlier state ``at`` of the same segment: a constant or operand register,
        a register written before ``at`` (registers are written only in their value's
        home state, and SSA values dominate their uses), a wire of ``at`` itself, or pure
        index arithmetic of states up to ``owner_st`` over such values, which the
        generator computes again in ``at`` (``UnitGenerator.ref_at``)."""
        v = self.resolve(v)
        if not isinstance(v, OpResult):
            return v in self.value_regs  # loop counters and carried values: registers
        o = v.owner
        if isinstance(o, FREE_OPS):
            return True
        home = self.def_state.get(o)
        if home is None:
            return False
        if home < at.id:
            return True  # read after its home state: the generator gives it a register
        if home == at.id:
            return not isinstance(o, MEM_OPS) and o not in self.multicycle
        if home <= owner_st.id and o.name in _REMAT and o not in self.multicycle:
            return all(self.formable(x, at, owner_st) for x in o.operands)
        return False

    # -- requests sent ahead across compute (aquas.early) --------------------------------

    def mark_early(self, fsm: IsaxFsm, resp: int) -> None:
        """Lets the wait states of an ISAX annotated ``aquas.early`` send their request
        during the compute states before them (after :meth:`finish`; ``resp``: the
        response state).

        The FSM is walked from its entry as it runs, loops by their trip counts, up to
        the response or the first data-dependent branch. The *window* of a wait state is
        the set of states the walk visits since the wait state before it (or the entry);
        the FSM spends one cycle in each visit, so the window's cycles are fixed. A wait
        state gets its window when it runs once per call, its window is not empty, it is
        not in a run nor resident nor split into two-beat elements, and its address is
        index arithmetic over ``rs1``, ``rs2`` and constants (:func:`static_address`), so
        that it holds in every state of the window. The memory engine then sends the
        request in the window's states; the wait state starts with its data phase, and
        the memory's latency has run for up to the window's cycles
        (``synth/memengine.py``)."""
        if EARLY_ATTR not in fsm.isax.attributes or fsm.entry < 0:
            return
        seen: set[int] = set()
        repeated: set[int] = set()
        found: dict[int, tuple[int, ...]] = {}  # wait state -> its window's visits in order
        window: list[int] = []
        streaming = False
        trips: dict[int, int] = {}
        sid, steps = fsm.entry, 0
        while sid != resp and steps < EARLY_WALK_LIMIT:
            steps += 1
            st = self.state(sid)
            if st.wait is not None:
                if sid in seen:
                    repeated.add(sid)
                elif window and not streaming and self._early_ok(st, fsm):
                    found[sid] = tuple(window)
                seen.add(sid)
                window = []
                # the window after a streamed burst moves its beats: no request goes
                # ahead there
                streaming = st.stream is not None
            else:
                window.append(sid)
            nxt = self.walk_step(st, trips)
            if nxt is None:
                break  # a data-dependent branch: the cycles after it are not fixed
            sid = nxt
        if steps >= EARLY_WALK_LIMIT:
            return
        # a wait state inside a loop runs more than once even if the walk stopped (at a
        # branch) before it came round again: a loop's states are the ids from its body's
        # first state to its latch (states are made in program order)
        loops = [
            range(s.next.body, s.id + 1)
            for s in self.states
            if s.isax == fsm.isax.sym_name.data and isinstance(s.next, LoopLatch)
        ]
        # a loop holding a memory access runs its states before that access in every
        # iteration: a request sent from them would be out while that access needs the port
        busy = [r for r in loops if any(self.state(i).wait is not None for i in r)]
        for wid, visits in found.items():
            if wid in repeated or any(wid in r for r in loops):
                continue
            # only the visits after the last one inside such a loop (found by the spec
            # generator: a store after a loop of stores hung the unit)
            last = max((k for k, s in enumerate(visits) if any(s in r for r in busy)), default=-1)
            visits = visits[last + 1 :]
            if not visits:
                continue
            states, c = tuple(dict.fromkeys(visits)), len(visits)
            st = self.state(wid)
            assert st.wait is not None
            st.early = states
            fsm.early[st.wait] = c
            # the wait state now takes between its first cycle and beats (the latency ran
            # under the window) and the full latency (the port took the request late)
            fsm.latency = (
                fsm.latency
                - wait_cycles(st.wait, self.bus_width)
                + early_cycles(st.wait, self.bus_width)
            )

    @staticmethod
    def walk_step(st: State, trips: dict[int, int]) -> int | None:
        """The state the FSM runs after ``st``, walked as it runs: a loop latch goes back
        to the body until its trip count (``trips``: iterations done per latch, kept by
        the walk) and then exits; None at a data-dependent branch."""
        t = st.next
        if isinstance(t, Goto):
            return t.target
        if isinstance(t, LoopLatch):
            info = t.loop
            k = trips.get(st.id, 0) + 1
            trip = max(1, (info.ub - info.lb + info.step - 1) // info.step)
            trips[st.id] = 0 if k >= trip else k
            return t.body if k < trip else t.exit
        return None

    def _early_ok(self, st: State, fsm: IsaxFsm) -> bool:
        op = st.wait
        return (
            op is not None
            and st.run is None
            and st.stream is None
            and op not in fsm.resident
            and elem_bytes(op) <= self.bus_width // 8
            and static_address(op.addr)  # type: ignore[attr-defined]
        )

    # -- burst data streamed into the compute after it (aquas.stream) --------------------

    def mark_stream(self, fsm: IsaxFsm, resp: int) -> None:
        """Lets the burst reads of an ISAX annotated ``aquas.stream`` overlap their data
        with the compute after them (after :meth:`finish`, before :meth:`mark_early`).

        A burst read qualifies when its wait state runs once per call (not in a loop),
        is not in a run (a streamed one is never early), its elements fit a beat, and its
        address
        and scratchpad offset hold in every cycle of the call (:func:`static_address`, a
        constant offset). Its *window* is walked from the state after it, loops by their
        trip counts, up to the next wait state, the response or a data-dependent branch
        (included): the window must not write the scratchpad, and every index it reads
        the scratchpad at must be a constant plus constant multiples of the induction
        variables of loops whose iterations the walk counts, so the element each cycle
        needs is known (:class:`StreamWindow`). The wait state then ends with its
        request; the memory engine moves the beats while the window runs, each window
        state waits until the elements it reads have arrived, and the state that leaves
        the window waits for the last beat (``synth/rtlgen.py``)."""
        if STREAM_ATTR not in fsm.isax.attributes or fsm.entry < 0:
            return
        name = fsm.isax.sym_name.data
        mine = [s for s in self.states if s.isax == name]
        loops = [range(s.next.body, s.id + 1) for s in mine if isinstance(s.next, LoopLatch)]
        # induction variable -> the latch state of its loop
        ivs: dict[SSAValue, int] = {
            s.next.loop.op.body.block.args[0]: s.id for s in mine if isinstance(s.next, LoopLatch)
        }
        for st in mine:
            op = st.wait
            if (
                not isinstance(op, aq.BurstReadOp)
                or st.run is not None
                or elem_bytes(op) > self.bus_width // 8
                or not static_address(op.addr)
                or constant_value(op.offset) is None
                or any(st.id in r for r in loops)
                or not isinstance(st.next, Goto)
            ):
                continue
            win = self._stream_window(st, op, resp, ivs)
            if win is None:
                continue
            st.stream = win
            fsm.stream[op] = win  # IsaxFsm.reported: the window may run under the beats

    def _stream_window(
        self,
        st: State,
        op: aq.BurstReadOp,
        resp: int,
        ivs: dict[SSAValue, int],
    ) -> StreamWindow | None:
        spm = spm_of(op)
        first = constant_value(op.offset)
        assert first is not None
        n, sram = op.length_value, is_sram(spm)
        visits: list[tuple[int, frozenset[int]]] = []
        states: set[int] = set()
        trips: dict[int, int] = {}
        assert isinstance(st.next, Goto)
        sid = st.next.target
        while sid != resp and len(visits) < EARLY_WALK_LIMIT:
            s = self.state(sid)
            if s.wait is not None or s.isax != st.isax:
                break
            need, banks = -1, frozenset[int]()
            for o in s.ops:
                if not isinstance(o, aq.SpmReadOp | aq.SpmWriteOp) or spm_of(o) is not spm:
                    continue
                if isinstance(o, aq.SpmWriteOp):
                    return None  # a write the beats could overwrite
                e = self._iv_value(o.index, ivs, trips)
                if e is None:
                    return None  # the element it needs is not known before it runs
                if 0 <= e - first < n:
                    need = max(need, e - first)
                if sram:  # the state's first access of a bank takes its port 0
                    banks |= spm_banks(o)
            visits.append((need, banks))
            states.add(sid)
            nxt = self.walk_step(s, trips)
            if nxt is None:
                break  # a data-dependent branch: the window ends with it
            sid = nxt
        if not visits or len(visits) >= EARLY_WALK_LIMIT:
            return None
        f = spm.factor_value
        cyclic = f if spm.partition.data == "cyclic" and elem_bytes(op) * 8 == self.bus_width else 0
        # the element in the last beat at any alignment: the burst's last
        drained = any(need == n - 1 for need, _ in visits)
        return StreamWindow(
            frozenset(states), tuple(visits), cyclic, first % f if cyclic else 0, drained
        )

    def _iv_value(self, v: SSAValue, ivs: dict[SSAValue, int], trips: dict[int, int]) -> int | None:
        """``v`` in the current iteration of the walk (``trips``: iterations done per loop
        latch state), when it is a constant plus constant multiples of induction
        variables (linear in their loops' iteration counts); else None."""
        c, terms = linear_form(self.resolve(v), 32)
        for term, k in terms.items():
            if term not in ivs:
                return None
            # an induction variable's term counts its loop's iterations (linear_form)
            c += k * trips.get(ivs[term], 0)
        return c

    # -- control flow ------------------------------------------------------------------

    def for_op(self, op: scf.ForOp) -> Latency:
        lb, ub, step = constant_value(op.lb), constant_value(op.ub), constant_value(op.step)
        if lb is None or ub is None or step is None or step <= 0:
            raise op_error(op, "loops must have constant bounds and a positive step for synthesis")
        trip = max(0, (ub - lb + step - 1) // step)
        if trip == 0:
            for res0, init0 in zip(op.results, op.iter_args, strict=True):
                self.aliases[res0] = init0
            return Latency()
        body = op.body.block
        iv = body.args[0]
        info = LoopInfo(
            op,
            self.reg_name(iv.name_hint or "iv"),
            [self.reg_name((a.name_hint or "acc") + "_iter") for a in body.args[1:]],
            lb,
            ub,
            step,
            counter_bits(lb, ub, step, _width(iv)),
        )
        self.value_regs[iv] = info.iv_reg
        if info.bits < _width(iv):
            self.reg_bits[info.iv_reg] = info.bits
        for arg, reg in zip(body.args[1:], info.iter_regs, strict=True):
            self.value_regs[arg] = reg
        for res, reg in zip(op.results, info.iter_regs, strict=True):
            self.value_regs[res] = reg
        init, created = self.anchor(op.iter_args)
        init.writes.append((info.iv_reg, op.lb))
        for reg, init_val in zip(info.iter_regs, op.iter_args, strict=True):
            init.writes.append((reg, init_val))
        lat = Latency.steps(1) if created else Latency()
        self.open = None  # the body starts in a state of its own
        outer_pending, self.carry_pending = self.carry_pending, []
        outer_late, self.late_pending = self.late_pending, []
        body_lat = self.block(body, loop_body=True)
        reads, self.carry_pending = self.carry_pending, outer_pending
        late, self.late_pending = self.late_pending, outer_late
        assert isinstance(init.next, Goto) and init.next.target != -1
        first = init.next.target
        if reads and self.state(first).wait is not None:
            # the body's first state waits for a transfer, which may use the banks: the
            # reads' data get a latch state of their own instead of the ports carrying them
            self.open = None
        if self.open is not None and self.open.wait is not None:
            # A wait state lasts until memory answers, and the register writes of a state
            # are enabled in each of its cycles: the latch (iv += step, the iteration
            # values) gets a state of its own, or it would step once per waiting cycle.
            self.open = None
        last, created = self.anchor()
        if created:
            body_lat += Latency.steps(1)
        assert not (late and created), "a product in flight needs the body's last state as latch"
        for o in reads:
            # the read's data cycle: the latch state of its own, or (carried in the read
            # port) the next iteration's first state and the state the loop exits into
            self.def_state[o] = last.id if created else first
        yield_op = body.last_op
        assert isinstance(yield_op, scf.YieldOp)
        for k, (reg, yv) in enumerate(zip(info.iter_regs, yield_op.arguments, strict=True)):
            yv = self.resolve(yv)
            if not created and isinstance(yv, OpResult) and (yv.owner in reads or yv.owner in late):
                # taken where the read's data or the product arrives: the next iteration's
                # first state (a read), its state j (a product in flight, ``in_flight``)
                info.carried[k] = yv.owner
                self.bypass[(body.args[k + 1], self.def_state[yv.owner])] = (yv.owner, info)
            else:
                last.writes.append((reg, yv))
        latch = LoopLatch(info, first)
        last.next = latch
        last.latches.append(info)

        def patch_exit(target: int) -> None:
            if latch.exit == -1:
                latch.exit = target

        self.pending = [patch_exit]
        self.open = None
        lat += body_lat.times(trip)
        if info.carried:
            info.run_reg = self.reg_name(iv.name_hint or "iv", "run_q")
            info.init, info.first, info.last = init.id, first, last.id
            self.carried_loops.append(info)
            if any(op.results[k].uses for k in info.carried):
                # the loop's results of carried values: registered from the read ports in
                # the state the loop exits into (``new_state``)
                self.catch_pending = info
        return lat

    def if_op(self, op: scf.IfOp) -> Latency:
        res_regs = [self.reg_name((r.name_hint or "sel") + "_if") for r in op.results]
        for r, name in zip(op.results, res_regs, strict=True):
            self.value_regs[r] = name
        decide, created = self.anchor([op.cond])
        lat = Latency.steps(1) if created else Latency()
        br = Branch(op.cond)
        decide.next = br
        self.pending = []
        self.open = None
        ends: list[Callable[[int], None]] = []
        branch_lats: list[Latency] = []
        for region, field_name in ((op.true_region, "if_true"), (op.false_region, "if_false")):

            def set_target(t: int, br: Branch = br, field_name: str = field_name) -> None:
                if getattr(br, field_name) == -1:
                    setattr(br, field_name, t)

            only_yield = not region.blocks or isinstance(region.block.first_op, scf.YieldOp)
            if only_yield and not op.results:
                ends.append(set_target)  # empty branch: straight to the join
                branch_lats.append(Latency())
                continue
            self.pending = [set_target]
            self.open = None
            b_lat = self.block(region.block)
            y = region.block.last_op
            assert isinstance(y, scf.YieldOp)
            last, created = self.anchor(y.arguments)
            if created:
                b_lat += Latency.steps(1)
            for name, v in zip(res_regs, y.arguments, strict=True):
                last.writes.append((name, v))
            ends.extend(self.pending)
            branch_lats.append(b_lat)
        self.pending = ends
        self.open = None
        return lat + branch_lats[0].either(branch_lats[1])

    # -- registers ---------------------------------------------------------------------

    def allocate_registers(self) -> None:
        """Gives a register to every op result read in a state other than its own (and to
        every load result, which is captured from the bus). A width extension read in
        another state is wiring there (``rtlgen.UnitGenerator.ref``): its operand is
        held instead, at its narrower width. The burst writes of a forwarded scratchpad
        (:func:`forwarded_scratchpads`, of the extension these states were built from)
        read the values staged in it."""
        ext = self.extension
        self.forwarded = forwarded_scratchpads(ext) if ext is not None else {}
        for st in self.states:
            self.isax_name = st.isax
            for v in self.reads_of(st):
                self.hold(v, st)
        for op, sid in self.def_state.items():
            if isinstance(op, aq.LoadOp) and op.result not in self.value_regs:
                self.isax_name = self.state(sid).isax
                self.value_regs[op.result] = self.reg_name(op.result.name_hint or "ld")

    def hold(self, v: SSAValue, st: State) -> None:
        """Gives ``v`` a register if state ``st`` reads it after its home state, or, for
        an extension (``WIDENING_OPS``), its operand: the LLM unit's value registers, many
        of them sign-extended bytes and halves, take 1,849 bits instead of 2,471."""
        v = self.resolve(v)
        if not isinstance(v, OpResult) or isinstance(v.owner, FREE_OPS):
            return
        if v in self.value_regs:
            return
        home = self.def_state.get(v.owner)
        if home is None:
            return
        if home == st.id and not isinstance(v.owner, aq.LoadOp):
            return
        if isinstance(v.owner, WIDENING_OPS):
            self.hold(v.owner.operands[0], st)
        else:
            self.value_regs[v] = self.reg_name(v.name_hint)

    def choose_isax_operators(self, lib: OperatorLibrary) -> IsaxOperators:
        """Which own-operator squarers and multiplies by a constant of different ISAXs
        share one operator (``binding.isax_operators``), after scheduling; kept in
        ``isax_operators``."""
        bound = self.binding.unit_of if self.binding is not None else {}
        self.isax_operators = isax_operators(
            self.states, self.schedules, bound, self.multicycle, lib
        )
        return self.isax_operators

    def choose_accumulator_adders(self, lib: OperatorLibrary) -> Binding:
        """Which additions of a shared multiplier's products share an adder
        (``binding.accumulator_adders``), after scheduling; kept in ``adders``."""
        self.adders = accumulator_adders(
            self.states,
            self.binding or Binding(),
            self.def_state,
            self.resolve,
            self.schedules,
            lib,
            self.bypass,
        )
        return self.adders

    def pooled_registers(
        self,
        use: RegisterUse | None = None,
        scratchpad_regs: dict[str, tuple[str, int]] | None = None,
    ) -> dict[str, str]:
        """Register name -> the flip-flop row it shares with other value registers.

        One ISAX runs at a time, and a value register is written in its ISAX's call before
        it is read (a value is defined before its uses; loop and branch registers are set
        by the states entering them), so no value outlives its call: registers of
        different ISAXs never hold needed values at once. With ``use`` (where the generated
        unit reads and writes each register, ``rtlgen.UnitGenerator``), registers of one
        ISAX also share a row when their values are never needed at once
        (``register_conflicts``). Rows are filled greedily, registers in the order their
        ISAX first touches them, each in the first row of its width it does not conflict
        with. A row of several registers is named ``pool_w<w>_<k>_q``; its write select
        gains their writes (one AND-OR input each, which separate registers had as
        well). Registers outside ``value_regs`` (a loop's ``run`` flag, state registers,
        scratchpads, which hold values across calls, or are few) are not pooled.

        ``scratchpad_regs`` (register name -> (its ISAX, width),
        :func:`call_local_registers`): element registers of scratchpads that a call fills
        before reading, which pool with registers of *other* ISAXs only (their liveness
        within the call is not analysed): vgemv4's burst buffers share flip-flops with
        the other ISAXs' values and buffers."""
        widths: dict[str, int] = {}
        for v, name in self.value_regs.items():
            widths.setdefault(name, self.reg_bits.get(name, _width(v)))
        conflicts = None
        if use is not None:
            conflicts = register_conflicts(self.states, widths, self.reg_owner, use)
        owner_of = dict(self.reg_owner)
        spm_regs = scratchpad_regs or {}
        for name, (isax, w) in spm_regs.items():
            widths[name], owner_of[name] = w, isax

        def first_touch(name: str) -> int:
            if use is None:
                return 0
            seen = use.reads.get(name, set()) | use.kills.get(name, set())
            return min(seen | use.partial.get(name, set()), default=0)

        rows: dict[int, list[list[str]]] = {}
        for name in sorted(widths, key=lambda n: (owner_of[n], first_touch(n), n)):
            owner = owner_of[name]
            clash = conflicts.get(name, set()) if conflicts is not None else None
            if name in spm_regs:
                clash = None
            for row in rows.setdefault(widths[name], []):
                if all(
                    owner_of[m] != owner
                    or (clash is not None and m not in spm_regs and m not in clash)
                    for m in row
                ):
                    row.append(name)
                    break
            else:
                rows[widths[name]].append([name])
        alias: dict[str, str] = {}
        for w, ws in sorted(rows.items()):
            for k, row in enumerate(ws):
                if len(row) < 2:
                    continue
                pooled = f"pool_w{w}_{k}_q"
                while pooled in self.reg_names:
                    pooled = "x" + pooled
                for name in row:
                    alias[name] = pooled
        return alias

    def resolve(self, v: SSAValue) -> SSAValue:
        while v in self.aliases:
            v = self.aliases[v]
        return v

    def reads_of(self, st: State) -> list[SSAValue]:
        vals: list[SSAValue] = []
        for op in st.ops:
            vals.extend(op.operands)
        for op in st.issues:
            vals.extend(op.operands)
        if st.wait is not None:
            vals.extend(st.wait.operands)
            if isinstance(st.wait, aq.BurstWriteOp):
                staged = self.forwarded.get(spm_of(st.wait).sym_name.data, {})
                vals.extend(staged[k] for k in sorted(staged))
        vals.extend(v for _, v in st.writes)
        if isinstance(st.next, Branch):
            vals.append(st.next.cond)
        return vals

    # -- scheduling --------------------------------------------------------------------

    def schedule(self, ops: list[Operation]) -> dict[Operation, int]:
        """Op → cycle within the segment, by ``self.scheduler``; the schedule is verified
        against the problem (a violation is a scheduler bug and raises ScheduleError)."""
        riders: dict[Operation, Operation] = {}
        if self.multicycle_of is not None:
            for op in ops:
                spec = self.multicycle_of(op)
                if spec is not None:
                    self.multicycle[op] = spec
            riders = pair_divisions([o for o in ops if o in self.multicycle])
        sharing = self.sharing
        if sharing is not None and sharing.registered:
            for op in ops:  # on a registered shared unit (synth/binding.py)
                spec = sharing.registered_op(op)
                if spec is not None:
                    self.multicycle[op] = spec
        delay = self.delay
        shared = None
        if sharing is not None:
            isax = self.isax_name

            def delay(op: Operation) -> float:
                return self.delay(op) + sharing.extra_ns(op)

            def shared(op: Operation) -> tuple[str, int] | None:
                return sharing.resource(isax, op)

        problem = segment_problem(
            [o for o in ops if o not in riders],
            delay,
            self.clock_ns,
            self.budget_ns,
            self.multicycle,
            riders,
            shared,
        )
        try:
            problem.check()
        except InfeasibleError as e:
            raise op_error(
                e.op,
                f"{e.op.name} needs {e.delay_ns:.2f} ns, more than the {self.budget_ns:.2f} ns "
                f"a {self.clock_ns:g} ns clock period leaves for datapath logic "
                f"({self.overhead_ns:.2f} ns go to register and state selection), even in "
                "a cycle of its own",
                hint="raise --clock-ns, or narrow the operands",
            ) from None
        sched = self.scheduler(problem)
        problem.assert_valid(sched)
        self.schedules.append((problem, sched))
        self.riders.update(riders)
        # a rider is the other output of its leader's division: same issue, same result state
        return sched.cycle | {r: sched.cycle[lead] for r, lead in riders.items()}


MEMORY_PORT = "memory interface"


def pair_divisions(ops: list[Operation]) -> dict[Operation, Operation]:
    """Rider → leader: the divider computes quotient and remainder together, so a
    ``%`` of the same operands and signedness as an earlier ``/`` (or the reverse) needs
    no division of its own."""
    from aquas.synth.multicycle import DIV_OPS

    first: dict[tuple[SSAValue, SSAValue, bool, str], Operation] = {}
    riders: dict[Operation, Operation] = {}
    for op in ops:
        if op.name not in DIV_OPS:
            continue
        signed, which = DIV_OPS[op.name]
        a, b = op.operands[0], op.operands[1]
        other = "rem" if which == "quo" else "quo"
        lead = first.get((a, b, signed, other))
        if lead is not None and lead not in riders.values():
            riders[op] = lead
            continue
        first.setdefault((a, b, signed, which), op)
    return riders


def segment_problem(
    ops: list[Operation],
    delay: Callable[[Operation], float],
    clock_ns: float,
    budget_ns: float,
    multicycle: dict[Operation, MultiCycleOp] | None = None,
    riders: dict[Operation, Operation] | None = None,
    shared: Callable[[Operation], tuple[str, int] | None] | None = None,
) -> SchedulingProblem:
    """The scheduling problem of one straight-line segment (ops in program order):

    * data dependences between the segment's ops; a memory op's results are registered
      from the bus, so its consumers go to a later cycle;
    * accesses to scratchpads and state registers (``storage_access``), ordered only where
      they may touch the same element and one writes;
    * ordering of memory-interface ops against every other effect (``_order``);
    * resources: one port per scratchpad bank (an SRAM bank: its 1 or 2 ports), one write
      port per state register, one memory-interface op per cycle (each gets a wait state
      of its own);
    * an SRAM read's consumers in a later cycle (registered read port), and memory-interface
      ops two cycles after it (its data cycle is not a wait state);
    * multi-cycle ops (``multicycle``): the issue logic as their delay, their shared unit
      (one per kind and width) held from the issue state through the state reading the
      result, and their consumers ``latency`` cycles later; the consumers of a ``rider``
      (the other output of a leader's division, not itself in ``ops``) depend on the
      leader;
    * shared units (``shared``, ``synth/binding.py``): an op bound to a class of shared
      operators uses the class's resource, limited to the ISAX's number of units; on a
      registered unit (a pipelined multi-cycle op) in its issue cycle only.
    """
    problem = SchedulingProblem(clock_ns, budget_ns)
    mc = multicycle or {}
    for op in ops:
        if op in mc:
            spec = mc[op]
            # a pipelined unit is one of its class's shared units (synth/binding.py)
            unit = shared(op) if spec.pipelined and shared is not None else None
            resource, limit = unit if unit is not None else (spec.resource, 1)
            problem.add_operation(op, spec.issue_ns, [resource], spec.occupancy, spec.latency)
            problem.limits[resource] = limit
            continue
        keys = _port_keys(op)
        uses = [f"@{sp} bank {bank}" for sp, bank in keys]
        ports = spm_of(op).ports_value if keys and is_sram(spm_of(op)) else 1
        if isinstance(op, aq.StateWriteOp):
            uses.append(f"@{op.state.root_reference.data} write port")
        if isinstance(op, MEM_OPS):
            uses.append(MEMORY_PORT)
        unit = shared(op) if shared is not None else None
        problem.add_operation(op, delay(op), [*uses, unit[0]] if unit else uses)
        hint = op.attributes.get(aq.KERNEL_CYCLE_ATTR)
        if isinstance(hint, IntegerAttr):  # a pipelined kernel's modulo schedule
            problem.release[op] = hint.value.data
        for i, r in enumerate(uses):
            problem.limits[r] = ports if i < len(keys) else 1
        if unit is not None:
            problem.limits[unit[0]] = unit[1]
        access = storage_access(op)
        if access is not None:
            problem.add_access(op, access)
    index = set(ops)
    lead = riders or {}
    for op in ops:
        for v in op.operands:
            if not isinstance(v, OpResult):
                continue
            src = lead.get(v.owner, v.owner)
            if src in index and src in mc:
                problem.add_dependence(src, op, mc[src].latency, f"data from {mc[src].key}")
                continue
            if v.owner in index:
                if isinstance(v.owner, MEM_OPS):
                    problem.add_dependence(v.owner, op, 1, "data from memory")
                elif sram_read(v.owner):
                    problem.add_dependence(v.owner, op, 1, "data from an SRAM read port")
                else:
                    problem.add_dependence(v.owner, op, 0, "data")
    # Memory-interface ops against every other effect (``_order``), without the pairs the
    # others imply: each effect follows the latest memory op before it, and each memory op
    # follows the effects since the previous one and that memory op.  An earlier effect is
    # then ordered through the chain of memory ops at no smaller distance, and never shares
    # a cycle with the later op, so the schedule is the one of all pairs; all pairs grow
    # with the square of the segment (2,000 single-shot loads: minutes).
    last: Operation | None = None
    since: list[Operation] = []
    for b in (o for o in ops if _effectful(o)):
        before = [*since, last] if isinstance(b, MEM_OPS) else [last]
        for a in before:
            rel = _order(a, b) if a is not None else None
            if rel is not None:
                problem.add_dependence(a, b, *rel)
        if isinstance(b, MEM_OPS):
            last, since = b, []
        else:
            since.append(b)
    return problem


def storage_access(op: Operation) -> Access | None:
    """The access of a scratchpad element read/write or a state read/write (bursts are
    memory-interface ops, ordered against everything by ``_order``)."""
    if isinstance(op, aq.SpmReadOp | aq.SpmWriteOp):
        spm = spm_of(op)
        return Access(
            spm.sym_name.data,
            frozenset(spm_banks(op)),
            isinstance(op, aq.SpmWriteOp),
            affine_index(op.index),
            1 << max(0, (spm.size - 1).bit_length()),
        )
    if isinstance(op, aq.StateReadOp | aq.StateWriteOp):
        # one register: every access touches its only element
        return Access(op.state.root_reference.data, frozenset({0}), isinstance(op, aq.StateWriteOp))
    return None


def _effectful(op: Operation) -> bool:
    return isinstance(
        op, (*MEM_OPS, aq.SpmReadOp, aq.SpmWriteOp, aq.StateReadOp, aq.StateWriteOp, aq.WriteRdOp)
    )


def _order(a: Operation, b: Operation) -> tuple[int, str] | None:
    """Ordering a → b (a earlier in program order) that involves a memory-interface op:
    None if there is none, else (distance, reason), distance 1 when b must be in a
    strictly later cycle and 0 when the same cycle is fine. Storage accesses among
    themselves are ordered by their ``Access``."""
    if isinstance(a, MEM_OPS):
        # nothing with effects may overlap or precede-in-time a memory op
        return 1, "effects after a memory access"
    if isinstance(b, MEM_OPS) and sram_read(a):
        # the read's data cycle must not be a wait state (it lasts several cycles, and a
        # burst there may use the bank's port)
        return 2, "an SRAM read's data cycle before a memory access"
    if isinstance(b, MEM_OPS):
        return 0, "effects before a memory access"  # b's bus traffic starts after a's updates
    return None


def _port_keys(op: Operation) -> list[tuple[str, int]]:
    if isinstance(op, aq.SpmReadOp | aq.SpmWriteOp | aq.BurstReadOp | aq.BurstWriteOp):
        name = op.scratchpad.root_reference.data
        return [(name, b) for b in sorted(spm_banks(op))]
    return []


def call_local_registers(ext: aq.ExtensionOp) -> dict[str, tuple[str, int]]:
    """Element register -> (its ISAX, width), of the register scratchpads that hold nothing
    from one call to the next (:func:`call_local_scratchpads`). Elements never read are
    left out (their registers are dropped as dead). Such registers may share flip-flops
    with any register of another ISAX (:meth:`FsmBuilder.pooled_registers`)."""
    return {
        f"{name}_{k}_q": (owner, width)
        for name, (owner, width, read) in call_local_scratchpads(ext).items()
        for k in sorted(read)
    }


def call_local_scratchpads(ext: aq.ExtensionOp) -> dict[str, tuple[str, int, set[int]]]:
    """Scratchpad -> (its ISAX, width, the elements it reads), of the register
    scratchpads that hold nothing from one call to the next: used by one ISAX, every
    element written at the top level of its body (a burst read from a constant offset,
    not resident across calls, or an element write at a constant index, unpredicated)
    before the first access that may read one, or that sits in a loop or branch; not
    forwarded (:func:`forwarded_scratchpads`: no registers at all)."""
    forwarded = forwarded_scratchpads(ext)
    out: dict[str, tuple[str, int, set[int]]] = {}
    for spm, isax in _own_register_scratchpads(ext):
        name = spm.sym_name.data
        read = None if name in forwarded else _elements_read_after_filled(isax, name, spm.size)
        if read is not None:
            out[name] = (isax.sym_name.data, spm.width, read)
    return out


def registerless_scratchpads(ext: aq.ExtensionOp) -> list[str]:
    """The scratchpads not kept from one call to the next: the register scratchpads whose
    elements may have no register of their own in the unit (forwarded ones, and call-local
    ones: pooled with other ISAXs' registers, or never read), and the call-local SRAM
    scratchpads (:func:`call_local_srams`: their words are not cleared after reset).
    Nothing can read their contents after a call, so co-simulation does not compare them
    (``cosim_tb.spm_handles``); the unit's header comment lists them. So are the register
    scratchpads whose contents reach nothing observable (``prepare.unobservable_storage``):
    their registers feed only themselves, and the exporter removes them."""
    unseen = {p.sym_name.data for p in ext.scratchpads() if not is_sram(p)}
    unseen &= unobservable_storage(ext)
    return sorted(
        {*forwarded_scratchpads(ext), *call_local_scratchpads(ext), *call_local_srams(ext)} | unseen
    )


def call_local_srams(ext: aq.ExtensionOp) -> set[str]:
    """The SRAM scratchpads that every ISAX using them fills (at its top level, before any
    access that may read a word: :func:`_elements_read_after_filled`) in each call, so no
    call sees what an earlier one or reset left there."""
    users = _scratchpad_users(ext)
    return {
        spm.sym_name.data
        for spm in ext.scratchpads()
        if is_sram(spm)
        and users.get(spm.sym_name.data)
        and all(
            _elements_read_after_filled(isax, spm.sym_name.data, spm.size) is not None
            for isax in users[spm.sym_name.data]
        )
    }


def cleared_srams(ext: aq.ExtensionOp) -> list[aq.ScratchpadOp]:
    """The SRAM scratchpads whose words the unit clears after reset: those some ISAX uses
    and that are not call-local. The spec says a scratchpad starts at zero, as a
    register with a reset does, but an SRAM macro's words start at whatever power-up left
    and take no reset (docs/synthesis.md, "SRAM scratchpads")."""
    users = _scratchpad_users(ext)
    local = call_local_srams(ext)
    return [
        spm
        for spm in ext.scratchpads()
        if is_sram(spm) and spm.sym_name.data in users and spm.sym_name.data not in local
    ]


def _elements_read_after_filled(isax: aq.IsaxOp, name: str, size: int) -> set[int] | None:
    """The elements of scratchpad ``name`` that ``isax`` reads, if it writes all ``size``
    of them at its top level before any access that may read one; else None."""
    written: set[int] = set()
    read: set[int] = set()
    for top, accesses in _accesses_by_top_op(isax, name):
        if len(written) < size:
            if accesses != [top]:
                return None
            if isinstance(top, aq.BurstReadOp):
                start = constant_value(top.offset)
                if start is None or RESIDENT_ATTR in top.attributes:
                    return None
                written.update(range(start, start + top.length_value))
            elif isinstance(top, aq.SpmWriteOp):
                k = constant_value(top.index)
                if k is None or top.pred is not None:
                    return None
                written.add(k)
            else:
                return None
            continue
        for o in accesses:
            if isinstance(o, aq.SpmReadOp):
                k = constant_value(o.index)
                read.update(range(size) if k is None else (k,))
            elif isinstance(o, aq.BurstWriteOp):
                start = constant_value(o.offset)
                read.update(range(size) if start is None else range(start, start + o.length_value))
            elif not isinstance(o, aq.SpmWriteOp | aq.BurstReadOp):
                read.update(range(size))
    return read if len(written) >= size else None


def forwarded_scratchpads(ext: aq.ExtensionOp) -> dict[str, dict[int, SSAValue]]:
    """Register scratchpads that only stage values for burst writes, each as element ->
    the value written there. A coalesced store (``aquas-interface-coalesce``) writes
    values into a buffer that a burst then writes to memory; the unit's burst reads
    the registers that already hold those values instead, and the buffer's own flip-flops
    and write selects are not built (the point cloud's ``vcovmat3d``: six 64-bit sums,
    384 flip-flops).

    Such a scratchpad is used by one ISAX, not resident, and its accesses, all at the top
    level of the ISAX's body, are unpredicated writes at constant indices, each element
    written once, then burst writes from constant offsets of written elements only. The
    values are then top-level values defined before their write, so their registers hold
    them for the rest of the call: nothing but their defining op (or their loop, for a
    loop's result) writes those registers, and both came before. Reads see exactly what
    the buffer would hold, so the golden semantics are untouched."""
    out: dict[str, dict[int, SSAValue]] = {}
    for spm, isax in _own_register_scratchpads(ext):
        values = _staged_values(isax, spm.sym_name.data, spm.size)
        if values:
            out[spm.sym_name.data] = values
    return out


def _scratchpad_users(ext: aq.ExtensionOp) -> dict[str, list[aq.IsaxOp]]:
    """Scratchpad -> the ISAXs that access it, in spec order."""
    users: dict[str, list[aq.IsaxOp]] = {}
    for isax in ext.isaxs():
        for name in dict.fromkeys(
            spm_of(op).sym_name.data for op in isax.body.walk() if "scratchpad" in op.properties
        ):
            users.setdefault(name, []).append(isax)
    return users


def _own_register_scratchpads(ext: aq.ExtensionOp) -> list[tuple[aq.ScratchpadOp, aq.IsaxOp]]:
    """The register scratchpads that one ISAX uses, each with that ISAX."""
    users = _scratchpad_users(ext)
    return [
        (spm, users[spm.sym_name.data][0])
        for spm in ext.scratchpads()
        if not is_sram(spm) and len(users.get(spm.sym_name.data, ())) == 1
    ]


def _accesses_by_top_op(isax: aq.IsaxOp, name: str) -> Iterator[tuple[Operation, list[Operation]]]:
    """Each top-level op of ``isax``'s body that accesses scratchpad ``name`` (itself or
    an op nested in it), with those accesses."""
    for top in isax.body.block.ops:
        accesses = [
            o
            for o in top.walk()
            if "scratchpad" in o.properties and spm_of(o).sym_name.data == name
        ]
        if accesses:
            yield top, accesses


def _staged_values(isax: aq.IsaxOp, name: str, size: int) -> dict[int, SSAValue] | None:
    """Element -> value of scratchpad ``name`` if ``isax`` only stages values in it for
    burst writes (:func:`forwarded_scratchpads`), else None."""
    values: dict[int, SSAValue] = {}
    bursts = 0
    for top, accesses in _accesses_by_top_op(isax, name):
        if accesses != [top]:
            return None  # an access in a loop or branch
        if isinstance(top, aq.SpmWriteOp):
            k = constant_value(top.index)
            if bursts or k is None or top.pred is not None or k in values or not 0 <= k < size:
                return None
            values[k] = top.value
        elif isinstance(top, aq.BurstWriteOp):
            start = constant_value(top.offset)
            if start is None or RESIDENT_ATTR in top.attributes:
                return None
            if any(k not in values for k in range(start, start + top.length_value)):
                return None
            bursts += 1
        else:
            return None
    return values if bursts else None


@dataclass
class RegisterUse:
    """Where a generated unit reads and writes each value register (by its name before
    pooling), per state id; recorded by ``rtlgen.UnitGenerator`` while it generates."""

    reads: dict[str, set[int]] = field(default_factory=dict)
    kills: dict[str, set[int]] = field(default_factory=dict)
    """Written at the end of the state whatever happens in it (the state's enable, or a
    wait state's beat: the state is left only after it)."""
    partial: dict[str, set[int]] = field(default_factory=dict)
    """Written under a condition in the state: the old value may stay."""
    pinned: set[str] = field(default_factory=set)
    """Written outside any state's logic (a carried SRAM read's iteration register): held
    through the whole call."""


def register_conflicts(
    states: list[State],
    widths: dict[str, int],
    owner: dict[str, str],
    use: RegisterUse,
) -> dict[str, set[str]]:
    """Register -> the registers of its ISAX and width that may hold a needed value at the
    same time (so they cannot share flip-flops).

    Backward liveness over the state graph (loops included): a register is live into a
    state if the state reads it, or it is live out and the state does not overwrite it
    unconditionally. Two registers conflict when both are live into one state (both
    values are read in it or later), or both are live out of or written in one state.
    In a wait state, which lasts several cycles and repeats its writes in each, everything
    live or written in it conflicts. A register live into the first state of its ISAX is
    read before the call writes it (or ``pinned``): it conflicts with every register of its
    ISAX."""
    by_state: dict[int, State] = {st.id: st for st in states}
    reads: dict[int, set[str]] = {}
    kills: dict[int, set[str]] = {}
    partial: dict[int, set[str]] = {}
    for src, dst in ((use.reads, reads), (use.kills, kills), (use.partial, partial)):
        for name, sids in src.items():
            if name in widths:
                for sid in sids:
                    dst.setdefault(sid, set()).add(name)

    def succ(st: State) -> list[int]:
        t = st.next
        out = [t.target] if isinstance(t, Goto) else []
        if isinstance(t, Branch):
            out = [t.if_true, t.if_false]
        if isinstance(t, LoopLatch):
            out = [t.body, t.exit]
        return [x for x in out if x in by_state]

    live_in: dict[int, set[str]] = {sid: set() for sid in by_state}
    live_out: dict[int, set[str]] = {sid: set() for sid in by_state}
    changed = True
    while changed:
        changed = False
        for st in reversed(states):
            out: set[str] = set().union(*(live_in[t] for t in succ(st)))
            inn = reads.get(st.id, set()) | partial.get(st.id, set())
            inn |= out - kills.get(st.id, set())
            if out != live_out[st.id] or inn != live_in[st.id]:
                live_out[st.id], live_in[st.id] = out, inn
                changed = True
    conflicts: dict[str, set[str]] = {name: set() for name in widths}

    def clash(group: set[str]) -> None:
        for a in group:
            conflicts[a].update(b for b in group if b != a and widths[b] == widths[a])

    for st in states:
        after = live_out[st.id] | kills.get(st.id, set()) | partial.get(st.id, set())
        if st.wait is not None:
            clash(live_in[st.id] | after)
        else:
            clash(live_in[st.id])
            clash(after)
    # read before written in the call, or held through it: conflicts with its whole ISAX
    first: dict[str, int] = {}
    for st in states:
        first.setdefault(st.isax, st.id)
    held = {n for n in use.pinned if n in widths}
    for isax, sid in first.items():
        held |= {n for n in live_in[sid] if owner[n] == isax}
    for a in held:
        same = {b for b in widths if b != a and owner[b] == owner[a] and widths[b] == widths[a]}
        conflicts[a] |= same
        for b in same:
            conflicts[b].add(a)
    return conflicts


__all__ = [
    "FsmBuilder",
    "IsaxFsm",
    "Latency",
    "RegisterUse",
    "State",
    "affine_index",
    "register_conflicts",
    "segment_problem",
    "spm_banks",
    "storage_access",
]
