#!/usr/bin/env bash
# Builds the npm package: the core compiled with Debian's Emscripten 3.1.6
# into one .mjs (wasm inlined), then the TypeScript wrapper and its .d.ts.
# Installs emscripten and the npm dev dependencies first when missing.
# Idempotent; output in wasm/dist/ (what `npm pack` in wasm/ packs).
set -euo pipefail

usage() {
  cat <<'EOF2'
Usage: bash scripts/build-wasm.sh [--no-install] [-j N] [--build-dir DIR]

  --no-install     do not install emscripten / nodejs / npm packages
  -j N             parallel compile jobs (default: CPUs)
  --build-dir DIR  Emscripten build directory (default: build-wasm; give
                   your own when others build in the same checkout)
EOF2
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
install=1
BUILD_DIR=build-wasm
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --no-install) install=0; shift ;;
    -j) [[ $# -ge 2 ]] || { echo "build-wasm.sh: -j needs a number" >&2; exit 2; }
        JOBS="$2"; shift 2 ;;
    --build-dir) [[ $# -ge 2 ]] || { echo "build-wasm.sh: --build-dir needs a directory" >&2; exit 2; }
        BUILD_DIR="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build-wasm.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

cd "$ROOT"
if [[ $install -eq 1 ]]; then
  bash scripts/install-deps.sh --wasm
fi
# Debian's emcc runs its JS optimizer with node, which must find Debian's acorn.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

case "$BUILD_DIR" in
  /*) BUILD="$BUILD_DIR" ;;
  *) BUILD="$ROOT/$BUILD_DIR" ;;
esac
# shellcheck source=scripts/ccache-args.sh
source "$ROOT/scripts/ccache-args.sh"
ccache_args "$ROOT"
if [[ ! -f "$BUILD/build.ninja" ]]; then
  echo "build-wasm: configuring in ${BUILD#"$ROOT"/}$CCACHE_NOTE"
  emcmake cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${CCACHE_ARGS[@]}" \
    -DSHARDLAB_BUILD_TESTS=OFF -DSHARDLAB_BUILD_BENCH=OFF \
    -Dnlohmann_json_DIR="$ROOT/wasm/cmake" \
    -DCMAKE_CROSSCOMPILING_EMULATOR=""
fi
cmake --build "$BUILD" --target shardlab_wasm -j "$JOBS"

cd "$ROOT/wasm"
if [[ $install -eq 1 || ! -d node_modules ]]; then
  # Reuse an existing install whose lock file has not changed.
  if [[ ! -f node_modules/.package-lock.json ||
        package-lock.json -nt node_modules/.package-lock.json ]]; then
    # `npm ci` refuses a lock file without every platform's optional
    # packages (vite's rollup binaries, for the Vite test), which a registry
    # mirror may not serve; then install from the same lock file.
    if ! npm ci --no-audit --no-fund --loglevel=error 2>/dev/null; then
      echo "build-wasm: npm ci refused the lock file; npm install --no-save instead" >&2
      npm install --no-save --no-audit --no-fund --loglevel=error
    fi
  fi
fi
mkdir -p dist
cp "$BUILD/shardlab.mjs" dist/shardlab.mjs
cp src/shardlab.d.mts dist/shardlab.d.mts
# The h100/b200 presets carry XLA's measured GEMM rates: ship their licence.
cp "$ROOT/third_party/xla-perf-tables/LICENSE" dist/LICENSE-xla-perf-tables
cp "$ROOT/third_party/xla-perf-tables/PROVENANCE.md" dist/PROVENANCE-xla-perf-tables.md
npx --no-install tsc -p tsconfig.json
echo "build-wasm: wasm/dist/ ($(wc -c < dist/shardlab.mjs) bytes in shardlab.mjs)"
