"""Independent reference models of the example ISAXs (``examples/**/*.isax``).

Every model here is written by hand from the operand convention documented at the top of its
spec file.  Nothing in this module imports the frontend or the golden interpreter: the
differential test (``tests/test_examples_differential.py``) compares the interpreter against
these models, so they must not share code with it.

A model is a pair of functions registered in :data:`MODELS` under ``(spec file, ISAX)``:

* ``gen(rng) -> Case``: a random invocation -- register operands, the initial memory images
  (inputs, plus random junk in the output regions so unwritten bytes are noticed), the
  output regions the ISAX may write, and a random initial extension state;
* ``ref(case) -> Expected``: the expected ``rd`` (unsigned 32-bit, or ``None`` when the ISAX
  has no result), the final bytes of every output region, and the final state (all
  registers and scratchpads of the extension, unsigned).

:data:`LAYOUTS` declares the state of each extension (register widths and reset values,
scratchpad element widths and sizes); the test checks it against the lowered spec.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

M8 = 0xFF
M16 = 0xFFFF
M32 = 0xFFFF_FFFF
M64 = 0xFFFF_FFFF_FFFF_FFFF

KYBER_Q = 3329

POINTCLOUD = "examples/pointcloud/pointcloud.isax"
LLM = "examples/llm/llm.isax"
KYBER = "examples/crypto/kyber.isax"
DSP = "examples/dsp/dsp.isax"


# ---------------------------------------------------------------------------------------
# Cases and expectations
# ---------------------------------------------------------------------------------------


@dataclass
class Case:
    rs1: int
    rs2: int
    mem: dict[int, bytes]  # initial memory images: base address -> bytes
    outputs: list[tuple[int, int]]  # (base, length in bytes) of every region the ISAX writes
    regs: dict[str, int]  # initial state registers (unsigned)
    spms: dict[str, list[int]]  # initial scratchpads (unsigned elements)
    kind: str = ""  # which generator profile produced it (for failure messages)


@dataclass
class Expected:
    rd: int | None
    out: dict[int, bytes]  # base of each output region -> its final bytes
    regs: dict[str, int]
    spms: dict[str, list[int]]


@dataclass(frozen=True)
class Layout:
    regs: dict[str, tuple[int, int]]  # name -> (width, reset value)
    spms: dict[str, tuple[int, int]]  # name -> (element width, number of elements)


@dataclass(frozen=True)
class Model:
    gen: Callable[[random.Random], Case]
    ref: Callable[[Case], Expected]


_BQ = ("b0", "b1", "b2", "a1", "a2", "x1", "x2", "y1", "y2")

LAYOUTS: dict[str, Layout] = {
    POINTCLOUD: Layout(
        regs={},
        spms={
            "pa": (32, 48),
            "pb": (32, 48),
            "dist": (32, 16),
            "mv": (32, 16),
            "mi": (8, 8),
            "nq": (32, 3),
            "ncl": (32, 192),
        },
    ),
    LLM: Layout(
        regs={"dacc": (32, 0)},
        spms={"ga": (16, 16), "gb": (16, 16), "gc": (32, 16), "sv": (8, 32), "dense": (8, 32)},
    ),
    KYBER: Layout(regs={}, spms={"pc": (16, 256), "zf": (16, 127), "zi": (16, 127)}),
    DSP: Layout(
        regs={f"bq_{n}": (16, 0) for n in _BQ},
        spms={
            "taps": (16, 8),
            "xs": (16, 23),
            "ys": (32, 16),
            "va": (16, 16),
            "vb": (16, 16),
            "wa": (16, 32),
            "wb": (16, 32),
        },
    ),
}


# ---------------------------------------------------------------------------------------
# Bit helpers
# ---------------------------------------------------------------------------------------


def signed(x: int, w: int) -> int:
    """Two's-complement value of the low ``w`` bits of ``x``."""
    x &= (1 << w) - 1
    return x - (1 << w) if x >> (w - 1) else x


def pack(values: Sequence[int], size: int) -> bytes:
    """Little-endian image of ``values`` (any sign), ``size`` bytes each."""
    m = (1 << (8 * size)) - 1
    return b"".join((v & m).to_bytes(size, "little") for v in values)


def unpack(data: bytes, size: int, is_signed: bool = False) -> list[int]:
    out = [int.from_bytes(data[i : i + size], "little") for i in range(0, len(data), size)]
    return [signed(v, 8 * size) for v in out] if is_signed else out


def lanes(x: int, w: int, n: int) -> list[int]:
    """The ``n`` signed ``w``-bit lanes of ``x``, lane 0 in the least significant bits."""
    return [signed(x >> (w * k), w) for k in range(n)]


