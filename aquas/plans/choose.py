"""Applying interface plans per ISAX, and choosing one per ISAX for ``--interface auto``.

A plan is a per-ISAX choice; an extension mixes them. ``auto`` schedules the extension
under every plan and keeps, per ISAX, the plan :func:`choose_plan` picks with the injected
cost. The default cost is the scheduled latency at the memory latency ``L``,
``fixed_max + per_mem_latency_max * L`` (the schedule's fixed part already counts the bus
beats of every transfer); the memory-interface model can replace it later.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from aquas.diagnostics import AquasError
from aquas.plans import INTERFACES, PLANS
from aquas.plans.common import Rejection

PRE = "aquas-unroll,canonicalize,cse"
"""What runs before any plan: the spec's unrolling exposes constant addresses."""
POST = "canonicalize,cse"


@dataclass(frozen=True)
class Candidate:
    """One ISAX under one plan, as the schedule sees it."""

    plan: str
    fixed_max: int
    per_mem_latency_max: int
    fixed_min: int
    per_mem_latency_min: int
    memory_beats: int
    rejections: tuple[Rejection, ...] = ()

    def cycles_max(self, mem_latency: int) -> int:
        return self.fixed_max + self.per_mem_latency_max * mem_latency

    def as_dict(self, mem_latency: int) -> dict[str, Any]:
        return {
            "cycles_max": self.cycles_max(mem_latency),
            "fixed_max": self.fixed_max,
            "per_mem_latency_max": self.per_mem_latency_max,
            "memory_beats": self.memory_beats,
        }


Cost = Callable[[Candidate], float]


def latency_cost(mem_latency: int) -> Cost:
    """The scheduled worst-case latency at memory latency ``mem_latency``."""
    return lambda c: float(c.cycles_max(mem_latency))


def choose_plan(candidates: Mapping[str, Candidate], cost: Cost) -> tuple[str, str]:
    """The cheapest plan and why; ties go to the earlier plan of :data:`PLANS` (so a plan
    that changes nothing never displaces what the author wrote)."""
    if not candidates:
        raise ValueError("choose_plan needs at least one candidate")
    order = {p: i for i, p in enumerate(PLANS)}
    costs = {p: cost(c) for p, c in candidates.items()}
    best = min(costs, key=lambda p: (costs[p], order.get(p, len(order))))
    others = ", ".join(f"{p} {costs[p]:g}" for p in candidates if p != best)
    same = [p for p in candidates if p != best and costs[p] == costs[best]]
    why = f"lowest cost {costs[best]:g} (vs {others})" if others else f"cost {costs[best]:g}"
    if same:
        why += f"; tie with {', '.join(same)} keeps the earlier plan"
    return best, why


def apply_plan(
    module: ModuleOp, plan: str, only: str = "", max_beats: int = 256
) -> list[Rejection]:
    """Rewrites the selected ISAXs of ``module`` (all when ``only`` is empty) in place."""
    from aquas.context import make_context
    from aquas.passes import parse_pipeline
    from aquas.plans.coalesce import coalesce
    from aquas.plans.single import single
    from aquas.plans.split import split

    if plan not in PLANS:
        raise AquasError(f"unknown interface plan {plan!r}", hint=f"use one of {', '.join(PLANS)}")
    parse_pipeline(PRE).apply(make_context(), module)
    found: list[Rejection] = []
    if plan == "single":
        found = single(module, only)
    elif plan == "burst":
        found = coalesce(module, only)
        split(module, max_beats, only)
    parse_pipeline(POST).apply(make_context(), module)
    module.verify()
    return found


