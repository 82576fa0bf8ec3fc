"""IR preparation before scheduling.

1. ``aquas-unroll`` honours the spec's unroll directives (unrolled bodies become parallel
   datapaths, limited later by scratchpad bank ports);
2. ``canonicalize``, ``aquas-fold-constants`` and ``cse`` fold the constant index
   arithmetic unrolling exposes, so that scratchpad banks become known at compile time
   and a ROM read at an unrolled index becomes its entry (``aquas-fold-constants`` folds
   casts, shifts, bit operations, compares and selects of constants, which
   ``canonicalize`` leaves);
   ``aquas-reduce-division``: ``/`` and ``%`` by a constant power of two become shifts
   and masks, by another constant (up to 32 bits) a Barrett reduction (no sequential
   divider);
3. ``aquas-fold-unsigned-compare``: compares that are constant by the range of an
   unsigned (or signed) operand (``x < 0`` unsigned) fold, before they reach the RTL,
   where Verilator rejects them;
4. ``aquas-forward-state``: within a block, a state read after a write of the same state
   takes the written value, and a write overwritten before any read goes, so a chain of
   updates of one ``state`` is one read, a chained datapath and one write (a state
   register has a single write port);
5. ``aquas-if-convert``: an ``scf.if`` whose branches hold only pure ``arith`` ops becomes
   ``arith.select``s, so data-dependent choices cost no FSM states;
6. ``canonicalize``, ``cse`` and ``dce`` again, on what if-conversion exposed, after
   ``aquas-drop-unobservable`` erased the writes of states whose contents reach nothing
   observable (and what computed them);
7. ``aquas-balance-sums`` (``synth/balance.py``), in the ISAXs where it saves cycles (the
   flow schedules both): a chain of additions (an unrolled accumulation) becomes a
   balanced tree with the loop-carried operand added last;
8. ``aquas-narrow-arith`` (``synth/narrow.py``): ``+``, ``-`` and ``*`` at the width their
   operands' values need, so a product of two sign-extended bytes is an 8-by-8 multiplier.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, i1
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from aquas import intops
from aquas.context import make_context
from aquas.dialects import aquas as aq
from aquas.dialects.aquas import constant_value
from aquas.passes import parse_pipeline


def _pure_region_ops(op: scf.IfOp) -> bool:
    for region in (op.true_region, op.false_region):
        for inner in region.walk():
            if isinstance(inner, scf.YieldOp):
                continue
            if not inner.name.startswith("arith."):
                return False
    return True


def if_convert(module: ModuleOp) -> int:
    """Turns pure ``scf.if`` ops into selects; returns how many were converted."""
    count = 0
    changed = True
    while changed:
        changed = False
        ifs = [o for o in module.walk() if isinstance(o, scf.IfOp)]
        # innermost first, so nested pure ifs collapse bottom-up
        for op in reversed(ifs):
            if not _pure_region_ops(op):
                continue
            block = op.parent_block()
            assert block is not None
            yields: list[list[SSAValue]] = []
            for region in (op.true_region, op.false_region):
                if not region.blocks:
                    yields.append([])
                    continue
                body = region.block
                for inner in list(body.ops):
                    if isinstance(inner, scf.YieldOp):
                        yields.append(list(inner.arguments))
                        continue
                    inner.detach()
                    block.insert_op_before(inner, op)
            for i, res in enumerate(op.results):
                sel: Operation = arith.SelectOp(op.cond, yields[0][i], yields[1][i])
                sel.location = op.location
                block.insert_op_before(sel, op)
                res.replace_all_uses_with(sel.results[0])
            block.erase_op(op)
            count += 1
            changed = True
            break
    return count


@dataclass(frozen=True)
class AquasIfConvertPass(ModulePass):
    """Turns each ``scf.if`` whose branches hold only ``arith`` ops into ``arith.select``s.

    The branch ops move in front of the ``if`` (they are pure, so computing both sides is
    safe) and each result becomes a select on the condition. Nested pure ifs collapse from
    the innermost out; an ``if`` with any other op (a memory access, a state write, a loop)
    is left alone and becomes a branch in the state machine.
    """

    name = "aquas-if-convert"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if_convert(op)


def _extreme_fold(pred: str, w: int, lhs: int | None, rhs: int | None) -> str | None:
    """What ``lhs <pred> rhs`` becomes when one side is a constant at the end of the
    other's range: ``"true"``, ``"false"``, ``"eq"`` or ``"ne"`` (against the same
    constant), or None when it depends on the variable side. ``lhs``/``rhs`` are the
    constant sides (exactly one is given)."""
    if rhs is None:
        assert lhs is not None
        pred, rhs = intops.SWAPPED[pred], lhs  # as `x <pred> c`
    if pred in ("eq", "ne"):
        return None
    signed = pred[0] == "s"
    lo = -(1 << (w - 1)) if signed else 0
    hi = (1 << (w - 1)) - 1 if signed else (1 << w) - 1
    c = intops.to_signed(rhs, w) if signed else intops.to_unsigned(rhs, w)
    rel = pred[1:]
    table = {
        # x < lo never; x >= lo always; x <= lo iff x == lo; x > lo iff x != lo
        lo: {"lt": "false", "ge": "true", "le": "eq", "gt": "ne"},
        hi: {"gt": "false", "le": "true", "ge": "eq", "lt": "ne"},
    }
    return table.get(c, {}).get(rel)


class FoldRangeCompare(RewritePattern):
    """``x < 0`` (unsigned) is false, ``x >= 0`` true, ``x <= 0`` is ``x == 0``,
    ``x > 0`` is ``x != 0``; the same at the top of the range and for signed compares
    against the signed extremes, with the constant on either side. Verilator's ``-Wall``
    rejects the constant forms (UNSIGNED, CMPCONST), so they must not reach the RTL."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter) -> None:
        t = op.lhs.type
        if not isinstance(t, IntegerType):
            return
        lhs, rhs = constant_value(op.lhs), constant_value(op.rhs)
        if (lhs is None) == (rhs is None):
            return  # both constant: canonicalize folds it; neither: nothing to fold
        w = t.width.data
        pred = intops.PREDICATES[op.predicate.value.data]
        folded = _extreme_fold(pred, w, lhs, rhs)
        if folded is None:
            return
        new: Operation
        if folded in ("true", "false"):
            new = arith.ConstantOp(IntegerAttr(int(folded == "true"), IntegerType(1)))
        else:
            new = arith.CmpiOp(op.lhs, op.rhs, intops.PREDICATES.index(folded))
        new.location = op.location
        rewriter.replace(op, new)


