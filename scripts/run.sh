#!/usr/bin/env bash
# The main job, until the playground exists: install what is missing, build,
# and run shardlab-opt on an example module, printing the result.
set -euo pipefail

usage() {
  cat <<'EOF2'
Usage: bash scripts/run.sh [--no-install] [FILE.mlir] [SHARDLAB_OPT_ARGS...]

Installs missing Debian packages, builds shardlab, then runs
build/shardlab-opt on FILE.mlir (default: examples/hello.mlir) and prints the
resulting module. Further arguments go to shardlab-opt, e.g.
  bash scripts/run.sh examples/hello.mlir -sdy-basic-propagate

  --no-install   skip the package installer (e.g. without root)
  -h, --help     this help
EOF2
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
install=1
if [[ "${1-}" == "-h" || "${1-}" == "--help" ]]; then usage; exit 0; fi
if [[ "${1-}" == "--no-install" ]]; then install=0; shift; fi

input="examples/hello.mlir"
if [[ $# -gt 0 && "$1" != -* ]]; then
  input="$1"; shift
fi
# Resolve the input before changing directory, so relative paths work from anywhere.
if [[ -f "$input" ]]; then
  input="$(cd "$(dirname "$input")" && pwd)/$(basename "$input")"
elif [[ -f "$ROOT/$input" ]]; then
  input="$ROOT/$input"
else
  echo "run.sh: input module '$input' not found" >&2
  exit 1
fi

cd "$ROOT"
if [[ $install -eq 1 ]]; then
  bash scripts/install-deps.sh >&2
fi
bash scripts/build.sh >&2

if [[ ! -x build/shardlab-opt ]]; then
  echo "run.sh: build/shardlab-opt was not built" >&2
  exit 1
fi
echo "== build/shardlab-opt ${input#"$ROOT"/} $*" >&2
build/shardlab-opt "$input" "$@"
