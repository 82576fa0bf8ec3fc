"""The timing model of generated units and the scheduling entry points.

The combinational delay of each IR op in the generated datapath (from the Yosys-characterised
operator library), the state numbering every unit shares (idle, respond, then the ISAXs'
states), and :func:`schedule_extension`, which both ``aquas synth`` (through
:func:`aquas.synth.flow.schedule_isaxs`) and the ``aquas-schedule`` pass use, so the pass
annotates exactly the states the generated unit has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, i64
from xdsl.ir import Operation, OpResult
from xdsl.passes import ModulePass

from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.synth.binding import ShareConfig
from aquas.synth.fsm import FREE_OPS, MEM_OPS, FsmBuilder, IsaxFsm, index_only, spm_of
from aquas.synth.oplib import CMPI_PREDICATE_NAMES, MultiCycleOp, OperatorLibrary, arith_kind
from aquas.synth.schedule import SCHEDULERS, Scheduler, list_schedule
from aquas.synth.sram import is_sram

IDLE_STATE, RESP_STATE = 0, 1
# Gate levels of every cycle reserved for what surrounds the chained datapath: the
# register-input select (an AND-OR tree over the register's writers, then a hold mux) and
# the state decode feeding it. Checked against Yosys' depth of every example unit.
OVERHEAD_LEVELS = 10


def _w(op: Operation) -> int:
    t = op.results[0].type if op.results else op.operands[0].type
    assert isinstance(t, IntegerType)
    return t.width.data


def _const_rhs_value(op: Operation) -> int | None:
    """The value of ``op``'s second operand when it is an ``arith.constant``, else None."""
    if len(op.operands) < 2:
        return None
    v = op.operands[1]
    if not (isinstance(v, OpResult) and isinstance(v.owner, arith.ConstantOp)):
        return None
    value = v.owner.value
    return value.value.data if isinstance(value, IntegerAttr) else None


def _const_rhs(op: Operation) -> bool:
    return _const_rhs_value(op) is not None


def const_mul_levels(lib: OperatorLibrary, c: int, width: int) -> int:
    """Gate levels of ``x * c`` at ``width`` bits by the number ``p`` of one bits of ``c``
    (modulo ``2^width``): no adder for ``p <= 1`` (a shift), else one adder plus 2 levels
    per further partial product.

    The library's ``mul_const`` entry is the deepest of its two characterised constants
    (3329 and 1000003), far too deep for the small factors of index arithmetic (``3 * j``
    into a cyclic-3 scratchpad). Yosys keeps only the partial products of ``c``'s one bits
    (no recoding), so the depth follows ``p``: on the library's script, ``x * 3`` at 32
    bits is 17 levels (an adder 18), ``* 7`` 20, ``* 3329`` 22, ``* 1000003`` (9 ones)
    31, ``* 3`` at 8 bits 9 (an adder 10); the formula is at or above each
    (``tests/test_timing_const_mul.py`` checks it against Yosys)."""
    adders = const_mul_adders(c, width)
    if adders == 0:
        return 0
    return lib.cost("add", width).depth + 2 * (adders - 1)


def const_mul_ns(lib: OperatorLibrary, c: int, width: int) -> float:
    """Delay of ``x * c`` at ``width`` bits: the library's constant multiply, or its
    adders (:func:`const_mul_levels`) when they are fewer levels."""
    return min(lib.delay_ns("mul_const", width), lib.levels_ns(const_mul_levels(lib, c, width)))


def const_mul_adders(c: int, width: int) -> int:
    """Adders of ``x * c`` at ``width`` bits: one per term of :func:`const_mul_terms` past
    the first (:func:`const_mul_levels`)."""
    return max(len(const_mul_terms(c, width)) - 1, 0)


