"""The final check of a C rewrite: the rewritten function run against the original on
random inputs, with the golden interpreter (:mod:`aquas.interpreter`) standing in for the
instruction.

This is independent of how a match was found and proven: both versions of the function are
compiled on the host by the C compiler into shared libraries; ``aquas_<isax>`` calls a
Python callback that executes the ISAX's IR on the process's own memory.  Pointer
arguments point into buffers mapped below 4 GiB, so the 32-bit operands the call site
passes (``(uint32_t)(uintptr_t)p``) are the real addresses.  Every trial runs in a forked
child (a crash or a hang of random inputs cannot take the matcher down); a trial whose
*original* crashes or hangs is discarded, and a rewrite is accepted only when every kept
trial gives the same return value and the same bytes in every buffer, and enough trials
were kept.  Children never run the cyclic garbage collector (see :func:`_trial`).
"""

from __future__ import annotations

import ctypes
import gc
import mmap
import os
import random
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aquas.dialects import aquas as aq
from aquas.egraph import cfront
from aquas.interpreter import IsaxState, Memory, execute, find_isax

BUF = 1 << 16  # bytes per pointer argument
LEAD = 1 << 14  # the pointer points this far into its buffer (negative offsets stay inside)
TRIALS = 16
MIN_KEPT = 4  # trials the original must complete for a verdict
TRIAL_SECONDS = 2.0  # the original function on one trial's inputs (native code)
REWRITTEN_SECONDS = 20.0
"""The rewritten function, once the original has finished: its ISAX calls run in the golden
interpreter (Python), far slower than native code. Only a rewrite that really hangs runs
this long, and it is refused."""
WALL_FACTOR = 15.0
"""The limits above are the trial's own CPU time (where the OS reports it), so a loaded
machine cannot turn a slow trial into a refusal; a child that waits without computing is
stopped after this many times the limit in wall-clock time."""
MAP_32BIT = 0x40  # Linux x86-64: map below 2 GiB
LIB_BASE = 0x8000_0000  # the compiled libraries' load addresses: 2 GiB .. 4 GiB
LIB_SLOT = 0x0200_0000
LIB_SLOTS = 64


@dataclass
class Verdict:
    ok: bool
    reason: str = ""
    trials: int = 0  # trials compared


def _header(ext: aq.ExtensionOp) -> str:
    """A stand-in for aquas_isax.h: every intrinsic calls a function pointer the check
    sets to the golden model."""
    from aquas.runtime.header import WORD_LOAD

    out = ["#include <stdint.h>", "static inline void aquas_dcache_flush(void) {}", *WORD_LOAD]
    for isax in ext.isaxs():
        name = isax.sym_name.data
        used = isax.used
        has_rd = "rd" in used
        params = [f"uint32_t {r}" for r in ("rs1", "rs2") if r in used]
        args = [r if r in used else "0u" for r in ("rs1", "rs2")]
        ptr = f"aquas_fc_{name}"
        out.append(f"uint32_t (*{ptr})(uint32_t, uint32_t);")
        body = f"{'return ' if has_rd else ''}{ptr}({', '.join(args)});"
        for fname in (f"aquas_{name}", f"aquas_{name}_noflush"):
            ret = "uint32_t" if has_rd else "void"
            out.append(f"static inline {ret} {fname}({', '.join(params) or 'void'}) {{ {body} }}")
    return "\n".join(out) + "\n"


