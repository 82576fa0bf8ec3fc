"""Deterministic generators of hostile inputs for the CLI (see docs/reliability.md).

Each generator module turns ``(seed, index)`` into one :class:`~fuzzing.cases.Case`:
the same pair gives the same bytes on every machine and in every process, so a failing
case found by ``benchmarks/bench_fuzz.py`` is reproduced from its seed and index alone.
"""
