#!/usr/bin/env bash
# The main job: install what is missing, build the WebAssembly core and the
# browser playground, and serve it on localhost with an example loaded.
set -euo pipefail

usage() {
  cat <<'EOF2'
Usage: bash scripts/run.sh [--no-install] [--port N] [--build-only]
       bash scripts/run.sh --cli [--no-install] [FILE.mlir] [SHARDLAB_OPT_ARGS...]

Installs missing Debian packages (emscripten, node/npm when absent), builds
the WebAssembly package (scripts/build-wasm.sh) and the playground
(scripts/build-web.sh, into web/dist/), then serves web/dist on
http://127.0.0.1:PORT/ (default 8173) and prints the URL; the page opens
with examples/hello.mlir loaded. Ctrl-C stops the server.

  --no-install   skip the package installer (e.g. without root)
  --port N       port to serve on (default 8173; 0 picks a free one)
  --build-only   build web/dist and exit without serving
  --cli          the command-line job instead: build natively and run
                 build/shardlab-opt on FILE.mlir (default examples/hello.mlir)
                 with the given flags, e.g. --cli examples/hello.mlir -sdy-basic-propagate
  -h, --help     this help
EOF2
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
install=1
port=8173
build_only=0
cli=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --no-install) install=0; shift ;;
    --port) [[ $# -ge 2 ]] || { echo "run.sh: --port needs a number" >&2; exit 2; }
        port="$2"; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --cli) cli=1; shift; break ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [[ $cli -eq 1 ]]; then
  if [[ "${1-}" == "--no-install" ]]; then install=0; shift; fi
  input="examples/hello.mlir"
  if [[ $# -gt 0 && "$1" != -* ]]; then input="$1"; shift; fi
  if [[ -f "$input" ]]; then
    input="$(cd "$(dirname "$input")" && pwd)/$(basename "$input")"
  elif [[ -f "$ROOT/$input" ]]; then
    input="$ROOT/$input"
  else
    echo "run.sh: input module '$input' not found" >&2
    exit 1
  fi
  cd "$ROOT"
  [[ $install -eq 0 ]] || bash scripts/install-deps.sh >&2
  bash scripts/build.sh >&2
  echo "== build/shardlab-opt ${input#"$ROOT"/} $*" >&2
  exec build/shardlab-opt "$input" "$@"
fi

cd "$ROOT"
wasm_args=()
if [[ $install -eq 1 ]]; then
  bash scripts/install-deps.sh --wasm >&2
else
  wasm_args+=(--no-install)
fi
bash scripts/build-wasm.sh "${wasm_args[@]}" >&2
bash scripts/build-web.sh >&2
if [[ $build_only -eq 1 ]]; then
  echo "run.sh: built web/dist/ (serve it with: node scripts/serve-web.mjs)"
  exit 0
fi
exec node scripts/serve-web.mjs --port "$port" web/dist
