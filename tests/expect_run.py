#!/usr/bin/env python3
"""Runs a command and checks both its exit status and its output.

ctest's PASS_REGULAR_EXPRESSION ignores the exit status (a crash after the
matching line passes); this wrapper fails unless the status is the expected
one AND every --regex matches the combined stdout+stderr.

  expect_run.py --exit 1 --regex 'error: no CUDA device' -- prog --flag
"""
import argparse
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exit", type=int, required=True, help="expected exit status")
    ap.add_argument("--regex", action="append", default=[], help="must match the output")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command given")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    out = proc.stdout.decode("utf-8", "replace")
    sys.stdout.write(out)
    problems = []
    if proc.returncode != args.exit:
        problems.append("exit status %d, expected %d" % (proc.returncode, args.exit))
    problems += ["output does not match /%s/" % r for r in args.regex if not re.search(r, out)]
    for p in problems:
        print("expect_run: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
