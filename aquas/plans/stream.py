"""``aquas-interface-stream``: a burst read's data arrives while the compute after it runs.

The plan annotates each selected ISAX with ``aquas.stream`` (``synth/fsm.STREAM_ATTR``).
Synthesis then finds, per burst read, the compute states the FSM runs after it up to the
next memory access (its *window*, walked with loops by their trip counts:
``FsmBuilder.mark_stream``). The burst's wait state ends once its request is out; the
memory engine moves the beats into the scratchpad while the window runs, and each window
state waits until the elements it reads have arrived (their beat is below the engine's
beat counter), so a loop over the burst's data starts on its first beats. The state that
leaves the window waits for the last beat, so the next access and the response find the
port free (``synth/rtlgen.py``, ``synth/memengine.py``). A beat arriving while a window
state reads the scratchpad's SRAM banks through the beats' port waits a cycle.

A burst keeps its wait state when its address is not index arithmetic over ``rs1``,
``rs2`` and constants or its scratchpad offset is not a constant, when it runs more than
once per call, when it is part of a run (``aquas-interface-outstanding``), when its
elements are wider than a beat, when its window writes its scratchpad, or when a state of
the window reads the scratchpad at an index that is not a constant plus constant
multiples of the loop counters (the model could not tell when that state may run). A
resident burst (``aquas-interface-resident``) may stream: a call whose claim holds skips
it, any other streams its fill. A streamed burst's window sends no request ahead
(``aquas-interface-early``): it moves data. The plan also orders each run of reads with
its largest burst last (:func:`largest_read_last`). Reads see exactly the bytes the burst
brings, so the golden semantics are untouched: the annotation changes only the unit's
timing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from aquas.dialects import aquas as aq
from aquas.dialects.aquas import scratchpad_of
from aquas.synth.fsm import STREAM_ATTR


def set_stream(module: ModuleOp, only: str = "") -> None:
    """Annotates the selected ISAXs of ``module`` (all when ``only`` is empty) to stream
    their burst reads into the compute after them, each read group ordered by
    :func:`largest_read_last`."""
    from aquas.interpreter import find_extension

    names = {s for s in only.split(",") if s}
    for isax in find_extension(module).isaxs():
        if not names or isax.sym_name.data in names:
            isax.attributes[STREAM_ATTR] = UnitAttr()
            largest_read_last(isax.body.block)


def largest_read_last(block: Block) -> None:
    """In each run of consecutive memory reads of ``block`` (loads and burst reads, with
    only pure arithmetic between them), moves the largest burst read to the end of the
    run: only the last access before compute has the compute after it as its window, and
    the more beats run under it the more it saves. Reads commute with reads, and the
    arithmetic between them touches no memory, so the semantics are unchanged."""
    run: list[Operation] = []
    for op in [*block.ops, None]:
        if isinstance(op, aq.LoadOp | aq.BurstReadOp):
            run.append(op)
            continue
        if (op is not None and op.dialect_name() == "arith") or isinstance(
            op, aq.ReadRs1Op | aq.ReadRs2Op
        ):
            continue  # pure: stays where it is, the run goes on
        bursts = [o for o in run if isinstance(o, aq.BurstReadOp)]
        if bursts:
            big = max(bursts, key=lambda o: o.length_value * scratchpad_of(o).width)
            later = run[run.index(big) + 1 :]
            # a later burst into the same scratchpad may overwrite what it brings
            same = [o for o in later if o in bursts and scratchpad_of(o) is scratchpad_of(big)]
            if later and not same:
                big.detach()
                block.insert_op_after(big, run[-1])
        run = []


@dataclass(frozen=True)
class AquasInterfaceStreamPass(ModulePass):
    """Lets the units run the compute after a burst read while its beats arrive."""

    name = "aquas-interface-stream"

    only: str = ""
    """Comma-separated ISAX names to annotate (empty: every ISAX)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        set_stream(op, self.only)


__all__ = ["AquasInterfaceStreamPass", "set_stream"]
