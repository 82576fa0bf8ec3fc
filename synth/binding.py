"""Resource sharing: expensive combinational operators bound to a few shared units.

Every multiply of the datapath used to get its own multiplier, although an ISAX uses each
only in one state and only one ISAX of a unit runs at a time. Here the multiplies of one
width (a *unit class*, ``mul32``, ``mul64``) share a bounded set of functional units:

* **Which ops.** A kind is shared at a width when its operator costs more than
  ``SHARE_FACTOR`` times the input select one more user adds (an AND and an OR per bit
  of each of the two operands), by the operator library's Yosys figures
  (``synth/oplib.json``): ``mul`` from 8 bits (140 cells against 2 x (8 + 8) = 32 per
  user) up to 64 (12,312 against 256). Adders, subtracters and comparators are never
  worth it (``add`` at 32 bits: 220 cells against 128 per user, and the select also
  lengthens the chained path), nor are the ops chained after a shared unit. Multiplies
  by a constant stay where they are (the constant folds into the array), so do those on
  the sequential multiplier (``synth/multicycle.py``, already one unit per width) and a
  class with a single op in the whole extension (nothing to share with).
* **How many units.** The number of units of a class is a per-cycle resource limit of
  each ISAX's scheduling problems (``synth/schedule.py``), so the list scheduler and
  ``verify`` respect it. It is, per ISAX, the ``#[mul_units(N)]`` directive of the spec
  if there is one, else the fewest units that keep the ISAX within 10 % of its cycles
  without sharing (:func:`choose_limits`, bisection from its peak use in the schedule
  without a limit). The unit has ``max`` over the ISAXs of that limit, and each ISAX may
  use all of them; sharing across ISAXs costs no cycle.
* **Narrowed operands.** A multiply of sign or zero extensions of ``k``-bit values is
  computed by a ``k``-bit multiplier (:func:`narrowing`, :func:`narrow_mul`); a class
  takes its widest user.
* **Input multiplexers.** A unit's operands are an AND-OR select over the states using
  it; its delay (an AND and ``ceil(log2 n)`` ORs for ``n`` users, ``n`` counted over the
  whole extension, an upper bound) is added to the op's chaining delay, and an op whose
  delay with the select no longer fits the cycle stays on an operator of its own.
* **Spread units.** A select has one input per state using the unit, so a class whose
  ops do not fit behind the select of all ``n`` users may fit behind that of
  ``ceil(n / k)``: the class then has at least ``k`` units (the fewest that fit, at most
  ``n / 2``), and binding gives each op the least used free unit, never one already
  serving ``ceil(n / k)`` ops (the units a state takes are always among the least used,
  so the users stay within one of an even share; an op that finds none keeps an operator
  of its own). DSP at 5.68 ns after timing closure derates the delays by 1.13: its
  16-bit multiplies (4.07 ns) fit behind a select of 16 users (0.57 ns), not of all 41
  (0.79 ns), in 4.68 ns: 4 units of at most 11 users instead of 41 multipliers.
* **Registered units.** When no multiply of a class fits a cycle with the select even
  spread (at most two users a unit) but each fits alone, the class's units are
  *registered*: the select feeds operand registers in the issue state, the
  multiply runs from them in the next cycle into a result register, and the op's result is
  read from it ``REGISTERED_LATENCY`` (2) states after the issue. Such an op is scheduled
  like a multi-cycle op (``synth/multicycle.py``) on a pipelined unit: it holds one of its
  class's units in its issue state only, and its result is read in exactly its result
  state (and copied to a register when used later). The registers also cut every
  combinational path through the unit, so binding needs no loop check for them.
* **Split units.** A registered class whose multiply no longer fits a cycle alone (its
  derated delay; the chaining holds such an op to one cycle) is split in two: the partial
  products reduced to two vectors by carry-save adders (:func:`carry_save_parts`), then
  registered, and their sum in the next cycle; read three states after the issue. The
  ISAXs with a multiply of its own that does not fit the clock are not held to the 10 %
  rule (their reference does not fit the clock); a narrower class merged onto a split
  unit does not exempt its ISAXs, and a merge is held to the cycles without merges
  (``timing.schedule_extension``): the point cloud's 32-bit multiplies run on its one split
  64-bit unit at the core's clock, one 33 x 33 multiplier instead of two.
* **Binding** (:func:`bind`), after scheduling: in each state the class's ops take the
  free units in program order. A unit's output feeds datapath logic that may feed another
  unit's input in the same state; with the AND-OR selects over all states that is a
  structural loop (a false path, but a combinational loop for Verilator, Yosys and STA)
  as soon as another state chains the two units the other way round. Taking units in
  program order makes chains within a class go from lower to higher unit indices; a
  binding that would close a loop across classes is refused, and that op gets an
  operator of its own (none of the examples needs one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from xdsl.dialects import arith, comb, scf
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation, OpResult, SSAValue

from aquas.dialects import aquas as aq
from aquas.dialects.aquas import constant_value
from aquas.synth.narrow import signed_bits, unsigned_bits
from aquas.synth.oplib import MultiCycleOp, OperatorLibrary

SHARED_KINDS: dict[str, str] = {"arith.muli": "mul"}
"""arith op → operator kind of the library that is bound to shared units."""

SHARE_FACTOR = 4
"""A kind is shared at a width when its operator costs at least this many times the
input select one more user adds (see the module docstring)."""

REGISTERED_LATENCY = 2
"""States from a registered unit's issue state to the state reading its result register."""

UNITS_ATTR = "aquas.mul_units"
"""ISAX attribute of the ``#[mul_units(N)]`` directive: at most ``N`` multipliers of each
width in one cycle of this ISAX."""


@dataclass(frozen=True, order=True)
class UnitClass:
    """The units of one operator kind and width (``mul64``)."""

    kind: str
    width: int

    @property
    def key(self) -> str:
        return f"{self.kind}{self.width}"

    @property
    def resource(self) -> str:
        return f"{self.key} unit"


def _width(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, IntegerType)
    return t.width.data


def _is_const(v: SSAValue) -> bool:
    return isinstance(v, OpResult) and isinstance(v.owner, arith.ConstantOp)


def select_cells(lib: OperatorLibrary, width: int) -> int:
    """Cells one more user adds to a unit's input selects: an AND and an OR per bit, for
    each of the two operands."""
    return 2 * (lib.cost("and", width).cells + lib.cost("or", width).cells)


def worth_sharing(lib: OperatorLibrary, kind: str, width: int) -> bool:
    """Whether an operator of ``kind`` at ``width`` costs ``SHARE_FACTOR`` times the
    select a user adds (``mul`` from 8 bits; never ``add``)."""
    if width < 2:
        return False
    try:
        cells = lib.cost(kind, width).cells
    except ValueError:  # wider than characterised
        return False
    return cells >= SHARE_FACTOR * select_cells(lib, width)


def select_ns(lib: OperatorLibrary, width: int, users: int) -> float:
    """Delay of a unit's input select over ``users`` states (0 for one)."""
    if users <= 1:
        return 0.0
    ors = math.ceil(math.log2(users))
    return lib.delay_ns("and", width) + ors * lib.delay_ns("or", width)


def class_of(op: Operation, lib: OperatorLibrary) -> UnitClass | None:
    """The unit class ``op`` would be bound to (before the checks of :class:`Sharing`)."""
    kind = SHARED_KINDS.get(op.name)
    if kind is None or any(_is_const(v) for v in op.operands):
        return None
    w = _width(op.results[0])
    return UnitClass(kind, w) if worth_sharing(lib, kind, w) else None


