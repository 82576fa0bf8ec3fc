"""Regression tests of the matcher defects found on application code (issue: "Matcher on
real application code"), and of the final check that runs every rewrite against the
original before it is emitted."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from click.testing import CliRunner

from aquas.cli import main
from aquas.egraph import emit
from aquas.egraph.driver import MatchResult, load_patterns, match_file
from aquas.egraph.emit import rewrite_c
from aquas.egraph.matcher import FINAL, TARGET, Options

from helpers import without_vdot32

ROOT = Path(__file__).resolve().parents[1]
KYBER = ROOT / "examples/crypto/kyber.isax"
POINTCLOUD = ROOT / "examples/pointcloud/pointcloud.isax"


@functools.cache
def _patterns(spec: Path, soc: str):  # type: ignore[no-untyped-def]
    return without_vdot32(load_patterns(spec, soc=soc))  # strip-mining into vdot16


def _match(tmp_path: Path, text: str, spec: Path, soc: str = "picorv32") -> MatchResult:
    app = tmp_path / "app.c"
    app.write_text(text)
    return match_file(
        app, spec, patterns=_patterns(spec, soc), options=Options(core=soc, check_profit=False)
    )


MULQ_LOOP = """#include <stdint.h>
void mulq_loop(uint32_t *restrict r, const uint32_t *restrict a, const uint32_t *restrict b) {
    for (int i = 0; i < 16; i++) { uint32_t x = a[i], y = b[i];
        r[i] = ((x & 0xffff) * (y & 0xffff)) % 3329; } }
"""


def test_defect1_register_pattern_in_a_store_keeps_the_store(tmp_path: Path) -> None:
    res = _match(tmp_path, MULQ_LOOP, KYBER)
    new = rewrite_c(res)
    [d] = res.matched
    assert d.isax == "modmul_q" and d.store
    assert "r[i] = aquas_modmul_q((uint32_t)y, (uint32_t)x);" in new
    assert d.binding is not None and "final check: same outputs and memory" in d.binding.proof


def test_defect1_statement_with_two_declarations_is_not_replaced(tmp_path: Path) -> None:
    text = """#include <stdint.h>
uint32_t f(uint32_t a, uint32_t b) {
    uint32_t r = ((a & 0xffff) * (b & 0xffff)) % 3329, s = a + b;
    return r ^ s;
}
"""
    res = _match(tmp_path, text, KYBER)
    assert not [d for d in res.matched if d.line == 3]
    [d] = [d for d in res.decisions if d.isax == "modmul_q" and d.line == 3]
    assert "assigns r, s" in d.detail
    # the return recomputes r from a and b, current there: its product is a modmul_q part
    # (Matcher.match_parts), checked by the final check; the declaration stays as it was
    new = rewrite_c(res)
    assert "uint32_t r = ((a & 0xffff) * (b & 0xffff)) % 3329, s = a + b;" in new
    assert all(
        "final check: same outputs" in (d.binding.proof if d.binding else "") for d in res.matched
    )


def test_final_check_refuses_an_emitter_that_drops_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _match(tmp_path, MULQ_LOOP, KYBER)
    real = emit.replacement

    def dropping(d, cf, source):  # type: ignore[no-untyped-def]
        a, b, text = real(d, cf, source)
        return a, b, text.split("= ", 1)[1]  # the old defect: a bare call

    monkeypatch.setattr(emit, "replacement", dropping)
    new = rewrite_c(res)
    assert new == MULQ_LOOP  # nothing emitted
    [d] = [d for d in res.decisions if d.isax == "modmul_q"]
    assert d.status == "rejected" and d.reason == FINAL
    assert "memory differs at r[byte 0]" in d.detail


def test_final_check_refuses_swapped_operands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = next((ROOT / "tests/match_corpus/v3ddist").glob("*.c")).read_text()
    res = _match(tmp_path, src, POINTCLOUD)
    assert [d.isax for d in res.matched] == ["v3ddist"]
    real = emit._call

    def swapped(d, names):  # type: ignore[no-untyped-def]
        call = real(d, names)
        head, args = call.split("(", 1)
        x, y = args[:-1].split(", ")
        return f"{head}({y}, {x})"

    monkeypatch.setattr(emit, "_call", swapped)
    assert rewrite_c(res) == src
    [d] = [d for d in res.decisions if d.isax == "v3ddist"]
    assert d.reason == FINAL and "on random input 0" in d.detail


def test_defect4_unrouted_opcode_stays_in_software(tmp_path: Path) -> None:
    # patterns for VexRiscv are re-encoded onto custom-0 (tests/test_reencode.py): matched
    assert [d.isax for d in _match(tmp_path, MULQ_LOOP, KYBER, soc="vexriscv").matched] == [
        "modmul_q"
    ]
    # patterns of PicoRV32's encodings (custom-2) are never emitted on VexRiscv
    app = tmp_path / "app.c"
    res = match_file(
        app,
        KYBER,
        patterns=_patterns(KYBER, "picorv32"),
        options=Options(core="vexriscv", check_profit=False),
    )
    assert not res.matched
    [d] = [d for d in res.decisions if d.isax == "modmul_q"]
    assert d.reason == TARGET
    assert "custom-2 (opcode 0x5b)" in d.detail and "routes only custom-0 (0x0b)" in d.detail
    assert rewrite_c(res) == MULQ_LOOP


def test_defect6_copy_of_a_result_is_not_a_second_call(tmp_path: Path) -> None:
    text = """#include <stdint.h>