def const_mul_terms(c: int, width: int) -> list[tuple[int, int]]:
    """``x * c`` modulo ``2^width`` as a sum of ``sign * (x << shift)``, as
    ``(shift, sign)`` pairs: the canonical signed-digit form of ``c`` when it has fewer
    digits than ``c`` has one bits, else the one bits.

    Yosys 0.23 maps ``x * c`` to one partial product per one bit of ``c`` (no recoding), so
    a constant with long runs of ones costs far more adders than it needs: Barrett's
    ``2^32 / 3329 = 1290167`` has 15 one bits and 7 signed digits (``2^20 + 2^18 - 2^14 -
    2^12 - 2^6 - 2^3 - 1``). The generated datapath writes such a product as the shifts
    and one multi-operand addition (``HwBuilder.mul_const``), which Yosys reduces as one
    adder tree; a 29-bit ``x * 1290167`` between registers maps to 38,126 um^2 instead of
    67,104 on OSU018, at the same depth."""
    c %= 1 << width
    ones = [(i, 1) for i in range(width) if c >> i & 1]
    digits: list[tuple[int, int]] = []
    k, i = c, 0
    while k and i < width:  # digits at 2^width and above vanish modulo 2^width
        if k & 1:
            d = 2 - (k & 3)  # ...01 -> +1, ...11 -> -1 (the run of ones becomes 2^j - 1)
            digits.append((i, d))
            k -= d
        k >>= 1
        i += 1
    return digits if len(digits) < len(ones) else ones


#: Gate levels from a bank-index register to the fan-out of a multi-bank SRAM read's
#: word select, before its AND-OR levels: the buffer tree ABC builds for a 1-bit register
#: driving every bit of every bank's word. Measured on OSU018 (Kyber's inverse NTT, 2 banks
#: of 16 bits): 1.13 ns from the clock to the selected word, against 0.19 ns for a
#: register's output. The model's levels are generic (0.1 ns, which timing closure derates);
#: 3 is the fewest with which Kyber's first round meets the core's clock (5.67 ns), with
#: its multipliers still shared (at 6 the 10 % rule gives most of them operators of their
#: own, for 0.6 ns of slack).
BANK_FANOUT_LEVELS = 3


def bank_select_ns(lib: OperatorLibrary, op: Operation) -> float:
    """The delay in front of ``op`` of the word select of a multi-bank SRAM read among its
    operands (through width changes): the data arrives from the read port that long into
    the cycle (0 when no operand is such a read)."""
    from aquas.synth.fsm import WIDENING_OPS, spm_banks, sram_read

    worst = 0.0
    for v in op.operands:
        while isinstance(v, OpResult) and isinstance(v.owner, (*WIDENING_OPS, arith.TruncIOp)):
            v = v.owner.operands[0]
        if not isinstance(v, OpResult) or not sram_read(v.owner):
            continue
        banks = len(spm_banks(v.owner))
        if banks > 1:
            levels = BANK_FANOUT_LEVELS + 1 + (banks - 1).bit_length()
            worst = max(worst, lib.levels_ns(levels))
    return worst


def op_delay(lib: OperatorLibrary, op: Operation) -> float:
    """Combinational delay (ns) of one IR op in the generated datapath, with the word
    select of a multi-bank SRAM read it takes an operand from (:func:`bank_select_ns`)."""
    d = _op_delay(lib, op)
    return d + bank_select_ns(lib, op) if d > 0 else d  # wiring passes the word on


def _op_delay(lib: OperatorLibrary, op: Operation) -> float:
    if isinstance(op, (*FREE_OPS, *MEM_OPS, aq.StateReadOp, aq.StateWriteOp, aq.WriteRdOp)):
        return 0.0
    if isinstance(op, aq.SpmReadOp | aq.SpmWriteOp):
        # element select: a mux tree over the elements, plus the index compare for writes
        spm = spm_of(op)
        if is_sram(spm):
            # an SRAM bank's address and enable (the bank decode of a dynamic index); the
            # data comes from the bank's output register in the next cycle
            return lib.delay_ns("icmp_eq", 32)
        levels = max(1, (spm.size - 1).bit_length())
        d = levels * lib.delay_ns("mux", spm.width)
        if isinstance(op, aq.SpmWriteOp):
            d = lib.delay_ns("icmp_eq", 32)
        return d
    if index_only(op):  # an SRAM row read off the induction variables instead
        return 0.0
    name = op.name
    pred = None
    if isinstance(op, arith.CmpiOp):
        pred = CMPI_PREDICATE_NAMES[op.predicate.value.data]
    kind = arith_kind(name, pred, _const_rhs(op))
    width = _w(op) if not isinstance(op, arith.CmpiOp) else _width_of(op.lhs.type)
    d = lib.delay_ns(kind, width)
    c = _const_rhs_value(op)
    if isinstance(op, arith.MuliOp) and c is not None:
        d = const_mul_ns(lib, c, width)
    if name in ("arith.divui", "arith.divsi", "arith.remui", "arith.remsi"):
        if c is not None:  # a small constant divisor is far deeper than the *_const entry
            depth = lib.division_by_constant_depth(arith_kind(name), width, c)
            d = max(d, lib.levels_ns(depth))
        d += 2 * lib.delay_ns("mux", width)  # RISC-V corner-case selects
    if name in ("arith.shli", "arith.shrui", "arith.shrsi") and not _const_rhs(op):
        d += lib.delay_ns("mux", width)  # shift-out guard
    return d


