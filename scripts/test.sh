#!/usr/bin/env bash
# Installs what is missing, builds, runs the unit tests (ctest) and the Shardy
# conformance suite with the regression check. Exits non-zero on any failure.
set -euo pipefail

usage() {
  cat <<'EOF2'
Usage: bash scripts/test.sh [--no-install] [--no-wasm] [--suite DIR] [-j N] [-- RUNNER_ARGS...]

Installs missing Debian packages (scripts/install-deps.sh), builds (scripts/build.sh),
runs the unit tests with ctest, builds the WebAssembly npm package
(scripts/build-wasm.sh) and runs its JS tests (node --test tests/js), builds
the playground (scripts/build-web.sh) and runs its browser tests in Debian's
headless Chromium (node --test tests/browser; screenshots and timings in
out/browser/), runs the
runner's self-tests, then runs the Shardy
conformance suite
(tests/conformance/run_conformance.py --check-regressions): it fails when a case
listed in tests/conformance/passing_cases.txt no longer passes.
The suite is read from ../shared/conformance/shardy beside the checkout; when it
is absent the conformance step is skipped with a message.

  --no-install   skip the package installer (e.g. without root)
  --no-wasm      skip the WebAssembly build, its JS tests and the playground tests
  --suite DIR    conformance suite root (default: ../shared/conformance/shardy)
  -j N           parallel jobs for build, ctest and the runner (default: CPUs)
  -- ARGS        further arguments for run_conformance.py (e.g. -- -v)
  -h, --help     this help
EOF2
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
install=1
wasm=1
suite=()
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
runner_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --no-install) install=0; shift ;;
    --no-wasm) wasm=0; shift ;;
    --suite) [[ $# -ge 2 ]] || { echo "test.sh: --suite needs a directory" >&2; exit 2; }
        suite=("$2"); shift 2 ;;
    -j) [[ $# -ge 2 ]] || { echo "test.sh: -j needs a number" >&2; exit 2; }
        JOBS="$2"; shift 2 ;;
    --) shift; runner_args+=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "test.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "test.sh: -j wants a positive number, got '$JOBS'" >&2; exit 2; }

cd "$ROOT"
if [[ $install -eq 1 ]]; then
  bash scripts/install-deps.sh
fi
bash scripts/build.sh -j "$JOBS"

echo "== unit tests (ctest)"
# On failure ctest's summary is the last thing printed and we stop here.
ctest --test-dir build --output-on-failure -j "$JOBS"

if [[ $wasm -eq 1 ]]; then
  echo "== WebAssembly package (scripts/build-wasm.sh, node --test tests/js)"
  if [[ $install -eq 0 ]] && ! command -v emcc >/dev/null 2>&1; then
    echo "test.sh: emcc not found and --no-install given: WebAssembly step skipped"
  else
    wasm_args=(-j "$JOBS")
    [[ $install -eq 1 ]] || wasm_args+=(--no-install)
    bash scripts/build-wasm.sh "${wasm_args[@]}"
    node --test tests/js/*.test.mjs
    echo "== playground (scripts/build-web.sh, node --test tests/browser in headless Chromium)"
    [[ $install -eq 0 ]] || bash scripts/install-deps.sh --browser
    if [[ ! -x /usr/bin/chromium && -z "${CHROMIUM_PATH-}" ]]; then
      echo "test.sh: /usr/bin/chromium not found and --no-install given: browser tests skipped"
    else
      bash scripts/build-web.sh
      node --test --test-concurrency=1 tests/browser/*.test.mjs
    fi
  fi
fi

echo "== conformance runner self-tests"
python3 tests/conformance/test_run_conformance.py

echo "== round trip (parse, print, parse, print is a fixed point)"
python3 tests/conformance/roundtrip.py "${suite[@]}" --opt build/shardlab-opt

echo "== conformance (Shardy lit tests)"
python3 tests/conformance/run_conformance.py "${suite[@]}" \
  --opt build/shardlab-opt --jobs "$JOBS" --check-regressions "${runner_args[@]}"
