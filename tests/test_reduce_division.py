"""``aquas-reduce-division`` (division and remainder by a constant power of two become
shifts and masks, by another constant of up to 32 bits a Barrett reduction) and ``aquas-drop-unobservable`` (writes of states whose contents reach
nothing observable go), both in ``aquas synth``'s prepare pipeline.

The expected values come from Python's own integer arithmetic (truncating division, the
remainder with the dividend's sign), not from the code under test."""

from __future__ import annotations

import random

import pytest

from aquas.cli import make_context
from aquas.dialects import aquas as aq
from aquas.dialects.aquas import constant_value
from aquas.interpreter import IsaxState, execute, find_extension
from aquas.passes import parse_pipeline
from aquas.spec.frontend import lower_spec
from aquas.synth.prepare import PIPELINE, prepare

DIVISIONS = ("arith.divui", "arith.remui", "arith.divsi", "arith.remsi")


def reduced(src: str):  # type: ignore[no-untyped-def]
    module = lower_spec(src, "pow2.isax")
    parse_pipeline("canonicalize,aquas-reduce-division,canonicalize,cse").apply(
        make_context(), module
    )
    module.verify()
    return module


def run(module, name: str, rs1: int) -> int:  # type: ignore[no-untyped-def]
    isax = next(i for i in find_extension(module).isaxs() if i.sym_name.data == name)
    return execute(isax, rs1, 0).rd


def divisions(module) -> list[str]:  # type: ignore[no-untyped-def]
    return [op.name for op in module.walk() if op.name in DIVISIONS]


def truncating(x: int, d: int) -> tuple[int, int]:
    q = abs(x) // abs(d) * (1 if (x < 0) == (d < 0) else -1)
    return q, x - q * d


def signed(v: int, w: int) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def spec_for(w: int, sgn: bool, divisors: list[int]) -> str:
    t = f"{'i' if sgn else 'u'}{w}"
    body = []
    for k, d in enumerate(divisors):
        for op, tag in (("/", "q"), ("%", "r")):
            x = f"trunc<{t}>(rs1 as i32)" if sgn else f"trunc<{t}>(rs1)"
            res = f"sext<i32>({x} {op} {d}{t}) as u32" if sgn else f"zext<u32>({x} {op} {d}{t})"
            body.append(
                f"#[opcode(custom0), funct7({2 * k + (tag == 'r')})]\n"
                f"isax {tag}{k}(rs1) -> rd {{ return {res}; }}\n"
            )
    return "extension pow2;\n" + "".join(body)


def check_every_8_bit_dividend(sgn: bool, divisors: list[int]) -> None:
    """No division is left, and every 8-bit dividend gives Python's quotient and
    remainder (rd is the sign or zero extension of the 8-bit result)."""
    module = reduced(spec_for(8, sgn, divisors))
    assert divisions(module) == []
    for k, d in enumerate(divisors):
        for x in range(256):
            q, r = truncating(signed(x, 8) if sgn else x, d)
            got_q, got_r = run(module, f"q{k}", x), run(module, f"r{k}", x)
            assert (got_q, got_r) == (q & 0xFFFFFFFF, r & 0xFFFFFFFF), (x, d)


@pytest.mark.parametrize("sgn", [False, True], ids=["unsigned", "signed"])
def test_every_8_bit_dividend_by_every_power_of_two(sgn: bool) -> None:
    check_every_8_bit_dividend(sgn, [1 << k for k in range(7 if sgn else 8)])  # 2^7 < 0 as i8


@pytest.mark.parametrize("sgn", [False, True], ids=["unsigned", "signed"])
def test_32_bit_dividends_at_the_edges(sgn: bool) -> None:
    divisors = [1, 2, 8, 1 << 16, 1 << 30] + ([] if sgn else [1 << 31])
    module = reduced(spec_for(32, sgn, divisors))
    assert divisions(module) == []
    rng = random.Random(7)
    xs = [0, 1, 7, 8, 9, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFF8]
    xs += [rng.getrandbits(32) for _ in range(200)]
    for k, d in enumerate(divisors):
        for x in xs:
            q, r = truncating(signed(x, 32) if sgn else x, d)
            assert run(module, f"q{k}", x) == q & 0xFFFFFFFF, (x, d)
            assert run(module, f"r{k}", x) == r & 0xFFFFFFFF, (x, d)


