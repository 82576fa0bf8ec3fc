"""Spec language semantics: each construct lowered and executed on the golden interpreter,
checked against values computed by hand here."""

from __future__ import annotations

import pytest

from aquas.dialects import aquas as aq
from aquas.interpreter import IsaxState, Memory, find_extension
from aquas.spec.frontend import lower_spec

from helpers import run, s32, wrap_isax


def rd_of(body: str, rs1: int = 0, rs2: int = 0, decls: str = "") -> int:
    r = run(wrap_isax(body, decls=decls), rs1=rs1, rs2=rs2)
    assert r.rd is not None
    return r.rd


@pytest.mark.parametrize(
    ("expr", "rs1", "rs2", "want"),
    [
        ("rs1 + rs2", 0xFFFFFFFF, 2, 1),  # wraps
        ("rs1 - rs2", 1, 2, 0xFFFFFFFF),
        ("rs1 * rs2", 0x10000, 0x10000, 0),
        ("rs1 / rs2", 7, 2, 3),
        ("rs1 / rs2", 7, 0, 0xFFFFFFFF),  # RISC-V: x/0 = all ones
        ("rs1 % rs2", 7, 0, 7),  # x%0 = x
        ("((rs1 as i32) / (rs2 as i32)) as u32", (-7) & 0xFFFFFFFF, 2, (-3) & 0xFFFFFFFF),
        ("((rs1 as i32) % (rs2 as i32)) as u32", (-7) & 0xFFFFFFFF, 2, (-1) & 0xFFFFFFFF),
        ("((rs1 as i32) / (rs2 as i32)) as u32", 0x80000000, 0xFFFFFFFF, 0x80000000),
        ("((rs1 as i32) % (rs2 as i32)) as u32", 0x80000000, 0xFFFFFFFF, 0),
        ("rs1 >> rs2", 0x80000000, 31, 1),
        ("rs1 >> rs2", 0x80000000, 32, 0),  # shift out entirely
        ("((rs1 as i32) >> rs2) as u32", 0x80000000, 4, 0xF8000000),
        ("((rs1 as i32) >> rs2) as u32", 0x80000000, 100, 0xFFFFFFFF),
        ("rs1 << rs2", 3, 31, 0x80000000),
        ("rs1 << rs2", 3, 33, 0),
        ("rs1 & rs2 | 0xF0", 0xFF, 0x0F, 0xFF),
        ("rs1 ^ rs2", 0xFF00, 0x0FF0, 0xF0F0),
        ("~rs1", 0, 0, 0xFFFFFFFF),
        ("-rs1", 1, 0, 0xFFFFFFFF),
        ("(rs1 < rs2) ? 1 : 2", 0xFFFFFFFF, 1, 2),  # unsigned compare
        ("((rs1 as i32) < (rs2 as i32)) ? 1 : 2", 0xFFFFFFFF, 1, 1),  # signed compare
        ("select(rs1 == rs2, 10, 20)", 5, 5, 10),
        ("(rs1 != 0 && rs2 != 0) ? 1 : 0", 1, 0, 0),
        ("(rs1 != 0 || rs2 != 0) ? 1 : 0", 1, 0, 1),
        ("(!(rs1 == 0)) ? 1 : 0", 0, 0, 0),
        ("4 * 12 + rs1", 1, 0, 49),  # literal folding
        ("rs1 + 0xFFFF_FFFF", 1, 0, 0),
    ],
)
def test_operators(expr: str, rs1: int, rs2: int, want: int) -> None:
    assert rd_of(f"return {expr};", rs1, rs2) == want


def test_casts_slices_concat() -> None:
    body = """
    let b: u8 = trunc<u8>(rs1);
    let s: i32 = sext<i32>(b as i8);
    let z: u32 = zext<u32>(b);
    let hi: u4 = rs1[7:4];
    let bit: u1 = rs1[31];
    let c: u16 = {hi, bit, 0b101u3, b};
    return (s as u32) ^ z ^ zext<u32>(c) << 16;
    """
    for x in (0, 0x80, 0x7F, 0xDEADBEEF, 0x800000F3):
        b = x & 0xFF
        s = (b - 256 if b & 0x80 else b) & 0xFFFFFFFF
        c = ((x >> 4) & 0xF) << 12 | (x >> 31) << 11 | 0b101 << 8 | b
        assert rd_of(body, x) == s ^ b ^ (c << 16 & 0xFFFFFFFF)


def test_dynamic_bit_select() -> None:
    body = "return zext<u32>(rs1[rs2]);"
    for x, i in ((0b1010, 1), (0b1010, 2), (1 << 31, 31), (0xFFFFFFFF, 40)):
        want = (x >> i) & 1 if i < 32 else 0
        assert rd_of(body, x, i) == want


def test_wider_shift_amount_is_clamped() -> None:
    # shifting a u8 by a u32 amount >= 8 gives 0, even when the amount's low bits are small
    body = "let v: u8 = trunc<u8>(rs1); return zext<u32>(v << rs2);"
    assert rd_of(body, 0xFF, 1) == 0xFE
    assert rd_of(body, 0xFF, 256 + 1) == 0
    assert rd_of(body, 0xFF, 8) == 0


def test_loops_carry_mutable_locals() -> None:
    body = """
    var acc: u32 = 0;
    var odd: u32 = 0;
    for i in 0..10 {
        acc += i * rs1;
        if (i & 1) == 1 { odd += 1; }
    }
    for j: u8 in 2..20 step 3 { acc = acc + zext<u32>(j); }
    return acc + (odd << 16);
    """
    want = sum(range(10)) * 3 + sum(range(2, 20, 3)) + (5 << 16)
    assert rd_of(body, 3) == want


