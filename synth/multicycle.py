"""Multi-cycle operators: a sequential divider (and multiplier) the scheduler starts in one
state and reads N states later, instead of a combinational one that the clock does not fit.
The multiplier (:func:`multiplier_module`) retires a digit of ``d`` bits per cycle; the
rest of this docstring describes the divider, and both follow the same scheduling rules.

Which ops become multi-cycle: ``/`` and ``%`` (``arith.divui/divsi/remui/remsi``, constant
divisors included) and ``*`` (``arith.muli``) whose combinational delay exceeds the
datapath budget of a cycle (:func:`multicycle_policy`). The
operator library (``synth/oplib.json``, ``"multicycle"``) gives the unit's latency, the
interval between two starts the hardware accepts, its area and the logic chained in front
of it in the issue cycle (:meth:`aquas.synth.oplib.OperatorLibrary.multicycle`).

The hardware (:func:`divider_module`), generated here as one ``hw.module`` per width and
instantiated once per width in the unit, shared by every ISAX and by signed and unsigned
ops, is a restoring divider retiring ``k`` quotient bits per cycle (``k`` steps chained;
the library picks the largest ``k`` dividing ``W`` whose depth fits the clock). With one
bit per cycle (``k = 1``; ``W/k`` cycles in general):

* issue cycle ``c`` (``start`` high): the operands' magnitudes (two's-complement negation
  when ``sgn`` and the sign bit are set) load the dividend/quotient shift register
  ``quo_q`` and the divisor ``dvs_q``; the partial remainder ``rem_q`` is cleared; the
  result signs are latched: the quotient is negated when the signs differ and the divisor is
  not zero, the remainder takes the dividend's sign;
* cycles ``c+1 .. c+W``: one quotient bit per cycle, ``{rem, quo} <<= 1`` and the divisor
  subtracted when it fits (a ``W+2``-bit subtraction whose top bit is the borrow);
* cycle ``c+W+1``: the signs are applied and the output registers ``quo``/``rem`` load;
* from cycle ``c+W+2`` on (latency ``W + 2``) they hold the result until the next result.

Division by zero needs no special case: no subtraction ever borrows, so the quotient is all
ones and the remainder the dividend, which is RISC-V's (and ``aquas.intops``') unsigned
answer; signed, the quotient keeps all ones (its negation is suppressed) and the remainder
is the dividend with its sign: ``x / 0 = -1``, ``x % 0 = x``. ``MIN / -1``: the magnitude
``2^(W-1)`` divided by 1, negated, is ``MIN`` again, remainder 0, as RISC-V defines it.

Scheduling (``synth/fsm.py``, ``synth/schedule.py``): the op occupies its unit from the
issue state through the state that reads the result (``latency + 1`` states), because the
result is read from the unit's output registers, which the next operation on the unit
overwrites; the value is copied into a register at the end of that state when it is used
later. Other work may share those states.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.dialects import hw, seq
from xdsl.dialects.builtin import (
    ArrayAttr,
    FlatSymbolRefAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    i1,
)
from xdsl.ir import Block, Operation, Region, SSAValue, TypeAttribute

from aquas.synth.hwemit import HwBuilder, basename_loc
from aquas.synth.oplib import MultiCycleOp, OperatorLibrary

#: arith op → (signed, which output of the divider).
DIV_OPS: dict[str, tuple[bool, str]] = {
    "arith.divui": (False, "quo"),
    "arith.divsi": (True, "quo"),
    "arith.remui": (False, "rem"),
    "arith.remsi": (True, "rem"),
}


#: arith op → (unit kind, signed, which output of the unit).
UNIT_OPS: dict[str, tuple[str, bool, str]] = {
    **{n: ("div", sg, out) for n, (sg, out) in DIV_OPS.items()},
    "arith.muli": ("mul", False, "prod"),
}


def is_division(op: Operation) -> bool:
    return op.name in DIV_OPS


def multicycle_policy(
    lib: OperatorLibrary, delay: Callable[[Operation], float], budget_ns: float
) -> Callable[[Operation], MultiCycleOp | None]:
    """The rule the flow applies: a division or remainder (a multiply) whose
    combinational delay exceeds ``budget_ns`` becomes a multi-cycle op on the library's
    sequential divider (multiplier, with the widest digit that fits), provided the unit's
    own longest path (one step) fits the budget; if it does not, the op stays
    combinational and the scheduler reports it as too slow."""

    def choose(op: Operation) -> MultiCycleOp | None:
        if op.name not in UNIT_OPS or delay(op) <= budget_ns:
            return None
        t = op.results[0].type
        assert isinstance(t, IntegerType)
        if t.width.data < 2:  # a 1-bit operation is a gate or two; never slower
            return None
        kind = UNIT_OPS[op.name][0]
        if kind not in lib.multicycle_units():
            return None
        try:
            spec = lib.multicycle(kind, t.width.data, budget_ns)
        except ValueError:  # wider than measured, or no step width fits
            return None
        if spec.depth * lib.ns_per_level > budget_ns or spec.issue_ns > budget_ns:
            return None
        return spec

    return choose


# -- hardware -----------------------------------------------------------------------------

DIV_IN_PORTS = ("clk", "rst", "start", "sgn", "a", "b")
DIV_OUT_PORTS = ("quo", "rem")


def divider_module_name(prefix: str, width: int) -> str:
    return f"{prefix}_div{width}"


def divider_latency(width: int, radix_bits: int = 1) -> int:
    """Cycles from the issue cycle to the first cycle the outputs hold the result."""
    return width // radix_bits + 2


def divider_module(
    name: str, w: int, outputs: tuple[str, ...] = DIV_OUT_PORTS, radix_bits: int = 1
) -> hw.HWModuleOp:
    """The ``w``-bit restoring divider (see the module docstring).

    Ports: ``clk``, ``rst`` (synchronous, active high), ``start`` (load the operands this
    cycle; a start while busy restarts), ``sgn`` (signed division), ``a`` (dividend), ``b``
    (divisor); ``quo``, ``rem``: registered results, valid ``w + 2`` cycles after ``start``
    and held until the next result. ``outputs`` leaves out a result no one reads (its
    output register and sign fix-up), so the instance has no unconnected port.
    ``radix_bits`` = k (a divisor of ``w``) chains k restoring steps per cycle (radix
    2^k): ``w/k`` iteration cycles, latency ``w/k + 2``."""
    if w < 2:
        raise ValueError(f"the sequential divider needs at least 2 bits, got {w}")
    if not outputs or any(o not in DIV_OUT_PORTS for o in outputs):
        raise ValueError(f"outputs must be a non-empty subset of {DIV_OUT_PORTS}")
    outputs = tuple(o for o in DIV_OUT_PORTS if o in outputs)
    iw = IntegerType(w)
    types: list[TypeAttribute] = [seq.clock, i1, i1, i1, iw, iw]
    block = Block(arg_types=types)
    port = dict(zip(DIV_IN_PORTS, block.args, strict=True))
    for n, arg in port.items():
        arg.name_hint = n
    h = HwBuilder(block, port["clk"], port["rst"])
    h.reserved.update(
        {"quo_q", "rem_q", "dvs_q", "cnt_q", "negq_q", "negr_q", "fix_q", "quo_o", "rem_o"}
    )
    start, sgn, a, b = port["start"], port["sgn"], port["a"], port["b"]
    if radix_bits < 1 or w % radix_bits:
        raise ValueError(f"radix_bits must divide the width {w}, got {radix_bits}")
    steps = w // radix_bits
    cbits = steps.bit_length()
    quo = h.reg("quo_q", w, None)
    rem = h.reg("rem_q", w, None)
    dvs = h.reg("dvs_q", w, None)
    cnt = h.reg("cnt_q", cbits, 0)
    negq = h.reg("negq_q", 1, None) if "quo" in outputs else None
    negr = h.reg("negr_q", 1, None) if "rem" in outputs else None
    fix = h.reg("fix_q", 1, 0)
    zero = h.const(0, w)

    # issue: magnitudes and result signs
    a_neg = h.and_(sgn, h.extract(a, w - 1, 1, "a_sign"), hint="a_neg")
    b_neg = h.and_(sgn, h.extract(b, w - 1, 1, "b_sign"), hint="b_neg")
    a_mag = h.mux(a_neg, h.binop("comb.sub", zero, a, "a_minus"), a, "a_mag")
    b_mag = h.mux(b_neg, h.binop("comb.sub", zero, b, "b_minus"), b, "b_mag")
    b_nz = h.icmp("ne", b, zero, "b_nonzero")
    signs_differ = h.binop("comb.xor", a_neg, b_neg, "signs_differ")
    negq_new = h.and_(signs_differ, b_nz, hint="negq_new")

    # k quotient bits per cycle: k restoring steps chained
    rem_step, quo_step = rem, quo
    dvs_x = h.zext(dvs, w + 2, "dvs_x")
    for j in range(radix_bits):
        sfx = "" if radix_bits == 1 else f"_{j}"
        top = h.extract(quo_step, w - 1, 1, f"quo_top{sfx}")
        trial = h.concat(rem_step, top, f"trial{sfx}")  # w + 1 bits
        diff = h.binop("comb.sub", h.zext(trial, w + 2, f"trial_x{sfx}"), dvs_x, f"diff{sfx}")
        fits = h.not_(h.extract(diff, w + 1, 1, f"borrow{sfx}"), f"fits{sfx}")
        lo = h.extract(diff, 0, w, f"diff_lo{sfx}")
        rem_step = h.mux(fits, lo, h.extract(trial, 0, w), f"rem_step{sfx}")
        low = h.extract(quo_step, 0, w - 1, f"quo_low{sfx}")
        quo_step = h.concat(low, fits, f"quo_step{sfx}")
    running = h.icmp("ne", cnt, h.const(0, cbits), "running")
    last = h.icmp("eq", cnt, h.const(1, cbits), "last")

    h.drive("quo_q", h.mux(start, a_mag, h.mux(running, quo_step, quo, "quo_run"), "quo_n"))
    h.drive("rem_q", h.mux(start, zero, h.mux(running, rem_step, rem, "rem_run"), "rem_n"))
    h.drive("dvs_q", h.mux(start, b_mag, dvs, "dvs_n"))
    cnt_dec = h.binop("comb.sub", cnt, h.const(1, cbits), "cnt_dec")
    h.drive(
        "cnt_q",
        h.mux(start, h.const(steps, cbits), h.mux(running, cnt_dec, cnt, "cnt_run"), "cnt_n"),
    )
    h.drive("fix_q", h.and_(h.not_(start, "no_start"), last, hint="fix_n"))
    # result signs, then the output registers
    outs = []
    for o, neg, val, neg_new in (("quo", negq, quo, negq_new), ("rem", negr, rem, a_neg)):
        if neg is None:
            continue
        h.drive(f"neg{o[0]}_q", h.mux(start, neg_new, neg, f"neg{o[0]}_n"))
        fixed = h.mux(neg, h.binop("comb.sub", zero, val, f"{o}_neg"), val, f"{o}_fixed")
        reg = h.reg(f"{o}_o", w, None)
        h.drive(f"{o}_o", h.mux(fix, fixed, reg, f"{o}_o_n"))
        outs.append(reg)
    block.add_op(hw.OutputOp(outs))
    ports = [
        hw.ModulePort(StringAttr(n), t, hw.DirectionAttr(hw.Direction.INPUT))
        for n, t in zip(DIV_IN_PORTS, types, strict=True)
    ] + [hw.ModulePort(StringAttr(n), iw, hw.DirectionAttr(hw.Direction.OUTPUT)) for n in outputs]
    return hw.HWModuleOp(StringAttr(name), hw.ModuleType(ArrayAttr(ports)), Region(block))


MUL_IN_PORTS = ("clk", "rst", "start", "a", "b")
MUL_OUT_PORTS = ("prod",)


def multiplier_module_name(prefix: str, width: int) -> str:
    return f"{prefix}_mul{width}"


def multiplier_steps(width: int, digit: int) -> int:
    """Cycles of partial products: ``ceil(width / digit)``."""
    return -(-width // digit)


def multiplier_module(name: str, w: int, d: int) -> hw.HWModuleOp:
    """A ``w``-bit sequential multiplier retiring ``d`` multiplier bits per cycle
    (``prod = a * b mod 2^w``, the same for signed and unsigned operands).

    Issue cycle ``c`` (``start``): ``a_q = a``, ``b_q = b``, ``acc_q = 0``; cycles ``c+1
    .. c+n`` (``n = ceil(w/d)``): ``acc += a_q * b_q[d-1:0]`` (a ``w``-by-``d`` multiply
    and an add), ``a_q <<= d``, ``b_q >>= d``. ``prod`` (the accumulator) holds the result
    from cycle ``c+n+1`` (latency ``n + 1``) until the next start."""
    if not 1 <= d <= w:
        raise ValueError(f"digit must be 1..{w} bits, got {d}")
    n = multiplier_steps(w, d)
    iw = IntegerType(w)
    types: list[TypeAttribute] = [seq.clock, i1, i1, iw, iw]
    block = Block(arg_types=types)
    port = dict(zip(MUL_IN_PORTS, block.args, strict=True))
    for pn, arg in port.items():
        arg.name_hint = pn
    h = HwBuilder(block, port["clk"], port["rst"])
    h.reserved.update({"a_q", "b_q", "acc_q", "cnt_q"})
    start, a, b = port["start"], port["a"], port["b"]
    cbits = max(1, n.bit_length())
    a_q = h.reg("a_q", w, None)
    b_q = h.reg("b_q", w, None)
    acc = h.reg("acc_q", w, None)
    cnt = h.reg("cnt_q", cbits, 0)
    running = h.icmp("ne", cnt, h.const(0, cbits), "running")
    digit = h.zext(h.extract(b_q, 0, d, "digit"), w, "digit_x")
    partial = h.binop("comb.mul", a_q, digit, "partial")
    acc_step = h.binop("comb.add", acc, partial, "acc_step")
    if n > 1:
        a_step = h.concat(h.extract(a_q, 0, w - d, "a_low"), h.const(0, d), "a_step")
        b_step = h.concat(h.const(0, d), h.extract(b_q, d, w - d, "b_high"), "b_step")
    else:
        a_step, b_step = a_q, b_q
    h.drive("a_q", h.mux(start, a, h.mux(running, a_step, a_q, "a_run"), "a_n"))
    h.drive("b_q", h.mux(start, b, h.mux(running, b_step, b_q, "b_run"), "b_n"))
    h.drive(
        "acc_q",
        h.mux(start, h.const(0, w), h.mux(running, acc_step, acc, "acc_run"), "acc_n"),
    )
    cnt_dec = h.binop("comb.sub", cnt, h.const(1, cbits), "cnt_dec")
    h.drive(
        "cnt_q",
        h.mux(start, h.const(n, cbits), h.mux(running, cnt_dec, cnt, "cnt_run"), "cnt_n"),
    )
    block.add_op(hw.OutputOp([acc]))
    ports = [
        hw.ModulePort(StringAttr(pn), t, hw.DirectionAttr(hw.Direction.INPUT))
        for pn, t in zip(MUL_IN_PORTS, types, strict=True)
    ] + [hw.ModulePort(StringAttr("prod"), iw, hw.DirectionAttr(hw.Direction.OUTPUT))]
    return hw.HWModuleOp(StringAttr(name), hw.ModuleType(ArrayAttr(ports)), Region(block))


# -- the units of a generated ISAX unit -----------------------------------------------------


@dataclass
class _Instance:
    spec: MultiCycleOp
    op: hw.InstanceOp
    outputs: tuple[str, ...]
    issues: list[tuple[SSAValue, SSAValue, SSAValue, bool]] = field(default_factory=list)

    @property
    def module_name(self) -> str:
        return self.op.module_name.root_reference.data


class MultiCycleUnits:
    """The multi-cycle units of one generated ISAX unit: one divider (multiplier) instance
    per width, whose ``start`` and operands are selected from the states that issue on
    it."""

    def __init__(self, h: HwBuilder, prefix: str, results: dict[Operation, MultiCycleOp]):
        """``results``: every multi-cycle op whose result the unit reads (so that each
        divider has exactly the outputs that are used)."""
        self.h = h
        self.prefix = prefix
        self.units: dict[str, _Instance] = {}
        self.outputs: dict[str, set[str]] = {}
        for op, spec in results.items():
            self.outputs.setdefault(spec.key, set()).add(UNIT_OPS[op.name][2])

    def _unit(self, spec: MultiCycleOp) -> _Instance:
        inst = self.units.get(spec.key)
        if inst is None:
            w = spec.width
            h = self.h
            # the inputs are connected in ``finish``, once every issuing state is known
            placeholder = [h.clk, h.rst, h.const(0, 1), h.const(0, 1), h.const(0, w), h.const(0, w)]
            if spec.unit == "mul":
                outputs: tuple[str, ...] = MUL_OUT_PORTS
                ins: tuple[str, ...] = MUL_IN_PORTS
                name = multiplier_module_name(self.prefix, w)
                placeholder.pop(3)
            else:
                outputs = tuple(o for o in DIV_OUT_PORTS if o in self.outputs.get(spec.key, ()))
                ins = DIV_IN_PORTS
                name = divider_module_name(self.prefix, w)
            op = hw.InstanceOp(
                spec.key,
                FlatSymbolRefAttr(name),
                list(zip(ins, placeholder, strict=True)),
                [(n, IntegerType(w)) for n in outputs],
            )
            for res, n in zip(op.results, outputs, strict=True):
                res.name_hint = f"{spec.key}_{n}"
            inst = self.units[spec.key] = _Instance(spec, op, outputs)
        return inst

    def issue(
        self, spec: MultiCycleOp, op: Operation, en: SSAValue, a: SSAValue, b: SSAValue
    ) -> None:
        """``op`` starts on its unit in the state whose enable is ``en``."""
        _, signed, _ = UNIT_OPS[op.name]
        self._unit(spec).issues.append((en, a, b, signed))

    def result(self, spec: MultiCycleOp, op: Operation) -> SSAValue:
        """The unit output holding ``op``'s result (valid in its result state)."""
        _, _, which = UNIT_OPS[op.name]
        inst = self._unit(spec)
        return inst.op.results[inst.outputs.index(which)]

    def _operand(self, items: list[tuple[SSAValue, SSAValue]], hint: str) -> SSAValue:
        """The operand of the issuing state (one value when they all pass the same, e.g.
        a constant divisor)."""
        if all(v is items[0][1] for _, v in items):
            return items[0][1]
        return self.h.onehot_select(items, items[0][1], hint)

    def finish(self) -> list[hw.HWModuleOp]:
        """Connects every instance and returns the modules they instantiate."""
        h = self.h
        modules = []
        for key, inst in sorted(self.units.items()):
            w = inst.spec.width
            h.loc = basename_loc(None)
            items = inst.issues
            start = h.or_tree([en for en, *_ in items], 1, f"{key}_start")
            a = self._operand([(en, x) for en, x, _, _ in items], f"{key}_a")
            b = self._operand([(en, y) for en, _, y, _ in items], f"{key}_b")
            if inst.spec.unit == "mul":
                inst.op.operands = [h.clk, h.rst, start, a, b]
                h.block.add_op(inst.op)
                modules.append(multiplier_module(inst.module_name, w, inst.spec.digit))
                continue
            signs = {s for *_, s in items}
            if len(signs) == 1:
                sgn = h.const(int(signs.pop()), 1)
            else:
                sgn = h.or_tree([en for en, *_, s in items if s], 1, f"{key}_sgn")
            inst.op.operands = [h.clk, h.rst, start, sgn, a, b]
            h.block.add_op(inst.op)
            modules.append(divider_module(inst.module_name, w, inst.outputs, inst.spec.digit))
        return modules