uint32_t f6(uint32_t a, uint32_t b) {
    uint32_t r = ((a & 0xffff) * (b & 0xffff)) % 3329;
    return r;
}
"""
    res = _match(tmp_path, text, KYBER)
    assert [d.line for d in res.matched] == [3]
    new = rewrite_c(res)
    assert new.count("aquas_modmul_q(") == 1 and "    return r;\n" in new


BATCH = """#include <stdint.h>
void batch(const int32_t *restrict m, int32_t *restrict y) {
    for (int t = 0; t < 4; t++)
        for (int r = 0; r < 4; r++) {
            int32_t acc = 0;
            for (int c = 0; c < 4; c++)
                acc += m[20 * t + 4 * r + c] * m[20 * t + 16 + c];
            y[4 * t + r] = acc;
        }
}
"""


def test_defect2_outer_loop_of_an_isax_without_rd(tmp_path: Path) -> None:
    res = _match(tmp_path, BATCH, POINTCLOUD)
    new = rewrite_c(res)
    [d] = res.matched
    assert d.isax == "vgemv4" and d.binding is not None and d.binding.chunk == 1
    assert "for (; t + 1 <= 4; t += 1)" in new
    assert "aquas_vgemv4((uint32_t)(uintptr_t)m + 80u * (uint32_t)t," in new
    assert "final check: same outputs" in d.binding.proof


DOT_MACROS = """#include <stdint.h>
#define NPTS 64
#define BLK 16
int32_t dot(const int16_t *restrict a, const int16_t *restrict b) {
    int32_t acc = 0;
    for (int i = 0; i < NPTS / BLK * BLK; i++)
        acc += a[i] * b[i];
    return acc;
}
"""


def test_defect3_bound_from_an_expression_of_macros_is_emitted(tmp_path: Path) -> None:
    res = _match(tmp_path, DOT_MACROS, ROOT / "examples/dsp/dsp.isax")
    new = rewrite_c(res)
    [d] = res.matched
    assert d.isax == "vdot16"
    assert "for (; i + 16 <= 64; i += 16)" in new
    assert "acc += (int32_t)aquas_vdot16(" in new


def test_defect7_unused_isax_result_does_not_block_the_match(tmp_path: Path) -> None:
    text = """#include <stdint.h>
