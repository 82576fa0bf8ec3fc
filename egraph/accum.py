"""Accumulator ISAXs as patterns: unit state standing for a program variable.

An ISAX with internal state has no memory-level equivalent in general. One family does:
the *accumulator*, a state register ``s`` that the ISAX updates as ``s += E(rs1, rs2)``
and returns (``rd = s``), paired with a *preload* ISAX of the same extension that sets
``s = rs1`` (``dot4_i8`` with ``dot4_clr`` in the LLM extension). A C loop carrying a
variable ``acc += ...`` over chunks of ``E`` then becomes::

    preload(acc);                 // the state now holds the program's acc
    for (each whole chunk)
        acc = accumulate(...);    // the state and acc stay equal after every call

and the remainder runs in software on ``acc``. Nothing else can touch the state in
between: the calls are the whole body of the emitted loop (a region never spans a call),
and the preload sits right before it.

Register operands that pack narrow lanes (``rs1[15:8]`` is lane 1 of four i8 lanes) come
from memory: a lane ``k`` of ``w`` bits is the little-endian element at byte ``k * w / 8``
of the word the register is loaded from. The pattern is therefore stated over memory, with
``rs1``/``rs2`` as the addresses of those words, and the matcher binds them like any
memory pattern's bases; the emitter loads the words (``aquas_ld32``) under a run-time
alignment guard.
"""

from __future__ import annotations

from dataclasses import dataclass

from aquas.dialects import aquas as aq
from aquas.egraph.semantics import ADDR_W, Effects, SymMemory, Unsupported, isax_state_effects
from aquas.egraph.terms import Term, binop, const, mk, var, variables

REGS = ("rs1", "rs2")


@dataclass(frozen=True)
class Accumulator:
    state: str  # the unit state register
    preload: str  # the ISAX that sets it from rs1
    operands: tuple[str, ...]  # the register operands, each loaded from memory as a word


def _increment(total: Term, entry: Term) -> Term | None:
    """``E`` when ``total`` is ``entry + E`` with ``E`` free of ``entry``."""
    if total.op != "add":
        return None
    a, b = total.args
    for x, rest in ((a, b), (b, a)):
        if x is entry and entry not in variables(rest):
            return rest
    return None


def _lanes_from_memory(t: Term, mem: SymMemory, memo: dict[int, Term]) -> Term:
    """``t`` with every lane extraction of a register (``trunc_w(rs)`` or
    ``trunc_w(rs >> c)``, ``c`` a multiple of ``w``, ``w`` 8 or 16) replaced by the load
    of that lane from the word at address ``rs``."""
    got = memo.get(id(t))
    if got is not None:
        return got
    out = t
    if t.op == "trunc" and t.w in (8, 16):
        x, shift = t.args[0], 0
        if x.op == "shru" and x.args[1].op == "const":
            x, shift = x.args[0], int(x.args[1].val)
        if x.op == "var" and x.val in REGS and x.w == 32 and shift % t.w == 0 and shift < 32:
            addr = binop("add", var(str(x.val), ADDR_W), const(ADDR_W, shift // 8))
            out = mem.peek(addr if shift else var(str(x.val), ADDR_W), t.w)
    if out is t and t.args:
        args = tuple(_lanes_from_memory(a, mem, memo) for a in t.args)
        if any(n is not o for n, o in zip(args, t.args, strict=True)):
            out = mk(t.op, t.w, args, t.val)
    memo[id(t)] = out
    return out


def accumulator_pattern(isax: aq.IsaxOp, ext: aq.ExtensionOp) -> tuple[Effects, Accumulator] | str:
    """The memory-level pattern of an accumulator ISAX and its state, or why ``isax`` is
    not one."""
    try:
        fx, state = isax_state_effects(isax, ext)
    except Unsupported as e:
        return str(e)
    if fx.reads or fx.writes:
        return "an ISAX with internal state that also accesses memory"
    if len(state) != 1 or len(fx.results) != 1:
        return "an ISAX with internal state that is not one accumulator returned in rd"
    (name, total), rd = next(iter(state.items())), fx.results[0]
    entry = var(f"state@{name}", total.w)
    inc = _increment(total, entry)
    if rd is not total or inc is None or total.w != 32:
        return f"state @{name} is not updated as @{name} += f(rs1, rs2) and returned in rd"
    preload = _preload_of(ext, name, isax)
    if preload is None:
        return f"no ISAX of the extension sets state @{name} from rs1 (a preload)"
    mem = SymMemory()
    lanes = _lanes_from_memory(inc, mem, {})
    used = sorted(str(v.val) for v in variables(inc) if v.val in REGS)
    if _register_data(lanes):
        return "a register operand is used other than as packed 8- or 16-bit lanes"
    out = Effects(
        reads=mem.reads,
        results=[lanes],
        ops=fx.ops,
        muls=fx.muls,
        divs=fx.divs,
        folded=fx.folded,
    )
    return out, Accumulator(name, preload, tuple(used))


def _register_data(t: Term) -> bool:
    """Whether ``t`` uses rs1/rs2 as a value (not only inside a load's address)."""
    stack, seen = [t], set()
    while stack:
        n = stack.pop()
        if id(n) in seen or n.op == "load":
            continue
        seen.add(id(n))
        if n.op == "var" and n.val in REGS:
            return True
        stack.extend(n.args)
    return False


def _preload_of(ext: aq.ExtensionOp, name: str, acc: aq.IsaxOp) -> str | None:
    """An ISAX whose only effect is ``@name = rs1`` (it may return the old value)."""
    for other in ext.isaxs():
        if other is acc:
            continue
        try:
            fx, state = isax_state_effects(other, ext)
        except Unsupported:
            continue
        entry = var(f"state@{name}", 32)
        if fx.reads or fx.writes or set(state) != {name}:
            continue
        if state[name] is var("rs1", 32) and all(r is entry for r in fx.results):
            return other.sym_name.data
    return None


__all__ = ["Accumulator", "accumulator_pattern"]
