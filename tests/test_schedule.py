"""The scheduling problem and its verifier: every schedule the flow makes for the examples
passes ``verify``, and hand-made bad schedules are rejected with the specific violation."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Operation

from aquas.dialects import aquas as aq
from aquas.interpreter import find_extension
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.flow import schedule_isaxs
from aquas.synth.fsm import FsmBuilder
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.prepare import prepare
from aquas.synth.schedule import (
    InfeasibleError,
    Schedule,
    ScheduleError,
    Scheduler,
    SchedulingProblem,
    Violation,
    list_schedule,
)
from aquas.synth.timing import OVERHEAD_LEVELS, RESP_STATE, op_delay

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").rglob("*.isax"))
LIB = OperatorLibrary.load()
ADD32 = 1.8  # ns: 18 gate levels at 0.1 ns (synth/oplib.json)


def builder_for(clock: float, scheduler: Scheduler) -> FsmBuilder:
    return FsmBuilder(
        clock,
        lambda op: op_delay(LIB, op),
        first_id=RESP_STATE + 1,
        overhead_ns=OVERHEAD_LEVELS * LIB.ns_per_level,
        scheduler=scheduler,
    )


def problems_of(src: str, clock: float) -> list[tuple[SchedulingProblem, Schedule]]:
    """(problem, schedule) of every segment of the spec's ISAXs, as `aquas synth` makes them."""
    builder, _ = schedule_isaxs(lower_spec(src, "s.isax"), clock, LIB)
    return builder.schedules


def kinds(violations: list[Violation]) -> list[str]:
    return sorted(v.kind for v in violations)


def test_oplib_delays_the_hand_computed_expectations_rely_on() -> None:
    assert LIB.delay_ns("add", 32) == pytest.approx(ADD32)
    assert OVERHEAD_LEVELS * LIB.ns_per_level == pytest.approx(1.0)


# -- every schedule of every example passes verify ---------------------------------------


@pytest.mark.parametrize("clock", [10.0, 20.0])
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_verify_accepts_the_schedules_of_every_example(path: Path, clock: float) -> None:
    module = lower_spec_file(path)
    n_isaxs = len(list(find_extension(module).isaxs()))
    builder, fsms = schedule_isaxs(module, clock, LIB)
    assert len(fsms) == n_isaxs
    assert builder.schedules, "no segment was scheduled"
    scheduled = 0
    for problem, sched in builder.schedules:
        assert problem.verify(sched) == []
        assert set(sched.cycle) == set(problem.operations)
        # the list scheduler starts every op as early as chaining allows
        assert sched.start == Schedule.chained(problem, sched.cycle).start
        scheduled += len(problem.operations)
    assert scheduled == len(builder.def_state)


# -- hand-made bad schedules --------------------------------------------------------------

CHAIN = """
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd {
    let a: u32 = rs1 + rs2;
    let b: u32 = a + rs2;
    let c: u32 = b + rs2;
    let d: u32 = c + rs2;
    return d;
}
"""


def adds(problem: SchedulingProblem) -> list[Operation]:
    return [o for o in problem.operations if isinstance(o, arith.AddiOp)]


def test_a_chain_over_the_clock_is_rejected() -> None:
    # 6 ns clock: 5 ns for the datapath, two 1.8 ns adders per cycle
    ((problem, sched),) = problems_of(CHAIN, 6.0)
    a, b, c, d = adds(problem)
    assert [sched.cycle[o] for o in (a, b, c, d)] == [0, 0, 1, 1]
    bad = Schedule.chained(problem, {**sched.cycle, c: 0, d: 0})
    violations = problem.verify(bad)
    assert kinds(violations) == ["clock", "clock"]
    assert {v.ops for v in violations} == {(c,), (d,)}
    msg = next(v.message for v in violations if v.ops == (c,))
    assert "arith.addi %c" in msg and "s.isax:6:18" in msg
    assert "finishes at 5.40 ns in cycle 0, past the 5.00 ns a 6 ns clock" in msg