def _candidates(
    module: ModuleOp, plan: str, clock_ns: float, lib: Any, max_beats: int
) -> dict[str, Candidate]:
    from aquas.interpreter import find_extension
    from aquas.synth.flow import schedule_isaxs
    from aquas.synth.fsm import MEM_OPS, mem_beats

    m = module.clone()
    found = apply_plan(m, plan, max_beats=max_beats)
    names = [i.sym_name.data for i in find_extension(m).isaxs()]
    beats = {
        i.sym_name.data: sum(mem_beats(o) for o in i.body.walk() if isinstance(o, MEM_OPS))
        for i in find_extension(m).isaxs()
    }
    _, fsms = schedule_isaxs(m, clock_ns, lib)
    out = {}
    for f, name in zip(fsms, names, strict=True):
        lat = f.latency
        out[name] = Candidate(
            plan,
            lat.max_fixed + 1,  # + the dispatch cycle, as in the reports
            lat.max_mem,
            lat.min_fixed + 1,
            lat.min_mem,
            beats[name],
            tuple(r for r in found if r.isax == name),
        )
    return out


@dataclass
class InterfaceChoice:
    """What ``--interface`` did to each ISAX."""

    interface: str
    mem_latency: int
    plans: dict[str, str] = field(default_factory=dict)  # ISAX -> plan
    reasons: dict[str, str] = field(default_factory=dict)
    candidates: dict[str, dict[str, Candidate]] = field(default_factory=dict)
    rejections: dict[str, list[Rejection]] = field(default_factory=dict)  # of the chosen plan

    def report(self, isax: str) -> dict[str, Any]:
        return {
            "requested": self.interface,
            "plan": self.plans[isax],
            "reason": self.reasons[isax],
            "candidates": {
                p: c.as_dict(self.mem_latency) for p, c in self.candidates.get(isax, {}).items()
            },
            "rejections": [r.as_dict() for r in self.rejections.get(isax, [])],
        }


def apply_interface(
    module: ModuleOp,
    interface: str,
    clock_ns: float,
    mem_latency: int,
    lib: Any = None,
    max_beats: int = 256,
    cost: Cost | None = None,
    progress: Callable[[str], None] | None = None,
) -> InterfaceChoice:
    """Rewrites ``module`` in place as ``interface`` asks and says what it chose per ISAX.

    A fixed plan applies to every ISAX; ``auto`` schedules all plans and keeps per ISAX
    the one :func:`choose_plan` picks with ``cost`` (default :func:`latency_cost`)."""
    from aquas.interpreter import find_extension
    from aquas.synth.oplib import OperatorLibrary

    if interface not in INTERFACES:
        raise AquasError(
            f"unknown interface {interface!r}", hint=f"use one of {', '.join(INTERFACES)}"
        )
    lib = lib or OperatorLibrary.load()
    choice = InterfaceChoice(interface, mem_latency)
    names = [i.sym_name.data for i in find_extension(module).isaxs()]
    if interface != "auto":
        found = apply_plan(module, interface, max_beats=max_beats)
        for n in names:
            choice.plans[n] = interface
            mine = [r for r in found if r.isax == n]
            choice.rejections[n] = mine
            choice.reasons[n] = f"--interface {interface}" + (
                f"; {len(mine)} access(es) left as written (see rejections)" if mine else ""
            )
        return choice
    cands: dict[str, dict[str, Candidate]] = {n: {} for n in names}
    for plan in PLANS:
        if progress:
            progress(f"scheduling every ISAX under plan {plan}")
        for n, c in _candidates(module, plan, clock_ns, lib, max_beats).items():
            cands[n][plan] = c
    cost = cost or latency_cost(mem_latency)
    for n in names:
        plan, why = choose_plan(cands[n], cost)
        choice.plans[n], choice.reasons[n] = plan, why
        choice.candidates[n] = cands[n]
        choice.rejections[n] = list(cands[n][plan].rejections)
        if plan != "burst":
            # keep the coalescing's reasons in view: they say why burst did not win
            choice.rejections[n] += list(cands[n]["burst"].rejections)
    for plan in PLANS:
        chosen = [n for n in names if choice.plans[n] == plan]
        if chosen and plan != "as-written":
            apply_plan(module, plan, only=",".join(chosen), max_beats=max_beats)
    from aquas.context import make_context
    from aquas.passes import parse_pipeline

    parse_pipeline(PRE).apply(make_context(), module)  # as a fixed plan would leave it
    return choice


__all__ = [
    "Candidate",
    "InterfaceChoice",
    "apply_interface",
    "apply_plan",
    "choose_plan",
    "latency_cost",
]
