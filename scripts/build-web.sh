#!/usr/bin/env bash
# Builds the browser playground: web/dist/ (index.html and assets, loadable
# from any static server). Needs the WebAssembly package in wasm/dist/
# (scripts/build-wasm.sh). Installs web/'s npm packages from its lock file
# when they are missing or the lock file changed. Idempotent.
set -euo pipefail

usage() {
  cat <<'EOF2'
Usage: bash scripts/build-web.sh

Runs `npm ci` in web/ when needed, then `npm run build` (type check + Vite),
which writes web/dist/.
EOF2
}
if [[ "${1-}" == "-h" || "${1-}" == "--help" ]]; then usage; exit 0; fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ ! -f "$ROOT/wasm/dist/index.js" ]]; then
  echo "build-web.sh: wasm/dist/index.js missing: run bash scripts/build-wasm.sh first" >&2
  exit 1
fi
cd "$ROOT/web"
if [[ ! -f node_modules/.package-lock.json ||
      package-lock.json -nt node_modules/.package-lock.json ]]; then
  # `npm ci` refuses a lock file without every platform's optional packages
  # (rollup's native binaries), which a registry mirror may not serve; then
  # install from the same lock file without rewriting it.
  if ! npm ci --no-audit --no-fund --loglevel=error 2>/dev/null; then
    echo "build-web: npm ci refused the lock file; npm install --no-save instead" >&2
    npm install --no-save --no-audit --no-fund --loglevel=error
  fi
fi
npm run --silent build
cp "$ROOT/third_party/xla-perf-tables/LICENSE" dist/LICENSE-xla-perf-tables
echo "build-web: web/dist/ ($(du -sb dist | cut -f1) bytes)"
