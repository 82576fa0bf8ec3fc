"""Running programs on a built SoC: ELF loading, the harness process, results."""

from __future__ import annotations

import json
import struct
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aquas.diagnostics import AquasError
from aquas.sim.builder import SimBinary, build
from aquas.target import Target

EM_RISCV = 243
PT_LOAD = 1


@dataclass(frozen=True)
class Region:
    id: int
    cycles: int  # summed over all begin/end pairs
    count: int  # completed begin/end pairs

    @property
    def mean(self) -> float:
        return self.cycles / self.count if self.count else 0.0


@dataclass(frozen=True)
class BadAccess:
    """An access to an address that is neither RAM nor a device; the run ended there, before
    the access read or wrote anything (``aquas_mem_system.v``)."""

    master: str  # core_fetch | core_data | isax
    channel: int | None  # the ISAX unit's DMA channel (master == "isax")
    write: bool
    address: int  # the first byte address outside RAM and the devices
    start: int  # the request's address (a burst may start in RAM and run past its end)
    beats: int
    pc: int | None  # core_data: the load/store; isax: the custom instruction; core_fetch: None

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> BadAccess:
        return cls(
            master=str(doc["master"]),
            channel=None if doc["channel"] is None else int(doc["channel"]),
            write=bool(doc["write"]),
            address=int(doc["address"]),
            start=int(doc["start"]),
            beats=int(doc["beats"]),
            pc=None if doc["pc"] is None else int(doc["pc"]),
        )


@dataclass
class SimResult:
    output: str
    exit_code: int  # the program's exit code; -1 when it did not exit
    cycles: int
    regions: dict[int, Region]
    timed_out: bool
    reason: str = "exit"  # exit | timeout | unattached | trap | bad_access | burst_too_long
    report: str = ""  # the harness's explanation when the program did not exit normally
    bad_access: BadAccess | None = None  # set when reason == "bad_access"
    l2_hits: int = 0
    l2_misses: int = 0
    wall_seconds: float = 0.0
    stderr: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def cycles_per_second(self) -> float:
        return self.cycles / self.wall_seconds if self.wall_seconds else 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "exit_code": self.exit_code,
            "cycles": self.cycles,
            "timed_out": self.timed_out,
            "reason": self.reason,
            "report": self.report,
            "bad_access": asdict(self.bad_access) if self.bad_access else None,
            "output": self.output,
            "regions": {
                str(r.id): {"cycles": r.cycles, "count": r.count} for r in self.regions.values()
            },
            "l2_hits": self.l2_hits,
            "l2_misses": self.l2_misses,
            "wall_seconds": self.wall_seconds,
        }


