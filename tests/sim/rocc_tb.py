"""cocotb bus-functional model of a Rocket core's RoCC port, driving rocc_adapter + a generated
unit (fixtures/rocc_top.v) against the golden interpreter (run by tests/sim/test_rocc.py).

Each case: an ISAX in random order, random rs1/rs2 and memory contents; the command is
issued after a random idle gap, with the instruction fields a Rocket core would decode from
the ISAX's encoding (xd/xs1/xs2 = funct3's bits, a random rd); resp_ready is random
(back-pressure), and the unit's memory master is served by aquas.synth.cosim_tb's model
with random latency and back-pressure. Checked per case: a response exactly when xd is set,
its rd and data, busy until the instruction is done, the bytes written to memory and every
state register of the unit.

Environment: ROCC_SPEC, ROCC_CASES (per ISAX), ROCC_SEED, ROCC_RESULT (JSON file),
ROCC_REGISTERLESS (JSON list: synth.cosim.registerless_scratchpads of the unit).
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from aquas.interpreter import ExecError, IsaxState, NoiseMemory, execute, find_extension
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim_tb import (
    MemoryModel,
    expected_byte_writes,
    operand,
    spm_handles,
    write_differences,
)

LIMIT = 20_000  # cycles per case


@cocotb.test()
async def rocc_bfm(dut: Any) -> None:
    ext = find_extension(lower_spec_file(os.environ["ROCC_SPEC"]))
    cases = int(os.environ.get("ROCC_CASES", "200"))
    rng = random.Random(int(os.environ.get("ROCC_SEED", "1")))
    isaxs = list(ext.isaxs())
    # element registers, or words of SRAM bank instances (synth.cosim_tb.spm_handles)
    registerless = json.loads(os.environ.get("ROCC_REGISTERLESS") or "[]")
    spm_elems = {
        p.sym_name.data: spm_handles(dut.u_unit, p, registerless) for p in ext.scratchpads()
    }
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())  # type: ignore[arg-type]
    for sig in ("rocc_cmd_valid", "rocc_resp_ready", "mem_req_ready", "mem_wdata_ready"):
        getattr(dut, sig).value = 0
    dut.mem_rsp_valid.value = 0
    dut.mem_rsp_rdata.value = 0
    dut.mem_rsp_last.value = 0
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0

    state = IsaxState.reset(ext)
    stats = {i.sym_name.data: {"cases": 0, "responses": 0} for i in isaxs}
    mismatches: list[str] = []
    todo: list[Any] = []
    done = attempts = 0
    while done < cases * len(isaxs) and attempts < cases * len(isaxs) * 20 and len(mismatches) < 10:
        attempts += 1
        if not todo:
            todo = list(isaxs)
            rng.shuffle(todo)
        isax = todo[-1]
        rs1, rs2 = operand(rng), operand(rng)
        mem = NoiseMemory(rng.getrandbits(30))
        golden_mem = mem.copy()
        try:
            exp = execute(isax, rs1, rs2, golden_mem, state)
        except ExecError:
            continue
        name = isax.sym_name.data
        f3 = isax.funct3_value
        xd, rd = f3 >> 2 & 1, rng.randrange(1, 32)
        model = MemoryModel(dut, mem, rng, "random", 3)
        for _ in range(rng.choice([0, 0, 1, 3])):  # idle gap before the command
            model.drive()
            await RisingEdge(dut.clk)
            await FallingEdge(dut.clk)
        dut.rocc_cmd_valid.value = 1
        dut.rocc_cmd_inst_funct.value = isax.funct7_value
        dut.rocc_cmd_inst_opcode.value = isax.opcode_value
        dut.rocc_cmd_inst_xd.value = xd
        dut.rocc_cmd_inst_xs1.value = f3 >> 1 & 1
        dut.rocc_cmd_inst_xs2.value = f3 & 1
        dut.rocc_cmd_inst_rd.value = rd
        dut.rocc_cmd_inst_rs1.value = rng.randrange(32)
        dut.rocc_cmd_inst_rs2.value = rng.randrange(32)
        dut.rocc_cmd_rs1.value = rs1
        dut.rocc_cmd_rs2.value = rs2
        problems: list[str] = []
        issued = False
        resp: tuple[int, int] | None = None
        c = 0
        while c < LIMIT:
            if not issued and int(dut.rocc_cmd_ready.value):
                issued = True  # transfers at the coming edge
            model.drive()
            ready = rng.random() < 0.5
            dut.rocc_resp_ready.value = int(ready)
            if int(dut.rocc_resp_valid.value):
                if not xd:
                    problems.append("response for an instruction with xd = 0")
                if ready and resp is None:
                    resp = (int(dut.rocc_resp_rd.value), int(dut.rocc_resp_data.value))
            busy = int(dut.rocc_busy.value)
            await RisingEdge(dut.clk)
            await FallingEdge(dut.clk)
            if issued:
                dut.rocc_cmd_valid.value = 0
            c += 1
            if issued and c > 1 and not busy and not int(dut.rocc_busy.value):
                break
        dut.rocc_resp_ready.value = 0
        if c >= LIMIT:
            mismatches.append(f"{name}: not done within {LIMIT} cycles (rs1={rs1:#x} rs2={rs2:#x})")
            break
        if xd:
            want = exp.rd if exp.rd is not None else 0
            if resp is None:
                problems.append("no response although xd = 1")
            elif resp != (rd, want):
                problems.append(f"response (rd x{resp[0]}, {resp[1]:#x}) != (x{rd}, {want:#x})")
            else:
                stats[name]["responses"] += 1
        differ = write_differences(model.byte_writes, expected_byte_writes(exp.writes))
        if differ is not None:
            problems.append(differ)
        for reg, val in exp.state.regs.items():
            hw = int(getattr(dut.u_unit, f"{reg}_q").value)
            if hw != val:
                problems.append(f"state {reg} {hw:#x} != {val:#x}")
        for spm, vals in exp.state.spms.items():
            for k, v in enumerate(vals):
                h = spm_elems[spm][k]
                if h is not None and int(h.value) != v:  # None: no register (spm_handles)
                    problems.append(f"{spm}[{k}] differs")
                    break
        if problems:
            mismatches.append(f"{name}(rs1={rs1:#x}, rs2={rs2:#x}): " + "; ".join(problems))
        state = exp.state
        todo.pop()
        stats[name]["cases"] += 1
        done += 1
    with open(os.environ["ROCC_RESULT"], "w") as f:
        json.dump({"cases": done, "mismatches": mismatches, "stats": stats}, f)
    assert not mismatches, "\n".join(mismatches)
