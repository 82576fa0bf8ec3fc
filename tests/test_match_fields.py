"""Register patterns on real code (Kyber, examples/crypto): located reasons for candidates
that are not offered, computed and constant operands, and the butterfly ``ntt_bfly`` as a
multi-output pattern with a packed operand (egraph/fields.py). Every match asserted here
also passed the final check (the rewritten function run against the original on random
inputs, the ISAX by its golden model)."""

from __future__ import annotations

import functools
from pathlib import Path

from aquas.egraph.driver import MatchResult, load_patterns, match_file
from aquas.egraph.emit import rewrite_c
from aquas.egraph.matcher import Options
from aquas.egraph.terms import const

from helpers import without

ROOT = Path(__file__).resolve().parents[1]
KYBER = ROOT / "examples/crypto/kyber.isax"
NTT = ROOT / "examples/crypto/app/ntt.c"


@functools.cache
def _patterns(soc: str):  # type: ignore[no-untyped-def]
    return load_patterns(KYBER, soc=soc)


def _match(tmp_path: Path, text: str, soc: str = "picorv32") -> MatchResult:
    app = tmp_path / "app.c"
    app.write_text(text)
    return match_file(
        app, KYBER, patterns=_patterns(soc), options=Options(core=soc, check_profit=False)
    )


def _checked(res: MatchResult) -> str:
    new = rewrite_c(res)
    for d in res.matched:
        assert d.binding is not None and "final check: same outputs and memory" in d.binding.proof
    return new


# -- 1. --explain is never silent about a candidate it does not offer -------------------


def test_part_of_a_value_becomes_a_call_inside_the_value(tmp_path: Path) -> None:
    """A product mod q inside a larger value (here + 1) is a modmul_q call in the value
    (Matcher.match_parts; tests/test_match_parts.py has more): it was reported "not
    offered" before sub-expressions were matched."""
    res = _match(
        tmp_path,
        """#include <stdint.h>
uint32_t f(uint32_t a, uint32_t b)
{
    uint32_t r = ((a & 0xffff) * (b & 0xffff)) % 3329 + 1;
    return r;
}
""",
    )
    [d] = res.matched
    assert (d.line, d.isax, d.liveout) == (4, "modmul_q", "r")
    assert d.detail.startswith("parts of the value: aquas_call0 = modmul_q(")
    new = _checked(res)
    assert "uint32_t r = (uint32_t)(aquas_modmul_q((uint32_t)b, (uint32_t)a) + 1u);" in new


def test_an_enclosing_if_is_not_a_reassignment_of_the_operand(tmp_path: Path) -> None:
    """fqpow of ntt.c: `if (e & 1) r = fqmul(r, base);` reads the r of the loop; the `if`
    that contains the statement was reported as assigning r "again"."""
    res = _match(
        tmp_path,
        """#include <stdint.h>
uint16_t fqpow(uint16_t base, unsigned e)
{
    uint16_t r = 1;
    while (e) {
        if (e & 1)
            r = (uint16_t)(((uint32_t)r * base) % 3329);
        e >>= 1;
    }
    return r;
}
""",
    )
    assert [(d.isax, d.line) for d in res.matched] == [("modmul_q", 7)]
    _checked(res)


def test_an_enclosing_loop_that_assigns_the_operand_still_refuses(tmp_path: Path) -> None:
    """Only an enclosing `if` is skipped: a loop around the candidate that assigns an
    operand's variable changes it for the next iteration."""
    res = _match(
        tmp_path,
        """#include <stdint.h>
uint32_t f(uint32_t x, uint32_t y, int n)
{
    uint32_t t = (x & 0xffff) * (y & 0xffff);
    uint32_t r = 0;
    for (int i = 0; i < n; i++) {
        uint32_t u = t % 3329;
        r ^= u;
        x = x + 1;
    }
    return r + x;
}
""",
    )
    assert not res.matched
    # (line 8, r ^= u, recomputes u = t % 3329 from x and y: refused alike)
    [d] = [d for d in res.decisions if d.isax == "modmul_q" and d.line == 7]
    assert "operand x is the value before line 6 assigns x again" in d.detail


# -- 2. computed and constant operands ------------------------------------------------------

INVNTT = """#include <stdint.h>
void inv(uint16_t *p, uint16_t zinv, unsigned start, unsigned len)
{
    for (unsigned j = start; j < start + len; j++) {
        uint16_t a = p[j];
        uint16_t b = p[j + len];
        p[j] = (uint16_t)((a + b) % 3329);
        p[j + len] = (uint16_t)(((uint32_t)zinv * (uint16_t)((a + 3329 - b) % Q)) % 3329);
    }
}
"""


