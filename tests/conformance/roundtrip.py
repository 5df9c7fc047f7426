#!/usr/bin/env python3
"""Round-trip check: for every .mlir file of a suite, each `// -----` chunk is
parsed and printed, and the printed text parsed and printed again; the two
prints must be equal (a fixed point). Chunks whose first parse fails with an
expected diagnostic (files with expected-error annotations) are skipped.

Prints one line per failing chunk with -v, a summary table, and the closing
line `N passed, M failed`.
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(opt, text):
    proc = subprocess.run([opt, "-allow-unregistered-dialect", "-"], input=text.encode(),
                          capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


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
    parser.add_argument("suite", nargs="?", default=os.path.join(ROOT, "..", "shared", "conformance", "shardy"))
    parser.add_argument("--opt", default=os.path.join(ROOT, "build", "shardlab-opt"))
    parser.add_argument("-v", action="store_true", help="list failing chunks")
    args = parser.parse_args()
    if not os.path.isdir(args.suite):
        print(f"roundtrip: suite {args.suite} not found; skipping")
        return 0
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
                    if "expected-" in chunk:
                        skipped += 1
                        continue
                    failed += 1
                    if args.v:
                        print(f"FAIL(parse) {os.path.relpath(path, args.suite)}#{index}: {err.strip().splitlines()[0] if err.strip() else ''}")
                    continue
                rc2, second, err2 = run(args.opt, first)
                if rc2 == 0 and second == first:
                    passed += 1
                else:
                    failed += 1
                    if args.v:
                        why = err2.strip().splitlines()[0] if rc2 else "prints differ"
                        print(f"FAIL(fixpoint) {os.path.relpath(path, args.suite)}#{index}: {why}")
    print(f"skipped {skipped} chunks whose first parse is expected to fail")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
