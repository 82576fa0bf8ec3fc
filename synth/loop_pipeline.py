"""``aquas-pipeline-loops``: software-pipeline ``scf.for`` loops at the II a modulo
schedule finds (``synth/modulo.py``).

A loop of ``T`` iterations whose modulo schedule has ``S`` stages at initiation interval
``II`` becomes, in place:

* a *prologue*: straight-line code running stages ``0..k`` of the first iterations, for
  ``k = 0 .. S-2``;
* a *kernel*: an ``scf.for`` of ``T - S + 1`` iterations whose body runs stage ``s`` of
  iteration ``k - s`` for every ``s`` (oldest iteration first). A value produced in one
  stage and used ``d`` stages later travels through ``d`` iteration arguments (``<name>_s1``
  .. ``<name>_s<d>``), which the state machine keeps in registers;
* an *epilogue*: straight-line code finishing the last ``S - 1`` iterations.

The rewrite is exact in the golden model's sequential semantics: the stage assignment
keeps every dependence (within and between iterations) in order, so the interpreter checks
it for equivalence like any other pass. The FSM builder then schedules the kernel body as
one segment: the stages' operations are independent within a kernel iteration (their
inputs come from registers), and each carries its modulo-schedule cycle
(``aquas.kernel_cycle``, the earliest cycle the builder gives it), so the kernel takes II
states; the latch (iv and iteration registers) is written in the kernel's last state,
adding no cycle. Index arithmetic on the induction variable is recomputed per stage (see
``pipeline_loop``). The prologue and epilogue join the straight-line segments around the
loop.

Realised as an IR rewrite rather than inside the FSM builder so that the golden
interpreter checks it and the FSM, register allocation and RTL generation stay unchanged.

Which loops: those with the spec's ``#[pipeline]`` / ``#[pipeline(N)]`` directive
(``aquas.pipeline`` = N, the II to aim for, 0 for the lowest), and with ``auto`` the loops
over scratchpad data that are not unrolled where the kernel saves cycles, unless
``#[pipeline(off)]`` (-1). A loop is
pipelined only when it is innermost, straight-line (no branch with effects, no memory-
interface op, no multi-cycle division), of constant trip count at least ``S``, and the II
is below the body's sequential length.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import PurePath

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, i64
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from aquas.diagnostics import AquasError, loc_of
from aquas.dialects import aquas as aq
from aquas.dialects.aquas import KERNEL_CYCLE_ATTR, PIPELINE_ATTR, UNROLL_ATTR, constant_value
from aquas.synth.binding import UNITS_ATTR, class_of
from aquas.synth.fsm import AFFINE_OPS, FREE_OPS, MEM_OPS, carried_read, sram_read
from aquas.synth.modulo import (
    CarriedDependence,
    LoopProblem,
    ModuloSchedule,
    modulo_schedule,
    verify_modulo,
)
from aquas.synth.oplib import MultiCycleOp, OperatorLibrary
from aquas.synth.schedule import Access, Affine, access_distance, list_schedule

PIPELINE_MODES = ("auto", "directive", "off")
"""Flow modes: ``auto`` (directives, and loops over scratchpad data that are not unrolled,
where it saves cycles), ``directive`` (only ``#[pipeline]`` loops), ``off``."""

PREDICATE_MODES = ("auto", "always", "never")
"""Where ``pipeline_loops`` makes a predicated kernel instead of prologue, kernel and
epilogue (``pipeline_loop``): ``auto`` where no operator is slower than a cycle, the
kernel takes no more states and the loop at most one more cycle; ``always`` wherever
the loop is ``predicable``; ``never``."""

PIPELINE_OFF = -1
"""``aquas.pipeline`` value of ``#[pipeline(off)]``: never pipeline this loop."""

SELECT_USERS = 64
"""Users of a shared unit the pipeliner leaves room for in front of a shareable multiply
(an AND and 6 ORs; ``_chained_with_select``)."""

MAX_CARRIED = 16
"""Iteration distances up to which carried scratchpad dependences are searched; a
pipeline never has more stages than this, so longer distances cannot be broken."""


@dataclass
class LoopReport:
    """What happened to one candidate loop (``ii`` is 0 when it was not pipelined)."""

    isax: str
    source: str
    trip: int
    body_cycles: int
    ii: int = 0
    res_mii: int = 0
    rec_mii: int = 0
    limit: str = ""
    stages: int = 0
    iteration_latency: int = 0
    reason: str = ""
    requested: bool = False
    kernel_states: int = 0
    """The kernel's states as the FSM builder schedules it (the II realised)."""
    predicated: bool = False
    """A predicated kernel (``pipeline_loop``), not prologue, kernel and epilogue."""
    kernel: scf.ForOp | None = field(default=None, repr=False, compare=False)

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "trip": self.trip,
            "body_cycles": self.body_cycles,
            "ii": self.ii,
            "res_mii": self.res_mii,
            "rec_mii": self.rec_mii,
            "limit": self.limit,
            "stages": self.stages,
            "iteration_latency": self.iteration_latency,
            "not_pipelined": self.reason,
            "requested": self.requested,
            "predicated": self.predicated,
        }


def _where(op: Operation) -> str:
    loc = loc_of(op)
    return f"{PurePath(loc.filename).name}:{loc.line}:{loc.column}" if loc else "?"


def _inside(v: SSAValue, loop: scf.ForOp) -> bool:
    """Whether ``v`` is defined in ``loop``'s body (so it changes between iterations)."""
    block: Block | None
    if isinstance(v, BlockArgument):
        block = v.owner
    else:
        assert isinstance(v, OpResult)
        block = v.owner.parent_block()
    while block is not None:
        if block is loop.body.block:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


