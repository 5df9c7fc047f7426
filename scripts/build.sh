#!/usr/bin/env bash
# Configures (CMake + Ninja, Release) and builds shardlab into build/.
set -euo pipefail

usage() {
  cat <<'EOF2'
Usage: bash scripts/build.sh [-j N] [--build-dir DIR] [--debug] [-- CMAKE_ARGS...]

Configures shardlab with CMake (Ninja generator, Release build) and builds it.
The result lands in build/ (build/shardlab-opt, unit tests, benchmarks).
Does not install packages: run scripts/install-deps.sh first (scripts/run.sh
and scripts/test.sh do both).

  -j N              parallel build jobs (default: number of CPUs, or $JOBS)
  --build-dir DIR   build directory (default: build, or $BUILD_DIR)
  --debug           CMAKE_BUILD_TYPE=Debug instead of Release
  -- ARGS           further arguments for the CMake configure step,
                    e.g. -- -DSHARDLAB_SANITIZE=ON
  -h, --help        this help
EOF2
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
BUILD_TYPE=Release
CMAKE_ARGS=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    -j) [[ $# -ge 2 ]] || { echo "build.sh: -j needs a number" >&2; exit 2; }
        JOBS="$2"; shift 2 ;;
    -j*) JOBS="${1#-j}"; shift ;;
    --build-dir) [[ $# -ge 2 ]] || { echo "build.sh: --build-dir needs a path" >&2; exit 2; }
        BUILD_DIR="$2"; shift 2 ;;
    --debug) BUILD_TYPE=Debug; shift ;;
    --) shift; CMAKE_ARGS+=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "build.sh: -j wants a positive number, got '$JOBS'" >&2; exit 2; }

for tool in cmake ninja; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build.sh: '$tool' not found; run: bash scripts/install-deps.sh" >&2
    exit 1
  fi
done

cd "$ROOT"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"

# Reuse an existing build tree with whatever generator it was configured with:
# passing -G Ninja to a tree made by another generator is an error in CMake.
GENERATOR=(-G Ninja)
if [[ -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  GENERATOR=()
fi

# shellcheck source=scripts/ccache-args.sh
source "$ROOT/scripts/ccache-args.sh"
ccache_args "$ROOT"

echo "build: configuring ($BUILD_TYPE) in ${BUILD_DIR#"$ROOT"/}$CCACHE_NOTE"
cmake -S "$ROOT" -B "$BUILD_DIR" "${GENERATOR[@]}" \
  -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${CCACHE_ARGS[@]}" "${CMAKE_ARGS[@]}" >/dev/null
echo "build: compiling with $JOBS job(s)"
cmake --build "$BUILD_DIR" --parallel "$JOBS"
echo "build: done (${BUILD_DIR#"$ROOT"/})"
