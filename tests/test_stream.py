"""Burst data streamed into the compute after it (``aquas-interface-stream``; issue 12,
"overlapping transfer with compute"): which bursts get a window, what each cycle of the
window needs, the cycle-level run of burst and window, the model, the pass and the
``auto`` choice. The hardware is checked against these in tests/sim/test_stream_sim.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from plan_harness import assert_same_behaviour

from aquas.dialects import aquas as aq
from aquas.interpreter import find_extension
from aquas.model import predict_module
from aquas.plans.choose import apply_plan
from aquas.plans.stream import set_stream
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.flow import schedule_isaxs
from aquas.synth.fsm import STREAM_ATTR, IsaxFsm, StreamWindow, stream_cycles
from aquas.synth.oplib import OperatorLibrary
from aquas.target import load_target

SPEC = Path(__file__).resolve().parent / "sim" / "specs" / "stream.isax"


def fsms(m: object, stream: bool = True) -> dict[str, IsaxFsm]:
    if stream:
        set_stream(m)  # type: ignore[arg-type]
    _, fs = schedule_isaxs(m, 10.0, OperatorLibrary.load(), 32)  # type: ignore[arg-type]
    return {f.isax.sym_name.data: f for f in fs}


def test_each_burst_read_before_compute_gets_its_window() -> None:
    fs = fsms(lower_spec_file(SPEC))
    got = {n: sorted(spm_name(o) for o in f.stream) for n, f in fs.items()}
    # snear's 3-word burst is followed by the next burst at once: no window
    assert got == {"sdot": ["a"], "snear": ["p"], "shalf": ["h"]}
    (sdot,) = fs["sdot"].stream.values()
    # one loop state an iteration reading a[i] (a register scratchpad: no port taken),
    # then the state after the loop
    none = frozenset[int]()
    assert sdot.visits == (*tuple((i, none) for i in range(16)), (-1, none))
    (shalf,) = fs["shalf"].stream.values()
    # h[2i] in the loop's first state, an SRAM read of its one bank: the beats' port is
    # taken
    assert [v for v in shalf.visits if v[0] >= 0] == [(2 * i, frozenset({0})) for i in range(8)]
    # h is one bank: every read takes the beats' port
    assert (shalf.cyclic, shalf.bank0) == (0, 0)
    (snear,) = fs["snear"].stream.values()
    assert (snear.cyclic, snear.bank0) == (3, 0)
    (snear,) = fs["snear"].stream.values()
    needs = [n for n, _ in snear.visits if n >= 0]
    # the pipelined loop: point 0 in the prologue, then each kernel iteration reads the
    # next point for the one after it (a carried read)
    assert needs == [3 * j + 2 for j in range(16)]


def spm_name(op: object) -> str:
    return op.scratchpad.root_reference.data  # type: ignore[attr-defined]


def test_the_latency_lower_bound_drops_by_the_window() -> None:
    plain = fsms(lower_spec_file(SPEC), stream=False)
    fs = fsms(lower_spec_file(SPEC))
    for n, f in fs.items():
        (w,) = f.stream.values()
        a, b = plain[n].latency, f.reported
        assert f.latency == a  # the schedule's own: what sharing weighs
        assert (b.max_fixed, b.max_mem, b.max_ctl) == (a.max_fixed, a.max_mem, a.max_ctl)
        assert b.min_fixed == a.min_fixed - len(w.visits)


def win(*visits: tuple[int, set[int]], cyclic: int = 0, bank0: int = 0) -> StreamWindow:
    return StreamWindow(frozenset(), tuple((n, frozenset(b)) for n, b in visits), cyclic, bank0)


def test_stream_cycles_by_hand() -> None:
    # two beats from cycle 3 (request in cycle 0, 2 idle cycles): beat 0 in cycle 3, the
    # first state runs in cycle 4 while beat 1 arrives, the last one in cycle 5
    assert stream_cycles(win((0, set()), (1, set())), 2, 3) == 6
    # without streaming: 1 + 2 + 2 cycles of wait state, then the 2 states: 7
    # a state reading the SRAM port makes the beat of its cycle wait (any bank: the
    # beats' bank is not tracked)
    assert stream_cycles(win((0, {0}), (2, {1})), 3, 1) == 6
    # with it tracked (cyclic 3, the burst from bank 0): the state reading bank 0 while
    # beat 1 (bank 1) arrives takes nothing from it
    assert stream_cycles(win((0, {0}), (2, {1}), cyclic=3), 3, 1) == 5
    assert stream_cycles(win((0, {1}), (2, {1}), cyclic=3), 3, 1) == 6
    # a state needing nothing runs at once; the last waits for every beat (cycles 2..5)
    assert stream_cycles(win((-1, set()), (-1, set())), 4, 2) == 7
    # packed beats: 4 elements a beat, the burst starting at the third slot of its first
    assert stream_cycles(win((1, set()), (2, set())), 2, 1, per=4, skip=2) == 4


def test_the_model_saves_what_the_cycle_level_run_saves() -> None:
    t = load_target(soc="vexriscv")
    wait = t.isax_master.setup_latency + t.memory.latency
    p0 = {p.isax: p.total for p in predict_module(lower_spec_file(SPEC), t)}
    m1 = lower_spec_file(SPEC)
    set_stream(m1)
    p1 = {p.isax: p.total for p in predict_module(m1, t)}
    fs = fsms(lower_spec_file(SPEC))
    for n, f in fs.items():
        ((op, w),) = f.stream.items()
        beats = op.length_value  # 32-bit elements on the 32-bit port
        saved = (1 + wait + beats + len(w.visits)) - stream_cycles(w, beats, 1 + wait)
        assert p0[n] - p1[n] == saved > 0, n
    # sdot: each loop state runs in the cycle after its element's beat, so the window
    # ends 2 cycles after the last beat instead of 17
    assert p0["sdot"] - p1["sdot"] == 15


def test_the_plan_is_a_registered_pass() -> None:
    from aquas.context import make_context
    from aquas.passes import parse_pipeline

    m = lower_spec_file(SPEC)
    parse_pipeline("aquas-interface-stream{only=snear}").apply(make_context(), m)
    marked = {i.sym_name.data for i in find_extension(m).isaxs() if STREAM_ATTR in i.attributes}
    assert marked == {"snear"}


def test_auto_streams_where_the_model_says_it_pays() -> None:
    from aquas.plans.choose import apply_interface

    t = load_target(soc="vexriscv")
    auto, fixed = lower_spec_file(SPEC), lower_spec_file(SPEC)
    choice = apply_interface(auto, "auto", 10.0, 12, target=t)
    marked = {i.sym_name.data for i in find_extension(auto).isaxs() if STREAM_ATTR in i.attributes}
    # shalf's window would send its store's request ahead instead, which the model says
    # saves more (the setup and latency, 12 cycles) than streaming the burst does
    assert marked == {"sdot", "snear"}
    assert "sent ahead across compute" in choice.reasons["shalf"]
    shalf = choice.report("shalf")["candidates"]["as-written"]
    assert "bursts_streamed" not in shalf and shalf["requests_sent_early"] == 1
    assert "1 burst read(s) streamed" in choice.reasons["sdot"]
    assert choice.report("sdot")["candidates"]["as-written"]["bursts_streamed"] == 1
    apply_interface(fixed, "as-written", 10.0, 12, target=t)
    assert not any(STREAM_ATTR in i.attributes for i in find_extension(fixed).isaxs())


SPM = "scratchpad a: [u32; 16];\n"


def one(body: str) -> dict[str, IsaxFsm]:
    spec = (
        f"extension x;\n{SPM}#[opcode(custom0), funct7(0)]\nisax t(rs1, rs2) -> rd {{\n{body}\n}}\n"
    )
    return fsms(lower_spec(spec, "t.isax"))


def test_bursts_that_cannot_stream_keep_their_wait_state() -> None:
    burst = "burst a[0 +: 16] <- mem[rs1];\n"
    # the window writes the scratchpad the beats go to
    writes = one(
        burst + "var s: u32 = 0;\nfor i in 0..8 { a[i + 8] = a[i] + 1; s += a[i]; }\nreturn s;"
    )
    # an index that is data: when the state may run is not known before it runs
    data = one(burst + "var s: u32 = 0;\nfor i in 0..4 { s += a[s & 15]; }\nreturn s;")
    # a burst inside a loop runs more than once a call
    looped = one(
        "var s: u32 = 0;\nfor k in 0..2 {\n"
        + burst.replace("rs1", "rs1 + 64 * k")
        + "for i in 0..16 { s += a[i]; }\n}\nreturn s;"
    )
    # an address loaded from memory
    loaded = one(
        "let p: u32 = mem<u32>[rs2];\n"
        + burst.replace("rs1", "p")
        + "var s: u32 = 0;\nfor i in 0..16 { s += a[i]; }\nreturn s;"
    )
    for fs in (writes, data, looped, loaded):
        assert fs["t"].stream == {}
    # the same loop over the burst's data, with none of these: streamed
    plain = one(burst + "var s: u32 = 0;\nfor i in 0..16 { s += a[i]; }\nreturn s;")
    assert len(plain["t"].stream) == 1


EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*/*.isax"))


@pytest.mark.parametrize("plan", ["as-written", "burst"])
@pytest.mark.parametrize("spec", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_the_plan_keeps_every_example_isax_equivalent(spec: Path, plan: str) -> None:
    """The plan reorders reads (the largest burst of a run of reads last): checked on the
    golden interpreter as written (bursts next to loads) and after the burst plan (runs
    of bursts), with aliasing operands."""
    m = lower_spec_file(spec)
    if plan != "as-written":
        apply_plan(m, plan)
    ref = m.clone()
    set_stream(m)
    assert assert_same_behaviour(ref, m, calls=150, seed=13) >= 100


def test_the_largest_burst_of_a_read_run_goes_last() -> None:
    """vcovmat3d under the burst plan reads the 48 points and then the centroid's 3 words
    (a burst the plan made of the three loads): streamed, the points come last, so the
    loop after them is their window."""
    m = lower_spec_file(Path(__file__).resolve().parents[1] / "examples/pointcloud/pointcloud.isax")
    apply_plan(m, "burst", only="vcovmat3d")
    isax = next(i for i in find_extension(m).isaxs() if i.sym_name.data == "vcovmat3d")

    def lengths() -> list[int]:
        return [o.length_value for o in isax.body.block.ops if isinstance(o, aq.BurstReadOp)]

    assert lengths() == [48, 3]
    set_stream(m, only="vcovmat3d")
    assert lengths() == [3, 48]
    fs = fsms(m, stream=False)
    assert [o.length_value for o in fs["vcovmat3d"].stream] == [48]  # type: ignore[attr-defined]
