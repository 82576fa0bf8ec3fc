"""cocotb testbench: a generated ISAX unit against the golden interpreter.

Run through :mod:`aquas.synth.cosim` (it sets the environment below). For each case it
picks an ISAX of the extension, random rs1/rs2 and random memory contents, executes the
golden interpreter on a copy, drives the unit's canonical port, and serves its memory
master from a model with random latency and back-pressure (or, in ``fixed`` mode, a fixed
latency ``L`` with no back-pressure). It compares rd, the exact sequence of bytes written
to memory, every state register and every scratchpad element after each case. ISAX state
carries over from case to case, as it does on a real core. The port's data width (32, 64
or 128 bits) is read off the unit's ``mem_rsp_rdata``; a beat carries that many bits of
the aligned block holding its address, and writes land byte by byte under ``mem_wstrb``.
Every case records its cycles and the data beats it moved (read beats plus write beats).

Environment: AQUAS_COSIM_SPEC (spec path), AQUAS_COSIM_CASES (per ISAX), AQUAS_COSIM_SEED,
AQUAS_COSIM_MODE (``random`` | ``fixed``), AQUAS_COSIM_LATENCY (fixed mode),
AQUAS_COSIM_RESULT (JSON file the runner reads back), AQUAS_COSIM_ENCODINGS (JSON list of
[isax, opcode, funct3, funct7]: the encodings of re-encoded ISAXs, aquas.reencode),
AQUAS_COSIM_RESIDENT (JSON list of the scratchpads the unit keeps resident),
AQUAS_COSIM_REGISTERLESS (JSON list of the scratchpads without element registers),
AQUAS_COSIM_CASES_BY_ISAX (JSON object: fewer cases for the ISAXs it names),
AQUAS_COSIM_SUBSET (JSON list: the ISAXs of a unit built from part of the extension,
``aquas.spec.subset``; empty: all).
"""

from __future__ import annotations

import json
import os
import random
from collections import deque
from collections.abc import Collection
from typing import Any

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge
from xdsl.dialects.builtin import ModuleOp

from aquas.dialects import aquas as aq
from aquas.interpreter import ExecError, IsaxState, Memory, NoiseMemory, execute, find_extension
from aquas.reencode import Encoding, apply_moves
from aquas.spec.frontend import lower_spec_file
from aquas.spec.subset import keep_isaxs
from aquas.synth.sram import element_bank_row