@dataclass(frozen=True)
class AquasFoldRangeComparePass(ModulePass):
    """Folds compares that are constant by the range of their operand (``x < 0`` unsigned).

    ``x < 0`` unsigned becomes false, ``x <= 0`` becomes ``x == 0``, and likewise at the
    top of the range and for the signed extremes (``FoldRangeCompare``)."""

    name = "aquas-fold-unsigned-compare"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldRangeCompare()).rewrite_module(op)


_CASTS = {"arith.extui": "extui", "arith.extsi": "extsi", "arith.trunci": "trunci"}


class FoldConstantOperands(RewritePattern):
    """Casts, shifts, bit operations and compares of constants, and selects on a constant
    condition, fold with the interpreter's semantics (:mod:`aquas.intops`). xDSL's
    canonicalization leaves these in place; unrolling exposes them: a ROM read at an
    unrolled index folds to its entry instead of a multiplexer tree, and an unrolled
    tournament's ``select(c, 2 * k, 2 * k + 1)`` index arithmetic to constants (point
    cloud's ``vmaxarg``: 88 -> 67 cycles)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, arith.SelectOp):
            cond = constant_value(op.cond)
            if cond is not None:
                rewriter.replace(op, [], [op.lhs if cond & 1 else op.rhs])
            return
        if not op.name.startswith("arith.") or len(op.results) != 1:
            return
        res_t = op.results[0].type
        if not isinstance(res_t, IntegerType) or not op.operands:
            return
        vals = [constant_value(v) for v in op.operands]
        if any(v is None for v in vals):
            return
        widths = [v.type.width.data for v in op.operands if isinstance(v.type, IntegerType)]
        if len(widths) != len(vals):
            return
        ins = [intops.to_unsigned(v or 0, w) for v, w in zip(vals, widths, strict=True)]
        w_out = res_t.width.data
        if op.name in _CASTS:
            value = intops.cast(_CASTS[op.name], ins[0], widths[0], w_out)
        elif isinstance(op, arith.CmpiOp):
            pred = intops.PREDICATES[op.predicate.value.data]
            value = int(intops.compare(pred, widths[0], ins[0], ins[1]))
        elif op.name in intops.BY_ARITH and len(ins) == 2:
            value = intops.BY_ARITH[op.name].fn(ins[0], ins[1], w_out)
        else:
            return
        new = arith.ConstantOp(IntegerAttr(intops.to_signed(value, w_out), res_t))
        new.location = op.location
        rewriter.replace(op, new)


@dataclass(frozen=True)
class AquasFoldConstantsPass(ModulePass):
    """Folds arith ops whose operands are all constants, and selects on a constant
    condition, with the interpreter's integer semantics."""

    name = "aquas-fold-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldConstantOperands()).rewrite_module(op)


