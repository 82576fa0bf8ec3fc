"""``convert-aquas-to-hw``: an aquas extension → its ISAX unit as xDSL ``hw``/``comb``/``seq``.

The pass prepares and schedules every ISAX (``synth/prepare.py``, ``synth/fsm.py``), builds
the unit (``synth/rtlgen.py``) and replaces the module's contents by the one
``hw.module @<ext>_isax_unit``. Printed with locations (:func:`aquas.synth.rtlgen.hw_text`),
that module is the text ``synth/flow.py:export_verilog`` hands to CIRCT.

Parsing the output back needs the ``hw``, ``comb`` and ``seq`` dialects of xDSL and
:data:`aquas.synth.hwemit.SV` (the one ``sv`` op the unit uses, ``sv.localparam``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from aquas.synth.rtlgen import Unit


def convert_to_hw(module: ModuleOp, clock_ns: float = 10.0) -> Unit:
    """Replaces ``module``'s extension by its ``hw.module`` in place; returns the unit
    (schedule, states, registers) for the reports."""
    from aquas.synth.flow import build_unit
    from aquas.synth.oplib import OperatorLibrary

    unit = build_unit(module, clock_ns, OperatorLibrary.load())
    block = module.body.block
    for op in list(block.ops):
        block.erase_op(op, safe_erase=False)
    for op in list(unit.module.body.block.ops):
        op.detach()
        block.add_op(op)
    unit.module = module
    return unit


@dataclass(frozen=True)
class ConvertAquasToHwPass(ModulePass):
    """Schedules the extension's ISAXs into state machines and lowers them to one
    ``hw.module`` of ``hw``/``comb``/``seq`` ops with spec names and locations."""

    name = "convert-aquas-to-hw"

    # int as well, so that the pipeline text `clock-ns=10` is accepted
    clock_ns: int | float = 10.0
    """Target clock period in ns; operators are chained into a cycle while they fit in it."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_to_hw(op, self.clock_ns)


@dataclass(frozen=True)
class WireCensus:
    """Declared nets of a generated Verilog module."""

    wires: int
    gen_wires: int  # named ``_GEN*`` by ExportVerilog: no spec name reached them
    regs: int

    @property
    def gen_share(self) -> float:
        return self.gen_wires / self.wires if self.wires else 0.0


_DECL = re.compile(r"^\s*(wire|reg)\s+(?:\[[^\]]*\]\s*)?(\w+)", re.M)


def wire_census(verilog: str) -> WireCensus:
    """Counts the ``wire`` and ``reg`` declarations of ExportVerilog's output."""
    decls = _DECL.findall(verilog)
    wires = [n for kind, n in decls if kind == "wire"]
    return WireCensus(
        wires=len(wires),
        gen_wires=sum(1 for n in wires if n.startswith("_GEN")),
        regs=sum(1 for kind, _ in decls if kind == "reg"),
    )


__all__ = ["ConvertAquasToHwPass", "WireCensus", "convert_to_hw", "wire_census"]