def merge_options(
    classes: Iterable[UnitClass], limit: int = 16
) -> list[dict[UnitClass, UnitClass]]:
    """The ways to let wider units serve narrower multiplies: per kind, each split of its
    classes (by width) into runs of consecutive widths, every class of a run served by the
    run's widest; the first option merges nothing. At most ``limit`` options (the
    examples have at most three widths of a kind: four options)."""
    by_kind: dict[str, list[UnitClass]] = {}
    for c in sorted(set(classes)):
        by_kind.setdefault(c.kind, []).append(c)
    options: list[dict[UnitClass, UnitClass]] = [{}]
    for cs in by_kind.values():
        splits: list[dict[UnitClass, UnitClass]] = []
        # a bit per gap between two consecutive widths: 1 = the narrower joins the run
        for mask in range(1 << (len(cs) - 1)):
            m: dict[UnitClass, UnitClass] = {}
            run = [cs[0]]
            for i in range(1, len(cs) + 1):
                if i < len(cs) and mask >> (i - 1) & 1:
                    run.append(cs[i])
                    continue
                for c in run[:-1]:
                    m[c] = run[-1]
                if i < len(cs):
                    run = [cs[i]]
            splits.append(m)
        options = [o | m for o in options for m in splits]
    return options[:limit]


@dataclass(frozen=True)
class Narrow:
    """A ``w``-bit multiply whose operands are the zero (``signed=False``) or sign
    extensions of their low ``bits`` bits: the low ``w`` bits of the product are those of
    a ``bits`` x ``bits`` multiply (see :func:`narrow_mul`)."""

    bits: int
    signed: bool


def narrowing(ops: Iterable[Operation]) -> Narrow | None:
    """The narrowing a unit as wide as the widest multiply of ``ops`` allows to serve them
    all, or None (``w``-bit operands): ``bits`` unsigned if every operand is the zero
    extension of that many bits, else signed over the widest sign extension.

    A narrower (``v``-bit) multiply fits too: its product is the low ``v`` bits of the
    unit's, which depend only on the operands modulo ``2^v``, and an operand that is the
    sign (zero) extension of its low ``k <= bits`` bits, extended to ``bits`` the same
    way, is that value again (see :meth:`SharedUnits.use`)."""
    ops = list(ops)
    if not ops:
        return None
    w = max(_width(op.results[0]) for op in ops)
    ku = max(max(unsigned_bits(v) for v in op.operands) for op in ops)
    ks = max(max(signed_bits(v) for v in op.operands) for op in ops)
    if ku < w and ku <= ks:
        return Narrow(max(1, ku), False)
    if ks < w:
        return Narrow(ks, True)
    return None


def narrow_mul(
    h: object, a: SSAValue, b: SSAValue, w: int, narrow: Narrow | None, hint: str
) -> SSAValue:
    """The low ``w`` bits of ``a * b`` for ``bits``-wide operands ``a``, ``b`` (the low
    bits of the multiply's operands; ``w``-bit ones without ``narrow``).

    Unsigned: a ``bits`` x ``bits`` multiply of zero-extended operands, which Yosys maps at
    that width. Signed: with ``B = 2^(bits-1)``, ``a' = a + B`` and ``b' = b + B`` are the
    operands with their sign bit flipped, unsigned, and ``a*b = a'b' - B(a' + b') + B^2``
    (mod ``2^w``): an unsigned multiply plus one addition after it (the rest is computed
    beside the array). Yosys maps it in as many cells as its own signed multiply and no
    deeper than the full ``w``-bit multiply (``tests/test_sharing.py`` measures both)."""
    from aquas.synth.hwemit import HwBuilder

    assert isinstance(h, HwBuilder)
    kind, x, y = narrow_parts(h, a, b, w, narrow, hint)
    return h.binop(kind, x, y, hint)


def narrow_parts(
    h: object, a: SSAValue, b: SSAValue, w: int, narrow: Narrow | None, hint: str
) -> tuple[str, SSAValue, SSAValue]:
    """:func:`narrow_mul` without its last op: (comb op name, its two operands)."""
    from aquas.synth.hwemit import HwBuilder

    assert isinstance(h, HwBuilder)
    if narrow is None:
        return "comb.mul", a, b
    k = narrow.bits
    if not narrow.signed:
        return "comb.mul", h.zext(a, w, f"{hint}_az"), h.zext(b, w, f"{hint}_bz")
    flip = h.const(1 << (k - 1), k)
    az = h.zext(h.binop("comb.xor", a, flip, f"{hint}_af"), w, f"{hint}_az")
    bz = h.zext(h.binop("comb.xor", b, flip, f"{hint}_bf"), w, f"{hint}_bz")
    prod = h.binop("comb.mul", az, bz, f"{hint}_p")
    total = h.binop("comb.add", az, bz, f"{hint}_s")
    if k > 1:
        total = h.concat(
            h.extract(total, 0, w - (k - 1), f"{hint}_s_lo"), h.const(0, k - 1), f"{hint}_sb"
        )
    bias = h.const((1 << (2 * k - 2)) & ((1 << w) - 1), w)
    fix = h.binop("comb.sub", bias, total, f"{hint}_fix")
    return "comb.add", prod, fix


def carry_save_parts(
    h: object, a: SSAValue, b: SSAValue, w: int, narrow: Narrow | None, hint: str
) -> tuple[SSAValue, SSAValue]:
    """:func:`narrow_mul`'s result as two ``w``-bit vectors whose sum it is: the partial
    products (one per bit of ``b``) reduced by a tree of word-wide carry-save adders, the
    first stage of a pipelined multiplier whose second stage is that one addition.

    Written out by hand because Yosys maps ``*`` as one cell whose final adder cannot be
    cut off. The signed correction of :func:`narrow_parts`, ``B^2 - B(a' + b')``, joins the
    tree as three more vectors (``-x = ~x + 1``): ``B^2 + 2``, ``~(a'B)`` and ``~(b'B)``."""
    from aquas.synth.hwemit import HwBuilder, width

    assert isinstance(h, HwBuilder)
    mask = (1 << w) - 1

    def shl(v: SSAValue, n: int, tag: str) -> SSAValue:
        return h.shl_const(v, n, f"{hint}_{tag}")

    vectors: list[SSAValue] = []
    if narrow is not None and narrow.signed:
        k = narrow.bits
        flip = h.const(1 << (k - 1), k)
        a = h.binop("comb.xor", a, flip, f"{hint}_af")
        b = h.binop("comb.xor", b, flip, f"{hint}_bf")
        x = h.zext(a, w, f"{hint}_az")
        vectors.append(h.const(((1 << (2 * k - 2)) + 2) & mask, w))
        for v, tag in ((x, "na"), (h.zext(b, w, f"{hint}_bz"), "nb")):
            inv = h.binop("comb.xor", shl(v, k - 1, f"{tag}s"), h.const(mask, w), f"{hint}_{tag}")
            vectors.append(inv)
    else:
        x = h.zext(a, w, f"{hint}_az")
    for i in range(min(width(b), w)):
        bit = h.replicate(h.extract(b, i, 1, f"{hint}_b{i}"), w, f"{hint}_m{i}")
        vectors.append(h.add(comb.AndOp([shl(x, i, f"x{i}"), bit]), f"{hint}_pp"))
    level = 0
    while len(vectors) > 2:
        nxt: list[SSAValue] = []
        for j in range(0, len(vectors) - 2, 3):
            p, q, r = vectors[j : j + 3]
            tag = f"{hint}_c{level}"
            total = h.add(comb.XorOp([p, q, r]), f"{tag}_s")
            pairs = [h.add(comb.AndOp([u, v]), f"{tag}_and") for u, v in ((p, q), (p, r), (q, r))]
            carry = h.add(comb.OrOp(pairs), f"{tag}_maj")
            nxt += [total, shl(carry, 1, f"c{level}_k")]
        nxt += vectors[len(vectors) - len(vectors) % 3 :] if len(vectors) % 3 else []
        vectors = nxt
        level += 1
    if len(vectors) == 1:
        vectors.append(h.const(0, w))
    return vectors[0], vectors[1]


