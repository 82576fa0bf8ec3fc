#!/usr/bin/env bash
# Idempotent set-up: Debian packages (apt, when root), a project virtualenv in .venv,
# and the aquas package installed editable with its dev tools. This is the only
# supported way to install what aquas needs; the README's two commands call it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

# Debian packages: the RISC-V cross compiler (programs for the reference SoCs), Icarus
# Verilog (a second simulator for cocotb), Yosys (area and logic depth) and the host C/C++
# compilers (Verilator models; host builds of application code in the matcher tests).
# OpenSTA (the `sta` binary) times the netlists Yosys maps onto a real cell library.
# Installed only when we are root and apt exists; otherwise we say what is missing.
APT_PACKAGES=(gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf iverilog yosys opensta gcc g++ make)
if ((${#APT_PACKAGES[@]})); then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
      echo "setup: apt-get install ${missing[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      echo "setup: missing Debian packages: ${missing[*]} (run: sudo apt-get install ${missing[*]})" >&2
    fi
  fi
fi

if [[ ! -x "$VENV/bin/python" ]]; then
  echo "setup: creating virtualenv .venv"
  "$PY" -m venv "$VENV"
fi

# The OSU 0.18 um standard-cell Liberty file (typical corner, with timing) for area and
# static timing (aquas.synth.sta). Only its files are unpacked (apt-get download + dpkg-deb
# -x) into .venv/share/aquas-tech, ignored by git: installing the package would pull in
# qflow's whole dependency chain, and the Liberty file is never committed.
TECH="$VENV/share/aquas-tech"
LIB="$TECH/osu018/osu018_stdcells.lib"
if [[ ! -s "$LIB" ]]; then
  if command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; then
    echo "setup: fetching the OSU018 cell library (Debian qflow-tech-osu018)"
    dl="$(mktemp -d)"
    if (cd "$dl" && apt-get download -q qflow-tech-osu018 >/dev/null 2>&1 ||
          { [[ $(id -u) -eq 0 ]] && apt-get update -qq && apt-get download -q qflow-tech-osu018 >/dev/null 2>&1; }); then
      dpkg-deb -x "$dl"/qflow-tech-osu018_*.deb "$dl/x"
      mkdir -p "$TECH/osu018"
      cp "$dl/x/usr/share/qflow/tech/osu018/osu018_stdcells.lib" "$LIB.tmp"
      mv "$LIB.tmp" "$LIB"
    else
      echo "setup: could not download qflow-tech-osu018 (needed for area and timing)" >&2
    fi
    rm -rf "$dl"
  else
    echo "setup: apt-get/dpkg-deb missing: cannot fetch the OSU018 cell library" >&2
  fi
fi

# Reinstall only when the dependency list changed (keeps repeated runs fast).
STAMP="$VENV/.aquas-deps.sha"
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
have="$(cat "$STAMP" 2>/dev/null || true)"
if [[ "$want" != "$have" ]] || ! "$VENV/bin/python" -c "import aquas" 2>/dev/null; then
  echo "setup: installing Python dependencies (log: .venv/pip.log)"
  if ! { "$VENV/bin/python" -m pip install --upgrade pip &&
         "$VENV/bin/python" -m pip install -e ".[dev]"; } >"$VENV/pip.log" 2>&1; then
    tail -n 40 "$VENV/pip.log" >&2
    echo "setup: pip install failed (full log: .venv/pip.log)" >&2
    exit 1
  fi
  echo "$want" >"$STAMP"
fi
echo "setup: ok ($("$VENV/bin/python" --version))"
