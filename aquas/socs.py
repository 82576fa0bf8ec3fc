"""The names of the built-in SoCs, cheap to import (the command line's ``--soc`` choices).

One file per SoC in ``aquas/target/descriptors/``; found from the package's location
without importing :mod:`aquas.target` (its schema pulls in pydantic), so that
``aquas --help`` stays fast. :func:`aquas.target.target_names` is this function.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

DEFAULT = "vexriscv"


@functools.cache
def target_names() -> tuple[str, ...]:
    """The built-in SoCs, the default one first."""
    spec = importlib.util.find_spec("aquas.target")  # imports ``aquas`` only, not the package
    assert spec is not None and spec.submodule_search_locations is not None
    names = sorted(
        e.stem
        for loc in spec.submodule_search_locations
        for e in (Path(loc) / "descriptors").iterdir()
        if e.name.endswith(".toml")
    )
    return (DEFAULT, *(n for n in names if n != DEFAULT))
