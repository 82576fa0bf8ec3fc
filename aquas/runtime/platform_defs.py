"""What the runtime needs to know about a reference SoC: memory map, devices, cycle counter
and data-cache policy.

The authority is the SoC description ``rtl_templates/platforms/<platform>.toml`` (described in
``docs/soc.md``).  When that file exists its values override the built-in defaults below;
the defaults only keep the runtime usable before (or without) the SoC description, and are
the layout the runtime was written against.  Every address the C runtime uses reaches it as
a ``#define`` in the generated ``aquas_platform.h`` (see :func:`platform_header`), so C code
never hard-codes the map.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from aquas.diagnostics import AquasError

PLATFORMS = ("vexriscv", "picorv32")

#: Built-in defaults per platform (overridden by the platform toml when present).
_DEFAULTS: dict[str, dict[str, Any]] = {
    "vexriscv": {
        "core": "VexRiscv_FullCfu",
        "ram_base": 0x0000_0000,
        "ram_size": 0x0002_0000,
        "console_addr": 0xF000_0000,
        "exit_addr": 0xF000_0004,
        "cycle_lo_addr": 0xF000_0008,
        "cycle_hi_addr": 0xF000_000C,
        "region_begin_addr": 0xF000_0010,
        "region_end_addr": 0xF000_0014,
        # VexRiscv_FullCfu implements the ucycle/ucycleh CSRs (0xC00 / 0xC80).
        "has_rdcycle": True,
        # VexRiscv's DataCache is write-through (no dirty state).  Its "flush" instruction
        # (MISC-MEM opcode, funct3 = 5, rs1 = rs2 = 0: the word 0x0000500F, decoded as
        # `(insn & 0x01f0707f) == 0x0000500f` in VexRiscv_FullCfu.v) invalidates every line.
        # Addresses with bit 31 set are I/O: never cached.
        "dcache": "write-through",
        "dcache_flush_word": 0x0000_500F,
        "uncached_mask": 0x8000_0000,
        # No store drain is needed before an ISAX: VexRiscv's CfuPlugin does not issue a
        # command while the memory or write-back stage holds a side-effecting instruction
        # (execute_CfuPlugin_hazard, VexRiscv_FullCfu.v), and the SoC holds the ISAX command
        # while the dBus Wishbone cycle is active (aquas_soc_vexriscv.v), so every older
        # store is in memory first.  A platform without those guarantees sets this to an
        # uncached device address: the header then emits a load from it plus a branch on
        # the loaded value before each memory-touching ISAX.
        "drain_load_addr": None,
        "has_mtvec": True,
        # The CfuPlugin is disabled at reset: custom-0 is illegal until bit 31 of CSR 0xBC0
        # is set (rtl_templates/adapters/cfu_adapter.v); crt0 sets it.
        "cfu_enable_csr": 0xBC0,
    },
    "picorv32": {
        "core": "PicoRV32 (PCPI)",
        "ram_base": 0x0000_0000,
        "ram_size": 0x0002_0000,
        "console_addr": 0xF000_0000,
        "exit_addr": 0xF000_0004,
        "cycle_lo_addr": 0xF000_0008,
        "cycle_hi_addr": 0xF000_000C,
        "region_begin_addr": 0xF000_0010,
        "region_end_addr": 0xF000_0014,
        # PicoRV32 with ENABLE_COUNTERS (its default) implements rdcycle/rdcycleh.
        "has_rdcycle": True,
        # No cache, one memory transaction at a time, PCPI issues after older stores
        # completed: no maintenance at all.
        "dcache": "none",
        "dcache_flush_word": None,
        "uncached_mask": 0,
        "drain_load_addr": None,
        # PicoRV32 has no CSRs besides the counters: crt0 must not touch mtvec.
        "has_mtvec": False,
        "cfu_enable_csr": None,
    },
}

# Accepted spellings in the platform toml for each field (first match wins); nested tables
# are flattened with dots ("memory.ram_base").
_TOML_KEYS: dict[str, tuple[str, ...]] = {
    "ram_base": ("ram_base", "memory.ram_base", "ram.base", "memory.ram.base"),
    "ram_size": ("ram_size", "memory.ram_size", "ram.size", "memory.ram.size"),
    "console_addr": (
        "console_addr",
        "devices.console",
        "console.addr",
        "devices.console.addr",
        "mmio.console",
    ),
    "exit_addr": ("exit_addr", "devices.exit", "exit.addr", "devices.exit.addr", "mmio.exit"),
    "cycle_lo_addr": (
        "cycle_lo_addr",
        "cycle_addr",
        "devices.cycle_lo",
        "devices.cycle",
        "devices.cycles",
        "cycle.addr",
        "devices.cycle.addr",
        "mmio.cycle_lo",
        "mmio.cycle",
    ),
    "cycle_hi_addr": (
        "cycle_hi_addr",
        "devices.cycle_hi",
        "devices.cycle.hi_addr",
        "mmio.cycle_hi",
    ),
    "region_begin_addr": (
        "region_begin_addr",
        "devices.region_begin",
        "region.begin",
        "devices.region.begin",
        "mmio.region_begin",
    ),
    "region_end_addr": (
        "region_end_addr",
        "devices.region_end",
        "region.end",
        "devices.region.end",
        "mmio.region_end",
    ),
    "has_rdcycle": ("has_rdcycle", "core.has_rdcycle", "cpu.has_rdcycle", "counters.rdcycle"),
    "dcache": ("dcache", "dcache.policy", "core.dcache", "cpu.dcache", "cache.dcache"),
    "dcache_flush_word": (
        "dcache_flush_word",
        "dcache.flush_word",
        "dcache.flush_insn",
        "dcache.flush",
    ),
    "uncached_mask": ("uncached_mask", "dcache.uncached_mask", "memory.uncached_mask"),
    "drain_load_addr": ("drain_load_addr", "dcache.drain_load_addr"),
    "has_mtvec": ("has_mtvec", "core.has_mtvec", "cpu.has_mtvec"),
    "cfu_enable_csr": ("cfu_enable_csr", "core.cfu_enable_csr"),
}


_OPTIONAL = ("dcache_flush_word", "drain_load_addr", "cfu_enable_csr")


@dataclass(frozen=True)
class Platform:
    name: str
    core: str
    ram_base: int
    ram_size: int
    console_addr: int
    exit_addr: int
    cycle_lo_addr: int
    cycle_hi_addr: int
    region_begin_addr: int
    region_end_addr: int
    has_rdcycle: bool
    dcache: str  # "none" | "write-through" | "write-back"
    dcache_flush_word: int | None
    uncached_mask: int
    drain_load_addr: int | None
    has_mtvec: bool
    cfu_enable_csr: int | None
    source: str = "built-in defaults"
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def stack_top(self) -> int:
        return self.ram_base + self.ram_size

    @property
    def ram_cached(self) -> bool:
        """Whether the core's data cache holds RAM lines at all."""
        return self.dcache != "none" and not (self.ram_base & self.uncached_mask)

    def fingerprint(self) -> str:
        """A stable text form for cache keys."""
        return repr(replace(self, source="", extra={}))


