"""Hostile project files for ``aquas run`` (docs/project.md), with the files they name.

Every case is a small directory: ``project.toml`` plus a tiny spec and a tiny program for
PicoRV32. The valid base runs end to end in a few seconds once the simulator is cached;
the mutations (missing or extra keys, wrong types, names like ``..``, paths escaping the
project, symlink loops, non-UTF-8 bytes, deep nesting, absurd numbers, NaN/inf clocks)
must all be refused by validation, before any stage runs.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from fuzzing.cases import Case, case_rng

SPEC = """extension tiny;
#[opcode(custom0), funct7(0)]
isax addmul(rs1, rs2) -> rd {
    let s: u32 = rs1 + rs2;
    return s * 3;
}
"""

MAIN = """#include <stdint.h>
#include "aquas_rt.h"

static uint32_t kernel(uint32_t a, uint32_t b)
{
    return (a + b) * 3;
}

int main(void)
{
    uint32_t acc = 0;
    AQUAS_REGION_BEGIN(1);
    for (uint32_t i = 0; i < 8; i++)
        acc ^= kernel(i, acc);
    AQUAS_REGION_END(1);
    printf("acc %u\\n", (unsigned)acc);
    return 0;
}
"""

# One table per line, so that a mutation can drop, duplicate or rewrite single keys.
BASE: list[tuple[str, str, str]] = [
    ("project", "name", '"tiny"'),
    ("extension", "spec", '"tiny.isax"'),
    ("extension", "clock_ns", "10.0"),
    ("extension", "cosim_cases", "0"),
    ("application", "sources", '["main.c"]'),
    ("application", "match", '["main.c"]'),
    ("application", "opt", '"-O2"'),
    ("target", "soc", '"picorv32"'),
    ("target", "max_cycles", "2_000_000"),
    ("regions", "1", '"kernel"'),
]

REQUIRED = {("project", "name"), ("extension", "spec"), ("application", "sources")}

WRONG_VALUES: dict[tuple[str, str], list[str]] = {
    ("project", "name"): [
        '".."',
        '"."',
        '""',
        '"a/b"',
        '"../../x"',
        '"/abs"',
        '".hidden"',
        f'"{"n" * 300}"',
        '"\\u0000x"',
        '"é"',
        '" "',
        '"-rf"',
        "5",
        "true",
        '["x"]',
        "{ a = 1 }",
        '"con:"',
    ],
    ("extension", "spec"): [
        '"../../../../../../etc/passwd"',
        '"/etc/hostname"',
        '"/dev/zero"',
        '"."',
        '""',
        '"missing.isax"',
        '"main.c"',
        "[]",
        "7",
        '"tiny.isax/"',
        '"subdir"',
        '"loop.isax"',
        '"bad.isax"',
        '"../escape.isax"',
    ],
    ("extension", "clock_ns"): [
        "nan",
        "inf",
        "-inf",
        "+nan",
        "0",
        "-1.0",
        "0.0",
        "1e-300",
        "1e308",
        '"10"',
        "true",
        "[10]",
    ],
    ("extension", "cosim_cases"): ["-1", "1.5", '"100"', "nan", "true", "-9223372036854775808"],
    ("application", "sources"): [
        '"main.c"',
        "[]",
        '["main.c", "main.c"]',
        '["/dev/urandom"]',
        '["missing.c"]',
        '["tiny.isax"]',
        "[1, 2]",
        '["loop.c"]',
        '["../../../etc/passwd"]',
        '["latin1.c"]',
        '[""]',
        '["subdir"]',
    ],
    ("application", "match"): ['["other.c"]', '"main.c"', "[3]", '["missing.c"]'],
    ("application", "opt"): ['"-O9"', '"-O2 -fplugin=x.so"', "2", '""'],
    ("target", "soc"): ['"rocket"', '""', "1", '["picorv32"]', '"PICORV32"'],
    ("target", "max_cycles"): ["0", "-5", "1.5", "nan", '"1000"', "true"],
    ("regions", "1"): ['""', "5", "[]"],
}

EXTRA_LINES = [
    ("project", "version = 3"),
    ("extension", "specs = []"),
    ("target", 'platform = "loop.toml"'),
    ("target", 'platform = "/dev/zero"'),
    ("target", 'platform = "missing.toml"'),
    ("application", 'entry = "not_defined"'),
    ("application", 'entry = "1bad"'),
    ("application", 'functions = ["a b"]'),
    ("application", 'defines = { "A-B" = 1 }'),
    ("application", "defines = { X = 1.5 }"),
    ("application", "defines = 3"),
    ("regions", 'x = "label"'),
    ("regions", '99999999999 = "far"'),
    ("regions", '-1 = "neg"'),
]


def render(entries: list[tuple[str, str, str]], extra: list[str] | None = None) -> str:
    out: list[str] = []
    current = None
    for table, key, value in entries:
        if table != current:
            out.append(f"\n[{table}]")
            current = table
        out.append(f"{key} = {value}")
    return "\n".join(out + (extra or [])).lstrip() + "\n"


def _files(toml: str | bytes) -> dict[str, bytes]:
    data = toml.encode() if isinstance(toml, str) else toml
    return {
        "project.toml": data,
        "tiny.isax": SPEC.encode(),
        "main.c": MAIN.encode(),
        "bad.isax": b"isax (",
        "latin1.c": "int main(void) { return 0; } // caf\xe9\n".encode("latin-1"),
        "subdir/keep.txt": b"",
    }


LOOPS = {
    "loop.isax": "loop.isax",
    "loop.c": "loop2.c",
    "loop2.c": "loop.c",
    "loop.toml": "loop.toml",
}


def _wrong_value(r: random.Random) -> tuple[str, str]:
    table, key = r.choice(sorted(WRONG_VALUES))
    value = r.choice(WRONG_VALUES[(table, key)])
    entries = [(t, k, value if (t, k) == (table, key) else v) for t, k, v in BASE]
    return f"wrong_{table}.{key}", render(entries)


def _missing(r: random.Random) -> tuple[str, str]:
    table, key = r.choice(sorted(REQUIRED))
    return f"missing_{table}.{key}", render([e for e in BASE if (e[0], e[1]) != (table, key)])


def _extra(r: random.Random) -> tuple[str, str]:
    table, line = r.choice(EXTRA_LINES)
    out = render(BASE).replace(f"[{table}]\n", f"[{table}]\n{line}\n", 1)
    if f"[{table}]" not in out:
        out += f"\n[{table}]\n{line}\n"
    return "extra_key", out


def _structure(r: random.Random) -> tuple[str, str | bytes]:
    pick = r.randrange(9)
    base = render(BASE)
    if pick == 0:
        return "unknown_table", base + "\n[bogus]\nx = 1\n"
    if pick == 1:
        return "duplicate_key", base.replace('name = "tiny"', 'name = "tiny"\nname = "tiny2"')
    if pick == 2:
        d = r.choice([100, 1000, 20000])
        return "deep_nesting", base + f"\n[regions.deep]\nx = {'[' * d}{']' * d}\n"
    if pick == 3:
        d = r.choice([100, 20000])
        return "deep_inline_tables", base + f"nest = {'{ a = ' * d}1{' }' * d}\n"
    if pick == 4:
        pos = r.randrange(len(base))
        raw = base.encode()
        return "non_utf8", raw[:pos] + r.choice([b"\xff", b"\xc0\x80", b"\xed\xa0\x80"]) + raw[pos:]
    if pick == 5:
        return "not_toml", r.choice(
            [
                "",
                "\x00",
                "[project",
                "name = ",
                "= 1",
                "[[project]]\n",
                "project = 5\n",
                '\ufeff[project]\nname = "x"\n',
            ]
        )
    if pick == 6:
        num = r.choice(["1" + "0" * 40, "0x" + "f" * 40, "1e999", "9223372036854775808"])
        return "absurd_number", base.replace("2_000_000", num)
    if pick == 7:
        return "table_as_value", base.replace("[target]\n", "target = 3\n[target_]\n")
    return "huge_file", base + "".join(f"# {'x' * 100}\n" for _ in range(r.choice([1000, 50000])))


def generate(seed: int, index: int) -> Case:
    """Case ``index`` of the project stream ``seed``: 3% valid, the rest hostile."""
    r = case_rng("project", seed, index)
    roll = r.random()
    makers: list[Callable[[random.Random], tuple[str, str | bytes]]] = [
        _wrong_value,
        _wrong_value,
        _wrong_value,
        _missing,
        _extra,
        _structure,
        _structure,
    ]
    text: str | bytes
    if roll < 0.03:
        family, text = "valid", render(BASE)
    else:
        family, text = r.choice(makers)(r)
    # comments make a file long, not wrong: that one must run end to end like the base
    # (huge integers are valid values of max_cycles: only a bound in time, not an error)
    valid = family in ("valid", "huge_file") or (
        family == "absurd_number" and b"1e999" not in _files(text)["project.toml"]
    )
    return Case(
        "project",
        family,
        seed,
        index,
        "project.toml",
        _files(text),
        valid=valid,
        symlinks=dict(LOOPS),
    )


__all__ = ["BASE", "generate", "render"]
