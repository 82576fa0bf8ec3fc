"""``aquas-interface-outstanding``: let an ISAX's unit keep several memory requests in flight.

The plan annotates each selected ISAX with ``aquas.outstanding = n``
(``synth/fsm.OUTSTANDING_ATTR``). Synthesis then groups consecutive wait states of a
straight-line segment into *runs* of at most ``n`` states whose requests the memory engine
sends back to back, each as soon as the one before it was accepted
(``FsmBuilder.mark_runs``, ``synth/memengine.py``): the memory controller, pipelined to the
same depth (the target's ``isax_master.outstanding``, ``aquas_mem_ctrl``'s FIFO), runs their
latencies under the data of the transactions before them, so every request of a run after
its first costs only its data beats (and a write's acknowledgement). Requests are still
issued and served in program order, so no access is reordered and the golden semantics are
untouched; the annotation changes only the unit's timing.

A state stays out of a run (and keeps its own request handshake and latency) when its
address cannot be formed in the earlier states of the run: it depends on data loaded
there, or on arithmetic other than index arithmetic (``FsmBuilder.formable``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.passes import ModulePass

from aquas.diagnostics import AquasError
from aquas.synth.fsm import OUTSTANDING_ATTR

MAX_OUTSTANDING = 8
"""The most requests a unit may keep in flight (the target schema's bound)."""


def set_outstanding(module: ModuleOp, n: int, only: str = "") -> None:
    """Annotates the selected ISAXs of ``module`` (all when ``only`` is empty) with
    ``n`` requests in flight; ``n = 1`` removes the annotation."""
    from aquas.interpreter import find_extension

    if not 1 <= n <= MAX_OUTSTANDING:
        raise AquasError(
            f"aquas-interface-outstanding: n must be 1..{MAX_OUTSTANDING}, got {n}",
            hint="the target's isax_master.outstanding",
        )
    names = {s for s in only.split(",") if s}
    for isax in find_extension(module).isaxs():
        if names and isax.sym_name.data not in names:
            continue
        if n == 1:
            isax.attributes.pop(OUTSTANDING_ATTR, None)
        else:
            isax.attributes[OUTSTANDING_ATTR] = IntegerAttr(n, IntegerType(32))


@dataclass(frozen=True)
class AquasInterfaceOutstandingPass(ModulePass):
    """Lets the unit keep ``n`` memory requests in flight (runs of requests sent ahead);
    ``n`` must not exceed the target's ``isax_master.outstanding``."""

    name = "aquas-interface-outstanding"

    n: int = 2
    """Requests in flight (1..8)."""

    only: str = ""
    """Comma-separated ISAX names to annotate (empty: every ISAX)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        set_outstanding(op, self.n, self.only)


__all__ = ["MAX_OUTSTANDING", "AquasInterfaceOutstandingPass", "set_outstanding"]
