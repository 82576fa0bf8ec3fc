"""1,000 token-level mutations of the case-study applications through the C frontend and the
matcher (``match_file``: preprocessing, lowering, regions, e-graph matching), seeded.

The sources are real application code (structs, helpers, macros, 2-D arrays, GNU C): the
LLM MLP, the Kyber NTT and the DSP filter chain. Each mutant deletes, duplicates, swaps or
inserts a token. Every run must end either in a result, whose refused functions each carry
a located diagnostic, or in one located ``AquasError``; never in a traceback, an internal
error or a diagnostic without a place.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.egraph.driver import load_patterns, match_file

from helpers import without

ROOT = Path(__file__).resolve().parent.parent
APPS = {  # source -> its extension
    "examples/llm/app/mlp.c": "examples/llm/llm.isax",
    "examples/crypto/app/ntt.c": "examples/crypto/kyber.isax",
    "examples/dsp/app/filters.c": "examples/dsp/dsp.isax",
}
MUTANTS = 1000
SEED = 2026
TOKEN = re.compile(
    r"[A-Za-z_]\w*|0[xX][0-9a-fA-F]+|\d+\w*|->|\+\+|--|<<=?|>>=?|[-+*/%&|^!=<>]=|&&|\|\||\S"
)
INSERTS = ["(", ")", "{", "}", "[", "]", ";", ",", "*", "&", "++", "->", ".", "0", "x", "return",
           "struct", "static", "int", "#", "\\", "'", '"', "__attribute__((aligned(4)))"]  # fmt: skip


def mutate(text: str, rng: random.Random) -> str:
    toks = list(TOKEN.finditer(text))
    k = rng.randrange(len(toks))
    a, b = toks[k].span()
    kind = rng.randrange(4)
    if kind == 0:  # delete a token
        return text[:a] + text[b:]
    if kind == 1:  # duplicate it
        return text[:b] + " " + text[a:b] + text[b:]
    if kind == 2 and k + 1 < len(toks):  # swap it with the next one
        c, d = toks[k + 1].span()
        return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    return text[:a] + rng.choice(INSERTS) + " " + text[a:]  # insert one before it


@pytest.mark.parametrize("src", sorted(APPS))
def test_mutated_applications_match_or_fail_located(src: str, tmp_path: Path) -> None:
    rng = random.Random(f"{SEED}:{src}")
    path, spec = ROOT / src, ROOT / APPS[src]
    # Without the whole-NTT ISAXs: proving one is tens of seconds of symbolic execution
    # and e-graph work per mutant (the frontend and the other patterns see every mutant;
    # test_case_studies matches the unmutated NTT with them).
    patterns = without(load_patterns(spec, 10.0, "picorv32"), "ntt_fwd", "ntt_inv")
    original = path.read_text()
    outcomes = {"matched": 0, "refused functions": 0, "file refused": 0}
    n = -(-MUTANTS // len(APPS))
    for i in range(n):
        text = mutate(original, rng)
        mutant = tmp_path / path.name
        mutant.write_text(text)
        what = f"mutant {i} of {src}"
        try:
            res = match_file(
                mutant, spec, soc="picorv32", patterns=patterns, include_dirs=[path.parent]
            )
        except AquasError as e:
            assert "internal error" not in e.message, f"{what}: {e.message}"
            assert e.loc is not None or e.filename or str(mutant) in e.message, (
                f"{what}: no location: {e.message}"
            )
            outcomes["file refused"] += 1
            continue
        for d in res.skipped:
            assert "internal error" not in d.message, f"{what}: {d.message}"
            assert d.loc is not None, f"{what}: unlocated: {d.message}"
        outcomes["refused functions"] += bool(res.skipped)
        outcomes["matched"] += bool(res.matched)
    # the mutants exercise both sides: some still lower and match, some are refused
    assert outcomes["matched"] > 0 and outcomes["file refused"] > 0, outcomes
