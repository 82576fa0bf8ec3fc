#!/usr/bin/env python3
"""Generates ``rv32im_tests.S``: a self-checking RV32IM instruction test.

Every expected value is computed here, in Python, from the RISC-V specification's
definition of the instruction (the small functions below) -- never from a simulator run.
Each check loads its test number into t6 (x31) and branches to ``fail`` on a mismatch;
``fail`` prints ``FAIL <n>`` and exits with status 1; reaching the end prints ``PASS`` and
exits with 0.  sp and gp are never written (the runtime's printf may use them).

Run ``python gen_rv32im_tests.py`` to regenerate (tests check the committed file is current).
"""

from __future__ import annotations

import sys
from pathlib import Path

M = 0xFFFF_FFFF
MIN = 0x8000_0000


def u(v: int) -> int:
    return v & M


def s(v: int) -> int:
    v &= M
    return v - (1 << 32) if v & MIN else v


def trunc_div(a: int, b: int) -> int:  # rounds toward zero (C semantics)
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# ---- instruction semantics (RISC-V unprivileged spec, RV32I + M) ---------------------
RR = {
    "add": lambda a, b: u(a + b),
    "sub": lambda a, b: u(a - b),
    "sll": lambda a, b: u(a << (b & 31)),
    "slt": lambda a, b: int(s(a) < s(b)),
    "sltu": lambda a, b: int(u(a) < u(b)),
    "xor": lambda a, b: u(a ^ b),
    "srl": lambda a, b: u(a) >> (b & 31),
    "sra": lambda a, b: u(s(a) >> (b & 31)),
    "or": lambda a, b: u(a | b),
    "and": lambda a, b: u(a & b),
    "mul": lambda a, b: u(a * b),
    "mulh": lambda a, b: u((s(a) * s(b)) >> 32),
    "mulhsu": lambda a, b: u((s(a) * u(b)) >> 32),
    "mulhu": lambda a, b: u((u(a) * u(b)) >> 32),
    "div": lambda a, b: (
        M if u(b) == 0 else (MIN if (u(a), u(b)) == (MIN, M) else u(trunc_div(s(a), s(b))))
    ),
    "divu": lambda a, b: M if u(b) == 0 else u(a) // u(b),
    "rem": lambda a, b: (
        u(a)
        if u(b) == 0
        else (0 if (u(a), u(b)) == (MIN, M) else u(s(a) - trunc_div(s(a), s(b)) * s(b)))
    ),
    "remu": lambda a, b: u(a) if u(b) == 0 else u(a) % u(b),
}
RI = {
    "addi": lambda a, i: u(a + i),
    "slti": lambda a, i: int(s(a) < i),
    "sltiu": lambda a, i: int(
        u(a) < u(i)
    ),  # the immediate is sign-extended, then compared unsigned
    "xori": lambda a, i: u(a ^ i),
    "ori": lambda a, i: u(a | i),
    "andi": lambda a, i: u(a & i),
}
SHI = {
    "slli": lambda a, sh: u(a << sh),
    "srli": lambda a, sh: u(a) >> sh,
    "srai": lambda a, sh: u(s(a) >> sh),
}
BR = {
    "beq": lambda a, b: u(a) == u(b),
    "bne": lambda a, b: u(a) != u(b),
    "blt": lambda a, b: s(a) < s(b),
    "bge": lambda a, b: s(a) >= s(b),
    "bltu": lambda a, b: u(a) < u(b),
    "bgeu": lambda a, b: u(a) >= u(b),
}

VALUES = [0, 1, M, 0x7FFF_FFFF, MIN, 0x1234_5678, 0xFEDC_BA97, 0x0000_0003, 0xFFFF_FFFD]
SHIFT_AMOUNTS = [0, 1, 4, 31, 32, 33, 0xFFFF_FFE1]
IMMS = [0, 1, -1, 2047, -2048, 0x555, -0x556]
DIV_EXTRA = [
    (MIN, M),
    (MIN, 1),
    (7, 0),
    (u(-7), 0),
    (0, 0),
    (MIN, 0),
    (7, 2),
    (u(-7), 2),
    (7, u(-2)),
    (u(-7), u(-2)),
    (100, 7),
    (u(-100), 7),
    (M, M),
    (MIN, 2),
]
MUL_EXTRA = [
    (MIN, MIN),
    (M, M),
    (MIN, M),
    (0x7FFF_FFFF, 0x7FFF_FFFF),
    (0x0001_0000, 0x0001_0000),
    (u(-2), 3),
    (3, u(-2)),
]


