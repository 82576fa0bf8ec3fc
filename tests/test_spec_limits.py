"""Spec-path limits: inputs that used to crash the frontend, make synthesis hang or deadlock
the memory port are rejected by the frontend (so by ``aquas check``) with a located
diagnostic, and inputs just inside each limit are still accepted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.interpreter import execute, find_extension
from aquas.spec.frontend import lower_spec
from aquas.spec.limits import SpecBudgets, unrolled_counts

HEAD = "#[opcode(custom0), funct7(1)]\n"


def rejects(src: str, fragment: str, line: int, col: int, **kw: object) -> AquasError:
    with pytest.raises(AquasError) as info:
        lower_spec(src, "lim.isax", **kw)  # type: ignore[arg-type]
    e = info.value
    assert fragment in e.message, e.message
    assert e.loc is not None
    assert (e.loc.filename, e.loc.line, e.loc.column) == ("lim.isax", line, col)
    return e


def returns(src: str, rs1: int = 0) -> int | None:
    isax = next(iter(find_extension(lower_spec(src, "lim.isax")).isaxs()))
    return execute(isax, rs1).rd


# -- literals and constant folding ------------------------------------------------------


def test_5000_digit_literal_in_expression() -> None:
    src = HEAD + "isax t(rs1) -> rd {\n  return rs1 + " + "9" * 5000 + ";\n}\n"
    e = rejects(src, "integer literal of 5000 characters exceeds 128 bits", 3, 16)
    assert len(e.message) < 200  # the literal itself is not repeated in the message


def test_5000_digit_literal_as_scratchpad_size() -> None:
    src = "scratchpad b: [u32; " + "9" * 5000 + "];\n" + HEAD + "isax t(rs1) {\n}\n"
    rejects(src, "exceeds 128 bits", 1, 21)


def test_long_literal_with_leading_zeros_is_its_value() -> None:
    src = HEAD + "isax t(rs1) -> rd {\n  return rs1 + " + "0" * 5000 + "7;\n}\n"
    assert returns(src, 5) == 12


def test_huge_shift_of_untyped_constant() -> None:
    src = HEAD + "isax t(rs1) -> rd {\n  return rs1 + (1 << 100000);\n}\n"
    rejects(src, "constant expression exceeds 128 bits", 3, 17)


def test_huge_product_of_untyped_constants() -> None:
    big = str(1 << 100)
    src = HEAD + f"isax t(rs1) -> rd {{\n  return rs1 + {big} * {big};\n}}\n"
    rejects(src, "constant expression exceeds 128 bits", 3, 16)


def test_wide_intermediate_constants_still_fold_exactly() -> None:
    # 2**100 >> 90 == 1024, and 2**127 is inside the limit.
    src = (
        HEAD + "isax t(rs1) -> rd {\n  return rs1 + ((1 << 100) >> 90) + ((1 << 127) >> 127);\n}\n"
    )
    assert returns(src, 3) == 3 + 1024 + 1


# -- names ------------------------------------------------------------------------------


def test_isax_name_of_251_characters() -> None:
    src = HEAD + "isax " + "a" * 251 + "(rs1) -> rd {\n  return rs1;\n}\n"
    rejects(src, "ISAX name of 251 characters is longer than 64", 2, 6)


def test_extension_name_of_251_characters() -> None:
    src = "extension " + "e" * 251 + ";\n" + HEAD + "isax t(rs1) -> rd {\n  return rs1;\n}\n"
    rejects(src, "extension name of 251 characters is longer than 64", 1, 11)


def test_extension_name_from_a_long_file_name() -> None:
    src = HEAD + "isax t(rs1) -> rd {\n  return rs1;\n}\n"
    with pytest.raises(AquasError) as info:
        lower_spec(src, "x" * 100 + ".isax")
    assert info.value.loc is not None and (info.value.loc.line, info.value.loc.column) == (1, 1)
    assert info.value.hint is not None and "extension NAME;" in info.value.hint


def test_names_of_64_characters_are_accepted() -> None:
    src = "extension " + "e" * 64 + ";\n" + HEAD + "isax " + "a" * 64 + "(rs1) -> rd {\n"
    assert returns(src + "  return rs1;\n}\n", 9) == 9


# -- repeated attributes ----------------------------------------------------------------


def test_repeated_funct7_in_one_attribute_list() -> None:
    src = "#[opcode(custom0), funct7(0), funct7(1)]\nisax t(rs1) -> rd {\n  return rs1;\n}\n"
    rejects(src, "attribute 'funct7' is given twice (first at line 1, column 20)", 1, 31)


def test_repeated_opcode_across_attribute_lists() -> None:
    src = "#[opcode(custom0), funct7(0)]\n#[opcode(custom1)]\nisax t(rs1) {\n}\n"
    rejects(src, "attribute 'opcode' is given twice", 2, 3)


def test_repeated_unroll_directive() -> None:
    src = (
        HEAD + "isax t(rs1) -> rd {\n  var a: u32 = 0;\n  #[unroll, unroll(2)]\n"
        "  for i in 0..4 {\n    a += rs1;\n  }\n  return a;\n}\n"
    )
    rejects(src, "attribute 'unroll' is given twice", 4, 13)


# -- bursts (memory port length field) --------------------------------------------------


def burst_src(ty: str, n: int) -> str:
    return (
        f"scratchpad b: [{ty}; 512];\n"
        + HEAD
        + f"isax t(rs1) {{\n  burst b[0 +: {n}] <- mem[rs1];\n}}\n"
    )


def test_burst_of_257_beats_is_rejected() -> None:
    e = rejects(burst_src("u32", 257), "257 bus beats", 4, 16)
    assert e.hint is not None and "256 elements" in e.hint


def test_burst_of_64_bit_elements_counts_two_beats_each() -> None:
    e = rejects(burst_src("u64", 129), "258 bus beats", 4, 16)
    assert e.hint is not None and "128 elements" in e.hint


@pytest.mark.parametrize(("ty", "n"), [("u32", 256), ("u8", 256), ("u64", 128)])
def test_bursts_at_the_port_limit_are_accepted(ty: str, n: int) -> None:
    lower_spec(burst_src(ty, n), "lim.isax")


# -- synthesis budgets ------------------------------------------------------------------

SPM_64K = HEAD.join(
    ["scratchpad b: [u32; 65536] impl(regs);\n", "isax t(rs1) {\n  b[rs1 & 0xffff] = rs1;\n}\n"]
)


def test_scratchpad_over_budget_names_the_limit_and_how_to_raise_it() -> None:
    e = rejects(SPM_64K, "of 65536 elements exceeds the synthesis budget of 4096", 1, 21)
    assert e.hint is not None and "AQUAS_MAX_SCRATCHPAD_ELEMENTS" in e.hint


def test_scratchpad_budget_raised_by_argument_and_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lower_spec(SPM_64K, "lim.isax", SpecBudgets(scratchpad_elements=65536))
    monkeypatch.setenv("AQUAS_MAX_SCRATCHPAD_ELEMENTS", "65536")
    lower_spec(SPM_64K, "lim.isax")
    monkeypatch.setenv("AQUAS_MAX_SCRATCHPAD_ELEMENTS", "lots")
    with pytest.raises(AquasError, match="AQUAS_MAX_SCRATCHPAD_ELEMENTS must be a positive"):
        lower_spec(SPM_64K, "lim.isax")


NESTED = (
    HEAD + "isax t(rs1) -> rd {\n  var a: u32 = 0;\n  #[unroll]\n  for i in 0..4 {\n"
    "    #[unroll(2)]\n    for j in 0..8 {\n      a += rs1;\n    }\n  }\n  return a;\n}\n"
)


def test_unrolled_ops_count_the_product_of_unroll_factors() -> None:
    isax = next(iter(find_extension(lower_spec(NESTED)).isaxs()))
    # Counted by hand from the lowered IR: 7 ops at the top (rs1, 4 constants, the outer for,
    # write_rd); the outer body (3 constants, the inner for, yield) 4 times; the inner body
    # (addi, yield) 4 * 2 times.
    assert unrolled_counts(isax.body.block) == (7 + 4 * 5 + 8 * 2, 0)


def test_unrolled_ops_over_budget_point_at_the_loop() -> None:
    lower_spec(NESTED, "lim.isax", SpecBudgets(unrolled_ops=43))
    e = rejects(
        NESTED,
        "ISAX 't' has 43 operations after unrolling, over the synthesis budget of 42",
        4,
        3,
        budgets=SpecBudgets(unrolled_ops=42),
    )
    assert e.hint is not None and "AQUAS_MAX_UNROLLED_OPS" in e.hint


def test_default_unroll_budget_rejects_a_runaway_unroll() -> None:
    src = (
        "scratchpad b: [u32; 4096];\n" + HEAD + "isax t(rs1) -> rd {\n  var a: u32 = 0;\n"
        "  #[unroll]\n  for i in 0..4096 {\n    #[unroll]\n    for j in 0..16 {\n"
        "      a += b[i] * rs1;\n    }\n  }\n  return a;\n}\n"
    )
    rejects(src, "operations after unrolling, over the synthesis budget of 1500", 5, 3)


def test_bursts_over_budget_after_unrolling() -> None:
    src = (
        "scratchpad b: [u32; 4096];\n" + HEAD + "isax t(rs1) {\n  #[unroll]\n"
        "  for i in 0..300 {\n    burst b[i +: 1] <- mem[rs1];\n  }\n}\n"
    )
    e = rejects(src, "has 300 burst statements after unrolling, over the synthesis budget", 4, 3)
    assert e.hint is not None and "AQUAS_MAX_BURSTS" in e.hint
    lower_spec(src, "lim.isax", SpecBudgets(bursts=300))


def test_check_cli_reports_a_limit_with_location(tmp_path: Path) -> None:
    (tmp_path / "big.isax").write_text(SPM_64K)
    p = subprocess.run(
        [sys.executable, "-m", "aquas.cli", "check", "big.isax"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2, p.stderr
    assert "big.isax:1:21: error: scratchpad 'b' of 65536 elements" in p.stderr
    assert "AQUAS_MAX_SCRATCHPAD_ELEMENTS" in p.stderr and "Traceback" not in p.stderr


def test_loop_step_beyond_32_bits_is_located() -> None:
    """Fuzz finding F12: a step of 2^32 was an internal VerifyException in `aquas check`."""
    src = (
        "extension e;\n#[opcode(custom0), funct7(0)]\n"
        "isax f(rs1) -> rd { var s: u32 = 0; for i in 0..8 step 4294967296 { s = s + rs1; } "
        "return s; }\n"
    )
    with pytest.raises(AquasError) as e:
        lower_spec(src, "step.isax")
    assert e.value.message == "the loop step 4294967296 does not fit 32 bits"
    assert e.value.loc is not None and (e.value.loc.line, e.value.loc.column) == (3, 56)


def _nested(depth: int) -> str:
    loops = "".join(f"for i{k} in 0..2 {{\n" for k in range(depth))
    return (
        "extension e;\n#[opcode(custom0), funct7(0)]\n"
        f"isax f(rs1) -> rd {{\nvar a: u32 = 0;\n{loops}a = a + rs1;\n{'}' * depth}\nreturn a;\n}}\n"
    )


def test_loop_nesting_over_budget_points_at_the_loop() -> None:
    """Fuzz finding: 200 nested loops passed check, then synthesis took minutes."""
    many = SpecBudgets(iterations=1 << 80)  # 64 nested loops of 2 run 2^65 - 2 iterations
    lower_spec(_nested(64), "deep.isax", budgets=many)  # at the limit: accepted
    with pytest.raises(AquasError) as e:
        lower_spec(_nested(65), "deep.isax", budgets=many)
    assert e.value.message == "loops nested more than 64 deep"
    assert e.value.loc is not None and e.value.loc.line == 4 + 65  # the 65th `for`
    assert e.value.hint is not None and "AQUAS_MAX_LOOP_DEPTH" in e.value.hint
    lower_spec(_nested(65), "deep.isax", budgets=SpecBudgets(loop_depth=65, iterations=1 << 80))


def test_loop_iterations_over_budget_point_at_the_loop() -> None:
    """Fuzz finding: 60 nested loops of two iterations passed check (2^61 - 2 iterations a
    call); the memory model walked them, and the golden interpreter of a co-simulation
    would never end. 24 levels run 2^25 - 2 iterations, over the 2^24 budget."""
    lower_spec(_nested(23), "deep.isax")  # 2^24 - 2: accepted
    with pytest.raises(AquasError) as e:
        lower_spec(_nested(24), "deep.isax")
    assert e.value.message == (
        "ISAX 'f' runs 33,554,430 loop iterations a call, over the synthesis budget of "
        "16,777,216 (this loop runs most of them)"
    )
    assert e.value.loc is not None and e.value.loc.line == 5  # the outermost `for`
    assert e.value.hint is not None and "AQUAS_MAX_ITERATIONS" in e.value.hint
    lower_spec(_nested(24), "deep.isax", budgets=SpecBudgets(iterations=1 << 25))