def chained_delay(lib: OperatorLibrary, op: Operation, budget_ns: float) -> float:
    """The delay the schedulers chain for ``op``: :func:`op_delay` on ``lib``, except that
    under a derated library (timing closure) an operator that fits a cycle on its
    characterised delay is never slower than the cycle: it gets a cycle of its own. The
    state-machine builder and the loop pipeliner both use it, so a kernel's modulo
    schedule is the one the builder reproduces."""
    d = op_delay(lib, op)
    if d > budget_ns and lib.derate != 1.0 and op_delay(lib.characterised(), op) <= budget_ns:
        return budget_ns
    return d


def _width_of(t: Any) -> int:
    assert isinstance(t, IntegerType)
    return t.width.data


def schedule_extension(
    ext: aq.ExtensionOp,
    clock_ns: float,
    lib: OperatorLibrary,
    scheduler: Scheduler = list_schedule,
    bus_width: int = 32,
    share: bool = True,
    config: ShareConfig | None = None,
) -> tuple[FsmBuilder, list[IsaxFsm]]:
    """Schedule every ISAX of ``ext`` (prepared IR) into the unit's state machines, for
    an ISAX memory master ``bus_width`` bits wide, and bind its multiplies to shared
    units (``synth/binding.py``; ``share=False``: one operator per op, as before).

    With sharing, the extension is scheduled without sharing (the reference cycles), then
    without a limit on the shared units (each ISAX's peak use per class), the number of
    units is chosen (``binding.choose_limits``: the ``#[mul_units(N)]`` directives, else
    the fewest units that keep every ISAX within 10 % of its reference cycles), and the
    extension is scheduled with those limits and bound. The cycles compared are the fixed
    part of the latency (memory latency 0): sharing changes only that part, so an ISAX
    within 10 % there is within 10 % at any memory latency, and the unit does not depend
    on the memory.

    ``config`` (``--area-budget``, synth/budget.py) fixes the merge option, caps unit
    counts and sends classes of multiplies to sequential multipliers; the reference
    cycles of the 10 % rule are then those without sharing but with those sequential
    multipliers."""
    from aquas.synth.binding import (
        DEFAULT_SLOWDOWN,
        Sharing,
        UnitClass,
        bind,
        choose_limits,
        class_of,
        merge_options,
        merge_reference,
        within,
    )
    from aquas.synth.multicycle import multicycle_policy

    overhead_ns = OVERHEAD_LEVELS * lib.ns_per_level
    budget_ns = clock_ns - overhead_ns
    # decides what becomes multi-cycle: the characterised delays, unless closure says fit
    policy_lib = lib if lib.derate_fit else lib.characterised()

    def delay(op: Operation) -> float:
        return chained_delay(lib, op, budget_ns)

    # divisions slower than a cycle run on the sequential divider (synth/multicycle.py)
    slow_policy = multicycle_policy(policy_lib, lambda op: op_delay(policy_lib, op), budget_ns)
    config = config or ShareConfig()

    def policy(op: Operation) -> MultiCycleOp | None:
        spec = slow_policy(op)
        if spec is not None or not config.sequential or not isinstance(op, arith.MuliOp):
            return spec
        own = class_of(op, lib)
        digit = None if own is None else config.digit(own)
        if own is None or digit is None:
            return None
        try:  # the sequential multiplier the budget asks for, if its step fits the cycle
            spec = policy_lib.multicycle("mul", own.width, budget_ns, digit=digit)
        except ValueError:
            return None
        if spec.depth * lib.ns_per_level > budget_ns or spec.issue_ns > budget_ns:
            return None
        return spec

    sharing: Sharing | None = None

    def new_builder(s: Sharing | None) -> FsmBuilder:
        return FsmBuilder(
            clock_ns,
            delay,
            first_id=RESP_STATE + 1,
            overhead_ns=overhead_ns,
            scheduler=scheduler,
            bus_width=bus_width,
            multicycle=policy,
            sharing=s,
        )

    def run() -> tuple[FsmBuilder, list[IsaxFsm]]:
        builder = new_builder(sharing)
        fsms = []
        for isax in ext.isaxs():
            fsm = builder.build_isax(isax)
            builder.finish(RESP_STATE)
            if fsm.entry < 0:
                fsm.entry = RESP_STATE
            builder.mark_stream(fsm, RESP_STATE)
            builder.mark_early(fsm, RESP_STATE)
            fsms.append(fsm)
        return builder, fsms

    plain = run()
    if not share:
        return plain

    def cycles_of(fsms: list[IsaxFsm]) -> dict[str, tuple[int, int]]:
        return {f.isax.sym_name.data: f.latency.at(0) for f in fsms}

    # without sharing: the reference cycles the default may slow by 10 % at most
    base = cycles_of(plain[1])
    isaxs = {i.sym_name.data: i for i in ext.isaxs()}

    def shared_with(
        merge: dict[UnitClass, UnitClass],
    ) -> tuple[FsmBuilder, list[IsaxFsm], Sharing] | None:
        nonlocal sharing
        excluded: frozenset[str] = frozenset()
        while True:
            sharing = Sharing.plan(ext, lib, delay, budget_ns, policy, excluded, merge)
            if not sharing.classes:
                return None
            # without limits: each ISAX's peak use per class. An ISAX that the input
            # selects' delay alone makes too slow keeps its own operators (unless a
            # directive asks).
            builder, fsms = run()
            slow = {
                name
                for name, cyc in cycles_of(fsms).items()
                if name not in sharing.directives
                and name not in sharing.split_isaxs
                and not within(cyc, base[name], DEFAULT_SLOWDOWN)
            }
            if not slow:
                break
            excluded |= slow
        chosen = sharing

        def isax_cycles(name: str) -> tuple[int, int]:
            return new_builder(chosen).build_isax(isaxs[name]).latency.at(0)

        # an ISAX on split units is held to its cycles with them and no limit: its
        # reference without sharing has multiplies the clock does not fit
        ref = base | {n: c for n, c in cycles_of(fsms).items() if n in chosen.split_isaxs}
        choose_limits(chosen, chosen.peaks(builder.states), isax_cycles, ref)
        for key, n in chosen.limits.items():
            cap = config.cap(key[1])
            if cap is not None:
                chosen.limits[key] = min(n, cap)
        builder, fsms = run()
        builder.binding = bind(chosen, builder.states)
        return builder, fsms, chosen

    # wider units may serve narrower multiplies (binding.merge_options): of the ways to
    # merge classes, the one with the least estimated multiplier area (synth/area_model.py)
    # under the same 10 % rule; ties keep fewer merges
    # only classes that share already (two or more multiplies on units): merging an
    # operator of its own adds an input select to its path, which the model does not
    # weigh against the saved area (Kyber's 17- and 37-bit ones: the unit closes timing
    # in 4 rounds instead of 2)
    own = Sharing.plan(ext, lib, delay, budget_ns, policy)
    sharing_classes = [c for c in own.users if list(own.classes.values()).count(c) > 1]
    # a merge is held to the 10 % rule against the cycles without sharing, as the first
    # option (no merge) is; an ISAX on split units is held only to its cycles with them
    # unmerged, which a narrower class's multiplies merged onto the split unit would set
    # itself (Kyber's 37-bit multiplies on the 53-bit split unit at derate 1.15: modmul_q
    # 9 -> 11 cycles); binding.merge_reference
    best: tuple[float, int, tuple[FsmBuilder, list[IsaxFsm]]] | None = None
    options = merge_options(sharing_classes) if config.merge is None else [dict(config.merge)]
    ref: dict[str, tuple[int, int]] | None = None
    for k, merge in enumerate(options):
        got = shared_with(merge)
        if got is None:
            continue
        b, f, chosen = got
        cyc = cycles_of(f)
        if ref is None:
            ref = merge_reference(base, cyc, chosen.split_isaxs)
        elif any(
            n not in chosen.directives and not within(c, ref[n], DEFAULT_SLOWDOWN)
            for n, c in cyc.items()
        ):
            continue
        um2 = multiplier_um2(b)
        if best is None or um2 < best[0] - 1e-6:
            best = (um2, k, (b, f))
    if best is None:
        return plain
    return best[2]


