"""A loop body that ends in a memory access keeps its latch out of the wait state.

A wait state lasts until memory answers, and a state's register writes are enabled in
every cycle of it; a latch there stepped the counter once per waiting cycle, so the loop
ran once (found by co-simulating the naive DSP spec; tests/sim/specs/loop_store_latch.isax
runs it in RTL)."""

from __future__ import annotations

from aquas.spec.frontend import lower_spec
from aquas.synth.flow import schedule_isaxs
from aquas.synth.oplib import OperatorLibrary

SRC = """extension latch;
#[opcode(custom0), funct7(0)]
isax copy4(rs1, rs2) {
    for n in 0..4 {
        mem<u32>[rs2 + 4 * n] = mem<u32>[rs1 + 4 * n] + n;
    }
}
"""


def test_the_latch_of_a_loop_ending_in_a_store_is_a_state_of_its_own() -> None:
    builder, (fsm,) = schedule_isaxs(lower_spec(SRC, "l.isax"), 10.0, OperatorLibrary.load())
    latches = [s for s in builder.states if s.latches]
    assert len(latches) == 1 and latches[0].wait is None and latches[0].ops == []
    # the state setting n = 0, then per iteration: the load's wait (1 beat + L), the
    # store's (1 beat + 1 + L) and the latch (1): 1 + 4 * (1 + 2 + 1) = 17 fixed, 8 L
    lat = fsm.latency
    assert (lat.min_fixed, lat.max_fixed, lat.min_mem, lat.max_mem) == (17, 17, 8, 8)
