#!/usr/bin/env python3
"""Seeded sharded variants of modules that carry no sharding.

The shared corpus (../shared/corpus/stablehlo-testdata) holds JAX-exported
modules without a mesh or a sharding. A variant adds, deterministically from
a seed:
  - a mesh `@mesh` of one to three axes ("a", "b", "c") of sizes 2, 4 or 8
    (at most 32 devices), sometimes with a permutation of device ids;
  - a `sdy.sharding_constraint` on each value `@inputs()` returns (where the
    module has that function), just before its return;
  - a sharding on each result of `@main` (and on its arguments, when it has
    any), in its attribute dictionary.
Each sharding picks, per dimension, no axis, an axis, a sub-axis ("b":(1)2
of an axis of size 4 or 8) or two axes; dimensions are closed or open, some
with a priority, some shardings have replicated axes. Sizes need not divide.

    sharded_variants.py FILE.mlir SEED   # prints the variant
"""
import random
import re
import sys

TENSOR = re.compile(r"^tensor<((?:\d+x)*)([^<>]*(?:<[^<>]*>)?)>$")
AXES = ["a", "b", "c"]


def split_top(text, sep=","):
    """`text` split at `sep` outside brackets and strings."""
    parts, depth, cur, in_string = [], 0, "", False
    for c in text:
        if in_string:
            cur += c
            if c == '"':
                in_string = False
            continue
        if c == '"':
            in_string = True
        elif c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return parts


def static_dims(type_text):
    """The dims of a static ranked tensor type, else None."""
    m = TENSOR.match(type_text.strip())
    if not m or "?" in type_text:
        return None
    return [int(d) for d in m.group(1).split("x") if d]


class Mesh:
    def __init__(self, rng):
        count = rng.randint(1, 3)
        self.sizes = {}
        total = 1
        for name in AXES[:count]:
            size = rng.choice([2, 4, 8] if total <= 4 else [2])
            if total * size > 32:
                break
            self.sizes[name] = size
            total *= size
        self.device_ids = None
        if rng.random() < 0.2 and total > 1:
            ids = list(range(total))
            rng.shuffle(ids)
            self.device_ids = ids

    def text(self):
        axes = ", ".join('"%s"=%d' % kv for kv in self.sizes.items())
        ids = ", device_ids=[%s]" % ", ".join(map(str, self.device_ids)) if self.device_ids else ""
        return "sdy.mesh @mesh = <[%s]%s>" % (axes, ids)


def random_sharding(rng, mesh, rank):
    """The body of a sharding (`[{"a"}, {?}], replicated={"b"}`) for `rank`."""
    free = list(mesh.sizes)
    rng.shuffle(free)
    dims = []
    for _ in range(rank):
        axes = []
        roll = rng.random()
        if free and roll < 0.55:
            name = free.pop()
            size = mesh.sizes[name]
            if size >= 4 and rng.random() < 0.3:
                pre = rng.choice([1, 2]) if size >= 8 else 1
                axes.append('"%s":(%d)2' % (name, pre))
            else:
                axes.append('"%s"' % name)
            if free and rng.random() < 0.2:
                axes.append('"%s"' % free.pop())
        is_open = rng.random() < 0.3
        body = ", ".join(axes + (["?"] if is_open else []))
        priority = "p%d" % rng.randint(0, 2) if axes and rng.random() < 0.2 else ""
        dims.append("{%s}%s" % (body, priority))
    replicated = ""
    if free and rng.random() < 0.15:
        replicated = ', replicated={"%s"}' % free.pop()
    return "[%s]%s" % (", ".join(dims), replicated)


def add_mesh(lines, mesh):
    for i, line in enumerate(lines):
        if line.lstrip().startswith("module") and line.rstrip().endswith("{"):
            lines.insert(i + 1, "  " + mesh.text())
            return True
    return False


