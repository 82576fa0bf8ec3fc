"""Storage accesses in the scheduling problem (issue 18, defects 1, 3, 5, 6).

Scratchpad and state accesses are ordered only where they may touch the same element;
bank sets come from the affine form of the index; state-update chains are forwarded
into one write; range-constant compares fold; Verilator's summary line is no warning."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Operation
from xdsl.parser import Parser

from aquas import intops
from aquas.context import make_context
from aquas.dialects import aquas as aq
from aquas.interpreter import IsaxState, execute, find_extension
from aquas.spec.frontend import lower_spec
from aquas.synth.flow import isax_latencies, schedule_isaxs
from aquas.synth.fsm import FREE_OPS, affine_index, segment_problem, spm_banks
from aquas.synth.lint import warning_lines
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.prepare import forward_state, prepare, unread_states
from aquas.synth.schedule import Access, Affine, Schedule, SchedulingProblem, list_schedule
from aquas.synth.timing import OVERHEAD_LEVELS, op_delay

ROOT = Path(__file__).resolve().parents[1]
LIB = OperatorLibrary.load()
L = 12

W16 = """
extension w;
scratchpad d: [u32; 16] partition(cyclic, 16);
#[opcode(custom0), funct7(0)]
isax w16(rs1) { #[unroll] for i in 0..16 { d[i] = rs1 + i; } }
// reads d back, so its writes are observable (else synthesis drops them)
#[opcode(custom0), funct7(1)]
isax r(rs1) -> rd { return d[rs1 & 15]; }
"""


def ops_of(src: str, isax: str, kind: type[Operation]) -> list[Operation]:
    module = lower_spec(src, "s.isax")
    prepare(module)
    return [o for o in module.walk() if isinstance(o, kind) and _in_isax(o, isax)]


def _in_isax(op: Operation, name: str) -> bool:
    p = op.parent_op()
    while p is not None and not isinstance(p, aq.IsaxOp):
        p = p.parent_op()
    return p is not None and p.sym_name.data == name


# -- defect 1: the repro and the examples --------------------------------------------------


def test_sixteen_writes_to_sixteen_banks_share_one_state() -> None:
    lat = isax_latencies(lower_spec(W16, "w.isax"), 10.0, L)
    assert lat["w16"] == (2, 2)  # one state plus the dispatch cycle (was 17)


def _pointcloud_with_unroll(factor: int) -> str:
    """The point-cloud spec with v3ddist's and vcovmat3d's loops unrolled by ``factor``
    over flip-flop scratchpads of 4 banks (the spec pipelines them over SRAM banks)."""
    text = (ROOT / "examples" / "pointcloud" / "pointcloud.isax").read_text()
    loop = "#[pipeline]\n    for i in 0..16"
    assert text.count(loop) == 2  # v3ddist and vcovmat3d
    for name in ("pa", "pb"):
        sram = f"scratchpad {name}: [u32; 48] partition(cyclic, 3) impl(sram);"
        assert sram in text
        text = text.replace(sram, f"scratchpad {name}: [u32; 48] partition(cyclic, 4);")
    return text.replace(loop, f"#[unroll({factor})]\n    for i in 0..16")


def test_unrolling_vcovmat3d_further_makes_it_faster() -> None:
    by_factor = {
        f: isax_latencies(lower_spec(_pointcloud_with_unroll(f), "p.isax"), 10.0, L)
        for f in (1, 2, 4)
    }
    cov = {f: lat["vcovmat3d"][0] for f, lat in by_factor.items()}
    assert cov[4] < cov[2] < cov[1], cov
    dist = {f: lat["v3ddist"][0] for f, lat in by_factor.items()}
    assert dist[4] < dist[2] < dist[1], dist


CONST_WRITES = """
extension c;
scratchpad d: [u32; 8] partition(cyclic, 4);
#[opcode(custom0), funct7(0)]
isax t(rs1, rs2) -> rd {
    d[1] = rs1;
    d[1] = rs2;
    d[2] = rs1 + rs2;
    return d[1];
}
"""


def _segment(
    src: str, clock: float = 10.0, prepared: bool = True
) -> tuple[SchedulingProblem, Schedule]:
    module = lower_spec(src, "s.isax")
    if prepared:
        prepare(module)
    (isax,) = find_extension(module).isaxs()
    ops = [o for o in isax.body.block.ops if not isinstance(o, FREE_OPS)]
    problem = segment_problem(
        ops, lambda o: op_delay(LIB, o), clock, clock - OVERHEAD_LEVELS * LIB.ns_per_level
    )
    problem.check()
    return problem, list_schedule(problem)


def test_writes_to_one_element_are_ordered_and_other_banks_share_the_cycle() -> None:
    problem, sched = _segment(CONST_WRITES)
    w1, w2, w3 = [o for o in problem.operations if isinstance(o, aq.SpmWriteOp)]
    (r,) = [o for o in problem.operations if isinstance(o, aq.SpmReadOp)]
    assert [sched.cycle[o] for o in (w1, w2, w3, r)] == [0, 1, 0, 2]
    assert problem.verify(sched) == []
    # a hand-made schedule with both writes of d[1] in one cycle
    bad = Schedule.chained(problem, {**sched.cycle, w2: 0})
    found = {(v.kind, v.ops) for v in problem.verify(bad)}
    assert ("access", (w1, w2)) in found
    assert ("dependence", (w1, w2)) in found
    assert any(k == "resource" and set(o) == {w1, w2} for k, o in found)  # bank 1's port


def test_verify_checks_the_accesses_without_the_derived_dependences() -> None:
    problem, sched = _segment(CONST_WRITES)
    _w1, w2, _ = [o for o in problem.operations if isinstance(o, aq.SpmWriteOp)]
    (r,) = [o for o in problem.operations if isinstance(o, aq.SpmReadOp)]
    problem.dependences.clear()
    problem.uses = {o: () for o in problem.operations}
    assert problem.verify(sched) == []
    bad = Schedule.chained(problem, {**sched.cycle, r: sched.cycle[w2]})
    (v,) = problem.verify(bad)
    assert v.kind == "access" and v.ops == (w2, r)
    assert "may touch the element of @d that aquas.spm_write" in v.message


DYN_PAIRS = """
extension p;
scratchpad e: [u32; 16] partition(cyclic, 2);
#[opcode(custom0), funct7(0)]
isax t(rs1, rs2) -> rd {
    for i in 0..8 {
        e[2 * i] = rs1 + i;
        e[2 * i + 1] = rs2 ^ i;
    }
    return e[rs1 & 15];
}
"""


def test_dynamic_writes_to_distinct_elements_share_a_cycle() -> None:
    writes = ops_of(DYN_PAIRS, "t", aq.SpmWriteOp)
    assert [spm_banks(w) for w in writes] == [{0}, {1}]
    module = lower_spec(DYN_PAIRS, "s.isax")
    builder, fsms = schedule_isaxs(module, 10.0, LIB)
    body = [
        (p, s)
        for p, s in builder.schedules
        if any(isinstance(o, aq.SpmWriteOp) for o in p.operations)
    ]
    ((_problem, sched),) = body
    assert sched.length == 1  # was 2: the writes were ordered by the scratchpad's name
    # loop set-up, 8 one-state iterations, the final read (was 1 + 8 * 2 + 1)
    assert fsms[0].latency.at(L) == (10, 10)


def test_access_overlap_follows_the_affine_index() -> None:
    i, j = object(), object()

    def acc(const: int, terms: dict[object, int] | None, banks: set[int], write: bool) -> Access:
        index = None if terms is None else Affine.make(const, dict(terms), 32)
        return Access("a", frozenset(banks), write, index, 16)

    a_i = acc(0, {i: 1}, {0, 1}, True)
    assert not a_i.may_overlap(acc(1, {i: 1}, {0, 1}, True))  # a[i] vs a[i+1]
    assert a_i.may_overlap(acc(16, {i: 1}, {0, 1}, False))  # a[i] vs a[i+16]: aliases
    assert a_i.may_overlap(acc(1, {j: 1}, {0, 1}, False))  # different variables
    assert a_i.may_overlap(acc(0, None, {0, 1}, False))  # unknown index
    assert not a_i.may_overlap(acc(0, None, {2}, False))  # disjoint banks
    assert a_i.conflicts(acc(0, {i: 1}, {0, 1}, False))  # write, then read of a[i]
    r = acc(0, {i: 1}, {0, 1}, False)
    assert not r.conflicts(acc(0, {i: 1}, {0, 1}, False))  # two reads never conflict
    assert Access("s", frozenset({0}), True).conflicts(Access("s", frozenset({0}), False))
    assert not Access("s", frozenset({0}), True).conflicts(Access("t", frozenset({0}), True))


# -- defect 3: the banks of a dynamic index ------------------------------------------------

STRIDED = """
extension s;
scratchpad a: [u32; 16] partition(cyclic, 4);
#[opcode(custom0), funct7(0)]
isax t(rs1) -> rd {
    burst a[0 +: 16] <- mem[rs1];
    var s: u32 = 0;
    for i in 0..4 { s += a[4 * i + 1] ^ a[4 * i + 3]; }
    return s + a[rs1 & 15] + a[2 * rs1];
}
"""


def test_a_stride_of_the_partition_factor_touches_one_bank() -> None:
    reads = ops_of(STRIDED, "t", aq.SpmReadOp)
    assert [spm_banks(r) for r in reads] == [{1}, {3}, {0, 1, 2, 3}, {0, 2}]
    module = lower_spec(STRIDED, "s.isax")
    builder, _ = schedule_isaxs(module, 10.0, LIB)
    loop_body = next(
        s for p, s in builder.schedules if any(isinstance(o, aq.SpmReadOp) for o in p.operations)
    )
    assert loop_body.length == 1  # both reads in one cycle (was 2: every bank each)


def test_the_induction_variable_is_its_lower_bound_plus_a_multiple_of_the_step() -> None:
    # after aquas-unroll(4), pa[3*i + 3] reads 3*(4t) + 3: bank 3 of 4, whatever t is
    reads = ops_of(_pointcloud_with_unroll(4), "vcovmat3d", aq.SpmReadOp)
    assert len(reads) == 12
    assert [sorted(spm_banks(r)) for r in reads] == [[k % 4] for k in range(12)]
    form = affine_index(reads[4].index)  # type: ignore[attr-defined]
    assert form.const == 4 and sorted(k for _, k in form.terms) == [12]


XYZ = """
extension x;
scratchpad p: [u32; 48] partition(cyclic, 3);
#[opcode(custom0), funct7(0)]
isax t(rs1) -> rd {
    burst p[0 +: 48] <- mem[rs1];
    var s: u32 = 0;
    for j in 0..16 { s += p[3 * j] ^ p[3 * j + 1] ^ p[3 * j + 2] ^ p[2 * j] ^ p[6 * j + 4]; }
    return s + p[rs1 & 15] + p[3 * rs1];
}
"""


def test_a_factor_that_is_not_a_power_of_two_uses_the_loop_bounds() -> None:
    # x, y, z of point j in a cyclic-3 scratchpad: banks 0, 1, 2 whatever j is, because
    # 3j + 2 <= 47 cannot wrap; 2j reaches every bank; 6j + 4 is bank 1. Outside a loop
    # of known trip count (rs1 & 15, 3 * rs1) the index may wrap modulo 2^32, where 3
    # does not divide the modulus: every bank.
    reads = ops_of(XYZ, "t", aq.SpmReadOp)
    assert [sorted(spm_banks(r)) for r in reads] == [
        [0],
        [1],
        [2],
        [0, 1, 2],
        [1],
        [0, 1, 2],
        [0, 1, 2],
    ]
    module = lower_spec(XYZ, "x.isax")
    builder, _ = schedule_isaxs(module, 10.0, LIB)
    loop_body = next(
        s
        for p, s in builder.schedules
        if sum(isinstance(o, aq.SpmReadOp) for o in p.operations) == 5
    )
    # one cycle for 3j, 3j+1 and 3j+2 (one port per bank), one for 6j + 4 (bank 1 again),
    # one for 2j (any bank); was 5, every read using every bank
    assert loop_body.length == 3


# -- state updates -------------------------------------------------------------------------

STATE4 = """
extension st;
state acc: u32 = 0;
state cnt: u32 = 0;
#[opcode(custom0), funct7(0)]
isax upd4(rs1, rs2) -> rd {
    #[unroll] for i in 0..4 { acc = acc * 3 + rs1 + i; }
    if rs1 > rs2 { acc += cnt; }
    cnt += rs2;
    acc = acc ^ cnt;
    return acc + cnt;
}
"""


def test_four_state_updates_become_one_read_and_one_write_per_block() -> None:
    module = lower_spec(STATE4, "s.isax")
    prepare(module)
    (isax,) = find_extension(module).isaxs()
    top = list(isax.body.block.ops)
    acc_writes = [
        o for o in top if isinstance(o, aq.StateWriteOp) and o.state.root_reference.data == "acc"
    ]
    acc_reads = [
        o for o in top if isinstance(o, aq.StateReadOp) and o.state.root_reference.data == "acc"
    ]
    # before the if: one write (the unrolled chain); after it: one read, one write
    assert len(acc_writes) == 2 and len(acc_reads) == 2
    assert len([o for o in top if isinstance(o, aq.StateWriteOp)]) == 3


STATE_SEQ = """
extension sq;
state acc: u32 = 0;
#[opcode(custom0), funct7(0)]
isax t(rs1, rs2) -> rd {
    acc = acc + rs1;
    acc = acc ^ rs2;
    acc = acc + 1;
    acc = acc - rs2;
    return acc;
}
"""


def test_two_writes_of_one_state_in_a_cycle_are_rejected() -> None:
    # unprepared: without aquas-forward-state every update writes the register
    problem, sched = _segment(STATE_SEQ, prepared=False)
    writes = [
        o
        for o in problem.operations
        if isinstance(o, aq.StateWriteOp) and o.state.root_reference.data == "acc"
    ]
    assert len(writes) == 4
    assert problem.limits["@acc write port"] == 1
    cycles = [sched.cycle[w] for w in writes]
    assert cycles == sorted(set(cycles))  # one write per cycle, in program order
    bad = Schedule.chained(problem, {**sched.cycle, writes[1]: sched.cycle[writes[0]]})
    kinds = {v.kind for v in problem.verify(bad) if set(v.ops) == {writes[0], writes[1]}}
    assert kinds == {"access", "dependence", "resource"}


@pytest.mark.parametrize(
    "src", [STATE4, STATE_SEQ, DYN_PAIRS, CONST_WRITES], ids=["state", "seq", "pairs", "const"]
)
def test_prepared_ir_computes_what_the_spec_does(src: str) -> None:
    raw = lower_spec(src, "s.isax")
    done = prepare(lower_spec(src, "s.isax"))
    (a,), (b,) = list(find_extension(raw).isaxs()), list(find_extension(done).isaxs())
    rng = random.Random(18)
    st_a = IsaxState.reset(find_extension(raw))
    st_b = st_a.copy()
    for _ in range(300):
        rs1, rs2 = rng.choice([0, 1, 0xFFFFFFFF, rng.getrandbits(32)]), rng.getrandbits(32)
        ra, rb = execute(a, rs1, rs2, state=st_a), execute(b, rs1, rs2, state=st_b)
        assert (ra.rd, ra.state.regs, ra.state.spms) == (rb.rd, rb.state.regs, rb.state.spms)
        st_a, st_b = ra.state, rb.state


def test_forwarding_stops_at_a_loop_or_branch_touching_the_state() -> None:
    module = lower_spec(STATE4, "s.isax")  # not unrolled: the updates stay in a loop
    (isax,) = find_extension(module).isaxs()
    # after the if: cnt's read in `acc ^ cnt`, and acc's and cnt's reads in the return
    assert forward_state(module) == 3
    assert forward_state(module) == 0
    top = list(isax.body.block.ops)
    reads = [o.state.root_reference.data for o in top if isinstance(o, aq.StateReadOp)]
    assert reads == ["cnt", "acc"]  # the ones after the branch, read once each
    loop = next(o for o in top if o.regions and o.name == "scf.for")
    inner = [o.name for o in loop.walk() if isinstance(o, aq.StateReadOp | aq.StateWriteOp)]
    assert inner == ["aquas.state_read", "aquas.state_write"]


def test_a_state_cleared_before_every_read_is_not_kept() -> None:
    """A state whose every read follows a write in the same call never outlives a call:
    it needs no register (the co-simulation then has nothing to compare)."""
    src = (ROOT / "tests" / "sim" / "specs" / "share.isax").read_text()
    assert unread_states(lower_spec(src, "share.isax")) == {"part"}
    # read before it is written in some call: kept
    kept = src.replace("    part = 0;\n", "")
    assert unread_states(lower_spec(kept, "share.isax")) == set()


# -- defect 5: compares constant by the operand's range ------------------------------------

CMP_IR = """
builtin.module {
  aquas.extension @e {
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      %c = arith.constant K : i32
      %p = arith.cmpi P, LHS : i32
      %z = arith.extui %p : i1 to i32
      aquas.write_rd %z : i32
    }
  }
}
"""
EXTREMES = [0, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]


@pytest.mark.parametrize("k", EXTREMES)
@pytest.mark.parametrize("pred", intops.PREDICATES)
@pytest.mark.parametrize("const_left", [False, True])
def test_range_constant_compares_fold_and_keep_their_value(
    pred: str, k: int, const_left: bool
) -> None:
    text = CMP_IR.replace("K", str(intops.to_signed(k, 32))).replace("P", pred)
    text = text.replace("LHS", "%c, %0" if const_left else "%0, %c")
    module = Parser(make_context(), text).parse_module()
    prepare(module)
    left = [o for o in module.walk() if o.name == "arith.cmpi"]
    ends = (0x80000000, 0x7FFFFFFF) if pred[0] == "s" else (0, 0xFFFFFFFF)
    if pred not in ("eq", "ne") and k in ends:
        # folded to a constant, or to == / != against the same constant
        assert all(c.predicate.value.data < 2 for c in left)  # type: ignore[attr-defined]
    else:
        assert [c.predicate.value.data for c in left] == [intops.PREDICATES.index(pred)]  # type: ignore[attr-defined]
    (isax,) = find_extension(module).isaxs()
    for x in [
        0,
        1,
        k,
        (k + 1) & 0xFFFFFFFF,
        (k - 1) & 0xFFFFFFFF,
        0x7FFFFFFF,
        0x80000000,
        0xFFFFFFFF,
        12345,
    ]:
        want = intops.compare(pred, 32, k, x) if const_left else intops.compare(pred, 32, x, k)
        assert execute(isax, x).rd == int(want), (pred, k, const_left, x)


def test_an_unsigned_compare_with_zero_leaves_no_compare() -> None:
    src = """