def test_a_start_before_a_same_cycle_producer_finishes_is_rejected() -> None:
    ((problem, sched),) = problems_of(CHAIN, 6.0)
    a, b, _, _ = adds(problem)
    bad = Schedule(dict(sched.cycle), {**sched.start, b: 1.0})  # a ends at 1.80 ns
    (v,) = problem.verify(bad)
    assert v.kind == "chaining" and v.ops == (a, b)
    assert "arith.addi %b" in v.message and "starts at 1.00 ns in cycle 0" in v.message
    assert "before arith.addi %a (s.isax:4:18) finishes at 1.80 ns (data)" in v.message


def test_a_violated_data_dependence_is_rejected() -> None:
    ((problem, sched),) = problems_of(CHAIN, 6.0)
    _, b, c, _ = adds(problem)
    bad = Schedule.chained(problem, {**sched.cycle, b: 1, c: 0})
    violations = problem.verify(bad)
    (dep,) = [v for v in violations if v.kind == "dependence"]
    assert dep.ops == (b, c)
    assert "arith.addi %c (s.isax:6:18) (cycle 0) must be in a cycle no earlier than" in (
        dep.message
    )
    assert dep.message.endswith("arith.addi %b (s.isax:5:18) (cycle 1): data")


LOAD = """
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd {
    let x: u32 = mem<u32>[rs1];
    let y: u32 = x + rs2;
    return y;
}
"""


def test_a_load_result_used_in_the_load_cycle_is_rejected() -> None:
    ((problem, sched),) = problems_of(LOAD, 10.0)
    (load,) = [o for o in problem.operations if isinstance(o, aq.LoadOp)]
    (add,) = adds(problem)
    (wrd,) = [o for o in problem.operations if isinstance(o, aq.WriteRdOp)]
    assert (sched.cycle[load], sched.cycle[add], sched.cycle[wrd]) == (0, 1, 1)
    bad = Schedule.chained(problem, {load: 0, add: 0, wrd: 0})
    violations = problem.verify(bad)
    assert kinds(violations) == ["dependence", "dependence"]
    by_ops = {v.ops: v.message for v in violations}
    assert by_ops[(load, add)].endswith("aquas.load %x (s.isax:4:18) (cycle 0): data from memory")
    assert "must be in a later cycle than" in by_ops[(load, add)]
    assert by_ops[(load, wrd)].endswith("(cycle 0): effects after a memory access")


BANKS = """
scratchpad buf: [u32; 8] PART;
#[opcode(custom0), funct7(1)]
isax t(rs1) -> rd {
    burst buf[0 +: 8] <- mem[rs1];
    var s: u32 = 0;
    #[unroll]
    for i in 0..8 { s = s ^ buf[i]; }
    return s;
}
"""


def spm_problem(part: str) -> tuple[SchedulingProblem, Schedule, list[Operation]]:
    module = lower_spec(BANKS.replace("PART", part), "b.isax")
    builder, _ = schedule_isaxs(module, 100.0, LIB)
    (problem, sched) = builder.schedules[0]
    reads = [o for o in problem.operations if isinstance(o, aq.SpmReadOp)]
    assert len(reads) == 8
    return problem, sched, reads


def test_two_uses_of_a_one_port_bank_in_one_cycle_are_rejected() -> None:
    problem, sched, reads = spm_problem("")
    assert sorted(sched.cycle[r] for r in reads) == list(range(1, 9))  # one read per cycle
    r0, r1 = reads[:2]
    cycles = dict(sched.cycle)
    cycles[r1] = cycles[r0]
    # the xor of r0 and r1 follows r1 within its cycle
    (v,) = problem.verify(Schedule.chained(problem, cycles))
    assert v.kind == "resource" and set(v.ops) == {r0, r1}
    assert v.message.startswith(f"cycle {cycles[r0]}: 2 uses of @buf bank 0 (limit 1): ")
    assert "aquas.spm_read" in v.message and "b.isax:8:29" in v.message


