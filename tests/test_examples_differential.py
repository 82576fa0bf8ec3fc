"""Differential tests of the example ISAXs: golden interpreter vs. hand-written references.

For every ISAX of every ``examples/**/*.isax`` file, :data:`N_CASES` seeded random cases are
run on the interpreter and compared with the independent model in ``reference_models.py``:
``rd``, the final bytes of every output region, that nothing outside the output regions was
written, and the complete final extension state (registers and scratchpads).
"""

from __future__ import annotations

import functools
import random
import zlib
from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.interpreter import (
    ExecError,
    ExecResult,
    IsaxState,
    Memory,
    execute,
    find_extension,
    find_isax,
)
from aquas.spec.frontend import lower_spec_file

from reference_models import (
    DSP,
    LAYOUTS,
    LLM,
    MODELS,
    Case,
    Expected,
    biquad_step,
    fir_block,
    pack,
    signed,
)

ROOT = Path(__file__).resolve().parents[1]
# The naive variants (examples/*/naive/) keep their data elsewhere (state registers instead
# of scratchpads); tests/test_plans.py checks them against these specs on the interpreter.
EXAMPLE_FILES = sorted(
    p.relative_to(ROOT).as_posix()
    for p in (ROOT / "examples").rglob("*.isax")
    if p.parent.name != "naive"
)
N_CASES = 1000
# a whole NTT is 896 butterflies, about 0.1 s per call on the interpreter
FEWER_CASES = {"ntt_fwd": 150, "ntt_inv": 150}
MAX_REPORTED = 5


@functools.cache
def extension(spec: str) -> aq.ExtensionOp:
    return find_extension(lower_spec_file(ROOT / spec))


def isax_names(spec: str) -> list[str]:
    return [i.sym_name.data for i in extension(spec).isaxs()]


# ---------------------------------------------------------------------------------------
# The examples themselves
# ---------------------------------------------------------------------------------------


def test_examples_exist() -> None:
    assert len(EXAMPLE_FILES) >= 4, EXAMPLE_FILES
    assert sum(len(isax_names(s)) for s in EXAMPLE_FILES) >= 11


@pytest.mark.parametrize("spec", EXAMPLE_FILES)
def test_example_lowers(spec: str) -> None:
    try:
        ext = extension(spec)
    except AquasError as e:
        pytest.fail(e.render())
    assert list(ext.isaxs()), f"{spec} defines no ISAX"


def test_registry_covers_every_isax() -> None:
    declared = {(spec, name) for spec in EXAMPLE_FILES for name in isax_names(spec)}
    missing = sorted(declared - MODELS.keys())
    stale = sorted(MODELS.keys() - declared)
    assert not missing, f"ISAXs without a reference model in reference_models.py: {missing}"
    assert not stale, f"reference models for ISAXs no example defines: {stale}"


@pytest.mark.parametrize("spec", EXAMPLE_FILES)
def test_state_layout_matches_spec(spec: str) -> None:
    """The references' picture of each extension's state is the one the spec declares."""
    ext = extension(spec)
    assert spec in LAYOUTS, f"no state layout for {spec} in reference_models.LAYOUTS"
    lay = LAYOUTS[spec]
    regs = {
        s.sym_name.data: (s.width, int(s.init.value.data) & ((1 << s.width) - 1))
        for s in ext.states()
    }
    spms = {p.sym_name.data: (p.width, p.size) for p in ext.scratchpads()}
    assert regs == lay.regs
    assert spms == lay.spms


@pytest.mark.parametrize("spec", EXAMPLE_FILES)
def test_encodings(spec: str) -> None:
    """One custom opcode per domain and a distinct funct7 per ISAX."""
    ext = extension(spec)
    domain = Path(spec).parent.name
    want = {"pointcloud": "custom0", "llm": "custom1", "crypto": "custom2", "dsp": "custom3"}
    opcodes = {i.opcode_value for i in ext.isaxs()}
    funct7s = [i.funct7_value for i in ext.isaxs()]
    if domain in want:
        assert opcodes == {aq.CUSTOM_OPCODES[want[domain]]}
    assert len(set(funct7s)) == len(funct7s)


# ---------------------------------------------------------------------------------------
# Differential runs
# ---------------------------------------------------------------------------------------


def run_case(isax: aq.IsaxOp, case: Case) -> tuple[ExecResult, Memory, Memory]:
    mem = Memory()
    for base, data in case.mem.items():
        mem.load_image(base, data)
    before = mem.copy()
    state = IsaxState(dict(case.regs), {k: list(v) for k, v in case.spms.items()})
    res = execute(isax, case.rs1, case.rs2, mem, state)
    return res, before, mem


