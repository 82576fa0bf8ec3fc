"""Limits of the spec language, checked by the frontend (so ``aquas check`` reports them).

Two kinds (docs/spec-language.md, "Limits"):

- fixed limits of the language and the hardware interface (:data:`MAX_CONST_BITS`,
  :data:`MAX_NAME_LENGTH`, :data:`MAX_BURST_BEATS`);
- :class:`SpecBudgets`: sizes that synthesis handles today only up to a point, beyond which it
  runs for hours or exhausts memory instead of failing. Each can be raised with an environment
  variable, for a user who accepts the cost.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, fields

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation

from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq

#: Bits of an untyped constant expression (literals and their folding). No type is wider than
#: 64 bits; the margin lets intermediate values such as ``(1 << 70) >> 10`` fold exactly.
MAX_CONST_BITS = 128
#: Characters of an extension or ISAX name: both become file, Verilog and C names, and a file
#: name component is at most 255 bytes on common file systems, prefixes and suffixes included.
MAX_NAME_LENGTH = 64
#: Bus beats of one burst: the ISAX port's ``mem_req_len`` field is 8 bits (beats - 1), and a
#: 64-bit element takes two 32-bit beats.
MAX_BURST_BEATS = 256


@dataclass(frozen=True)
class SpecBudgets:
    """Synthesis budgets; ``AQUAS_MAX_<FIELD>`` (upper case) overrides a default."""

    #: Elements of one scratchpad. Scratchpads are flip-flops today (docs/synthesis.md), and
    #: synthesis time and memory grow with the element count.
    scratchpad_elements: int = 4096
    #: Elements of one SRAM scratchpad (``impl(sram)``, or ``auto`` with large banks): an SRAM
    #: bank is one memory, not unrolled into registers and multiplexers, so generation time
    #: does not grow with it; the limit keeps simulation models reasonable (1 Mi elements).
    sram_elements: int = 1 << 20
    #: Operations of one ISAX after unrolling: each op counts the product of the unroll factors
    #: of the loops around it. RTL generation time grows about cubically with it today.
    unrolled_ops: int = 1500
    #: Burst statements of one ISAX after unrolling (each gets its own request in the memory
    #: engine and occupies every bank of its scratchpad).
    bursts: int = 64
    #: Loops nested inside each other. The IR clean-up before scheduling (xDSL's region
    #: dead-code analysis) grows faster than quadratically with the depth: 40 levels take
    #: about 1 s, 80 about 4 s, 200 about 50 s.
    loop_depth: int = 64
    #: Loop iterations one call runs (each loop's trip count times those of the loops
    #: around it, summed over the loops): a call's states run one after another, and the
    #: golden interpreter, co-simulation and the memory model step through them (60 nested
    #: two-iteration loops are 2^60 iterations: no test of them would ever end).
    iterations: int = 1 << 24
    #: Entries of one ROM (``rom``): a read with a run-time index is a tree of one
    #: multiplexer per entry, so the table's size is the read's operation count.
    rom_entries: int = 1024

    @staticmethod
    def env_var(field: str) -> str:
        return "AQUAS_MAX_" + field.upper()

    @classmethod
    def from_env(cls) -> SpecBudgets:
        """The defaults with the environment's overrides."""
        values: dict[str, int] = {}
        for f in fields(cls):
            var = cls.env_var(f.name)
            raw = os.environ.get(var)
            if raw is None:
                continue
            text = raw.strip()
            if not (text.isdigit() and len(text) <= 18 and int(text) > 0):
                raise AquasError(f"{var} must be a positive integer, got {raw!r}")
            values[f.name] = int(raw)
        return cls(**values)

    def hint(self, field: str) -> str:
        return (
            f"the limit is {getattr(self, field)}; raise it with "
            f"{self.env_var(field)}=<n> if synthesis time and memory allow "
            "(docs/spec-language.md, Limits)"
        )


def unrolled_counts(block: Block) -> tuple[int, int]:
    """(operations, burst statements) of ``block`` with every op counted once per copy the
    unroll directives of its enclosing loops make."""
    ops = bursts = 0
    for op, mult in _weighted(block, 1):
        ops += mult
        if isinstance(op, aq.BurstReadOp | aq.BurstWriteOp):
            bursts += mult
    return ops, bursts


def loop_iterations(block: Block, outer: int = 1) -> tuple[int, Operation | None]:
    """(iterations, the outermost loop running most of them): the loop iterations one
    call of ``block`` runs, each loop's trip count times the trip counts of the loops
    around it, summed over every loop (a loop whose bounds are not constants counts one
    trip)."""
    from aquas.dialects.linear import trip_count

    total, top, top_n = 0, None, -1
    for op in block.ops:
        n = outer
        if isinstance(op, scf.ForOp):
            trips = trip_count(op)
            n = outer * (1 if trips is None else trips)
            total += n
        for region in op.regions:
            for b in region.blocks:
                inner, _ = loop_iterations(b, n)
                total += inner
                if isinstance(op, scf.ForOp) and n + inner > top_n:
                    top, top_n = op, n + inner
    return total, top


def unroll_factor(op: Operation) -> int:
    attr = op.attributes.get(aq.UNROLL_ATTR)
    return int(attr.value.data) if isinstance(attr, IntegerAttr) else 1


def _weighted(block: Block, mult: int) -> Iterator[tuple[Operation, int]]:
    for op in block.ops:
        yield op, mult
        inner = mult * unroll_factor(op) if isinstance(op, scf.ForOp) else mult
        for region in op.regions:
            for b in region.blocks:
                yield from _weighted(b, inner)


def heaviest_unrolled_loop(block: Block, bursts: bool = False) -> Operation | None:
    """The outermost unrolled loop contributing most operations (or bursts) after unrolling:
    where a diagnostic about :func:`unrolled_counts` points."""
    best: tuple[int, Operation] | None = None
    for op in _outermost_unrolled(block):
        count = sum(
            unroll_factor(op) * unrolled_counts(b)[int(bursts)] for b in op.regions[0].blocks
        )
        if best is None or count > best[0]:
            best = (count, op)
    return best[1] if best else None


def _outermost_unrolled(block: Block) -> Iterator[Operation]:
    for op in block.ops:
        if isinstance(op, scf.ForOp) and unroll_factor(op) > 1:
            yield op
            continue
        for region in op.regions:
            for b in region.blocks:
                yield from _outermost_unrolled(b)
