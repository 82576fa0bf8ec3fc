"""The matcher's robustness corpus (``tests/match_corpus``) means what its headers claim.

Every corpus file is compiled natively (host gcc, ``-fwrapv``) and its ``kernel`` called
through ctypes on seeded random operands:

* a positive must agree bit-exactly with the independent reference model of its ISAX
  (``tests/reference_models.py``): ``rd`` and the final bytes of every buffer it gets (the
  outputs, and the untouched rest of the input and output buffers);
* a negative must differ from the reference of the ISAX named by ``like:`` on at least one
  of the seeded cases; an ``alias: yes`` negative must agree on separate buffers and differ
  once the output buffer overlaps the input.

The files must also be well-formed (headers, the C subset of the matcher's frontend, valid
C99 for the RISC-V toolchain), and the suite must keep its size.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import random
import subprocess
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from match_corpus.corpus import (
    ISAX_SPECS,
    CorpusFile,
    HeaderError,
    corpus_files,
    corpus_paths,
    parse_header,
)

from helpers import require_tool
from reference_models import M32, MODELS, Case, Expected, biquad_step, pack, rand_values

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "corpus"
CFLAGS = [
    "-O1",
    "-fwrapv",
    "-funsigned-char",
    "-std=c99",
    "-shared",
    "-fPIC",
]  # RV32: char is unsigned
RV_GCC = "riscv64-unknown-elf-gcc"
RV_FLAGS = [
    "-march=rv32im",
    "-mabi=ilp32",
    "-fsyntax-only",
    "-std=c99",
    "-ffreestanding",
    "-Wall",
    "-Wextra",
    "-Werror",
]  # no newlib in the toolchain: -ffreestanding selects gcc's own stdint.h

CASES = 60  # random cases per positive
NEG_CASES = 50  # seeded cases a non-alias negative must differ on (at least once)
GUARD = 64  # junk bytes around every native buffer, checked after each call

POINTER_ISAXS = {name for name in ISAX_SPECS if name not in ("modmul_q", "ntt_bfly")}
MIN_POSITIVES = 6
MIN_NEGATIVES = 14

FILES = corpus_files()
POSITIVES = [f for f in FILES if f.positive]
NEGATIVES = [f for f in FILES if not f.positive]


def _ids(files: list[CorpusFile]) -> list[str]:
    return [f.name for f in files]


# ---------------------------------------------------------------------------------------
# Native build and call
# ---------------------------------------------------------------------------------------


@cache
def _gcc() -> str:
    return require_tool("gcc", "gcc")


@cache
def load(path: Path) -> ctypes.CDLL:
    """Compile ``path`` to build/corpus/<group>/<stem>.so (only when the source changed)."""
    src = path.read_bytes()
    digest = hashlib.sha256(src + " ".join(CFLAGS).encode()).hexdigest()
    so = BUILD / path.parent.name / f"{path.stem}.so"
    stamp = so.with_suffix(".sha256")
    if not (so.exists() and stamp.exists() and stamp.read_text() == digest):
        so.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=so.parent)
        os.close(fd)
        res = subprocess.run(
            [_gcc(), *CFLAGS, "-o", tmp, str(path)], capture_output=True, text=True
        )
        if res.returncode != 0:
            os.unlink(tmp)
            pytest.fail(f"gcc failed on {path}:\n{res.stderr}")
        os.replace(tmp, so)
        stamp.write_text(digest)
    return ctypes.CDLL(str(so))


def kernel_of(f: CorpusFile) -> Callable[..., int | None]:
    fn = load(f.path).kernel
    if f.like in POINTER_ISAXS:
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    else:
        fn.argtypes = [ctypes.c_uint32, ctypes.c_uint32]
    fn.restype = {"vgemv4": None, "biquad": None, "vdot16": ctypes.c_int32}.get(
        f.like, ctypes.c_uint32
    )
    return fn


def run_native(
    f: CorpusFile, case: Case, rng: random.Random
) -> tuple[int | None, dict[int, bytes]]:
    """Call ``kernel`` on ``case``: every memory image becomes a native buffer (with random
    guard bytes on both sides); a pointer operand points into the image that contains it.
    Returns rd (unsigned 32-bit) and the final bytes of every image."""
    fn = kernel_of(f)
    if f.like not in POINTER_ISAXS:
        rd = fn(case.rs1, case.rs2)
        return rd & M32, {}
    bufs: dict[int, tuple[ctypes.Array[ctypes.c_char], bytes]] = {}
    for base, data in case.mem.items():
        guard = bytes(rng.getrandbits(8) for _ in range(2 * GUARD))
        buf = ctypes.create_string_buffer(
            guard[:GUARD] + data + guard[GUARD:], len(data) + 2 * GUARD
        )
        bufs[base] = (buf, guard)

    def ptr(addr: int) -> int:
        for base, data in case.mem.items():
            if base <= addr < base + len(data):
                return ctypes.addressof(bufs[base][0]) + GUARD + addr - base
        raise AssertionError(f"operand {addr:#x} points into no memory image")

    rd = fn(ptr(case.rs1), ptr(case.rs2))
    final = {}
    for base, data in case.mem.items():
        buf, guard = bufs[base]
        raw = buf.raw
        assert raw[:GUARD] + raw[GUARD + len(data) :] == guard, (
            f"{f.name}: wrote outside its buffers"
        )
        final[base] = raw[GUARD : GUARD + len(data)]
    return (None if rd is None else rd & M32), final


def expected_images(case: Case, exp: Expected) -> dict[int, bytes]:
    """The initial images with the reference's output regions written over them."""
    final = {base: bytearray(data) for base, data in case.mem.items()}
    for out_base, out in exp.out.items():
        for base, img in final.items():
            if base <= out_base and out_base + len(out) <= base + len(img):
                img[out_base - base : out_base - base + len(out)] = out
                break
        else:
            raise AssertionError(f"output region {out_base:#x} lies in no memory image")
    return {base: bytes(img) for base, img in final.items()}


