"""Platform description files (``rtl_templates/platforms/*.toml``): loading and validation.

A platform file is the single source of truth for the reference SoC's memory map and
memory-system timing. The SoC RTL is parameterised from it (:meth:`Platform.verilog_params`),
software gets it as a C header (:meth:`Platform.c_header`), and the memory-interface model
reads the same :class:`Platform` object.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from aquas.diagnostics import AquasError

PLATFORM_DIR = Path(__file__).resolve().parent.parent.parent / "rtl_templates" / "platforms"
SOCS = ("vexriscv", "picorv32")

# custom-0..3 major opcodes and which of them each core routes to its ISAX unit.
CUSTOM_OPCODES = {"custom-0": 0x0B, "custom-1": 0x2B, "custom-2": 0x5B, "custom-3": 0x7B}
ROUTED_OPCODES = {
    # VexRiscv_FullCfu's decoder marks only opcode 0x0B legal for the CfuPlugin
    # ((insn & 0x7f) == 0x0b); custom-1..3 raise an illegal-instruction trap.
    "vexriscv": (0x0B,),
    # The PCPI adapter claims all four custom opcodes.
    "picorv32": (0x0B, 0x2B, 0x5B, 0x7B),
}


def _is_pow2(v: int) -> bool:
    return v > 0 and (v & (v - 1)) == 0


@dataclass(frozen=True)
class SocSection:
    core: str = "vexriscv"
    bus_width: int = 32


@dataclass(frozen=True)
class MemorySection:
    ram_base: int = 0
    ram_size: int = 1 << 20
    latency: int = 10


@dataclass(frozen=True)
class L2Section:
    enable: bool = False
    size: int = 32768
    line_bytes: int = 32
    hit_latency: int = 2


@dataclass(frozen=True)
class IsaxMasterSection:
    setup_latency: int = 2
    dma_channels: int = 1
    max_burst_beats: int = 256


@dataclass(frozen=True)
class DevicesSection:
    console: int = 0xF0000000
    exit: int = 0xF0000004
    cycle_lo: int = 0xF0000008
    cycle_hi: int = 0xF000000C
    region_begin: int = 0xF0000010
    region_end: int = 0xF0000014


_SECTIONS: dict[str, type] = {
    "soc": SocSection,
    "memory": MemorySection,
    "l2": L2Section,
    "isax_master": IsaxMasterSection,
    "devices": DevicesSection,
}


@dataclass(frozen=True)
class Platform:
    soc: SocSection
    memory: MemorySection
    l2: L2Section
    isax_master: IsaxMasterSection
    devices: DevicesSection
    path: Path | None = None

    @property
    def core(self) -> str:
        return self.soc.core

    @property
    def reset_vector(self) -> int:
        return self.memory.ram_base

    def verilog_params(self) -> dict[str, int]:
        """Top-level parameters of ``aquas_soc_<core>`` (passed with Verilator's ``-G``)."""
        m, l2, im, d = self.memory, self.l2, self.isax_master, self.devices
        line_words = l2.line_bytes // 4
        return {
            "RAM_BASE": m.ram_base,
            "RAM_WORDS_LOG2": (m.ram_size // 4).bit_length() - 1,
            "MEM_LATENCY": m.latency,
            "L2_ENABLE": int(l2.enable),
            "L2_LINES_LOG2": (l2.size // l2.line_bytes).bit_length() - 1,
            "L2_LINE_WORDS_LOG2": line_words.bit_length() - 1,
            "L2_HIT_LATENCY": l2.hit_latency,
            "DMA_SETUP": im.setup_latency,
            "DMA_CHANNELS": im.dma_channels,
            "MAX_BURST_BEATS": im.max_burst_beats,
            "DEV_CONSOLE": d.console,
            "DEV_EXIT": d.exit,
            "DEV_CYCLE_LO": d.cycle_lo,
            "DEV_CYCLE_HI": d.cycle_hi,
            "DEV_REGION_BEGIN": d.region_begin,
            "DEV_REGION_END": d.region_end,
        }

    def c_header(self) -> str:
        """The memory map as C macros, for start code and runtime headers."""
        d = self.devices
        lines = [
            "/* Generated from the aquas platform file: do not edit. */",
            "#pragma once",
            f"#define AQUAS_SOC_{self.core.upper()} 1",
            f"#define AQUAS_RAM_BASE 0x{self.memory.ram_base:08x}u",
            f"#define AQUAS_RAM_SIZE 0x{self.memory.ram_size:08x}u",
        ]
        for f in fields(DevicesSection):
            lines.append(f"#define AQUAS_DEV_{f.name.upper()} 0x{getattr(d, f.name):08x}u")
        return "\n".join(lines) + "\n"

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in _SECTIONS:
            sec = getattr(self, name)
            out[name] = {f.name: getattr(sec, f.name) for f in fields(sec)}
        return out


def platform_file(soc: str) -> Path:
    if soc not in SOCS:
        raise AquasError(f"unknown SoC '{soc}'", hint=f"choose one of: {', '.join(SOCS)}")
    return PLATFORM_DIR / f"{soc}.toml"


def load_platform(path: Path | str | None = None, *, soc: str | None = None) -> Platform:
    """Loads and validates a platform file (the SoC's default one when ``path`` is None)."""
    if path is None:
        path = platform_file(soc or "vexriscv")
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except OSError as e:
        raise AquasError(f"cannot read platform file: {e.strerror}", filename=str(path)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise AquasError(f"invalid TOML: {e}", filename=str(path)) from None
    return parse_platform(raw, str(path), soc=soc)


def parse_platform(
    raw: dict[str, Any], where: str = "<platform>", soc: str | None = None
) -> Platform:
    def fail(key: str, msg: str) -> AquasError:
        return AquasError(f"{key}: {msg}", filename=where)

    for name in raw:
        if name not in _SECTIONS:
            raise fail(name, f"unknown section (known: {', '.join(_SECTIONS)})")
    sections: dict[str, Any] = {}
    for name, cls in _SECTIONS.items():
        body = raw.get(name, {})
        if not isinstance(body, dict):
            raise fail(name, "expected a table")
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, val in body.items():
            full = f"{name}.{key}"
            if key not in known:
                raise fail(full, f"unknown key (known in [{name}]: {', '.join(known)})")
            default = getattr(cls(), key)
            if isinstance(default, bool):
                if not isinstance(val, bool):
                    raise fail(full, f"expected true or false, got {val!r}")
            elif isinstance(default, int):
                if isinstance(val, bool) or not isinstance(val, int):
                    raise fail(full, f"expected an integer, got {val!r}")
                if val < 0:
                    raise fail(full, f"must not be negative, got {val}")
            elif isinstance(default, str) and not isinstance(val, str):
                raise fail(full, f"expected a string, got {val!r}")
            values[key] = val
        sections[name] = cls(**values)
    p = Platform(path=Path(where) if where != "<platform>" else None, **sections)

    if p.soc.core not in SOCS:
        raise fail("soc.core", f"unknown core '{p.soc.core}' (known: {', '.join(SOCS)})")
    if soc is not None and p.soc.core != soc:
        raise fail("soc.core", f"platform is for '{p.soc.core}' but SoC '{soc}' was requested")
    if p.soc.bus_width != 32:
        raise fail("soc.bus_width", f"only 32 is supported, got {p.soc.bus_width}")
    m = p.memory
    if not _is_pow2(m.ram_size) or m.ram_size < 4096:
        raise fail("memory.ram_size", f"must be a power of two >= 4096, got {m.ram_size:#x}")
    if m.ram_base % m.ram_size:
        raise fail("memory.ram_base", f"must be aligned to ram_size ({m.ram_size:#x})")
    if m.ram_base + m.ram_size > 0x80000000:
        raise fail("memory.ram_base", "RAM must lie below 0x80000000 (the I/O region)")
    if not 0 <= m.latency <= 1000:
        raise fail("memory.latency", f"must be 0..1000, got {m.latency}")
    l2 = p.l2
    if not _is_pow2(l2.line_bytes) or not 4 <= l2.line_bytes <= 256:
        raise fail("l2.line_bytes", f"must be a power of two in 4..256, got {l2.line_bytes}")
    if not _is_pow2(l2.size) or l2.size < l2.line_bytes:
        raise fail("l2.size", f"must be a power of two >= line_bytes, got {l2.size}")
    if l2.size // l2.line_bytes > 65536:
        raise fail("l2.size", "at most 65536 lines")
    if l2.hit_latency > 1000:
        raise fail("l2.hit_latency", f"must be 0..1000, got {l2.hit_latency}")
    im = p.isax_master
    if im.setup_latency > 1000:
        raise fail("isax_master.setup_latency", f"must be 0..1000, got {im.setup_latency}")
    if not 1 <= im.dma_channels <= 8:
        raise fail("isax_master.dma_channels", f"must be 1..8, got {im.dma_channels}")
    if not 1 <= im.max_burst_beats <= 256:
        raise fail("isax_master.max_burst_beats", f"must be 1..256, got {im.max_burst_beats}")
    seen: dict[int, str] = {}
    for f in fields(DevicesSection):
        addr = getattr(p.devices, f.name)
        key = f"devices.{f.name}"
        if addr % 4:
            raise fail(key, f"must be word aligned, got {addr:#x}")
        if not 0x80000000 <= addr <= 0xFFFFFFFC:
            raise fail(key, f"must be in the I/O region 0x80000000..0xfffffffc, got {addr:#x}")
        if addr in seen:
            raise fail(key, f"same address as devices.{seen[addr]} ({addr:#x})")
        seen[addr] = f.name
    return p


def check_encoding(soc: str, opcode: int, funct3: int = 0, funct7: int = 0) -> None:
    """Raises when the core cannot route the custom instruction to its ISAX unit."""
    if opcode not in ROUTED_OPCODES[soc]:
        names = {v: k for k, v in CUSTOM_OPCODES.items()}
        routed = ", ".join(f"{names[o]} ({o:#04x})" for o in ROUTED_OPCODES[soc])
        raise AquasError(
            f"opcode {names.get(opcode, hex(opcode))} (funct3={funct3}, funct7={funct7}) "
            f"cannot reach the ISAX unit on {soc}: the core routes only {routed}",
            hint="re-encode the ISAX on a routed opcode or pick another SoC",
        )
