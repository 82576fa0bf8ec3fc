"""Every example extension on the CV32E40X SoC: its generated unit behind the CV-X-IF adapter
against the golden interpreter, inside the real SoC.

For each extension a C program runs a table of cases: every ISAX, in random order, with
random operands or addresses into a RAM buffer. The expected rd of every case and the final
contents of the buffer (its FNV-1a hash) come from the golden interpreter
(``aquas.interpreter.execute``), run on the same operands and the same initial buffer, with
the ISAX state carried from case to case as in the hardware. The program compares rd on
the core (through ``aquas_isax.h``) and prints the hash; the test compares it with the
interpreter's. 0 mismatches means every rd, every memory write and the state they feed are
the interpreter's."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from aquas.interpreter import ExecError, IsaxState, Memory, execute, find_extension
from aquas.runtime.build import build_program
from aquas.runtime.header import write_header
from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import synthesize
from aquas.target import load_target

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.isax"))
SOC = "cv32e40x"
CASES_PER_ISAX = 48
BUF_SIZE = 4096


class BufferMemory(Memory):
    """RAM as the program sees it: only [base, base + size) is the ISAXs' to touch (an access
    outside it is an ExecError, so the case is redrawn); its initial bytes are init_byte()."""

    def __init__(self, base: int, size: int):
        super().__init__({base + i: init_byte(i) for i in range(size)})
        self.base, self.size = base, size

    def _check(self, addr: int, size: int) -> None:
        if not (self.base <= addr and addr + size <= self.base + self.size):
            raise ExecError(f"access at {addr:#x} outside the test buffer")

    def read(self, addr: int, size: int) -> int:
        self._check(addr, size)
        return super().read(addr, size)

    def write(self, addr: int, size: int, value: int) -> None:
        self._check(addr, size)
        super().write(addr, size, value)

    def copy(self) -> BufferMemory:
        m = BufferMemory.__new__(BufferMemory)
        m.bytes, m.base, m.size = dict(self.bytes), self.base, self.size
        return m


def init_byte(i: int) -> int:
    """The buffer's initial contents; the C program computes the same (see PROGRAM)."""
    return ((i * 2654435761) & 0xFFFFFFFF) >> 13 & 0xFF


def fnv1a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


PROGRAM = """\
#include <stdint.h>
#include "aquas_rt.h"
#include "aquas_isax.h"
#define BUF ((volatile uint8_t *)0x%(buf)08Xu)
#define BUF_SIZE %(size)d
struct aq_case { uint32_t isax, rs1, rs2, rd; };
static const struct aq_case CASES[] = {
%(cases)s
};
#define NCASES (sizeof CASES / sizeof CASES[0])
int main(void)
{
    for (uint32_t i = 0; i < BUF_SIZE; i++)
        BUF[i] = (uint8_t)((i * 2654435761u) >> 13);
    int errors = 0;
    for (uint32_t n = 0; n < NCASES; n++) {
        const struct aq_case *c = &CASES[n];
        uint32_t rd = 0;
        int has_rd = 1;
        switch (c->isax) {
%(calls)s
        }
        if (has_rd && rd != c->rd) {
            printf("case %%u isax %%u (%%08x, %%08x): rd %%08x want %%08x\\n",
                   (unsigned)n, (unsigned)c->isax, (unsigned)c->rs1, (unsigned)c->rs2,
                   (unsigned)rd, (unsigned)c->rd);
            errors++;
        }
    }
    uint32_t h = 0x811C9DC5u;
    for (uint32_t i = 0; i < BUF_SIZE; i++)
        h = (h ^ BUF[i]) * 0x01000193u;
    printf("cases=%%u errors=%%d hash=%%08x\\n", (unsigned)NCASES, errors, (unsigned)h);
    return errors;
}
"""


def operand(rng: random.Random, buf: int) -> int:
    r = rng.random()
    if r < 0.6:  # an address into the buffer (8-byte aligned, room for bursts after it)
        return buf + (rng.randrange(0, BUF_SIZE // 2) & ~7)
    if r < 0.75:
        return rng.choice([0, 1, 2, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 3329, 3328])
    return rng.getrandbits(32)


def make_cases(spec: Path, header: Path, buf: int, seed: int) -> tuple[str, int, int]:
    """(C source, number of cases, expected buffer hash)."""
    ext = find_extension(lower_spec_file(spec))
    isaxs = list(ext.isaxs())
    # the intrinsics' prototypes: (return type, name, parameters)
    pattern = r"^static inline .*? (void|uint32_t) aquas_(\w+)\(([^)]*)\)"
    protos = {m[1]: m for m in re.findall(pattern, header.read_text(), re.M)}
    calls = []
    for k, isax in enumerate(isaxs):
        name = isax.sym_name.data
        ret, _, params = protos[name]
        args = [a for a in ("rs1", "rs2") if re.search(rf"\b{a}\b", params)]
        call = f"aquas_{name}({', '.join('c->' + a for a in args)})"
        body = f"rd = {call};" if ret == "uint32_t" else f"{call}; has_rd = 0;"
        calls.append(f"        case {k}: {body} break;")
    rng = random.Random(seed)
    mem = BufferMemory(buf, BUF_SIZE)
    state = IsaxState.reset(ext)
    rows = []
    for _ in range(CASES_PER_ISAX):
        order = list(range(len(isaxs)))
        rng.shuffle(order)
        for k in order:
            for _attempt in range(200):
                rs1, rs2 = operand(rng, buf), operand(rng, buf)
                trial = mem.copy()
                try:
                    res = execute(isaxs[k], rs1, rs2, trial, state)
                except ExecError:
                    continue
                mem, state = trial, res.state
                rd = res.rd if res.rd is not None else 0
                rows.append(f"    {{{k}u, 0x{rs1:08X}u, 0x{rs2:08X}u, 0x{rd:08X}u}},")
                break
            else:
                raise AssertionError(f"no valid operands found for {isaxs[k].sym_name.data}")
    want = fnv1a(bytes(mem.bytes[buf + i] for i in range(BUF_SIZE)))
    src = PROGRAM % {
        "buf": buf,
        "size": BUF_SIZE,
        "cases": "\n".join(rows),
        "calls": "\n".join(calls),
    }
    return src, len(rows), want


@pytest.mark.parametrize("spec", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_extension_on_cv32e40x_matches_the_interpreter(spec: Path, tmp_path: Path) -> None:
    import aquas.sim

    t = load_target(soc=SOC)
    buf = t.ram_base + t.ram_size * 3 // 4  # far above the program, far below the stack
    ext = find_extension(lower_spec_file(spec))
    header = write_header(ext, SOC, tmp_path / "inc" / "aquas_isax.h", allow_unrouted=False)
    src, ncases, want_hash = make_cases(spec, header, buf, seed=16)
    (tmp_path / "cosim.c").write_text(src)
    elf = build_program(
        [tmp_path / "cosim.c"], tmp_path / "build", platform=SOC, header_dirs=[header.parent]
    )
    unit = synthesize(lower_spec_file(spec), tmp_path / "unit", clock_ns=10.0)
    binary = aquas.sim.build(SOC, None, [unit.verilog_path], quiet=True)
    r = aquas.sim.run(binary, elf, max_cycles=20_000_000)
    assert (r.reason, r.exit_code) == ("exit", 0), r.output[-2000:] + r.report
    assert r.output == f"cases={ncases} errors=0 hash={want_hash:08x}\n"
    assert ncases == CASES_PER_ISAX * len(list(ext.isaxs()))
