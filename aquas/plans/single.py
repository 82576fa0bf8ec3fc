"""``aquas-interface-single``: lower bursts to single-shot accesses (the inverse plan).

``burst_read`` of ``n`` elements becomes ``n`` pairs ``load`` + ``spm_write`` and
``burst_write`` becomes ``n`` pairs ``spm_read`` + ``store``, in element order, so memory
sees the same addresses in the same order with one request per element. The scratchpads
stay: the ISAX body still computes on them. Straight-line code (no loop) lets the scheduler
issue the requests back to back on the memory port.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from aquas.dialects import aquas as aq
from aquas.plans.common import Emitter, Rejection, record, rejection, scratchpad_of, selected

PLAN = "aquas-interface-single"
MAX_ELEMENTS = 256
"""A burst longer than this stays a burst (it would unroll into too many ops)."""


def _spm(op: aq.BurstReadOp | aq.BurstWriteOp) -> aq.ScratchpadOp:
    return scratchpad_of(op)


def _lower(op: aq.BurstReadOp | aq.BurstWriteOp) -> None:
    spm = _spm(op)
    name = spm.sym_name.data
    width = spm.width
    size = width // 8
    blk = op.parent_block()
    assert blk is not None
    em = Emitter(blk, op, op)
    for k in range(op.length_value):
        addr = em.add_i32(op.addr, k * size)
        idx = em.add_i32(op.offset, k)
        if isinstance(op, aq.BurstReadOp):
            v = em.add(aq.LoadOp(addr, width)).results[0]
            em.add(aq.SpmWriteOp(v, name, idx))
        else:
            v = em.add(aq.SpmReadOp(name, idx, width)).results[0]
            em.add(aq.StoreOp(v, addr))
    blk.erase_op(op)


def single(module: ModuleOp, only: str = "") -> list[Rejection]:
    """Lowers every burst of the selected ISAXs in place; returns what it left alone."""
    found: list[Rejection] = []
    for isax in list(selected(module, only)):
        mine: list[Rejection] = []
        bursts: list[Operation] = [
            o for o in isax.body.walk() if isinstance(o, aq.BurstReadOp | aq.BurstWriteOp)
        ]
        for op in bursts:
            assert isinstance(op, aq.BurstReadOp | aq.BurstWriteOp)
            if op.length_value > MAX_ELEMENTS:
                mine.append(
                    rejection(
                        PLAN,
                        isax,
                        op,
                        f"a burst of {op.length_value} elements would unroll into more than "
                        f"{MAX_ELEMENTS} single-shot accesses",
                    )
                )
                continue
            _lower(op)
        record(isax, mine)
        found += mine
    module.verify()
    return found


@dataclass(frozen=True)
class AquasInterfaceSinglePass(ModulePass):
    """Lowers burst transfers to one single-shot load or store per element.

    The inverse of ``aquas-interface-burst``: memory sees the same bytes in the same
    order, one request at a time, so the flow can compare both plans for every ISAX."""

    name = "aquas-interface-single"

    only: str = ""
    """Comma-separated ISAX names to rewrite (empty: every ISAX)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        single(op, self.only)
