"""Core-side cost of one offload site: the ISAX plus the D-cache maintenance around it.

The unit's memory traffic bypasses the core's D-cache (docs/isax-port.md), so after an
ISAX that writes memory the core must not read stale lines. What that costs depends on the
coherence strategy the runtime uses (``aquas_isax.h``):

* ``none``: the core has no D-cache (or the RAM is not cached): nothing to do.
* ``invalidate-all``: one whole-cache invalidate (``dcache.invalidate_cycles``), then every
  line the core touches afterwards is refilled from memory (``refill_lines``, a parameter
  of the site: the model cannot know the program's later reads).
* ``evict-lines``: each D-cache line the ISAX wrote is pushed out by conflict loads, one
  per way of its set (``dcache.ways``, 1 when the descriptor has no such key); each load
  misses: the memory latency, ``line_bytes / 4`` beats and the load's own issue cost
  (``cost.load + cost.alu``: the load and its address computation).

A pure function of its arguments and the descriptor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from aquas.diagnostics import AquasError
from aquas.model.predict import IsaxPrediction
from aquas.runtime.coherence import line_fill_cycles, line_refill_cycles
from aquas.target import Target

Coherence = Literal["none", "invalidate-all", "evict-lines"]
COHERENCE_STRATEGIES: tuple[str, ...] = ("none", "invalidate-all", "evict-lines")


@dataclass(frozen=True)
class OffloadCost:
    isax_cycles: float
    call_overhead: int  # cost.call_overhead: operands into registers, the instruction
    maintenance_cycles: float  # invalidate, or the eviction loads
    refill_cycles: float  # refills of the lines the core touches afterwards
    coherence: str

    @property
    def total(self) -> float:
        return self.isax_cycles + self.call_overhead + self.maintenance_cycles + self.refill_cycles

    def as_dict(self) -> dict[str, Any]:
        return {
            "coherence": self.coherence,
            "isax_cycles": round(self.isax_cycles, 2),
            "call_overhead": self.call_overhead,
            "maintenance_cycles": round(self.maintenance_cycles, 2),
            "refill_cycles": round(self.refill_cycles, 2),
            "total": round(self.total, 2),
        }


def written_lines(written_bytes: int, line_bytes: int) -> int:
    """D-cache lines a contiguous, line-aligned write of ``written_bytes`` covers."""
    return math.ceil(written_bytes / line_bytes) if written_bytes > 0 else 0


def offload_cost(
    isax_prediction: IsaxPrediction | float,
    target: Target,
    written_bytes: int,
    coherence: str,
    refill_lines: int = 0,
) -> OffloadCost:
    """Cycles of one offload site on ``target`` with the ``coherence`` strategy.

    ``isax_prediction``: the ISAX's prediction (or its cycles); ``written_bytes``: bytes the
    ISAX writes to memory per call; ``refill_lines``: D-cache lines the core reads after the
    call that a whole-cache invalidate forces it to refill (``invalidate-all`` only)."""
    if coherence not in COHERENCE_STRATEGIES:
        raise AquasError(
            f"unknown coherence strategy '{coherence}'",
            hint=f"choose one of: {', '.join(COHERENCE_STRATEGIES)}",
        )
    if written_bytes < 0 or refill_lines < 0:
        raise AquasError("written_bytes and refill_lines must be >= 0")
    cycles = (
        isax_prediction.total if isinstance(isax_prediction, IsaxPrediction) else isax_prediction
    )
    d = target.dcache
    maint = 0.0
    refill = 0.0
    if coherence != "none" and d.policy == "none":
        raise AquasError(
            f"coherence '{coherence}' needs a D-cache, and {target.name} has none",
            hint="use coherence 'none'",
        )
    if coherence == "invalidate-all" and written_bytes > 0:
        maint = d.invalidate_cycles
        refill = refill_lines * line_fill_cycles(target)
    elif coherence == "evict-lines":
        ways = int(getattr(d, "ways", 1) or 1)
        loads = written_lines(written_bytes, d.line_bytes) * ways
        maint = loads * line_refill_cycles(target)
    return OffloadCost(cycles, target.cost.call_overhead, maint, refill, coherence)


__all__ = [
    "COHERENCE_STRATEGIES",
    "Coherence",
    "OffloadCost",
    "line_fill_cycles",
    "offload_cost",
    "written_lines",
]