def _compile(
    source: str,
    fn: str,
    tmp: Path,
    tag: str,
    flags: list[str],
    header: str,
    extra: str = "",
    slot: int = 0,
) -> Path:
    d = tmp / tag
    d.mkdir()
    (d / "aquas_isax.h").write_text(header)
    src = d / "app.c"
    src.write_text(source + f"\nvoid *aquas_fc_entry = (void *)&{fn};\n{extra}")
    lib = d / "app.so"
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise _CannotRun("no host C compiler (gcc) to run the check with")
    # -funsigned-char: plain char is unsigned on RISC-V, as the frontend types it
    cmd = [
        cc,
        "-shared",
        "-fPIC",
        "-O1",
        "-fwrapv",
        "-fno-strict-aliasing",
        "-funsigned-char",
        "-w",
    ]
    # The library's preferred load address, below 4 GiB (the loader honours it when the
    # range is free): a global's address passed as a 32-bit operand is then its real
    # address.  One slot per library loaded in a trial (the original 0, a rewrite 1..).
    place = [f"-Wl,-Ttext-segment={LIB_BASE + (slot % LIB_SLOTS) * LIB_SLOT:#x}"]
    r = subprocess.run(
        [*cmd, *flags, *place, "-o", str(lib), str(src)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if r.returncode != 0 and "text-segment" in r.stderr:
        # a linker without the option: the library is placed by the loader
        r = subprocess.run(
            [*cmd, *flags, "-o", str(lib), str(src)], capture_output=True, text=True, timeout=120
        )
    if r.returncode != 0:
        first = (r.stderr.strip().splitlines() or ["?"])[0]
        raise _CannotRun(f"the {tag} function does not compile on the host: {first}")
    # the library's writable data (globals and statics, compared after every call)
    nm = shutil.which("nm")
    syms = []
    if nm is not None:
        r = subprocess.run([nm, "-S", "--defined-only", str(lib)], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[2] in "bBdD" and not parts[3].startswith("aquas_fc_"):
                syms.append(f"{parts[3]} {int(parts[0], 16)} {int(parts[1], 16)}")
            elif len(parts) == 4 and parts[2] in "rR" and not parts[3].startswith("aquas_fc_"):
                syms.append(f"{parts[3]} {int(parts[0], 16)} {int(parts[1], 16)} ro")
            elif len(parts) == 4 and parts[3] == "aquas_fc_entry":
                syms.insert(0, f"= {int(parts[0], 16)} 0")
    (d / "data.txt").write_text("\n".join(syms) + "\n")
    return lib


@dataclass
class _Data:
    """A global or static of a loaded library: address, size, whether it is writable."""

    addr: int
    size: int
    writable: bool


def _data(lib_path: Path, lib: ctypes.CDLL) -> dict[str, _Data]:
    """Every global and static of the library (at its address in this process), by name."""
    lines = (lib_path.parent / "data.txt").read_text().split("\n")
    rows = [ln.split() for ln in lines if ln]
    if not rows or rows[0][0] != "=":
        return {}
    entry = ctypes.addressof(ctypes.c_void_p.in_dll(lib, "aquas_fc_entry"))
    base = entry - int(rows[0][1])
    return {r[0]: _Data(base + int(r[1]), int(r[2]), len(r) == 3) for r in rows[1:]}


def _globals(data: dict[str, _Data]) -> dict[str, bytes]:
    """The bytes of every writable global and static of the library, by name."""
    return {n: ctypes.string_at(d.addr, d.size) for n, d in data.items() if d.writable}


def _fill_globals(data: dict[str, _Data], cf: cfront.CFunction, trial: int) -> None:
    """The writable globals ``cf`` uses get random contents, the same for both versions
    of the function, except on the first two trials, which start from the file's initial
    values.  Elements get values of the trial's class, as the scalar parameters do."""
    if trial < 2:
        return
    for name, (cv, _kind) in sorted(cf.global_vars.items()):
        d = data.get(name)
        if d is None or not d.writable:
            continue  # const (read-only data), or optimised away
        w = cv.ctype.width // 8 if cv.ctype.obj is None and cv.ctype.width >= 8 else 1
        rng = random.Random(f"global/{trial}/{name}")
        raw = b"".join(
            (_scalar(rng, trial, 8 * w) & ((1 << (8 * w)) - 1)).to_bytes(w, "little")
            for _ in range(d.size // w)
        )
        ctypes.memmove(d.addr, raw + bytes(d.size - len(raw)), d.size)


class _CannotRun(Exception):
    pass


# ---------------------------------------------------------------------------------------
# Struct arguments: a pointer-to-struct parameter is filled member by member in the HOST
# layout (x86-64 lays out a struct with a pointer member differently from RV32) by a helper
# generated in C, in the check's own translation unit, from the struct type itself: the
# compiler places every member, so no layout is computed here.


@dataclass
class _StructFill:
    """The fill of one pointer-to-struct parameter: ``helper(p, aux, seed, cls, room)``
    fills every element of ``p[0 .. room / sizeof *p)``; each pointer member (path) points
    into its own fresh buffer ``aux[j]``."""

    param: int  # index of the buffer among the pointer parameters
    helper: str
    aux: list[str]  # the pointer members' paths, for messages ("f->coef")
    code: str


_FILL_PRELUDE = """
static uint64_t aquas_fc_rng(uint64_t *aquas_fc_x)
{
    *aquas_fc_x ^= *aquas_fc_x << 13;
    *aquas_fc_x ^= *aquas_fc_x >> 7;
    *aquas_fc_x ^= *aquas_fc_x << 17;
    return *aquas_fc_x;
}
/* class 0/1: small values (indices, counts), 2: any bits; as the scalar parameters */
static uint64_t aquas_fc_val(uint64_t *aquas_fc_x, int aquas_fc_c)
{
    uint64_t aquas_fc_v = aquas_fc_rng(aquas_fc_x);
    return aquas_fc_c == 0 ? aquas_fc_v % 17u : aquas_fc_c == 1 ? aquas_fc_v % 257u : aquas_fc_v;
}
#define AQUAS_FC_SET(lv, v) \\
    do { __typeof__(lv) aquas_fc_t = (__typeof__(lv))(v); \\
         __builtin_memcpy((void *)&(lv), &aquas_fc_t, sizeof aquas_fc_t); } while (0)
"""


def _fill_members(
    t: object, lv: str, path: str, in_array: bool, aux: list[str], depth: int, top: bool = False
) -> list[str]:
    """C statements filling the object ``lv`` of layout ``t``: a scalar member gets a value
    of the trial's class (an element of an array member: any bits), a pointer member a
    fresh buffer (one per member path; the elements of an array of pointers share it)."""
    from aquas.egraph import clayout

    if isinstance(t, clayout.Scalar):
        return [
            f"AQUAS_FC_SET({lv}, aquas_fc_val(&aquas_fc_s, {'2' if in_array else 'aquas_fc_cls'}));"
        ]
    if isinstance(t, clayout.Pointer):
        aux.append(path)
        return [f"AQUAS_FC_SET({lv}, aquas_fc_aux[{len(aux) - 1}] + {LEAD});"]
    if isinstance(t, clayout.Array):
        i = f"aquas_fc_i{depth}"
        body = _fill_members(t.elem, f"{lv}[{i}]", f"{path}[]", True, aux, depth + 1)
        return [f"for (unsigned long {i} = 0; {i} < {t.n}u; {i}++) {{", *body, "}"]
    if isinstance(t, clayout.Struct):
        out: list[str] = []
        for fld in t.fields:
            sub = f"{path}{'->' if top else '.'}{fld.name}"
            out += _fill_members(fld.type, f"{lv}.{fld.name}", sub, in_array, aux, depth)
        return out
    return []


def _struct_fills(cf: cfront.CFunction) -> list[_StructFill]:
    """A fill for every parameter pointing to a struct (by a name C knows)."""
    from aquas.egraph import clayout

    out = []
    ptrs = [p for p in cf.params if p.ctype.pointer]
    for k, p in enumerate(ptrs):
        obj = p.ctype.obj
        if not isinstance(obj, clayout.Struct) or obj.name.startswith("anonymous"):
            continue
        aux: list[str] = []
        body = _fill_members(obj, "aquas_fc_p[aquas_fc_e]", p.name, False, aux, 0, top=True)
        helper = f"aquas_fc_fill_{k}"
        code = "\n".join(
            [
                f"void {helper}(void *aquas_fc_vp, char **aquas_fc_aux, uint64_t aquas_fc_seed,",
                "    int aquas_fc_cls, unsigned long aquas_fc_room)",
                "{",
                f"    {obj.name} *aquas_fc_p = ({obj.name} *)aquas_fc_vp;",
                "    uint64_t aquas_fc_s = aquas_fc_seed | 1u;",
                "    (void)aquas_fc_aux; (void)aquas_fc_cls;",
                "    unsigned long aquas_fc_n = aquas_fc_room / sizeof *aquas_fc_p;",
                "    for (unsigned long aquas_fc_e = 0; aquas_fc_e < aquas_fc_n; aquas_fc_e++) {",
                *("        " + ln for ln in body),
                "    }",
                "}",
            ]
        )
        out.append(_StructFill(k, helper, aux, code))
    return out


def _fill_source(fills: list[_StructFill]) -> str:
    if not fills:
        return ""
    return "\n".join([_FILL_PRELUDE, *(f.code for f in fills)]) + "\n"


class _Buffers:
    def __init__(self, n: int):
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_32BIT
        self.maps = [mmap.mmap(-1, BUF, flags=flags) for _ in range(n)]
        self.base = [ctypes.addressof(ctypes.c_char.from_buffer(m)) for m in self.maps]
        if any(b + BUF > 1 << 32 for b in self.base):
            raise _CannotRun("buffers could not be mapped below 4 GiB")

    def fill(self, seed: int) -> None:
        for k, m in enumerate(self.maps):
            m[:] = random.Random(f"{seed}/{k}").randbytes(BUF)

    def snapshot(self) -> list[bytes]:
        return [bytes(m) for m in self.maps]

    def inside(self, addr: int, size: int) -> bool:
        return any(b <= addr and addr + size <= b + BUF for b in self.base)


class _HostMemory(Memory):
    """The process's memory (only inside the check's buffers) as the interpreter's."""

    def __init__(self, bufs: _Buffers, data: dict[str, _Data] | None = None):
        super().__init__()
        self.bufs = bufs
        self.data = list((data or {}).values())  # the running library's globals

    def _global(self, addr: int, size: int, write: bool) -> bool:
        return any(
            d.addr <= addr and addr + size <= d.addr + d.size and (d.writable or not write)
            for d in self.data
        )

    def read(self, addr: int, size: int) -> int:
        if not self.bufs.inside(addr, size) and not self._global(addr, size, False):
            raise _CannotRun(
                f"the ISAX reads {size} bytes at {addr:#x}, outside the arguments and globals"
            )
        return int.from_bytes(ctypes.string_at(addr, size), "little")

    def write(self, addr: int, size: int, value: int) -> None:
        if not self.bufs.inside(addr, size) and not self._global(addr, size, True):
            raise _CannotRun(
                f"the ISAX writes {size} bytes at {addr:#x}, outside the arguments and "
                "writable globals"
            )
        ctypes.memmove(addr, value.to_bytes(size, "little"), size)


def _ctype(ct: cfront.CType | None) -> type | None:
    if ct is None:
        return None
    if ct.pointer:
        return ctypes.c_void_p
    return {
        (1, False): ctypes.c_bool,
        (1, True): ctypes.c_bool,
        (8, True): ctypes.c_int8,
        (8, False): ctypes.c_uint8,
        (16, True): ctypes.c_int16,
        (16, False): ctypes.c_uint16,
        (32, True): ctypes.c_int32,
        (32, False): ctypes.c_uint32,
        (64, True): ctypes.c_int64,
        (64, False): ctypes.c_uint64,
    }.get((ct.width, ct.signed), ctypes.c_uint32)


def _scalar(rng: random.Random, trial: int, width: int) -> int:
    # small values first: scalars are often trip counts or indices
    if trial % 3 == 0:
        return rng.randrange(0, 17)
    if trial % 3 == 1:
        return rng.randrange(0, 257)
    return rng.getrandbits(width)


def _run(
    lib_path: Path,
    cf: cfront.CFunction,
    ext: aq.ExtensionOp,
    trial: int,
    bufs: _Buffers,
    fills: list[_StructFill],
) -> tuple:
    """One call on one trial's inputs (in the forked child): (return value, buffers).
    Both versions run on the same buffers (same addresses), refilled alike."""
    bufs.fill(trial)
    lib = ctypes.CDLL(str(lib_path))
    data = _data(lib_path, lib)
    _fill_globals(data, cf, trial)
    nptr = sum(1 for p in cf.params if p.ctype.pointer)
    aux = nptr
    for sf in fills:
        helper = getattr(lib, sf.helper)
        helper.restype = None
        helper.argtypes = [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_ulong
        ]  # fmt: skip
        ptrs = (ctypes.c_void_p * max(1, len(sf.aux)))(*bufs.base[aux : aux + len(sf.aux)])
        aux += len(sf.aux)
        seed = random.Random(f"struct/{trial}/{sf.param}").getrandbits(64)
        helper(bufs.base[sf.param] + LEAD, ptrs, seed, trial % 3, BUF - LEAD)
    failures: list[str] = []
    keep = []
    state = [IsaxState.reset(ext)]  # the unit's state registers, kept from call to call
    for isax in ext.isaxs():
        name = isax.sym_name.data
        op = find_isax(ext, name)

        def golden(rs1: int, rs2: int, op: aq.IsaxOp = op) -> int:
            try:
                res = execute(op, rs1, rs2, _HostMemory(bufs, data), state[0])
                state[0] = res.state
                return (res.rd or 0) & 0xFFFFFFFF
            except Exception as e:  # reported as the trial's failure
                failures.append(f"{op.sym_name.data}: {e}")
                return 0

        cb = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32)(golden)
        keep.append(cb)
        try:
            slot = ctypes.c_void_p.in_dll(lib, f"aquas_fc_{name}")
        except ValueError:
            continue  # the original calls no ISAX
        slot.value = ctypes.cast(cb, ctypes.c_void_p).value
    entry = ctypes.c_void_p.in_dll(lib, "aquas_fc_entry").value
    assert entry is not None
    argtypes: list[Any] = [_ctype(p.ctype) for p in cf.params]
    proto = ctypes.CFUNCTYPE(_ctype(cf.ret), *argtypes)
    f = proto(entry)
    rng = random.Random(f"args/{trial}")
    args: list[int] = []
    k = 0
    for p in cf.params:
        if p.ctype.pointer:
            args.append(bufs.base[k] + LEAD)
            k += 1
        else:
            args.append(_scalar(rng, trial, p.ctype.width))
    ret = f(*args)
    if failures:
        return ("isax-error", failures[0])
    return (ret, bufs.snapshot(), _globals(data))


def _child(
    orig: Path, new: Path, cf: cfront.CFunction, ext: aq.ExtensionOp, trial: int, wfd: int
) -> None:
    import faulthandler
    import pickle

    faulthandler.disable()  # a crash on random inputs is an expected outcome here
    # ... and so is silence: native libraries loaded in this process (LLVM, through the CIRCT
    # bindings) install handlers that print a backtrace on a fatal signal; the parent sees the
    # crash through the pipe, so the child dies quietly
    for sig in (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT):
        signal.signal(sig, signal.SIG_DFL)
    try:
        fills = _struct_fills(cf)
        names = [p.name for p in cf.params if p.ctype.pointer]
        names += [path for sf in fills for path in sf.aux]
        bufs = _Buffers(len(names))
        a = _run(orig, cf, ext, trial, bufs, fills)
        os.write(wfd, b"O")
        b = _run(new, cf, ext, trial, bufs, fills)
        if a[0] == "isax-error":
            res = "skip"
        elif b[0] == "isax-error":
            res = f"the ISAX failed in the rewritten function: {b[1]}"
        elif a[0] != b[0]:
            res = f"returns {b[0]} instead of {a[0]}"
        else:
            res = "same"
            for k, (x, y) in enumerate(zip(a[1], b[1], strict=True)):
                if x != y:
                    off = next(i for i in range(BUF) if x[i] != y[i]) - LEAD
                    res = f"memory differs at {names[k]}[byte {off}] ({y[off + LEAD]} vs {x[off + LEAD]})"
                    break
            for g, x in a[2].items():
                y = b[2].get(g, x)
                if res == "same" and x != y:
                    off = next(i for i in range(len(x)) if x[i] != y[i])
                    res = f"global {g} differs at byte {off} ({y[off]} vs {x[off]})"
        os.write(wfd, b"R" + pickle.dumps(res))
    finally:
        os._exit(0)


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used (Linux ``/proc``), or None
    where the OS does not say (the trial limits then fall back to wall-clock time)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    # after the command name: state is field 3, utime 14 and stime 15 (1-based)
    return (int(fields[11]) + int(fields[12])) / _TICK


def _trial(orig: Path, new: Path, cf: cfront.CFunction, ext: aq.ExtensionOp, trial: int) -> str:
    """'same', 'skip' (the original failed on these inputs) or the difference."""
    import pickle

    parent = os.getpid()
    rfd, wfd = os.pipe()
    # The child has only this thread, and it never collects garbage: objects inherited from
    # the parent may have destructors that wait for threads the fork did not copy.  An
    # egglog EGraph left in a reference cycle by earlier matching broadcasts its drop to the
    # rayon worker pool and waits forever, so a trial "hung" depending on what the process
    # had run before.  Collection is off across the fork itself (the interpreter's own
    # after-fork handlers allocate) and stays off in the child, which leaves by os._exit.
    collecting = gc.isenabled()
    gc.disable()
    try:
        pid = os.fork()
    finally:
        if collecting and os.getpid() == parent:
            gc.enable()
    if pid == 0:
        os.close(rfd)
        _child(orig, new, cf, ext, trial, wfd)
    os.close(wfd)
    data = b""
    limit, start, cpu0 = TRIAL_SECONDS, time.monotonic(), 0.0
    deadline = start + limit * WALL_FACTOR
    try:
        while True:
            now = time.monotonic()
            cpu = _cpu_seconds(pid)
            used = cpu - cpu0 if cpu is not None else now - start
            if now >= deadline or used > limit:
                os.kill(pid, signal.SIGKILL)
                break
            ready, _, _ = select.select([rfd], [], [], min(0.25, deadline - now))
            if not ready:
                continue
            chunk = os.read(rfd, 1 << 16)
            if not chunk:
                break
            if not data and chunk.startswith(b"O"):
                # the original finished: the rewritten function's own limit from here
                limit, start = REWRITTEN_SECONDS, time.monotonic()
                cpu0 = _cpu_seconds(pid) or 0.0
                deadline = start + limit * WALL_FACTOR
            data += chunk
    finally:
        os.close(rfd)
        os.waitpid(pid, 0)
    if not data.startswith(b"O"):
        return "skip"  # the original crashed or hung on these inputs
    if not data.startswith(b"OR"):
        return "the rewritten function crashed or hung where the original did not"
    res = pickle.loads(data[2:])
    assert isinstance(res, str)
    return res


class Checker:
    """Final checks of one file's rewrites: the original file is compiled once per
    function, each rewritten version once.  Use as a context manager (the libraries live in
    a temporary directory)."""

    def __init__(self, original: str, ext: aq.ExtensionOp, flags: list[str]):
        self.original, self.ext, self.flags = original, ext, flags
        self.header = _header(ext)
        self._dir = tempfile.TemporaryDirectory(prefix="aquas-check-")
        self.tmp = Path(self._dir.name)
        self.originals: dict[str, Path] = {}
        self.n = 0

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        self._dir.cleanup()

    def check(self, rewritten: str, cf: cfront.CFunction) -> Verdict:
        """Run ``cf`` from the original and from ``rewritten`` on the same random inputs."""
        if os.name != "posix" or os.uname().machine not in ("x86_64", "amd64"):
            return Verdict(False, "the final check needs a Linux x86-64 host")
        try:
            # storage for the extern globals the file only declares, then the fills
            extra = "".join(cf.extern_defs) + _fill_source(_struct_fills(cf))
            orig = self.originals.get(cf.name)
            if orig is None:
                tag = f"original-{len(self.originals)}"
                orig = _compile(
                    self.original, cf.name, self.tmp, tag, self.flags, self.header, extra, 0
                )
                self.originals[cf.name] = orig
            self.n += 1
            new = _compile(
                rewritten,
                cf.name,
                self.tmp,
                f"rewritten-{self.n}",
                self.flags,
                self.header,
                extra,
                1 + (self.n - 1) % (LIB_SLOTS - 1),
            )
            kept = 0
            failing: set[int] = set()  # input classes (see _scalar) the original fails on
            for trial in range(TRIALS):
                if trial % 3 in failing:
                    continue  # e.g. a trip count that hangs: do not wait for it again
                r = _trial(orig, new, cf, self.ext, trial)
                if r == "skip":
                    failing.add(trial % 3)
                    continue
                if r != "same":
                    return Verdict(False, f"on random input {trial} the rewritten '{cf.name}' {r}")
                kept += 1
        except _CannotRun as e:
            return Verdict(False, f"the final check could not run: {e}")
        if kept < MIN_KEPT:
            return Verdict(
                False,
                f"the final check could not run: the original '{cf.name}' completed only "
                f"{kept} of {TRIALS} random inputs",
            )
        return Verdict(True, trials=kept)


def check_function(
    original: str,
    rewritten: str,
    cf: cfront.CFunction,
    ext: aq.ExtensionOp,
    flags: list[str],
) -> Verdict:
    """Run ``cf`` from ``original`` and from ``rewritten`` on the same random inputs."""
    with Checker(original, ext, flags) as c:
        return c.check(rewritten, cf)


__all__ = ["Checker", "Verdict", "check_function"]
