"""The memory-interface model: its formulas on hand-computed examples, the per-ISAX
predictions of small specs, the offload cost, plans, and ``aquas model``.

Every expected number below is worked out by hand from the rules in docs/memory-model.md
(and aquas_mem_ctrl's header), not taken from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from aquas.cli import main
from aquas.diagnostics import AquasError
from aquas.model import MemParams, offload_cost, predict_module
from aquas.model.formulas import (
    access_wait,
    bank_beat_cycles,
    beat_bytes,
    beats,
    group_cycles,
    overlapped_cycles,
    request_cycles,
    requests,
    split_bursts,
)
from aquas.model.plans import choose_plan
from aquas.spec.frontend import lower_spec
from aquas.target import load_target

ROOT = Path(__file__).resolve().parents[1]
VEX = load_target(soc="vexriscv")
VEX_L2 = VEX.replace(l2={"enable": True})

# -- parameters ----------------------------------------------------------------------------


def test_params_come_from_the_descriptor() -> None:
    p = MemParams.of(VEX)
    assert (p.latency, p.setup, p.bus_bytes, p.max_burst_beats, p.channels) == (10, 2, 4, 256, 1)
    assert p.l2 == "off"
    t = VEX.replace(
        memory={"latency": 40},
        isax_master={"setup_latency": 5, "max_burst_beats": 16},
        l2={"enable": True, "line_bytes": 64, "hit_latency": 3},
    )
    q = MemParams.of(t, "warm")
    assert (q.latency, q.setup, q.max_burst_beats, q.l2, q.l2_hit_latency) == (40, 5, 16, "warm", 3)
    assert q.line_words == 16
    assert q.miss_penalty == 40 + 16


# -- formulas ------------------------------------------------------------------------------


def test_request_cycles_single_and_burst() -> None:
    p = MemParams.of(VEX)  # latency 10, setup 2
    # read of one word: handshake 1 + setup 2 + latency 10 + 1 beat
    assert request_cycles(p, 1, False, access_wait(p)) == 14
    # 64-bit store: 1 + 2 + 10 + 2 beats + ack 1
    assert request_cycles(p, 2, True, access_wait(p)) == 16
    # 48-word burst read (v3ddist's point block)
    assert request_cycles(p, 48, False, access_wait(p)) == 61
    # 16-word burst write: 1 + 2 + 10 + 16 + 1
    assert request_cycles(p, 16, True, access_wait(p)) == 30


def test_l2_waits() -> None:
    cold = MemParams.of(VEX_L2, "cold")  # 32-byte lines: 8 words
    assert access_wait(cold, hit=True) == 2
    assert access_wait(cold, hit=False) == 10 + 8
    assert access_wait(cold, hit=False, dirty_victim=True) == 2 * (10 + 8)
    assert access_wait(MemParams.of(VEX_L2, "warm")) == 2
    assert access_wait(MemParams.of(VEX, "warm")) == 10  # no L2: the mode is moot


def test_beats_and_bursts() -> None:
    assert beats(192, beat_bytes(4, 4)) == 48
    assert beats(32, beat_bytes(2, 4)) == 16  # u16 elements: one halfword per beat
    assert beats(8, beat_bytes(8, 4)) == 2  # a 64-bit value on a 32-bit port
    assert beats(8, beat_bytes(8, 16)) == 1  # ... and on a 128-bit port
    assert requests(300, 256) == 2
    assert split_bursts(300, 256) == [256, 44]
    assert split_bursts(512, 256) == [256, 256]
    assert split_bursts(10, 4) == [4, 4, 2]


def test_bank_conflicts() -> None:
    assert bank_beat_cycles(1, 1, "none") == 1
    assert bank_beat_cycles(4, 4, "cyclic") == 1  # 4 elements into 4 banks at once
    assert bank_beat_cycles(4, 2, "cyclic") == 2
    assert bank_beat_cycles(4, 4, "block") == 4  # consecutive elements share a bank


def test_group_cycles_outstanding_and_channels() -> None:
    occ, data = [20, 20, 20, 20], [4, 4, 4, 4]
    assert group_cycles(occ, data, 1) == 80  # one at a time: the sum
    # 2 in flight: latency bound 80/2 = 40 > bandwidth bound 16 + 16 = 32
    assert group_cycles(occ, data, 2) == 40
    # 8 in flight: the bandwidth bound, first latency 16 then 16 beats back to back
    assert group_cycles(occ, data, 8) == 32
    assert group_cycles([], [], 4) == 0


def test_overlap_with_compute() -> None:
    assert overlapped_cycles(50, 100, 20, overlap=False) == 150
    assert overlapped_cycles(50, 100, 20, overlap=True) == 20 + 80  # memory bound
    assert overlapped_cycles(100, 60, 20, overlap=True) == 20 + 100  # compute bound


# -- per ISAX ------------------------------------------------------------------------------

SMALL = """
extension small;
scratchpad buf: [u32; 16];
#[opcode(custom0), funct7(0)]
isax ld(rs1) -> rd { return mem<u32>[rs1]; }
#[opcode(custom0), funct7(1)]
isax ld2(rs1) -> rd { return mem<u32>[rs1] + mem<u32>[rs1 + 4]; }
#[opcode(custom0), funct7(2)]
isax blk(rs1) { burst buf[0 +: 16] <- mem[rs1]; }
#[opcode(custom0), funct7(3)]
isax lp(rs1) -> rd {
    var s: u32 = 0;
    for i in 0..3 { s += mem<u32>[rs1 + 8 * i]; }
    return s;
}
"""


@pytest.fixture(scope="module")
def small() -> object:
    return lower_spec(SMALL, "small.isax")


def by_name(preds: list) -> dict:
    return {p.isax: p for p in preds}


def test_transfers_without_l2(small: object) -> None:
    pr = by_name(predict_module(small, VEX))  # type: ignore[arg-type]
    assert pr["ld"].transfer_cycles == 14
    assert pr["ld2"].transfer_cycles == 28
    assert pr["blk"].transfer_cycles == 1 + 2 + 10 + 16
    assert pr["blk"].transfers[0].beats == 16
    # a loop that is not unrolled: the access runs once per trip
    (t,) = pr["lp"].transfers
    assert (t.count, t.cycles) == (3, 42)
    for p in pr.values():
        assert p.total == p.compute_cycles + p.transfer_cycles
        assert p.bound == ("memory" if p.transfer_cycles > p.compute_cycles else "compute")


def test_cold_and_warm_l2(small: object) -> None:
    cold = by_name(predict_module(small, VEX_L2, l2="cold"))  # type: ignore[arg-type]
    warm = by_name(predict_module(small, VEX_L2, l2="warm"))  # type: ignore[arg-type]
    # the first access to a line always misses: 1 + 2 + (10 + 8) + 1
    assert cold["ld"].transfer_cycles == 22
    assert warm["ld"].transfer_cycles == 1 + 2 + 2 + 1
    # rs1 + 4 is in a new line only when rs1 is the line's last word (1 of 8 placements)
    assert cold["ld2"].transfer_cycles == pytest.approx(22 + 6 + 16 / 8)
    # 16 words from a word-aligned pointer: 2 lines when line-aligned (1 of 8), else 3;
    # each line after the first stalls the burst for the miss penalty 18 at the crossing
    assert cold["blk"].transfer_cycles == pytest.approx(1 + 2 + 18 + 16 + 18 * (1 + 7 * 2) / 8)
    assert cold["blk"].transfers[0].l2_misses == pytest.approx(1 + 15 / 8)
    assert warm["blk"].transfer_cycles == 1 + 2 + 2 + 16


WINDOW = """
extension win;
#[opcode(custom0), funct7(0)]
isax pick(rs1, rs2) -> rd {
    let sel: u32 = mem<u32>[rs2];
    var acc: u32 = 0;
    #[unroll]
    for k in 0..4 {
        acc += zext<u32>(mem<u8>[rs1 + ((sel >> (8 * k)) & 15)]);
    }
    return acc;
}
"""


def test_a_masked_data_dependent_offset_is_a_window_not_a_pointer() -> None:
    """``rs1 + (x & 15)`` lands in the 16 bytes above rs1: with 32-byte lines one line when
    rs1 sits in the first half of its line, else one of two. Four such loads touch that
    window; they must not each count as a fresh pointer's cold miss."""
    (p,) = predict_module(lower_spec(WINDOW, "win.isax"), VEX_L2, l2="cold")
    picks = [t for t in p.transfers if t.kind == "load" and t.bytes == 1]
    misses = sum(t.l2_misses for t in picks)
    # over rs1's 8 word-aligned placements in its line: 5 keep the 16-byte window in one
    # line (1 miss); in the other 3 it spans two, and the t-th touch finds a line that is
    # still missing with probability (1/2)^t: 1 + 1/2 + 1/4 + 1/8 expected misses
    assert misses == pytest.approx((5 * 1 + 3 * (1 + 1 / 2 + 1 / 4 + 1 / 8)) / 8)
    # the word at rs2 is a pointer of its own: its one cold miss
    (sel,) = [t for t in p.transfers if t.bytes == 4]
    assert sel.l2_misses == 1