# ---------------------------------------------------------------------------------------
# Cases: the reference models' generators (and a direct model for long dot products)
# ---------------------------------------------------------------------------------------


def gen_dot(n: int) -> Callable[[random.Random], Case]:
    def gen(rng: random.Random) -> Case:
        profile = rng.choice(("uniform", "edge", "small", "mixed", "constant"))
        a = rand_values(rng, n, 16, True, profile)
        b = rand_values(rng, n, 16, True, profile)
        ra, rb = 0x1000, 0x1000 + 2 * n + 2 * rng.randrange(64)
        return Case(ra, rb, {ra: pack(a, 2), rb: pack(b, 2)}, [], {}, {}, profile)

    return gen


def ref_dot(n: int) -> Callable[[Case], Expected]:
    def ref(case: Case) -> Expected:
        a = [
            int.from_bytes(case.mem[case.rs1][2 * i : 2 * i + 2], "little", signed=True)
            for i in range(n)
        ]
        b = [
            int.from_bytes(case.mem[case.rs2][2 * i : 2 * i + 2], "little", signed=True)
            for i in range(n)
        ]
        return Expected(sum(x * y for x, y in zip(a, b, strict=True)) & M32, {}, {}, {})

    return ref


def gen_biquad_kernel(rng: random.Random) -> Case:
    """The biquad convention: five Q2.14 coefficients at k (a stable low-pass section or
    random ones), the history x1, x2, y1, y2 and 16 samples at s."""
    profile = rng.choice(("uniform", "edge", "small", "mixed"))
    if rng.random() < 0.3:
        coef = [1106, 2212, 1106, -18727, 6767]
    else:
        coef = rand_values(rng, 5, 16, True, profile)
    s = rand_values(rng, 20, 16, True, profile)
    rk, rs = 0x1000, 0x1100 + 2 * rng.randrange(64)
    return Case(rk, rs, {rk: pack(coef, 2), rs: pack(s, 2)}, [(rs, 40)], {}, {}, profile)


def ref_biquad_kernel(case: Case) -> Expected:
    """16 samples through ``biquad_step`` (reference_models.py) from the given history."""
    k = [
        int.from_bytes(case.mem[case.rs1][2 * i : 2 * i + 2], "little", signed=True)
        for i in range(5)
    ]
    s = [
        int.from_bytes(case.mem[case.rs2][2 * i : 2 * i + 2], "little", signed=True)
        for i in range(20)
    ]
    coef = dict(zip(("b0", "b1", "b2", "a1", "a2"), k, strict=True))
    hist = dict(zip(("x1", "x2", "y1", "y2"), s[:4], strict=True))
    ys = [biquad_step(coef, hist, x) for x in s[4:]]
    out = [hist["x1"], hist["x2"], hist["y1"], hist["y2"], *ys]
    return Expected(None, {case.rs2: pack([v & 0xFFFF for v in out], 2)}, {}, {})


