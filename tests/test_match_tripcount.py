"""Strip-mining a loop whose trip count is known only at run time (a parameter ``n``): the
loop becomes ISAX calls over whole chunks while a chunk fits, then the original loop for
the rest, and the final check runs the rewrite against the original on random ``n``."""

from __future__ import annotations

import functools
from pathlib import Path

from aquas.egraph.driver import MatchResult, load_patterns, match_file
from aquas.egraph.emit import rewrite_c
from aquas.egraph.matcher import Options

from helpers import without_vdot32

ROOT = Path(__file__).resolve().parents[1]
DSP = ROOT / "examples/dsp/dsp.isax"


@functools.cache
def _patterns(spec: Path, soc: str):  # type: ignore[no-untyped-def]
    return without_vdot32(load_patterns(spec, soc=soc))  # strip-mining into vdot16


def _match(tmp_path: Path, text: str) -> MatchResult:
    app = tmp_path / "app.c"
    app.write_text(text)
    return match_file(
        app, DSP, patterns=_patterns(DSP, "picorv32"), options=Options(core="picorv32")
    )


DOT = """#include <stdint.h>
int32_t dot_q15(const int16_t *restrict a, const int16_t *restrict b, int n)
{
    int32_t acc = 0;
    for (int i = 0; i {cmp} n; i++)
        acc += a[i] * b[i];
    return acc;
}
"""


def test_run_time_trip_count_is_strip_mined_with_a_remainder(tmp_path: Path) -> None:
    res = _match(tmp_path, DOT.replace("{cmp}", "<"))
    new = rewrite_c(res)
    [d] = res.matched
    assert d.isax == "vdot16" and d.binding is not None and d.binding.chunk == 16
    assert "final check: same outputs and memory" in d.binding.proof
    assert "for (; i + 15 < (n); i += 16)" in new
    assert "acc += (int32_t)aquas_vdot16(" in new
    assert "for (; i < n; i++)\n            acc += a[i] * b[i];" in new


def test_inclusive_bound(tmp_path: Path) -> None:
    res = _match(tmp_path, DOT.replace("{cmp}", "<="))
    new = rewrite_c(res)
    [d] = res.matched
    assert "for (; i + 15 <= (n); i += 16)" in new
    assert d.binding is not None and "final check: same outputs" in d.binding.proof


def test_not_equal_bound_is_not_strip_mined(tmp_path: Path) -> None:
    # `i != n` would step over n with a chunk: not rewritten, and the reason is given
    res = _match(tmp_path, DOT.replace("{cmp}", "!="))
    rewrite_c(res)
    assert not res.matched
    reasons = [d.detail for d in res.decisions if d.isax == "vdot16"]
    assert any("needs 'i < bound'" in r for r in reasons), reasons