def multiplier_um2(builder: FsmBuilder) -> float:
    """The estimated area (synth/area_model.py) of a schedule's multipliers: the shared
    units with their input selects, the multiplies on an operator of their own, and the
    sequential multipliers, the part of a unit that sharing choices change."""
    from aquas.synth.area_model import model
    from aquas.synth.binding import narrowing

    am = model()
    total = 0.0
    b = builder.binding
    bound = b.unit_of if b is not None else {}
    if b is not None:
        for (c, _i), ops in b.users.items():
            n = b.narrow.get(c)
            bits = c.width if n is None else n.bits
            total += am.mul(bits, bits, c.width) + 2 * am.select(len(ops), bits)
            if c in b.registered:  # operand and result registers (and carry-save ones)
                total += (2 * bits + c.width * (3 if c in b.split else 1)) * am.dff_um2
    seq: dict[str, float] = {}
    for st in builder.states:
        for op in st.ops:
            if isinstance(op, arith.MuliOp) and op not in bound and op not in builder.multicycle:
                if _const_operand(op):
                    continue
                n = narrowing([op])
                w = _w(op)
                bits = w if n is None else n.bits
                total += am.mul(bits, bits, w)
        for op in st.issues:
            spec = st.units[op]
            if spec.unit == "mul" and not spec.pipelined:
                # the library's cells count its flip-flops too
                flops = spec.flops
                seq[spec.key] = (spec.cells - flops) * am.um2_per_cell["mul"] + flops * am.dff_um2
    return (total + sum(seq.values())) * am.calibration


