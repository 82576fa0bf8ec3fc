"""ISAX patterns for the matcher: each ISAX of an extension summarised by symbolic
execution (its effects over rs1/rs2), classified as a register ISAX (no memory), a memory
ISAX (rs1/rs2 only as addresses) or unsupported with the reason; and the reasons a region
is rejected for (the categories ``--explain`` reports)."""

from __future__ import annotations

from dataclasses import dataclass

from aquas.dialects import aquas as aq
from aquas.egraph.accum import Accumulator, accumulator_pattern
from aquas.egraph.semantics import (
    Access,
    Effects,
    StateAccess,
    Unsupported,
    isax_effects,
    unchanged_extension,
)
from aquas.egraph.stateful import (
    Filter,
    StateLayouts,
    filter_pattern,
    preloaded_effects,
    scratchpad_loader,
)
from aquas.egraph.terms import Term

# Reasons (the categories ``--explain`` reports)
BOUND = "bound mismatch"
SHAPE = "footprint mismatch"
VALUE = "value mismatch"
RULE = "missing rule"
TYPE = "type mismatch"
DEPENDENCE = "dependence"
LIVEOUT = "live-out"
PROFIT = "not profitable"
UNSUPPORTED = "unsupported"
FINAL = "final check"  # the rewrite differs from the original when run (egraph/finalcheck.py)
TARGET = "not routed"  # the target core does not route the ISAX's opcode


# ---------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------


@dataclass
class Pattern:
    extension: str
    name: str
    kind: str  # "memory" | "register" | "stateful" | "unsupported"
    why: str = ""
    fx: Effects | None = None
    latency: int = 0  # cycles of one invocation at the platform's memory latency
    maintenance: int = 0  # cycles of the cache maintenance after a call (runtime.coherence)
    has_rd: bool = False
    uses: tuple[str, ...] = ()
    funct7: int = 0
    opcode: int = 0  # the major opcode (custom-0..3) the ISAX is encoded on
    reencode_error: str = ""  # why the extension could not move into the routed opcodes
    # an accumulator ISAX (egraph/accum.py): its unit state stands for a program variable,
    # its register operands are words loaded from the pattern's addresses
    accumulator: Accumulator | None = None
    # a stateful filter ISAX (egraph/stateful.py): its state registers stand for memory
    # that a loop reads and writes back every iteration, loaded and saved by other ISAXs
    filter: Filter | None = None
    # the ISAX that fills the scratchpad this one reads as unit state, called right before
    # it with rs1 = the pattern's rs3 (egraph/stateful.py preloaded_effects: fir_load_taps)
    preload: str | None = None

    @property
    def rd(self) -> Term | None:
        return self.fx.results[0] if self.fx and self.fx.results else None

    def bases(self) -> dict[str, list[Access]]:
        """Register name -> the accesses addressed off it (memory ISAXs)."""
        out: dict[str, list[Access]] = {}
        assert self.fx is not None
        for a in self.fx.reads + self.fx.writes:
            if len(a.lin.terms) == 1 and a.lin.terms[0][1] == 1:
                out.setdefault(str(a.lin.terms[0][0].val), []).append(a)
        return out


def patterns_of(ext: aq.ExtensionOp, latencies: dict[str, tuple[int, int]]) -> list[Pattern]:
    """Every ISAX of ``ext`` as a pattern (or with the reason it cannot be one)."""
    with unchanged_extension(ext):
        return _patterns_of(ext, latencies)


def _patterns_of(ext: aq.ExtensionOp, latencies: dict[str, tuple[int, int]]) -> list[Pattern]:
    summaries: dict[str, Effects | Unsupported] = {}
    for isax in ext.isaxs():
        try:
            summaries[isax.sym_name.data] = isax_effects(isax, ext)
        except Unsupported as e:
            summaries[isax.sym_name.data] = e
    # scratchpads some ISAX reads before writing carry state between ISAXs
    state = {
        e.scratchpad
        for e in summaries.values()
        if isinstance(e, StateAccess) and e.scratchpad is not None
    }
    out = []
    layouts: StateLayouts | None = None  # found on the first filter candidate
    for isax in ext.isaxs():
        name = isax.sym_name.data
        p = Pattern(
            ext.sym_name.data, name, "unsupported", uses=tuple(isax.used), funct7=isax.funct7_value
        )
        p.has_rd = "rd" in isax.used
        p.opcode = isax.opcode_value
        p.latency = latencies.get(name, (0, 0))[1]
        written = sorted(
            op.scratchpad.root_reference.data
            for op in isax.walk()
            if isinstance(op, aq.BurstReadOp | aq.SpmWriteOp)
            and op.scratchpad.root_reference.data in state
        )
        fx = summaries[name]
        if isinstance(fx, StateAccess) and fx.scratchpad is None:
            acc = accumulator_pattern(isax, ext)
            filt: Filter | str | None = None
            if isinstance(acc, str):
                layouts = layouts or StateLayouts.of(ext)
                filt = filter_pattern(isax, ext, layouts)
            if isinstance(filt, Filter):
                p.kind, p.filter = "stateful", filt
            elif isinstance(acc, str):
                p.why = str(fx)
            else:
                p.fx, p.accumulator = acc
                p.kind, p.why = pattern_kind(p.fx)
        elif isinstance(fx, StateAccess) and fx.scratchpad is not None and not written:
            loader = scratchpad_loader(ext, fx.scratchpad, isax)
            pre: Effects | Unsupported | None = None
            if loader is not None:
                try:
                    pre = preloaded_effects(isax, ext, fx.scratchpad)
                except Unsupported as e:
                    pre = e
            if isinstance(pre, Effects):
                p.fx, p.preload = pre, loader
                p.kind, p.why = pattern_kind(pre)
                p.latency += latencies.get(loader or "", (0, 0))[1]  # one load per call
            else:
                p.why = str(fx)
        elif isinstance(fx, Unsupported):
            p.why = str(fx)
        elif written:
            p.why = f"writes scratchpad {written[0]}, which other ISAXs read as unit state"
        else:
            p.fx = fx
            p.kind, p.why = pattern_kind(fx)
        out.append(p)
    for p in out:  # the ISAXs a filter's state goes through: emitted with it
        if p.filter is not None:
            for q in out:
                if q.name in p.filter.isaxs and q is not p and q.kind == "unsupported":
                    q.why = (
                        f"moves the unit state of {p.name} (emitted around {p.name} loops); {q.why}"
                    )
    return out


def pattern_kind(fx: Effects) -> tuple[str, str]:
    """ "register" (no memory), "memory" (rs1/rs2 only as addresses) or why neither."""
    if not fx.reads and not fx.writes:
        return "register", ""
    regs = {"rs1", "rs2"}
    data_vars: set[str] = set()
    for t in [*fx.results, *(w.value for w in fx.writes if w.value is not None)]:
        data_vars |= {str(v.val) for v in data_variables(t)}
    if data_vars & regs:
        return "unsupported", "uses a register operand both as data and as an address"
    return "memory", ""


def data_variables(t: Term) -> set[Term]:
    """Variables reachable without going through a load's address."""
    out: set[Term] = set()
    stack, seen = [t], set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.op == "var":
            out.add(n)
        elif n.op != "load":
            stack.extend(n.args)
    return out
