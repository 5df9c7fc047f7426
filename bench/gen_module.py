#!/usr/bin/env python3
"""Generates a large StableHLO + sdy module for parser/verifier/printer benchmarks.

The module is a transformer-like stack of layers (attention with softmax, an MLP
and a mean-centring step) built from stablehlo.dot_general, reshape, transpose,
reduce (`applies stablehlo.add/maximum across dimensions = [...]`),
broadcast_in_dim and elementwise ops (add, subtract, multiply, exponential,
divide, maximum). Layers are grouped into functions (`@block_<i>`) whose
arguments (activations and weights) carry #sdy.sharding attributes on one
sdy.mesh.

The text is what mlir-opt prints (one op per line, SSA values %0.. and %cst..,
canonical attribute spelling), so parse -> print should reproduce it exactly.
Standard library only; the output is written atomically (temp file + rename).
"""

import argparse
import os
import sys
import tempfile

# Shapes: batch, sequence, hidden, heads, head dim, MLP width.
B, S, H, N, D, F = 8, 128, 256, 4, 64, 1024
assert N * D == H
MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]>'
F32 = "f32"


def t(*dims):
    return "tensor<%s%s>" % ("".join("%dx" % d for d in dims), F32)


SCALAR = "tensor<f32>"
X = t(B, S, H)


def sharding(*dims):
    parts = ", ".join("{%s}" % ", ".join('"%s"' % a for a in d) for d in dims)
    return "{sdy.sharding = #sdy.sharding<@mesh, [%s]>}" % parts


# (argument type, sharding) of the weights of one layer, in argument order:
# wq, wk, wv (column-parallel), wo (row-parallel), w1 (column), w2 (row).
LAYER_WEIGHTS = [
    (t(H, H), sharding([], ["y"])),
    (t(H, H), sharding([], ["y"])),
    (t(H, H), sharding([], ["y"])),
    (t(H, H), sharding(["y"], [])),
    (t(H, F), sharding([], ["y"])),
    (t(F, H), sharding(["y"], [])),
]
ACT_SHARDING = sharding(["x"], [], [])

# --tiny: the same ops on small shapes (batch 2, sequence 8, hidden 16, 2
# heads of 8, MLP 32), which the interpreter runs in seconds; the mesh still
# divides every sharded dimension.
TINY = (2, 8, 16, 2, 8, 32)


def set_shapes(b, s, h, n, d, f):
    """Rebinds the shape globals every layer reads."""
    global B, S, H, N, D, F, X, LAYER_WEIGHTS
    assert n * d == h
    B, S, H, N, D, F = b, s, h, n, d, f
    X = t(B, S, H)
    LAYER_WEIGHTS = [
        (t(H, H), sharding([], ["y"])),
        (t(H, H), sharding([], ["y"])),
        (t(H, H), sharding([], ["y"])),
        (t(H, H), sharding(["y"], [])),
        (t(H, F), sharding([], ["y"])),
        (t(F, H), sharding(["y"], [])),
    ]

# Function-level constants, named as mlir-opt names them.
CONSTANTS = [
    ("%cst", "0.000000e+00"),      # zero: add-reduction init, relu
    ("%cst_0", "0xFF800000"),      # -inf: max-reduction init
    ("%cst_1", "1.250000e-01"),    # 1/sqrt(D)
    ("%cst_2", "3.906250e-03"),    # 1/H
]
ZERO, NEG_INF, SCALE, INV_H = (c[0] for c in CONSTANTS)