def operand(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.7:
        # mostly 8-byte aligned (i64 accesses); the rest 4- and 2-byte aligned, so that
        # bursts also start mid-beat on 64- and 128-bit ports (partial first beats)
        return rng.randrange(0x1000, 0x40000) & ~rng.choice([0x7, 0x7, 0x3, 0x1])
    if r < 0.85:
        return rng.choice([0, 1, 2, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 3329, 3328])
    return rng.getrandbits(32)


class MemoryModel:
    """Serves the unit's memory master (docs/isax-port.md) from ``mem``.

    Transactions are served in request order from a queue of ``depth`` (a unit that sends
    requests ahead, ``mem_sent_q``, is served with several accepted at once, each one's
    latency counting from its acceptance, like ``aquas_mem_ctrl``'s FIFO); read data is
    taken from memory when its beat is delivered, so a read queued behind a write sees it.
    As in the controller, the latency comes before a transaction's data: a read's first
    beat, or a write's first accepted data beat, is due ``latency`` cycles after the request
    (random in ``random`` mode), and a write is acknowledged in the cycle after its last
    beat (in ``random`` mode after a random delay)."""

    def __init__(
        self, dut: Any, mem: Memory, rng: random.Random, mode: str, latency: int, depth: int = 1
    ):
        self.dut = dut
        self.bb = len(dut.mem_rsp_rdata) // 8  # bytes per beat
        self.beats = 0  # data beats transferred
        self.mem = mem
        self.rng = rng
        self.mode = mode
        self.latency = latency
        self.depth = depth
        self.cycle = 0
        # accepted transactions, the head one active: {"write", "addr", "size", "left",
        # "ready" (cycle from which its next beat may move), "ack" (cycle of a write's acknowledgement)}
        self.queue: deque[dict[str, Any]] = deque()
        self.byte_writes: list[tuple[int, int]] = []
        # a unit keeping scratchpads resident sees every write beat on its snoop port, in
        # the cycle of the write, as aquas_mem_ctrl reports it
        self.snoop = has_snoop(dut)

    def _delay(self) -> int:
        if self.mode == "fixed":
            return self.latency
        return self.rng.choice([1, 1, 2, 3, 5, 9])

    def drive(self) -> None:
        """Called after the falling edge: read the unit's outputs, set our inputs, and
        account for the transfers that the next rising edge will perform."""
        d = self.dut
        fixed = self.mode == "fixed"
        req_ready = len(self.queue) < self.depth and (fixed or self.rng.random() < 0.7)
        d.mem_req_ready.value = int(req_ready)
        head = self.queue[0] if self.queue else None
        # read data (the head read's next beat) or a write's acknowledgement
        rsp_valid, rdata, last = 0, 0, 0
        if head is not None and not head["write"] and head["ready"] <= self.cycle:
            rdata = self.mem.read(head["addr"] & ~(self.bb - 1) & 0xFFFFFFFF, self.bb)
            rsp_valid, last = 1, int(head["left"] == 1)
        elif head is not None and head["write"] and _due(head["ack"], self.cycle):
            rsp_valid, last = 1, 1
        d.mem_rsp_valid.value = rsp_valid
        d.mem_rsp_rdata.value = rdata
        d.mem_rsp_last.value = last
        wready = (
            head is not None
            and head["write"]
            and head["left"] > 0
            and head["ready"] <= self.cycle
            and (fixed or self.rng.random() < 0.7)
        )
        d.mem_wdata_ready.value = int(wready)
        if self.snoop:
            d.snoop_valid.value = 0

        # transfers happening at the coming rising edge
        if rsp_valid and int(d.mem_rsp_ready.value):
            assert head is not None
            if head["write"]:
                self.queue.popleft()
            else:
                self.beats += 1
                head["addr"] += 1 << head["size"]
                head["left"] -= 1
                step = 1 if fixed else self.rng.choice([1, 1, 1, 2])
                head["ready"] = self.cycle + step
                if head["left"] == 0:
                    self.queue.popleft()
        if wready and int(d.mem_wdata_valid.value):
            w = head
            assert w is not None
            data, strb = int(d.mem_wdata.value), int(d.mem_wstrb.value)
            base = w["addr"] & ~(self.bb - 1)
            self.beats += 1
            if self.snoop:
                d.snoop_valid.value = 1
                d.snoop_addr.value = w["addr"] & 0xFFFFFFFF
            for lane in range(self.bb):
                if strb >> lane & 1:
                    a = (base + lane) & 0xFFFFFFFF
                    b = (data >> (8 * lane)) & 0xFF
                    self.mem.write(a, 1, b)
                    self.byte_writes.append((a, b))
            w["addr"] += 1 << w["size"]
            w["left"] -= 1
            if w["left"] == 0:
                assert int(d.mem_wlast.value) == 1, "mem_wlast missing on the last beat"
                w["ack"] = self.cycle + (1 if fixed else self._delay())
        if req_ready and int(d.mem_req_valid.value):
            addr, size = int(d.mem_req_addr.value), int(d.mem_req_size.value)
            beats = int(d.mem_req_len.value) + 1
            assert addr % (1 << size) == 0, f"misaligned request {addr:#x} size {size}"
            assert 1 << size <= self.bb, f"size {size} wider than the {8 * self.bb}-bit port"
            write = bool(int(d.mem_req_write.value))
            self.queue.append(
                {
                    "write": write,
                    "addr": addr,
                    "size": size,
                    "left": beats,
                    "ready": self.cycle + self._delay(),
                    "ack": None,
                }
            )
        self.cycle += 1


def has_snoop(dut: Any) -> bool:
    """Whether the unit keeps scratchpads resident (it has the snoop inputs)."""
    try:
        _ = dut.snoop_valid
    except AttributeError:
        return False
    return True


def resident_claims(dut: Any, resident: list[str]) -> list[tuple[int, int]]:
    """The byte ranges [first, end) whose contents the unit's resident scratchpads
    (``resident``) claim to hold (``<spm>_res_q`` with its blocks, synth/memengine.py)."""
    bb = len(dut.mem_rsp_rdata) // 8
    out = []
    for name in resident:
        if int(getattr(dut, f"{name}_res_q").value):
            first = int(getattr(dut, f"{name}_res_addr_q").value) // bb * bb
            extra = int(getattr(dut, f"{name}_res_extra_q").value)
            out.append((first, first + (extra + 1) * bb))
    return out


async def snoop_writes(dut: Any, addrs: list[int]) -> None:
    """Reports writes by another master at ``addrs``, one per cycle, on the snoop port."""
    for a in addrs:
        dut.snoop_valid.value = 1
        dut.snoop_addr.value = a & 0xFFFFFFFF
        await FallingEdge(dut.clk)
    dut.snoop_valid.value = 0


def _due(at: int | None, cycle: int) -> bool:
    """Whether an event scheduled for cycle ``at`` (None: not scheduled) is due."""
    return at is not None and at <= cycle


def _near(a: int, b: int, window: int = 0x1000) -> bool:
    """Whether buffers at ``a`` and ``b`` may overlap (within ``window`` bytes)."""
    d = (a - b) & 0xFFFFFFFF
    return min(d, (-d) & 0xFFFFFFFF) < window


def expected_byte_writes(writes: list[Any]) -> list[tuple[int, int]]:
    out = []
    for w in writes:
        for i in range(w.size):
            out.append(((w.addr + i) & 0xFFFFFFFF, (w.value >> (8 * i)) & 0xFF))
    return out


def write_differences(got: list[tuple[int, int]], want: list[tuple[int, int]]) -> str | None:
    """How the memory an ISAX leaves differs from the interpreter's, or None: the bytes
    written and the last value of each. Writes to different addresses may come in another
    order (an interface plan coalesces disjoint stores into a burst), which no one sees
    while the ISAX runs; to one address, the last write wins, as in the interpreter."""
    g, w = dict(got), dict(want)
    if g == w:
        return None
    diff = sorted(a for a in g.keys() | w.keys() if g.get(a) != w.get(a))
    shown = ", ".join(
        f"{a:#x}: {'-' if g.get(a) is None else g[a]} vs {'-' if w.get(a) is None else w[a]}"
        for a in diff[:6]
    )
    return f"memory differs at {len(diff)} byte(s) ({shown}; written {len(g)} vs {len(w)} bytes)"


_LAYOUTS: dict[str, tuple[str, int]] = {}


def sram_layout(dut: Any, spm: aq.ScratchpadOp) -> tuple[str, int]:
    """The partition an SRAM scratchpad was built with, from its bank instances: the
    spec's, or cyclic by the number of banks when synthesis split it further for packed
    bursts (``sram.fitted_partition``; which bursts remain depends on the interface plan)."""
    name = spm.sym_name.data
    if name not in _LAYOUTS:
        n = 0
        while hasattr(dut, f"{name}_bank{n}"):
            n += 1
        same = n == spm.factor_value
        _LAYOUTS[name] = (spm.partition.data, n) if same else ("cyclic", n)
    return _LAYOUTS[name]


def spm_handles(dut: Any, spm: aq.ScratchpadOp, registerless: Collection[str]) -> list[Any]:
    """The handle of each element of a scratchpad in the unit, in element order: its
    register ``<spm>_<k>_q``, or the word of its SRAM bank instance ``<spm>_bank<b>`` (the
    unit was synthesized with either, whatever the spec's directive: ``aquas synth
    --scratchpads`` overrides it). Resolved once: a failed handle lookup costs the
    simulator a search of the design, and the state is compared after every case.

    None for an element that is not compared: every element of a scratchpad in
    ``registerless`` (the unit's header lists them, ``fsm.registerless_scratchpads``:
    filled by every call before it is read, its registers shared with other ISAXs', never
    read or without a reset, its SRAM words not cleared after reset, or only staging
    values for burst writes; after the call nothing can read it), and an element no ISAX
    reads (its register is dead and removed). A scratchpad that keeps no element register
    at all, though it is not listed and some ISAX reads it, is an error: the registers are
    not where the names say."""
    name = spm.sym_name.data
    if name in registerless:
        return [None] * spm.size
    if not hasattr(dut, f"{name}_bank0"):
        regs = [getattr(dut, f"{name}_{k}_q", None) for k in range(spm.size)]
        if all(r is None for r in regs) and _is_read(spm):
            raise AssertionError(f"the unit has no element register of scratchpad {name}")
        return regs
    layout = sram_layout(dut, spm)
    banks = [getattr(dut, f"{name}_bank{b}").mem for b in range(layout[1])]
    handles = []
    for k in range(spm.size):
        bank, row = element_bank_row(spm, k, layout)
        handles.append(banks[bank][row])
    return handles


def _is_read(spm: aq.ScratchpadOp) -> bool:
    """Whether an op of ``spm``'s extension reads it (an element read or a burst write)."""
    ext = spm.parent_op()
    assert ext is not None
    return any(
        isinstance(op, aq.SpmReadOp | aq.BurstWriteOp)
        and op.scratchpad.root_reference == spm.sym_name
        for op in ext.walk()
    )


def state_handles(dut: Any, module: ModuleOp) -> dict[str, Any]:
    """The register of each ``state`` the unit keeps, resolved once. A state without one
    must be one no ISAX reads (:func:`unread_states`): its value never outlives a call,
    so there is nothing to compare. Any other missing register is an error."""
    ext = find_extension(module)
    names = [s.sym_name.data for s in ext.states()]
    handles = {n: getattr(dut, f"{n}_q", None) for n in names}
    missing = {n for n, h in handles.items() if h is None}
    if missing:
        from aquas.synth.prepare import unread_states  # only here: the bench starts faster

        lost = missing - unread_states(module)
        if lost:
            raise AssertionError(f"the unit has no register for state {', '.join(sorted(lost))}")
    return {n: h for n, h in handles.items() if h is not None}


@cocotb.test()
async def cosim(dut: Any) -> None:
    spec = os.environ["AQUAS_COSIM_SPEC"]
    cases = int(os.environ.get("AQUAS_COSIM_CASES", "200"))
    seed = int(os.environ.get("AQUAS_COSIM_SEED", "1"))
    mode = os.environ.get("AQUAS_COSIM_MODE", "random")
    latency = int(os.environ.get("AQUAS_COSIM_LATENCY", "3"))
    only = os.environ.get("AQUAS_COSIM_ISAX") or None
    result_path = os.environ.get("AQUAS_COSIM_RESULT")
    budgets = json.loads(os.environ.get("AQUAS_COSIM_BUDGETS") or "{}")
    # the scratchpads the unit keeps resident, by name (synth.cosim.resident_scratchpads)
    resident = json.loads(os.environ.get("AQUAS_COSIM_RESIDENT") or "[]")

    module = lower_spec_file(spec)
    subset = json.loads(os.environ.get("AQUAS_COSIM_SUBSET") or "[]")
    if subset:
        keep_isaxs(module, subset)
    # the encodings the unit was synthesized with (aquas.reencode), as [name, op, f3, f7]
    moves = json.loads(os.environ.get("AQUAS_COSIM_ENCODINGS") or "[]")
    apply_moves(module, [(n, Encoding(op, f3, f7)) for n, op, f3, f7 in moves])
    ext = find_extension(module)
    registerless = json.loads(os.environ.get("AQUAS_COSIM_REGISTERLESS") or "[]")
    spm_elems = {p.sym_name.data: spm_handles(dut, p, registerless) for p in ext.scratchpads()}
    state_regs = state_handles(dut, module)
    isaxs = [i for i in ext.isaxs() if only is None or i.sym_name.data == only]
    # cases per ISAX: AQUAS_COSIM_CASES, or fewer for the ISAXs named here
    fewer = json.loads(os.environ.get("AQUAS_COSIM_CASES_BY_ISAX") or "{}")
    want = {i.sym_name.data: min(cases, int(fewer.get(i.sym_name.data, cases))) for i in isaxs}
    rng = random.Random(seed)
    # a unit that sends requests ahead (runs, synth/memengine.py) gets a memory that
    # accepts several at once; any other one never asks for it
    try:
        _ = dut.mem_sent_q
        depth = 8
    except AttributeError:
        depth = 1
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())  # type: ignore[arg-type]
    snoop = has_snoop(dut)
    sigs = ["cmd_valid", "rsp_ready", "mem_req_ready", "mem_wdata_ready", "mem_rsp_valid"]
    for sig in sigs + (["snoop_valid", "snoop_addr"] if snoop else []):
        getattr(dut, sig).value = 0
    dut.mem_rsp_rdata.value = 0
    dut.mem_rsp_last.value = 0
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0

    state = IsaxState.reset(ext)
    stats: dict[str, dict[str, Any]] = {
        i.sym_name.data: {"cases": 0, "cycles": [], "beats": [], "resident_cycles": []}
        for i in isaxs
    }
    # a unit with resident scratchpads: half the cases repeat an ISAX's last operands, and
    # half keep the memory as the cases before left it; half the cases are followed by an
    # extra one with the same ISAX, operands and memory, as in a program's loop (the unit
    # may skip its bursts there). A third of the cases on kept memory follow a write by
    # another master to a byte of a claimed range (the unit must not skip that one); fresh
    # memory comes with a write reported into every claimed range, as a real memory would
    # report it. Extra cases are checked like the others but not counted in `cases`.
    repeat = False
    last_ops: dict[str, tuple[int, int]] = {}
    mem: Memory | None = None
    mismatches: list[str] = []
    done_cases = 0
    attempts = 0
    # rounds: every ISAX still short of its cases once per round, in a random order, so
    # that each gets its cases while state set by one ISAX (e.g. loaded coefficients)
    # feeds the others
    todo: list[Any] = []
    total = sum(want.values())
    while done_cases < total and attempts < total * 20:
        attempts += 1
        if not todo:
            todo = [i for i in isaxs if stats[i.sym_name.data]["cases"] < want[i.sym_name.data]]
            rng.shuffle(todo)
        isax = todo[-1]
        name = isax.sym_name.data
        extra, repeat = repeat, False
        reuse = extra or (snoop and name in last_ops and rng.random() < 0.5)
        keep = extra or (snoop and mem is not None and rng.random() < 0.5)
        if reuse:
            rs1, rs2 = last_ops[name]
        else:
            rs1, rs2 = operand(rng), operand(rng)
        if aq.NOALIAS_ATTR in isax.attributes and _near(rs1, rs2):
            continue  # outside the #[noalias] contract: the buffers would overlap
        if keep:
            assert mem is not None
            claims = resident_claims(dut, resident)
            if claims and rng.random() < 1 / 3:
                lo, end = rng.choice(claims)
                a = rng.randrange(lo, end)
                mem.write(a, 1, mem.read(a, 1) ^ (1 + rng.randrange(255)))
                await snoop_writes(dut, [a])
        else:
            mem = NoiseMemory(rng.getrandbits(30))
            if snoop:
                await snoop_writes(dut, [lo for lo, _ in resident_claims(dut, resident)])
        golden_mem = mem.copy()
        try:
            exp = execute(isax, rs1, rs2, golden_mem, state)
        except ExecError:
            if extra:
                todo.pop()  # its counted case is done
            continue  # illegal inputs for this ISAX (misaligned, out of bounds): redraw
        model = MemoryModel(dut, mem, rng, mode, latency, depth)
        # issue the command and run until the response transfers
        dut.cmd_valid.value = 1
        dut.cmd_opcode.value = isax.opcode_value
        dut.cmd_funct3.value = isax.funct3_value
        dut.cmd_funct7.value = isax.funct7_value
        dut.cmd_rs1.value = rs1
        dut.cmd_rs2.value = rs2
        dut.rsp_ready.value = 0
        c = 0
        accept_cycle: int | None = None
        first_valid: int | None = None
        rd = None
        limit = int(budgets.get(isax.sym_name.data, 200_000))  # cycles, from the schedule
        while c < limit:
            if accept_cycle is None and int(dut.cmd_ready.value) == 1:
                accept_cycle = c
            model.drive()
            if accept_cycle is not None and c > accept_cycle and int(dut.rsp_valid.value):
                if first_valid is None:
                    first_valid = c - accept_cycle
                ready = mode == "fixed" or rng.random() < 0.6
                dut.rsp_ready.value = int(ready)
                if ready:
                    rd = int(dut.rsp_rd.value)
            # one trigger per cycle: the rising edge samples what was driven, and values
            # are read back and driven again after the falling edge
            await FallingEdge(dut.clk)
            if accept_cycle == c:
                dut.cmd_valid.value = 0
            c += 1
            if rd is not None:
                dut.rsp_ready.value = 0
                break
        if rd is None:
            mismatches.append(
                f"{name}: no response within {limit} cycles (rs1={rs1:#x} rs2={rs2:#x})"
            )
            break
        want_rd = exp.rd if exp.rd is not None else 0
        problems = []
        if rd != want_rd:
            problems.append(f"rd {rd:#x} != {want_rd:#x}")
        differ = write_differences(model.byte_writes, expected_byte_writes(exp.writes))
        if differ is not None:
            problems.append(differ)
        for reg, val in exp.state.regs.items():
            if reg not in state_regs:
                continue  # read by no ISAX: not built (state_handles)
            hw = int(state_regs[reg].value)
            if hw != val:
                problems.append(f"state {reg} {hw:#x} != {val:#x}")
        for spm, vals in exp.state.spms.items():
            for k, v in enumerate(vals):
                if spm_elems[spm][k] is None:
                    continue  # no register of its own (spm_handles)
                hw = int(spm_elems[spm][k].value)
                if hw != v:
                    problems.append(f"{spm}[{k}] {hw:#x} != {v:#x}")
                    break
        if problems:
            mismatches.append(f"{name}(rs1={rs1:#x}, rs2={rs2:#x}): " + "; ".join(problems))
        state = exp.state
        last_ops[name] = (rs1, rs2)
        # the cycles of repeated operands may be those of a skipped burst: kept apart from
        # the ones the latency report bounds
        if reuse:
            stats[name]["resident_cycles"].append(first_valid)
        else:
            stats[name]["cycles"].append(first_valid)
            stats[name]["beats"].append(model.beats)
        if not extra:
            stats[name]["cases"] += 1
            done_cases += 1
            repeat = snoop and rng.random() < 0.5
        if not repeat:
            todo.pop()
        if len(mismatches) >= 10:
            break
    if result_path:
        with open(result_path, "w") as f:
            json.dump({"cases": done_cases, "mismatches": mismatches, "stats": stats}, f)
    assert not mismatches, "\n".join(mismatches)
