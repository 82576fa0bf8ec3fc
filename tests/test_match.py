"""The e-graph matcher (aquas.egraph): corpus robustness, soundness on near misses,
differential execution of every rewritten program, rule-set units, CLI and bad input."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from match_corpus.corpus import ISAX_SPECS, corpus_files, same_computation
from match_harness import driver, overlap_driver

from aquas.cli import main
from aquas.egraph import cfront
from aquas.egraph.driver import load_patterns, match_file
from aquas.egraph.egg import Limits, Prover
from aquas.egraph.emit import HEADER, rewrite_c, rewrite_mlir
from aquas.egraph.matcher import DEPENDENCE, PROFIT, TARGET, Options
from aquas.egraph.semantics import Executor, Unsupported
from aquas.egraph.terms import binop, cast, cmp, const, load, select, var
from aquas.interpreter import find_extension
from aquas.runtime.build import build_program
from aquas.runtime.header import write_header
from aquas.runtime.iss import golden_isax_handler, run_elf
from aquas.spec.frontend import lower_spec_file

ROOT = Path(__file__).resolve().parents[1]
FILES = corpus_files()
POSITIVES = [f for f in FILES if f.positive]
NEGATIVES = [f for f in FILES if not f.positive]
# The floor the issue sets (90%); measured 60 of 62 variants (96.8%, docs/matcher.md
# lists the misses).
MIN_FOUND_RATE = 0.90


@functools.cache
def patterns(spec: str):  # type: ignore[no-untyped-def]
    return load_patterns(ROOT / spec)


@functools.cache
def result(name: str, profit: bool = True):  # type: ignore[no-untyped-def]
    cf = next(f for f in FILES if f.name == name)
    spec = ISAX_SPECS[cf.like]
    # without the cost model: on PicoRV32, which routes every custom opcode (the patterns
    # are VexRiscv's, re-encoded onto custom-0, which PicoRV32 routes too)
    opts = Options(check_profit=False, core="picorv32") if not profit else Options()
    return match_file(cf.path, ROOT / spec, patterns=patterns(spec), options=opts)


def found(cf) -> bool:  # type: ignore[no-untyped-def]
    res = result(cf.name)
    return any(
        d.isax in same_computation(cf.isax)
        and (d.status == "matched" or d.reason in (PROFIT, TARGET))
        for d in res.decisions
    )


# ---------------------------------------------------------------------------------------
# Robustness and soundness on the held-out corpus
# ---------------------------------------------------------------------------------------


def test_corpus_found_rate() -> None:
    hits = {cf.name: found(cf) for cf in POSITIVES}
    rate = sum(hits.values()) / len(hits)
    missed = sorted(n for n, ok in hits.items() if not ok)
    print(f"found {sum(hits.values())}/{len(hits)} = {rate:.1%}; missed: {missed}")
    assert rate >= MIN_FOUND_RATE, missed


@pytest.mark.parametrize("cf", NEGATIVES, ids=lambda f: f.name)
def test_near_miss_is_never_matched(cf, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A near miss is never replaced by the ISAX of its calling convention. A register
    ISAX may still be found on computed operands (``modmul_q_helper_mask_fff`` is
    ``modmul_q(a & 0xfff, b & 0xfff)``): such a rewrite is correct for the program, so it
    must keep the computation in an operand and give the same output on the ISS. (A
    helper function of the file may be the ISAX itself, `fqmul`: the ISS run covers it.)"""
    for res in (result(cf.name), result(cf.name, profit=False)):  # ... even unprofitable
        for d in (d for d in res.matched if d.function == "kernel"):
            assert d.binding is not None
            if cf.alias and d.isax == cf.like:
                assert d.binding.guard, (d.isax, d.line)  # only under an alias guard
                continue
            plain = [t.args[0] if t.op in ("zext", "sext") else t for t in d.binding.regs.values()]
            assert any(t.op not in ("var", "load") for t in plain), (d.isax, d.line, d.detail)
    if result(cf.name, profit=False).matched:
        same_output_on_the_iss(cf, result(cf.name, profit=False), tmp_path)


#: offsets of the second buffer from the first, in bytes, for the alias near misses: the
#: overlaps their headers name (v3ddist b + 48 == a + 4, vmaxarg out == v + 5, sparse
#: dense == s + 4) and others on both sides
OVERLAPS = [-188, -64, -4, 0, 4, 8, 20, 60, 124]


