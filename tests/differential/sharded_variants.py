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

A runnable variant (`runnable=True`: the same mesh and shardings) is one
whose program for one device can run and check itself, as
partition_check's replicateCheckOperands makes it in shardlab-run:
  - the inputs are constrained in `@main`, on the results of its call to
    `@inputs()`, so that Shardy's sdy_opt, which fails on a constraint of
    a value no sharding reaches inside a private function ("collective on
    operand without sharding"), partitions it;
  - each check.* op reads its operands replicated (a sharding_constraint
    on each), so that every device compares the whole value with JAX's,
    and a `check.eq` custom call is marked as having an effect, so that no
    pipeline drops it as dead code.

    sharded_variants.py [--runnable] FILE.mlir SEED   # prints the variant
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


def input_constraints(rng, mesh, pad, values, types):
    """(constraint lines, the values that replace `values`): a random
    sharding_constraint on each static value but about one in five."""
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
    return added, new_values


def constrain_inputs(lines, rng, mesh):
    """The constraints just before `@inputs()`'s return."""
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
    added, new_values = input_constraints(rng, mesh, pad, values, types)
    lines[ret:ret] = added
    ret += len(added)
    lines[ret] = "%sreturn %s : %s" % (pad, ", ".join(new_values), m.group(3))


CALL_INPUTS = re.compile(r"^(\s*)(%[\w.$-]+)(?::(\d+))? = (?:func\.)?call @inputs\(\) : "
                         r"\(\) -> (.*)$")


def constrain_inputs_in_main(lines, rng, mesh):
    """The same constraints (the same draws) on the results of `@main`'s
    call to `@inputs()`, each later use in `@main` reading the constraint."""
    span = function_span(lines, "main")
    if not span or not function_span(lines, "inputs"):
        return
    first, last = span
    for i in range(first + 1, last):
        m = CALL_INPUTS.match(lines[i])
        if not m:
            continue
        pad, result, count, types = m.groups()
        types = types.strip()
        if types.startswith("(") and types.endswith(")"):
            types = types[1:-1]
        types = split_top(types)
        values = (["%s#%d" % (result, k) for k in range(int(count))] if count
                  else [result])
        if len(values) != len(types):
            return
        added, new_values = input_constraints(rng, mesh, pad, values, types)
        for j in range(i + 1, last):
            for old, new in zip(values, new_values):
                if old != new:
                    lines[j] = re.sub(re.escape(old) + r"(?![\w#.$-])", new, lines[j])
        lines[i + 1:i + 1] = added
        return


CHECK = re.compile(r"^(\s*)((?:%[\w.$#:-]+ = )?)(stablehlo\.custom_call @check\.\w+|\"check\.\w+\")"
                   r"\(([^()]*)\)(.*) : \((.*)\) -> (.*)$")


def replicate_check_operands(lines):
    """Each check op's static operands through a replicated constraint; a
    check custom call marked as having an effect."""
    out, count = [], 0
    for line in lines:
        m = CHECK.match(line)
        operands = split_top(m.group(4)) if m and m.group(4).strip() else []
        types = split_top(m.group(6)) if m else []
        if not m or len(operands) != len(types):
            out.append(line)
            continue
        pad, result, callee, _, attrs, _, result_type = m.groups()
        reads = []
        for value, type_text in zip(operands, types):
            dims = static_dims(type_text)
            if dims is None:
                reads.append(value.strip())
                continue
            name = "%%check_operand%d" % count
            count += 1
            out.append("%s%s = sdy.sharding_constraint %s <@mesh, [%s]> : %s" % (
                pad, name, value.strip(), ", ".join(["{}"] * len(dims)), type_text.strip()))
            reads.append(name)
        if callee.startswith("stablehlo.custom_call") and "has_side_effect" not in attrs:
            inner = attrs.strip()
            attrs = (" {has_side_effect = true}" if not inner else
                     " {has_side_effect = true, %s" % inner.lstrip("{").lstrip())
        out.append("%s%s%s(%s)%s : (%s) -> %s" % (
            pad, result, callee, ", ".join(reads), attrs, m.group(6), result_type))
    lines[:] = out


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


def self_checking(text):
    """Whether `text` runs as it is: its @main takes no arguments (JAX's
    self-checking modules; one with dynamic shapes takes its inputs)."""
    return re.search(r"func\.func\s+(?:public\s+)?@main\(\)", text) is not None


def variant(text, seed, runnable=False):
    """The sharded variant of module `text` for `seed` (runnable: see the
    module's doc), or None when the module has no `module {` to put a mesh
    in."""
    rng = random.Random(seed)
    mesh = Mesh(rng)
    lines = text.split("\n")
    if not add_mesh(lines, mesh):
        return None
    if runnable:
        constrain_inputs_in_main(lines, rng, mesh)
        replicate_check_operands(lines)
    else:
        constrain_inputs(lines, rng, mesh)
    shard_main(lines, rng, mesh)
    return "\n".join(lines)


if __name__ == "__main__":
    args = sys.argv[1:]
    runnable = "--runnable" in args
    args = [a for a in args if a != "--runnable"]
    with open(args[0], encoding="utf-8") as f:
        out = variant(f.read(), int(args[1]), runnable)
    print(out if out is not None else "(no variant)")
