"""``--area-budget F``: the fewest cycles whose estimated unit area is at most ``F`` times
the target core's area.

The knobs are the choices that exist without changing the spec (no unrolling):

* how many shared multipliers of each class (below the 10 % rule's count),
* which classes merge onto wider units (``binding.merge_options``),
* which classes of multiplies run on the sequential multiplier of their width
  (``synth/multicycle.py``), and how many bits it retires per cycle.

Each choice (:class:`~aquas.synth.binding.ShareConfig`) is scheduled (no RTL), and its
area estimated as the default unit's estimate (``synth/area_model.py``, from the
generated IR) less the default's multiplier area plus the choice's
(:func:`aquas.synth.timing.multiplier_um2`): the rest of the unit stays the same to first
order. Its cost is the sum over ISAXs of their cycles (fixed part, memory latency 0)
relative to the default's, so a long ISAX does not outweigh a short one.

The search is greedy, from the default: while the estimate exceeds the budget, every
single step (one unit fewer of a class, a class onto the sequential multiplier at any
of its step widths, a sequential multiplier at a narrower step, another merge option) is
scheduled; if some fit the budget, the fastest of them is taken and the search stops,
else the step saving the most area per cycle it costs. When no step saves area, the
budget cannot be met: :class:`~aquas.diagnostics.AquasError` with the smallest estimate
found. A handful of steps of a few schedules each (the examples: at most a few seconds);
an ILP over all choices would need the cycles of every combination, which only a
schedule gives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.synth.binding import ShareConfig, UnitClass, class_of, merge_options
from aquas.synth.fsm import FsmBuilder, IsaxFsm
from aquas.synth.oplib import OperatorLibrary

NO_FIT_HINT = "raise --area-budget, or reduce the spec's unrolling or scratchpads"


@dataclass(frozen=True)
class AreaBudget:
    """The budget: ``fraction`` of the core's area (``core_um2``, same method)."""

    fraction: float
    core_um2: float
    core: str = "core"

    @property
    def um2(self) -> float:
        return self.fraction * self.core_um2


def check_fraction(f: float, what: str = "--area-budget") -> None:
    import math

    if not math.isfinite(f) or f <= 0:
        raise AquasError(
            f"{what} must be a positive fraction of the core's area, got {f}",
            hint="e.g. 0.3 for 30 % of the core",
        )


@dataclass
class Candidate:
    config: ShareConfig
    builder: FsmBuilder
    fsms: list[IsaxFsm]
    mult_um2: float
    estimate_um2: float
    cycles: dict[str, tuple[int, int]] = field(default_factory=dict)
    cost: float = 0.0


def _cycles(fsms: list[IsaxFsm]) -> dict[str, tuple[int, int]]:
    return {f.isax.sym_name.data: f.latency.at(0) for f in fsms}


