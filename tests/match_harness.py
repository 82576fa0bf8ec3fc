"""A RISC-V test driver for corpus kernels (tests/match_corpus): fills the kernel's buffers
with seeded pseudo-random data, calls ``kernel`` a few times and prints the result and every
buffer in hex.  The same driver is linked with the original and with the rewritten kernel;
identical output is the differential check of the matcher."""

from __future__ import annotations

from match_corpus.corpus import SIGNATURES

# calling convention -> (buffers as (C type, name, elements), call expression, has result)
_BUFFERS: dict[str, tuple[list[tuple[str, str, int]], str]] = {
    "v3ddist": ([("int32_t", "A", 48), ("int32_t", "B", 64)], "kernel(A, B)"),
    "vcovmat3d": ([("int32_t", "P", 48), ("int32_t", "C", 16)], "kernel(P, C)"),
    "vgemv4": ([("int32_t", "M", 20), ("int32_t", "Y", 4)], "kernel(M, Y)"),
    "vmaxarg": ([("int32_t", "V", 16), ("int32_t", "O", 1)], "kernel(V, O)"),
    "gemm4x4_i16": ([("int16_t", "AB", 32), ("int32_t", "C", 16)], "kernel(AB, C)"),
    "sparse_decomp_i8": ([("uint8_t", "S", 36), ("uint8_t", "D", 32)], "kernel(S, D)"),
    "modmul_q": ([], "kernel(rnd(), rnd())"),
    "ntt_bfly": ([], "kernel(rnd(), rnd())"),
    "vdot16": ([("int16_t", "A", 0), ("int16_t", "B", 0)], "kernel(A, B)"),
    "biquad": ([("int16_t", "K", 5), ("int16_t", "S", 20)], "kernel(K, S)"),
}


def driver(like: str, n: int | None = None, trials: int = 6) -> str:
    bufs, call = _BUFFERS[like]
    bufs = [(t, name, count or (n or 16)) for t, name, count in bufs]
    sig = SIGNATURES[like].replace("restrict", "")
    lines = [
        "#include <stdint.h>",
        '#include "aquas_rt.h"',
        f"{sig};",
        "static uint32_t seed = 12345u;",
        "static uint32_t rnd(void) { seed = seed * 1664525u + 1013904223u; "
        "return seed ^ (seed >> 13); }",
    ]
    for t, name, count in bufs:
        lines.append(f"static {t} {name}[{count}] __attribute__((aligned(8)));")
    lines += ["int main(void)", "{", f"    for (int t = 0; t < {trials}; t++) {{"]
    for t, name, count in bufs:
        # odd trials: small values, so ties (vmaxarg) and sparse masks with runs occur
        lines.append(
            f"        for (int i = 0; i < {count}; i++) {name}[i] = ({t})"
            "((t & 1) ? (rnd() % 7u) - 3u : rnd());"
        )
    ret = "void" not in sig.split("kernel")[0]
    call_line = f"uint32_t r = (uint32_t){call};" if ret else f"{call}; uint32_t r = 0;"
    lines.append(f"        {call_line}")
    lines.append('        printf("r=%x", (unsigned)r);')
    for _t, name, count in bufs:
        lines.append(
            f"        for (int i = 0; i < {count}; i++) "
            f'printf(" %x", (unsigned)(uint32_t){name}[i]);'
        )
    lines += ['        printf("\\n");', "    }", "    return 0;", "}"]
    return "\n".join(lines) + "\n"


def overlap_driver(like: str, offsets: list[int]) -> str:
    """A driver that calls ``kernel`` on overlapping buffers: the second buffer starts
    ``offset`` bytes after the first (each offset a multiple of 4, negative ones before
    it), both inside one arena refilled with seeded data before each call; prints the
    result and the whole arena. For the near misses whose difference from the ISAX shows
    only when the buffers overlap (``alias: yes``)."""
    bufs, call = _BUFFERS[like]
    (t1, n1, _), (t2, n2, _) = bufs
    sig = SIGNATURES[like].replace("restrict", "")
    words = 256
    lines = [
        "#include <stdint.h>",
        '#include "aquas_rt.h"',
        f"{sig};",
        "static uint32_t seed = 12345u;",
        "static uint32_t rnd(void) { seed = seed * 1664525u + 1013904223u; "
        "return seed ^ (seed >> 13); }",
        f"static uint32_t arena[{words}] __attribute__((aligned(8)));",
        f"static const int offsets[{len(offsets)}] = {{{', '.join(map(str, offsets))}}};",
        "int main(void)",
        "{",
        f"    for (int t = 0; t < {len(offsets)}; t++) {{",
        f"        for (int i = 0; i < {words}; i++) arena[i] = (t & 1) ? (rnd() % 7u) - 3u : rnd();",
        f"        {t1} *{n1} = ({t1} *)(arena + {words // 2});",
        f"        {t2} *{n2} = ({t2} *)((uint8_t *)(arena + {words // 2}) + offsets[t]);",
    ]
    ret = "void" not in sig.split("kernel")[0]
    lines.append(
        f"        uint32_t r = (uint32_t){call};" if ret else f"        {call}; uint32_t r = 0;"
    )
    lines += [
        '        printf("r=%x", (unsigned)r);',
        f'        for (int i = 0; i < {words}; i++) printf(" %x", (unsigned)arena[i]);',
        '        printf("\\n");',
        "    }",
        "    return 0;",
        "}",
    ]
    return "\n".join(lines) + "\n"


__all__ = ["driver", "overlap_driver"]
