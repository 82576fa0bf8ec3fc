"""The target descriptor schema: everything aquas knows about one reference SoC.

One :class:`Target` is read by every stage: the Verilator SoC build (:meth:`Target.verilog_params`),
the runtime's C header and linker map (:meth:`Target.c_header`, :meth:`Target.linker_memory`),
the ISS, the matcher's cost model (:attr:`Target.cost`), synthesis (memory latency) and the
reports. Validation is pydantic's (unknown keys, types, ranges); the cross-field rules that a
field type cannot say are the model validators at the end of :class:`Target`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from aquas.dialects import aquas as aq

#: The four RISC-V custom major opcodes, spelled as in descriptors (``custom-0``); the values
#: are the dialect's (one table).
CUSTOM_OPCODES: dict[str, int] = {
    f"custom-{name.removeprefix('custom')}": v for name, v in aq.CUSTOM_OPCODES.items()
}
OPCODE_NAMES: dict[int, str] = {v: k for k, v in CUSTOM_OPCODES.items()}

U32 = Annotated[int, Field(ge=0, le=0xFFFFFFFF)]
Cycles = Annotated[int, Field(ge=0, le=1000)]


def _is_pow2(v: int) -> bool:
    return v > 0 and (v & (v - 1)) == 0


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class CoreSection(_Section):
    """The processor core and how the ISAX unit attaches to it."""

    display_name: str
    module: str = Field(description="the core's top module (instance u_cpu in the SoC top)")
    rtl_package: str = Field(description="PyPI package (import name) holding the core's Verilog")
    rtl_file: str = Field(description="the core's Verilog file under the package's data_location")
    # A core made of many SystemVerilog files (CV32E40X) names its package's file list
    # (``*.flist``: ``+incdir+DIR`` and file lines, ``${VAR}`` standing for rtl_flist_dir).
    rtl_flist_dir: str = Field(
        default="", description="what ${VAR} in an .flist rtl_file stands for (under data_location)"
    )
    rtl_exclude: list[str] = Field(
        default=[], description="glob patterns (under data_location) of file-list entries to skip"
    )
    adapter: str = Field(description="rtl_templates file adapting the canonical ISAX port")
    top: str = Field(description="rtl_templates file of the SoC top module aquas_soc_<name>")
    routed_opcodes: list[Literal["custom-0", "custom-1", "custom-2", "custom-3"]] = Field(
        min_length=1
    )
    has_rdcycle: bool = True
    has_mtvec: bool = True
    cfu_enable_csr: Annotated[int, Field(ge=0, le=0xFFF)] | None = None
    # CV32E40X inhibits mcycle/minstret after reset (mcountinhibit = 0xD): crt0 clears it.
    clear_mcountinhibit: bool = False
    # Why the core's area and depth are not measured (empty: they are): the Yosys of the
    # reference set-up cannot read every core (CV32E40X's SystemVerilog packages).
    area_unmeasured: str = ""


class MemorySection(_Section):
    ram_base: U32 = 0
    ram_size: U32 = 1 << 20
    latency: Cycles = 10


class L2Section(_Section):
    enable: bool = False
    size: Annotated[int, Field(gt=0)] = 32768
    line_bytes: Annotated[int, Field(ge=4, le=256)] = 32
    hit_latency: Cycles = 2


class IsaxMasterSection(_Section):
    """The ISAX unit's memory master."""

    bus_width: Literal[32, 64, 128] = Field(
        default=32, description="data bits per beat (the core's buses stay 32-bit)"
    )
    setup_latency: Cycles = 2
    dma_channels: Annotated[int, Field(ge=1, le=8)] = 1
    max_burst_beats: Annotated[int, Field(ge=1, le=256)] = 256  # the port's length is 8 bits
    outstanding: Annotated[int, Field(ge=1, le=8)] = Field(
        default=1,
        description="requests the memory controller accepts while one is under way (its "
        "FIFO depth + 1) and the unit keeps in flight: 1 serves one transaction at a time",
    )
    snoop_writes: bool = Field(
        default=False,
        description="the memory system reports every write to RAM by any master to the unit "
        "(aquas_mem_ctrl's snoop port), so the unit may keep burst-filled scratchpads "
        "resident across calls (aquas-interface-resident)",
    )


