"""The bare-metal runtime, the build API and the aquas_isax.h generator (no HDL simulator).

Programs are executed on aquas.runtime.iss, a small functional RV32IM simulator, and the
generated header is checked instruction word by instruction word with objdump."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.interpreter import find_extension
from aquas.runtime import build as rtbuild
from aquas.runtime.build import build_program, libgcc_path, section_sizes
from aquas.runtime.coherence import plan as coherence_plan
from aquas.runtime.header import generate_header, isax_effects, write_header
from aquas.runtime.iss import golden_isax_handler, run_elf
from aquas.spec.frontend import lower_spec_file
from aquas.target import load_target, target_names

from helpers import require_tool

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples").glob("*/*.isax"))
PROGRAMS = REPO / "tests" / "sim" / "programs"


def rv32im_suite() -> Path:
    """The generated RV32IM self-checking suite (written under build/, not committed)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "gen_rv32im_tests", PROGRAMS / "gen_rv32im_tests.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ensure_suite()


C_PROGRAMS = ["crc32", "insertion_sort", "matmul", "strings", "fir", "div64"]

CROSS = "riscv64-unknown-elf-"


@pytest.fixture(autouse=True)
def _cross_compiler() -> None:
    require_tool(CROSS + "gcc", "gcc-riscv64-unknown-elf")


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rt-build")


def _ext(path: Path):
    return find_extension(lower_spec_file(path))


# ---- platform definitions ------------------------------------------------------------


# ---- header generator ----------------------------------------------------------------


def _encode(opcode: int, f3: int, f7: int, rd: int, rs1: int, rs2: int) -> int:
    # independent of aquas.runtime.header.encode_r on purpose
    return opcode | rd << 7 | f3 << 12 | rs1 << 15 | rs2 << 20 | f7 << 25


def _wrappers(ext) -> str:
    """One noinline function per ISAX: arguments arrive in a0/a1, the result leaves in a0."""
    lines = ['#include "aquas_isax.h"']
    for isax in ext.isaxs():
        n = isax.sym_name.data
        args = [r for r in ("rs1", "rs2") if r in isax.used]
        params = ", ".join(f"uint32_t {a}" for a in args) or "void"
        call = f"aquas_{n}({', '.join(args)})"
        if "rd" in isax.used:
            lines.append(f"__attribute__((noinline)) uint32_t t_{n}({params}) {{ return {call}; }}")
        else:
            lines.append(f"__attribute__((noinline)) void t_{n}({params}) {{ {call}; }}")
    return "\n".join(lines) + "\n"


