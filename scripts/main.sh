#!/usr/bin/env bash
# Quick start, command 1: set up, then run the main job: the point-cloud case study from
# spec to measured speedup (aquas run: synthesis, co-simulation, matching and rewriting,
# baseline and ISAX builds on the VexRiscv SoC in Verilator, area and logic depth), which
# prints the summary table and writes build/pointcloud-icp/report.{md,html,json}.
# Every example spec is checked first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
AQUAS=.venv/bin/aquas
mapfile -t SPECS < <(find examples -name '*.isax' | sort)
"$AQUAS" check "${SPECS[@]}"
"$AQUAS" run examples/pointcloud/project.toml "$@"
