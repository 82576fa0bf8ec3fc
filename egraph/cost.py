"""The software cost model: the estimate of a region's software cost that an ISAX call must
beat, from the target descriptor's cycles per dynamic operation (``[cost]``)."""

from __future__ import annotations

from aquas.egraph.semantics import Effects
from aquas.target.schema import CostSection


def software_cycles(fx: Effects, core: CostSection) -> int:
    alu = max(0, fx.ops - fx.folded - fx.loads - fx.stores - fx.muls - fx.divs - fx.branches)
    # address arithmetic the compiler folds into loads/stores is counted as ALU work too:
    # a conservative (low) estimate of the software cost makes offloading decisions safe.
    c = (
        alu * core.alu * 0.5
        + fx.muls * core.mul
        + fx.divs * core.div
        + fx.loads * core.load
        + fx.stores * core.store
        + fx.branches * core.branch
    )
    return int(c)