def test_matches_the_schedule_without_l2() -> None:
    """Without an L2 the model reduces to the synthesis formula fixed + per_L * L at
    L = latency + setup + 1 (the cycle of the request handshake)."""
    from aquas.spec.frontend import lower_spec_file
    from aquas.synth.flow import isax_latencies

    m = lower_spec_file(ROOT / "examples" / "pointcloud" / "pointcloud.isax")
    for lat in (2, 40):
        t = VEX.replace(memory={"latency": lat})
        sched = isax_latencies(m, 10.0, lat + 2 + 1)
        for p in predict_module(m, t):
            assert p.total == sched[p.isax][1], p.isax


def test_v3ddist_worked_example() -> None:
    """The worked example of docs/memory-model.md."""
    from aquas.spec.frontend import lower_spec_file

    m = lower_spec_file(ROOT / "examples" / "pointcloud" / "pointcloud.isax")
    p = by_name(predict_module(m, VEX))["v3ddist"]
    assert [t.cycles for t in p.transfers] == [61, 61, 30]
    assert p.transfer_cycles == 152
    # the loop pipelined over the SRAM banks at II 1 in 3 stages, a predicated kernel
    # whose initial values are written in the second burst's wait state: 16 + 2 cycles,
    # with the dispatch and the last state
    assert p.compute_cycles == 20
    assert p.total == 172
    assert p.bound == "memory"
    assert p.written_bytes == 64


