"""``aquas-interface-split``: fit bursts to the descriptor's maximum burst length.

* **Split**: a burst of more than ``max-beats`` bus beats becomes consecutive bursts of at
  most ``max-beats`` beats each (a 64-bit element is two beats on the 32-bit ISAX port).
* **Merge**: two bursts of the same direction on the same scratchpad, next to each other
  in a block (only pure ``arith`` ops and register reads between them), where the second
  continues the first both in memory and in the scratchpad, become one when the sum fits
  in ``max-beats``: one request instead of two, one memory latency saved.

Neither changes which bytes move or their order.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from aquas.dialects import aquas as aq

# the dialect's common base of burst_read and burst_write
from aquas.dialects.aquas import _BurstOp as Burst
from aquas.plans.affine import affine
from aquas.plans.common import Emitter, scratchpad_of, selected


def _spm(op: Burst) -> aq.ScratchpadOp:
    return scratchpad_of(op)


def beats_per_element(spm: aq.ScratchpadOp) -> int:
    """Beats one element takes on the 32-bit ISAX port (as the schedule counts them)."""
    return 2 if spm.width == 64 else 1


def _new(op: Burst, em: Emitter, k0: int, n: int) -> Operation:
    size = _spm(op).width // 8
    addr = em.add_i32(op.addr, k0 * size)
    off = em.add_i32(op.offset, k0)
    name = op.scratchpad.root_reference.data
    if isinstance(op, aq.BurstReadOp):
        return em.add(aq.BurstReadOp(name, off, addr, n))
    return em.add(aq.BurstWriteOp(name, off, addr, n))


def split_burst(op: Burst, max_beats: int) -> int:
    """Splits ``op`` in place; returns how many bursts replace it."""
    per = max(1, max_beats // beats_per_element(_spm(op)))
    n = op.length_value
    if n <= per:
        return 1
    blk = op.parent_block()
    assert blk is not None
    em = Emitter(blk, op, op)
    pieces = 0
    for k0 in range(0, n, per):
        _new(op, em, k0, min(per, n - k0))
        pieces += 1
    blk.erase_op(op)
    return pieces


def _continues(a: Burst, b: Burst) -> bool:
    """``b`` starts where ``a`` ends, in memory and in the same scratchpad."""
    if type(a) is not type(b) or a.scratchpad != b.scratchpad:
        return False
    size = _spm(a).width // 8
    n = a.length_value
    fa, fb = affine(a.addr), affine(b.addr)
    oa, ob = affine(a.offset), affine(b.offset)
    if None in (fa, fb, oa, ob):
        return False
    assert fa is not None and fb is not None and oa is not None and ob is not None
    same_terms = fa.base == fb.base and fa.coefs == fb.coefs
    return (
        same_terms
        and fb.const - fa.const == n * size
        and oa.base == ob.base is None
        and oa.coefs == ob.coefs
        and ob.const - oa.const == n
    )


def _between_is_pure(a: Operation, b: Operation) -> bool:
    cur = a.next_op
    while cur is not None and cur is not b:
        if not (cur.name.startswith("arith.") or isinstance(cur, aq.ReadRs1Op | aq.ReadRs2Op)):
            return False
        cur = cur.next_op
    return cur is b


def merge_block(block: Block, max_beats: int) -> int:
    """Merges continuing bursts of ``block``; returns how many merges it made."""
    merged = 0
    changed = True
    while changed:
        changed = False
        bursts = [o for o in block.ops if isinstance(o, Burst)]
        for a, b in itertools.pairwise(bursts):
            assert isinstance(a, Burst) and isinstance(b, Burst)
            total = a.length_value + b.length_value
            if total * beats_per_element(_spm(a)) > max_beats:
                continue
            if not (_continues(a, b) and _between_is_pure(a, b)):
                continue
            # the merged burst takes a's operands, which dominate b's position
            em = Emitter(block, a, a)
            _new(a, em, 0, total)
            block.erase_op(a)
            block.erase_op(b)
            merged += 1
            changed = True
            break
    return merged


def split(module: ModuleOp, max_beats: int = 256, only: str = "") -> None:
    """Splits and merges the bursts of the selected ISAXs in place."""
    if max_beats < 1:
        raise ValueError(f"max-beats must be >= 1, got {max_beats}")
    for isax in list(selected(module, only)):
        for op in [o for o in isax.body.walk() if isinstance(o, Burst)]:
            assert isinstance(op, Burst)
            split_burst(op, max_beats)
        blocks = [isax.body.block]
        blocks += [b for o in isax.body.walk() for r in o.regions for b in r.blocks]
        for blk in blocks:
            merge_block(blk, max_beats)
    # the new address arithmetic folds with canonicalize; nothing else changes
    module.verify()


@dataclass(frozen=True)
class AquasInterfaceSplitPass(ModulePass):
    """Splits bursts longer than ``max-beats`` and merges adjacent continuing bursts.

    A burst of more beats than the descriptor's ``isax_master.max_burst_beats`` becomes
    several; two bursts in a row on the same scratchpad, continuing in memory and in the
    scratchpad, become one when it fits."""

    name = "aquas-interface-split"

    max_beats: int = 256
    """Most beats one burst may take (the target's isax_master.max_burst_beats)."""

    only: str = ""
    """Comma-separated ISAX names to rewrite (empty: every ISAX)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        split(op, self.max_beats, self.only)


__all__ = ["AquasInterfaceSplitPass", "beats_per_element", "merge_block", "split"]