def function_span(lines, name):
    """(first, last) line indexes of func @name (its header and closing brace)."""
    for i, line in enumerate(lines):
        if re.search(r"func\.func\s+(public\s+|private\s+)?@%s\(" % re.escape(name), line):
            pad = len(line) - len(line.lstrip())
            for j in range(i + 1, len(lines)):
                if lines[j].startswith(" " * pad + "}") and len(lines[j]) - len(lines[j].lstrip()) == pad:
                    return i, j
    return None


def constrain_inputs(lines, rng, mesh):
    span = function_span(lines, "inputs")
    if not span:
        return
    first, last = span
    ret = last - 1
    m = re.match(r"^(\s*)return (.*) : (.*)$", lines[ret])
    if not m:
        return
    pad, values, types = m.group(1), split_top(m.group(2)), split_top(m.group(3))
    if len(values) != len(types):
        return
    new_values, added = [], []
    for k, (value, type_text) in enumerate(zip(values, types)):
        dims = static_dims(type_text)
        if dims is None or rng.random() < 0.2:
            new_values.append(value.strip())
            continue
        name = "%%sharded_input%d" % k
        added.append("%s%s = sdy.sharding_constraint %s <@mesh, %s> : %s" % (
            pad, name, value.strip(), random_sharding(rng, mesh, len(dims)), type_text.strip()))
        new_values.append(name)
    lines[ret:ret] = added
    ret += len(added)
    lines[ret] = "%sreturn %s : %s" % (pad, ", ".join(new_values), m.group(3))


def with_sharding(entry, rng, mesh):
    """A result or argument `type {attrs}` / `%a: type {attrs}` with a sharding."""
    text = entry.strip()
    head = text
    attrs = ""
    m = re.match(r"^(.*?)\s*(\{.*\})\s*(loc\(.*\))?$", text)
    if m and m.group(2).startswith("{"):
        head, attrs = m.group(1), m.group(2)
    type_text = head.split(":", 1)[1].strip() if head.startswith("%") else head
    dims = static_dims(type_text)
    if dims is None or rng.random() < 0.25:
        return entry
    sharding = "sdy.sharding = #sdy.sharding<@mesh, %s>" % random_sharding(rng, mesh, len(dims))
    if attrs:
        inner = attrs[1:-1].strip()
        attrs = "{%s}" % (inner + ", " + sharding if inner else sharding)
    else:
        attrs = "{%s}" % sharding
    tail = (" " + m.group(3)) if m and m.group(3) else ""
    return " %s %s%s" % (head, attrs, tail)


def shard_main(lines, rng, mesh):
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*func\.func\s+(?:public\s+)?@main\()(.*)$", line)
        if not m:
            continue
        rest = m.group(2)
        # args up to the matching ')'
        depth, j = 1, 0
        while j < len(rest) and depth:
            depth += {"(": 1, ")": -1}.get(rest[j], 0) if rest[j] in "()" else 0
            j += 1
        args, after = rest[:j - 1], rest[j - 1:]
        if args.strip():
            args = ",".join(with_sharding(a, rng, mesh) for a in split_top(args)).strip()
        r = re.match(r"^\)\s*->\s*\((.*)\)\s*\{\s*$", after)
        if r:
            results = ",".join(with_sharding(x, rng, mesh) for x in split_top(r.group(1))).strip()
            after = ") -> (%s) {" % results
        else:
            r = re.match(r"^\)\s*->\s*([^{(][^{]*?)\s*\{\s*$", after)
            if r:
                after = ") -> (%s) {" % with_sharding(r.group(1), rng, mesh).strip()
        lines[i] = m.group(1) + args + after
        return


def variant(text, seed):
    """The sharded variant of module `text` for `seed`, or None when the
    module has no `module {` to put a mesh in."""
    rng = random.Random(seed)
    mesh = Mesh(rng)
    lines = text.split("\n")
    if not add_mesh(lines, mesh):
        return None
    constrain_inputs(lines, rng, mesh)
    shard_main(lines, rng, mesh)
    return "\n".join(lines)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        out = variant(f.read(), int(sys.argv[2]))
    print(out if out is not None else "(no variant)")
