"""The memory system in cycles: single accesses vs ISAX bursts vs L2 hits, checked against
the platform file's parameters (memcheck.S; warm-pass regions 11..15)."""

from __future__ import annotations

import pytest
from conftest import platform_variant

from aquas.sim import run
from aquas.target import load_target

pytestmark = pytest.mark.sim

SW_COPY, BURST, SINGLES, BURST_AGAIN, REG_ONLY = 11, 12, 13, 14, 15
# Fixed cycles of a 16-word ISAX burst copy on VexRiscv besides the two waits and the 32
# beats: request hand-offs, the write acknowledgement and the response (measured, constant).
BURST_FIXED = 3


def regions(soc, platform, program, soc_binary):
    r = run(
        soc_binary(soc, isax=True, platform=platform), program("memcheck", soc), max_cycles=500_000
    )
    assert (r.reason, r.exit_code) == ("exit", 0), r.report
    return {k: v.cycles for k, v in r.regions.items()}, r


def test_vexriscv_bursts_and_latency(program, soc_binary):
    base = load_target(soc="vexriscv")
    slow = platform_variant("vexriscv", memory__latency=20, isax_master__setup_latency=6)
    a, _ = regions("vexriscv", base, program, soc_binary)
    b, _ = regions("vexriscv", slow, program, soc_binary)
    for p, reg in ((base, a), (slow, b)):
        wait = p.isax_master.setup_latency + p.memory.latency
        # burst copy = read burst + write burst: setup + latency once per burst, then 1 beat/cycle
        assert reg[BURST] - reg[REG_ONLY] == 2 * wait + 32 + BURST_FIXED
    dl = slow.memory.latency - base.memory.latency
    ds = slow.isax_master.setup_latency - base.isax_master.setup_latency
    # every single-word ISAX read pays setup + latency
    assert b[SINGLES] - a[SINGLES] == 16 * (dl + ds)
    # every core store is a single write-through access paying the memory latency
    assert b[SW_COPY] - a[SW_COPY] == 16 * dl
    # a burst is much cheaper per word than single accesses
    assert (a[BURST] - a[REG_ONLY]) / 32 < (a[SINGLES] - 16 * a[REG_ONLY]) / 16 / 3


def test_vexriscv_l2_hits(program, soc_binary):
    base = load_target(soc="vexriscv")
    l2p = platform_variant("vexriscv", l2__enable=True)
    a, _ = regions("vexriscv", base, program, soc_binary)
    c, r = regions("vexriscv", l2p, program, soc_binary)
    s, lat, hit = l2p.isax_master.setup_latency, l2p.memory.latency, l2p.l2.hit_latency
    # warm pass: every line is in the L2, each burst waits setup + hit latency
    assert c[BURST_AGAIN] - c[REG_ONLY] == 2 * (s + hit) + 32 + BURST_FIXED
    assert c[BURST] == a[BURST] - 2 * (lat - hit)
    assert c[SINGLES] == a[SINGLES] - 16 * (lat - hit)
    assert r.l2_hits > 0 and r.l2_misses > 0


def test_picorv32_bursts(program, soc_binary):
    a, _ = regions("picorv32", load_target(soc="picorv32"), program, soc_binary)
    assert a[BURST] == a[BURST_AGAIN]
    assert (a[BURST] - a[REG_ONLY]) / 32 < (a[SINGLES] - 16 * a[REG_ONLY]) / 16 / 3