def in_outputs(addr: int, size: int, outputs: list[tuple[int, int]]) -> bool:
    return any(b <= addr and addr + size <= b + n for b, n in outputs)


def compare(case: Case, exp: Expected, res: ExecResult, before: Memory, mem: Memory) -> list[str]:
    problems: list[str] = []
    if res.rd != exp.rd:
        got = "None" if res.rd is None else f"{res.rd:#010x}"
        want = "None" if exp.rd is None else f"{exp.rd:#010x}"
        problems.append(f"rd: got {got}, expected {want}")
    for w in res.writes:
        if not in_outputs(w.addr, w.size, case.outputs):
            problems.append(f"write of {w.size} bytes at {w.addr:#010x} outside the output regions")
    changed = [
        a
        for a in mem.bytes.keys() | before.bytes.keys()
        if mem.bytes.get(a, 0) != before.bytes.get(a, 0)
    ]
    problems += [
        f"byte at {a:#010x} changed outside the output regions"
        for a in sorted(changed)
        if not in_outputs(a, 1, case.outputs)
    ]
    assert sorted(exp.out) == sorted(b for b, _ in case.outputs), "reference/generator disagree"
    for base, n in case.outputs:
        got_b = bytes(mem.bytes.get(base + i, 0) for i in range(n))
        if got_b != exp.out[base]:
            problems.append(
                f"output region {base:#010x}: got {got_b.hex()}, expected {exp.out[base].hex()}"
            )
    if res.state.regs != exp.regs:
        diff = {
            k: (res.state.regs.get(k), exp.regs.get(k))
            for k in res.state.regs.keys() | exp.regs.keys()
            if res.state.regs.get(k) != exp.regs.get(k)
        }
        problems.append(f"state registers (got, expected): {diff}")
    for name in res.state.spms.keys() | exp.spms.keys():
        got_s, want_s = res.state.spms.get(name), exp.spms.get(name)
        if got_s != want_s:
            problems.append(f"scratchpad {name}: got {got_s}, expected {want_s}")
    return problems


def seed_of(spec: str, name: str) -> int:
    return zlib.crc32(f"{spec}:{name}".encode())


@pytest.mark.parametrize(
    ("spec", "name"), sorted(MODELS), ids=lambda v: Path(v).stem if "/" in v else v
)
def test_differential(spec: str, name: str) -> None:
    isax = find_isax(extension(spec), name)
    model = MODELS[spec, name]
    rng = random.Random(seed_of(spec, name))
    failures: list[str] = []
    n_failed = 0
    n_cases = FEWER_CASES.get(name, N_CASES)
    for n in range(n_cases):
        case = model.gen(rng)
        exp = model.ref(case)
        try:
            res, before, mem = run_case(isax, case)
        except ExecError as e:
            problems = [f"ExecError: {e}"]
        else:
            problems = compare(case, exp, res, before, mem)
        if problems:
            n_failed += 1
            if len(failures) < MAX_REPORTED:
                failures.append(
                    f"case {n} ({case.kind}) rs1={case.rs1:#010x} rs2={case.rs2:#010x}:\n    "
                    + "\n    ".join(problems)
                )
    assert not n_failed, f"{n_failed}/{n_cases} mismatches for {name}:\n" + "\n".join(failures)


# ---------------------------------------------------------------------------------------
# Multi-invocation sequences: state carried from one ISAX to the next
# ---------------------------------------------------------------------------------------


def test_dot4_sequence() -> None:
    """dot4_clr preloads a bias, dot4_i8 accumulates a long dot product, dot4_clr reads it."""
    ext = extension(LLM)
    dot, clr = find_isax(ext, "dot4_i8"), find_isax(ext, "dot4_clr")
    rng = random.Random(7)
    for _ in range(20):
        n = rng.randint(1, 64)
        a = [rng.randint(-128, 127) for _ in range(4 * n)]
        b = [rng.randint(-128, 127) for _ in range(4 * n)]
        bias = rng.randint(-(1 << 31), (1 << 31) - 1)
        st = IsaxState.reset(ext)
        st.regs["dacc"] = rng.getrandbits(32)
        st = execute(clr, bias & 0xFFFFFFFF, 0, Memory(), st).state
        for k in range(n):
            w1 = int.from_bytes(pack(a[4 * k : 4 * k + 4], 1), "little")
            w2 = int.from_bytes(pack(b[4 * k : 4 * k + 4], 1), "little")
            st = execute(dot, w1, w2, Memory(), st).state
        total = execute(clr, 0, 0, Memory(), st)
        want = (bias + sum(x * y for x, y in zip(a, b, strict=True))) & 0xFFFFFFFF
        assert total.rd == want
        assert total.state.regs["dacc"] == 0


