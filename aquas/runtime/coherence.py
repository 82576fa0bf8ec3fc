"""Keeping the core's data cache coherent with what an ISAX writes.

An ISAX's memory traffic bypasses the core's data cache (docs/isax-port.md). On a
write-through cache memory is always current, so an ISAX that only reads memory needs nothing;
after an ISAX that writes memory, lines of the written range that the cache holds are stale.
Two strategies remove them:

* ``invalidate-all``: the core's whole-cache flush instruction (``dcache.flush_word``). It
  costs ``dcache.invalidate_cycles`` and, afterwards, a refill of every line of the core's
  working set, not only of the lines the ISAX wrote.
* ``evict-lines``: one conflict load per cache line of the written range. In a direct-mapped
  cache (``dcache.ways = 1``) of ``S`` bytes, a load from ``a ^ S`` maps to the set of ``a``
  with another tag, so it replaces whatever line that set holds, the stale one included. It
  costs one line refill per line (:func:`line_refill_cycles`), and needs the range the ISAX
  writes as a function of its operands (:func:`write_footprint`).

:func:`plan` picks, per ISAX, the cheaper of the two that applies (``dcache.coherence =
"auto"``), or the one the descriptor forces. The runtime header (``aquas.runtime.header``)
carries the plan out, and the matcher counts its cost in an ISAX call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xdsl.ir import SSAValue

from aquas.dialects import aquas as aq
from aquas.dialects.linear import induction_loop, linear_form, trip_count
from aquas.target import Target

#: How far an address is followed back through arithmetic (unrolled or nested loops).
ADDRESS_DEPTH = 32


@dataclass(frozen=True)
class Span:
    """Bytes ``[base + lo, base + hi)`` an ISAX may write, where ``base`` is the value of
    source register ``rs1`` or ``rs2``, or ``0`` for an absolute address (``base == ""``)."""

    base: Literal["rs1", "rs2", ""]
    lo: int
    hi: int
    align: int = 1  # the accesses' natural alignment (bytes): the smallest access size

    @property
    def size(self) -> int:
        return self.hi - self.lo


def _signed32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def _write_span(addr: SSAValue, nbytes: int, align: int) -> Span | None:
    const, terms = linear_form(addr, ADDRESS_DEPTH)
    base: Literal["rs1", "rs2", ""] = ""
    lo = hi = _signed32(const)
    for term, k in terms.items():
        k = _signed32(k)
        owner = getattr(term, "owner", None)
        if isinstance(owner, aq.ReadRs1Op | aq.ReadRs2Op) and k == 1 and not base:
            base = "rs1" if isinstance(owner, aq.ReadRs1Op) else "rs2"
            continue
        loop = induction_loop(term)
        trips = trip_count(loop) if loop is not None else None
        if trips is None:
            return None  # a data-dependent address: the footprint is unknown
        reach = k * max(trips - 1, 0)
        lo += min(0, reach)
        hi += max(0, reach)
    return Span(base, lo, hi + nbytes, align)


def write_footprint(isax: aq.IsaxOp) -> tuple[Span, ...] | None:
    """The memory ``isax`` may write, one merged span per base register, or ``None`` when an
    address is not ``rs1``/``rs2``/absolute plus a constant and bounded loop terms."""
    spans: dict[str, Span] = {}
    for op in isax.walk():
        if isinstance(op, aq.StoreOp):
            t = op.value.type
            assert isinstance(t, aq.IntegerType)
            size = max(1, t.width.data // 8)
            span = _write_span(op.addr, size, size)
        elif isinstance(op, aq.BurstWriteOp):
            elem = aq.scratchpad_of(op).width // 8
            span = _write_span(op.addr, max(1, elem) * op.length_value, max(1, elem))
        else:
            continue
        if span is None:
            return None
        old = spans.get(span.base)
        spans[span.base] = (
            span
            if old is None
            else Span(
                span.base,
                min(old.lo, span.lo),
                max(old.hi, span.hi),
                min(old.align, span.align),
            )
        )
    return tuple(spans[b] for b in sorted(spans))


def line_fill_cycles(p: Target) -> int:
    """One D-cache line fill: the request cycle, the memory latency, one beat per word."""
    return 1 + p.memory.latency + p.dcache.line_bytes // 4


def line_refill_cycles(p: Target) -> int:
    """One eviction: a conflict load that misses, so a line fill, plus the load's own issue
    and its address computation (``cost.load + cost.alu``)."""
    return line_fill_cycles(p) + int(p.cost.load + p.cost.alu)


def max_lines(span: Span, line_bytes: int) -> int:
    """Cache lines ``span`` may touch at the worst alignment of its base that keeps every
    access naturally aligned (the port requires it, docs/isax-port.md)."""
    step = min(span.align, line_bytes)
    return -(-(span.size - step) // line_bytes) + 1 if span.size > 0 else 0


@dataclass(frozen=True)
class Plan:
    """The cache maintenance after one ISAX call."""

    strategy: Literal["none", "invalidate-all", "evict-lines"]
    spans: tuple[Span, ...] = ()
    cycles: int = 0  # predicted cost of the maintenance itself (its own refills included)
    reason: str = ""


def plan(isax: aq.IsaxOp, p: Target, writes_mem: bool) -> Plan:
    """The coherence plan of ``isax`` on ``p`` (see the module docstring)."""
    d = p.dcache
    if not writes_mem or not p.ram_cached or d.policy == "none":
        return Plan("none", reason="no cached line can be stale")

    def whole(reason: str) -> Plan:
        return Plan("invalidate-all", cycles=d.invalidate_cycles, reason=reason)

    if d.policy != "write-through" or d.coherence == "invalidate-all":
        return whole(f"dcache.coherence = {d.coherence!r}, {d.policy} cache")
    if d.ways != 1 or p.memory.ram_size < 2 * d.size:
        return whole("a conflict load cannot evict a given line of this cache")
    spans = write_footprint(isax)
    if spans is None:
        return whole("an address the ISAX writes is data-dependent")
    if any(s.size > d.size // 2 for s in spans):
        return whole("the written range is larger than half the cache")
    lines = sum(max_lines(s, d.line_bytes) for s in spans)
    cost = lines * line_refill_cycles(p)
    if d.coherence == "auto" and cost >= d.invalidate_cycles:
        return whole(f"{lines} line evictions ({cost} cycles) cost more than an invalidate")
    return Plan("evict-lines", spans, cost, reason=f"evict the {lines} line(s) it may write")