def test_computed_operand_is_evaluated_in_the_call(tmp_path: Path) -> None:
    """poly_invntt's fqmul(zinv, (a + q - b) % q): the second operand is an expression."""
    res = _match(tmp_path, INVNTT.replace("% Q", "% 3329"))
    [s, d] = sorted(res.matched, key=lambda d: d.line)
    assert (d.function, d.isax, d.line, d.store) == ("inv", "modmul_q", 8, True)
    # the sum (a + b) % q is ntt_bfly's sum field with zeta = 1 (the identity operand)
    assert (s.isax, s.line) == ("ntt_bfly", 7)
    assert s.binding is not None and s.binding.regs["rs2"] == const(32, 1)
    assert d.binding is not None and d.binding.regs["rs2"].op == "rems"
    new = _checked(res)
    # the operand once, in the call that replaces the right-hand side
    line = next(x for x in new.splitlines() if "aquas_modmul_q(" in x)
    assert line.strip().startswith("/* aquas: modmul_q */ p[j + len] = aquas_modmul_q(")
    assert line.count("% (int32_t)3329") == 1 and line.count("aquas_modmul_q(") == 1
    assert "p[j] = (uint16_t)((a + b) % 3329);" not in new
    assert "aquas_ntt_bfly(((uint32_t)(uint16_t)((uint32_t)b) << 16 | " in new


def test_computed_operand_with_another_modulus_is_not_matched(tmp_path: Path) -> None:
    """Near miss: the inner reduction is mod 3328; modmul_q of (a + q - b) % 3328 would be
    a correct rewrite too, so the statement must be matched only with that operand."""
    res = _match(tmp_path, INVNTT.replace("% Q", "% 3328"))
    for d in res.matched:
        assert d.binding is not None
        if d.line == 7:  # the sum (a + b) % 3329 as ntt_bfly with zeta = 1: another statement
            continue
        assert "3328" in repr(d.binding.regs["rs2"])
    _checked(res)


def test_constant_operand(tmp_path: Path) -> None:
    """poly_invntt's final scaling fqmul(p[j], KYBER_NINV)."""
    res = _match(
        tmp_path,
        """#include <stdint.h>
#define NINV 3303
void scale(uint16_t *p)
{
    for (unsigned j = 0; j < 256; j++)
        p[j] = (uint16_t)(((uint32_t)p[j] * NINV) % 3329);
}
""",
    )
    [d] = res.matched
    assert d.binding is not None and repr(d.binding.regs["rs2"]) == "3303"
    assert ", 3303u);" in _checked(res)


def test_wrong_barrett_constant_with_a_constant_operand_is_not_matched(tmp_path: Path) -> None:
    res = _match(
        tmp_path,
        """#include <stdint.h>
void scale(uint16_t *p)
{
    for (unsigned j = 0; j < 256; j++)
        p[j] = (uint16_t)(((uint32_t)p[j] * 3303) % 3328);
}
""",
    )
    assert not res.matched


# -- 3. the butterfly: two stored fields, a packed operand ----------------------------------

BFLY = """#include <stdint.h>
void bfly(uint16_t *p, uint16_t zeta, unsigned start, unsigned len)
{
    for (unsigned j = start; j < start + len; j++) {
        uint16_t t = (uint16_t)(((uint32_t)zeta * p[j + len]) % 3329);
        uint16_t a = p[j];
        HI = (uint16_t)((a + 3329 - t) % 3329);
        LO = (uint16_t)((a + t) % 3329);
    }
}
"""


def _bfly(hi: str = "p[j + len]", lo: str = "p[j]") -> str:
    return BFLY.replace("HI", hi).replace("LO", lo)


def test_poly_ntt_is_rewritten_to_ntt_bfly(tmp_path: Path) -> None:
    """The butterfly as one ntt_bfly, without the whole-NTT ISAXs (with them, poly_ntt is
    one ntt_fwd: tests/test_case_studies.py)."""
    res = match_file(
        NTT,
        KYBER,
        include_dirs=[NTT.parent],
        patterns=without(_patterns("vexriscv"), "ntt_fwd", "ntt_inv"),
        options=Options(core="vexriscv"),
    )
    by_fn = {(d.function, d.isax) for d in res.matched}
    assert ("poly_ntt", "ntt_bfly") in by_fn
    assert ("poly_ntt", "modmul_q") not in by_fn  # its statement is part of the butterfly
    assert ("poly_invntt", "modmul_q") in by_fn
    [d] = [d for d in res.matched if d.isax == "ntt_bfly" and d.function == "poly_ntt"]
    assert d.line == 52 and [s.line for s in d.region] == [52, 53, 54, 55]
    assert sorted((s.line, lo) for s, lo, _ in d.fields) == [(54, 16), (55, 0)]
    new = _checked(res)
    assert "uint32_t aquas_rd = aquas_ntt_bfly(((uint32_t)(uint16_t)(*(const uint16_t *)" in new
    k = new.index("uint32_t aquas_rd")  # the stores in their original order, after the call
    assert new.index("p->coeffs[j + len] = (uint16_t)(aquas_rd >> 16);", k) < new.index(
        "p->coeffs[j] = (uint16_t)(aquas_rd);", k
    )


