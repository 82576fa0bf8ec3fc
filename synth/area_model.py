"""A cheap area estimate on the OSU018 cell library, for choices made before Yosys runs.

``synth/sta.py`` measures a unit exactly (Yosys, ABC, OpenSTA), but takes seconds to
minutes per unit: too slow to try every number of shared multipliers under an area budget
(``--area-budget``, docs/synthesis.md "Area budget"). This module prices a generated unit
from its ``hw``/``comb``/``seq`` IR with a per-operator table measured once on OSU018
(``synth/area_osu018.json``, written by ``python -m aquas.synth.area_model
--characterize``; one operator per module through ``synth/sta.py``):

* **Multipliers** by their partial-product bits: an ``a``-bit by ``b``-bit multiply
  keeping ``W`` product bits has ``P = #{(i, j): i < a, j < b, i + j < W}`` of them, and
  the measured shapes (8 x 8 -> 8 to 64 x 64 -> 64, with zero-extended narrow operands)
  cost a near-constant area per partial-product bit (a least-squares line through them:
  :attr:`AreaModel.mul_um2_per_pp`). Operands that are zero extensions (``concat`` of a
  zero constant, which Yosys' ``wreduce`` drops) count their narrow bits.
* **Other comb operators** by the operator library's generic-gate cells
  (``synth/oplib.json``) times a measured um^2 per generic cell of their kind (adders,
  muxes, AND-OR selects, XOR); kinds not measured take the adder's. An operator with a
  constant operand folds (a mask, a constant shift) and is not counted, except
  comparisons (half their cost).
* **Registers** at the library's ``DFFPOSX1`` area per bit; sequential units
  (``hw.instance`` of a generated module) by their own module; SRAM banks (``hw.module.
  extern``) by the SRAM table of ``synth/sta.py``.

How far the estimate is from ``synth/sta.py`` on the example units is in
docs/synthesis.md ("Area budget"). It is meant to rank choices of the same unit, whose
other logic stays the same, not to replace the measurement.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.dialects import comb, hw, seq
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Operation, OpResult, SSAValue

from aquas import intops
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.timing import const_mul_adders

TABLE_PATH = Path(__file__).with_name("area_osu018.json")

#: The shapes :func:`characterize` measures: name → Verilog body of ``module <name>``.
MUL_SHAPES: tuple[tuple[int, int], ...] = (
    (8, 8),
    (8, 16),
    (16, 16),
    (16, 32),
    (32, 32),
    (21, 33),
    (24, 48),
    (32, 53),
    (33, 64),
    (32, 64),
    (64, 64),
)


def _shapes() -> dict[str, str]:
    out = {}
    for k, w in MUL_SHAPES:
        out[f"mul_{k}_{w}"] = (
            f"(input [{k - 1}:0] a, input [{k - 1}:0] b, output [{w - 1}:0] y); "
            f"assign y = {{{{{w}{{1'b0}}}}, a}} * {{{{{w}{{1'b0}}}}, b}};"
        )
    for w in (16, 32, 64):
        out[f"add_{w}"] = f"(input [{w - 1}:0] a, b, output [{w - 1}:0] y); assign y = a + b;"
    out["mux_32"] = "(input s, input [31:0] a, b, output [31:0] y); assign y = s ? a : b;"
    out["sel4_32"] = (
        "(input [3:0] e, input [31:0] a, b, c, d, output [31:0] y); assign y = "
        "({32{e[0]}} & a) | ({32{e[1]}} & b) | ({32{e[2]}} & c) | ({32{e[3]}} & d);"
    )
    out["xor_32"] = "(input [31:0] a, b, output [31:0] y); assign y = a ^ b;"
    return out


def partial_products(a: int, b: int, w: int) -> int:
    """Partial-product bits of an ``a`` x ``b`` multiply keeping ``w`` product bits."""
    a, b = min(a, w), min(b, w)
    return sum(min(b, max(0, w - i)) for i in range(a))


@dataclass(frozen=True)
class AreaModel:
    """um^2 per partial-product bit, per generic cell of a kind, per flip-flop bit."""

    mul_um2_per_pp: float
    mul_um2_base: float
    um2_per_cell: dict[str, float]
    dff_um2: float
    select_um2_per_bit: float
    """One more user of a shared unit: an AND and an OR per operand bit."""
    measured: dict[str, Any] = field(default_factory=dict)
    calibration: float = 1.0
    """Measured over estimated total area on the example units (``--calibrate``): every
    estimate is scaled by it. Operators in a unit map smaller than alone (shared inputs,
    constant and unused bits that Yosys and ABC remove), which the per-operator table
    cannot see."""

    @staticmethod
    def load(path: Path | None = None) -> AreaModel:
        data = json.loads((path or TABLE_PATH).read_text())
        m = data["measured"]
        xs = [partial_products(k, k, w) for k, w in MUL_SHAPES]
        ys = [m[f"mul_{k}_{w}"]["um2"] for k, w in MUL_SHAPES]
        # least squares, by hand: two sums are not worth numpy's import time here
        n = len(xs)
        mx, my = sum(xs) / n, sum(ys) / n
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
            (x - mx) ** 2 for x in xs
        )
        lib = OperatorLibrary.load()

        def per_cell(name: str, kind: str, w: int, ops: int = 1) -> float:
            return float(m[name]["um2"]) / (ops * lib.cost(kind, w).cells)

        add = per_cell("add_32", "add", 32)
        # sel4_32: 4 ANDs and 3 ORs of 32 bits, the select a shared unit's input is
        sel_cells = 4 * lib.cost("and", 32).cells + 3 * lib.cost("or", 32).cells
        sel = float(m["sel4_32"]["um2"]) / sel_cells
        return AreaModel(
            mul_um2_per_pp=slope,
            mul_um2_base=my - slope * mx,
            um2_per_cell={
                "add": add,
                "sub": add,
                "mul": float(m["mul_32_32"]["um2"]) / lib.cost("mul", 32).cells,
                "mux": per_cell("mux_32", "mux", 32),
                "and": sel,
                "or": sel,
                "xor": per_cell("xor_32", "xor", 32),
            },
            dff_um2=float(data["dff_um2"]),
            select_um2_per_bit=2 * sel,
            measured=m,
            calibration=float(data.get("calibration", {}).get("factor", 1.0)),
        )

    def mul(self, a_bits: int, b_bits: int, width: int) -> float:
        """An ``a_bits`` x ``b_bits`` multiplier keeping ``width`` product bits."""
        pp = partial_products(a_bits, b_bits, width)
        return max(0.0, self.mul_um2_base + self.mul_um2_per_pp * pp) if pp > 1 else 0.0

    def select(self, users: int, bits: int) -> float:
        """The AND-OR select in front of a unit of ``users`` users, per ``bits``-bit operand."""
        return max(0, users - 1) * bits * self.select_um2_per_bit

    def cells(self, kind: str, cells: int) -> float:
        return cells * self.um2_per_cell.get(kind, self.um2_per_cell["add"])


_MODEL: AreaModel | None = None


def model() -> AreaModel:
    global _MODEL
    if _MODEL is None:
        _MODEL = AreaModel.load()
    return _MODEL


# -- estimating a generated unit ----------------------------------------------------------


def _w(v: SSAValue) -> int:
    t = v.type
    return t.width.data if isinstance(t, IntegerType) else 1


Consts = dict[SSAValue, int]
"""Values known to be constant in a generated module (:func:`fold`), by value."""

_NOTHING_KNOWN: dict[SSAValue, int] = {}
"""The default of :func:`const_value` and :func:`op_um2`: no value known constant (or to
have leading zero bits)."""


def _is_literal(v: SSAValue) -> bool:
    return isinstance(v, OpResult) and isinstance(v.owner, hw.ConstantOp)


def const_value(v: SSAValue, consts: Consts = _NOTHING_KNOWN) -> int | None:
    """``v``'s value when it is a constant (by :func:`fold`), or a ``concat`` of constants."""
    if v in consts:
        return consts[v]
    if not isinstance(v, OpResult):
        return None
    op = v.owner
    if isinstance(op, hw.ConstantOp):
        return op.value.value.data % (1 << _w(v))
    if isinstance(op, comb.ExtractOp):
        c = const_value(op.input, consts)
        return None if c is None else (c >> op.low_bit.value.data) % (1 << _w(v))
    if isinstance(op, comb.ConcatOp):
        out = 0
        for x in op.operands:
            c = const_value(x, consts)
            if c is None:
                return None
            out = out << _w(x) | c
        return out
    return None