def test_two_banks_can_be_read_in_one_cycle_but_not_the_same_one_twice() -> None:
    problem, sched, reads = spm_problem("partition(cyclic, 2)")
    assert problem.limits == {"@buf bank 0": 1, "@buf bank 1": 1, "memory interface": 1}
    r0, r1, r2 = reads[:3]  # buf[0] (bank 0), buf[1] (bank 1), buf[2] (bank 0)
    assert sched.cycle[r0] == sched.cycle[r1]
    cycles = {**sched.cycle, r2: sched.cycle[r0]}
    violations = problem.verify(Schedule.chained(problem, cycles))
    assert [(v.kind, set(v.ops)) for v in violations] == [("resource", {r0, r2})]
    assert "@buf bank 0 (limit 1)" in violations[0].message


def test_a_read_of_a_scratchpad_before_the_burst_filling_it_lands_is_rejected() -> None:
    problem, sched, reads = spm_problem("partition(cyclic, 4)")
    (burst,) = [o for o in problem.operations if isinstance(o, aq.BurstReadOp)]
    cycles = {**sched.cycle, reads[0]: sched.cycle[burst]}
    violations = problem.verify(Schedule.chained(problem, cycles))
    # the burst occupies every bank in its cycle, and the read must follow it
    assert kinds(violations) == ["dependence", "resource"]
    dep = next(v for v in violations if v.kind == "dependence")
    assert dep.ops == (burst, reads[0])
    assert dep.message.endswith("effects after a memory access")
    res = next(v for v in violations if v.kind == "resource")
    assert res.message.startswith(f"cycle {sched.cycle[burst]}: 2 uses of @buf bank 0")


def test_missing_unknown_and_negative_entries_are_reported() -> None:
    ((problem, sched),) = problems_of(CHAIN, 10.0)
    a, _, _, d = adds(problem)
    stray = arith.ConstantOp(IntegerAttr(0, i32))
    cycles = {o: t for o, t in sched.cycle.items() if o is not d}
    cycles[stray] = 0
    cycles[a] = -1
    bad = Schedule.chained(problem, cycles)
    assert kinds(problem.verify(bad)) == ["range", "unknown", "unscheduled"]
    with pytest.raises(ScheduleError, match="3 constraint"):
        problem.assert_valid(bad)


# -- problems built by hand: the list scheduler and check() ---------------------------------


def ops(n: int) -> list[Operation]:
    return [arith.ConstantOp(IntegerAttr(k, i32)) for k in range(n)]


def test_list_schedule_chains_until_the_budget_then_moves_on() -> None:
    a, b, c, d = ops(4)
    p = SchedulingProblem(clock_ns=10.0, budget_ns=9.0)
    for o in (a, b, c, d):
        p.add_operation(o, 4.0)
    p.add_dependence(a, b, 0, "data")
    p.add_dependence(b, c, 0, "data")
    p.add_dependence(a, d, 1, "data from memory")
    p.check()
    s = list_schedule(p)
    # a 0..4, b 4..8 in cycle 0; c would end at 12 > 9 -> cycle 1; d strictly after a
    assert s.cycle == {a: 0, b: 0, c: 1, d: 1}
    assert s.start == {a: 0.0, b: 4.0, c: 0.0, d: 0.0}
    assert s.length == 2
    assert p.verify(s) == []


def test_list_schedule_respects_a_resource_limit_of_two() -> None:
    xs = ops(5)
    p = SchedulingProblem(clock_ns=10.0, budget_ns=9.0)
    p.limits["port"] = 2
    for o in xs:
        p.add_operation(o, 1.0, ["port"])
    s = list_schedule(p)
    assert [s.cycle[o] for o in xs] == [0, 0, 1, 1, 2]
    assert p.verify(s) == []
    three = Schedule.chained(p, {**s.cycle, xs[2]: 0})
    (v,) = p.verify(three)
    assert v.kind == "resource" and v.message.startswith("cycle 0: 3 uses of port (limit 2)")


