#!/usr/bin/env python3
"""shardlab-opt's -split-input-file[=MARKER] and -output-split-marker
against Shardy's sdy_opt: where the input splits (a marker mid-line, with
text after it, commented out, doubled), what the chunks' outputs are joined
with, and the file position of an error in a later chunk. Each input runs
through both tools; the printed text and the exit status must be the same,
and the first error's file:line:col (the messages are each tool's own).
Not compared: MLIR's "near miss with file split marker" warnings (a line
almost a marker), and custom markers of one or two characters, or of one
character repeated, which this sdy_opt does not split at (it hangs on some
two-character ones); the markers here are the ones it splits at.

Exit 0 when all agree, 1 otherwise; the comparison is NOT RUN (exit 77)
when sdy_opt cannot run here. Standard library only."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import shared_data  # noqa: E402

A = "module {\n}\n"
B = "module attributes {a.b} {\n}\n"
# (This sdy_opt aborts under the propagation passes on a module without a
# function named main.)
MAIN = ("sdy.mesh @m = <[\"x\"=2]>\nfunc.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  return %a : tensor<4xf32>\n}\n")
# (what the case shows, input, extra flags)
CASES = [
    ("a marker on its own line", A + "// -----\n" + B, []),
    ("a marker with blanks before and after", A + "   // -----  \n" + B, []),
    ("a marker after code on its line", "module {\n} // -----\n" + B, []),
    ("a commented-out marker still splits", A + "//// -----\n" + B, []),
    ("a marker written twice", A + "// // -----\n" + B, []),
    ("six dashes: the sixth starts the next chunk", A + "// ------\n" + B, []),
    ("text after the marker starts the next chunk", A + "// ----- tail\n" + B, []),
    ("an error in a later chunk, after code on the marker's line",
     A + "// -----\n" + B + "// ----- %x = foo\n" + A, []),
    ("an empty chunk", A + "// -----\n// -----\n" + B, []),
    ("no -split-input-file: one module, markers are comments", A + "// -----\n", []),
    ("a marker of one's own", A + "#SPLIT\n" + B + "x #SPLIT\n" + A, ["-split-input-file=#SPLIT"]),
    ("the default marker is not split at under another", A + "// -----\n",
     ["-split-input-file=#SPLIT"]),
    ("outputs joined by a marker of one's own", A + "// -----\n" + B,
     ["-output-split-marker=XX"]),
    ("outputs joined by an empty marker", A + "// -----\n" + B, ["-output-split-marker="]),
    ("both markers", A + "// ==\n" + B, ["-split-input-file=// ==", "-output-split-marker=== x =="]),
    ("a pass on each chunk",
     MAIN + "// -----\n" + MAIN.replace("4xf32", "8xf32"), ["-sdy-propagation-pipeline"]),
]
POSITION = re.compile(r"^(?:[^:\n]*):(\d+):(\d+): error", re.M)


def run(tool, flags, path):
    p = subprocess.run([tool, *flags, "-allow-unregistered-dialect", path],
                       capture_output=True, text=True, timeout=30)
    first = POSITION.search(p.stderr)
    return p.returncode != 0, p.stdout, first.groups() if first else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--opt", required=True)
    args = ap.parse_args()
    sdy_opt, why = shared_data.sdy_opt()
    if not sdy_opt:
        print("NOT RUN: the comparison with sdy_opt: %s" % why)
        return 77
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "in.mlir")
        for name, text, flags in CASES:
            with open(path, "w") as f:
                f.write(text)
            split = [] if name.startswith("no -split") or any(
                f.startswith("-split-input-file") for f in flags) else ["-split-input-file"]
            theirs = run(sdy_opt, split + flags, path)
            mine = run(args.opt, split + flags, path)
            ok = theirs == mine
            failed += not ok
            print("%s  %s" % ("ok  " if ok else "FAIL", name))
            if not ok:
                print("    sdy_opt:  failed=%s first error at %s\n%s" % (
                    theirs[0], theirs[2], theirs[1]))
                print("    shardlab: failed=%s first error at %s\n%s" % (
                    mine[0], mine[2], mine[1]))
    print("%d of %d inputs split, printed and placed as sdy_opt does" % (
        len(CASES) - failed, len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
