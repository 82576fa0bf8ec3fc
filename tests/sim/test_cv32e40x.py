"""CV32E40X specifics: the CV-X-IF adapter's issue rule and kill handling (with negative
controls: the same programs fail on a naive adapter), and the descriptor's cost model
against cycles measured on the core."""

from __future__ import annotations

import pytest
from conftest import TEST_UNIT

from aquas.sim import build, run
from aquas.target import load_target

pytestmark = pytest.mark.sim


def test_xif_issue_stalled_ex_and_killed_instructions(program, soc_binary):
    """fixtures/xif.S: custom instructions issued while EX is stalled behind a store and a
    load get their results; one accepted and then killed (older illegal instruction) has
    no side effect; instructions in a taken branch's shadow never execute."""
    r = run(soc_binary("cv32e40x", isax=True), program("xif", "cv32e40x"), max_cycles=200_000)
    assert (r.reason, r.exit_code) == ("exit", 0), (r.exit_code, r.report)


def test_xif_naive_adapter_fails_the_same_checks(program):
    """Negative control: an adapter that accepts while EX is stalled loses `writeback`
    (openhwgroup/cv32e40x#941): check 1's rd is never written."""
    naive = build("cv32e40x", None, [TEST_UNIT], quiet=True, params={"XIF_NAIVE": 1})
    r = run(naive, program("xif", "cv32e40x"), max_cycles=200_000)
    assert (r.reason, r.exit_code) == ("exit", 1), (r.exit_code, r.report)


def test_xif_naive_adapter_lets_a_killed_instruction_write(program):
    """Negative control for the kill path: xif.S from check 3 on (xif_kill.S); on the naive
    adapter, which hands an accepted instruction to the unit before its commit, the killed
    instruction's store reaches memory."""
    naive = build("cv32e40x", None, [TEST_UNIT], quiet=True, params={"XIF_NAIVE": 1})
    r = run(naive, program("xif_kill", "cv32e40x"), max_cycles=200_000)
    assert (r.reason, r.exit_code) == ("exit", 3), (r.exit_code, r.report)


def test_cost_model_matches_measured_cycles(program, soc_binary):
    """The descriptor's [cost] is what the core does: cycles per instruction kind measured
    by fixtures/costloop.S (32 of a kind per region, less the empty region 1)."""
    r = run(
        soc_binary("cv32e40x", isax=True), program("costloop_isax", "cv32e40x"), max_cycles=200_000
    )
    assert (r.reason, r.exit_code) == ("exit", 0), r.report
    per = {k: (v.cycles - r.regions[1].cycles) / 32 for k, v in r.regions.items()}
    # fetch bound: every instruction waits for its fetch (memory latency 10 + 2)
    assert per[2] == per[3] == per[8] == per[9] == 12
    assert (round(per[4]), round(per[5]), per[6], per[7]) == (28, 24, 25, 24)
    cost = load_target(soc="cv32e40x").cost
    assert (cost.alu, cost.mul, cost.div, cost.load, cost.store) == (
        per[2],
        per[3],
        round(per[4]),
        round(per[5]),
        per[6],
    )
    assert cost.branch == (per[7] + per[8]) / 2
    assert cost.call_overhead == 3 * per[9]  # the instruction and two operand moves


def test_xif_routes_the_four_custom_opcodes_and_rejects_others(program, soc_binary):
    """custom-0..3 reach the unit with their operands and rd; another opcode is rejected
    and traps as illegal (exit 0x1000 + mcause 2 from start.S's handler)."""
    r = run(soc_binary("cv32e40x", isax=True), program("xif_route", "cv32e40x"), max_cycles=200_000)
    assert (r.reason, r.exit_code) == ("exit", 0x1002), (r.exit_code, r.report)