def sat(x: int, w: int) -> int:
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    return max(lo, min(hi, x))


# ---------------------------------------------------------------------------------------
# Random data
# ---------------------------------------------------------------------------------------

_PROFILES = ("uniform", "edge", "small", "mixed", "constant")


def edges(w: int, is_signed: bool) -> list[int]:
    if is_signed:
        lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
        return [0, 1, -1, 2, -2, lo, hi, lo + 1, hi - 1]
    return [0, 1, 2, (1 << w) - 1, (1 << w) - 2, 1 << (w - 1), (1 << (w - 1)) - 1]


def rand_value(rng: random.Random, w: int, is_signed: bool, profile: str = "mixed") -> int:
    """One random ``w``-bit value (signed or unsigned range) drawn according to ``profile``."""
    if profile == "edge" or (profile == "mixed" and rng.random() < 0.3):
        return rng.choice(edges(w, is_signed))
    if profile == "small":
        r = min(100, (1 << (w - 1)) - 1)
        return rng.randint(-r, r) if is_signed else rng.randint(0, r)
    if is_signed:
        return rng.randint(-(1 << (w - 1)), (1 << (w - 1)) - 1)
    return rng.randint(0, (1 << w) - 1)


def rand_values(
    rng: random.Random, n: int, w: int, is_signed: bool, profile: str | None = None
) -> list[int]:
    profile = profile or rng.choice(_PROFILES)
    if profile == "constant":
        v = rand_value(rng, w, is_signed, "mixed")
        return [v] * n
    return [rand_value(rng, w, is_signed, profile) for _ in range(n)]


def rand_state(rng: random.Random, spec: str) -> tuple[dict[str, int], dict[str, list[int]]]:
    """A random extension state: registers and scratchpad contents (unsigned)."""
    lay = LAYOUTS[spec]
    regs = {n: rand_value(rng, w, False) for n, (w, _) in lay.regs.items()}
    spms = {n: [rng.getrandbits(w) for _ in range(size)] for n, (w, size) in lay.spms.items()}
    return regs, spms


def alloc(rng: random.Random, regions: Sequence[tuple[int, int]]) -> list[int]:
    """Random non-overlapping base addresses for regions given as (length, alignment).

    Sometimes the regions are packed back to back (in random order) so that a write one
    element past the end of a region lands in a neighbouring region.
    """
    if rng.random() < 0.25:
        order = list(range(len(regions)))
        rng.shuffle(order)
        addr = rng.randrange(0x100, 0x1_0000) * 64
        bases = [0] * len(regions)
        for i in order:
            length, align = regions[i]
            addr = -(-addr // align) * align
            bases[i] = addr
            addr += length
        return bases
    while True:
        bases = []
        for length, align in regions:
            lo = 0x100 // align
            hi = (0xFFFF_F000 - length) // align
            bases.append(rng.randint(lo, hi) * align)
        spans = sorted((b, b + length) for b, (length, _) in zip(bases, regions, strict=True))
        if all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans)):
            return bases


def junk(rng: random.Random, n: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(n))


def high_junk(rng: random.Random, x16: int) -> int:
    """A 32-bit register whose low 16 bits are ``x16`` and whose high bits are random."""
    hi = rng.choice([0, 0xFFFF, rng.getrandbits(16)])
    return (hi << 16) | (x16 & M16)


class Image:
    """Read-only view of a case's initial memory images (unwritten bytes read as 0)."""

    def __init__(self, mem: dict[int, bytes]):
        self.b: dict[int, int] = {}
        for base, data in mem.items():
            for i, x in enumerate(data):
                self.b[base + i] = x

    def bytes(self, addr: int, n: int) -> bytes:
        return bytes(self.b.get(addr + i, 0) for i in range(n))

    def words(self, addr: int, size: int, n: int, is_signed: bool = False) -> list[int]:
        return unpack(self.bytes(addr, size * n), size, is_signed)


def _copy_state(case: Case) -> tuple[dict[str, int], dict[str, list[int]]]:
    return dict(case.regs), {k: list(v) for k, v in case.spms.items()}


# ---------------------------------------------------------------------------------------
# pointcloud
# ---------------------------------------------------------------------------------------


def _points(rng: random.Random) -> tuple[list[int], str]:
    kind = rng.choice((*_PROFILES, "cloud"))
    if kind == "cloud":  # a realistic cluster around a random centre
        centre = [rng.randint(-(1 << 20), 1 << 20) for _ in range(3)]
        return [centre[k % 3] + rng.randint(-1000, 1000) for k in range(48)], kind
    return rand_values(rng, 48, 32, True, kind), kind


