#!/usr/bin/env bash
# Generates 1k-, 10k- and 100k-op transformer-like modules (shardings on the
# arguments) and runs bench_propagation (op priorities + aggressive + basic,
# the default stack) on them.
# Usage: bash bench/run_propagation_bench.sh [build-dir] [bench_propagation flags]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in 1000 10000 100000; do
  python3 bench/gen_module.py --ops "$n" -o "$out/transformer_${n}.mlir"
done
"$build/bench_propagation" "$@" "$out/transformer_1000.mlir" \
  "$out/transformer_10000.mlir" "$out/transformer_100000.mlir"