def carry_save_levels(vectors: int) -> int:
    """Carry-save levels that reduce ``vectors`` to two (three in, two out per adder)."""
    levels = 0
    while vectors > 2:
        vectors = vectors - vectors // 3
        levels += 1
    return levels


def split_stage_ns(
    lib: OperatorLibrary, c: UnitClass, narrow: Narrow | None
) -> tuple[float, float]:
    """The delays of a split unit's two stages: the carry-save tree (the sign flips, the
    partial products' AND and three levels per carry-save level: the carry's AND and
    three-input OR) and the final adder."""
    bits = c.width if narrow is None else narrow.bits
    vectors = min(bits, c.width) + (3 if narrow is not None and narrow.signed else 0)
    levels = 2 + 3 * carry_save_levels(vectors)
    return levels * lib.delay_ns("xor", c.width), lib.delay_ns("add", c.width)


def square(h: object, x: SSAValue, w: int, hint: str) -> SSAValue:
    """The low ``w`` bits of ``x * x`` (``x`` unsigned, at most ``w`` bits), as a squarer.

    ``x^2 = sum_i x_i 2^(2i) + sum_(i<j) x_i x_j 2^(i+j+1)``: each product of two bits
    appears once, not twice as in the multiplier Yosys maps ``x * x`` to (it keeps both
    ``x_i x_j`` and ``x_j x_i`` and adds them in separate columns). Written out by hand
    for that reason: the diagonal word plus one row per bit, summed by one addition.
    On OSU018 a 32-bit square between registers maps to 58,332 um^2 and 4.19 ns against
    100,883 um^2 and 4.85 ns for ``x * x`` (``benchmarks/bench_square.py`` measures whole
    units; ``tests/test_split_mul.py`` checks the value on random and corner operands)."""
    from aquas.synth.hwemit import HwBuilder, width

    assert isinstance(h, HwBuilder)
    k = width(x)
    xw = h.zext(x, w, f"{hint}_x") if k < w else x
    bits = [h.zext(h.extract(x, i, 1, f"{hint}_b{i}"), w, f"{hint}_z{i}") for i in range(k)]

    diag = [h.shl_const(bits[i], 2 * i, f"{hint}_d{i}") for i in range(k) if 2 * i < w]
    terms = [h.add(comb.OrOp(diag), f"{hint}_diag") if len(diag) > 1 else diag[0]]
    for i in range(k):
        if 2 * i + 2 >= w or i + 1 >= k:
            break
        # x_i x_j for j > i at bit i + j + 1: the bits above i, shifted down by i + 1
        above = h.binop("comb.shru", xw, h.const(i + 1, w), f"{hint}_hi{i}")
        mask = h.replicate(h.extract(x, i, 1, f"{hint}_m{i}"), w, f"{hint}_r{i}")
        row = h.add(comb.AndOp([above, mask]), f"{hint}_and{i}")
        terms.append(h.shl_const(row, 2 * i + 2, f"{hint}_row{i}"))
    return terms[0] if len(terms) == 1 else h.add(comb.AddOp(terms), hint)


def emit_mul(h: object, op: Operation, a: SSAValue, b: SSAValue, hint: str) -> SSAValue:
    """A multiply with its own operator, narrowed to the operand bits it uses; the square
    of a value (unsigned or full width) by a squarer (:func:`square`); a multiply by a
    constant by its signed digits where they are fewer (``HwBuilder.mul_const``)."""
    from aquas.synth.hwemit import HwBuilder

    assert isinstance(h, HwBuilder)
    w = _width(op.results[0])
    for x, v in ((a, op.operands[1]), (b, op.operands[0])):
        if (c := constant_value(v)) is not None:
            return h.mul_const(x, c, hint)
    narrow = narrowing([op])
    if narrow is not None:
        a, b = h.extract(a, 0, narrow.bits), h.extract(b, 0, narrow.bits)
    if op.operands[0] is op.operands[1] and not (narrow is not None and narrow.signed):
        return square(h, a, w, hint)
    return narrow_mul(h, a, b, w, narrow, hint)


