"""Target descriptors: one validated description per reference SoC, read by every stage.

The built-in descriptors ship inside the package (``aquas/target/descriptors/<name>.toml``)
and are found through :mod:`importlib.resources`, so an installed wheel works like the
checkout. Adding a SoC means adding one descriptor (plus its RTL glue in ``rtl_templates``);
no list of names is kept anywhere else: :func:`target_names` is the list.

A user's platform file either is a complete descriptor, or names a built-in one with
``base = "<name>"`` and overrides keys of its sections (``[memory] latency = 30``).
Packaged platform variants (``aquas/target/platforms/<name>.toml``, e.g. ``vexriscv-wide``:
VexRiscv with a 128-bit ISAX port) are such files; :func:`platform_names` lists them and
:func:`load_target` takes their name where it takes a platform file.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aquas.diagnostics import AquasError, parse_toml, read_source
from aquas.socs import DEFAULT, target_names
from aquas.target.schema import CUSTOM_OPCODES, OPCODE_NAMES, Target

__all__ = [
    "CUSTOM_OPCODES",
    "OPCODE_NAMES",
    "Target",
    "check_encoding",
    "default_target",
    "load_target",
    "parse_target",
    "platform_names",
    "target_names",
]


def _descriptors() -> resources.abc.Traversable:
    return resources.files("aquas.target") / "descriptors"


@functools.cache
def platform_names() -> tuple[str, ...]:
    """The packaged platform variants (platform files shipped with aquas)."""
    d = resources.files("aquas.target") / "platforms"
    return tuple(
        sorted(e.name.removesuffix(".toml") for e in d.iterdir() if e.name.endswith(".toml"))
    )


def _unknown(name: str) -> AquasError:
    return AquasError(f"unknown SoC '{name}'", hint=f"choose one of: {', '.join(target_names())}")


@functools.cache
def _builtin_raw(name: str) -> dict[str, Any]:
    if name not in target_names():
        raise _unknown(name)
    return tomllib.loads((_descriptors() / f"{name}.toml").read_text(encoding="utf-8"))


def _merge(base: dict[str, Any], over: dict[str, Any], where: str) -> dict[str, Any]:
    out = dict(base)
    for key, val in over.items():
        if isinstance(val, dict):
            if key in base and not isinstance(base[key], dict):
                raise AquasError(f"{key}: expected a value, not a table", filename=where)
            out[key] = _merge(base.get(key, {}), val, where)
        else:
            out[key] = val
    return out


def _format_error(e: ValidationError) -> str:
    lines = []
    for err in e.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        lines.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(lines)


def parse_target(raw: dict[str, Any], where: str = "<target>", soc: str | None = None) -> Target:
    """Validates a descriptor (or a ``base = ...`` override of a built-in one)."""
    raw = dict(raw)
    if "soc" in raw and isinstance(raw["soc"], dict):
        raise AquasError(
            "the [soc] section is no longer used",
            filename=where,
            hint='name the SoC this file is based on with base = "<soc>" at the top',
        )
    base = raw.pop("base", None)
    if base is not None:
        if not isinstance(base, str):
            raise AquasError("base: expected a SoC name", filename=where)
        if "name" in raw and raw["name"] != base:
            raise AquasError(
                f"name: a file based on '{base}' describes the same SoC; drop 'name'",
                filename=where,
            )
        try:
            raw = _merge(_builtin_raw(base), raw, where)
        except AquasError as e:
            raise AquasError(f"base: {e.message}", filename=where, hint=e.hint) from None
    try:
        target = Target.model_validate({**raw, "source": where})
    except ValidationError as e:
        raise AquasError(f"invalid target descriptor: {_format_error(e)}", filename=where) from None
    if soc is not None and target.name != soc:
        raise AquasError(
            f"the platform file describes SoC '{target.name}', but '{soc}' was requested",
            filename=where,
        )
    return target


@functools.cache
def _builtin(name: str) -> Target:
    return parse_target(_builtin_raw(name), f"{name} (built in)")


def load_target(path: Path | str | None = None, *, soc: str | None = None) -> Target:
    """The descriptor in ``path``, or the built-in one of ``soc`` (default: the primary SoC)."""
    if path is None:
        return _builtin(soc or DEFAULT)
    if str(path) in platform_names() and not Path(path).exists():
        res = resources.files("aquas.target") / "platforms" / f"{path}.toml"
        where = f"{path} (packaged platform)"
        return parse_target(parse_toml(res.read_text(encoding="utf-8"), where), where, soc=soc)
    raw = parse_toml(read_source(path, "platform file"), str(path))
    return parse_target(raw, str(path), soc=soc)


def default_target() -> Target:
    return _builtin(DEFAULT)


def check_encoding(target: Target, opcode: int, funct3: int = 0, funct7: int = 0) -> None:
    """Raises when ``target``'s core cannot route the custom instruction to its ISAX unit."""
    if opcode not in target.routed_opcodes:
        routed = ", ".join(f"{OPCODE_NAMES[o]} ({o:#04x})" for o in target.routed_opcodes)
        raise AquasError(
            f"opcode {OPCODE_NAMES.get(opcode, hex(opcode))} (funct3={funct3}, funct7={funct7}) "
            f"cannot reach the ISAX unit on {target.name}: the core routes only {routed}",
            hint="re-encode the ISAX on a routed opcode or pick another SoC",
        )
