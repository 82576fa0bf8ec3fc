"""The application side of matching: functions, blocks and statements as the matcher sees
them (from C through the frontend, or from MLIR), bindings and decisions, and the def-use
helpers that grow a candidate region around a loop."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import ArrayAttr, FileLineColLoc, MemRefType, StringAttr
from xdsl.ir import Block, Operation, OpResult, SSAValue

from aquas.egraph.patterns import Pattern
from aquas.egraph.semantics import width_of
from aquas.egraph.terms import Term


@dataclass
class AppParam:
    name: str
    pointer: bool
    restrict: bool
    width: int  # element width for pointers
    ctype: str = ""


@dataclass
class AppStmt:
    """One statement of application code with the ops it lowered to (same block)."""

    kind: str
    line: int
    col: int
    ops: list[Operation]
    span: tuple[int, int] | None = None  # C source offsets
    target: str | None = None
    value: SSAValue | None = None
    iv: str | None = None
    src: object = None  # the frontend's statement object (C input)
    # functions of the same file the statement's text calls (inlined helpers, C input)
    calls: frozenset[str] = frozenset()


@dataclass
class AppBlock:
    block: Block
    stmts: list[AppStmt]


@dataclass
class AppFunction:
    name: str
    func: func.FuncOp
    params: list[AppParam]
    blocks: list[AppBlock]
    names: dict[SSAValue, str] = field(default_factory=dict)  # SSA value -> C variable name
    line: int = 0
    assigned: set[str] = field(default_factory=set)  # C variables some statement assigns
    # C variable -> where the statements that assign it start (C source offsets; None: a
    # statement without a span, e.g. in an inlined helper)
    assigned_at: dict[str, list[int | None]] = field(default_factory=dict)
    globals_used: set[str] | None = None  # the globals it uses (binding._globals)
    const_globals: set[str] | None = None  # its module's const globals (binding.const_globals)
    pointers: set[str] = field(default_factory=set)  # C variables of pointer type (C input)


@dataclass
class Binding:
    regs: dict[str, Term]  # rs1/rs2 -> app term
    chunk: int | None = None  # strip-mine: loop iterations per ISAX call
    accumulate: bool = False  # live-out = live-in + rd
    proof: str = ""
    # strip-mining a loop that walks pointers or steps counters: each carried variable the
    # chunk moves by a constant -> (that constant, in the variable's C units; the bytes of a
    # pointer's element, 0 for a scalar); the emitted chunk loop advances them alike
    walks: dict[str, tuple[int, int]] = field(default_factory=dict)
    # the operands as the call site names them when they differ from ``regs`` (a walked
    # pointer's current value ``p`` for ``p@entry + 2 * p@in``)
    operands: dict[str, Term] | None = None
    # a run-time alias guard (C input): the region's byte ranges on two bases that may
    # alias, ((base, lo, hi), (base, lo, hi)) each; the ISAX runs only when every pair
    # is disjoint, the original code otherwise (docs/matcher.md, "Alias guards")
    guard: list[tuple[tuple[Term, int, int], tuple[Term, int, int]]] = field(default_factory=list)


@dataclass
class Decision:
    function: str
    isax: str
    line: int
    status: str  # "matched" | "rejected"
    reason: str = ""
    detail: str = ""
    binding: Binding | None = None
    sw_cycles: int = 0
    hw_cycles: int = 0
    region: list[AppStmt] = field(default_factory=list)
    liveout: str | None = None  # C variable receiving rd ("return" for a return value)
    liveout_type: str | None = None
    store: bool = False  # a register pattern's value is stored (the store is kept)
    # a register pattern with a packed result (egraph/fields.py): each stored value is one
    # bit field of rd, (store statement, field's lowest bit, field's width)
    fields: list[tuple[AppStmt, int, int]] = field(default_factory=list)
    field_addrs: list[Term] = field(default_factory=list)  # each field's store address
    blockers: list[str] = field(default_factory=list)  # other regions' / bindings' reasons
    pattern: Pattern | None = None
    anchor: AppStmt | None = None
    seconds: float = 0.0
    # a loop of stateful filter calls (egraph/stateful_loop.py FilterLoop)
    filter: object = None
    # register ISAXs computing parts of one statement's value (Matcher.match_parts): the
    # value with each part replaced by a 32-bit placeholder variable, and the calls the
    # placeholders stand for (inner calls first: an operand may name an earlier one)
    context: Term | None = None
    calls: list[tuple[str, Decision]] = field(default_factory=list)


def defs_of(st: AppStmt) -> set[SSAValue]:
    return {r for op in st.ops for r in op.results}


def uses_of(st: AppStmt) -> set[SSAValue]:
    inner = {o for op in st.ops for o in op.walk()}
    return {v for o in inner for v in o.operands if not (isinstance(v, OpResult) and v.op in inner)}


def loop_of(st: AppStmt) -> Operation | None:
    return next((op for op in st.ops if isinstance(op, scf.ForOp | scf.WhileOp)), None)


def counter_of(st: AppStmt) -> tuple[str, int, int]:
    """The down counter of a loop statement (C input; cstmt.down_counter): its name, step
    and bound."""
    c = getattr(st.src, "counter", None)
    if c is None:
        raise ValueError("not a loop counted down")
    return c


def chunkable(st: AppStmt) -> bool:
    """A loop that can be strip-mined: an ``scf.for``, or a ``while`` loop counted down by a
    scalar (its trips known at the start of each chunk)."""
    loop = loop_of(st)
    if isinstance(loop, scf.ForOp):
        return True
    return isinstance(loop, scf.WhileOp) and getattr(st.src, "counter", None) is not None


def carried_names(fn: AppFunction, loop: Operation) -> list[str]:
    """The C names of a ``while`` loop's carried values, in order (the frontend's
    ``aquas.carried``; else the names of its results, "" when unnamed)."""
    attr = loop.attributes.get("aquas.carried")
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr.data if isinstance(a, StringAttr)]
    return [fn.names.get(r, "") for r in loop.results]


def is_pure(op: Operation) -> bool:
    """Arithmetic, or a branch whose regions only do arithmetic."""
    if op.dialect_name() == "arith":
        return True
    if isinstance(op, scf.IfOp):
        return all(
            o.dialect_name() == "arith" or isinstance(o, scf.YieldOp)
            for r in op.regions
            for o in r.walk()
        )
    return False


def function_of(fop: func.FuncOp, params: list[AppParam]) -> AppFunction:
    """An :class:`AppFunction` for MLIR input.  A "statement" is one op with an effect
    (store, loop, branch, return) together with the pure ops computed for it since the
    previous statement, which is the granularity a C statement would have."""
    blocks = []
    for op in fop.walk():
        for region in op.regions:
            for blk in region.blocks:
                sts: list[AppStmt] = []
                pending: list[Operation] = []
                for o in blk.ops:
                    pending.append(o)
                    if o.dialect_name() == "arith" or isinstance(o, memref.LoadOp):
                        continue
                    sts.append(_mlir_stmt(pending))
                    pending = []
                if pending:
                    sts.append(_mlir_stmt(pending))
                blocks.append(AppBlock(blk, sts))
    return AppFunction(fop.sym_name.data, fop, params, blocks, {})


def _mlir_stmt(ops: list[Operation]) -> AppStmt:
    o = ops[-1]
    loc = o.location
    line, col = (loc.line.data, loc.column.data) if isinstance(loc, FileLineColLoc) else (0, 0)
    kind = "expr"
    if isinstance(o, scf.ForOp):
        kind = "for"
    elif isinstance(o, scf.WhileOp):
        kind = "while"
    elif isinstance(o, scf.IfOp):
        kind = "if"
    elif isinstance(o, memref.StoreOp):
        kind = "assign"
    elif isinstance(o, func.ReturnOp):
        kind = "return"
    value = o.operands[0] if kind == "return" and o.operands else None
    return AppStmt(kind, line, col, list(ops), value=value)


def params_of_mlir(fop: func.FuncOp) -> list[AppParam]:
    out = []
    for k, a in enumerate(fop.body.block.args):
        ptr = isinstance(a.type, MemRefType)
        out.append(
            AppParam(
                a.name_hint or f"arg{k}",
                ptr,
                restrict=ptr,  # MLIR memrefs passed as distinct arguments: see docs/matcher.md
                width=width_of(a.type.element_type)
                if isinstance(a.type, MemRefType)
                else width_of(a.type),
            )
        )
    return out