def _disassemble(
    tmp: Path, header_text: str, source: str, *extra: str
) -> dict[str, list[tuple[int, str]]]:
    (tmp / "aquas_isax.h").write_text(header_text)
    (tmp / "t.c").write_text(source)
    subprocess.run(
        [
            CROSS + "gcc",
            "-march=rv32im_zicsr",
            "-mabi=ilp32",
            "-O2",
            "-ffreestanding",
            "-Wall",
            "-Werror",
            *extra,
            "-I",
            str(tmp),
            "-c",
            str(tmp / "t.c"),
            "-o",
            str(tmp / "t.o"),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    dis = subprocess.run(
        [CROSS + "objdump", "-d", str(tmp / "t.o")], check=True, capture_output=True, text=True
    ).stdout
    funcs: dict[str, list[tuple[int, str]]] = {}
    cur = None
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(t_\w+)>:", line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        m = re.match(r"^\s+[0-9a-f]+:\s+([0-9a-f]{8})\s+(.*)$", line)
        if m and cur:
            funcs[cur].append((int(m.group(1), 16), m.group(2)))
    return funcs


@pytest.mark.parametrize("platform", target_names())
@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_header_compiles_cleanly(spec: Path, platform: str, tmp_path: Path) -> None:
    """The header alone compiles with -Wall -Werror (C and pedantic C99)."""
    (tmp_path / "aquas_isax.h").write_text(generate_header(_ext(spec), platform))
    (tmp_path / "t.c").write_text('#include "aquas_isax.h"\nint main(void) { return 0; }\n')
    for std in ("-std=gnu11", "-std=c99"):
        subprocess.run(
            [
                CROSS + "gcc",
                "-march=rv32im_zicsr",
                "-mabi=ilp32",
                "-O2",
                "-ffreestanding",
                "-Wall",
                "-Wextra",
                "-Werror",
                std,
                "-I",
                str(tmp_path),
                "-c",
                str(tmp_path / "t.c"),
                "-o",
                str(tmp_path / "t.o"),
            ],
            check=True,
        )


@pytest.mark.parametrize("platform", target_names())
@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_header_instruction_encodings(spec: Path, platform: str, tmp_path: Path) -> None:
    ext = _ext(spec)
    funcs = _disassemble(
        tmp_path, generate_header(ext, platform), _wrappers(ext), "-Wno-deprecated-declarations"
    )
    p = load_target(soc=platform)
    for isax in ext.isaxs():
        n = isax.sym_name.data
        used = isax.used
        want = _encode(
            isax.opcode_value,
            isax.funct3_value,
            isax.funct7_value,
            10 if "rd" in used else 0,
            10 if "rs1" in used else 0,
            11 if "rs2" in used else 0,
        )
        words = [w for w, _ in funcs[f"t_{n}"]]
        assert want in words, f"{n}: expected {want:#010x} in {[hex(w) for w in words]}"
        i = words.index(want)
        eff = isax_effects(isax)
        flush = p.dcache.flush_word
        after = words[i + 1] if i + 1 < len(words) else None
        before = funcs[f"t_{n}"][:i]
        drained = any(re.match(r"lw\s+\w+,8\(\w+\)", txt) for _, txt in before) and any(
            w & 0xFFFFF07F == 0xF0000037 for w, _ in before
        )  # lui rX, 0xf0000
        if platform == "vexriscv":
            strategy = coherence_plan(isax, p, eff.writes_mem).strategy
            assert (strategy == "none") == (not eff.writes_mem), n
            assert (after == flush) == (strategy == "invalidate-all"), n
            later = [txt for _, txt in funcs[f"t_{n}"][i + 1 :]]
            # eviction: conflict loads after the instruction, and never the whole flush
            assert any(t.startswith("lw") for t in later) == (strategy == "evict-lines"), n
            assert flush not in words or strategy == "invalidate-all", n
            assert drained == (eff.touches_mem and p.dcache.drain_load_addr is not None), n
        else:
            assert 0x0000500F not in words, n
            assert not drained, n


def _insn_neighbourhood(funcs, name: str, opcode: int) -> tuple[list[int], list[int]]:
    words = [w for w, _ in funcs[name]]
    i = next(k for k, w in enumerate(words) if w & 0x7F == opcode)
    return words[:i], words[i + 1 :]


def test_header_drain_and_write_back_variants(tmp_path: Path) -> None:
    """The generic mechanisms: a store drain (platforms that post stores past the ISAX
    command) and a write-back cache (flush before, and after writes)."""
    memtest = _ext(PROGRAMS / "memtest.isax")
    src = _wrappers(memtest)
    vex = load_target(soc="vexriscv")
    drain = vex.replace(dcache={"drain_load_addr": 0xF0000008})
    funcs = _disassemble(tmp_path, generate_header(memtest, drain), src)
    before, after = _insn_neighbourhood(funcs, "t_load", 0x0B)
    assert before[-3] & 0xFFFFF07F == 0xF0000037  # lui rX, 0xf0000
    assert before[-2] & 0xFFF0707F == 0x00802003  # lw rX, 8(rY)
    assert before[-1] & 0x707F == 0x1063  # bne
    before, after = _insn_neighbourhood(funcs, "t_add", 0x0B)
    assert not any(w & 0x7F == 0x03 for w in before)
    wb = vex.replace(dcache={"policy": "write-back"})
    funcs = _disassemble(tmp_path, generate_header(memtest, wb), src)
    before, after = _insn_neighbourhood(funcs, "t_load", 0x0B)
    assert before[-1] == 0x500F and after[0] != 0x500F
    before, after = _insn_neighbourhood(funcs, "t_store", 0x0B)
    assert before[-1] == 0x500F and after[0] == 0x500F
    before, after = _insn_neighbourhood(funcs, "t_add", 0x0B)
    assert 0x500F not in before + after


@pytest.mark.parametrize("platform", target_names())
def test_header_noflush_variants_and_portable_flush(platform: str, tmp_path: Path) -> None:
    memtest = _ext(PROGRAMS / "memtest.isax")
    src = (
        '#include "aquas_isax.h"\n'
        "uint32_t t_st(uint32_t a, uint32_t b) { return aquas_store_noflush(a, b); }\n"
        "uint32_t t_cp(uint32_t a, uint32_t b) { return aquas_copy16_noflush(a, b); }\n"
        "void t_fl(void) { aquas_dcache_flush(); }\n"
    )
    funcs = _disassemble(tmp_path, generate_header(memtest, platform), src)
    for f in ("t_st", "t_cp"):
        words = [w for w, _ in funcs[f]]
        assert any(w & 0x7F == 0x0B for w in words) and 0x500F not in words
    fl = [w for w, _ in funcs["t_fl"]]
    assert (0x500F in fl) == (platform == "vexriscv")
    assert "aquas_load_noflush" not in generate_header(memtest, platform)  # reads only


def test_header_effects_of_examples() -> None:
    effects = {}
    for spec in EXAMPLES:
        for isax in _ext(spec).isaxs():
            effects[isax.sym_name.data] = isax_effects(isax)
    assert not effects["modmul_q"].touches_mem and not effects["modmul_q"].stateful
    assert effects["dot4_i8"].stateful and not effects["dot4_i8"].touches_mem
    assert effects["gemm4x4_i16"].reads_mem and effects["gemm4x4_i16"].writes_mem
    assert effects["biquad_load"].reads_mem and not effects["biquad_load"].writes_mem
    assert effects["fir8"].writes_mem


def test_header_pure_isax_may_be_deleted_stateful_kept(tmp_path: Path) -> None:
    """Pure register-only ISAXs are plain asm (dead ones vanish); stateful ones are volatile."""
    kyber = _ext(REPO / "examples/crypto/kyber.isax")
    src = '#include "aquas_isax.h"\nvoid t_dead(uint32_t a, uint32_t b) { (void)aquas_modmul_q(a, b); }\n'
    funcs = _disassemble(tmp_path, generate_header(kyber, "picorv32"), src)
    assert all(w & 0x7F != 0x5B for w, _ in funcs["t_dead"])
    llm = _ext(REPO / "examples/llm/llm.isax")
    src = '#include "aquas_isax.h"\nvoid t_kept(uint32_t a, uint32_t b) { (void)aquas_dot4_i8(a, b); }\n'
    funcs = _disassemble(tmp_path, generate_header(llm, "picorv32"), src)
    assert any(w & 0x7F == 0x2B for w, _ in funcs["t_kept"])


def test_header_unrouted_opcodes_on_vexriscv(tmp_path: Path) -> None:
    """VexRiscv routes only custom-0: calling another opcode warns, or is an error on request."""
    kyber = _ext(REPO / "examples/crypto/kyber.isax")
    with pytest.raises(AquasError, match="does not route"):
        generate_header(kyber, "vexriscv", allow_unrouted=False)
    (tmp_path / "aquas_isax.h").write_text(generate_header(kyber, "vexriscv"))
    (tmp_path / "t.c").write_text(
        '#include "aquas_isax.h"\nunsigned f(unsigned a) { return aquas_modmul_q(a, a); }\n'
    )
    proc = subprocess.run(
        [
            CROSS + "gcc",
            "-march=rv32im_zicsr",
            "-mabi=ilp32",
            "-O2",
            "-ffreestanding",
            "-I",
            str(tmp_path),
            "-c",
            str(tmp_path / "t.c"),
            "-o",
            str(tmp_path / "t.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0
    assert "not routed to the ISAX unit on vexriscv" in proc.stderr
    assert "no cache" not in generate_header(kyber, "vexriscv")


def test_header_documents_cache_policy() -> None:
    llm = _ext(REPO / "examples/llm/llm.isax")
    vex = generate_header(llm, "vexriscv")
    pico = generate_header(llm, "picorv32")
    assert "write-through" in vex and "0x0000500F" in vex and "aquas_dcache_flush" in vex
    assert "Cache maintenance on picorv32: none" in pico and "500F" not in pico


def test_write_header_is_atomic_and_stable(tmp_path: Path) -> None:
    llm = _ext(REPO / "examples/llm/llm.isax")
    path = write_header(llm, "picorv32", tmp_path / "inc" / "aquas_isax.h")
    assert path.read_text() == generate_header(llm, "picorv32")
    st = path.stat()
    write_header(llm, "picorv32", path)  # unchanged: not rewritten
    assert path.stat().st_ino == st.st_ino and path.stat().st_mtime_ns == st.st_mtime_ns
    write_header(llm, "vexriscv", path)
    assert "vexriscv" in path.read_text()
    assert [p.name for p in path.parent.iterdir()] == ["aquas_isax.h"]  # no temp files left


# ---- build API -----------------------------------------------------------------------

HELLO = r"""
#include "aquas_rt.h"
int main(void)
{
    unsigned long long n = 1234567890123ull;
    printf("[%d][%u][%x][%X][%s][%c][%ld][%lu][%lx][%%][%5d][%-5d|][%05d][%08x][%-6s|][%3c]\n",
           -42, 42u, 0xbeefu, 0xbeefu, "str", 'Z', -7L, 7UL, 0xabcL, 12, 12, -12, 0x1fu, "ab", 'q');
    printf("%u %u\n", (unsigned)(n / 77), (unsigned)(n % 1000003));
    AQUAS_REGION_BEGIN(3);
    puts("puts");
    AQUAS_REGION_END(3);
    putchar('!');
    return 42;
}
"""


def _hello_expected() -> str:
    n = 1234567890123
    line = "[%d][%u][%x][%X][%s][%c][%d][%u][%x][%%][%5d][%-5d|][%05d][%08x][%-6s|][%3c]\n" % (  # noqa: UP031 (C printf semantics)
        -42,
        42,
        0xBEEF,
        0xBEEF,
        "str",
        "Z",
        -7,
        7,
        0xABC,
        12,
        12,
        -12,
        0x1F,
        "ab",
        "q",
    )
    return line + f"{(n // 77) & 0xFFFFFFFF} {n % 1000003}\nputs\n!"


@pytest.mark.parametrize("platform", target_names())
def test_runtime_program_runs(platform: str, out_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "hello.c"
    src.write_text(HELLO)
    elf = build_program([src], out_dir, platform=platform)
    assert elf.is_file() and elf.with_suffix(".bin").is_file() and elf.with_suffix(".map").is_file()
    res = run_elf(elf, platform)
    assert res.output == _hello_expected()
    assert res.exit_code == 42
    assert 3 in res.regions and res.regions[3] > 0
    p = load_target(soc=platform)
    # entry = reset vector = RAM base; the image starts with _start
    hdr = subprocess.run(
        [CROSS + "readelf", "-h", "-s", str(elf)], capture_output=True, text=True
    ).stdout
    assert re.search(rf"Entry point address:\s+0x{p.ram_base:x}\b", hdr)
    assert re.search(rf"\b{p.stack_top:08x}\s+0\s+NOTYPE\s+GLOBAL\s+DEFAULT\s+\S+ __stack_top", hdr)
    sizes = section_sizes(elf)
    assert 0 < sizes["text"] < 8192  # runtime + printf + libgcc division stay small


LAYOUT = """
#include <stdint.h>
static int32_t table[300];
static const int32_t coeff[4] = {3, 1, 4, 1};
int32_t *volatile keep = table;
int main(void)
{
    int32_t s = 0;
    for (int i = 0; i < 300; i++) {
        table[i] = i * coeff[i & 3];
#if EXTRA
        s += (table[i] * 7) ^ (s >> 3); s += (s << 5) - i; s ^= table[(i * 13) % 300];
#endif
    }
    return (int)(s & 1);
}
"""


def _symbols(elf: Path) -> dict[str, int]:
    out = subprocess.run([CROSS + "nm", str(elf)], capture_output=True, text=True, check=True)
    return {
        f[2]: int(f[0], 16)
        for f in (line.split() for line in out.stdout.splitlines())
        if len(f) == 3
    }


def test_data_layout_does_not_move_with_code_size(out_dir: Path, tmp_path: Path) -> None:
    """Data starts on a multiple of the D-cache's way size (4 KiB on VexRiscv), so a program
    with more code has its data in the same cache sets (here: at the same addresses)."""
    src = tmp_path / "layout.c"
    src.write_text(LAYOUT)
    small = build_program([src], out_dir, platform="vexriscv", defines={"EXTRA": 0})
    large = build_program([src], out_dir, platform="vexriscv", defines={"EXTRA": 1})
    a, b = _symbols(small), _symbols(large)
    assert section_sizes(large)["text"] > section_sizes(small)["text"]
    for sym in ("table", "coeff", "__data_start"):
        assert a[sym] == b[sym], sym
    assert a["__data_start"] % 4096 == 0
    # no D-cache on PicoRV32: data follows the code (word aligned), no RAM spent on padding
    pico = _symbols(build_program([src], out_dir, platform="picorv32", defines={"EXTRA": 1}))
    assert pico["__data_start"] % 4 == 0 and pico["__data_start"] < b["__data_start"]


def test_build_cache_hit_and_invalidation(
    out_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "p.c"
    src.write_text('#include "aquas_rt.h"\nint main(void) { puts("v1"); return 0; }\n')
    first = build_program([src], out_dir, defines={"X": 1})

    def boom(*a, **k):
        raise AssertionError("compiler invoked on a cache hit")

    with monkeypatch.context() as m:
        m.setattr(rtbuild, "_run", boom)
        assert build_program([src], out_dir, defines={"X": 1}) == first
    # any input change is a different build
    assert build_program([src], out_dir, defines={"X": 2}) != first
    assert build_program([src], out_dir, defines={"X": 1}, opt="-Os") != first
    assert build_program([src], out_dir, defines={"X": 1}, platform="picorv32") != first
    src.write_text('#include "aquas_rt.h"\nint main(void) { puts("v2"); return 0; }\n')
    second = build_program([src], out_dir, defines={"X": 1})
    assert second != first
    assert run_elf(second).output == "v2\n"


def test_build_header_dirs_and_defines(out_dir: Path, tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "cfg.h").write_text("#define FROM_HEADER 7\n")
    src = tmp_path / "d.c"
    src.write_text(
        '#include "aquas_rt.h"\n#include <cfg.h>\nint main(void) { printf("%d %d\\n", FROM_HEADER, VAL); return 0; }\n'
    )
    elf = build_program([src], out_dir, header_dirs=[inc], defines={"VAL": 35})
    assert run_elf(elf).output == "7 35\n"
    (inc / "cfg.h").write_text("#define FROM_HEADER 8\n")  # header content is part of the key
    elf2 = build_program([src], out_dir, header_dirs=[inc], defines={"VAL": 35})
    assert elf2 != elf and run_elf(elf2).output == "8 35\n"


def test_missing_cross_compiler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    src = tmp_path / "m.c"
    src.write_text("int main(void) { return 0; }\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(AquasError) as ei:
        build_program([src], tmp_path / "out")
    text = ei.value.render()
    assert "riscv64-unknown-elf-gcc" in text and "not found" in text
    assert "gcc-riscv64-unknown-elf" in text and "scripts/setup.sh" in text


def test_custom_prefix_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    src = tmp_path / "m.c"
    src.write_text("int main(void) { return 0; }\n")
    monkeypatch.setenv("AQUAS_RISCV_PREFIX", "no-such-riscv-")
    with pytest.raises(AquasError, match="no-such-riscv-gcc"):
        build_program([src], tmp_path / "out")


def test_compile_error_reports_compiler_output(tmp_path: Path) -> None:
    src = tmp_path / "bad.c"
    src.write_text("int main(void) { return undeclared_thing; }\n")
    with pytest.raises(AquasError) as ei:
        build_program([src], tmp_path / "out")
    msg = ei.value.message
    assert "compiling bad.c failed" in msg and "undeclared_thing" in msg and "error" in msg


def test_link_error_reports_linker_output(tmp_path: Path) -> None:
    src = tmp_path / "link.c"
    src.write_text("void nowhere(void);\nint main(void) { nowhere(); return 0; }\n")
    with pytest.raises(AquasError, match="undefined reference to `nowhere'"):
        build_program([src], tmp_path / "out")


def test_libgcc_is_the_rv32im_multilib() -> None:
    path = libgcc_path(shutil.which(CROSS + "gcc"))
    assert Path(path).parts[-3:] == ("rv32im", "ilp32", "libgcc.a")


def test_trap_is_reported_on_vexriscv(out_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "trap.c"
    src.write_text(
        '#include "aquas_rt.h"\nint main(void) { puts("before"); __asm__ volatile(".word 0"); return 0; }\n'
    )
    res = run_elf(build_program([src], out_dir), "vexriscv")
    assert res.exit_code == 254
    assert res.output.startswith("before\n\n*** TRAP mcause=00000002")


# ---- test programs (functional check on the ISS; the SoC runs are tests/sim) -------------


@pytest.mark.parametrize("platform", target_names())
def test_rv32im_suite_passes_on_iss(platform: str, out_dir: Path) -> None:
    res = run_elf(build_program([rv32im_suite()], out_dir, platform=platform), platform)
    assert (res.output, res.exit_code) == ("PASS\n", 0)


def test_rv32im_suite_detects_a_wrong_result(out_dir: Path, tmp_path: Path) -> None:
    text = rv32im_suite().read_text()
    i = text.index("    li t6, 1000\n")
    j = text.index("    li t5, 0x", i)
    bad = tmp_path / "bad.S"
    bad.write_text(text[:j] + "    li t5, 0x12121212" + text[j + len("    li t5, 0x00000000") :])
    res = run_elf(build_program([bad], out_dir))
    assert (res.output, res.exit_code) == ("FAIL 1000\n", 1)


def _host_output(name: str, tmp: Path) -> str:
    exe = tmp / name
    subprocess.run(
        [
            "gcc",
            "-O2",
            "-Wall",
            "-I",
            str(PROGRAMS / "host"),
            str(PROGRAMS / f"{name}.c"),
            "-o",
            str(exe),
        ],
        check=True,
    )
    proc = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    return proc.stdout


@pytest.mark.parametrize("name", C_PROGRAMS)
def test_c_programs_match_host_on_iss(name: str, out_dir: Path, tmp_path: Path) -> None:
    require_tool("gcc", "gcc")
    host = _host_output(name, tmp_path)
    assert "errors=" not in host or "errors=0" in host
    for platform in target_names():
        res = run_elf(build_program([PROGRAMS / f"{name}.c"], out_dir, platform=platform), platform)
        assert res.exit_code == 0
        assert res.output == host


@pytest.mark.parametrize("platform", target_names())
@pytest.mark.parametrize(
    "name,spec", [("llm", "examples/llm/llm.isax"), ("kyber", "examples/crypto/kyber.isax")]
)
def test_isax_programs_on_iss_with_golden_isaxs(
    name: str, spec: str, platform: str, out_dir: Path, tmp_path: Path
) -> None:
    """The intrinsics pass the right operands and return the right result (ISAXs executed by
    the golden interpreter behind the ISS)."""
    ext = _ext(REPO / spec)
    write_header(ext, platform, tmp_path / "aquas_isax.h")
    elf = build_program(
        [PROGRAMS / f"isax_{name}.c"],
        out_dir,
        platform=platform,
        header_dirs=[tmp_path],
        cflags=["-Wno-deprecated-declarations"],
    )
    res = run_elf(elf, platform, custom=golden_isax_handler(ext))
    assert res.exit_code == 0, res.output
    assert res.output.rstrip().endswith("errors=0")


@pytest.mark.parametrize("platform", target_names())
def test_memtest_program_on_iss(platform: str, out_dir: Path, tmp_path: Path) -> None:
    ext = _ext(PROGRAMS / "memtest.isax")
    write_header(ext, platform, tmp_path / "aquas_isax.h", allow_unrouted=False)
    elf = build_program(
        [PROGRAMS / "memtest.c"], out_dir, platform=platform, header_dirs=[tmp_path]
    )
    res = run_elf(elf, platform, custom=golden_isax_handler(ext))
    assert res.exit_code == 0 and res.output.endswith("errors=0\n"), res.output


def test_programs_have_no_host_only_dependencies() -> None:
    """Programs include only aquas_rt.h (and the generated aquas_isax.h)."""
    for f in PROGRAMS.glob("*.c"):
        incs = re.findall(r'#include\s+[<"]([^>"]+)[>"]', f.read_text())
        assert set(incs) <= {"aquas_rt.h", "aquas_isax.h"}, (f.name, incs)


def test_env_prefix_default() -> None:
    assert os.environ.get("AQUAS_RISCV_PREFIX", CROSS) == rtbuild.tool_prefix()
