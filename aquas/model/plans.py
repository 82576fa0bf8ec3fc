"""Interface plans: a named plan is a pass ``aquas-interface-<plan>`` on the aquas dialect.

``as-written`` is the spec as its author wrote it (no pass). ``single``, ``burst`` and any
other plan exist only when :data:`aquas.passes.PASSES` registers their pass; asking for a
plan that does not is an error, never a silent fallback. ``auto`` predicts every available
plan with the model and keeps the one with the fewest cycles over the extension's ISAXs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xdsl.dialects.builtin import ModuleOp

from aquas.diagnostics import AquasError
from aquas.model.predict import IsaxPrediction, predict_module
from aquas.target import Target

PLANS: tuple[str, ...] = ("auto", "as-written", "single", "burst")
CONCRETE_PLANS: tuple[str, ...] = ("as-written", "single", "burst")


def pass_name(plan: str) -> str:
    return f"aquas-interface-{plan}"


def available(plan: str) -> bool:
    from aquas.passes import PASSES

    return plan == "as-written" or pass_name(plan) in PASSES


def apply_plan(module: ModuleOp, plan: str) -> ModuleOp:
    """A copy of ``module`` rewritten by ``plan``'s pass (the copy itself for as-written)."""
    if plan not in CONCRETE_PLANS:
        raise AquasError(f"unknown plan '{plan}'", hint=f"choose one of: {', '.join(PLANS)}")
    out = module.clone()
    if plan == "as-written":
        return out
    from aquas.context import make_context
    from aquas.passes import PASSES

    if pass_name(plan) not in PASSES:
        raise AquasError(
            f"plan '{plan}' is not available yet",
            hint=f"no pass '{pass_name(plan)}' is registered; use --plan as-written",
        )
    PASSES[pass_name(plan)]()().apply(make_context(), out)
    return out


@dataclass
class PlanChoice:
    plan: str
    reason: str
    predictions: list[IsaxPrediction]
    considered: dict[str, float]  # plan -> predicted cycles summed over the ISAXs


def choose_plan(
    module: ModuleOp,
    target: Target,
    plan: str = "auto",
    *,
    l2: Literal["cold", "warm"] = "cold",
    clock_ns: float = 10.0,
) -> PlanChoice:
    """The predictions under ``plan`` (for ``auto``: under the best available plan)."""
    if plan not in PLANS:
        raise AquasError(f"unknown plan '{plan}'", hint=f"choose one of: {', '.join(PLANS)}")
    if plan != "auto":
        preds = predict_module(apply_plan(module, plan), target, l2=l2, clock_ns=clock_ns)
        total = sum(p.total for p in preds)
        return PlanChoice(plan, "requested with --plan", preds, {plan: total})
    results: dict[str, list[IsaxPrediction]] = {}
    missing = []
    for name in CONCRETE_PLANS:
        if not available(name):
            missing.append(name)
            continue
        results[name] = predict_module(apply_plan(module, name), target, l2=l2, clock_ns=clock_ns)
    considered = {name: sum(p.total for p in preds) for name, preds in results.items()}
    # fewest cycles; on a tie the earlier plan (as-written first: no rewrite)
    best = min(considered, key=lambda n: (considered[n], CONCRETE_PLANS.index(n)))
    reason = f"fewest predicted cycles over the ISAXs ({considered[best]:.1f})"
    if len(considered) > 1:
        others = ", ".join(f"{n} {c:.1f}" for n, c in considered.items() if n != best)
        reason += f"; {others}"
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        reason += f"; {', '.join(missing)} {verb} not available yet"
    return PlanChoice(best, reason, results[best], considered)


__all__ = ["CONCRETE_PLANS", "PLANS", "PlanChoice", "apply_plan", "available", "choose_plan"]