def with_wide_kyber(gen: Callable[[random.Random], Case]) -> Callable[[random.Random], Case]:
    """Every other Kyber case takes uniform 16-bit operands (random high bits): products near
    2^32, where Barrett-constant and reduction mistakes show, are rare in the model's mix."""

    def wide(rng: random.Random) -> Case:
        case = gen(rng)
        if rng.random() < 0.5:
            case.rs1 = rng.getrandbits(32)
            case.rs2 = rng.getrandbits(32)
            case.kind = "wide"
        return case

    return wide


def model_of(f: CorpusFile) -> tuple[Callable[[random.Random], Case], Callable[[Case], Expected]]:
    if f.like == "vdot16" and f.n != 16:
        assert f.n is not None
        return gen_dot(f.n), ref_dot(f.n)
    if f.like == "biquad":  # a loop of biquad calls over memory state (egraph/stateful.py)
        return gen_biquad_kernel, ref_biquad_kernel
    m = MODELS[(f.spec, f.like)]
    if f.like in ("modmul_q", "ntt_bfly"):
        return with_wide_kyber(m.gen), m.ref
    return m.gen, m.ref


def seed_of(f: CorpusFile) -> int:
    return int.from_bytes(hashlib.sha256(f.name.encode()).digest()[:8], "little")


def outcome(f: CorpusFile, case: Case, rng: random.Random) -> tuple[bool, str]:
    """Run one case natively and compare with the reference; (equal, description)."""
    _, ref = model_of(f)
    exp = ref(case)
    rd, final = run_native(f, case, rng)
    want = expected_images(case, exp)
    if rd != exp.rd:
        return False, f"rd {rd} != reference {exp.rd} (case kind {case.kind!r})"
    for base, img in want.items():
        if final[base] != img:
            diff = [i for i in range(len(img)) if final[base][i] != img[i]]
            return False, (
                f"memory image {base:#x} differs at byte offsets {diff[:8]}"
                f" (case kind {case.kind!r})"
            )
    return True, ""


# ---------------------------------------------------------------------------------------
# Headers and suite size
# ---------------------------------------------------------------------------------------


def test_suite_size() -> None:
    counts = {isax: 0 for isax in ISAX_SPECS}
    for f in POSITIVES:
        if f.like != "vdot16" or f.n == 16:
            counts[f.isax or ""] += 1
    small = {isax: k for isax, k in counts.items() if k < MIN_POSITIVES}
    assert not small, f"fewer than {MIN_POSITIVES} positives: {small}"
    assert len(NEGATIVES) >= MIN_NEGATIVES
    assert {f.n for f in POSITIVES if f.like == "vdot16"} >= {16, 35, 64, 70}
    assert any(f.alias for f in NEGATIVES)
    assert {f.like for f in NEGATIVES} == set(ISAX_SPECS), "negatives for every ISAX"


def test_headers_well_formed() -> None:
    paths = corpus_paths()
    assert len(paths) == len(FILES)
    for p in paths:
        f = parse_header(p)  # raises on a malformed header
        assert p.parent.name in (*ISAX_SPECS, "negative"), p
        code = "\n".join(ln for ln in p.read_text().splitlines() if not ln.startswith("//"))
        assert "#include <stdint.h>" in code, p
        assert code.count("kernel(") == 1, f"{p}: exactly one function named kernel"
        if f.alias:
            assert "restrict" not in code, f"{p}: alias negatives drop restrict"
    assert len({f.style for f in POSITIVES}) == len(POSITIVES), "every style is distinct"


_GOOD = "// isax: {isax}\n// like: {like}\n{extra}// style: s\n#include <stdint.h>\n"