void dists(const int32_t *restrict a, int32_t *restrict b)
{
    for (int i = 0; i < 16; i++) {
        int32_t dx = a[3 * i] - b[3 * i];
        int32_t dy = a[3 * i + 1] - b[3 * i + 1];
        int32_t dz = a[3 * i + 2] - b[3 * i + 2];
        b[48 + i] = dx * dx + dy * dy + dz * dz;
    }
}
"""
    res = _match(tmp_path, text, POINTCLOUD)
    new = rewrite_c(res)
    [d] = res.matched
    assert d.isax == "v3ddist" and d.liveout is None
    assert (
        "/* aquas: v3ddist */ aquas_v3ddist((uint32_t)(uintptr_t)a, (uint32_t)(uintptr_t)b);" in new
    )


def test_defect8_explain_shows_the_narrower_regions_blockers(tmp_path: Path) -> None:
    # (a global used to be the narrower region's blocker here; globals are operands now,
    # tests/test_match_globals.py); the loop is inside an `if`: in the outermost block the
    # region from `a = a + 3` on would be v3ddist on a + 12 (tests/test_match_loops.py)
    text = """#include <stdint.h>
uint32_t sum_d(const int32_t *restrict a, int32_t *restrict b, int k)
{
    uint32_t total = 0;
    a = a + 3;
    if (k) {
        for (int i = 0; i < 16; i++) {
            int32_t dx = a[3 * i] - b[3 * i];
            int32_t dy = a[3 * i + 1] - b[3 * i + 1];
            int32_t dz = a[3 * i + 2] - b[3 * i + 2];
            int32_t d = dx * dx + dy * dy + dz * dz;
            b[48 + i] = d;
            total += (uint32_t)d;
        }
    }
    return total;
}
"""
    (tmp_path / "app.c").write_text(text)
    r = CliRunner().invoke(
        main, ["match", str(tmp_path / "app.c"), "--ext", str(POINTCLOUD), "--explain"]
    )
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    at = lines.index(
        "sum_d:7: v3ddist: no (footprint mismatch): the region reads add32(a, 12) which v3ddist "
        "does not read"
    )
    also = [ln for ln in lines[at + 1 :] if ln.startswith("    also ")]
    assert (
        "    also line 7: unsupported: rs1 = add32(a, 12): parameter a is assigned in the "
        "function, so the call site cannot name its original value"
    ) in also


def test_defect5_narrow_operands_and_loads_in_the_stored_expression(tmp_path: Path) -> None:
    text = """#include <stdint.h>
void mulq16(uint16_t *restrict r, const uint16_t *restrict a, const uint16_t *restrict b) {
    for (int i = 0; i < 16; i++)
        r[i] = ((uint32_t)a[i] * b[i]) % 3329;
}
uint32_t mul16(uint16_t x, uint16_t y) {
    return ((uint32_t)x * y) % 3329;
}
"""
    res = _match(tmp_path, text, KYBER)
    new = rewrite_c(res)
    assert sorted((d.function, d.isax) for d in res.matched) == [
        ("mul16", "modmul_q"),
        ("mulq16", "modmul_q"),
    ]
    assert (
        "r[i] = aquas_modmul_q((uint32_t)(uint16_t)(*(const uint16_t *)(uintptr_t)"
        "((uint32_t)(uintptr_t)b + 2u * (uint32_t)i + 0u))" in new
    )
    assert "return (uint32_t)aquas_modmul_q((uint32_t)(uint16_t)((uint32_t)y)," in new


def test_defect5_too_many_operands_is_explained(tmp_path: Path) -> None:
    text = """#include <stdint.h>
uint32_t f(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e, uint32_t g, uint32_t h) {
    return ((a + b + c + d) * (e + g + h)) % 3329;
}
"""
    res = _match(tmp_path, text, KYBER)
    [d] = [d for d in res.decisions if d.isax == "modmul_q"]
    assert d.status == "rejected" and "7 candidate operands" in d.detail


def test_defect6_return_of_a_branch_result_is_still_a_candidate(tmp_path: Path) -> None:
    # `return r;` after `if (r >= Q) r -= Q;`: the value comes from the branch, which is
    # not a candidate statement itself, so the return is
    src = (ROOT / "tests/match_corpus/modmul_q/barrett_if_u32.c").read_text()
    res = _match(tmp_path, src, KYBER)
    assert [(d.isax, d.line) for d in res.matched] == [("modmul_q", 15)]


def test_final_check_with_a_trip_count_parameter(tmp_path: Path) -> None:
    # random trip counts run past the buffers or hang: those trials are discarded, the
    # small ones decide
    text = """#include <stdint.h>