def test_multi_cycle_ops_hold_their_unit_and_delay_their_consumers() -> None:
    # two 4-cycle ops on one unit (occupancy 5: issue through result), a consumer of the
    # first, and an independent op that fills the cycles in between
    d1, d2, use, other = ops(4)
    p = SchedulingProblem(clock_ns=10.0, budget_ns=9.0)
    p.limits["div unit"] = 1
    p.add_operation(d1, 2.0, ["div unit"], occupancy=5, latency=4)
    p.add_operation(d2, 2.0, ["div unit"], occupancy=5, latency=4)
    p.add_operation(use, 1.0)
    p.add_operation(other, 1.0)
    p.add_dependence(d1, use, 4, "data from div")
    p.check()
    s = list_schedule(p)
    assert s.cycle == {d1: 0, d2: 5, use: 4, other: 0}
    assert s.start[use] == 0.0  # the result is a register: nothing to chain behind
    assert s.length == 6 and p.span(s) == 10  # d2's result is read in cycle 9
    assert p.verify(s) == []
    (v,) = p.verify(Schedule.chained(p, {**s.cycle, d2: 4}))
    assert v.kind == "resource" and v.message.startswith("cycle 4: 2 uses of div unit")
    (v,) = p.verify(Schedule.chained(p, {**s.cycle, use: 3}))
    assert v.kind == "dependence" and "at least 4 cycles after" in v.message
    bad = SchedulingProblem(10.0, 9.0)
    bad.add_operation(d1, 2.0, latency=4)
    bad.add_operation(use, 1.0)
    bad.add_dependence(d1, use, 1, "data")
    with pytest.raises(ValueError, match="shorter than the source's latency"):
        bad.check()


def test_a_second_reason_for_a_dependence_keeps_the_larger_distance() -> None:
    a, b = ops(2)
    p = SchedulingProblem(10.0, 9.0)
    p.add_operation(a, 0.0)
    p.add_operation(b, 0.0)
    p.add_dependence(a, b, 0, "data")
    p.add_dependence(a, b, 1, "read after write (state @x)")
    (dep,) = p.dependences.values()
    assert dep.distance == 1 and dep.reason == "data; read after write (state @x)"


def test_check_rejects_malformed_and_infeasible_problems() -> None:
    a, b = ops(2)
    p = SchedulingProblem(10.0, 9.0)
    p.add_operation(a, 1.0)
    p.add_operation(b, 1.0)
    p.add_dependence(b, a, 0, "data")
    with pytest.raises(ValueError, match="backwards in program order"):
        p.check()
    q = SchedulingProblem(10.0, 9.0)
    q.add_operation(a, 1.0, ["bank"])
    with pytest.raises(ValueError, match="uses bank, which has no limit"):
        q.check()
    r = SchedulingProblem(10.0, 9.0)
    r.add_operation(a, 1.0)
    r.add_operation(b, 9.5)
    with pytest.raises(InfeasibleError) as info:
        r.check()
    assert info.value.op is b
    with pytest.raises(InfeasibleError):
        list_schedule(r)


# -- the algorithm is a parameter; every schedule is verified -----------------------------


def one_op_per_cycle(problem: SchedulingProblem) -> Schedule:
    """A second (naive but valid) algorithm: program order, one op per cycle."""
    return Schedule(
        {o: k for k, o in enumerate(problem.operations)},
        dict.fromkeys(problem.operations, 0.0),
    )


def test_another_algorithm_plugs_into_the_builder() -> None:
    module = lower_spec(CHAIN, "s.isax")
    prepare(module)
    (isax,) = find_extension(module).isaxs()
    fsm = builder_for(10.0, one_op_per_cycle).build_isax(isax)
    # four adds and write_rd, one state each (the list scheduler needs one state)
    assert (fsm.latency.min_fixed, fsm.latency.max_fixed) == (5, 5)


def test_a_scheduler_breaking_a_constraint_is_caught() -> None:
    def all_in_cycle_zero(problem: SchedulingProblem) -> Schedule:
        return Schedule.chained(problem, dict.fromkeys(problem.operations, 0))

    module = lower_spec(LOAD, "s.isax")
    prepare(module)
    (isax,) = find_extension(module).isaxs()
    with pytest.raises(ScheduleError) as info:
        builder_for(10.0, all_in_cycle_zero).build_isax(isax)
    assert kinds(info.value.violations) == ["dependence", "dependence"]