def test_other_divisors_keep_their_division() -> None:
    src = (
        "extension keep;\n"
        "#[opcode(custom0), funct7(0)]\nisax a(rs1, rs2) -> rd { return rs1 % rs2; }\n"
        "#[opcode(custom0), funct7(1)]\n"
        "isax b(rs1) -> rd { return ((rs1 as i32) % -2147483648) as u32; }\n"
        "#[opcode(custom0), funct7(2)]\n"
        "isax c(rs1, rs2) -> rd { return trunc<u32>((zext<u64>(rs1) << 32 | zext<u64>(rs2)) / 3); }\n"
    )
    # rs2 is no constant; MIN is negative as a signed divisor, 2^31 in magnitude; a 64-bit
    # division is wider than BARRETT_MAX_WIDTH
    assert sorted(divisions(reduced(src))) == ["arith.divui", "arith.remsi", "arith.remui"]


BARRETT_DIVISORS = [3, 5, 6, 7, 10, 12, 100, 127]


@pytest.mark.parametrize("sgn", [False, True], ids=["unsigned", "signed"])
def test_every_8_bit_dividend_by_constants_that_are_no_powers_of_two(sgn: bool) -> None:
    """A Barrett reduction: the quotient's estimate by ``floor(2^8 / d)`` and one
    correction; signed, of the magnitude, with negative divisors too."""
    check_every_8_bit_dividend(sgn, BARRETT_DIVISORS + ([-3, -7, -100, -4] if sgn else []))


