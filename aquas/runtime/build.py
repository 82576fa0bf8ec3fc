"""Cross-compile bare-metal programs against the aquas runtime.

``build_program([Path("main.c")], out)`` compiles the sources together with the runtime
(``crt0.S``, ``libc.c``, ``printf.c``), links them with ``link.ld`` for the platform's RAM
and returns the ELF.  Next to it: ``.bin`` (flat image from the RAM base, what the
simulator loads), ``.map`` (linker map) and ``.dis`` (disassembly).  Builds are cached by a
hash of everything that can change the result (sources, runtime files, headers in
``header_dirs``, flags, defines, platform, compiler version): a second call with the same
inputs returns the existing ELF without running the compiler.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from aquas.diagnostics import AquasError
from aquas.target import Target, load_target

RUNTIME_DIR = Path(__file__).resolve().parent
RUNTIME_SOURCES = ("crt0.S", "libc.c", "printf.c")
RUNTIME_FILES = (*RUNTIME_SOURCES, "aquas_rt.h", "link.ld")

ARCH_FLAGS = ("-march=rv32im_zicsr", "-mabi=ilp32")
# The multilib libgcc is selected by the plain ISA string (GCC 12 maps rv32im_zicsr to the
# default rv64 multilib), so the link names it explicitly.
LIBGCC_ARCH_FLAGS = ("-march=rv32im", "-mabi=ilp32")
COMMON_CFLAGS = (
    "-ffreestanding",
    "-nostdlib",
    "-fno-common",
    "-ffunction-sections",
    "-fdata-sections",
    "-fno-asynchronous-unwind-tables",
    "-fno-unwind-tables",
    "-Wall",
    "-g",
)
# Only for the runtime's own libc: keeps GCC from turning memset/memcpy loops into calls to
# memset/memcpy (infinite recursion).
RUNTIME_CFLAGS = ("-fno-tree-loop-distribute-patterns",)
LDFLAGS = ("-nostdlib", "-nostartfiles", "-static", "-Wl,--gc-sections")

DEFAULT_PREFIX = "riscv64-unknown-elf-"
SETUP_HINT = (
    "install the Debian/Ubuntu package gcc-riscv64-unknown-elf "
    "(scripts/setup.sh installs it), or set AQUAS_RISCV_PREFIX to your toolchain's prefix"
)


def tool_prefix() -> str:
    """The cross toolchain prefix (``$AQUAS_RISCV_PREFIX``, default riscv64-unknown-elf-)."""
    return os.environ.get("AQUAS_RISCV_PREFIX", DEFAULT_PREFIX)


def find_tool(name: str) -> str:
    """Absolute path of a cross tool (``gcc``, ``objcopy``...), or a clear AquasError."""
    exe = tool_prefix() + name
    path = shutil.which(exe)
    if path is None:
        raise AquasError(f"RISC-V cross tool '{exe}' not found on PATH", hint=SETUP_HINT)
    return path


@functools.lru_cache(maxsize=8)
def _compiler_identity(gcc: str) -> str:
    out = subprocess.run([gcc, "--version"], capture_output=True, text=True, check=False)
    return f"{gcc}\n{out.stdout.splitlines()[0] if out.stdout else ''}"


@functools.lru_cache(maxsize=8)
def libgcc_path(gcc: str) -> str:
    """The rv32im/ilp32 multilib ``libgcc.a`` (64-bit division and other helpers)."""
    out = subprocess.run(
        [gcc, *LIBGCC_ARCH_FLAGS, "-print-libgcc-file-name"],
        capture_output=True,
        text=True,
        check=False,
    )
    path = out.stdout.strip()
    if out.returncode != 0 or not path or not Path(path).is_file():
        raise AquasError(
            f"'{gcc}' has no rv32im/ilp32 libgcc (got '{path}')",
            hint="the Debian package gcc-riscv64-unknown-elf ships it; check "
            "`riscv64-unknown-elf-gcc -print-multi-lib`",
        )
    return path


def define_flags(defines: Mapping[str, object]) -> list[str]:
    flags = []
    for k in sorted(defines):
        v = defines[k]
        if v is None or v is True:
            flags.append(f"-D{k}")
        else:
            flags.append(f"-D{k}={v}")
    return flags


def dependency_files(
    sources: Iterable[Path],
    include_dirs: Sequence[Path] = (),
    defines: Sequence[str] = (),
    gcc: str | None = None,
) -> list[Path]:
    """Every file the preprocessor reads for ``sources`` (``gcc -M``: the sources and
    every header they include, however it is spelled: ``"../shared/defs.h"``,
    ``"inc/defs.h"``, through ``-I``), sorted.  Headers that do not exist yet (generated
    ones such as ``aquas_isax.h``) are left out (``-MG``)."""
    gcc = gcc or find_tool("gcc")
    found: set[Path] = set()
    incs = [f"-I{RUNTIME_DIR}", *(f"-I{d}" for d in include_dirs)]
    for src in sources:
        src = Path(src).resolve()
        found.add(src)
        if src.suffix == ".s":  # not preprocessed
            continue
        proc = subprocess.run(
            [gcc, *ARCH_FLAGS, "-M", "-MG", *defines, *incs, str(src)],
            capture_output=True,
            text=True,
            cwd=src.parent,
            check=False,
        )
        if proc.returncode != 0:
            # the build itself will report the error; the key must still change with
            # the source, which it does (the source is in the set)
            continue
        rule = proc.stdout.replace("\\\n", " ")
        _, _, prereqs = rule.partition(": ")
        for name in re.split(r"(?<!\\)\s+", prereqs.strip()):
            if name:
                f = (src.parent / name.replace("\\ ", " ")).resolve()
                if f.is_file():
                    found.add(f)
    return sorted(found)


def _header_files(dirs: Iterable[Path]) -> list[tuple[str, bytes]]:
    out = []
    for i, d in enumerate(dirs):
        d = Path(d)
        if not d.is_dir():
            raise AquasError(f"header directory {d} does not exist")
        for f in sorted(d.rglob("*")):
            if f.is_file() and f.suffix in (".h", ".inc", ".hpp", ".S", ".s", ".c"):
                out.append((f"{i}:{f.relative_to(d)}", f.read_bytes()))
    return out


@dataclass(frozen=True)
class _Plan:
    gcc: str
    platform: Target
    sources: tuple[Path, ...]
    header_dirs: tuple[Path, ...]
    opt: str
    cflags: tuple[str, ...]
    defines: tuple[str, ...]


def _cache_key(plan: _Plan) -> str:
    h = hashlib.sha256()

    def add(tag: str, data: bytes | str) -> None:
        b = data.encode() if isinstance(data, str) else data
        h.update(f"{tag}:{len(b)}:".encode())
        h.update(b)

    add("version", "aquas-runtime-build-1")
    add("compiler", _compiler_identity(plan.gcc))
    add("platform", plan.platform.fingerprint())
    add("opt", plan.opt)
    add("cflags", "\0".join(plan.cflags))
    add("defines", "\0".join(plan.defines))
    add("flags", "\0".join((*ARCH_FLAGS, *COMMON_CFLAGS, *RUNTIME_CFLAGS, *LDFLAGS)))
    for name in RUNTIME_FILES:
        add(f"rt:{name}", (RUNTIME_DIR / name).read_bytes())
    for src in plan.sources:
        add(f"src:{src.name}", src.read_bytes())
    # every header the sources include, wherever it lives (not only siblings)
    for dep in dependency_files(plan.sources, plan.header_dirs, plan.defines, plan.gcc):
        add(f"dep:{dep}", dep.read_bytes())
    for name, data in _header_files(plan.header_dirs):
        add(f"hdr:{name}", data)
    return h.hexdigest()


def _run(cmd: Sequence[str], what: str, cwd: Path | None = None) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True, cwd=cwd, check=False)
    if proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip()
        raise AquasError(f"{what} failed:\n{msg}\ncommand: {' '.join(cmd)}")


def runtime_include_dirs(platform: str | Target) -> list[Path]:
    """The include path the runtime adds for every program: a directory with the
    platform's generated ``aquas_platform.h`` (in the user cache directory, keyed by the
    target's fingerprint) and the runtime's own headers (``aquas_rt.h``). Tools that read
    application C without compiling it (``aquas match``) use it to see what the compiler
    sees."""
    from aquas.cachedir import cache_dir
    from aquas.outdir import write_atomic

    plat = platform if isinstance(platform, Target) else load_target(soc=platform)
    gen = cache_dir("runtime") / plat.fingerprint()
    header = gen / "aquas_platform.h"
    text = plat.c_header()
    if not header.is_file() or header.read_text() != text:
        gen.mkdir(parents=True, exist_ok=True)
        write_atomic(header, text)
    return [gen, RUNTIME_DIR]


def build_program(
    sources: Sequence[Path | str],
    out_dir: Path | str,
    *,
    platform: str | Target = "vexriscv",
    header_dirs: Sequence[Path | str] = (),
    opt: str = "-O2",
    defines: Mapping[str, object] | None = None,
    cflags: Sequence[str] = (),
) -> Path:
    """Compile and link ``sources`` (C and assembly) with the runtime; return the ELF path.

    ``header_dirs`` are added with ``-I`` (e.g. the directory holding a generated
    ``aquas_isax.h``); ``defines`` become ``-DNAME=VALUE`` (``None``/``True``: ``-DNAME``);
    ``cflags`` are appended to every compile.  ``platform`` is a SoC name or a
    :class:`~aquas.target.Target` (e.g. a project's platform file): the link map and
    ``aquas_platform.h`` come from it.  Raises :class:`AquasError` when the cross compiler is
    missing or compilation/linking fails (with the compiler's messages).
    """
    srcs = tuple(Path(s).resolve() for s in sources)
    if not srcs:
        raise AquasError("build_program: no source files given")
    for s in srcs:
        if not s.is_file():
            raise AquasError(f"source file {s} does not exist")
        if s.suffix not in (".c", ".S", ".s"):
            raise AquasError(f"source file {s}: unsupported type (expected .c, .S or .s)")
    gcc = find_tool("gcc")
    plat = platform if isinstance(platform, Target) else load_target(soc=platform)
    plan = _Plan(
        gcc=gcc,
        platform=plat,
        sources=srcs,
        header_dirs=tuple(Path(d).resolve() for d in header_dirs),
        opt=opt,
        cflags=tuple(cflags),
        defines=tuple(define_flags(defines or {})),
    )
    key = _cache_key(plan)
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{srcs[0].stem}-{plat.name}-{key[:12]}"
    elf = out / f"{stem}.elf"
    if elf.is_file() and elf.with_suffix(".bin").is_file():
        return elf

    objcopy = find_tool("objcopy")
    objdump = shutil.which(tool_prefix() + "objdump")
    libgcc = libgcc_path(gcc)
    with tempfile.TemporaryDirectory(prefix=f".{stem}-", dir=out) as tmp_s:
        tmp = Path(tmp_s)
        gen = tmp / "gen"
        gen.mkdir()
        (gen / "aquas_platform.h").write_text(plat.c_header())
        (gen / "aquas_memory.ld").write_text(plat.linker_memory())
        incs = [f"-I{gen}", f"-I{RUNTIME_DIR}", *(f"-I{d}" for d in plan.header_dirs)]
        base = [gcc, *ARCH_FLAGS, *COMMON_CFLAGS, opt, *plan.defines, *incs]
        objs: list[Path] = []
        units = [(RUNTIME_DIR / n, True) for n in RUNTIME_SOURCES] + [(s, False) for s in srcs]
        for i, (src, is_rt) in enumerate(units):
            obj = tmp / f"{i:02d}-{src.stem}.o"
            extra = list(RUNTIME_CFLAGS) if is_rt else list(plan.cflags)
            _run([*base, *extra, "-c", str(src), "-o", str(obj)], f"compiling {src.name}")
            objs.append(obj)
        tmp_elf = tmp / "prog.elf"
        _run(
            [
                gcc,
                *ARCH_FLAGS,
                *LDFLAGS,
                f"-L{gen}",
                "-T",
                str(RUNTIME_DIR / "link.ld"),
                f"-Wl,-Map,{tmp / 'prog.map'}",
                *map(str, objs),
                libgcc,
                "-o",
                str(tmp_elf),
            ],
            f"linking {stem}",
        )
        _run([objcopy, "-O", "binary", str(tmp_elf), str(tmp / "prog.bin")], "objcopy")
        for suffix in (".map", ".bin", ".elf"):  # ELF last: it marks completion
            os.replace(tmp / f"prog{suffix}", out / f"{stem}{suffix}")
    if objdump:
        dis = subprocess.run(
            [objdump, "-d", f"{stem}.elf"], capture_output=True, text=True, cwd=out, check=False
        )
        tmp_dis = out / f".{stem}.dis.tmp"
        tmp_dis.write_text(dis.stdout)
        os.replace(tmp_dis, out / f"{stem}.dis")
    return elf


def binary_path(elf: Path) -> Path:
    """The flat image (loaded at the RAM base) that :func:`build_program` wrote next to ``elf``."""
    return Path(elf).with_suffix(".bin")


def section_sizes(elf: Path) -> dict[str, int]:
    """``{"text": .., "data": .., "bss": ..}`` in bytes (rodata counts as text), via size(1)."""
    size = find_tool("size")
    proc = subprocess.run([size, "-A", str(elf)], capture_output=True, text=True, check=True)
    sizes = {"text": 0, "data": 0, "bss": 0}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[1].isdigit():
            continue
        name, n = parts[0], int(parts[1])
        if name in (".text", ".rodata"):
            sizes["text"] += n
        elif name in (".data", ".sdata"):
            sizes["data"] += n
        elif name in (".bss", ".sbss"):
            sizes["bss"] += n
    return sizes