def platform_toml_path(platform: str) -> Path | None:
    """The SoC description for ``platform`` if the rtl_templates package ships it."""
    candidates: list[Path] = []
    try:
        import aquas.rtl_templates as rt  # installed name of rtl_templates/

        for p in getattr(rt, "__path__", []):
            candidates.append(Path(p) / "platforms" / f"{platform}.toml")
    except ImportError:  # pragma: no cover - layout without the package
        pass
    candidates.append(
        Path(__file__).resolve().parents[2] / "rtl_templates" / "platforms" / f"{platform}.toml"
    )
    for c in candidates:
        if c.is_file():
            return c
    return None


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        out[key] = v
    return out


def _as_int(v: Any) -> int | None:
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        try:
            return int(v.replace("_", ""), 0)
        except ValueError:
            return None
    if isinstance(v, dict):
        for k in ("addr", "address", "base", "value"):
            if k in v:
                return _as_int(v[k])
    return None


def load_platform(platform: str) -> Platform:
    """The platform definition: the built-in defaults overridden by the SoC toml."""
    if platform not in _DEFAULTS:
        raise AquasError(
            f"unknown platform '{platform}'",
            hint=f"known platforms: {', '.join(PLATFORMS)}",
        )
    values = dict(_DEFAULTS[platform])
    source = "built-in defaults"
    extra: dict[str, Any] = {}
    path = platform_toml_path(platform)
    if path is not None:
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise AquasError(f"cannot read platform description {path}: {e}") from e
        flat = _flatten(data)
        extra = flat
        for fld, keys in _TOML_KEYS.items():
            for k in keys:
                if k not in flat:
                    continue
                v = flat[k]
                if fld in ("has_rdcycle", "has_mtvec"):
                    if isinstance(v, bool):
                        values[fld] = v
                        break
                elif fld == "dcache":
                    if isinstance(v, str):
                        values[fld] = _normalise_policy(v)
                        break
                    if isinstance(v, dict) and isinstance(v.get("policy"), str):
                        values[fld] = _normalise_policy(v["policy"])
                        break
                else:
                    iv = _as_int(v)
                    if iv is not None or (fld in _OPTIONAL and v is False):
                        values[fld] = iv
                        break
        source = str(path)
    if values["dcache"] == "none":
        values["dcache_flush_word"] = None
    return Platform(name=platform, source=source, extra=extra, **values)


