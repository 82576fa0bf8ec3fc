"""Reference SoC simulation: Verilator builds, ELF loading, cycle-accurate runs.

``build(soc, platform, isax_verilog) -> SimBinary`` and ``run(binary, elf, ...) -> SimResult``
are imported lazily so that ``import aquas.sim`` stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BadAccess", "Region", "SimBinary", "SimResult", "build", "run"]


def __getattr__(name: str) -> Any:
    if name in ("build", "SimBinary"):
        from aquas.sim import builder as _b

        return getattr(_b, name)
    if name in ("run", "SimResult", "Region", "BadAccess"):
        from aquas.sim import runner as _r

        return getattr(_r, name)
    raise AttributeError(name)
