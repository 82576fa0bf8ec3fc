"""The scheduling problem of a straight-line segment, kept apart from the algorithms.

The split follows CIRCT's scheduling library: a *problem* states what any schedule must
satisfy, an *algorithm* produces a schedule, and ``verify`` checks a schedule against every
constraint of the problem without knowing which algorithm made it (or whether a person
wrote it by hand).

A problem has:

* operations, in program order (a topological order of the dependences);
* dependences ``src -> dst`` with a *distance*: 0 lets ``dst`` share ``src``'s cycle,
  chained behind it; 1 puts ``dst`` in a strictly later cycle (a memory load's consumers,
  read-after-write on a scratchpad, ...). Each carries the reason it exists;
* a combinational delay per operation (from the operator library). Operations in one
  cycle are *chained*: an operation starts when its same-cycle predecessors finish, and
  must finish within the datapath budget (the clock period minus the per-cycle overhead);
* resources with a limit of uses per cycle (a scratchpad bank's port, the memory
  interface, a shared multi-cycle unit) and the resources each operation uses, for
  ``occupancy`` cycles from its own (1 for everything but multi-cycle operations);
* a *latency* per operation: 0 for combinational ones; a multi-cycle operation (a
  sequential divider) starts in its cycle and has its result ``latency`` cycles later
  (its consumers' dependences carry that distance), and the schedule spans that cycle;
* optionally a *release* cycle per operation, the earliest it may take (a pipelined
  loop's kernel carries its modulo schedule this way, ``synth/loop_pipeline.py``);
* *accesses* to storage (a scratchpad, a state register): which array, which banks, which
  element (an affine index, when known) and whether it writes. Two accesses *conflict*
  when they may touch the same element and one of them writes; only conflicting accesses
  are ordered (``add_access`` derives the dependences), so accesses to different banks,
  to different constant indices or to ``a[i]`` and ``a[i + 1]`` share a cycle when the
  ports allow.

A schedule gives each operation a cycle (relative to the segment's first state) and a
start time within that cycle. ``list_schedule`` is the algorithm the flow uses; any other
callable with the ``Scheduler`` signature (for example an SDC or ILP formulation) can be
passed to ``FsmBuilder`` and is held to the same ``verify``.

Building a problem from aquas IR (which ops depend on which, which bank an access uses) is
``synth/fsm.py:segment_problem``; this module knows nothing of the aquas dialect.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Protocol

from xdsl.ir import Operation

from aquas.diagnostics import loc_of

# Start and finish times are sums of the same floats in the same order whoever computes
# them; the tolerance only absorbs rounding when a schedule comes from elsewhere.
EPS_NS = 1e-9


def describe(op: Operation) -> str:
    """A short, human-readable name for ``op``: its name, result name and spec line."""
    text = op.name
    hint = op.results[0].name_hint if op.results else None
    if hint:
        text += f" %{hint}"
    loc = loc_of(op)
    if loc is not None:
        text += f" ({PurePath(loc.filename).name}:{loc.line}:{loc.column})"
    return text


@dataclass(frozen=True)
class Dependence:
    """``dst`` may start no earlier than ``distance`` cycles after ``src``'s cycle; in the
    same cycle it starts after ``src`` finishes."""

    src: Operation
    dst: Operation
    distance: int
    reason: str


@dataclass(frozen=True)
class Affine:
    """``const + sum(coeff * term)`` modulo ``2**bits``: an element index whose terms are
    opaque run-time values (anything hashable; equal terms are the same value)."""

    const: int
    terms: frozenset[tuple[Hashable, int]] = frozenset()
    bits: int = 32

    @staticmethod
    def make(const: int, terms: dict[Hashable, int], bits: int) -> Affine:
        m = (1 << bits) - 1
        kept = frozenset((t, c & m) for t, c in terms.items() if c & m)
        return Affine(const & m, kept, bits)


@dataclass(frozen=True)
class Access:
    """One operation's access to a storage array (a scratchpad or a state register).

    ``banks`` are the banks it may touch. ``index`` is its element index, ``None`` when
    unknown (any element of those banks). ``alias`` is the period at which two indices
    select the same element (a power of two at least the array size: an element select
    that decodes only the low index bits cannot confuse indices that differ below it)."""

    array: str
    banks: frozenset[int]
    write: bool
    index: Affine | None = None
    alias: int = 1

    def may_overlap(self, other: Access) -> bool:
        """True unless the two accesses provably touch different elements."""
        if self.array != other.array or not self.banks & other.banks:
            return False
        a, b = self.index, other.index
        if a is None or b is None or a.terms != b.terms or a.bits != b.bits:
            return True
        diff = (a.const - b.const) % (1 << a.bits)
        return diff % math.gcd(self.alias, other.alias, 1 << a.bits) == 0

    def conflicts(self, later: Access) -> bool:
        """Whether ``later`` (after ``self`` in program order) must be ordered after it."""
        return (self.write or later.write) and self.may_overlap(later)


def access_distance(earlier: Access, later: Access) -> int:
    """Cycles ``later`` must follow a conflicting ``earlier``: a write lands at the end of
    its cycle, so a read or write after it goes to a later cycle (1); a write after a read
    may share the read's cycle, which still sees the old value (0)."""
    return 1 if earlier.write else 0