class DevicesSection(_Section):
    console: U32 = 0xF0000000
    exit: U32 = 0xF0000004
    cycle_lo: U32 = 0xF0000008
    cycle_hi: U32 = 0xF000000C
    region_begin: U32 = 0xF0000010
    region_end: U32 = 0xF0000014


class DCacheSection(_Section):
    """The core's data cache, as the coherence strategy of ISAX calls needs it."""

    policy: Literal["none", "write-through", "write-back"] = "none"
    size: Annotated[int, Field(ge=0)] = 0
    line_bytes: Annotated[int, Field(ge=0, le=256)] = 0
    flush_word: U32 | None = Field(
        default=None, description="instruction word that flushes/invalidates the whole cache"
    )
    uncached_mask: U32 = 0
    drain_load_addr: U32 | None = Field(
        default=None,
        description="uncached device register loaded before an ISAX to drain posted stores",
    )
    invalidate_cycles: Annotated[int, Field(ge=0)] = 0
    ways: Annotated[int, Field(ge=1, le=64)] = 1
    coherence: Literal["auto", "invalidate-all", "evict-lines"] = Field(
        default="auto",
        description="how stale lines are removed after an ISAX that writes memory "
        "(docs/runtime.md): auto picks the cheaper of invalidate-all and evict-lines",
    )


class ICacheSection(_Section):
    size: Annotated[int, Field(ge=0)] = 0
    line_bytes: Annotated[int, Field(ge=0, le=256)] = 0


class CostSection(_Section):
    """Cycles per dynamic operation of compiled code on the core (the matcher's cost model)."""

    alu: Annotated[float, Field(ge=0)]
    mul: Annotated[float, Field(ge=0)]
    div: Annotated[float, Field(ge=0)]
    load: Annotated[float, Field(ge=0)]
    store: Annotated[float, Field(ge=0)]
    branch: Annotated[float, Field(ge=0)]
    call_overhead: Annotated[int, Field(ge=0)] = Field(
        description="moving operands into registers, the instruction, cache upkeep"
    )


