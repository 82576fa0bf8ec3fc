"""The case record shared by the generators, and the per-case random source."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    """One generated input.

    ``files`` maps a relative path to its bytes (``main`` is the input handed to the CLI;
    the rest are files it refers to, e.g. a project's spec and sources). ``symlinks`` maps
    a relative path to a link target, for symlink loops. ``valid`` says the generator meant
    the input to be accepted (a mutant may still be valid by accident; that is fine).
    """

    kind: str  # "spec" | "c" | "project"
    family: str
    seed: int
    index: int
    main: str
    files: dict[str, bytes]
    valid: bool = False
    symlinks: dict[str, str] = field(default_factory=dict)

    @property
    def ident(self) -> str:
        return f"{self.kind}-{self.seed}-{self.index}-{self.family}"


def case_rng(kind: str, seed: int, index: int) -> random.Random:
    """A random source for one case, independent of every other case and of hash seeds."""
    digest = hashlib.sha256(f"{kind}:{seed}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "little"))
