"""Multiplies by a constant of different states on one operator (``binding.isax_operators``):
a state machine is in one state at a time and one ISAX runs at a time, so the shifted terms
and adder tree of ``x * c`` in one state can serve the same constant's multiply in another
state, of the same ISAX or another, behind an AND-OR select over the states' presence
flags. A narrower multiply joins a wider unit (the low bits of the wider product).
Co-simulation interleaves the ISAXs' calls."""

from __future__ import annotations

import re
from pathlib import Path

from aquas.dialects.aquas import constant_value
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.flow import schedule_isaxs
from aquas.synth.oplib import OperatorLibrary

from helpers import cosim_random

ROOT = Path(__file__).resolve().parents[1]
LIB = OperatorLibrary.load()
CLOCK = 5.67
BARRETT = 1290167  # floor(2^32 / 3329): 7 signed digits

SPEC = """\
extension cms;

#[opcode(custom0), funct7(0)]
isax bar_a(rs1, rs2) -> rd {
    let x: u64 = zext<u64>(rs1 ^ rs2);
    let t: u64 = (x * 1290167) >> 32;
    return trunc<u32>(t);
}

#[opcode(custom0), funct7(1)]
isax bar_b(rs1, rs2) -> rd {
    let x: u64 = zext<u64>((rs1 + rs2) & 0xFFFFFF);
    let t: u64 = (x * 1290167) >> 20;
    return trunc<u32>(t) ^ rs1;
}

#[opcode(custom0), funct7(2)]
isax bar_c(rs1, rs2) -> rd {
    let x: u64 = zext<u64>(rs1 & 0xFFFF);
    let t: u64 = (x * 1290167) >> 8;
    return trunc<u32>(t) - rs2;
}
"""


def _operators(spec: str, clock: float):  # type: ignore[no-untyped-def]
    builder, _ = schedule_isaxs(lower_spec(spec, "cms.isax"), clock, LIB)
    return builder.choose_isax_operators(LIB)


def test_two_isaxs_share_one_multiply_by_a_constant() -> None:
    """bar_a's product is narrowed to 53 bits (32-bit operand, 21-bit constant), bar_b's to
    45: bar_b's joins bar_a's unit (45 >= 0.75 * 53). bar_c's 37 bits are too narrow for
    it and keep their own operator."""
    x = _operators(SPEC, CLOCK)
    assert x.units == [(53, 53, ["bar_a", "bar_b"])]
    assert x.const == {0: BARRETT}
    assert sorted(op.results[0].type.width.data for op in x.unit_of) == [45, 53]


def test_a_multiply_without_room_for_the_select_keeps_its_operator() -> None:
    """At 4.0 ns bar_b's multiply ends its cycle with no time left: the select (and the
    wider unit's longer adders) do not fit, so nothing is shared."""
    x = _operators(SPEC, 4.0)
    assert x.units == [] and x.unit_of == {} and x.const == {}


def test_shared_constant_multiplies_cosimulate_bit_exact_and_lint_clean(tmp_path: Path) -> None:
    from aquas.synth.lint import lint

    path = tmp_path / "cms.isax"
    path.write_text(SPEC)
    res = cosim_random(path, tmp_path / "out", 200, 11, CLOCK)
    sv = res.verilog_path.read_text()
    assert re.search(r"\bxcm0 = ", sv) and not re.search(r"\bxcm1 = ", sv)
    assert re.search(r"\bxcm0_bar_b = ", sv)  # bar_b's 45-bit operand, zero-extended
    assert not re.search(r"\b(bar_a|bar_b)_muli_neg\b", sv)  # no tree of their own
    assert re.search(r"\bbar_c_muli_neg\b", sv)  # bar_c keeps its own
    assert lint(res.verilog_path) == []