void mulq_n(uint32_t *restrict r, const uint32_t *restrict a, const uint32_t *restrict b, int n) {
    for (int i = 0; i < n; i++)
        r[i] = ((a[i] & 0xffff) * (b[i] & 0xffff)) % 3329;
}
"""
    res = _match(tmp_path, text, KYBER)
    new = rewrite_c(res)
    [d] = res.matched
    assert d.binding is not None and "final check: same outputs and memory on" in d.binding.proof
    assert "r[i] = aquas_modmul_q(" in new


GLOBAL_STORE = """#include <stdint.h>
uint32_t out[4];
void mulq_g(uint32_t x, uint32_t y) {
    out[1] = ((x & 0xffff) * (y & 0xffff)) % 3329;
}
"""


def test_final_check_compares_globals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res = _match(tmp_path, GLOBAL_STORE, KYBER)
    assert "out[1] = aquas_modmul_q(" in rewrite_c(res)  # the store kept: the check passes
    res = _match(tmp_path, GLOBAL_STORE, KYBER)
    real = emit.replacement
    monkeypatch.setattr(
        emit,
        "replacement",
        lambda d, cf, source: (lambda a, b, t: (a, b, t.split("= ", 1)[1]))(*real(d, cf, source)),
    )
    assert rewrite_c(res) == GLOBAL_STORE
    [d] = [d for d in res.decisions if d.isax == "modmul_q"]
    assert d.reason == FINAL and "global out differs at byte 4" in d.detail


STALE = """#include <stdint.h>
uint32_t stale(uint32_t x, uint32_t y) {
    uint32_t t = (x & 0xffff) * (y & 0xffff);
    x = 7;
    uint32_t r = t % 3329;
    return r + x;
}
"""


def test_operand_reassigned_before_the_statement_is_refused(tmp_path: Path) -> None:
    res = _match(tmp_path, STALE, KYBER)
    assert not res.matched and rewrite_c(res) == STALE
    # (line 6 recomputes r = t % q from x and y: refused alike, "the call at line 6")
    [d] = [d for d in res.decisions if d.isax == "modmul_q" and d.line == 5]
    assert d.detail == (
        "operand x is the value before line 4 assigns x again; the call at line 5 would "
        "read the new one"
    )


def test_final_check_catches_a_stale_operand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # without the operand check, the final check alone refuses the rewrite
    import aquas.egraph.matcher as matcher

    monkeypatch.setattr(matcher, "_stale_operand", lambda *a: None)
    res = _match(tmp_path, STALE, KYBER)
    assert rewrite_c(res) == STALE
    # line 5 (r = t % q) and, recomputing r, line 6's part: the stale one is refused by
    # the final check
    [d] = [d for d in res.decisions if d.isax == "modmul_q" and d.reason == FINAL]
    assert "the rewritten 'stale' returns" in d.detail


def test_assigned_pointer_parameter_is_not_an_operand(tmp_path: Path) -> None:
    # `a += 4` before the loop, outside the region (the loop is inside an `if`): the region
    # reads the original a + 8 bytes, but `a` at the call site is the new pointer (the final
    # check refused this; now the binding does)
    text = """#include <stdint.h>
