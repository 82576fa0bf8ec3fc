#!/usr/bin/env bash
# Quick start, command 2: set up, then run lint, the type checker and the test suite.
# Extra arguments go to pytest (e.g. scripts/test.sh -m "not sim").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