def _shift(access: Access, loop: scf.ForOp, p: int) -> Access | None:
    """``access`` as it is ``p`` iterations later (None: its index varies otherwise)."""
    idx = access.index
    if idx is None:
        return access
    iv = loop.body.block.args[0]
    const = idx.const
    for term, k in idx.terms:
        if term is iv:
            const += k * p
        elif isinstance(term, SSAValue) and _inside(term, loop):
            return None
    return Access(
        access.array,
        access.banks,
        access.write,
        Affine(const % (1 << idx.bits), idx.terms, idx.bits),
        access.alias,
    )


def loop_problem(
    loop: scf.ForOp,
    clock_ns: float,
    budget_ns: float,
    lib: OperatorLibrary,
    units: int | None = None,
    split: bool = True,
) -> tuple[LoopProblem, list[Operation]] | str:
    """The modulo-scheduling problem of ``loop``'s body and its operations in program
    order, or why the loop cannot be pipelined; ``units``: the ISAX's ``#[mul_units]``.
    With ``split``, a split unit's multiply (``split_unit_op``) is read its latency after
    its issue (``problem.body.latency``); else it is chained in a cycle like any op."""
    from aquas.synth.fsm import segment_problem
    from aquas.synth.timing import op_delay

    body = loop.body.block
    ops = [o for o in body.ops if not isinstance(o, scf.YieldOp)]
    for o in ops:
        if o.regions:
            return (
                f"its body holds a {o.name} ({_where(o)}); only straight-line bodies are pipelined"
            )
        if isinstance(o, MEM_OPS):
            return f"its body uses the memory interface ({_where(o)})"
        if isinstance(o, aq.WriteRdOp):
            return "its body writes rd"
    work = [o for o in ops if not (isinstance(o, FREE_OPS) and not o.operands)]
    dl = {o: _chained_with_select(lib, o, budget_ns) for o in work}
    for o in work:
        # slower than a cycle: multi-cycle in the state machine, which a kernel cannot
        # hold (once timing closure lets the derated delays decide that, by those)
        if (op_delay(lib, o) if lib.derate_fit else dl[o]) > budget_ns:
            return f"{o.name} ({_where(o)}) is slower than a cycle"
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    producers: list[Operation] = []
    for y in yield_op.arguments:
        if not isinstance(y, OpResult) or y.owner not in work:
            return "an iteration value does not change in the loop"
        if y.owner in producers:
            return "two iteration values are the same value"
        producers.append(y.owner)
    slow = unit_ops(lib, work, budget_ns, units) if split else {}
    shared = _unit_limit(units, lib, len(work) if slow else None)
    problem = segment_problem(work, lambda o: dl[o], clock_ns, budget_ns, slow, shared=shared)
    loop_p = LoopProblem(problem, sram_reads=_data_cycle_reads(work))
    # iteration values: the yielded value of one iteration feeds the next
    for arg, y, init in zip(body.args[1:], yield_op.arguments, loop.iter_args, strict=True):
        src = y.owner
        assert isinstance(src, Operation)
        # the spec variable: the block argument is unnamed, its initial value is not
        name = arg.name_hint or init.name_hint or y.name_hint
        what = f"%{name}" if name else "an iteration value"
        for use in arg.uses:
            if use.operation in work:
                d = 1 if sram_read(src) else slow[src].latency if src in slow else 0
                loop_p.carried.append(
                    CarriedDependence(src, use.operation, d, 1, f"{what} to the next iteration")
                )
    # storage: an access and a conflicting one some iterations later
    trip = _trip(loop) or 0
    accesses = [(o, a) for o in work for a in problem.accesses.get(o, ())]
    reach = max(1, min(MAX_CARRIED, trip - 1))
    for x, ax in accesses:
        for y, ay in accesses:
            if ax.array != ay.array or not (ax.write or ay.write):
                continue
            for p in range(1, reach + 1):
                later = _shift(ay, loop, p)
                if later is None or ax.may_overlap(later):
                    what = (
                        f"{'write' if ay.write else 'read'} after {'write' if ax.write else 'read'}"
                    )
                    loop_p.carried.append(
                        CarriedDependence(
                            x,
                            y,
                            access_distance(ax, ay),
                            p,
                            f"{what} of @{ax.array}, {p} iteration(s) apart",
                        )
                    )
                    break
    return loop_p, work


def _chained_with_select(lib: OperatorLibrary, op: Operation, budget_ns: float) -> float:
    """The delay the modulo schedule chains for ``op``: :func:`timing.chained_delay`, plus
    for a multiply the binding may share (``binding.class_of``) the delay of a shared
    unit's input select over up to ``SELECT_USERS`` users, when the op still fits the
    cycle with it.

    The prologue and epilogue copy each stage's operators, so a pipelined multiply has
    as many copies as stages, in different states: shared units serve them all, but only
    if the kernel's stage leaves room for the select in front of the unit. Without the
    allowance the stage is packed to the cycle, sharing makes the ISAX more than 10 %
    slower, and every copy keeps a multiplier of its own (the point-cloud covariance at
    10 ns: 12 multipliers of 33 bits instead of 6 shared units, for the same cycles)."""
    from aquas.synth.binding import select_ns
    from aquas.synth.timing import chained_delay

    d = chained_delay(lib, op, budget_ns)
    c = class_of(op, lib)
    if c is None:
        return d
    with_select = d + select_ns(lib, c.width, SELECT_USERS)
    return with_select if with_select <= budget_ns else d


