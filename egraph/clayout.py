"""C frontend, object layout: sizes, alignments and field offsets of C objects under the
RV32 ILP32 ABI (the RISC-V psABI: every integer type and pointer is naturally aligned,
``long long`` to 8 bytes; a struct is aligned to its most aligned member and padded to a
multiple of that; an array has no padding between elements).

The frontend keeps memory as ``memref``s of one integer element type, so an aggregate is
lowered as a run of elements of its *leaf width*: the one width every scalar inside it
(fields, array elements, nested structs) shares.  Under the ABI above such an aggregate has
no padding (every leaf is aligned to its own size), so byte offsets are exact multiples of
the leaf width and a field access becomes an element access at ``offset / (width / 8)``.
Aggregates that mix widths are described here (their layout is exact) but the frontend
refuses to access them, naming the widths.

The layout is written by hand because it is a few lines of arithmetic on the ABI's rules;
the tests compare it with the host C compiler's ``sizeof``/``offsetof`` (x86-64 and RV32
agree for the integer types used there).
"""

from __future__ import annotations

from dataclasses import dataclass

POINTER_BYTES = 4  # RV32


@dataclass(frozen=True)
class Scalar:
    width: int
    signed: bool


@dataclass(frozen=True)
class Pointer:
    target: object  # the pointee: a Scalar, Struct or Array


@dataclass(frozen=True)
class Array:
    elem: Scalar | Pointer | Array | Struct
    n: int


@dataclass(frozen=True)
class Field:
    name: str
    type: Scalar | Pointer | Array | Struct
    offset: int  # bytes from the start of the struct
    const: bool = False


@dataclass(frozen=True)
class Struct:
    name: str  # for messages: "struct point" or the typedef name
    fields: tuple[Field, ...]
    size: int
    align: int

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


CType = Scalar | Pointer | Array | Struct


def size_align(t: CType) -> tuple[int, int]:
    """(size, alignment) in bytes."""
    if isinstance(t, Scalar):
        return t.width // 8, t.width // 8
    if isinstance(t, Pointer):
        return POINTER_BYTES, POINTER_BYTES
    if isinstance(t, Array):
        s, a = size_align(t.elem)
        return s * t.n, a
    return t.size, t.align


def struct_layout(name: str, members: list[tuple[str, CType, bool]]) -> Struct:
    """The layout of ``struct { members }`` (name, type, const) in declaration order."""
    offset, align = 0, 1
    fields = []
    for fname, ftype, const in members:
        s, a = size_align(ftype)
        offset = -(-offset // a) * a
        fields.append(Field(fname, ftype, offset, const))
        offset += s
        align = max(align, a)
    size = -(-offset // align) * align
    return Struct(name, tuple(fields), size, align)


def leaf_widths(t: CType) -> set[int]:
    """Widths (bits) of the scalars the object is made of; a pointer is a 32-bit leaf."""
    if isinstance(t, Scalar):
        return {t.width}
    if isinstance(t, Pointer):
        return {POINTER_BYTES * 8}
    if isinstance(t, Array):
        return leaf_widths(t.elem)
    return set().union(*(leaf_widths(f.type) for f in t.fields)) if t.fields else set()


def has_pointer(t: CType) -> bool:
    if isinstance(t, Pointer):
        return True
    if isinstance(t, Array):
        return has_pointer(t.elem)
    if isinstance(t, Struct):
        return any(has_pointer(f.type) for f in t.fields)
    return False


def units(t: CType, width: int) -> int:
    """The number of ``width``-bit elements the object occupies (its size must divide)."""
    size = size_align(t)[0]
    assert size * 8 % width == 0, (t, width)
    return size * 8 // width


def describe(t: CType) -> str:
    if isinstance(t, Scalar):
        return f"{'' if t.signed else 'u'}int{t.width}_t"
    if isinstance(t, Pointer):
        return f"{describe(t.target)} *"  # type: ignore[arg-type]
    if isinstance(t, Array):
        return f"{describe(t.elem)}[{t.n}]"
    return t.name
