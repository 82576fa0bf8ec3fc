#!/usr/bin/env bash
# Quick start, command 1: set up, then run the main job.
# For now the main job checks every example spec, lowers each to the aquas dialect
# (after the aquas-unroll,canonicalize,cse pipeline) under build/examples/, and prints a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
AQUAS=.venv/bin/aquas
mapfile -t SPECS < <(find examples -name '*.isax' | sort)
"$AQUAS" check "${SPECS[@]}"
mkdir -p build/examples
for f in "${SPECS[@]}"; do
  stem="$(basename "$f" .isax)"
  "$AQUAS" lower "$f" -o "build/examples/$stem.mlir"
  "$AQUAS" lower "$f" -p aquas-unroll,canonicalize,cse -o "build/examples/$stem.opt.mlir"
done
echo "main: lowered ${#SPECS[@]} spec(s) into build/examples/"