# -- characterisation -------------------------------------------------------------------

#: Widths the divider is measured at for the operator library.
CHARACTERISED_WIDTHS = (8, 16, 24, 32, 48, 64)
#: Quotient bits per cycle the divider is measured with (those dividing the width).
CHARACTERISED_RADIX_BITS = (1, 2, 4, 8)

#: The library entry's fixed part (``"widths"`` is measured by :func:`characterize`).
DIV_ENTRY: dict[str, Any] = {
    "kinds": ["divu", "divs", "modu", "mods", "divu_const", "modu_const"],
    "architecture": (
        "restoring divider generated by synth/multicycle.py: operand magnitudes at issue, "
        "d quotient bits per cycle (d restoring steps chained, d dividing the width), "
        "result signs in a final cycle; quotient and remainder together, signed and "
        "unsigned; one instance per width, shared"
    ),
    "divides_width": True,
    "latency": {"per_step": 1, "extra": 2},
    "ii": {"per_step": 1, "extra": 1},
    # chained in the issue cycle: the unit's operand select (an AND-OR tree over the
    # issuing states, then a hold mux) and, in the divider, the magnitude (a negation and
    # a mux) and the start mux in front of its registers
    "issue": ["sub", "mux", "mux", "mux", "mux"],
}


def _yosys_figures(tmp: Path, mod: hw.HWModuleOp) -> dict[str, int]:
    """Cells, flip-flops and logic depth of ``mod`` by Yosys (``synth/yosys.py``'s script,
    the one the units are measured with), exported to Verilog in ``tmp``."""
    from aquas.synth.flow import export_verilog
    from aquas.synth.rtlgen import hw_text
    from aquas.synth.yosys import measure

    name = mod.sym_name.data
    path = tmp / f"{name}.sv"
    path.write_text(export_verilog(hw_text(ModuleOp([mod]))))
    fig = measure(path, name, cache_dir=tmp / "cache")
    return {"cells": fig.cells, "flops": fig.flops, "depth": fig.depth}


