"""Stateful filter ISAXs as patterns: the unit's state registers standing for memory.

A *filter* ISAX computes one output per call from its register operands and a set of
state registers, and updates some of them (``biquad``: coefficients b0..a2 read, history
x1, x2, y1, y2 read and written). Application code keeps that state in memory -- struct
fields read at the start of a loop iteration and written at its end -- and runs one sample
per iteration::

    for (int i = 0; i < n; i++) {              // st->x1.. is the filter's history
        int16_t x = buf[i];                    // k->b0.. its coefficients
        ... y = f(x, k->b0.., st->x1..) ...
        st->x2 = st->x1; st->x1 = x; ...       // the history carried to the next sample
        buf[i] = y;
    }

The extension makes that memory image explicit with *layout* ISAXs, the way a stateful
unit that must survive a context switch is built: a *saver* writes the carried registers
to memory (``biquad_save``: ``mem[rs1 + 2k] = x1, x2, y1, y2``), a *restorer* loads them
back from the same layout (``biquad_restore``), and a *loader* sets the registers the
filter only reads (``biquad_load``: the coefficients; it may clear the rest, since the
restorer runs after it). The layouts fix which field is which register, so the matcher
binds a base address to each (``rs1 = &s[sec]``, ``rs1 = &c[sec]``), replaces the loads
of those fields by the registers' entry values ``state@r``, and proves one iteration equal
to one call: every carried register's next value is the value stored back to its field,
and the stored output is ``rd``. The loop then becomes::

    if (the samples touched do not overlap the state or coefficients) {
        loader(&coefficients); restorer(&history);
        for (same header) out[i] = filter(in[i]);
        saver(&history);
    } else
        the original loop

Soundness of the state across iterations: the rewritten loop performs the same sample
loads and stores in the same order, and nothing else in the body touches memory (every
store of the iteration is a history field or the output, every state field read is a
register); the run-time guard rules out that the samples alias the state or coefficient
memory (which the original would then read back changed), and the history must not
overlap the coefficients. The final check (egraph/finalcheck.py) runs the rewrite with the
golden ISAXs, whose state persists from call to call, against the original.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aquas.dialects import aquas as aq
from aquas.egraph.semantics import (
    ADDR_W,
    Effects,
    Executor,
    Unsupported,
    isax_effects,
    isax_state_effects,
)
from aquas.egraph.terms import Term, binop, const, linear, var, variables

REGS = ("rs1", "rs2")


@dataclass(frozen=True)
class Layout:
    """The memory image of some state registers that an ISAX loads from or stores to
    ``rs1``: (register, byte offset, bits) per slot."""

    isax: str
    slots: tuple[tuple[str, int, int], ...]

    @property
    def registers(self) -> set[str]:
        return {r for r, _, _ in self.slots}

    def slot(self, reg: str) -> tuple[int, int]:
        for r, off, w in self.slots:
            if r == reg:
                return off, w
        raise KeyError(reg)

    @property
    def size(self) -> tuple[int, int]:
        """The byte range [lo, hi) the slots cover."""
        return min(o for _, o, _ in self.slots), max(o + w // 8 for _, o, w in self.slots)


@dataclass(frozen=True)
class Filter:
    """A filter ISAX with the layout ISAXs that load and save its state."""

    step: str
    operands: tuple[str, ...]  # register operands the step reads (data, not addresses)
    carried: tuple[str, ...]  # state registers the step writes (saved and restored)
    coefficients: tuple[str, ...]  # state registers the step only reads
    next_state: dict[str, Term] = field(hash=False, compare=False)  # over state@r, rs1/rs2
    rd: Term | None = field(hash=False, compare=False)
    loader: Layout | None  # sets the coefficients (runs first); None without coefficients
    restorer: Layout  # loads the carried registers
    saver: Layout  # stores the carried registers

    @property
    def isaxs(self) -> tuple[str, ...]:
        first = (self.loader.isax,) if self.loader else ()
        return (*first, self.restorer.isax, self.step, self.saver.isax)


def _state_vars(t: Term) -> set[str]:
    return {str(v.val)[6:] for v in variables(t) if str(v.val).startswith("state@")}


def _rs1_offset(addr: Term) -> int | None:
    """``off`` when ``addr`` is ``rs1 + off``."""
    lin = linear(addr)
    if len(lin.terms) == 1 and lin.terms[0][1] == 1:
        atom = lin.terms[0][0]
        if atom.op == "var" and atom.val == "rs1":
            return lin.offset
    return None


def _loader_layout(isax: aq.IsaxOp, ext: aq.ExtensionOp) -> tuple[Layout, set[str]] | None:
    """An ISAX without rd whose only effects are state registers set from memory at
    ``rs1 + off`` (its layout) or to constants (the returned set)."""
    if "rd" in isax.used:
        return None
    try:
        fx, state = isax_state_effects(isax, ext)
    except Unsupported:
        return None
    if fx.writes or not state:
        return None
    slots, consts = [], set()
    for reg, value in state.items():
        if value.op == "const":
            consts.add(reg)
            continue
        off = _rs1_offset(value.args[0]) if value.op == "load" else None
        if off is None or value.w != value.w // 8 * 8:
            return None
        slots.append((reg, off, value.w))
    if not slots:
        return None
    return Layout(isax.sym_name.data, tuple(sorted(slots, key=lambda s: s[1]))), consts


def _saver_layout(isax: aq.IsaxOp, ext: aq.ExtensionOp) -> Layout | None:
    """An ISAX without rd that stores state registers, unchanged, at ``rs1 + off``."""
    if "rd" in isax.used:
        return None
    try:
        fx, state = isax_state_effects(isax, ext)
    except Unsupported:
        return None
    if state or fx.reads or not fx.writes:
        return None
    slots = []
    for a in fx.writes:
        v = a.value
        off = _rs1_offset(a.addr)
        if v is None or off is None or v.op != "var" or not str(v.val).startswith("state@"):
            return None
        slots.append((str(v.val)[6:], off, a.width))
    return Layout(isax.sym_name.data, tuple(sorted(slots, key=lambda s: s[1])))


@dataclass(frozen=True)
class StateLayouts:
    """The layout ISAXs of an extension, found once for all its filter candidates (per
    candidate, the scan over every other ISAX made pattern loading quadratic: minutes for
    an extension of a thousand ISAXs)."""

    loaders: tuple[tuple[Layout, frozenset[str]], ...]
    savers: tuple[Layout, ...]

    @classmethod
    def of(cls, ext: aq.ExtensionOp) -> StateLayouts:
        loaders, savers = [], []
        for isax in ext.isaxs():
            lay = _loader_layout(isax, ext)
            if lay is not None:
                loaders.append((lay[0], frozenset(lay[1])))
            sv = _saver_layout(isax, ext)
            if sv is not None:
                savers.append(sv)
        return cls(tuple(loaders), tuple(savers))


def filter_pattern(
    isax: aq.IsaxOp, ext: aq.ExtensionOp, layouts: StateLayouts | None = None
) -> Filter | str:
    """The stateful filter pattern of ``isax`` with its layout ISAXs (``layouts``, found
    here when not given), or why it is none."""
    try:
        fx, state = isax_state_effects(isax, ext)
    except Unsupported as e:
        return str(e)
    name = isax.sym_name.data
    if fx.reads or fx.writes:
        return "a stateful ISAX that also accesses memory"
    if not state:
        return "an ISAX that reads unit state without updating it"
    rd = fx.results[0] if fx.results else None
    terms = [*state.values(), *([rd] if rd is not None else [])]
    read = set().union(*(_state_vars(t) for t in terms))
    operands = tuple(
        r for r in REGS if any(v.val == r for t in terms for v in variables(t) if v.op == "var")
    )
    carried = tuple(sorted(state))
    coefficients = tuple(sorted(read - set(state)))
    layouts = layouts or StateLayouts.of(ext)
    loaders = [(lay, consts) for lay, consts in layouts.loaders if lay.isax != name]
    savers = [lay for lay in layouts.savers if lay.isax != name]
    saver = next((s for s in savers if s.registers == set(carried)), None)
    if saver is None:
        return (
            f"no ISAX of the extension saves the state {name} updates "
            f"({', '.join('@' + r for r in carried)}) to memory"
        )
    restorer = next(
        (
            lay
            for lay, consts in loaders
            if lay.registers == set(carried) and not consts and set(lay.slots) == set(saver.slots)
        ),
        None,
    )
    if restorer is None:
        return (
            f"no ISAX of the extension restores the state {name} updates from the layout "
            f"{saver.isax} saves"
        )
    loader = None
    if coefficients:
        loader = next(
            (lay for lay, _ in loaders if set(coefficients) <= lay.registers and lay != restorer),
            None,
        )
        if loader is None:
            return (
                f"no ISAX of the extension loads the state {name} reads "
                f"({', '.join('@' + r for r in coefficients)}) from memory"
            )
    return Filter(name, operands, carried, coefficients, dict(state), rd, loader, restorer, saver)


def scratchpad_loader(ext: aq.ExtensionOp, spm: str, user: aq.IsaxOp) -> str | None:
    """An ISAX (not ``user``) whose only effect is filling all of scratchpad ``spm`` by one
    burst from ``rs1`` (``fir_load_taps``)."""
    size = next((s.size for s in ext.scratchpads() if s.sym_name.data == spm), None)
    for other in ext.isaxs():
        if other is user or "rd" in other.used:
            continue
        moves = aq.BurstReadOp | aq.BurstWriteOp | aq.SpmWriteOp | aq.StateWriteOp | aq.StoreOp
        ops = [o for o in other.walk() if isinstance(o, moves)]
        if len(ops) != 1 or not isinstance(ops[0], aq.BurstReadOp):
            continue
        b = ops[0]
        if b.scratchpad.root_reference.data != spm or b.length_value != size:
            continue
        try:
            fx = isax_effects(other, ext)
        except Unsupported:
            continue
        if fx.writes or fx.results or any(_rs1_offset(a.addr) is None for a in fx.reads):
            continue
        if sorted(_rs1_offset(a.addr) or 0 for a in fx.reads)[0] != 0:
            continue
        return other.sym_name.data
    return None


def preloaded_effects(
    isax: aq.IsaxOp, ext: aq.ExtensionOp, spm: str, budget: int = 200_000
) -> Effects:
    """The memory-level semantics of ``isax`` when scratchpad ``spm`` was filled from
    memory at ``rs3`` (a register of the loader, bound like rs1/rs2) right before it."""
    ex = Executor(budget=budget)
    ex.declare_spms(ext)
    w, n = ex.spm_width[spm], ex.spm_size[spm]
    base = var(PRELOAD_REG, ADDR_W)
    ex.spm[spm] = [ex.mem.peek(binop("add", base, const(ADDR_W, k * w // 8)), w) for k in range(n)]
    ex.spm_image[spm] = (base, w)
    ex.run_ops(isax.body.block.ops)
    return ex.effects()


PRELOAD_REG = "rs3"  # the loader's rs1 in a preloaded pattern (bound like rs1/rs2)


__all__ = [
    "PRELOAD_REG",
    "Filter",
    "Layout",
    "StateLayouts",
    "filter_pattern",
    "preloaded_effects",
    "scratchpad_loader",
]
