"""Split (two-cycle) shared multipliers (synth/binding.py, ``carry_save_parts``): the
partial products reduced by word-wide carry-save adders to two vectors in one cycle, their
sum in the next; and the squarer of an own multiply of a value by itself (``square``). Checked bit-exact against Python's own product (an evaluator of the
generated comb ops), for depth with Yosys, and end to end in co-simulation."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from xdsl.dialects import comb, hw
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, IntegerType, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from aquas.spec.frontend import lower_spec
from aquas.synth.binding import (
    Narrow,
    UnitClass,
    carry_save_levels,
    carry_save_parts,
    split_stage_ns,
    square,
)
from aquas.synth.flow import schedule_isaxs
from aquas.synth.hwemit import HwBuilder
from aquas.synth.oplib import OperatorLibrary

from helpers import cosim_random

ROOT = Path(__file__).resolve().parents[1]
LIB = OperatorLibrary.load()

SHAPES = [  # (operand bits, product width, narrowing)
    (16, 32, Narrow(16, True)),
    (16, 32, Narrow(16, False)),
    (32, 32, None),
    (33, 64, Narrow(33, True)),
    (8, 32, Narrow(8, True)),
    (1, 32, Narrow(1, True)),
]


def _parts(k: int, w: int, narrow: Narrow | None) -> tuple[Block, SSAValue, SSAValue]:
    block = Block(arg_types=[IntegerType(k), IntegerType(k)])
    h = HwBuilder(block, block.args[0], block.args[1])
    s, c = carry_save_parts(h, block.args[0], block.args[1], w, narrow, "m")
    return block, s, c


def _width(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, IntegerType)
    return t.width.data


def _evaluate(block: Block, args: list[int]) -> dict[SSAValue, int]:
    """The value of every result in ``block`` (comb and hw constants only)."""
    val: dict[SSAValue, int] = dict(zip(block.args, args, strict=True))
    for op in block.ops:
        val[op.results[0]] = _eval(op, val)
    return val


def _eval(op: Operation, val: dict[SSAValue, int]) -> int:
    w = _width(op.results[0])
    m = (1 << w) - 1
    xs = [val[v] for v in op.operands]
    if isinstance(op, hw.ConstantOp):
        assert isinstance(op.value, IntegerAttr)
        return op.value.value.data & m
    if isinstance(op, comb.XorOp):
        out = 0
        for x in xs:
            out ^= x
        return out
    if isinstance(op, comb.AndOp):
        out = m
        for x in xs:
            out &= x
        return out
    if isinstance(op, comb.OrOp):
        out = 0
        for x in xs:
            out |= x
        return out
    if isinstance(op, comb.AddOp):
        return sum(xs) & m
    if isinstance(op, comb.ExtractOp):
        return (xs[0] >> op.low_bit.value.data) & m
    if isinstance(op, comb.ConcatOp):
        out = 0
        for v in op.operands:
            out = (out << _width(v)) | val[v]
        return out
    if isinstance(op, comb.ReplicateOp):
        return m if xs[0] & 1 else 0
    if isinstance(op, comb.ShrUOp):
        return xs[0] >> xs[1] if xs[1] < w else 0
    raise AssertionError(f"no evaluator for {op.name}")


def _signed(x: int, k: int) -> int:
    return x - (1 << k) if x >> (k - 1) & 1 else x


@pytest.mark.parametrize(("k", "w", "narrow"), SHAPES)
def test_the_two_vectors_add_up_to_the_product(k: int, w: int, narrow: Narrow | None) -> None:
    block, s, c = _parts(k, w, narrow)
    rng = random.Random(k * 1000 + w)
    corners = [0, 1, (1 << k) - 1, 1 << (k - 1), (1 << (k - 1)) - 1]
    pairs = [(a, b) for a in corners for b in corners]
    pairs += [(rng.getrandbits(k), rng.getrandbits(k)) for _ in range(300)]
    for a, b in pairs:
        val = _evaluate(block, [a, b])
        signed = narrow is not None and narrow.signed
        want = _signed(a, k) * _signed(b, k) if signed else a * b
        assert (val[s] + val[c]) % (1 << w) == want % (1 << w), (a, b)


@pytest.mark.parametrize(("k", "w"), [(32, 32), (16, 32), (33, 64), (1, 32), (5, 8), (8, 8)])
def test_the_squarer_squares(k: int, w: int) -> None:
    """``square`` (an own multiply of a value by itself): each bit product once."""
    block = Block(arg_types=[IntegerType(k), IntegerType(k)])
    h = HwBuilder(block, block.args[0], block.args[1])
    out = square(h, block.args[0], w, "sq")
    assert _width(out) == w
    rng = random.Random(k * 100 + w)
    xs = [0, 1, 2, 3, (1 << k) - 1, 1 << (k - 1), (1 << (k - 1)) - 1]
    xs += [rng.getrandbits(k) for _ in range(500)]
    for x in {x % (1 << k) for x in xs}:
        assert _evaluate(block, [x, 0])[out] == x * x % (1 << w), x


def test_the_carry_save_levels() -> None:
    # 3 → 2, 4 → 3 → 2, ..., 19 vectors (16 signed bits and 3 more) in 6 levels
    assert [carry_save_levels(n) for n in (1, 2, 3, 4, 6, 9, 19, 36)] == [0, 0, 1, 2, 3, 4, 6, 8]


@pytest.mark.parametrize(("k", "w", "narrow"), [SHAPES[0], SHAPES[2], SHAPES[3]])
def test_each_stage_is_shallower_than_the_multiply_and_within_its_estimate(
    k: int, w: int, narrow: Narrow | None, tmp_path: Path
) -> None:
    """Yosys (the units' script) on the carry-save stage and on the adder: each at most
    the depth the scheduler assumes (``split_stage_ns``), and both well below the whole
    multiply's."""
    from aquas.synth.multicycle import _yosys_figures

    block, s, c = _parts(k, w, narrow)
    block.add_op(hw.OutputOp([s, c]))
    ports = [
        hw.ModulePort(StringAttr(n), IntegerType(k), hw.DirectionAttr(hw.Direction.INPUT))
        for n in ("a", "b")
    ] + [
        hw.ModulePort(StringAttr(n), IntegerType(w), hw.DirectionAttr(hw.Direction.OUTPUT))
        for n in ("s", "c")
    ]
    mod = hw.HWModuleOp(StringAttr(f"csa{k}x{w}"), hw.ModuleType(ArrayAttr(ports)), Region(block))
    fig = _yosys_figures(tmp_path, mod)
    tree_ns, add_ns = split_stage_ns(LIB, UnitClass("mul", w), narrow)
    assert fig["depth"] * LIB.ns_per_level <= tree_ns + 1e-9
    assert add_ns == LIB.delay_ns("add", w)
    full = LIB.delay_ns("mul", w)
    assert max(tree_ns, add_ns) < 0.75 * full


# four 32-bit multiplies over full-width operands, in two ISAXs (two a state at most)
SPEC = """
extension spl;
state acc: u32 = 0;

#[opcode(custom0), funct7(1)]
isax mac2(rs1, rs2) -> rd {
    let p: u32 = rs1 * rs2;
    let q: u32 = (rs1 ^ 0x5a5a5a5a) * (rs2 + 7);
    acc = acc + p + q;
    return acc;
}

#[opcode(custom0), funct7(2)]
isax cube(rs1, rs2) -> rd {
    let p: u32 = rs1 * rs1;
    return p * (rs2 | 1);
}
"""


def test_a_multiply_slower_than_the_cycle_shares_split_units() -> None:
    """At a derate where a 32-bit multiply (3.6 ns x 1.4 = 5.04 ns) no longer fits the
    4.68 ns a 5.68 ns clock leaves: split units, each op read three states after its
    issue, not held to the 10 % rule (its reference does not fit the clock)."""
    lib = LIB.derated(1.4)
    builder, fsms = schedule_isaxs(lower_spec(SPEC, "spl.isax"), 5.68, lib)
    sharing, binding = builder.sharing, builder.binding
    assert sharing is not None and binding is not None
    c = UnitClass("mul", 32)
    assert sharing.registered == {c} and sharing.split == {c}
    assert sharing.split_isaxs == {"mac2", "cube"}
    assert len(binding.unit_of) == 4 and binding.split == frozenset({c})
    for op in binding.unit_of:
        assert builder.def_state[op] - builder.issue_state[op] == 3
    for problem, sched in builder.schedules:
        assert problem.verify(sched) == []
    # cube: p issued in 0, read in 3 and issued again, the product read in 6
    got = {f.isax.sym_name.data: f.latency.at(0) for f in fsms}
    assert got["cube"] == (7, 7)


def test_split_units_cosimulate_bit_exact_and_lint_clean(tmp_path: Path) -> None:
    from aquas.synth.lint import lint

    path = tmp_path / "spl.isax"
    path.write_text(SPEC)
    res = cosim_random(path, tmp_path / "out", 200, 3, 5.68, LIB.derated(1.4))
    verilog = res.verilog_path.read_text()
    assert "mul32_u0_s_q" in verilog and "mul32_u0_c_q" in verilog
    assert " * " not in verilog  # no multiplier cell: the tree is written out
    assert lint(res.verilog_path) == []


def test_pointcloud_at_the_core_clock_holds_split_units_to_their_own_cycles() -> None:
    """Point cloud at 5.68 ns with the delays derated by 1.32 (its third timing-closure
    round): its 32- and 64-bit multiplies (4.75 and 6.07 ns) do not fit 4.68 ns, so both
    classes are split. The number of units is the fewest within 10 % of the cycles on
    split units without a limit (the reference without sharing does not fit the clock,
    and held to it every class kept its peak: 6 units of mul32): 3; the 64-bit class has
    the one unit of vcovmat3d's ``#[mul_units(1)]``."""
    from aquas.spec.frontend import lower_spec_file

    lib = LIB.derated(1.3197)
    module = lower_spec_file(ROOT / "examples" / "pointcloud" / "pointcloud.isax")
    builder, fsms = schedule_isaxs(module, 5.68, lib)
    sharing, binding = builder.sharing, builder.binding
    assert sharing is not None and binding is not None
    assert sharing.split == {UnitClass("mul", 32), UnitClass("mul", 64)}
    assert {c.key: n for c, n in binding.counts().items()} == {"mul32": 3, "mul64": 1}
    got = {f.isax.sym_name.data: f.latency.at(0) for f in fsms}
    assert got == {
        "v3ddist": (171, 171),
        "vcovmat3d": (173, 173),
        "vgemv4": (52, 52),
        "vmaxarg": (42, 42),
        "vnearest": (447, 447),
    }
    # the pipelined scans: the modulo schedule chained their multiplies at II 1, split
    # units hold each iteration for 3 cycles, and the report says so
    from aquas.synth.flow import loop_reports

    loops = {isax: ls[0] for isax, ls in loop_reports(builder).items()}
    for isax in ("v3ddist", "vnearest"):
        lp = loops[isax]
        assert (lp["ii"], lp["kernel_states"]) == (1, 4), (isax, lp)
        assert lp["kernel_limit"] == "3 op(s) on mul32 taking 3 cycles from issue to result"
    # the covariance loop (II 6 on its one mul64 unit): the modulo schedule places each
    # product's adds 3 cycles after its issue, and the predicated kernel takes the last
    # ones in flight, at its II (on two units it waited for them: 6 states, not 3)
    cov = loops["vcovmat3d"]
    assert (cov["ii"], cov["kernel_states"], cov["kernel_limit"]) == (6, 6, ""), cov
    assert cov["predicated"]


def _pc_at(derate: float, clock_ns: float = 5.67):  # type: ignore[no-untyped-def]
    from aquas.spec.frontend import lower_spec_file

    module = lower_spec_file(ROOT / "examples" / "pointcloud" / "pointcloud.isax")
    return schedule_isaxs(module, clock_ns, LIB.derated(derate))


def test_pointcloud_at_its_kept_derating_runs_vgemv4_on_the_split_64_bit_unit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Derate 1.2312 at 5.67 ns (the round timing closure keeps on VexRiscv): vcovmat3d's
    64-bit multiplies are split, vgemv4's 32-bit ones fit a cycle on a registered unit.
    The one split 64-bit unit (33-bit signed operands) serves both, instead of a second,
    32 x 32 multiplier: vgemv4's products come a state later (48 -> 52 cycles at L = 0,
    within 10 %; the same 175 on VexRiscv's memory, under its bursts' latency). The
    scans' squarers keep their own operators: kernels of one state. Before the merge was
    taken, the scans' squarers counted as users of the merged class and did not fit
    behind the 64-bit unit's delay, so no op of the class was bound and the merge was
    dropped."""
    from aquas.synth import binding as binding_mod
    from aquas.synth.flow import loop_reports

    m32, m64 = UnitClass("mul", 32), UnitClass("mul", 64)
    builder, fsms = _pc_at(1.2312)
    sharing, binding = builder.sharing, builder.binding
    assert sharing is not None and binding is not None
    assert sharing.merge == {m32: m64}
    assert sharing.split == {m64} and sharing.split_isaxs == {"vcovmat3d"}
    assert {c.key: n for c, n in binding.counts().items()} == {"mul64": 1}
    assert len(binding.users[(m64, 0)]) == 22  # vcovmat3d x 6, vgemv4 x 16
    assert binding.narrow[m64] == Narrow(33, True)
    merged = {f.isax.sym_name.data: f.latency.at(0) for f in fsms}
    loops = {
        isax: (ls[0]["ii"], ls[0]["kernel_states"]) for isax, ls in loop_reports(builder).items()
    }
    assert loops == {"v3ddist": (1, 1), "vcovmat3d": (6, 6), "vnearest": (1, 1)}
    for problem, sched in builder.schedules:
        assert problem.verify(sched) == []

    monkeypatch.setattr(binding_mod, "merge_options", lambda classes, limit=16: [{}])
    builder, fsms = _pc_at(1.2312)
    assert builder.binding is not None
    assert {c.key: n for c, n in builder.binding.counts().items()} == {"mul32": 1, "mul64": 1}
    unmerged = {f.isax.sym_name.data: f.latency.at(0) for f in fsms}
    assert unmerged["vgemv4"] == (48, 48) and merged["vgemv4"] == (52, 52)
    assert {k: v for k, v in merged.items() if k != "vgemv4"} == {
        k: v for k, v in unmerged.items() if k != "vgemv4"
    }


def test_a_merge_is_held_to_the_10_percent_rule_against_no_merge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kyber at derate 1.15: its 53-bit multiplies are split, so its ISAXs are held only
    to their cycles on split units, and a merge used to set that reference itself: the
    17-, 32- and 33-bit multiplies on the 37-bit unit made modmul_q 7 -> 9 cycles and
    ntt_bfly 8 -> 11. Merges are now held to the cycles without a merge; the least
    multiplier area among those that keep them sends the 17-bit multiplies to the 32-bit
    unit and the 37-bit ones to the split 53-bit unit: 3 units instead of 5.

    Those multiplies are Kyber's hand-written Barrett steps (``tests/kyber_barrett.isax``)
    by 1290167 as they were before the
    narrowing kept a narrowed constant a constant (synth/narrow.py ``_truncated``): each
    constant a truncation, so a data operand. The test narrows that way to keep the five
    multiply shapes that exercise the merge rule (Kyber now multiplies by the constant
    with shifts and additions, and has a single multiply class). For the same reason the
    delays leave out the word select of a two-bank SRAM read (``timing.bank_select_ns``),
    which the model did not count then."""
    from xdsl.dialects import arith

    from aquas.spec.frontend import lower_spec_file
    from aquas.synth import binding as binding_mod
    from aquas.synth import narrow, timing
    from aquas.synth.binding import within

    monkeypatch.setattr(narrow, "_truncated", lambda v, to: arith.TruncIOp(v, to))
    monkeypatch.setattr(timing, "bank_select_ns", lambda lib, op: 0.0)

    def run() -> tuple[dict[str, int], dict[str, tuple[int, int]]]:
        module = lower_spec_file(ROOT / "tests" / "kyber_barrett.isax")
        builder, fsms = schedule_isaxs(module, 5.68, LIB.derated(1.15))
        assert builder.binding is not None
        counts = {c.key: n for c, n in builder.binding.counts().items()}
        return counts, {f.isax.sym_name.data: f.latency.at(0) for f in fsms}

    counts, merged = run()
    assert counts == {"mul32": 1, "mul33": 1, "mul53": 1}
    monkeypatch.setattr(binding_mod, "merge_options", lambda classes, limit=16: [{}])
    counts, unmerged = run()
    assert counts == {"mul17": 1, "mul32": 1, "mul33": 1, "mul37": 1, "mul53": 1}
    assert merged["modmul_q"] == unmerged["modmul_q"] == (7, 7)
    assert merged["ntt_bfly"] == unmerged["ntt_bfly"] == (8, 8)
    assert all(within(merged[n], unmerged[n], 0.10) for n in merged)
    assert merged["ntt_fwd"] != unmerged["ntt_fwd"]  # the merge costs cycles, within 10 %