CHAIN = """\
extension cmt;

#[opcode(custom0), funct7(0)]
isax chain(rs1, rs2) -> rd {
    let x: u64 = zext<u64>(rs1);
    let t: u32 = trunc<u32>((x * 1290167) >> 21);
    let y: u64 = zext<u64>(t ^ rs2);
    let u: u32 = trunc<u32>((y * 1290167) >> 32);
    return u + t;
}

#[opcode(custom0), funct7(1)]
isax pair(rs1, rs2) -> rd {
    let a: u32 = trunc<u32>((zext<u64>(rs1) * 1290167) >> 32);
    let b: u32 = trunc<u32>((zext<u64>(rs2) * 1290167) >> 30);
    return a ^ b;
}
"""


def test_multiplies_of_one_isax_in_different_states_share_and_of_one_state_do_not(
    tmp_path: Path,
) -> None:
    """chain's two multiplies by 1,290,167 do not fit one cycle together (3.1 ns each at 53
    bits): two states, one operator. pair's two run in one state: one of them joins the
    operator, the other keeps its own. Bit-exact with calls of both interleaved."""
    from aquas.synth.lint import lint

    x = _operators(CHAIN, CLOCK)
    assert x.units == [(53, 53, ["chain", "pair"])] and x.const == {0: BARRETT}
    users = [op for op, unit in x.unit_of.items() if unit == 0]
    assert len(users) == 3
    path = tmp_path / "cmt.isax"
    path.write_text(CHAIN)
    res = cosim_random(path, tmp_path / "out", 200, 13, CLOCK)
    sv = res.verilog_path.read_text()
    assert re.search(r"\bxcm0 = ", sv) and not re.search(r"\bxcm1 = ", sv)
    assert len(re.findall(r"\bpair_\w*_neg = ", sv)) == 1  # pair's other multiply
    assert not re.search(r"\bchain_\w*_neg = ", sv)
    assert lint(res.verilog_path) == []


def test_kybers_barrett_multiplies_share_across_its_four_isaxs() -> None:
    """At VexRiscv's clock every multiply by 1,290,167 and by 3,329 of the four Kyber ISAXs,
    as written with Barrett steps by hand (``tests/kyber_barrett.isax``), runs on
    one of four operators: the spec's eighteen Barrett multiplies (in ten loops and two
    register ISAXs). ntt_inv's ``% 3329`` of a 19-bit dividend is a Barrett reduction sized
    by it (a multiply by ``floor(2^19 / 3329)`` and a 13-bit one by 3,329): those two, like
    the single multiply by 3,303, keep their own."""
    module = lower_spec_file(ROOT / "tests" / "kyber_barrett.isax")
    builder, _ = schedule_isaxs(module, 5.6706, LIB)
    x = builder.choose_isax_operators(LIB)
    everyone = ["modmul_q", "ntt_bfly", "ntt_fwd", "ntt_inv"]
    shared = {(x.const[u], tuple(x.units[u][2])) for u in x.const}
    assert (BARRETT, tuple(everyone)) in shared
    assert (3329, tuple(everyone)) in shared
    assert len(x.units) == 4 and len(x.unit_of) == 18
    assert not any(s.units for s in builder.states)  # no divider left


def test_kybers_remainders_are_sized_by_their_dividends() -> None:
    """The example spec writes every reduction as ``% 3329``: each estimate multiplies by
    ``floor(2^n / 3329)`` for its dividend's ``n`` bits (16 for a coefficient, 17 for a sum
    of two, 19 for ntt_inv's signed ``a + 3329 - b``, 32 for a product of two), and the
    32-bit ones by 1,290,167 of modmul_q, ntt_fwd and ntt_inv share one operator."""
    module = lower_spec_file(ROOT / "examples" / "crypto" / "kyber.isax")
    builder, _ = schedule_isaxs(module, 5.6706, LIB)  # prepared in place
    consts = {
        c
        for op in module.walk()
        if op.name == "arith.muli"
        for v in op.operands
        if (c := constant_value(v)) is not None
    }
    assert {(1 << n) // 3329 for n in (16, 17, 19, 32)} <= consts
    x = builder.choose_isax_operators(LIB)
    (big,) = [u for u in x.const if x.const[u] == BARRETT]
    assert {"modmul_q", "ntt_fwd", "ntt_inv"} <= set(x.units[big][2])
    assert not any(s.units for s in builder.states)  # no divider