def characterize(widths: tuple[int, ...] = CHARACTERISED_WIDTHS) -> dict[str, Any]:
    """Measures the divider with Yosys (``synth/yosys.py``'s script, the one the units
    are measured with) at ``widths``: the library's ``"multicycle"."div"`` entry."""
    import tempfile

    out: dict[str, dict[str, dict[str, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for w in widths:
            for k in CHARACTERISED_RADIX_BITS:
                if w % k:
                    continue
                name = f"char_div{w}x{k}"
                fig = _yosys_figures(Path(tmp), divider_module(name, w, radix_bits=k))
                out.setdefault(str(w), {})[str(k)] = fig
    return DIV_ENTRY | {"widths": out}


#: (width, digits) the multiplier is measured at.
MUL_CHARACTERISED: dict[int, tuple[int, ...]] = {
    16: (1, 2, 4, 8),
    24: (1, 2, 4, 8, 12),
    32: (1, 2, 4, 8, 16),
    48: (1, 2, 4, 8, 16, 24),
    64: (1, 2, 4, 8, 16, 32),
}

MUL_ENTRY: dict[str, Any] = {
    "kinds": ["mul", "mul_const"],
    "architecture": (
        "sequential multiplier generated by synth/multicycle.py: a digit of d multiplier "
        "bits per cycle (a w-by-d multiply and an add into the accumulator); the low w "
        "bits of the product, for signed and unsigned operands; one instance per width"
    ),
    "latency": {"per_step": 1, "extra": 1},
    "ii": {"per_step": 1, "extra": 1},
    # the unit's operand select and the start mux in front of the operand registers
    "issue": ["mux", "mux", "mux"],
}


def characterize_multiplier(
    sizes: dict[int, tuple[int, ...]] = MUL_CHARACTERISED,
) -> dict[str, Any]:
    """Measures the sequential multiplier with Yosys per width and digit: the library's
    ``"multicycle"."mul"`` entry."""
    import tempfile

    out: dict[str, dict[str, dict[str, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for w, digits in sizes.items():
            for d in digits:
                name = f"char_mul{w}x{d}"
                out.setdefault(str(w), {})[str(d)] = _yosys_figures(
                    Path(tmp), multiplier_module(name, w, d)
                )
    return MUL_ENTRY | {"widths": out}


def main(argv: list[str] | None = None) -> int:
    """``python -m aquas.synth.multicycle``: re-measure the divider and write its entry
    into the operator library (``--out``, the packaged ``synth/oplib.json`` by default)."""
    import argparse
    import json

    from aquas.synth.characterize import dumps
    from aquas.synth.oplib import DEFAULT_PATH

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--out", type=Path, default=DEFAULT_PATH)
    args = ap.parse_args(argv)
    doc = json.loads(args.out.read_text())
    doc.setdefault("multicycle", {})["div"] = entry = characterize()
    doc["multicycle"]["mul"] = mul = characterize_multiplier()
    args.out.write_text(dumps(doc))
    for w, per_digit in mul["widths"].items():
        figs = ", ".join(
            f"d={d}: {e['cells']} cells, depth {e['depth']}" for d, e in per_digit.items()
        )
        print(f"mul{w}: {figs}")
    for w, per_k in entry["widths"].items():
        figs = ", ".join(f"d={k}: {e['cells']} cells, depth {e['depth']}" for k, e in per_k.items())
        print(f"div{w}: {figs}")
    return 0


__all__ = [
    "DIV_OPS",
    "UNIT_OPS",
    "MultiCycleOp",
    "MultiCycleUnits",
    "divider_latency",
    "divider_module",
    "divider_module_name",
    "is_division",
    "multicycle_policy",
    "multiplier_module",
]


if __name__ == "__main__":
    sys.exit(main())
