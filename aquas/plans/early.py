"""``aquas-interface-early``: send a memory request ahead, under the compute before it.

The plan annotates each selected ISAX with ``aquas.early`` (``synth/fsm.EARLY_ATTR``).
Synthesis then finds, per wait state, the compute states the FSM runs since the memory
access before it (its *window*, walked from the ISAX's entry with loops by their trip
counts: ``FsmBuilder.mark_early``) and lets the memory engine send the wait state's request
in those states, once, as soon as the port takes it (``synth/memengine.py``). The memory's
latency then runs under the compute; the wait state keeps one cycle and its data beats,
and waits only for what is left of the latency (the model: ``docs/memory-model.md``).
Typical: the burst that writes a result after the loop computing it (``v3ddist``), the
burst that reads a second buffer after the first one was reduced.

A wait state keeps its own request when its address is not index arithmetic over
``rs1``, ``rs2`` and constants (then it may not hold during the window), when it runs more
than once per call (inside a loop), when a data-dependent branch precedes it, when it has
no compute before it, or when it is part of a run (``aquas-interface-outstanding``) or a
resident burst (``aquas-interface-resident``). Requests are still sent in program order,
one in flight, and no data moves before its wait state, so the golden semantics are
untouched: the annotation changes only the unit's timing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass

from aquas.synth.fsm import EARLY_ATTR


def set_early(module: ModuleOp, only: str = "") -> None:
    """Annotates the selected ISAXs of ``module`` (all when ``only`` is empty) to send
    their requests ahead across compute."""
    from aquas.interpreter import find_extension

    names = {s for s in only.split(",") if s}
    for isax in find_extension(module).isaxs():
        if not names or isax.sym_name.data in names:
            isax.attributes[EARLY_ATTR] = UnitAttr()


@dataclass(frozen=True)
class AquasInterfaceEarlyPass(ModulePass):
    """Lets the units send each memory request ahead, under the compute before it."""

    name = "aquas-interface-early"

    only: str = ""
    """Comma-separated ISAX names to annotate (empty: every ISAX)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        set_early(op, self.only)


__all__ = ["AquasInterfaceEarlyPass", "set_early"]
