"""Products in flight across a pipelined kernel's latch (``fsm.FsmBuilder.in_flight``).

At 5.68 ns with the delays derated by 1.4 a 32-bit multiply (5.04 ns) no longer fits the
4.68 ns a cycle leaves, so the multiplies run on split units, read three cycles after
their issue (``binding.Sharing.split``). The modulo schedule places each product's users
three cycles after its issue (``loop_pipeline.split_unit_op``), a stage later at II 3,
and the kernel takes the product from the unit in the next kernel iteration instead of
waiting for it.
"""

from __future__ import annotations

from pathlib import Path

from aquas.spec.frontend import lower_spec
from aquas.synth.flow import loop_reports, schedule_isaxs
from aquas.synth.loop_pipeline import pipeline_loops
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.prepare import prepare

from helpers import cosim_random

LIB = OperatorLibrary.load()
CLOCK = 5.68
DERATE = 1.4

# ``tri``: three multiplies a point on one unit (II 3); ``six``: six on two (II 3). Every
# product goes to an accumulator a stage later; ``u`` is a running xor-and-add, so the
# order of the iterations matters.
SPEC = """
extension fly;
scratchpad xa: [u32; 16] impl(sram);
scratchpad xb: [u32; 16] impl(sram);

#[opcode(custom0), funct7(0), mul_units(1)]
isax tri(rs1, rs2) -> rd {
    for k in 0..16 {
        xa[k] = rs1 + 0x9e3779b9 * k;
        xb[k] = rs2 ^ (0x85ebca6b * k);
    }
    var s: u32 = 0;
    var t: u32 = 0;
    var u: u32 = 0;
    #[pipeline]
    for i in 0..16 {
        let a: u32 = xa[i];
        let b: u32 = xb[i];
        s += a * b;
        t += (a + 1) * (b ^ 5);
        u = (u ^ (a * (b + 3))) + 1;
    }
    return s ^ t ^ u;
}

#[opcode(custom0), funct7(1), mul_units(2)]
isax six(rs1, rs2) -> rd {
    for k in 0..16 {
        xa[k] = rs1 ^ (0xc2b2ae35 * k);
        xb[k] = rs2 + 0x27d4eb2f * k;
    }
    var p: u32 = 0;
    var q: u32 = 0;
    var r: u32 = 0;
    #[pipeline]
    for i in 0..16 {
        let a: u32 = xa[i];
        let b: u32 = xb[i];
        let c: u32 = a + b;
        p += a * a;
        q += a * b;
        r += b * b;
        p ^= c * c;
        q += a * c;
        r ^= b * c;
    }
    return p + 3 * q + 5 * r;
}
"""


def test_the_kernel_takes_its_products_in_flight_at_its_ii() -> None:
    builder, _ = schedule_isaxs(lower_spec(SPEC, "fly.isax"), CLOCK, LIB.derated(DERATE))
    sharing = builder.sharing
    assert sharing is not None and sharing.split  # the multiplies are split units
    loops = {isax: ls[0] for isax, ls in loop_reports(builder).items()}
    for isax in ("tri", "six"):
        lp = loops[isax]
        assert lp["predicated"], lp
        # the state machine's kernel takes II states (it waited 3 for a product before)
        assert (lp["ii"], lp["kernel_states"], lp["kernel_limit"]) == (3, 3, ""), lp
    # each of the 3 + 6 multiplies on units (the kernels'; the fill loops multiply by
    # constants) is read 3 cycles after its issue: in flight, in the same state of the
    # next iteration of its 3-state kernel (3 - 3 = 0 states later), not 3 states later
    gaps = [builder.def_state[op] - builder.issue_state[op] for op in builder.issue_state]
    assert gaps == [0] * 9, gaps


def test_without_the_predicated_kernel_the_products_are_waited_for() -> None:
    """With a prologue and epilogue the epilogue reads the last products after the loop,
    so the kernel waits for them within the iteration: more states than its II, as the
    pipeliner's estimate says."""
    m = prepare(lower_spec(SPEC, "fly.isax"))
    reports = pipeline_loops(m, CLOCK, LIB.derated(DERATE), predicate="never")
    got = {rep.isax: (rep.ii, rep.stages, rep.kernel_states, rep.predicated) for rep in reports}
    # the last product issued (cycle 2 of the kernel: one unit for tri's three multiplies,
    # two for six's six) is read in cycle 5, so the kernel takes 6 states, as the state
    # machine builds it. Until the estimate held the multiplies to the #[mul_units(N)]
    # directive's units it issued them all in cycle 0 and said 5.
    assert got == {"tri": (3, 3, 6, False), "six": (3, 3, 6, False)}


def test_products_in_flight_cosimulate_bit_exact(tmp_path: Path) -> None:
    from aquas.synth.lint import lint

    path = tmp_path / "fly.isax"
    path.write_text(SPEC)
    res = cosim_random(path, tmp_path / "out", 200, 11, CLOCK, LIB.derated(DERATE))
    assert "mul32_u0_s_q" in res.verilog_path.read_text()  # a split unit
    assert lint(res.verilog_path) == []


def test_registered_units_of_a_directive_are_planned_for_by_the_pipeliner() -> None:
    """The point cloud's ``vcovmat3d`` (``#[mul_units(1)]``) at VexRiscv's clock, on the
    model's own delays: its 64-bit multiply fits a cycle alone (4.6 of 4.67 ns) but not
    behind the unit's select, so the binding registers the unit and the directive puts the
    kernel's six multiplies on it, read two states after their issue
    (``loop_pipeline.registered_unit_op``). The pipeliner used to chain them in a cycle,
    estimate the prologue-and-epilogue kernel with unlimited units at its II, and keep it:
    the state machine's kernel then waited for the products, 8 states for an II of 6."""
    from aquas.spec.frontend import lower_spec_file
    from aquas.spec.subset import keep_isaxs

    root = Path(__file__).resolve().parents[1]

    def module() -> object:
        m = lower_spec_file(root / "examples" / "pointcloud" / "pointcloud.isax")
        keep_isaxs(m, ["vcovmat3d"])
        return m

    builder, _ = schedule_isaxs(module(), 5.6706, LIB)
    sharing = builder.sharing
    assert sharing is not None and sharing.registered and not sharing.split
    lp = loop_reports(builder)["vcovmat3d"][0]
    assert lp["predicated"], lp
    assert (lp["ii"], lp["kernel_states"], lp["kernel_limit"]) == (6, 6, ""), lp
    # with a prologue and epilogue the kernel waits for its last products: the estimate
    # says so now (one unit, six issues, the last read two states after its issue)
    reports = pipeline_loops(prepare(module()), 5.6706, LIB, predicate="never")  # type: ignore[arg-type]
    got = [(r.ii, r.kernel_states, r.predicated) for r in reports if r.isax == "vcovmat3d"]
    assert got == [(6, 8, False)], got