class Gen:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0
        self.sections: list[tuple[str, int]] = []
        self.labels = 0

    def emit(self, *ls: str) -> None:
        self.lines.extend(ls)

    def section(self, name: str) -> None:
        self.sections.append((name, self.n + 1))
        self.emit("", f"    /* ==== {name} (from test {self.n + 1}) ==== */")

    def num(self) -> int:
        self.n += 1
        self.emit(f"    li t6, {self.n}")
        return self.n

    def label(self) -> str:
        self.labels += 1
        return f".Ll{self.labels}"

    def check(self, reg: str, value: int) -> None:
        """Compare reg with value (uses t5) and fail with the current test number."""
        self.emit(f"    li t5, 0x{u(value):08x}", f"    bne {reg}, t5, fail")

    def li(self, reg: str, value: int) -> None:
        self.emit(f"    li {reg}, 0x{u(value):08x}")


def gen() -> str:
    g = Gen()

    # ---- register-register ALU and M extension --------------------------------------
    for op in ("add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and"):
        g.section(op.upper())
        bs = SHIFT_AMOUNTS if op in ("sll", "srl", "sra") else VALUES
        for a in VALUES:
            for b in bs:
                g.num()
                g.li("a0", a)
                g.li("a1", b)
                g.emit(f"    {op} a2, a0, a1")
                g.check("a2", RR[op](a, b))
    for op in ("mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu"):
        g.section(op.upper())
        pairs = [(a, b) for a in VALUES for b in VALUES]
        pairs += DIV_EXTRA if op.startswith(("div", "rem")) else MUL_EXTRA
        for a, b in pairs:
            g.num()
            g.li("a0", a)
            g.li("a1", b)
            g.emit(f"    {op} a2, a0, a1")
            g.check("a2", RR[op](a, b))

    # rd == rs1 == rs2, and writes to x0
    g.section("register aliasing and x0")
    for op in ("add", "sub", "xor", "mul", "sltu", "divu"):
        g.num()
        g.li("a3", 0x1357_9BDF)
        g.emit(f"    {op} a3, a3, a3")
        g.check("a3", RR[op](0x1357_9BDF, 0x1357_9BDF))
    g.num()
    g.emit(
        "    li a0, 5",
        "    addi x0, a0, 7",
        "    add x0, a0, a0",
        "    lui x0, 0x12345",
        "    mv a1, x0",
    )
    g.check("a1", 0)
    g.num()
    g.emit("    addi a0, x0, -1", "    sub a1, x0, a0")
    g.check("a1", 1)

    # ---- register-immediate ---------------------------------------------------------
    for op in ("addi", "slti", "sltiu", "xori", "ori", "andi"):
        g.section(op.upper())
        for a in VALUES:
            for i in IMMS:
                g.num()
                g.li("a0", a)
                g.emit(f"    {op} a2, a0, {i}")
                g.check("a2", RI[op](a, i))
    for op in ("slli", "srli", "srai"):
        g.section(op.upper())
        for a in VALUES:
            for sh in (0, 1, 7, 16, 31):
                g.num()
                g.li("a0", a)
                g.emit(f"    {op} a2, a0, {sh}")
                g.check("a2", SHI[op](a, sh))

    # ---- LUI / AUIPC ------------------------------------------------------------------
    g.section("LUI")
    for imm in (0, 1, 0x12345, 0x80000, 0xFFFFF, 0x7FFFF):
        g.num()
        g.emit(f"    lui a0, 0x{imm:x}")
        g.check("a0", imm << 12)
    g.num()
    g.emit("    lui a0, 0x12345", "    addi a0, a0, 0x678")
    g.check("a0", 0x1234_5678)
    g.section("AUIPC")
    for imm in (0, 1, 0x12345, 0xFFFFF, 0x80000):
        g.num()
        lab = g.label()
        # a1 = address of the auipc, via a jal (independent of auipc)
        g.emit(
            f"    jal a1, {lab}",
            f"{lab}:",
            f"    auipc a0, 0x{imm:x}",
            f"    li t4, 0x{u(imm << 12):08x}",
            "    add a1, a1, t4",
            "    bne a0, a1, fail",
        )

    # ---- jumps ------------------------------------------------------------------------
    g.section("JAL")
    g.num()
    l1, l2 = g.label(), g.label()
    g.emit(
        f"    jal a0, {l1}",
        f"{l2}:",
        "    j fail",
        f"{l1}:",
        f"    la a1, {l2}",
        "    bne a0, a1, fail",
    )
    g.num()  # backward jal
    l1, l2, l3 = g.label(), g.label(), g.label()
    g.emit(
        f"    j {l2}",
        f"{l1}:",
        f"    j {l3}",
        f"{l2}:",
        "    li a0, 0",
        f"    jal x0, {l1}",
        "    j fail",
        f"{l3}:",
    )
    g.num()  # jal x0 writes nothing
    l1 = g.label()
    g.emit(
        "    li a0, 0",
        f"    jal x0, {l1}",
        "    j fail",
        f"{l1}:",
        "    mv a0, x0",
        "    bnez a0, fail",
    )

    g.section("JALR")
    g.num()
    l1, l2 = g.label(), g.label()
    g.emit(
        f"    la a1, {l1}",
        "    jalr a0, 0(a1)",
        f"{l2}:",
        "    j fail",
        f"{l1}:",
        f"    la a2, {l2}",
        "    bne a0, a2, fail",
    )
    g.num()  # positive offset
    l1 = g.label()
    g.emit(f"    la a1, {l1} - 12", "    jalr a0, 12(a1)", "    j fail", f"{l1}:")
    g.num()  # negative offset
    l1 = g.label()
    g.emit(f"    la a1, {l1} + 16", "    jalr a0, -16(a1)", "    j fail", f"{l1}:")
    g.num()  # bit 0 of the target is cleared
    l1 = g.label()
    g.emit(f"    la a1, {l1}", "    addi a1, a1, 1", "    jalr x0, 0(a1)", "    j fail", f"{l1}:")
    g.num()  # rd == rs1: the target uses the old value
    l1, l2 = g.label(), g.label()
    g.emit(
        f"    la a1, {l1}",
        "    jalr a1, 0(a1)",
        f"{l2}:",
        "    j fail",
        f"{l1}:",
        f"    la a2, {l2}",
        "    bne a1, a2, fail",
    )
    g.num()  # call/return through a function
    g.emit("    li a0, 41", "    call .Lfunc_inc", "    li t5, 42", "    bne a0, t5, fail")

    # ---- branches ---------------------------------------------------------------------
    bvals = [0, 1, M, 0x7FFF_FFFF, MIN, 0x1234_5678, 0xFEDC_BA97]
    for op in ("beq", "bne", "blt", "bge", "bltu", "bgeu"):
        g.section(op.upper())
        for a in bvals:
            for b in bvals:
                g.num()
                g.li("a0", a)
                g.li("a1", b)
                if BR[op](a, b):
                    lab = g.label()
                    g.emit(f"    {op} a0, a1, {lab}", "    j fail", f"{lab}:")
                else:
                    g.emit(f"    {op} a0, a1, fail")
        g.num()  # backward taken branch: count a loop of 5 iterations
        lab = g.label()
        if op in ("beq",):
            g.emit(
                "    li a0, 0",
                "    li a1, 5",
                "    li a2, 0",
                f"{lab}:",
                "    addi a0, a0, 1",
                "    addi a2, a2, 3",
                "    slt a3, a0, a1",
                "    li a4, 1",
                f"    {op} a3, a4, {lab}",
            )
        elif op == "bne" or op in ("blt", "bltu"):
            g.emit(
                "    li a0, 0",
                "    li a1, 5",
                "    li a2, 0",
                f"{lab}:",
                "    addi a0, a0, 1",
                "    addi a2, a2, 3",
                f"    {op} a0, a1, {lab}",
            )
        else:  # bge, bgeu: loop while a1 >= a0
            g.emit(
                "    li a0, 0",
                "    li a1, 4",
                "    li a2, 0",
                f"{lab}:",
                "    addi a0, a0, 1",
                "    addi a2, a2, 3",
                f"    {op} a1, a0, {lab}",
            )
        g.check("a2", 15)

    # ---- loads ------------------------------------------------------------------------
    data = bytes(
        [
            0x01,
            0x7F,
            0x80,
            0xFF,
            0x00,
            0x80,
            0xFF,
            0x7F,
            0x34,
            0x12,
            0x78,
            0x56,
            0xEF,
            0xBE,
            0xAD,
            0xDE,
        ]
    )

    def ld(width: int, off: int, signed: bool) -> int:
        v = int.from_bytes(data[off : off + width], "little")
        if signed and v >> (8 * width - 1):
            v -= 1 << (8 * width)
        return u(v)

    g.section("loads LB LBU LH LHU LW")
    for base_off in (0, 8):  # base register at tdata + base_off: positive and negative offsets
        for width, ops in ((1, ("lb", "lbu")), (2, ("lh", "lhu")), (4, ("lw",))):
            for off in range(0, 16, width):
                for op in ops:
                    g.num()
                    g.emit(f"    la a0, tdata + {base_off}", f"    {op} a1, {off - base_off}(a0)")
                    g.check("a1", ld(width, off, op in ("lb", "lh")))

    # ---- stores -----------------------------------------------------------------------
    g.section("stores SB SH SW")
    fill = 0xA5A5_A5A5
    src = 0x8765_4321
    for width, op in ((1, "sb"), (2, "sh"), (4, "sw")):
        for off in range(0, 8, width):
            g.num()
            g.emit("    la a0, scratch")
            g.li("a1", fill)
            g.emit("    sw a1, 0(a0)", "    sw a1, 4(a0)", "    sw a1, 8(a0)")
            g.li("a2", src)
            g.emit(
                f"    {op} a2, {off}(a0)",
                "    lw a3, 0(a0)",
                "    lw a4, 4(a0)",
                "    lw a5, 8(a0)",
            )
            mem = bytearray(fill.to_bytes(4, "little") * 3)
            mem[off : off + width] = (src & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
            g.check("a3", int.from_bytes(mem[0:4], "little"))
            g.check("a4", int.from_bytes(mem[4:8], "little"))
            g.check("a5", int.from_bytes(mem[8:12], "little"))
    # negative store offsets, sub-word reads of a stored word
    g.num()
    g.emit("    la a0, scratch + 16")
    g.li("a1", 0xC3B2_A190)
    g.emit(
        "    sw a1, -16(a0)",
        "    lb a2, -16(a0)",
        "    lb a3, -15(a0)",
        "    lbu a4, -14(a0)",
        "    lh a5, -14(a0)",
    )
    g.check("a2", u(-0x70))
    g.check("a3", u(-0x5F))
    g.check("a4", 0xB2)
    g.check("a5", u(0xC3B2 - 0x10000))
    # largest immediate offsets: +2047 (byte), +2044 (word) and -2048
    g.num()
    g.emit("    la a0, scratch + 4096")
    g.li("a1", 0x0BAD_F00D)
    g.li("a2", 0x5A)
    g.li("a3", 0x1357_2468)
    g.emit(
        "    sw a1, 2044(a0)",
        "    sb a2, 2047(a0)",
        "    sw a3, -2048(a0)",
        "    la a4, scratch + 4096 + 2044",
        "    lw a5, 0(a4)",
        "    lbu a6, 3(a4)",
        "    la a4, scratch + 2048",
        "    lw a7, 0(a4)",
        "    lw t0, -2048(a0)",
        "    lbu t1, 2047(a0)",
    )
    g.check("a5", 0x5AAD_F00D)
    g.check("a6", 0x5A)
    g.check("a7", 0x1357_2468)
    g.check("t0", 0x1357_2468)
    g.check("t1", 0x5A)

    # ---- FENCE ----------------------------------------------------------------------------
    g.section("FENCE")
    g.num()
    g.emit(
        "    la a0, scratch",
        "    li a1, 0x600df00d",
        "    sw a1, 0(a0)",
        "    fence",
        "    lw a2, 0(a0)",
        "    fence rw, rw",
        "    fence w, r",
        "    fence iorw, iorw",
    )
    g.check("a2", 0x600D_F00D)

    # ---- hazards / forwarding -----------------------------------------------------------
    g.section("hazards: dependent ALU chains (distance 1, 2, 3)")
    g.num()  # each result used by the very next instruction
    g.emit(
        "    li a0, 3",
        "    addi a0, a0, 4",
        "    slli a0, a0, 3",
        "    sub a0, a0, a0",
        "    addi a0, a0, -9",
        "    xori a0, a0, 0x0f0",
        "    srai a0, a0, 2",
        "    and a0, a0, a0",
        "    or a0, a0, x0",
    )
    v = 3
    v = u(v + 4)
    v = u(v << 3)
    v = 0
    v = u(v - 9)
    v = u(v ^ 0xF0)
    v = u(s(v) >> 2)
    g.check("a0", v)
    g.num()  # producer at distance 1, 2 and 3 of its consumers
    g.emit(
        "    li a0, 100",
        "    li a1, 7",
        "    add a2, a0, a1",
        "    sub a3, a2, a1",
        "    mul a4, a2, a3",
        "    add a5, a2, a3",
        "    add a6, a4, a5",
        "    xor a7, a4, a2",
    )
    a2 = 107
    a3 = 100
    a4 = u(a2 * a3)
    a5 = a2 + a3
    g.check("a6", u(a4 + a5))
    g.check("a7", u(a4 ^ a2))
    g.num()  # both operands produced by the previous two instructions
    g.emit(
        "    li a0, 0x12345",
        "    li a1, 0x6789",
        "    add a2, a0, a1",
        "    sub a3, a0, a1",
        "    mul a4, a2, a3",
    )
    g.check("a4", u((0x12345 + 0x6789) * (0x12345 - 0x6789)))
    g.num()  # M results consumed immediately
    g.emit(
        "    li a0, -1000",
        "    li a1, 7",
        "    div a2, a0, a1",
        "    rem a3, a0, a1",
        "    mul a4, a2, a1",
        "    add a4, a4, a3",
        "    mulh a5, a0, a0",
        "    divu a6, a0, a1",
        "    remu a7, a6, a1",
        "    add a7, a7, a5",
    )
    g.check("a2", u(trunc_div(-1000, 7)))
    g.check("a3", u(-1000 - trunc_div(-1000, 7) * 7))
    g.check("a4", u(-1000))
    du = u(-1000) // 7
    g.check("a6", du)
    g.check("a7", u(du % 7 + ((-1000 * -1000) >> 32)))

    g.section("hazards: load-use")
    g.num()
    g.emit(
        "    la a0, tdata",
        "    lw a1, 8(a0)",
        "    addi a2, a1, 1",
        "    lbu a3, 9(a0)",
        "    add a3, a3, a3",
        "    lh a4, 2(a0)",
        "    mul a4, a4, a4",
    )
    g.check("a2", 0x5678_1235)
    g.check("a3", 0x24)
    g.check("a4", u(s(0xFFFF_FF80) * s(0xFFFF_FF80)))
    g.num()  # pointer chasing: a loaded value is the very next load's address
    g.emit("    la a0, tptr", "    lw a1, 0(a0)", "    lw a2, 4(a1)", "    lw a3, 0(a2)")
    g.check("a3", 0x5678_1234)
    g.num()  # loaded value is the next store's data and address base
    g.emit(
        "    la a0, tptr",
        "    la a5, scratch",
        "    lw a1, 8(a0)",
        "    sw a1, 0(a5)",
        "    lw a2, 12(a0)",
        "    sw a1, 4(a2)",
        "    lw a3, 0(a5)",
        "    lw a4, 4(a5)",
    )
    g.check("a3", 0xDEAD_BEEF)
    g.check("a4", 0xDEAD_BEEF)
    g.num()  # loaded value decides the very next branch
    lab = g.label()
    g.emit(
        "    la a0, tdata",
        "    lw a1, 12(a0)",
        "    li a2, 0xdeadbeef",
        f"    beq a1, a2, {lab}",
        "    j fail",
        f"{lab}:",
        "    lbu a3, 0(a0)",
        "    bnez a3, 1f",
        "    j fail",
        "1:",
        "    lb a4, 3(a0)",
        "    bgez a4, fail",
    )
    g.num()  # loaded value is the next jalr's target
    lab = g.label()
    g.emit("    la a0, tjump", "    lw a1, 0(a0)", "    jalr ra, 0(a1)", "    j fail", f"{lab}:")
    g.emit(
        "    .pushsection .data", "    .balign 4", "tjump:", f"    .word {lab}", "    .popsection"
    )
    g.num()  # store then immediately load the same address at every width
    g.emit(
        "    la a0, scratch",
        "    li a1, 0x11223344",
        "    sw a1, 4(a0)",
        "    li a1, 0x8090a0b0",
        "    sw a1, 0(a0)",
        "    lw a2, 0(a0)",
        "    sh a2, 4(a0)",
        "    lhu a3, 4(a0)",
        "    sb a3, 6(a0)",
        "    lb a4, 6(a0)",
        "    lhu a5, 6(a0)",
        "    lh a6, 4(a0)",
        "    lw a7, 4(a0)",
    )
    g.check("a2", 0x8090_A0B0)
    g.check("a3", 0xA0B0)
    g.check("a4", u(-0x50))
    g.check("a5", 0x11B0)
    g.check("a6", u(0xA0B0 - 0x10000))
    g.check("a7", 0x11B0_A0B0)
    return render(g)


def render(g: Gen) -> str:
    head = [
        "/* rv32im_tests.S -- self-checking RV32I + M instruction test.",
        " * GENERATED by gen_rv32im_tests.py (expected values computed in Python from the",
        " * RISC-V spec): do not edit; regenerate instead.",
        " *",
        " * t6 holds the current test number; a mismatch branches to `fail`, which prints",
        ' * "FAIL <n>" and exits with status 1.  Success prints "PASS" and exits 0.',
        " * sp and gp are never written (printf may use them).",
        f" * {g.n} checks:",
    ]
    for name, first in g.sections:
        head.append(f" *   {first:5d}  {name}")
    head += [
        " */",
        "",
        '    .section .text.main, "ax", @progbits',
        "    .globl main",
        "    .type main, @function",
        "    .balign 4",
        "main:",
    ]
    tail = [
        "",
        "    /* all checks passed */",
        "    la a0, msg_pass",
        "    call puts",
        "    li a0, 0",
        "    tail exit",
        "",
        "fail:",
        "    mv s1, t6",
        "    la a0, msg_fail",
        "    mv a1, s1",
        "    call printf",
        "    li a0, 1",
        "    tail exit",
        "",
        ".Lfunc_inc:",
        "    addi a0, a0, 1",
        "    ret",
        "    .size main, . - main",
        "",
        "    .section .rodata",
        'msg_pass: .asciz "PASS"',
        'msg_fail: .asciz "FAIL %d\\n"',
        "",
        "    .data",
        "    .balign 4",
        "tdata:",
        "    .byte 0x01, 0x7f, 0x80, 0xff, 0x00, 0x80, 0xff, 0x7f",
        "    .byte 0x34, 0x12, 0x78, 0x56, 0xef, 0xbe, 0xad, 0xde",
        "tptr:",
        "    .word tptr_a, 0, 0xdeadbeef, scratch",
        "tptr_a:",
        "    .word 0, tdata + 8",
        "",
        "    .bss",
        "    .balign 4",
        "scratch:",
        "    .space 8192",
        "",
    ]
    return "\n".join(head + g.lines + tail)


OUT = Path(__file__).resolve().parents[3] / "build" / "generated" / "rv32im_tests.S"


def ensure_suite(path: Path = OUT) -> Path:
    """Writes the generated suite to ``path`` (under the ignored build/ directory) when it
    is missing or stale, and returns the path. The suite is generated, never committed."""
    text = gen()
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


if __name__ == "__main__":
    print(f"wrote {ensure_suite(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)}")