@dataclass
class Sharing:
    """What the scheduler needs to know about shared units: which op uses which class,
    the extra chaining delay of the input select, and each ISAX's limit per class."""

    classes: dict[Operation, UnitClass] = field(default_factory=dict)
    users: dict[UnitClass, int] = field(default_factory=dict)
    select: dict[UnitClass, float] = field(default_factory=dict)
    limits: dict[tuple[str, UnitClass], int] = field(default_factory=dict)
    """(ISAX, class) → uses per cycle; absent: no limit (the class's op count)."""
    directives: dict[str, int] = field(default_factory=dict)
    """ISAX → its ``#[mul_units(N)]``."""
    narrow: dict[UnitClass, Narrow | None] = field(default_factory=dict)
    """Class → the operand bits its units take (None: all ``w``)."""

    widen: dict[Operation, float] = field(default_factory=dict)
    """Op on a wider unit → the unit's extra delay over the op's own width."""
    merge: dict[UnitClass, UnitClass] = field(default_factory=dict)
    """The merge option this plan follows."""
    registered: set[UnitClass] = field(default_factory=set)
    """Classes whose units register their operands and result (see the module docstring)."""
    split: set[UnitClass] = field(default_factory=set)
    """Registered classes whose multiply is split over two cycles (a carry-save stage and
    an adder stage, :func:`carry_save_parts`): a multiply slower than the cycle alone."""
    split_isaxs: set[str] = field(default_factory=set)
    """ISAXs with an op on a split class: not held to the 10 % rule, whose reference is
    a multiply in one cycle that the clock does not fit."""
    spread: dict[UnitClass, int] = field(default_factory=dict)
    """Class → the fewest units its ``n`` users are spread over, so that no unit's select
    has more than ``ceil(n / units)`` inputs (``select`` is that select's delay)."""

    @staticmethod
    def plan(
        ext: aq.ExtensionOp,
        lib: OperatorLibrary,
        delay: Callable[[Operation], float],
        budget_ns: float,
        multicycle: Callable[[Operation], object | None],
        exclude: frozenset[str] = frozenset(),
        merge: dict[UnitClass, UnitClass] | None = None,
    ) -> Sharing:
        """The classes of ``ext``'s (prepared) ops, without limits yet; the ISAXs in
        ``exclude`` keep one operator per op. ``merge`` sends the multiplies of a class
        to the units of a wider class of the same kind (:func:`merge_options`)."""
        s = Sharing()
        merge = merge or {}
        s.merge = dict(merge)
        found: list[tuple[Operation, UnitClass]] = []
        isax_of: dict[Operation, str] = {}
        for isax in ext.isaxs():
            attr = isax.attributes.get(UNITS_ATTR)
            if attr is not None:
                s.directives[isax.sym_name.data] = int(attr.value.data)
            if isax.sym_name.data in exclude:
                continue
            for op in isax.body.walk():
                own = class_of(op, lib)
                if own is not None and multicycle(op) is None:
                    c = merge.get(own, own)
                    assert c.kind == own.kind and c.width >= own.width, (own, c)
                    found.append((op, c))
                    isax_of[op] = isax.sym_name.data
                    if c != own:
                        s.widen[op] = max(
                            0.0, lib.delay_ns(c.kind, c.width) - lib.delay_ns(own.kind, own.width)
                        )
        for _, c in found:
            s.users[c] = s.users.get(c, 0) + 1
        own_ns = {op: delay(op) + s.widen.get(op, 0.0) for op, _ in found}
        for c, n in s.users.items():
            s.select[c] = select_ns(lib, c.width, n)
            fitting = [own_ns[op] for op, oc in found if oc == c and own_ns[op] <= budget_ns]
            if n < 4 or not fitting or max(fitting) + s.select[c] <= budget_ns:
                continue
            # spread the users over more units, each with a smaller select (at least two
            # users a unit, or sharing saves nothing)
            for k in range(2, n // 2 + 1):
                per_unit = select_ns(lib, c.width, -(-n // k))
                if max(fitting) + per_unit <= budget_ns:
                    s.spread[c], s.select[c] = k, per_unit
                    break
        alone: dict[UnitClass, list[Operation]] = {}
        for op, c in found:
            # a class of one op shares nothing; an op that no longer fits with the
            # select (and a wider unit's delay) keeps its own operator, unless no op of
            # its class does and each fits alone: then the class's units are registered
            if s.users[c] <= 1:
                continue
            # (a multiply merged onto a wider unit that is slower than the cycle is
            # still served by it split in two, below: "fits alone" is its own delay)
            if own_ns[op] + s.select[c] <= budget_ns:
                s.classes[op] = c
            elif delay(op) <= budget_ns and s.select[c] <= budget_ns:
                alone.setdefault(c, []).append(op)
        from aquas.synth.timing import op_delay

        for c, ops in alone.items():
            if len(ops) < s.users[c]:
                continue
            # A pipelined kernel's multiplies keep operators of their own where they fit
            # a cycle: on a registered unit each would wait two states for its product,
            # in every iteration, and the kernel would take that many states instead of
            # its II (the point cloud's nearest-neighbour scan: 3 states a point instead
            # of 1). The prologue's and epilogue's copies share the units. A
            # #[mul_units(N)] directive asks for N units, kernel included. "Fit": on the
            # derated delay, or, for a multiply merged onto a wider class, as the
            # chaining holds it (its own operator gets a cycle of its own).
            ops = [
                op
                for op in ops
                if aq.KERNEL_CYCLE_ATTR not in op.attributes
                or isax_of[op] in s.directives
                or (op_delay(lib, op) > budget_ns and (op not in s.widen or delay(op) > budget_ns))
            ]
            if len(ops) < 2:
                continue
            # the multiply from the operand registers: in one cycle if its delay (derated,
            # not held to the cycle as the chaining is) fits, else split in two
            if max(op_delay(lib, op) + s.widen.get(op, 0.0) for op in ops) > budget_ns:
                narrow = narrowing(ops)
                if max(split_stage_ns(lib, c, narrow)) > budget_ns:
                    continue
                s.split.add(c)
                # exempt from the 10 % rule only where the op's own multiply does not
                # fit (not a narrower one merged onto the split unit)
                s.split_isaxs.update(isax_of[op] for op in ops if op_delay(lib, op) > budget_ns)
            s.registered.add(c)
            s.classes.update((op, c) for op in ops)
        for op in [op for op in s.widen if op not in s.classes]:
            del s.widen[op]
        for c in s.users:
            s.narrow[c] = narrowing(op for op, oc in s.classes.items() if oc == c)
        return s

    def extra_ns(self, op: Operation) -> float:
        """The select's delay, and a wider unit's over the op's own multiplier."""
        c = self.classes.get(op)
        return 0.0 if c is None else self.select[c] + self.widen.get(op, 0.0)

    def registered_op(self, op: Operation) -> MultiCycleOp | None:
        """How the scheduler treats ``op`` when its class's units are registered: issued
        behind the input select, read ``REGISTERED_LATENCY`` states later (one more on a
        split unit); else None."""
        c = self.classes.get(op)
        if c is None or c not in self.registered:
            return None
        return MultiCycleOp(
            unit=c.kind,
            width=c.width,
            latency=REGISTERED_LATENCY + (c in self.split),
            ii=1,
            issue_ns=self.select[c],
            cells=0,
            depth=0,
            pipelined=True,
        )

    def resource(self, isax: str, op: Operation) -> tuple[str, int] | None:
        """The resource ``op`` uses in ``isax`` and its per-cycle limit, or None."""
        c = self.classes.get(op)
        if c is None:
            return None
        return c.resource, self.limits.get((isax, c), self.users[c])

    def peaks(self, states: Iterable[StateLike]) -> dict[tuple[str, UnitClass], int]:
        """(ISAX, class) → the most ops of the class in one state."""
        out: dict[tuple[str, UnitClass], int] = {}
        for st in states:
            count: dict[UnitClass, int] = {}
            for op in [*st.ops, *st.issues]:
                c = self.classes.get(op)
                if c is not None:
                    count[c] = count.get(c, 0) + 1
            for c, n in count.items():
                out[(st.isax, c)] = max(out.get((st.isax, c), 0), n)
        return out

    def set_limits(self, peaks: dict[tuple[str, UnitClass], int]) -> None:
        """Each ISAX's limit: its directive, else its peak without a limit."""
        for (isax, c), n in peaks.items():
            self.limits[(isax, c)] = self.directives.get(isax, n)


@dataclass(frozen=True)
class ShareConfig:
    """A choice of the area knobs (``--area-budget``, ``synth/budget.py``); the default
    (all empty) is the flow's own choice: merges by estimated area, unit counts by the
    10 % rule, sequential multipliers only where a multiply does not fit a cycle."""

    merge: tuple[tuple[UnitClass, UnitClass], ...] | None = None
    """The merge option to use (:func:`merge_options`); None: the least area."""
    caps: tuple[tuple[UnitClass, int], ...] = ()
    """At most this many units of a class (below the 10 % rule's choice)."""
    sequential: tuple[tuple[UnitClass, int], ...] = ()
    """The multiplies of these classes (by their own width) on the sequential
    multiplier of their width, retiring at most this many bits per cycle."""

    def cap(self, c: UnitClass) -> int | None:
        return dict(self.caps).get(c)

    def digit(self, c: UnitClass) -> int | None:
        return dict(self.sequential).get(c)

    def describe(self) -> list[str]:
        out = []
        seq = dict(self.sequential)
        for a, b in self.merge or ():
            if a not in seq:
                out.append(f"{a.key} multiplies on the {b.key} units")
        for c, n in self.caps:
            if c not in seq:
                out.append(f"at most {n} {c.key} unit{'s' if n > 1 else ''}")
        for c, d in self.sequential:
            out.append(f"{c.key} multiplies on the sequential multiplier (<= {d} bits per cycle)")
        return out or ["the default (fewest units within 10 % of the cycles)"]


DEFAULT_SLOWDOWN = 0.10
"""How much slower (a fraction of its fixed cycles without sharing, i.e. at memory
latency 0) the default lets an ISAX become to save units: the issue's floor."""


def within(cycles: tuple[int, int], base: tuple[int, int], slowdown: float) -> bool:
    """Whether ``cycles`` (min, max) are at most ``1 + slowdown`` times ``base``, rounded
    down (an ISAX of 1 to 9 cycles may not get slower at all)."""
    return all(c <= math.floor(b * (1 + slowdown)) for c, b in zip(cycles, base, strict=True))


def merge_reference(
    base: dict[str, tuple[int, int]],
    unmerged: dict[str, tuple[int, int]],
    split_isaxs: Iterable[str],
) -> dict[str, tuple[int, int]]:
    """The cycles a merge of unit classes (:func:`merge_options`) is held to, within
    ``DEFAULT_SLOWDOWN``: each ISAX's cycles without sharing (``base``), the same
    reference as the sharing without merges, so that the two slowdowns do not compound
    (10 % for the sharing, then 10 % of that for a merge: up to 21 %); but an ISAX on split
    units (``split_isaxs`` of the sharing without merges) is held to its cycles with
    them unmerged (``unmerged``), as its reference without sharing has multiplies the
    clock does not fit."""
    split = set(split_isaxs)
    return {n: unmerged[n] if n in split else c for n, c in base.items()}


def choose_limits(
    sharing: Sharing,
    peaks: dict[tuple[str, UnitClass], int],
    cycles: Callable[[str], tuple[int, int]],
    base: dict[str, tuple[int, int]],
    slowdown: float = DEFAULT_SLOWDOWN,
) -> None:
    """Sets each ISAX's limit per class (``sharing.limits``).

    An ISAX with ``#[mul_units(N)]`` gets ``N`` (or its peak, if lower). For the others,
    the fewest units with which the ISAX's cycles (``cycles(isax)``: min and max of the
    fixed part, under the limits set so far) stay within ``1 + slowdown`` of
    ``base`` (its cycles without sharing), by bisection from its peak. A class then has
    the most units any ISAX needs, and every ISAX may use all of them (up to its peak):
    fewer would save no area and could cost cycles."""
    need: dict[UnitClass, int] = {}
    by_isax: dict[str, list[UnitClass]] = {}
    for isax, c in sorted(peaks, key=lambda k: (k[0], k[1])):
        by_isax.setdefault(isax, []).append(c)

    def ok(isax: str) -> bool:
        return within(cycles(isax), base[isax], slowdown)

    for isax, classes in by_isax.items():
        for c in classes:
            sharing.limits[(isax, c)] = peaks[(isax, c)]
        if isax in sharing.directives:
            for c in classes:
                n = min(peaks[(isax, c)], sharing.directives[isax])
                sharing.limits[(isax, c)] = n
                need[c] = max(need.get(c, 0), n)
            continue
        for c in classes:
            lo, hi = 1, peaks[(isax, c)]
            while lo < hi:
                mid = (lo + hi) // 2
                sharing.limits[(isax, c)] = mid
                if ok(isax):
                    hi = mid
                else:
                    lo = mid + 1
            sharing.limits[(isax, c)] = lo
            need[c] = max(need.get(c, 0), lo)
    for (isax, c), p in peaks.items():
        if isax not in sharing.directives:
            sharing.limits[(isax, c)] = min(p, need[c])


class StateLike:
    """What binding reads of an FSM state (``synth/fsm.py:State``)."""

    id: int
    isax: str
    ops: list[Operation]
    issues: list[Operation]
    """Multi-cycle ops started in the state: a registered unit's ops among them."""


@dataclass
class Binding:
    """Op → (class, unit index); the ops each unit serves, in state order."""

    unit_of: dict[Operation, tuple[UnitClass, int]] = field(default_factory=dict)
    users: dict[tuple[UnitClass, int], list[Operation]] = field(default_factory=dict)
    dedicated: list[Operation] = field(default_factory=list)
    """Ops of a shared class that got an operator of their own (a loop across classes)."""
    narrow: dict[UnitClass, Narrow | None] = field(default_factory=dict)
    """Class → the operand bits its units take."""
    registered: frozenset[UnitClass] = frozenset()
    """Classes whose units register their operands and result."""
    split: frozenset[UnitClass] = frozenset()
    """Registered classes whose multiply takes two cycles (``Sharing.split``)."""
    swapped: set[Operation] = field(default_factory=set)
    """Ops whose operands reach their unit in reverse order (:func:`accumulator_adders`:
    the product second)."""

    def counts(self) -> dict[UnitClass, int]:
        out: dict[UnitClass, int] = {}
        for c, i in self.users:
            out[c] = max(out.get(c, 0), i + 1)
        return out


def bind(sharing: Sharing, states: Iterable[StateLike]) -> Binding:
    """Binds the shared ops of each state to units (see the module docstring)."""
    b = Binding(
        narrow=dict(sharing.narrow),
        registered=frozenset(sharing.registered),
        split=frozenset(sharing.split),
    )
    # unit → units whose output reaches its input within some state
    feeds: dict[tuple[UnitClass, int], set[tuple[UnitClass, int]]] = {}

    def reaches(src: tuple[UnitClass, int], dst: tuple[UnitClass, int]) -> bool:
        # depth-first search over a graph of a few units: not worth a graph library
        seen, todo = {src}, [src]
        while todo:
            u = todo.pop()
            if u == dst:
                return True
            for v in feeds.get(u, ()):
                if v not in seen:
                    seen.add(v)
                    todo.append(v)
        return False

    # the units of each class: the most any ISAX may use in one cycle; an op may take any
    # of them (its ISAX's limit bounds how many it uses in a cycle, not which)
    count: dict[UnitClass, int] = {}
    for (_, cls), n in sharing.limits.items():
        count[cls] = max(count.get(cls, 0), n)
    # a spread class: at least its units, each serving at most its share of the users
    cap: dict[UnitClass, int] = {}
    for cls, k in sharing.spread.items():
        count[cls] = max(count.get(cls, 0), k)
        cap[cls] = -(-sharing.users[cls] // k)
    for st in states:
        mine = set(st.ops)
        upstream: dict[Operation, set[tuple[UnitClass, int]]] = {}
        taken: set[tuple[UnitClass, int]] = set()
        for op in st.issues:  # on registered units: any free one (no path through them)
            c = sharing.classes.get(op)
            if c is None:
                continue
            free = [(c, i) for i in range(count.get(c, sharing.users[c])) if (c, i) not in taken]
            if not free:  # the scheduler keeps each class within its units
                raise AssertionError(f"state {st.id}: more {c.key} issues than units")
            taken.add(free[0])
            b.unit_of[op] = free[0]
            b.users.setdefault(free[0], []).append(op)
        for op in st.ops:  # program order: a topological order of the state
            up: set[tuple[UnitClass, int]] = set()
            for v in op.operands:
                if isinstance(v, OpResult) and v.owner in mine:
                    up |= upstream.get(v.owner, set())
                    if v.owner in b.unit_of:
                        up.add(b.unit_of[v.owner])
            upstream[op] = up
            c = sharing.classes.get(op)
            if c is None:
                continue
            chosen: tuple[UnitClass, int] | None = None
            units = [(c, i) for i in range(count.get(c, sharing.users[c]))]
            if c in cap:
                # the least used unit first: the users stay within one of an even share
                # (the units taken in a state are all of the least used ones)
                units = [u for u in units if len(b.users.get(u, ())) < cap[c]]
                units.sort(key=lambda u: len(b.users.get(u, ())))
            for unit in units:
                if unit in taken or any(reaches(unit, u) for u in up):
                    continue
                chosen = unit
                break
            if chosen is None:
                b.dedicated.append(op)
                continue
            taken.add(chosen)
            for u in up:
                feeds.setdefault(u, set()).add(chosen)
            b.unit_of[op] = chosen
            b.users.setdefault(chosen, []).append(op)
    return b


ACCUMULATE_MIN_WIDTH = 16
"""The narrowest addition :func:`accumulator_adders` shares (an adder of 16 bits costs
about three times the select one more user adds to its one selected operand)."""


def accumulator_adders(
    states: Iterable[StateLike],
    binding: Binding,
    def_state: dict[Operation, int],
    resolve: Callable[[SSAValue], SSAValue],
    schedules: Iterable[tuple[object, object]],
    lib: OperatorLibrary,
    bypassed: Collection[tuple[SSAValue, int]] = (),
) -> Binding:
    """Additions that add a shared multiplier's product to a held value (``acc += a * b``
    of a loop pipelined or unrolled over one multiplier) bound to one adder per
    multiplier unit and width, after scheduling; the cycles do not change.

    The products of one multiplier unit are one hardware value in every state, so the
    shared adder's product operand needs no select (``SharedUnits._select``), only the
    held operand does: an AND and an OR per bit and user against an adder (at 32 bits, 64
    cells against 220). An addition joins when its other operand is held in a register
    (not computed in its state, nor read from an SRAM port or a product in flight,
    ``bypassed``) and the select's delay fits its cycle: the addition starts no earlier
    than the select's delay (after a combinational unit's product it starts later anyway),
    and every op of its cycle starting after it ends (the ops it may feed) still ends
    within the cycle, by the schedule's start times (``schedules``). No op fed by it in its
    cycle may be a multiply or on a shared unit, so no path runs from the adder into a
    unit, and it closes no loop. In each state the first such addition of a unit's
    products takes the adder; a second keeps an adder of its own, as do additions of units
    with a single user."""
    timing = cycle_room(schedules, arith.AddiOp)
    found: dict[tuple[tuple[UnitClass, int], int], list[tuple[int, Operation, int]]] = {}
    for st in states:
        mine = set(st.ops)
        for op in st.ops:
            if not isinstance(op, arith.AddiOp) or def_state.get(op) != st.id:
                continue
            w = _width(op.result)
            if w < ACCUMULATE_MIN_WIDTH or op not in timing or _feeds_unit(op, mine, binding):
                continue
            for k in (0, 1):
                prod = resolve(op.operands[k])
                held = resolve(op.operands[1 - k])
                if (
                    not isinstance(prod, OpResult)
                    or prod.owner not in binding.unit_of
                    or def_state.get(prod.owner) != st.id  # else a register holds it
                ):
                    continue
                if _held(held, st.id, def_state, resolve, bypassed):
                    found.setdefault((binding.unit_of[prod.owner], w), []).append((st.id, op, k))
                    break
    out = Binding()
    for (_, w), ops in sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        first: dict[int, tuple[Operation, int]] = {}
        for sid, op, k in ops:
            first.setdefault(sid, (op, k))
        select = select_ns(lib, w, len(first))
        # the select delays an addition that starts before it is through
        fits = {
            sid: (op, k)
            for sid, (op, k) in first.items()
            if max(0.0, select - timing[op][0]) <= timing[op][1] + 1e-9
        }
        if len(fits) < 2:
            continue
        adder = (UnitClass("add", w), len([u for u in out.users if u[0].width == w]))
        for op, k in fits.values():
            out.unit_of[op] = adder
            out.users.setdefault(adder, []).append(op)
            if k == 0:
                out.swapped.add(op)
    return out


def cycle_room(
    schedules: Iterable[tuple[object, object]], kind: type[Operation]
) -> dict[Operation, tuple[float, float]]:
    """Per scheduled op of ``kind``: its start (ns into its cycle) and the room its cycle
    leaves after it and the ops that start once it ends (an upper bound on the chain it
    feeds), by the schedules' start times; the least room of an op scheduled twice."""
    from aquas.synth.schedule import Schedule, SchedulingProblem

    out: dict[Operation, tuple[float, float]] = {}
    for problem, sched in schedules:
        assert isinstance(problem, SchedulingProblem) and isinstance(sched, Schedule)
        for op, c in sched.cycle.items():
            if not isinstance(op, kind):
                continue
            end = sched.start[op] + problem.delay[op]
            later = [
                sched.start[o] + problem.delay[o]
                for o, oc in sched.cycle.items()
                if oc == c and sched.start[o] >= end - 1e-9
            ]
            room = problem.budget_ns - max([end, *later])
            start, least = out.get(op, (sched.start[op], room))
            out[op] = (max(start, sched.start[op]), min(least, room))
    return out


def _feeds_unit(op: Operation, mine: set[Operation], binding: Binding) -> bool:
    """Whether ``op``'s result reaches, within the ops ``mine`` of its state, a multiply or
    an op on a shared unit (whose output may feed the adder in another state)."""
    todo, seen = [op], {op}
    while todo:
        for res in todo.pop().results:
            for use in res.uses:
                user = use.operation
                if user not in mine or user in seen:
                    continue
                if isinstance(user, arith.MuliOp) or user in binding.unit_of:
                    return True
                seen.add(user)
                todo.append(user)
    return False


def _held(
    v: SSAValue,
    sid: int,
    def_state: dict[Operation, int],
    resolve: Callable[[SSAValue], SSAValue],
    bypassed: Collection[tuple[SSAValue, int]],
) -> bool:
    """Whether ``v`` reaches state ``sid`` from a register (or wiring of one)."""
    if (v, sid) in bypassed:
        return False
    if not isinstance(v, OpResult) or isinstance(v.owner, scf.ForOp | scf.IfOp):
        return True  # a loop's carried value, result or induction variable: its register
    owner = v.owner
    if isinstance(owner, arith.ConstantOp):
        return False  # an addition of a constant: nothing to accumulate
    if isinstance(owner, aq.ReadRs1Op | aq.ReadRs2Op | aq.StateReadOp):
        return True  # an operand register or a state register
    if isinstance(owner, arith.ExtSIOp | arith.ExtUIOp):
        return _held(resolve(owner.operands[0]), sid, def_state, resolve, bypassed)
    home = def_state.get(owner)
    return home is not None and (home != sid or isinstance(owner, aq.LoadOp))


# -- hardware -----------------------------------------------------------------------------


class SharedUnits:
    """The shared operators of one generated unit (``synth/rtlgen.py``): one ``comb`` op
    per unit, created at its first use; its operands, an AND-OR select over the states
    using it, are connected in :meth:`finish`, once every user is known (``hw.module``
    bodies are graph regions, so the op may come before its operands)."""

    def __init__(self, h: object, binding: Binding):
        from aquas.synth.hwemit import HwBuilder

        assert isinstance(h, HwBuilder)
        self.h = h
        self.binding = binding
        self.narrow = binding.narrow
        self.ops: dict[tuple[UnitClass, int], Operation] = {}
        self.inputs: dict[tuple[UnitClass, int], list[tuple[SSAValue, SSAValue, SSAValue]]] = {}
        # units every use of which squares one value (the scans' dx * dx): built as squarers
        self.squares: dict[tuple[UnitClass, int], bool] = {}
        self.advance: SSAValue | None = None  # set by ``finish``

    def __contains__(self, op: Operation) -> bool:
        return op in self.binding.unit_of

    def use(self, op: Operation, en: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        """``op``'s result: its unit's output; ``a``, ``b`` its operands in the state
        whose enable is ``en``."""
        self.issue(op, en, a, b)
        return self.result(op)

    def issue(self, op: Operation, en: SSAValue, a: SSAValue, b: SSAValue) -> None:
        """``a``, ``b``: ``op``'s operands in the state whose enable is ``en``."""
        unit = self.binding.unit_of[op]
        c, i = unit
        narrow = self.narrow.get(c)
        self._unit(unit)
        self.squares[unit] = self.squares.get(unit, True) and a is b
        a, b = (
            self._fit(a, c, narrow, f"{c.key}_u{i}_a"),
            self._fit(b, c, narrow, f"{c.key}_u{i}_b"),
        )
        self.inputs.setdefault(unit, []).append((en, a, b))

    def result(self, op: Operation) -> SSAValue:
        """``op``'s result: its unit's output (a registered unit's result register)."""
        unit = self.binding.unit_of[op]
        c, i = unit
        out = self._unit(unit).results[0]
        if c in self.binding.registered:
            out = self.h.reg(f"{c.key}_u{i}_q", c.width, None)  # read after its issue
        w = _width(op.results[0])
        # a narrower multiply on a wider unit: the low bits of the unit's product
        return out if w == c.width else self.h.extract(out, 0, w, f"{c.key}_u{i}_lo{w}")

    def _unit(self, unit: tuple[UnitClass, int]) -> Operation:
        """The unit's last op (the multiply, or the addition after a signed narrowed one
        or a split unit's carry-save stage), created at its first use; its operands are
        connected in ``finish``."""
        if unit not in self.ops:
            c, i = unit
            narrow = self.narrow.get(c)
            zero = self.h.const(0, c.width)
            add = (
                c.kind == "add" or (narrow is not None and narrow.signed) or c in self.binding.split
            )
            last = comb.AddOp([zero, zero]) if add else comb.MulOp([zero, zero])
            self.h.add(last, f"{c.key}_u{i}")
            self.ops[unit] = last
        return self.ops[unit]

    def _fit(self, v: SSAValue, c: UnitClass, narrow: Narrow | None, hint: str) -> SSAValue:
        """An operand (of the op's width ``v``) at the unit's input width: its low bits,
        or, from a narrower multiply, its sign (signed unit) or zero extension (see
        :func:`narrowing` for why either is exact)."""
        bits = c.width if narrow is None else narrow.bits
        w = _width(v)
        if w > bits:
            return self.h.extract(v, 0, bits)
        if w < bits:
            ext = self.h.sext if narrow is not None and narrow.signed else self.h.zext
            return ext(v, bits, f"{hint}_x{w}")
        return v

    def _select(self, items: list[tuple[SSAValue, SSAValue]], w: int, hint: str) -> SSAValue:
        """The operand of the enabled state (0 when none is): states passing the same value
        share one AND (``HwBuilder.by_value``)."""
        groups = self.h.by_value(items, hint)
        if len(groups) == 1:
            return groups[0][1]
        return self.h.and_or(groups, w, hint)

    def finish(self, advance: SSAValue) -> None:
        """Connects the units' inputs. ``advance``: the state machine moves on at the end of
        this cycle (it is not held in a wait state); a registered unit's registers load
        only then, so a multiply is read in the state ``REGISTERED_LATENCY`` after its
        issue however long the wait states between them last."""
        from aquas.synth.hwemit import basename_loc

        h = self.h
        self.advance = advance
        h.loc = basename_loc(None)
        for unit, last in sorted(self.ops.items(), key=lambda kv: kv[0]):
            c, i = unit
            narrow = self.narrow.get(c)
            bits = c.width if narrow is None else narrow.bits
            items = self.inputs[unit]
            a = self._select([(en, x) for en, x, _ in items], bits, f"{c.key}_u{i}_a")
            name = f"{c.key}_u{i}"
            if self._squarer(unit, narrow):
                # every user squares one value: a squarer (half the partial products of
                # the multiplier Yosys would map a * a to) from one operand select
                if c in self.binding.registered:
                    a = self._register(f"{name}_a_q", a)
                # the unit's op, which its users (and register selects built later)
                # hold, becomes a one-operand product of the square: CIRCT folds it
                last.operands = [square(h, a, c.width, name)]
                if c in self.binding.registered:
                    self._register(f"{name}_q", last.results[0])
                continue
            b = self._select([(en, y) for en, _, y in items], bits, f"{c.key}_u{i}_b")
            if c in self.binding.registered:
                # the operands registered at the end of the issue state
                a, b = self._register(f"{name}_a_q", a), self._register(f"{name}_b_q", b)
            if c in self.binding.split:  # carry-save stage, registered; the adder after
                s, cy = carry_save_parts(h, a, b, c.width, narrow, name)
                x, y = self._register(f"{name}_s_q", s), self._register(f"{name}_c_q", cy)
            else:
                _, x, y = narrow_parts(h, a, b, c.width, narrow, name)
            last.operands = [x, y]
            if c in self.binding.registered:
                self._register(f"{name}_q", last.results[0])

    def _squarer(self, unit: tuple[UnitClass, int], narrow: Narrow | None) -> bool:
        """Whether ``unit`` is built as a squarer: every use squares one value, and the
        unit is neither split (its carry-save stage takes two operands) nor narrowed
        signed (whose operands are offset, :func:`narrow_parts`)."""
        c, _ = unit
        return (
            c.kind == "mul"
            and self.squares.get(unit, False)
            and c not in self.binding.split
            and not (narrow is not None and narrow.signed)
        )

    def _register(self, name: str, v: SSAValue) -> SSAValue:
        """``v`` one state later: a register loaded whenever the state machine advances
        (no reset: a user reads the unit only after its issue state loaded it)."""
        assert self.advance is not None
        q = self.h.reg(name, _width(v), None)
        self.h.drive(name, self.h.mux(self.advance, v, q, f"{name}_n"))
        return q


def report(binding: Binding, lib: OperatorLibrary) -> list[dict[str, object]]:
    """The bound units: class, width, operand bits, users (ISAX and spec location), and
    the estimated cells of the units and their selects against one operator per op (by
    the library's full-width multiplier: an upper bound when the operands are narrowed;
    Yosys measures the real figure)."""
    from pathlib import PurePath

    from aquas.diagnostics import loc_of

    out: list[dict[str, object]] = []
    counts = binding.counts()
    for c in sorted(counts):
        users: list[str] = []
        per_unit: list[int] = []
        for i in range(counts[c]):
            ops = binding.users.get((c, i), [])
            per_unit.append(len(ops))
            for op in ops:
                isax = op.parent_op()
                while isax is not None and not isinstance(isax, aq.IsaxOp):
                    isax = isax.parent_op()
                loc = loc_of(op)
                where = f"{PurePath(loc.filename).name}:{loc.line}:{loc.column}" if loc else "?"
                name = isax.sym_name.data if isinstance(isax, aq.IsaxOp) else "?"
                users.append(f"{name}@{where}")
        op_cells = lib.cost(c.kind, c.width).cells
        narrow = binding.narrow.get(c)
        bits = c.width if narrow is None else narrow.bits
        sel = sum(max(0, n - 1) for n in per_unit) * select_cells(lib, bits)
        if c.kind == "add":
            sel //= 2  # an accumulator adder selects its held operand only
        out.append(
            {
                "class": c.key,
                "kind": c.kind,
                "width": c.width,
                "units": counts[c],
                "operand_bits": bits,
                "operands_signed": None if narrow is None else narrow.signed,
                "ops": sum(per_unit),
                "ops_per_unit": per_unit,
                "users": users,
                # the library's w-bit multiplier (an upper bound on a narrowed one)
                "estimated_cells": counts[c] * op_cells + sel,
                "unshared_cells": sum(per_unit) * op_cells,
            }
        )
    return out


__all__ = [
    "SHARED_KINDS",
    "UNITS_ATTR",
    "Binding",
    "SharedUnits",
    "Sharing",
    "UnitClass",
    "bind",
    "class_of",
    "report",
    "select_ns",
    "worth_sharing",
]


# -- squarers and constant multiplies shared across ISAXs ---------------------------------


CONST_SHARE_MIN_TERMS = 3
"""The fewest shifted terms (``timing.const_mul_terms``) of a multiply by a constant that
:func:`isax_operators` shares: two or more adders of its width against one multiplexer a
further ISAX adds; with two terms (one adder) the multiplexer takes most of what it saves."""


@dataclass(frozen=True)
class IsaxOperators:
    """Own operators of different ISAXs that share one operator (see
    :func:`isax_operators`): op -> unit index; per unit its width, operand bits and the
    ISAXs using it, in select order (the first is the default). ``const``: unit -> the
    constant of a unit multiplying by one (the others are squarers)."""

    unit_of: dict[Operation, int] = field(default_factory=dict)
    units: list[tuple[int, int, list[str]]] = field(default_factory=list)
    const: dict[int, int] = field(default_factory=dict)

    def isaxs(self) -> set[str]:
        return {i for _, _, isaxs in self.units for i in isaxs}


def _shape(op: Operation) -> tuple[int, int, int | None] | None:
    """What an own operator of ``op`` is, if :func:`isax_operators` may share it: (width,
    operand bits, None) for a squarer (:func:`emit_mul`), (width, width, the constant
    modulo ``2^width``) for a multiply by a constant (on the right, as ``timing.op_delay``
    times it) of at least ``CONST_SHARE_MIN_TERMS`` terms (``HwBuilder.mul_const``, at the
    operand's width); else None."""
    from aquas.synth.timing import const_mul_terms

    if not isinstance(op, arith.MuliOp):
        return None
    w = _width(op.results[0])
    if (c := constant_value(op.operands[1])) is not None:
        c %= 1 << w
        if constant_value(op.operands[0]) is not None:
            return None
        return (w, w, c) if len(const_mul_terms(c, w)) >= CONST_SHARE_MIN_TERMS else None
    if op.operands[0] is not op.operands[1]:
        return None
    narrow = narrowing([op])
    if narrow is not None and narrow.signed:
        return None  # not a squarer (emit_mul)
    return w, w if narrow is None else narrow.bits, None


CONST_WIDEN_RATIO = 0.75
"""A multiply by a constant joins a shared unit of that constant at most this much wider
(its operand zero-extended, its product the unit's low bits: exact modulo its width)."""


def isax_operators(
    states: Iterable[StateLike],
    schedules: Iterable[tuple[object, object]],
    bound: Collection[Operation],
    multicycle: Collection[Operation],
    lib: OperatorLibrary,
) -> IsaxOperators:
    """The squarers of different ISAXs, and the multiplies by a constant of different
    states, that one operator serves.

    One ISAX runs at a time, so an operator of its own that an ISAX uses in some state is
    idle during every other ISAX's call. A squarer (``x * x`` on an operator of its own,
    :func:`emit_mul`, as the pipelined scans of the point cloud keep at II 1: v3ddist's
    and vnearest's three each) of one ISAX can then serve the same-shaped squarer of
    another: its operand is a 2:1 multiplexer chain selected by registers set when the
    unit accepts the command (``<isax>_active_q``), not by state decode, so the select
    adds one multiplexer level per further ISAX and nothing else. The k-th squarer of each
    ISAX with one shape (width, operand bits) shares the k-th unit.

    A multiply by a constant (its shifted terms and their adder tree,
    ``HwBuilder.mul_const``: Kyber's Barrett steps by 1,290,167 and 3,329, written out in
    each of its four ISAXs and in several loops of one) is idle in every state but its
    own, so one operator serves the same constant's multiplies of different states, of
    one ISAX or several: its operand is an AND-OR select over their states' presence
    flags (``rtlgen.UnitGenerator.selects``), as a shared unit's (:func:`select_ns`). A
    unit is seeded by the widest such multiply left; every other one left that is at
    least ``CONST_WIDEN_RATIO`` of the unit's width, in a state the unit does not serve
    yet, joins it (the low bits of a wider product are the narrower product).

    An op in more than one state keeps its own operator (its operand differs between
    them). Only operators whose cycle leaves time for the select (and a wider unit's
    longer adders): each chain through the op ends by the datapath budget minus that
    delay, by the schedule's start times (an op the chaining holds to a whole cycle under
    timing closure leaves none)."""
    from aquas.synth.timing import const_mul_ns

    slack = {op: room for op, (_, room) in cycle_room(schedules, arith.MuliOp).items()}
    squarers: dict[tuple[int, int], dict[str, list[Operation]]] = {}
    by_const: dict[int, list[Operation]] = {}
    home: dict[Operation, int] = {}
    isax_of: dict[Operation, str] = {}
    for st in states:
        for op in st.ops:
            if op in home:  # in a second state
                home[op] = -1
                continue
            home[op], isax_of[op] = st.id, st.isax
            if op in bound or op in multicycle or (shape := _shape(op)) is None:
                continue
            w, bits, c = shape
            if c is None:
                squarers.setdefault((w, bits), {}).setdefault(st.isax, []).append(op)
            else:
                by_const.setdefault(c, []).append(op)
    out = IsaxOperators()

    def add(users: Iterable[Operation], w: int, bits: int, c: int | None) -> None:
        if c is not None:
            out.const[len(out.units)] = c
        users = list(users)
        out.unit_of.update((op, len(out.units)) for op in users)
        out.units.append((w, bits, sorted({isax_of[op] for op in users})))

    for (w, bits), per in sorted(squarers.items()):
        if len(per) < 2:
            continue
        select = (len(per) - 1) * lib.delay_ns("mux", bits)
        fits = {
            isax: [op for op in ops if home[op] >= 0 and slack.get(op, -1.0) >= select]
            for isax, ops in sorted(per.items())
        }
        for k in range(max(len(ops) for ops in fits.values())):
            users = [ops[k] for ops in fits.values() if k < len(ops)]
            if len(users) >= 2:
                add(users, w, bits, None)
    for c, ops in sorted(by_const.items()):
        # widest first; among equals in program (state) order
        left = sorted((op for op in ops if home[op] >= 0), key=lambda o: (-_w(o), home[o]))
        while len(left) >= 2:
            seed = left.pop(0)
            users, served = [seed], {home[seed]}
            for op in list(left):
                if _w(op) >= CONST_WIDEN_RATIO * _w(seed) and home[op] not in served:
                    users.append(op)
                    served.add(home[op])
                    left.remove(op)
            while len(users) >= 2:  # drop the users without room for the select, if any
                w = max(_w(o) for o in users)
                select = select_ns(lib, w, len(users))
                late = [
                    o
                    for o in users
                    if slack.get(o, -1.0)
                    < select + const_mul_ns(lib, c, w) - const_mul_ns(lib, c, _w(o))
                ]
                if not late:
                    add(users, w, w, c)
                    break
                users = [o for o in users if o not in late]
    return out


def _w(op: Operation) -> int:
    """The width of ``op``'s result."""
    return _width(op.results[0])
