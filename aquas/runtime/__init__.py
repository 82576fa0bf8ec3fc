"""RISC-V bare-metal runtime (crt0, linker script, libc subset) and the aquas_isax.h generator.

* :func:`build_program` (``aquas.runtime.build``): cross-compile C/assembly with the runtime;
* :func:`generate_header` / :func:`write_header` (``aquas.runtime.header``): ISAX intrinsics;
* :func:`run_elf` (``aquas.runtime.iss``): a functional RV32IM ISS for quick checks.

See docs/runtime.md.  Attributes are imported lazily so ``import aquas.runtime`` stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "build_program",
    "generate_header",
    "run_elf",
    "write_header",
]

_WHERE = {
    "build_program": "aquas.runtime.build",
    "generate_header": "aquas.runtime.header",
    "write_header": "aquas.runtime.header",
    "run_elf": "aquas.runtime.iss",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(name)