# -- offload -------------------------------------------------------------------------------


def test_offload_invalidate_all() -> None:
    c = offload_cost(100.0, VEX, written_bytes=64, coherence="invalidate-all", refill_lines=3)
    assert c.maintenance_cycles == 130  # dcache.invalidate_cycles
    assert c.refill_cycles == 3 * (1 + 10 + 8)  # request, latency, 8 words per line
    assert c.call_overhead == 4
    assert c.total == 100 + 4 + 130 + 57
    # nothing written: nothing to invalidate
    assert offload_cost(100.0, VEX, 0, "invalidate-all", refill_lines=3).total == 104


def test_offload_evict_lines() -> None:
    # 64 bytes = 2 lines of 32; each eviction load: fill 1 + 10 + 8, issue load 1 + alu 1
    c = offload_cost(100.0, VEX, written_bytes=64, coherence="evict-lines")
    assert c.maintenance_cycles == 2 * (19 + 2)
    assert offload_cost(100.0, VEX, 65, "evict-lines").maintenance_cycles == 3 * 21


def test_offload_none_and_errors() -> None:
    pico = load_target(soc="picorv32")
    c = offload_cost(50.0, pico, written_bytes=64, coherence="none")
    assert c.total == 50 + 42  # picorv32 cost.call_overhead
    with pytest.raises(AquasError, match="needs a D-cache"):
        offload_cost(50.0, pico, 64, "invalidate-all")
    with pytest.raises(AquasError, match="unknown coherence"):
        offload_cost(50.0, VEX, 64, "flush-everything")


