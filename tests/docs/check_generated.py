#!/usr/bin/env python3
"""Fails when a generated document differs from what its generator prints.

    check_generated.py DOC -- COMMAND...

runs COMMAND, compares its stdout with DOC and, on a difference, prints a
unified diff and the command that regenerates DOC. With --write it writes
DOC instead (atomically).
"""
import difflib
import os
import subprocess
import sys
import tempfile


def main(argv):
    write = "--write" in argv
    argv = [a for a in argv if a != "--write"]
    if "--" not in argv or argv.index("--") != 1:
        print(__doc__, file=sys.stderr)
        return 2
    doc, command = argv[0], argv[2:]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{' '.join(command)} exited {run.returncode}:\n{run.stderr}",
              file=sys.stderr)
        return 1
    if write:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(doc)))
        with os.fdopen(fd, "w") as out:
            out.write(run.stdout)
        os.replace(tmp, doc)
        return 0
    try:
        with open(doc) as f:
            current = f.read()
    except FileNotFoundError:
        current = ""
    if current == run.stdout:
        print(f"{doc}: up to date")
        return 0
    sys.stdout.writelines(difflib.unified_diff(
        current.splitlines(True), run.stdout.splitlines(True),
        fromfile=doc, tofile="generated"))
    print(f"\n{doc} is stale; regenerate it with:\n  {' '.join(command)} > {doc}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
