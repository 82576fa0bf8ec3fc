"""Symbolic execution of MLIR regions into memory-level effects.

One executor serves both sides of matching:

* an ISAX body (``aquas`` dialect): register operands become variables ``rs1``/``rs2``;
  bursts become loads (or stores) of consecutive elements at ``rs + offset`` and the
  scratchpad holds the loaded terms, so scratchpads, partitions and unroll directives
  disappear -- what remains is the ISAX's *memory-level* semantics (design card:
  "Dialect -> egraph");
* a region of application code (func/scf/arith/memref from :mod:`aquas.egraph.cfront` or
  MLIR input): memref arguments become pointer variables, element indices become byte
  addresses.

Loops with constant bounds are executed iteration by iteration (full unrolling: the
external loop rewrite that makes unroll / unroll-and-jam / tiling variants of the same loop
identical), ``scf.if`` with a symbolic condition executes both branches and merges values
and stores with ``select``.  The result, :class:`Effects`, lists the reads that reach
memory, the final value of every written address, the region's results and the may-alias
hazards seen on the way -- the input of the matcher's soundness checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Block, Operation, SSAValue

from aquas.dialects import aquas as aq
from aquas.egraph.terms import (
    Linear,
    Term,
    binop,
    cast,
    cmp,
    const,
    linear,
    linear_term,
    load,
    select,
    show,
    signed,
    var,
)
from aquas.synth.oplib import CMPI_PREDICATE_NAMES

ADDR_W = 32  # RV32: addresses and `index` are 32 bits

_BIN = {
    "arith.addi": "add",
    "arith.subi": "sub",
    "arith.muli": "mul",
    "arith.andi": "and",
    "arith.ori": "or",
    "arith.xori": "xor",
    "arith.shli": "shl",
    "arith.shrui": "shru",
    "arith.shrsi": "shrs",
    "arith.divui": "divu",
    "arith.divsi": "divs",
    "arith.remui": "remu",
    "arith.remsi": "rems",
}
_CAST = {"arith.extsi": "sext", "arith.extui": "zext", "arith.trunci": "trunc"}
_DIVS = ("arith.divui", "arith.divsi", "arith.remui", "arith.remsi")


# kinds of decoded ops (Executor._plan)
def _data_mul(a: Term, b: Term) -> bool:
    """Whether a multiply costs a multiplier cycle in compiled code: a product with a
    constant operand (index arithmetic such as ``3 * i`` in a loop the symbolic execution
    runs through) is folded or strength-reduced by the compiler, so it counts as ALU work."""
    return a.op != "const" and b.op != "const"


_P_OTHER, _P_BIN, _P_CONST, _P_CAST, _P_ICAST, _P_CMP, _P_SEL, _P_LOAD, _P_STORE = range(9)


class Unsupported(Exception):
    """The region cannot be summarised (the reason is shown by ``--explain``)."""


class StateAccess(Unsupported):
    """The ISAX reads unit state: a state register, or a scratchpad before writing it."""

    def __init__(self, message: str, scratchpad: str | None = None):
        super().__init__(message)
        self.scratchpad = scratchpad


def cast_address(op: UnrealizedConversionCastOp, get: Callable[[SSAValue], Term]) -> Term:
    """The address a frontend cast (egraph/cexpr.py, cstmt.py) stands for: a view of a
    memref at another element width or a pointer loaded from a struct member is its
    operand's address; a memref plus an element offset (a pointer local based on a
    member's address) is base + offset * element size."""
    src = get(op.operands[0])
    if src.w != ADDR_W:
        src = cast("zext", ADDR_W, src)
    if len(op.operands) == 2:
        mtype = op.operands[0].type
        assert isinstance(mtype, MemRefType)
        size = const(ADDR_W, width_of(mtype.element_type) // 8)
        src = binop("add", src, binop("mul", get(op.operands[1]), size))
    return src


def width_of(ty: object) -> int:
    if isinstance(ty, IntegerType):
        return ty.width.data
    if isinstance(ty, IndexType):
        return ADDR_W
    if isinstance(ty, MemRefType):
        return ADDR_W
    raise Unsupported(f"type {ty} is not an integer")


@dataclass
class Access:
    addr: Term
    lin: Linear
    width: int  # bits
    seq: int  # program order among all accesses of the region
    value: Term | None = None  # stores

    def overlaps(self, other: Access) -> bool | None:
        """True/False when the two accesses provably (do not) overlap; None when unknown."""
        if self.lin.terms != other.lin.terms:
            return None
        a, b = self.lin.offset, other.lin.offset
        return a < b + other.width // 8 and b < a + self.width // 8


@dataclass
class Effects:
    reads: list[Access] = field(default_factory=list)  # reads that reach memory
    writes: list[Access] = field(default_factory=list)  # final value per address, first-write order
    results: list[Term] = field(default_factory=list)
    # (write, later read or write) pairs whose bases differ: they may alias at run time;
    # the first pair of each (write base, access base, read or write) only
    hazards: list[tuple[Access, Access]] = field(default_factory=list)
    ops: int = 0  # executed operations (software cost estimate)
    loads: int = 0
    stores: int = 0
    branches: int = 0
    muls: int = 0
    divs: int = 0
    folded: int = 0  # operations on constants only: the compiler folds them away


class SymMemory:
    """Program-ordered symbolic memory with store-to-load forwarding."""

    def __init__(self, private: set[Term] | None = None):
        self.private = private if private is not None else set()
        self.log: list[Access] = []  # every store, in order
        self.reads: list[Access] = []
        # (lin, width) of every read: kept with the list, so that joining the two arms of
        # a branch (Executor.if_op) hashes only the new reads, not every read again (a
        # loop of 64 branches over 192 reads spent most of a 40 s match doing that)
        self.read_keys: set[tuple[Linear, int]] = set()
        self.hazards: list[tuple[Access, Access]] = []
        self.hazard_keys: set[tuple[object, ...]] = set()
        self.seq = 0

    def fork(self) -> SymMemory:
        m = SymMemory(self.private)
        m.log, m.reads, m.read_keys, m.hazards, m.hazard_keys, m.seq = (
            list(self.log),
            list(self.reads),
            set(self.read_keys),
            list(self.hazards),
            set(self.hazard_keys),
            self.seq,
        )
        return m

    def hazard(self, st: Access, a: Access) -> None:
        """Record that ``a`` follows the store ``st`` at a base that may alias.  Only the
        first pair per (store base, access base, read or write) is kept: whether bases may
        alias depends on nothing else, so later pairs add no information (and an unrolled
        loop would otherwise record a quadratic number of them)."""
        key = (st.lin.terms, a.lin.terms, a.value is None)
        if key not in self.hazard_keys:
            self.hazard_keys.add(key)
            self.hazards.append((st, a))

    def _access(self, addr: Term, w: int, value: Term | None = None) -> Access:
        self.seq += 1
        lin, canon = _address(addr)
        return Access(canon, lin, w, self.seq, value)

    def _private(self, a: Access) -> bool:
        private = self.private
        return bool(private) and any(t in private for t, _ in a.lin.terms)

    def peek(self, addr: Term, w: int) -> Term:
        """The value at ``addr`` now (forwarded from a store, or a fresh read)."""
        a = self._access(addr, w)
        for st in reversed(self.log):
            ov = st.overlaps(a)
            if ov is None:
                if not (self._private(a) or self._private(st)):
                    self.hazard(st, a)
                continue
            if not ov:
                continue
            if st.lin.offset == a.lin.offset and st.width == w:
                assert st.value is not None
                return st.value
            raise Unsupported(f"partially overlapping accesses at {show(addr)}")
        if self._private(a):
            raise Unsupported("read of an uninitialised local array")
        self.reads.append(a)
        self.read_keys.add((a.lin, w))
        return load(w, a.addr)

    def store(self, addr: Term, w: int, value: Term) -> None:
        a = self._access(addr, w, value)
        for st in self.log:
            ov = st.overlaps(a)
            if ov and not (st.lin.offset == a.lin.offset and st.width == w):
                raise Unsupported(f"partially overlapping stores at {show(addr)}")
        if not self._private(a):
            for st in self.log:
                if st.overlaps(a) is None and not self._private(st):
                    self.hazard(st, a)
        self.log.append(a)

    def final_writes(self) -> list[Access]:
        out: dict[tuple[object, ...], Access] = {}
        for st in self.log:
            if self._private(st):
                continue
            key = (st.lin.terms, st.lin.offset)
            if key in out:
                first = out[key]
                out[key] = Access(st.addr, st.lin, st.width, first.seq, st.value)
            else:
                out[key] = st
        return list(out.values())


def _static_ops(op: Operation, memo: dict[Operation, int]) -> int:
    """A lower bound on the operations executing ``op`` takes: loops with constant bounds
    count their trips times their body (nests multiply), everything else one."""
    if not isinstance(op, scf.ForOp):
        return 1
    if op in memo:
        return memo[op]
    bounds = []
    for v in (op.lb, op.ub, op.step):
        owner = v.owner
        if not (isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr)):
            memo[op] = 1
            return 1
        bounds.append(owner.value.value.data)
    lb, ub, step = bounds
    trips = len(range(lb, ub, step)) if step > 0 else 0
    body = sum(_static_ops(o, memo) for o in op.body.block.ops if not isinstance(o, scf.YieldOp))
    memo[op] = 1 + trips * body
    return memo[op]