def gen_v3ddist(rng: random.Random) -> Case:
    a, kind = _points(rng)
    b = [v + rng.randint(-50, 50) for v in a] if rng.random() < 0.3 else _points(rng)[0]
    ra, rb = alloc(rng, [(192, 4), (256, 4)])
    regs, spms = rand_state(rng, POINTCLOUD)
    mem = {ra: pack(a, 4), rb: pack(b, 4) + junk(rng, 64)}
    return Case(ra, rb, mem, [(rb + 192, 64)], regs, spms, kind)


def ref_v3ddist(case: Case) -> Expected:
    img = Image(case.mem)
    a = img.words(case.rs1, 4, 48, True)
    b = img.words(case.rs2, 4, 48, True)
    d = [sum((a[3 * i + c] - b[3 * i + c]) ** 2 for c in range(3)) & M32 for i in range(16)]
    regs, spms = _copy_state(case)
    spms["pa"] = [v & M32 for v in a]
    spms["pb"] = [v & M32 for v in b]
    spms["dist"] = d
    return Expected(sum(d) & M32, {case.rs2 + 192: pack(d, 4)}, regs, spms)


def gen_vcovmat3d(rng: random.Random) -> Case:
    p, kind = _points(rng)
    if kind == "cloud" or rng.random() < 0.2:  # the true (rounded) centroid
        cen = [round(sum(p[c::3]) / 16) for c in range(3)]
    else:
        cen = rand_values(rng, 3, 32, True)
    rp, rc = alloc(rng, [(192, 4), (64, 8)])
    regs, spms = rand_state(rng, POINTCLOUD)
    mem = {rp: pack(p, 4), rc: pack(cen, 4) + junk(rng, 4) + junk(rng, 48)}
    return Case(rp, rc, mem, [(rc + 16, 48)], regs, spms, kind)


def ref_vcovmat3d(case: Case) -> Expected:
    img = Image(case.mem)
    p = np.array(img.words(case.rs1, 4, 48, True), dtype=object).reshape(16, 3)
    cen = np.array(img.words(case.rs2, 4, 3, True), dtype=object)
    d = p - cen  # exact Python ints
    s = d.T @ d  # 3x3 scatter matrix, exact
    entries = [int(s[i, j]) & M64 for i, j in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))]
    trace = int(s[0, 0] + s[1, 1] + s[2, 2]) & M32
    regs, spms = _copy_state(case)
    spms["pa"] = [int(v) & M32 for v in p.flatten()]
    return Expected(trace, {case.rs2 + 16: pack(entries, 8)}, regs, spms)


def gen_vgemv4(rng: random.Random) -> Case:
    kind = rng.choice(_PROFILES)
    mx = rand_values(rng, 20, 32, True, kind)
    rm, ry = alloc(rng, [(80, 4), (16, 4)])
    regs, spms = rand_state(rng, POINTCLOUD)
    return Case(rm, ry, {rm: pack(mx, 4), ry: junk(rng, 16)}, [(ry, 16)], regs, spms, kind)


def ref_vgemv4(case: Case) -> Expected:
    img = Image(case.mem)
    m = img.words(case.rs1, 4, 16, True)
    x = img.words(case.rs1 + 64, 4, 4, True)
    y = [sum(m[4 * r + c] * x[c] for c in range(4)) for r in range(4)]
    regs, spms = _copy_state(case)
    return Expected(None, {case.rs2: pack(y, 4)}, regs, spms)


def gen_vmaxarg(rng: random.Random) -> Case:
    kind = rng.choice((*_PROFILES, "ties", "sorted"))
    if kind == "ties":
        pool = rand_values(rng, rng.randint(1, 3), 32, True, "mixed")
        v = [rng.choice(pool) for _ in range(16)]
    elif kind == "sorted":
        v = sorted(rand_values(rng, 16, 32, True, "mixed"), reverse=rng.random() < 0.5)
    else:
        v = rand_values(rng, 16, 32, True, kind)
    rv, ro = alloc(rng, [(64, 4), (4, 4)])
    regs, spms = rand_state(rng, POINTCLOUD)
    return Case(rv, ro, {rv: pack(v, 4), ro: junk(rng, 4)}, [(ro, 4)], regs, spms, kind)


def _first_argmax(v: Sequence[int], lo: int, hi: int) -> int:
    best = lo
    for i in range(lo + 1, hi):
        if v[i] > v[best]:
            best = i
    return best


