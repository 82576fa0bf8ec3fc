"""The shared w-bit integer semantics against hand-computed values (RISC-V's rules for the
cases MLIR leaves poison)."""

import pytest

from aquas import intops


@pytest.mark.parametrize(
    ("name", "w", "a", "b", "want"),
    [
        ("add", 8, 200, 100, 44),
        ("sub", 8, 3, 5, 254),
        ("mul", 16, 300, 300, 90000 % 65536),
        ("divu", 32, 7, 0, 0xFFFFFFFF),
        ("remu", 32, 7, 0, 7),
        ("divs", 32, 0x80000000, 0xFFFFFFFF, 0x80000000),  # MIN / -1 = MIN
        ("rems", 32, 0x80000000, 0xFFFFFFFF, 0),
        ("divs", 8, 0xF9, 2, 0xFD),  # -7 / 2 = -3 (round toward zero)
        ("rems", 8, 0xF9, 2, 0xFF),  # -7 % 2 = -1
        ("divs", 8, 5, 0, 0xFF),
        ("rems", 8, 0xF9, 0, 0xF9),
        ("shl", 8, 1, 8, 0),
        ("shl", 8, 0x81, 1, 0x02),
        ("shru", 8, 0x80, 9, 0),
        ("shrs", 8, 0x80, 3, 0xF0),
        ("shrs", 8, 0x80, 200, 0xFF),
        ("shrs", 8, 0x40, 200, 0),
        ("xor", 4, 0xA, 0x6, 0xC),
    ],
)
def test_binary(name: str, w: int, a: int, b: int, want: int) -> None:
    assert intops.binary(name, w, a, b) == want


def test_compare_signed_and_unsigned() -> None:
    assert intops.compare("ult", 8, 1, 0xFF)
    assert not intops.compare("slt", 8, 1, 0xFF)  # 1 < -1 is false
    assert intops.compare("sge", 8, 0x7F, 0x80)
    assert intops.compare("eq", 4, 0x1F, 0xF)  # operands reduced to 4 bits
    assert [intops.PREDICATES.index(p) for p in ("eq", "uge")] == [0, 9]
    for p in intops.PREDICATES:
        for a, b in [(0, 0), (1, 0xFF), (0x80, 0x7F), (5, 5)]:
            assert intops.compare(p, 8, a, b) == intops.compare(intops.SWAPPED[p], 8, b, a)
            assert intops.compare(p, 8, a, b) != intops.compare(intops.NEGATED[p], 8, a, b)


def test_casts_and_mulh() -> None:
    assert intops.cast("extsi", 0x80, 8, 16) == 0xFF80
    assert intops.cast("extui", 0x180, 8, 16) == 0x80
    assert intops.cast("trunci", 0x1234, 16, 8) == 0x34
    assert intops.to_signed(0xFFFF, 16) == -1
    # mulh(-1, -1) = 0; mulhu(0xffffffff, 0xffffffff) = 0xfffffffe; mulhsu(-1, 2) = -1
    assert intops.mulh(0xFFFFFFFF, 0xFFFFFFFF, 32, a_signed=True, b_signed=True) == 0
    assert intops.mulh(0xFFFFFFFF, 0xFFFFFFFF, 32, a_signed=False, b_signed=False) == 0xFFFFFFFE
    assert intops.mulh(0xFFFFFFFF, 2, 32, a_signed=True, b_signed=False) == 0xFFFFFFFF