def test_nested_loops_with_unroll_directives_keep_semantics() -> None:
    body = """
    var s: u32 = 0;
    #[unroll(2)]
    for i in 0..3 {
        #[unroll]
        for j in 0..4 { s = s * 3 + i * 4 + j; }
    }
    return s;
    """
    want = 0
    for i in range(3):
        for j in range(4):
            want = (want * 3 + i * 4 + j) & 0xFFFFFFFF
    assert rd_of(body) == want


def test_if_else_chain_assigns() -> None:
    body = """
    var r: u32 = 0;
    if rs1 < 10 { r = 1; } else if rs1 < 20 { r = 2; } else { r = 3; }
    return r;
    """
    assert [rd_of(body, x) for x in (5, 15, 25)] == [1, 2, 3]


def test_memory_single_shot_and_burst() -> None:
    src = """
    scratchpad buf: [i16; 8] partition(cyclic, 2);
    #[opcode(custom1), funct7(3)]
    isax t(rs1, rs2) -> rd {
        burst buf[2 +: 4] <- mem[rs1];
        var s: i32 = 0;
        for i in 2..6 { s += sext<i32>(buf[i]); buf[i] = buf[i] * 2i16; }
        burst mem[rs2] <- buf[2 +: 4];
        mem<u8>[rs2 + 8] = 0xAB;
        let w: u64 = mem<u64>[rs1 + 8];
        return (s as u32) + trunc<u32>(w >> 32);
    }
    """
    mem = Memory()
    vals = [1, -2, 300, -32768]
    mem.write_words(0x100, 2, [v & 0xFFFF for v in vals])
    mem.write(0x108, 8, 0x0000_0007_0000_0001)
    r = run(src, rs1=0x100, rs2=0x200, mem=mem)
    assert s32(r.rd or 0) == sum(vals) + 7
    assert [s32(v << 16) >> 16 for v in mem.read_words(0x200, 2, 4)] == [
        ((v * 2 + 0x8000) & 0xFFFF) - 0x8000 for v in vals
    ]
    assert mem.read(0x208, 1) == 0xAB
    assert [(w.addr, w.size) for w in r.writes] == [
        (0x200, 2),
        (0x202, 2),
        (0x204, 2),
        (0x206, 2),
        (0x208, 1),
    ]
    assert r.state.spms["buf"][2:6] == [(v * 2) & 0xFFFF for v in vals]
    assert r.burst_beats == 8 and r.loads == 1


def test_state_persists_across_invocations() -> None:
    src = """
    state acc: i64 = -5;
    state count: u8;
    #[opcode(custom0), funct7(0)]
    isax acc_add(rs1) -> rd { acc = acc + sext<i64>(rs1 as i32); count += 1; return trunc<u32>(acc as u64); }
    #[opcode(custom0), funct7(1)]
    isax acc_get() -> rd { return zext<u32>(count); }
    """
    module = lower_spec(src, "t.isax")
    ext = find_extension(module)
    st = IsaxState.reset(ext)
    assert st.regs == {"acc": (-5) & (2**64 - 1), "count": 0}
    from aquas.interpreter import execute, find_isax

    add, get = find_isax(ext, "acc_add"), find_isax(ext, "acc_get")
    for x in (10, -3 & 0xFFFFFFFF, 1):
        st = execute(add, x, 0, None, st).state
    assert st.regs["acc"] == 3 and execute(get, 0, 0, None, st).rd == 3


def test_literal_typing_and_bit_patterns() -> None:
    assert rd_of("let x: i8 = 0xFF; return zext<u32>(x as u8);") == 0xFF
    assert rd_of("let x: i8 = -128; return sext<i32>(x) as u32;") == 0xFFFFFF80
    assert rd_of("let x = 7u8; return zext<u32>(x * 40);") == (7 * 40) & 0xFF


def test_ops_carry_spec_locations() -> None:
    module = lower_spec(wrap_isax("let a: u32 = rs1 + 1;\nreturn a;"), "loc.isax")
    adds = [o for o in module.walk() if o.name == "arith.addi"]
    assert len(adds) == 1
    from aquas.diagnostics import loc_of

    loc = loc_of(adds[0])
    assert loc is not None and (loc.filename, loc.line, loc.column) == ("loc.isax", 4, 14)


def test_encoding_and_uses_reach_the_dialect() -> None:
    src = """
    #[opcode(custom3), funct3(5), funct7(0x7f)]
    isax noreg() { }
    #[opcode(0b0101011), funct7(2)]
    isax onlyrs2(rs2) -> rd { return rs2; }
    """
    ext = find_extension(lower_spec(src, "e.isax"))
    a, b = list(ext.isaxs())
    assert (a.opcode_value, a.funct3_value, a.funct7_value, a.used) == (0b1111011, 5, 127, ())
    assert (b.opcode_value, b.funct3_value, b.funct7_value, b.used) == (
        0b0101011,
        0,
        2,
        ("rs2", "rd"),
    )
    assert [type(o) for o in b.body.block.ops] == [aq.ReadRs2Op, aq.WriteRdOp]


def test_literal_folding_is_exact_beyond_53_bits() -> None:
    body = "let x: u64 = 0xFFFF_FFFF_FFFF_FFFF / 3; let y: u64 = 0xFFFF_FFFF_FFFF_FFFF % 10; return trunc<u32>(x ^ y);"
    assert rd_of(body) == (0x5555_5555_5555_5555 ^ 5) & 0xFFFFFFFF
    assert (
        rd_of("let z: i32 = -7 / 2; let r: i32 = -7 % 2; return (z * 16i32 + r) as u32;")
        == (-3 * 16 - 1) & 0xFFFFFFFF
    )