def _power_of_two(v: SSAValue, signed: bool) -> int | None:
    """``k`` when ``v`` is the constant ``2^k`` (as a signed value, a positive one), else
    None."""
    c = constant_value(v)
    t = v.type
    if c is None or not isinstance(t, IntegerType):
        return None
    w = t.width.data
    c = intops.to_signed(c, w) if signed else intops.to_unsigned(c, w)
    if c <= 0 or c & (c - 1):
        return None
    return c.bit_length() - 1


BARRETT_MAX_WIDTH = 32
"""The widest division by a constant that :func:`reduce_division` turns into a Barrett
reduction (its product is twice as wide: 64 bits at 32); wider ones stay on the
sequential divider."""


def reduce_division(module: ModuleOp) -> int:
    """``/`` and ``%`` by a constant become shifts, masks and multiplies by constants, exact
    in the interpreter's semantics (:mod:`aquas.intops`, division truncating towards zero):
    the sequential divider they would otherwise take costs ``W + 2`` cycles a step of ``k``
    bits and its area.

    By a power of two:

    * unsigned: ``x / 2^k = x >> k``, ``x % 2^k = x & (2^k - 1)``;
    * signed (``2^k`` positive, so ``k <= W - 2``): a negative dividend is biased by
      ``2^k - 1`` before the arithmetic shift, ``t = x + ((x >>s (W-1)) >>u (W-k))``,
      ``x / 2^k = t >>s k`` and ``x % 2^k = x - (t & -2^k)`` (the remainder takes the
      dividend's sign, as RISC-V's ``rem``).

    By any other constant ``c`` with ``3 <= |c| < 2^(W-1)`` at ``W <= BARRETT_MAX_WIDTH``
    bits, a Barrett reduction (:func:`_barrett`). The dividend's value has ``n <= W`` bits
    (its magnitude's, signed; ``aquas.synth.narrow``: Kyber's ``(a + 3329 - b) % 3329`` of
    two 16-bit values has 19). With ``m = floor(2^n / c)``, the estimate ``q' = (x * m) >>
    n`` of ``q = floor(x / c)`` for ``0 <= x < 2^n`` is ``q`` or ``q - 1``, since ``x/c - 1
    < x * m / 2^n <= x/c``; so ``r' = x - q'c`` lies in ``[0, 2c)`` and one compare
    corrects both. ``r'`` is computed modulo ``2^k`` for the ``k`` bits of ``2c - 1``,
    which is exact: the subtraction, the product ``q'c`` it subtracts, the compare and the
    remainder's correction are ``k`` bits wide (13 for 3,329), not ``W``. A signed division
    divides the magnitude and gives the quotient the product of the signs and the
    remainder the dividend's. The two multiplies are by constants: signed-digit adder
    trees (``HwBuilder.mul_const``), which the unit shares between states (``binding.
    isax_operators``); the narrowing (``aquas-narrow-arith``) sizes the estimate's by
    ``n`` and ``m``.

    Returns how many divisions went."""
    count = 0
    for op in list(module.walk()):
        if not isinstance(op, arith.DivUIOp | arith.RemUIOp | arith.DivSIOp | arith.RemSIOp):
            continue
        signed = isinstance(op, arith.DivSIOp | arith.RemSIOp)
        block = op.parent_block()
        if block is None:
            continue
        k = _power_of_two(op.rhs, signed)
        if k is not None:
            value = _shifts_and_masks(op, block, k, signed)
        elif (c := _barrett_divisor(op.rhs, signed)) is not None:
            value = _barrett(op, block, c, signed)
        else:
            continue
        op.results[0].replace_all_uses_with(value)
        block.erase_op(op)
        count += 1
    return count


