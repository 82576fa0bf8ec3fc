"""``aquas_isax.h``: C intrinsics for the ISAXs of one extension.

One ``static inline`` function per ISAX, ``aquas_<isax>``, taking ``uint32_t rs1`` /
``uint32_t rs2`` for the source registers the ISAX uses and returning ``uint32_t`` when it
writes rd.  The body is GCC inline assembly around ``.insn r OPCODE, FUNCT3, FUNCT7, rd,
rs1, rs2`` (``x0`` for an unused register), plus the data-cache maintenance the platform
needs, because an ISAX's memory traffic bypasses the core's data cache
(docs/isax-port.md, "Coherence"; the contract is in docs/runtime.md):

* **PicoRV32**: no cache, one memory transaction at a time, and PCPI starts only after
  older stores completed → nothing.
* **VexRiscv_FullCfu**: a write-through data cache (no dirty lines: memory holds every store
  once it has left the core).  Stores older than an ISAX are in memory before the ISAX can
  issue a request (the CfuPlugin waits for side-effecting instructions in the memory and
  write-back stages; the SoC holds the command while the dBus is busy), so ISAXs that only
  read memory need nothing.  After an ISAX that writes memory the lines it may have written
  are evicted (one conflict load per line of its write footprint in the direct-mapped
  cache), or, when the footprint is unknown or large, the whole cache is invalidated (the
  ``0x0000500F`` flush word): ``aquas.runtime.coherence`` chooses.  Register-only ISAXs
  need nothing.
* a platform whose stores are posted past the point where the ISAX command issues sets
  ``drain_load_addr`` (an uncached device register): before an ISAX that touches memory the
  header loads from it and branches on the value, so the ISAX waits for the load, which an
  in-order bus completes after every older store.
* a **write-back** cache (no current platform): flush (write back + invalidate) before an
  ISAX that touches memory and again after one that writes memory.

For every ISAX that writes memory there is also ``aquas_<isax>_noflush``: the same
instruction without the invalidation, for loops of many calls that end with one
``aquas_dcache_flush()`` before the core reads what the ISAXs wrote.  Both names exist on
every platform (``aquas_dcache_flush`` is a compiler barrier where there is no cache), so
programs stay portable.

Register-only ISAXs without state or scratchpads are emitted as plain (non-volatile) asm,
so the compiler may schedule, CSE or delete them like any arithmetic instruction; every
other ISAX is ``volatile`` (kept, and ordered with the other ISAX calls), and those that
touch memory also clobber ``"memory"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.runtime.coherence import Plan, plan
from aquas.target import OPCODE_NAMES, Target, load_target


@dataclass(frozen=True)
class IsaxEffects:
    """What an ISAX touches, derived from its body."""

    reads_mem: bool
    writes_mem: bool
    stateful: bool  # reads or writes state registers or scratchpads

    @property
    def touches_mem(self) -> bool:
        return self.reads_mem or self.writes_mem


def isax_effects(isax: aq.IsaxOp) -> IsaxEffects:
    reads = writes = stateful = False
    for op in isax.walk():
        if isinstance(op, aq.LoadOp | aq.BurstReadOp):
            reads = True
        elif isinstance(op, aq.StoreOp | aq.BurstWriteOp):
            writes = True
        if isinstance(
            op,
            aq.StateReadOp
            | aq.StateWriteOp
            | aq.SpmReadOp
            | aq.SpmWriteOp
            | aq.BurstReadOp
            | aq.BurstWriteOp,
        ):
            stateful = True
    return IsaxEffects(reads, writes, stateful)


def encode_r(opcode: int, funct3: int, funct7: int, rd: int, rs1: int, rs2: int) -> int:
    """The 32-bit R-type instruction word."""
    return (
        (funct7 & 0x7F) << 25
        | (rs2 & 0x1F) << 20
        | (rs1 & 0x1F) << 15
        | (funct3 & 0x7) << 12
        | (rd & 0x1F) << 7
        | (opcode & 0x7F)
    )


@dataclass(frozen=True)
class CacheOps:
    """Instructions placed before/after an ISAX's ``.insn`` (asm text lines)."""

    before: tuple[str, ...]
    after: tuple[str, ...]
    needs_tmp: bool


