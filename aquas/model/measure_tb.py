"""cocotb testbench of :mod:`aquas.model.measure`: ISAX cycles through aquas_mem_ctrl.

Environment: AQUAS_MEASURE_SPEC, _IMAGE (the RAM's hex image), _RAM_WORDS_LOG2, _L2
(``off``, ``cold``: reset before every case, ``warm``: every command twice, the second
measured), _CASES (per ISAX), _SEED, _RESULT (JSON the runner reads back), _ENCODINGS
(the re-encoded ISAXs), _SUBSET (JSON list: the ISAXs of a unit built from part of the
extension; empty: all).
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge

from aquas.interpreter import ExecError, IsaxState, Memory, execute, find_extension
from aquas.reencode import Encoding, apply_moves
from aquas.spec.frontend import lower_spec_file
from aquas.spec.subset import keep_isaxs

#: Pointers are drawn this far from either end of RAM (every example's footprint is less).
MARGIN = 0x1000
#: A case that takes longer is a hang.
LIMIT = 50_000


class ImageMemory(Memory):
    """The golden interpreter's view of the top's RAM (byte array, addresses wrap at its
    size as the controller's word index does)."""

    def __init__(self, data: bytearray):
        super().__init__()
        self.data = data
        self.mask = len(data) - 1

    def read(self, addr: int, size: int) -> int:
        return int.from_bytes(
            bytes(self.data[(addr + i) & self.mask] for i in range(size)), "little"
        )

    def write(self, addr: int, size: int, value: int) -> None:
        for i, b in enumerate(value.to_bytes(size, "little")):
            self.data[(addr + i) & self.mask] = b

    def copy(self) -> ImageMemory:
        return ImageMemory(bytearray(self.data))


def load_image(path: str, words: int) -> bytearray:
    data = bytearray(4 * words)
    with open(path) as f:
        for i, line in enumerate(f):
            data[4 * i : 4 * i + 4] = int(line, 16).to_bytes(4, "little")
    return data


async def reset(dut: Any) -> None:
    await FallingEdge(dut.clk)
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0


async def run_one(dut: Any, isax: Any, rs1: int, rs2: int) -> tuple[int, int, int, int]:
    """Issues one command; returns (cycles, rd, L2 hits, L2 misses) of it."""
    count0 = int(dut.meas_count.value)
    hits0, misses0 = int(dut.stat_l2_hits.value), int(dut.stat_l2_misses.value)
    await FallingEdge(dut.clk)
    # after reset a unit zeroes its SRAM scratchpads kept across calls first (cmd_ready
    # low for as many cycles as their deepest bank has words, synth/rtlgen.py)
    idle = 0
    while int(dut.cmd_ready.value) != 1:
        idle += 1
        assert idle <= LIMIT, "the unit is not idle"
        await FallingEdge(dut.clk)
    dut.cmd_opcode.value = isax.opcode_value
    dut.cmd_funct3.value = isax.funct3_value
    dut.cmd_funct7.value = isax.funct7_value
    dut.cmd_rs1.value = rs1
    dut.cmd_rs2.value = rs2
    dut.cmd_valid.value = 1
    await FallingEdge(dut.clk)
    dut.cmd_valid.value = 0
    waited = 0
    while int(dut.meas_count.value) == count0:
        await ClockCycles(dut.clk, 8)
        waited += 8
        if waited > LIMIT:
            raise AssertionError(f"{isax.sym_name.data}: no response within {LIMIT} cycles")
    await ClockCycles(dut.clk, 2)  # back to idle (the response transferred)
    return (
        int(dut.meas_cycles.value),
        int(dut.meas_rd.value),
        int(dut.stat_l2_hits.value) - hits0,
        int(dut.stat_l2_misses.value) - misses0,
    )


@cocotb.test()
async def measure(dut: Any) -> None:
    module = lower_spec_file(os.environ["AQUAS_MEASURE_SPEC"])
    subset = json.loads(os.environ.get("AQUAS_MEASURE_SUBSET") or "[]")
    if subset:
        keep_isaxs(module, subset)
    # the encodings the unit was synthesized with (aquas.reencode), as [name, op, f3, f7]
    moves = json.loads(os.environ.get("AQUAS_MEASURE_ENCODINGS") or "[]")
    apply_moves(module, [(n, Encoding(op, f3, f7)) for n, op, f3, f7 in moves])
    ext = find_extension(module)
    words = 1 << int(os.environ["AQUAS_MEASURE_RAM_WORDS_LOG2"])
    mode = os.environ["AQUAS_MEASURE_L2"]
    cases = int(os.environ["AQUAS_MEASURE_CASES"])
    rng = random.Random(int(os.environ["AQUAS_MEASURE_SEED"]))
    mem = ImageMemory(load_image(os.environ["AQUAS_MEASURE_IMAGE"], words))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())  # type: ignore[arg-type]
    dut.cmd_valid.value = 0
    dut.rst.value = 1
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0

    out: dict[str, Any] = {"cycles": {}, "mismatches": [], "l2_hits": {}, "l2_misses": {}}
    state = IsaxState.reset(ext)
    for isax in ext.isaxs():
        name = isax.sym_name.data
        for key in ("cycles", "l2_hits", "l2_misses"):
            out[key][name] = []
        done = 0
        attempts = 0
        while done < cases and attempts < 50 * cases:
            attempts += 1
            rs1 = rng.randrange(MARGIN, 4 * words - MARGIN) & ~3
            rs2 = rng.randrange(MARGIN, 4 * words - MARGIN) & ~3
            golden, gstate = mem.copy(), state if mode == "warm" else IsaxState.reset(ext)
            try:
                runs = [execute(isax, rs1, rs2, golden, gstate)]
                if mode == "warm":
                    runs.append(execute(isax, rs1, rs2, golden, runs[0].state))
            except ExecError:
                continue  # misaligned for this ISAX: redraw
            if mode != "warm":
                await reset(dut)
            result = None
            for _ in runs:
                result = await run_one(dut, isax, rs1, rs2)
            assert result is not None
            cycles, rd, hits, misses = result
            want = runs[-1].rd if runs[-1].rd is not None else 0
            if rd != want:
                out["mismatches"].append(
                    f"{name}(rs1={rs1:#x}, rs2={rs2:#x}): rd {rd:#x} != {want:#x}"
                )
            mem = golden
            state = runs[-1].state
            out["cycles"][name].append(cycles)
            out["l2_hits"][name].append(hits)
            out["l2_misses"][name].append(misses)
            done += 1
    with open(os.environ["AQUAS_MEASURE_RESULT"], "w") as f:
        json.dump(out, f)
    assert not out["mismatches"], "\n".join(out["mismatches"])
