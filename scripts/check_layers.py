#!/usr/bin/env python3
"""Fails when a file of the core includes a header of a layer it may not use.

    check_layers.py --root core LAYER=DEP,DEP ...

Each LAYER=DEPS names the layers LAYER uses directly (CMakeLists.txt
declares them once and passes them here); a layer may include headers of
those layers and, through them, of theirs. Files are core/src/LAYER/** and
core/include/shardlab/LAYER/**; a public header (core/include) may not
include a private one (core/src/LAYER/x.h, spelled "LAYER/x.h"), since it
is not installed. Prints file:line: for each violation.
"""
import argparse
import pathlib
import re
import sys

# "shardlab/LAYER/x.h" (a public header) or "LAYER/x.h" (a private one,
# core/src/LAYER/x.h).
INCLUDE = re.compile(r'^\s*#\s*include\s+"(shardlab/)?([a-z_]+)/')


def closure(deps):
    allowed = {}
    for layer in deps:
        seen, todo = {layer}, list(deps[layer])
        while todo:
            dep = todo.pop()
            if dep not in seen:
                seen.add(dep)
                todo.extend(deps.get(dep, []))
        allowed[layer] = seen
    return allowed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True, type=pathlib.Path)
    parser.add_argument("layers", nargs="+", metavar="LAYER=DEPS")
    args = parser.parse_args()
    deps = {}
    for spec in args.layers:
        layer, _, names = spec.partition("=")
        deps[layer] = [n for n in names.split(",") if n]
    allowed = closure(deps)
    problems = []
    for layer in deps:
        dirs = [args.root / "src" / layer, args.root / "include" / "shardlab" / layer]
        for folder in dirs:
            for path in sorted(folder.rglob("*")):
                if path.suffix not in (".h", ".cpp"):
                    continue
                for number, line in enumerate(path.read_text().splitlines(), 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    public, used = match.group(1), match.group(2)
                    if not public and "include" in path.relative_to(args.root).parts[:1]:
                        problems.append(
                            f"{path}:{number}: a public header includes the private "
                            f"header '{used}/...': move that header to "
                            f"core/include/shardlab/ or do not include it here")
                        continue
                    if used not in deps:
                        problems.append(f"{path}:{number}: unknown layer '{used}'")
                    elif used not in allowed[layer]:
                        problems.append(
                            f"{path}:{number}: layer '{layer}' may not include "
                            f"'{used}' (it uses: {', '.join(sorted(allowed[layer] - {layer})) or 'nothing'};"
                            f" declared in CMakeLists.txt SHARDLAB_LAYER_DEPS_{layer})")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check_layers: {len(problems)} layering violation(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