def test_alias_negatives_are_refused_or_guarded(tmp_path: Path) -> None:
    """A near miss that differs from its ISAX only when its buffers overlap is either
    rejected for the dependence or rewritten under an alias guard; a guarded rewrite gives
    the original's output on the ISS on overlapping buffers (the original code runs) as
    well as on separate ones (the ISAX runs, test_near_miss_is_never_matched)."""
    alias = [cf for cf in NEGATIVES if cf.alias]
    assert {cf.like for cf in alias} >= {"v3ddist", "vmaxarg"}
    for cf in alias:
        res = result(cf.name, profit=False)
        ds = [d for d in res.decisions if d.isax == cf.like and d.function == "kernel"]
        guarded = [d for d in ds if d.status == "matched"]
        if not guarded:
            assert DEPENDENCE in {d.reason for d in ds}, (cf.name, [d.reason for d in ds])
            continue
        assert all(d.binding is not None and d.binding.guard for d in guarded)
        d = tmp_path / cf.name.replace("/", "_")
        outs = same_output_on_the_iss(cf, res, d, overlap_driver(cf.like, OVERLAPS), 0)
        assert outs[0].count("\n") == len(OVERLAPS)


# ---------------------------------------------------------------------------------------
# Differential execution: original vs rewritten program, RV32IM binaries on the ISS with
# the ISAXs executed by the golden interpreter
# ---------------------------------------------------------------------------------------

MATCHED = [cf for cf in POSITIVES if result(cf.name, profit=False).matched]