@dataclass(frozen=True)
class Violation:
    """One broken constraint. ``kind`` is one of ``unscheduled``, ``unknown``, ``range``,
    ``release``, ``dependence``, ``access``, ``chaining``, ``clock`` and ``resource``."""

    kind: str
    message: str
    ops: tuple[Operation, ...]

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class ScheduleError(Exception):
    """A schedule that breaks its problem's constraints (a scheduler bug, never user
    input: the flow verifies every schedule it makes)."""

    def __init__(self, violations: list[Violation]):
        self.violations = violations
        lines = "\n  ".join(str(v) for v in violations)
        super().__init__(f"the schedule breaks {len(violations)} constraint(s):\n  {lines}")


class InfeasibleError(Exception):
    """An operation slower than the datapath budget: no schedule exists."""

    def __init__(self, op: Operation, delay_ns: float, budget_ns: float):
        self.op, self.delay_ns, self.budget_ns = op, delay_ns, budget_ns
        super().__init__(
            f"{describe(op)} needs {delay_ns:.2f} ns, more than the {budget_ns:.2f} ns budget"
        )


@dataclass
class Schedule:
    """Operation → cycle, and operation → start time (ns after the cycle begins)."""

    cycle: dict[Operation, int] = field(default_factory=dict)
    start: dict[Operation, float] = field(default_factory=dict)

    @property
    def length(self) -> int:
        """Cycles from the first to the last used one (0 for an empty schedule); see
        :meth:`SchedulingProblem.span` for multi-cycle operations."""
        return max(self.cycle.values()) + 1 if self.cycle else 0

    @staticmethod
    def chained(problem: SchedulingProblem, cycles: dict[Operation, int]) -> Schedule:
        """The schedule placing ops in ``cycles`` with the earliest start times chaining
        allows (each op starts when its same-cycle predecessors finish)."""
        incoming = problem.incoming()
        start: dict[Operation, float] = {}
        for op in problem.operations:
            if op not in cycles:
                continue
            t = 0.0
            for dep in incoming[op]:
                if dep.src in start and cycles[dep.src] == cycles[op]:
                    t = max(t, start[dep.src] + problem.delay[dep.src])
            start[op] = t
        return Schedule(dict(cycles), start)


