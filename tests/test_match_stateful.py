"""Stateful filter ISAXs as patterns (egraph/stateful.py, egraph/stateful_loop.py): the DSP
extension's biquad keeps its history x1, x2, y1, y2 in unit state, set by biquad_load
(coefficients) and biquad_restore (history), written back by biquad_save. A loop whose
iteration reads the history from struct fields, filters one sample and writes the history
back becomes load + restore, one biquad call per sample, save -- under a run-time guard
that the samples do not overlap the state. Near misses (history shifted in the wrong
order, another rounding, a field not written back, state touched by other code, history in
locals) stay in software; the final check catches an emitter that forgets the save or the
restore."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from aquas.egraph import emit
from aquas.egraph.driver import MatchResult, load_patterns, match_file
from aquas.egraph.emit import rewrite_c
from aquas.egraph.matcher import Options
from aquas.egraph.stateful import filter_pattern
from aquas.interpreter import find_extension
from aquas.spec.frontend import lower_spec

ROOT = Path(__file__).resolve().parents[1]
DSP = ROOT / "examples/dsp/dsp.isax"


@functools.cache
def _patterns():  # type: ignore[no-untyped-def]
    return load_patterns(DSP, soc="picorv32")


def _match(tmp_path: Path, text: str) -> MatchResult:
    app = tmp_path / "app.c"
    app.write_text(text)
    return match_file(app, DSP, patterns=_patterns(), options=Options(core="picorv32"))


BIQUAD = """#include <stdint.h>
typedef struct { int16_t b0, b1, b2, a1, a2; } coef_t;
typedef struct { int16_t x1, x2, y1, y2; } hist_t;

static inline int16_t sat16(int32_t v)
{
    if (v > 32767)
        return 32767;
    if (v < -32768)
        return -32768;
    return (int16_t)v;
}

