"""Re-encoding an extension into the opcodes a core routes (aquas.reencode): the allocation
(kept encodings, collisions, the preference order, exhaustion, determinism), the
``aquas-reencode`` pass on hand-written IR, the example extensions on VexRiscv (their
headers: no ``deprecated``, custom-0 words), the matcher and the CLI.

Expected encodings are written by hand from the specs and the documented allocation
order (docs/spec-language.md, "Encodings on a core that routes fewer opcodes")."""

from __future__ import annotations

import io
import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from xdsl.context import Context
from xdsl.dialects import arith, builtin
from xdsl.parser import Parser
from xdsl.printer import Printer

from aquas.cli import main
from aquas.dialects import aquas as aq
from aquas.egraph.driver import load_patterns, match_file
from aquas.egraph.emit import rewrite_c
from aquas.egraph.matcher import TARGET, Options
from aquas.interpreter import find_extension
from aquas.passes import PASSES, parse_pipeline
from aquas.reencode import (
    Encoding,
    ReencodeError,
    SpaceExhausted,
    allocate,
    spec_for_target,
)
from aquas.runtime.header import generate_header
from aquas.target import load_target

from helpers import require_tool

ROOT = Path(__file__).resolve().parents[1]
C0, C1, C2, C3 = 0x0B, 0x2B, 0x5B, 0x7B
VEX = load_target(soc="vexriscv")
PICO = load_target(soc="picorv32")
CROSS = "riscv64-unknown-elf-"


def E(op: int, f3: int, f7: int) -> Encoding:
    return Encoding(op, f3, f7)


def moved(isaxs: list[tuple[str, Encoding]], routed: tuple[int, ...]) -> dict[str, Encoding]:
    return {m.isax: m.new for m in allocate(isaxs, routed)}


# -- the allocation -----------------------------------------------------------------------


def test_routed_isaxs_stay_and_movers_keep_their_function_bits() -> None:
    isaxs = [("a", E(C0, 0, 5)), ("b", E(C1, 2, 7)), ("c", E(C3, 0, 6))]
    assert moved(isaxs, (C0,)) == {"b": E(C0, 2, 7), "c": E(C0, 0, 6)}
    assert allocate(isaxs, (C0, C1, C2, C3)) == []  # PicoRV32: nothing moves


def test_a_collision_changes_funct3_first_then_funct7() -> None:
    # b collides with a (kept) on (0, 3): same funct7 3, next funct3 = 1
    isaxs = [("a", E(C0, 0, 3)), ("b", E(C1, 0, 3)), ("c", E(C2, 0, 3))]
    assert moved(isaxs, (C0,)) == {"b": E(C0, 1, 3), "c": E(C0, 2, 3)}
    # every funct3 of funct7 9 is taken: keep funct3 = 4, lowest free funct7 is 0
    taken = [(f"k{g}", E(C0, g, 9)) for g in range(8)]
    assert moved([*taken, ("m", E(C2, 4, 9))], (C0,)) == {"m": E(C0, 4, 0)}
    # funct3 4 is taken for every funct7 and so is every funct3 of funct7 9: the first
    # free triple in funct7-then-funct3 order, (funct3 0, funct7 0)
    full = [(f"x{g}", E(C0, 4, g)) for g in range(128)] + taken[:4] + taken[5:]
    assert moved([*full, ("m", E(C2, 4, 9))], (C0,)) == {"m": E(C0, 0, 0)}


def test_movers_never_collide_with_each_other_and_follow_spec_order() -> None:
    isaxs = [("p", E(C1, 0, 0)), ("q", E(C2, 0, 0)), ("r", E(C3, 0, 0)), ("s", E(C1, 0, 1))]
    got = moved(isaxs, (C0,))
    assert got == {"p": E(C0, 0, 0), "q": E(C0, 1, 0), "r": E(C0, 2, 0), "s": E(C0, 0, 1)}
    # reversed spec order: r is first now and keeps (0, 0)
    rev = moved(list(reversed(isaxs)), (C0,))
    assert rev["r"] == E(C0, 0, 0) and rev["p"] == E(C0, 2, 0)
    assert len(set(got.values())) == 4