def cache_ops(p: Target, eff: IsaxEffects, coherence: Plan) -> CacheOps:
    """The asm around the instruction. ``coherence`` is the plan after it; an
    ``evict-lines`` plan is carried out in C after the asm (:func:`_evict_calls`)."""
    if not eff.touches_mem:
        return CacheOps((), (), False)
    before: list[str] = []
    after: list[str] = []
    tmp = False
    flush = f".word 0x{p.dcache.flush_word:08X}" if p.dcache.flush_word is not None else None
    if p.dcache.policy == "write-back" and p.ram_cached and flush:
        before.append(f"{flush}  /* D-cache write back + invalidate */")
    elif p.dcache.drain_load_addr is not None:
        a = p.dcache.drain_load_addr
        before += [
            f"lui %[tmp], %%hi(0x{a:08X})  /* drain posted stores: uncached load ... */",
            f"lw %[tmp], %%lo(0x{a:08X})(%[tmp])",
            "bne %[tmp], %[tmp], 1f  /* ... the ISAX waits for it */",
            "1:",
        ]
        tmp = True
    if coherence.strategy == "invalidate-all" and flush:
        after.append(f"{flush}  /* D-cache invalidate: drop lines the ISAX overwrote */")
    return CacheOps(tuple(before), tuple(after), tmp)


def _evict_calls(coherence: Plan, p: Target) -> list[str]:
    """C statements evicting the lines an ISAX may have written (``evict-lines`` plans)."""
    if coherence.strategy != "evict-lines":
        return []
    out = [f"    /* {coherence.reason} ({coherence.cycles} cycles at most) */"]
    for sp in coherence.spans:
        base = sp.base or "0u"
        off = f" + (uint32_t)({sp.lo})" if sp.lo else ""
        out.append(f"    aquas_dcache_evict({base}{off}, {sp.size}u);")
    return out


def _evict_function(p: Target) -> list[str]:
    d = p.dcache
    return [
        f"/* Evict the data-cache lines of [addr, addr + bytes) ({p.core.display_name}: direct",
        f" * mapped, {d.size} bytes, {d.line_bytes}-byte lines, write-through). A load from",
        f" * a ^ {d.size} maps to the set of a with another tag, so it replaces the line that",
        ' * set holds, a stale one included (docs/runtime.md, "Coherence strategies"). */',
        "static inline __attribute__((always_inline)) void aquas_dcache_evict(uint32_t addr,"
        " uint32_t bytes)",
        "{",
        f"    if (addr & 0x{d.uncached_mask:08X}u)",
        "        return; /* uncached: no line of it is held */",
        f"    uint32_t a = addr & ~(uint32_t)({d.line_bytes - 1});",
        "    uint32_t end = addr + bytes;",
        "    do {",
        "        uint32_t t;",
        f'        __asm__ __volatile__("lw %0, 0(%1)" : "=r"(t) : "r"(a ^ {d.size}u) : "memory");',
        f"        a += {d.line_bytes};",
        "    } while (a < end);",
        "}",
        "",
    ]


