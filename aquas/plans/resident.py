"""``aquas-interface-resident``: keep a burst's scratchpad contents across ISAX calls.

An ISAX that bursts the same memory into a scratchpad on every call (``vnearest`` reads the
same 64-point cloud for each of 64 query points) pays the transfer each time. When the
memory system tells the unit of every write to RAM by any master (the target's
``isax_master.snoop_writes``: ``aquas_mem_ctrl``'s snoop port, docs/isax-port.md), the
unit can keep the scratchpad *resident*: it remembers the address of the last completed
fill and drops that claim when a write touches the filled range. A call whose burst
address equals the remembered one, with the claim intact, skips the transfer: the
scratchpad already holds exactly those bytes. This is a cache of one line per
scratchpad, kept coherent by snooping, so the ISAX's semantics do not change (the golden
interpreter re-reads memory and finds the same values).

The plan marks a ``burst_read`` with ``aquas.resident`` when its contents are a function
of its address alone:

* it is the only op of the extension that writes its scratchpad (no ``spm_write``, no
  other burst into it), so nothing else changes the contents between calls;
* it runs once per call: it sits in the ISAX body itself, not in a loop or a branch;
* its scratchpad offset is a constant.

Synthesis (``synth/memengine.py``) builds the claim registers and the skip for each marked
burst whose wait state is not part of a run of requests sent ahead.

The flow (``aquas.plans.choose``) keeps only SRAM scratchpads resident (``sram_only``): a
claim (a 32-bit address register, the snoop's range check, the address compare) costs
about as much as a small register scratchpad itself, and a register scratchpad that holds
nothing across calls shares its flip-flops with the other ISAXs' registers
(``fsm.call_local_registers``). On the point cloud at the core's clock, vgemv4's six
register buffers and vnearest's query point were resident: without their claims the unit
is 237,282 um^2 (609 flip-flops) smaller, for no cycle of the program (every
``icp_nearest`` call asks about another query point, and vgemv4 is not called). The pass
itself marks every eligible burst.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass

from aquas.dialects import aquas as aq
from aquas.dialects.aquas import constant_value
from aquas.synth.fsm import RESIDENT_ATTR


def resident_bursts(module: ModuleOp, sram_only: bool = False) -> list[aq.BurstReadOp]:
    """The burst reads of ``module`` whose scratchpad may stay resident (module docstring);
    ``sram_only``: into SRAM scratchpads only."""
    from aquas.interpreter import find_extension
    from aquas.synth.sram import is_sram

    writers: dict[str, list[object]] = {}
    for op in find_extension(module).walk():
        if isinstance(op, aq.BurstReadOp | aq.SpmWriteOp):
            writers.setdefault(op.scratchpad.root_reference.data, []).append(op)
    out = []
    for ops in writers.values():
        if len(ops) != 1 or not isinstance(ops[0], aq.BurstReadOp):
            continue
        op = ops[0]
        if sram_only and not is_sram(aq.scratchpad_of(op)):
            continue
        if isinstance(op.parent_op(), aq.IsaxOp) and constant_value(op.offset) is not None:
            out.append(op)
    return out


def mark_resident(module: ModuleOp, sram_only: bool = False) -> dict[str, list[str]]:
    """Marks every eligible burst read (``resident_bursts``); returns ISAX -> the
    scratchpads it may keep resident."""
    marked: dict[str, list[str]] = {}
    for op in resident_bursts(module, sram_only):
        op.attributes[RESIDENT_ATTR] = UnitAttr()
        isax = op.parent_op()
        assert isinstance(isax, aq.IsaxOp)
        marked.setdefault(isax.sym_name.data, []).append(op.scratchpad.root_reference.data)
    return marked


@dataclass(frozen=True)
class AquasInterfaceResidentPass(ModulePass):
    """Lets the unit keep burst-filled scratchpads resident across calls (needs a target
    whose memory system reports RAM writes: ``isax_master.snoop_writes``)."""

    name = "aquas-interface-resident"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        mark_resident(op)


__all__ = ["RESIDENT_ATTR", "AquasInterfaceResidentPass", "mark_resident", "resident_bursts"]