def load_elf(path: Path) -> tuple[int, list[tuple[int, bytes]]]:
    """(entry, [(address, bytes)]) of an ELF32 little-endian RISC-V executable."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise AquasError(f"cannot read program: {e.strerror}", filename=str(path)) from None

    def bad(msg: str) -> AquasError:
        return AquasError(
            f"not a usable RV32 program: {msg}",
            filename=str(path),
            hint="build it with riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32",
        )

    if len(data) < 52 or data[:4] != b"\x7fELF":
        raise bad("not an ELF file (bad magic)")
    if data[4] != 1:
        raise bad("ELF class is not ELF32 (a 64-bit program?)")
    if data[5] != 1:
        raise bad("not little-endian")
    (e_type, e_machine, _ver, e_entry, e_phoff, _shoff, _flags, _ehsize, e_phentsize, e_phnum) = (
        struct.unpack_from("<HHIIIIIHHH", data, 16)
    )
    if e_machine != EM_RISCV:
        raise bad(f"machine is {e_machine}, not RISC-V ({EM_RISCV})")
    if e_type != 2:
        raise bad("not an executable (ET_EXEC); link it with a linker script")
    if e_phnum == 0 or e_phentsize < 32 or e_phoff + e_phnum * e_phentsize > len(data):
        raise bad("missing or truncated program headers")
    segs: list[tuple[int, bytes]] = []
    for i in range(e_phnum):
        p_type, p_offset, _vaddr, p_paddr, p_filesz, p_memsz, _pflags, _align = struct.unpack_from(
            "<IIIIIIII", data, e_phoff + i * e_phentsize
        )
        if p_type != PT_LOAD or p_memsz == 0:
            continue
        if p_offset + p_filesz > len(data) or p_filesz > p_memsz:
            raise bad(f"segment {i} is truncated")
        segs.append((p_paddr, data[p_offset : p_offset + p_filesz] + bytes(p_memsz - p_filesz)))
    if not segs:
        raise bad("no loadable segments")
    return e_entry, segs


def write_image(elf: Path, platform: Target, out: Path) -> None:
    """The RAM image as a $readmemh file (word-addressed relative to the RAM base)."""
    entry, segs = load_elf(elf)
    base, size = platform.memory.ram_base, platform.memory.ram_size
    if entry != platform.ram_base:
        raise AquasError(
            f"ELF entry point {entry:#010x} is not the SoC's reset vector {platform.ram_base:#010x}",
            filename=str(elf),
            hint="link the start code (_start) first, at the RAM base",
        )
    words: dict[int, int] = {}
    for addr, blob in segs:
        if addr < base or addr + len(blob) > base + size:
            raise AquasError(
                f"segment at {addr:#010x}..{addr + len(blob):#010x} lies outside RAM "
                f"({base:#010x}..{base + size:#010x})",
                filename=str(elf),
            )
        for k, byte in enumerate(blob):
            a = addr + k - base
            w = a >> 2
            words[w] = words.get(w, 0) | (byte << (8 * (a & 3)))
    lines: list[str] = []
    prev = -2
    for w in sorted(words):
        if w != prev + 1:
            lines.append(f"@{w:x}")
        lines.append(f"{words[w]:08x}")
        prev = w
    out.write_text("\n".join(lines) + "\n")


def run(
    binary: SimBinary,
    elf: Path,
    max_cycles: int = 50_000_000,
    vcd: Path | None = None,
    *,
    timeout: float | None = None,
    echo: bool = False,
) -> SimResult:
    """Runs ``elf`` on the SoC to its exit or ``max_cycles``."""
    if vcd is not None:
        want = "fst" if Path(vcd).suffix == ".fst" else "vcd"
        if binary.trace != want:
            binary = build(
                binary.soc,
                binary.platform,
                list(binary.isax_verilog),
                trace=want,
                params=binary.params,
            )
    with tempfile.TemporaryDirectory(prefix="aquas-sim-") as td:
        image = Path(td) / "image.hex"
        result_file = Path(td) / "result.jsonl"
        write_image(Path(elf), binary.platform, image)
        cmd = [
            str(binary.path),
            f"+aquas_image={image}",
            f"--max-cycles={max_cycles}",
            f"--result={result_file}",
        ]
        if vcd is not None:
            cmd.append(f"--trace={Path(vcd).resolve()}")
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AquasError(f"simulation exceeded the wall-clock limit of {timeout} s") from None
        out = proc.stdout.decode(errors="replace")
        err = proc.stderr.decode(errors="replace")
        if echo and out:
            print(out, end="")
        if proc.returncode != 0 or not result_file.exists():
            raise AquasError(f"simulator failed (status {proc.returncode}):\n{err.strip()}")
        if vcd is not None and not Path(vcd).is_file():
            raise AquasError("the simulator did not write the waveform", filename=str(vcd))
        records = [json.loads(line) for line in result_file.read_text().splitlines() if line]
    end = next(r for r in records if r["type"] == "end")
    stats: dict[str, Any] = next((r for r in records if r["type"] == "stats"), {})
    regions = {
        r["id"]: Region(r["id"], r["cycles"], r["count"]) for r in records if r["type"] == "region"
    }
    return SimResult(
        output=out,
        exit_code=int(end["exit_code"]),
        cycles=int(end["cycles"]),
        regions=regions,
        timed_out=end["reason"] == "timeout",
        reason=end["reason"],
        report=end.get("detail", ""),
        bad_access=BadAccess.from_json(end["bad_access"]) if end.get("bad_access") else None,
        l2_hits=int(stats.get("l2_hits", 0)),
        l2_misses=int(stats.get("l2_misses", 0)),
        wall_seconds=float(stats.get("wall_seconds", 0.0)),
        stderr=err,
    )
