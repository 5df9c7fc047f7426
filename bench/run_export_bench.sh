#!/usr/bin/env bash
# Generates 10k- and 100k-op transformer-like modules and runs bench_export
# (propagation pipeline, then export with explicit collectives) on
# them. Usage: bash bench/run_export_bench.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in 10000 100000; do
  python3 bench/gen_module.py --ops "$n" -o "$out/transformer_${n}.mlir"
done
"$build/bench_export" "$out/transformer_10000.mlir" "$out/transformer_100000.mlir"