# -- plans and the CLI ---------------------------------------------------------------------


def test_auto_plan_is_the_per_isax_minimum_of_the_model(small: object) -> None:
    """auto picks per ISAX. Transfers by hand (VexRiscv: 1 + setup 2 + latency 10 + beats
    per request): ld2's two loads are 2 x 14 = 28 as written and under single, one 2-beat
    burst 1 + 2 + 10 + 2 = 15 under burst; blk's 16-word burst is 29 as written (burst
    changes nothing: the tie keeps as-written) and 16 x 14 = 224 as single loads; lp's
    three loads at rs1 + 0, 8, 16 are 3 x 14 = 42, or one burst of the 5 words they span
    (gaps of one word are read and dropped): 1 + 2 + 10 + 5 = 18."""
    c = choose_plan(small, VEX)  # type: ignore[arg-type]
    assert c.requested == "auto"
    assert set(c.considered["ld2"]) == {"as-written", "single", "burst"}
    for isax, plan in c.plans.items():
        assert c.considered[isax][plan] == min(c.considered[isax].values()), isax
    assert c.plans == {"ld": "as-written", "ld2": "burst", "blk": "as-written", "lp": "burst"}
    pr = by_name(c.predictions)
    # lp's burst streams into its loop (aquas-interface-stream, which auto keeps where the
    # model says it pays): the iterations need elements 0, 2 and 4, whose beats arrive in
    # cycles 13, 15 and 17 of the burst; its 4 window states (3 iterations and the state
    # after the loop) end in cycle 19 instead of 18 + 4 = 22: 18 - 2
    assert [(t.kind, t.beats, t.cycles) for t in pr["lp"].transfers] == [("burst_read", 5, 16)]
    assert "1 burst read(s) streamed" in c.reasons["lp"]
    assert pr["ld2"].transfer_cycles == 15
    assert pr["blk"].transfer_cycles == 29
    assert "tie with burst keeps the earlier plan" in c.reasons["blk"]
    assert c.reasons["ld2"].startswith("fewest predicted cycles on vexriscv:")
    single = by_name(choose_plan(small, VEX, "single").predictions)  # type: ignore[arg-type]
    assert single["blk"].transfer_cycles == 224
    assert single["ld2"].transfer_cycles == 28
    assert single["lp"].transfer_cycles == 42


def test_a_fixed_plan_predicts_the_ir_synthesis_builds(small: object) -> None:
    """--plan burst runs what aquas synth --interface burst runs, split to the target's
    burst limit: blk's 16 words on a 4-beat limit are 4 requests of 1 + 2 + 10 + 4."""
    t = VEX.replace(isax_master={"max_burst_beats": 4})
    c = choose_plan(small, t, "burst")  # type: ignore[arg-type]
    assert c.plans["blk"] == "burst" and c.considered == {}
    blk = by_name(c.predictions)["blk"]
    assert [(x.kind, x.beats, x.count) for x in blk.transfers] == [("burst_read", 4, 4)]
    assert blk.transfer_cycles == 4 * 17


def test_wide_port_packs_burst_beats(small: object) -> None:
    """A 128-bit port moves 4 words per beat: blk's 16 words from a word-aligned rs1
    start at offset 0, 4, 8 or 12 in the 16-byte block: 4 beats when aligned, else 5
    (docs/isax-port.md); the model averages the placements: 1 + 2 + 10 + (4 + 3 x 5) / 4.
    A single load stays one beat."""
    wide = VEX.replace(isax_master={"bus_width": 128})
    pr = by_name(predict_module(small, wide))  # type: ignore[arg-type]
    assert pr["blk"].transfer_cycles == pytest.approx(1 + 2 + 10 + 19 / 4)
    assert pr["ld"].transfer_cycles == 14
    # the compute part is the schedule's, at the same bus width: unchanged by the port
    narrow = by_name(predict_module(small, VEX))  # type: ignore[arg-type]
    assert pr["blk"].compute_cycles == narrow["blk"].compute_cycles