@pytest.mark.parametrize("w", [16, 32])
@pytest.mark.parametrize("sgn", [False, True], ids=["unsigned", "signed"])
def test_wider_dividends_by_constants_that_are_no_powers_of_two(sgn: bool, w: int) -> None:
    top = (1 << (w - 1)) - 1  # the largest divisor Barrett takes (r' < 2d fits w bits)
    divisors = [*BARRETT_DIVISORS, 3329, 10007, top] + ([-3329, -top] if sgn else [])
    module = reduced(spec_for(w, sgn, divisors))
    assert divisions(module) == []
    rng = random.Random(w)
    m = (1 << w) - 1
    xs = [0, 1, 2, 3328, 3329, 3330, 6657, 6658, m, m - 1, 1 << (w - 1), (1 << (w - 1)) - 1]
    xs += [rng.getrandbits(w) for _ in range(300)]
    for k, d in enumerate(divisors):
        ends = [d - 1, d, d + 1, 2 * d - 1, 2 * d, (m // abs(d)) * abs(d) - 1]
        for x in xs + [e & m for e in ends]:
            q, r = truncating(signed(x, w) if sgn else x, d)
            ext = (lambda v: v & 0xFFFFFFFF) if sgn else (lambda v: v & m)
            assert run(module, f"q{k}", x) == ext(q), (x, d)
            assert run(module, f"r{k}", x) == ext(r), (x, d)


NARROW_DIVISORS = [3, 7, 100, 3329, 5000, 8190, 9000, 100_000]


def narrow_spec(divisors: list[int]) -> str:
    """Dividends typed 32 bits whose values are narrower: an unsigned sum of two 12-bit
    fields (13 bits) and a sign-extended 12-bit field."""
    body = []
    for k, d in enumerate(divisors):
        u = "(zext<u32>(rs1[11:0]) + zext<u32>(rs1[23:12]))"
        s = "sext<i32>(trunc<i12>(rs1 as i32))"
        for j, expr in enumerate(
            (f"{u} / {d}", f"{u} % {d}", f"({s} / {d}) as u32", f"({s} % -{d}) as u32")
        ):
            body.append(
                f"#[opcode(custom0), funct7({4 * k + j})]\n"
                f"isax n{k}_{j}(rs1) -> rd {{ return {expr}; }}\n"
            )
    return "extension narrowdiv;\n" + "".join(body)


def test_narrow_dividends_are_reduced_at_their_values_width() -> None:
    """A dividend whose value is narrower than its type: the estimate multiplies by
    ``floor(2^n / d)`` for its ``n`` bits, and the remainder's subtraction, compare and
    correction are as wide as ``2d - 1``; every quotient and remainder is still exact
    (every 12-bit signed dividend, and 3,000 sums of two 12-bit fields with the edges)."""
    module = reduced(narrow_spec(NARROW_DIVISORS))
    assert divisions(module) == []
    consts = {constant_value(op.results[0]) for op in module.walk() if op.name == "arith.constant"}
    assert (1 << 13) // 3329 in consts and (1 << 32) // 3329 not in consts  # n = 13
    assert (1 << 12) // 100 in consts  # the signed dividend's magnitude: 12 bits
    tails = {
        op.operands[0].type.width.data
        for op in module.walk()
        if op.name == "arith.cmpi" and op.predicate.value.data == 9  # uge: r' >= d
    }
    assert {(2 * 3329 - 1).bit_length(), (2 * 7 - 1).bit_length()} <= tails
    rng = random.Random(13)
    sums = [(a, b) for a in (0, 1, 4095) for b in (0, 1, 4094, 4095)]
    sums += [(rng.getrandbits(12), rng.getrandbits(12)) for _ in range(3000)]
    for k, d in enumerate(NARROW_DIVISORS):
        for a, b in sums:
            q, r = truncating(a + b, d)
            x = a | b << 12
            assert run(module, f"n{k}_0", x) == q and run(module, f"n{k}_1", x) == r, (a, b, d)
        for x in range(4096):
            sq, _ = truncating(signed(x, 12), d)
            _, sr = truncating(signed(x, 12), -d)
            assert run(module, f"n{k}_2", x) == sq & 0xFFFFFFFF, (x, d)
            assert run(module, f"n{k}_3", x) == sr & 0xFFFFFFFF, (x, d)


def test_synthesis_runs_both_passes() -> None:
    passes = PIPELINE.split(",")
    assert passes.index("aquas-fold-constants") < passes.index("aquas-reduce-division")
    assert passes.index("aquas-drop-unobservable") < passes.index("dce")


UNOBSERVABLE = """extension hide;
state tally: u16 = 7;
state kept: u32 = 0;
scratchpad junk: [u32; 4] partition(cyclic, 2);
#[opcode(custom0), funct7(0)]
isax f(rs1, rs2) -> rd {
    tally = trunc<u16>(rs1 % (zext<u32>(tally) | 1));
    junk[rs2 & 3] = junk[rs1 & 3] / (rs2 | 1);
    kept = kept + rs1 / (rs2 | 1);
    return kept;
}
"""


def test_writes_of_unobservable_storage_go_with_what_computed_them() -> None:
    module = prepare(lower_spec(UNOBSERVABLE, "hide.isax"))
    ext = find_extension(module)
    writes = [
        (op.state if isinstance(op, aq.StateWriteOp) else op.scratchpad).root_reference.data
        for op in ext.walk()
        if isinstance(op, aq.StateWriteOp | aq.SpmWriteOp)
    ]
    # `kept` is returned; tally and junk feed only themselves. Scratchpads keep their
    # writes (a plan may have turned a burst into them): only tally's goes
    assert writes == ["junk", "kept"]
    assert divisions(module) == ["arith.divui", "arith.divui"]  # junk's, kept's


def test_dropping_unobservable_writes_keeps_every_result() -> None:
    src_module = lower_spec(UNOBSERVABLE, "hide.isax")
    prepared = prepare(src_module.clone())
    a = next(iter(find_extension(src_module).isaxs()))
    b = next(iter(find_extension(prepared).isaxs()))
    sa, sb = IsaxState.reset(find_extension(src_module)), IsaxState.reset(find_extension(prepared))
    rng = random.Random(3)
    for _ in range(100):
        rs1, rs2 = rng.getrandbits(32), rng.choice([0, 1, rng.getrandbits(32)])
        ra, rb = execute(a, rs1, rs2, state=sa), execute(b, rs1, rs2, state=sb)
        assert ra.rd == rb.rd
        assert ra.state.regs["kept"] == rb.state.regs["kept"]
        sa, sb = ra.state, rb.state
