"""The software cost model: cycles per dynamic operation of compiled code on each core,
and the estimate of a region's software cost that an ISAX call must beat."""

from __future__ import annotations

from dataclasses import dataclass

from aquas.egraph.semantics import Effects


@dataclass(frozen=True)
class CoreCosts:
    """Cycles per dynamic operation of compiled code on a core (estimates, see docs)."""

    alu: float
    mul: float
    div: float
    load: float
    store: float
    branch: float
    call_overhead: int  # moving operands into registers, the instruction, cache upkeep


CORES = {
    # VexRiscv_FullCfu: 5-stage, 1-cycle multiplier pass, iterative divider, 4 KiB D$.
    "vexriscv": CoreCosts(alu=1, mul=1, div=34, load=2, store=1, branch=3, call_overhead=4),
    # PicoRV32 (non-pipelined, ~3-5 cycles per instruction, PCPI multiplier/divider).
    "picorv32": CoreCosts(alu=3, mul=40, div=40, load=5, store=5, branch=5, call_overhead=12),
}


def software_cycles(fx: Effects, core: CoreCosts) -> int:
    alu = max(0, fx.ops - fx.loads - fx.stores - fx.muls - fx.divs - fx.branches)
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
