#!/usr/bin/env bash
# Installs the Debian packages shardlab needs, and only those that are missing.
# Idempotent: when everything is present it does nothing (no apt-get update).
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: bash scripts/install-deps.sh [--wasm] [--browser] [--check] [--list] [-h|--help]

Installs the Debian packages shardlab needs (compiler, CMake, Ninja, doctest,
nlohmann-json, FileCheck from llvm-14-tools, python3, clang-14 and its runtime
for fuzzing/sanitizers, and libmlir-22, which Shardy's sdy_opt in the shared
data needs to run as the tests' oracle). Runs `apt-get update` once, and only when something
is missing; then installs only the missing packages.

Runs as root (as CI does); otherwise uses sudo when it is available.

  --wasm    also the WebAssembly tool chain: emscripten (3.1.6 on Debian
            bookworm), and nodejs + npm only when no node/npm is on PATH
  --browser also Debian's chromium (and a font) for the playground's browser tests
            (tests/browser, driven by playwright-core), and nodejs + npm
            only when no node/npm is on PATH
  --check   report what is missing and exit 1 if anything is; install nothing
  --list    print the package list and exit
  -h        this help
EOF
}

PACKAGES=(
  build-essential
  g++
  cmake
  ninja-build
  ccache              # compiles kept across checkouts (scripts/build.sh)
  doctest-dev
  nlohmann-json3-dev
  robin-map-dev       # tsl::robin_map, header-only hash tables
  libfast-float-dev   # fast_float, header-only decimal -> double
  llvm-14-tools       # FileCheck at /usr/lib/llvm-14/bin/FileCheck
  python3
  pyflakes3           # static check of bench/gpu's JAX scripts (no JAX here)
  clang-14            # fuzzing and sanitizer builds
  libclang-rt-14-dev  # libFuzzer / ASan runtimes for clang-14
  libmlir-22          # runtime of the test oracle, Shardy's own sdy_opt
                      # (../shared/tools/shardy): tests compare with it
)

# The WebAssembly build (scripts/build-wasm.sh) needs these too. A node from
# elsewhere (e.g. a newer nodejs package) is kept: Debian's npm would clash.
WASM_PACKAGES=(emscripten)
# The browser tests drive Debian's Chromium (never a downloaded browser).
BROWSER_PACKAGES=(chromium fonts-dejavu-core)

check_only=0
list_only=0
wasm=0
browser=0
for arg in "$@"; do
  case "$arg" in
    --wasm) wasm=1 ;;
    --browser) browser=1 ;;
    --check) check_only=1 ;;
    --list) list_only=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install-deps.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps.sh: dpkg-query not found; this script supports Debian-based systems only." >&2
  exit 1
fi

is_installed() {
  # "install ok installed" is the only state in which the package is usable.
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

if [[ $browser -eq 1 ]]; then
  PACKAGES+=("${BROWSER_PACKAGES[@]}")
fi
if [[ $wasm -eq 1 || $browser -eq 1 ]]; then
  if [[ $wasm -eq 1 ]]; then PACKAGES+=("${WASM_PACKAGES[@]}"); fi
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    PACKAGES+=(nodejs npm)
  fi
fi

if [[ $list_only -eq 1 ]]; then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

if [[ $check_only -eq 1 ]]; then
  echo "install-deps: missing ${#missing[@]} package(s): ${missing[*]}"
  exit 1
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install-deps.sh: missing packages (${missing[*]}), and not root and no sudo to install them." >&2
    echo "  As root, run: apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp "${TMPDIR:-/tmp}/shardlab-install-deps.XXXXXX")
trap 'rm -f "$log"' EXIT

run_quiet() {
  if ! "$@" >>"$log" 2>&1; then
    echo "install-deps.sh: failed: $*" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}

# Wait for another apt/dpkg run to finish rather than failing on its lock.
APT_OPTS=(-q -o DPkg::Lock::Timeout=300)
run_quiet "${SUDO[@]}" apt-get "${APT_OPTS[@]}" update
run_quiet "${SUDO[@]}" apt-get "${APT_OPTS[@]}" install -y --no-install-recommends "${missing[@]}"

# Verify: a package that apt could not configure must not pass silently.
still=()
for pkg in "${missing[@]}"; do
  is_installed "$pkg" || still+=("$pkg")
done
if [[ ${#still[@]} -ne 0 ]]; then
  echo "install-deps.sh: still missing after install: ${still[*]}" >&2
  exit 1
fi
echo "install-deps: installed ${#missing[@]} package(s): ${missing[*]}"
