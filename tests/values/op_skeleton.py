#!/usr/bin/env python3
"""An independent reader of a module's ops: for each op, in order, its name,
the names of its attributes and its result types. A round trip that keeps
a fixed point can still lose an attribute everywhere (a parser that drops
it and a printer that never prints it); comparing the source's skeleton with
the printed module's finds that.

Reads MLIR's pretty and generic forms line by line, as MLIR prints them and
as people write them: an op starts a line (`%0 = dialect.op ...`,
`dialect.op ...`, `"dialect.op"(...)`), attribute dictionaries and
properties sit on the op's own lines, a region opens at the end of a line
and closes at the start of one (`})`, `} do {`), where a generic op's type
signature may follow. Standard library only; shares no code with
shardlab's parser.

    python3 op_skeleton.py A.mlir [B.mlir]   # prints A's skeleton, or A vs B
"""
import re
import sys

OP_START = re.compile(
    r'^\s*(?:(%[\w$.#-]+(?::\d+)?(?:\s*,\s*%[\w$.#-]+(?::\d+)?)*)\s*=\s*)?'
    r'(?:"([a-z_][\w$.]*\.[\w$.]+)"|([a-z_][\w$]*\.[\w$.]+)|(module|call|return)(?![\w.]))')
# Ops of the func and builtin dialects written without their prefix.
SHORT = {"module": "builtin.module", "call": "func.call", "return": "func.return"}
NAME_EQ = re.compile(r'(?<![\w$.%@])([A-Za-z_][\w$.]*|"[^"]*")\s*=(?!=)')
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def strip_comment(line):
    in_string, i = False, 0
    while i < len(line):
        c = line[i]
        if c == "\\" and in_string:
            i += 2
            continue
        if c == '"':
            in_string = not in_string
        elif not in_string and line.startswith("//", i):
            return line[:i]
        i += 1
    return line


def top_level(text):
    """`text` with every bracketed span and string blanked out, same length."""
    out, depth, in_string, i = [], 0, False, 0
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                out.append("  ")
                i += 2
                continue
            if c == '"':
                in_string = False
            out.append(" ")
        elif c == '"':
            in_string = True
            out.append(" ")
        elif c in "<([{":
            depth += 1
            out.append(" " if depth > 1 or c != "{" else c)
        elif c in ">)]}":
            if c == ">" and i > 0 and text[i - 1] == "-":
                out.append(c if depth == 0 else " ")  # the arrow of `->`
            else:
                depth = max(0, depth - 1)
                out.append(" " if depth > 0 or c != "}" else c)
        else:
            out.append(c if depth == 0 else " ")
        i += 1
    return "".join(out)


def result_types(signature):
    """The result types of `: (ins) -> outs`, `: type`, `: (ins) -> (outs)`."""
    sig = signature.strip()
    flat = top_level(sig)
    arrow = flat.rfind("->")
    if arrow >= 0:
        sig = sig[arrow + 2:].strip()
    sig = re.sub(r"\s*loc\(.*$", "", sig)
    if sig.startswith("(") and sig.endswith(")"):
        sig = sig[1:-1]
    parts, depth, cur = [], 0, ""
    for c in sig:
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    return tuple(re.sub(r"\s+", " ", p) for p in parts)


def attribute_names(text):
    """Names written `name = ` in `text` (an op's own lines) in dictionaries
    and properties at any depth, and the keywords of custom forms at the top
    level; not inside an attribute's own body (`<...>`, `[...]`, `(...)`:
    a mesh's `device_ids=[...]` is part of the mesh)."""
    # A string's contents are not names (`backend_config = "a = 1"`), but a
    # quoted key is (`"x.y" = 1`).
    def blank(m):
        after = text[m.end():m.end() + 3].lstrip()
        return m.group(0) if after.startswith("=") and not after.startswith("==") else '""'
    text = STRING.sub(blank, text)
    in_dicts, stack, i = [], [], 0
    for i, c in enumerate(text):
        in_dicts.append(all(b in "{P" for b in stack))
        if c == "<" and text[i + 1:i + 2] == "{":
            stack.append("P")  # properties: `<{...}>`
        elif c in "<([{":
            stack.append(c)
        elif c in ">)]}" and stack and not (c == ">" and i and text[i - 1] == "-"):
            stack.pop()
    return [m.group(1).strip('"') for m in NAME_EQ.finditer(text) if in_dicts[m.start()]]


