"""The aquas dialect: textual round trip and op verifiers."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from aquas.cli import make_context, print_ir
from aquas.spec.frontend import lower_spec, lower_spec_file

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").rglob("*.isax"))


def roundtrip(text: str) -> str:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return print_ir(module)


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
@pytest.mark.parametrize("debuginfo", [False, True])
def test_examples_round_trip(path: Path, debuginfo: bool) -> None:
    text = print_ir(lower_spec_file(path), debuginfo)
    module = Parser(make_context(), text).parse_module()
    module.verify()
    assert print_ir(module, debuginfo) == text


def test_round_trip_of_every_construct() -> None:
    src = """
    extension all_ops;
    state acc: i64 = -3;
    scratchpad buf: [u16; 16] partition(block, 4);
    #[opcode(custom2), funct3(7), funct7(9)]
    isax t(rs1, rs2) -> rd {
        burst buf[0 +: 16] <- mem[rs1];
        var x: u32 = mem<u32>[rs2];
        #[unroll(2)]
        for i in 0..16 { if buf[i] > 3 { x += zext<u32>(buf[i]); } else { buf[i] = 0; } }
        mem<u8>[rs2] = trunc<u8>(x);
        burst mem[rs2 + 64] <- buf[4 +: 8];
        acc = acc + sext<i64>(x as i32);
        return x;
    }
    """
    text = print_ir(lower_spec(src, "a.isax"))
    for op in (
        "aquas.extension",
        "aquas.state",
        "aquas.scratchpad",
        "aquas.isax",
        "aquas.rs1",
        "aquas.rs2",
        "aquas.load",
        "aquas.store",
        "aquas.burst_read",
        "aquas.burst_write",
        "aquas.spm_read",
        "aquas.spm_write",
        "aquas.state_read",
        "aquas.state_write",
        "aquas.write_rd",
        "aquas.unroll = 2",
    ):
        assert op in text
    assert roundtrip(text) == text


GOOD = """builtin.module {
  aquas.extension @e {
    aquas.state @acc = 0 : i32
    aquas.scratchpad @buf : memref<8xi32> partition "cyclic" 2
    aquas.isax @a opcode 11 funct3 0 funct7 1 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      %1 = arith.constant 0 : i32
      aquas.burst_read %0 -> @buf[%1] length 8
      %2 = aquas.spm_read @buf[%1] : i32
      aquas.state_write %2, @acc : i32
      aquas.write_rd %2 : i32
    }
  }
}
"""


def test_good_module_verifies() -> None:
    assert roundtrip(GOOD) == GOOD


def test_predicated_accesses_round_trip_and_may_be_out_of_bounds() -> None:
    # the predicate of a predicated kernel's stage (synth/loop_pipeline.py); a constant
    # index out of bounds is accepted when the access is predicated, refused otherwise
    text = GOOD.replace(
        "      aquas.state_write %2, @acc : i32\n",
        "      %3 = arith.constant 8 : i32\n"
        "      %4 = arith.cmpi ult, %1, %3 : i32\n"
        "      %5 = aquas.spm_read @buf[%3] if %4 : i32\n"
        "      aquas.spm_write %5, @buf[%3] if %4 : i32\n"
        "      aquas.state_write %2, @acc if %4 : i32\n",
    )
    assert roundtrip(text) == text
    with pytest.raises(Exception, match="index 8 out of bounds"):
        roundtrip(text.replace("@buf[%3] if %4", "@buf[%3]", 1))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("opcode 11", "opcode 51", "not a RISC-V custom opcode"),
        ("funct7 1", "funct7 128", "funct7 must be in 0..127"),
        ("funct3 0", "funct3 8", "funct3 must be in 0..7"),
        ("length 8", "length 0", "burst length must be positive"),
        ("length 8", "length 9", "does not fit scratchpad"),
        ('uses ["rs1", "rd"]', 'uses ["rd"]', "does not use rs1"),
        ('uses ["rs1", "rd"]', 'uses ["rs1"]', "does not use rd"),
        ('uses ["rs1", "rd"]', 'uses ["rs1", "rd", "rd"]', "lists a register twice"),
        ('partition "cyclic" 2', 'partition "diagonal" 2', "partition must be one of"),
        ('partition "cyclic" 2', 'partition "cyclic" 9', "partition factor must be in 1..8"),
        ("aquas.state @acc = 0 : i32", "aquas.state @acc = 0 : i64", "does not match state type"),
        ("@buf[%1] : i32", "@buf[%7] : i32", ""),  # undefined value: a parse error
        ("%1 = arith.constant 0 : i32", "%1 = arith.constant 8 : i32", "at offset 8 does not fit"),
        (
            "@buf[%1] : i32",
            "@buf[%3] : i32\n      %3 = arith.constant 9 : i32",
            "",
        ),  # use before def
        ("aquas.spm_read @buf", "aquas.spm_read @nope", "no scratchpad named @nope"),
        (
            "%2 = aquas.spm_read @buf[%1] : i32",
            "%8 = arith.constant 8 : i32\n      %2 = aquas.spm_read @buf[%8] : i32",
            "index 8 out of bounds",
        ),
        (
            "%2 = aquas.spm_read @buf[%1] : i32",
            "%9 = aquas.spm_read @buf[%1] : i16\n      %2 = aquas.spm_read @buf[%1] : i32",
            "does not match scratchpad element type",
        ),
        ("aquas.state_write %2, @acc", "aquas.state_write %2, @buf", "is not an aquas.state"),
    ],
)
def test_verifier_rejects(old: str, new: str, message: str) -> None:
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    with pytest.raises(Exception) as info:
        roundtrip(text)
    assert message in str(info.value)


def test_duplicate_encodings_rejected() -> None:
    isax = GOOD[GOOD.index("    aquas.isax") : GOOD.index("  }\n}")]
    text = GOOD.replace(isax, isax + isax.replace("@a opcode", "@b opcode"))
    with pytest.raises(VerifyException, match="same encoding"):
        roundtrip(text)
    assert roundtrip(text.replace("@b opcode 11", "@b opcode 43")).count("aquas.isax") == 2


def test_load_width_rejected() -> None:
    text = GOOD.replace(
        "%2 = aquas.spm_read @buf[%1] : i32",
        "%9 = aquas.load %0 : i12\n      %2 = aquas.spm_read @buf[%1] : i32",
    )
    with pytest.raises(VerifyException, match="memory access width"):
        roundtrip(text)
