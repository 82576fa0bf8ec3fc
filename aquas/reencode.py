"""Re-encoding an extension into the custom opcodes a core routes to its ISAX unit.

A spec gives every ISAX an R-type encoding (opcode, funct3, funct7).  A core may route
fewer custom opcodes than the spec uses: VexRiscv's CfuPlugin decodes only custom-0, but
hands the unit all ten function bits ``{funct7, funct3}``.  Before synthesis, the header,
the co-simulation and the matcher see an extension, :func:`reencode` rewrites the
encodings of the ISAXs whose opcode is not routed into free triples of the routed space.

Allocation (:func:`allocate`) is deterministic: the ISAXs that move are taken in spec
order, ISAXs already on a routed opcode keep their encoding and are never collided with,
and each mover takes the first free triple of, in order,

1. the same funct3 and funct7 on a routed opcode (routed opcodes in ``custom-0..3`` order),
2. the same funct7 with another funct3,
3. the same funct3 with another funct7,
4. any free triple (funct7, then funct3, ascending).

A routed opcode has 2**10 triples; an extension that needs more than the routed space has
free is an error that gives both counts.

One place produces the extension a target sees: :func:`spec_for_target` (used by
``aquas run``, ``aquas match`` and ``aquas synth --reencode-for``).  The registered pass
``aquas-reencode{soc=NAME}`` applies the same rewrite to IR.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntegerAttr, ModuleOp, i32
from xdsl.passes import ModulePass

from aquas.diagnostics import AquasError, SourceLoc
from aquas.dialects import aquas as aq
from aquas.target import DEFAULT, Target, load_target
from aquas.target.schema import OPCODE_NAMES

FUNCT3_VALUES = 8
FUNCT7_VALUES = 128
PER_OPCODE = FUNCT3_VALUES * FUNCT7_VALUES  # the R-type function space of one opcode


class Encoding(NamedTuple):
    opcode: int
    funct3: int
    funct7: int

    def __str__(self) -> str:
        name = OPCODE_NAMES.get(self.opcode, f"{self.opcode:#04x}")
        return f"{name} funct3={self.funct3} funct7={self.funct7}"

    def to_json(self) -> dict[str, Any]:
        return {
            "opcode": self.opcode,
            "opcode_name": OPCODE_NAMES.get(self.opcode, ""),
            "funct3": self.funct3,
            "funct7": self.funct7,
        }


@dataclass(frozen=True)
class Move:
    isax: str
    old: Encoding
    new: Encoding


class SpaceExhausted(Exception):
    """More ISAXs must move than the routed space has free triples."""

    def __init__(self, needs: int, free: int, first_unplaced: int):
        super().__init__(f"needs {needs} encodings, {free} free")
        self.needs = needs
        self.free = free
        self.first_unplaced = first_unplaced  # index (among the movers) of the first misfit


class ReencodeError(AquasError):
    """The extension does not fit the routed space; ``reason`` is the counts alone."""

    def __init__(self, message: str, reason: str, loc: SourceLoc | None, source: str | None):
        super().__init__(
            message,
            loc,
            source=source,
            hint="split the extension, or target a core that routes more custom opcodes",
        )
        self.reason = reason


def _candidates(enc: Encoding, routed: Sequence[int]) -> Iterable[Encoding]:
    f3, f7 = enc.funct3, enc.funct7
    for o in routed:
        yield Encoding(o, f3, f7)
    for o in routed:
        for g3 in range(FUNCT3_VALUES):
            yield Encoding(o, g3, f7)
    for o in routed:
        for g7 in range(FUNCT7_VALUES):
            yield Encoding(o, f3, g7)
    for o in routed:
        for g7 in range(FUNCT7_VALUES):
            for g3 in range(FUNCT3_VALUES):
                yield Encoding(o, g3, g7)


def allocate(isaxs: Sequence[tuple[str, Encoding]], routed: Sequence[int]) -> list[Move]:
    """The moves that put every ISAX of ``isaxs`` (spec order) on an opcode of ``routed``.

    ISAXs already routed are not moved and keep their triple; raises
    :class:`SpaceExhausted` when the movers outnumber the free triples."""
    order = sorted(set(routed))
    if not order:
        raise SpaceExhausted(sum(1 for _, e in isaxs), 0, 0)
    taken = {e for _, e in isaxs if e.opcode in order}
    movers = [(n, e) for n, e in isaxs if e.opcode not in order]
    free = len(order) * PER_OPCODE - len(taken)
    if len(movers) > free:
        raise SpaceExhausted(len(movers), free, free)
    moves = []
    for name, enc in movers:
        # the first tiers are short; the last one is a linear scan of at most 4 * 1024
        new = next(c for c in _candidates(enc, order) if c not in taken)
        taken.add(new)
        moves.append(Move(name, enc, new))
    return moves


@dataclass(frozen=True)
class EncodingMap:
    """What :func:`reencode` did for one target: the moves, or why it could not."""

    extension: str
    target: str
    routed: tuple[int, ...]
    moves: tuple[Move, ...] = ()
    error: str = ""  # non-empty: re-encoding was impossible (the spec's encodings are kept)

    @property
    def routed_names(self) -> str:
        return ", ".join(OPCODE_NAMES.get(o, f"{o:#04x}") for o in self.routed)

    def lines(self) -> list[str]:
        """The map as text: one line per ISAX that moved (empty when none did)."""
        if self.error:
            return [f"{self.extension} cannot be re-encoded for {self.target}: {self.error}"]
        if not self.moves:
            return []
        w = max(len(m.isax) for m in self.moves)
        head = (
            f"{self.extension}: re-encoded for {self.target} "
            f"(its core routes only {self.routed_names}):"
        )
        return [head, *(f"  {m.isax:<{w}}  {m.old}  ->  {m.new}" for m in self.moves)]

    def to_json(self) -> dict[str, Any]:
        return {
            "extension": self.extension,
            "target": self.target,
            "routed": [OPCODE_NAMES.get(o, f"{o:#04x}") for o in self.routed],
            "moves": [
                {"isax": m.isax, "old": m.old.to_json(), "new": m.new.to_json()} for m in self.moves
            ],
            "error": self.error,
        }


def _location(op: aq.IsaxOp) -> SourceLoc | None:
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return SourceLoc(loc.filename.data, loc.line.data, loc.column.data)
    return None


def _source(loc: SourceLoc | None) -> str | None:
    if loc is None:
        return None
    try:
        return Path(loc.filename).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def reencode(module: ModuleOp, target: Target) -> EncodingMap:
    """Rewrites, in place, the encodings of the ISAXs ``target``'s core does not route.

    Raises :class:`AquasError` (at the first ISAX that does not fit) when the extension
    needs more encodings than the routed space has free."""
    from aquas.interpreter import find_extension

    ext = find_extension(module)
    isaxs = list(ext.isaxs())
    routed = tuple(sorted(set(target.routed_opcodes)))
    pairs = [
        (i.sym_name.data, Encoding(i.opcode_value, i.funct3_value, i.funct7_value)) for i in isaxs
    ]
    name = ext.sym_name.data
    try:
        moves = allocate(pairs, routed)
    except SpaceExhausted as e:
        movers = [i for i, (_, enc) in zip(isaxs, pairs, strict=True) if enc.opcode not in routed]
        at = movers[min(e.first_unplaced, len(movers) - 1)] if movers else None
        loc = _location(at) if at is not None else None
        where = ", ".join(OPCODE_NAMES.get(o, f"{o:#04x}") for o in routed) or "no opcode"
        verb = "has" if len(routed) <= 1 else "have"
        reason = f"it needs {e.needs} encodings, {where} {verb} {e.free} free"
        raise ReencodeError(
            f"extension '{name}' cannot be re-encoded for {target.name}: {reason}",
            reason,
            loc,
            _source(loc),
        ) from None
    apply_moves(module, [(m.isax, m.new) for m in moves])
    return EncodingMap(name, target.name, routed, tuple(moves))


def spec_for_target(
    spec: Path | str, target: Target, *, strict: bool = True
) -> tuple[ModuleOp, EncodingMap]:
    """The spec lowered and re-encoded for ``target``: the one module synthesis, the
    co-simulation, the matcher and the header of that target must all see.

    With ``strict=False`` an extension that does not fit keeps the spec's encodings and the
    map carries the reason (the matcher then refuses the unrouted ISAXs with it)."""
    from aquas.interpreter import find_extension
    from aquas.spec.frontend import lower_spec_file

    module = lower_spec_file(str(spec))
    try:
        return module, reencode(module, target)
    except ReencodeError as e:
        if strict:
            raise
        ext = find_extension(module).sym_name.data
        routed = tuple(sorted(set(target.routed_opcodes)))
        return module, EncodingMap(ext, target.name, routed, (), e.reason)


def apply_moves(module: ModuleOp, moves: Iterable[tuple[str, Encoding]]) -> None:
    """Gives the named ISAXs of ``module`` the given encodings (a recorded map replayed on a
    freshly lowered spec, e.g. in the co-simulation's test process)."""
    from aquas.interpreter import find_extension

    by_name = {i.sym_name.data: i for i in find_extension(module).isaxs()}
    for name, enc in moves:
        if name not in by_name:
            raise AquasError(f"the encoding map names ISAX '{name}', which the spec lacks")
        op = by_name[name]
        op.properties["opcode"] = IntegerAttr(enc.opcode, i32)
        op.properties["funct3"] = IntegerAttr(enc.funct3, i32)
        op.properties["funct7"] = IntegerAttr(enc.funct7, i32)
    module.verify()  # the extension's own check: no two ISAXs share an encoding


@dataclass(frozen=True)
class AquasReencodePass(ModulePass):
    """Moves the ISAXs a SoC's core does not route into its routed custom opcodes."""

    name = "aquas-reencode"

    soc: str = DEFAULT
    """The built-in SoC whose core's routed opcodes the extension must fit."""

    platform: str = ""
    """A platform file or packaged platform name; overrides ``soc`` when given."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = load_target(self.platform or None, soc=None if self.platform else self.soc)
        reencode(op, target)


__all__ = [
    "PER_OPCODE",
    "AquasReencodePass",
    "Encoding",
    "EncodingMap",
    "Move",
    "ReencodeError",
    "SpaceExhausted",
    "allocate",
    "apply_moves",
    "reencode",
    "spec_for_target",
]