REGION_INTRO = re.compile(r"^(reducer\b|cond\s*\{)")
APPLIES = re.compile(r"\bapplies\s+([a-z_][\w$]*\.[\w$.]+)")


class Op:
    def __init__(self, name, results, generic=False):
        self.name = name
        self.results = results  # how many, from `%0:2 = ` / `%a, %b = `
        self.generic = generic  # written `"dialect.op"(...)`
        self.attrs = []
        self.types = ()

    def key(self):
        return (self.name, tuple(sorted(self.attrs)), self.types)

    def __repr__(self):
        return "%s attrs=%s types=%s" % (self.name, sorted(self.attrs), self.types)


def signature_of(own, name=""):
    """The result types in an op's own text (outside its regions)."""
    flat = top_level(own)
    colon = flat.rfind(" : ")
    if colon < 0:
        return ()
    types = result_types(own[colon + 3:])
    # StableHLO's select writes `: predicate type, result type`.
    if name == "stablehlo.select" and "->" not in flat[colon:] and len(types) == 2:
        return types[1:]
    return types


def depth(text):
    """Open brackets left in `text` (strings and the `->` arrow ignored)."""
    d, in_string, i = 0, False, 0
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "<([{":
            d += 1
        elif c in ">)]}" and not (c == ">" and i and text[i - 1] == "-"):
            d -= 1
        i += 1
    return d


def opens_region(op, own):
    """Whether an op's complete header `own` ends by opening a region. In the
    generic form a region opens with `({`; a lone `{` starts its attribute
    dictionary (which may go on over several lines)."""
    if op.generic:
        return own.endswith("({")
    return own.endswith("{")


ATTR_ENTRY = re.compile(r'^\s*(?:[A-Za-z_][\w$.]*|"[^"]*")\s*=')


def header_done(op, own, next_line=""):
    """Whether `own` holds an op's whole header (brackets closed, or only
    the region's brace open). A `{` ending a pretty op's line opens its
    attribute dictionary, not a region, when the next line is an entry."""
    if opens_region(op, own) and not (not op.generic and ATTR_ENTRY.match(next_line)):
        return depth(own[:-1]) <= (1 if op.generic else 0)
    return depth(own) <= 0


TYPE_ALIAS = re.compile(r"^\s*(![\w.$-]+)\s*=\s*(.+?)\s*$", re.M)


def resolve_aliases(ops, text):
    """Type aliases (`!t = tuple<...>`) spelled out in result types."""
    aliases = {m.group(1): m.group(2) for m in TYPE_ALIAS.finditer(text)}
    if not aliases:
        return ops
    for op in ops:
        op.types = tuple(aliases.get(t, t) for t in op.types)
    return ops


def skeleton(text):
    """[Op] of every op in `text`, in order (type aliases resolved)."""
    return resolve_aliases(skeleton_of_lines(text), strip_comments(text))


def strip_comments(text):
    return "\n".join(strip_comment(l) for l in text.split("\n"))


