#!/usr/bin/env python3
"""Counts the literals whose value changes when shardlab-opt reads and
prints a module, by element type, over folders of modules.

    constants_survive.py --opt build/shardlab-opt [--flags ...] DIR_OR_FILE...

Each module is printed with no pass (or with --flags); every dense literal
and scalar attribute of the source is looked for, with the same bits, in
the printed text (tests/values/mlir_literals.py reads both, independently
of shardlab's parser). Exits 1 when any value changed.
"""
import argparse
import collections
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlir_literals  # noqa: E402


def modules(paths):
    for path in paths:
        if os.path.isdir(path):
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames.sort()
                for name in sorted(filenames):
                    if name.endswith(".mlir"):
                        yield os.path.join(dirpath, name)
        else:
            yield path


def element_of(type_text):
    if type_text.startswith("tensor<"):
        return mlir_literals.tensor_shape(type_text)[0]
    return type_text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--opt", required=True)
    parser.add_argument("--flags", nargs="*", default=[])
    parser.add_argument("-v", action="store_true", help="name each module")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    changed, total = collections.Counter(), collections.Counter()
    failed = 0
    for path in modules(args.paths):
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            source = f.read()
        # split files: each chunk is a module of its own
        chunks = source.split("\n// -----\n")
        for chunk in chunks:
            try:
                lits = mlir_literals.literals(chunk)
            except (mlir_literals.LiteralError, ValueError, IndexError) as e:
                print("%s: the reader cannot read it: %s" % (path, e))
                continue
            if not lits:
                continue
            p = subprocess.run([args.opt, *args.flags, "-"], input=chunk.encode(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if p.returncode != 0:
                failed += 1
                continue
            for type_text, _ in lits:
                total[element_of(type_text)] += 1
            lost = mlir_literals.changed_literals(chunk, p.stdout.decode())
            for (type_text, _), n in lost.items():
                changed[element_of(type_text)] += n
            if lost and args.v:
                print("%s: %d changed" % (path, sum(lost.values())))
    print("%-14s %10s %10s" % ("element type", "literals", "changed"))
    for element in sorted(total):
        print("%-14s %10d %10d" % (element, total[element], changed[element]))
    print("%-14s %10d %10d" % ("total", sum(total.values()), sum(changed.values())))
    if failed:
        print("(%d modules or chunks did not parse and were not counted)" % failed)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
