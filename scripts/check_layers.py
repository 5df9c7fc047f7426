#!/usr/bin/env python3
"""Fails when a file of the core includes a header of a layer it may not use.

    check_layers.py --root core LAYER=DEP,DEP ...

Each LAYER=DEPS names the layers LAYER uses directly (CMakeLists.txt
declares them once and passes them here); a layer may include headers of
those layers and, through them, of theirs. Files are core/src/LAYER/** and
core/include/shardlab/LAYER/**. Prints file:line: for each violation.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"shardlab/([a-z_]+)/')


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
                    used = match.group(1)
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
