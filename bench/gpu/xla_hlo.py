"""The kernels in XLA's optimized HLO text (what `compiled.as_text()` prints
for a GPU executable), for issue 46's fusion comparison.

A kernel is an instruction of an executed computation (ENTRY, a while loop's
body and condition, a conditional's branches, a `call`ed computation) that
XLA's GPU backend launches: a `fusion` (kind kLoop, kInput, kOutput or
kCustom: Triton GEMMs, cuDNN fusions), a `custom-call` (cuBLAS, cuDNN), a
collective, or an op left unfused (copy, sort, ...). Instructions inside
fused computations are the fusion's members, not kernels; parameters,
constants, tuples, bitcasts and control flow launch nothing.

Bytes of a kernel are its boundary: the operand shapes printed in its operand
list plus its result shape(s), as XLA's cost model reads a fusion (a cuBLAS or
cuDNN call's scratch workspace, its last s8 result, is not counted).

Worked example (two kernels, 4 MiB + 4 MiB + 4 MiB, then a cuBLAS call):

    ENTRY %main (p0: f32[1024,1024], p1: f32[1024,1024]) -> f32[1024,1024] {
      %p0 = f32[1024,1024]{1,0} parameter(0)
      %p1 = f32[1024,1024]{1,0} parameter(1)
      %fusion = f32[1024,1024]{1,0} fusion(f32[1024,1024]{1,0} %p0,
          f32[1024,1024]{1,0} %p1), kind=kLoop, calls=%fused_add
      ROOT %gemm = f32[1024,1024]{1,0} custom-call(...), custom_call_target="__cublas$gemm"
    }
"""
import json
import re

