"""Where aquas keeps its caches (simulator builds, co-simulation models, Yosys results, the
matcher's ISAX latencies, the spec grammar's parse tables).

The user cache directory of the platform (``platformdirs``), or ``$AQUAS_CACHE_DIR`` when set
(CI points it at an ignored folder of the checkout). Never inside the installed package.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV = "AQUAS_CACHE_DIR"


def cache_dir(kind: str) -> Path:
    """The cache folder for ``kind`` (``sim``, ``cosim``, ``yosys``, ``latency``, ``lark``), not
    created here."""
    root = os.environ.get(ENV) or platformdirs.user_cache_dir("aquas", appauthor=False)
    return Path(root).expanduser() / kind
