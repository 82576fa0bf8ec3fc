"""A subset of an extension's ISAXs (``aquas synth --isax NAME``): what one ISAX, or a few,
cost on their own, or a unit for the part of an extension an application uses.

The other ISAXs are dropped from the lowered module, and with them the scratchpads and state
registers no kept ISAX names. A kept ISAX that reads a state register another ISAX writes
(DSP's ``fir8`` and the taps ``fir_load_taps`` loads) keeps the register, which then holds
its reset value until the kept ISAXs write it.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr

from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.interpreter import find_extension


def _symbols(isax: aq.IsaxOp) -> set[str]:
    """The symbols (scratchpads, state registers) the ops of ``isax`` name."""
    names: set[str] = set()
    for op in isax.walk():
        for attr in (*op.properties.values(), *op.attributes.values()):
            if isinstance(attr, SymbolRefAttr):
                names.add(attr.root_reference.data)
    return names


def keep_isaxs(module: ModuleOp, names: Sequence[str]) -> None:
    """Drops every ISAX of ``module``'s extension not in ``names``, and the scratchpads and
    state registers none of the kept ones uses. An unknown name is an error listing the
    extension's ISAXs; the module is left as it was."""
    ext = find_extension(module)
    have = [i.sym_name.data for i in ext.isaxs()]
    unknown = [n for n in names if n not in have]
    if unknown:
        raise AquasError(
            f"extension {ext.sym_name.data} has no ISAX {', '.join(unknown)}",
            hint=f"its ISAXs: {', '.join(have)}",
        )
    kept = [i for i in ext.isaxs() if i.sym_name.data in names]
    used = set().union(*(_symbols(i) for i in kept))
    for op in list(ext.body.block.ops):
        drop = (isinstance(op, aq.IsaxOp) and op not in kept) or (
            isinstance(op, aq.ScratchpadOp | aq.StateOp) and op.sym_name.data not in used
        )
        if drop:
            op.detach()
            op.erase()


__all__ = ["keep_isaxs"]