void section(const coef_t *k, hist_t *st, int16_t *buf, int n)
{
    for (int i = 0; i < n; i++) {
        int16_t x = buf[i];
        int64_t acc = (int64_t)k->b0 * x + (int64_t)k->b1 * st->x1 + (int64_t)k->b2 * st->x2
                      - (int64_t)k->a1 * st->y1 - (int64_t)k->a2 * st->y2;
        int32_t y = (int32_t)((acc + (1 << 13)) >> 14);
        int16_t yq = sat16(y);
        st->x2 = st->x1;
        st->x1 = x;
        st->y2 = st->y1;
        st->y1 = yq;
        buf[i] = yq;
    }
}
"""


def _decision(res: MatchResult, isax: str = "biquad"):  # type: ignore[no-untyped-def]
    [d] = [d for d in res.decisions if d.isax == isax]
    return d


def test_biquad_is_a_filter_with_load_restore_and_save() -> None:
    _, pats = _patterns()
    p = next(p for p in pats if p.name == "biquad")
    assert p.kind == "stateful" and p.filter is not None
    f = p.filter
    assert f.carried == ("bq_x1", "bq_x2", "bq_y1", "bq_y2")
    assert f.coefficients == ("bq_a1", "bq_a2", "bq_b0", "bq_b1", "bq_b2")
    assert f.operands == ("rs1",)
    assert f.isaxs == ("biquad_load", "biquad_restore", "biquad", "biquad_save")
    assert f.saver.slots == (("bq_x1", 0, 16), ("bq_x2", 2, 16), ("bq_y1", 4, 16), ("bq_y2", 6, 16))
    assert f.restorer.slots == f.saver.slots
    assert f.loader is not None and f.loader.slot("bq_a2") == (8, 16)
    kinds = {q.name: q.kind for q in pats}
    assert kinds["biquad_save"] == kinds["biquad_load"] == "unsupported"


def _ext(body: str):  # type: ignore[no-untyped-def]
    head = "extension t;\nstate c: i16 = 0;\nstate h: i16 = 0;\n"
    return find_extension(lower_spec(head + body, "t.isax"))


STEP = """#[opcode(custom0), funct7(0)]
isax step(rs1) -> rd { let y: i16 = c * h + trunc<i16>(rs1); h = y; return sext<i32>(y); }
#[opcode(custom0), funct7(1)]
isax load(rs1) { c = mem<i16>[rs1]; h = 0; }
"""
SAVE = "#[opcode(custom0), funct7(2)]\nisax save(rs1) { mem<i16>[rs1] = h; }\n"
RESTORE = "#[opcode(custom0), funct7(3)]\nisax restore(rs1) { h = mem<i16>[rs1]; }\n"


def test_what_is_not_a_filter() -> None:
    """Without a save, or a restore of the saved layout, the state cannot stand for
    memory: the ISAX stays a non-pattern, with the reason."""
    ext = _ext(STEP + RESTORE)
    assert filter_pattern(next(iter(ext.isaxs())), ext) == (
        "no ISAX of the extension saves the state step updates (@h) to memory"
    )
    ext = _ext(STEP + SAVE)
    assert filter_pattern(next(iter(ext.isaxs())), ext) == (
        "no ISAX of the extension restores the state step updates from the layout save saves"
    )
    ext = _ext(STEP + SAVE + RESTORE.replace("mem<i16>[rs1]", "mem<i16>[rs1 + 2]"))
    assert "restores" in str(filter_pattern(next(iter(ext.isaxs())), ext))
    ext = _ext(STEP + SAVE + RESTORE)
    f = filter_pattern(next(iter(ext.isaxs())), ext)
    assert not isinstance(f, str) and f.isaxs == ("load", "restore", "step", "save")


def test_biquad_section_becomes_load_restore_calls_save(tmp_path: Path) -> None:
    res = _match(tmp_path, BIQUAD)
    new = rewrite_c(res)
    [d] = res.matched
    assert d.isax == "biquad" and d.binding is not None
    assert "5 component(s)" in d.binding.proof
    # trials where the original itself crashes (a random n past the buffer) are discarded
    m = re.search(r"final check: same outputs and memory on (\d+) random inputs", d.binding.proof)
    assert m is not None and int(m.group(1)) >= 8, d.binding.proof
    load = "aquas_biquad_load(((uint32_t)(uintptr_t)&k->b0));"
    restore = "aquas_biquad_restore(((uint32_t)(uintptr_t)&st->x1));"
    save = "aquas_biquad_save(((uint32_t)(uintptr_t)&st->x1));"
    call = (
        "*(uint16_t *)(uintptr_t)((uint32_t)(uintptr_t)buf + 2u * (uint32_t)i) = "
        "(uint16_t)aquas_biquad((uint32_t)(uint16_t)(*(const uint16_t *)(uintptr_t)"
        "((uint32_t)(uintptr_t)buf + 2u * (uint32_t)i + 0u)));"
    )
    at = [new.index(x) for x in (load, restore, "for (int i = 0; i < n; i++)", call, save)]
    assert at == sorted(at)
    # the guard: the loop runs, and the samples [buf, buf + 2n + 2) miss the history
    # [st, st + 1) and the coefficients [k, k + 1), which miss each other; else the
    # original loop
    assert "((int32_t)0u < (int32_t)(uint32_t)n ? 1u : 0u)" in new
    end = "((uint32_t)(uintptr_t)buf + 2u * (uint32_t)n + 2u)"
    buf = "((uint32_t)(uintptr_t)buf)"
    st, st1 = "((uint32_t)(uintptr_t)&st->x1)", "((uint32_t)(uintptr_t)&st[1].x1)"
    k, k1 = "((uint32_t)(uintptr_t)&k->b0)", "((uint32_t)(uintptr_t)&k[1].b0)"
    assert f"({end} <= {st} || {st1} <= {buf})" in new
    assert f"({end} <= {k} || {k1} <= {buf})" in new
    assert f"({st1} <= {k} || {k1} <= {st})" in new
    assert "} else\n            for (int i = 0; i < n; i++) {" in new
    assert d.sw_cycles > 5 * d.hw_cycles  # one biquad per sample against ~40 instructions


def test_the_dsp_application_biquad_cascade_is_matched() -> None:
    """examples/dsp/app/filters.c as written: the section's state is &s[sec], its
    coefficients &c[sec] (struct pointers spelled as members for the host's layout)."""
    res = match_file(
        ROOT / "examples/dsp/app/filters.c",
        DSP,
        functions=["biquad_cascade"],
        patterns=_patterns(),
        options=Options(core="picorv32"),
    )
    new = rewrite_c(res)
    [d] = res.matched
    assert d.isax == "biquad" and d.line == 47 and d.binding is not None
    assert "final check: same outputs and memory" in d.binding.proof
    assert "aquas_biquad_load(((uint32_t)(uintptr_t)&c[sec].b0));" in new
    assert "aquas_biquad_restore(((uint32_t)(uintptr_t)&s[sec].x1));" in new
    assert "aquas_biquad_save(((uint32_t)(uintptr_t)&s[sec].x1));" in new


@pytest.mark.parametrize(
    ("change", "reason", "detail"),
    [
        # the history shifted in the wrong order: x2 gets the new sample, not the old x1
        (
            ("st->x2 = st->x1;\n        st->x1 = x;", "st->x1 = x;\n        st->x2 = st->x1;"),
            "value mismatch",
            "the value stored to @bq_x2 differs",
        ),
        # another rounding: half of 2^13
        (("(1 << 13)", "(1 << 12)"), "value mismatch", "the value stored to @bq_y1 differs"),
        # truncation instead of rounding
        (("(acc + (1 << 13)) >> 14", "acc >> 14"), "value mismatch", "@bq_y1 differs"),
        # y2 not written back: the history is not carried whole
        (("st->y2 = st->y1;\n", ""), "footprint mismatch", "3 loop-invariant location(s)"),
        # other code touches the state every sample
        (
            ("buf[i] = yq;", "buf[i] = yq;\n        st->x2 += 1;"),
            "value mismatch",
            "@bq_x2 differs",
        ),
        # a counter next to the history
        (
            ("buf[i] = yq;", "buf[i] = yq;\n        ((int16_t *)st)[4] += 1;"),
            "footprint mismatch",
            "5 loop-invariant location(s)",
        ),
        # no saturation
        (("int16_t yq = sat16(y);", "int16_t yq = (int16_t)y;"), "value mismatch", "differs"),
        # the output stored before the sample is read (a later sample, when n > 1 aliases)
        (
            (
                "        int16_t x = buf[i];\n",
                "        buf[i + 1] = 0;\n        int16_t x = buf[i];\n",
            ),
            "dependence",
            "stores a sample before it loads another",
        ),
    ],
)
def test_near_misses_stay_in_software(
    tmp_path: Path, change: tuple[str, str], reason: str, detail: str
) -> None:
    assert change[0] in BIQUAD
    res = _match(tmp_path, BIQUAD.replace(change[0], change[1]))
    new = rewrite_c(res)
    assert not res.matched and "aquas_biquad" not in new
    d = _decision(res)
    assert d.reason == reason and detail in d.detail, (d.reason, d.detail)


def test_history_in_locals_is_matched_and_copied_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history kept in local variables across iterations (loaded before the loop,
    stored after): the carried locals are the unit's history, moved in and out through a
    static buffer (tests/test_match_loops.py runs such a rewrite on the ISS). An emitter
    that forgets to copy the saved history back into the locals is refused by the final
    check."""
    text = BIQUAD.replace(
        "    for (int i = 0; i < n; i++) {",
        "    int16_t x1 = st->x1, x2 = st->x2, y1 = st->y1, y2 = st->y2;\n"
        "    for (int i = 0; i < n; i++) {",
    )
    body = text[text.index("int16_t x = buf[i];") :]
    body = body.replace("st->", "").replace("x2 = x1;", "x2 = x1;")
    text = text[: text.index("int16_t x = buf[i];")] + body
    text = text.replace(
        "        buf[i] = yq;\n    }\n}",
        "        buf[i] = yq;\n    }\n    st->x1 = x1; st->x2 = x2; st->y1 = y1; st->y2 = y2;\n}",
    )
    res = _match(tmp_path, text)
    new = rewrite_c(res)
    [d] = res.matched
    assert d.filter is not None and d.filter.hist_locals == ("x1", "x2", "y1", "y2")
    assert d.binding is not None and "final check: same outputs" in d.binding.proof
    assert "x1 = (int16_t)aquas_hist[0];" in new
    real = emit._filter_text

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        return "\n".join(
            ln for ln in real(*args, **kwargs).split("\n") if "= (int16_t)aquas_hist" not in ln
        )

    monkeypatch.setattr(emit, "_filter_text", broken)
    res = _match(tmp_path, text)
    assert rewrite_c(res) == text and not res.matched
    d = _decision(res)
    assert d.reason == "final check" and "differs" in d.detail, d.detail


@pytest.mark.parametrize("dropped", ["aquas_biquad_save", "aquas_biquad_restore"])
def test_final_check_refuses_a_missing_save_or_restore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dropped: str
) -> None:
    """An emitter that forgets to save the history (the struct keeps its old values) or to
    restore it (the unit starts from cleared history): the golden ISAXs, with their state
    kept from call to call, make the final check fail."""
    real = emit._filter_text

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        return "\n".join(ln for ln in real(*args, **kwargs).split("\n") if dropped not in ln)

    monkeypatch.setattr(emit, "_filter_text", broken)
    res = _match(tmp_path, BIQUAD)
    new = rewrite_c(res)
    assert not res.matched and "aquas_biquad(" not in new
    d = _decision(res)
    assert d.reason == "final check" and "differs" in d.detail, d.detail


def test_vexriscv_matches_the_reencoded_filter(tmp_path: Path) -> None:
    """On VexRiscv (custom-0 only) the four ISAXs are matched on their re-encoded opcodes."""
    app = tmp_path / "app.c"
    app.write_text(BIQUAD)
    res = match_file(app, DSP, soc="vexriscv")
    rewrite_c(res)
    [d] = res.matched
    assert d.isax == "biquad"


# A C model of the four ISAXs, written from dsp.isax's header comment, for running the
# rewrite natively: the unit's state is static, as in the hardware.
BIQUAD_STUB = """#include <stdint.h>
static int16_t bq_b0, bq_b1, bq_b2, bq_a1, bq_a2, bq_x1, bq_x2, bq_y1, bq_y2;
static inline void aquas_biquad_load(uint32_t a)
{
    const int16_t *p = (const int16_t *)(uintptr_t)a;
    bq_b0 = p[0]; bq_b1 = p[1]; bq_b2 = p[2]; bq_a1 = p[3]; bq_a2 = p[4];
    bq_x1 = bq_x2 = bq_y1 = bq_y2 = 0;
}
static inline void aquas_biquad_restore(uint32_t a)
{
    const int16_t *p = (const int16_t *)(uintptr_t)a;
    bq_x1 = p[0]; bq_x2 = p[1]; bq_y1 = p[2]; bq_y2 = p[3];
}
static inline void aquas_biquad_save(uint32_t a)
{
    int16_t *p = (int16_t *)(uintptr_t)a;
    p[0] = bq_x1; p[1] = bq_x2; p[2] = bq_y1; p[3] = bq_y2;
}
static inline uint32_t aquas_biquad(uint32_t r)
{
    int16_t x = (int16_t)r;
    int64_t acc = (int64_t)bq_b0 * x + (int64_t)bq_b1 * bq_x1 + (int64_t)bq_b2 * bq_x2
                  - (int64_t)bq_a1 * bq_y1 - (int64_t)bq_a2 * bq_y2;
    int64_t q = (acc + 8192) >> 14;
    int16_t y = q > 32767 ? 32767 : q < -32768 ? -32768 : (int16_t)q;
    bq_x2 = bq_x1; bq_x1 = x; bq_y2 = bq_y1; bq_y1 = y;
    return (uint32_t)(int32_t)y;
}
"""

# Every placement of a 24-sample buffer around the history (arena[100..104)) and the
# coefficients (arena[110..115)), overlapping them or not; the whole arena is printed.
ALIAS_MAIN = """#include <stdint.h>
#include <stdio.h>
typedef struct { int16_t b0, b1, b2, a1, a2; } coef_t;
typedef struct { int16_t x1, x2, y1, y2; } hist_t;
void section(const coef_t *k, hist_t *st, int16_t *buf, int n);
static int16_t arena[256];
int main(void)
{
    for (int o = 70; o < 130; o++) {
        uint32_t seed = 12345u + (uint32_t)o;
        for (int j = 0; j < 256; j++) {
            seed = seed * 1103515245u + 12345u;
            arena[j] = (int16_t)(seed >> 16) >> 2;
        }
        arena[110] = 1106; arena[111] = 2212; arena[112] = 1106;
        arena[113] = -18727; arena[114] = 6767;
        section((const coef_t *)&arena[110], (hist_t *)&arena[100], &arena[o], 24);
        unsigned long h = 0;
        for (int j = 0; j < 256; j++)
            h = h * 31u + (uint16_t)arena[j];
        printf("%d %lu\\n", o, h);
    }
    return 0;
}
"""


def test_the_guard_runs_the_original_when_samples_overlap_the_state(tmp_path: Path) -> None:
    """Natively, with the ISAXs modelled in C: for every placement of the samples around
    the history and the coefficients, the rewrite leaves the same memory as the original
    (overlapping placements take the original loop). Control: with the guard forced
    true, overlapping placements differ -- the overlap is observable, so the guard matters."""
    import subprocess

    from helpers import require_tool

    require_tool("gcc", "gcc")
    res = _match(tmp_path, BIQUAD)
    new = rewrite_c(res)
    assert len(res.matched) == 1
    start = new.index("        if ((((int32_t)0u")
    forced = new[:start] + "        if (1 || " + new[start + len("        if (") :]
    outs = {}
    for which, text in (("orig", BIQUAD), ("new", new), ("forced", forced)):
        d = tmp_path / which
        d.mkdir()
        (d / "app.c").write_text(text)
        (d / "main.c").write_text(ALIAS_MAIN)
        (d / "aquas_isax.h").write_text(BIQUAD_STUB)
        exe = d / "run"
        subprocess.run(
            ["gcc", "-O1", "-fwrapv", "-no-pie", f"-I{d}", str(d / "main.c"), str(d / "app.c"),
             "-o", str(exe)],
            check=True,
        )  # fmt: skip
        lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
        outs[which] = dict(ln.split() for ln in lines.splitlines())
    assert len(outs["orig"]) == 60
    assert outs["new"] == outs["orig"]
    differ = {o for o in outs["orig"] if outs["forced"][o] != outs["orig"][o]}
    # buf = arena[o..o+24) overlaps the history or the coefficients for o in 77..114
    assert differ and differ <= {str(o) for o in range(77, 115)}
    assert all(outs["forced"][str(o)] == outs["orig"][str(o)] for o in (70, 76, 115, 129))


@pytest.mark.parametrize(
    "change",
    [
        ("st->x2 = st->x1;\n        st->x1 = x;", "st->x1 = x;\n        st->x2 = st->x1;"),
        ("(1 << 13)", "(1 << 12)"),
        ("st->y2 = st->y1;\n", "st->y2 = st->x1;\n"),
    ],
)
def test_final_check_alone_refuses_near_misses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: tuple[str, str]
) -> None:
    """With the matcher's random filter and proof forced to accept, the near misses reach
    the emitter: the final check (original against rewrite, golden ISAXs with their state
    kept from call to call) must refuse each on its own. (Not a missing saturation: the
    check's struct members are small in the trials whose trip count is small, so the
    filter never saturates there; the matcher's proof refuses that one.)"""
    from aquas.egraph.matcher import Matcher

    monkeypatch.setattr(Matcher, "random_equal", lambda self, pairs: True)
    real = Matcher.prove

    def forced(self, pairs):  # type: ignore[no-untyped-def]
        _, prover = real(self, [])
        return True, prover

    monkeypatch.setattr(Matcher, "prove", forced)
    res = _match(tmp_path, BIQUAD.replace(*change))
    assert [d.isax for d in res.matched] == ["biquad"]  # forced through the matcher
    new = rewrite_c(res)
    assert not res.matched and "aquas_biquad(" not in new
    d = _decision(res)
    assert d.reason == "final check" and "differs" in d.detail, d.detail


HOISTED = BIQUAD.replace(
    "    for (int i = 0; i < n; i++) {",
    "    int16_t b0 = k->b0, b1 = k->b1, b2 = k->b2, a1 = k->a1, a2 = k->a2;\n"
    "    for (int i = 0; i < n; i++) {",
).replace(
    "(int64_t)k->b0 * x + (int64_t)k->b1 * st->x1 + (int64_t)k->b2 * st->x2\n"
    "                      - (int64_t)k->a1 * st->y1 - (int64_t)k->a2 * st->y2",
    "(int64_t)b0 * x + (int64_t)b1 * st->x1 + (int64_t)b2 * st->x2\n"
    "                      - (int64_t)a1 * st->y1 - (int64_t)a2 * st->y2",
)


def test_coefficients_loaded_before_the_loop(tmp_path: Path) -> None:
    """Coefficients read into locals before the loop are the loader's memory when nothing
    stores in between; a store between them and the loop (the memory may then differ from
    the locals) keeps the loop in software."""
    assert HOISTED != BIQUAD and "k->b0 * x" not in HOISTED
    res = _match(tmp_path, HOISTED)
    new = rewrite_c(res)
    [d] = res.matched
    assert d.binding is not None and "final check: same outputs" in d.binding.proof
    assert "aquas_biquad_load(((uint32_t)(uintptr_t)&k->b0));" in new
    stored = HOISTED.replace(
        "    for (int i = 0; i < n; i++) {", "    buf[0] = 1;\n    for (int i = 0; i < n; i++) {"
    )
    res = _match(tmp_path, stored)
    rewrite_c(res)
    assert not res.matched
    assert "does not read the memory biquad_load loads" in _decision(res).detail


# -- fir8: taps in a scratchpad, filled by fir_load_taps right before each call ----------

FIR8 = """#include <stdint.h>
/* x holds 7 samples of history, then the new ones */
void fir(const int16_t *restrict h, const int16_t *restrict x, int32_t *restrict y, int n)
{
    for (int i = 0; i < n; i++) {
        int32_t acc = 0;
        for (int k = 0; k < 8; k++)
            acc += h[k] * x[i + 7 - k];
        y[i] = acc;
    }
}
"""


def test_fir8_reads_its_taps_through_fir_load_taps() -> None:
    _, pats = _patterns()
    p = next(p for p in pats if p.name == "fir8")
    assert p.kind == "memory" and p.preload == "fir_load_taps"
    assert p.fx is not None
    taps = sorted(str(a.addr) for a in p.fx.reads if "rs3" in str(a.addr))
    assert len(taps) == 8 and "rs3" in taps


def test_fir_loop_becomes_load_taps_and_fir8_chunks(tmp_path: Path) -> None:
    """An 8-tap FIR over n outputs: chunks of 16 (the outputs fir8 writes; its window of 23
    samples reads more than 16 iterations do), each call after fir_load_taps(h); the
    original loop does the remainder."""
    res = _match(tmp_path, FIR8)
    new = rewrite_c(res)
    [d] = res.matched
    assert d.isax == "fir8" and d.binding is not None and d.binding.chunk == 16
    assert "final check: same outputs" in d.binding.proof
    assert "for (; i + 15 < (n); i += 16)" in new
    assert (
        "(aquas_fir_load_taps((uint32_t)(uintptr_t)h), aquas_fir8(2u * (uint32_t)i + "
        "(uint32_t)(uintptr_t)x, 4u * (uint32_t)i + (uint32_t)(uintptr_t)y));"
    ) in new
    assert "for (; i < n; i++)" in new


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (("h[k] * x", "h[7 - k] * x"), "value mismatch"),  # taps reversed (correlation)
        (("int32_t acc = 0;", "int16_t acc = 0;"), "value mismatch"),  # a 16-bit sum
        (("acc += h[k]", "acc += (int16_t)h[k]"), None),  # the same (a no-op cast)
        # the window one sample later is fir8 on x + 1 (a correct match, not a near miss)
        (("x[i + 7 - k]", "x[i + 8 - k]"), None),
    ],
)
def test_fir_near_misses(tmp_path: Path, change: tuple[str, str], reason: str | None) -> None:
    res = _match(tmp_path, FIR8.replace(*change))
    new = rewrite_c(res)
    if reason is None:
        assert [d.isax for d in res.matched] == ["fir8"] and "aquas_fir8(" in new
        return
    assert not res.matched and "aquas_fir8" not in new
    reasons = {d.reason for d in res.decisions if d.isax == "fir8"}
    assert reason in reasons, reasons


