"""Applying interface plans per ISAX, and choosing one per ISAX for ``--interface auto``.

The one place that applies and picks plans: ``aquas synth --interface``, ``aquas run`` and
``aquas model --plan`` all call :func:`apply_interface`. A plan is a per-ISAX choice; an
extension mixes them. ``auto`` applies every plan to a clone, schedules it at the target's
bus width and keeps, per ISAX, the plan :func:`choose_plan` picks with the cost:

* given a target, the memory-interface model's prediction of the ISAX on it
  (:func:`aquas.model.predict.predict_scheduled`: memory latency, DMA setup, bus width,
  burst limit, L2), so the choice is the model's;
* without one (a caller with no target), the scheduled latency at the memory latency
  ``L``, ``fixed_max + per_mem_latency_max * L`` (:func:`latency_cost`).

Under ``auto`` every plan ends with ``aquas-interface-stream`` (burst reads whose data
arrives while the compute after them runs, :mod:`aquas.plans.stream`) and
``aquas-interface-early`` (requests sent ahead across the compute before them,
:mod:`aquas.plans.early`), kept for the ISAXs whose schedule has a window for one: they
only ever save cycles, for a few gates and flip-flops. The fixed plans are exactly what
they say, without them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from xdsl.dialects.builtin import ModuleOp

from aquas.diagnostics import AquasError
from aquas.plans import INTERFACES, PLANS
from aquas.plans.common import Rejection

if TYPE_CHECKING:
    from aquas.model.predict import IsaxPrediction
    from aquas.target import Target

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
    prediction: IsaxPrediction | None = None  # the model's, when a target was given
    early: int = 0  # requests sent ahead across compute (aquas-interface-early)
    streamed: int = 0  # burst reads streamed into the compute after them

    def cycles_max(self, mem_latency: int) -> int:
        return self.fixed_max + self.per_mem_latency_max * mem_latency

    def as_dict(self, mem_latency: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cycles_max": self.cycles_max(mem_latency),
            "fixed_max": self.fixed_max,
            "per_mem_latency_max": self.per_mem_latency_max,
            "memory_beats": self.memory_beats,
        }
        if self.prediction is not None:
            out["predicted_cycles"] = round(self.prediction.total, 2)
        if self.early:
            out["requests_sent_early"] = self.early
        if self.streamed:
            out["bursts_streamed"] = self.streamed
        return out


Cost = Callable[[Candidate], float]


def latency_cost(mem_latency: int) -> Cost:
    """The scheduled worst-case latency at memory latency ``mem_latency``."""
    return lambda c: float(c.cycles_max(mem_latency))


def model_cost(c: Candidate) -> float:
    """The memory-interface model's predicted cycles of the ISAX under the candidate's plan."""
    if c.prediction is None:
        raise ValueError("model_cost needs candidates scheduled with a target")
    return round(c.prediction.total, 2)


def choose_plan(
    candidates: Mapping[str, Candidate], cost: Cost, what: str = "lowest cost"
) -> tuple[str, str]:
    """The cheapest plan and why (``what`` names the cost in the reason); ties go to the
    earlier plan of :data:`PLANS` (so a plan that changes nothing never displaces what the
    author wrote)."""
    if not candidates:
        raise ValueError("choose_plan needs at least one candidate")
    order = {p: i for i, p in enumerate(PLANS)}
    costs = {p: cost(c) for p, c in candidates.items()}
    best = min(costs, key=lambda p: (costs[p], order.get(p, len(order))))
    others = ", ".join(f"{p} {costs[p]:g}" for p in candidates if p != best)
    same = [p for p in candidates if p != best and costs[p] == costs[best]]
    why = f"{what} {costs[best]:g} (vs {others})" if others else f"{what} {costs[best]:g}"
    if same:
        why += f"; tie with {', '.join(same)} keeps the earlier plan"
    return best, why


def apply_plan(
    module: ModuleOp, plan: str, only: str = "", max_beats: int = 256, outstanding: int = 1
) -> list[Rejection]:
    """Rewrites the selected ISAXs of ``module`` (all when ``only`` is empty) in place;
    ``outstanding > 1`` also lets their units keep that many requests in flight
    (``aquas-interface-outstanding``, the target's ``isax_master.outstanding``)."""
    from aquas.context import make_context
    from aquas.passes import parse_pipeline
    from aquas.plans.coalesce import coalesce
    from aquas.plans.outstanding import set_outstanding
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
    if outstanding > 1:
        set_outstanding(module, outstanding, only)
    module.verify()
    return found


L2Assumption = Literal["cold", "warm"]


def _candidates(
    module: ModuleOp,
    plan: str,
    clock_ns: float,
    lib: Any,
    max_beats: int,
    bus_width: int,
    target: Target | None,
    l2: L2Assumption,
    early: bool = False,
    stream: bool = False,
) -> dict[str, Candidate]:
    from aquas.interpreter import find_extension
    from aquas.synth.flow import schedule_isaxs
    from aquas.synth.fsm import MEM_OPS, mem_beats

    m = module.clone()
    k = target.isax_master.outstanding if target is not None else 1
    found = apply_plan(m, plan, max_beats=max_beats, outstanding=k)
    if target is not None and target.isax_master.snoop_writes:
        from aquas.plans.resident import mark_resident

        mark_resident(m, sram_only=True)  # as the flow marks them after the choice
    if stream:
        from aquas.plans.stream import set_stream

        set_stream(m)
    if early:
        from aquas.plans.early import set_early

        set_early(m)
    names = [i.sym_name.data for i in find_extension(m).isaxs()]
    beats = {
        i.sym_name.data: sum(
            mem_beats(o, bus_width) for o in i.body.walk() if isinstance(o, MEM_OPS)
        )
        for i in find_extension(m).isaxs()
    }
    _, fsms = schedule_isaxs(m, clock_ns, lib, bus_width)
    preds: dict[str, IsaxPrediction] = {}
    if target is not None:
        from aquas.model.predict import predict_scheduled

        preds = {p.isax: p for p in predict_scheduled(fsms, target, l2=l2)}
    out = {}
    for f, name in zip(fsms, names, strict=True):
        lat = f.reported
        out[name] = Candidate(
            plan,
            lat.max_fixed + 1,  # + the dispatch cycle, as in the reports
            lat.max_mem,
            lat.min_fixed + 1,
            lat.min_mem,
            beats[name],
            tuple(r for r in found if r.isax == name),
            preds.get(name),
            len(f.early),
            len(f.stream),
        )
    return out


@dataclass
class InterfaceChoice:
    """What ``--interface`` did to each ISAX (and, with a target, the model's prediction
    of each ISAX as rewritten)."""

    interface: str
    mem_latency: int
    plans: dict[str, str] = field(default_factory=dict)  # ISAX -> plan
    reasons: dict[str, str] = field(default_factory=dict)
    candidates: dict[str, dict[str, Candidate]] = field(default_factory=dict)
    rejections: dict[str, list[Rejection]] = field(default_factory=dict)  # of the chosen plan
    target: str | None = None  # the target's name when the model chose
    predictions: dict[str, IsaxPrediction] = field(default_factory=dict)  # of the result
    # ISAX -> scratchpads kept resident across calls (aquas-interface-resident)
    resident: dict[str, list[str]] = field(default_factory=dict)

    def report(self, isax: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "requested": self.interface,
            "plan": self.plans[isax],
            "reason": self.reasons[isax],
            "cost": f"predicted cycles on {self.target} (memory-interface model)"
            if self.target
            else f"scheduled cycles at L = {self.mem_latency}",
            "candidates": {
                p: c.as_dict(self.mem_latency) for p, c in self.candidates.get(isax, {}).items()
            },
            "rejections": [r.as_dict() for r in self.rejections.get(isax, [])],
        }
        if isax in self.predictions:
            out["predicted_cycles"] = round(self.predictions[isax].total, 2)
        if isax in self.resident:
            out["resident"] = self.resident[isax]
            kept = self.predictions[isax].resident_total if isax in self.predictions else None
            if kept is not None:
                # a call whose resident scratchpads still hold their bytes
                out["predicted_cycles_kept"] = round(kept, 2)
                out["resident_bursts"] = [r.as_dict() for r in self.predictions[isax].resident]
        return out


def apply_interface(
    module: ModuleOp,
    interface: str,
    clock_ns: float,
    mem_latency: int,
    lib: Any = None,
    max_beats: int = 256,
    cost: Cost | None = None,
    progress: Callable[[str], None] | None = None,
    *,
    target: Target | None = None,
    bus_width: int = 32,
    l2: L2Assumption = "cold",
) -> InterfaceChoice:
    """Rewrites ``module`` in place as ``interface`` asks and says what it chose per ISAX.

    A fixed plan applies to every ISAX; ``auto`` schedules all plans and keeps per ISAX
    the one :func:`choose_plan` picks with ``cost`` (default: :func:`model_cost` when a
    ``target`` is given, else :func:`latency_cost` at ``mem_latency``). With a target,
    ``max_beats`` and ``bus_width`` are the target's (the arguments are ignored) and
    :attr:`InterfaceChoice.predictions` holds the model's prediction of every ISAX as
    rewritten (``l2``: the cold/warm assumption when the target has an L2)."""
    from aquas.interpreter import find_extension
    from aquas.synth.oplib import OperatorLibrary

    if interface not in INTERFACES:
        raise AquasError(
            f"unknown interface {interface!r}", hint=f"use one of {', '.join(INTERFACES)}"
        )
    if target is not None:
        max_beats = target.isax_master.max_burst_beats
        bus_width = target.isax_master.bus_width
    lib = lib or OperatorLibrary.load()
    choice = InterfaceChoice(interface, mem_latency, target=target.name if target else None)
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
    else:
        what = "lowest cost"
        if cost is None:
            if target is not None:
                cost, what = model_cost, f"fewest predicted cycles on {target.name}:"
            else:
                cost, what = (
                    latency_cost(mem_latency),
                    f"lowest scheduled cycles at L={mem_latency}:",
                )
        cands: dict[str, dict[str, Candidate]] = {n: {} for n in names}
        for plan in PLANS:
            if progress:
                progress(f"interface: scheduling every ISAX under plan {plan}")
            # the last steps of every plan: requests sent ahead across compute, where the
            # schedule has a window for them (they only ever save cycles), and burst reads
            # streamed into the compute after them where that costs less (a streamed
            # burst's window sends no request ahead)
            args = (module, plan, clock_ns, lib, max_beats, bus_width, target, l2)
            sent = _candidates(*args, early=True)
            flowing = _candidates(*args, early=True, stream=True)
            for n, c in sent.items():
                s = flowing[n]
                cands[n][plan] = s if s.streamed and cost(s) < cost(c) else c
        for n in names:
            plan, why = choose_plan(cands[n], cost, what)
            if cands[n][plan].streamed:
                why += (
                    f"; {cands[n][plan].streamed} burst read(s) streamed into the compute "
                    "after them (aquas-interface-stream)"
                )
            if cands[n][plan].early:
                why += (
                    f"; {cands[n][plan].early} request(s) sent ahead across compute "
                    "(aquas-interface-early)"
                )
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
        streamed = [n for n in names if cands[n][choice.plans[n]].streamed]
        if streamed:
            from aquas.plans.stream import set_stream

            set_stream(module, only=",".join(streamed))
        ahead = [n for n in names if cands[n][choice.plans[n]].early]
        if ahead:
            from aquas.plans.early import set_early

            set_early(module, only=",".join(ahead))
    if target is not None and target.isax_master.outstanding > 1:
        from aquas.plans.outstanding import set_outstanding

        set_outstanding(module, target.isax_master.outstanding)
    if target is not None and target.isax_master.snoop_writes:
        from aquas.plans.resident import mark_resident

        # SRAM scratchpads only: a register one is cheaper pooled (aquas.plans.resident)
        choice.resident = mark_resident(module, sram_only=True)
    if target is not None:
        # the prediction of what synthesis will build: the rewritten module itself
        from aquas.model.predict import predict_module

        preds = predict_module(module, target, l2=l2, clock_ns=clock_ns, lib=lib)
        choice.predictions = {p.isax: p for p in preds}
    return choice


__all__ = [
    "Candidate",
    "InterfaceChoice",
    "apply_interface",
    "apply_plan",
    "choose_plan",
    "latency_cost",
    "model_cost",
]