int32_t dot(const int16_t *restrict a, const int16_t *restrict b, int n) {
    a += 4;
    int32_t acc = 0;
    if (n) {
        for (int i = 0; i < 16; i++)
            acc += a[i] * b[i];
    }
    return acc;
}
"""
    res = _match(tmp_path, text, ROOT / "examples/dsp/dsp.isax")
    assert not res.matched
    [d] = [d for d in res.decisions if d.isax == "vdot16"]
    assert any(
        "parameter a is assigned in the function, so the call site cannot name its original "
        "value" in b
        for b in [f"{d.reason}: {d.detail}", *d.blockers]
    )
    # in the outermost block, a region that starts with the assignment replaces it too: the
    # call site still sees the entry value, and the operand is a + 8 bytes
    flat = text.replace("    if (n) {\n", "").replace("            acc", "        acc")
    flat = flat.replace("    }\n    return", "    return")
    res = _match(tmp_path, flat, ROOT / "examples/dsp/dsp.isax")
    [d] = res.matched
    assert d.binding is not None and str(d.binding.regs["rs1"]) == "add32(a, 8)"
    new = rewrite_c(res)
    assert "a += 4;" not in new and "final check: same outputs" in d.binding.proof
    assert "aquas_vdot16((uint32_t)(uintptr_t)a + 8u, (uint32_t)(uintptr_t)b)" in new


def test_patterns_take_the_latencies_of_the_unit_built() -> None:
    """`aquas run` matches against the unit synthesis built (after its interface plans), not
    the spec as written: vgemv4's 32 single-shot loads become bursts there."""
    from aquas.egraph.driver import load_patterns

    spec = ROOT / "examples/pointcloud/pointcloud.isax"
    _, written = load_patterns(spec)
    built = {"v3ddist": (150, 171), "vcovmat3d": (120, 120), "vgemv4": (170, 170)}
    built |= {"vmaxarg": (88, 88), "vnearest": (340, 351)}
    _, pats = load_patterns(spec, latencies=built)
    got = {p.name: p.latency for p in pats}
    assert got == {
        "v3ddist": 171,
        "vcovmat3d": 120,
        "vgemv4": 170,
        "vmaxarg": 88,
        "vnearest": 351,
    }
    assert {p.name: p.latency for p in written}["vgemv4"] > 400  # 32 serial loads


def test_software_estimate_counts_what_compiled_code_executes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The software cost counts data multiplies, not the index arithmetic (`3 * i`) or
    constants a compiler folds: icp_block_dist does 3 multiplies, 6 loads and 1 store per
    point (16 points), icp_nearest 3 multiplies, 6 loads (the cloud point and the query
    point, which the inlined helper reads per point) and no store per point (64 points)
    (counted by hand from examples/pointcloud/icp_kernels.c)."""
    from aquas.egraph import matcher
    from aquas.egraph.driver import match_file

    seen: dict[int, tuple[int, int, int]] = {}
    real = matcher.software_cycles

    def spy(fx, core):  # type: ignore[no-untyped-def]
        seen[fx.ops] = (fx.muls, fx.loads, fx.stores)
        assert fx.folded > 0
        return real(fx, core)

    monkeypatch.setattr(matcher, "software_cycles", spy)
    pc = ROOT / "examples/pointcloud"
    match_file(pc / "icp_kernels.c", pc / "pointcloud.isax", include_dirs=[pc])
    assert (48, 96, 16) in seen.values()  # icp_block_dist
    assert (192, 384, 0) in seen.values()  # icp_nearest


def test_variable_of_a_while_loop_is_named_at_the_call_site(tmp_path: Path) -> None:
    """A `for` with run-time bounds is an scf.while; the C frontend names its carried
    values (aquas.carried), so an operand indexed by its variable (p[j + len]) can be
    spelled at the call site: modmul_q is bound and passes the final check (the butterfly
    of examples/crypto's poly_ntt is this shape)."""
    text = """#include <stdint.h>
void scale(uint16_t *p, uint16_t z, unsigned start, unsigned len)
{
    for (unsigned j = start; j < start + len; j++) {
        uint16_t t = (uint16_t)(((uint32_t)z * p[j + len]) % 3329);
        p[j] = t;
    }
}
"""
    res = _match(tmp_path, text, KYBER)
    new = rewrite_c(res)
    [d] = res.matched
    assert (d.function, d.isax, d.line) == ("scale", "modmul_q", 5)
    assert "2u * (uint32_t)j + 2u * (uint32_t)len + (uint32_t)(uintptr_t)p + 0u" in new
    assert d.binding is not None and "final check: same outputs and memory" in d.binding.proof
