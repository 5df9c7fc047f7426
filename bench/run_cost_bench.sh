#!/usr/bin/env bash
# Runs bench_cost (collective and GEMM estimates per second, compatible and
# accurate modes, explained estimates and the allocation-free TimeUs paths)
# on the bundled table, printing the machine's load first.
# Usage: bash bench/run_cost_bench.sh [build-dir] [bench_cost flags]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
echo "cores: $(nproc); $(uptime)"
"$build/bench_cost" examples/tables/h100_analytical.shardlab.json "$@"