def ref_vmaxarg(case: Case) -> Expected:
    v = Image(case.mem).words(case.rs1, 4, 16, True)
    idx = _first_argmax(v, 0, 16)
    regs, spms = _copy_state(case)
    # The tree reduction works in place: after the level that merges groups of g
    # elements, mv[k] / mi[k] hold the maximum / first arg-max of group k (k < 16 / g);
    # later (coarser) levels overwrite only the lower entries.
    mv = [x & M32 for x in v]
    mi = list(spms["mi"])
    for g in (2, 4, 8, 16):
        for k in range(16 // g):
            j = _first_argmax(v, k * g, (k + 1) * g)
            mv[k], mi[k] = v[j] & M32, j
    spms["mv"], spms["mi"] = mv, mi
    return Expected(idx, {case.rs2: pack([v[idx]], 4)}, regs, spms)


def _cloud64(rng: random.Random) -> tuple[list[int], str]:
    """64 points (192 signed words): random, a cluster, or a few points repeated (ties)."""
    kind = rng.choice((*_PROFILES, "cloud", "ties"))
    if kind == "cloud":
        centre = [rng.randint(-(1 << 20), 1 << 20) for _ in range(3)]
        return [centre[k % 3] + rng.randint(-1000, 1000) for k in range(192)], kind
    if kind == "ties":
        pool = [rand_values(rng, 3, 32, True, "small") for _ in range(rng.randint(1, 4))]
        return [v for _ in range(64) for v in rng.choice(pool)], kind
    return rand_values(rng, 192, 32, True, kind), kind


def gen_vnearest(rng: random.Random) -> Case:
    cloud, kind = _cloud64(rng)
    if rng.random() < 0.4:  # the query is (near) one of the points
        j = rng.randrange(64)
        q = [cloud[3 * j + k] + rng.choice((0, 0, rng.randint(-3, 3))) for k in range(3)]
    else:
        q = rand_values(rng, 3, 32, True)
    rq, rc = alloc(rng, [(12, 4), (768, 4)])
    regs, spms = rand_state(rng, POINTCLOUD)
    return Case(rq, rc, {rq: pack(q, 4), rc: pack(cloud, 4)}, [], regs, spms, kind)


def ref_vnearest(case: Case) -> Expected:
    img = Image(case.mem)
    q = img.words(case.rs1, 4, 3)
    c = img.words(case.rs2, 4, 192)
    # the squares of wrapped 32-bit differences, summed modulo 2^32: the same whether the
    # differences are read signed or unsigned
    d = [sum(((c[3 * j + k] - q[k]) & M32) ** 2 for k in range(3)) & M32 for j in range(64)]
    regs, spms = _copy_state(case)
    spms["nq"], spms["ncl"] = q, c
    return Expected(d.index(min(d)), {}, regs, spms)


# ---------------------------------------------------------------------------------------
# llm
# ---------------------------------------------------------------------------------------


def _packed_i8(rng: random.Random, profile: str) -> int:
    return int.from_bytes(pack(rand_values(rng, 4, 8, True, profile), 1), "little")


def gen_dot4_i8(rng: random.Random) -> Case:
    kind = rng.choice(_PROFILES)
    regs, spms = rand_state(rng, LLM)
    regs["dacc"] = rand_value(rng, 32, True, "mixed") & M32
    return Case(_packed_i8(rng, kind), _packed_i8(rng, kind), {}, [], regs, spms, kind)


def ref_dot4_i8(case: Case) -> Expected:
    dot = sum(a * b for a, b in zip(lanes(case.rs1, 8, 4), lanes(case.rs2, 8, 4), strict=True))
    acc = (signed(case.regs["dacc"], 32) + dot) & M32
    regs, spms = _copy_state(case)
    regs["dacc"] = acc
    return Expected(acc, {}, regs, spms)


def gen_dot4_clr(rng: random.Random) -> Case:
    regs, spms = rand_state(rng, LLM)
    rs1 = rng.choice([0, rand_value(rng, 32, False)])
    return Case(rs1, rand_value(rng, 32, False), {}, [], regs, spms)


def ref_dot4_clr(case: Case) -> Expected:
    regs, spms = _copy_state(case)
    regs["dacc"] = case.rs1 & M32
    return Expected(case.regs["dacc"], {}, regs, spms)


def gen_gemm4x4_i16(rng: random.Random) -> Case:
    kind = rng.choice(_PROFILES)
    ab = rand_values(rng, 32, 16, True, kind)
    rab, rc = alloc(rng, [(64, 2), (64, 4)])
    regs, spms = rand_state(rng, LLM)
    return Case(rab, rc, {rab: pack(ab, 2), rc: junk(rng, 64)}, [(rc, 64)], regs, spms, kind)


def ref_gemm4x4_i16(case: Case) -> Expected:
    img = Image(case.mem)
    a = np.array(img.words(case.rs1, 2, 16, True), dtype=np.int64).reshape(4, 4)
    b = np.array(img.words(case.rs1 + 32, 2, 16, True), dtype=np.int64).reshape(4, 4)
    c = [int(x) & M32 for x in (a @ b).flatten()]  # |entries| <= 2^32: exact in int64
    regs, spms = _copy_state(case)
    spms["ga"] = [int(x) & M16 for x in a.flatten()]
    spms["gb"] = [int(x) & M16 for x in b.flatten()]
    spms["gc"] = c
    trace = sum(c[5 * d] for d in range(4)) & M32
    return Expected(trace, {case.rs2: pack(c, 4)}, regs, spms)


def gen_sparse_decomp_i8(rng: random.Random) -> Case:
    kind = rng.choice(("zero", "full", "random", "sparse", "dense", "edge"))
    if kind == "zero":
        mask = 0
    elif kind == "full":
        mask = M32
    elif kind == "sparse":
        mask = rng.getrandbits(32) & rng.getrandbits(32) & rng.getrandbits(32)
    elif kind == "dense":
        mask = rng.getrandbits(32) | rng.getrandbits(32) | rng.getrandbits(32)
    elif kind == "edge":
        mask = rng.choice([1, 1 << 31, 0x8000_0001, 0x5555_5555, 0xAAAA_AAAA, 0xFFFF, 0xFFFF_0000])
    else:
        mask = rng.getrandbits(32)
    values = rand_values(rng, 32, 8, True)
    rb, ro = alloc(rng, [(36, 4), (32, 1)])
    regs, spms = rand_state(rng, LLM)
    mem = {rb: pack([mask], 4) + pack(values, 1), ro: junk(rng, 32)}
    return Case(rb, ro, mem, [(ro, 32)], regs, spms, kind)


def ref_sparse_decomp_i8(case: Case) -> Expected:
    img = Image(case.mem)
    mask = img.words(case.rs1, 4, 1)[0]
    window = list(img.bytes(case.rs1 + 4, 32))
    packed = iter(window)
    dense = [next(packed) if mask >> k & 1 else 0 for k in range(32)]
    regs, spms = _copy_state(case)
    spms["sv"], spms["dense"] = window, dense
    return Expected(mask.bit_count(), {case.rs2: bytes(dense)}, regs, spms)


# ---------------------------------------------------------------------------------------
# crypto (Kyber, q = 3329)
# ---------------------------------------------------------------------------------------


def _kyber_u16(rng: random.Random) -> int:
    q = KYBER_Q
    r = rng.random()
    if r < 0.3:
        return rng.choice([0, 1, 2, q - 1, q, q + 1, 2 * q - 1, 2 * q, 19 * q, 19 * q + 228, M16])
    if r < 0.6:
        return rng.randrange(q)  # already reduced, the common case
    return rng.randrange(1 << 16)


def gen_modmul_q(rng: random.Random) -> Case:
    rs1, rs2 = high_junk(rng, _kyber_u16(rng)), high_junk(rng, _kyber_u16(rng))
    regs, spms = rand_state(rng, KYBER)
    return Case(rs1, rs2, {}, [], regs, spms)


def ref_modmul_q(case: Case) -> Expected:
    regs, spms = _copy_state(case)  # register-only: the scratchpads are untouched
    return Expected((case.rs1 & M16) * (case.rs2 & M16) % KYBER_Q, {}, regs, spms)


def gen_ntt_bfly(rng: random.Random) -> Case:
    rs1 = (_kyber_u16(rng) << 16) | _kyber_u16(rng)
    rs2 = high_junk(rng, _kyber_u16(rng))
    regs, spms = rand_state(rng, KYBER)
    return Case(rs1, rs2, {}, [], regs, spms)


def ref_ntt_bfly(case: Case) -> Expected:
    q = KYBER_Q
    a, b, zeta = case.rs1 & M16, case.rs1 >> 16 & M16, case.rs2 & M16
    t = zeta * b
    regs, spms = _copy_state(case)
    return Expected(((a - t) % q) << 16 | (a + t) % q, {}, regs, spms)


def _brv7(k: int) -> int:
    return int(f"{k:07b}"[::-1], 2)


# The true twiddles of Kyber's NTT: zetas[k] = 17^brv7(k) mod q (17 is a primitive 256th
# root of unity mod q), and their inverses, which undo them layer by layer.
KYBER_ZETAS = [pow(17, _brv7(k), KYBER_Q) for k in range(128)]
KYBER_ZETAS_INV = [pow(z, -1, KYBER_Q) for z in KYBER_ZETAS]

_KYBER_PROFILES = ("canonical", "u16", "mixed", "edge", "constant")


def _kyber_u16s(rng: random.Random, n: int, kind: str) -> list[int]:
    """``n`` u16 values: all reduced, arbitrary, a mix, edge values only, or one value."""
    q = KYBER_Q
    if kind == "canonical":
        return [rng.randrange(q) for _ in range(n)]
    if kind == "u16":
        return [rng.getrandbits(16) for _ in range(n)]
    if kind == "edge":
        pool = [0, 1, 2, q - 1, q, q + 1, 2 * q - 1, 2 * q, 19 * q, 19 * q + 228, M16]
        return [rng.choice(pool) for _ in range(n)]
    if kind == "constant":
        return [_kyber_u16(rng)] * n
    return [_kyber_u16(rng) for _ in range(n)]


def _gen_ntt(real_twiddles: Sequence[int]):  # type: ignore[no-untyped-def]
    """rs1 = &p[0] (256 u16, transformed in place), rs2 = &table[0] (128 u16 twiddles)."""

    def gen(rng: random.Random) -> Case:
        pkind = rng.choice(_KYBER_PROFILES)
        p = _kyber_u16s(rng, 256, pkind)
        zkind = rng.choice(("real", *_KYBER_PROFILES))
        z = list(real_twiddles) if zkind == "real" else _kyber_u16s(rng, 128, zkind)
        rp, rz = alloc(rng, [(512, rng.choice((2, 2, 4))), (256, rng.choice((2, 2, 4)))])
        regs, spms = rand_state(rng, KYBER)
        mem = {rp: pack(p, 2), rz: pack(z, 2)}
        return Case(rp, rz, mem, [(rp, 512)], regs, spms, f"p:{pkind} z:{zkind}")

    return gen


def ntt_forward(p: Sequence[int], zetas: Sequence[int]) -> list[int]:
    """Kyber's forward NTT (reference C, with exact ``%`` on the full values)."""
    q = KYBER_Q
    p = list(p)
    k = 1
    length = 128
    while length >= 2:
        for start in range(0, 256, 2 * length):
            zeta = zetas[k]
            k += 1
            for j in range(start, start + length):
                t = zeta * p[j + length] % q
                a = p[j]
                p[j + length] = (a + q - t) % q
                p[j] = (a + t) % q
        length //= 2
    return p


def c_rem(x: int, q: int) -> int:
    """C's ``x % q`` for ints: rounds the quotient toward zero, so the sign is x's."""
    r = abs(x) % q
    return -r if x < 0 else r


def ntt_inverse(p: Sequence[int], zinv: Sequence[int]) -> list[int]:
    """Kyber's inverse NTT (Gentleman-Sande layers, then times 128^-1 = 3303 mod q)."""
    q = KYBER_Q
    p = list(p)
    length = 2
    while length <= 128:
        k = 128 // length
        for start in range(0, 256, 2 * length):
            z = zinv[k]
            k += 1
            for j in range(start, start + length):
                a, b = p[j], p[j + length]
                p[j] = (a + b) % q
                # C's (uint16_t)((a + q - b) % q): a truncating remainder, negative when
                # b > a + q (the spec's operands may be any u16)
                p[j + length] = z * (c_rem(a + q - b, q) & M16) % q
        length *= 2
    return [x * 3303 % q for x in p]


def _ref_ntt(transform, spm: str):  # type: ignore[no-untyped-def]
    def ref(case: Case) -> Expected:
        img = Image(case.mem)
        table = img.words(case.rs2, 2, 128)
        out = transform(img.words(case.rs1, 2, 256), table)
        regs, spms = _copy_state(case)
        spms["pc"] = out
        spms[spm] = table[1:]  # entries 1..127; the other table's scratchpad is untouched
        return Expected(None, {case.rs1: pack(out, 2)}, regs, spms)

    return ref


gen_ntt_fwd, ref_ntt_fwd = _gen_ntt(KYBER_ZETAS), _ref_ntt(ntt_forward, "zf")
gen_ntt_inv, ref_ntt_inv = _gen_ntt(KYBER_ZETAS_INV), _ref_ntt(ntt_inverse, "zi")


# ---------------------------------------------------------------------------------------
# dsp
# ---------------------------------------------------------------------------------------


def gen_fir_load_taps(rng: random.Random) -> Case:
    kind = rng.choice(_PROFILES)
    (rh,) = alloc(rng, [(16, 2)])
    regs, spms = rand_state(rng, DSP)
    h = rand_values(rng, 8, 16, True, kind)
    return Case(rh, rand_value(rng, 32, False), {rh: pack(h, 2)}, [], regs, spms, kind)


def ref_fir_load_taps(case: Case) -> Expected:
    regs, spms = _copy_state(case)
    spms["taps"] = Image(case.mem).words(case.rs1, 2, 8)
    return Expected(None, {}, regs, spms)


def gen_fir8(rng: random.Random) -> Case:
    kind = rng.choice(_PROFILES)
    x = rand_values(rng, 23, 16, True, kind)
    rx, ry = alloc(rng, [(46, 2), (64, 4)])
    regs, spms = rand_state(rng, DSP)
    if rng.random() < 0.5:  # otherwise keep fully random taps
        spms["taps"] = [v & M16 for v in rand_values(rng, 8, 16, True)]
    return Case(rx, ry, {rx: pack(x, 2), ry: junk(rng, 64)}, [(ry, 64)], regs, spms, kind)


def fir_block(h: Sequence[int], x: Sequence[int]) -> list[int]:
    """y[n] = sum_k h[k] x[n + 7 - k] for every n with a full window (signed, exact)."""
    return [int(v) for v in np.convolve(np.array(x, np.int64), np.array(h, np.int64), "valid")]


def ref_fir8(case: Case) -> Expected:
    x = Image(case.mem).words(case.rs1, 2, 23, True)
    h = [signed(v, 16) for v in case.spms["taps"]]
    y = [v & M32 for v in fir_block(h, x)]
    regs, spms = _copy_state(case)
    spms["xs"] = [v & M16 for v in x]
    spms["ys"] = y
    return Expected(None, {case.rs2: pack(y, 4)}, regs, spms)


def _gen_vdot(n: int):  # type: ignore[no-untyped-def]
    def gen(rng: random.Random) -> Case:
        kind = rng.choice(_PROFILES)
        a = rand_values(rng, n, 16, True, kind)
        b = rand_values(rng, n, 16, True, kind)
        ra, rb = alloc(rng, [(2 * n, 2), (2 * n, 2)])
        regs, spms = rand_state(rng, DSP)
        return Case(ra, rb, {ra: pack(a, 2), rb: pack(b, 2)}, [], regs, spms, kind)

    return gen


def _ref_vdot(n: int, spm_a: str, spm_b: str):  # type: ignore[no-untyped-def]
    def ref(case: Case) -> Expected:
        img = Image(case.mem)
        a = img.words(case.rs1, 2, n, True)
        b = img.words(case.rs2, 2, n, True)
        regs, spms = _copy_state(case)
        spms[spm_a] = [v & M16 for v in a]
        spms[spm_b] = [v & M16 for v in b]
        return Expected(sum(x * y for x, y in zip(a, b, strict=True)) & M32, {}, regs, spms)

    return ref


gen_vdot16, ref_vdot16 = _gen_vdot(16), _ref_vdot(16, "va", "vb")
gen_vdot32, ref_vdot32 = _gen_vdot(32), _ref_vdot(32, "wa", "wb")


def gen_biquad_load(rng: random.Random) -> Case:
    kind = rng.choice(_PROFILES)
    coef = rand_values(rng, 5, 16, True, kind)
    (rc,) = alloc(rng, [(10, 2)])
    regs, spms = rand_state(rng, DSP)
    return Case(rc, rand_value(rng, 32, False), {rc: pack(coef, 2)}, [], regs, spms, kind)


def ref_biquad_load(case: Case) -> Expected:
    coef = Image(case.mem).words(case.rs1, 2, 5)
    regs, spms = _copy_state(case)
    regs.update({f"bq_{n}": c for n, c in zip(_BQ[:5], coef, strict=True)})
    regs.update({f"bq_{n}": 0 for n in _BQ[5:]})
    return Expected(None, {}, regs, spms)


def gen_biquad(rng: random.Random) -> Case:
    kind = rng.choice(_PROFILES)
    regs, spms = rand_state(rng, DSP)
    for n in _BQ:
        regs[f"bq_{n}"] = rand_value(rng, 16, True, kind) & M16
    return Case(high_junk(rng, rand_value(rng, 16, True, kind)), 0, {}, [], regs, spms, kind)


def biquad_step(coef: dict[str, int], hist: dict[str, int], x: int) -> int:
    """One DF-I step on signed values; updates ``hist`` and returns the Q15 output."""
    acc = (
        coef["b0"] * x
        + coef["b1"] * hist["x1"]
        + coef["b2"] * hist["x2"]
        - coef["a1"] * hist["y1"]
        - coef["a2"] * hist["y2"]
    )
    y = sat((acc + (1 << 13)) >> 14, 16)  # Python >> is an arithmetic (floor) shift
    hist.update(x2=hist["x1"], x1=x, y2=hist["y1"], y1=y)
    return y


def ref_biquad(case: Case) -> Expected:
    v = {n: signed(case.regs[f"bq_{n}"], 16) for n in _BQ}
    y = biquad_step(v, v, signed(case.rs1, 16))
    regs, spms = _copy_state(case)
    regs.update({f"bq_{n}": v[n] & M16 for n in _BQ})
    return Expected(y & M32, {}, regs, spms)


def gen_biquad_save(rng: random.Random) -> Case:
    kind = rng.choice(_PROFILES)
    regs, spms = rand_state(rng, DSP)
    for n in _BQ:
        regs[f"bq_{n}"] = rand_value(rng, 16, True, kind) & M16
    (rh,) = alloc(rng, [(8, 2)])
    return Case(rh, rand_value(rng, 32, False), {rh: junk(rng, 8)}, [(rh, 8)], regs, spms, kind)


def ref_biquad_save(case: Case) -> Expected:
    """The history x1, x2, y1, y2 as four i16 at rs1; the state is unchanged."""
    regs, spms = _copy_state(case)
    hist = [case.regs[f"bq_{n}"] for n in _BQ[5:]]
    return Expected(None, {case.rs1: pack(hist, 2)}, regs, spms)


def gen_biquad_restore(rng: random.Random) -> Case:
    kind = rng.choice(_PROFILES)
    hist = rand_values(rng, 4, 16, True, kind)
    (rh,) = alloc(rng, [(8, 2)])
    regs, spms = rand_state(rng, DSP)
    return Case(rh, rand_value(rng, 32, False), {rh: pack(hist, 2)}, [], regs, spms, kind)


def ref_biquad_restore(case: Case) -> Expected:
    """x1, x2, y1, y2 from the four i16 at rs1; the coefficients are unchanged."""
    hist = Image(case.mem).words(case.rs1, 2, 4)
    regs, spms = _copy_state(case)
    regs.update({f"bq_{n}": h for n, h in zip(_BQ[5:], hist, strict=True)})
    return Expected(None, {}, regs, spms)


# ---------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------

MODELS: dict[tuple[str, str], Model] = {
    (POINTCLOUD, "v3ddist"): Model(gen_v3ddist, ref_v3ddist),
    (POINTCLOUD, "vcovmat3d"): Model(gen_vcovmat3d, ref_vcovmat3d),
    (POINTCLOUD, "vgemv4"): Model(gen_vgemv4, ref_vgemv4),
    (POINTCLOUD, "vmaxarg"): Model(gen_vmaxarg, ref_vmaxarg),
    (POINTCLOUD, "vnearest"): Model(gen_vnearest, ref_vnearest),
    (LLM, "dot4_i8"): Model(gen_dot4_i8, ref_dot4_i8),
    (LLM, "dot4_clr"): Model(gen_dot4_clr, ref_dot4_clr),
    (LLM, "gemm4x4_i16"): Model(gen_gemm4x4_i16, ref_gemm4x4_i16),
    (LLM, "sparse_decomp_i8"): Model(gen_sparse_decomp_i8, ref_sparse_decomp_i8),
    (KYBER, "modmul_q"): Model(gen_modmul_q, ref_modmul_q),
    (KYBER, "ntt_bfly"): Model(gen_ntt_bfly, ref_ntt_bfly),
    (KYBER, "ntt_fwd"): Model(gen_ntt_fwd, ref_ntt_fwd),
    (KYBER, "ntt_inv"): Model(gen_ntt_inv, ref_ntt_inv),
    (DSP, "fir_load_taps"): Model(gen_fir_load_taps, ref_fir_load_taps),
    (DSP, "fir8"): Model(gen_fir8, ref_fir8),
    (DSP, "biquad_load"): Model(gen_biquad_load, ref_biquad_load),
    (DSP, "biquad"): Model(gen_biquad, ref_biquad),
    (DSP, "biquad_save"): Model(gen_biquad_save, ref_biquad_save),
    (DSP, "biquad_restore"): Model(gen_biquad_restore, ref_biquad_restore),
    (DSP, "vdot16"): Model(gen_vdot16, ref_vdot16),
    (DSP, "vdot32"): Model(gen_vdot32, ref_vdot32),
}


__all__ = [
    "LAYOUTS",
    "MODELS",
    "Case",
    "Expected",
    "Image",
    "Layout",
    "Model",
    "biquad_step",
    "fir_block",
    "pack",
    "signed",
    "unpack",
]