def _normalise_policy(v: str) -> str:
    s = v.strip().lower().replace("_", "-").replace(" ", "-")
    if s in ("none", "no", "off", "absent", "uncached"):
        return "none"
    if "back" in s:
        return "write-back"
    if "through" in s:
        return "write-through"
    raise AquasError(f"unknown data-cache policy '{v}' in the platform description")


def platform_header(p: Platform) -> str:
    """``aquas_platform.h``: the memory map and core features as C/asm macros."""

    def h(v: int) -> str:
        return f"0x{v:08X}"  # no "u" suffix: crt0.S includes this file

    lines = [
        "/* Generated by aquas.runtime.platform_defs -- do not edit. */",
        f"/* platform: {p.name} ({p.core}); source: {p.source} */",
        "#ifndef AQUAS_PLATFORM_H",
        "#define AQUAS_PLATFORM_H",
        f"#define AQUAS_PLATFORM_{p.name.upper()} 1",
        f'#define AQUAS_PLATFORM_NAME "{p.name}"',
        f"#define AQUAS_RAM_BASE {h(p.ram_base)}",
        f"#define AQUAS_RAM_SIZE {h(p.ram_size)}",
        f"#define AQUAS_CONSOLE_ADDR {h(p.console_addr)}",
        f"#define AQUAS_EXIT_ADDR {h(p.exit_addr)}",
        f"#define AQUAS_CYCLE_LO_ADDR {h(p.cycle_lo_addr)}",
        f"#define AQUAS_CYCLE_HI_ADDR {h(p.cycle_hi_addr)}",
        f"#define AQUAS_REGION_BEGIN_ADDR {h(p.region_begin_addr)}",
        f"#define AQUAS_REGION_END_ADDR {h(p.region_end_addr)}",
        f"#define AQUAS_HAS_RDCYCLE {int(p.has_rdcycle)}",
        f"#define AQUAS_HAS_MTVEC {int(p.has_mtvec)}",
        f"#define AQUAS_DCACHE_{p.dcache.upper().replace('-', '_')} 1",
        *(
            [f"#define AQUAS_CFU_ENABLE_CSR 0x{p.cfu_enable_csr:03X}"]
            if p.cfu_enable_csr is not None
            else []
        ),
        "#endif",
        "",
    ]
    return "\n".join(lines)


def linker_memory(p: Platform) -> str:
    """``aquas_memory.ld``: the MEMORY block ``link.ld`` INCLUDEs."""
    return (
        "/* Generated by aquas.runtime.platform_defs -- do not edit. */\n"
        "MEMORY\n{\n"
        f"  RAM (rwx) : ORIGIN = 0x{p.ram_base:08X}, LENGTH = 0x{p.ram_size:08X}\n"
        "}\n"
    )