def _const_operand(op: Operation) -> bool:
    from aquas.synth.binding import _is_const

    return any(_is_const(v) for v in op.operands)


STATE_ATTR = "aquas.state"
"""Discardable attribute ``aquas-schedule`` puts on each scheduled op: its FSM state (i64)."""
RESULT_STATE_ATTR = "aquas.result_state"
"""Discardable attribute on a multi-cycle op (a sequential division): the state reading its
result (``aquas.state`` is the one starting it)."""
CYCLE_ATTR = "aquas.cycle"
"""Discardable attribute: the op's cycle within its straight-line segment (i64)."""


@dataclass(frozen=True)
class AquasSchedulePass(ModulePass):
    """Schedules every ISAX into FSM states; annotates each op with its state and cycle.

    The states are numbered as in the generated unit (0 idle, 1 respond, then the ISAXs in
    order). Ops that need no state (constants, ``aquas.rs1``/``rs2``) and control-flow ops
    get no annotation. The pass schedules the IR as it is: run ``aquas-unroll`` and
    ``aquas-if-convert`` first to schedule what ``aquas synth`` schedules.
    """

    name = "aquas-schedule"

    # int as well, so that the pipeline text `clock-ns=10` is accepted
    clock_ns: int | float = 10.0
    """Target clock period (ns); the operator library's delays are chained within it."""

    algorithm: str = "list"
    """Scheduling algorithm (``list``: list scheduling with chaining)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.clock_ns > 0 or self.clock_ns == float("inf"):
            raise AquasError(
                f"aquas-schedule: clock-ns must be a positive number, not {self.clock_ns}"
            )
        if self.algorithm not in SCHEDULERS:
            known = ", ".join(sorted(SCHEDULERS))
            raise AquasError(
                f"aquas-schedule: unknown algorithm {self.algorithm!r} (known: {known})"
            )
        for inner in op.walk():
            inner.attributes.pop(STATE_ATTR, None)
            inner.attributes.pop(CYCLE_ATTR, None)
            inner.attributes.pop(RESULT_STATE_ATTR, None)
        from aquas.synth.loop_pipeline import fit_scratchpads

        fit_scratchpads(op)
        lib = OperatorLibrary.load()
        # one unit per extension, each numbering its states from its own idle state
        for ext in [o for o in op.walk() if isinstance(o, aq.ExtensionOp)]:
            builder, _ = schedule_extension(ext, self.clock_ns, lib, SCHEDULERS[self.algorithm])
            for scheduled, state in builder.state_of.items():
                if scheduled in builder.multicycle:  # started here, read in def_state
                    result = builder.def_state[scheduled]
                    scheduled.attributes[RESULT_STATE_ATTR] = IntegerAttr(result, i64)
                scheduled.attributes[STATE_ATTR] = IntegerAttr(state, i64)
                scheduled.attributes[CYCLE_ATTR] = IntegerAttr(builder.cycle_of[scheduled], i64)
