#!/usr/bin/env python3
"""Single-GPU JAX programs for issue 46: each is exported to StableHLO (what
shardlab estimates), compiled by XLA (whose optimized HLO says which kernels
XLA launches) and timed on the GPU (the truth the estimate is held against).

    python3 bench/gpu/programs.py --out DIR [--only REGEX] [--iters 50]
    python3 bench/gpu/programs.py --list          # no JAX needed

For each program NAME it writes, under DIR:
  NAME.mlir         jax.jit(f).lower(*args).as_text(): the StableHLO module
  NAME.hlo.txt      the compiled executable's optimized HLO (XLA's kernels)
  NAME.json         shapes, dtypes, timing samples (seconds), median, flops
and DIR/programs.json, the index. A program that fails is recorded with its
error and the rest go on.

Timing: the compiled executable is called with its arguments already on the
GPU; `warmup` untimed calls, then `iters` calls each between two
perf_counter reads around jax.block_until_ready (host time of one call, so it
includes a dispatch of some tens of microseconds: the programs are sized to
take milliseconds). The median is the measurement; min and max are kept.

The programs are declared once in PROGRAMS (name, what it checks, dtype) and
built lazily, so --list runs where JAX is not installed (the dry run of
bench/gpu/session.sh, under ctest).
"""
import argparse
import os
import re
import statistics
import sys
import time
import traceback

from files import write_json, write_text

# name -> (builder name, dtype, what the program tests in the cost model)
PROGRAMS = [
    ("matmul_bf16", "matmul", "bf16", "one GEMM 8192x8192x8192: the GEMM table"),
    ("matmul_f32", "matmul", "f32", "one f32 GEMM (TF32 under JAX's default precision)"),
    ("matmul_skinny_bf16", "matmul_skinny", "bf16", "GEMM 16384x1024x8192: a shape off the square"),
    ("matmul_chain_bf16", "matmul_chain", "bf16", "four dependent GEMMs"),
    ("batched_matmul_bf16", "batched_matmul", "bf16", "batched GEMM 32 x 2048x128x2048 (attention-shaped)"),
    ("mlp_bf16", "mlp", "bf16", "GEMM + bias + GELU + GEMM + bias: epilogue fusion"),
    ("mlp_f32", "mlp", "f32", "the MLP in f32"),
    ("elementwise_f32", "elementwise", "f32", "gelu(x) * y + z on 64M elements: one loop fusion, memory bound"),
    ("layernorm_bf16", "layernorm", "bf16", "residual add + LayerNorm: reduction fusions"),
    ("softmax_xent_f32", "softmax_xent", "f32", "logits GEMM + softmax cross-entropy over a 32k vocabulary"),
    ("attention_bf16", "attention", "bf16", "causal attention written with jnp (softmax between two batched GEMMs)"),
    ("attention_cudnn_bf16", "attention_cudnn", "bf16", "the same attention as a cuDNN flash-attention custom call"),
    # With attention_cudnn_bf16, what ingest.py makes the tables'
    # fused_attention entry: the cuDNN calls' time over their GEMMs' price.
    ("attention_cudnn_grad_bf16", "attention_cudnn_grad", "bf16",
     "the cuDNN attention's forward and backward (jax.grad of its sum)"),
    ("block_bf16", "block", "bf16", "a pre-LN GPT block, jnp attention"),
    ("block_cudnn_bf16", "block_cudnn", "bf16", "a pre-LN GPT block, cuDNN attention"),
    ("scan_blocks_bf16", "scan_blocks", "bf16", "eight MLP blocks under lax.scan over stacked weights: a while loop"),
    ("train_step_bf16", "train_step", "bf16", "value_and_grad of two GPT blocks + an SGD update"),
    ("train_step_f32", "train_step", "f32", "the training step in f32"),
    # One layer's forward and backward at the per-GPU shapes of two published
    # runs of bench/published/runs.json (issue 43), on this GPU: what the
    # estimate of a step is made of, held against the device.
    ("llama2_7b_tp8_layer_bf16", "llama_layer", "bf16",
     "Llama 2 7B layer at tensor-parallel 8's local shapes, 4 x 4096 tokens, fwd + bwd, cuDNN attention"),
    ("mpt_7b_layer_bf16", "gpt_layer", "bf16",
     "MPT-7B-sized GPT layer (FSDP: whole heads), 4 x 2048 tokens, fwd + bwd, cuDNN attention"),
]

