"""Parser/frontend fuzzing: thousands of random and mutated specs. Each must either lower
to verified IR or raise AquasError with a located, rendered diagnostic — nothing else."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aquas.diagnostics import AquasError
from aquas.spec.frontend import lower_spec

ROOT = Path(__file__).resolve().parents[1]
SEEDS = [p.read_text() for p in sorted((ROOT / "examples").rglob("*.isax"))] + [
    (ROOT / "docs" / "spec-language.md").read_text().split("```rust\n")[1].split("```")[0]
]

TOKENS = (
    "extension state scratchpad partition isax let var if else for in step return mem burst "
    "select sext zext trunc as cyclic block unroll opcode funct3 funct7 custom0 custom3 rs1 rs2 rd "
    "u1 u8 u16 u32 u64 i8 i32 i64 u65 x y buf acc 0 1 7 16 255 -1 0xff 0b101 3u8 0xffi16 "
    "+ - * / % & | ^ ~ ! << >> == != < <= > >= && || ? : ; , . .. +: <- -> = += <<= "
    "( ) [ ] { } #[ ] # //c /* */"
).split()


def check(src: str) -> None:
    try:
        module = lower_spec(src, "fuzz.isax")
    except AquasError as e:
        text = e.render()
        assert "error:" in text
        if e.loc is not None:
            assert text.startswith(f"fuzz.isax:{e.loc.line}:{e.loc.column}: error: ")
        return
    module.verify()


@settings(max_examples=2500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
def test_token_soup(tokens: list[str]) -> None:
    check(" ".join(tokens))


@settings(max_examples=2500, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    seed=st.sampled_from(SEEDS),
    edits=st.lists(
        st.tuples(
            st.floats(0, 1),
            st.sampled_from(["delete", "insert", "replace", "dup"]),
            st.sampled_from([*TOKENS, "\n", " ", "\x00", "é", "9999999999999999999999"]),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_specs(seed: str, edits: list[tuple[float, str, str]]) -> None:
    src = seed
    for pos_f, kind, tok in edits:
        pos = int(pos_f * len(src))
        if kind == "delete":
            src = src[:pos] + src[pos + len(tok) :]
        elif kind == "insert":
            src = src[:pos] + " " + tok + " " + src[pos:]
        elif kind == "replace":
            src = src[:pos] + tok + src[pos + len(tok) :]
        else:
            src = src[:pos] + src[pos : pos + 40] + src[pos:]
    check(src)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text(src: str) -> None:
    check(src)
