"""The memory-interface model's formulas: named parameters, no hidden constants.

Every cycle count here is a function of :class:`MemParams`, which :func:`MemParams.of`
reads from the target descriptor (the one the SoC RTL is built from), plus the plan's
choices (requests in flight, overlap with compute). The timing rules are those of
``rtl_templates/soc/aquas_mem_ctrl.v`` and of the generated unit's memory engine
(``synth/rtlgen.py``: one request at a time, request, wait, one beat per cycle, write
acknowledgement). ``docs/memory-model.md`` states them with a worked example.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from aquas.target import Target

L2Mode = Literal["off", "cold", "warm"]


@dataclass(frozen=True)
class MemParams:
    """The parameters of the ISAX memory path. Descriptor key in brackets.

    * ``latency`` [memory.latency]: wait cycles of a RAM access before its first beat;
    * ``setup`` [isax_master.setup_latency]: extra wait of every ISAX (DMA) request;
    * ``bus_bytes`` [isax_master.bus_width / 8]: bytes per beat at most;
    * ``max_burst_beats`` [isax_master.max_burst_beats]: the longest single request;
    * ``channels`` [isax_master.dma_channels]: DMA channels the plan may use at once;
    * ``outstanding``: requests one channel keeps in flight (a plan's choice; the
      generated units of today issue one at a time);
    * ``l2`` (``off`` unless [l2.enable]; ``cold`` or ``warm`` is the user's assumption):
      cold = the first access to each line misses, warm = every access hits;
    * ``l2_hit_latency`` [l2.hit_latency], ``l2_line_bytes`` [l2.line_bytes].
    """

    latency: int
    setup: int
    bus_bytes: int
    max_burst_beats: int
    channels: int = 1
    outstanding: int = 1
    l2: L2Mode = "off"
    l2_hit_latency: int = 0
    l2_line_bytes: int = 32

    @staticmethod
    def of(target: Target, l2: Literal["cold", "warm"] = "cold", outstanding: int = 1) -> MemParams:
        """The parameters of ``target``; ``l2`` applies only when the target has an L2."""
        im = target.isax_master
        return MemParams(
            latency=target.memory.latency,
            setup=im.setup_latency,
            bus_bytes=im.bus_width // 8,
            max_burst_beats=im.max_burst_beats,
            channels=im.dma_channels,
            outstanding=outstanding,
            l2=l2 if target.l2.enable else "off",
            l2_hit_latency=target.l2.hit_latency,
            l2_line_bytes=target.l2.line_bytes,
        )

    @property
    def line_words(self) -> int:
        return self.l2_line_bytes // 4

    @property
    def miss_penalty(self) -> int:
        """Wait of an L2 miss (clean victim): the RAM latency plus the line fill."""
        return self.latency + self.line_words

    @property
    def dirty_miss_penalty(self) -> int:
        """Wait of an L2 miss whose victim is dirty: the write-back comes first."""
        return 2 * self.miss_penalty


def beat_bytes(elem_bytes: int, bus_bytes: int) -> int:
    """Bytes a beat carries: one element per beat, an element wider than the bus in
    several beats (a 64-bit value is two 32-bit beats)."""
    return min(elem_bytes, bus_bytes)


def beats(nbytes: int, per_beat: int) -> int:
    return math.ceil(nbytes / per_beat)


def requests(nbeats: int, max_burst_beats: int) -> int:
    """A transfer longer than the port's burst limit is split into several requests."""
    return math.ceil(nbeats / max_burst_beats)


def split_bursts(nbeats: int, max_burst_beats: int) -> list[int]:
    """The beats of each request of a split transfer (full requests, then the rest)."""
    full, rest = divmod(nbeats, max_burst_beats)
    return [max_burst_beats] * full + ([rest] if rest else [])


def access_wait(p: MemParams, hit: bool | None = None, dirty_victim: bool = False) -> int:
    """Wait cycles between an accepted request and its first beat, setup excluded:
    ``latency`` without an L2; with one, ``l2_hit_latency`` on a hit, else the miss
    penalty (``latency + line_words``, doubled for a dirty victim)."""
    if p.l2 == "off":
        return p.latency
    if hit is None:
        hit = p.l2 == "warm"
    if hit:
        return p.l2_hit_latency
    return p.dirty_miss_penalty if dirty_victim else p.miss_penalty


def request_cycles(p: MemParams, nbeats: int, write: bool, wait: int, stalls: int = 0) -> int:
    """Cycles of one request, blocking, as the unit's wait state spends them:
    the request handshake (1), ``setup + wait`` idle cycles, one cycle per beat, the
    stall cycles of L2 misses at line crossings inside a burst, and for a write the
    acknowledgement cycle (1)."""
    return 1 + p.setup + wait + stalls + nbeats + (1 if write else 0)


def bank_beat_cycles(elems_per_beat: int, banks: int, partition: str) -> int:
    """Cycles a scratchpad needs to absorb (or supply) one beat of ``elems_per_beat``
    consecutive elements with one port per bank: consecutive elements fall in distinct
    banks of a ``cyclic`` partition (``ceil(e / banks)`` cycles), in the same bank of a
    ``block`` partition (``e`` cycles), and ``none`` is one bank."""
    if elems_per_beat <= 1:
        return 1
    if partition == "cyclic":
        return math.ceil(elems_per_beat / max(1, banks))
    return elems_per_beat


def group_cycles(occupancy: Sequence[int], data: Sequence[int], concurrency: int) -> int:
    """Cycles of a group of independent requests with ``concurrency`` (channels x
    outstanding) of them in flight. ``occupancy[i]`` is request i's blocking cost
    (:func:`request_cycles`), ``data[i]`` its cycles on the shared data path (beats times
    the bank factor). The result is the larger of the latency bound (each slot runs its
    share of requests back to back: ``ceil(sum(occupancy) / concurrency)``) and the
    bandwidth bound (the first request's latency, then every beat back to back). With one
    request in flight it is the plain sum, as today's hardware spends it.

    It assumes the memory overlaps the waits of the requests in flight; aquas_mem_ctrl
    serves one transaction at a time, so on it concurrency > 1 only saves the unit's own
    per-request handshakes."""
    if not occupancy:
        return 0
    if concurrency <= 1:
        return sum(occupancy)
    latency_bound = math.ceil(sum(occupancy) / concurrency)
    bandwidth_bound = (occupancy[0] - data[0]) + sum(data)
    return max(latency_bound, bandwidth_bound)


def overlapped_cycles(
    compute: float, transfer: float, first_latency: float, overlap: bool
) -> float:
    """ISAX cycles from compute and transfer cycles. Without overlap (every wait state
    blocks the state machine, as generated today) they add. With overlap, compute starts
    after the first transfer's latency and hides behind the rest of the transfers (or
    they behind it): ``first_latency + max(compute, transfer - first_latency)``."""
    if not overlap:
        return compute + transfer
    return first_latency + max(compute, transfer - first_latency)


__all__ = [
    "L2Mode",
    "MemParams",
    "access_wait",
    "bank_beat_cycles",
    "beat_bytes",
    "beats",
    "group_cycles",
    "overlapped_cycles",
    "request_cycles",
    "requests",
    "split_bursts",
]
