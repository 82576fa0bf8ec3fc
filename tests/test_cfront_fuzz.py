"""Regressions for the C-frontend defects the fuzz benchmark found (docs/reliability.md).

Each test reproduces one finding (F4-F7, F13, the end-of-input syntax error) and asserts
the fixed behaviour: a valid loop lowers to ``scf.for`` and computes the C result, and a
refusal is one located diagnostic for the offending function while the rest of the file
still lowers.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from cfront_eval import Evaluator
from click.testing import CliRunner
from xdsl.dialects import arith, scf

from aquas.cli import main
from aquas.diagnostics import AquasError
from aquas.egraph.cdecl import MAX_ARRAY_ELEMENTS
from aquas.egraph.cfront import MAX_NESTING, CProgram, parse_c
from aquas.egraph.cstmt import MAX_INITIALISED_LOCAL

ROOT = Path(__file__).resolve().parent.parent
DSP = ROOT / "examples" / "dsp" / "dsp.isax"

OTHER = "int other(int y) { return y * 3; }\n"


def _lowered(prog: CProgram) -> set[str]:
    return {f.name for f in prog.functions if f.func is not None}


def _loops(prog: CProgram) -> list[scf.ForOp]:
    return [op for op in prog.module.walk() if isinstance(op, scf.ForOp)]


# -- F4: unsigned / 64-bit induction variables -------------------------------------------

F4_DOT = (
    "int f(const short *a, const short *b) { int acc = 0; "
    "for (unsigned i = 0; i <= 16 - 1; ++i) { int p = a[i] * b[i]; acc = acc + p; } "
    "return acc; }\n"
)


def test_f4_unsigned_iv_with_folded_bound_lowers_and_computes() -> None:
    prog = parse_c(F4_DOT, "f.c")
    assert prog.diagnostics == []
    a = [(i * 37) % 65536 for i in range(16)]  # as the IR holds them: unsigned i16 bits
    b = [(65536 - 5 * i) % 65536 for i in range(16)]
    want = sum((x - 65536 if x >= 32768 else x) * (y - 65536 if y >= 32768 else y)
               for x, y in zip(a, b, strict=True))  # fmt: skip
    assert Evaluator(prog.module).call("f", [a, b]) == want & 0xFFFF_FFFF


def test_f4_uint64_iv_lowers() -> None:
    src = (
        "#include <stdint.h>\n"
        "int f(const int *a, const int *b) { int s = 0; "
        "for (uint64_t i = 0; i < 2147483647; i++) s += a[i] * b[i]; return s; }\n"
        "int g(const int *a) { int s = 0; for (uint64_t i = 0; i < 3; i++) s += a[i]; "
        "return s; }\n"
    )
    prog = parse_c(src, "f.c")
    assert prog.diagnostics == []
    assert _lowered(prog) == {"f", "g"}
    assert Evaluator(prog.module).call("g", [[5, 7, 11, 13]]) == 23


def test_f4_dot_product_matches_vdot16(tmp_path: Path) -> None:
    app, out = tmp_path / "f.c", tmp_path / "out.c"
    app.write_text(F4_DOT)
    # PicoRV32 routes dsp's opcode (VexRiscv routes only custom-0: the match is refused there)
    args = ["match", str(app), "--ext", str(DSP), "--soc", "picorv32", "-o", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "internal error" not in r.output
    assert "1 match(es)" in r.output
    assert "aquas_vdot16(" in out.read_text()


# -- F13: a loop bound narrower than the induction variable ------------------------------


def test_f13_narrow_unsigned_bound_of_a_long_long_iv() -> None:
    src = (
        "int f(const int *a, const int *b) { int s = 0; "
        "for (long long i = 0; i < 0xffffffffu; i++) s += a[i] * b[i]; return s; }\n" + OTHER
    )
    prog = parse_c(src, "f.c")
    assert prog.diagnostics == []
    assert _lowered(prog) == {"f", "other"}
    (loop,) = _loops(prog)
    assert loop.ub.type == loop.lb.type == loop.step.type
    ext = loop.ub.owner
    # zero-extended: 0xffffffffu is 4294967295 as a long long, not -1
    assert isinstance(ext, arith.ExtUIOp)
    (cst,) = (o.owner for o in ext.operands)
    assert isinstance(cst, arith.ConstantOp)


def test_f13_signed_narrow_bounds_are_sign_extended_and_compute() -> None:
    src = (
        "int f(const int *a, short n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; "
        "return s; }\n"
        "int g(const int *a, int n) { int s = 0; for (long long i = 0; i <= n; i++) "
        "s += a[i]; return s; }\n"
    )
    prog = parse_c(src, "f.c")
    assert prog.diagnostics == []
    ev = Evaluator(prog.module)
    a = [3, 5, 7, 11, 13]
    assert ev.call("f", [a, 4]) == 26
    assert ev.call("f", [a, 0xFFFD]) == 0  # n = -3: no trip
    assert ev.call("g", [a, 2]) == 15
    assert ev.call("g", [a, 0xFFFF_FFFF]) == 0  # n = -1: no trip
    loops = _loops(prog)
    assert len(loops) == 2 and all(lp.ub.type == lp.lb.type for lp in loops)


# -- F5: a very long expression ------------------------------------------------------------


def test_f5_five_thousand_terms_is_a_located_diagnostic() -> None:
    src = OTHER + "int f(const int *a) { return " + " + ".join(["a[0]"] * 5000) + "; }\n"
    prog = parse_c(src, "f.c")
    (diag,) = prog.diagnostics
    assert diag.loc is not None and diag.loc.filename == "f.c" and diag.loc.line == 2
    assert f"more than {MAX_NESTING} levels" in diag.message and "'f'" in diag.message
    assert _lowered(prog) == {"other"}


# -- F6: a function defined twice ----------------------------------------------------------


def test_f6_redefinition_is_located_and_the_rest_lowers() -> None:
    src = "int f(int x) { return x; }\n" + OTHER + "  int f(int x) { return x + 1; }\n"
    prog = parse_c(src, "f.c")
    (diag,) = prog.diagnostics
    assert diag.loc is not None and (diag.loc.line, diag.loc.column) == (3, 7)
    assert "redefinition of function 'f'" in diag.message and "line 1" in diag.message
    assert _lowered(prog) == {"f", "other"}
    assert [f.name for f in prog.functions] == ["f", "other"]
    assert Evaluator(prog.module).call("f", [41]) == 41  # the first definition


# -- F7: huge arrays -----------------------------------------------------------------------


def test_f7_huge_global_array_is_refused_before_allocating() -> None:
    src = (
        "#include <stdint.h>\nstatic int32_t big[1 << 30];\n"
        "int f(void) { int s = 0; for (int i = 0; i < 4; i++) s += big[i]; return s; }\n" + OTHER
    )
    t = time.monotonic()
    prog = parse_c(src, "f.c")
    assert time.monotonic() - t < 5.0
    (diag,) = prog.diagnostics
    assert diag.loc is not None and (diag.loc.line, diag.loc.column) == (3, 59)
    assert "global 'big'" in diag.message and str(MAX_ARRAY_ELEMENTS) in diag.message
    assert "MAX_ARRAY_ELEMENTS" in diag.message
    assert _lowered(prog) == {"other"}


def test_f7_array_at_the_limit_is_accepted() -> None:
    src = f"int big[{MAX_ARRAY_ELEMENTS}];\nint f(void) {{ big[7] = 5; return big[7] + big[8]; }}\n"
    prog = parse_c(src, "f.c")
    assert prog.diagnostics == []
    assert Evaluator(prog.module).call("f", []) == 5


@pytest.mark.parametrize(
    ("decl", "limit"),
    [
        (f"int big[{MAX_ARRAY_ELEMENTS + 1}];", "MAX_ARRAY_ELEMENTS"),
        (f"int big[{MAX_INITIALISED_LOCAL + 1}] = {{1}};", "MAX_INITIALISED_LOCAL"),
    ],
)
def test_f7_huge_local_array_is_a_located_diagnostic(decl: str, limit: str) -> None:
    src = "int f(void) {\n  " + decl + "\n  return big[0];\n}\n" + OTHER
    t = time.monotonic()
    prog = parse_c(src, "f.c")
    assert time.monotonic() - t < 5.0
    (diag,) = prog.diagnostics
    assert diag.loc is not None and diag.loc.line == 2
    assert limit in diag.message and "'f'" in diag.message
    assert _lowered(prog) == {"other"}


def test_initialised_local_array_at_the_limit_is_accepted() -> None:
    n = MAX_INITIALISED_LOCAL
    src = f"int f(void) {{ int t[{n}] = {{1, 2}}; return t[1] + t[{n - 1}]; }}\n"
    prog = parse_c(src, "f.c")
    assert prog.diagnostics == []
    assert Evaluator(prog.module).call("f", []) == 2


# -- located syntax errors -----------------------------------------------------------------


def test_error_at_end_of_input_is_located() -> None:
    with pytest.raises(AquasError) as e:
        parse_c("int f(int x) {\n  return x;\n\n", "f.c")
    assert e.value.loc is not None
    assert (e.value.loc.filename, e.value.loc.line, e.value.loc.column) == ("f.c", 2, 12)
    assert "end of input" in e.value.message


def test_include_of_a_device_is_refused_before_the_preprocessor_runs(tmp_path: Path) -> None:
    # gcc reads /dev/zero until it runs out of memory (found by the fuzz benchmark's
    # preprocessor family under a memory limit): refused with its location, at once
    src = '#include <stdint.h>\n  #include "/dev/zero"\nint f(int x) { return x; }\n'
    t = time.monotonic()
    with pytest.raises(AquasError) as e:
        parse_c(src, str(tmp_path / "f.c"))
    assert time.monotonic() - t < 5.0
    assert e.value.loc is not None and (e.value.loc.line, e.value.loc.column) == (2, 12)
    assert "'/dev/zero' is not a regular file" in e.value.message