class Target(_Section):
    """One reference SoC. ``name`` is the SoC's name (``aquas sim --soc NAME``)."""

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
    core: CoreSection
    memory: MemorySection = MemorySection()
    l2: L2Section = L2Section()
    isax_master: IsaxMasterSection = IsaxMasterSection()
    devices: DevicesSection = DevicesSection()
    dcache: DCacheSection = DCacheSection()
    icache: ICacheSection = ICacheSection()
    cost: CostSection
    source: str = Field(default="", exclude=True, description="where it was loaded from")

    # -- cross-field rules ------------------------------------------------------------------

    @model_validator(mode="after")
    def _check(self) -> Target:
        m = self.memory
        if not _is_pow2(m.ram_size) or m.ram_size < 4096:
            raise ValueError(f"memory.ram_size must be a power of two >= 4096, got {m.ram_size:#x}")
        if m.ram_base % m.ram_size:
            raise ValueError(f"memory.ram_base must be aligned to ram_size ({m.ram_size:#x})")
        if m.ram_base + m.ram_size > 0x80000000:
            raise ValueError("memory.ram_base: RAM must lie below 0x80000000 (the I/O region)")
        l2 = self.l2
        if not _is_pow2(l2.line_bytes):
            raise ValueError(f"l2.line_bytes must be a power of two in 4..256, got {l2.line_bytes}")
        if not _is_pow2(l2.size) or l2.size < l2.line_bytes or l2.size // l2.line_bytes > 65536:
            raise ValueError(
                f"l2.size must be a power of two of 1..65536 lines of line_bytes, got {l2.size}"
            )
        seen: dict[int, str] = {}
        for key, addr in self.devices.model_dump().items():
            if addr % 4:
                raise ValueError(f"devices.{key} must be word aligned, got {addr:#x}")
            if addr < 0x80000000:
                raise ValueError(
                    f"devices.{key} must be in the I/O region 0x80000000..0xfffffffc, got {addr:#x}"
                )
            if addr in seen:
                raise ValueError(f"devices.{key} has the same address as devices.{seen[addr]}")
            seen[addr] = key
        beat = self.isax_master.bus_width // 8
        if l2.enable and l2.line_bytes < beat:
            raise ValueError(
                f"l2.line_bytes ({l2.line_bytes}) must be at least an ISAX beat "
                f"({beat} bytes at isax_master.bus_width = {self.isax_master.bus_width})"
            )
        if l2.enable and self.isax_master.outstanding > 1:
            raise ValueError(
                f"isax_master.outstanding = {self.isax_master.outstanding} needs l2.enable = "
                "false: the memory controller's L2 timing model serves one transaction at a time"
            )
        d = self.dcache
        if d.policy != "none":
            if d.flush_word is None:
                raise ValueError(f"dcache.flush_word is required for a {d.policy} cache")
            if not (_is_pow2(d.size) and _is_pow2(d.line_bytes)):
                raise ValueError("dcache.size and dcache.line_bytes must be powers of two")
            if d.coherence == "evict-lines":
                # a conflict load from a ^ size evicts a's line only in a direct-mapped,
                # write-through cache, and must itself land in RAM
                if d.policy != "write-through" or d.ways != 1:
                    raise ValueError(
                        "dcache.coherence = 'evict-lines' needs a direct-mapped (ways = 1) "
                        "write-through cache"
                    )
                if m.ram_size < 2 * d.size:
                    raise ValueError(
                        "dcache.coherence = 'evict-lines' needs memory.ram_size >= 2 * dcache.size"
                    )
        return self

    # -- derived views ----------------------------------------------------------------------

    @property
    def routed_opcodes(self) -> tuple[int, ...]:
        return tuple(CUSTOM_OPCODES[n] for n in self.core.routed_opcodes)

    @property
    def ram_base(self) -> int:
        return self.memory.ram_base

    @property
    def ram_size(self) -> int:
        return self.memory.ram_size

    @property
    def stack_top(self) -> int:
        return self.memory.ram_base + self.memory.ram_size

    @property
    def ram_cached(self) -> bool:
        """Whether the core's data cache holds RAM lines at all."""
        return self.dcache.policy != "none" and not (
            self.memory.ram_base & self.dcache.uncached_mask
        )

    @property
    def isax_mem_latency(self) -> int:
        """Cycles from an ISAX memory request to its first beat: response latency + DMA setup."""
        return self.memory.latency + self.isax_master.setup_latency

    def fingerprint(self) -> str:
        """A content hash of every value (cache keys of builds that depend on the target)."""
        data = json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()
        return hashlib.sha256(data).hexdigest()[:24]

    def replace(self, **sections: dict[str, Any]) -> Target:
        """A validated copy with keys of sections changed: ``t.replace(memory={"latency": 30})``."""
        data = self.model_dump()
        for name, changes in sections.items():
            if name not in data or not isinstance(data[name], dict):
                raise ValueError(f"unknown section {name!r}")
            data[name] = {**data[name], **changes}
        return Target.model_validate({**data, "source": f"{self.source or self.name} (modified)"})

    def describe(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def verilog_params(self) -> dict[str, int]:
        """Top-level parameters of ``aquas_soc_<name>`` (passed with Verilator's ``-G``)."""
        m, l2, im, d = self.memory, self.l2, self.isax_master, self.devices
        return {
            "RAM_BASE": m.ram_base,
            "RAM_WORDS_LOG2": (m.ram_size // 4).bit_length() - 1,
            "MEM_LATENCY": m.latency,
            "L2_ENABLE": int(l2.enable),
            "L2_LINES_LOG2": (l2.size // l2.line_bytes).bit_length() - 1,
            "L2_LINE_WORDS_LOG2": (l2.line_bytes // 4).bit_length() - 1,
            "L2_HIT_LATENCY": l2.hit_latency,
            "DMA_SETUP": im.setup_latency,
            "DMA_CHANNELS": im.dma_channels,
            "MAX_BURST_BEATS": im.max_burst_beats,
            "ISAX_WIDTH": im.bus_width,
            "OUTSTANDING": im.outstanding,
            "DEV_CONSOLE": d.console,
            "DEV_EXIT": d.exit,
            "DEV_CYCLE_LO": d.cycle_lo,
            "DEV_CYCLE_HI": d.cycle_hi,
            "DEV_REGION_BEGIN": d.region_begin,
            "DEV_REGION_END": d.region_end,
        }

    def c_header(self) -> str:
        """``aquas_platform.h``: the memory map and core features as C/assembler macros."""

        def h(v: int) -> str:
            return f"0x{v:08X}"  # no "u" suffix: crt0.S includes this file

        d, c = self.devices, self.core
        lines = [
            "/* Generated by aquas from the target descriptor: do not edit. */",
            f"/* target: {self.name} ({c.display_name}); source: {self.source or 'built in'} */",
            "#ifndef AQUAS_PLATFORM_H",
            "#define AQUAS_PLATFORM_H",
            f"#define AQUAS_PLATFORM_{self.name.upper()} 1",
            f'#define AQUAS_PLATFORM_NAME "{self.name}"',
            f"#define AQUAS_RAM_BASE {h(self.memory.ram_base)}",
            f"#define AQUAS_RAM_SIZE {h(self.memory.ram_size)}",
            f"#define AQUAS_CONSOLE_ADDR {h(d.console)}",
            f"#define AQUAS_EXIT_ADDR {h(d.exit)}",
            f"#define AQUAS_CYCLE_LO_ADDR {h(d.cycle_lo)}",
            f"#define AQUAS_CYCLE_HI_ADDR {h(d.cycle_hi)}",
            f"#define AQUAS_REGION_BEGIN_ADDR {h(d.region_begin)}",
            f"#define AQUAS_REGION_END_ADDR {h(d.region_end)}",
            f"#define AQUAS_HAS_RDCYCLE {int(c.has_rdcycle)}",
            f"#define AQUAS_HAS_MTVEC {int(c.has_mtvec)}",
            f"#define AQUAS_DCACHE_{self.dcache.policy.upper().replace('-', '_')} 1",
        ]
        if c.clear_mcountinhibit:
            lines.append("#define AQUAS_CLEAR_MCOUNTINHIBIT 1")
        if c.cfu_enable_csr is not None:
            lines.append(f"#define AQUAS_CFU_ENABLE_CSR 0x{c.cfu_enable_csr:03X}")
        lines += ["#endif", ""]
        return "\n".join(lines)

    def linker_memory(self) -> str:
        """``aquas_memory.ld``: the MEMORY block ``link.ld`` INCLUDEs."""
        m, dc = self.memory, self.dcache
        # Read-only data and data start on a boundary of the D-cache's way size, so their
        # cache sets do not depend on the size of the code before them: a baseline and an
        # ISAX build of one program (whose code differs) see the same data-cache conflicts.
        way = dc.size // dc.ways if dc.policy != "none" and dc.size else 4
        return (
            "/* Generated by aquas from the target descriptor: do not edit. */\n"
            "MEMORY\n{\n"
            f"  RAM (rwx) : ORIGIN = 0x{m.ram_base:08X}, LENGTH = 0x{m.ram_size:08X}\n"
            "}\n"
            f"__data_align = 0x{way:X};\n"
        )
