#!/usr/bin/env bash
# Installs what is missing, builds everything, then runs every test suite and
# ends with one summary table and a final `N passed, M failed` line. Exits
# non-zero when anything failed, or when a suite could not run and nobody
# allowed that.
set -euo pipefail

usage() {
  cat <<'EOF2'
Usage: bash scripts/test.sh [--no-install] [--no-wasm] [--allow-missing-data]
                           [--build-dir DIR] [-j N] [-- RUNNER_ARGS...]

First installs every package a test needs (scripts/install-deps.sh --wasm
--browser) and builds everything (scripts/build.sh with tests on,
scripts/build-wasm.sh, scripts/build-web.sh), so that no test finds a tool
missing. Then runs, in order:

  unit           ctest: doctest unit tests, XLA cost vectors, CLI checks,
                 the conformance-gate test (--no-tests=error)
  js             node --test tests/js: the npm package (incl. Vite + Chromium)
  browser        node --test tests/browser: the playground in headless Chromium
  runner         the conformance runner's self-tests
  corpus-count   the corpus runner's collective count, self-tests
  diff-runner    the differential runner's batching, self-tests
  bench          bench/run_all.sh --quick: every benchmark case once on small
                 modules, native and WASM (proves they run; times are not checked)
  roundtrip      parse/print fixed point over Shardy's suite
  conformance    Shardy's lit tests, gated on tests/conformance/passing_cases.txt
  corpus-local   tests/corpus/*/*.mlir (JAX with and without Shardy, PyTorch/XLA,
                 Reactant, XLA dumps) through every stage; every one must pass
  xla-shardy     XLA's Shardy-integration lit tests (GSPMD import/export, round
                 trip), gated on tests/conformance/passing_xla_shardy.txt
  corpus-jax     the 960 JAX-exported modules of ../shared/corpus through every
                 stage (tests/corpus/run_corpus.py), gated on passing_shared.txt
  differential   the same modules and flags through Shardy's sdy_opt and
                 shardlab-opt, compared (tests/differential/run_differential.py;
                 NOT RUN with the reason when sdy_opt's runtime is missing)

The shared data (../shared beside the checkout, or beside the repository it
was cloned from, or $SHARDLAB_SHARED) must be there: a missing suite is a
failure. --allow-missing-data lets the run go on without it (refused when
CI=true); the summary then says NOT RUN for what did not run.

  --no-install          do not install packages (they must be there already)
  --no-wasm             do not build or test the WebAssembly package and the
                        playground (their suites are reported NOT RUN)
  --allow-missing-data  missing shared data is NOT RUN instead of a failure
  --build-dir DIR       native build directory (default: build, or $BUILD_DIR)
  -j N                  parallel jobs for builds, ctest and the runner
  -- ARGS               further arguments for run_conformance.py (e.g. -- -v)
  -h, --help            this help
EOF2
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
install=1
wasm=1
allow_missing=0
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
runner_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --no-install) install=0; shift ;;
    --no-wasm) wasm=0; shift ;;
    --allow-missing-data) allow_missing=1; shift ;;
    --build-dir) [[ $# -ge 2 ]] || { echo "test.sh: --build-dir needs a path" >&2; exit 2; }
        BUILD_DIR="$2"; shift 2 ;;
    -j) [[ $# -ge 2 ]] || { echo "test.sh: -j needs a number" >&2; exit 2; }
        JOBS="$2"; shift 2 ;;
    --) shift; runner_args+=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "test.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "test.sh: -j wants a positive number, got '$JOBS'" >&2; exit 2; }
case "${CI:-}" in
  true|1|yes)
    if [[ $allow_missing -eq 1 ]]; then
      echo "test.sh: --allow-missing-data is refused under CI: the shared data must be there" >&2
      exit 2
    fi ;;
esac

cd "$ROOT"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
export BUILD_DIR

# ---- install and build everything before the first test -------------------
# Seconds each step took, for the summary (CI's budget is an hour).
STEP_NAMES=()
STEP_SECONDS=()
timed() {
  local name="$1" start=$SECONDS
  shift
  "$@"
  STEP_NAMES+=("$name")
  STEP_SECONDS+=($((SECONDS - start)))
}
if [[ $install -eq 1 ]]; then
  if [[ $wasm -eq 1 ]]; then
    timed install bash scripts/install-deps.sh --wasm --browser
  else
    timed install bash scripts/install-deps.sh
  fi
fi
timed "native build" bash scripts/build.sh -j "$JOBS" --build-dir "$BUILD_DIR" -- -DSHARDLAB_BUILD_TESTS=ON
if [[ $wasm -eq 1 ]]; then
  wasm_args=(-j "$JOBS")
  [[ $install -eq 1 ]] || wasm_args+=(--no-install)
  timed "wasm build" bash scripts/build-wasm.sh "${wasm_args[@]}"
  timed "web build" bash scripts/build-web.sh
fi

if shared="$(python3 tests/shared_data.py 2>/dev/null)"; then
  export SHARDLAB_SHARED="$shared"
  echo "test: shared data from $SHARDLAB_SHARED"
elif [[ $allow_missing -eq 1 ]]; then
  echo "test: shared data not found; --allow-missing-data: its suites are NOT RUN"
else
  echo "test: the shared data was not found:" >&2
  python3 tests/shared_data.py >&2 || true
  echo "test: it holds the conformance suites and the corpus; put it beside the checkout" \
       "(../shared), set SHARDLAB_SHARED, or pass --allow-missing-data" >&2
  exit 1
fi
if [[ $allow_missing -eq 1 ]]; then
  export SHARDLAB_ALLOW_MISSING_DATA=1
  allow_flag=(--allow-missing)
else
  unset SHARDLAB_ALLOW_MISSING_DATA
  allow_flag=()
fi

# ---- run the suites, collect their counts ----------------------------------
SUMMARY_NAMES=()
SUMMARY_ROWS=()
LOGDIR="$(mktemp -d)"
trap 'rm -rf "$LOGDIR"' EXIT

# record NAME PASSED FAILED NOTRUN [SECONDS]
record() {
  SUMMARY_NAMES+=("$1")
  SUMMARY_ROWS+=("$2 $3 $4 ${5:-0}")
}

# counts KIND LOG STATUS: prints "passed failed notrun" read from a suite's
# own output; a suite that exited non-zero without a failure count counts 1.
counts() {
  python3 - "$1" "$2" "$3" <<'PY'
import re, sys
kind, log, status = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(log, encoding="utf-8", errors="replace").read()
p = f = n = 0
def last(rx):
    m = re.findall(rx, text, re.M)
    return m[-1] if m else None
if kind == "ctest":
    m = last(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)")
    if m:
        total, f = int(m[2]), int(m[1])
        n = len(re.findall(r"Test +#\d+: .*\*\*\*Skipped", text))
        p = total - f - n
elif kind == "node":
    get = lambda k: int(last(r"^# %s (\d+)$" % k) or 0)
    p, f, n = get("pass"), get("fail") + get("cancelled"), get("skipped") + get("todo")
elif kind == "unittest":
    m = last(r"^Ran (\d+) tests?")
    if m:
        total = int(m)
        fm = last(r"^FAILED \((.*)\)$")
        if fm:
            f = sum(int(x) for x in re.findall(r"(?:failures|errors)=(\d+)", fm))
        n = int(last(r"skipped=(\d+)") or 0)
        p = total - f - n
elif kind == "gate":
    if re.search(r"^NOT RUN:", text, re.M) and not last(r"^gate: "):
        n = 1
    else:
        m = last(r"^gate: (\d+) passed, (\d+) failed(?: \(\d+ expected failures?\))?$")
        if m:
            p, f = int(m[0]), int(m[1])
elif kind == "plain":
    if re.search(r"^NOT RUN:", text, re.M):
        n = 1
    else:
        m = last(r"^(\d+) passed, (\d+) failed$")
        if m:
            p, f = int(m[0]), int(m[1])
if status != 0 and f == 0:
    f = 1  # it failed without saying how many: count the suite once
print(p, f, n)
PY
}

# suite NAME KIND COMMAND...: runs a suite, shows its output, records counts.
suite() {
  local name="$1" kind="$2"
  shift 2
  echo
  echo "== $name: $*"
  local log="$LOGDIR/$name.log" status=0 start=$SECONDS
  "$@" 2>&1 | tee "$log" || status=${PIPESTATUS[0]}
  local row
  row="$(counts "$kind" "$log" "$status")"
  # shellcheck disable=SC2086
  record "$name" $row $((SECONDS - start))
  read -r p f n <<<"$row"
  echo "== $name: $p passed, $f failed, $n not run ($((SECONDS - start)) s)"
}

not_run() {
  echo
  echo "== $1: NOT RUN ($2)"
  record "$1" 0 0 1
}

suite unit ctest ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j "$JOBS"

if [[ $wasm -eq 1 ]]; then
  suite js node node --test tests/js/*.test.mjs
  suite browser node node --test --test-concurrency=1 tests/browser/*.test.mjs
else
  not_run js "--no-wasm"
  not_run browser "--no-wasm"
fi

suite runner unittest python3 tests/conformance/test_run_conformance.py
suite corpus-count unittest python3 tests/corpus/test_collective_count.py
suite diff-runner unittest python3 tests/differential/test_run_differential.py
suite bench plain env SHARDLAB_BUILD_DIR="$BUILD_DIR" bash bench/run_all.sh --quick
suite roundtrip plain python3 tests/conformance/roundtrip.py "${allow_flag[@]}" \
  --opt "$BUILD_DIR/shardlab-opt"
suite conformance gate python3 tests/conformance/run_conformance.py "${allow_flag[@]}" \
  --opt "$BUILD_DIR/shardlab-opt" --jobs "$JOBS" --check-regressions "${runner_args[@]}"
suite xla-shardy gate python3 tests/conformance/run_conformance.py "${allow_flag[@]}" \
  "${SHARDLAB_SHARED:-../shared}/conformance/xla-shardy" --per-file \
  --passing-list tests/conformance/passing_xla_shardy.txt \
  --opt "$BUILD_DIR/shardlab-opt" --jobs "$JOBS" --check-regressions
suite corpus-jax gate python3 tests/corpus/run_corpus.py --set shared "${allow_flag[@]}" \
  --opt "$BUILD_DIR/shardlab-opt" --schedule "$BUILD_DIR/shardlab-schedule" \
  --interpreter "$BUILD_DIR/shardlab-run" --jobs "$JOBS" --check-regressions -q
suite corpus-local gate python3 tests/corpus/run_corpus.py --set local \
  --opt "$BUILD_DIR/shardlab-opt" --schedule "$BUILD_DIR/shardlab-schedule" \
  --interpreter "$BUILD_DIR/shardlab-run" --jobs "$JOBS" --check-regressions -q
# Shardy's own sdy_opt as the oracle (NOT RUN, with the reason, when its
# runtime is missing): every module printed the same by both.
suite differential gate python3 tests/differential/run_differential.py \
  --opt "$BUILD_DIR/shardlab-opt" --jobs "$JOBS" --check-regressions -q

# ---- summary -----------------------------------------------------------------
echo
echo "== summary"
printf '%-14s %8s %8s %10s %9s\n' suite passed failed "not run" seconds
tp=0; tf=0; tn=0
for i in "${!SUMMARY_NAMES[@]}"; do
  read -r p f n secs <<<"${SUMMARY_ROWS[$i]}"
  label="$n"
  [[ $n -eq 0 ]] || label="$n NOT RUN"
  printf '%-14s %8d %8d %10s %9d\n' "${SUMMARY_NAMES[$i]}" "$p" "$f" "$label" "$secs"
  tp=$((tp + p)); tf=$((tf + f)); tn=$((tn + n))
done
printf '%-14s %8d %8d %10s %9d\n' total "$tp" "$tf" "$tn" "$SECONDS"
for i in "${!STEP_NAMES[@]}"; do
  printf '%-14s %39d\n' "${STEP_NAMES[$i]}" "${STEP_SECONDS[$i]}"
done
if [[ $tn -gt 0 ]]; then
  echo "NOT RUN: $tn suite(s) or test(s) did not run (allowed by a flag given to this script)"
fi
echo "$tp passed, $tf failed"
[[ $tf -eq 0 ]]
