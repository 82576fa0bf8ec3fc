"""Equivalence of two versions of an extension on the golden interpreter, over random
sequences of invocations that share state (a plan or a naive spec may keep data in other
scratchpads or state registers, so only what the core sees is compared: rd and memory)."""

from __future__ import annotations

import random

from xdsl.dialects.builtin import ModuleOp

from aquas.dialects import aquas as aq
from aquas.interpreter import ExecError, IsaxState, Memory, NoiseMemory, execute, find_extension


def operands(rng: random.Random, alias: bool) -> tuple[int, int]:
    """Aligned buffers, sometimes odd or extreme values. With ``alias``, rs2 often points
    into rs1's buffer (what a plan must not reorder); without, the buffers are apart (the
    contract the example specs document, under which a naive spec matches the original)."""
    odd = [0, 1, 2, 0xFFFFFF00, 0x80000000, 0x90000001]
    if alias and rng.random() < 0.1:
        return rng.choice(odd), rng.choice(odd)
    rs1 = rng.randrange(0x1000, 0x80000) & ~0xFF
    if rng.random() < 0.1:
        rs1 = rng.choice(odd)
    if alias and rng.random() < 0.5:
        return rs1, (rs1 + 4 * rng.randrange(-24, 24)) & 0xFFFFFFFF
    rs2 = rng.randrange(0x1000, 0x80000) & ~0xFF
    while abs(rs2 - rs1) < 0x400:
        rs2 = rng.randrange(0x1000, 0x80000) & ~0xFF
    return rs1, rs2


def _visible(mem: Memory, written: set[int]) -> dict[int, int]:
    return {a: mem.read(a, 1) for a in sorted(written)}


def _run(isax: aq.IsaxOp, rs1: int, rs2: int, mem: Memory, st: IsaxState):  # type: ignore[no-untyped-def]
    try:
        return execute(isax, rs1, rs2, mem, st)
    except ExecError:
        return None


def assert_same_behaviour(
    a: ModuleOp, b: ModuleOp, calls: int, seed: int, alias: bool = True
) -> int:
    """Runs the same random calls on both; returns how many calls completed without an
    interpreter error (both must error on the same calls)."""
    ea, eb = find_extension(a), find_extension(b)
    ia = {i.sym_name.data: i for i in ea.isaxs()}
    ib = {i.sym_name.data: i for i in eb.isaxs()}
    assert sorted(ia) == sorted(ib)
    names = sorted(ia)
    rng = random.Random(seed)
    sa, sb = IsaxState.reset(ea), IsaxState.reset(eb)
    mem = NoiseMemory(seed)
    ok = 0
    for k in range(calls):
        name = rng.choice(names)
        rs1, rs2 = operands(rng, alias and aq.NOALIAS_ATTR not in ia[name].attributes)
        ma, mb = mem.copy(), mem.copy()
        ra = _run(ia[name], rs1, rs2, ma, sa)
        rb = _run(ib[name], rs1, rs2, mb, sb)
        where = f"call {k}: {name}(rs1={rs1:#x}, rs2={rs2:#x})"
        assert (ra is None) == (rb is None), f"{where}: only one version failed"
        if ra is None or rb is None:
            continue
        ok += 1
        assert ra.rd == rb.rd, f"{where}: rd {ra.rd} != {rb.rd}"
        written = {w.addr + i for r in (ra, rb) for w in r.writes for i in range(w.size)}
        assert _visible(ma, written) == _visible(mb, written), f"{where}: memory differs"
        sa, sb = ra.state, rb.state
        mem = ma
    return ok
