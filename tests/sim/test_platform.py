"""Platform files: loading and validation (no simulator needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.sim.platform import PLATFORM_DIR, check_encoding, load_platform


@pytest.mark.parametrize("soc", ["vexriscv", "picorv32"])
def test_default_platforms_load(soc):
    p = load_platform(soc=soc)
    assert p.core == soc
    assert p.verilog_params()["RAM_WORDS_LOG2"] == 18
    assert "#define AQUAS_DEV_EXIT 0xf0000004u" in p.c_header()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[memory]\nlatncy = 3\n", "memory.latncy: unknown key"),
        ("[memroy]\n", "memroy: unknown section"),
        ("[memory]\nlatency = -1\n", "memory.latency: must not be negative"),
        ("[memory]\nlatency = 'fast'\n", "memory.latency: expected an integer"),
        ("[memory]\nram_size = 1000\n", "memory.ram_size: must be a power of two"),
        ("[l2]\nenable = 1\n", "l2.enable: expected true or false"),
        ("[devices]\nconsole = 0x1000\n", "devices.console: must be in the I/O region"),
        ("[devices]\nexit = 0xF0000000\n", "devices.exit: same address as devices.console"),
        ("[isax_master]\ndma_channels = 0\n", "isax_master.dma_channels: must be 1..8"),
        ("[soc]\ncore = 'rocket'\n", "soc.core: unknown core"),
        ("[memory\n", "invalid TOML"),
    ],
)
def test_bad_platform(tmp_path: Path, text: str, message: str):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(AquasError) as e:
        load_platform(f)
    assert message in e.value.message
    assert e.value.filename == str(f)


def test_wrong_soc():
    with pytest.raises(AquasError, match="platform is for 'vexriscv'"):
        load_platform(PLATFORM_DIR / "vexriscv.toml", soc="picorv32")


def test_check_encoding():
    check_encoding("vexriscv", 0x0B, 1, 2)
    check_encoding("picorv32", 0x7B)
    with pytest.raises(AquasError, match="cannot reach the ISAX unit on vexriscv"):
        check_encoding("vexriscv", 0x2B)
