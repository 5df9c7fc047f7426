#!/usr/bin/env python3
"""Round-trip check: for every .mlir file of a suite, each `// -----` chunk is
parsed and printed, and the printed text parsed and printed again; the two
prints must be equal (a fixed point), and the first print must hold the
chunk's ops in order with their attribute names and result types
(tests/values/op_skeleton.py) and every literal value of the chunk with the
same bits (tests/values/mlir_literals.py): readers that share no code with
shardlab's parser. A chunk whose first parse fails is
skipped only when the failure is exactly what its expected-error annotations
say (shardlab-opt -verify-diagnostics passes on it); any other parse failure
fails. A missing suite is an error unless --allow-missing is given.

Prints one line per failing chunk with -v, a summary table, and the closing
line `N passed, M failed`.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "values"))
import mlir_literals  # noqa: E402
import op_skeleton  # noqa: E402
import shared_data  # noqa: E402


def run(opt, text, *flags):
    proc = subprocess.run([opt, "-allow-unregistered-dialect", *flags, "-"], input=text.encode(),
                          capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


def source_lost(source, printed):
    """What of `source` the print lost ("" when nothing): an op, an
    attribute, a result type or a literal value."""
    why = op_skeleton.compare(source, printed)
    if why:
        return "the print differs from the source: " + why
    try:
        changed = mlir_literals.changed_literals(source, printed)
    except (mlir_literals.LiteralError, ValueError, IndexError) as e:
        return "the source's literals cannot be read independently: %s" % e
    return "%d literal value(s) changed" % sum(changed.values()) if changed else ""


def chunks_of(text):
    chunk, chunks = [], []
    for line in text.split("\n"):
        if line.strip().startswith("// -----"):
            chunks.append("\n".join(chunk))
            chunk = []
        else:
            chunk.append(line)
    chunks.append("\n".join(chunk))
    return chunks


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("suite", nargs="?", default=shared_data.default_path("conformance", "shardy"))
    parser.add_argument("--opt", default=os.path.join(ROOT, "build", "shardlab-opt"))
    parser.add_argument("--allow-missing", action="store_true",
                        help="a missing suite prints NOT RUN and exits 0 (refused under CI=true)")
    parser.add_argument("-v", action="store_true", help="list failing chunks")
    args = parser.parse_args()
    under_ci = os.environ.get("CI", "").lower() in ("true", "1", "yes")
    if args.allow_missing and under_ci:
        print("roundtrip: --allow-missing is refused under CI", file=sys.stderr)
        return 2
    if not os.path.isdir(args.suite):
        if args.allow_missing or shared_data.missing_allowed():
            print(f"NOT RUN: suite not found at {args.suite}")
            return 0
        print("roundtrip: " + shared_data.how_to_get("suite", args.suite), file=sys.stderr)
        return 2
    if not os.access(args.opt, os.X_OK):
        print(f"roundtrip: shardlab-opt not found at {args.opt} (bash scripts/build.sh)",
              file=sys.stderr)
        return 2
    passed = failed = skipped = 0
    for dirpath, _, files in sorted(os.walk(args.suite)):
        for name in sorted(files):
            if not name.endswith(".mlir"):
                continue
            path = os.path.join(dirpath, name)
            text = open(path, encoding="utf-8", errors="replace").read()
            # Split only where the file's own RUN lines split it.
            chunks = chunks_of(text) if "split-input-file" in text else [text]
            for index, chunk in enumerate(chunks):
                rc, first, err = run(args.opt, chunk)
                if rc != 0:
                    if "expected-" in chunk and run(args.opt, chunk, "-verify-diagnostics")[0] == 0:
                        skipped += 1  # fails to parse exactly as the test expects
                        continue
                    failed += 1
                    if args.v:
                        print(f"FAIL(parse) {os.path.relpath(path, args.suite)}#{index}: {err.strip().splitlines()[0] if err.strip() else ''}")
                    continue
                rc2, second, err2 = run(args.opt, first)
                lost = source_lost(chunk, first)
                if rc2 == 0 and second == first and not lost:
                    passed += 1
                else:
                    failed += 1
                    if args.v:
                        why = lost or (err2.strip().splitlines()[0] if rc2 else "prints differ")
                        print(f"FAIL(fixpoint) {os.path.relpath(path, args.suite)}#{index}: {why}")
    print(f"skipped {skipped} chunks whose first parse fails as their expected-error lines say")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