# Model sizes of the transformer programs (a GPT-2 XL-sized block at batch 8).
B, S, D, H, F = 8, 2048, 2048, 16, 8192


def build(kind, dtype):
    """The function and its argument shapes for a program kind."""
    import jax
    import jax.numpy as jnp

    dt = {"bf16": jnp.bfloat16, "f32": jnp.float32}[dtype]

    def spec(*shape):
        return jax.ShapeDtypeStruct(shape, dt)

    def layernorm(x, g, b):
        x32 = x.astype(jnp.float32)
        mean = jnp.mean(x32, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x32 - mean), axis=-1, keepdims=True)
        y = (x32 - mean) * jax.lax.rsqrt(var + 1e-5)
        return (y * g.astype(jnp.float32) + b.astype(jnp.float32)).astype(x.dtype)

    def attention_jnp(q, k, v):
        # q, k, v: [B, S, H, Dh]; causal softmax in f32.
        scale = 1.0 / (q.shape[-1] ** 0.5)
        logits = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) * scale
        mask = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), dtype=bool))
        logits = jnp.where(mask, logits, -1e30)
        p = jax.nn.softmax(logits, axis=-1).astype(q.dtype)
        return jnp.einsum("bhqk,bkhd->bqhd", p, v)

    def attention_cudnn(q, k, v):
        return jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="cudnn")

    def block(x, w, attn):
        h = layernorm(x, w["g1"], w["b1"])
        qkv = h @ w["wqkv"]
        q, k, v = jnp.split(qkv, 3, axis=-1)
        shape = x.shape[:2] + (H, D // H)
        a = attn(q.reshape(shape), k.reshape(shape), v.reshape(shape)).reshape(x.shape)
        x = x + a @ w["wo"]
        h = layernorm(x, w["g2"], w["b2"])
        return x + jax.nn.gelu(h @ w["w1"] + w["c1"]) @ w["w2"] + w["c2"]

    def block_weights():
        return {"g1": spec(D), "b1": spec(D), "wqkv": spec(D, 3 * D), "wo": spec(D, D),
                "g2": spec(D), "b2": spec(D), "w1": spec(D, F), "c1": spec(F),
                "w2": spec(F, D), "c2": spec(D)}

    if kind == "matmul":
        return (lambda a, b: a @ b), [spec(8192, 8192), spec(8192, 8192)]
    if kind == "matmul_skinny":
        return (lambda a, b: a @ b), [spec(16384, 8192), spec(8192, 1024)]
    if kind == "matmul_chain":
        return (lambda x, a, b, c, d: (((x @ a) @ b) @ c) @ d), [spec(8192, 4096)] + [spec(4096, 4096)] * 4
    if kind == "batched_matmul":
        return (lambda a, b: jnp.einsum("bmk,bkn->bmn", a, b)), [spec(32, 2048, 128), spec(32, 128, 2048)]
    if kind == "mlp":
        def mlp(x, w1, b1, w2, b2):
            return jax.nn.gelu(x @ w1 + b1) @ w2 + b2
        return mlp, [spec(8192, 4096), spec(4096, 16384), spec(16384), spec(16384, 4096), spec(4096)]
    if kind == "elementwise":
        n = 64 * 1024 * 1024
        return (lambda x, y, z: jax.nn.gelu(x) * y + z), [spec(n)] * 3
    if kind == "layernorm":
        return (lambda x, r, g, b: layernorm(x + r, g, b)), [spec(B * S, 4 * D), spec(B * S, 4 * D), spec(4 * D), spec(4 * D)]
    if kind == "softmax_xent":
        def xent(h, w, labels):
            logits = (h @ w).astype(jnp.float32)
            logp = jax.nn.log_softmax(logits, axis=-1)
            return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))
        return xent, [spec(8192, 2048), spec(2048, 32768), jax.ShapeDtypeStruct((8192,), jnp.int32)]
    if kind in ("attention", "attention_cudnn"):
        fn = attention_jnp if kind == "attention" else attention_cudnn
        return fn, [spec(B, S, H, D // H)] * 3
    if kind == "attention_cudnn_grad":
        def grads(q, k, v):
            total = lambda q, k, v: jnp.sum(attention_cudnn(q, k, v).astype(jnp.float32))  # noqa: E731
            return jax.grad(total, argnums=(0, 1, 2))(q, k, v)
        return grads, [spec(B, S, H, D // H)] * 3
    if kind in ("block", "block_cudnn"):
        attn = attention_jnp if kind == "block" else attention_cudnn
        return (lambda x, w: block(x, w, attn)), [spec(B, S, D), block_weights()]
    if kind == "scan_blocks":
        def stack(x, w1, w2):
            def body(h, ws):
                a, b = ws
                return h + jax.nn.gelu(h @ a) @ b, None
            return jax.lax.scan(body, x, (w1, w2))[0]
        return stack, [spec(B * S, D), spec(8, D, F), spec(8, F, D)]
    if kind == "llama_layer":
        # Llama 2 7B with tensor parallelism 8: 4 of 32 heads, 1376 of 11008.
        b, t, d, heads, hd, ffn = 4, 4096, 4096, 4, 128, 1376

        def rmsnorm(x, g):
            x32 = x.astype(jnp.float32)
            return (x32 * jax.lax.rsqrt(jnp.mean(jnp.square(x32), -1, keepdims=True) + 1e-5) * g).astype(x.dtype)

        def rope(x):
            half = x.shape[-1] // 2
            freqs = 1.0 / (10000.0 ** (jnp.arange(half, dtype=jnp.float32) / half))
            angle = jnp.arange(x.shape[1], dtype=jnp.float32)[:, None] * freqs
            cos, sin = jnp.cos(angle)[None, :, None, :], jnp.sin(angle)[None, :, None, :]
            x1, x2 = x[..., :half].astype(jnp.float32), x[..., half:].astype(jnp.float32)
            return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).astype(x.dtype)

        def layer(x, w):
            h = rmsnorm(x, w["n1"])
            q = rope((h @ w["wq"]).reshape(b, t, heads, hd))
            k = rope((h @ w["wk"]).reshape(b, t, heads, hd))
            v = (h @ w["wv"]).reshape(b, t, heads, hd)
            a = attention_cudnn(q, k, v).reshape(b, t, heads * hd)
            x = x + a @ w["wo"]
            h = rmsnorm(x, w["n2"])
            return x + (jax.nn.silu(h @ w["wg"]) * (h @ w["wu"])) @ w["wd"]

        weights = {"n1": spec(d), "wq": spec(d, heads * hd), "wk": spec(d, heads * hd), "wv": spec(d, heads * hd),
                   "wo": spec(heads * hd, d), "n2": spec(d), "wg": spec(d, ffn), "wu": spec(d, ffn), "wd": spec(ffn, d)}

        def train(w, x):
            return jax.value_and_grad(lambda w: jnp.mean(jnp.square(layer(x, w).astype(jnp.float32))))(w)
        return train, [weights, spec(b, t, d)]
    if kind == "gpt_layer":
        b, t, d, heads, ffn = 4, 2048, 4096, 32, 16384
        w = {"g1": spec(d), "b1": spec(d), "wqkv": spec(d, 3 * d), "wo": spec(d, d), "g2": spec(d), "b2": spec(d),
             "w1": spec(d, ffn), "c1": spec(ffn), "w2": spec(ffn, d), "c2": spec(d)}

        def gpt_layer(x, w):
            h = layernorm(x, w["g1"], w["b1"])
            q, k, v = jnp.split(h @ w["wqkv"], 3, axis=-1)
            shape = (b, t, heads, d // heads)
            x = x + attention_cudnn(q.reshape(shape), k.reshape(shape), v.reshape(shape)).reshape(b, t, d) @ w["wo"]
            h = layernorm(x, w["g2"], w["b2"])
            return x + jax.nn.gelu(h @ w["w1"] + w["c1"]) @ w["w2"] + w["c2"]

        def train(w, x):
            return jax.value_and_grad(lambda w: jnp.mean(jnp.square(gpt_layer(x, w).astype(jnp.float32))))(w)
        return train, [w, spec(b, t, d)]
    if kind == "train_step":
        def loss(ws, x):
            h = x
            for w in ws:
                h = block(h, w, attention_jnp)
            return jnp.mean(jnp.square(h.astype(jnp.float32)))

        def step(ws, x):
            value, grads = jax.value_and_grad(loss)(ws, x)
            new = jax.tree_util.tree_map(lambda w, g: w - (1e-3 * g).astype(w.dtype), ws, grads)
            return value, new
        return step, [[block_weights(), block_weights()], spec(4, S, D)]
    raise ValueError("unknown program kind " + kind)


def materialize(specs, key):
    """Random arguments on the default device for a pytree of ShapeDtypeStructs."""
    import jax
    import jax.numpy as jnp

    leaves, tree = jax.tree_util.tree_flatten(specs)
    keys = jax.random.split(key, len(leaves))
    out = []
    for k, s in zip(keys, leaves):
        if jnp.issubdtype(s.dtype, jnp.integer):
            out.append(jax.random.randint(k, s.shape, 0, 32768, dtype=s.dtype))
        else:
            out.append((0.02 * jax.random.normal(k, s.shape, dtype=jnp.float32)).astype(s.dtype))
    return jax.tree_util.tree_unflatten(tree, out)


def run_one(name, kind, dtype, what, out, warmup, iters):
    import jax

    fn, specs = build(kind, dtype)
    fn.__name__ = name  # the module is jit_<name>: dumps are told apart
    jitted = jax.jit(fn)
    lowered = jitted.lower(*specs)
    write_text(os.path.join(out, name + ".mlir"), lowered.as_text())
    compiled = lowered.compile()
    write_text(os.path.join(out, name + ".hlo.txt"), compiled.as_text())
    record = {"name": name, "kind": kind, "dtype": dtype, "what": what}
    try:
        cost = compiled.cost_analysis()
        cost = cost[0] if isinstance(cost, (list, tuple)) else cost
        record["xla_cost_analysis"] = {k: float(v) for k, v in (cost or {}).items()
                                       if k in ("flops", "bytes accessed", "transcendentals")}
    except Exception as e:  # cost analysis is a nicety, not the measurement
        record["xla_cost_analysis_error"] = str(e)
    args = materialize(specs, jax.random.PRNGKey(0))
    jax.block_until_ready(args)
    for _ in range(warmup):
        jax.block_until_ready(compiled(*args))
    samples = []
    for _ in range(iters):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        samples.append(time.perf_counter() - t0)
    record.update({
        "samples_s": samples,
        "median_s": statistics.median(samples),
        "min_s": min(samples),
        "max_s": max(samples),
        "warmup": warmup,
        "iters": iters,
        "device": str(jax.devices()[0].device_kind),
    })
    write_json(os.path.join(out, name + ".json"), record)
    return record


def environment():
    import jax
    import jaxlib

    env = {"jax": jax.__version__, "jaxlib": getattr(jaxlib, "__version__", "?"),
           "devices": [str(d) for d in jax.devices()],
           "device_kind": jax.devices()[0].device_kind,
           "xla_flags": os.environ.get("XLA_FLAGS", "")}
    try:
        env["default_matmul_precision"] = str(jax.config.jax_default_matmul_precision)
    except AttributeError:
        pass
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="directory for the modules, HLO and timings")
    ap.add_argument("--only", help="run only programs whose name matches this regular expression")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=50, help="timed calls per program (>= 20)")
    ap.add_argument("--list", action="store_true", help="print the programs and exit (no JAX needed)")
    a = ap.parse_args()
    chosen = [p for p in PROGRAMS if not a.only or re.search(a.only, p[0])]
    if a.list:
        for name, kind, dtype, what in chosen:
            print("%-24s %-5s %s" % (name, dtype, what))
        print("# %d programs" % len(chosen))
        return 0
    if not a.out:
        ap.error("--out is required (or --list)")
    if a.iters < 20:
        ap.error("--iters must be at least 20 (issue 46: median of >= 20 runs)")
    os.makedirs(a.out, exist_ok=True)
    index = {"environment": environment(), "programs": []}
    failed = 0
    for i, (name, kind, dtype, what) in enumerate(chosen, 1):
        t0 = time.time()
        try:
            r = run_one(name, kind, dtype, what, a.out, a.warmup, a.iters)
            entry = {"name": name, "ok": True, "median_s": r["median_s"]}
            print("[%d/%d] %-24s median %.3f ms (%.1f s)" % (i, len(chosen), name, 1e3 * r["median_s"], time.time() - t0),
                  file=sys.stderr, flush=True)
        except Exception as e:
            failed += 1
            entry = {"name": name, "ok": False, "error": "%s: %s" % (type(e).__name__, e),
                     "traceback": traceback.format_exc()[-4000:]}
            print("[%d/%d] %-24s FAILED %s" % (i, len(chosen), name, entry["error"][:300]), file=sys.stderr, flush=True)
        index["programs"].append(entry)
        write_json(os.path.join(a.out, "programs.json"), index)
    print("%d programs, %d failed" % (len(chosen), failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
