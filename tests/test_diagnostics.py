"""Bad input: every error names file:line:col, shows the line with a caret, and the CLI
exits with status 2 without a traceback and without writing an output file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.spec.frontend import lower_spec

HEAD = "#[opcode(custom0), funct7(1)]\n"

# (name, source, expected message fragment, line, column)
CASES = [
    (
        "syntax",
        HEAD + "isax t(rs1) -> rd {\n  let a: u32 = rs1 +;\n  return a;\n}\n",
        "syntax error: unexpected ';'",
        3,
        21,
    ),
    (
        "bad char",
        HEAD + "isax t(rs1) -> rd {\n  return rs1 @ 2;\n}\n",
        "unexpected character '@'",
        3,
        14,
    ),
    ("eof", HEAD + "isax t(rs1) -> rd {\n  return rs1;\n", "unexpected end of file", 3, 14),
    (
        "width mismatch",
        HEAD + "isax t(rs1) -> rd {\n  let h: u16 = rs1;\n  return zext<u32>(h);\n}\n",
        "type mismatch: expected u16, got u32",
        3,
        16,
    ),
    (
        "operand types",
        HEAD + "isax t(rs1) -> rd {\n  let h: u16 = 1;\n  return rs1 + h;\n}\n",
        "operand types differ: u32 and u16",
        4,
        10,
    ),
    (
        "rd width",
        HEAD + "isax t(rs1) -> rd {\n  let h: u16 = 1;\n  return h;\n}\n",
        "must be 32 bits wide",
        4,
        10,
    ),
    (
        "unknown type",
        HEAD + "isax t(rs1) -> rd {\n  let h: u65 = 1;\n  return rs1;\n}\n",
        "unknown type 'u65'",
        3,
        10,
    ),
    (
        "undefined",
        HEAD + "isax t(rs1) -> rd {\n  return rs1 + nope;\n}\n",
        "undefined name 'nope'",
        3,
        16,
    ),
    (
        "name in a state initializer",
        "state acc: i32 = rd;\n" + HEAD + "isax t(rs1) -> rd {\n  return rs1;\n}\n",
        "'rd' cannot be used here: a state's initial value must be a constant",
        1,
        18,
    ),
    (
        "undefined assign",
        HEAD + "isax t(rs1) -> rd {\n  nope = 3;\n  return rs1;\n}\n",
        "undefined name 'nope'",
        3,
        3,
    ),
    (
        "unused rs2",
        HEAD + "isax t(rs1) -> rd {\n  return rs2;\n}\n",
        "'rs2' is not a parameter",
        3,
        10,
    ),
    (
        "const range",
        HEAD + "isax t(rs1) -> rd {\n  let b: u8 = 300;\n  return rs1;\n}\n",
        "constant 300 is out of range for u8",
        3,
        15,
    ),
    (
        "negative unsigned",
        HEAD + "isax t(rs1) -> rd {\n  let b: u8 = -1;\n  return rs1;\n}\n",
        "constant -1 is out of range for u8",
        3,
        15,
    ),
    (
        "suffix range",
        HEAD + "isax t(rs1) -> rd {\n  return rs1 + zext<u32>(256u8);\n}\n",
        "constant 256 is out of range for u8",
        3,
        26,
    ),
    (
        "funct7 range",
        "#[opcode(custom0), funct7(128)]\nisax t() { }\n",
        "funct7 must be in 0..127",
        1,
        27,
    ),
    (
        "bad opcode",
        "#[opcode(0b0110011), funct7(1)]\nisax t() { }\n",
        "is not a custom opcode",
        1,
        10,
    ),
    ("no funct7", "#[opcode(custom0)]\nisax t() { }\n", "has no funct7", 2, 6),
    ("dup encoding", HEAD + "isax a() { }\n" + HEAD + "isax b() { }\n", "same encoding", 4, 6),
    (
        "dup name",
        "state x: u8;\nstate x: u8;\n" + HEAD + "isax t() { }\n",
        "'x' is already defined at line 1",
        2,
        7,
    ),
    (
        "shadowing",
        HEAD + "isax t(rs1) -> rd {\n  let a: u32 = 1;\n  let a: u32 = 2;\n  return a;\n}\n",
        "'a' is already defined at line 3",
        4,
        7,
    ),
    (
        "assign let",
        HEAD + "isax t(rs1) -> rd {\n  let a: u32 = 1;\n  a = 2;\n  return a;\n}\n",
        "cannot assign to 'a'",
        4,
        3,
    ),
    (
        "burst too small",
        "scratchpad buf: [u32; 8];\n"
        + HEAD
        + "isax t(rs1) {\n  burst buf[4 +: 8] <- mem[rs1];\n}\n",
        "burst of 8 elements at offset 4 does not fit scratchpad 'buf' of 8 elements",
        4,
        18,
    ),
    (
        "burst len zero",
        "scratchpad buf: [u32; 8];\n"
        + HEAD
        + "isax t(rs1) {\n  burst buf[0 +: 0] <- mem[rs1];\n}\n",
        "burst length must be positive",
        4,
        18,
    ),
    (
        "burst elem width",
        "scratchpad buf: [u12; 8];\n"
        + HEAD
        + "isax t(rs1) {\n  burst buf[0 +: 2] <- mem[rs1];\n}\n",
        "bursts need scratchpad elements of 8, 16, 32 or 64 bits",
        4,
        9,
    ),
    (
        "spm index",
        "scratchpad buf: [u32; 8];\n" + HEAD + "isax t(rs1) -> rd {\n  return buf[8];\n}\n",
        "index 8 out of bounds",
        4,
        14,
    ),
    (
        "mem width",
        HEAD + "isax t(rs1) -> rd {\n  return zext<u32>(mem<u12>[rs1]);\n}\n",
        "memory accesses are 8, 16, 32 or 64 bits",
        3,
        24,
    ),
    (
        "no return",
        HEAD + "isax t(rs1) -> rd {\n  let a: u32 = rs1;\n}\n",
        "never returns a value",
        2,
        6,
    ),
    (
        "return in loop",
        HEAD + "isax t(rs1) -> rd {\n  for i in 0..2 { return i; }\n  return rs1;\n}\n",
        "return must be the last statement",
        3,
        19,
    ),
    ("return without rd", HEAD + "isax t(rs1) {\n  return rs1;\n}\n", "declares no result", 3, 3),
    (
        "loop bounds",
        HEAD + "isax t(rs1) -> rd {\n  for i in 0..rs1 { }\n  return rs1;\n}\n",
        "loop bounds must be constants",
        3,
        15,
    ),
    (
        "loop var range",
        HEAD + "isax t(rs1) -> rd {\n  for i: u4 in 0..17 { }\n  return rs1;\n}\n",
        "cannot hold 0..17",
        3,
        7,
    ),
    (
        "unroll factor",
        HEAD + "isax t(rs1) -> rd {\n  #[unroll(9)]\n  for i in 0..8 { }\n  return rs1;\n}\n",
        "unroll factor must be in 1..8",
        3,
        12,
    ),
    (
        "condition type",
        HEAD + "isax t(rs1) -> rd {\n  if rs1 { }\n  return rs1;\n}\n",
        "a condition must be u1",
        3,
        6,
    ),
    (
        "untyped literal",
        HEAD + "isax t(rs1) -> rd {\n  let a = 5;\n  return rs1;\n}\n",
        "cannot infer the type",
        3,
        11,
    ),
    (
        "sext narrows",
        HEAD + "isax t(rs1) -> rd {\n  let a: u8 = sext<u8>(rs1);\n  return rs1;\n}\n",
        "sext to u8 narrows u32",
        3,
        15,
    ),
    (
        "as width",
        HEAD + "isax t(rs1) -> rd {\n  let a: u8 = rs1 as u8;\n  return rs1;\n}\n",
        "`as` only reinterprets",
        3,
        15,
    ),
    (
        "slice range",
        HEAD + "isax t(rs1) -> rd {\n  return zext<u32>(rs1[32:1]);\n}\n",
        "slice [32:1] out of range for u32",
        3,
        20,
    ),
    (
        "concat width",
        HEAD + "isax t(rs1) -> rd {\n  return trunc<u32>({rs1, rs1, rs1});\n}\n",
        "concatenation is 96 bits wide",
        3,
        21,
    ),
    ("no isax", "state s: u8;\n", "the spec defines no ISAX", 1, 1),
    ("bad param", HEAD + "isax t(rs3) { }\n", "parameter 'rs3' must be rs1 or rs2", 2, 8),
    (
        "div zero const",
        HEAD + "isax t(rs1) -> rd {\n  return rs1 + 4 / 0;\n}\n",
        "division by zero",
        3,
        16,
    ),
]


@pytest.mark.parametrize(("name", "src", "msg", "line", "col"), CASES, ids=[c[0] for c in CASES])
def test_error_location_and_message(name: str, src: str, msg: str, line: int, col: int) -> None:
    with pytest.raises(AquasError) as info:
        lower_spec(src, "bad.isax")
    e = info.value
    assert msg in e.message
    assert e.loc is not None
    assert (e.loc.filename, e.loc.line, e.loc.column) == ("bad.isax", line, col)
    text = e.render()
    first, src_line, caret = text.splitlines()[:3]
    assert first.startswith(f"bad.isax:{line}:{col}: error: ")
    assert src_line.strip() == src.splitlines()[line - 1].strip()
    assert caret.index("^") - 2 == col - 1  # two-space indent, then the caret under the column


CLI = [sys.executable, "-m", "aquas.cli"]


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "name", ["width mismatch", "dup encoding", "burst too small", "undefined", "syntax"]
)
def test_cli_reports_and_writes_nothing(name: str, tmp_path: Path) -> None:
    src = next(c[1] for c in CASES if c[0] == name)
    spec = tmp_path / "bad.isax"
    spec.write_text(src)
    out = tmp_path / "out.mlir"
    for args in (["check", "bad.isax"], ["lower", "bad.isax", "-o", "out.mlir"]):
        p = run_cli(*args, cwd=tmp_path)
        assert p.returncode == 2, p.stderr
        assert "Traceback" not in p.stderr
        assert "bad.isax:" in p.stderr and ": error: " in p.stderr and "^" in p.stderr
        assert not out.exists()
    assert sorted(f.name for f in tmp_path.iterdir()) == ["bad.isax"]


def test_cli_debug_shows_traceback(tmp_path: Path) -> None:
    (tmp_path / "bad.isax").write_text(CASES[0][1])
    p = run_cli("--debug", "check", "bad.isax", cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" in p.stderr


def test_cli_missing_file_and_bad_mlir(tmp_path: Path) -> None:
    p = run_cli("lower", "missing.isax", cwd=tmp_path)
    assert p.returncode == 2 and "spec missing.isax does not exist" in p.stderr
    assert "Traceback" not in p.stderr
    (tmp_path / "bad.mlir").write_text(
        '"builtin.module"() ({\n  %0 = arith.constant : i32\n}) : () -> ()\n'
    )
    p = run_cli("opt", "bad.mlir", "-p", "cse", cwd=tmp_path)
    assert p.returncode == 2 and "bad.mlir:2:" in p.stderr and "Traceback" not in p.stderr
