"""A small functional RV32IM instruction-set simulator for runtime-built programs.

Not cycle accurate and not a reference SoC: it exists so the runtime, the test programs
and their expected outputs can be checked without an HDL simulator (``aquas.sim`` is the
measuring instrument).  It models the platform's RAM and devices (console, exit, cycle
counter, region markers, from the target descriptor, :mod:`aquas.target`), ``rdcycle``/``rdcycleh``
(one "cycle" per retired instruction), the machine CSRs crt0 touches, and optionally custom
instructions through a callback.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aquas import intops
from aquas.target import Target, load_target

MASK = 0xFFFF_FFFF

#: custom(insn_word, rs1_value, rs2_value, iss) -> rd value (or None when rd is x0)
CustomHandler = Callable[[int, int, int, "Iss"], int | None]


class IssError(Exception):
    """Illegal instruction, bad memory access or a trap without a handler."""


@dataclass
class IssResult:
    output: str
    exit_code: int | None
    instructions: int
    regions: dict[int, int] = field(default_factory=dict)
    timed_out: bool = False


_sx = intops.to_signed


def _alu(name: str, *, shift: bool = False) -> Callable[[int, int], int]:
    fn = intops.BINARY[name].fn
    if shift:  # RV32 shifts use the low 5 bits of the amount
        return lambda a, b: fn(a, b & 31, 32)
    return lambda a, b: fn(a, b, 32)


def _cmp(pred: str) -> Callable[[int, int], int]:
    return lambda a, b: int(intops.compare(pred, 32, a, b))


def _mulh(a_signed: bool, b_signed: bool) -> Callable[[int, int], int]:
    return lambda a, b: intops.mulh(a, b, 32, a_signed=a_signed, b_signed=b_signed)


#: OP / OP-IMM by (funct7, funct3); OP-IMM uses funct7 only for the shifts (0 elsewhere).
_OP: dict[tuple[int, int], Callable[[int, int], int]] = {
    (0x00, 0): _alu("add"),
    (0x00, 1): _alu("shl", shift=True),
    (0x00, 2): _cmp("slt"),
    (0x00, 3): _cmp("ult"),
    (0x00, 4): _alu("xor"),
    (0x00, 5): _alu("shru", shift=True),
    (0x00, 6): _alu("or"),
    (0x00, 7): _alu("and"),
    (0x20, 0): _alu("sub"),
    (0x20, 5): _alu("shrs", shift=True),
    (0x01, 0): _alu("mul"),
    (0x01, 1): _mulh(True, True),
    (0x01, 2): _mulh(True, False),
    (0x01, 3): _mulh(False, False),
    (0x01, 4): _alu("divs"),
    (0x01, 5): _alu("divu"),
    (0x01, 6): _alu("rems"),
    (0x01, 7): _alu("remu"),
}
#: BRANCH predicates by funct3 (2 and 3 are illegal).
_BRANCH: dict[int, str] = {0: "eq", 1: "ne", 4: "slt", 5: "sge", 6: "ult", 7: "uge"}


def load_elf_segments(elf: Path) -> tuple[int, list[tuple[int, bytes, int]]]:
    """(entry, [(paddr, file bytes, memsz)]) of an ELF32 little-endian executable."""
    data = Path(elf).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise IssError(f"{elf}: not an ELF32 little-endian file")
    (entry, phoff) = struct.unpack_from("<II", data, 24)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    segs = []
    for i in range(phnum):
        p_type, p_offset, _vaddr, p_paddr, p_filesz, p_memsz, _flags, _align = struct.unpack_from(
            "<8I", data, phoff + i * phentsize
        )
        if p_type == 1:  # PT_LOAD
            segs.append((p_paddr, data[p_offset : p_offset + p_filesz], p_memsz))
    return entry, segs


class Iss:
    def __init__(self, platform: str | Target = "vexriscv", custom: CustomHandler | None = None):
        self.p = load_target(soc=platform) if isinstance(platform, str) else platform
        self.ram = bytearray(self.p.ram_size)
        self.base = self.p.ram_base
        self.x = [0] * 32
        self.pc = self.base
        self.custom = custom
        self.out = bytearray()
        self.exit_code: int | None = None
        self.count = 0
        self.csr: dict[int, int] = {}
        self.region_open: dict[int, int] = {}
        self.regions: dict[int, int] = {}
        # when set, the number of times each pc executes (aquas.model.sites turns it on
        # inside offload sites, to price the instructions around the ISAX calls)
        self.profile: Counter[int] | None = None

    # ---- memory ------------------------------------------------------------------------
    def load_elf(self, elf: Path) -> None:
        entry, segs = load_elf_segments(elf)
        for addr, blob, _memsz in segs:
            off = addr - self.base
            if off < 0 or off + len(blob) > len(self.ram):
                raise IssError(f"segment at {addr:#x} outside RAM")
            self.ram[off : off + len(blob)] = blob
        self.pc = entry

    def read(self, addr: int, size: int) -> int:
        off = addr - self.base
        if off >= 0 and off + size <= len(self.ram):
            if addr % size:
                raise IssError(f"misaligned {size}-byte load at {addr:#010x} (pc {self.pc:#x})")
            return int.from_bytes(self.ram[off : off + size], "little")
        p = self.p
        if size == 4 and addr == p.devices.cycle_lo:
            return self.count & MASK
        if size == 4 and addr == p.devices.cycle_hi:
            return (self.count >> 32) & MASK
        if addr & 0x8000_0000:
            return 0  # other I/O reads as zero
        raise IssError(f"load from unmapped address {addr:#010x} (pc {self.pc:#x})")

    def write(self, addr: int, size: int, value: int) -> None:
        off = addr - self.base
        if off >= 0 and off + size <= len(self.ram):
            if addr % size:
                raise IssError(f"misaligned {size}-byte store at {addr:#010x} (pc {self.pc:#x})")
            self.ram[off : off + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
            return
        p = self.p
        if addr == p.devices.console:
            self.out.append(value & 0xFF)
        elif addr == p.devices.exit:
            self.exit_code = value & MASK
        elif addr == p.devices.region_begin:
            self.region_open[value & MASK] = self.count
        elif addr == p.devices.region_end:
            rid = value & MASK
            start = self.region_open.pop(rid, None)
            if start is not None:
                self.regions[rid] = self.regions.get(rid, 0) + self.count - start
        elif addr & 0x8000_0000:
            pass
        else:
            raise IssError(f"store to unmapped address {addr:#010x} (pc {self.pc:#x})")

    # ---- execution ---------------------------------------------------------------------
    def _trap(self, cause: int, tval: int) -> None:
        mtvec = self.csr.get(0x305)
        if mtvec is None:
            raise IssError(f"trap cause {cause} at pc {self.pc:#x} (tval {tval:#x}), no mtvec")
        self.csr[0x342] = cause
        self.csr[0x341] = self.pc
        self.csr[0x343] = tval & MASK
        self.pc = mtvec & ~3

    def _csr(self, num: int, funct3: int, src: int) -> int:
        if num in (0xC00, 0xB00, 0xC02, 0xB02):
            old = self.count & MASK
        elif num in (0xC80, 0xB80, 0xC82, 0xB82):
            old = (self.count >> 32) & MASK
        else:
            old = self.csr.get(num, 0)
        op = funct3 & 3
        new = src if op == 1 else old | src if op == 2 else old & ~src
        if op == 1 or src != 0:
            self.csr[num] = new & MASK
        return old

    def run(self, max_instructions: int = 10_000_000) -> IssResult:
        x = self.x
        rd_ = self.read
        wr = self.write
        limit = self.count + max_instructions
        while self.exit_code is None:
            if self.count >= limit:
                return IssResult(self.out.decode("latin-1"), None, self.count, self.regions, True)
            pc = self.pc
            insn = self.read(pc, 4) if pc % 4 == 0 else None
            if insn is None:
                raise IssError(f"misaligned pc {pc:#x}")
            self.count += 1
            if self.profile is not None:
                self.profile[pc] += 1
            opc = insn & 0x7F
            rd = (insn >> 7) & 31
            f3 = (insn >> 12) & 7
            rs1 = (insn >> 15) & 31
            rs2 = (insn >> 20) & 31
            f7 = insn >> 25
            a = x[rs1]
            b = x[rs2]
            npc = pc + 4
            val: int | None = None
            if opc == 0x33:
                fn = _OP.get((f7, f3))
                if fn is None:
                    self._illegal(insn)
                    continue
                val = fn(a, b)
            elif opc == 0x13:
                # the shifts take funct7 and their amount from the immediate field
                shift = f3 in (1, 5)
                fn = _OP.get((f7, f3) if shift else (0, f3))
                if fn is None or (shift and f7 == 1):  # funct7 1 is M, not OP-IMM
                    self._illegal(insn)
                    continue
                val = fn(a, rs2 if shift else _sx(insn >> 20, 12) & MASK)
            elif opc == 0x03:
                addr = (a + _sx(insn >> 20, 12)) & MASK
                if f3 == 0:
                    val = intops.sext(rd_(addr, 1), 8, 32)
                elif f3 == 1:
                    val = intops.sext(rd_(addr, 2), 16, 32)
                elif f3 == 2:
                    val = rd_(addr, 4)
                elif f3 == 4:
                    val = rd_(addr, 1)
                elif f3 == 5:
                    val = rd_(addr, 2)
                else:
                    self._illegal(insn)
                    continue
            elif opc == 0x23:
                imm = _sx(((insn >> 25) << 5) | ((insn >> 7) & 31), 12)
                addr = (a + imm) & MASK
                if f3 > 2:
                    self._illegal(insn)
                    continue
                wr(addr, 1 << f3, b)
                rd = 0
            elif opc == 0x63:
                imm = _sx(
                    ((insn >> 31) << 12)
                    | (((insn >> 7) & 1) << 11)
                    | (((insn >> 25) & 0x3F) << 5)
                    | (((insn >> 8) & 0xF) << 1),
                    13,
                )
                pred = _BRANCH.get(f3)
                if pred is None:
                    self._illegal(insn)
                    continue
                if intops.compare(pred, 32, a, b):
                    npc = (pc + imm) & MASK
                rd = 0
            elif opc == 0x37:
                val = insn & 0xFFFFF000
            elif opc == 0x17:
                val = pc + (insn & 0xFFFFF000)
            elif opc == 0x6F:
                imm = _sx(
                    ((insn >> 31) << 20)
                    | (((insn >> 12) & 0xFF) << 12)
                    | (((insn >> 20) & 1) << 11)
                    | (((insn >> 21) & 0x3FF) << 1),
                    21,
                )
                val = pc + 4
                npc = (pc + imm) & MASK
            elif opc == 0x67 and f3 == 0:
                val = pc + 4
                npc = (a + _sx(insn >> 20, 12)) & ~1 & MASK
            elif opc == 0x0F:
                rd = 0  # fence, fence.i, VexRiscv D-cache flush: no effect here
            elif opc == 0x73:
                if f3 == 0:
                    if insn == 0x30200073:  # mret
                        npc = self.csr.get(0x341, 0)
                        rd = 0
                    else:  # ecall / ebreak
                        self._trap(11 if insn == 0x73 else 3, 0)
                        continue
                else:
                    src = rs1 if f3 & 4 else a
                    val = self._csr(insn >> 20, f3, src)
            elif opc in (0x0B, 0x2B, 0x5B, 0x7B) and self.custom is not None:
                val = self.custom(insn, a, b, self)
            else:
                self._illegal(insn)
                continue
            if rd and val is not None:
                x[rd] = val & MASK
            self.pc = npc
        return IssResult(self.out.decode("latin-1"), self.exit_code, self.count, self.regions)

    def _illegal(self, insn: int) -> None:
        self._trap(2, insn)


def run_elf(
    elf: Path,
    platform: str = "vexriscv",
    *,
    max_instructions: int = 10_000_000,
    custom: CustomHandler | None = None,
) -> IssResult:
    iss = Iss(platform, custom)
    iss.load_elf(elf)
    return iss.run(max_instructions)


def golden_isax_handler(ext: object) -> CustomHandler:
    """A custom-instruction handler executing the ISAXs of ``ext`` (an ``aquas.extension``)
    on the golden interpreter, against the ISS's memory, with persistent ISAX state.
    Unknown encodings return 0, like the canonical ISAX unit (docs/isax-port.md)."""
    from aquas.dialects import aquas as aq
    from aquas.interpreter import IsaxState, Memory, execute

    assert isinstance(ext, aq.ExtensionOp)
    table = {(i.opcode_value, i.funct3_value, i.funct7_value): i for i in ext.isaxs()}
    state = [IsaxState.reset(ext)]

    class _IssMemory(Memory):
        def __init__(self, iss: Iss):
            super().__init__()
            self.iss = iss

        def read(self, addr: int, size: int) -> int:
            if size == 8:
                return self.iss.read(addr, 4) | (self.iss.read(addr + 4, 4) << 32)
            return self.iss.read(addr, size)

        def write(self, addr: int, size: int, value: int) -> None:
            if size == 8:
                self.iss.write(addr, 4, value & MASK)
                self.iss.write(addr + 4, 4, value >> 32)
            else:
                self.iss.write(addr, size, value)

    def handler(insn: int, rs1: int, rs2: int, iss: Iss) -> int | None:
        key = (insn & 0x7F, (insn >> 12) & 7, insn >> 25)
        isax = table.get(key)
        if isax is None:
            return 0
        res = execute(isax, rs1, rs2, _IssMemory(iss), state[0])
        state[0] = res.state
        return res.rd

    return handler