@pytest.mark.parametrize(
    ("group", "isax", "like", "extra"),
    [
        ("v3ddist", "vgemv4", "vgemv4", ""),  # positive outside its ISAX's directory
        ("v3ddist", "v3ddist", "vgemv4", ""),  # positive with another convention
        ("v3ddist", "none", "v3ddist", ""),  # negative outside negative/
        ("negative", "none", "fir8", ""),  # unknown convention
        ("negative", "none", "v3ddist", "// n: 16\n"),  # n on a non-vdot16 file
        ("vdot16", "vdot16", "vdot16", ""),  # vdot16 without n
        ("vdot16", "vdot16", "vdot16", "// n: x\n"),
        ("v3ddist", "v3ddist", "v3ddist", "// alias: yes\n"),  # alias on a positive
        ("negative", "none", "v3ddist", "// alias: maybe\n"),
        ("negative", "none", "v3ddist", "// colour: red\n"),  # unknown key
        ("negative", "none", "v3ddist", "// like: v3ddist\n"),  # duplicate key
        ("negative", "none", "v3ddist", "// a comment\n"),  # not key: value
    ],
)
def test_header_parser_rejects(
    tmp_path: Path, group: str, isax: str, like: str, extra: str
) -> None:
    (tmp_path / group).mkdir()
    p = tmp_path / group / "x.c"
    p.write_text(_GOOD.format(isax=isax, like=like, extra=extra))
    with pytest.raises(HeaderError):
        parse_header(p)


def test_header_parser_accepts(tmp_path: Path) -> None:
    (tmp_path / "negative").mkdir()
    p = tmp_path / "negative" / "x.c"
    p.write_text(_GOOD.format(isax="none", like="vdot16", extra="// n: 16\n// alias: yes\n"))
    f = parse_header(p)
    assert (f.isax, f.like, f.n, f.alias, f.style, f.name) == (
        None,
        "vdot16",
        16,
        True,
        "s",
        "negative/x",
    )


# ---------------------------------------------------------------------------------------
# Semantics
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("f", POSITIVES, ids=_ids(POSITIVES))
def test_positive_equals_reference(f: CorpusFile) -> None:
    gen, _ = model_of(f)
    rng = random.Random(seed_of(f))
    for k in range(CASES):
        case = gen(rng)
        ok, why = outcome(f, case, rng)
        assert ok, f"{f.name}, case {k}: {why}"


@pytest.mark.parametrize("f", NEGATIVES, ids=_ids(NEGATIVES))
def test_negative_differs(f: CorpusFile) -> None:
    gen, _ = model_of(f)
    rng = random.Random(seed_of(f))
    results = [outcome(f, gen(rng), rng) for _ in range(NEG_CASES)]
    if f.alias:
        bad = [why for ok, why in results if not ok]
        assert not bad, f"{f.name} must agree on separate buffers: {bad[0]}"
        assert any(not ok for ok, _ in overlapping_cases(f, rng)), (
            f"{f.name}: no overlap of output and input buffers changed the result"
        )
    else:
        assert any(not ok for ok, _ in results), (
            f"{f.name} agrees with {f.like} on all {NEG_CASES} cases: not a negative"
        )


def overlapping_cases(f: CorpusFile, rng: random.Random) -> list[tuple[bool, str]]:
    """Cases whose rs2 buffer overlaps the rs1 buffer, at every 4-byte offset at which the
    two images intersect.  Both images go into one arena (rs1's written last); the
    reference reads its inputs from the arena before writing its outputs."""
    gen, _ = model_of(f)
    results = []
    for _ in range(8):
        case = gen(rng)
        a, b = case.mem[case.rs1], case.mem[case.rs2]
        base = 0x10000
        off1 = len(b) + 64
        for delta in range(-len(b) + 4, len(a), 4):
            arena = bytearray(rng.getrandbits(8) for _ in range(len(a) + 2 * len(b) + 128))
            arena[off1 + delta : off1 + delta + len(b)] = b
            arena[off1 : off1 + len(a)] = a
            outputs = [(base + off1 + delta + o - case.rs2, n) for o, n in case.outputs]
            c = Case(
                base + off1,
                base + off1 + delta,
                {base: bytes(arena)},
                outputs,
                case.regs,
                case.spms,
                f"{case.kind}, rs2 = rs1 {delta:+d}",
            )
            results.append(outcome(f, c, rng))
    return results


