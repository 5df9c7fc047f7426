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

With a "tp" axis, a weight the dp step splits over "tp" (its argument's
sharding says on which dimension) goes to the flat step's "_tp" buffer,
each tensor-parallel rank's part as a row: [L, ..., F, ...] is cut into
[L, ..., tp, F / tp, ...], the rank moved after L and the rest flattened,
so that row t holds rank t's part of every split weight. --swap-ranks
puts the ranks' rows in the other order (a flat step
that gives each rank another rank's columns).

--same-arguments compares two steps that take the same arguments (the
second's may be named g_...) and return the same gradients, positionally:
--reduce-gradients once against the step that reduces each micro-batch's.

  python3 tests/schedule/flat_fsdp_equivalence.py DP.mlir FLAT.mlir -o OUT.mlir
"""
import argparse
import functools
import re
import sys

SIGNATURE = re.compile(r"func\.func @main\((.*?)\)\s*->\s*\((.*?)\)\s*\{", re.S)
ARG = re.compile(r"%(\w+): (tensor<[^>]*>)( \{sdy\.sharding = #sdy\.sharding<[^>]*>\})?")
DIMS = re.compile(r"#sdy\.sharding<@\w+, \[(.*)\]>")


def tp_dim(attr):
    """The dimension an argument's sharding splits over "tp", or None."""
    m = DIMS.search(attr)
    if not m:
        return None
    dims = re.findall(r"\{([^}]*)\}", m.group(1))
    return next((i for i, d in enumerate(dims) if '"tp"' in d), None)


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


def by_rank(shape, d, lead, tp):
    """A weight of `shape` split over "tp" on dimension d, cut into ranks:
    the shape with d as [tp, F / tp], and the permutation that moves the
    rank after the `lead` layer dimensions."""
    cut = shape[:d] + [tp, shape[d] // tp] + shape[d + 1:]
    return cut, list(range(lead)) + [d] + [i for i in range(lead, len(cut)) if i != d]


class Writer:
    def __init__(self, misalign=False, swap_ranks=False):
        self.lines, self.n, self.misalign, self.swap_ranks = [], 0, misalign, swap_ranks

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

    def ranks(self, value, t, d, lead, tp):
        """[L, ..., F, ...] (dimension d split over "tp", `lead` layer dims
        before it) as [L, tp, ..., F / tp, ...]: rank t's part at row t
        (the rows reversed with --swap-ranks)."""
        shape, dtype = shape_of(t)
        cut, perm = by_rank(shape, d, lead, tp)
        cut_t, out_t = tensor(cut, dtype), tensor([cut[i] for i in perm], dtype)
        v = self.op(f"stablehlo.reshape {value} : ({t}) -> {cut_t}")
        v = self.op(f"stablehlo.transpose {v}, dims = [{', '.join(map(str, perm))}] : ({cut_t}) -> {out_t}")
        if self.swap_ranks:
            v = self.op(f"stablehlo.reverse {v}, dims = [{lead}] : {out_t}")
        return v, out_t

    def unranks(self, value, t, d, lead, tp, want):
        """The inverse of `ranks`: [L, tp, ...] back to the weight's type."""
        shape, dtype = shape_of(want)
        cut, perm = by_rank(shape, d, lead, tp)
        inverse = [perm.index(i) for i in range(len(cut))]
        cut_t = tensor(cut, dtype)
        v = self.op(f"stablehlo.transpose {value}, dims = [{', '.join(map(str, inverse))}] : ({t}) -> {cut_t}")
        return self.op(f"stablehlo.reshape {v} : ({cut_t}) -> {want}")

    def compare(self, pairs):
        """A check per (expected, got, type): the largest difference over
        the larger of the expected's largest value and 1e-3 of the largest
        of all, below 1e-5."""
        scales = [self.largest(want, t) for want, _, t in pairs]
        overall = scales[0]
        for s in scales[1:]:
            overall = self.op(f"stablehlo.maximum {overall}, {s} : tensor<f32>")
        thousandth = self.op("stablehlo.constant dense<1.0e-3> : tensor<f32>")
        floor = self.op(f"stablehlo.multiply {overall}, {thousandth} : tensor<f32>")
        for (want, got_v, t), scale in zip(pairs, scales):
            diff = self.op(f"stablehlo.subtract {want}, {got_v} : {t}")
            worst = self.largest(diff, t)
            denominator = self.op(f"stablehlo.maximum {scale}, {floor} : tensor<f32>")
            ratio = self.op(f"stablehlo.divide {worst}, {denominator} : tensor<f32>")
            self.lines.append(f"  stablehlo.custom_call @check.expect_almost_eq_const({ratio}) {{has_side_effect = "
                              f"true, value = dense<0.0> : tensor<f32>, tolerance = 1.0e-5 : f64}} : "
                              f"(tensor<f32>) -> ()")

    def largest(self, value, t):
        """max |value| as tensor<f32>."""
        shape, dtype = shape_of(t)
        a = self.op(f"stablehlo.abs {value} : {t}")
        zero = self.op("stablehlo.constant dense<0.0> : tensor<f32>")
        dims = ", ".join(str(i) for i in range(len(shape)))
        return self.op(f"stablehlo.reduce({a} init: {zero}) applies stablehlo.maximum across dimensions = [{dims}] "
                       f": ({t}, tensor<f32>) -> tensor<f32>")


def build(dp_text, flat_text, misalign=False, swap_ranks=False):
    mesh, dp_args, dp_results, dp_body = split(dp_text)
    _, flat_args, flat_results, flat_body = split(flat_text)
    w = Writer(misalign, swap_ranks)
    names = [f"%{n}" for n, _, _ in dp_args]
    w.lines.append(f"  %dp:{len(dp_results)} = func.call @dp_step({', '.join(names)}) : "
                   f"({', '.join(t for _, t, _ in dp_args)}) -> ({', '.join(dp_results)})")
    tp = dict((k, int(v)) for k, v in re.findall(r'"(\w+)"=(\d+)', mesh)).get("tp", 1)
    by_name = {n: (t, tp_dim(attr)) for n, t, attr in dp_args}
    weights = [n for n, _, _ in dp_args if n != "tokens" and not n.startswith(("m_", "v_"))]

    def members(unit):
        """The dp step's weights in a flat buffer: the embedding's, a
        layer's whole ones ("layers") or its split ones ("layers_tp")."""
        if unit == "embed":
            return ["embed"]
        return [n for n in weights if n != "embed" and (by_name[n][1] is not None) == unit.endswith("_tp")]

    def lead_dims(group, ft):
        """The layer dimensions before a flat buffer's last (and, when its
        weights are split, before the rank's)."""
        split = any(by_name[n][1] is not None for n in group)
        return len(shape_of(ft)[0]) - (2 if split else 1), split

    def flat_of(group, prefix, ft):
        """The dp step's `prefix`ed tensors of `group` as the flat buffer of type ft."""
        lead, _ = lead_dims(group, ft)
        values, types = [], []
        for n in group:
            t, d = by_name[prefix + n]
            v = f"%{prefix}{n}"
            if d is not None:
                v, t = w.ranks(v, t, d, lead, tp)
            values.append(v)
            types.append(t)
        if len(values) == 1 and types[0] == ft:
            return values[0]
        return w.flatten(values, types, ft)

    # The flat step's arguments: g_tokens, then each buffer (g_embed,
    # g_layers, g_layers_tp) and its states' (g_m_..., g_v_...) from the dp
    # step's tensors of the same names.
    flat_in = []
    for name, ft, _ in flat_args:
        name = name[len("g_"):]
        if name == "tokens":
            flat_in.append("%tokens")
            continue
        prefix = next((p for p in ("m_", "v_") if name.startswith(p)), "")
        flat_in.append(flat_of(members(name[len(prefix):]), prefix, ft))
    w.lines.append(f"  %flat:{len(flat_results)} = func.call @flat_step({', '.join(flat_in)}) : "
                   f"({', '.join(t for _, t, _ in flat_args)}) -> ({', '.join(flat_results)})")
    # The results (the gradients, as many as the buffers), cut back into the
    # dp step's weights and compared with its gradients of the same name.
    units = [n[len("g_"):] for n, _, _ in flat_args if n != "g_tokens" and not n.startswith(("g_m_", "g_v_"))]
    if len(flat_results) != len(units) or len(dp_results) != len(weights):
        raise SystemExit("expected the gradients of --optimizer none, one per flat buffer and weight")
    got = {}
    for i, (unit, ft) in enumerate(zip(units, flat_results)):
        group = members(unit)
        lead, is_split = lead_dims(group, ft)
        pieces = []
        for n in group:
            t, d = by_name[n]
            shape = shape_of(t)[0]
            if is_split:
                cut, perm = by_rank(shape, d, lead, tp)
                shape = [cut[j] for j in perm]
            pieces.append(tensor(shape, shape_of(ft)[1]))
        values = w.unflatten(f"%flat#{i}", ft, pieces)
        for n, v, piece in zip(group, values, pieces):
            t, d = by_name[n]
            want = tensor(shape_of(t)[0], shape_of(ft)[1])
            got[n] = w.unranks(v, piece, d, lead, tp, want) if is_split else v
    pairs = [(f"%dp#{i}", got[n], t) for i, (n, t) in enumerate(zip(weights, dp_results))]
    w.compare(pairs)
    return module(mesh, dp_args, w, dp_body, flat_body)


def build_same(first_text, second_text):
    """Two steps that take the same arguments (the second's may be named
    g_...) and return the same gradients: both called, each gradient
    compared as `build` compares them."""
    mesh, args, results, first_body = split(first_text)
    _, args2, results2, second_body = split(second_text)
    if [t for _, t, _ in args] != [t for _, t, _ in args2] or results != results2:
        raise SystemExit("--same-arguments: the two steps' signatures differ")
    w = Writer()
    names = ", ".join(f"%{n}" for n, _, _ in args)
    types = f"({', '.join(t for _, t, _ in args)}) -> ({', '.join(results)})"
    w.lines.append(f"  %dp:{len(results)} = func.call @dp_step({names}) : {types}")
    w.lines.append(f"  %flat:{len(results)} = func.call @flat_step({names}) : {types}")
    w.compare([(f"%dp#{i}", f"%flat#{i}", t) for i, t in enumerate(results)])
    return module(mesh, args, w, first_body, second_body)


def module(mesh, args, w, dp_body, flat_body):
    arg_text = ",\n    ".join(f"%{n}: {t}{attr}" for n, t, attr in args)
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
    ap.add_argument("--swap-ranks", action="store_true")
    ap.add_argument("--same-arguments", action="store_true",
                    help="FLAT is any step taking DP's arguments (e.g. --reduce-gradients once): "
                         "both called on them, their gradients compared")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    with open(a.dp) as f:
        dp_text = f.read()
    with open(a.flat) as f:
        flat_text = f.read()
    with open(a.output, "w") as f:
        f.write(build_same(dp_text, flat_text) if a.same_arguments
                else build(dp_text, flat_text, a.misalign, a.swap_ranks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