def skeleton_of_lines(text):
    ops, stack = [], []  # stack: (op, own text so far) of ops with open regions
    header = None  # (op, own text) of an op whose first lines are still open
    last = None    # (op, own) of the last op that ended without a region
    lines = [l for l in (strip_comment(r).rstrip() for r in text.split("\n")) if l.strip()]
    for index, line in enumerate(lines):
        stripped = line.strip()
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if header is None and last is not None and not OP_START.match(line) \
                and not stripped.startswith(("}", "^", "#", "!")):
            # The op goes on: `func.func @f(...) -> t` then `attributes {...} {`,
            # a reduce's `reducer(...) {`, a while's `cond {`, a signature on
            # its own line.
            header = last
        last = None
        if header is not None:
            op, own = header
            header = None
            if REGION_INTRO.match(stripped):
                stack.append((op, own.rstrip()))  # `reducer(...) {`, `cond {`
                continue
            own += " " + stripped
            if header_done(op, own, following):
                last = finish_header(op, own, stack)
            else:
                header = (op, own)
            continue
        if stripped.startswith("}") and stack:
            # `}`, `})`, `}) : (...) -> ...`, `} do {`, `}, {`, `}) {`
            op, own = stack[-1]
            rest = stripped[1:].strip()
            if rest.endswith("{") and not (op.generic and rest.startswith(")")):
                continue  # another region of the op: `} do {`, `}, {`
            stack.pop()
            own = (own + " " + (rest[1:] if op.generic and rest.startswith(")")
                                else rest)).rstrip()
            if not header_done(op, own):
                header = (op, own)  # `}) {` and a dictionary over lines
                continue
            op.attrs = attribute_names(own)
            op.types = signature_of(own, op.name)
            last = (op, own)
            continue
        m = OP_START.match(line)
        if not m:
            continue
        name = m.group(2) or m.group(3) or SHORT[m.group(4)]
        results = m.group(1) or ""
        count = 0
        for part in results.split(","):
            part = part.strip()
            if part:
                count += int(part.split(":")[1]) if ":" in part else 1
        op = Op(name, count, generic=bool(m.group(2)))
        ops.append(op)
        own = line[m.end():]
        applied = APPLIES.search(top_level(own))
        if applied:
            # `reduce(...) applies stablehlo.add`: the compact form of a body
            # of that op and a return, which the other text may spell out.
            ops.append(Op(APPLIES.search(own).group(1), 1))
            ops.append(Op("stablehlo.return", 0))
        if not header_done(op, own, following):
            header = (op, own)  # its first lines go on (a long signature)
            continue
        last = finish_header(op, own, stack)
    return ops


def finish_header(op, own, stack):
    """Files an op whose header `own` is complete: its region opens (pushed
    on `stack`), or it ends here; returns (op, own) in that case."""
    if opens_region(op, own):
        stack.append((op, own[:-2] if op.generic else own[:-1]))
        return None
    op.attrs = attribute_names(own)
    op.types = signature_of(own, op.name)
    return (op, own)


def without_implicit_module(ops):
    """A module written without `module {` prints with one: compare the ops
    inside it."""
    if ops and ops[0].name == "builtin.module" and not ops[0].attrs:
        return ops[1:]
    return ops


def compare(source, printed, ignore_attrs=()):
    """"" when the skeletons agree, else the first difference. Attributes
    whose names start with one of `ignore_attrs` are left out."""
    a, b = skeleton(source), skeleton(printed)
    if ignore_attrs:
        for op in a + b:
            op.attrs = [x for x in op.attrs if not x.startswith(tuple(ignore_attrs))]
    if not a or a[0].name != "builtin.module":
        b = without_implicit_module(b)
    for i, (x, y) in enumerate(zip(a, b)):
        if SHORT.get(x.name, x.name) != SHORT.get(y.name, y.name):
            return "op %d: %s in the source, %s printed" % (i, x.name, y.name)
        # The same op in its generic and its custom form names its inherent
        # attributes differently (`{limit_indices = ...}` / `[0:1]`).
        if x.generic == y.generic and sorted(x.attrs) != sorted(y.attrs):
            lost = sorted(set(x.attrs) - set(y.attrs))
            added = sorted(set(y.attrs) - set(x.attrs))
            return "op %d (%s): attributes %s lost, %s added" % (i, x.name, lost, added)
        if x.types and y.types and x.types != y.types:
            return "op %d (%s): result types %s, printed %s" % (i, x.name, x.types, y.types)
    if len(a) != len(b):
        return "%d ops in the source, %d printed" % (len(a), len(b))
    return ""


if __name__ == "__main__":
    texts = [open(p, encoding="utf-8").read() for p in sys.argv[1:3]]
    if len(texts) == 1:
        for op in skeleton(texts[0]):
            print(op)
    else:
        why = compare(*texts)
        print(why or "same skeleton")
        sys.exit(1 if why else 0)
