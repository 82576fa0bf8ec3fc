"""Fixtures for the simulator tier: cross-compiled test programs and cached SoC builds.

Every Verilator build goes through aquas.sim.build, which caches under
the user cache directory (aquas.cachedir: <cache>/sim/<content-hash>/, shared between tests, sessions and CI runs); the session
fixtures below also memoise SimBinary objects so each configuration is looked up once.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from aquas.target import Target, load_target

from helpers import require_tool

FIXTURES = Path(__file__).parent / "fixtures"
TEST_UNIT = FIXTURES / "aquastest_isax_unit.v"
CC = "riscv64-unknown-elf-gcc"


def platform_variant(soc: str, **changes: object) -> Target:
    """The SoC's built-in target with ``section__key=value`` changes."""
    sections: dict[str, dict[str, object]] = {}
    for k, v in changes.items():
        sec, key = k.split("__")
        sections.setdefault(sec, {})[key] = v
    return load_target(soc=soc).replace(**sections)


@pytest.fixture(scope="session")
def program(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Path]:
    """program(name, soc) -> ELF of fixtures/<name>.S linked with start.S for that SoC."""
    require_tool(CC, "gcc-riscv64-unknown-elf")
    out = tmp_path_factory.mktemp("programs")
    cache: dict[tuple[str, str], Path] = {}

    def make(name: str, soc: str) -> Path:
        if (name, soc) not in cache:
            elf = out / f"{name}-{soc}.elf"
            cmd = [
                CC,
                "-march=rv32im_zicsr",
                "-mabi=ilp32",
                "-nostdlib",
                "-static",
                "-Wl,--no-warn-rwx-segments",
                "-T",
                str(FIXTURES / "link.ld"),
                f"-I{FIXTURES}",
                f"-DSOC_{soc.upper()}",
                str(FIXTURES / "start.S"),
                str(FIXTURES / f"{name}.S"),
                "-o",
                str(elf),
            ]
            subprocess.run(cmd, check=True)
            cache[(name, soc)] = elf
        return cache[(name, soc)]

    return make


@pytest.fixture(scope="session")
def soc_binary() -> Callable[..., object]:
    """soc_binary(soc, isax=False, platform=None) -> cached SimBinary."""
    from aquas.sim import build

    cache: dict[tuple[object, ...], object] = {}

    def get(soc: str, isax: bool = False, platform: Target | None = None) -> object:
        key = (soc, isax, repr(platform))
        if key not in cache:
            cache[key] = build(soc, platform, [TEST_UNIT] if isax else None, quiet=True)
        return cache[key]

    return get


def symbol(elf: Path, name: str) -> int:
    out = subprocess.run(
        ["riscv64-unknown-elf-nm", str(elf)], capture_output=True, text=True, check=True
    )
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    raise KeyError(name)