def fit(
    ext: aq.ExtensionOp,
    ref: tuple[FsmBuilder, list[IsaxFsm]],
    ref_estimate_um2: float,
    budget: AreaBudget,
    schedule: Callable[[ShareConfig], tuple[FsmBuilder, list[IsaxFsm]]],
    lib: OperatorLibrary,
    progress: Callable[[str], None] | None = None,
    start: ShareConfig | None = None,
    base_fsms: list[IsaxFsm] | None = None,
) -> tuple[Candidate, dict[str, Any]]:
    """The fastest choice within ``budget`` (see the module docstring) and a report of
    it. ``ref`` is the schedule of ``start`` (None: the default) and ``ref_estimate_um2``
    its unit's estimate; ``schedule(config)`` schedules the extension with a choice;
    ``base_fsms`` the default's state machines (the cycles the cost is relative to)."""
    from aquas.synth.timing import multiplier_um2

    say = progress or (lambda _m: None)
    ref_mult = multiplier_um2(ref[0])
    rest = ref_estimate_um2 - ref_mult
    base = _cycles(base_fsms or ref[1])

    def make(config: ShareConfig, sched: tuple[FsmBuilder, list[IsaxFsm]]) -> Candidate:
        b, f = sched
        m = multiplier_um2(b)
        cyc = _cycles(f)
        cost = sum(cyc[n][1] / max(1, base[n][1]) for n in cyc)
        return Candidate(config, b, f, m, rest + m, cyc, cost)

    default_merge = ref[0].sharing.merge if ref[0].sharing is not None else {}
    cur = make(start or ShareConfig(merge=tuple(sorted(default_merge.items()))), ref)
    tried = 1
    steps: list[str] = []
    smallest = cur
    classes = _own_classes(ext, lib)
    while cur.estimate_um2 > budget.um2:
        nbs: list[Candidate] = []
        for cfg in _neighbours(cur, classes, lib):
            try:
                cand = make(cfg, schedule(cfg))
            except AquasError:  # a choice the scheduler cannot build (too slow a step)
                continue
            tried += 1
            nbs.append(cand)
            if cand.estimate_um2 < smallest.estimate_um2:
                smallest = cand
        fitting = [c for c in nbs if c.estimate_um2 <= budget.um2]
        if fitting:
            nxt = min(fitting, key=lambda c: (c.cost, c.estimate_um2))
        else:
            saving = [c for c in nbs if c.estimate_um2 < cur.estimate_um2 - 1.0]
            if not saving:
                raise AquasError(
                    f"no choice of shared and sequential multipliers fits an area budget of "
                    f"{budget.fraction:g} x {budget.core} ({budget.um2:,.0f} um^2): the smallest "
                    f"estimate is {smallest.estimate_um2:,.0f} um^2 "
                    f"({100 * smallest.estimate_um2 / budget.core_um2:.1f} % of the core; "
                    f"{', '.join(smallest.config.describe())}), of which "
                    f"{rest:,.0f} um^2 is logic the multipliers do not change",
                    hint=NO_FIT_HINT,
                )
            nxt = max(
                saving,
                key=lambda c: (cur.estimate_um2 - c.estimate_um2) / max(c.cost - cur.cost, 1e-3),
            )
        steps.append(
            f"{'; '.join(nxt.config.describe())}: {nxt.estimate_um2:,.0f} um^2, "
            f"cycles x{nxt.cost / len(base):.3f}"
        )
        say(f"area budget: {steps[-1]}")
        cur = nxt
    report = {
        "fraction": budget.fraction,
        "budget_um2": round(budget.um2, 1),
        "core_um2": round(budget.core_um2, 1),
        "default_estimate_um2": round(ref_estimate_um2, 1),
        "chosen_estimate_um2": round(cur.estimate_um2, 1),
        "chosen": cur.config.describe(),
        "why": (
            "the default fits the budget"
            if not steps
            else f"the fastest choice found within the budget after {len(steps)} step(s)"
        ),
        "steps": steps,
        "choices_scheduled": tried,
        "cycles_default": {n: list(c) for n, c in base.items()},
        "cycles_chosen": {n: list(c) for n, c in cur.cycles.items()},
    }
    return cur, report


def _own_classes(ext: aq.ExtensionOp, lib: OperatorLibrary) -> list[UnitClass]:
    """The classes of the extension's multiplies by their own width."""
    out = set()
    for op in ext.walk():
        c = class_of(op, lib)
        if c is not None:
            out.add(c)
    return sorted(out)


def _neighbours(
    cur: Candidate, classes: list[UnitClass], lib: OperatorLibrary
) -> list[ShareConfig]:
    cfg = cur.config
    out: list[ShareConfig] = []
    binding = cur.builder.binding
    counts = binding.counts() if binding is not None else {}
    seq = dict(cfg.sequential)
    caps = dict(cfg.caps)
    # one unit fewer of a shared class
    for c, n in sorted(counts.items()):
        if n > 1:
            out.append(replace(cfg, caps=tuple(sorted((caps | {c: n - 1}).items()))))
    # a class onto the sequential multiplier (fastest step), or its step one narrower
    for c in classes:
        try:
            entry = lib.meta["multicycle"]["mul"]["widths"]
        except KeyError:
            return out
        widths = sorted(int(w) for w in entry)
        measured = next((w for w in widths if w >= c.width), None)
        if measured is None:
            continue
        digits = sorted(int(d) for d in entry[str(measured)] if int(d) <= c.width)
        # every step width: the fastest one may be larger than a narrowed multiplier
        for d in digits if c not in seq else [d for d in digits if d < seq[c]]:
            nseq = seq | {c: d}
            out.append(replace(cfg, sequential=tuple(sorted(nseq.items()))))
    # another merge option (only while nothing else was changed: the options are few)
    if not cfg.caps and not cfg.sequential:
        for m in merge_options(classes):
            opt = tuple(sorted(m.items()))
            if opt != cfg.merge:
                out.append(replace(cfg, merge=opt))
    return out


__all__ = ["AreaBudget", "Candidate", "check_fraction", "fit"]