@dataclass
class SchedulingProblem:
    """Constraints on the schedule of one segment (see the module docstring)."""

    clock_ns: float
    budget_ns: float
    """Datapath time per cycle: the clock period minus register and state selection."""
    operations: list[Operation] = field(default_factory=list)
    delay: dict[Operation, float] = field(default_factory=dict)
    dependences: dict[tuple[Operation, Operation], Dependence] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)
    """Resource → uses allowed per cycle."""
    uses: dict[Operation, tuple[str, ...]] = field(default_factory=dict)
    """Operation → the resources it occupies in its cycle (each once)."""
    accesses: dict[Operation, list[Access]] = field(default_factory=dict)
    """Operation → its accesses to storage arrays (ordered by ``add_access``)."""
    occupancy: dict[Operation, int] = field(default_factory=dict)
    """Operation → cycles it holds its resources, from its own (absent: 1)."""
    latency: dict[Operation, int] = field(default_factory=dict)
    """Operation → cycles from its start to the cycle its result is read (absent: 0,
    combinational). The schedule spans ``cycle + latency``."""
    release: dict[Operation, int] = field(default_factory=dict)
    """Operation → the earliest cycle it may take (absent: 0); a pipelined loop's kernel
    gets its modulo schedule this way (synth/loop_pipeline.py)."""
    _by_array: dict[str, list[tuple[Operation, Access]]] = field(default_factory=dict, repr=False)

    def add_operation(
        self,
        op: Operation,
        delay_ns: float,
        uses: Iterable[str] = (),
        occupancy: int = 1,
        latency: int = 0,
    ) -> None:
        """Adds ``op`` (after those added before it in program order). ``delay_ns`` is what
        it chains in its cycle (for a multi-cycle op, the logic in front of its unit);
        ``uses`` are held for ``occupancy`` cycles; ``latency`` > 0 makes it multi-cycle."""
        self.operations.append(op)
        self.delay[op] = delay_ns
        self.uses[op] = tuple(dict.fromkeys(uses))
        if occupancy != 1:
            self.occupancy[op] = occupancy
        if latency:
            self.latency[op] = latency

    def span(self, schedule: Schedule) -> int:
        """Cycles the schedule needs: through each op's cycle and each multi-cycle op's
        result cycle (0 for an empty schedule)."""
        return max((c + self.latency.get(op, 0) + 1 for op, c in schedule.cycle.items()), default=0)

    def add_dependence(self, src: Operation, dst: Operation, distance: int, reason: str) -> None:
        """Adds ``src -> dst``; a second reason for the same pair keeps the larger
        distance."""
        old = self.dependences.get((src, dst))
        if old is not None:
            distance = max(distance, old.distance)
            if reason not in old.reason.split("; "):
                reason = f"{old.reason}; {reason}"
            else:
                reason = old.reason
        self.dependences[(src, dst)] = Dependence(src, dst, distance, reason)

    def add_access(self, op: Operation, access: Access) -> None:
        """Records ``op``'s access (``op`` already added, after every operation added
        before it in program order) and orders it after each earlier conflicting access."""
        for prev, a in self._by_array.get(access.array, ()):
            if prev is not op and a.conflicts(access):
                what = f"{'write' if access.write else 'read'} after "
                what += f"{'write' if a.write else 'read'} (@{access.array})"
                self.add_dependence(prev, op, access_distance(a, access), what)
        self._by_array.setdefault(access.array, []).append((op, access))
        self.accesses.setdefault(op, []).append(access)

    def incoming(self) -> dict[Operation, list[Dependence]]:
        out: dict[Operation, list[Dependence]] = {op: [] for op in self.operations}
        for dep in self.dependences.values():
            out[dep.dst].append(dep)
        return out

    def check(self) -> None:
        """Checks the problem itself: dependences between its own operations, forward in
        program order, distances 0 or more, a limit for every resource used. Raises
        ``ValueError`` for a malformed problem and ``InfeasibleError`` (at the first such
        op in program order) for an op slower than the budget."""
        order = {op: i for i, op in enumerate(self.operations)}
        if len(order) != len(self.operations):
            raise ValueError("an operation is listed twice")
        for dep in self.dependences.values():
            if dep.src not in order or dep.dst not in order:
                raise ValueError(f"dependence {dep.reason} names an operation not in the problem")
            if order[dep.src] >= order[dep.dst]:
                raise ValueError(
                    f"dependence {describe(dep.src)} -> {describe(dep.dst)} goes backwards "
                    "in program order"
                )
            if dep.distance < 0:
                raise ValueError(f"dependence {dep.reason} has a negative distance")
            if dep.distance < self.latency.get(dep.src, 0):
                raise ValueError(
                    f"dependence {describe(dep.src)} -> {describe(dep.dst)} is shorter than "
                    f"the source's latency ({self.latency[dep.src]} cycles)"
                )
        for op in self.operations:
            if self.occupancy.get(op, 1) < 1 or self.latency.get(op, 0) < 0:
                raise ValueError(f"{describe(op)} has an occupancy below 1 or a negative latency")
            for r in self.uses.get(op, ()):
                if self.limits.get(r, 0) < 1:
                    raise ValueError(f"{describe(op)} uses {r}, which has no limit of 1 or more")
            if self.delay[op] > self.budget_ns:
                raise InfeasibleError(op, self.delay[op], self.budget_ns)

    def verify(self, schedule: Schedule) -> list[Violation]:
        """Every constraint ``schedule`` breaks (empty when it is valid)."""
        out: list[Violation] = []
        cyc, start = schedule.cycle, schedule.start
        known = set(self.operations)
        for op in self.operations:
            if op not in cyc or op not in start:
                out.append(Violation("unscheduled", f"{describe(op)} has no cycle", (op,)))
            elif cyc[op] < 0 or start[op] < 0:
                out.append(
                    Violation(
                        "range",
                        f"{describe(op)} at cycle {cyc[op]}, {start[op]:.2f} ns: "
                        "cycles and start times cannot be negative",
                        (op,),
                    )
                )
        for op in cyc.keys() - known:
            out.append(Violation("unknown", f"{describe(op)} is not in the problem", (op,)))
        placed = [op for op in self.operations if op in cyc and op in start]
        for op in placed:
            rel = self.release.get(op, 0)
            if rel and cyc[op] < rel:
                out.append(
                    Violation(
                        "release",
                        f"{describe(op)} at cycle {cyc[op]}, before its release cycle {rel}",
                        (op,),
                    )
                )
        on = set(placed)
        for dep in self.dependences.values():
            a, b = dep.src, dep.dst
            if a not in on or b not in on:
                continue
            if cyc[b] < cyc[a] + dep.distance:
                need = "a later cycle than" if dep.distance == 1 else "a cycle no earlier than"
                if dep.distance > 1:
                    need = f"at least {dep.distance} cycles after"
                out.append(
                    Violation(
                        "dependence",
                        f"{describe(b)} (cycle {cyc[b]}) must be in {need} {describe(a)} "
                        f"(cycle {cyc[a]}): {dep.reason}",
                        (a, b),
                    )
                )
            elif cyc[b] == cyc[a] and start[b] + EPS_NS < start[a] + self.delay[a]:
                out.append(
                    Violation(
                        "chaining",
                        f"{describe(b)} starts at {start[b]:.2f} ns in cycle {cyc[b]}, before "
                        f"{describe(a)} finishes at {start[a] + self.delay[a]:.2f} ns "
                        f"({dep.reason})",
                        (a, b),
                    )
                )
        out.extend(self._access_violations(placed, cyc))
        for op in placed:
            end = start[op] + self.delay[op]
            if end > self.budget_ns + EPS_NS:
                out.append(
                    Violation(
                        "clock",
                        f"{describe(op)} finishes at {end:.2f} ns in cycle {cyc[op]}, past the "
                        f"{self.budget_ns:.2f} ns a {self.clock_ns:g} ns clock leaves for the "
                        "datapath",
                        (op,),
                    )
                )
        users: dict[tuple[int, str], list[Operation]] = {}
        for op in placed:
            for r in self.uses.get(op, ()):
                for k in range(self.occupancy.get(op, 1)):
                    users.setdefault((cyc[op] + k, r), []).append(op)
        for (c, r), ops in sorted(users.items(), key=lambda kv: kv[0]):
            limit = self.limits.get(r, 0)
            if len(ops) > limit:
                names = ", ".join(describe(o) for o in ops)
                out.append(
                    Violation(
                        "resource",
                        f"cycle {c}: {len(ops)} uses of {r} (limit {limit}): {names}",
                        tuple(ops),
                    )
                )
        return out

    def _access_violations(
        self, placed: list[Operation], cyc: dict[Operation, int]
    ) -> list[Violation]:
        """Conflicting accesses out of order, checked from the accesses themselves (not
        from the dependences derived from them)."""
        out: list[Violation] = []
        by_array: dict[str, list[tuple[Operation, Access]]] = {}
        for op in placed:
            for acc in self.accesses.get(op, ()):
                by_array.setdefault(acc.array, []).append((op, acc))
        for items in by_array.values():
            for i, (a, acc_a) in enumerate(items):
                for b, acc_b in items[i + 1 :]:
                    if a is b or not acc_a.conflicts(acc_b):
                        continue
                    if cyc[b] < cyc[a] + access_distance(acc_a, acc_b):
                        out.append(
                            Violation(
                                "access",
                                f"{describe(b)} (cycle {cyc[b]}) may touch the element of "
                                f"@{acc_b.array} that {describe(a)} (cycle {cyc[a]}) "
                                f"{'writes' if acc_a.write else 'reads'}",
                                (a, b),
                            )
                        )
        return out

    def assert_valid(self, schedule: Schedule) -> None:
        """Raises ``ScheduleError`` listing every violation, if there is any."""
        violations = self.verify(schedule)
        if violations:
            raise ScheduleError(violations)


