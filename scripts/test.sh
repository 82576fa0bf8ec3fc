#!/usr/bin/env bash
# Quick start, command 2: set up, then run lint, the type checker and the test suite.
# Extra arguments go to pytest (e.g. scripts/test.sh -m "not sim").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# one worker per core (CI: 2), one test file per worker at a time (files share build
# directories within themselves); the slowest tests are listed at the end
.venv/bin/python -m pytest -n auto --dist loadfile --durations=25 "$@"