class Func:
    """Emits the body of one function with sequential SSA numbering."""

    def __init__(self):
        self.lines = []
        self.next_id = 0
        self.ops = 0

    def op(self, text):
        name = "%%%d" % self.next_id
        self.next_id += 1
        self.lines.append("  %s = %s" % (name, text))
        self.ops += 1
        return name

    def dot(self, a, b, dims, ta, tb, tr):
        return self.op("stablehlo.dot_general %s, %s, %s : (%s, %s) -> %s" % (a, b, dims, ta, tb, tr))

    def reshape(self, a, ta, tr):
        return self.op("stablehlo.reshape %s : (%s) -> %s" % (a, ta, tr))

    def transpose(self, a, perm, ta, tr):
        return self.op("stablehlo.transpose %s, dims = [%s] : (%s) -> %s" % (
            a, ", ".join(map(str, perm)), ta, tr))

    def broadcast(self, a, dims, ta, tr):
        return self.op("stablehlo.broadcast_in_dim %s, dims = [%s] : (%s) -> %s" % (
            a, ", ".join(map(str, dims)), ta, tr))

    def reduce(self, a, init, body, dims, ta, tr):
        return self.op("stablehlo.reduce(%s init: %s) applies stablehlo.%s across dimensions = [%s] : (%s, %s) -> %s" % (
            a, init, body, ", ".join(map(str, dims)), ta, SCALAR, tr))

    def binary(self, name, a, b, ty):
        return self.op("stablehlo.%s %s, %s : %s" % (name, a, b, ty))

    def unary(self, name, a, ty):
        return self.op("stablehlo.%s %s : %s" % (name, a, ty))

    def layer(self, x, w):
        wq, wk, wv, wo, w1, w2 = w
        proj = "contracting_dims = [2] x [0]"
        # Attention.
        q = self.dot(x, wq, proj, X, t(H, H), X)
        k = self.dot(x, wk, proj, X, t(H, H), X)
        v = self.dot(x, wv, proj, X, t(H, H), X)
        q4 = self.reshape(q, X, t(B, S, N, D))
        k4 = self.reshape(k, X, t(B, S, N, D))
        v4 = self.reshape(v, X, t(B, S, N, D))
        qt = self.transpose(q4, [0, 2, 1, 3], t(B, S, N, D), t(B, N, S, D))
        kt = self.transpose(k4, [0, 2, 3, 1], t(B, S, N, D), t(B, N, D, S))
        vt = self.transpose(v4, [0, 2, 1, 3], t(B, S, N, D), t(B, N, S, D))
        scores = self.dot(qt, kt, "batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2]",
                          t(B, N, S, D), t(B, N, D, S), t(B, N, S, S))
        scale = self.broadcast(SCALE, [], SCALAR, t(B, N, S, S))
        scaled = self.binary("multiply", scores, scale, t(B, N, S, S))
        mx = self.reduce(scaled, NEG_INF, "maximum", [3], t(B, N, S, S), t(B, N, S))
        mxb = self.broadcast(mx, [0, 1, 2], t(B, N, S), t(B, N, S, S))
        shifted = self.binary("subtract", scaled, mxb, t(B, N, S, S))
        e = self.unary("exponential", shifted, t(B, N, S, S))
        total = self.reduce(e, ZERO, "add", [3], t(B, N, S, S), t(B, N, S))
        totalb = self.broadcast(total, [0, 1, 2], t(B, N, S), t(B, N, S, S))
        probs = self.binary("divide", e, totalb, t(B, N, S, S))
        ctx = self.dot(probs, vt, "batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2]",
                       t(B, N, S, S), t(B, N, S, D), t(B, N, S, D))
        ctxt = self.transpose(ctx, [0, 2, 1, 3], t(B, N, S, D), t(B, S, N, D))
        ctx3 = self.reshape(ctxt, t(B, S, N, D), X)
        out = self.dot(ctx3, wo, proj, X, t(H, H), X)
        r1 = self.binary("add", x, out, X)
        # MLP with ReLU.
        h = self.dot(r1, w1, proj, X, t(H, F), t(B, S, F))
        zeros = self.broadcast(ZERO, [], SCALAR, t(B, S, F))
        relu = self.binary("maximum", h, zeros, t(B, S, F))
        y = self.dot(relu, w2, proj, t(B, S, F), t(F, H), X)
        r2 = self.binary("add", r1, y, X)
        # Subtract the mean over the hidden dimension.
        s = self.reduce(r2, ZERO, "add", [2], X, t(B, S))
        sb = self.broadcast(s, [0, 1], t(B, S), X)
        inv = self.broadcast(INV_H, [], SCALAR, X)
        mean = self.binary("multiply", sb, inv, X)
        return self.binary("subtract", r2, mean, X)


OPS_PER_LAYER = 34  # ops that Func.layer emits


def generate(total_ops, layers_per_func):
    """Returns (text, op count, function count)."""
    per_func_overhead = len(CONSTANTS) + 1  # constants and return
    per_func = layers_per_func * OPS_PER_LAYER + per_func_overhead
    n_funcs = max(1, round(total_ops / per_func))
    out = [MESH, ""]
    ops = 0
    for fi in range(n_funcs):
        args = ["%%arg0: %s %s" % (X, ACT_SHARDING)]
        weights = []
        for li in range(layers_per_func):
            ws = []
            for ty, shd in LAYER_WEIGHTS:
                name = "%%arg%d" % len(args)
                args.append("%s: %s %s" % (name, ty, shd))
                ws.append(name)
            weights.append(ws)
        out.append("func.func @block_%d(%s) -> %s {" % (fi, ", ".join(args), X))
        for name, value in CONSTANTS:
            out.append("  %s = stablehlo.constant dense<%s> : %s" % (name, value, SCALAR))
        f = Func()
        x = "%arg0"
        for ws in weights:
            x = f.layer(x, ws)
        out.extend(f.lines)
        out.append("  return %s : %s" % (x, X))
        out.append("}")
        out.append("")
        ops += f.ops + per_func_overhead
    return "\n".join(out[:-1]) + "\n", ops, n_funcs


def write_atomically(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Generate a large transformer-like StableHLO+sdy module for benchmarks.",
        epilog="Example: %(prog)s --ops 100000 -o /tmp/bench_100k.mlir")
    ap.add_argument("--ops", type=int, required=True,
                    help="approximate number of operations (e.g. 10000 or 100000)")
    ap.add_argument("-o", "--output", required=True, help="output .mlir file ('-' for stdout)")
    ap.add_argument("--layers-per-func", type=int, default=4,
                    help="transformer layers per function (default 4)")
    ap.add_argument("--tiny", action="store_true",
                    help="small shapes, for the interpreter (bench of shardlab-run)")
    args = ap.parse_args(argv)
    if args.tiny:
        set_shapes(*TINY)
    if args.ops < 1:
        ap.error("--ops must be positive")
    if args.layers_per_func < 1:
        ap.error("--layers-per-func must be positive")

    text, ops, funcs = generate(args.ops, args.layers_per_func)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        out_dir = os.path.dirname(os.path.abspath(args.output))
        if not os.path.isdir(out_dir):
            ap.error("output directory does not exist: %s" % out_dir)
        write_atomically(args.output, text)
    print("gen_module: %d ops in %d function(s), %d bytes -> %s" % (
        ops, funcs, len(text.encode()), args.output), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
