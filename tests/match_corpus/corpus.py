"""The held-out robustness corpus of the ISAX matcher: C kernels with parsed headers.

Layout: ``tests/match_corpus/<isax>/<style>.c`` holds kernels that compute exactly what the
ISAX ``<isax>`` computes (positives); ``tests/match_corpus/negative/<name>.c`` holds near
misses that must not be matched.  Every file defines one function ``kernel`` following the
calling convention of the ISAX named by its ``like:`` header (see ``README.md``) and starts
with a block of ``// key: value`` lines:

* ``isax``  -- the ISAX the kernel equals, or ``none`` for a negative;
* ``like``  -- the calling convention the file follows (an ISAX name, negatives too);
* ``n``     -- element count, present exactly when ``like`` is ``vdot16``;
* ``style`` -- which variation the file exercises (negatives: why it must not match);
* ``realistic`` -- ``yes`` for a file written as applications are (structs, 2-D arrays,
  pointer casts, helper functions): the frontend must lower ``kernel``, but the file need
  not keep to the plain subset of the other files (default ``no``);
* ``alias`` -- negatives only, ``yes`` when the difference appears only if the buffers
  overlap (default ``no``).

Use :func:`corpus_files` (``from match_corpus.corpus import corpus_files``); this module
only needs the standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent
NEGATIVE_DIR = "negative"

#: ISAX name -> spec file (relative to the repository root) of every ISAX in the corpus.
ISAX_SPECS: dict[str, str] = {
    "v3ddist": "examples/pointcloud/pointcloud.isax",
    "vcovmat3d": "examples/pointcloud/pointcloud.isax",
    "vgemv4": "examples/pointcloud/pointcloud.isax",
    "vmaxarg": "examples/pointcloud/pointcloud.isax",
    "gemm4x4_i16": "examples/llm/llm.isax",
    "sparse_decomp_i8": "examples/llm/llm.isax",
    "modmul_q": "examples/crypto/kyber.isax",
    "ntt_bfly": "examples/crypto/kyber.isax",
    "vdot16": "examples/dsp/dsp.isax",
    "biquad": "examples/dsp/dsp.isax",
}

#: ISAXs that compute what a file of another ISAX's convention computes: a vdot16-like file
#: is a dot product of ``n`` i16 elements, which the matcher takes in vdot32's chunks of 32
#: from ``n = 32`` on (both in examples/dsp/dsp.isax).
SAME_COMPUTATION: dict[str, frozenset[str]] = {"vdot16": frozenset({"vdot16", "vdot32"})}


def same_computation(isax: str) -> frozenset[str]:
    """The ISAXs whose match counts as finding ``isax`` in a corpus file."""
    return SAME_COMPUTATION.get(isax, frozenset({isax}))


#: The C signature of ``kernel`` for each calling convention (``restrict`` may be dropped by
#: ``alias: yes`` negatives, ``const`` by negatives that write an input).
SIGNATURES: dict[str, str] = {
    "v3ddist": "uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)",
    "vcovmat3d": "uint32_t kernel(const int32_t *restrict p, int32_t *restrict c)",
    "vgemv4": "void kernel(const int32_t *restrict m, int32_t *restrict y)",
    "vmaxarg": "uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)",
    "gemm4x4_i16": "uint32_t kernel(const int16_t *restrict ab, int32_t *restrict c)",
    "sparse_decomp_i8": "uint32_t kernel(const uint8_t *restrict s, uint8_t *restrict dense)",
    "modmul_q": "uint32_t kernel(uint32_t a, uint32_t b)",
    "ntt_bfly": "uint32_t kernel(uint32_t a, uint32_t b)",
    "vdot16": "int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)",
    "biquad": "void kernel(const int16_t *restrict k, int16_t *restrict s)",
}

_KEYS = ("isax", "like", "n", "style", "alias", "realistic")
_LINE = re.compile(r"^//\s*([a-z]+):\s*(.*?)\s*$")


class HeaderError(ValueError):
    """A corpus file whose header block is missing, incomplete or inconsistent."""


@dataclass(frozen=True)
class CorpusFile:
    path: Path
    isax: str | None  # None for a negative
    like: str
    n: int | None  # element count of vdot16-like files, else None
    style: str
    alias: bool
    realistic: bool = False

    @property
    def positive(self) -> bool:
        return self.isax is not None

    @property
    def group(self) -> str:
        """The corpus directory of the file: the ISAX name, or ``negative``."""
        return self.path.parent.name

    @property
    def name(self) -> str:
        """A short unique id, ``<group>/<stem>``."""
        return f"{self.group}/{self.path.stem}"

    @property
    def spec(self) -> str:
        """Spec file (relative to the repository root) of the ISAX named by ``like``."""
        return ISAX_SPECS[self.like]


def parse_header(path: Path) -> CorpusFile:
    """Parse and validate the ``// key: value`` header block of one corpus file."""
    fields: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("//"):
            break
        m = _LINE.match(line)
        if not m:
            raise HeaderError(f"{path}: malformed header line {line!r}")
        key, value = m.groups()
        if key not in _KEYS:
            raise HeaderError(f"{path}: unknown header key {key!r}")
        if key in fields:
            raise HeaderError(f"{path}: duplicate header key {key!r}")
        if not value:
            raise HeaderError(f"{path}: empty value for {key!r}")
        fields[key] = value
    for key in ("isax", "like", "style"):
        if key not in fields:
            raise HeaderError(f"{path}: missing header key {key!r}")

    group = path.parent.name
    like = fields["like"]
    if like not in ISAX_SPECS:
        raise HeaderError(f"{path}: unknown calling convention {like!r}")
    isax: str | None = fields["isax"]
    if isax == "none":
        isax = None
        if group != NEGATIVE_DIR:
            raise HeaderError(f"{path}: 'isax: none' outside {NEGATIVE_DIR}/")
    else:
        if group != isax:
            raise HeaderError(f"{path}: positive for {isax!r} must live in {isax}/")
        if like != isax:
            raise HeaderError(f"{path}: a positive must follow its own ISAX's convention")

    n: int | None = None
    if like == "vdot16":
        if "n" not in fields or not fields["n"].isdigit() or int(fields["n"]) <= 0:
            raise HeaderError(f"{path}: vdot16-like files need a positive 'n: <count>'")
        n = int(fields["n"])
    elif "n" in fields:
        raise HeaderError(f"{path}: 'n' is only for vdot16-like files")
    if isax is None and like == "vdot16" and n != 16:
        raise HeaderError(f"{path}: vdot16-like negatives use n: 16")

    alias = False
    if "alias" in fields:
        if isax is not None:
            raise HeaderError(f"{path}: 'alias' is for negatives only")
        if fields["alias"] not in ("yes", "no"):
            raise HeaderError(f"{path}: alias must be yes or no")
        alias = fields["alias"] == "yes"
    realistic = fields.get("realistic", "no")
    if realistic not in ("yes", "no"):
        raise HeaderError(f"{path}: realistic must be yes or no")
    return CorpusFile(path, isax, like, n, fields["style"], alias, realistic == "yes")


def corpus_paths() -> list[Path]:
    """Every ``.c`` file of the corpus, sorted."""
    return sorted(CORPUS_DIR.glob("*/*.c"))


def corpus_files() -> list[CorpusFile]:
    """Parsed headers of every corpus file (raises :class:`HeaderError` on a bad one)."""
    return [parse_header(p) for p in corpus_paths()]


__all__ = [
    "CORPUS_DIR",
    "ISAX_SPECS",
    "SIGNATURES",
    "CorpusFile",
    "HeaderError",
    "corpus_files",
    "corpus_paths",
    "parse_header",
]
