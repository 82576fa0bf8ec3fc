#!/usr/bin/env bash
# Quick start, command 1: set up, then run the main job. Every example spec is checked;
# then the four domain case studies (point cloud, LLM int8, Kyber NTT, DSP) run from spec
# to measured speedup on VexRiscv and PicoRV32 (aquas run: synthesis, co-simulation,
# matching and rewriting, baseline and ISAX builds on the SoC in Verilator, area and
# timing on a cell library; benchmarks/case_studies.py, two runs at a time, cached stages
# skipped) and one table across domains is printed; last, the point-cloud run on VexRiscv
# (all its stages cached by then) prints its summary table and writes
# build/pointcloud-icp/report.{md,html,json}.
# Arguments go to that point-cloud run (e.g. --force).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
AQUAS=.venv/bin/aquas
mapfile -t SPECS < <(find examples -name '*.isax' | sort)
"$AQUAS" check "${SPECS[@]}"
.venv/bin/python benchmarks/case_studies.py
"$AQUAS" run examples/pointcloud/project.toml "$@"