MERGE_SPEC = """\
extension mrg;

#[opcode(custom0), funct7(0)]
isax wide(rs1, rs2) -> rd {
    let a: i64 = sext<i64>(rs1 as i32) * sext<i64>(rs2 as i32);
    let b: i64 = sext<i64>((rs1 + 1) as i32) * sext<i64>((rs2 ^ 5) as i32);
    return trunc<u32>((a + b) >> 32) ^ trunc<u32>(a + b);
}

#[opcode(custom0), funct7(1), mul_units(1)]
isax narrow(rs1, rs2) -> rd {
    let p: u32 = rs1 * rs2;
    let q: u32 = (rs1 + 3) * (rs2 + 7);
    let r: u32 = (rs1 ^ 9) * (rs2 - 1);
    return p ^ q ^ r;
}
"""


def test_narrower_multiplies_on_a_split_unit_cosimulate_bit_exact(tmp_path: Path) -> None:
    """At derate 1.2312 the 64-bit multiplies are split and the 32-bit ones would fit a
    cycle on units of their own (``narrow`` asks for one, ``mul_units(1)``); the split
    64-bit units (32-bit signed operands) serve both: the 32-bit products are the low
    bits of the units' sums."""
    from aquas.synth.lint import lint

    lib = LIB.derated(1.2312)
    builder, _ = schedule_isaxs(lower_spec(MERGE_SPEC, "mrg.isax"), 5.67, lib)
    sharing, binding = builder.sharing, builder.binding
    assert sharing is not None and binding is not None
    m64 = UnitClass("mul", 64)
    assert sharing.merge == {UnitClass("mul", 32): m64} and sharing.split_isaxs == {"wide"}
    assert {c.key: n for c, n in binding.counts().items()} == {"mul64": 2}
    assert binding.narrow[m64] == Narrow(32, True)
    assert len(binding.unit_of) == 5  # the three of narrow among them
    path = tmp_path / "mrg.isax"
    path.write_text(MERGE_SPEC)
    res = cosim_random(path, tmp_path / "out", 200, 7, 5.67, lib)
    verilog = res.verilog_path.read_text()
    assert "mul64_u1_s_q" in verilog and "mul32_u" not in verilog
    assert " * " not in verilog
    assert lint(res.verilog_path) == []