def test_two_routed_opcodes_prefer_the_lower_one_with_the_same_bits() -> None:
    isaxs = [("a", E(C0, 0, 0)), ("b", E(C2, 0, 0)), ("c", E(C3, 0, 1))]
    # (C0, 0, 0) is taken, (C1, 0, 0) keeps b's function bits
    assert moved(isaxs, (C1, C0)) == {"b": E(C1, 0, 0), "c": E(C0, 0, 1)}


def test_the_allocation_is_deterministic() -> None:
    isaxs = [(f"i{n}", E((C1, C2, C3)[n % 3], n % 2, n % 5)) for n in range(40)]
    first = allocate(isaxs, (C0,))
    assert all(allocate(list(isaxs), (C0,)) == first for _ in range(3))
    assert len({m.new for m in first}) == 40


def test_exhaustion_gives_the_exact_counts() -> None:
    kept = [("k", E(C0, 0, 0))]
    movers = [(f"m{n}", E(C1, n % 8, n // 8)) for n in range(1024)]
    assert len(allocate(kept + movers[:1023], (C0,))) == 1023  # exactly fills custom-0
    with pytest.raises(SpaceExhausted) as e:
        allocate(kept + movers, (C0,))
    assert (e.value.needs, e.value.free, e.value.first_unplaced) == (1024, 1023, 1023)


# -- the module and the pass ---------------------------------------------------------------

REENCODE_INPUT = """\
builtin.module {
  aquas.extension @g {
    aquas.isax @kept opcode 11 funct3 0 funct7 1 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      aquas.write_rd %0 : i32
    }
    aquas.isax @far opcode 91 funct3 0 funct7 1 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      aquas.write_rd %0 : i32
    }
    aquas.isax @near opcode 43 funct3 2 funct7 4 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      aquas.write_rd %0 : i32
    }
  }
}
"""

# far collides with kept on (funct3 0, funct7 1): funct3 1; near keeps its bits
REENCODE_VEXRISCV = """\
builtin.module {
  aquas.extension @g {
    aquas.isax @kept opcode 11 funct3 0 funct7 1 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      aquas.write_rd %0 : i32
    }
    aquas.isax @far opcode 11 funct3 1 funct7 1 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      aquas.write_rd %0 : i32
    }
    aquas.isax @near opcode 11 funct3 2 funct7 4 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      aquas.write_rd %0 : i32
    }
  }
}
"""


def _ctx() -> Context:
    ctx = Context()
    for d in (builtin.Builtin, arith.Arith, aq.Aquas):
        ctx.load_dialect(d)
    return ctx


def _run_pass(text: str, pipeline: str) -> str:
    module = Parser(_ctx(), text).parse_module()
    parse_pipeline(pipeline).apply(_ctx(), module)
    module.verify()
    buf = io.StringIO()
    Printer(stream=buf).print_op(module)
    return buf.getvalue() + "\n"


def test_the_reencode_pass_golden() -> None:
    assert "aquas-reencode" in PASSES
    assert _run_pass(REENCODE_INPUT, "aquas-reencode{soc=vexriscv}") == REENCODE_VEXRISCV
    # PicoRV32 routes all four opcodes: the IR is unchanged
    assert _run_pass(REENCODE_INPUT, "aquas-reencode{soc=picorv32}") == REENCODE_INPUT


EXAMPLE_MAPS = {
    # spec: {isax: (old (opcode, funct3, funct7), new)}; every example uses funct3 0
    "crypto/kyber.isax": {"modmul_q": (C2, 0), "ntt_bfly": (C2, 1), "ntt_fwd": (C2, 2)}
    | {"ntt_inv": (C2, 3)},
    "llm/llm.isax": {"dot4_i8": (C1, 0), "dot4_clr": (C1, 1), "gemm4x4_i16": (C1, 2)}
    | {"sparse_decomp_i8": (C1, 3)},
    "dsp/dsp.isax": {"fir_load_taps": (C3, 0), "fir8": (C3, 1), "biquad_load": (C3, 2)}
    | {"biquad": (C3, 3), "vdot16": (C3, 4), "biquad_save": (C3, 5), "biquad_restore": (C3, 6)}
    | {"vdot32": (C3, 7)},
}


@pytest.mark.parametrize("spec", sorted(EXAMPLE_MAPS))
def test_examples_move_to_custom0_on_vexriscv(spec: str) -> None:
    module, emap = spec_for_target(ROOT / "examples" / spec, VEX)
    want = EXAMPLE_MAPS[spec]
    assert [m.isax for m in emap.moves] == list(want)  # spec order
    for m in emap.moves:
        op, f7 = want[m.isax]
        assert m.old == E(op, 0, f7) and m.new == E(C0, 0, f7)
    enc = {i.sym_name.data: (i.opcode_value, i.funct3_value, i.funct7_value) for i in
           find_extension(module).isaxs()}  # fmt: skip
    assert enc == {n: (C0, 0, f7) for n, (_, f7) in want.items()}
    assert emap.lines()[0].endswith("(its core routes only custom-0):")
    _, pico = spec_for_target(ROOT / "examples" / spec, PICO)
    assert pico.moves == () and pico.lines() == []


def test_pointcloud_stays_as_written_on_vexriscv() -> None:
    _, emap = spec_for_target(ROOT / "examples/pointcloud/pointcloud.isax", VEX)
    assert emap.moves == () and emap.error == ""


def crowded_spec(tmp_path: Path) -> Path:
    """kyber's modmul_q (custom-2) plus 1024 state-writing ISAXs filling custom-1 and one on
    custom-0: 1025 ISAXs must move to custom-0, which has 1023 free triples."""
    kyber = (ROOT / "examples/crypto/kyber.isax").read_text()
    body = kyber[kyber.index("#[opcode(custom2), funct7(0)]") : kyber.index("#[opcode(custom2), funct7(1)]")]  # fmt: skip
    lines = ["extension crowded;", "state acc: u32 = 0;", "#[opcode(custom0), funct7(0)]"]
    lines += ["isax stay(rs1) { acc = rs1; }", body]
    for f7 in range(128):
        for f3 in range(8):
            lines.append(f"#[opcode(custom1), funct7({f7}), funct3({f3})]")
            lines.append(f"isax f{f7}_{f3}(rs1) {{ acc = rs1 + {f7 * 8 + f3}; }}")
    path = tmp_path / "crowded.isax"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return crowded_spec(tmp_path_factory.mktemp("crowded"))


def test_exhaustion_error_names_the_counts_and_the_spec_location(crowded: Path) -> None:
    with pytest.raises(ReencodeError) as e:
        spec_for_target(crowded, VEX)
    msg = e.value.render()
    assert "it needs 1025 encodings, custom-0 has 1023 free" in msg
    # the first ISAX that does not fit: movers are modmul_q, f0_0, f0_1, ...; mover 1023
    # (the 1024th) is f127_6 (127 * 8 + 6 = 1022 fillers before it)
    line = crowded.read_text().splitlines().index("isax f127_6(rs1) { acc = rs1 + 1022; }")
    assert e.value.loc is not None and (e.value.loc.line, e.value.loc.column) == (line + 1, 6)
    assert "isax f127_6(rs1)" in msg
    # not strict: the spec's encodings are kept and the map says why
    module, emap = spec_for_target(crowded, VEX, strict=False)
    assert emap.moves == () and emap.error == "it needs 1025 encodings, custom-0 has 1023 free"
    assert next(find_extension(module).isaxs()).opcode_value == C0


def test_the_matcher_refuses_with_the_reason_when_reencoding_is_impossible(
    crowded: Path, tmp_path: Path
) -> None:
    app = tmp_path / "mulq.c"
    app.write_text(MULQ_LOOP)
    res = match_file(app, crowded, options=Options(core="vexriscv", check_profit=False))
    [d] = [d for d in res.decisions if d.isax == "modmul_q"]
    assert d.status == "rejected" and d.reason == TARGET
    assert d.detail.endswith(
        "so the code stays in software; re-encoding is impossible: it needs 1025 encodings, "
        "custom-0 has 1023 free"
    )
    assert rewrite_c(res) == MULQ_LOOP


MULQ_LOOP = """#include <stdint.h>
void mulq_loop(uint32_t *restrict r, const uint32_t *restrict a, const uint32_t *restrict b) {
    for (int i = 0; i < 16; i++) { uint32_t x = a[i], y = b[i];
        r[i] = ((x & 0xffff) * (y & 0xffff)) % 3329; } }
"""


def test_the_matcher_offloads_a_reencoded_isax_on_vexriscv(tmp_path: Path) -> None:
    app = tmp_path / "mulq.c"
    app.write_text(MULQ_LOOP)
    spec = ROOT / "examples/crypto/kyber.isax"
    _, pats = load_patterns(spec, soc="vexriscv")
    assert {p.name: p.opcode for p in pats} == dict.fromkeys(EXAMPLE_MAPS["crypto/kyber.isax"], C0)
    res = match_file(app, spec, options=Options(core="vexriscv", check_profit=False))
    assert [d.isax for d in res.matched] == ["modmul_q"]
    assert "aquas_modmul_q(" in rewrite_c(res)
    # patterns loaded for PicoRV32 (custom-2, not re-encoded) are still refused on VexRiscv
    res = match_file(
        app,
        spec,
        patterns=load_patterns(spec, soc="picorv32"),
        options=Options(core="vexriscv", check_profit=False),
    )
    [d] = [d for d in res.decisions if d.isax == "modmul_q"]
    assert d.reason == TARGET and "custom-2 (opcode 0x5b)" in d.detail


# -- the headers on VexRiscv ---------------------------------------------------------------


def _words(tmp: Path, header: str, ext: aq.ExtensionOp) -> dict[str, list[int]]:
    """Compile one noinline wrapper per ISAX with -Werror (a deprecated intrinsic fails)
    and return each wrapper's instruction words."""
    require_tool(CROSS + "gcc", "gcc-riscv64-unknown-elf")
    src = ['#include "aquas_isax.h"']
    for isax in ext.isaxs():
        n = isax.sym_name.data
        args = [r for r in ("rs1", "rs2") if r in isax.used]
        params = ", ".join(f"uint32_t {a}" for a in args) or "void"
        call = f"aquas_{n}({', '.join(args)})"
        ret = "uint32_t" if "rd" in isax.used else "void"
        body = f"return {call};" if "rd" in isax.used else f"{call};"
        src.append(f"__attribute__((noinline)) {ret} t_{n}({params}) {{ {body} }}")
    (tmp / "aquas_isax.h").write_text(header)
    (tmp / "t.c").write_text("\n".join(src) + "\n")
    flags = ["-march=rv32im_zicsr", "-mabi=ilp32", "-O2", "-ffreestanding", "-Wall", "-Werror"]
    subprocess.run(
        [CROSS + "gcc", *flags, "-I", str(tmp), "-c", str(tmp / "t.c"), "-o", str(tmp / "t.o")],
        check=True,
        capture_output=True,
        text=True,
    )
    dis = subprocess.run(
        [CROSS + "objdump", "-d", str(tmp / "t.o")], check=True, capture_output=True, text=True
    ).stdout
    funcs: dict[str, list[int]] = {}
    cur = ""
    for line in dis.splitlines():
        if m := re.match(r"^[0-9a-f]+ <t_(\w+)>:", line):
            cur = m.group(1)
            funcs[cur] = []
        elif (m := re.match(r"^\s+[0-9a-f]+:\s+([0-9a-f]{8})\s", line)) and cur:
            funcs[cur].append(int(m.group(1), 16))
    return funcs


@pytest.mark.parametrize("spec", sorted(EXAMPLE_MAPS))
def test_vexriscv_header_of_a_reencoded_extension(spec: str, tmp_path: Path) -> None:
    module, _ = spec_for_target(ROOT / "examples" / spec, VEX)
    ext = find_extension(module)
    header = generate_header(ext, VEX, allow_unrouted=False)
    assert "deprecated" not in header
    words = _words(tmp_path, header, ext)
    for name, (_, f7) in EXAMPLE_MAPS[spec].items():
        # the R-type custom word: opcode custom-0, funct3 0, funct7 as in the spec
        custom = [w for w in words[name] if w & 0x7F in (C0, C1, C2, C3)]
        assert custom, f"{name}: no custom instruction"
        assert all(w & 0x7F == C0 and (w >> 12) & 7 == 0 and w >> 25 == f7 for w in custom)


# -- the CLI -------------------------------------------------------------------------------


def test_aquas_match_prints_the_map(tmp_path: Path) -> None:
    app = tmp_path / "mulq.c"
    app.write_text(MULQ_LOOP)
    r = CliRunner().invoke(
        main,
        ["match", str(app), "--ext", str(ROOT / "examples/crypto/kyber.isax"), "--soc",
         "vexriscv", "-o", str(tmp_path / "out.c")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "kyber: re-encoded for vexriscv (its core routes only custom-0):" in r.output
    assert re.search(
        r"modmul_q +custom-2 funct3=0 funct7=0 +-> +custom-0 funct3=0 funct7=0", r.output
    )
    assert "--reencode-for vexriscv" in r.output
    header = (tmp_path / "aquas_isax.h").read_text()
    assert ".insn r 0x0B, 0, 0," in header and "deprecated" not in header


def test_aquas_synth_reencode_for_an_impossible_extension_fails(
    crowded: Path, tmp_path: Path
) -> None:
    r = CliRunner().invoke(
        main, ["synth", str(crowded), "--reencode-for", "vexriscv", "-o", str(tmp_path / "u")]
    )
    assert r.exit_code == 2
    assert "it needs 1025 encodings, custom-0 has 1023 free" in r.output
    assert not (tmp_path / "u").exists()


def test_aquas_synth_reencode_for_vexriscv_records_the_map(tmp_path: Path) -> None:
    out = tmp_path / "u"
    r = CliRunner().invoke(
        main,
        ["synth", str(ROOT / "examples/dsp/dsp.isax"), "--reencode-for", "vexriscv",
         "--no-yosys", "--no-lint", "-o", str(out)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert re.search(
        r"vdot16 +custom-3 funct3=0 funct7=4 +-> +custom-0 funct3=0 funct7=4", r.output
    )
    doc = json.loads((out / "unit.json").read_text())["encoding"]
    assert [(m["isax"], m["new"]["opcode"]) for m in doc["moves"]] == [
        (n, C0) for n in EXAMPLE_MAPS["dsp/dsp.isax"]
    ]
    unit = (out / "dsp_isax_unit.sv").read_text()
    assert "cmd_opcode == 7'hB" in unit and "7'h7B" not in unit


def test_report_encoding_section(crowded: Path) -> None:
    from aquas.report import encoding_section

    _, moved_map = spec_for_target(ROOT / "examples/crypto/kyber.isax", VEX)
    [(title, head, rows)] = encoding_section({"encoding": moved_map.to_json()})
    assert title == "Encoding (re-encoded for vexriscv: its core routes only custom-0)"
    assert head == ["ISAX", "spec encoding", "encoding on vexriscv"]
    assert rows == [
        ["modmul_q", "custom-2 funct3=0 funct7=0", "custom-0 funct3=0 funct7=0"],
        ["ntt_bfly", "custom-2 funct3=0 funct7=1", "custom-0 funct3=0 funct7=1"],
        ["ntt_fwd", "custom-2 funct3=0 funct7=2", "custom-0 funct3=0 funct7=2"],
        ["ntt_inv", "custom-2 funct3=0 funct7=3", "custom-0 funct3=0 funct7=3"],
    ]
    _, failed = spec_for_target(crowded, VEX, strict=False)
    [(title, _, rows)] = encoding_section({"encoding": failed.to_json()})
    assert title == "Encoding (not re-encoded: vexriscv routes only custom-0)"
    assert rows == [["crowded", "it needs 1025 encodings, custom-0 has 1023 free"]]
    _, none = spec_for_target(ROOT / "examples/crypto/kyber.isax", PICO)
    assert encoding_section({"encoding": none.to_json()}) == []
