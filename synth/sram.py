"""SRAM scratchpads: which scratchpads are memories, their banks, and their RTL.

A scratchpad is built from registers (one flip-flop word per element, combinational reads)
or from SRAM banks (docs/synthesis.md, "SRAM scratchpads"): each bank of the partition is
one memory with 1 or 2 read/write ports and a registered read port, so a read issued in
cycle ``c`` delivers its word in cycle ``c + 1``. The choice comes from the spec's
``impl(auto|sram|regs)`` directive (``auto``: SRAM when a bank holds more than
``SRAM_AUTO_WORDS`` elements), or from ``aquas synth --scratchpads`` for the whole spec.

The banks are instances of a behavioural SRAM model (``rtl_templates/sram``), one module
per shape (width, depth, ports), declared to CIRCT as an external module and appended to
the unit's Verilog. Its interface is the same for every shape: per port ``p``, ``en<p>``,
``we<p>``, ``addr<p>``, ``wdata<p>`` in and ``rdata<p>`` out.

The scheduler's view (``synth/fsm.py``): an SRAM read's result arrives one cycle after the
read (a dependence of distance 1), each bank takes ``ports`` accesses per cycle, and the
cycle after a read stays in the segment (the read's value is taken there, into a
register when it is used later).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import TYPE_CHECKING

from xdsl.dialects import hw
from xdsl.dialects.builtin import (
    ArrayAttr,
    FlatSymbolRefAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    i1,
    i64,
)
from xdsl.dialects.seq import clock
from xdsl.ir import Operation, SSAValue

from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq

if TYPE_CHECKING:
    from aquas.synth.hwemit import HwBuilder

#: ``aquas synth --scratchpads`` values; ``None`` keeps each scratchpad's directive.
SCRATCHPAD_MODES = aq.SPM_IMPLS


def is_sram(spm: aq.ScratchpadOp) -> bool:
    """Whether synthesis builds ``spm`` from SRAM banks."""
    impl = spm.impl_value
    if impl == "auto":
        return spm.bank_words > aq.SRAM_AUTO_WORDS
    return impl == "sram"


def apply_scratchpad_impl(module: ModuleOp, mode: str | None) -> None:
    """Overrides every scratchpad's ``impl`` directive with ``mode`` (``None``: keep the
    spec's); an SRAM scratchpad keeps the port count its spec asks for."""
    if mode is None:
        return
    if mode not in SCRATCHPAD_MODES:
        raise AquasError(
            f"unknown scratchpad implementation {mode!r}",
            hint=f"use one of {', '.join(SCRATCHPAD_MODES)}",
        )
    for op in module.walk():
        if isinstance(op, aq.ScratchpadOp):
            op.set_impl(mode, op.ports_value if mode == "sram" else 1)