def test_fir_stream() -> None:
    """fir_load_taps once, then fir8 over consecutive overlapping blocks of one signal."""
    ext = extension(DSP)
    load, fir = find_isax(ext, "fir_load_taps"), find_isax(ext, "fir8")
    rng = random.Random(11)
    blocks = 6
    h = [rng.randint(-(1 << 15), (1 << 15) - 1) for _ in range(8)]
    x = [rng.randint(-(1 << 15), (1 << 15) - 1) for _ in range(7 + 16 * blocks)]
    mem = Memory()
    mem.load_image(0x1000, pack(h, 2))
    mem.load_image(0x2000, pack(x, 2))
    st = execute(load, 0x1000, 0, mem).state
    for blk in range(blocks):
        st = execute(fir, 0x2000 + 32 * blk, 0x8000 + 64 * blk, mem, st).state
    got = mem.read_words(0x8000, 4, 16 * blocks)
    assert got == [v & 0xFFFFFFFF for v in fir_block(h, x)]


def test_biquad_stream() -> None:
    """biquad_load then a stream of samples through biquad (a stable low-pass section)."""
    ext = extension(DSP)
    load, step = find_isax(ext, "biquad_load"), find_isax(ext, "biquad")
    rng = random.Random(13)
    # b = (0.0675, 0.135, 0.0675), a1 = -1.143, a2 = 0.413 in Q2.14, plus a random filter.
    for coef in (
        [1106, 2212, 1106, -18727, 6767],
        [rng.randint(-(1 << 15), (1 << 15) - 1) for _ in range(5)],
    ):
        mem = Memory()
        mem.load_image(0x400, pack(coef, 2))
        st = IsaxState.reset(ext)
        st.regs["bq_x1"] = 123  # biquad_load must clear the history
        st = execute(load, 0x400, 0, mem, st).state
        ref = dict(zip(("b0", "b1", "b2", "a1", "a2"), coef, strict=True))
        hist = {"x1": 0, "x2": 0, "y1": 0, "y2": 0}
        for _ in range(300):
            x = rng.choice([rng.randint(-(1 << 15), (1 << 15) - 1), -(1 << 15), (1 << 15) - 1, 0])
            res = execute(step, x & 0xFFFFFFFF, 0, mem, st)
            st = res.state
            want = biquad_step(ref, hist, x)
            assert res.rd is not None and signed(res.rd, 32) == want


def test_biquad_save_restore_survives_a_context_switch() -> None:
    """Two filters take turns on one unit: each turn is biquad_load, biquad_restore of its
    own history, a few samples, biquad_save. The outputs are those of each filter running
    alone (the reference model), and the saved history is exactly the state the next turn
    needs, in the documented layout x1, x2, y1, y2."""
    ext = extension(DSP)
    load, step = find_isax(ext, "biquad_load"), find_isax(ext, "biquad")
    save, restore = find_isax(ext, "biquad_save"), find_isax(ext, "biquad_restore")
    rng = random.Random(21)
    coefs = [[1106, 2212, 1106, -18727, 6767], [4000, -3000, 2000, -9000, 5000]]
    mem = Memory()
    for k, coef in enumerate(coefs):
        mem.load_image(0x400 + 0x20 * k, pack(coef, 2))
        mem.load_image(0x800 + 0x20 * k, pack([0, 0, 0, 0], 2))
    refs = [dict(zip(("b0", "b1", "b2", "a1", "a2"), c, strict=True)) for c in coefs]
    hists = [{"x1": 0, "x2": 0, "y1": 0, "y2": 0} for _ in coefs]
    st = IsaxState.reset(ext)
    for turn in range(40):
        k = turn % 2
        st = execute(load, 0x400 + 0x20 * k, 0, mem, st).state
        st = execute(restore, 0x800 + 0x20 * k, 0, mem, st).state
        for _ in range(rng.randint(0, 7)):
            x = rng.randint(-(1 << 15), (1 << 15) - 1)
            res = execute(step, x & 0xFFFFFFFF, 0, mem, st)
            st = res.state
            assert res.rd is not None and signed(res.rd, 32) == biquad_step(refs[k], hists[k], x)
        res = execute(save, 0x800 + 0x20 * k, 0, mem, st)
        assert res.rd is None and len(res.writes) == 4
        st = res.state
        saved = [signed(mem.read(0x800 + 0x20 * k + 2 * j, 2), 16) for j in range(4)]
        assert saved == [hists[k][n] for n in ("x1", "x2", "y1", "y2")]
