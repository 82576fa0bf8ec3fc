"""A small exact evaluator for the frontend's IR (func/scf/arith/memref on integers).

Integers are held as unsigned N-bit Python ints; ``index`` values as plain ints; a memref
is a Python list of unsigned element values.  Anything outside the subset raises."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

Buffer = list[int]
Value = int | Buffer


def width(t: Attribute) -> int:
    assert isinstance(t, IntegerType), t
    return t.width.data


def signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) else v


def _div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_CMP = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
_PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


class View(list):  # type: ignore[type-arg]
    """Elements ``k`` times as wide over a buffer of ``unit``-bit elements (little-endian),
    for the views the frontend makes of mixed-width structs; loads and stores go through
    to the buffer."""

    def __init__(self, buf: list[int], k: int, unit: int):
        super().__init__()
        self.buf, self.k, self.unit = buf, k, unit

    def __len__(self) -> int:
        return len(self.buf) // self.k

    def __getitem__(self, i: int) -> int:  # type: ignore[override]
        parts = self.buf[i * self.k : (i + 1) * self.k]
        return sum(v << (self.unit * j) for j, v in enumerate(parts))

    def __setitem__(self, i: int, v: int) -> None:  # type: ignore[override]
        mask = (1 << self.unit) - 1
        for j in range(self.k):
            self.buf[i * self.k + j] = (v >> (self.unit * j)) & mask


class Shifted(list):  # type: ignore[type-arg]
    """A buffer seen from element ``off`` on (loads and stores go through)."""

    def __init__(self, buf: list[int], off: int):
        super().__init__()
        self.buf, self.off = buf, off

    def __len__(self) -> int:
        return len(self.buf) - self.off

    def __getitem__(self, i: int) -> int:  # type: ignore[override]
        if not 0 <= i + self.off < len(self.buf):
            raise IndexError(f"load out of bounds: {i + self.off} of {len(self.buf)}")
        return self.buf[i + self.off]  # type: ignore[no-any-return]

    def __setitem__(self, i: int, v: int) -> None:  # type: ignore[override]
        if not 0 <= i + self.off < len(self.buf):
            raise IndexError(f"store out of bounds: {i + self.off} of {len(self.buf)}")
        self.buf[i + self.off] = v


class Evaluator:
    def __init__(self, module: ModuleOp):
        self.funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
        self.globals: dict[str, Buffer] = {}
        for op in module.ops:
            if isinstance(op, memref.GlobalOp):
                w = width(op.type.element_type)
                init = op.initial_value
                values = [v & ((1 << w) - 1) for v in init.get_values()]  # type: ignore[union-attr]
                self.globals[op.sym_name.data] = values

    def call(self, name: str, args: Sequence[Value]) -> int | None:
        f = self.funcs[name]
        results = self.run_block(f.body.block, list(args), {})
        return results[0] if results else None  # type: ignore[return-value]

    def run_block(
        self, block: Block, args: Sequence[Value], outer: dict[SSAValue, Value]
    ) -> list[Value]:
        env = {**outer, **dict(zip(block.args, args, strict=True))}
        for op in block.ops:
            if isinstance(op, func.ReturnOp | scf.YieldOp):
                return [env[v] for v in op.operands]
            if isinstance(op, scf.ConditionOp):
                return [env[v] for v in op.operands]
            outs = self.run_op(op, [env[v] for v in op.operands], env)
            env.update(zip(op.results, outs, strict=True))
        raise AssertionError("block without terminator")

    def run_op(self, op: Operation, a: list[Value], env: dict[SSAValue, Value]) -> list[Value]:
        if isinstance(op, scf.ForOp):
            w = width(op.lb.type)
            lb, ub, step, *carried = a
            i = signed(lb, w)  # type: ignore[arg-type]
            while i < signed(ub, w):  # type: ignore[arg-type]
                carried = self.run_block(op.body.block, [i & ((1 << w) - 1), *carried], env)
                i += signed(step, w)  # type: ignore[arg-type]
            return carried
        if isinstance(op, scf.WhileOp):
            carried = a
            for _ in range(1_000_000):
                c, *fwd = self.run_block(op.before_region.block, carried, env)
                if not c:
                    return fwd
                carried = self.run_block(op.after_region.block, fwd, env)
            raise AssertionError("scf.while does not terminate")
        if isinstance(op, scf.IfOp):
            region = op.true_region if a[0] else op.false_region
            return self.run_block(region.block, [], env) if region.blocks else []
        if op.name == "builtin.unrealized_conversion_cast" and len(a) == 2:
            buf, off = a  # a pointer local based on a member's address: buf from off
            assert isinstance(buf, list) and isinstance(off, int)
            return [Shifted(buf, signed(off, 32))]
        if op.name == "builtin.unrealized_conversion_cast":  # a view of a struct's memory
            (buf,) = a
            t = op.results[0].type
            assert isinstance(buf, list) and isinstance(t, MemRefType)
            unit = width(op.operands[0].type.element_type)  # type: ignore[attr-defined]
            return [View(buf, width(t.element_type) // unit, unit)]
        if isinstance(op, memref.LoadOp):
            buf, idx = a
            assert isinstance(buf, list) and isinstance(idx, int)
            if not 0 <= idx < len(buf):
                raise IndexError(f"load out of bounds: {idx} of {len(buf)}")
            return [buf[idx]]
        if isinstance(op, memref.StoreOp):
            val, buf, idx = a
            assert isinstance(buf, list) and isinstance(idx, int) and isinstance(val, int)
            if not 0 <= idx < len(buf):
                raise IndexError(f"store out of bounds: {idx} of {len(buf)}")
            buf[idx] = val
            return []
        if isinstance(op, memref.AllocaOp):
            t = op.memref.type
            assert isinstance(t, MemRefType)
            return [[0] * t.get_shape()[0]]
        if isinstance(op, memref.GetGlobalOp):
            return [self.globals[op.name_.root_reference.data]]
        ints = [v for v in a if isinstance(v, int)]
        return [self.arith(op, ints)]

    def arith(self, op: Operation, a: list[int]) -> int:
        rt = op.results[0].type
        if isinstance(op, arith.ConstantOp):
            attr = op.value
            assert isinstance(attr, IntegerAttr)
            v = attr.value.data
            return v if isinstance(rt, IndexType) else v & ((1 << width(rt)) - 1)
        if isinstance(op, arith.IndexCastOp):
            if isinstance(rt, IndexType):
                return signed(a[0], width(op.operands[0].type))
            return a[0] & ((1 << width(rt)) - 1)
        if isinstance(op, arith.CmpiOp):
            w = width(op.lhs.type)
            pred = _PREDICATES[op.predicate.value.data]
            x, y = a
            if pred[0] == "s":
                x, y = signed(x, w), signed(y, w)
            return int(_CMP[pred.lstrip("su")](x, y))
        if isinstance(op, arith.SelectOp):
            return a[1] if a[0] else a[2]
        w = width(rt)
        mask = (1 << w) - 1
        if isinstance(op, arith.ExtSIOp):
            return signed(a[0], width(op.operands[0].type)) & mask
        if isinstance(op, arith.ExtUIOp | arith.TruncIOp):
            return a[0] & mask
        x, y = a
        sx, sy = signed(x, w), signed(y, w)
        if isinstance(op, arith.ShLIOp | arith.ShRSIOp | arith.ShRUIOp) and y >= w:
            raise ValueError(f"shift by {y} of an i{w}")
        divides = arith.DivSIOp | arith.DivUIOp | arith.RemSIOp | arith.RemUIOp
        if isinstance(op, divides) and y == 0:
            raise ZeroDivisionError(op.name)
        table = {
            arith.AddiOp: lambda: x + y,
            arith.SubiOp: lambda: x - y,
            arith.MuliOp: lambda: x * y,
            arith.AndIOp: lambda: x & y,
            arith.OrIOp: lambda: x | y,
            arith.XOrIOp: lambda: x ^ y,
            arith.ShLIOp: lambda: x << y,
            arith.ShRSIOp: lambda: sx >> y,
            arith.ShRUIOp: lambda: x >> y,
            arith.DivSIOp: lambda: _div(sx, sy),
            arith.DivUIOp: lambda: x // y,
            arith.RemSIOp: lambda: sx - sy * _div(sx, sy),
            arith.RemUIOp: lambda: x % y,
        }
        return table[type(op)]() & mask  # type: ignore[index]
