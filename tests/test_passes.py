"""Registered passes: before/after IR shape, and semantic equivalence on the golden
interpreter (every pass must leave every ISAX computing the same results)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from xdsl.dialects import scf

from aquas.cli import make_context, print_ir
from aquas.dialects import aquas as aq
from aquas.interpreter import ExecError, IsaxState, Memory, NoiseMemory, execute, find_extension
from aquas.passes import PASSES, parse_pipeline
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.prepare import unobservable_storage, unread_states

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").rglob("*.isax"))


def operand(rng: random.Random) -> int:
    if rng.random() < 0.5:
        return rng.randrange(0x1000, 0x80000) & ~0x3F  # an aligned base address
    return rng.choice([0, 1, 0xFFFFFFFF, 0x80000000, rng.getrandbits(32), rng.getrandbits(16)])


def outcome(
    isax: aq.IsaxOp,
    rs1: int,
    rs2: int,
    mem: Memory,
    st: IsaxState,
    hidden: frozenset[str] = frozenset(),
) -> object:
    try:
        r = execute(isax, rs1, rs2, mem, st)
    except ExecError as e:
        return ("error", str(e))
    regs = {k: v for k, v in r.state.regs.items() if k not in hidden}
    spms = {k: v for k, v in r.state.spms.items() if k not in hidden}
    return (r.rd, r.writes, regs, spms)


def assert_equivalent(
    src_module_a, src_module_b, cases: int, seed: int, observable: bool = False
) -> None:  # type: ignore[no-untyped-def]
    """Same results, memory writes and storage on random operands and memory.
    ``observable``: storage no later call can observe is not compared, as co-simulation
    does not compare it (``prepare.unread_states``: states the prepared ISAXs never read,
    e.g. one every call clears before reading; ``prepare.unobservable_storage``: contents
    that reach nothing observable); the flow's preparation drops their writes
    (``aquas-drop-unobservable``)."""
    ea, eb = find_extension(src_module_a), find_extension(src_module_b)
    hidden = frozenset()
    if observable:
        hidden = frozenset(unread_states(src_module_a) | unobservable_storage(ea))
    rng = random.Random(seed)
    for ia, ib in zip(ea.isaxs(), eb.isaxs(), strict=True):
        assert ia.sym_name == ib.sym_name
        st = IsaxState.reset(ea)
        for k in range(cases):
            rs1, rs2 = operand(rng), operand(rng)
            for name in st.regs:
                st.regs[name] = rng.getrandbits(64) & st.regs[name] | rng.getrandbits(8)
            mem = NoiseMemory(seed * 1000 + k)
            oa = outcome(ia, rs1, rs2, mem.copy(), st, hidden)
            ob = outcome(ib, rs1, rs2, mem.copy(), st, hidden)
            assert oa == ob, f"{ia.sym_name.data}: rs1={rs1:#x} rs2={rs2:#x}"


def apply(module, pipeline: str):  # type: ignore[no-untyped-def]
    parse_pipeline(pipeline).apply(make_context(), module)
    module.verify()
    return module


def test_registry_lists_the_passes() -> None:
    assert {"aquas-unroll", "aquas-if-convert", "aquas-schedule", "canonicalize", "cse"} <= set(
        PASSES
    )
    assert "dce" in PASSES
    with pytest.raises(ValueError, match="Unrecognized passes"):
        parse_pipeline("nonsense")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
@pytest.mark.parametrize(
    "pipeline",
    [
        "aquas-unroll",
        "aquas-unroll{full=true}",
        "canonicalize,cse",
        "aquas-unroll,canonicalize,cse,dce",
        "aquas-if-convert",
        # what `aquas synth` runs, then the schedule annotations
        "aquas-unroll,canonicalize,cse,aquas-if-convert,canonicalize,cse,dce,aquas-schedule",
    ],
)
def test_pipelines_preserve_semantics(path: Path, pipeline: str) -> None:
    before = lower_spec_file(path)
    after = apply(lower_spec_file(path), pipeline)
    if "aquas-unroll" in pipeline:
        loops = [o for o in after.walk() if isinstance(o, scf.ForOp)]
        assert not any(aq.UNROLL_ATTR in o.attributes for o in loops)
        if "full=true" in pipeline:
            assert loops == []
    if "aquas-if-convert" in pipeline:
        for op in after.walk():
            if isinstance(op, scf.IfOp):  # only ifs with side effects remain
                assert any(not o.name.startswith(("arith.", "scf.")) for o in op.walk())
    if "aquas-schedule" in pipeline:
        assert any("aquas.state" in o.attributes for o in after.walk())
    assert_equivalent(before, after, cases=40, seed=len(path.name))


IF_SRC = """
state acc: u32 = 0;
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd {
    var v: u32 = rs1;
    if rs1 < rs2 {
        v = rs2 - rs1;
        if rs2 > 100 { v = v * 3; }
    } else {
        v = rs1 ^ rs2;
    }
    if v > 50 { acc = acc + v; }
    return v + acc;
}
"""


def test_if_convert_keeps_semantics_and_only_the_side_effecting_if() -> None:
    before = lower_spec(IF_SRC, "if.isax")
    after = apply(lower_spec(IF_SRC, "if.isax"), "aquas-if-convert")
    assert sum(isinstance(o, scf.IfOp) for o in before.walk()) == 3
    (kept,) = [o for o in after.walk() if isinstance(o, scf.IfOp)]
    assert any(isinstance(o, aq.StateWriteOp) for o in kept.walk())
    assert sum(o.name == "arith.select" for o in after.walk()) == 2
    isax = next(find_extension(after).isaxs())
    # (rs1, rs2) -> rd from the reset state, by hand
    cases = {(10, 200): 570 + 570, (10, 50): 40, (7, 3): 4, (0, 101): 303 + 303}
    for (rs1, rs2), rd in cases.items():
        assert execute(isax, rs1, rs2).rd == rd
    assert_equivalent(before, after, cases=200, seed=7)


UNROLL_SRC = """
#[opcode(custom0), funct7(1)]
isax t(rs1) -> rd {
    var s: u32 = 0;
    #[unroll(FACTOR)]
    for i in 3..(3 + TRIP) step 2 { s = s * 31 + i + rs1; }
    return s;
}
"""


@pytest.mark.parametrize(("trip", "factor"), [(8, 4), (7, 3), (5, 5), (1, 1), (9, 2), (6, 1)])
def test_unroll_shapes_and_remainders(trip: int, factor: int) -> None:
    # the loop runs i = 3, 5, ... so `trip` iterations need an upper bound of 3 + 2*trip - 1
    src = UNROLL_SRC.replace("FACTOR", str(factor)).replace("(3 + TRIP)", str(3 + 2 * trip - 1))
    before = lower_spec(src, "u.isax")
    after = apply(lower_spec(src, "u.isax"), "aquas-unroll")
    loops = [o for o in after.walk() if isinstance(o, scf.ForOp)]
    main = trip // factor
    if factor == 1:
        assert len(loops) == (1 if trip > 1 else 0)
    elif factor >= trip:
        assert loops == []
    else:
        assert len(loops) == 1
        body_muls = [o for o in loops[0].body.walk() if o.name == "arith.muli"]
        assert len(body_muls) == factor  # factor copies of `s * 31`
        bounds = [o.owner.value.value.data for o in (loops[0].lb, loops[0].ub, loops[0].step)]  # type: ignore[union-attr]
        assert bounds == [3, 3 + main * factor * 2, 2 * factor]
    if factor == 1 and trip > 1:
        in_loop, peeled = 1, 0  # directive dropped, loop kept
    elif factor >= trip:
        in_loop, peeled = 0, trip  # fully unrolled
    else:
        in_loop, peeled = factor, trip - main * factor
    assert sum(1 for o in after.walk() if o.name == "arith.muli") == in_loop + peeled
    for x in (0, 1, 0xFFFFFFFF, 12345):
        want = 0
        for i in range(3, 3 + 2 * trip, 2):
            want = (want * 31 + i + x) & 0xFFFFFFFF
        assert execute(next(find_extension(after).isaxs()), x).rd == want
        assert execute(next(find_extension(before).isaxs()), x).rd == want


def test_unroll_output_round_trips() -> None:
    m = apply(
        lower_spec(UNROLL_SRC.replace("FACTOR", "3").replace("(3 + TRIP)", "16"), "u.isax"),
        "aquas-unroll",
    )
    from xdsl.parser import Parser

    text = print_ir(m)
    assert print_ir(Parser(make_context(), text).parse_module()) == text


def test_canonicalize_keeps_aquas_edge_semantics() -> None:
    """Division by zero, MIN/-1 and shift-out are poison in MLIR but defined in aquas: the
    generic passes must not fold them into anything else."""
    src = (Path(__file__).parent / "edge_cases.isax").read_text()
    for pipeline in ("", "canonicalize,cse,dce"):
        m = lower_spec(src, "edge.isax")
        if pipeline:
            apply(m, pipeline)
        isax = next(find_extension(m).isaxs())
        # a=0xFFFFFFFF b=7 c=0x80000000 d=0 e=0xFFFFFFFF f=0xFFFFFFFF g=0, xor-ed
        assert execute(isax, 5).rd == 0x7FFFFFF8
