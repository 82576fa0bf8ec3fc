"""Golden interpreter: executes one ISAX of an ``aquas.extension`` bit-exactly.

This is the oracle for RTL co-simulation and for matcher soundness, so its semantics are
spelled out here and in ``docs/dialect.md`` (the integer operations themselves are defined once,
in :mod:`aquas.intops`):

* values are held as unsigned Python ints masked to their width (two's complement);
* ``add/sub/mul`` wrap; division follows RISC-V: ``x/0`` is all ones, ``x%0`` is ``x``,
  signed ``MIN/-1`` is ``MIN`` with remainder 0; division truncates toward zero;
* shifts by an amount ``>=`` the width give 0 (``shli``, ``shrui``) or the sign fill
  (``shrsi``) — MLIR leaves this poison, aquas defines it;
* memory is little-endian and byte addressed; every access (single or burst element) must be
  naturally aligned, otherwise execution stops with :class:`ExecError`;
* scratchpad indices out of bounds stop execution with :class:`ExecError`.

xDSL ships an interpreter framework, but its ``arith`` functions lack the unsigned ops and
the RISC-V division and shift rules above, so this walker is written by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from aquas import intops
from aquas.dialects import aquas as aq


class ExecError(Exception):
    """The ISAX performed an illegal action (misaligned access, out-of-bounds index)."""


@dataclass(frozen=True)
class MemWrite:
    addr: int
    size: int  # bytes
    value: int  # unsigned, little-endian in memory


class Memory:
    """Sparse byte-addressed little-endian memory; unwritten bytes read as 0."""

    def __init__(self, data: dict[int, int] | None = None):
        self.bytes: dict[int, int] = dict(data or {})

    def copy(self) -> Memory:
        return Memory(self.bytes)

    def load_image(self, base: int, data: bytes) -> None:
        for i, b in enumerate(data):
            self.bytes[(base + i) & 0xFFFFFFFF] = b

    def read(self, addr: int, size: int) -> int:
        return int.from_bytes(
            bytes(self.bytes.get((addr + i) & 0xFFFFFFFF, 0) for i in range(size)), "little"
        )

    def write(self, addr: int, size: int, value: int) -> None:
        for i, b in enumerate(value.to_bytes(size, "little")):
            self.bytes[(addr + i) & 0xFFFFFFFF] = b

    def read_words(self, addr: int, size: int, count: int) -> list[int]:
        return [self.read(addr + i * size, size) for i in range(count)]

    def write_words(self, addr: int, size: int, values: Iterable[int]) -> None:
        for i, v in enumerate(values):
            self.write(addr + i * size, size, v & ((1 << (8 * size)) - 1))


class NoiseMemory(Memory):
    """Memory whose unwritten bytes hold deterministic pseudo-random data."""

    def __init__(self, seed: int):
        super().__init__()
        self.seed = seed

    def _byte(self, a: int) -> int:
        b = self.bytes.get(a)
        if b is None:
            b = ((a * 2654435761 + self.seed * 40503) >> 13) & 0xFF
        return b

    def read(self, addr: int, size: int) -> int:
        return sum(self._byte((addr + i) & 0xFFFFFFFF) << (8 * i) for i in range(size))

    def copy(self) -> NoiseMemory:
        m = NoiseMemory(self.seed)
        m.bytes = dict(self.bytes)
        return m


@dataclass
class IsaxState:
    """ISAX-private state of an extension: registers and scratchpad contents (unsigned)."""

    regs: dict[str, int] = field(default_factory=dict)
    spms: dict[str, list[int]] = field(default_factory=dict)

    @staticmethod
    def reset(ext: aq.ExtensionOp) -> IsaxState:
        st = IsaxState()
        for s in ext.states():
            st.regs[s.sym_name.data] = intops.to_unsigned(int(s.init.value.data), s.width)
        for p in ext.scratchpads():
            st.spms[p.sym_name.data] = [0] * p.size
        return st

    def copy(self) -> IsaxState:
        return IsaxState(dict(self.regs), {k: list(v) for k, v in self.spms.items()})


@dataclass
class ExecResult:
    rd: int | None
    writes: list[MemWrite]
    state: IsaxState
    loads: int = 0  # single-shot loads executed
    burst_beats: int = 0  # burst elements moved
    ops: int = 0  # ops executed


def find_extension(module: ModuleOp) -> aq.ExtensionOp:
    for op in module.walk():
        if isinstance(op, aq.ExtensionOp):
            return op
    raise ValueError("module holds no aquas.extension")


def find_isax(ext: aq.ExtensionOp, name: str) -> aq.IsaxOp:
    for isax in ext.isaxs():
        if isax.sym_name.data == name:
            return isax
    known = ", ".join(i.sym_name.data for i in ext.isaxs())
    raise KeyError(f"no ISAX named '{name}' (known: {known})")


def _w(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, IntegerType), t
    return t.width.data


class _Exec:
    def __init__(self, ext: aq.ExtensionOp, rs1: int, rs2: int, mem: Memory, state: IsaxState):
        self.rs1 = rs1 & 0xFFFFFFFF
        self.rs2 = rs2 & 0xFFFFFFFF
        self.mem = mem
        self.state = state
        self.writes: list[MemWrite] = []
        self.vals: dict[SSAValue, int] = {}
        self.rd: int | None = None
        self.loads = 0
        self.beats = 0
        self.ops = 0
        self.spm_decl = {p.sym_name.data: p for p in ext.scratchpads()}

    def run_block(self, block: Block) -> list[int]:
        """Executes a block; returns the operands of its terminating scf.yield, if any."""
        vals = self.vals
        for op in block.ops:
            self.ops += 1
            fn = _DISPATCH.get(type(op))
            if fn is not None:
                fn(self, op)
                continue
            if isinstance(op, scf.YieldOp):
                return [vals[a] for a in op.arguments]
            raise ExecError(f"the golden interpreter does not implement {op.name}")
        return []

    # memory helpers
    def _mem_read(self, addr: int, size: int) -> int:
        if addr % size:
            raise ExecError(f"misaligned {8 * size}-bit load at {addr:#010x}")
        return self.mem.read(addr, size)

    def _mem_write(self, addr: int, size: int, value: int) -> None:
        if addr % size:
            raise ExecError(f"misaligned {8 * size}-bit store at {addr:#010x}")
        self.mem.write(addr, size, value)
        self.writes.append(MemWrite(addr, size, value))

    def _spm(self, sym: str, idx: int) -> list[int]:
        arr = self.state.spms[sym]
        if not 0 <= idx < len(arr):
            raise ExecError(
                f"index {idx} out of bounds for scratchpad @{sym} of {len(arr)} elements"
            )
        return arr


def _binary(fn: Callable[[int, int, int], int]) -> Callable[[_Exec, Operation], None]:
    def run(ex: _Exec, op: Operation) -> None:
        a, b = op.operands
        w = _w(op.results[0])
        ex.vals[op.results[0]] = fn(ex.vals[a], ex.vals[b], w)

    return run


def _constant(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr)
    w = _w(op.result)
    ex.vals[op.result] = intops.to_unsigned(int(op.value.value.data), w)


def _cmpi(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, arith.CmpiOp)
    pred = intops.PREDICATES[op.predicate.value.data]
    ex.vals[op.result] = int(intops.compare(pred, _w(op.lhs), ex.vals[op.lhs], ex.vals[op.rhs]))


def _select(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, arith.SelectOp)
    ex.vals[op.result] = ex.vals[op.lhs] if ex.vals[op.cond] else ex.vals[op.rhs]


def _cast(ex: _Exec, op: Operation) -> None:
    kind = op.name.removeprefix("arith.")
    w_in, w_out = _w(op.operands[0]), _w(op.results[0])
    ex.vals[op.results[0]] = intops.cast(kind, ex.vals[op.operands[0]], w_in, w_out)


def _for(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, scf.ForOp)
    w = _w(op.lb)
    lb, ub, step = (intops.to_signed(ex.vals[v], w) for v in (op.lb, op.ub, op.step))
    carried = [ex.vals[v] for v in op.iter_args]
    block = op.body.block
    iv, *args = block.args
    i = lb
    while i < ub:
        ex.vals[iv] = intops.to_unsigned(i, w)
        for a, v in zip(args, carried, strict=True):
            ex.vals[a] = v
        carried = ex.run_block(block)
        i += step
    for r, v in zip(op.results, carried, strict=True):
        ex.vals[r] = v


def _if(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, scf.IfOp)
    region = op.true_region if ex.vals[op.cond] else op.false_region
    results = ex.run_block(region.block) if region.blocks else []
    for r, v in zip(op.results, results, strict=True):
        ex.vals[r] = v


def _rs1(ex: _Exec, op: Operation) -> None:
    ex.vals[op.results[0]] = ex.rs1


def _rs2(ex: _Exec, op: Operation) -> None:
    ex.vals[op.results[0]] = ex.rs2


def _write_rd(ex: _Exec, op: Operation) -> None:
    ex.rd = ex.vals[op.operands[0]]


def _load(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, aq.LoadOp)
    ex.loads += 1
    ex.vals[op.result] = ex._mem_read(ex.vals[op.addr], _w(op.result) // 8)


def _store(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, aq.StoreOp)
    ex._mem_write(ex.vals[op.addr], _w(op.value) // 8, ex.vals[op.value])


def _burst(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, aq.BurstReadOp | aq.BurstWriteOp)
    sym = op.scratchpad.root_reference.data
    decl = ex.spm_decl[sym]
    size = decl.width // 8
    n = op.length_value
    off = ex.vals[op.offset]
    addr = ex.vals[op.addr]
    arr = ex.state.spms[sym]
    if off + n > len(arr):
        raise ExecError(
            f"burst of {n} elements at offset {off} overruns scratchpad @{sym} of {len(arr)}"
        )
    if addr % size:
        raise ExecError(f"misaligned burst of {8 * size}-bit elements at {addr:#010x}")
    ex.beats += n
    if isinstance(op, aq.BurstReadOp):
        arr[off : off + n] = ex.mem.read_words(addr, size, n)
    else:
        for i in range(n):
            ex._mem_write((addr + i * size) & 0xFFFFFFFF, size, arr[off + i])


def _off(ex: _Exec, op: aq.SpmReadOp | aq.SpmWriteOp | aq.StateWriteOp) -> bool:
    """Whether a predicated access (a predicated kernel's stage) is predicated off."""
    return op.pred is not None and not ex.vals[op.pred]


def _spm_read(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, aq.SpmReadOp)
    if _off(ex, op):
        ex.vals[op.result] = 0  # undefined: the read does not happen
        return
    sym = op.scratchpad.root_reference.data
    idx = ex.vals[op.index]
    ex.vals[op.result] = ex._spm(sym, idx)[idx]


def _spm_write(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, aq.SpmWriteOp)
    if _off(ex, op):
        return
    sym = op.scratchpad.root_reference.data
    idx = ex.vals[op.index]
    ex._spm(sym, idx)[idx] = ex.vals[op.value]


def _state_read(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, aq.StateReadOp)
    ex.vals[op.result] = ex.state.regs[op.state.root_reference.data]


def _state_write(ex: _Exec, op: Operation) -> None:
    assert isinstance(op, aq.StateWriteOp)
    if _off(ex, op):
        return
    ex.state.regs[op.state.root_reference.data] = ex.vals[op.value]


_DISPATCH: dict[type[Operation], Callable[[_Exec, Operation], None]] = {
    arith.ConstantOp: _constant,
    arith.CmpiOp: _cmpi,
    arith.SelectOp: _select,
    arith.ExtUIOp: _cast,
    arith.ExtSIOp: _cast,
    arith.TruncIOp: _cast,
    scf.ForOp: _for,
    scf.IfOp: _if,
    aq.ReadRs1Op: _rs1,
    aq.ReadRs2Op: _rs2,
    aq.WriteRdOp: _write_rd,
    aq.LoadOp: _load,
    aq.StoreOp: _store,
    aq.BurstReadOp: _burst,
    aq.BurstWriteOp: _burst,
    aq.SpmReadOp: _spm_read,
    aq.SpmWriteOp: _spm_write,
    aq.StateReadOp: _state_read,
    aq.StateWriteOp: _state_write,
}
# Binary ops come from the one semantics table, keyed by their xDSL op class.
_DISPATCH.update(
    {
        cls: _binary(intops.BY_ARITH[cls.name].fn)
        for cls in (
            arith.AddiOp,
            arith.SubiOp,
            arith.MuliOp,
            arith.DivUIOp,
            arith.RemUIOp,
            arith.DivSIOp,
            arith.RemSIOp,
            arith.AndIOp,
            arith.OrIOp,
            arith.XOrIOp,
            arith.ShLIOp,
            arith.ShRUIOp,
            arith.ShRSIOp,
        )
    }
)


def execute(
    isax: aq.IsaxOp,
    rs1: int = 0,
    rs2: int = 0,
    mem: Memory | None = None,
    state: IsaxState | None = None,
) -> ExecResult:
    """Runs one invocation of ``isax``.

    ``mem`` is updated in place (pass a copy to keep the original); ``state`` is not: the
    new state is returned in the result.  Missing ``state`` means the reset state.
    """
    ext = isax.parent_op()
    assert isinstance(ext, aq.ExtensionOp)
    mem = Memory() if mem is None else mem
    st = IsaxState.reset(ext) if state is None else state.copy()
    ex = _Exec(ext, rs1, rs2, mem, st)
    ex.run_block(isax.body.block)
    return ExecResult(ex.rd, ex.writes, st, ex.loads, ex.beats, ex.ops)