def reciprocal(d: int, bits: int) -> tuple[int, int]:
    """(m, s) with ``x // d == (x * m) >> s`` for every ``bits``-bit unsigned ``x``: the
    round-up reciprocal of Granlund and Montgomery, s = bits + ceil(log2 d)."""
    s = bits + (d - 1).bit_length()
    return -(-(1 << s) // d), s


def divmod_const(
    h: HwBuilder, x: SSAValue, d: int, bits: int, hint: str
) -> tuple[SSAValue, SSAValue]:
    """(x // d, x % d) as 32-bit wires for the low ``bits`` bits of ``x`` (the rest are
    ignored). Written out by hand because Yosys maps a divider by a constant as a general
    divider, 32 subtract-and-compare stages (over 100 gate levels even for 8 significant
    bits); a multiply by the reciprocal and one multiply-subtract are about 22 levels for 8
    bits."""
    if bits >= 32:
        return (
            h.binop("comb.divu", x, h.const(d, 32), f"{hint}_high"),
            h.binop("comb.modu", x, h.const(d, 32), f"{hint}_low"),
        )
    m, s = reciprocal(d, bits)
    xn = h.extract(x, 0, bits, f"{hint}_elem")
    w = s + bits  # wide enough for the product: x < 2**bits and m <= 2**s
    prod = h.mul_const(h.zext(xn, w), m, f"{hint}_recip")
    q = h.extract(prod, s, bits, f"{hint}_quot")
    rem = h.binop("comb.sub", xn, h.binop("comb.mul", q, h.const(d, bits), None), f"{hint}_rem")
    return h.zext(q, 32), h.zext(rem, 32)


def element_bank_row(
    spm: aq.ScratchpadOp, k: int, layout: tuple[str, int] | None = None
) -> tuple[int, int]:
    """(bank, row) of element ``k`` under the scratchpad's partition, or under ``layout``
    (kind, factor) when given (``fitted_partition``)."""
    kind, f = layout or (spm.partition.data, spm.factor_value)
    if kind == "cyclic":
        return k % f, k // f
    if kind == "block":
        return divmod(k, -(-spm.size // f))
    return 0, k


def _elements_per_beat(ext: aq.ExtensionOp, name: str, width: int, bus_width: int) -> int:
    """The most elements of scratchpad ``name`` one burst beat carries."""
    per = 1
    for op in ext.walk():
        if (
            isinstance(op, aq.BurstReadOp | aq.BurstWriteOp)
            and op.scratchpad.root_reference.data == name
        ):
            per = max(per, bus_width // max(8, width))
    return per


def fitted_partition(ext: aq.ExtensionOp, spm: aq.ScratchpadOp, bus_width: int) -> tuple[str, int]:
    """The partition an SRAM scratchpad is built with: its own, except that a scratchpad
    whose bursts pack ``P`` elements per beat into fewer banks (unpartitioned, or cyclic by
    ``F < P``) is split cyclic by ``lcm(F, P)``, so each beat's elements land in distinct
    banks. The refinement never loses parallelism: a cyclic-``L`` bank determines the
    cyclic-``F`` bank for every ``F`` dividing ``L`` (x, y, z in cyclic 3 under a 4-element
    beat become cyclic 12). Banks are invisible to the spec's semantics."""
    kind, f = spm.partition.data, spm.factor_value
    per = _elements_per_beat(ext, spm.sym_name.data, spm.width, bus_width)
    if per > f and kind in ("none", "cyclic"):
        fitted = math.lcm(f, per)
        if spm.size >= fitted:
            return "cyclic", fitted
    return kind, f


def fit_partitions(ext: aq.ExtensionOp, bus_width: int) -> None:
    """Applies ``fitted_partition`` to every SRAM scratchpad (in place); the ``impl``
    becomes explicit first, so smaller banks do not turn an ``auto`` SRAM into registers.
    An ``auto`` scratchpad whose bursts the banks still cannot serve becomes registers."""
    for spm in ext.scratchpads():
        if not is_sram(spm):
            continue
        auto = spm.impl_value == "auto"
        kind, f = fitted_partition(ext, spm, bus_width)
        if (kind, f) != (spm.partition.data, spm.factor_value):
            spm.set_impl("sram", spm.ports_value)
            spm.properties["partition"] = StringAttr(kind)
            spm.properties["factor"] = IntegerAttr(f, i64)
        if auto and unservable(ext, spm, bus_width) is not None:
            # ``auto`` picks SRAM only where the banks can serve the bursts (an explicit
            # ``impl(sram)`` gets the error from ``check_supported`` instead)
            spm.set_impl("regs")


def _log2(n: int) -> int:
    return max(1, (n - 1).bit_length())


@dataclass(frozen=True)
class SramShape:
    """One SRAM model: ``depth`` words of ``width`` bits, ``ports`` read/write ports."""

    width: int
    depth: int
    ports: int

    @property
    def abits(self) -> int:
        return _log2(self.depth)

    def module_name(self, unit: str) -> str:
        return f"{unit}_sram_{self.width}x{self.depth}_{self.ports}rw"

    @staticmethod
    def of(spm: aq.ScratchpadOp) -> SramShape:
        return SramShape(spm.width, spm.bank_words, spm.ports_value)


def render_model(unit: str, shape: SramShape) -> str:
    """The Verilog of one SRAM model, from the template shipped with aquas."""
    base = resources.files("aquas.rtl_templates") / "sram"
    top = Template((base / "aquas_sram.sv").read_text())
    port = Template((base / "aquas_sram_port.sv").read_text())
    w1, a1 = shape.width - 1, shape.abits - 1
    decls = []
    for p in range(shape.ports):
        decls += [
            f"    input logic en{p},",
            f"    input logic we{p},",
            f"    input logic [{a1}:0] addr{p},",
            f"    input logic [{w1}:0] wdata{p},",
            f"    output logic [{w1}:0] rdata{p}" + ("," if p + 1 < shape.ports else ""),
        ]
    return top.substitute(
        name=shape.module_name(unit),
        depth=shape.depth,
        width=shape.width,
        ports=shape.ports,
        width_m1=w1,
        port_decls="\n".join(decls),
        port_logic="".join(port.substitute(p=p) for p in range(shape.ports)).rstrip("\n"),
    )


def inventory(ext: aq.ExtensionOp) -> list[dict[str, int | str]]:
    """The SRAM banks of an extension, for reports: per scratchpad, banks, words and bits."""
    out: list[dict[str, int | str]] = []
    for spm in ext.scratchpads():
        if is_sram(spm):
            out.append(
                {
                    "scratchpad": spm.sym_name.data,
                    "banks": spm.factor_value,
                    "words": spm.bank_words,
                    "bits": spm.width,
                    "ports": spm.ports_value,
                    "total_bits": spm.factor_value * spm.bank_words * spm.width,
                }
            )
    return out


def unservable(
    ext: aq.ExtensionOp, spm: aq.ScratchpadOp, bus_width: int
) -> tuple[Operation, str, str] | None:
    """The first burst on SRAM scratchpad ``spm`` its banks cannot serve, as (op, message,
    hint): one bank takes one element per port per cycle, so a beat that packs several
    elements must spread them over distinct banks (a cyclic partition at least as wide as
    the elements per beat), and an element wider than the bus (written in halves) is not
    supported."""
    bb = bus_width // 8
    name = spm.sym_name.data
    for op in ext.walk():
        if not isinstance(op, aq.BurstReadOp | aq.BurstWriteOp):
            continue
        if op.scratchpad.root_reference.data != name:
            continue
        eb = spm.width // 8
        if eb > bb:
            return (
                op,
                f"SRAM scratchpad '{name}' has {spm.width}-bit elements, wider than the "
                f"{bus_width}-bit memory bus",
                f"declare '{name}' with impl(regs), or use a wider bus",
            )
        per = bb // eb
        if per > 1 and not (spm.partition.data == "cyclic" and spm.factor_value >= per):
            return (
                op,
                f"a burst beat carries {per} elements of SRAM scratchpad '{name}', and an "
                "SRAM bank takes one element per cycle",
                f"partition '{name}' cyclic by {per} or more, or declare it impl(regs)",
            )
    return None


def check_supported(ext: aq.ExtensionOp, bus_width: int) -> None:
    """Raises a located error for the first burst an SRAM scratchpad cannot serve
    (``unservable``)."""
    from aquas.synth.fsm import op_error

    for spm in ext.scratchpads():
        if is_sram(spm):
            bad = unservable(ext, spm, bus_width)
            if bad is not None:
                op, msg, hint = bad
                raise op_error(op, msg, hint=hint)


class SramBanks:
    """The SRAM banks of one unit while its RTL is built: collects, per bank and port, the
    accesses of every state (mutually exclusive enables), then instantiates the banks."""

    def __init__(self, h: HwBuilder, unit: str, spms: dict[str, aq.ScratchpadOp]):
        self.h = h
        self.unit = unit
        self.spms = {n: s for n, s in spms.items() if is_sram(s)}
        # (scratchpad, bank, port) -> [(enable, write, row, wdata)]
        self.accesses: dict[tuple[str, int, int], list[tuple[SSAValue, bool, SSAValue, SSAValue]]]
        self.accesses = {}
        # the banks' read data, created before the instances (their outputs) exist
        self.rdata: dict[tuple[str, int, int], SSAValue] = {}
        self._placeholders: dict[tuple[str, int, int], Operation] = {}
        self.final: dict[SSAValue, SSAValue] = {}

    def __contains__(self, name: str) -> bool:
        return name in self.spms

    # -- addressing ----------------------------------------------------------------------

    def split(self, name: str, index: SSAValue, hint: str) -> tuple[SSAValue, SSAValue]:
        """(bank, row) of a run-time element index (32-bit wires). A divisor that is not a
        power of two divides only the index bits an element of the scratchpad has (an index
        past its end is not an access), by a reciprocal multiply (``divmod_const``)."""
        h, spm = self.h, self.spms[name]
        f = spm.factor_value
        d = f if spm.partition.data == "cyclic" else spm.bank_words
        if spm.partition.data not in ("cyclic", "block"):
            return h.const(0, 32), index
        if d == 1:  # cyclic by 1: one bank; block of 1 word: one bank per element
            high, low = index, h.const(0, 32)
        elif d & (d - 1) == 0:
            k = d.bit_length() - 1
            low = h.zext(h.extract(index, 0, k, f"{hint}_low"), 32)
            high = h.binop("comb.shru", index, h.const(k, 32), f"{hint}_high")
        else:
            bits = max(1, (spm.size - 1).bit_length())
            high, low = divmod_const(h, index, d, bits, hint)
        return (low, high) if spm.partition.data == "cyclic" else (high, low)

    def row_bits(self, name: str, row: SSAValue, hint: str) -> SSAValue:
        return self.h.extract(row, 0, SramShape.of(self.spms[name]).abits, f"{hint}_addr")

    # -- accesses --------------------------------------------------------------------------

    def access(
        self,
        name: str,
        banks: set[int] | list[int],
        port: int,
        enable: SSAValue,
        index: SSAValue | None,
        wdata: SSAValue | None,
        hint: str,
        row: SSAValue | None = None,
    ) -> SSAValue | None:
        """One access to element ``index`` (a 32-bit wire) while ``enable``, through
        ``port`` of whichever of ``banks`` holds it. Returns, for a read of several
        possible banks, the 32-bit bank number to remember for the data cycle. With
        ``row`` (``fsm.bank_row``: the one bank is known), ``index`` is not used."""
        h = self.h
        if row is None:
            assert index is not None
            bank, row = self.split(name, index, hint)
        else:
            assert len(banks) == 1, "a row read off the index arithmetic has one bank"
        addr = self.row_bits(name, row, hint)
        for b in sorted(banks):
            en = enable
            if len(banks) > 1:
                at = h.icmp("eq", bank, h.const(b, 32), f"{hint}_at{b}")
                en = h.and_(enable, at, hint=f"{hint}_en{b}")
            zero = h.const(0, self.spms[name].width)
            self.accesses.setdefault((name, b, port), []).append(
                (en, wdata is not None, addr, wdata if wdata is not None else zero)
            )
        return bank if len(banks) > 1 else None

    def read_data(self, name: str, bank: int, port: int) -> SSAValue:
        """The registered read data of ``port`` of ``bank`` (valid the cycle after a read)."""
        key = (name, bank, port)
        if key not in self.rdata:
            w = self.spms[name].width
            # a stand-in the instance's result replaces in ``finish``
            op = hw.ConstantOp(0, w)
            self.rdata[key] = op.result
            self._placeholders[key] = op
            self.h.block.add_op(op)
        return self.rdata[key]

    def resolved(self, v: SSAValue) -> SSAValue:
        """``v``, or the bank output that replaced it if it was a read-data stand-in."""
        return self.final.get(v, v)

    def finish(self) -> list[hw.HWModuleExternOp]:
        """Instantiates every bank; returns the external module declarations (one per
        shape) for the ``builtin.module``."""
        h = self.h
        externs: dict[SramShape, hw.HWModuleExternOp] = {}
        for name, spm in self.spms.items():
            shape = SramShape.of(spm)
            mod_name = shape.module_name(self.unit)
            if shape not in externs:
                externs[shape] = self._extern(shape, mod_name)
            h.loc = _loc(spm)
            for b in range(spm.factor_value):
                inputs: list[tuple[str, SSAValue]] = [("clk", h.clk)]
                for p in range(shape.ports):
                    items = self.accesses.get((name, b, p), [])
                    pre = f"{name}_b{b}_p{p}"
                    en = h.or_tree([e for e, *_ in items], 1, f"{pre}_en")
                    we = h.onehot_select(
                        [(e, h.const(int(w), 1)) for e, w, _, _ in items],
                        h.const(0, 1),
                        f"{pre}_we",
                    )
                    addr = h.onehot_select(
                        [(e, a) for e, _, a, _ in items], h.const(0, shape.abits), f"{pre}_addr"
                    )
                    wdata = h.onehot_select(
                        [(e, d) for e, w, _, d in items if w],
                        h.const(0, shape.width),
                        f"{pre}_wdata",
                    )
                    inputs += [
                        (f"en{p}", en),
                        (f"we{p}", we),
                        (f"addr{p}", addr),
                        (f"wdata{p}", wdata),
                    ]
                outputs = [(f"rdata{p}", IntegerType(shape.width)) for p in range(shape.ports)]
                inst = hw.InstanceOp(
                    f"{name}_bank{b}", FlatSymbolRefAttr(mod_name), inputs, outputs
                )
                inst.location = h.loc
                h.block.add_op(inst)
                for p in range(shape.ports):
                    res = inst.results[p]
                    res.name_hint = f"{name}_b{b}_rdata{p}"
                    ph = self._placeholders.get((name, b, p))
                    if ph is not None:
                        self.final[ph.results[0]] = res
                        ph.results[0].replace_all_uses_with(res)
                        ph.detach()
                        ph.erase()
        return list(externs.values())

    @staticmethod
    def _extern(shape: SramShape, mod_name: str) -> hw.HWModuleExternOp:
        def port(n: str, t: IntegerType | type[object], out: bool = False) -> hw.ModulePort:
            d = hw.Direction.OUTPUT if out else hw.Direction.INPUT
            return hw.ModulePort(StringAttr(n), t, hw.DirectionAttr(d))  # type: ignore[arg-type]

        ports = [port("clk", clock)]  # type: ignore[arg-type]
        for p in range(shape.ports):
            ports += [
                port(f"en{p}", i1),
                port(f"we{p}", i1),
                port(f"addr{p}", IntegerType(shape.abits)),
                port(f"wdata{p}", IntegerType(shape.width)),
            ]
        ports += [port(f"rdata{p}", IntegerType(shape.width), True) for p in range(shape.ports)]
        return hw.HWModuleExternOp(StringAttr(mod_name), hw.ModuleType(ArrayAttr(ports)))


def _loc(spm: aq.ScratchpadOp) -> object:
    from aquas.synth.hwemit import basename_loc

    return basename_loc(spm.location)


__all__ = [
    "SCRATCHPAD_MODES",
    "SramBanks",
    "SramShape",
    "apply_scratchpad_impl",
    "check_supported",
    "element_bank_row",
    "fit_partitions",
    "fitted_partition",
    "inventory",
    "is_sram",
    "render_model",
    "unservable",
]