extension f;
#[opcode(custom0), funct7(0)]
isax f(rs1) -> rd { return rs1 < 0 ? 1 : 0; }
"""
    assert ops_of(src, "f", Operation) and not [
        o for o in ops_of(src, "f", Operation) if o.name == "arith.cmpi"
    ]


# -- defect 6 ------------------------------------------------------------------------------


def test_the_lint_count_leaves_out_verilators_summary() -> None:
    out = (
        "%Warning-UNSIGNED: u.sv:12:20: Comparison is constant due to unsigned arithmetic\n"
        "                                : ... note: In instance 'u'\n"
        "                   ... For warning description see https://example.invalid\n"
        "%Error: Exiting due to 1 warning(s)\n"
    )
    (only,) = warning_lines(out)
    assert only.startswith("%Warning-UNSIGNED: u.sv:12:20:")
    assert warning_lines("%Error: u.sv:3:1: syntax error\n%Error: Exiting due to 1 error(s)\n") == [
        "%Error: u.sv:3:1: syntax error"
    ]


def test_state_updates_cost_what_the_same_updates_on_a_var_cost() -> None:
    on_var = STATE_SEQ.replace("state acc: u32 = 0;", "").replace(
        "isax t(rs1, rs2) -> rd {", "isax t(rs1, rs2) -> rd {\n    var acc: u32 = 0;"
    )
    lat_state = isax_latencies(lower_spec(STATE_SEQ, "s.isax"), 10.0, L)
    lat_var = isax_latencies(lower_spec(on_var, "v.isax"), 10.0, L)
    assert lat_state == lat_var == {"t": (2, 2)}  # one state (was 4 with the state)


# -- the access model is sound: random segments, executed cycle by cycle ------------------


def _cycle_semantics(
    order: list[tuple[str, int, bool]], cycle: list[int]
) -> tuple[list[int | None], dict[tuple[str, int], int]] | None:
    """Reads and final contents when every op runs in its cycle as the RTL does: reads see
    the values at the start of the cycle, writes land at its end; None if two writes of
    one element share a cycle (the RTL would OR them)."""
    mem: dict[tuple[str, int], int] = {}
    reads: list[int | None] = [None] * len(order)
    for c in sorted(set(cycle)):
        landing: dict[tuple[str, int], int] = {}
        for n, (arr, idx, write) in enumerate(order):
            if cycle[n] != c:
                continue
            if write:
                if (arr, idx) in landing:
                    return None
                landing[(arr, idx)] = n + 1
            else:
                reads[n] = mem.get((arr, idx), 0)
        mem.update(landing)
    return reads, mem


def test_random_segments_scheduled_by_the_access_model_keep_program_order() -> None:
    rng = random.Random(1818)
    terms = ["x", "y"]
    for _ in range(300):
        n = rng.randint(2, 12)
        shapes = []  # (array, const, term or None, write)
        for _ in range(n):
            term = rng.choice([None, None, "x", "y"])
            shapes.append((rng.choice("ab"), rng.randint(0, 3), term, rng.random() < 0.5))
        problem = SchedulingProblem(10.0, 9.0)
        ops = [arith.ConstantOp(IntegerAttr(k, i32)) for k in range(n)]
        for op, (arr, const, term, write) in zip(ops, shapes, strict=True):
            banks = frozenset({const % 4}) if term is None else frozenset(range(4))
            uses = [f"{arr} bank {b}" for b in banks]
            problem.add_operation(op, 0.0, uses)
            for u in uses:
                problem.limits[u] = 2
            index = Affine.make(const, {} if term is None else {term: 1}, 32)
            problem.add_access(op, Access(arr, banks, write, index, 8))
        problem.check()
        sched = list_schedule(problem)
        assert problem.verify(sched) == []
        cycle = [sched.cycle[o] for o in ops]
        for _ in range(4):
            env = {t: rng.randint(0, 4) for t in terms}
            order = [(a, c + (env[t] if t else 0), w) for a, c, t, w in shapes]
            program = _cycle_semantics(order, list(range(n)))  # one op per cycle
            assert program is not None
            assert _cycle_semantics(order, cycle) == program, (shapes, cycle, env)


# -- memory-interface ordering: linear in the segment, same schedule as all pairs -----------

MIXED = """
extension m;
scratchpad s: [u32; 128] partition(cyclic, 2) impl(sram);
scratchpad r: [u32; 16] partition(cyclic, 4);
state acc: u32 = 0;
#[opcode(custom0), funct7(0)]
isax mix(rs1, rs2) -> rd {
    #[unroll]
    for i in 0..16 {
        let v: u32 = mem<u32>[rs1 + 4 * i];
        r[i] = v + s[2 * i];
        acc += v;
        mem<u32>[rs2 + 4 * i] = r[i] ^ acc ^ s[2 * i + 1];
    }
    return acc;
}
"""


def test_memory_ordering_is_linear_and_schedules_as_all_pairs() -> None:
    """Memory ops are ordered against every other effect; the problem holds only the
    dependences the others do not imply, and schedules exactly as with every pair."""
    from aquas.synth.fsm import MEM_OPS, _effectful, _order

    problem, sched = _segment(MIXED)
    effects = [o for o in problem.operations if _effectful(o)]
    mem = [o for o in effects if isinstance(o, MEM_OPS)]
    assert len(mem) == 32 and len(effects) > 90
    ordering = [d for d in problem.dependences.values() if "memory access" in d.reason]
    assert len(ordering) <= 3 * len(effects)  # all pairs: over 2,000
    full = SchedulingProblem(problem.clock_ns, problem.budget_ns)
    full.operations = list(problem.operations)
    for attr in ("delay", "uses", "limits", "release", "occupancy", "latency", "dependences"):
        setattr(full, attr, dict(getattr(problem, attr)))
    full.accesses = dict(problem.accesses)
    pairs = 0
    for i, a in enumerate(effects):
        for b in effects[i + 1 :]:
            rel = _order(a, b)
            if rel is not None:
                full.add_dependence(a, b, *rel)
                pairs += 1
    assert pairs > 2000
    ref = list_schedule(full)
    assert ref.cycle == sched.cycle and ref.start == sched.start
    assert full.verify(sched) == []
    # every memory op in a cycle of its own, each effect on the right side of each
    assert len({sched.cycle[m] for m in mem}) == len(mem)