class Scheduler(Protocol):
    """An algorithm: a problem that passed ``check()`` → a schedule ``verify`` accepts."""

    def __call__(self, problem: SchedulingProblem) -> Schedule: ...


def list_schedule(problem: SchedulingProblem) -> Schedule:
    """List scheduling in program order with chaining: each op goes to the earliest cycle
    its dependences allow in which it still finishes within the budget and finds its
    resources free. Greedy, so not optimal in length, but fast and deterministic."""
    incoming = problem.incoming()
    sched = Schedule()
    cycle, start = sched.cycle, sched.start
    used: dict[tuple[int, str], int] = {}
    for op in problem.operations:  # program order is a topological order
        d = problem.delay[op]
        if d > problem.budget_ns:
            raise InfeasibleError(op, d, problem.budget_ns)
        c = problem.release.get(op, 0)
        for dep in incoming[op]:
            c = max(c, cycle[dep.src] + dep.distance)
        while True:
            t = 0.0
            for dep in incoming[op]:
                if cycle[dep.src] == c:
                    t = max(t, start[dep.src] + problem.delay[dep.src])
            if t + d > problem.budget_ns:
                c += 1
                continue
            occ = range(problem.occupancy.get(op, 1))
            if any(
                used.get((c + k, r), 0) >= problem.limits[r] for r in problem.uses[op] for k in occ
            ):
                c += 1
                continue
            break
        cycle[op] = c
        start[op] = t
        for r in problem.uses[op]:
            for k in range(problem.occupancy.get(op, 1)):
                used[(c + k, r)] = used.get((c + k, r), 0) + 1
    return sched


SCHEDULERS: dict[str, Scheduler] = {"list": list_schedule}
"""Algorithms by name (``aquas-schedule{algorithm=...}``)."""

__all__ = [
    "SCHEDULERS",
    "Access",
    "Affine",
    "Dependence",
    "InfeasibleError",
    "Schedule",
    "ScheduleError",
    "Scheduler",
    "SchedulingProblem",
    "Violation",
    "describe",
    "list_schedule",
]
