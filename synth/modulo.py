"""Modulo scheduling of a loop body: the initiation interval (II) at which iterations can
start, and the cycle of every operation within one iteration.

The problem is the body's :class:`~aquas.synth.schedule.SchedulingProblem` (dependences
within one iteration, chaining delays, per-cycle resource limits) plus *carried*
dependences between iterations: ``src`` in iteration ``i`` before ``dst`` in iteration
``i + iterations`` (an accumulator through the loop's iteration arguments, a scratchpad
element written in one iteration and read in a later one, a state register). Iteration
``i`` starts ``i * II`` cycles after the first, so a carried dependence asks for
``cycle(dst) + iterations * II >= cycle(src) + distance`` (chained within a cycle when
``distance`` is 0, as in the body problem).

* **ResMII**: each resource (a scratchpad bank's ports, a state register's write port) is
  used ``n`` times per iteration with limit ``k``, so ``II >= ceil(n / k)``. An SRAM read
  may take the kernel's last cycle: its consumers are in later stages, so its data goes to
  the next kernel iteration through the bank's read port (``fsm.carried_read``).
* **RecMII**: the smallest II at which the dependences alone (no resources) have a
  schedule; found by relaxing the constraints to their least fixed point (longest paths
  with chaining; a recurrence longer than ``iterations * II`` cycles never settles).
* **Scheduling**: from ``max(ResMII, RecMII)`` upwards, operations are placed in program
  order at the earliest cycle that their placed predecessors, the recurrence bounds and a
  modulo reservation table allow; the first II at which every constraint holds wins. This
  is Rau's iterative modulo scheduling without eviction (a failed II moves to the next),
  which keeps it simple and deterministic; loop bodies are small.

This module knows nothing of the aquas dialect (``synth/loop_pipeline.py`` builds the
problem from IR and rewrites the loop).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.ir import Operation

from aquas.synth.schedule import EPS_NS, SchedulingProblem, describe


@dataclass(frozen=True)
class CarriedDependence:
    """``dst`` of iteration ``i + iterations`` no earlier than ``distance`` cycles after
    ``src`` of iteration ``i`` (chained behind it when ``distance`` is 0)."""

    src: Operation
    dst: Operation
    distance: int
    iterations: int
    reason: str


@dataclass
class LoopProblem:
    """One iteration's problem, the dependences between iterations, and the SRAM reads
    whose data cycle is inside the iteration (for its latency; a carried read's data
    cycle is the next iteration's, ``fsm.carried_read``)."""

    body: SchedulingProblem
    carried: list[CarriedDependence] = field(default_factory=list)
    sram_reads: set[Operation] = field(default_factory=set)


@dataclass
class ModuloSchedule:
    ii: int
    res_mii: int
    rec_mii: int
    cycle: dict[Operation, int]
    start: dict[Operation, float]
    limit: str
    """What keeps II from being lower (empty when II is 1)."""

    def stage(self, op: Operation) -> int:
        return self.cycle[op] // self.ii

    @property
    def stages(self) -> int:
        return max((c // self.ii for c in self.cycle.values()), default=0) + 1

    def latency(self, sram_reads: set[Operation]) -> int:
        """Cycles one iteration takes from its first cycle to its last (an SRAM read's
        data cycle included)."""
        return max((c + (2 if op in sram_reads else 1) for op, c in self.cycle.items()), default=0)


Time = tuple[int, float]  # (cycle, start within the cycle)


def _later(a: Time, b: Time) -> bool:
    """``a`` strictly after ``b`` (start times compared with a rounding tolerance)."""
    return a[0] > b[0] or (a[0] == b[0] and a[1] > b[1] + EPS_NS)


class _Edge:
    __slots__ = ("distance", "dst", "iterations", "src")

    def __init__(self, src: Operation, dst: Operation, distance: int, iterations: int):
        self.src, self.dst, self.distance, self.iterations = src, dst, distance, iterations


def _edges(problem: LoopProblem) -> list[_Edge]:
    out = [_Edge(d.src, d.dst, d.distance, 0) for d in problem.body.dependences.values()]
    out += [_Edge(d.src, d.dst, d.distance, d.iterations) for d in problem.carried]
    return out


def _bound(problem: LoopProblem, e: _Edge, at: Time, ii: int) -> Time:
    """The earliest time ``e.dst`` may take with ``e.src`` at ``at``."""
    c = at[0] - e.iterations * ii
    if e.distance == 0:
        return (c, at[1] + problem.body.delay[e.src])
    return (c + e.distance, 0.0)


def _fit(problem: LoopProblem, op: Operation, t: Time) -> Time:
    """The first time from ``t`` at which ``op`` finishes within its cycle."""
    c, s = t
    if c < 0:
        c, s = 0, 0.0
    if s + problem.body.delay[op] > problem.body.budget_ns + EPS_NS:
        c, s = c + 1, 0.0
    return (c, s)


def _relax(problem: LoopProblem, ii: int, edges: list[_Edge]) -> dict[Operation, Time] | None:
    """The least times satisfying ``edges`` at ``ii`` without resources (None when a
    recurrence never settles)."""
    ops = problem.body.operations
    t: dict[Operation, Time] = {op: _fit(problem, op, (0, 0.0)) for op in ops}
    for _ in range(len(ops) + 2):
        changed = False
        for e in edges:
            b = _fit(problem, e.dst, _bound(problem, e, t[e.src], ii))
            if _later(b, t[e.dst]):
                t[e.dst] = b
                changed = True
        if not changed:
            return t
    return None


def _names(ops: list[Operation]) -> str:
    """``describe`` of each op, copies from one spec line (an unrolled body) counted once."""
    count: dict[str, int] = {}
    for o in ops:
        d = describe(o)
        count[d] = count.get(d, 0) + 1
    return ", ".join(d if n == 1 else f"{d} x{n}" for d, n in count.items())


def res_mii(problem: LoopProblem) -> tuple[int, str]:
    """The resource bound and what sets it."""
    count: dict[str, int] = {}
    users: dict[str, list[Operation]] = {}
    for op in problem.body.operations:
        for r in problem.body.uses.get(op, ()):
            count[r] = count.get(r, 0) + problem.body.occupancy.get(op, 1)
            users.setdefault(r, []).append(op)
    best, why = 1, ""
    for r in sorted(count):
        need = math.ceil(count[r] / problem.body.limits[r])
        if need > best:
            ops = _names(users[r])
            best, why = (
                need,
                f"{r}: {count[r]} uses per iteration, {problem.body.limits[r]} per cycle ({ops})",
            )
    return best, why


def rec_mii(problem: LoopProblem, max_ii: int) -> tuple[int, str]:
    """The recurrence bound (at most ``max_ii``) and the carried dependence that sets it."""
    edges = _edges(problem)
    ii = 1
    while ii < max_ii and _relax(problem, ii, edges) is None:
        ii += 1
    if ii == 1:
        return 1, ""
    intra = [e for e in edges if e.iterations == 0]
    for d in problem.carried:
        alone = [*intra, _Edge(d.src, d.dst, d.distance, d.iterations)]
        if _relax(problem, ii - 1, alone) is None:
            return ii, f"recurrence {describe(d.src)} -> {describe(d.dst)} ({d.reason})"
    return ii, "recurrences through several carried dependences"


def modulo_schedule(problem: LoopProblem, max_ii: int, min_ii: int = 1) -> ModuloSchedule | None:
    """The schedule with the lowest II in ``max(min_ii, ResMII, RecMII) .. max_ii - 1``,
    or None when there is none below ``max_ii`` (pipelining would not help)."""
    body = problem.body
    body.check()
    r_mii, r_why = res_mii(problem)
    c_mii, c_why = rec_mii(problem, max(max_ii, 1))
    edges = _edges(problem)
    incoming: dict[Operation, list[_Edge]] = {op: [] for op in body.operations}
    for e in edges:
        incoming[e.dst].append(e)
    for ii in range(max(min_ii, r_mii, c_mii), max_ii):
        asap = _relax(problem, ii, edges)
        if asap is None:
            continue
        at: dict[Operation, Time] = {}
        table: dict[tuple[int, str], int] = {}
        ok = True
        for op in body.operations:
            t = asap[op]
            for e in incoming[op]:
                if e.src in at:
                    t = max(t, _bound(problem, e, at[e.src], ii))
            t = _fit(problem, op, t)
            for _ in range(2 * ii + 2):
                busy = any(
                    table.get(((t[0] + k) % ii, r), 0) >= body.limits[r]
                    for r in body.uses.get(op, ())
                    for k in range(body.occupancy.get(op, 1))
                )
                if not busy:
                    break
                t = _fit(problem, op, (t[0] + 1, 0.0))
            else:
                ok = False
                break
            at[op] = t
            for r in body.uses.get(op, ()):
                for k in range(body.occupancy.get(op, 1)):
                    key = ((t[0] + k) % ii, r)
                    table[key] = table.get(key, 0) + 1
        if not ok:
            continue
        # every constraint, including carried ones whose source was placed after its
        # destination
        if any(_later(_bound(problem, e, at[e.src], ii), at[e.dst]) for e in edges):
            continue
        if ii == 1:
            limit = ""
        elif ii == r_mii and r_mii >= c_mii:
            limit = r_why
        elif ii == c_mii:
            limit = c_why
        else:
            limit = "resource conflicts between the body's operations above the minimum II"
        return ModuloSchedule(
            ii,
            r_mii,
            c_mii,
            {op: t[0] for op, t in at.items()},
            {op: t[1] for op, t in at.items()},
            limit,
        )
    return None


def verify_modulo(problem: LoopProblem, sched: ModuloSchedule) -> list[str]:
    """Every constraint the schedule breaks (empty when valid): dependences within and
    between iterations, chaining, the budget, and resources modulo II."""
    out: list[str] = []
    at = {op: (sched.cycle[op], sched.start[op]) for op in problem.body.operations}
    for e in _edges(problem):
        if _later(_bound(problem, e, at[e.src], sched.ii), at[e.dst]):
            out.append(
                f"{describe(e.dst)} too early after {describe(e.src)} "
                f"({e.iterations} iterations later)"
            )
    table: dict[tuple[int, str], int] = {}
    for op, (c, s) in at.items():
        if s + problem.body.delay[op] > problem.body.budget_ns + EPS_NS:
            out.append(f"{describe(op)} does not fit its cycle")
        for r in problem.body.uses.get(op, ()):
            for k in range(problem.body.occupancy.get(op, 1)):
                key = ((c + k) % sched.ii, r)
                table[key] = table.get(key, 0) + 1
                if table[key] > problem.body.limits[r]:
                    out.append(f"{r} over its limit at kernel cycle {key[0]}")
    return out


__all__ = [
    "CarriedDependence",
    "LoopProblem",
    "ModuloSchedule",
    "modulo_schedule",
    "rec_mii",
    "res_mii",
    "verify_modulo",
]