def test_final_check_refuses_fir8_without_its_taps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without fir_load_taps the unit's taps are whatever it last held (zero after reset):
    the final check must refuse the rewrite."""
    real = emit._call

    def no_taps(d, names):  # type: ignore[no-untyped-def]
        call = real(d, names)
        return call[call.index("aquas_fir8(") : -1] if "aquas_fir_load_taps" in call else call

    monkeypatch.setattr(emit, "_call", no_taps)
    res = _match(tmp_path, FIR8)
    new = rewrite_c(res)
    assert not res.matched and "aquas_fir8" not in new
    d = _decision(res, "fir8")
    assert d.reason == "final check", d.detail


def test_mlir_rewrite_calls_fir_load_taps_before_fir8(tmp_path: Path) -> None:
    """MLIR input (the C frontend's own output for a 16-output block): the rewrite calls
    fir_load_taps on the taps' argument right before fir8, and declares both."""
    from aquas.egraph import cfront
    from aquas.egraph.emit import rewrite_mlir

    block = FIR8.replace("int n)", "int n_unused)").replace("i < n;", "i < 16;")
    prog = cfront.parse_c(block, "fir.c")
    app = tmp_path / "fir.mlir"
    app.write_text(str(prog.module))
    res = match_file(app, DSP, patterns=_patterns(), options=Options(core="picorv32"))
    [d] = res.matched
    assert d.isax == "fir8"
    text = str(rewrite_mlir(res))
    load = text.index("func.call @aquas_fir_load_taps(")
    assert load < text.index("func.call @aquas_fir8(")
    assert "func.func private @aquas_fir_load_taps(i32) -> ()" in text