def _c_ident(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def _isax_function(isax: aq.IsaxOp, p: Target, routed: bool, *, noflush: bool = False) -> str:
    name = isax.sym_name.data
    used = isax.used
    eff = isax_effects(isax)
    coherence = plan(isax, p, eff.writes_mem)
    if noflush:
        coherence = Plan("none", reason="the caller flushes")
    ops = cache_ops(p, eff, coherence)
    op, f3, f7 = isax.opcode_value, isax.funct3_value, isax.funct7_value
    has_rd = "rd" in used
    params = [f"uint32_t {r}" for r in ("rs1", "rs2") if r in used]
    ret = "uint32_t" if has_rd else "void"
    rd_s = "%[rd]" if has_rd else "x0"
    rs1_s = "%[rs1]" if "rs1" in used else "x0"
    rs2_s = "%[rs2]" if "rs2" in used else "x0"
    insn = f".insn r 0x{op:02X}, {f3}, {f7}, {rd_s}, {rs1_s}, {rs2_s}"
    lines = [*ops.before, insn, *ops.after]
    asm_text = "\n".join(f'        "{ln}\\n\\t"' for ln in lines[:-1])
    asm_text = (asm_text + "\n" if asm_text else "") + f'        "{lines[-1]}"'
    outs = []
    if has_rd:
        outs.append('[rd] "=r"(rd)')
    if ops.needs_tmp:
        outs.append('[tmp] "=&r"(tmp)')
    ins = [f'[{r}] "r"({r})' for r in ("rs1", "rs2") if r in used]
    clob = ['"memory"'] if eff.touches_mem else []
    volatile = eff.touches_mem or eff.stateful or not has_rd
    kw = "__asm__ __volatile__" if volatile else "__asm__"

    mem = []
    if eff.reads_mem:
        mem.append("reads memory")
    if eff.writes_mem:
        mem.append("writes memory")
    if eff.stateful:
        mem.append("ISAX state")
    if not mem:
        mem.append("register-only, pure")
    word = encode_r(
        op, f3, f7, 10 if has_rd else 0, 10 if "rs1" in used else 0, 11 if "rs2" in used else 0
    )
    doc = (
        f"/* {name}: {OPCODE_NAMES.get(op, hex(op))} (opcode 0x{op:02X}) funct3 {f3} funct7 {f7}; "
        f"uses {', '.join(used) if used else 'no registers'}; {', '.join(mem)}.\n"
        f" * Word with rd=a0, rs1=a0, rs2=a1 (unused: x0): 0x{word:08X}. */"
    )
    if noflush:
        doc = (
            f"/* {name} without the D-cache invalidation: call aquas_dcache_flush() before the\n"
            f" * core reads memory this ISAX wrote (batches one flush over many calls). */"
        )
    attr = "__attribute__((always_inline))"
    if not routed:
        attr += (
            f' __attribute__((deprecated("{name}: opcode 0x{op:02X} is not routed to the ISAX unit '
            f'on {p.name} (illegal-instruction trap)")))'
        )
    body = ["{"]
    if has_rd:
        body.append("    uint32_t rd;")
    if ops.needs_tmp:
        body.append("    uint32_t tmp;")
    body.append(f"    {kw}(")
    body.append(asm_text)
    body.append(f"        : {', '.join(outs)}" if outs else "        :")
    body.append(f"        : {', '.join(ins)}" if ins else "        :")
    if clob:
        body.append(f"        : {', '.join(clob)}")
    body[-1] += ");"
    body += _evict_calls(coherence, p)
    if has_rd:
        body.append("    return rd;")
    body.append("}")
    fname = f"aquas_{_c_ident(name)}" + ("_noflush" if noflush else "")
    sig = f"static inline {attr} {ret} {fname}({', '.join(params) or 'void'})"
    return "\n".join([doc, sig, *body])


def _policy_comment(p: Target) -> list[str]:
    if p.dcache.policy == "none":
        return [
            f" * Cache maintenance on {p.name}: none. The core has no data cache and performs one",
            " * memory transaction at a time, so memory is current whenever an ISAX starts and the",
            " * core sees an ISAX's writes as soon as it completes.",
        ]
    flush = f"0x{p.dcache.flush_word:08X}" if p.dcache.flush_word is not None else "(none)"
    out = [
        f" * Cache maintenance on {p.name}: the ISAX unit's memory traffic bypasses the core's",
        f" * {p.dcache.policy} data cache (flush word {flush}).",
    ]
    if p.dcache.policy == "write-back":
        out += [
            " * Before an ISAX that touches memory the cache is flushed (dirty lines written back);",
            " * after one that writes memory it is flushed again (stale lines invalidated).",
        ]
    else:
        out += [
            " * Write-through: memory holds every store once it has left the core, so an ISAX",
            " * that reads memory sees the core's data"
            + (
                ";"
                if p.dcache.drain_load_addr is None
                else " after a store drain (an uncached load"
                f" from 0x{p.dcache.drain_load_addr:08X} and a branch on its value; the ISAX waits for it);"
            ),
            " * after an ISAX that writes memory the lines it may have written are evicted (or,",
            " * when that range is unknown or large, the whole cache is invalidated), so later",
            " * loads refetch what the ISAX wrote. Register-only ISAXs leave the cache untouched.",
        ]
    return out


#: The word load the matcher's rewrites use for packed register operands (an accumulator
#: ISAX's lanes, egraph/accum.py): may_alias, since the words are read from arrays of
#: narrower elements; the rewrite calls it only on 4-byte aligned addresses.
WORD_LOAD = [
    "typedef uint32_t __attribute__((may_alias)) aquas_word_t;",
    "static inline __attribute__((always_inline)) uint32_t aquas_ld32(uint32_t addr)",
    "{",
    "    return *(const aquas_word_t *)(uintptr_t)addr;",
    "}",
]


def generate_header(
    ext: aq.ExtensionOp, platform: str | Target, *, allow_unrouted: bool = True
) -> str:
    """The text of ``aquas_isax.h`` for ``ext`` on ``platform`` (``vexriscv``/``picorv32``,
    or a :class:`Target`, e.g. a modified one for experiments).

    ISAXs whose opcode the platform's core does not route to the ISAX unit (VexRiscv routes
    only custom-0) get a ``deprecated`` attribute, so calling one warns at compile time; with
    ``allow_unrouted=False`` they are an :class:`AquasError` instead.
    """
    p = platform if isinstance(platform, Target) else load_target(soc=platform)
    platform = p.name
    ext_name = ext.sym_name.data
    routed = p.routed_opcodes
    isaxs = list(ext.isaxs())
    bad = [i.sym_name.data for i in isaxs if i.opcode_value not in routed]
    if bad and not allow_unrouted:
        names = ", ".join(f"{o:#04x}" for o in routed)
        raise AquasError(
            f"extension '{ext_name}': ISAX(s) {', '.join(bad)} use an opcode that {platform} "
            f"does not route to the ISAX unit (routed: {names})",
            hint="re-encode them on a routed custom opcode or target another platform",
        )
    guard = f"AQUAS_ISAX_{_c_ident(ext_name).upper()}_H"
    lines = [
        f"/* aquas_isax.h -- intrinsics for extension `{ext_name}` on platform {platform}.",
        " * Generated by aquas.runtime.header: do not edit.",
        " *",
        " * aquas_<isax>(rs1, rs2) executes one ISAX (R-type custom instruction, emitted with",
        " * GCC's `.insn r OPCODE, FUNCT3, FUNCT7, rd, rs1, rs2`; unused registers are x0).",
        " *",
        *_policy_comment(p),
        " */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdint.h>",
        "",
        *WORD_LOAD,
        "",
    ]
    if p.ram_cached and p.dcache.flush_word is not None:
        lines += [
            f"/* Whole data-cache flush/invalidate ({p.core.display_name}). */",
            "static inline __attribute__((always_inline)) void aquas_dcache_flush(void)",
            "{",
            f'    __asm__ __volatile__(".word 0x{p.dcache.flush_word:08X}" ::: "memory");',
            "}",
            "",
        ]
    else:
        lines += [
            f"/* No data cache on {p.name}: only a compiler barrier (kept for portable code). */",
            "static inline __attribute__((always_inline)) void aquas_dcache_flush(void)",
            "{",
            '    __asm__ __volatile__("" ::: "memory");',
            "}",
            "",
        ]
    if any(plan(i, p, isax_effects(i).writes_mem).strategy == "evict-lines" for i in isaxs):
        lines += _evict_function(p)
    for isax in isaxs:
        routed_ok = isax.opcode_value in routed
        lines.append(_isax_function(isax, p, routed_ok))
        lines.append("")
        if isax_effects(isax).writes_mem:
            lines.append(_isax_function(isax, p, routed_ok, noflush=True))
            lines.append("")
    lines.append(f"#endif /* {guard} */")
    lines.append("")
    return "\n".join(lines)


def write_header(
    ext: aq.ExtensionOp, platform: str | Target, path: Path | str, *, allow_unrouted: bool = True
) -> Path:
    """Write :func:`generate_header` to ``path`` atomically (unchanged files are left alone)."""
    text = generate_header(ext, platform, allow_unrouted=allow_unrouted)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.read_text() == text:
        return path
    from aquas.outdir import write_atomic

    write_atomic(path, text)
    return path