def split_unit_op(lib: OperatorLibrary, op: Operation, budget_ns: float) -> MultiCycleOp | None:
    """How the state machine will run ``op`` when it is a multiply the binding puts on a
    split unit (``binding.Sharing.plan``: slower than a cycle alone on the derated library,
    without multi-cycle fits, each split stage within the cycle): issued behind the
    unit's input select, its product read ``REGISTERED_LATENCY + 1`` cycles later, a new
    issue every cycle. Else None.

    The modulo schedule then places the product's users that many cycles after the issue,
    usually in a later stage: the kernel issues the multiply and the next kernel iteration
    takes its product in flight (``fsm.FsmBuilder.in_flight``), so the kernel keeps its II
    instead of waiting for the product within the iteration (the point cloud's covariance:
    6 states a point on two split units, not the II of 3)."""
    from aquas.synth.binding import REGISTERED_LATENCY, narrowing, select_ns, split_stage_ns
    from aquas.synth.timing import op_delay

    c = class_of(op, lib)
    if lib.derate_fit or c is None or op_delay(lib, op) <= budget_ns:
        return None
    if max(split_stage_ns(lib, c, narrowing([op]))) > budget_ns:
        return None
    ext = op.parent_op()
    while ext is not None and not isinstance(ext, aq.ExtensionOp):
        ext = ext.parent_op()
    if ext is not None and sum(class_of(o, lib) == c for o in ext.walk()) < 2:
        return None  # a class of one op shares nothing: it keeps its own operator
    return MultiCycleOp(
        unit=c.kind,
        width=c.width,
        latency=REGISTERED_LATENCY + 1,
        ii=1,
        issue_ns=select_ns(lib, c.width, SELECT_USERS),
        cells=0,
        depth=0,
        pipelined=True,
    )


def split_unit_ops(
    lib: OperatorLibrary, ops: list[Operation], budget_ns: float
) -> dict[Operation, MultiCycleOp]:
    """The split units' multiplies among ``ops`` (``split_unit_op``)."""
    return {o: spec for o in ops if (spec := split_unit_op(lib, o, budget_ns)) is not None}


def fit_scratchpads(module: ModuleOp) -> None:
    """The SRAM scratchpads' banks as synthesis fits them (``sram.fit_partitions``, for
    the reference 32-bit ISAX master) before loops are pipelined and states scheduled:
    the delays depend on them (``timing.bank_select_ns``), so the passes
    ``aquas-pipeline-loops`` and ``aquas-schedule`` schedule what ``aquas synth`` does."""
    from aquas.synth.sram import fit_partitions

    for ext in [o for o in module.walk() if isinstance(o, aq.ExtensionOp)]:
        fit_partitions(ext, 32)


def unit_ops(
    lib: OperatorLibrary, ops: list[Operation], budget_ns: float, units: int | None
) -> dict[Operation, MultiCycleOp]:
    """The multiplies among ``ops`` the state machine reads some cycles after their issue:
    on split units (``split_unit_op``), and with the ISAX's ``#[mul_units(N)]``
    directive (``units``) on registered ones (``registered_unit_op``)."""
    out = split_unit_ops(lib, ops, budget_ns)
    if units is not None:
        for o in ops:
            spec = None if o in out else registered_unit_op(lib, o, budget_ns)
            if spec is not None:
                out[o] = spec
    return out


def registered_unit_op(
    lib: OperatorLibrary, op: Operation, budget_ns: float
) -> MultiCycleOp | None:
    """How the state machine will run ``op``, a kernel multiply of an ISAX with a
    ``#[mul_units(N)]`` directive, when it fits a cycle alone but not behind any shared
    unit's input select (two users'): the binding then registers its class's units
    (``binding.Sharing.plan``), and the directive puts the kernel's multiplies on them.
    Issued behind the select, its product is read ``REGISTERED_LATENCY`` cycles later, a
    new issue every cycle. Else None.

    Without it the modulo schedule chains the product in its issue cycle, and the kernel
    the binding then gets waits for each product within the iteration (the point cloud's
    covariance at derate 1.0: 8 kernel states for an II of 6, and 197 cycles instead of
    170)."""
    from aquas.synth.binding import REGISTERED_LATENCY, select_ns
    from aquas.synth.timing import chained_delay

    c = class_of(op, lib)
    if lib.derate_fit or c is None:  # (a split unit's multiply: unit_ops takes it first)
        return None
    d = chained_delay(lib, op, budget_ns)
    if d > budget_ns or d + select_ns(lib, c.width, 2) <= budget_ns:
        return None
    return MultiCycleOp(
        unit=c.kind,
        width=c.width,
        latency=REGISTERED_LATENCY,
        ii=1,
        issue_ns=select_ns(lib, c.width, SELECT_USERS),
        cells=0,
        depth=0,
        pipelined=True,
    )


def _unit_limit(
    units: int | None, lib: OperatorLibrary, unlimited: int | None = None
) -> Callable[[Operation], tuple[str, int] | None] | None:
    """With the ISAX's ``#[mul_units(N)]`` directive (``units``), the shared-multiplier
    resource of each multiply the binding would share (at most ``N`` per cycle, as the
    state machine schedules them), so that the kernel's II respects it; without one, None:
    the number of units is chosen after scheduling (``synth/binding.py``), or with
    ``unlimited`` (a split unit's multiplies are in the problem) that many per cycle."""
    if units is None and unlimited is None:
        return None
    n = units if units is not None else unlimited
    assert n is not None

    def unit(op: Operation) -> tuple[str, int] | None:
        c = class_of(op, lib)
        return None if c is None else (c.resource, n)

    return unit


