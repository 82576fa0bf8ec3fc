"""Interface plans for ``aquas model --plan``: a thin view of :mod:`aquas.plans.choose`.

There is one chooser. :func:`choose_plan` runs :func:`aquas.plans.choose.apply_interface`
with the target on a copy of the module, exactly as ``aquas synth --interface`` does on
the same target, so ``--plan auto`` names per ISAX the plan and reason synthesis takes,
and a fixed plan predicts the IR synthesis would build (unrolled, rewritten, split to the
target's burst limit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from xdsl.dialects.builtin import ModuleOp

from aquas.diagnostics import AquasError
from aquas.model.predict import IsaxPrediction
from aquas.plans import INTERFACES, PLANS
from aquas.target import Target

#: ``--plan`` values (those of ``aquas synth --interface``)
PLAN_CHOICES: tuple[str, ...] = INTERFACES
CONCRETE_PLANS: tuple[str, ...] = PLANS


@dataclass
class PlanChoice:
    """The requested plan, per ISAX the plan applied and why, and the predictions of the
    ISAXs as rewritten (in the extension's order)."""

    requested: str
    plans: dict[str, str]
    reasons: dict[str, str]
    predictions: list[IsaxPrediction]
    # ISAX -> plan -> predicted cycles of every plan auto compared (empty for a fixed plan)
    considered: dict[str, dict[str, float]] = field(default_factory=dict)


def choose_plan(
    module: ModuleOp,
    target: Target,
    plan: str = "auto",
    *,
    l2: Literal["cold", "warm"] = "cold",
    clock_ns: float = 10.0,
) -> PlanChoice:
    """The predictions of ``module``'s ISAXs on ``target`` under ``plan`` (``auto``: per
    ISAX the plan with the fewest predicted cycles); ``module`` is left unchanged."""
    from aquas.plans.choose import apply_interface

    if plan not in PLAN_CHOICES:
        raise AquasError(f"unknown plan '{plan}'", hint=f"choose one of: {', '.join(PLAN_CHOICES)}")
    m = module.clone()
    choice = apply_interface(m, plan, clock_ns, target.isax_mem_latency, target=target, l2=l2)
    considered = {
        isax: {
            p: round(c.prediction.total, 2) for p, c in cands.items() if c.prediction is not None
        }
        for isax, cands in choice.candidates.items()
    }
    return PlanChoice(
        plan,
        choice.plans,
        choice.reasons,
        list(choice.predictions.values()),
        considered,
    )


__all__ = ["CONCRETE_PLANS", "PLAN_CHOICES", "PlanChoice", "choose_plan"]