@dataclass
class Budget:
    """Symbolic operations shared by every execution of one matching job (a function):
    many candidate regions each within their own budget must not add up to hours."""

    limit: int
    what: str
    used: int = 0
    static: dict[Operation, int] = field(default_factory=dict)  # see _static_ops


class Executor:
    """Executes ops over terms.  ``resolve`` supplies values defined outside the region.
    ``budget`` bounds this execution, ``shared`` (optional) all executions of a job."""

    def __init__(
        self,
        resolve: Callable[[SSAValue], Term] | None = None,
        budget: int = 200_000,
        private: set[Term] | None = None,
        plans: dict[Operation, tuple[Any, ...]] | None = None,
        shared: Budget | None = None,
    ):
        self.env: dict[SSAValue, Term] = {}
        # decoded ops (operands, result, constant), shared by executors of the same code
        self.plans = plans if plans is not None else {}
        self.mem = SymMemory(private)
        self.resolve = resolve
        self.budget = budget
        self.shared = shared
        self.static: dict[Operation, int] = {}
        self.fx = Effects()
        self.spm: dict[str, list[Term | None]] = {}
        self.spm_image: dict[str, tuple[Term, int] | None] = {}  # burst source of a pristine spm
        self.local_id = 0
        # Unit state registers as values (None: an ISAX that uses state is refused). Reads
        # before any write give the variable ``state@name``, the value on entry.
        self.state: dict[str, Term] | None = None

    # -- values ----------------------------------------------------------------------
    def get(self, v: SSAValue) -> Term:
        t = self.env.get(v)
        if t is None:
            if self.resolve is None:
                raise Unsupported(f"value {v.name_hint or v} defined outside the region")
            t = self.resolve(v)
            self.env[v] = t
        return t

    def set(self, results: Sequence[SSAValue], terms: Sequence[Term]) -> None:
        for r, t in zip(results, terms, strict=True):
            self.env[r] = t

    def tick(self) -> None:
        self.fx.ops += 1
        if self.fx.ops > self.budget:
            raise Unsupported(
                f"region larger than the execution budget ({self.budget} ops per region, "
                "Options.budget)"
            )
        sh = self.shared
        if sh is not None:
            sh.used += 1
            if sh.used > sh.limit:
                raise Unsupported(
                    f"the symbolic-execution budget is exhausted ({sh.limit} operations {sh.what})"
                )

    def check_loop(self, op: scf.ForOp, trips: int) -> None:
        """Refuse a loop before executing it when even a lower bound of its operations
        (constant trip counts of the nest times the ops of each body) is over the budget."""
        memo = self.shared.static if self.shared is not None else self.static
        body = op.body.block.ops
        need = trips * sum(_static_ops(o, memo) for o in body if not isinstance(o, scf.YieldOp))
        left = self.budget - self.fx.ops
        if self.shared is not None:
            left = min(left, self.shared.limit - self.shared.used)
        if need > left:
            raise Unsupported(
                f"loop of {trips} iterations needs at least {need} symbolic operations, more "
                f"than the execution budget leaves ({left} of {self.budget} per region)"
            )

    # -- driving -----------------------------------------------------------------------
    def run_ops(self, ops: Iterable[Operation]) -> list[Term] | None:
        """Run ops in order; returns the terminator's operands when one is reached."""
        for op in ops:
            if isinstance(op, scf.YieldOp | func.ReturnOp | scf.ConditionOp):
                return [self.get(o) for o in op.operands]
            self.op(op)
        return None

    def _plan(self, op: Operation) -> tuple[Any, ...]:
        """The common ops decoded once: their operands, result and what to build."""
        name = op.name
        if name in _BIN:
            count = 1 if name == "arith.muli" else 2 if name in _DIVS else 0
            return (_P_BIN, _BIN[name], *op.operands, op.results[0], count)
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return (_P_CONST, op.result, const(width_of(op.result.type), op.value.value.data))
        if name in _CAST:
            r = op.results[0]
            return (_P_CAST, _CAST[name], width_of(r.type), op.operands[0], r)
        if isinstance(op, arith.IndexCastOp):
            return (_P_ICAST, op.input, op.result)
        if isinstance(op, arith.CmpiOp):
            return (
                _P_CMP,
                CMPI_PREDICATE_NAMES[op.predicate.value.data],
                op.lhs,
                op.rhs,
                op.result,
            )
        if isinstance(op, arith.SelectOp):
            return (_P_SEL, *op.operands, op.results[0])
        if isinstance(op, memref.LoadOp) and len(op.indices) == 1:
            return (_P_LOAD, op.memref, op.indices[0], width_of(op.res.type), op.res)
        if isinstance(op, memref.StoreOp) and len(op.indices) == 1:
            return (_P_STORE, op.value, op.memref, op.indices[0])
        return (_P_OTHER,)

    def run_block(self, block: Block, args: Sequence[Term]) -> list[Term]:
        self.set(block.args, args)
        out = self.run_ops(block.ops)
        return out if out is not None else []

    def effects(self) -> Effects:
        fx = self.fx
        fx.reads = self.mem.reads
        fx.writes = self.mem.final_writes()
        fx.hazards = self.mem.hazards
        return fx

    def snapshot(self) -> Effects:
        """The effects so far, unaffected by executing further ops."""
        return replace(
            self.fx,
            reads=list(self.mem.reads),
            writes=self.mem.final_writes(),
            results=list(self.fx.results),
            hazards=list(self.mem.hazards),
        )

    # -- operations ----------------------------------------------------------------------
    def op(self, op: Operation) -> None:
        self.tick()
        plan = self.plans.get(op)
        if plan is None:
            plan = self.plans[op] = self._plan(op)
        kind = plan[0]
        if kind == _P_BIN:
            _, name, x, y, r, count = plan
            a, b = self.get(x), self.get(y)
            if a.op == "const" and b.op == "const":
                self.fx.folded += 1  # e.g. the index arithmetic of a loop run through
            elif count == 1 and _data_mul(a, b):
                self.fx.muls += 1
            elif count == 2:
                self.fx.divs += 1
            self.env[r] = binop(name, a, b)
        elif kind == _P_CONST:
            self.fx.folded += 1  # an immediate
            self.env[plan[1]] = plan[2]
        elif kind == _P_LOAD:
            _, mref, idx, w, r = plan
            self.fx.loads += 1
            self.env[r] = self.mem.peek(self._elem(mref, idx, w), w)
        elif kind == _P_STORE:
            _, val, mref, idx = plan
            self.fx.stores += 1
            v = self.get(val)
            self.mem.store(self._elem(mref, idx, v.w), v.w, v)
        elif kind == _P_CAST:
            src = self.get(plan[3])
            self.fx.folded += src.op == "const"
            self.env[plan[4]] = cast(plan[1], plan[2], src)
        elif kind == _P_ICAST:
            src = self.get(plan[1])
            self.fx.folded += src.op == "const"
            self.env[plan[2]] = cast("sext" if src.w < ADDR_W else "trunc", ADDR_W, src)
        elif kind == _P_CMP:
            self.env[plan[4]] = cmp(plan[1], self.get(plan[2]), self.get(plan[3]))
        elif kind == _P_SEL:
            c, a, b = self.get(plan[1]), self.get(plan[2]), self.get(plan[3])
            self.env[plan[4]] = select(c, a, b)
        else:
            self._op(op)

    def _op(self, op: Operation) -> None:
        name = op.name
        if name in _BIN:
            a, b = (self.get(o) for o in op.operands)
            if name in ("arith.muli",) and _data_mul(a, b):
                self.fx.muls += 1
            elif name in ("arith.divui", "arith.divsi", "arith.remui", "arith.remsi"):
                self.fx.divs += 1
            self.env[op.results[0]] = binop(_BIN[name], a, b)
        elif isinstance(op, arith.ConstantOp):
            attr = op.value
            assert isinstance(attr, IntegerAttr)
            self.env[op.result] = const(width_of(op.result.type), attr.value.data)
        elif name in _CAST:
            self.env[op.results[0]] = cast(
                _CAST[name], width_of(op.results[0].type), self.get(op.operands[0])
            )
        elif isinstance(op, arith.IndexCastOp):
            src = self.get(op.input)
            self.env[op.result] = cast("sext" if src.w < ADDR_W else "trunc", ADDR_W, src)
        elif isinstance(op, arith.CmpiOp):
            a, b = self.get(op.lhs), self.get(op.rhs)
            self.env[op.result] = cmp(CMPI_PREDICATE_NAMES[op.predicate.value.data], a, b)
        elif isinstance(op, arith.SelectOp):
            c, a, b = (self.get(o) for o in op.operands)
            self.env[op.result] = select(c, a, b)
        elif isinstance(op, scf.ForOp):
            self.for_op(op)
        elif isinstance(op, scf.IfOp):
            self.if_op(op)
        elif isinstance(op, scf.WhileOp):
            self.while_op(op)
        elif isinstance(op, memref.LoadOp):
            self.fx.loads += 1
            w = width_of(op.res.type)
            self.env[op.res] = self.mem.peek(self.elem_addr(op.memref, op.indices, w), w)
        elif isinstance(op, memref.StoreOp):
            self.fx.stores += 1
            v = self.get(op.value)
            self.mem.store(self.elem_addr(op.memref, op.indices, v.w), v.w, v)
        elif isinstance(op, memref.AllocaOp | memref.AllocOp):
            self.local_id += 1
            base = var(f"%local{self.local_id}", ADDR_W)
            self.mem.private.add(base)
            self.env[op.results[0]] = base
        elif isinstance(op, memref.GetGlobalOp):
            self.env[op.results[0]] = var(f"@{op.name_.root_reference.data}", ADDR_W)
        elif isinstance(op, UnrealizedConversionCastOp) and len(op.operands) in (1, 2):
            self.env[op.results[0]] = cast_address(op, self.get)
        elif isinstance(op, aq.ReadRs1Op | aq.ReadRs2Op):
            self.env[op.result] = var("rs1" if isinstance(op, aq.ReadRs1Op) else "rs2", 32)
        elif isinstance(op, aq.WriteRdOp):
            self.fx.results.append(self.get(op.value))
        elif isinstance(op, aq.LoadOp):
            self.fx.loads += 1
            w = width_of(op.result.type)
            self.env[op.result] = self.mem.peek(self.get(op.addr), w)
        elif isinstance(op, aq.StoreOp):
            self.fx.stores += 1
            v = self.get(op.value)
            self.mem.store(self.get(op.addr), v.w, v)
        elif isinstance(op, aq.BurstReadOp | aq.BurstWriteOp):
            self.burst(op)
        elif isinstance(op, aq.SpmReadOp):
            self.env[op.result] = self.spm_read(op)
        elif isinstance(op, aq.SpmWriteOp):
            name_ = op.scratchpad.root_reference.data
            idx = self.get(op.index)
            if idx.op != "const":
                raise Unsupported(f"scratchpad {name_} written at a data-dependent index")
            cells = self.spm.setdefault(name_, [None] * self.spm_size[name_])
            cells[int(idx.val)] = self.get(op.value)
            self.spm_image[name_] = None
        elif isinstance(op, aq.StateReadOp | aq.StateWriteOp) and self.state is not None:
            name_ = op.state.root_reference.data
            if isinstance(op, aq.StateReadOp):
                w = width_of(op.result.type)
                self.env[op.result] = self.state.get(name_, var(f"state@{name_}", w))
            else:
                self.state[name_] = self.get(op.value)
        elif isinstance(op, aq.StateReadOp | aq.StateWriteOp):
            raise StateAccess(
                f"uses unit state @{op.state.root_reference.data}: an ISAX with internal state "
                "has no memory-level equivalent in application code"
            )
        else:
            raise Unsupported(f"operation {name} is not supported by the matcher")

    def elem_addr(self, mref: SSAValue, indices: Sequence[SSAValue], w: int) -> Term:
        if len(indices) != 1:
            raise Unsupported("multi-dimensional memrefs are not supported")
        return self._elem(mref, indices[0], w)

    def _elem(self, mref: SSAValue, index: SSAValue, w: int) -> Term:
        base = self.get(mref)
        idx = self.get(index)
        return binop("add", base, binop("mul", idx, const(ADDR_W, w // 8)))

    # -- control flow --------------------------------------------------------------------
    def _const(self, v: SSAValue, what: str) -> int:
        t = self.get(v)
        if t.op != "const":
            raise Unsupported(f"{what} is not a constant ({show(t)})")
        return int(t.val)

    def for_op(self, op: scf.ForOp) -> None:
        w = width_of(op.lb.type)
        lb = signed(self._const(op.lb, "loop lower bound"), w)
        ub = signed(self._const(op.ub, "loop upper bound"), w)
        step = signed(self._const(op.step, "loop step"), w)
        if step <= 0:
            raise Unsupported("loop step is not positive")
        self.check_loop(op, len(range(lb, ub, step)))
        carried = [self.get(v) for v in op.iter_args]
        for i in range(lb, ub, step):
            self.fx.branches += 1
            carried = self.run_block(op.body.block, [const(w, i), *carried])
        self.set(op.results, carried)

    def if_op(self, op: scf.IfOp) -> None:
        c = self.get(op.cond)
        self.fx.branches += 1
        if c.op == "const":
            region = op.true_region if c.val else op.false_region
            out = self.run_block(region.block, []) if region.blocks else []
            self.set(op.results, out)
            return
        base = self.mem
        then_mem, else_mem = base.fork(), base.fork()
        self.mem = then_mem
        t_out = self.run_block(op.true_region.block, [])
        self.mem = else_mem
        e_out = self.run_block(op.false_region.block, []) if op.false_region.blocks else []
        merged = base.fork()
        n0 = len(base.log)
        touched: dict[tuple[object, ...], Access] = {}
        for st in then_mem.log[n0:] + else_mem.log[n0:]:
            touched.setdefault((st.lin.terms, st.lin.offset, st.width), st)
        for h in then_mem.hazards[len(base.hazards) :] + else_mem.hazards[len(base.hazards) :]:
            merged.hazard(*h)
        merged.seq = max(then_mem.seq, else_mem.seq)
        vals = [
            (st, select(c, then_mem.peek(st.addr, st.width), else_mem.peek(st.addr, st.width)))
            for st in touched.values()
        ]
        # the reads of both arms, each (lin, width) once (both arms start with base's)
        extra = [
            x
            for x in else_mem.reads[len(base.reads) :]
            if (x.lin, x.width) not in then_mem.read_keys
        ]
        merged.reads = then_mem.reads + extra
        merged.read_keys = then_mem.read_keys | {(x.lin, x.width) for x in extra}
        for st, v in vals:
            merged.store(st.addr, st.width, v)
        self.mem = merged
        self.set(op.results, [select(c, a, b) for a, b in zip(t_out, e_out, strict=True)])

    def while_op(self, op: scf.WhileOp) -> None:
        args = [self.get(v) for v in op.arguments]
        for _ in range(self.budget):
            out = self.run_block(op.before_region.block, args)
            cond, fwd = out[0], out[1:]
            self.fx.branches += 1
            if cond.op != "const":
                raise Unsupported(f"while loop with a data-dependent condition ({show(cond)})")
            if not cond.val:
                self.set(op.results, fwd)
                return
            args = self.run_block(op.after_region.block, fwd)
        raise Unsupported("while loop exceeds the execution budget")

    # -- scratchpads -------------------------------------------------------------------------
    def spm_cells(self, name: str) -> list[Term | None]:
        if name not in self.spm:
            raise StateAccess(f"scratchpad {name} is read before it is written (unit state)", name)
        return self.spm[name]

    def declare_spms(self, ext: aq.ExtensionOp) -> None:
        self.spm_width, self.spm_size = _spm_shapes(ext)

    def burst(self, op: aq.BurstReadOp | aq.BurstWriteOp) -> None:
        name = op.scratchpad.root_reference.data
        w, n = self.spm_width[name], op.length_value
        start = self._const(op.offset, "burst scratchpad offset")
        addr = self.get(op.addr)
        if isinstance(op, aq.BurstReadOp):
            cells = self.spm.setdefault(name, [None] * self.spm_size[name])
            for k in range(n):
                self.fx.loads += 1
                cells[start + k] = self.mem.peek(binop("add", addr, const(ADDR_W, k * w // 8)), w)
            full = start == 0 and n == self.spm_size[name]
            self.spm_image[name] = (addr, w) if full else None
        else:
            cells = self.spm_cells(name)
            for k in range(n):
                v = cells[start + k]
                if v is None:
                    raise Unsupported(f"scratchpad {name}[{start + k}] is read before written")
                self.fx.stores += 1
                self.mem.store(binop("add", addr, const(ADDR_W, k * w // 8)), w, v)

    def spm_read(self, op: aq.SpmReadOp) -> Term:
        name = op.scratchpad.root_reference.data
        idx = self.get(op.index)
        rw = width_of(op.result.type)
        if idx.op == "const":
            v = self.spm_cells(name)[int(idx.val)]
            if v is None:
                raise Unsupported(f"scratchpad {name}[{idx.val}] is read before written")
            return cast("trunc", rw, v) if v.w > rw else v
        image = self.spm_image.get(name)
        if image is None:
            raise Unsupported(f"scratchpad {name} read at a data-dependent index after writes")
        base, w = image
        addr = binop("add", base, binop("mul", cast("zext", ADDR_W, idx), const(ADDR_W, w // 8)))
        return self.mem.peek(addr, w)


_ADDRESSES: dict[Term, tuple[Linear, Term]] = {}  # keyed by the (identity-hashed) term


def _address(addr: Term) -> tuple[Linear, Term]:
    """The linear form of an address and its canonical term, computed once per (hash-consed,
    never freed) term: the same addresses recur in every region around a loop."""
    r = _ADDRESSES.get(addr)
    if r is None:
        lin = linear(addr)
        r = _ADDRESSES[addr] = (lin, linear_term(lin))
    return r


def linear_form(addr: Term) -> Linear:
    """:func:`aquas.egraph.terms.linear` of an address, cached."""
    return _address(addr)[0]


_SpmShapes = tuple[dict[str, int], dict[str, int]]
_UNCHANGED: ContextVar[tuple[aq.ExtensionOp, _SpmShapes] | None] = ContextVar(
    "aquas_unchanged_extension", default=None
)


def _spm_shapes(ext: aq.ExtensionOp) -> _SpmShapes:
    """(width, size) of every scratchpad of ``ext``: a scan of the extension, once per
    :func:`unchanged_extension` block."""
    held = _UNCHANGED.get()
    if held is not None and held[0] is ext:
        return held[1]
    spms = list(ext.scratchpads())
    return {s.sym_name.data: s.width for s in spms}, {s.sym_name.data: s.size for s in spms}


@contextmanager
def unchanged_extension(ext: aq.ExtensionOp) -> Iterator[None]:
    """While ``ext`` is not modified: the ISAX summaries inside scan its scratchpads once,
    not once per ISAX (a loop over the ISAXs of a thousand-ISAX extension was quadratic)."""
    token = _UNCHANGED.set((ext, _spm_shapes(ext)))
    try:
        yield
    finally:
        _UNCHANGED.reset(token)


def isax_effects(isax: aq.IsaxOp, ext: aq.ExtensionOp, budget: int = 200_000) -> Effects:
    """The memory-level semantics of one ISAX over variables rs1/rs2."""
    ex = Executor(budget=budget)
    ex.declare_spms(ext)
    ex.run_ops(isax.body.block.ops)
    return ex.effects()


def isax_state_effects(
    isax: aq.IsaxOp, ext: aq.ExtensionOp, budget: int = 200_000
) -> tuple[Effects, dict[str, Term]]:
    """Like :func:`isax_effects` for an ISAX that uses unit state registers: also the
    final value of every state register it writes, over the entry values ``state@name``."""
    ex = Executor(budget=budget)
    ex.state = {}
    ex.declare_spms(ext)
    ex.run_ops(isax.body.block.ops)
    return ex.effects(), dict(ex.state)


__all__ = [
    "ADDR_W",
    "Access",
    "Effects",
    "Executor",
    "StateAccess",
    "SymMemory",
    "Unsupported",
    "isax_effects",
    "isax_state_effects",
    "linear_form",
    "unchanged_extension",
    "width_of",
]