def test_cli_table() -> None:
    r = CliRunner().invoke(main, ["model", str(ROOT / "examples/pointcloud/pointcloud.isax")])
    assert r.exit_code == 0, r.output
    assert "v3ddist" in r.output
    # per ISAX the plan and the model's reason, naming the other plans' predictions
    assert "plan vgemv4: burst (fewest predicted cycles on vexriscv:" in r.output
    assert "plan v3ddist: as-written" in r.output


def test_cli_json_shape(tmp_path: Path) -> None:
    plat = tmp_path / "p.toml"
    plat.write_text('base = "vexriscv"\n[memory]\nlatency = 40\n[l2]\nenable = true\n')
    spec = ROOT / "examples/dsp/dsp.isax"
    r = CliRunner().invoke(
        main, ["model", str(spec), "--platform", str(plat), "--l2", "warm", "--json"]
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # stderr carries the clock-target note
    assert set(doc) == {"spec", "soc", "params", "plan", "isaxs"}
    assert doc["params"]["memory_latency"] == 40 and doc["params"]["l2"] == "warm"
    isaxs = {i["isax"]: i for i in doc["isaxs"]}
    assert set(isaxs) == {
        "fir_load_taps",
        "fir8",
        "biquad_load",
        "biquad",
        "biquad_save",
        "biquad_restore",
        "vdot16",
        "vdot32",
    }
    assert isaxs["fir_load_taps"]["plan"] == "as-written"
    assert set(isaxs["fir_load_taps"]["considered"]) == {"as-written", "single", "burst"}
    # fir_load_taps: 8 halfwords packed two per 32-bit beat (4 beats from a word-aligned
    # pointer), warm L2 hit: 1 + 2 + 2 + 4
    (t,) = isaxs["fir_load_taps"]["transfers"]
    assert (t["kind"], t["bytes"], t["beats"], t["cycles"]) == ("burst_read", 16, 4, 9)
    assert isaxs["biquad"]["transfers"] == [] and isaxs["biquad"]["bound"] == "compute"


def test_cli_errors(tmp_path: Path) -> None:
    spec = str(ROOT / "examples/pointcloud/pointcloud.isax")
    r = CliRunner().invoke(main, ["model", spec, "--plan", "bursty"])
    assert r.exit_code == 2
    r = CliRunner().invoke(main, ["model", str(tmp_path / "missing.isax")])
    assert r.exit_code == 2
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "vexriscv"\n[memory]\nlatncy = 3\n')
    r = CliRunner().invoke(main, ["model", spec, "--platform", str(bad)])
    assert r.exit_code == 2 and "latncy" in r.output
    r = CliRunner().invoke(main, ["model", spec, "--clock-ns", "0"])
    assert r.exit_code == 2 and "clock" in r.output


def test_split_bursts_and_requests_in_flight(small: object) -> None:
    """blk's 16-word burst on a port limited to 4-beat bursts: 4 requests of
    1 + 2 + 10 + 4 = 17 cycles; one at a time 68, with 4 in flight the bandwidth bound
    (17 - 4) + 16 = 29 (the latency bound is 68 / 4 = 17)."""
    t = VEX.replace(isax_master={"max_burst_beats": 4})
    one = by_name(predict_module(small, t))["blk"]  # type: ignore[arg-type]
    assert one.transfers[0].requests == 4
    assert one.transfer_cycles == 68
    four = by_name(predict_module(small, t, outstanding=4))["blk"]  # type: ignore[arg-type]
    assert four.transfer_cycles == 29
    assert four.compute_cycles == one.compute_cycles
