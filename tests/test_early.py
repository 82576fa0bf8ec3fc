"""Requests sent ahead across compute (``aquas-interface-early``; issue 12): which wait
states get a window of compute states, the schedule's latency range, the model's saving,
the pass, and the ``auto`` choice. The hardware is checked against these in
tests/sim/test_early_sim.py."""

from __future__ import annotations

from pathlib import Path

from aquas.interpreter import find_extension
from aquas.model import predict_module
from aquas.plans.early import set_early
from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import schedule_isaxs
from aquas.synth.fsm import EARLY_ATTR, FsmBuilder, IsaxFsm, LoopLatch
from aquas.synth.oplib import OperatorLibrary
from aquas.target import load_target

SPEC = Path(__file__).resolve().parent / "sim" / "specs" / "early.isax"


def fsms(early: bool) -> tuple[object, dict[str, IsaxFsm]]:
    m = lower_spec_file(SPEC)
    if early:
        set_early(m)
    b, fs = schedule_isaxs(m, 10.0, OperatorLibrary.load(), 32)
    return b, {f.isax.sym_name.data: f for f in fs}


def test_each_request_after_compute_gets_its_window() -> None:
    _, fs = fsms(True)
    got = {n: sorted((o.name, c) for o, c in f.early.items()) for n, f in fs.items()}
    # scale: the burst write after the 8-iteration loop (one state per iteration); mix:
    # the load after the 16-iteration loop and its entry state; chain: an address that is
    # data, and a load inside a loop; pick: nothing before its load
    assert got == {
        "scale": [("aquas.burst_write", 8)],
        "mix": [("aquas.load", 17)],
        "chain": [],
        "pick": [],
        # the store after the compute loop (its entry state and 3 iterations), not from
        # the loop of stores before it
        "afterloop": [("aquas.store", 4)],
    }
    # the store right after mix's load has no compute before it
    _, plain = fsms(False)
    assert all(not f.early for f in plain.values())


def test_the_latency_ranges_from_the_beats_to_the_full_wait() -> None:
    _, plain = fsms(False)
    _, early = fsms(True)
    for n in ("scale", "mix"):
        a, b = plain[n].latency, early[n].latency
        # at worst the port takes the request as the wait state begins: as before
        assert (b.max_fixed, b.max_mem) == (a.max_fixed, a.max_mem)
        # at best only the wait state's first cycle is left of its latency
        assert b.min_mem == a.min_mem - 1 and b.min_fixed == a.min_fixed + 1
    assert early["chain"].latency == plain["chain"].latency


def test_the_model_saves_setup_and_latency_up_to_the_window() -> None:
    t = load_target(soc="vexriscv")
    wait = t.isax_master.setup_latency + t.memory.latency  # 2 + 10
    m0, m1 = lower_spec_file(SPEC), lower_spec_file(SPEC)
    set_early(m1)
    p0 = {p.isax: p.total for p in predict_module(m0, t)}
    p1 = {p.isax: p.total for p in predict_module(m1, t)}
    assert p0["scale"] - p1["scale"] == min(wait, 8) == 8
    assert p0["mix"] - p1["mix"] == min(wait, 17) == 12
    assert p1["chain"] == p0["chain"] and p1["pick"] == p0["pick"]


def test_the_plan_is_a_registered_pass() -> None:
    from aquas.context import make_context
    from aquas.passes import parse_pipeline

    m = lower_spec_file(SPEC)
    parse_pipeline("aquas-interface-early{only=mix}").apply(make_context(), m)
    marked = {i.sym_name.data for i in find_extension(m).isaxs() if EARLY_ATTR in i.attributes}
    assert marked == {"mix"}


def test_auto_sends_ahead_where_a_window_exists_and_fixed_plans_do_not() -> None:
    from aquas.plans.choose import apply_interface

    t = load_target(soc="vexriscv")
    auto, fixed = lower_spec_file(SPEC), lower_spec_file(SPEC)
    choice = apply_interface(auto, "auto", 10.0, 12, target=t)
    marked = {i.sym_name.data for i in find_extension(auto).isaxs() if EARLY_ATTR in i.attributes}
    assert marked == {"scale", "mix", "afterloop"}
    assert "1 request(s) sent ahead across compute" in choice.reasons["scale"]
    assert choice.report("mix")["candidates"]["as-written"]["requests_sent_early"] == 1
    apply_interface(fixed, "as-written", 10.0, 12, target=t)
    assert not any(EARLY_ATTR in i.attributes for i in find_extension(fixed).isaxs())


def test_a_loop_entered_from_a_load_starts_in_a_state_of_its_own() -> None:
    """The loop's initial value (``chain``) and the branch's condition (``pick``) are
    loaded values: their states are not the loads' wait states, whose register writes
    repeat in every cycle, the last one before the loaded value is in its register."""
    from aquas.dialects import aquas as aq
    from aquas.synth.fsm import Branch, FsmBuilder

    b, _ = fsms(False)
    assert isinstance(b, FsmBuilder)
    for st in b.states:
        if st.isax in ("chain", "pick") and isinstance(st.wait, aq.LoadOp):
            assert not st.writes, st.id  # no loop initial value written here
            assert not isinstance(st.next, Branch), st.id  # nor a branch decided


def test_a_wait_state_in_a_loop_gets_no_window_even_past_a_branch(tmp_path: Path) -> None:
    """The walk stops at the data-dependent branch in the loop's first iteration, before it
    sees the load again: the loop's states still rule the load out (its window would
    differ from one iteration to the next)."""
    spec = tmp_path / "loopy.isax"
    spec.write_text(
        "extension loopy;\n"
        "#[opcode(custom0), funct7(0)]\n"
        "isax walk(rs1, rs2) -> rd {\n"
        "    var t: u32 = rs1;\n"
        "    for i in 0..4 {\n"
        "        t = (t * 3) ^ rs2;\n"
        "        t = t + mem<u32>[rs2 + 4];\n"
        "        if t > rs1 { mem<u32>[rs2 + 8] = t; }\n"
        "    }\n"
        "    return t;\n"
        "}\n"
    )
    m = lower_spec_file(spec)
    set_early(m)
    b, (f,) = schedule_isaxs(m, 10.0, OperatorLibrary.load(), 32)
    from aquas.synth.fsm import Branch, FsmBuilder

    assert isinstance(b, FsmBuilder)
    assert any(isinstance(s.next, Branch) for s in b.states)  # the walk does stop there
    assert f.early == {}


def test_no_request_goes_ahead_from_a_loop_holding_an_access() -> None:
    """``afterloop``: the states of the loop holding a store run before that store in every
    iteration, so a request sent from them for the store after the loop would be out while
    the loop's store needs the port (the unit of a generated spec hung so). The window of
    the store after it holds only the compute loop after the loop of stores."""
    b, _ = fsms(True)
    assert isinstance(b, FsmBuilder)
    states = [s for s in b.states if s.isax == "afterloop"]
    loops = [range(s.next.body, s.id + 1) for s in states if isinstance(s.next, LoopLatch)]
    busy = [r for r in loops if any(b.state(i).wait is not None for i in r)]
    late = [s for s in states if s.early]
    assert len(busy) == 1 and len(late) == 1
    assert not any(i in busy[0] for i in late[0].early)
