"""Target descriptors: the built-in ones, validation of user files, and that every stage reads
the same values (no simulator needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.target import check_encoding, load_target, parse_target, target_names


def test_builtin_names_and_primary_first() -> None:
    assert target_names()[0] == "vexriscv"
    assert set(target_names()) == {"vexriscv", "picorv32", "cv32e40x"}


@pytest.mark.parametrize("soc", ["vexriscv", "picorv32", "cv32e40x"])
def test_builtin_descriptors(soc: str) -> None:
    t = load_target(soc=soc)
    assert t.name == soc
    # 1 MiB of RAM = 2^18 words; ISAX memory latency = 10 (memory) + 2 (DMA setup)
    assert t.verilog_params()["RAM_WORDS_LOG2"] == 18
    assert t.isax_mem_latency == 12
    hdr = t.c_header()
    assert "#define AQUAS_EXIT_ADDR 0xF0000004" in hdr
    assert "#define AQUAS_RAM_SIZE 0x00100000" in hdr
    assert "ORIGIN = 0x00000000, LENGTH = 0x00100000" in t.linker_memory()


def test_core_features() -> None:
    vex, pico = load_target(soc="vexriscv"), load_target(soc="picorv32")
    assert vex.routed_opcodes == (0x0B,)
    assert pico.routed_opcodes == (0x0B, 0x2B, 0x5B, 0x7B)
    assert vex.ram_cached and vex.dcache.flush_word == 0x0000500F
    assert not pico.ram_cached and pico.dcache.policy == "none"
    assert "#define AQUAS_CFU_ENABLE_CSR 0xBC0" in vex.c_header()
    assert "AQUAS_CFU_ENABLE_CSR" not in pico.c_header()
    assert (vex.cost.div, vex.cost.store, pico.cost.mul) == (35, 13, 14)


def test_cv32e40x_features() -> None:
    cv = load_target(soc="cv32e40x")
    assert cv.routed_opcodes == (0x0B, 0x2B, 0x5B, 0x7B)
    assert not cv.ram_cached and cv.dcache.policy == "none"
    hdr = cv.c_header()
    assert "#define AQUAS_CLEAR_MCOUNTINHIBIT 1" in hdr and "#define AQUAS_HAS_MTVEC 1" in hdr
    assert "AQUAS_CLEAR_MCOUNTINHIBIT" not in load_target(soc="picorv32").c_header()


def test_cv32e40x_core_sources_follow_the_package_file_list() -> None:
    from aquas.sim.builder import core_sources

    files, incdirs = core_sources(load_target(soc="cv32e40x"))
    names = [f.name for f in files]
    # packages and interfaces before the modules that import them, as upstream orders them
    assert names[:3] == ["cv32e40x_pkg.sv", "if_c_obi.sv", "if_xif.sv"]
    assert "cv32e40x_core.sv" in names and "cv32e40x_sim_clock_gate.sv" in names
    assert not [n for n in names if "rvfi" in n or n == "cv32e40x_wrapper.sv"]
    assert all(f.is_file() for f in files) and all(d.name for d in incdirs)
    # a single-file core is its rtl_file
    pico, _ = core_sources(load_target(soc="picorv32"))
    assert [f.name for f in pico] == ["picorv32.v"]


def test_override_file_inherits_its_base(tmp_path: Path) -> None:
    f = tmp_path / "slow.toml"
    f.write_text('base = "vexriscv"\n[memory]\nlatency = 30\nram_base = 0x00100000\n')
    t = load_target(f, soc="vexriscv")
    assert (t.memory.latency, t.memory.ram_base, t.memory.ram_size) == (30, 0x100000, 0x100000)
    assert t.isax_mem_latency == 32
    assert t.dcache.policy == "write-through"  # inherited
    assert "ORIGIN = 0x00100000" in t.linker_memory()
    assert t.fingerprint() != load_target(soc="vexriscv").fingerprint()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('base = "vexriscv"\n[memory]\nlatncy = 3\n', "memory.latncy: unknown key"),
        ('base = "vexriscv"\n[memroy]\n', "memroy: unknown key"),
        ('base = "vexriscv"\n[memory]\nlatency = -1\n', "memory.latency: Input should be greater"),
        (
            'base = "vexriscv"\n[memory]\nlatency = "fast"\n',
            "memory.latency: Input should be a valid integer",
        ),
        (
            'base = "vexriscv"\n[memory]\nram_size = 1000\n',
            "memory.ram_size must be a power of two",
        ),
        ('base = "vexriscv"\n[l2]\nenable = 1\n', "l2.enable: Input should be a valid boolean"),
        (
            'base = "vexriscv"\n[devices]\nconsole = 0x1000\n',
            "devices.console must be in the I/O region",
        ),
        ('base = "vexriscv"\n[devices]\nexit = 0xF0000000\n', "devices.exit has the same address"),
        ('base = "vexriscv"\n[isax_master]\ndma_channels = 0\n', "isax_master.dma_channels"),
        (
            'base = "vexriscv"\n[isax_master]\nmax_burst_beats = 257\n',
            "isax_master.max_burst_beats",
        ),
        ('base = "rocket"\n', "base: unknown SoC 'rocket'"),
        ("[soc]\ncore = 'vexriscv'\n", "the [soc] section is no longer used"),
        ('name = "x"\n', "core: Field required"),
        ("[memory\n", "invalid TOML"),
    ],
)
def test_bad_descriptor(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(AquasError) as e:
        load_target(f)
    assert message in e.value.message
    where = e.value.loc.filename if e.value.loc else e.value.filename
    assert where == str(f)


def test_wrong_soc_and_unknown_soc() -> None:
    with pytest.raises(AquasError, match="describes SoC 'vexriscv', but 'picorv32'"):
        parse_target({"base": "vexriscv"}, "x.toml", soc="picorv32")
    with pytest.raises(AquasError, match="unknown SoC 'nope'"):
        load_target(soc="nope")


def test_check_encoding() -> None:
    vex, pico = load_target(soc="vexriscv"), load_target(soc="picorv32")
    check_encoding(vex, 0x0B, 1, 2)
    check_encoding(pico, 0x7B)
    with pytest.raises(AquasError, match="cannot reach the ISAX unit on vexriscv"):
        check_encoding(vex, 0x2B)


def test_descriptors_are_package_resources() -> None:
    """Found through importlib.resources (works from an installed wheel), not the repo."""
    from importlib import resources

    root = resources.files("aquas.target") / "descriptors"
    assert {e.name for e in root.iterdir() if e.name.endswith(".toml")} == {
        f"{n}.toml" for n in target_names()
    }
