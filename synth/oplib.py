"""The operator library: logic depth (-> delay) and area per operator kind and bit width.

The data (``synth/oplib.json``) is measured by :mod:`aquas.synth.characterize`: every
combinational CIRCT ``comb`` operator kind is synthesised alone with Yosys onto a generic
2-input-gate library, at the widths 1, 2, 4, 8, 12, 16, 24, 32, 40, 48 and 64. ``depth`` is the
longest input-to-output path in cells (logic levels), ``cells`` the number of cells (area).
The technology assumption (``ns_per_level``, 0.04 ns = ~40 ps per level) converts levels to
nanoseconds. See docs/synthesis.md, "Operator library".

Kinds: ``add sub mul divu divs modu mods and or xor not shl shru shrs icmp_eq icmp_ult
icmp_slt mux mul_const divu_const modu_const``. The other comparison predicates map to the
three characterised ones (``ne``->``icmp_eq``; ``ule``/``ugt``/``uge``->``icmp_ult``;
``sle``/``sgt``/``sge``->``icmp_slt``): swapping operands or negating the 1-bit result does not
change the cost in this model. Free kinds (pure wiring: constant shifts, bit extraction,
concatenation, replication, extension, truncation, constants) cost ``OpCost(0, 0)``.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aquas import intops

#: The packaged data file.
DEFAULT_PATH = Path(__file__).with_name("oplib.json")

#: Comparison predicate -> characterised kind.
PREDICATE_KINDS: dict[str, str] = {
    p: "icmp_eq" if p in ("eq", "ne") else f"icmp_{p[0]}lt" for p in intops.PREDICATES
}

#: ``arith.cmpi`` integer predicate encoding (MLIR ``arith::CmpIPredicate``) -> name.
CMPI_PREDICATE_NAMES: dict[int, str] = dict(enumerate(intops.PREDICATES))

# The kind of a constant right-hand side where it differs from the variable one. Signed
# division/remainder by a constant is costed like the unsigned one: no separate signed *_const
# kinds are characterised, the variable-operand kinds are more pessimistic.
_CONST_KINDS: dict[str, str] = {
    "mul": "mul_const",
    "divu": "divu_const",
    "divs": "divu_const",
    "modu": "modu_const",
    "mods": "modu_const",
    "shl": "shl_const",
    "shru": "shru_const",
    "shrs": "shrs_const",
}

# arith op name -> (kind, kind when the right-hand side is a constant); a binary op's kind is
# the comb op computing it.
_ARITH_KINDS: dict[str, tuple[str, str]] = {
    o.arith: (k, _CONST_KINDS.get(k, k))
    for o in intops.BINARY.values()
    for k in [o.comb.removeprefix("comb.")]
}
_ARITH_KINDS |= {
    "arith.select": ("mux", "mux"),
    "arith.extui": ("extui", "extui"),
    "arith.extsi": ("extsi", "extsi"),
    "arith.trunci": ("trunci", "trunci"),
    "arith.constant": ("constant", "constant"),
}


def arith_kind(op_name: str, predicate: str | int | None = None, const_rhs: bool = False) -> str:
    """Map an MLIR ``arith`` op name to an operator-library kind.

    ``predicate`` is required for ``arith.cmpi`` (a name like ``"ult"``, or its integer
    encoding). ``const_rhs=True`` means the right-hand operand is a constant: it selects the
    ``*_const`` kinds for multiplication, division and remainder, and the free constant shifts.
    Raises :class:`KeyError` for an unknown op or predicate.
    """
    if op_name == "arith.cmpi":
        if predicate is None:
            raise KeyError("arith.cmpi needs a predicate (e.g. 'ult')")
        name = CMPI_PREDICATE_NAMES.get(predicate, "") if isinstance(predicate, int) else predicate
        try:
            return PREDICATE_KINDS[name]
        except KeyError:
            raise KeyError(
                f"unknown arith.cmpi predicate {predicate!r}; known: {sorted(PREDICATE_KINDS)}"
            ) from None
    try:
        plain, const = _ARITH_KINDS[op_name]
    except KeyError:
        raise KeyError(
            f"no operator-library kind for {op_name!r}; known: {sorted([*_ARITH_KINDS, 'arith.cmpi'])}"
        ) from None
    return const if const_rhs else plain


@dataclass(frozen=True)
class OpCost:
    """The cost of one operator instance: logic depth in levels and area in cells."""

    depth: int
    cells: int


@dataclass(frozen=True)
class MultiCycleOp:
    """How the scheduler treats one multi-cycle operation.

    ``latency``: the state reading the result is ``latency`` states after the issue state.
    ``ii``: the hardware accepts a new start every ``ii`` cycles. ``occupancy``: the
    states the scheduler reserves the unit for (issue through result state). ``issue_ns``:
    logic chained in the issue cycle after the operands (operand select, magnitude)."""

    unit: str
    width: int
    latency: int
    ii: int
    issue_ns: float
    cells: int
    depth: int
    digit: int = 1
    """Bits retired per cycle (quotient bits of the divider, multiplier bits of the
    multiplier)."""
    flops: int = 0
    """Of ``cells``, the flip-flops."""
    pipelined: bool = False
    """A registered shared multiplier (``synth/binding.py``): its operand and result
    registers let it start an op every cycle, each read exactly ``latency`` states after
    its issue, on one of several units of its class."""

    @property
    def key(self) -> str:
        """The shared unit: one per kind and width (``div32``)."""
        return f"{self.unit}{self.width}"

    @property
    def occupancy(self) -> int:
        """States the unit is held from the issue state: through the result state, but
        only the issue state for a pipelined unit (the next op's result reaches the
        output register a cycle after this one's is read)."""
        return 1 if self.pipelined else self.latency + 1

    @property
    def resource(self) -> str:
        return f"{self.key} unit"


class OperatorLibrary:
    """Depth and area per operator kind and width, loaded from the characterised JSON."""

    def __init__(
        self,
        ops: dict[str, dict[int, OpCost]],
        free: frozenset[str],
        ns_per_level: float,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Build a library from ``kind -> width -> cost`` tables (use :meth:`load` normally)."""
        self._ops = {k: dict(sorted(v.items())) for k, v in ops.items()}
        self._free = free
        self.ns_per_level = ns_per_level
        self.meta: dict[str, Any] = meta or {}
        #: Factor on every operator delay the scheduler chains (timing closure, see
        #: :meth:`derated`); 1.0 is the characterised model.
        self.derate = 1.0
        #: Whether the derating also decides if an operator fits a cycle alone (else the
        #: characterised delay does).
        self.derate_fit = False

    def derated(self, factor: float, fit: bool = False) -> OperatorLibrary:
        """This library with every chained delay multiplied by ``factor`` (> 0).

        Timing closure (``aquas.synth.pipeline``) uses it when the unit's critical path on
        the cell library exceeds the clock: the scheduler then chains less per cycle.
        Whether an operator fits a cycle at all (and so whether it becomes multi-cycle) is
        still decided on the characterised delays (``derate`` 1), unless ``fit``: then a
        multiplication or division slower than a cycle by its derated delay becomes
        multi-cycle (where the library has a unit for it)."""
        if not factor > 0:
            raise ValueError(f"the derating factor must be positive, not {factor}")
        lib = copy.copy(self)
        lib.derate = self.derate * factor
        lib.derate_fit = fit
        return lib

    def characterised(self) -> OperatorLibrary:
        """This library without derating (the characterised delays)."""
        return self if self.derate == 1.0 else self.derated(1 / self.derate)

    @staticmethod
    def load(path: Path | None = None) -> OperatorLibrary:
        """Load a library; ``path`` defaults to the packaged ``synth/oplib.json``."""
        data = json.loads((path or DEFAULT_PATH).read_text())
        ops = {
            kind: {int(w): OpCost(int(e["depth"]), int(e["cells"])) for w, e in entries.items()}
            for kind, entries in data["ops"].items()
        }
        meta = {k: v for k, v in data.items() if k not in ("ops", "free")}
        return OperatorLibrary(
            ops, frozenset(data["free"]), float(data["technology"]["ns_per_level"]), meta
        )

    def kinds(self) -> list[str]:
        """All known kinds: the characterised ones, then the free ones."""
        return [*self._ops, *sorted(self._free - self._ops.keys())]

    def is_free(self, kind: str) -> bool:
        """Whether ``kind`` is pure wiring (depth 0, area 0)."""
        return kind in self._free

    def widths(self, kind: str) -> list[int]:
        """The characterised widths of ``kind`` (empty for free kinds)."""
        if kind in self._free:
            return []
        return list(self._table(kind))

    def _table(self, kind: str) -> dict[int, OpCost]:
        try:
            return self._ops[kind]
        except KeyError:
            raise KeyError(
                f"unknown operator kind {kind!r}; known kinds: {', '.join(self.kinds())} "
                "(use arith_kind() to map arith op names)"
            ) from None

    def cost(self, kind: str, width: int, *, extrapolate: bool = False) -> OpCost:
        """Return the cost of ``kind`` at ``width`` bits.

        Exact for a characterised width; between two characterised widths the depth and the
        cells are each interpolated linearly and rounded up. Beyond the widest characterised
        width (64) this raises :class:`ValueError` unless ``extrapolate=True``, which continues
        the line through the two widest points (rounded up). Free kinds cost ``OpCost(0, 0)``;
        an unknown kind raises :class:`KeyError`.
        """
        if kind in self._free:
            return OpCost(0, 0)
        table = self._table(kind)
        if width < 1:
            raise ValueError(f"{kind}: width must be >= 1, got {width}")
        if width in table:
            return table[width]
        ws = list(table)
        if width > ws[-1]:
            if not extrapolate or len(ws) < 2:
                raise ValueError(
                    f"{kind}: width {width} is beyond the characterised widths (max {ws[-1]}); "
                    "split the operation, re-characterise with a wider --widths, "
                    "or pass extrapolate=True"
                )
            lo, hi = ws[-2], ws[-1]
        elif width < ws[0]:
            lo = hi = ws[0]  # clamp below the narrowest width
        else:
            hi = next(w for w in ws if w > width)
            lo = max(w for w in ws if w < width)
        if lo == hi:
            return table[lo]
        t = (width - lo) / (hi - lo)
        a, b = table[lo], table[hi]

        def lerp(x: int, y: int) -> int:
            # round() first so exact results (e.g. 12.000000001) are not bumped up by ceil
            return max(0, math.ceil(round(x + (y - x) * t, 9)))

        return OpCost(lerp(a.depth, b.depth), lerp(a.cells, b.cells))

    def division_by_constant_depth(self, kind: str, width: int, divisor: int) -> int:
        """Logic depth of ``kind`` (``divu``, ``divs``, ``modu``, ``mods``) at ``width`` by
        the constant ``divisor``: the variable divider's depth scaled by the quotient
        bits that remain, ``depth(kind, w) * (w - bitlen(divisor) + 1) / w``.

        The ``*_const`` entries are measured for two large constants only, and a small
        divisor is much deeper (``a / 3`` at 16 bits: 194 levels, where ``divu_const``
        says 65). The estimate is at or above every measured ``*_const`` variant (44
        points, within 20%; ``a / 3`` at 16 bits: 225)."""
        d = divisor & ((1 << width) - 1)
        base = self.cost(kind, width).depth
        if d == 0:
            return base
        return math.ceil(base * (width - d.bit_length() + 1) / width)

    def delay_ns(self, kind: str, width: int, *, extrapolate: bool = False) -> float:
        """The delay of ``kind`` at ``width`` in ns: ``depth * ns_per_level * derate``."""
        return self.levels_ns(self.cost(kind, width, extrapolate=extrapolate).depth)

    def levels_ns(self, levels: int) -> float:
        """The delay of ``levels`` gate levels in ns (derated like every operator's)."""
        return levels * self.ns_per_level * self.derate

    def multicycle_units(self) -> list[str]:
        """The sequential units the library describes (``"div"``)."""
        return list(self.meta.get("multicycle", {}))

    def multicycle(
        self, unit: str, width: int, budget_ns: float | None = None, digit: int | None = None
    ) -> MultiCycleOp:
        """The multi-cycle ``unit`` (``"div"``, ``"mul"``) at ``width`` bits.

        The unit retires ``d`` bits per cycle (the divider: ``d`` restoring steps chained,
        ``d`` dividing ``width``; the multiplier: a ``width``-by-``d`` partial product). The
        library measures it per width and ``d``; a width between measured ones takes the
        figures of the narrowest measured width above it (conservative). With
        ``budget_ns``, ``d`` is the widest whose depth fits it (fewest cycles); without,
        the narrowest; ``digit`` caps ``d`` (the widest measured one up to it that
        fits: a smaller, slower unit, for an area budget). Latency and initiation interval are ``per_step * ceil(width / d) +
        extra``; ``issue_ns`` is the library's ``"issue"`` kinds at ``width``. Raises
        :class:`KeyError` for an unknown unit and :class:`ValueError` for a width outside
        the measured ones or no ``d`` that fits."""
        try:
            entry = self.meta["multicycle"][unit]
        except KeyError:
            raise KeyError(
                f"no multi-cycle unit {unit!r} in the operator library; "
                f"known: {self.multicycle_units()}"
            ) from None
        widths = sorted(int(w) for w in entry["widths"])
        if not 2 <= width <= widths[-1]:
            raise ValueError(f"multi-cycle {unit}: width {width} is outside 2..{widths[-1]} bits")
        measured = next(w for w in widths if w >= width)
        digits = {
            int(d): e
            for d, e in entry["widths"][str(measured)].items()
            if int(d) <= width and not (entry.get("divides_width") and width % int(d))
        }
        fits = [
            d
            for d, e in digits.items()
            if budget_ns is None or int(e["depth"]) * self.ns_per_level <= budget_ns
        ]
        if digit is not None:
            fits = [d for d in fits if d <= digit]
        if not fits:
            raise ValueError(f"multi-cycle {unit}: no step width of a {width}-bit unit fits")
        d = min(fits) if budget_ns is None else max(fits)
        steps = -(-width // d)
        lat, ii = entry["latency"], entry["ii"]
        return MultiCycleOp(
            unit,
            width,
            int(lat["per_step"]) * steps + int(lat["extra"]),
            int(ii["per_step"]) * steps + int(ii["extra"]),
            sum(self.delay_ns(k, width) for k in entry["issue"]),
            int(digits[d]["cells"]),
            int(digits[d]["depth"]),
            d,
            int(digits[d].get("flops", 0)),
        )

    def levels_per_cycle(self, clock_ns: float) -> int:
        """How many logic levels fit in a clock period of ``clock_ns`` nanoseconds."""
        return math.floor(round(clock_ns / self.ns_per_level, 9))