def _trip(loop: scf.ForOp) -> int | None:
    lb, ub, step = (constant_value(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, (ub - lb + step - 1) // step)


def _data_cycle_reads(work: list[Operation]) -> set[Operation]:
    """The SRAM reads whose data cycle is inside the loop body (a carried read's is the
    next iteration's first cycle: ``fsm.carried_read``)."""
    return {o for o in work if sram_read(o) and not carried_read(o)}


def sequential_cycles(problem: LoopProblem) -> int:
    """States one iteration takes when the loop is not pipelined (as ``synth/fsm.py``
    schedules a segment: list scheduling, an SRAM read's data cycle inside it)."""
    sched = list_schedule(problem.body)
    n = problem.body.span(sched)
    for o in problem.sram_reads:
        n = max(n, sched.cycle[o] + 2)
    return max(n, 1)


@dataclass
class Rewrite:
    """A pipelined loop inserted before the original (still in place until ``commit``)."""

    loop: scf.ForOp
    kernel: scf.ForOp
    inserted: list[Operation]
    results: list[SSAValue]

    def commit(self) -> scf.ForOp:
        """Replaces the original loop by the pipelined one."""
        for res, v in zip(self.loop.results, self.results, strict=True):
            res.replace_all_uses_with(v)
        parent = self.loop.parent_block()
        assert parent is not None
        parent.erase_op(self.loop)
        return self.kernel

    def rollback(self) -> None:
        """Removes the pipelined loop, keeping the original."""
        parent = self.loop.parent_block()
        assert parent is not None
        for op in reversed(self.inserted):
            parent.erase_op(op)


def kernel_states(
    kernel: scf.ForOp,
    clock_ns: float,
    budget_ns: float,
    lib: OperatorLibrary,
    split: bool,
    units: int | None = None,
) -> int:
    """The states the FSM builder gives the kernel body (one segment: the same problem and
    list scheduling as ``synth/fsm.py``): the II realised. ``split``: the kernel waits for
    its split units' products (``segment_states``). It does with a prologue and epilogue,
    whose epilogue reads the last products after the loop; a predicated kernel takes them
    in flight instead (``fsm.FsmBuilder.in_flight``: its loop results for them are unused).
    ``units``: the ISAX's ``#[mul_units(N)]`` (``unit_ops``)."""
    return segment_states(list(kernel.body.block.ops), clock_ns, budget_ns, lib, split, units)


def segment_states(
    ops: list[Operation],
    clock_ns: float,
    budget_ns: float,
    lib: OperatorLibrary,
    split: bool = False,
    units: int | None = None,
) -> int:
    """The states the FSM builder gives straight-line ``ops`` as one segment (0 when they
    are all wiring). With ``split``, a split or registered unit's multiply (``unit_ops``;
    ``units``: the ISAX's ``#[mul_units(N)]``) is read its latency after its issue, as in
    straight-line code (a kernel takes its products in flight)."""
    from aquas.synth.fsm import segment_problem
    from aquas.synth.timing import chained_delay

    work = [
        o
        for o in ops
        if not isinstance(o, scf.YieldOp) and not (isinstance(o, FREE_OPS) and not o.operands)
    ]
    if not work:
        return 0
    slow = unit_ops(lib, work, budget_ns, units) if split else {}
    problem = segment_problem(
        work,
        lambda o: chained_delay(lib, o, budget_ns),
        clock_ns,
        budget_ns,
        slow,
        shared=_unit_limit(units, lib, len(work)) if slow else None,
    )
    return sequential_cycles(LoopProblem(problem, sram_reads=_data_cycle_reads(work)))


def loop_cycles(
    rewrite: Rewrite,
    states: int,
    clock_ns: float,
    budget_ns: float,
    lib: OperatorLibrary,
    units: int | None = None,
) -> int:
    """The cycles of a pipelined loop whose kernel takes ``states`` a trip, as the FSM
    builder schedules it: the prologue and epilogue as segments of their own (they join
    the code around them, so this is an upper bound), or a predicated kernel's
    initialisation state."""
    k = rewrite.inserted.index(rewrite.kernel)
    trip = _trip(rewrite.kernel) or 0
    edges = [
        segment_states(part, clock_ns, budget_ns, lib, split=True, units=units)
        for part in (rewrite.inserted[:k], rewrite.inserted[k + 1 :])
    ]
    return trip * states + (sum(edges) if any(edges) else 1)


WIDTH_CASTS = (arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp)
"""Width conversions: wiring, no delay."""


def sink_casts(
    problem: LoopProblem, sched: ModuloSchedule, work: list[Operation]
) -> ModuloSchedule:
    """``sched`` with each width conversion moved to the cycle of its first use (its
    start to the beginning of that cycle), where the schedule stays valid.

    The modulo scheduler places an extension as early as its operand allows, often a
    stage before its use; the value then crosses stages at the extended width, and the
    operator using it reads a wide register instead of an extension. A multiply of two
    sign-extended ``i16`` loads became a 32 x 32 multiplier that way (its narrowing,
    ``binding.narrowing``, sees through extensions, not registers): the DSP's pipelined
    ``vdot32`` kernel missed the core's clock by 0.05 ns on OSU018. Moved to its use, the
    extension is wiring in front of the operator and the narrow value is carried."""
    cycle, start = dict(sched.cycle), dict(sched.start)
    inside = set(work)
    for o in reversed(work):  # a cast feeding a cast moves after the later one has
        if not isinstance(o, WIDTH_CASTS):
            continue
        users = [u.operation for u in o.results[0].uses]
        if not users or any(u not in inside for u in users):
            continue  # yielded to the next iteration: it stays where the value is made
        first = min(cycle[u] for u in users)
        if first > cycle[o]:
            cycle[o], start[o] = first, 0.0
    moved = replace(sched, cycle=cycle, start=start)
    return moved if not verify_modulo(problem, moved) else sched


PREDICATED_OPS = (aq.SpmReadOp, aq.SpmWriteOp, aq.StateWriteOp)
"""The operations a predicated kernel predicates on their stage's valid bit: the storage
accesses (a read of an invalid iteration may be out of bounds)."""


def predicable(loop: scf.ForOp, n_stages: int) -> bool:
    """Whether ``loop`` can become a predicated kernel: its induction variable, counted on
    for ``S - 1`` more iterations, stays non-negative and below the sign bit of its type,
    so that one unsigned comparison tells the valid iterations."""
    lb, step, trip = constant_value(loop.lb), constant_value(loop.step), _trip(loop)
    ty = loop.body.block.args[0].type
    if lb is None or step is None or trip is None or not isinstance(ty, IntegerType):
        return False
    return lb >= 0 and lb + (trip + n_stages - 1) * step < 1 << (ty.width.data - 1)


def pipeline_loop(
    loop: scf.ForOp, sched: ModuloSchedule, work: list[Operation], predicated: bool = False
) -> Rewrite:
    """Inserts ``loop`` rewritten by ``sched`` before it; ``commit`` the result to replace
    the loop.

    Without ``predicated``: a prologue, a kernel of ``T - S + 1`` iterations and an
    epilogue. With it (``predicable``): the kernel alone, run ``T + S - 1`` times. Stage
    ``s`` of kernel iteration ``k`` runs iteration ``k - s``, which is valid when
    ``0 <= k - s < T``: a valid bit made in stage 0 (``iv < ub``) travels with the
    iteration through ``S - 1`` one-bit slots whose initial values are false. A stage's
    storage accesses are predicated on its bit, and an iteration value keeps its previous
    value unless the iteration that yields it is valid (a select; folded into the value's
    own select where it is one, ``best = select(closer, d, best)``). Nothing else needs
    the bit: an invalid iteration's values reach only other operations of invalid
    iterations. The prologue and epilogue copies go (``S - 1`` iterations of operators and
    their states) for the same cycles within a few: the kernel's II states for each of
    the ``S - 1`` extra iterations, where the straight-line copies are list-scheduled."""
    lb, step, trip = constant_value(loop.lb), constant_value(loop.step), _trip(loop)
    assert lb is not None and step is not None and trip is not None
    parent = loop.parent_block()
    assert parent is not None
    body = loop.body.block
    iv = body.args[0]
    ty = iv.type
    assert isinstance(ty, IntegerType)
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    n_st = sched.stages
    stage = {o: sched.stage(o) for o in work}
    producer_of_arg = {a: y.owner for a, y in zip(body.args[1:], yield_op.arguments, strict=True)}
    init_of = {y.owner: init for y, init in zip(yield_op.arguments, loop.iter_args, strict=True)}
    hoist: dict[SSAValue, SSAValue] = {}

    inserted: list[Operation] = []

    def put(op: Operation) -> Operation:
        parent.insert_op_before(op, loop)
        inserted.append(op)
        return op

    def const(v: int) -> SSAValue:
        c = put(arith.ConstantOp(IntegerAttr(v, ty)))
        c.location = loop.location
        return c.results[0]

    for o in body.ops:
        if isinstance(o, FREE_OPS) and not o.operands:
            new = put(o.clone())
            hoist.update(zip(o.results, new.results, strict=True))

    # Index arithmetic on the induction variable is recomputed in each stage that uses
    # it rather than carried in a register: carried, it would be opaque to the FSM's bank
    # and conflict analysis (``affine_index``), which would then serialise accesses the
    # modulo schedule overlapped.
    affine: set[Operation] = set()
    for o in work:
        if isinstance(o, AFFINE_OPS) and all(
            v is iv
            or (isinstance(v, OpResult) and v.owner in affine)
            or not _inside(v, loop)
            or (isinstance(v, OpResult) and isinstance(v.owner, FREE_OPS) and not v.owner.operands)
            for v in o.operands
        ):
            affine.add(o)

    def need(o: Operation, v: SSAValue, s: int) -> tuple[Operation, int] | None:
        """(producer, stage distance) of operand ``v`` of an op at stage ``s``; None for
        the induction variable and values from outside the body."""
        if isinstance(v, BlockArgument) and v in producer_of_arg:
            u = producer_of_arg[v]
            assert isinstance(u, Operation)
            return u, s + 1 - stage[u]
        if isinstance(v, OpResult) and v.owner in stage:
            return v.owner, s - stage[v.owner]
        return None

    # slots each produced value needs: the deepest stage distance of its uses
    depth: dict[SSAValue, int] = {}
    for o in work:
        for v in o.operands:
            n = need(o, v, stage[o])
            if n is None:
                continue
            d = n[1]
            assert d >= 0, "the modulo schedule broke a dependence"
            if not isinstance(v, BlockArgument) and n[0] in affine:
                continue  # recomputed where it is used
            key = yield_op.arguments[v.index - 1] if isinstance(v, BlockArgument) else v
            depth[key] = max(depth.get(key, 0), d)
    for y in yield_op.arguments:
        assert isinstance(y, OpResult)
        # the loop result of the last iteration leaves the kernel; predicated, the
        # select keeping an iteration value reads the value's previous one
        if stage[y.owner] == 0 or predicated:
            depth[y] = max(depth.get(y, 0), 1)
    # predicated: the valid bit of stage 0's iteration, and of each later stage's
    valid: arith.CmpiOp | None = None
    if predicated:
        # its operands are the kernel's (made below): the loop's until then
        valid = arith.CmpiOp(iv, loop.ub, "ult")
        valid.result.name_hint = "valid"
        users = [stage[o] for o in work if isinstance(o, PREDICATED_OPS)]
        users += [stage[y.owner] for y in yield_op.arguments if isinstance(y, OpResult)]
        if max(users, default=0):
            depth[valid.result] = max(users)

    straight: dict[tuple[int, SSAValue], SSAValue] = {}
    final: dict[tuple[SSAValue, int], SSAValue] = {}

    def lookup(j: int, v: SSAValue) -> SSAValue:
        """Value ``v`` of iteration ``j`` outside the kernel."""
        if j < 0:
            assert isinstance(v, OpResult)
            return init_of[v.owner]
        if (j, v) in straight:
            return straight[(j, v)]
        assert isinstance(v, OpResult)
        if v.owner in affine:  # computed in the kernel, recomputed here
            return recompute(v, const(lb + j * step), straight_memo.setdefault(j, {}), put)
        return final[(v, trip - stage[v.owner] - j)]

    straight_memo: dict[int, dict[SSAValue, SSAValue]] = {}

    def recompute(
        v: SSAValue,
        iv_value: SSAValue,
        memo: dict[SSAValue, SSAValue],
        add: Callable[[Operation], Operation],
    ) -> SSAValue:
        """``v`` (the result of index arithmetic) for the iteration whose induction
        variable is ``iv_value``, cloned through ``add``."""
        if v is iv:
            return iv_value
        if v in hoist:
            return hoist[v]
        if not (isinstance(v, OpResult) and v.owner in affine):
            return v  # from outside the loop
        if v not in memo:
            o = v.owner
            mapper = {x: recompute(x, iv_value, memo, add) for x in o.operands}
            new = add(o.clone(value_mapper=mapper))
            memo.update(zip(o.results, new.results, strict=True))
        return memo[v]

    def emit_straight(s: int, j: int) -> None:
        iv_j = const(lb + j * step)
        for o in work:
            if stage[o] != s:
                continue
            mapper: dict[SSAValue, SSAValue] = {}
            for v in o.operands:
                if v is iv:
                    mapper[v] = iv_j
                elif isinstance(v, BlockArgument) and v in producer_of_arg:
                    mapper[v] = lookup(j - 1, yield_op.arguments[v.index - 1])
                elif v in hoist:
                    mapper[v] = hoist[v]
                elif isinstance(v, OpResult) and v.owner in stage:
                    mapper[v] = lookup(j, v)
            new = put(o.clone(value_mapper=mapper))
            for r, nr in zip(o.results, new.results, strict=True):
                straight[(j, r)] = nr

    if not predicated:
        for k in range(n_st - 1):
            for s in range(k, -1, -1):
                emit_straight(s, k - s)

    # the kernel: iv, then the slots of each value
    slots = [(v, d) for v in depth for d in range(1, depth[v] + 1)]
    kbody = Block(arg_types=[ty, *[v.type for v, _ in slots]])
    k_iv = kbody.args[0]
    k_iv.name_hint = iv.name_hint
    slot_arg: dict[tuple[SSAValue, int], SSAValue] = {}
    for (v, d), a in zip(slots, kbody.args[1:], strict=True):
        assert isinstance(v, OpResult)
        a.name_hint = f"{v.name_hint or v.owner.name.split('.')[-1]}_s{d}"
        slot_arg[(v, d)] = a
    k0 = 0 if predicated else n_st - 1
    inits = []
    carried: dict[SSAValue, SSAValue] = {
        y: init_of[y.owner] for y in yield_op.arguments if isinstance(y, OpResult)
    }
    for v, d in slots:
        if not predicated:
            assert isinstance(v, OpResult)
            inits.append(lookup(k0 - stage[v.owner] - d, v))
        elif v in carried:  # no valid iteration has yielded it yet
            inits.append(carried[v])
        else:  # a value of an iteration before the first: never used (false: the bits)
            assert isinstance(v.type, IntegerType)
            inits.append(put(arith.ConstantOp(IntegerAttr(0, v.type))).results[0])
    current: dict[SSAValue, SSAValue] = {}

    def in_kernel(v: SSAValue, d: int) -> SSAValue:
        return current[v] if d == 0 else slot_arg[(v, d)]

    def kadd(op: Operation) -> Operation:
        kbody.add_op(op)
        return op

    for s in range(n_st - 1, -1, -1):
        iv_s: SSAValue = k_iv
        if s:
            sub = arith.SubiOp(k_iv, const(s * step))
            sub.location = loop.location
            kbody.add_op(sub)
            iv_s = sub.result
        memo: dict[SSAValue, SSAValue] = {}
        if valid is not None and s == 0:
            valid.operands = (k_iv, const(lb + trip * step))
            valid.attributes[KERNEL_CYCLE_ATTR] = IntegerAttr(0, i64)
            kbody.add_op(valid)
            current[valid.result] = valid.result
        for o in work:
            if stage[o] != s:
                continue
            mapper: dict[SSAValue, SSAValue] = {}
            for v in o.operands:
                if v is iv:
                    mapper[v] = iv_s
                elif v in hoist:
                    mapper[v] = hoist[v]
                else:
                    n = need(o, v, s)
                    if (
                        n is not None
                        and n[1]
                        and not isinstance(v, BlockArgument)
                        and n[0] in affine
                    ):
                        mapper[v] = recompute(v, iv_s, memo, kadd)
                    elif n is not None:
                        src = yield_op.arguments[v.index - 1] if isinstance(v, BlockArgument) else v
                        mapper[v] = in_kernel(src, n[1])
            new = o.clone(value_mapper=mapper)
            cycle = IntegerAttr(sched.cycle[o] % sched.ii, i64)
            new.attributes[KERNEL_CYCLE_ATTR] = cycle
            if valid is not None and isinstance(new, PREDICATED_OPS):
                assert new.pred is None
                new.operands = (*new.operands, in_kernel(valid.result, s))
            kbody.add_op(new)
            for r, nr in zip(o.results, new.results, strict=True):
                current[r] = nr
            if valid is not None and o.results and o.results[0] in carried:
                y = o.results[0]
                kept = _keep_unless(kbody, new, in_kernel(valid.result, s), slot_arg[(y, 1)])
                assert isinstance(kept, OpResult)
                kept.owner.attributes[KERNEL_CYCLE_ATTR] = cycle
                current[y] = kept
    kbody.add_op(scf.YieldOp(*[current[v] if d == 1 else slot_arg[(v, d - 1)] for v, d in slots]))
    ub = const(lb + (trip + n_st - 1) * step) if predicated else loop.ub
    kernel = put(scf.ForOp(const(lb + k0 * step), ub, loop.step, inits, kbody))
    assert isinstance(kernel, scf.ForOp)
    kernel.location = loop.location
    for (v, d), r in zip(slots, kernel.results, strict=True):
        final[(v, d)] = r
    if predicated:  # each iteration value as the last valid iteration left it
        return Rewrite(loop, kernel, inserted, [final[(y, 1)] for y in yield_op.arguments])

    for k in range(trip, trip + n_st - 1):
        for s in range(n_st - 1, k - trip, -1):
            emit_straight(s, k - s)

    results = [lookup(trip - 1, y) for y in yield_op.arguments]
    return Rewrite(loop, kernel, inserted, results)


def _keep_unless(block: Block, op: Operation, ok: SSAValue, prev: SSAValue) -> SSAValue:
    """The iteration value ``op`` yields where ``ok`` holds, else ``prev`` (its value
    before), added to ``block``. A select keeping ``prev`` already (``best =
    select(closer, d, best)``) takes ``closer & ok`` as its condition instead of a
    second select after it (one AND gate off the recurrence's data path)."""
    if isinstance(op, arith.SelectOp) and op.operands[2] is prev:
        both = arith.AndIOp(op.operands[0], ok)
        block.insert_op_before(both, op)
        both.attributes[KERNEL_CYCLE_ATTR] = op.attributes[KERNEL_CYCLE_ATTR]
        op.operands = (both.result, *op.operands[1:])
        return op.results[0]
    sel = arith.SelectOp(ok, op.results[0], prev)
    block.add_op(sel)
    return sel.result


def _reads_scratchpad(loop: scf.ForOp) -> bool:
    return any(isinstance(o, aq.SpmReadOp | aq.SpmWriteOp) for o in loop.body.walk())


def pipeline_loops(
    module: ModuleOp,
    clock_ns: float,
    lib: OperatorLibrary | None = None,
    auto: bool = False,
    predicate: str = "auto",
) -> list[LoopReport]:
    """Pipelines the loops of ``module`` that ask for it (with ``auto``, also the loops
    over scratchpad data that are not unrolled); returns one report per candidate.
    ``predicate`` (``PREDICATE_MODES``): where to make predicated kernels."""
    if predicate not in PREDICATE_MODES:
        raise AquasError(
            f"unknown predication mode {predicate!r}", hint="use " + ", ".join(PREDICATE_MODES)
        )
    from aquas.synth.timing import OVERHEAD_LEVELS, op_delay

    lib = lib or OperatorLibrary.load()
    budget = clock_ns - OVERHEAD_LEVELS * lib.ns_per_level
    reports: list[LoopReport] = []
    for isax in [o for o in module.walk() if isinstance(o, aq.IsaxOp)]:
        loops = [o for o in isax.walk() if isinstance(o, scf.ForOp)]
        attr = isax.attributes.get(UNITS_ATTR)
        units = int(attr.value.data) if isinstance(attr, IntegerAttr) else None
        for loop in loops:
            attr = loop.attributes.get(PIPELINE_ATTR)
            want = int(attr.value.data) if isinstance(attr, IntegerAttr) else None
            if want == PIPELINE_OFF:
                continue
            if want is None and not (
                auto and UNROLL_ATTR not in loop.attributes and _reads_scratchpad(loop)
            ):
                continue
            if any(isinstance(o, scf.ForOp) for o in loop.body.walk()):
                if want is not None:
                    raise AquasError(
                        "only innermost loops can be pipelined",
                        loc_of(loop),
                        hint="move #[pipeline] to the inner loop",
                    )
                continue
            trip = _trip(loop) or 0
            rep = LoopReport(isax.sym_name.data, _where(loop), trip, 0, requested=want is not None)
            reports.append(rep)
            got = loop_problem(loop, clock_ns, budget, lib, units)
            if isinstance(got, str):
                rep.reason = got
                continue
            problem, work = got
            rep.body_cycles = sequential_cycles(problem)
            sched = modulo_schedule(problem, rep.body_cycles, max(1, want or 1))
            in_flight = bool(problem.body.latency)
            if sched is not None and sched.ii < max(problem.body.latency.values(), default=0):
                # below the split units' latency a product would reach an iteration after
                # the next, which the state machine does not take in flight: the kernel
                # waits for it, so the schedule chains it in a cycle (fewer stages)
                got = loop_problem(loop, clock_ns, budget, lib, units, split=False)
                assert not isinstance(got, str)
                problem, work = got
                rep.body_cycles = sequential_cycles(problem)
                sched = modulo_schedule(problem, rep.body_cycles, max(1, want or 1))
                in_flight = False
            if sched is None:
                rep.reason = f"no II below the body's {rep.body_cycles} cycle(s)"
                continue
            bad = verify_modulo(problem, sched)
            assert not bad, bad
            sched = sink_casts(problem, sched, work)
            if sched.stages > trip or sched.stages > MAX_CARRIED:
                rep.reason = f"{sched.stages} stages for {trip} iteration(s)"
                continue
            rep.ii, rep.res_mii, rep.rec_mii = sched.ii, sched.res_mii, sched.rec_mii
            rep.limit, rep.stages = sched.limit, sched.stages
            rep.iteration_latency = sched.latency(problem.sram_reads)
            rewrite = pipeline_loop(loop, sched, work)
            # The kernel as the FSM builder will schedule it: an index carried from one
            # stage to the next is opaque to its bank and conflict analysis, which may
            # serialise accesses the modulo schedule overlapped.
            rep.kernel_states = kernel_states(
                rewrite.kernel, clock_ns, budget, lib, in_flight, units
            )
            if (
                predicate != "never"
                and sched.stages > 1
                and predicable(loop, sched.stages)
                and (
                    predicate == "always"
                    or not any(
                        op_delay(lib, o) > budget and o not in problem.body.latency for o in work
                    )
                )
            ):
                # One copy of the operators instead of S, unless the valid bits cost the
                # kernel a state (their AND or select did not fit where the modulo
                # schedule packed the stage). Not where an operator is slower than a
                # cycle on the (derated) library, unless it is a split unit's multiply
                # whose product the kernel takes in flight: the state machine would wait
                # for it in the kernel, which then takes more states than its II, and each
                # of the S - 1 extra iterations pays them all (the point cloud's v3ddist
                # at derate 1.32: 171 -> 198 cycles) where the copies overlap.
                alt = pipeline_loop(loop, sched, work, predicated=True)
                states = kernel_states(alt.kernel, clock_ns, budget, lib, False, units)
                # a cycle more, for the initialisation state the prologue took
                if predicate == "always" or (
                    states <= rep.kernel_states
                    and loop_cycles(alt, states, clock_ns, budget, lib, units)
                    <= 1 + loop_cycles(rewrite, rep.kernel_states, clock_ns, budget, lib, units)
                ):
                    rewrite.rollback()
                    rewrite, rep.kernel_states, rep.predicated = alt, states, True
                else:
                    alt.rollback()
            # iterations start every II cycles and the last one takes its full latency
            pipelined = (trip - 1) * rep.kernel_states + rep.iteration_latency
            if want is None and pipelined >= trip * rep.body_cycles:
                rewrite.rollback()
                rep.ii = 0
                rep.reason = (
                    f"about {pipelined} cycles pipelined (kernel of {rep.kernel_states} "
                    f"states) against {trip * rep.body_cycles} without"
                )
                continue
            loop.attributes.pop(PIPELINE_ATTR, None)
            rep.kernel = rewrite.commit()
    if any(rep.kernel is not None for rep in reports):
        from xdsl.pattern_rewriter import PatternRewriteWalker
        from xdsl.transforms.dead_code_elimination import dce

        from aquas.synth.prepare import FoldConstantOperands

        # the prologue and epilogue compute index arithmetic at constant induction
        # values: folded, their scratchpad accesses have constant elements (a bank and row
        # known at compile time) instead of an index held in a register and divided into
        # bank and row at run time by a reciprocal multiply (synth/sram.py)
        PatternRewriteWalker(FoldConstantOperands()).rewrite_module(module)
        _check_constant_indices(module)
        # index arithmetic recomputed in later stages may leave its first copy unused
        dce(module)
    return reports


def _check_constant_indices(module: ModuleOp) -> None:
    """A prologue or epilogue access whose folded element is outside its scratchpad is an
    access of the loop itself (every copy runs an iteration within the trip count): the
    spec indexes out of bounds in its first or last iterations."""
    for op in module.walk():
        if not isinstance(op, aq.SpmReadOp | aq.SpmWriteOp):
            continue
        idx = constant_value(op.index)
        size = aq.scratchpad_of(op).size
        if idx is not None and not 0 <= idx < size:
            raise AquasError(
                f"scratchpad @{op.scratchpad.root_reference.data} of {size} elements is "
                f"indexed at {idx} in an iteration of this pipelined loop",
                loc_of(op),
                hint="the loop's first or last iterations index out of bounds; check its "
                "range and the index expression",
            )


@dataclass(frozen=True)
class AquasPipelineLoopsPass(ModulePass):
    """Software-pipelines ``#[pipeline]`` loops (modulo schedule, prologue/kernel/epilogue).

    Run after ``aquas-unroll`` and ``aquas-if-convert`` (only straight-line innermost
    bodies are pipelined)."""

    name = "aquas-pipeline-loops"

    # int as well, so that the pipeline text `clock-ns=10` is accepted
    clock_ns: int | float = 10.0
    """Target clock period (ns); the operator library's delays are chained within it."""

    auto: bool = False
    """Also pipeline loops over scratchpad data that are not unrolled."""

    predicate: str = "auto"
    """Where to make predicated kernels (``PREDICATE_MODES``)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.clock_ns > 0 or self.clock_ns == float("inf"):
            raise AquasError(
                f"aquas-pipeline-loops: clock-ns must be a positive number, not {self.clock_ns}"
            )
        fit_scratchpads(op)
        pipeline_loops(op, float(self.clock_ns), auto=self.auto, predicate=self.predicate)
