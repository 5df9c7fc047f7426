#!/usr/bin/env bash
# Does any test notice when this line is wrong? Replaces OLD (which must occur
# exactly once in FILE) by NEW, rebuilds the doctest binaries, runs them, and
# restores FILE whatever happens. Prints the test cases that failed; none
# means the rule the line states is held by no unit test (look further with
# ctest, then write the test that fails).
#
#   bash scripts/mutation-probe.sh core/src/ir/while_loops.cpp \
#     'std::ceil((c->limit - c->init) / c->step)' '((c->limit - c->init) / c->step)'
set -euo pipefail
if [ $# -ne 3 ]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build}"
file="$1"
backup="$(mktemp)"
cp "$file" "$backup"
restore() { cp "$backup" "$file"; touch "$file"; rm -f "$backup"; }
trap restore EXIT
python3 - "$file" "$2" "$3" <<'PY'
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
if text.count(old) != 1:
    sys.exit("%s: the text to replace occurs %d times, not once" % (path, text.count(old)))
open(path, "w").write(text.replace(old, new))
PY
if ! ninja -C "$BUILD" shardlab_unit_tests shardlab_cost_tests > /dev/null; then
  echo "the mutant does not build"
  exit 0
fi
for tests in shardlab_unit_tests shardlab_cost_tests; do
  out="$("$BUILD/$tests" 2>&1 || true)"
  echo "$tests: $(grep -E '^\[doctest\] test cases' <<< "$out")"
  # doctest separates its reports with lines of '='; a block with an ERROR
  # names the test case that failed.
  python3 -c '
import re, sys
for block in re.split(r"\n=+\n", sys.stdin.read()):
    name = re.search(r"^TEST CASE:\s+(.*)$", block, re.M)
    if name and "ERROR:" in block:
        print("  failed:", name.group(1))' <<< "$out" | sort -u
done
echo "(the binaries are left built from the mutant: run ninja before testing again)"