@pytest.mark.parametrize("cf", MATCHED, ids=lambda f: f.name)
def test_rewritten_program_has_the_same_output(cf, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    same_output_on_the_iss(cf, result(cf.name, profit=False), tmp_path)


def same_output_on_the_iss(  # type: ignore[no-untyped-def]
    cf, res, tmp_path: Path, main_c: str | None = None, lines: int = 6
) -> list[str]:
    """The corpus file and its rewrite, linked with the corpus driver (or ``main_c``), give
    the same output on the ISS (``lines`` lines of it, 0: any)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    new = rewrite_c(res)
    isaxs = {d.isax for d in res.matched}
    assert new != cf.path.read_text() and any(f"aquas_{i}(" in new for i in isaxs)
    (tmp_path / "orig").mkdir()
    (tmp_path / "new").mkdir()
    (tmp_path / "orig" / "kernel.c").write_text(cf.path.read_text())
    (tmp_path / "new" / "kernel.c").write_text(new)
    write_header(res.extension, "picorv32", tmp_path / "new" / HEADER)
    (tmp_path / "main.c").write_text(main_c or driver(cf.like, cf.n))
    outputs = []
    for which in ("orig", "new"):
        elf = build_program(
            [tmp_path / "main.c", tmp_path / which / "kernel.c"],
            tmp_path / f"build-{which}",
            platform="picorv32",
            header_dirs=[tmp_path / which],
            cflags=["-fwrapv"],
        )
        run = run_elf(elf, "picorv32", custom=golden_isax_handler(res.extension))
        assert run.exit_code == 0, run.output
        outputs.append(run.output)
    if lines:
        assert outputs[0].count("\n") == lines
    assert outputs[0] == outputs[1]
    return outputs


def test_only_the_matched_region_changes() -> None:
    cf = next(f for f in POSITIVES if f.name == "vdot16/n70_plain")
    src = cf.path.read_text()
    new = rewrite_c(result(cf.name, profit=False))  # without the cost model
    # the text before the loop and after it is byte for byte the original
    head, tail = src.split("    for (int i = 0; i < N; i++)")
    assert new.startswith(
        head.replace("#include <stdint.h>\n", f'#include <stdint.h>\n#include "{HEADER}"\n')
    )
    assert new.endswith(tail.split("acc += a[i] * b[i];\n", 1)[1])
    # vdot32 chunks, the remainder loop kept in software: 70 = 2 x 32 + 6
    assert "i + 32 <= 70" in new and "acc += a[i] * b[i];" in new


# ---------------------------------------------------------------------------------------
# The e-graph
# ---------------------------------------------------------------------------------------


def _sum(xs):  # type: ignore[no-untyped-def]
    acc = const(32, 0)
    for x in xs:
        acc = binop("add", acc, x)
    return acc


def test_prover_association_and_commutation_of_long_sums() -> None:
    x = [var(f"x{i}", 32) for i in range(64)]
    y = [var(f"y{i}", 32) for i in range(64)]
    lhs = _sum(binop("mul", a, b) for a, b in zip(x, y, strict=True))
    even = _sum(binop("mul", y[i], x[i]) for i in range(0, 64, 2))
    odd = _sum(binop("mul", x[i], y[i]) for i in range(1, 64, 2))
    p = Prover()
    assert p.equal_all([(lhs, binop("add", odd, even))])
    assert not Prover().equal_all([(lhs, binop("add", odd, odd))])


def test_prover_rules() -> None:
    a, b, i = var("a", 32), var("b", 32), var("i", 32)
    eq = lambda lhs, rhs: Prover(Limits(iterations=6)).equal_all([(lhs, rhs)])  # noqa: E731
    # shift vs multiply, squares of differences in either orientation
    assert eq(binop("shl", i, const(32, 2)), binop("mul", const(32, 4), i))
    d1, d2 = binop("sub", a, b), binop("sub", b, a)
    assert eq(binop("mul", d1, d1), binop("mul", d2, d2))
    assert not eq(binop("mul", d1, d1), binop("mul", d1, d2))
    # masks are truncations; truncation of a wide product
    assert eq(
        cast("zext", 64, binop("and", a, const(32, 0xFFFF))), cast("zext", 64, cast("trunc", 16, a))
    )
    wide = binop("mul", cast("sext", 64, a), cast("sext", 64, b))
    assert eq(cast("trunc", 32, wide), binop("mul", a, b))
    assert not eq(cast("trunc", 32, binop("shru", wide, const(64, 32))), binop("mul", a, b))
    # max written with > or with >=
    gt = select(cmp("sgt", a, b), a, b)
    assert eq(gt, select(cmp("sge", a, b), a, b))
    assert not eq(gt, select(cmp("sgt", a, b), b, a))
    # bytes assembled into a word are a word load
    s = var("s", 32)
    byte = lambda k: cast("zext", 32, load(8, binop("add", s, const(32, k)) if k else s))  # noqa: E731
    word = byte(0)
    for k in (1, 2, 3):
        word = binop("or", word, binop("shl", byte(k), const(32, 8 * k)))
    assert eq(word, load(32, s))
    # x % q for a 32-bit x is the Barrett reduction (64-bit intermediate)
    x = binop("mul", binop("and", a, const(32, 0xFFFF)), binop("and", b, const(32, 0xFFFF)))
    x64 = cast("zext", 64, x)
    t = binop("shru", binop("mul", x64, const(64, 1290167)), const(64, 32))
    r = binop("sub", x64, binop("mul", t, const(64, 3329)))
    red = select(cmp("uge", r, const(64, 3329)), binop("sub", r, const(64, 3329)), r)
    assert eq(binop("remu", x, const(32, 3329)), cast("trunc", 32, red))
    assert not eq(binop("remu", x, const(32, 3328)), cast("trunc", 32, red))


# ---------------------------------------------------------------------------------------
# CLI, MLIR input, bad input
# ---------------------------------------------------------------------------------------

POINTCLOUD = ROOT / "examples" / "pointcloud" / "pointcloud.isax"


def test_cli_match_rewrites_and_explains(tmp_path: Path) -> None:
    app = ROOT / "tests" / "match_corpus" / "v3ddist" / "baseline.c"
    out = tmp_path / "out.c"
    r = CliRunner().invoke(
        main, ["match", str(app), "--ext", str(POINTCLOUD), "-o", str(out), "--explain"]
    )
    assert r.exit_code == 0, r.output
    assert "v3ddist" in r.output and "1 match(es)" in r.output
    assert re.search(r"kernel:9: vgemv4: no \(footprint mismatch\)", r.output)
    assert "vmaxarg" in r.output
    text = out.read_text()
    assert "aquas_v3ddist((uint32_t)(uintptr_t)a, (uint32_t)(uintptr_t)b)" in text
    assert (tmp_path / HEADER).is_file()


def test_cli_unsupported_function_is_left_untouched(tmp_path: Path) -> None:
    src = (ROOT / "tests" / "match_corpus" / "v3ddist" / "baseline.c").read_text()
    bad = src + "\nint other(int x)\n{\n    while (x) {\n        break;\n    }\n    return x;\n}\n"
    app = tmp_path / "app.c"
    app.write_text(bad)
    out = tmp_path / "out.c"
    r = CliRunner().invoke(main, ["match", str(app), "--ext", str(POINTCLOUD), "-o", str(out)])
    assert r.exit_code == 0, r.output
    line = bad[: bad.index("break;")].count("\n") + 1
    assert f"{app}:{line}:9" in r.output and "'break' statement" in r.output
    new = out.read_text()
    assert new.endswith(bad[bad.index("int other") :])  # the unsupported function is unchanged
    assert "aquas_v3ddist(" in new


@pytest.mark.parametrize(
    "text,msg",
    [
        ("int f(int x) { return x +; }", "app.c:1:"),
        ("int f(int x) { return x; ", "app.c:1:25: error: C syntax error: unexpected end of input"),
    ],
)
def test_cli_syntax_error_writes_nothing(text: str, msg: str, tmp_path: Path) -> None:
    app = tmp_path / "app.c"
    app.write_text(text)
    out = tmp_path / "out.c"
    r = CliRunner().invoke(main, ["match", str(app), "--ext", str(POINTCLOUD), "-o", str(out)])
    assert r.exit_code == 2 and msg in r.output and "Traceback" not in r.output
    assert not out.exists()


def test_cli_bad_arguments(tmp_path: Path) -> None:
    app = tmp_path / "app.txt"
    app.write_text("x")
    r = CliRunner().invoke(main, ["match", str(app), "--ext", str(POINTCLOUD)])
    assert r.exit_code == 2 and "expected a .c or .mlir file" in r.output
    r = CliRunner().invoke(main, ["match", str(tmp_path / "none.c"), "--ext", str(POINTCLOUD)])
    assert r.exit_code == 2 and "none.c does not exist" in r.output


def test_mlir_input_gets_isax_calls(tmp_path: Path) -> None:
    cf = ROOT / "tests" / "match_corpus" / "vcovmat3d" / "baseline.c"
    prog = cfront.parse_c_file(cf)
    app = tmp_path / "app.mlir"
    app.write_text(str(prog.module))
    res = match_file(app, POINTCLOUD, patterns=patterns("examples/pointcloud/pointcloud.isax"))
    assert [d.isax for d in res.matched] == ["vcovmat3d"]
    module = rewrite_mlir(res)
    text = str(module)
    assert "func.call @aquas_vcovmat3d" in text and "scf.for" not in text
    assert "memref.extract_aligned_pointer_as_index" in text


def test_stateful_isaxs_are_not_patterns() -> None:
    _, pats = patterns("examples/dsp/dsp.isax")
    kinds = {p.name: (p.kind, p.why) for p in pats}
    assert kinds["vdot16"][0] == "memory"
    for name in ("fir_load_taps", "biquad_load", "biquad_save", "biquad_restore"):
        assert kinds[name][0] == "unsupported" and "state" in kinds[name][1], kinds[name]
    # biquad's state goes through biquad_load/_restore/_save, fir8's taps are filled by
    # fir_load_taps right before it: tests/test_match_stateful.py
    assert kinds["biquad"][0] == "stateful"
    fir8 = next(p for p in pats if p.name == "fir8")
    assert (fir8.kind, fir8.preload) == ("memory", "fir_load_taps")
    ext = find_extension(lower_spec_file(ROOT / "examples" / "dsp" / "dsp.isax"))
    assert ext.sym_name.data == "dsp"


# ---------------------------------------------------------------------------------------
# Budgets and oversized inputs (Reliability D15, D16): one function's diagnostic, with the
# limit named, never a crash of the whole file or an unbounded run.

GOOD = "int32_t good(int32_t x) { return x + 1; }\n"


def _match_text(tmp_path: Path, name: str, text: str, **kw):  # type: ignore[no-untyped-def]
    src = tmp_path / name
    src.write_text("#include <stdint.h>\n" + text + GOOD)
    ext, pats = patterns("examples/dsp/dsp.isax")
    return match_file(src, ROOT / "examples/dsp/dsp.isax", patterns=(ext, pats), **kw)


def test_60_nested_loops_stop_at_the_budget(tmp_path: Path) -> None:
    n = 60
    loops = "".join(f"for (int i{k} = 0; i{k} < 2; i{k}++)\n" for k in range(n))
    res = _match_text(
        tmp_path,
        "nest.c",
        "int32_t nest(int32_t *a) {\nint32_t s = 0;\n" + loops + "s += a[i0];\nreturn s;\n}\n",
    )
    assert [f.name for f in res.program.functions if f.func is not None] == ["nest", "good"]
    outer = next(d for d in res.decisions if d.line == 4)
    assert outer.status == "rejected" and outer.reason == "unsupported"
    # 2^60 iterations of the innermost body are refused before executing anything
    assert "loop of 2 iterations needs at least" in outer.detail
    assert "execution budget" in outer.detail


def test_huge_trip_counts_are_diagnosed_per_loop(tmp_path: Path) -> None:
    res = _match_text(
        tmp_path,
        "trips.c",
        "uint32_t f32(uint32_t *a) { uint32_t s = 0;\n"
        "  for (int64_t i = 0; i < 4294967296ll; i++) s += a[i];\n  return s; }\n",
    )
    # the 2^32 bound used to crash the frontend (an xDSL AssertionError) for the whole file
    assert res.program.diagnostics == []
    assert [f.name for f in res.program.functions if f.func is not None] == ["f32", "good"]
    # one decision per pattern tried on the loop (vdot16, vdot32, fir8 and the stateful
    # biquad)
    ds = [d for d in res.decisions if d.function == "f32"]
    assert sorted(d.isax for d in ds) == ["biquad", "fir8", "vdot16", "vdot32"]
    assert all(d.status == "rejected" for d in ds)


def test_2_to_30_trip_loop_is_refused_before_execution() -> None:
    prog = cfront.parse_c(
        "#include <stdint.h>\nuint32_t f(const uint32_t *a) { uint32_t s = 0;\n"
        "  for (int i = 0; i < (1 << 30); i++) s ^= a[i] >> 1;\n  return s; }\n",
        "t.c",
    )
    fop = prog.functions[0].func
    assert fop is not None
    ex = Executor(budget=100_000)
    with pytest.raises(Unsupported, match="loop of 1073741824 iterations needs at least") as e:
        ex.run_block(fop.body.block, [var("a", 32)])
    assert "of 100000 per region" in str(e.value)
    assert ex.fx.ops < 10  # refused up front, not after 100000 steps


def test_function_budget_is_shared_by_all_regions(tmp_path: Path) -> None:
    loops = "".join(f"for (int i = 0; i < 300; i++) s{k} += a[i] * b[i];\n" for k in range(4))
    decls = "".join(f"int32_t s{k} = 0;\n" for k in range(4))
    res = _match_text(
        tmp_path,
        "many.c",
        "int32_t many(const int16_t *restrict a, const int16_t *restrict b) {\n"
        + decls
        + loops
        + "return s0 + s1 + s2 + s3;\n}\n",
        options=Options(function_budget=300),
    )
    last = [d for d in res.decisions if d.function == "many" and d.isax == "vdot16"][-1]
    assert last.status == "rejected"
    # refused by what the first loop left of the function's 300 operations: exhausted
    # while running, or refused up front (fir8, tried first since it is a pattern, runs
    # the loop's one-iteration shape before vdot16 does)
    left = re.search(r"more than the execution budget leaves \((\d+) of", last.detail)
    assert (
        "symbolic-execution budget is exhausted (300 operations per function, "
        "Options.function_budget, in 'many')" in last.detail
    ) or (left is not None and int(left.group(1)) < 300), last.detail


def test_20000_term_expression_is_one_functions_diagnostic(tmp_path: Path) -> None:
    terms = " + ".join(f"a[{k % 7}]" for k in range(20_000))
    res = _match_text(
        tmp_path, "big.c", "int32_t big(const int32_t *a) { return " + terms + "; }\n"
    )
    (diag,) = res.program.diagnostics
    assert "nested more than 200 levels deep" in diag.message
    assert "MAX_NESTING" in diag.message and "'big' is left untouched" in diag.message
    assert diag.loc is not None and diag.loc.line == 2
    assert [f.name for f in res.program.functions if f.func is not None] == ["good"]
