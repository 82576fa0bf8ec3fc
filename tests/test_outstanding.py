"""Several memory requests in flight (``aquas-interface-outstanding``; issue 12): which
wait states form runs whose requests are sent ahead, the schedule's latency, the model's
prediction, the pass and the target key. The hardware (unit + aquas_mem_ctrl) is checked
against these in tests/sim/test_outstanding_sim.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.interpreter import find_extension
from aquas.model import predict_module
from aquas.plans.outstanding import set_outstanding
from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import schedule_isaxs
from aquas.synth.fsm import OUTSTANDING_ATTR
from aquas.synth.oplib import OperatorLibrary
from aquas.target import load_target

SPEC = Path(__file__).resolve().parent / "sim" / "specs" / "ahead.isax"


def schedule(k: int) -> dict[str, tuple[int, int, list[str]]]:
    """Per ISAX: (wait states that pay the latency, fixed cycles, ahead op names)."""
    m = lower_spec_file(SPEC)
    set_outstanding(m, k)
    _, fsms = schedule_isaxs(m, 10.0, OperatorLibrary.load(), 32)
    return {
        f.isax.sym_name.data: (
            f.latency.max_mem,
            f.latency.max_fixed,
            sorted(o.name.split(".")[1] for o in f.ahead),
        )
        for f in fsms
    }


def test_one_request_in_flight_sends_nothing_ahead() -> None:
    s = schedule(1)
    # three: 3 burst reads + 1 burst write; chase: 2 loads + 3 stores
    assert s["three"][0] == 4 and s["three"][2] == []
    assert s["chase"][0] == 5 and s["chase"][2] == []


def test_runs_are_bounded_by_the_requests_in_flight() -> None:
    one, two, four = schedule(1), schedule(2), schedule(4)
    # three: the reads (rs1, rs1 + 32, rs2) run together; the write follows the loop
    assert two["three"][0] == 3 and two["three"][2] == ["burst_read"]
    assert four["three"][0] == 2 and four["three"][2] == ["burst_read", "burst_read"]
    # chase: q's address is loaded data, so p's load starts no run; q's load and the
    # three stores do: [q, st], [st, st] with 2 in flight, one run of 4 with 4
    assert two["chase"][0] == 3 and two["chase"][2] == ["store", "store"]
    assert four["chase"][0] == 2 and four["chase"][2] == ["store", "store", "store"]
    # the beats, acknowledgements and compute states are the same: only latencies go
    for k in ("three", "chase"):
        assert one[k][1] == two[k][1] == four[k][1]


def test_the_model_costs_a_request_sent_ahead_as_its_data() -> None:
    """Each request sent ahead saves its handshake, DMA setup and memory latency."""
    base = load_target(soc="vexriscv")
    saved = 1 + base.isax_master.setup_latency + base.memory.latency
    for k, ahead in ((2, {"three": 1, "chase": 2}), (4, {"three": 2, "chase": 3})):
        t = base.replace(isax_master={"outstanding": k})
        m1, mk = lower_spec_file(SPEC), lower_spec_file(SPEC)
        set_outstanding(mk, k)
        p1 = {p.isax: p.total for p in predict_module(m1, t)}
        pk = {p.isax: p for p in predict_module(mk, t)}
        for name, n in ahead.items():
            assert pk[name].total == p1[name] - n * saved, (k, name)
            assert pk[name].notes == []


def test_the_plan_is_a_registered_pass_with_bounds() -> None:
    from aquas.context import make_context
    from aquas.passes import parse_pipeline

    m = lower_spec_file(SPEC)
    parse_pipeline("aquas-interface-outstanding{n=3 only=chase}").apply(make_context(), m)
    got = {i.sym_name.data: i.attributes.get(OUTSTANDING_ATTR) for i in find_extension(m).isaxs()}
    assert got["three"] is None
    assert got["chase"] is not None and got["chase"].value.data == 3  # type: ignore[attr-defined]
    set_outstanding(m, 1)
    assert all(OUTSTANDING_ATTR not in i.attributes for i in find_extension(m).isaxs())
    with pytest.raises(AquasError, match=r"n must be 1\.\.8"):
        set_outstanding(m, 9)


def test_the_target_refuses_requests_in_flight_with_an_l2() -> None:
    base = load_target(soc="vexriscv")
    assert base.isax_master.outstanding == 1
    assert base.replace(isax_master={"outstanding": 4}).verilog_params()["OUTSTANDING"] == 4
    with pytest.raises(ValueError, match=r"outstanding = 2 needs l2\.enable = false"):
        base.replace(isax_master={"outstanding": 2}, l2={"enable": True})
    with pytest.raises(ValueError):
        base.replace(isax_master={"outstanding": 0})


def test_auto_interface_on_a_pipelined_target_annotates_every_isax() -> None:
    from aquas.plans.choose import apply_interface

    t = load_target("vexriscv-pipelined")
    assert t.isax_master.outstanding == 4
    m = lower_spec_file(SPEC)
    choice = apply_interface(m, "auto", 10.0, 12, target=t)
    for isax in find_extension(m).isaxs():
        k = isax.attributes[OUTSTANDING_ATTR]
        assert k.value.data == 4  # type: ignore[attr-defined]
    # the chooser's prediction is the model's on the annotated module
    assert set(choice.predictions) == {"three", "chase"}


def test_peer_v3ddist_meets_the_peer_whole_call_with_eight_in_flight() -> None:
    """The peer project's v3ddist_vv (six coordinate bursts, unroll 4, one burst write)
    takes 166 cycles for its whole call at L = 15 on two DMA channels (issue 18). Alone
    on one channel, at the core's clock, pipelined: every transfer pays L with one
    request in flight; with 8 the six reads are one run and only it and the write pay L.
    (benchmarks/bench_peer.py measures the whole benchmark unit in RTL.)"""
    m = lower_spec_file(Path(__file__).resolve().parents[1] / "benchmarks/specs/peer_shapes.isax")
    for isax in list(find_extension(m).isaxs()):
        if isax.sym_name.data != "v3ddist6":
            isax.detach()
            isax.erase()
    lib = OperatorLibrary.load()
    cycles = {}
    for k in (1, 8):
        mk = m.clone()
        set_outstanding(mk, k)
        _, (f,) = schedule_isaxs(mk, 5.68, lib, 32, pipeline="auto")
        assert f.latency.max_mem == (7 if k == 1 else 2)
        cycles[k] = f.latency.at(15)[1] + 1  # + the dispatch cycle, as in the reports
    # each of the 5 requests sent ahead saves L (the schedule's L includes the setup)
    assert cycles[1] - cycles[8] == 5 * 15
    assert cycles[8] <= 166, cycles
