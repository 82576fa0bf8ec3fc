"""Exact-width integer types of the spec language (``u1``..``u64``, ``i1``..``i64``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aquas import intops

MAX_WIDTH = 64
_TYPE_RE = re.compile(r"^([ui])([0-9]+)$")


@dataclass(frozen=True)
class IntTy:
    width: int
    signed: bool

    def __str__(self) -> str:
        return f"{'i' if self.signed else 'u'}{self.width}"

    @property
    def mask(self) -> int:
        return intops.mask(self.width)

    @property
    def min(self) -> int:
        return -(1 << (self.width - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.width - 1)) - 1 if self.signed else self.mask


U1 = IntTy(1, False)
U32 = IntTy(32, False)
I32 = IntTy(32, True)


def parse_type_name(name: str) -> IntTy | None:
    """``u8`` → IntTy(8, False); ``bool`` is ``u1``. None when the name is not a type."""
    if name == "bool":
        return U1
    m = _TYPE_RE.match(name)
    if not m:
        return None
    width = int(m.group(2))
    if not 1 <= width <= MAX_WIDTH or m.group(2) != str(width):
        return None
    return IntTy(width, m.group(1) == "i")