def test_butterfly_with_swapped_destinations_is_still_a_butterfly(tmp_path: Path) -> None:
    """Storing the sum to p[j + len] and the difference to p[j] is another program, but
    still one ntt_bfly whose fields go to the other places: it is matched, and the final
    check confirms it."""
    res = _match(tmp_path, _bfly(hi="p[j]", lo="p[j + len]"))
    [d] = res.matched
    assert d.isax == "ntt_bfly"
    assert sorted((s.line, lo) for s, lo, _ in d.fields) == [(7, 16), (8, 0)]
    _checked(res)


def test_butterfly_near_misses_are_not_matched(tmp_path: Path) -> None:
    misses = {
        "difference the other way": BFLY.replace("(a + 3329 - t)", "(t + 3329 - a)"),
        "wrong constant": BFLY.replace("(a + 3329 - t) % 3329", "(a + 3328 - t) % 3329"),
        "sum not reduced": BFLY.replace("(a + t) % 3329", "(a + t)"),
        "a store of another value": BFLY.replace("(uint16_t)((a + t) % 3329)", "a"),
        "product not reduced": BFLY.replace(
            "% 3329);\n        uint16_t a", ");\n        uint16_t a"
        ),
    }
    for why, text in misses.items():
        text = text.replace("HI", "p[j + len]").replace("LO", "p[j]")
        assert text != _bfly(), why
        res = _match(tmp_path, text)
        # never the butterfly; a single reduced sum (a + t) % q may be ntt_bfly's sum field
        # with zeta = 1, a correct rewrite of that one statement (the final check runs it)
        assert not [d for d in res.matched if d.isax == "ntt_bfly" and d.fields], why
        for d in res.matched:
            if d.isax == "ntt_bfly":
                assert d.binding is not None and d.binding.regs["rs2"] == const(32, 1), why
        _checked(res)


def test_butterfly_whose_temporary_is_used_later_is_not_replaced(tmp_path: Path) -> None:
    res = _match(
        tmp_path,
        _bfly().replace("(a + t) % 3329);\n    }", "(a + t) % 3329);\n        p[0] = t;\n    }"),
    )
    # not the butterfly (t is live-out); the two reductions alone may each be one ntt_bfly
    # field with zeta = 1 (correct rewrites of single statements, run by the final check)
    assert not [d for d in res.matched if d.isax == "ntt_bfly" and d.fields]
    _checked(res)


def test_a_product_that_only_feeds_a_replaced_butterfly_is_not_replaced(tmp_path: Path) -> None:
    """ntt_bfly/percent_plain.c: `t = ((ab >> 16) * (zeta & 0xffff)) % 3329` is modmul_q on
    a computed operand, but its value only feeds `sum` and `diff`, which only feed the
    returned butterfly: after that rewrite it is dead, and a second ISAX call would be
    wasted."""
    src = ROOT / "tests/match_corpus/ntt_bfly/percent_plain.c"
    res = _match(tmp_path, src.read_text())
    assert [(d.isax, d.line) for d in res.matched] == [("ntt_bfly", 12)]
    # (line 8's `(ab & 0xffff) % 3329`, modmul_q with the operand 1, is dead in turn)
    [d] = [d for d in res.decisions if d.isax == "modmul_q" and d.line == 9]
    assert d.detail == (
        "its value is used only by line 12, which ntt_bfly replaces: it is dead after that rewrite"
    )
    assert _checked(res).count("aquas_") == 2  # the include and one call


def test_a_loop_tried_for_a_memory_isax_leaves_the_statements_inside_it_alone() -> None:
    """fqpow's loop is tried (and refused) for ntt_fwd and ntt_inv, which resolves `base`
    before the loop, the parameter; the statements inside the loop read the loop's
    `base`. The parameter is no operand of theirs, so it is no stale operand either
    (both calls were refused as reading `base` "before line 19 assigns it again")."""
    res = match_file(
        NTT,
        KYBER,
        functions=["fqpow"],
        patterns=_patterns("picorv32"),
        options=Options(core="picorv32"),
    )
    assert {d.isax for d in res.decisions if d.status == "rejected"} == {"ntt_fwd", "ntt_inv"}
    assert sorted((d.line, d.isax) for d in res.matched) == [(21, "modmul_q"), (22, "modmul_q")]
    _checked(res)
