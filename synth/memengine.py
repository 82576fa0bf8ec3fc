"""The memory engine of a generated unit: drives the canonical port's memory master
(docs/isax-port.md) from the FSM's wait states, at a data width ``W`` of 32, 64 or 128.

A beat carries ``B = W / 8`` bytes, lane-aligned (the byte at address ``a`` travels in
lane ``a % B``):

* a single access whose element fits a beat is one beat of ``log2(eb)`` bytes at its own
  address; its data sits in lane ``a % B`` (an i64 on a 32-bit port: two 4-byte beats,
  low word first);
* a burst of ``n`` elements of ``eb <= B`` bytes is a request of full beats
  (``size = log2(B)``) from ``a & ~(B - 1)``, ``ceil((a % B + n * eb) / B)`` beats
  (``fsm.mem_beats``), ``B / eb`` elements per beat; the first and last beats are partial
  (write strobes; a read takes the elements from their lanes). Element ``j`` travels in
  beat ``(o + j) / per``, slot ``(o + j) % per`` with ``per = B / eb`` and
  ``o = (a % B) / eb``: beat ``k``, slot ``s`` carries element ``k * per + s - o`` when that
  lies in ``[0, n)``;
* elements wider than a beat (i64 bursts on a 32-bit port) take two beats each.

A register scratchpad writes the several elements of one beat in the same cycle whatever
their banks: a burst owns every bank of its scratchpad during its wait state
(``fsm.spm_banks``), and the register array has a write port per element. An SRAM
scratchpad (``synth/sram.py``) takes the elements of a beat through port 0 of distinct banks
(``sram.check_supported``); a burst write reads each beat's elements one cycle ahead, so
the registered read ports cost no cycle: the request cycle reads beat 0, and each data
cycle reads the beat that goes out next (the following one when the current beat is
accepted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.ir import Operation, SSAValue

from aquas.dialects import aquas as aq
from aquas.synth.fsm import State, elem_bytes, mem_beats
from aquas.synth.hwemit import basename_loc

if TYPE_CHECKING:
    from aquas.synth.rtlgen import UnitGenerator

#: width of ``mem_req_size`` (log2 of the bytes per beat: 0..4 for a 128-bit port)
SIZE_BITS = 3
#: width of ``mem_sent_q``, a position in a run of requests sent ahead (at most 8 states)
SENT_BITS = 4


def log2(n: int) -> int:
    return n.bit_length() - 1


class MemEngine:
    """Drives the memory master port from the current wait state.

    Phase register: 0 = send the request, 1 = data (read beats in, or write beats out),
    2 = wait for the write acknowledgement. ``mem_beat_q`` counts beats."""

    def __init__(self, g: UnitGenerator, mp_q: SSAValue, beat_q: SSAValue):
        self.g = g
        self.h = h = g.h
        self.mp_q = mp_q
        self.beat_q = beat_q
        self.width = g.bus_width
        self.bb = self.width // 8  # bytes per beat
        self.req: list[
            tuple[SSAValue, SSAValue, SSAValue, SSAValue, SSAValue]
        ] = []  # (active, write, addr, size, len)
        self.wdata: list[
            tuple[SSAValue, SSAValue, SSAValue, SSAValue]
        ] = []  # (active, data, strb, last)
        self.rsp_ready: list[SSAValue] = []
        self.phase_next: list[tuple[SSAValue, SSAValue]] = []
        self.beat_next: list[tuple[SSAValue, SSAValue]] = []
        self.ph0 = h.icmp("eq", mp_q, h.const(0, 2), "mem_phase_req")
        self.ph1 = h.icmp("eq", mp_q, h.const(1, 2), "mem_phase_data")
        self.ph2 = h.icmp("eq", mp_q, h.const(2, 2), "mem_phase_ack")
        self.beat_inc = h.binop("comb.add", beat_q, h.const(1, 9), "mem_beat_inc")
        # runs of requests sent ahead: the position register, its updates, and per state
        # of a run whether the next state's request is out by the end of this cycle
        self.sent_q: SSAValue | None = None
        self.sent_next: list[tuple[SSAValue, SSAValue]] = []
        self.next_sent: dict[int, SSAValue] = {}

    def wait_state(self, st: State) -> SSAValue:
        """Emits the engine logic of one wait state; returns its 'done' signal."""
        g, h = self.g, self.h
        op = st.wait
        assert op is not None
        h.loc = basename_loc(op.location)
        eb = elem_bytes(op)
        if eb > self.bb:
            return self.split_state(st)
        # wires of this access are named after its state: S_<isax>_<k> -> <isax>_<k>_...
        pre = g.state_names[st.id][2:]
        here = g.is_state[st.id]
        write = isinstance(op, aq.StoreOp | aq.BurstWriteOp)
        addr = g.ref(op.addr, st)
        req_addr, size, beat_m1 = self.payload(op, addr, pre)
        resident = g.resident.get(st.id)
        hit, lost = self.resident_hit(resident, pre, here, addr) if resident else (None, None)
        skip = self.early_request(st, pre, write) if st.early else hit
        req_fire = self.own_request(pre, here, write, req_addr, size, beat_m1, skip)
        if st.stream is not None:
            return self.stream(st, pre, addr, eb, beat_m1, req_fire, hit, lost)
        if st.run is not None:
            self.run_requests(st, pre, here, req_fire)
        last_beat = h.icmp("eq", self.beat_q, beat_m1, f"{pre}_last_beat")
        if isinstance(op, aq.LoadOp | aq.StoreOp):
            return self.single(st, pre, here, addr, eb, last_beat, write)
        done = self.burst(st, pre, here, addr, eb, last_beat, write)
        if resident is None or lost is None:
            return done
        self.resident_fill(resident, pre, here, addr, req_fire, done, lost)
        return h.binop("comb.or", done, hit, f"{pre}_done_or_kept")

    # -- resident scratchpads (aquas-interface-resident) ----------------------------------

    def resident_blocks(
        self, op: aq.BurstReadOp, addr: SSAValue, pre: str
    ) -> tuple[SSAValue, SSAValue]:
        """(first, extra): the first ``B``-byte block a burst of ``op`` at ``addr`` covers
        (the address's upper bits) and how many more it covers (a few bits: the span is
        a constant of the op, only the address's offset in its block moves the last)."""
        h, lb = self.h, log2(self.bb)
        span = op.length_value * elem_bytes(op)
        w = lb + self.extra_bits(op)
        end = h.binop(
            "comb.add",
            h.zext(h.extract(addr, 0, lb, f"{pre}_res_offset"), w),
            h.const(span - 1, w),
            f"{pre}_res_end",
        )
        return h.extract(addr, lb, 32 - lb, f"{pre}_res_first"), h.extract(
            end, lb, w - lb, f"{pre}_res_extra"
        )

    def extra_bits(self, op: aq.BurstReadOp) -> int:
        """Bits of the count of blocks after the first that a burst of ``op`` covers
        (at most ``(B - 1 + span - 1) / B``: its start anywhere in a block)."""
        span = op.length_value * elem_bytes(op)
        return max(1, ((self.bb - 1 + span - 1) >> log2(self.bb)).bit_length())

    def snooped(self, first: SSAValue, extra: SSAValue, hint: str) -> SSAValue:
        """A RAM write in this cycle touches a block in ``[first, first + extra]``: one
        subtraction (a block below ``first`` wraps far above ``extra``) and a compare as
        narrow as ``extra``, instead of two address-wide compares."""
        h, lb = self.h, log2(self.bb)
        blk = h.extract(self.g.port["snoop_addr"], lb, 32 - lb, "snoop_block")
        diff = h.binop("comb.sub", blk, first, f"{hint}_delta")
        n = extra.type.width.data  # type: ignore[attr-defined]
        near = h.icmp("eq", h.extract(diff, n, 32 - lb - n), h.const(0, 32 - lb - n), None)
        return h.and_(
            self.g.port["snoop_valid"],
            near,
            h.icmp("ule", h.extract(diff, 0, n), extra, None),
            hint=hint,
        )

    def resident_hit(
        self, op: aq.BurstReadOp, pre: str, here: SSAValue, addr: SSAValue
    ) -> tuple[SSAValue, SSAValue]:
        """(hit, lost): the scratchpad of burst ``op`` still holds the bytes at ``addr``,
        so the burst is skipped (the state ends in its request phase without a request);
        a RAM write touches the claimed blocks in this cycle (the snoop port). The claim
        (``<spm>_res_q``: valid, with the address of the fill, whose upper bits are its
        first block, and ``<spm>_res_extra_q``, the number of blocks after it) is dropped
        by such a write."""
        g, h = self.g, self.h
        spm = op.scratchpad.root_reference.data
        lb = log2(self.bb)
        valid = g.reg(f"{spm}_res_q", 1)
        tag = g.reg(f"{spm}_res_addr_q", 32)
        first = h.extract(tag, lb, 32 - lb, f"{spm}_res_first")
        kept = g.reg(f"{spm}_res_extra_q", self.extra_bits(op))
        lost = self.snooped(first, kept, f"{spm}_res_snooped")
        keep = h.and_(valid, h.not_(lost), hint=f"{spm}_res_keep")
        same = h.icmp("eq", tag, addr, f"{pre}_res_same")
        return h.and_(here, self.ph0, keep, same, hint=f"{pre}_res_hit"), lost

    def resident_fill(
        self,
        op: aq.BurstReadOp,
        pre: str,
        here: SSAValue,
        addr: SSAValue,
        fire: SSAValue,
        done: SSAValue,
        lost: SSAValue,
    ) -> None:
        """A completed fill claims the scratchpad for ``addr`` unless a RAM write touched
        its blocks from the request on (``<spm>_res_clean_q``); ``lost``: a write touches
        the current claim in this cycle (:meth:`resident_hit`)."""
        g, h = self.g, self.h
        spm = op.scratchpad.root_reference.data
        first, extra = self.resident_blocks(op, addr, pre)
        touched = self.snooped(first, extra, f"{pre}_res_touched")
        clean = g.reg(f"{spm}_res_clean_q", 1)
        g.write(f"{spm}_res_clean_q", fire, h.not_(touched))
        busy = h.and_(here, h.not_(self.ph0), touched, hint=f"{pre}_res_dirty")
        g.write(f"{spm}_res_clean_q", busy, h.const(0, 1))
        ok = h.and_(clean, h.not_(touched), hint=f"{pre}_res_ok")
        g.write(f"{spm}_res_q", done, ok)
        g.write(f"{spm}_res_addr_q", done, addr)
        g.write(f"{spm}_res_extra_q", done, extra)
        # a write in the cycle the fill completes is in `touched`; any other one drops the
        # claim
        drop = h.and_(lost, h.not_(done), hint=f"{spm}_res_drop")
        g.write(f"{spm}_res_q", drop, h.const(0, 1))

    def request(
        self, active: SSAValue, write: bool, addr: SSAValue, size: int, beat_m1: SSAValue, pre: str
    ) -> None:
        """A request on the port while ``active``: ``beat_m1`` is beats - 1 (9 bits)."""
        h = self.h
        self.req.append(
            (
                active,
                h.const(int(write), 1),
                addr,
                h.const(size, SIZE_BITS),
                h.extract(beat_m1, 0, 8, f"{pre}_len"),
            )
        )

    def own_request(
        self,
        pre: str,
        here: SSAValue,
        write: bool,
        addr: SSAValue,
        size: int,
        beat_m1: SSAValue,
        skip: SSAValue | None = None,
    ) -> SSAValue:
        """The request of the current state's own access, in its request phase (unless
        ``skip``: a resident scratchpad's burst); on its handshake the data phase starts at
        beat 0. Returns the handshake."""
        h = self.h
        parts = (here, self.ph0) if skip is None else (here, self.ph0, h.not_(skip))
        active = h.and_(*parts, hint=f"{pre}_req")
        self.request(active, write, addr, size, beat_m1, pre)
        fire = h.and_(active, self.g.port["mem_req_ready"], hint=f"{pre}_req_fire")
        self.phase_next.append((fire, h.const(1, 2)))
        self.beat_next.append((fire, h.const(0, 9)))
        return fire

    def payload(self, op: Operation, addr: SSAValue, pre: str) -> tuple[SSAValue, int, SSAValue]:
        """The request of memory op ``op`` at byte address ``addr``: (request address,
        size, beats - 1 as 9 bits)."""
        h = self.h
        eb, lb = elem_bytes(op), log2(self.bb)
        if isinstance(op, aq.LoadOp | aq.StoreOp):
            return addr, log2(eb), h.const(0, 9)
        assert isinstance(op, aq.BurstReadOp | aq.BurstWriteOp)
        n, per = op.length_value, self.bb // eb
        req_addr = h.concat(
            h.extract(addr, lb, 32 - lb, f"{pre}_beat_hi"), h.const(0, lb), f"{pre}_base"
        )
        if per == 1:
            return req_addr, lb, h.const(n - 1, 9)
        # o = (a % B) / eb elements before the burst in its first beat
        o9 = h.zext(h.extract(addr, log2(eb), lb - log2(eb), f"{pre}_skip"), 9)
        total = h.binop("comb.add", o9, h.const(n + per - 1, 9), f"{pre}_span")
        beats = h.binop("comb.shru", total, h.const(log2(per), 9), f"{pre}_beats")
        return req_addr, lb, h.binop("comb.sub", beats, h.const(1, 9), f"{pre}_beats_m1")

    # -- a request sent ahead across compute (synth/fsm.py, FsmBuilder.mark_early) -------

    def early_request(self, st: State, pre: str, write: bool) -> SSAValue:
        """Sends the request of wait state ``st`` from the compute states before it (its
        window) once, as soon as the port takes it: ``mem_early_q`` says it is out. The
        wait state then spends one cycle where it would request (an SRAM burst write
        reads its first beat there) and starts its data phase, with what is left of the
        latency. Its address is the same in every cycle of the call (``static_address``),
        so it is formed once, at the window's first state. Returns ``mem_early_q``: the
        wait state's own request is skipped while it is set."""
        g, h = self.g, self.h
        op = st.wait
        assert op is not None
        q = g.reg("mem_early_q", 1)
        addr = g.ref_at(op.addr, g.b.state(st.early[0]))
        req_addr, size, beat_m1 = self.payload(op, addr, f"{pre}_early")
        window = h.or_tree([g.is_state[s] for s in st.early], 1, f"{pre}_window")
        active = h.and_(window, h.not_(q), hint=f"{pre}_early_req")
        self.request(active, write, req_addr, size, beat_m1, f"{pre}_early")
        fire = h.and_(active, g.port["mem_req_ready"], hint=f"{pre}_early_fire")
        g.write("mem_early_q", fire, h.const(1, 1))
        go = h.and_(g.is_state[st.id], self.ph0, q, hint=f"{pre}_early_go")
        g.write("mem_early_q", go, h.const(0, 1))
        self.phase_next.append((go, h.const(1, 2)))
        self.beat_next.append((go, h.const(0, 9)))
        return q

    # -- a burst read streamed into the compute after it (FsmBuilder.mark_stream) --------

    def stream(
        self,
        st: State,
        pre: str,
        addr: SSAValue,
        eb: int,
        beat_m1: SSAValue,
        req_fire: SSAValue,
        hit: SSAValue | None,
        lost: SSAValue | None,
    ) -> SSAValue:
        """A streamed burst read: the wait state ends with its request's handshake, which
        sets ``<pre>_stream_q``; the beats then arrive while the FSM runs the window
        (``UnitGenerator.stream_gates`` holds each window state until the elements it
        reads are in, and the one leaving the window until the last beat). A beat waits a
        cycle while a window state reading the scratchpad's SRAM banks runs (their port 0
        is the beats' port). A resident scratchpad whose claim holds (``hit``) skips the
        request and the stream; otherwise its fill completes with the last beat, at the
        address the request was sent with (held: the wait state's address wire may come
        from a register a window state reuses). Returns the wait state's 'done'."""
        g, h = self.g, self.h
        streaming = g.reg(f"{pre}_stream_q", 1)
        g.write(f"{pre}_stream_q", req_fire, h.const(1, 1))
        resident = g.resident.get(st.id)
        if resident is not None:
            # the wire in the wait state (the request cycle), then the held address
            held = g.reg(f"{pre}_addr_q", 32)
            g.write(f"{pre}_addr_q", req_fire, addr)
            addr = h.mux(g.is_state[st.id], addr, held, f"{pre}_addr")
        elif self.bb // eb > 1:
            # the burst's start within its first beat, for the beats after the request
            lo = h.extract(addr, 0, log2(self.bb), f"{pre}_lane")
            skip = self.stream_skip(st, pre)
            g.write(f"{pre}_skip_q", req_fire, lo)
            addr = h.zext(skip, 32, f"{pre}_lane32")
        last_beat = h.icmp("eq", self.beat_q, beat_m1, f"{pre}_last_beat")
        free = h.not_(g.stream_block[st.id], f"{pre}_port_free")
        here = h.and_(streaming, free, hint=f"{pre}_streaming")
        done = self.burst(st, pre, here, addr, eb, last_beat, False)
        g.write(f"{pre}_stream_q", done, h.const(0, 1))
        win = st.stream
        if win.cyclic:  # the bank of the next beat's element, for the port check
            bank = self.stream_bank(st, pre)
            bits = bank.type.width.data  # type: ignore[attr-defined]
            g.write(f"{pre}_bank_q", req_fire, h.const(win.bank0, bits))
            fire = h.and_(here, self.ph1, g.port["mem_rsp_valid"], hint=f"{pre}_beat_in")
            wrap = h.icmp("eq", bank, h.const(win.cyclic - 1, bits), f"{pre}_bank_wrap")
            inc = h.binop("comb.add", bank, h.const(1, bits), f"{pre}_bank_inc")
            nxt = h.mux(wrap, h.const(0, bits), inc, f"{pre}_bank_next")
            g.write(f"{pre}_bank_q", h.and_(fire, h.not_(done), hint=None), nxt)
        if resident is None or lost is None or hit is None:
            return req_fire
        self.resident_fill(resident, pre, streaming, addr, req_fire, done, lost)
        return h.binop("comb.or", req_fire, hit, f"{pre}_sent_or_kept")

    def stream_bank(self, st: State, pre: str) -> SSAValue:
        """The bank the next beat of a streamed burst writes (a cyclic partition, one
        element a beat): set at the request, advanced with each beat."""
        assert st.stream is not None
        return self.g.reg(f"{pre}_bank_q", max(1, (st.stream.cyclic - 1).bit_length()))

    def stream_skip(self, st: State, pre: str) -> SSAValue:
        """The low address bits of a streamed burst (its lane offset in the first beat),
        held from its request on (its address wire is the wait state's)."""
        if st.id in self.g.resident:
            return self.h.extract(self.g.reg(f"{pre}_addr_q", 32), 0, log2(self.bb), None)
        return self.g.reg(f"{pre}_skip_q", log2(self.bb))

    # -- runs: requests sent ahead (synth/fsm.py, FsmBuilder.mark_runs) ------------------

    def run_requests(self, st: State, pre: str, here: SSAValue, own_fire: SSAValue) -> None:
        """In a state of a run, after its own request went out: the requests of the later
        states of the run, in order, one per accepted handshake. ``mem_sent_q`` is the
        position in the run of the next request to send (0 outside a run)."""
        g, h = self.g, self.h
        assert st.run is not None
        run, pos = st.run, st.run_pos
        sent = self.sent_reg()
        bits = SENT_BITS
        self.sent_next.append((own_fire, h.const(pos + 1, bits)))
        sent_own = h.icmp("ne", self.mp_q, h.const(0, 2), f"{pre}_req_sent")
        for p in range(pos + 1, len(run)):
            op = run[p].wait
            assert op is not None
            hint = f"{pre}_ahead{p}"
            addr = g.ref_at(op.addr, st)
            req_addr, size, beat_m1 = self.payload(op, addr, hint)
            turn = h.icmp("eq", sent, h.const(p, bits), f"{hint}_turn")
            active = h.and_(here, sent_own, turn, hint=f"{hint}_req")
            write = isinstance(op, aq.StoreOp | aq.BurstWriteOp)
            self.request(active, write, req_addr, size, beat_m1, hint)
            fire = h.and_(active, g.port["mem_req_ready"], hint=f"{hint}_fire")
            self.sent_next.append((fire, h.const(p + 1, bits)))
            if p == pos + 1:
                # the next state starts with its data phase when its request is out
                later = h.icmp("ugt", sent, h.const(p, bits), f"{pre}_next_sent_q")
                self.next_sent[st.id] = h.binop("comb.or", later, fire, f"{pre}_next_sent")

    def sent_reg(self) -> SSAValue:
        if self.sent_q is None:
            self.sent_q = self.g.reg("mem_sent_q", SENT_BITS)
        return self.sent_q

    def leave(self, st: State | None, done: SSAValue, fire: SSAValue | None) -> None:
        """The phase and beat counter as a wait state ends (``done``): the next state of a
        run starts with its data when its request is already out; the last state of a run
        clears ``mem_sent_q``. ``fire`` is a read's beat handshake (its counter update)."""
        h = self.h
        if st is None or st.run is None:
            if fire is not None:
                self.beat_next.append((fire, self.beat_inc))
            self.phase_next.append((done, h.const(0, 2)))
            return
        last = st.run_pos == len(st.run) - 1
        if last:
            self.sent_next.append((done, h.const(0, SENT_BITS)))
            nxt = h.const(0, 2)
        else:
            nxt = h.zext(self.next_sent[st.id], 2, f"{self.g.state_names[st.id][2:]}_entry")
        self.phase_next.append((done, nxt))
        if fire is not None:
            # the beat counter restarts at 0 for the next state's data
            self.beat_next.append((fire, h.mux(done, h.const(0, 9), self.beat_inc, None)))
        else:
            self.beat_next.append((done, h.const(0, 9)))

    # -- one beat: a single access ------------------------------------------------------

    def single(
        self,
        st: State,
        pre: str,
        here: SSAValue,
        addr: SSAValue,
        eb: int,
        last_beat: SSAValue,
        write: bool,
    ) -> SSAValue:
        g, h, op = self.g, self.h, st.wait
        w, lb, ab = 8 * eb, log2(self.bb), log2(eb)
        # The element's lane is the address's bits [ab, lb): an access is naturally aligned
        # (the golden interpreter stops on a misaligned one), so its low ab bits are zero.
        # An element as wide as the beat has one lane, and no shifter is built for it.
        lane = None
        if lb > ab:
            lane = h.extract(addr, ab, lb - ab, f"{pre}_lane")
            shift = h.zext(h.concat(lane, h.const(0, 3 + ab), f"{pre}_lane_bits"), self.width)
        if not write:
            assert isinstance(op, aq.LoadOp)
            fire, done = self.read_beat(pre, here, last_beat, st)
            data = g.port["mem_rsp_rdata"]
            if lane is not None:
                data = h.binop("comb.shru", data, shift, f"{pre}_rdata")
            reg = g.b.value_regs[op.result]
            g.reg(reg, w)  # declared here too: nothing else may read a load's register
            g.write(reg, fire, h.extract(data, 0, w, f"{pre}_ld"))
            return done
        assert isinstance(op, aq.StoreOp)
        v = g.ref(op.value, st)
        data = h.zext(v, self.width, f"{pre}_wvalue")
        strb = h.const((1 << eb) - 1, self.bb)
        if lane is not None:
            data = h.binop("comb.shl", data, shift, f"{pre}_wdata")
            lane_n = h.concat(lane, h.const(0, ab)) if ab else lane
            strb = h.binop(
                "comb.shl", strb, h.zext(lane_n, self.bb, f"{pre}_lane_n"), f"{pre}_strb"
            )
        return self.write_beats(pre, here, data, strb, last_beat, st)

    # -- packed bursts ------------------------------------------------------------------

    def burst(
        self,
        st: State,
        pre: str,
        here: SSAValue,
        addr: SSAValue,
        eb: int,
        last_beat: SSAValue,
        write: bool,
    ) -> SSAValue:
        g, h, op = self.g, self.h, st.wait
        assert isinstance(op, aq.BurstReadOp | aq.BurstWriteOp)
        w, lb, per, n = 8 * eb, log2(self.bb), self.bb // eb, op.length_value
        spm = op.scratchpad.root_reference.data
        off = g.ref(op.offset, st)
        k32 = h.zext(self.beat_q, 32, "mem_beat32")
        if per == 1:
            first = k32  # element of slot 0 of this beat
        else:
            o32 = h.zext(h.extract(addr, log2(eb), lb - log2(eb), f"{pre}_skip"), 32)
            kp = h.binop("comb.shl", k32, h.const(log2(per), 32), f"{pre}_beat_elems")
            first = h.binop("comb.sub", kp, o32, f"{pre}_first")
        slots: list[tuple[SSAValue, SSAValue]] = []  # (valid, scratchpad index)
        for s in range(per):
            j = h.binop("comb.add", first, h.const(s, 32), f"{pre}_j{s}")
            # j in [0, n): "negative" indices of the first beat wrap to huge unsigned ones
            valid = h.icmp("ult", j, h.const(n, 32), f"{pre}_v{s}") if per > 1 else None
            idx = h.binop("comb.add", off, j, f"{pre}_{spm}_idx{s}")
            slots.append((valid if valid is not None else h.const(1, 1), idx))
        sram = spm in g.sram
        banks = set(range(g.spm[spm].factor_value))
        if not write:
            fire, done = self.read_beat(pre, here, last_beat, st)
            rdata = g.port["mem_rsp_rdata"]
            for s, (valid, idx) in enumerate(slots):
                en = h.and_(fire, valid, hint=f"{pre}_{spm}_we{s}") if per > 1 else fire
                val = h.extract(rdata, s * w, w, f"{pre}_{spm}_in{s}")
                if sram:
                    g.sram.access(spm, banks, 0, en, idx, val, f"{pre}_{spm}_w{s}")
                else:
                    g.spm_writes.setdefault(spm, []).append((en, idx, val, None))
            return done
        ahead = self.sram_prefetch(st, pre, here, addr, eb, spm) if sram else []
        data: SSAValue | None = None
        strb: SSAValue | None = None
        for s, (valid, idx) in enumerate(slots):
            elem = ahead[s] if sram else g.spm_read(spm, idx, f"{pre}_{spm}_out{s}", st)
            mask = h.replicate(valid, eb, f"{pre}_strb{s}")
            data = elem if data is None else h.concat(elem, data, f"{pre}_wdata")
            strb = mask if strb is None else h.concat(mask, strb, f"{pre}_strb")
        assert data is not None and strb is not None
        return self.write_beats(pre, here, data, strb, last_beat, st)

    def sram_prefetch(
        self, st: State, pre: str, here: SSAValue, addr: SSAValue, eb: int, spm: str
    ) -> list[SSAValue]:
        """A burst write from SRAM: reads, in every cycle of the wait state, the elements
        of the beat that goes out in the next cycle (beat 0 while requesting; the next
        beat when the current one is accepted, else the current one again); returns each
        slot's element as the banks deliver it."""
        g, h, op = self.g, self.h, st.wait
        assert isinstance(op, aq.BurstWriteOp)
        lb, per = log2(self.bb), self.bb // eb
        spm_op = g.spm[spm]
        banks = set(range(spm_op.factor_value))
        wfire = h.and_(here, self.ph1, g.port["mem_wdata_ready"], hint=f"{pre}_wr_fire")
        nxt = h.mux(wfire, self.beat_inc, self.beat_q, f"{pre}_ahead_next")
        rbeat = h.mux(self.ph0, h.const(0, 9), nxt, f"{pre}_ahead_beat")
        k32 = h.zext(rbeat, 32, f"{pre}_ahead32")
        if per == 1:
            first = k32
        else:
            o32 = h.zext(h.extract(addr, log2(eb), lb - log2(eb), f"{pre}_skip"), 32)
            kp = h.binop("comb.shl", k32, h.const(log2(per), 32), f"{pre}_ahead_elems")
            first = h.binop("comb.sub", kp, o32, f"{pre}_ahead_first")
        off = g.ref(op.offset, st)
        bits = max(1, (spm_op.factor_value - 1).bit_length())
        out = []
        for s in range(per):
            j = h.binop("comb.add", first, h.const(s, 32), f"{pre}_aj{s}")
            idx = h.binop("comb.add", off, j, f"{pre}_{spm}_aidx{s}")
            hint = f"{pre}_{spm}_r{s}"
            bank = g.sram.access(spm, banks, 0, here, idx, None, hint)
            if bank is None:
                out.append(g.sram.read_data(spm, 0, 0))
                continue
            rn = f"{hint}_bank_q"
            sel = g.reg(rn, bits)
            g.write(rn, here, h.extract(bank, 0, bits, f"{hint}_bank"))
            items = [
                (
                    h.icmp("eq", sel, h.const(b, bits), f"{hint}_from{b}"),
                    g.sram.read_data(spm, b, 0),
                )
                for b in sorted(banks)
            ]
            out.append(h.onehot_select(items, h.const(0, 8 * eb), f"{pre}_{spm}_out{s}"))
        return out

    # -- i64 elements on a 32-bit port: two beats each ----------------------------------

    def split_state(self, st: State) -> SSAValue:
        g, h, op = self.g, self.h, st.wait
        assert op is not None and self.width == 32
        pre = g.state_names[st.id][2:]
        here = g.is_state[st.id]
        write = isinstance(op, aq.StoreOp | aq.BurstWriteOp)
        beats = mem_beats(op, 32)
        addr = g.ref(op.addr, st)
        self.own_request(pre, here, write, addr, 2, h.const(beats - 1, 9))
        last_beat = h.icmp("eq", self.beat_q, h.const(beats - 1, 9), f"{pre}_last_beat")
        elem_idx = h.binop("comb.shru", self.beat_q, h.const(1, 9), f"{pre}_elem")
        half = h.extract(self.beat_q, 0, 1, f"{pre}_half")
        first = h.icmp("eq", half, h.const(0, 1), f"{pre}_lo_beat")
        rdata = g.port["mem_rsp_rdata"]
        if not write:
            fire, done = self.read_beat(pre, here, last_beat)
            if isinstance(op, aq.LoadOp):
                reg = g.b.value_regs[op.result]
                cur = g.read(reg, 64, st.id)
                lo = h.extract(cur, 0, 32, f"{pre}_lo")
                hi = h.extract(cur, 32, 32, f"{pre}_hi")
                newv = h.mux(first, h.concat(hi, rdata), h.concat(rdata, lo), f"{pre}_ld64")
                g.write(reg, fire, newv)
            else:
                assert isinstance(op, aq.BurstReadOp)
                spm = op.scratchpad.root_reference.data
                idx = h.binop(
                    "comb.add",
                    g.ref(op.offset, st),
                    h.zext(elem_idx, 32, f"{pre}_elem32"),
                    f"{pre}_{spm}_idx",
                )
                for hh in (0, 1):
                    is_h = h.icmp("eq", half, h.const(hh, 1), None)
                    hsel = h.and_(fire, is_h, hint=f"{pre}_{spm}_half{hh}")
                    g.spm_writes.setdefault(spm, []).append((hsel, idx, rdata, hh))
            return done
        if isinstance(op, aq.StoreOp):
            v = g.ref(op.value, st)
        else:
            assert isinstance(op, aq.BurstWriteOp)
            spm = op.scratchpad.root_reference.data
            idx = h.binop(
                "comb.add",
                g.ref(op.offset, st),
                h.zext(elem_idx, 32, f"{pre}_elem32"),
                f"{pre}_{spm}_idx",
            )
            v = g.spm_read(spm, idx, f"{pre}_{spm}_out", st)
        lo = h.extract(v, 0, 32, f"{pre}_lo")
        hi = h.extract(v, 32, 32, f"{pre}_hi")
        data = h.mux(first, lo, hi, f"{pre}_wdata")
        return self.write_beats(pre, here, data, h.const(0xF, 4), last_beat)

    # -- handshakes ---------------------------------------------------------------------

    def read_beat(
        self, pre: str, here: SSAValue, last_beat: SSAValue, st: State | None = None
    ) -> tuple[SSAValue, SSAValue]:
        """The read-data handshake of a wait state: (beat fire, done)."""
        h, g = self.h, self.g
        active = h.and_(here, self.ph1, hint=f"{pre}_rd_active")
        self.rsp_ready.append(active)
        fire = h.and_(active, g.port["mem_rsp_valid"], hint=f"{pre}_rd_fire")
        done = h.and_(fire, last_beat, hint=f"{pre}_done")
        self.leave(st, done, fire)
        return fire, done

    def write_beats(
        self,
        pre: str,
        here: SSAValue,
        data: SSAValue,
        strb: SSAValue,
        last_beat: SSAValue,
        st: State | None = None,
    ) -> SSAValue:
        """Write data beats, then the acknowledgement; returns 'done'."""
        h, g = self.h, self.g
        active = h.and_(here, self.ph1, hint=f"{pre}_wr_active")
        self.wdata.append((active, data, strb, last_beat))
        wfire = h.and_(active, g.port["mem_wdata_ready"], hint=f"{pre}_wr_fire")
        self.beat_next.append((wfire, self.beat_inc))
        self.phase_next.append((h.and_(wfire, last_beat, hint=f"{pre}_wr_last"), h.const(2, 2)))
        ack = h.and_(here, self.ph2, hint=f"{pre}_ack")
        self.rsp_ready.append(ack)
        done = h.and_(ack, g.port["mem_rsp_valid"], hint=f"{pre}_done")
        self.leave(st, done, None)
        return done

    def finish(self) -> None:
        for en, v in self.phase_next:
            self.g.write("mem_phase_q", en, v)
        for en, v in self.beat_next:
            self.g.write("mem_beat_q", en, v)
        for en, v in self.sent_next:
            self.g.write("mem_sent_q", en, v)

    def outputs(self) -> list[tuple[str, SSAValue]]:
        h, wd = self.h, self.width
        h.loc = basename_loc(None)

        def pick(items: list[tuple[SSAValue, SSAValue]], w: int, hint: str) -> SSAValue:
            return h.onehot_select(items, h.const(0, w), hint)

        return [
            ("mem_req_valid", h.or_tree([a for a, *_ in self.req], 1, "req_valid")),
            ("mem_req_write", pick([(a, wr) for a, wr, *_ in self.req], 1, "req_write")),
            ("mem_req_addr", pick([(a, ad) for a, _, ad, *_ in self.req], 32, "req_addr")),
            ("mem_req_size", pick([(a, s) for a, _, _, s, _ in self.req], SIZE_BITS, "req_size")),
            ("mem_req_len", pick([(a, n) for a, *_, n in self.req], 8, "req_len")),
            ("mem_wdata_valid", h.or_tree([a for a, *_ in self.wdata], 1, "wdata_valid")),
            ("mem_wdata", pick([(a, d) for a, d, _, _ in self.wdata], wd, "wdata")),
            ("mem_wstrb", pick([(a, s) for a, _, s, _ in self.wdata], wd // 8, "wstrb")),
            ("mem_wlast", pick([(a, lst) for a, _, _, lst in self.wdata], 1, "wlast")),
            ("mem_rsp_ready", h.or_tree(self.rsp_ready, 1, "rsp_ready")),
        ]


__all__ = ["SIZE_BITS", "MemEngine"]