_BY_COMB = {o.comb: o for o in intops.BINARY.values()}
"""The interpreter's integer operators (:mod:`aquas.intops`) by the comb op computing them."""


def _evaluate(op: Operation, ins: list[int]) -> int | None:
    """The value of comb ``op`` on constant operands ``ins`` (unsigned) with the
    interpreter's semantics, or None for an op this folder does not evaluate."""
    ws = [_w(v) for v in op.operands]
    w = _w(op.results[0])
    binary = _BY_COMB.get(op.name)
    if binary is not None:  # variadic ones (add, mul, and, or, xor) fold left to right
        out = ins[0]
        for x in ins[1:]:
            out = binary.fn(out, x, w)
        return out
    if isinstance(op, comb.ReplicateOp):
        return sum(ins[0] << (k * ws[0]) for k in range(w // ws[0]))
    if isinstance(op, comb.MuxOp):
        return ins[1] if ins[0] else ins[2]
    if isinstance(op, comb.ICmpOp):  # comb.icmp's predicates are numbered as arith.cmpi's
        return int(intops.compare(intops.PREDICATES[_icmp_pred(op)], ws[0], ins[0], ins[1]))
    return None


def fold(ops: Iterable[Operation]) -> Consts:
    """The values of ``ops`` (a module body, in order) that are constants: ``hw.constant``
    and the ``comb`` ops whose operands are, evaluated; a ``mux`` on a constant condition
    whose chosen input is; an AND (a multiply) with a zero operand and an OR with an
    all-ones one. Before ExportVerilog, CIRCT's canonicalizer folds the
    same (synth/flow.py, ``canonicalize{enable-patterns=aquas-fold-only}``): an unrolled
    loop's constant scratchpad index still reaches the unit as index arithmetic and a
    select tree on its bits, which cost nothing once folded. An op whose operand is
    defined later (a register's feedback) is not folded."""
    consts: Consts = {}
    for op in ops:
        if isinstance(op, hw.ConstantOp):
            consts[op.result] = op.value.value.data % (1 << _w(op.result))
            continue
        if not op.name.startswith("comb.") or len(op.results) != 1:
            continue
        res = op.results[0]
        if isinstance(op, comb.MuxOp) and op.operands[0] in consts:
            chosen = op.operands[1] if consts[op.operands[0]] else op.operands[2]
            if chosen in consts:
                consts[res] = consts[chosen]
            continue
        vals = [const_value(v, consts) for v in op.operands]
        mask = (1 << _w(res)) - 1
        if isinstance(op, comb.AndOp | comb.MulOp) and 0 in vals:
            consts[res] = 0  # a write enable ANDed with a decoder's constant false
            continue
        if isinstance(op, comb.OrOp) and mask in vals:
            consts[res] = mask
            continue
        if any(x is None for x in vals):
            continue
        if isinstance(op, comb.ExtractOp | comb.ConcatOp):
            c = const_value(res, consts)
        else:
            c = _evaluate(op, [x for x in vals if x is not None])
        if c is not None:
            consts[res] = c % (1 << _w(res))
    return consts


HighZeros = dict[SSAValue, int]
"""Values' leading bits known to be zero (:func:`high_zeros`)."""


def _hz_of(op: Operation, hz: HighZeros) -> int:
    """The leading zero bits of comb ``op``'s result from its operands' (``hz``: what is
    known so far; a value not in it has none)."""
    w = _w(op.results[0])
    ins = list(op.operands)

    def z(v: SSAValue) -> int:
        return hz.get(v, 0)

    name = op.name.removeprefix("comb.")
    if name == "extract":
        dropped = _w(ins[0]) - op.low_bit.value.data - w  # type: ignore[attr-defined]
        return max(0, min(w, z(ins[0]) - dropped))
    if name == "concat":
        out = 0
        for v in ins:  # the first operand is the most significant
            out += z(v)
            if z(v) < _w(v):
                break
        return out
    if name == "and":
        return max(z(v) for v in ins)
    if name in ("or", "xor"):
        return min(z(v) for v in ins)
    if name == "mux":
        return min(z(ins[1]), z(ins[2]))
    if name == "replicate":
        return w if z(ins[0]) == _w(ins[0]) else 0
    if name == "add":
        return max(0, min(z(v) for v in ins) - (len(ins) - 1).bit_length())
    if name == "mul" and len(ins) == 2:
        return max(0, w - (w - z(ins[0])) - (w - z(ins[1])))
    k = const_value(ins[1]) if name in ("shru", "shl") else None
    if k is not None:
        return min(w, z(ins[0]) + k) if name == "shru" else max(0, z(ins[0]) - k)
    return 0


def high_zeros(ops: Iterable[Operation], max_rounds: int = 8) -> HighZeros:
    """The leading bits of a module's values known to be zero: from constants, zero
    extensions, ANDs with narrow masks, selects and registers whose every written value
    and reset value have them (Yosys removes such flip-flops and ``wreduce`` narrows the
    operators after them). A register's next value may depend on itself, so the
    registers start with every bit known zero and lose bits until nothing changes (at
    most ``max_rounds`` passes; unfinished, every register is taken as unknown)."""
    ops = list(ops)
    regs = [op for op in ops if isinstance(op, seq.CompRegOp)]
    hz: HighZeros = {r.data: _w(r.data) for r in regs}
    for _ in range(max_rounds):
        for op in ops:
            if isinstance(op, hw.ConstantOp):
                c = op.value.value.data % (1 << _w(op.result))
                hz[op.result] = _w(op.result) - c.bit_length()
            elif op.name.startswith("comb.") and len(op.results) == 1:
                hz[op.results[0]] = _hz_of(op, hz)
        changed = False
        for r in regs:
            written = [r.input, *([r.reset_value] if r.reset_value is not None else [])]
            new = min([hz[r.data], *(hz.get(v, 0) for v in written)])
            if new != hz[r.data]:
                hz[r.data], changed = new, True
        if not changed:
            return hz
    for r in regs:
        hz[r.data] = 0
    return hz


def effective_bits(v: SSAValue, hz: HighZeros) -> int:
    """``v``'s width less its leading bits known to be zero (``hz``, :func:`high_zeros`):
    what Yosys' ``wreduce`` and its removal of constant flip-flops leave of a
    multiplier's operand."""
    return _w(v) - hz.get(v, 0)


@dataclass
class Estimate:
    """Estimated area (um^2) of a unit, by part."""

    parts: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return sum(self.parts.values())

    def add(self, part: str, um2: float) -> None:
        self.parts[part] = self.parts.get(part, 0.0) + um2

    def as_dict(self) -> dict[str, Any]:
        return {"total_um2": round(self.total, 1)} | {
            f"{k}_um2": round(v, 1) for k, v in sorted(self.parts.items())
        }


def op_um2(
    op: Operation,
    lib: OperatorLibrary,
    am: AreaModel,
    consts: Consts = _NOTHING_KNOWN,
    hz: HighZeros = _NOTHING_KNOWN,
) -> tuple[str, float]:
    """(part, um^2) of one ``comb`` op (0 for wiring and for what folds: ``consts``, the
    module's constants by :func:`fold`; ``hz``, its values' leading zero bits by
    :func:`high_zeros`)."""
    name = op.name.removeprefix("comb.")
    if name in ("extract", "concat", "replicate", "parity") or not op.results:
        return "wiring", 0.0
    if len(op.operands) == 1 and name in ("add", "mul", "and", "or", "xor"):
        return "wiring", 0.0  # a one-operand variadic op is its operand (a squarer unit)
    if op.results[0] in consts or (name == "mux" and op.operands[0] in consts):
        return "wiring", 0.0  # folded: a constant, or a mux on a constant condition

    def known(v: SSAValue) -> bool:
        return v in consts or _is_literal(v)

    w = _w(op.results[0])
    ins = list(op.operands)
    if name == "mul":
        a, b = (effective_bits(v, hz) for v in ins[:2])
        c = next((k for k in (const_value(v, consts) for v in ins) if k is not None), None)
        if c is not None:
            # a constant multiplicand: shifts and one adder per further one bit of the
            # constant (synth/timing.const_mul_levels), at most the library's entry
            entry = lib.cost("mul_const", w, extrapolate=True).cells
            adders = const_mul_adders(c, w)
            cells = min(entry, adders * lib.cost("add", w, extrapolate=True).cells)
            return "multipliers", am.cells("add", cells)
        return "multipliers", am.mul(a, b, w)
    if name in ("and", "or", "xor"):
        if any(known(v) for v in ins):
            return "logic", 0.0
        return "logic", am.cells(name, (len(ins) - 1) * lib.cost(name, w, extrapolate=True).cells)
    if name == "mux":
        if known(ins[1]) and known(ins[2]):
            return "logic", 0.0
        return "logic", am.cells("mux", lib.cost("mux", w, extrapolate=True).cells)
    if name == "icmp":
        iw = _w(ins[0])
        kind = _icmp_kind(op)
        cost = am.cells("add", lib.cost(kind, iw, extrapolate=True).cells)
        return "logic", cost / 2 if any(known(v) for v in ins) else cost
    if name in ("shl", "shru", "shrs") and known(ins[1]):
        return "wiring", 0.0
    kind = {"divu": "divu", "divs": "divs", "modu": "modu", "mods": "mods"}.get(name, name)
    try:
        cells = lib.cost(kind, w, extrapolate=True).cells
    except KeyError:
        return "logic", 0.0
    part = "arithmetic" if kind in ("add", "sub") else "logic"
    return part, am.cells(kind, cells)


def _icmp_pred(op: Operation) -> int:
    # comb.icmp predicates: eq 0, ne 1, slt 2, sle 3, sgt 4, sge 5, ult 6, ule 7, ugt 8, uge 9
    p = op.properties.get("predicate")
    v = getattr(getattr(p, "value", None), "data", None)
    assert isinstance(v, int)
    return v


def _icmp_kind(op: Operation) -> str:
    v = _icmp_pred(op)
    if v in (0, 1):
        return "icmp_eq"
    if v in (2, 3, 4, 5):
        return "icmp_slt"
    return "icmp_ult"


def estimate_unit(
    module: ModuleOp,
    top: str,
    srams: Iterable[dict[str, Any]] = (),
    lib: OperatorLibrary | None = None,
    am: AreaModel | None = None,
) -> Estimate:
    """The estimated area of module ``top`` of ``module`` (generated ``hw`` IR): its
    operators, registers and instances (generated sequential units by their own modules),
    plus the SRAM banks ``srams`` (``synth/sram.inventory``) priced by the SRAM table."""
    from aquas.synth import sta

    lib = lib or OperatorLibrary.load()
    am = am or model()
    modules = {m.sym_name.data: m for m in module.ops if isinstance(m, hw.HWModuleOp)}
    memo: dict[str, Estimate] = {}

    def of(name: str) -> Estimate:
        if name in memo:
            return memo[name]
        est = Estimate()
        ops = list(modules[name].body.walk())
        consts, hz = fold(ops), high_zeros(ops)
        for op in ops:
            if op.name.startswith("comb."):
                part, um2 = op_um2(op, lib, am, consts, hz)
                if um2:
                    est.add(part, um2)
            elif op.name in ("seq.compreg", "seq.firreg"):
                est.add("registers", _w(op.results[0]) * am.dff_um2)
            elif isinstance(op, hw.InstanceOp):
                callee = op.module_name.string_value()
                if callee in modules:
                    for k, v in of(callee).parts.items():
                        est.add("sequential units" if k != "memory" else k, v)
        memo[name] = est
        return est

    est = Estimate({k: v * am.calibration for k, v in of(top).parts.items()})
    for s in srams:  # priced as the measurement prices them: not calibrated
        area = sta.sram_area_um2(int(s["words"]), int(s["bits"]), int(s["ports"]), 1)
        est.add("memory", int(s["banks"]) * area)
    return est


# -- characterisation ---------------------------------------------------------------------


def characterize(path: Path = TABLE_PATH, clock_ns: float = 5.68) -> dict[str, Any]:
    """Measure every shape with ``synth/sta.py`` and write the table to ``path``."""
    import tempfile

    from aquas.synth import sta

    data = json.loads(path.read_text()) if path.exists() else {}
    measured: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, body in _shapes().items():
            f = Path(tmp) / f"{name}.v"
            f.write_text(f"module {name}{body} endmodule\n")
            fig = sta.measure(f, name, clock_ns)
            measured[name] = {"um2": fig.logic_area_um2, "cells": fig.cells}
    data |= {"library": sta.LIBRARY_NAME, "clock_ns": clock_ns, "measured": measured}
    path.write_text(json.dumps(data, indent=1) + "\n")
    return data


CALIBRATION_UNITS = ("kyber", "llm", "dsp", "pointcloud")
"""The example units the calibration measures (point cloud: about 10 minutes uncached)."""


def calibrate(path: Path = TABLE_PATH, soc: str = "vexriscv") -> dict[str, Any]:
    """Synthesize the :data:`CALIBRATION_UNITS` for ``soc`` at its core's clock, estimate
    (uncalibrated) and measure them (``synth/sta.py``); the factor is the geometric mean
    of measured over estimated logic area."""
    import tempfile

    from aquas.area import default_clock
    from aquas.interpreter import find_extension
    from aquas.reencode import spec_for_target
    from aquas.synth import sta
    from aquas.synth.pipeline import synthesize_unit
    from aquas.synth.sram import inventory
    from aquas.target import load_target

    data = json.loads(path.read_text())
    raw = AreaModel.load(path)
    raw = AreaModel(**{**raw.__dict__, "calibration": 1.0})
    target = load_target(soc=soc)
    clock = default_clock(target).ns
    root = Path(__file__).resolve().parents[1] / "examples"
    units: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in CALIBRATION_UNITS:
            spec = next(root.glob(f"*/{name}.isax"))
            module, _ = spec_for_target(spec, target, strict=False)
            u = synthesize_unit(
                module, Path(tmp) / name, clock, target.isax_mem_latency, lint=False,
                yosys=False, target=target,
            )  # fmt: skip
            unit = u.synth.unit
            est = estimate_unit(unit.module, unit.name, inventory(find_extension(module)), am=raw)
            fig = sta.measure(u.synth.verilog_path, unit.name, clock)
            logic = est.total - est.parts.get("memory", 0.0)
            units[name] = {"estimated_um2": round(logic, 1), "measured_um2": fig.logic_area_um2}
    import math

    logs = [math.log(u["measured_um2"] / u["estimated_um2"]) for u in units.values()]
    factor = math.exp(sum(logs) / len(logs))
    data["calibration"] = {
        "factor": round(factor, 4),
        "soc": soc,
        "clock_ns": clock,
        "units": units,
    }
    path.write_text(json.dumps(data, indent=1) + "\n")
    return data


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--characterize", action="store_true", help="measure the table again")
    ap.add_argument(
        "--calibrate", action="store_true", help="measure the calibration on example units"
    )
    args = ap.parse_args()
    if args.characterize:
        characterize()
    if args.calibrate:
        calibrate()
    am = AreaModel.load()
    print(
        f"multiplier: {am.mul_um2_per_pp:.1f} um^2 per partial-product bit + {am.mul_um2_base:.0f}"
    )
    for k, v in am.um2_per_cell.items():
        print(f"{k}: {v:.1f} um^2 per generic cell")
    err = [abs(am.mul(k, k, w) / am.measured[f"mul_{k}_{w}"]["um2"] - 1) for k, w in MUL_SHAPES]
    print(f"calibration: x{am.calibration:.3f}")
    print(f"multiplier fit: worst {100 * max(err):.1f} %, mean {100 * sum(err) / len(err):.1f} %")


if __name__ == "__main__":
    main()