ELEMENT_BYTES = {
    "pred": 1, "s4": 0.5, "u4": 0.5, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "s32": 4, "u32": 4,
    "s64": 8, "u64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8, "c64": 8, "c128": 16,
    "f8e4m3fn": 1, "f8e5m2": 1, "f8e4m3": 1, "f8e4m3fnuz": 1, "f8e5m2fnuz": 1, "f8e4m3b11fnuz": 1,
    "f8e3m4": 1, "f8e8m0fnu": 1, "f4e2m1fn": 0.5, "token": 0,
}
SHAPE = re.compile(r"\b(" + "|".join(sorted(ELEMENT_BYTES, key=len, reverse=True)) + r")\[([0-9,]*)\]")
COMPUTATION = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s*(\(.*\))?\s*->.*\{\s*$")
INSTRUCTION = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
# Opcodes that launch nothing on the GPU.
NO_KERNEL = {
    "parameter", "constant", "get-tuple-element", "tuple", "bitcast", "while", "conditional",
    "call", "after-all", "add-dependency", "opt-barrier", "partition-id", "replica-id",
    "all-reduce-done", "all-gather-done", "collective-permute-done", "async-done", "async-update",
    "copy-done", "send-done", "recv-done", "domain", "get-dimension-size", "iota-nop",
}
COLLECTIVES = {
    "all-reduce", "all-reduce-start", "all-gather", "all-gather-start", "reduce-scatter",
    "all-to-all", "collective-permute", "collective-permute-start", "send", "recv",
    "collective-broadcast", "ragged-all-to-all",
}


def shape_bytes(text):
    """Bytes of every array shape written in `text` (a type or an operand list)."""
    total = 0
    for dtype, dims in SHAPE.findall(text):
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * ELEMENT_BYTES[dtype]
    return int(total)


def split_type_and_opcode(rhs):
    """'f32[2]{0} fusion(f32[2]{0} %a), kind=kLoop' -> ('f32[2]{0}', 'fusion', rest)."""
    depth, i = 0, 0
    # The result type ends at the first space outside parentheses/braces/brackets.
    while i < len(rhs):
        c = rhs[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == " " and depth == 0:
            break
        i += 1
    result_type, rest = rhs[:i], rhs[i:].lstrip()
    m = re.match(r"([\w\-$]+)\(", rest)
    if not m:
        return result_type, rest.split(" ")[0], "", ""
    opcode = m.group(1)
    # The operand list: up to the parenthesis closing the opcode's.
    depth, j = 0, m.end() - 1
    while j < len(rest):
        if rest[j] == "(":
            depth += 1
        elif rest[j] == ")":
            depth -= 1
            if depth == 0:
                break
        j += 1
    return result_type, opcode, rest[m.end():j], rest[j + 1:]


def parse(text):
    """{computation name: {"entry": bool, "instructions": [dict]}} of an HLO module text."""
    comps, current = {}, None
    pending = ""
    for raw in text.split("\n"):
        line = raw.rstrip()
        if current is None:
            m = COMPUTATION.match(line.strip())
            if m:
                current = m.group(2)
                comps[current] = {"entry": bool(m.group(1)), "instructions": []}
            continue
        if line.strip() == "}":
            current = None
            continue
        pending = (pending + " " + line.strip()) if pending else line
        if pending.count("(") > pending.count(")"):
            continue  # an instruction continued on the next line
        m = INSTRUCTION.match(pending)
        pending = ""
        if not m:
            continue
        result_type, opcode, operands, attrs = split_type_and_opcode(m.group(3))
        comps[current]["instructions"].append({
            "name": m.group(2), "root": bool(m.group(1)), "opcode": opcode,
            "result_type": result_type, "operands": operands, "attrs": attrs})
    return comps


def operand_bytes(ins, result_types):
    """Bytes of an instruction's operands: their printed shapes, or, where the
    text prints names only, the result types of the instructions named."""
    if SHAPE.search(ins["operands"]):
        return shape_bytes(ins["operands"])
    return sum(shape_bytes(result_types.get(n, "")) for n in re.findall(r"%([\w.\-]+)", ins["operands"]))


def _called(attrs, key):
    m = re.search(key + r"=%?([\w.\-]+)", attrs)
    return m.group(1) if m else None


def _trip_count(attrs):
    m = re.search(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(\d+)', attrs)
    return int(m.group(1)) if m else None


def kernels(text):
    """The kernels of a module, each with the times it runs (loop trips).

    Returns a list of {name, computation, opcode, kind, bytes, runs}: kind is
    the fusion kind (kLoop, kInput, kOutput, kCustom), the custom-call
    target, "collective", or the opcode of an unfused op."""
    comps = parse(text)
    types = {c: {i["name"]: i["result_type"] for i in comp["instructions"]} for c, comp in comps.items()}
    entry = next((n for n, c in comps.items() if c["entry"]), None)
    out = []

    def walk(name, runs, seen):
        if name not in comps or name in seen:
            return
        seen = seen | {name}
        for ins in comps[name]["instructions"]:
            op, attrs = ins["opcode"], ins["attrs"]
            if op == "while":
                trips = _trip_count(attrs)
                walk(_called(attrs, "body"), runs * (trips or 1), seen)
                walk(_called(attrs, "condition"), runs * ((trips or 1) + 1), seen)
                continue
            if op == "conditional":
                m = re.search(r"branch_computations=\{([^}]*)\}", attrs)
                branches = (re.findall(r"%?([\w.\-]+)", m.group(1)) if m else
                            [_called(attrs, "true_computation"), _called(attrs, "false_computation")])
                for branch in branches:
                    walk(branch, runs, seen)
                continue
            if op in ("call", "async-start"):
                # The called computation's ops are the kernels (an async
                # collective or fusion runs there); the call launches nothing.
                walk(_called(attrs, "to_apply") or _called(attrs, "calls"), runs, seen)
                continue
            if op in NO_KERNEL:
                continue
            if op == "fusion":
                m = re.search(r"kind=(k\w+)", attrs)
                kind = m.group(1) if m else "fusion"
            elif op == "custom-call":
                m = re.search(r'custom_call_target="([^"]+)"', attrs)
                kind = m.group(1) if m else "custom-call"
            elif op in COLLECTIVES:
                kind = "collective"
            else:
                kind = op
            result = ins["result_type"]
            if op == "custom-call" and result.startswith("("):
                # A cuBLAS/cuDNN call's last result is its scratch workspace
                # (s8[...]), not data it moves.
                result = re.sub(r",\s*s8\[\d+\](\{[^}]*\})?\)$", ")", result)
            out.append({"name": ins["name"], "computation": name, "opcode": op, "kind": kind,
                        "bytes": shape_bytes(result) + operand_bytes(ins, types[name]),
                        "runs": runs})

    if entry:
        walk(entry, 1, frozenset())
    return out


def summary(text):
    """Counts of a module's kernels: static, executed (loop trips), per kind, bytes."""
    ks = kernels(text)
    per_kind = {}
    for k in ks:
        per_kind[k["kind"]] = per_kind.get(k["kind"], 0) + k["runs"]
    # Memory-bound kernels: what is left once GEMMs and library calls
    # (custom calls, kCustom fusions: Triton GEMMs, cuDNN) and collectives
    # are set aside, the part a fusion decision changes.
    memory_bound = [k for k in ks if k["opcode"] != "custom-call" and k["kind"] not in ("kCustom", "collective")]
    return {"static": len(ks), "executed": sum(k["runs"] for k in ks), "per_kind": per_kind,
            "bytes": sum(k["bytes"] * k["runs"] for k in ks),
            "memory_bound_bytes": sum(k["bytes"] * k["runs"] for k in memory_bound)}


if __name__ == "__main__":
    import sys
    print(json.dumps(summary(open(sys.argv[1]).read()), indent=1))
