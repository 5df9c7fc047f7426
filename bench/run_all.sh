#!/usr/bin/env bash
# One command for every benchmark: builds the native benchmarks (and the
# WebAssembly package when emcc is installed and it is missing), then prints
# one table (bench/run_all.mjs): each case's native and WASM time, their
# ratio, instructions (callgrind) and heap per op, with the load average.
# Usage: bash bench/run_all.sh [--quick] [run_all.mjs flags]
#   --quick  small modules, one repeat, no callgrind: proves the benchmarks
#            run (scripts/test.sh runs this).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SHARDLAB_BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$build" bench_api bench_propagation >/dev/null
if [ ! -f wasm/dist/shardlab.mjs ] && command -v emcc >/dev/null; then
  bash scripts/build-wasm.sh >/dev/null
fi
exec node bench/run_all.mjs --build "$build" "$@"