def _barrett_divisor(v: SSAValue, signed: bool) -> int | None:
    """The constant divisor ``v`` (signed or unsigned) when :func:`_barrett` applies: a
    width up to ``BARRETT_MAX_WIDTH`` and ``3 <= |c| < 2^(W-1)`` (so that ``r' < 2c``
    fits ``W`` bits); else None."""
    c = constant_value(v)
    t = v.type
    if c is None or not isinstance(t, IntegerType) or t.width.data > BARRETT_MAX_WIDTH:
        return None
    w = t.width.data
    c = intops.to_signed(c, w) if signed else intops.to_unsigned(c, w)
    return c if 3 <= abs(c) < 1 << (w - 1) else None


def _barrett(op: Operation, block: Block, c: int, signed: bool) -> SSAValue:
    """The ops computing ``op`` (a division or remainder by the constant ``c``, not a power
    of two), inserted before it (see :func:`reduce_division`)."""
    from aquas.plans.common import Emitter
    from aquas.synth.narrow import signed_bits, unsigned_bits

    x, t = op.operands[0], op.operands[0].type
    assert isinstance(t, IntegerType)
    w = t.width.data
    # the bits of the (magnitude of the) dividend's value: the estimate's shift and
    # multiplier are sized by it, not by the type (``(a + b) % q`` of two 16-bit values
    # multiplies a 17-bit dividend by floor(2^17 / q), not by floor(2^32 / q))
    n = max(1, signed_bits(x) if signed else unsigned_bits(x))
    wide = IntegerType(2 * w)
    quotient = isinstance(op, arith.DivUIOp | arith.DivSIOp)
    em = Emitter(block, op, op)

    def emit(o: Operation) -> SSAValue:
        return em.add(o).results[0]

    zero = em.const(0, t)
    neg = None
    if signed:  # the magnitude, as a W-bit unsigned value (MIN's is 2^(W-1))
        neg = emit(arith.CmpiOp(x, zero, "slt"))
        x = emit(arith.SelectOp(neg, emit(arith.SubiOp(zero, x)), x))
    d = abs(c)
    prod = emit(arith.MuliOp(emit(arith.ExtUIOp(x, wide)), em.const((1 << n) // d, wide)))
    q0 = emit(arith.TruncIOp(emit(arith.ShRUIOp(prod, em.const(n, wide))), t))
    # r' = x - q'd is in [0, 2d): computed modulo 2^k with 2d <= 2^k, it is exact, so the
    # subtraction, the compare and the correction are k bits wide, not W
    k = min(w, (2 * d - 1).bit_length())
    tk = IntegerType(k)

    def low(v: SSAValue) -> SSAValue:
        return v if k == w else emit(arith.TruncIOp(v, tk))

    r0 = emit(arith.SubiOp(low(x), emit(arith.MuliOp(low(q0), em.const(d, tk)))))
    over = emit(arith.CmpiOp(r0, em.const(d, tk), "uge"))
    if quotient:
        value = emit(arith.SelectOp(over, emit(arith.AddiOp(q0, em.const(1, t))), q0))
        flip = neg
        if c < 0:  # (signed only) the quotient's sign is the product of the signs
            assert neg is not None
            flip = emit(arith.XOrIOp(neg, em.const(1, i1)))
    else:
        value = emit(arith.SelectOp(over, emit(arith.SubiOp(r0, em.const(d, tk))), r0))
        if k < w:
            value = emit(arith.ExtUIOp(value, t))
        flip = neg  # the remainder takes the dividend's sign
    if flip is None:
        return value
    return emit(arith.SelectOp(flip, emit(arith.SubiOp(zero, value)), value))


def _shifts_and_masks(op: Operation, block: Block, k: int, signed: bool) -> SSAValue:
    """The ops computing ``op`` (a division or remainder by ``2^k``), inserted before it
    (see :func:`reduce_division`)."""
    from aquas.plans.common import Emitter

    x, t = op.operands[0], op.operands[0].type
    assert isinstance(t, IntegerType)
    w = t.width.data
    quotient = isinstance(op, arith.DivUIOp | arith.DivSIOp)
    em = Emitter(block, op, op)

    def emit(o: Operation) -> SSAValue:
        return em.add(o).results[0]

    if k == 0:  # by one: the dividend, remainder 0
        return x if quotient else em.const(0, t)
    if not signed:
        if quotient:
            return emit(arith.ShRUIOp(x, em.const(k, t)))
        return emit(arith.AndIOp(x, em.const((1 << k) - 1, t)))
    sign = emit(arith.ShRSIOp(x, em.const(w - 1, t)))
    biased = emit(arith.AddiOp(x, emit(arith.ShRUIOp(sign, em.const(w - k, t)))))
    if quotient:
        return emit(arith.ShRSIOp(biased, em.const(k, t)))
    return emit(arith.SubiOp(x, emit(arith.AndIOp(biased, em.const(-(1 << k), t)))))


@dataclass(frozen=True)
class AquasReduceDivisionPass(ModulePass):
    """Division and remainder by a constant power of two become shifts and masks."""

    name = "aquas-reduce-division"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        reduce_division(op)


def drop_unobservable(module: ModuleOp) -> int:
    """Erases the writes of the states whose contents reach nothing observable
    (:func:`unobservable_storage`), and then what computed them, a division included
    (:func:`_erase_unused`). Their registers would feed only themselves, which the exporter
    removes anyway, but what computes their next value would stay: logic, schedule states
    and multi-cycle units driving nothing (an instance whose outputs nothing reads, which
    Verilator's lint rejects). Scratchpads keep their writes: an interface plan turns a
    burst into loads and scratchpad writes, and the plans must compare like with like
    (a burst into a scratchpad nothing reads stays a burst). Returns how many writes
    went."""
    removed = 0
    for ext in [op for op in module.walk() if isinstance(op, aq.ExtensionOp)]:
        dead = unobservable_storage(ext)
        for op in list(ext.walk()):
            if isinstance(op, aq.StateWriteOp) and op.state.root_reference.data in dead:
                op.detach()
                op.erase()
                removed += 1
    if removed:
        _erase_unused(module)
    return removed


def _erase_unused(module: ModuleOp) -> None:
    """Erases, to a fixed point, the ``arith`` ops and storage reads whose results nothing
    uses. xDSL's ``dce`` keeps ``arith`` divisions (poison on a zero divisor in MLIR);
    here they are total (:mod:`aquas.intops`), so pure."""
    changed = True
    while changed:
        changed = False
        for op in list(module.walk(reverse=True)):
            pure = (op.name.startswith("arith.") and not op.regions) or isinstance(
                op, aq.StateReadOp | aq.SpmReadOp
            )
            if pure and op.results and not any(r.uses for r in op.results):
                op.detach()
                op.erase()
                changed = True


@dataclass(frozen=True)
class AquasDropUnobservablePass(ModulePass):
    """Erases writes of states whose contents reach nothing observable."""

    name = "aquas-drop-unobservable"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        drop_unobservable(op)


def forward_state(module: ModuleOp) -> int:
    """Forwards state writes to later reads in the same block and drops writes that a
    later write of the same block overwrites unread. Returns how many ops went."""
    removed = 0
    for op in list(module.walk()):
        for region in op.regions:
            for block in region.blocks:
                removed += _forward_block(block)
    return removed


def _forward_block(block: Block) -> int:
    known: dict[str, SSAValue] = {}  # state → its value at this point of the block
    unread: dict[str, aq.StateWriteOp] = {}  # state → its last write, not read since
    removed = 0
    for op in list(block.ops):
        if isinstance(op, aq.StateReadOp):
            name = op.state.root_reference.data
            value = known.get(name)
            if value is not None and value.type == op.result.type:
                op.result.replace_all_uses_with(value)
                block.erase_op(op)
                removed += 1
                continue
            known[name] = op.result
            unread.pop(name, None)
        elif isinstance(op, aq.StateWriteOp):
            name = op.state.root_reference.data
            dead = unread.get(name)
            if dead is not None:
                block.erase_op(dead)
                removed += 1
            known[name] = op.value
            unread[name] = op
        elif op.regions:
            # a loop or branch may read or write states inside: forget those
            for inner in op.walk():
                if isinstance(inner, aq.StateReadOp | aq.StateWriteOp):
                    known.pop(inner.state.root_reference.data, None)
                    unread.pop(inner.state.root_reference.data, None)
    return removed


@dataclass(frozen=True)
class AquasForwardStatePass(ModulePass):
    """Forwards state writes to later reads of the same block; drops overwritten writes.

    Within each block, a ``state_read`` after a ``state_write`` of the same state uses
    the written value, and a write that a later write overwrites unread is dropped: a
    chain of updates of one state becomes one read, a datapath and one write."""

    name = "aquas-forward-state"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        forward_state(op)


_HEAD = (
    "aquas-unroll,canonicalize,aquas-fold-constants,aquas-reduce-division,cse,"
    "aquas-fold-unsigned-compare,aquas-forward-state,canonicalize,cse,aquas-if-convert,"
    "canonicalize,cse,aquas-drop-unobservable,dce"
)
_TAIL = "aquas-narrow-arith,canonicalize,cse"
PIPELINE = f"{_HEAD},{_TAIL}"
"""What ``aquas synth`` runs before scheduling; it also tries ``aquas-balance-sums`` before
the narrowing and keeps it in the ISAXs where it saves cycles (``prepare_pipeline``)."""


def prepare_pipeline(balance: Collection[str] = ()) -> str:
    """:data:`PIPELINE` with the sums of the ISAXs in ``balance`` balanced."""
    if not balance:
        return PIPELINE
    return f"{_HEAD},aquas-balance-sums{{isaxs={','.join(sorted(balance))}}},{_TAIL}"


def prepare(module: ModuleOp, balance: Collection[str] | None = ()) -> ModuleOp:
    """Runs the preparation pipeline in place, balancing the sums of the ISAXs named in
    ``balance`` (none by default; all when None), and returns the module."""
    prepare_balancing(module, balance)
    return module


def prepare_balancing(module: ModuleOp, balance: Collection[str] | None = ()) -> set[str]:
    """:func:`prepare`, returning the ISAXs where a sum was rebuilt as a tree."""
    from aquas.synth.balance import balance_sums

    ctx = make_context()
    parse_pipeline(_HEAD).apply(ctx, module)
    rebuilt = balance_sums(module, balance) if balance is None or balance else set()
    parse_pipeline(_TAIL).apply(ctx, module)
    module.verify()
    return rebuilt


def unread_states(module: ModuleOp) -> set[str]:
    """The ``state`` registers of ``module``'s extension that no ISAX reads once prepared
    (``aquas-forward-state`` forwarded every read to a write before it in the same call,
    e.g. an accumulator cleared at the start of its ISAX), or whose value reaches nothing
    observable (:func:`unobservable_storage`), or that never change
    (:func:`constant_states`). The unit may have no register for them: the exporter
    removes a register that nothing else reads, and folds one that only ever holds its
    reset value into that constant. ``module`` is not changed."""
    prepared = prepare(module.clone())
    ext = next(op for op in prepared.walk() if isinstance(op, aq.ExtensionOp))
    read = {op.state.root_reference.data for op in ext.walk() if isinstance(op, aq.StateReadOp)}
    states = {s.sym_name.data for s in ext.states()}
    return (states - read) | (states & unobservable_storage(ext)) | constant_states(ext)


def constant_states(ext: aq.ExtensionOp) -> set[str]:
    """The states of a prepared ``ext`` whose every write stores their initial value (a
    constant once folded, e.g. ``st = (0u17)[1] | 0``): they hold that value forever, so
    their golden value is known and the unit may have no register for them."""
    init = {s.sym_name.data: (int(s.init.value.data), s.width) for s in ext.states()}
    changing = set()
    for op in ext.walk():
        if isinstance(op, aq.StateWriteOp):
            name = op.state.root_reference.data
            value, (first, w) = constant_value(op.value), init[name]
            if value is None or (value - first) % (1 << w):
                changing.add(name)
    return set(init) - changing


def unobservable_storage(ext: aq.ExtensionOp) -> set[str]:
    """The states and scratchpads of ``ext`` whose contents never reach what an ISAX
    returns, writes to memory or decides on: every value read from them flows, through
    ``arith`` ops only, into the written value of such storage (``acc = acc + x`` that
    nothing else reads). Their registers feed only themselves, and the exporter removes
    such registers, so the test benches have nothing to compare there (``cosim_tb``).
    Anything else a read reaches (a result, a store, an index, a predicate, a branch, a
    loop's carried value) makes its storage observable, and so does a write of it into
    observable storage."""
    names = {s.sym_name.data for s in ext.states()} | {p.sym_name.data for p in ext.scratchpads()}
    feeds: dict[str, set[str]] = {n: set() for n in names}
    observable: set[str] = set()
    for op in ext.walk():
        if isinstance(op, aq.StateReadOp):
            src = op.state.root_reference.data
        elif isinstance(op, aq.SpmReadOp):
            src = op.scratchpad.root_reference.data
        elif "scratchpad" in op.properties and not isinstance(op, aq.SpmWriteOp | aq.BurstReadOp):
            observable.add(op.properties["scratchpad"].root_reference.data)  # a burst write
            continue
        else:
            continue
        todo, seen = list(op.results), set()
        while todo:
            for use in todo.pop().uses:
                user = use.operation
                if isinstance(user, aq.StateWriteOp | aq.SpmWriteOp) and use.index == 0:
                    dest = user.state if isinstance(user, aq.StateWriteOp) else user.scratchpad
                    feeds[src].add(dest.root_reference.data)
                elif user.name.startswith("arith.") and not user.regions:
                    if user not in seen:
                        seen.add(user)
                        todo.extend(user.results)
                else:
                    observable.add(src)
    grown = True
    while grown:
        grown = False
        for n in names - observable:
            if feeds[n] & observable:
                observable.add(n)
                grown = True
    return names - observable