# ---------------------------------------------------------------------------------------
# Toolchain and frontend subset
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("f", FILES, ids=_ids(FILES))
def test_riscv_syntax(f: CorpusFile) -> None:
    require_tool(RV_GCC, "gcc-riscv64-unknown-elf")
    res = subprocess.run([RV_GCC, *RV_FLAGS, str(f.path)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


_STDINT = "".join(
    f"typedef {c} {t};\n"
    for t, c in (
        ("int8_t", "signed char"),
        ("uint8_t", "unsigned char"),
        ("int16_t", "short"),
        ("uint16_t", "unsigned short"),
        ("int32_t", "int"),
        ("uint32_t", "unsigned int"),
        ("int64_t", "long long"),
        ("uint64_t", "unsigned long long"),
    )
)
_INT_WORDS = {"void", "char", "short", "int", "long", "signed", "unsigned"}
_STDINT_NAMES = {ln.split()[-1].rstrip(";") for ln in _STDINT.splitlines()}
_FORBIDDEN = (
    "FuncCall Break Continue Goto Label Switch Case Default DoWhile Struct Union Enum "
    "CompoundLiteral StructRef ExprList GenericSelection StaticAssert"
).split()
_STEP_OPS = {"p++", "p--", "++", "--"}


def subset_violations(path: Path) -> list[str]:
    """Constructs outside the C subset accepted by the matcher's frontend (see the brief
    in README.md): calls, jumps, switch, aggregates, floats, early returns, assignments or
    ++/-- inside expressions, the comma operator, pointer casts, address-of."""
    from pycparser import c_ast, c_parser

    lines = path.read_text().splitlines()
    code = "\n".join("" if ln.startswith("#include") else ln for ln in lines)
    pre = subprocess.run(  # line markers kept: pycparser reports the file's own lines
        [_gcc(), "-E", "-undef", "-nostdinc", "-x", "c", "-"],
        input=code,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ast = c_parser.CParser().parse(_STDINT + pre, str(path))
    bad: list[str] = []

    def where(node: c_ast.Node) -> str:
        return f"line {node.coord.line}" if node.coord else "?"

    def visit(node: c_ast.Node, stmt: bool) -> None:
        kind = type(node).__name__
        if kind in _FORBIDDEN:
            bad.append(f"{kind} at {where(node)}")
        elif kind == "IdentifierType":
            words = set(node.names)
            if not (words <= _INT_WORDS or (len(words) == 1 and words <= _STDINT_NAMES)):
                bad.append(f"type {' '.join(node.names)} at {where(node)}")
        elif kind == "Assignment" and not stmt:
            bad.append(f"assignment inside an expression at {where(node)}")
        elif kind == "UnaryOp":
            if node.op in _STEP_OPS and not stmt:
                bad.append(f"{node.op} inside an expression at {where(node)}")
            if node.op == "&":
                bad.append(f"address-of at {where(node)}")
        elif kind == "Cast" and isinstance(node.to_type.type, c_ast.PtrDecl):
            bad.append(f"pointer cast at {where(node)}")
        elif kind == "Return":
            bad.append(f"return not at the end of the function at {where(node)}")
        # Children in statement position: blocks, branches, loop bodies and for clauses.
        for name, child in node.children():
            child_stmt = (
                kind == "Compound"
                or (kind == "If" and name in ("iftrue", "iffalse"))
                or (kind in ("For", "While") and name in ("stmt", "init", "next"))
            )
            visit(child, child_stmt)

    funcs = [n for n in ast.ext if isinstance(n, c_ast.FuncDef)]
    if [f.decl.name for f in funcs] != ["kernel"]:
        bad.append(f"functions {[f.decl.name for f in funcs]}, expected exactly kernel")
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef):
            items = list(ext.body.block_items or [])
            if items and isinstance(items[-1], c_ast.Return):
                if items[-1].expr is not None:
                    visit(items[-1].expr, False)
                items = items[:-1]
            visit(ext.decl, False)
            for item in items:
                visit(item, True)
        elif not isinstance(ext, c_ast.Typedef):
            visit(ext, False)
    return bad


@pytest.mark.parametrize("f", FILES, ids=_ids(FILES))
def test_frontend_subset(f: CorpusFile) -> None:
    if f.realistic:  # written as applications are: the frontend itself must lower kernel
        from aquas.egraph.cfront import parse_c_file

        prog = parse_c_file(f.path)
        kernel = next(fn for fn in prog.functions if fn.name == "kernel")
        assert kernel.func is not None, [d.render() for d in prog.diagnostics]
        return
    bad = subset_violations(f.path)
    assert not bad, f"{f.name}: outside the matcher's C subset: {bad}"
