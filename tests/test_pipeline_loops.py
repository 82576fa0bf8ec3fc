"""Loop pipelining (synth/modulo.py, synth/loop_pipeline.py): II, ResMII and RecMII on
small loops (expected values derived by hand from the operator library's delays), the
spec directive's diagnostics, equivalence of the rewrite on the golden interpreter, and
the cycles of pipelined loops in the state machine.

Delays at the 10 ns clock (the datapath budget is 9.0 ns after 10 gate levels of state
and register selection): a 32-bit multiply 3.6 ns, an add 1.8 ns, an xor 0.1 ns, a read of
a 16-word flip-flop scratchpad 0.4 ns (a 4-level mux tree). So two chained multiplies fit
a cycle (7.2 ns), three do not."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import pytest
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, i64

import aquas.synth.loop_pipeline as lp
from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.passes import parse_pipeline
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.flow import isax_latencies, loop_reports, schedule_isaxs
from aquas.synth.loop_pipeline import LoopReport, loop_problem, pipeline_loops
from aquas.synth.modulo import modulo_schedule, rec_mii, res_mii, verify_modulo
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.prepare import PIPELINE as PIPELINE_PREP
from aquas.synth.prepare import prepare

sys.path.insert(0, str(Path(__file__).parent))
from test_passes import apply, assert_equivalent

ROOT = Path(__file__).resolve().parents[1]
LIB = OperatorLibrary.load()

# acc = acc^5 ^ x^9 with x = a[i]: the recurrence (4 multiplies and an xor through `acc`)
# takes two cycles, x^9 (8 multiplies behind the read) four.
RECURRENCE = """
extension rec;
scratchpad a: [u32; 16];
#[opcode(custom0), funct7(1)]
isax r(rs1, rs2) -> rd {
    for k in 0..16 { a[k] = rs1 + k; }
    var acc: u32 = rs2;
    #[pipeline]
    for i in 0..8 {
        let x: u32 = a[i];
        let z: u32 = x * x * x * x * x * x * x * x * x;
        acc = (acc * acc * acc * acc * acc) ^ z;
    }
    return acc;
}
"""

# two reads of a one-bank (one-port) scratchpad per iteration, then x*y*x*y
PORTS = """
extension port;
scratchpad a: [u32; 16];
#[opcode(custom0), funct7(1)]
isax p(rs1, rs2) -> rd {
    for k in 0..16 { a[k] = rs1 * k + rs2; }
    var acc: u32 = 0;
    #[pipeline]
    for i in 0..8 {
        let x: u32 = a[2 * i];
        let y: u32 = a[2 * i + 1];
        acc = acc ^ (x * y * x * y);
    }
    return acc;
}
"""


def prepared(src: str) -> tuple[scf.ForOp, object]:
    m = prepare(lower_spec(src, "t.isax"))
    loop = [o for o in m.walk() if isinstance(o, scf.ForOp)][-1]
    return loop, m


def problem_of(src: str):  # type: ignore[no-untyped-def]
    loop, _ = prepared(src)
    got = loop_problem(loop, 10.0, 9.0, LIB)
    assert not isinstance(got, str), got
    return got[0]


def test_recurrence_limited_loop() -> None:
    problem = problem_of(RECURRENCE)
    # one read of bank 0 per iteration: ResMII 1. The recurrence acc -> 4 multiplies ->
    # xor -> acc is 4 * 3.6 + 0.1 = 14.5 ns > 9.0 ns: two cycles, RecMII 2.
    assert res_mii(problem)[0] == 1
    mii, why = rec_mii(problem, 10)
    assert mii == 2
    assert why.startswith("recurrence arith.xori") and "t.isax:12:" in why
    # not pipelined: read + 2 multiplies (cycle 0), then 2 multiplies per cycle: x^9
    # ends in cycle 3, so 4 cycles per iteration
    sched = modulo_schedule(problem, 4)
    assert sched is not None and not verify_modulo(problem, sched)
    assert (sched.ii, sched.res_mii, sched.rec_mii, sched.stages) == (2, 1, 2, 2)
    assert sched.latency(problem.sram_reads) == 4
    assert sched.limit == why


def test_port_limited_loop() -> None:
    problem = problem_of(PORTS)
    # a[2i] and a[2i+1] share the single bank's port: ResMII 2; acc ^= ... chains in a
    # cycle: RecMII 1
    mii, why = res_mii(problem)
    assert (mii, why) == (
        2,
        "@a bank 0: 2 uses per iteration, 1 per cycle "
        "(aquas.spm_read %x (t.isax:10:22), aquas.spm_read %y (t.isax:11:22))",
    )
    assert rec_mii(problem, 10)[0] == 1
    sched = modulo_schedule(problem, 3)
    assert sched is not None and not verify_modulo(problem, sched)
    assert (sched.ii, sched.stages, sched.limit) == (2, 2, why)
    # II must stay below the sequential length to be worth it
    assert modulo_schedule(problem, 2) is None


def test_a_requested_ii_above_the_minimum_is_honoured() -> None:
    problem = problem_of(RECURRENCE)
    sched = modulo_schedule(problem, 4, min_ii=3)
    assert sched is not None and sched.ii == 3 and not verify_modulo(problem, sched)


CARRIED = """
extension car;
scratchpad s: [u32; 16];
#[opcode(custom0), funct7(1)]
isax c(rs1, rs2) -> rd {
    s[0] = rs1;
    s[1] = rs2;
    #[pipeline]
    for i in 0..14 {
        let x: u32 = s[i];
        s[i + DIST] = x * x * x * x * x + 7;
    }
    return s[15];
}
"""


def test_a_scratchpad_recurrence_one_iteration_apart_is_not_pipelined() -> None:
    # s[i+1] depends on s[i] written by the previous iteration: the read (cycle 0 + II)
    # must follow the write (cycle 2), so II would be the whole 3-cycle iteration
    _, m = prepared(CARRIED.replace("DIST", "1"))
    [rep] = pipeline_loops(m, 10.0, LIB)  # type: ignore[arg-type]
    assert (rep.ii, rep.reason) == (0, "no II below the body's 3 cycle(s)")


def test_a_scratchpad_recurrence_two_iterations_apart_pipelines() -> None:
    # s[i+2] = f(s[i]): the value read was written two iterations earlier. An iteration
    # is 3 cycles: the read (0.4 ns) and 2 multiplies, then 2 multiplies and the add
    # (9.0 ns), then the write (0.7 ns). One read and one write on the single port:
    # ResMII 2. The read of iteration i+2 (cycle 0 + 2*II) must follow the write of
    # iteration i (cycle 2): RecMII 2.
    src = CARRIED.replace("DIST", "2")
    _, m = prepared(src)
    [rep] = pipeline_loops(m, 10.0, LIB)  # type: ignore[arg-type]
    assert (rep.ii, rep.res_mii, rep.rec_mii, rep.body_cycles) == (2, 2, 2, 3), rep.reason
    assert_equivalent(lower_spec(src, "t.isax"), m, cases=30, seed=3)


def cycles(src: str, mode: str) -> int:
    lo, hi = isax_latencies(lower_spec(src, "t.isax"), 10.0, 4, LIB, pipeline=mode)[
        next(iter(isax_latencies(lower_spec(src, "t.isax"), 10.0, 4, LIB)))
    ]
    assert lo == hi
    return lo


def test_cycles_of_a_pipelined_loop() -> None:
    # Not pipelined: dispatch 1, the state before the fill loop 1, the fill loop 16
    # (one state per iteration, its latch in that state), the loop's init state 1,
    # 8 iterations x 4 states, the return 1: 52 cycles.
    assert cycles(RECURRENCE, "off") == 52
    # Pipelined at II 2 with 2 stages: the prologue (stage 0 of iteration 0: the read and
    # x^5, 2 states) replaces the init state, the kernel runs 7 iterations x 2 states,
    # the epilogue (stage 1 of iteration 7, 2 states) holds the return:
    # 1 + 1 + 16 + 2 + 14 + 2 = 36 cycles.
    assert cycles(RECURRENCE, "directive") == 36
    builder, _ = schedule_isaxs(lower_spec(RECURRENCE, "t.isax"), 10.0, LIB, pipeline="auto")
    fill, rep = loop_reports(builder)["r"]
    assert (fill["ii"], fill["not_pipelined"]) == (0, "no II below the body's 1 cycle(s)")
    assert (rep["ii"], rep["kernel_states"], rep["stages"], rep["body_cycles"]) == (2, 2, 2, 4)
    # ports: the loop's init state, 8 x 3 states and the return state (26 cycles) become
    # a 2-state prologue, 7 x 2 kernel states and a 1-state epilogue holding the return
    # (17 cycles). Predicated, it would take 20 (test_both_forms_of_a_pipelined_loop), so
    # the flow keeps the copies.
    assert cycles(PORTS, "off") - cycles(PORTS, "directive") == 9
    # recurrence: predicated, the select keeping %acc in an invalid iteration would
    # follow the xor the kernel's stage ends with, in a third state: prologue and epilogue
    [rep] = loop_reports(schedule_isaxs(lower_spec(RECURRENCE, "t.isax"), 10.0, LIB)[0])["r"]
    assert (rep["predicated"], rep["kernel_states"]) == (False, 2)


@pytest.mark.parametrize(
    ("directive", "message"),
    [
        ("#[pipeline(0)]", "the initiation interval must be in 1..64, got 0"),
        ("#[pipeline(65)]", "the initiation interval must be in 1..64, got 65"),
        ("#[pipeline(fast)]", "unknown pipeline option 'fast'"),
        ("#[unroll, pipeline]", "a fully unrolled loop cannot be pipelined"),
        ("#[pipelin]", "unknown loop directive 'pipelin'"),
    ],
)
def test_bad_directives_are_located_errors(directive: str, message: str) -> None:
    src = RECURRENCE.replace("#[pipeline]", directive)
    with pytest.raises(AquasError) as info:
        lower_spec(src, "t.isax")
    assert info.value.message == message
    assert info.value.loc is not None and info.value.loc.line == 8


def test_directive_values() -> None:
    def attr(d: str) -> int:
        m = lower_spec(RECURRENCE.replace("#[pipeline]", d), "t.isax")
        loop = [o for o in m.walk() if isinstance(o, scf.ForOp)][-1]
        a = loop.attributes[aq.PIPELINE_ATTR]
        assert isinstance(a, IntegerAttr)
        return int(a.value.data)

    assert (attr("#[pipeline]"), attr("#[pipeline(3)]"), attr("#[pipeline(off)]")) == (0, 3, -1)


def test_pipeline_off_and_outer_loops() -> None:
    # off: the flow's auto mode leaves the loop alone
    src = RECURRENCE.replace("#[pipeline]", "#[pipeline(off)]")
    assert cycles(src, "auto") == 52
    outer = RECURRENCE.replace(
        "#[pipeline]\n    for i in 0..8 {", "#[pipeline]\n    for j in 0..2 {\n    for i in 0..4 {"
    ).replace("    return acc;", "    }\n    return acc;")
    with pytest.raises(AquasError, match="only innermost loops can be pipelined"):
        pipeline_loops(prepare(lower_spec(outer, "t.isax")), 10.0, LIB)


# DIST 3 with 13 iterations: the last writes s[15]
@pytest.mark.parametrize("predicate", ["always", "never"])
@pytest.mark.parametrize(
    "src", [RECURRENCE, PORTS, CARRIED.replace("DIST", "3").replace("0..14", "0..13")]
)
def test_the_pass_keeps_semantics(src: str, predicate: str) -> None:
    before = lower_spec(src, "t.isax")
    after = apply(lower_spec(src, "t.isax"), f"aquas-pipeline-loops{{predicate={predicate}}}")
    loops = [o for o in after.walk() if isinstance(o, scf.ForOp)]
    assert not any(aq.PIPELINE_ATTR in o.attributes for o in loops)  # all were pipelined
    assert_equivalent(before, after, cases=40, seed=7)


def kernel_form(m: object) -> tuple[int, int, int]:
    """(kernel trip count, predicated accesses, accesses outside the last loop)."""
    loops = [o for o in m.walk() if isinstance(o, scf.ForOp)]  # type: ignore[attr-defined]
    kernel = loops[-1]
    lb, ub = (aq.constant_value(v) for v in (kernel.lb, kernel.ub))
    assert lb is not None and ub is not None
    accesses = (aq.SpmReadOp, aq.SpmWriteOp, aq.StateWriteOp)
    inside = [o for o in kernel.body.walk() if isinstance(o, accesses)]
    outside = [
        o
        for o in m.walk()  # type: ignore[attr-defined]
        if isinstance(o, accesses) and o not in inside and o.parent_op() is not loops[0]
    ]
    return ub - lb, sum(o.pred is not None for o in inside), len(outside)


def test_both_forms_of_a_pipelined_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # PORTS at II 2 in 2 stages, 8 iterations. Prologue, kernel and epilogue: the kernel
    # runs 7 times, the prologue's two reads and the epilogue's none (its stage 1 reads
    # nothing) are outside it. Predicated: the kernel runs 8 + 1 times, its two reads
    # predicated on stage 0's valid bit, nothing outside it.
    edges = apply(lower_spec(PORTS, "t.isax"), "aquas-pipeline-loops")
    assert kernel_form(edges) == (7, 0, 2)  # the flow's choice (auto): 35 cycles
    pred = apply(lower_spec(PORTS, "t.isax"), "aquas-pipeline-loops{predicate=always}")
    assert kernel_form(pred) == (9, 2, 0)
    # the loop's init state again, and 8 + 1 kernel trips of 2 states (20 cycles, 17
    # with the copies)
    monkeypatch.setattr(lp, "pipeline_loops", partial(pipeline_loops, predicate="always"))
    assert cycles(PORTS, "directive") == 38
    # a write of an iteration that is not valid would clobber an element: FUZZ writes
    # s[i + 5] in its last stage, and an iteration value and a state register join it;
    # the three reads outside are the return's
    src = FUZZ.replace("PART", "").replace("TRIP", "12").replace("R", "3").replace("W", "5")
    src = src.replace("STATE", "st = st + x;")
    m = apply(lower_spec(src, "t.isax"), PIPELINE_PREP + ",aquas-pipeline-loops{predicate=always}")
    assert kernel_form(m) == (13, 3, 3)
    assert_equivalent(lower_spec(src, "t.isax"), m, cases=40, seed=2)


EXAMPLES = sorted((ROOT / "examples").rglob("*.isax"))
EXAMPLES += sorted((ROOT / "tests" / "sim" / "specs").glob("*.isax"))


@pytest.mark.parametrize("predicate", ["always", "never"])
@pytest.mark.parametrize("path", EXAMPLES, ids=[str(p.relative_to(ROOT)) for p in EXAMPLES])
def test_every_example_loop_pipelined_keeps_semantics(path: Path, predicate: str) -> None:
    """Every loop of every example asks for pipelining (after the flow's preparation);
    the pipelined ISAXs compute what the originals do, in either form."""
    after = lower_spec_file(path)
    for o in after.walk():
        if isinstance(o, scf.ForOp):
            o.attributes[aq.PIPELINE_ATTR] = IntegerAttr(0, i64)
    prepare(after)
    try:
        reports: list[LoopReport] = pipeline_loops(after, 10.0, LIB, predicate=predicate)
    except AquasError as e:  # a directive on an outer loop
        assert e.message == "only innermost loops can be pipelined"
        return
    after.verify()
    assert_equivalent(lower_spec_file(path), after, cases=25, seed=11, observable=True)
    for rep in reports:
        assert rep.ii > 0 or rep.reason


def test_the_pass_is_registered() -> None:
    parse_pipeline("aquas-pipeline-loops{clock-ns=5 auto=true}")
    with pytest.raises(AquasError, match="clock-ns must be a positive number"):
        apply(lower_spec(PORTS, "t.isax"), "aquas-pipeline-loops{clock-ns=0}")


def test_the_synth_report_lines() -> None:
    from aquas.cli.synth import pipeline_lines

    builder, _ = schedule_isaxs(lower_spec(RECURRENCE, "t.isax"), 10.0, LIB, pipeline="auto")
    fill, loop = loop_reports(builder)["r"]
    assert pipeline_lines("r", [fill]) == []  # not asked for, not pipelined: no line
    [line] = pipeline_lines("r", [loop])
    assert line.startswith(
        "pipeline r loop at t.isax:8:5: II 2 (ResMII 1, RecMII 2), 2 stages, iteration "
        "latency 4 cycles (was 4 cycles per iteration); limited by recurrence arith.xori"
    )
    mem = RECURRENCE.replace("let x: u32 = a[i];", "let x: u32 = mem<u32>[rs1 + 4 * i];")
    builder, _ = schedule_isaxs(lower_spec(mem, "t.isax"), 10.0, LIB, pipeline="directive")
    [lp] = loop_reports(builder)["r"]
    assert pipeline_lines("r", [lp]) == [
        "pipeline r loop at t.isax:8:5: not pipelined (its body uses the memory interface "
        "(t.isax:10:22))"
    ]


def test_the_kernel_carries_its_modulo_schedule_to_the_fsm() -> None:
    from aquas.synth.fsm import segment_problem
    from aquas.synth.schedule import Schedule, list_schedule
    from aquas.synth.timing import op_delay

    m = apply(lower_spec(PORTS, "t.isax"), "aquas-pipeline-loops")
    kernel = [o for o in m.walk() if isinstance(o, scf.ForOp)][-1]
    ops = [o for o in kernel.body.block.ops if aq.KERNEL_CYCLE_ATTR in o.attributes]
    hints = {o: o.attributes[aq.KERNEL_CYCLE_ATTR] for o in ops}
    assert {h.value.data for h in hints.values()} == {0, 1}  # type: ignore[attr-defined]
    problem = segment_problem(ops, lambda o: op_delay(LIB, o), 10.0, 9.0)
    sched = list_schedule(problem)
    assert problem.span(sched) == 2  # the kernel takes II = 2 states
    late = next(o for o in ops if problem.release.get(o, 0) == 1)
    early = Schedule.chained(problem, {o: 0 for o in ops})
    assert any(v.kind == "release" and v.ops == (late,) for v in problem.verify(early))


def test_partial_unroll_then_pipeline() -> None:
    # #[unroll(2), pipeline]: the 4-iteration loop of two body copies is pipelined
    src = PORTS.replace("#[pipeline]", "#[unroll(2), pipeline]")
    m = lower_spec(src, "t.isax")
    builder, _ = schedule_isaxs(m.clone(), 10.0, LIB, pipeline="directive")
    [rep] = loop_reports(builder)["p"]
    assert rep["trip"] == 4 and rep["kernel_states"] == rep["ii"] > 0
    # four reads of the one-port scratchpad per (unrolled) iteration
    assert rep["res_mii"] == 4 and rep["limit"].startswith("@a bank 0: 4 uses")
    after = apply(lower_spec(src, "t.isax"), PIPELINE_PREP + ",aquas-pipeline-loops")
    assert_equivalent(lower_spec(src, "t.isax"), after, cases=30, seed=5)


FUZZ = """
extension fz;
state st: u32 = 3;
scratchpad s: [u32; 32] PART;
#[opcode(custom0), funct7(1)]
isax f(rs1, rs2) -> rd {
    for k in 0..32 { s[k] = rs1 * k + rs2; }
    var acc: u32 = 0;
    #[pipeline]
    for i in 0..TRIP {
        let x: u32 = s[i + R];
        s[i + W] = x * x * x * x * x + acc;
        acc = acc ^ x;
        STATE
    }
    return acc ^ s[31] ^ s[17] ^ s[5] ^ st;
}
"""


@pytest.mark.parametrize("predicate", ["always", "never"])
@pytest.mark.parametrize("seed", range(24))
def test_random_carried_dependences_keep_semantics(seed: int, predicate: str) -> None:
    """Reads and writes of one scratchpad at random offsets (so dependences between
    iterations at random distances, both ways), an iteration value and a state register:
    the pipelined loop computes what the loop did (20 of the 24 loops are pipelined, at
    II 2; the others are refused: no II below their 3 cycles)."""
    import random

    rng = random.Random(seed)
    src = (
        FUZZ.replace("PART", rng.choice(["", "partition(cyclic, 2)", "partition(cyclic, 4)"]))
        .replace("TRIP", str(rng.randint(2, 20)))
        .replace("R", str(rng.randint(0, 8)))
        .replace("W", str(rng.randint(0, 8)))
        .replace("STATE", rng.choice(["", "st = st + x;", "st = st * 3 + acc;"]))
    )
    before = lower_spec(src, "t.isax")
    after = apply(
        lower_spec(src, "t.isax"),
        PIPELINE_PREP + f",aquas-pipeline-loops{{predicate={predicate}}}",
    )
    assert_equivalent(before, after, cases=12, seed=seed)


# three reads of a cyclic-3 SRAM per iteration (one per bank), two multiplies and a
# running minimum: the nearest-point scan's shape
SRAM_SCAN = """
extension scan;
scratchpad p: [u32; 48] partition(cyclic, 3) impl(sram);
#[opcode(custom0), funct7(1)]UNITS
isax s(rs1, rs2) -> rd {
    for k in 0..48 { p[k] = rs1 * k + rs2; }
    var best: u32 = 0xffffffff;
    #[pipeline]
    for j in 0..16 {
        let d: u32 = p[3 * j] * p[3 * j + 1] + p[3 * j + 2] * rs2;
        best = select(d < best, d, best);
    }
    return best;
}
"""


def test_an_sram_scan_pipelines_at_ii_1(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each bank is read once per iteration and the reads' data reach the next stage
    # through the banks' read ports (carried reads, synth/fsm.py): II 1, and the kernel
    # is one state in the state machine (the FSM builder adds none for the reads' data).
    src = SRAM_SCAN.replace("UNITS", "")
    _, m = prepared(src)
    [rep] = pipeline_loops(m, 10.0, LIB)  # type: ignore[arg-type]
    assert (rep.ii, rep.res_mii, rep.rec_mii, rep.kernel_states) == (1, 1, 1, 1), rep.reason
    assert_equivalent(lower_spec(src, "t.isax"), m, cases=30, seed=5)
    builder, _ = schedule_isaxs(lower_spec(src, "t.isax"), 10.0, LIB)
    [rep2] = builder.loop_reports
    assert rep2.kernel_states == 1
    [loop] = [st.latches[0] for st in builder.states if st.latches and st.latches[0].carried]
    # the three reads feed the next stage through the ports; the predicated kernel's
    # results are its kept iteration values (registers)
    assert rep2.predicated and len(loop.carried) == 3 and loop.first == loop.last
    assert loop.catch < 0
    # prologue, kernel and epilogue: the loop's results are used by the epilogue, so the
    # state the loop exits into takes them from the ports
    monkeypatch.setattr(lp, "pipeline_loops", partial(lp.pipeline_loops, predicate="never"))
    builder, _ = schedule_isaxs(lower_spec(src, "t.isax"), 10.0, LIB)
    [loop] = [st.latches[0] for st in builder.states if st.latches and st.latches[0].carried]
    assert len(loop.carried) == 3 and loop.first == loop.last and loop.catch >= 0


def test_mul_units_directive_bounds_the_ii() -> None:
    # two multiplies per iteration on at most one unit per cycle: ResMII 2, "mul32 unit"
    src = SRAM_SCAN.replace("UNITS", "\n#[mul_units(1)]")
    _, m = prepared(src)
    [rep] = pipeline_loops(m, 10.0, LIB)  # type: ignore[arg-type]
    assert (rep.ii, rep.res_mii) == (2, 2), rep.reason
    assert rep.limit.startswith("mul32 unit: 2 uses per iteration, 1 per cycle"), rep.limit


# a multiply-accumulate over two scratchpads: one multiply (3.6 ns) and one add per
# iteration
MAC = """
extension mac;
scratchpad a: [u32; 16] partition(cyclic, 2);
scratchpad b: [u32; 16] partition(cyclic, 2);
#[opcode(custom0), funct7(1)]
isax m(rs1, rs2) -> rd {
    for k in 0..16 { a[k] = rs1 + k; b[k] = rs2 ^ k; }
    var acc: u32 = 0;
    #[pipeline]
    for i in 0..16 {
        acc += a[i] * b[i];
    }
    return acc;
}
"""


def test_a_derated_library_still_pipelines_an_operator_that_fits_a_cycle() -> None:
    """Timing closure derates every delay (here x3: the multiply 10.8 ns, over the 9.0 ns
    budget); the state machine still gives a multiply that fits on its characterised
    delay a cycle of its own, and so must the pipeliner: it pipelines the loop at II 1
    (the add of the recurrence, 5.4 ns, fits a cycle) with the multiply alone in its
    stage. Once closure lets the derated delays decide what fits (``fit``), the multiply
    is multi-cycle and the loop is left alone, saying why."""
    _, m = prepared(MAC)
    [rep] = pipeline_loops(m, 10.0, LIB.derated(3.0))  # type: ignore[arg-type]
    assert (rep.ii, rep.res_mii, rep.rec_mii, rep.kernel_states) == (1, 1, 1, 1), rep.reason
    # read | multiply | add: three stages
    assert rep.stages == 3
    _, m = prepared(MAC)
    [rep] = pipeline_loops(m, 10.0, LIB.derated(3.0, fit=True))  # type: ignore[arg-type]
    assert rep.ii == 0 and rep.reason.startswith("arith.muli (t.isax:"), rep.reason
    assert rep.reason.endswith("is slower than a cycle")


# the multiply-accumulate of i16 elements, as the DSP's vdot32 writes it
MAC16 = """
extension mac16;
scratchpad a: [u16; 16] partition(cyclic, 2);
scratchpad b: [u16; 16] partition(cyclic, 2);
#[opcode(custom0), funct7(1)]
isax m(rs1, rs2) -> rd {
    for k in 0..16 { a[k] = trunc<u16>(rs1 + k); b[k] = trunc<u16>(rs2 ^ k); }
    var acc: i32 = 0;
    #[pipeline]
    for i in 0..16 {
        acc += sext<i32>(a[i] as i16) * sext<i32>(b[i] as i16);
    }
    return acc as u32;
}
"""


def test_extensions_move_to_their_use_so_the_narrow_value_is_carried() -> None:
    """The reads are a stage before the multiply (the derated multiply takes a cycle of its
    own). The sign extensions move to the multiply's stage: the kernel carries the i16
    reads, not their i32 extensions, and the multiply's operands are extensions again,
    so it stays a 16-bit multiplier (binding.narrowing); the rewrite keeps the loop's
    results on the interpreter."""
    from aquas.synth.binding import narrowing

    src_module = lower_spec(MAC16, "t.isax")
    _, m = prepared(MAC16)
    [rep] = pipeline_loops(m, 10.0, LIB.derated(3.0))  # type: ignore[arg-type]
    assert (rep.ii, rep.stages) == (1, 3), rep.reason
    kernel = next(
        o
        for o in m.walk()
        if isinstance(o, scf.ForOp) and KERNEL_OPS(o)  # type: ignore[arg-type]
    )
    carried = [str(a.type) for a in kernel.body.block.args[1:]]
    assert carried.count("i16") == 2, carried  # the two reads, one stage each
    [mul] = [o for o in kernel.body.block.ops if o.name == "arith.muli"]
    assert all(v.owner.name == "arith.extsi" for v in mul.operands)  # type: ignore[union-attr]
    n = narrowing([mul])
    assert n is not None and (n.bits, n.signed) == (16, True)
    assert_equivalent(src_module, m, cases=30, seed=5)


def KERNEL_OPS(loop: scf.ForOp) -> bool:
    return any(aq.KERNEL_CYCLE_ATTR in o.attributes for o in loop.body.block.ops)


def test_a_pipelined_loop_indexing_out_of_bounds_is_refused_at_its_access() -> None:
    # 14 iterations of s[i + 3]: the last writes s[16] of 16 elements; the epilogue's
    # folded index shows it, and the error points at the write (line 11 of the spec)
    _, m = prepared(CARRIED.replace("DIST", "3"))
    with pytest.raises(AquasError, match=r"@s of 16 elements is indexed at 16") as e:
        pipeline_loops(m, 10.0, LIB)  # type: ignore[arg-type]
    assert e.value.loc is not None and (e.value.loc.line, e.value.loc.column) == (11, 9)
