#!/usr/bin/env python3
"""Builds a module that checks gen_training_step.py's --layout fsdp-flat
step against its --layout dp step: both are called on the same weights
(the flat step on the embedding flattened and padded, and on each layer's
weights flattened one after another and padded), and for each gradient
the largest difference relative to the larger of its own largest value and
1e-3 of the largest of all (the tolerance floor of rounding noise, see
check_training_step_partition.py) is checked to be below 1e-5 with a
`check.expect_almost_eq_const`, which shardlab-run reports (a sum over
devices in another order differs by about 1e-6 of that). --misalign puts
each weight's padding in front instead of behind: a flat step that reads
its shards at the wrong offsets, which the checks must catch.

  python3 tests/schedule/flat_fsdp_equivalence.py DP.mlir FLAT.mlir -o OUT.mlir
"""
import argparse
import functools
import re
import sys

SIGNATURE = re.compile(r"func\.func @main\((.*?)\)\s*->\s*\((.*?)\)\s*\{", re.S)
ARG = re.compile(r"%(\w+): (tensor<[^>]*>)( \{sdy\.sharding = [^}]*\}\s*\})?")


def shape_of(t):
    parts = t[len("tensor<"):-1].split("x")
    return [int(p) for p in parts[:-1]], parts[-1]


def tensor(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def split(text):
    """(mesh line, signature args [(name, type, attr)], result types, the
    function renamed)."""
    mesh = next(l for l in text.splitlines() if l.startswith("sdy.mesh"))
    m = SIGNATURE.search(text)
    args = [(a.group(1), a.group(2), a.group(3) or "") for a in ARG.finditer(m.group(1))]
    results = re.findall(r"tensor<[^>]*>", m.group(2))
    body = text[text.index("func.func @main"):]
    return mesh, args, results, body


class Writer:
    def __init__(self, misalign=False):
        self.lines, self.n, self.misalign = [], 0, misalign

    def op(self, text):
        self.n += 1
        name = f"%v{self.n}"
        self.lines.append(f"  {name} = {text}")
        return name

    def flatten(self, values, types, padded_type):
        """Tensors [L, ...] (or [...]) flattened to [L, n] (or [n]), one
        after another, zero-padded to `padded_type`."""
        pshape, dtype = shape_of(padded_type)
        lead = pshape[:-1]
        flats = []
        for value, t in zip(values, types):
            shape, _ = shape_of(t)
            n = functools.reduce(lambda a, b: a * b, shape[len(lead):], 1)
            flat_t = tensor(lead + [n], dtype)
            flats.append((self.op(f"stablehlo.reshape {value} : ({t}) -> {flat_t}"), flat_t, n))
        total = sum(n for _, _, n in flats)
        whole_t = tensor(lead + [total], dtype)
        whole = flats[0][0] if len(flats) == 1 else self.op(
            f"stablehlo.concatenate {', '.join(v for v, _, _ in flats)}, dim = {len(lead)} : "
            f"({', '.join(t for _, t, _ in flats)}) -> {whole_t}")
        zero = self.op(f"stablehlo.constant dense<0.0> : tensor<{dtype}>")
        none = ", ".join("0" for _ in pshape)
        low, high = none, ", ".join("0" for _ in lead) + ("," if lead else "") + f" {pshape[-1] - total}"
        if self.misalign:
            low, high = high, low
        return self.op(f"stablehlo.pad {whole}, {zero}, low = [{low}], high = [{high}], interior = [{none}] : "
                       f"({whole_t}, tensor<{dtype}>) -> {padded_type}")

    def unflatten(self, value, padded_type, types):
        """The tensors of `types`, cut one after another from a flat value."""
        pshape, dtype = shape_of(padded_type)
        lead = pshape[:-1]
        out, offset = [], 0
        for t in types:
            shape, _ = shape_of(t)
            n = functools.reduce(lambda a, b: a * b, shape[len(lead):], 1)
            flat_t = tensor(lead + [n], dtype)
            limits = ", ".join([f"0:{d}" for d in lead] + [f"{offset}:{offset + n}"])
            s = self.op(f"stablehlo.slice {value} [{limits}] : ({padded_type}) -> {flat_t}")
            out.append(self.op(f"stablehlo.reshape {s} : ({flat_t}) -> {t}"))
            offset += n
        return out

    def largest(self, value, t):
        """max |value| as tensor<f32>."""
        shape, dtype = shape_of(t)
        a = self.op(f"stablehlo.abs {value} : {t}")
        zero = self.op("stablehlo.constant dense<0.0> : tensor<f32>")
        dims = ", ".join(str(i) for i in range(len(shape)))
        return self.op(f"stablehlo.reduce({a} init: {zero}) applies stablehlo.maximum across dimensions = [{dims}] "
                       f": ({t}, tensor<f32>) -> tensor<f32>")


def build(dp_text, flat_text, misalign=False):
    mesh, dp_args, dp_results, dp_body = split(dp_text)
    _, flat_args, flat_results, flat_body = split(flat_text)
    w = Writer(misalign)
    names = [f"%{n}" for n, _, _ in dp_args]
    w.lines.append(f"  %dp:{len(dp_results)} = func.call @dp_step({', '.join(names)}) : "
                   f"({', '.join(t for _, t, _ in dp_args)}) -> ({', '.join(dp_results)})")
    # The flat step's arguments: g_tokens, g_embed and g_layers, then the
    # states' (m_, v_): each from the dp step's of the same name, or for
    # "layers" from every stacked weight of its prefix, in order.
    by_name = {n: t for n, t, _ in dp_args}
    flat_in = []
    for name, ft, _ in flat_args:
        name = name[len("g_"):]
        if name.endswith("layers"):
            prefix = name[:-len("layers")]
            group = [n for n, _, _ in dp_args if n.startswith(prefix) and n[len(prefix):] not in
                     ("tokens", "embed") and (prefix or not n.startswith(("m_", "v_")))]
            flat_in.append(w.flatten([f"%{n}" for n in group], [by_name[n] for n in group], ft))
        elif by_name[name] == ft:
            flat_in.append(f"%{name}")
        else:
            flat_in.append(w.flatten([f"%{name}"], [by_name[name]], ft))
    w.lines.append(f"  %flat:{len(flat_results)} = func.call @flat_step({', '.join(flat_in)}) : "
                   f"({', '.join(t for _, t, _ in flat_args)}) -> ({', '.join(flat_results)})")
    # The results (the gradients): the embedding's, then the layers' buffer
    # against every stacked weight's.
    if len(flat_results) != 2 or len(dp_results) < 2:
        raise SystemExit("expected the gradients of --optimizer none: the embedding's and the layers'")
    got = w.unflatten("%flat#0", flat_results[0], dp_results[:1]) + \
        w.unflatten("%flat#1", flat_results[1], dp_results[1:])
    pairs = [(f"%dp#{i}", g, t) for i, (g, t) in enumerate(zip(got, dp_results))]
    scales = [w.largest(want, t) for want, _, t in pairs]
    overall = scales[0]
    for s in scales[1:]:
        overall = w.op(f"stablehlo.maximum {overall}, {s} : tensor<f32>")
    thousandth = w.op("stablehlo.constant dense<1.0e-3> : tensor<f32>")
    floor = w.op(f"stablehlo.multiply {overall}, {thousandth} : tensor<f32>")
    for (want, got, t), scale in zip(pairs, scales):
        diff = w.op(f"stablehlo.subtract {want}, {got} : {t}")
        worst = w.largest(diff, t)
        denominator = w.op(f"stablehlo.maximum {scale}, {floor} : tensor<f32>")
        ratio = w.op(f"stablehlo.divide {worst}, {denominator} : tensor<f32>")
        w.lines.append(f"  stablehlo.custom_call @check.expect_almost_eq_const({ratio}) {{has_side_effect = true, "
                       f"value = dense<0.0> : tensor<f32>, tolerance = 1.0e-5 : f64}} : (tensor<f32>) -> ()")
    arg_text = ",\n    ".join(f"%{n}: {t}{attr}" for n, t, attr in dp_args)
    out = [mesh,
           dp_body.replace("func.func @main", "func.func private @dp_step", 1),
           flat_body.replace("func.func @main", "func.func private @flat_step", 1),
           f"func.func @main({arg_text}) {{"] + w.lines + ["  return", "}"]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dp")
    ap.add_argument("flat")
    ap.add_argument("--misalign", action="store_true")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    with open(a.dp) as f:
        dp_text = f.read()
    with open(a.flat) as f:
        flat_text = f.read()
    with open(a.output, "w") as f:
        f.write(build(dp_text, flat_text, a.misalign))
    return 0


if __name__ == "__main__":
    sys.exit(main())
