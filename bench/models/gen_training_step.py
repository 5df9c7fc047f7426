#!/usr/bin/env python3
"""Writes one training step of a decoder-only transformer as StableHLO with
Shardy shardings, the way JAX exports a jitted train step: a GPT decoder
(Megatron layout: LayerNorm, biases, GELU MLP, multi-head attention), a
Llama decoder (RMSNorm, RoPE, grouped-query attention, SwiGLU) or a
mixture-of-experts decoder (Llama with an expert MLP, tokens dispatched to
experts and back by all-to-all).

  python3 bench/models/gen_training_step.py --arch llama --layers 32 \\
      --hidden 4096 --heads 32 --kv-heads 8 --ffn 14336 --seq 4096 \\
      --micro-batch 16 --grad-accum 4 --mesh dp=8,tp=8 --layout fsdp \\
      --recompute selective -o /tmp/llama8b.mlir

A pipelined step (a stage axis first, gradients reduced once a step),
estimated as 4 interleaved stages of 2 one-layer chunks:

  python3 bench/models/gen_training_step.py --arch llama --layers 8 \
      --hidden 1024 --heads 8 --kv-heads 2 --micro-batch 8 --grad-accum 8 \
      --mesh stage=4,dp=2,tp=2 --layout zero2 --reduce-gradients once \
      --sequence-parallel -o /tmp/pp.mlir
  build/shardlab-schedule /tmp/pp.mlir --pipeline-stages 4 --virtual-stages 2

The step: for each of --grad-accum micro-batches (a counted while loop),
the embedding, the layers (a counted while loop over weights stacked
[L, ...], as jax.lax.scan writes them), the logits and a softmax
cross-entropy loss, the backward through the layers (a second loop, last
layer first), gradients accumulated in f32; then AdamW on every weight.
With --unroll K (or --grad-bucket N, which picks K) each iteration of the
layer loops runs K layers, as jax.lax.scan(..., unroll=K) writes it: their
gradients land together and XLA's combiner reduces them as one bucket.
Attention is cuDNN's fused flash attention (`__cudnn$fmhaSoftmax` and its
backward, causal), as jax.nn.dot_product_attention(implementation="cudnn")
calls it, inside an sdy.manual_computation over the mesh (shard_map);
with --attention rule, on the global shapes under a Shardy sharding rule
instead (batch and heads split freely, the sequences and head dim read
whole, as a custom_partitioning rule states it), so the module has no
manual computation and `shardlab-schedule --compare` can replace its layout.

The backward is derived by a small reverse-mode pass over the forward ops
(the vector-Jacobian product of each op, as JAX's transpose rules write
them), so every GEMM of the backward has the shape JAX's has. Activation
recomputation, as jax.checkpoint policies:
  none       every forward value the backward reads is saved per layer;
  selective  only the outputs of GEMMs and attention are saved (JAX's
             dots_saveable; Megatron's selective recompute of the rest);
  full       only each layer's input is saved; the backward runs the
             layer's forward again first.

Layouts (--mesh dp=D,tp=T names the mesh; dp x tp devices): tensor
parallelism over "tp" as Megatron splits a layer (Q/K/V and the first MLP
GEMMs by columns, the output projections by rows, the vocabulary of the
embedding); over "dp" the batch, and with --layout fsdp every weight and
optimizer state also sharded over "dp" (ZeRO-3 / FSDP), with --layout zero1
only the optimizer states (each layer's gradient all-reduced whole, the new
weights gathered after the update), with --layout zero2 the gradients too
(each layer's gradient reduce-scattered as the backward makes it: the traffic
of Megatron's distributed optimizer, a reduce-scatter of the gradients and an
all-gather of the new weights), with --layout dp neither. --layout fsdp-flat
is FSDP as PyTorch runs it (one flat, padded buffer per layer, split evenly
over dp whatever dp is), written as a JAX shard_map step: the whole step in a
manual computation over "dp", each layer gathering its weights (all_gather)
and reduce-scattering their gradients (psum_scatter); Shardy splits only
dimensions dp divides, so fsdp over 440 devices cannot shard a width of
4,096, fsdp-flat can (no MoE). With a "tp" axis it is FSDP over Megatron's
tensor parallelism (Metaseq's OPT-175B): each tensor-parallel rank's part
of a layer's split weights is its own flat buffer. --sequence-parallel
shards the sequence over "tp" between the tensor-parallel regions. MoE
experts are sharded over "dp" (expert parallelism). A "cp" axis splits the
sequence everywhere (context parallelism): attention runs as a ring in the
shard_map, each device keeping its queries and passing keys and values to
the next device, one cuDNN call per chunk (--attention shard_map).

Gradients over micro-batches: by default each micro-batch's gradients are
reduced over dp as they land and accumulated reduced (what a JAX step
without a manual computation does). --reduce-gradients once (layouts dp,
zero1, zero2) sums each device's own micro-batches' gradients in f32 and
reduces the sums once after the last (DDP's no_sync, Megatron-LM's
gradient buffer): the micro-batch loop in a manual computation over "dp",
a psum (dp, zero1) or psum_scatter onto the optimizer states' shards
(zero2) after it, AdamW outside. A "stage" axis (first in --mesh, used by
no sharding) is for `shardlab-schedule --pipeline-stages`.
--reshard-after-forward no (--layout fsdp) keeps each layer's weights
gathered in the forward for the backward (PyTorch FSDP's SHARD_GRAD_OP):
one gather a layer and micro-batch instead of two.
"""
import argparse
import functools
import itertools
import sys


# ---- values and the emitter --------------------------------------------------


class Val:
    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)


# cuDNN's causal flash attention, as the custom call's backend_config
# (escaped for the MLIR string attribute).
CUDNN_CAUSAL_CONFIG = '{\\"cudnn_fmha_backend_config\\": {\\"mask_type\\": \\"CAUSAL\\"}}'


def tensor_type(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def dims(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


class Tape:
    """The forward ops of one layer, in order: (kind, out, ins, attrs)."""

    def __init__(self):
        self.entries = []


class Emitter:
    """Writes ops into lines at the current indent. While a tape is set,
    every forward op is recorded on it; while `replay` maps a tape index to
    a value, that op is not written and the value stands for its result."""

    def __init__(self, mesh_axes, attention_rule=False):
        self.attention_rule = attention_rule
        self.lines = []
        self.indent = "  "
        self.counter = 0
        self.tape = None
        self.replay = None
        self.mesh_axes = mesh_axes
        self.cp = None  # the context-parallel axis: attention as a ring
        self.channel = 100
        self.collective_groups = None  # written collectives' groups (global device ids)

    def fresh(self, hint):
        self.counter += 1
        return f"%{hint}{self.counter}"

    def line(self, text):
        self.lines.append(self.indent + text)

    def _record(self, kind, out_fn, ins, attrs):
        index = len(self.tape.entries) if self.tape is not None else None
        if self.replay is not None and index in self.replay:
            out = self.replay[index]
        else:
            out = out_fn()
        if self.tape is not None:
            self.tape.entries.append((kind, out, ins, attrs))
        return out

    def _op(self, hint, shape, dtype, text):
        v = Val(self.fresh(hint), shape, dtype)
        self.line(f"{v.name} = {text(v)}")
        return v

    # -- forward ops (recorded) --

    def ew(self, op, *xs):
        a = xs[0]
        args = ", ".join(x.name for x in xs)
        return self._record(op, lambda: self._op(
            op[:3], a.shape, a.dtype,
            lambda v: f"stablehlo.{op} {args} : {a.type}"), list(xs), {})

    def convert(self, x, dtype):
        return self._record("convert", lambda: self._op(
            "cv", x.shape, dtype,
            lambda v: f"stablehlo.convert {x.name} : ({x.type}) -> {v.type}"),
            [x], {})

    def bcast(self, x, bdims, shape):
        return self._record("bcast", lambda: self._op(
            "bc", shape, x.dtype,
            lambda v: f"stablehlo.broadcast_in_dim {x.name}, dims = {dims(bdims)} : ({x.type}) -> {v.type}"),
            [x], {"dims": bdims})

    def reduce(self, x, rdims, kind="add"):
        shape = [d for i, d in enumerate(x.shape) if i not in rdims]
        init = self.const(0 if kind == "add" else -3.0e38, [], x.dtype, record=False)
        return self._record(f"reduce_{kind}", lambda: self._op(
            "rd", shape, x.dtype,
            lambda v: f"stablehlo.reduce({x.name} init: {init.name}) applies stablehlo.{kind} across dimensions = {dims(rdims)} : ({x.type}, {init.type}) -> {v.type}"),
            [x], {"dims": rdims})

    def dot(self, a, b, lc, rc, lb=(), rb=(), out_dtype=None):
        """dot_general; `out_dtype` its result's element type where it is
        not the operands' (JAX's preferred_element_type)."""
        lb, rb, lc, rc = list(lb), list(rb), list(lc), list(rc)
        shape = [a.shape[i] for i in lb] + \
            [d for i, d in enumerate(a.shape) if i not in lb + lc] + \
            [d for i, d in enumerate(b.shape) if i not in rb + rc]
        batch = f"batching_dims = {dims(lb)} x {dims(rb)}, " if lb else ""

        def text(v):
            return (f"stablehlo.dot_general {a.name}, {b.name}, {batch}contracting_dims = "
                    f"{dims(lc)} x {dims(rc)} : ({a.type}, {b.type}) -> {v.type}")
        return self._record("dot", lambda: self._op("d", shape, out_dtype or a.dtype, text),
                            [a, b], {"lb": lb, "rb": rb, "lc": lc, "rc": rc})

    def reshape(self, x, shape):
        return self._record("reshape", lambda: self._raw_reshape(x, shape), [x], {})

    def transpose(self, x, perm):
        return self._record("transpose", lambda: self._raw_transpose(x, perm),
                            [x], {"perm": list(perm)})

    def constrain(self, x, spec):
        """sdy.sharding_constraint; `spec` per dimension: an axis, or None.
        Without mesh axes (inside a manual computation over all of them)
        nothing: not even a tape entry, whose transpose would add the
        cotangent to itself."""
        if not self.mesh_axes:
            return x
        return self._record("constrain", lambda: self._raw_constrain(x, spec),
                            [x], {"spec": spec})

    def attention(self, q, k, v, batch_axis, head_axis):
        """Causal cuDNN flash attention in a manual computation: (out, stats)."""
        def emit():
            return self._attention_call(q, k, v, batch_axis, head_axis)
        res = self._record("attention", emit, [q, k, v],
                           {"batch": batch_axis, "head": head_axis})
        return res

    def const(self, value, shape, dtype, record=True):
        def emit():
            return self._op("k", shape, dtype,
                            lambda v: f"stablehlo.constant dense<{fmt(value, dtype)}> : {v.type}")
        if record:
            return self._record("const", emit, [], {})
        return emit()

    def iota(self, shape, dim, dtype):
        return self._record("iota", lambda: self._op(
            "io", shape, dtype, lambda v: f"stablehlo.iota dim = {dim} : {v.type}"), [], {})

    def compare(self, a, b, direction):
        return self._record("compare", lambda: self._op(
            "cmp", a.shape, "i1",
            lambda v: f"stablehlo.compare {direction}, {a.name}, {b.name} : ({a.type}, {b.type}) -> {v.type}"),
            [a, b], {})

    # -- plain ops (never recorded: loop plumbing, the backward) --

    def _raw_reshape(self, x, shape):
        return self._op("rs", shape, x.dtype,
                        lambda v: f"stablehlo.reshape {x.name} : ({x.type}) -> {v.type}")

    def _raw_transpose(self, x, perm):
        shape = [x.shape[p] for p in perm]
        return self._op("tr", shape, x.dtype,
                        lambda v: f"stablehlo.transpose {x.name}, dims = {dims(perm)} : ({x.type}) -> {v.type}")

    def _raw_constrain(self, x, spec):
        if not self.mesh_axes:  # inside a manual computation over every axis
            return x
        return self._op("sc", x.shape, x.dtype,
                        lambda v: f"sdy.sharding_constraint {x.name} {sharding(spec)} : {x.type}")

    def plain(self, fn, *args, **kw):
        """Runs an op method without recording it."""
        tape, replay = self.tape, self.replay
        self.tape, self.replay = None, None
        try:
            return fn(*args, **kw)
        finally:
            self.tape, self.replay = tape, replay

    def dynamic_slice(self, x, index, lead):
        """x[index] along dim 0 (`lead` = 1), reshaped without that dim."""
        zeros = ", ".join(["%c0"] * (len(x.shape) - 1))
        sizes = [1] + list(x.shape[1:])
        s = self._op("ds", sizes, x.dtype, lambda v: (
            f"stablehlo.dynamic_slice {x.name}, {index}, {zeros}, sizes = {dims(sizes)} : "
            f"({x.type}, {', '.join(['tensor<i32>'] * len(x.shape))}) -> {v.type}"))
        return self.plain(self._raw_reshape, s, x.shape[1:])

    def dynamic_update(self, buf, value, index):
        up = self.plain(self._raw_reshape, value, (1,) + tuple(value.shape))
        zeros = ", ".join(["%c0"] * len(value.shape))
        return self._op("du", buf.shape, buf.dtype, lambda v: (
            f"stablehlo.dynamic_update_slice {buf.name}, {up.name}, {index}, {zeros} : "
            f"({buf.type}, {up.type}, {', '.join(['tensor<i32>'] * len(buf.shape))}) -> {v.type}"))

    def _attention_call(self, q, k, v, batch_axis, head_axis, backward=None):
        if self.attention_rule:
            return self._attention_with_rule(q, k, v, backward)
        cp = self.cp
        axes = [a for a in (batch_axis, cp, head_axis) if a]
        manual = "{" + ", ".join(f'"{a}"' for a in axes) + "}"
        local = {"b": size_of(self.mesh_axes, batch_axis), "h": size_of(self.mesh_axes, head_axis),
                 "s": size_of(self.mesh_axes, cp)}

        def local_type(x):
            s = list(x.shape)
            s[0] //= local["b"]
            s[1] //= local["s"]
            s[2] //= local["h"]
            return tensor_type(s, x.dtype)

        def stats_type(shape, local_too):
            b, n, t = shape
            if local_too:
                b, n, t = b // local["b"], n // local["h"], t // local["s"]
            return tensor_type((b, n, t), "f32")

        act_spec = sharding([batch_axis, cp, head_axis, None])
        stats_spec = sharding([batch_axis, head_axis, cp])
        stats_shape = (q.shape[0], q.shape[2], q.shape[1])
        config = CUDNN_CAUSAL_CONFIG
        if backward is None:
            ins = [q, k, v]
            outs = [Val(self.fresh("att"), q.shape, q.dtype), Val(self.fresh("lse"), stats_shape, "f32")]
            specs_in, specs_out = [act_spec] * 3, [act_spec, stats_spec]
            target = "__cudnn$fmhaSoftmax"
        else:
            o, stats, do = backward
            ins = [q, k, v, stats, do, o]
            outs = [Val(self.fresh("dq"), q.shape, q.dtype), Val(self.fresh("dk"), k.shape, k.dtype),
                    Val(self.fresh("dv"), v.shape, v.dtype)]
            specs_in = [act_spec] * 3 + [stats_spec, act_spec, act_spec]
            specs_out = [act_spec] * 3
            target = "__cudnn$fmhaSoftmaxBackward"
        if not axes:  # already per device (a manual computation over every axis)
            results = self._cudnn_call(target, config, [x.name for x in ins], [x.type for x in ins],
                                       [x.type for x in outs])
            for o, name in zip(outs, results):
                o.name = name
            return outs
        args = [self.fresh("la") for _ in ins]
        # The softmax statistics are [B, N, T] (rank 3), told apart by rank:
        # an f32 step's activations are f32 too.
        ltypes = [stats_type(x.shape, True) if len(x.shape) == 3 else local_type(x) for x in ins]
        out_types_local = [stats_type(x.shape, True) if len(x.shape) == 3 else local_type(x) for x in outs]
        res = self.fresh("mc")
        self.line(f"{res}:{len(outs)} = sdy.manual_computation({', '.join(x.name for x in ins)}) "
                  f"in_shardings=[{', '.join(specs_in)}] "
                  f"out_shardings=[{', '.join(specs_out)}] manual_axes={manual} "
                  f"({', '.join(f'{a}: {t}' for a, t in zip(args, ltypes))}) {{")
        if cp:
            results = self._ring(target, config, args, ltypes, out_types_local, backward is not None)
        else:
            results = self._cudnn_call(target, config, args, ltypes, out_types_local, "  ")
        self.line(f"  sdy.return {', '.join(results)} : {', '.join(out_types_local)}")
        self.line(f"}} : ({', '.join(x.type for x in ins)}) -> ({', '.join(x.type for x in outs)})")
        for i, o in enumerate(outs):
            o.name = f"{res}#{i}"
        return outs

    def _cudnn_call(self, target, config, args, arg_types, out_types, prefix=""):
        """One cuDNN attention call on per-device values (and its workspace
        result); the names of its results."""
        call = self.fresh("fa")
        types = out_types + ["tensor<0xui8>"]
        self.line(f"{prefix}{call}:{len(types)} = stablehlo.custom_call @\"{target}\"({', '.join(args)}) "
                  f"{{backend_config = \"{config}\"}} : ({', '.join(arg_types)}) -> ({', '.join(types)})")
        return [f"{call}#{i}" for i in range(len(out_types))]

    # -- collectives, written out (inside a manual computation) --

    def manual_over_dp(self, operands, results, block_args, body):
        """An sdy.manual_computation over "dp": `operands` (name, global
        type, spec), `results` (global type, spec), `block_args` (name,
        per-device type), `body` writing the inside and giving the Vals it
        returns. The names of its results."""
        res = self.fresh("step")
        self.line(f"{res}:{len(results)} = sdy.manual_computation({', '.join(n for n, _, _ in operands)}) "
                  f"in_shardings=[{', '.join(sharding(sp) for _, _, sp in operands)}] "
                  f"out_shardings=[{', '.join(sharding(sp) for _, sp in results)}] manual_axes={{\"dp\"}} "
                  f"({', '.join(f'{n}: {t}' for n, t in block_args)}) {{")
        self.indent += "  "
        values = body()
        self.line(f"sdy.return {', '.join(v.name for v in values)} : {', '.join(v.type for v in values)}")
        self.indent = self.indent[:-2]
        self.line(f"}} : ({', '.join(t for _, t, _ in operands)}) -> ({', '.join(t for t, _ in results)})")
        return [f"{res}#{i}" for i in range(len(results))]

    def _groups(self, size):
        """The device groups of a collective over `size` devices: the
        manual computation's (`collective_groups`, global device ids), else
        devices 0..size-1."""
        groups = self.collective_groups or [list(range(size))]
        rows = ", ".join("[" + ", ".join(str(i) for i in g) + "]" for g in groups)
        return f"dense<[{rows}]> : tensor<{len(groups)}x{len(groups[0])}xi64>"

    def all_gather(self, x, size):
        """x gathered along its last dim from `size` devices."""
        self.channel += 1
        last = len(x.shape) - 1
        shape = tuple(x.shape[:-1]) + (x.shape[-1] * size,)
        return self._op("ag", shape, x.dtype, lambda v: (
            f"\"stablehlo.all_gather\"({x.name}) <{{all_gather_dim = {last} : i64, channel_handle = "
            f"#stablehlo.channel_handle<handle = {self.channel}, type = 1>, replica_groups = "
            f"{self._groups(size)}, use_global_device_ids}}> : ({x.type}) -> {v.type}"))

    def reduce_scatter(self, x, size, dim=-1):
        """x summed over `size` devices, each keeping its part of dimension
        `dim` (the last by default)."""
        dim %= len(x.shape)
        shape = list(x.shape)
        shape[dim] //= size
        return self._summed("reduce_scatter", "rsc", f"scatter_dimension = {dim} : i64, ", x, size, shape)

    def all_reduce(self, x, size):
        """x summed over `size` devices, each keeping the whole sum."""
        return self._summed("all_reduce", "ar", "", x, size, x.shape)

    def _summed(self, op, hint, attrs, x, size, shape):
        """A summing collective `op` (its attributes before the channel) of x
        over `size` devices, with a result of `shape`."""
        self.channel += 1
        a, b, r = self.fresh("ra"), self.fresh("rb"), self.fresh("rr")
        scalar = tensor_type((), x.dtype)
        return self._op(hint, tuple(shape), x.dtype, lambda v: (
            f"\"stablehlo.{op}\"({x.name}) <{{{attrs}channel_handle = "
            f"#stablehlo.channel_handle<handle = {self.channel}, type = 1>, replica_groups = "
            f"{self._groups(size)}, use_global_device_ids}}> ({{\n"
            f"{self.indent}^bb0({a}: {scalar}, {b}: {scalar}):\n"
            f"{self.indent}  {r} = stablehlo.add {a}, {b} : {scalar}\n"
            f"{self.indent}  stablehlo.return {r} : {scalar}\n"
            f"{self.indent}}}) : ({x.type}) -> {v.type}"))

    def slice_range(self, x, start, size):
        """`size` elements of x's last dim from `start`."""
        shape = tuple(x.shape[:-1]) + (size,)
        limits = ", ".join([f"0:{d}" for d in x.shape[:-1]] + [f"{start}:{start + size}"])
        return self._op("sl", shape, x.dtype,
                        lambda v: f"stablehlo.slice {x.name} [{limits}] : ({x.type}) -> {v.type}")

    def concatenate(self, xs):
        """Tensors one after another along their last dim."""
        shape = tuple(xs[0].shape[:-1]) + (sum(x.shape[-1] for x in xs),)
        return self._op("cat", shape, xs[0].dtype, lambda v: (
            f"stablehlo.concatenate {', '.join(x.name for x in xs)}, dim = {len(shape) - 1} : "
            f"({', '.join(x.type for x in xs)}) -> {v.type}"))

    def pad_back(self, x, size):
        """x's last dim padded with zeros to `size` elements."""
        zero = self.const(0.0, (), x.dtype, record=False)
        shape = tuple(x.shape[:-1]) + (size,)
        lead = "".join("0, " for _ in x.shape[:-1])
        return self._op("pd", shape, x.dtype, lambda v: (
            f"stablehlo.pad {x.name}, {zero.name}, low = [{lead}0], high = [{lead}{size - x.shape[-1]}], "
            f"interior = [{lead}0] : ({x.type}, {zero.type}) -> {v.type}"))

    def _ring_pairs(self):
        """Each device to the next along the cp axis, the others fixed
        (device ids in the mesh's row-major order)."""
        names = list(self.mesh_axes)
        sizes = [self.mesh_axes[n] for n in names]
        axis = names.index(self.cp)
        pairs = []
        for coords in itertools.product(*[range(n) for n in sizes]):
            to = list(coords)
            to[axis] = (to[axis] + 1) % sizes[axis]
            flat = lambda c: functools.reduce(lambda acc, i: acc * sizes[i] + c[i], range(len(c)), 0)
            pairs.append((flat(coords), flat(to)))
        return pairs

    def _permute(self, value, type_):
        self.channel += 1
        pairs = self._ring_pairs()
        text = ", ".join(f"[{a}, {b}]" for a, b in pairs)
        out = self.fresh("ring")
        self.line(f"  {out} = \"stablehlo.collective_permute\"({value}) <{{channel_handle = "
                  f"#stablehlo.channel_handle<handle = {self.channel}, type = 1>, source_target_pairs = "
                  f"dense<[{text}]> : tensor<{len(pairs)}x2xi64>}}> : ({type_}) -> {type_}")
        return out

    def _ew(self, op, type_, *xs):
        out = self.fresh("rg")
        self.line(f"  {out} = stablehlo.{op} {', '.join(xs)} : {type_}")
        return out

    def _ring(self, target, config, args, ltypes, out_types, backward):
        """Ring attention over the cp axis (as JAX's shard_map ring
        attentions write it): each device keeps its queries and passes its
        keys and values to the next device C - 1 times, one cuDNN call per
        chunk; the forward merges the chunks' outputs by their softmax
        statistics; the backward sums dQ here and passes the chunks' dK and
        dV on with them, home after C steps."""
        C = self.mesh_axes[self.cp]
        q, k, v = args[:3]
        kt, vt = ltypes[1], ltypes[2]

        def call(kc, vc):
            return self._cudnn_call(target, config, [q, kc, vc] + args[3:], ltypes, out_types, "  ")

        kc, vc = k, v
        if not backward:
            ot, lt = out_types
            out, lse = call(kc, vc)
            for c in range(1, C):
                kc, vc = self._permute(kc, kt), self._permute(vc, vt)
                o2, l2 = call(kc, vc)
                # out, lse <- the two chunks' softmax merged by their statistics.
                m = self._ew("maximum", lt, lse, l2)
                a = self._ew("exponential", lt, self._ew("subtract", lt, lse, m))
                b = self._ew("exponential", lt, self._ew("subtract", lt, l2, m))
                total = self._ew("add", lt, a, b)
                lse = self._ew("add", lt, m, self._ew("log", lt, total))
                weights = []
                for w in (a, b):
                    share = self._ew("divide", lt, w, total)
                    low = self.fresh("rg")
                    low_t = lt.replace("f32", ot.split("x")[-1][:-1])
                    self.line(f"  {low} = stablehlo.convert {share} : ({lt}) -> {low_t}")
                    wide = self.fresh("rg")
                    self.line(f"  {wide} = stablehlo.broadcast_in_dim {low}, dims = [0, 2, 1] : ({low_t}) -> {ot}")
                    weights.append(wide)
                out = self._ew("add", ot, self._ew("multiply", ot, out, weights[0]),
                               self._ew("multiply", ot, o2, weights[1]))
            return [out, lse]
        qt_, dkt, dvt = out_types
        dq, dk, dv = call(kc, vc)
        for c in range(1, C):
            kc, vc = self._permute(kc, kt), self._permute(vc, vt)
            dk, dv = self._permute(dk, dkt), self._permute(dv, dvt)
            dq2, dk2, dv2 = call(kc, vc)
            dq = self._ew("add", qt_, dq, dq2)
            dk = self._ew("add", dkt, dk, dk2)
            dv = self._ew("add", dvt, dv, dv2)
        # Each chunk's gradients go home: one step more round the ring.
        return [dq, self._permute(dk, dkt), self._permute(dv, dvt)]

    def _attention_with_rule(self, q, k, v, backward=None):
        """The cuDNN call on the global shapes with a Shardy sharding rule
        (as a custom_partitioning rule states it), no manual computation:
        batch and heads split freely; the query and key sequences and the
        head dim stay whole on each device (need_replication), so
        propagation, not the module, decides the layout."""
        b, s, h, d = q.shape
        g = k.shape[2]
        stats_shape = (b, h, s)
        config = CUDNN_CAUSAL_CONFIG
        # Shardy names factors i..z: i batch, j query sequence, k heads, l
        # head dim, m key sequence, n K/V heads, o the workspace.
        qf, kf, sf = "[i, j, k, l]", "[i, m, n, l]", "[i, k, j]"
        if backward is None:
            ins = [q, k, v]
            outs = [Val(self.fresh("att"), q.shape, q.dtype), Val(self.fresh("lse"), stats_shape, "f32")]
            target, in_f, out_f = "__cudnn$fmhaSoftmax", [qf, kf, kf], [qf, sf]
        else:
            o, stats, do = backward
            ins = [q, k, v, stats, do, o]
            outs = [Val(self.fresh("dq"), q.shape, q.dtype), Val(self.fresh("dk"), k.shape, k.dtype),
                    Val(self.fresh("dv"), v.shape, v.dtype)]
            target, in_f, out_f = "__cudnn$fmhaSoftmaxBackward", [qf, kf, kf, sf, qf, qf], [qf, kf, kf]
        sizes = f"i={b}, j={s}, k={h}, l={d}, m={k.shape[1]}, n={g}, o=1"
        rule = (f"#sdy.op_sharding_rule<({', '.join(in_f)})->({', '.join(out_f + ['[o]'])}) {{{sizes}}} "
                f"need_replication={{j, l, m}}, custom>")
        call = self.fresh("fa")
        types = [x.type for x in outs] + ["tensor<1xui8>"]
        self.line(f"{call}:{len(types)} = stablehlo.custom_call @\"{target}\"({', '.join(x.name for x in ins)}) "
                  f"{{backend_config = \"{config}\", sdy.sharding_rule = {rule}}} : "
                  f"({', '.join(x.type for x in ins)}) -> ({', '.join(types)})")
        for i, o in enumerate(outs):
            o.name = f"{call}#{i}"
        return outs


def fmt(value, dtype):
    if isinstance(value, str):
        return value
    if dtype in ("i32", "i64", "i1"):
        return str(int(value))
    return f"{float(value):.6e}"


def size_of(mesh_axes, axis):
    return mesh_axes.get(axis, 1) if axis else 1


def sharding(spec):
    parts = ["{" + (f'"{a}"' if a else "") + "}" for a in spec]
    return f"<@mesh, [{', '.join(parts)}]>"


# ---- the backward: one vector-Jacobian product per forward op ---------------


def invert(perm):
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return out


class Backward:
    """Cotangents of a layer's inputs from its tape and the cotangent of its
    output, op by op in reverse (JAX's transpose rules, for the ops the
    forward uses)."""

    def __init__(self, em, f32_cotangents=()):
        """`f32_cotangents`: names of values (the weights) whose cotangents
        the GEMMs write in f32 (--grad-dtype f32: Megatron-LM's gradient
        accumulation fusion, the weight-gradient GEMM writing the f32 buffer
        the data-parallel reduction then reads)."""
        self.em = em
        self.ct = {}
        self.depends = set()
        self.f32 = set(f32_cotangents)

    def add(self, v, g):
        if v.name not in self.depends:
            return  # a constant, an iota, the labels: no cotangent needed
        if v.name in self.ct:
            old = self.ct[v.name]
            if old.dtype != g.dtype:  # an f32 GEMM's part and another's
                old, g = (x if x.dtype == "f32" else self.p(self.em.convert, x, "f32") for x in (old, g))
            g = self.em.plain(self.em.ew, "add", old, g)
        self.ct[v.name] = g

    def wanted_dtype(self, v):
        return "f32" if v.name in self.f32 else None

    def run(self, tape, out, d_out, sources):
        """`sources`: the values cotangents are wanted for (the layer's
        input, its weights); only what depends on them is differentiated."""
        self.depends = {v.name for v in sources}
        for kind, o, ins, attrs in tape.entries:
            if any(x.name in self.depends for x in ins):
                for v in (o if isinstance(o, list) else [o]):
                    self.depends.add(v.name)
            # A weight reshaped or transposed on its way to a GEMM: that
            # GEMM writes its cotangent in f32 too.
            if kind in ("reshape", "transpose") and ins[0].name in self.f32:
                self.f32.add(o.name)
        self.ct = {out.name: d_out}
        for kind, o, ins, attrs in reversed(tape.entries):
            if isinstance(o, list):
                g = [self.ct.get(x.name) for x in o]
                if all(x is None for x in g):
                    continue
            else:
                g = self.ct.get(o.name)
                if g is None:
                    continue
            getattr(self, "vjp_" + kind.split("_")[0] if kind.startswith("reduce") else "vjp_" + kind,
                    self.vjp_unary)(g, o, ins, attrs, kind)
        return self.ct

    def p(self, fn, *args):
        return self.em.plain(fn, *args)

    def vjp_add(self, g, o, ins, attrs, kind):
        for x in ins:
            self.add(x, g)

    def vjp_subtract(self, g, o, ins, attrs, kind):
        self.add(ins[0], g)
        self.add(ins[1], self.p(self.em.ew, "negate", g))

    def vjp_multiply(self, g, o, ins, attrs, kind):
        a, b = ins
        self.add(a, self.p(self.em.ew, "multiply", g, b))
        self.add(b, self.p(self.em.ew, "multiply", g, a))

    def vjp_divide(self, g, o, ins, attrs, kind):
        a, b = ins
        ga = self.p(self.em.ew, "divide", g, b)
        self.add(a, ga)
        self.add(b, self.p(self.em.ew, "negate", self.p(self.em.ew, "multiply", ga, o)))

    def vjp_unary(self, g, o, ins, attrs, kind):
        # d f(x) = f'(x) dx with f' written from x or from f(x), one or two
        # elementwise ops as JAX's rules emit them.
        x = ins[0]
        if kind in ("tanh",):
            sq = self.p(self.em.ew, "multiply", o, o)
            one = self.p(self.em.bcast, self.p(self.em.const, 1.0, [], o.dtype), [], o.shape)
            d = self.p(self.em.ew, "subtract", one, sq)
        elif kind in ("exponential",):
            d = o
        elif kind in ("logistic",):
            one = self.p(self.em.bcast, self.p(self.em.const, 1.0, [], o.dtype), [], o.shape)
            d = self.p(self.em.ew, "multiply", o, self.p(self.em.ew, "subtract", one, o))
        elif kind in ("rsqrt",):
            cube = self.p(self.em.ew, "multiply", o, self.p(self.em.ew, "multiply", o, o))
            half = self.p(self.em.bcast, self.p(self.em.const, -0.5, [], o.dtype), [], o.shape)
            d = self.p(self.em.ew, "multiply", cube, half)
        elif kind in ("log",):
            self.add(x, self.p(self.em.ew, "divide", g, x))
            return
        elif kind in ("negate",):
            self.add(x, self.p(self.em.ew, "negate", g))
            return
        elif kind in ("cosine", "sine", "maximum", "select", "const", "iota", "compare"):
            return  # no cotangent flows to what these read here
        else:
            raise SystemExit(f"gen_training_step: no VJP for {kind}")
        self.add(x, self.p(self.em.ew, "multiply", g, d))

    def vjp_convert(self, g, o, ins, attrs, kind):
        self.add(ins[0], self.p(self.em.convert, g, ins[0].dtype))

    def vjp_bcast(self, g, o, ins, attrs, kind):
        x = ins[0]
        summed = [i for i in range(len(o.shape)) if i not in attrs["dims"]]
        r = self.p(self.em.reduce, g, summed) if summed else g
        if r.shape != x.shape:
            r = self.p(self.em._raw_reshape, r, x.shape)
        self.add(x, r)

    def vjp_reduce(self, g, o, ins, attrs, kind):
        x = ins[0]
        kept = [i for i in range(len(x.shape)) if i not in attrs["dims"]]
        self.add(x, self.p(self.em.bcast, g, kept, x.shape))

    def vjp_reshape(self, g, o, ins, attrs, kind):
        self.add(ins[0], self.p(self.em._raw_reshape, g, ins[0].shape))

    def vjp_transpose(self, g, o, ins, attrs, kind):
        self.add(ins[0], self.p(self.em._raw_transpose, g, invert(attrs["perm"])))

    def vjp_constrain(self, g, o, ins, attrs, kind):
        self.add(ins[0], self.p(self.em._raw_constrain, g, attrs["spec"]))

    def vjp_attention(self, g, o, ins, attrs, kind):
        out, stats = o
        if g[0] is None:
            return
        q, k, v = ins
        dq, dk, dv = self.em._attention_call(q, k, v, attrs["batch"], attrs["head"],
                                             backward=(out, stats, g[0]))
        self.add(q, dq)
        self.add(k, dk)
        self.add(v, dv)

    def vjp_dot(self, g, o, ins, attrs, kind):
        a, b = ins
        lb, rb, lc, rc = attrs["lb"], attrs["rb"], attrs["lc"], attrs["rc"]
        nb = len(lb)
        a_free = [i for i in range(len(a.shape)) if i not in lb + lc]
        b_free = [i for i in range(len(b.shape)) if i not in rb + rc]
        g_batch = list(range(nb))
        g_afree = list(range(nb, nb + len(a_free)))
        g_bfree = list(range(nb + len(a_free), len(o.shape)))
        # dA = g . B over B's free dims: [batch, a_free, B's contracting
        # dims in B's order], each of those standing for its A dim.
        if a.name in self.depends:
            da = self.p(self.em.dot, g, b, g_bfree, b_free, g_batch, rb, self.wanted_dtype(a))
            order = lb + a_free + [lc[rc.index(d)] for d in sorted(rc)]
            if order != sorted(order):
                da = self.p(self.em._raw_transpose, da, invert(order))
            self.add(a, da)
        # dB = A . g over A's free dims: [batch, A's contracting dims in A's
        # order, b_free].
        if b.name in self.depends:
            db = self.p(self.em.dot, a, g, a_free, g_afree, lb, g_batch, self.wanted_dtype(b))
            order = rb + [rc[lc.index(d)] for d in sorted(lc)] + b_free
            if order != sorted(order):
                db = self.p(self.em._raw_transpose, db, invert(order))
            self.add(b, db)


# ---- the model -----------------------------------------------------------------


class Model:
    def __init__(self, a):
        self.a = a
        self.mesh = dict(a.mesh)
        self.dt = a.dtype
        self.dp = "dp" if "dp" in self.mesh else None
        self.tp = "tp" if "tp" in self.mesh else None
        self.cp = "cp" if "cp" in self.mesh else None  # sequence, attention as a ring
        H, N, KV, D, F = a.hidden, a.heads, a.kv_heads, a.hidden // a.heads, a.ffn
        self.H, self.N, self.KV, self.D, self.F, self.E = H, N, KV, D, F, a.experts
        fs = self.dp if a.layout == "fsdp" else None
        tp = self.tp
        # name -> (shape without the layer dim, spec without the layer dim)
        w = {}
        if a.arch == "gpt":
            w["ln1_g"] = ((H,), [None])
            w["ln1_b"] = ((H,), [None])
            w["ln2_g"] = ((H,), [None])
            w["ln2_b"] = ((H,), [None])
        else:
            w["ln1_g"] = ((H,), [None])
            w["ln2_g"] = ((H,), [None])
        w["wq"] = ((H, N, D), [fs, tp, None])
        w["wk"] = ((H, KV, D), [fs, tp, None])
        w["wv"] = ((H, KV, D), [fs, tp, None])
        w["wo"] = ((N, D, H), [tp, None, fs])
        if a.arch == "gpt":
            w["bq"] = ((N, D), [tp, None])
            w["bk"] = ((N, D), [tp, None])
            w["bv"] = ((N, D), [tp, None])
            w["bo"] = ((H,), [None])
            w["w1"] = ((H, F), [fs, tp])
            w["b1"] = ((F,), [tp])
            w["w2"] = ((F, H), [tp, fs])
            w["b2"] = ((H,), [None])
        elif a.arch == "llama":
            w["wg"] = ((H, F), [fs, tp])
            w["wu"] = ((H, F), [fs, tp])
            w["wd"] = ((F, H), [tp, fs])
        else:  # moe: experts over dp, each expert's FFN over tp
            w["wr"] = ((H, self.E), [None, None])
            w["wg"] = ((self.E, H, F), [self.dp, None, tp])
            w["wu"] = ((self.E, H, F), [self.dp, None, tp])
            w["wd"] = ((self.E, F, H), [self.dp, tp, None])
        self.weights = w

    # -- layer pieces --

    def norm(self, em, x, W, which):
        a, H = self.a, self.H
        x32 = em.convert(x, "f32")
        if a.arch == "gpt":
            mean = em.ew("divide", em.reduce(x32, [2]), em.bcast(em.const(H, [], "f32"), [], x.shape[:2]))
            xc = em.ew("subtract", x32, em.bcast(mean, [0, 1], x.shape))
        else:
            xc = x32
        var = em.ew("divide", em.reduce(em.ew("multiply", xc, xc), [2]),
                    em.bcast(em.const(H, [], "f32"), [], x.shape[:2]))
        eps = em.bcast(em.const(1e-5, [], "f32"), [], x.shape[:2])
        inv = em.ew("rsqrt", em.ew("add", var, eps))
        y = em.ew("multiply", xc, em.bcast(inv, [0, 1], x.shape))
        y = em.convert(y, self.dt)
        y = em.ew("multiply", y, em.bcast(W[f"{which}_g"], [2], x.shape))
        if a.arch == "gpt":
            y = em.ew("add", y, em.bcast(W[f"{which}_b"], [2], x.shape))
        return y

    def normed_input(self, em, x, W, which):
        """The block's normalized input, whole along the sequence. With
        sequence parallelism the norm runs on the block input's slice and
        its output is gathered (Megatron's layout); stating the slice on
        the output too makes the transpose slice the gradient before the
        norm's backward, so that its bias gradient sums the slice and the
        gradient's all-reduce over "tp" becomes a reduce-scatter."""
        h = self.norm(em, x, W, which)
        if self.a.sequence_parallel:
            h = em.constrain(h, self.act_spec(3, True))
        return em.constrain(h, self.act_spec(3))

    def rope(self, em, x):
        b, s, n, d = x.shape
        pos = em.convert(em.iota((s, d), 0, "i32"), "f32")
        freq = em.convert(em.iota((s, d), 1, "i32"), "f32")
        angle = em.ew("multiply", pos, freq)
        cos = em.convert(em.ew("cosine", angle), self.dt)
        sin = em.convert(em.ew("sine", angle), self.dt)
        rot = em.ew("negate", x)  # stands for rotating the halves
        return em.ew("add", em.ew("multiply", x, em.bcast(cos, [1, 3], x.shape)),
                     em.ew("multiply", rot, em.bcast(sin, [1, 3], x.shape)))

    def act_spec(self, rank, seq_parallel=False):
        spec = [self.dp, self.cp] + [None] * (rank - 2)
        if seq_parallel and self.a.sequence_parallel:
            spec[1] = self.tp
        return spec

    def heads_spec(self):
        """[batch, sequence, heads, head dim]: heads split over "tp", the
        sequence over "cp"."""
        return [self.dp, self.cp, self.tp, None]

    def hidden_spec(self):
        """[batch, sequence, MLP width]: the width split over "tp"."""
        return [self.dp, self.cp, self.tp]

    def attention_block(self, em, x, W):
        a = self.a
        h = self.normed_input(em, x, W, "ln1")
        q = em.dot(h, W["wq"], [2], [0])
        k = em.dot(h, W["wk"], [2], [0])
        v = em.dot(h, W["wv"], [2], [0])
        if a.arch == "gpt":
            q = em.ew("add", q, em.bcast(W["bq"], [2, 3], q.shape))
            k = em.ew("add", k, em.bcast(W["bk"], [2, 3], k.shape))
            v = em.ew("add", v, em.bcast(W["bv"], [2, 3], v.shape))
        else:
            q = self.rope(em, q)
            k = self.rope(em, k)
        # Megatron's layout stated on the activations, as a JAX model states
        # it (MaxText's logical axes): heads over "tp". The constraint's
        # transpose states it on the gradients too, so the backward's GEMMs
        # stay split by heads instead of gathering their weights.
        q, k, v = (em.constrain(t, self.heads_spec()) for t in (q, k, v))
        if self.KV != self.N:  # grouped-query: each K/V head serves N/KV query heads
            g = self.N // self.KV
            b, s, kv, d = k.shape
            k = em.reshape(em.bcast(k, [0, 1, 2, 4], (b, s, kv, g, d)), (b, s, self.N, d))
            v = em.reshape(em.bcast(v, [0, 1, 2, 4], (b, s, kv, g, d)), (b, s, self.N, d))
        if a.attention == "dots":
            out = self.dot_attention(em, q, k, v)
        else:
            out, _stats = em.attention(q, k, v, self.dp, self.tp)
        out = em.constrain(out, self.heads_spec())
        o = em.dot(out, W["wo"], [2, 3], [0, 1])
        if a.arch == "gpt":
            o = em.ew("add", o, em.bcast(W["bo"], [2], o.shape))
        return em.constrain(em.ew("add", x, o), self.act_spec(3, True))

    @staticmethod
    def causal_bias(em, shape, dtype):
        """0 where a query may see a key (key <= query), a large negative
        number where it may not, broadcast to the scores' [b, n, s, s]. A
        constant of the step: written unrecorded, so the backward does not
        differentiate it."""
        s = shape[-1]
        allowed = em.convert(em.compare(em.iota((s, s), 1, "i32"), em.iota((s, s), 0, "i32"), "LE"), dtype)
        one = em.bcast(em.const(1.0, [], dtype), [], (s, s))
        big = em.bcast(em.const(3.0e4 if dtype == "f16" else 1.0e9, [], dtype), [], (s, s))
        bias = em.ew("multiply", em.ew("subtract", allowed, one), big)
        return em.bcast(bias, [2, 3], shape)

    @staticmethod
    def dot_attention(em, q, k, v):
        """softmax(q k^T / sqrt(d) + causal mask) v per batch and head, as
        the cuDNN call's mask_type CAUSAL computes it."""
        b, s, n, d = q.shape
        scores = em.dot(q, k, [3], [3], [0, 2], [0, 2])  # [b, n, s, s]
        scale = em.bcast(em.const(1.0 / d ** 0.5, [], q.dtype), [], scores.shape)
        scores = em.ew("multiply", scores, scale)
        scores = em.ew("add", scores, em.plain(Model.causal_bias, em, scores.shape, scores.dtype))
        top = em.reduce(scores, [3], "maximum")
        shifted = em.ew("subtract", scores, em.bcast(top, [0, 1, 2], scores.shape))
        e = em.ew("exponential", shifted)
        p = em.ew("divide", e, em.bcast(em.reduce(e, [3]), [0, 1, 2], scores.shape))
        out = em.dot(p, v, [3], [1], [0, 1], [0, 2])  # [b, n, s, d]
        return em.transpose(out, [0, 2, 1, 3])

    def mlp_block(self, em, x, W):
        a = self.a
        h = self.normed_input(em, x, W, "ln2")
        if a.arch == "gpt":
            u = em.ew("add", em.dot(h, W["w1"], [2], [0]), em.bcast(W["b1"], [2], (*h.shape[:2], self.F)))
            # GELU, tanh form: 0.5 u (1 + tanh(0.79788 (u + 0.044715 u^3)))
            u3 = em.ew("multiply", u, em.ew("multiply", u, u))
            c1 = em.bcast(em.const(0.044715, [], self.dt), [], u.shape)
            c2 = em.bcast(em.const(0.7978846, [], self.dt), [], u.shape)
            t = em.ew("tanh", em.ew("multiply", c2, em.ew("add", u, em.ew("multiply", c1, u3))))
            one = em.bcast(em.const(1.0, [], self.dt), [], u.shape)
            half = em.bcast(em.const(0.5, [], self.dt), [], u.shape)
            act = em.ew("multiply", em.ew("multiply", half, u), em.ew("add", one, t))
            act = em.constrain(act, self.hidden_spec())
            y = em.dot(act, W["w2"], [2], [0])
            y = em.ew("add", y, em.bcast(W["b2"], [2], y.shape))
        elif a.arch == "llama":
            gt = em.constrain(em.dot(h, W["wg"], [2], [0]), self.hidden_spec())
            up = em.constrain(em.dot(h, W["wu"], [2], [0]), self.hidden_spec())
            act = em.ew("multiply", em.ew("multiply", gt, em.ew("logistic", gt)), up)
            act = em.constrain(act, self.hidden_spec())
            y = em.dot(act, W["wd"], [2], [0])
        else:
            y = self.moe(em, h, W)
        return em.constrain(em.ew("add", x, y), self.act_spec(3, True))

    def moe(self, em, h, W):
        """Top-1 routing with capacity (GShard's dense dispatch): the batch
        is the group dimension; tokens move to their experts' devices and
        back by the resharding of the dispatched tensor (all-to-all)."""
        a = self.a
        b, s, H = h.shape
        E = self.E
        C = max(1, int(s * a.top_k * a.capacity_factor / E))
        logits = em.dot(h, W["wr"], [2], [0])  # [b, s, E]
        l32 = em.convert(logits, "f32")
        mx = em.reduce(l32, [2], "maximum")
        ex = em.ew("exponential", em.ew("subtract", l32, em.bcast(mx, [0, 1], l32.shape)))
        gate = em.ew("divide", ex, em.bcast(em.reduce(ex, [2]), [0, 1], l32.shape))
        top = em.compare(l32, em.bcast(mx, [0, 1], l32.shape), "EQ")
        slot = em.compare(em.iota((b, s, E, C), 3, "i32"), em.iota((b, s, E, C), 1, "i32"), "EQ")
        onehot = em.convert(top, self.dt)
        dispatch = em.ew("multiply", em.bcast(onehot, [0, 1, 2], (b, s, E, C)), em.convert(slot, self.dt))
        combine = em.ew("multiply", dispatch, em.bcast(em.convert(gate, self.dt), [0, 1, 2], (b, s, E, C)))
        xe = em.dot(dispatch, h, [1], [1], [0], [0])  # [b, E, C, H]
        xe = em.constrain(xe, [self.dp, None, None, None])
        xe = em.constrain(xe, [None, self.dp, None, None])  # to the experts: all-to-all
        gt = em.dot(xe, W["wg"], [3], [1], [1], [0])  # [E, b, C, F]
        up = em.dot(xe, W["wu"], [3], [1], [1], [0])
        act = em.ew("multiply", em.ew("multiply", gt, em.ew("logistic", gt)), up)
        ye = em.dot(act, W["wd"], [3], [1], [0], [0])  # [E, b, C, H]
        ye = em.constrain(ye, [self.dp, None, None, None])
        ye = em.constrain(ye, [None, self.dp, None, None])  # back: all-to-all
        y = em.dot(ye, combine, [0, 2], [2, 3], [1], [0])  # [b, H, s]
        return em.transpose(y, [0, 2, 1])

    def layer(self, em, x, W):
        return self.mlp_block(em, self.attention_block(em, x, W), W)


# ---- the step --------------------------------------------------------------------


class Step:
    def __init__(self, a):
        self.a = a
        self.m = Model(a)
        if a.grad_bucket:
            a.unroll = self.bucket_unroll(a.grad_bucket)
        self.em = Emitter(self.m.mesh, a.attention == "rule")
        self.em.cp = self.m.cp

    def bucket_unroll(self, elements):
        """The fewest layers per loop iteration (a divisor of --layers) whose
        weights hold at least `elements` per device before any data-parallel
        split: Megatron's gradient bucket, reduced as one."""
        per_layer = sum(self.local_numel(shape, spec) for shape, spec in self.m.weights.values())
        L = self.a.layers
        return next(k for k in range(1, L + 1) if L % k == 0 and (k * per_layer >= elements or k == L))

    def local_numel(self, shape, spec):
        """A weight's elements on one device before any data-parallel split."""
        split = 1
        for axis in spec:
            if axis is not None and axis != "dp":
                split *= self.m.mesh[axis]
        return numel(shape) // split

    def stacked(self):
        L = self.a.layers
        return {n: ((L,) + s, [None] + spec) for n, (s, spec) in self.m.weights.items()}

    def state_spec(self, spec, shape):
        """Optimizer states: sharded like the weights, and with zero1 or zero2
        over dp on their first free dimension that dp divides (JAX refuses an
        argument sharding that does not divide), else their first free one.
        A weight already over dp (a mixture's experts) keeps its sharding:
        its states are dp's shards already."""
        if self.a.layout not in ("zero1", "zero2") or not self.m.dp or self.m.dp in spec:
            return spec
        out = list(spec)
        free = [i for i in range(1, len(out)) if out[i] is None]
        dividing = [i for i in free if shape[i] % self.m.mesh[self.m.dp] == 0]
        if free:
            out[(dividing or free)[0]] = self.m.dp
        return out

    def params(self):
        """(name, shape, spec) of the embedding and each stacked weight, as
        the step takes them."""
        a, m = self.a, self.m
        return [("embed", (a.vocab, m.H), self.embedding_spec())] + \
            [(n, s, sp) for n, (s, sp) in self.stacked().items()]

    def embedding_spec(self):
        """The vocabulary over "tp" (Megatron's), and with fsdp the width over dp."""
        return [self.m.tp, self.m.dp if self.a.layout == "fsdp" else None]

    def signature(self, params, names=True):
        """The arguments (tokens, weights, AdamW's two states) and results
        (new weights and states, or with --optimizer none the gradients) as
        (name, type, spec) and (type, spec)."""
        a, m = self.a, self.m
        dt = a.dtype
        args = [("tokens", tensor_type((a.grad_accum, a.micro_batch, a.seq), "i32"), [None, m.dp, m.cp])]
        args += [(n, tensor_type(s, dt), sp) for n, s, sp in params]
        for st in ("m", "v"):
            args += [(f"{st}_{n}", tensor_type(s, "f32"), self.state_spec(sp, s)) for n, s, sp in params]
        # New weights and states leave sharded as they came (out_shardings).
        results = [(tensor_type(s, dt), sp) for _, s, sp in params]
        results += [(tensor_type(s, "f32"), self.state_spec(sp, s)) for _, s, sp in params] * 2
        if a.optimizer == "none":  # the step's gradients, as they land
            results = [(tensor_type(s, "f32"), self.gradient_spec(sp, s)) for _, s, sp in params]
        return args, results

    def header(self, out, a, args, results):
        """The comment lines, the mesh and the signature; `a` the options
        that name the mesh and batch (a flat step's body runs on a share)."""
        m = self.m
        mesh = dict(a.mesh)
        devices = 1
        for v in mesh.values():
            devices *= v
        out.append(f"// Generated by bench/models/gen_training_step.py {' '.join(sys.argv[1:])}")
        out.append(f"// {a.arch}: {a.layers} layers, hidden {m.H}, {m.N} heads ({m.KV} K/V), FFN {m.F}, "
                   f"vocabulary {a.vocab}, sequence {a.seq}, micro-batch {a.micro_batch} x {a.grad_accum}, "
                   f"{a.dtype}, recompute {a.recompute}, layout {a.layout} on {devices} devices")
        mesh_text = ", ".join(f'"{k}"={v}' for k, v in mesh.items())
        out.append(f"sdy.mesh @mesh = <[{mesh_text}]>")
        arg_text = [f"%{n}: {t} {{sdy.sharding = #sdy.sharding{sharding(sp)}}}" for n, t, sp in args]
        result_text = [f"{t} {{sdy.sharding = #sdy.sharding{sharding(sp)}}}" for t, sp in results]
        out.append("func.func @main(" + ",\n    ".join(arg_text) + ")\n    -> (" + ", ".join(result_text) + ") {")

    def write(self, out):
        params = self.params()
        args, results = self.signature(params)
        self.header(out, self.a, args, results)
        values = self.body(params)
        self.em.line(f"return {', '.join(v.name for v in values)} : {', '.join(v.type for v in values)}")
        out.extend(self.em.lines)
        out.append("}")

    def body(self, params):
        """The step's ops; returns the values it returns."""
        return self.optimizer(params, self.gradients(params))

    def gradients(self, params):
        """The micro-batch loop; returns the accumulated gradients (f32)."""
        a, em = self.a, self.em
        L, M = a.layers, a.grad_accum
        em.line("%c0 = stablehlo.constant dense<0> : tensor<i32>")
        em.line("%c1 = stablehlo.constant dense<1> : tensor<i32>")
        # The layer loops' trip count: L layers, a.unroll an iteration.
        em.line(f"%cL = stablehlo.constant dense<{L // a.unroll}> : tensor<i32>")
        em.line(f"%cM = stablehlo.constant dense<{M}> : tensor<i32>")
        em.line(f"%last = stablehlo.constant dense<{L - 1}> : tensor<i32>")
        # Which forward values the backward reads, and which are saved.
        saved = self.saved_indices()
        return self.micro_batch_loop(params, self.stacked(), saved)

    # -- which values cross from the forward loop to the backward --

    def dry_layer(self):
        em = Emitter(self.m.mesh, self.a.attention == "rule")
        em.cp = self.m.cp
        em.tape = Tape()
        W = {n: Val(f"%w_{n}", s, self.a.dtype) for n, (s, _) in self.m.weights.items()}
        x = Val("%x", (self.a.micro_batch, self.a.seq, self.m.H), self.a.dtype)
        y = self.m.layer(em, x, W)
        return em.tape, x, y

    def saved_indices(self):
        if self.a.recompute == "full":
            return []
        tape, _, _ = self.dry_layer()
        produced = {}
        for i, (kind, o, ins, attrs) in enumerate(tape.entries):
            for v in (o if isinstance(o, list) else [o]):
                produced[v.name] = i
        needed = set()
        for kind, o, ins, attrs in tape.entries:
            outs = o if isinstance(o, list) else [o]
            reads = {"dot": ins, "multiply": ins, "divide": ins + outs, "attention": ins + outs,
                     "tanh": outs, "exponential": outs, "logistic": outs, "rsqrt": outs, "log": ins}
            for v in reads.get(kind, []):
                if v.name in produced:
                    needed.add(produced[v.name])
        if self.a.recompute == "selective":
            # Save the GEMMs (and attention) the needed values are computed
            # from, as dots_saveable does; what lies between (bias adds,
            # RoPE, reshapes) the backward recomputes from them.
            needed = self.costly_producers(tape, produced, needed)
        keep = sorted(needed)
        # Constants, iotas and broadcasts of them are cheaper to recompute.
        return [i for i in keep if tape.entries[i][0] not in ("const", "iota", "bcast", "convert")
                or self.a.recompute == "none" and tape.entries[i][0] == "convert"]

    @staticmethod
    def costly_producers(tape, produced, needed):
        """The dot and attention entries the `needed` entries are computed
        from in the layer, through any other ops."""
        found, seen, stack = set(), set(), list(needed)
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            if tape.entries[i][0] in ("dot", "attention"):
                found.add(i)
                continue
            stack.extend(produced[v.name] for v in tape.entries[i][2] if v.name in produced)
        return found

    # -- loops --

    def keeps_gathered(self):
        """FSDP without resharding after the forward (its SHARD_GRAD_OP):
        each layer's weights gathered once a micro-batch, in the forward,
        and kept for the backward."""
        return self.a.layout == "fsdp" and self.a.reshard_after_forward == "no"

    def layer_weights(self, stacked, index):
        """One layer's weights, sliced from the stacks and kept as they are
        stored (FSDP: sharded), so that what gathers them is per layer."""
        em = self.em
        out = {}
        for n, (s, spec) in stacked.items():
            w = em.dynamic_slice(Val(f"%{n}", s, self.a.dtype), index, 1)
            out[n] = em.plain(em._raw_constrain, w, spec[1:])
        return out

    def embedding_table(self):
        return Val("%embed", (self.a.vocab, self.m.H), self.a.dtype)

    def landed_gradients(self, grads, stacked):
        """A layer's weight gradients (by weight name) as they are
        accumulated, one per stacked buffer: sharded as the weight is
        stored, or with zero2 as its states are (FSDP, zero2: a
        reduce-scatter, not an all-reduce)."""
        return [self.em.plain(self.em._raw_constrain, grads[n], self.gradient_spec(spec, s)[1:])
                for n, (s, spec) in stacked.items()]

    def landed_embedding_gradient(self, g):
        return g

    def grad_dt(self):
        """The element type of the layers' weight gradients as the backward
        writes and reduces them: the weights' (jax.grad's), or f32."""
        return "f32" if self.a.grad_dtype == "f32" else self.a.dtype

    def gradient_spec(self, spec, shape):
        """Where a gradient lands: as its weight is stored, or with zero2 as
        its optimizer states are (a reduce-scatter over dp, not an
        all-reduce)."""
        return self.state_spec(spec, shape) if self.a.layout == "zero2" else spec

    def micro_batch_loop(self, params, stacked, saved):
        a, m, em = self.a, self.m, self.em
        dt = a.dtype
        acc = [(n, s, sp) for n, s, sp in params]
        zeros = []
        for n, s, sp in acc:  # accumulators stored as the gradients land
            z = em.const(0.0, s, "f32", record=False)
            zeros.append(em.plain(em._raw_constrain, z, self.gradient_spec(sp, s)))
        carries = ", ".join(f"%ga_{n} = {z.name}" for (n, _, _), z in zip(acc, zeros))
        types = ", ".join(tensor_type(s, "f32") for _, s, _ in acc)
        res = em.fresh("mb")
        em.line(f"{res}:{len(acc) + 1} = stablehlo.while(%mi = %c0, {carries}) : tensor<i32>, {types}")
        em.line(" cond {")
        em.line("  %more = stablehlo.compare LT, %mi, %cM, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>")
        em.line("  stablehlo.return %more : tensor<i1>")
        em.line("} do {")
        outer = em.indent
        em.indent += "  "
        tokens = em.dynamic_slice(Val("%tokens", (a.grad_accum, a.micro_batch, a.seq), "i32"), "%mi", 1)
        grads = self.one_micro_batch(tokens, params, stacked, saved)
        new = []
        for (n, s, sp), g in zip(acc, grads):
            g32 = g if g.dtype == "f32" else em.plain(em.convert, g, "f32")
            total = em.plain(em.ew, "add", Val(f"%ga_{n}", s, "f32"), g32)
            new.append(em.plain(em._raw_constrain, total, self.gradient_spec(sp, s)))
        em.line("%mnext = stablehlo.add %mi, %c1 : tensor<i32>")
        em.line(f"stablehlo.return %mnext, {', '.join(v.name for v in new)} : tensor<i32>, {types}")
        em.indent = outer
        em.line("}")
        return [Val(f"{res}#{i + 1}", s, "f32") for i, (_, s, _) in enumerate(acc)]

    def one_micro_batch(self, tokens, params, stacked, saved):
        a, m, em = self.a, self.m, self.em
        dt, H, V, S, b = a.dtype, m.H, a.vocab, a.seq, a.micro_batch
        L = a.layers
        act = (b, S, H)
        embed = self.embedding_table()
        x0 = em._op("emb", act, dt, lambda v: (
            f"\"stablehlo.gather\"({embed.name}, {tokens.name}) {{dimension_numbers = #stablehlo.gather<offset_dims = [2], "
            f"collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, {H}>, "
            f"indices_are_sorted = false}} : ({embed.type}, {tokens.type}) -> {v.type}"))
        x0 = em.plain(em._raw_constrain, x0, m.act_spec(3, True))
        # The forward loop: each layer's input, and the saved values, stacked.
        tape, _, _ = self.dry_layer()
        saved_vals = []
        for i in saved:
            o = tape.entries[i][1]
            saved_vals.extend(o if isinstance(o, list) else [o])
        # Without resharding after the forward, each layer's gathered
        # weights are kept, stacked, for the backward (after the saved values).
        kept = [Val(f"w_{n}", s[1:], dt) for n, (s, _) in stacked.items()] if self.keeps_gathered() else []
        stacks = [(em.const(0.0, (L,) + tuple(v.shape), v.dtype, record=False), v) for v in
                  [Val("x", act, dt)] + saved_vals + kept]
        carry_types = [tensor_type(act, dt)] + [tensor_type((L,) + tuple(v.shape), v.dtype) for _, v in stacks]
        res = em.fresh("fw")
        carries = ", ".join([f"%fh = {x0.name}"] + [f"%fs{j} = {z.name}" for j, (z, _) in enumerate(stacks)])
        em.line(f"{res}:{len(carry_types) + 1} = stablehlo.while(%li = %c0, {carries}) : tensor<i32>, {', '.join(carry_types)}")
        self.loop_cond("%li", "%cL")
        outer = em.indent
        em.indent += "  "
        y = Val("%fh", act, dt)
        news = [Val(f"%fs{j}", (L,) + tuple(v.shape), v.dtype) for j, (_, v) in enumerate(stacks)]
        for u in range(a.unroll):  # the layers of one iteration, as scan's unroll
            index = self.layer_index("%li", u)
            W = self.layer_weights(stacked, index)
            if kept:  # gathered here, once a micro-batch
                W = {n: em.plain(em._raw_constrain, w, without_dp(stacked[n][1][1:])) for n, w in W.items()}
            em.tape = Tape()
            x, y = y, m.layer(em, y, W)
            fwd_tape, em.tape = em.tape, None
            values = [x]
            for i in saved:
                o = fwd_tape.entries[i][1]
                values.extend(o if isinstance(o, list) else [o])
            values += [W[n] for n in stacked] if kept else []
            news = [em.dynamic_update(buf, v, index) for buf, v in zip(news, values)]
        em.line("%lnext = stablehlo.add %li, %c1 : tensor<i32>")
        em.line(f"stablehlo.return %lnext, {y.name}, {', '.join(v.name for v in news)} : tensor<i32>, {', '.join(carry_types)}")
        em.indent = outer
        em.line("}")
        h_final = Val(f"{res}#1", act, dt)
        stack_vals = [Val(f"{res}#{j + 2}", (L,) + tuple(v.shape), v.dtype) for j, (_, v) in enumerate(stacks)]
        self.kept = dict(zip(stacked, stack_vals[len(stack_vals) - len(kept):])) if kept else {}
        stack_vals = stack_vals[:len(stack_vals) - len(kept)]
        # Logits against the embedding, softmax cross-entropy, its gradient.
        em.tape = Tape()
        hf = h_final
        logits = em.dot(hf, embed, [2], [1])  # [b, S, V]
        l32 = em.convert(logits, "f32")
        mx = em.reduce(l32, [2], "maximum")
        sh = em.ew("subtract", l32, em.bcast(mx, [0, 1], l32.shape))
        ex = em.ew("exponential", sh)
        lse = em.ew("log", em.reduce(ex, [2]))
        labels = em.compare(em.iota(l32.shape, 2, "i32"), em.bcast(tokens, [0, 1], l32.shape), "EQ")
        picked = em.reduce(em.ew("multiply", sh, em.convert(labels, "f32")), [2])
        loss = em.reduce(em.ew("subtract", lse, picked), [0, 1])
        head_tape, em.tape = em.tape, None
        back = Backward(em)
        one = em.const(1.0, [], "f32", record=False)
        ct = back.run(head_tape, loss, one, [hf, embed])
        d_h = ct[hf.name]
        d_embed = ct.get(embed.name)
        # The backward loop, last layer first.
        gdt = self.grad_dt()
        zero_grads = [em.plain(em._raw_constrain, em.const(0.0, s, gdt, record=False),
                               self.gradient_spec(spec, s)) for _, (s, spec) in stacked.items()]
        gtypes = [tensor_type(s, gdt) for _, (s, _) in stacked.items()]
        res = em.fresh("bw")
        carries = ", ".join([f"%bh = {d_h.name}"] + [f"%bg{j} = {z.name}" for j, z in enumerate(zero_grads)])
        em.line(f"{res}:{len(gtypes) + 2} = stablehlo.while(%bi = %c0, {carries}) : tensor<i32>, "
                f"{tensor_type(act, dt)}, {', '.join(gtypes)}")
        self.loop_cond("%bi", "%cL")
        outer = em.indent
        em.indent += "  "
        d_x = Val("%bh", act, dt)
        new_grads = [Val(f"%bg{j}", s, gdt) for j, (s, _) in enumerate(stacked.values())]
        for u in range(a.unroll):
            d_x, new_grads = self.backward_layer(stacked, saved, fwd_tape, stack_vals, u, d_x, new_grads)
        em.line("%bnext = stablehlo.add %bi, %c1 : tensor<i32>")
        em.line(f"stablehlo.return %bnext, {d_x.name}, {', '.join(v.name for v in new_grads)} : tensor<i32>, "
                f"{tensor_type(act, dt)}, {', '.join(gtypes)}")
        em.indent = outer
        em.line("}")
        return self.embedding_gradient(res, d_embed, tokens, stacked)

    def backward_layer(self, stacked, saved, fwd_tape, stack_vals, u, d_y, grad_bufs):
        """The backward of the iteration's u-th layer from the last, whose
        output's cotangent is d_y: its input's cotangent, and the gradient
        buffers with its gradients landed."""
        a, m, em = self.a, self.m, self.em
        index = em.fresh("bj")
        em.line(f"{index} = stablehlo.subtract %last, {self.layer_index('%bi', u)} : tensor<i32>")
        if self.kept:  # the forward's gathered weights
            W = {n: em.plain(em._raw_constrain, em.dynamic_slice(self.kept[n], index, 1), without_dp(spec[1:]))
                 for n, (_, spec) in stacked.items()}
        else:
            W = self.layer_weights(stacked, index)
        sliced = [em.dynamic_slice(v, index, 1) for v in stack_vals]
        x_in = sliced[0]
        # Replay the layer's forward with the saved values standing in.
        replay, k = {}, 1
        for i in saved:
            o = fwd_tape.entries[i][1]
            if isinstance(o, list):
                replay[i] = sliced[k:k + len(o)]
                k += len(o)
            else:
                replay[i] = sliced[k]
                k += 1
        em.tape, em.replay = Tape(), replay
        y = m.layer(em, x_in, W)
        layer_tape = em.tape
        em.tape, em.replay = None, None
        back = Backward(em, [w.name for w in W.values()] if a.grad_dtype == "f32" else ())
        ct = back.run(layer_tape, y, d_y, [x_in] + list(W.values()))
        gdt = self.grad_dt()
        grads = {}
        for n, (shape, _) in m.weights.items():
            g = ct.get(W[n].name) or em.const(0.0, shape, gdt, record=False)
            grads[n] = g if g.dtype == gdt else em.plain(em.convert, g, gdt)
        landed = self.landed_gradients(grads, stacked)
        return ct[x_in.name], [em.dynamic_update(buf, g, index) for buf, g in zip(grad_bufs, landed)]

    def layer_index(self, counter, u):
        """The layer an iteration's u-th layer is: counter x unroll + u."""
        if self.a.unroll == 1:
            return counter
        em = self.em
        k, at, first, index = em.fresh("k"), em.fresh("at"), em.fresh("first"), em.fresh("layer")
        em.line(f"{k} = stablehlo.constant dense<{self.a.unroll}> : tensor<i32>")
        em.line(f"{at} = stablehlo.constant dense<{u}> : tensor<i32>")
        em.line(f"{first} = stablehlo.multiply {counter}, {k} : tensor<i32>")
        em.line(f"{index} = stablehlo.add {first}, {at} : tensor<i32>")
        return index

    def embedding_gradient(self, res, d_embed, tokens, stacked):
        """The embedding's gradient (the logits' part plus the gather's
        scatter) and the layers' from the backward loop `res`."""
        a, m, em = self.a, self.m, self.em
        dt, H, V = a.dtype, m.H, a.vocab
        act = (a.micro_batch, a.seq, H)
        d_x0 = Val(f"{res}#1", act, dt)
        d_rows = em._op("dg", (V, H), dt, lambda v: (
            f"\"stablehlo.scatter\"({d_embed.name}, {tokens.name}, {d_x0.name}) <{{indices_are_sorted = false, "
            f"scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], "
            f"scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}}> ({{\n"
            f"{em.indent}^bb0(%sa: tensor<{dt}>, %sb: tensor<{dt}>):\n"
            f"{em.indent}  %ss = stablehlo.add %sa, %sb : tensor<{dt}>\n"
            f"{em.indent}  stablehlo.return %ss : tensor<{dt}>\n"
            f"{em.indent}}}) : ({d_embed.type}, {tokens.type}, {d_x0.type}) -> {v.type}"))
        return [self.landed_embedding_gradient(d_rows)] + [Val(f"{res}#{j + 2}", s, self.grad_dt())
                                                           for j, (_, (s, _)) in enumerate(stacked.items())]

    def loop_cond(self, i, n):
        em = self.em
        em.line(" cond {")
        em.line(f"  %c{i[1:]} = stablehlo.compare LT, {i}, {n}, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>")
        em.line(f"  stablehlo.return %c{i[1:]} : tensor<i1>")
        em.line("} do {")

    def optimizer(self, params, grads, prefix=""):
        """AdamW in f32 on every weight; returns new weights and states (with
        --optimizer none, the gradients themselves). The weights and states
        are the arguments %{prefix}{name}, %{prefix}m_{name}, ..."""
        a, em = self.a, self.em
        if a.optimizer == "none":
            return grads
        outs_p, outs_m, outs_v = [], [], []
        for (n, s, _), g in zip(params, grads):
            P = Val(f"%{prefix}{n}", s, a.dtype)
            mo, vo = Val(f"%{prefix}m_{n}", s, "f32"), Val(f"%{prefix}v_{n}", s, "f32")

            def k(value):
                return em.plain(em.bcast, em.const(value, [], "f32", record=False), [], s)
            ew = lambda op, *xs: em.plain(em.ew, op, *xs)
            m1 = ew("add", ew("multiply", mo, k(0.9)), ew("multiply", g, k(0.1)))
            v1 = ew("add", ew("multiply", vo, k(0.95)), ew("multiply", ew("multiply", g, g), k(0.05)))
            upd = ew("divide", m1, ew("add", ew("sqrt", v1), k(1e-8)))
            p32 = em.plain(em.convert, P, "f32")
            p1 = ew("subtract", ew("multiply", p32, k(1 - 1e-5)), ew("multiply", upd, k(3e-4)))
            outs_p.append(em.plain(em.convert, p1, a.dtype))
            outs_m.append(m1)
            outs_v.append(v1)
        return outs_p + outs_m + outs_v


def without_dp(spec):
    return [None if axis == "dp" else axis for axis in spec]


def numel(shape):
    return functools.reduce(lambda x, y: x * y, shape, 1)


def dp_groups(mesh):
    """The devices that share each coordinate of the other axes, in dp
    order (global ids, the mesh's row-major order): what a collective over
    "dp" inside a manual computation over it runs over."""
    names, sizes = [n for n, _ in mesh], [s for _, s in mesh]
    groups = {}
    for device, coords in enumerate(itertools.product(*[range(n) for n in sizes])):
        others = tuple(c for n, c in zip(names, coords) if n != "dp")
        groups.setdefault(others, []).append(device)
    return list(groups.values())


class DpManualStep(Step):
    """The step one dp rank runs inside a manual computation over "dp" (the
    base of FlatStep and OnceReducedStep): dp's share of the batch,
    `free_mesh` the axes left to Shardy, its collectives over `a.mesh`'s dp
    groups; `D` is dp's size."""

    def __init__(self, a, free_mesh):
        self.D = dict(a.mesh)["dp"]
        inner = argparse.Namespace(**vars(a))
        inner.mesh = free_mesh
        inner.micro_batch, inner.layout = a.micro_batch // self.D, "dp"
        super().__init__(inner)
        self.em.collective_groups = dp_groups(a.mesh)


class FlatStep(DpManualStep):
    """--layout fsdp-flat: FSDP as PyTorch runs it (FlatParameter), written
    as a JAX shard_map step would be: the whole step in a manual
    computation over "dp", each layer's weights stored as one flat buffer
    (FSDP's unit: a transformer block) padded to a multiple of dp and split
    evenly (so any dp works, 440 as well as 8), gathered whole where the
    layer uses it (`all_gather`), its gradients reduce-scattered back onto
    the shards (`psum_scatter`); the embedding is a buffer of its own. The
    step inside is the data-parallel step on dp's share of the batch; AdamW
    runs on the shards. The other layouts let Shardy split each weight's
    dimensions, which JAX allows only where dp divides them.

    With a "tp" axis (Metaseq's FSDP over Megatron tensor parallelism)
    "tp" stays free in the manual computation and the step inside splits
    the layer as Megatron does; each tensor-parallel rank's own part of the
    split weights is one flat buffer, padded and split over dp: a layer's
    split weights are a [L, tp, n / dp] buffer ("layers_tp", spec
    [-, tp, dp]) whose row t holds rank t's columns (or rows) of every
    split weight, one after another, and the weights every rank holds whole
    (norms, output biases) a [L, n / dp] buffer ("layers"). For example with
    tp = 2, a [H, F] weight split by columns is flattened per rank as
    [H, 2, F/2] -> [2, H, F/2] -> [2, H * F/2]."""

    def __init__(self, a):
        self.outer = a
        self.T = dict(a.mesh).get("tp", 1)
        super().__init__(a, [("tp", self.T)] if self.T > 1 else [])

    def padded(self, n):
        return -(-n // self.D) * self.D

    def split_dim(self, spec):
        """The weight dimension split over "tp" (None: held whole)."""
        return spec.index("tp") if "tp" in spec else None

    def units(self):
        """The flat buffers: name -> (the weights in it, by name: (shape,
        spec)). The embedding's, then a layer's whole and split weights."""
        m, a = self.m, self.a
        emb = {"embed": ((a.vocab, m.H), self.embedding_spec())}
        whole = {n: w for n, w in m.weights.items() if self.split_dim(w[1]) is None}
        split = {n: w for n, w in m.weights.items() if self.split_dim(w[1]) is not None}
        out = {"embed": emb}
        if whole:
            out["layers"] = whole
        if split:
            out["layers_tp"] = split
        return out

    def buffer(self, weights, layers):
        """A unit's flat buffer as the step holds it inside the manual
        computation: (shape, spec), dp's share of the last dimension."""
        split = any(self.split_dim(sp) is not None for _, sp in weights.values())
        n = self.padded(sum(self.local_numel(s, sp) for s, sp in weights.values())) // self.D
        shape = ((layers,) if layers else ()) + ((self.T,) if split else ()) + (n,)
        spec = ([None] if layers else []) + (["tp"] if split else []) + [None]
        return shape, spec

    def params(self):
        return [(n, *self.buffer(w, 0 if n == "embed" else self.a.layers)) for n, w in self.units().items()]

    def stacked(self):
        return {n: (s, sp) for n, s, sp in self.params() if n != "embed"}

    def write(self, out):
        a, D = self.outer, self.D
        params = self.params()
        local_args, local_results = self.signature(params)

        def whole(t, dim):  # the global type of a per-device one: `dim` times dp
            shape = [int(d) for d in t[len("tensor<"):].split("x")[:-1]]
            shape[dim] *= D
            return tensor_type(shape, t.split("x")[-1][:-1])

        def global_spec(spec, dim):
            return [("dp" if i == dim else x) for i, x in enumerate(spec)]

        def dp_dim(name, t):  # the tokens' batch, a flat buffer's last dimension
            return 1 if name == "tokens" else t.count("x") - 1

        args = [(f"g_{n}", whole(t, dp_dim(n, t)), global_spec(sp, dp_dim(n, t))) for n, t, sp in local_args]
        results = [(whole(t, dp_dim("", t)), global_spec(sp, dp_dim("", t))) for t, sp in local_results]
        self.header(out, a, args, results)
        em = self.em
        names = em.manual_over_dp([("%" + n, t, sp) for n, t, sp in args], results,
                                  [(f"%{n}", t) for n, t, _ in local_args], lambda: self.body(params))
        em.line(f"return {', '.join(names)} : {', '.join(t for t, _ in results)}")
        out.extend(em.lines)
        out.append("}")

    def gathered(self, shard, spec, weights):
        """A flat shard ([n / dp], or [tp, n / dp] for split weights)
        gathered whole and cut into the weights, one after another (the
        padding after them left); a split weight's rows of the buffer are
        its tensor-parallel ranks' parts, put back side by side."""
        em, T = self.em, self.T
        flat = em._raw_constrain(em.all_gather(em._raw_constrain(shard, spec), self.D), spec)
        out, offset = [], 0
        for shape, wspec in weights:
            d, n = self.split_dim(wspec), self.local_numel(shape, wspec)
            piece = em.slice_range(flat, offset, n)
            offset += n
            if d is None:
                out.append(em._raw_reshape(piece, shape))
                continue
            local = list(shape)
            local[d] //= T
            ranks = em._raw_reshape(piece, [T] + local)  # [T, ..., F/T, ...]
            perm = list(range(1, d + 1)) + [0] + list(range(d + 1, len(shape) + 1))
            side_by_side = em._raw_transpose(ranks, perm)  # [..., T, F/T, ...]
            out.append(em._raw_constrain(em._raw_reshape(side_by_side, shape), wspec))
        return out

    def scattered(self, grads, weights, spec):
        """Gradients flattened one after another (a split weight's per
        tensor-parallel rank, as `gathered` cuts them), padded and
        reduce-scattered onto the shards."""
        em, T = self.em, self.T
        flat = []
        for g, (shape, wspec) in zip(grads, weights):
            d = self.split_dim(wspec)
            if d is None:
                flat.append(em._raw_reshape(g, (numel(shape),)))
                continue
            parts = em._raw_reshape(g, tuple(shape[:d]) + (T, shape[d] // T) + tuple(shape[d + 1:]))
            perm = [d] + list(range(d)) + list(range(d + 1, len(shape) + 1))
            ranks = em._raw_constrain(em._raw_transpose(parts, perm), ["tp"] + [None] * len(shape))
            flat.append(em._raw_reshape(ranks, (T, numel(shape) // T)))
        whole = em.concatenate(flat) if len(flat) > 1 else flat[0]
        whole = em._raw_constrain(em.pad_back(whole, self.padded(whole.shape[-1])), spec)
        return em._raw_constrain(em.reduce_scatter(whole, self.D), spec)

    def layer_weights(self, stacked, index):
        out = {}
        for (n, (s, spec)), weights in zip(stacked.items(), list(self.units().values())[1:]):
            shard = self.em.dynamic_slice(Val(f"%{n}", s, self.a.dtype), index, 1)
            values = self.em.plain(self.gathered, shard, spec[1:], list(weights.values()))
            out.update(zip(weights, values))
        return out

    def embedding_table(self):
        shape, spec = self.buffer(self.units()["embed"], 0)
        return self.em.plain(self.gathered, Val("%embed", shape, self.a.dtype), spec,
                             list(self.units()["embed"].values()))[0]

    def landed_gradients(self, grads, stacked):
        return [self.em.plain(self.scattered, [grads[w] for w in weights], list(weights.values()), spec[1:])
                for (_, (_, spec)), weights in zip(stacked.items(), list(self.units().values())[1:])]

    def landed_embedding_gradient(self, g):
        shape, spec = self.buffer(self.units()["embed"], 0)
        return self.em.plain(self.scattered, [g], list(self.units()["embed"].values()), spec)


class OnceReducedStep(DpManualStep):
    """--reduce-gradients once: each device sums its own micro-batches'
    gradients and the sum is reduced over dp once, after the last micro-batch
    (PyTorch DDP's no_sync, Megatron-LM's gradient buffer), written as a JAX
    step would: the micro-batch loop in a manual computation over "dp" (the
    other axes free), its f32 sums reduce-scattered onto the optimizer
    states' shards (`psum_scatter`, zero2) or summed whole (`psum`: dp,
    zero1); AdamW runs outside it on the states as stored, so that Shardy
    gathers the new weights (zero1, zero2) as in the other layouts. Without
    it the gradients are reduced as each micro-batch's land: JAX cannot
    carry a sum that is partial over dp through a loop without a manual
    computation (Shardy's unreduced axes are refused at the suite's
    commit: "duplicate axis ref")."""

    def __init__(self, a):
        self.outer = Step(argparse.Namespace(**vars(a)))
        super().__init__(a, [(n, size) for n, size in a.mesh if n != "dp"])

    def write(self, out):
        o, em = self.outer, self.em
        params = o.params()  # the weights hold no dp: the same inside and out
        args, results = o.signature(params)
        local_args, _ = self.signature(self.params())
        landing = [o.gradient_spec(sp, s) for _, s, sp in params]
        grad_types = [tensor_type(s, "f32") for _, s, _ in params]
        o.header(out, o.a, [(f"g_{n}", t, sp) for n, t, sp in args], results)
        inputs = args[:1 + len(params)]  # the tokens and the weights
        names = em.manual_over_dp(
            [("%g_" + n, t, sp) for n, t, sp in inputs], list(zip(grad_types, landing)),
            [(f"%{n}", t) for n, t, _ in local_args[:len(inputs)]],
            lambda: [self.reduced(g, sp, spec) for g, (_, _, sp), spec in
                     zip(self.gradients(self.params()), params, landing)])
        grads = [Val(name, s, "f32") for name, (_, s, _) in zip(names, params)]
        values = self.optimizer(params, grads, prefix="g_")
        em.line(f"return {', '.join(v.name for v in values)} : {', '.join(v.type for v in values)}")
        out.extend(em.lines)
        out.append("}")

    def reduced(self, g, spec, landing):
        """A device's summed gradient reduced over dp: scattered along the
        dimension its landing spec gives dp, else whole."""
        em = self.em
        g = em.plain(em._raw_constrain, g, spec)
        if "dp" not in landing:
            return em.plain(em._raw_constrain, em.plain(em.all_reduce, g, self.D), spec)
        dim = landing.index("dp")
        if g.shape[dim] % self.D:
            raise SystemExit(f"gen_training_step: --reduce-gradients once scatters a gradient of shape "
                             f"{list(g.shape)} over dp={self.D} along dimension {dim}, which dp does not divide")
        return em.plain(em._raw_constrain, em.plain(em.reduce_scatter, g, self.D, dim), spec)


def parse_mesh(text):
    mesh = []
    for part in text.split(","):
        name, _, size = part.partition("=")
        if not name or not size.isdigit() or int(size) < 1:
            raise SystemExit(f"--mesh: expected name=size[,name=size], got '{text}'")
        mesh.append((name.strip(), int(size)))
    return mesh


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--arch", choices=["gpt", "llama", "moe"], default="llama")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=0, help="K/V heads (default: --heads)")
    ap.add_argument("--ffn", type=int, default=0, help="MLP width (default: 4x hidden; llama 8/3x)")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--micro-batch", type=int, default=8, help="sequences per micro-batch, all devices")
    ap.add_argument("--grad-accum", type=int, default=1, help="micro-batches per step")
    ap.add_argument("--unroll", type=int, default=1,
                    help="layers per iteration of the layer loops (jax.lax.scan's unroll; --layers "
                         "must divide by it): their gradients land together, so XLA's combiner "
                         "reduces them as one bucket, as Megatron and DDP bucket gradients")
    ap.add_argument("--grad-bucket", type=int, default=0, metavar="ELEMENTS",
                    help="sets --unroll to the fewest layers whose weights hold ELEMENTS per device "
                         "(before a data-parallel split): Megatron-LM's gradient bucket is "
                         "max(40M, 1M x dp) elements")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    ap.add_argument("--recompute", choices=["none", "selective", "full"], default="selective")
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--top-k", type=int, default=2, help="MoE: experts per token (sizes the capacity)")
    ap.add_argument("--capacity-factor", type=float, default=1.25)
    ap.add_argument("--mesh", type=parse_mesh, default=parse_mesh("dp=1"))
    ap.add_argument("--layout", choices=["dp", "zero1", "zero2", "fsdp", "fsdp-flat"], default="dp")
    ap.add_argument("--optimizer", choices=["adamw", "none"], default="adamw",
                    help="none: the step returns its gradients (f32, sharded as they land) "
                         "instead of AdamW's new weights and states, so that `shardlab-run "
                         "--shardings module` can check a layout against the global step "
                         "(AdamW's m / (sqrt(v) + eps) magnifies the rounding of a near-zero "
                         "gradient past that check's tolerance)")
    ap.add_argument("--reduce-gradients", choices=["each-micro-batch", "once"], default="each-micro-batch",
                    help="once: each device sums its micro-batches' gradients and reduces the sum over dp "
                         "after the last (DDP's no_sync, Megatron-LM's gradient buffer), the micro-batch "
                         "loop in a manual computation over dp (layouts dp, zero1, zero2)")
    ap.add_argument("--reshard-after-forward", choices=["yes", "no"], default="yes",
                    help="--layout fsdp: no keeps each layer's weights gathered in the forward for the "
                         "backward (FSDP's SHARD_GRAD_OP: one gather a layer and micro-batch, whole weights "
                         "held like zero2's, but gathered where the forward uses them, not after the update)")
    ap.add_argument("--grad-dtype", choices=["weights", "f32"], default="weights",
                    help="the element type of the layers' weight gradients, as the backward's GEMMs write "
                         "them and data parallelism reduces them: the weights' (jax.grad's), or f32 "
                         "(Megatron-LM with bf16: its gradient accumulation fusion writes an f32 buffer "
                         "and reduces it in f32, twice the bytes; the embedding's stays the weights')")
    ap.add_argument("--sequence-parallel", action="store_true")
    ap.add_argument("--attention", choices=["shard_map", "rule", "dots"], default="shard_map",
                    help="cuDNN attention inside a manual computation over the mesh (as JAX's shard_map "
                         "writes it), or on the global shapes with a Shardy sharding rule (no manual "
                         "computation: --compare can replace the layout), or written out as two GEMMs "
                         "and a softmax (every op one the interpreter runs)")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args(argv)
    a.kv_heads = a.heads if a.arch == "gpt" else (a.kv_heads or a.heads)
    if not a.ffn:
        a.ffn = 4 * a.hidden if a.arch == "gpt" else (8 * a.hidden // 3 + 255) // 256 * 256
    mesh = dict(a.mesh)
    problems = []
    if a.hidden % a.heads or a.heads % a.kv_heads:
        problems.append("--hidden must divide by --heads, and --heads by --kv-heads")
    if a.grad_bucket < 0:
        problems.append("--grad-bucket is a number of elements, 0 or more")
    if a.grad_bucket and a.unroll != 1:
        problems.append("--grad-bucket sets --unroll: give one of them")
    if a.unroll < 1 or a.layers % a.unroll:
        problems.append(f"--layers {a.layers} must divide by --unroll {a.unroll}")
    if a.micro_batch % mesh.get("dp", 1):
        problems.append(f"--micro-batch {a.micro_batch} must divide by dp={mesh.get('dp', 1)}")
    if a.kv_heads % mesh.get("tp", 1) or a.ffn % mesh.get("tp", 1) or a.vocab % mesh.get("tp", 1):
        problems.append("K/V heads, --ffn and --vocab must divide by tp")
    if a.arch == "moe" and a.experts % mesh.get("dp", 1):
        problems.append("--experts must divide by dp")
    if set(mesh) - {"stage", "dp", "tp", "cp"}:
        problems.append("--mesh axes are stage, dp, tp and cp")
    if "stage" in mesh and a.mesh[0][0] != "stage":
        problems.append("--mesh: the stage axis comes first (a pipeline stage is a block of "
                        "consecutive devices)")
    if "cp" in mesh and (a.attention != "shard_map" or a.sequence_parallel or a.seq % mesh["cp"]):
        problems.append("cp (context parallelism: ring attention in shard_map) needs --attention shard_map, "
                        "no --sequence-parallel, and --seq divisible by cp")
    if a.layout == "fsdp-flat" and ("dp" not in mesh or set(mesh) - {"dp", "tp"} or a.arch == "moe"
                                    or a.sequence_parallel):
        problems.append("--layout fsdp-flat shards every weight over dp (tensor parallelism over tp "
                        "inside): --mesh dp=D[,tp=T], no MoE, no --sequence-parallel")
    if a.reduce_gradients == "once" and ("dp" not in mesh or "cp" in mesh or a.arch == "moe"
                                         or a.layout not in ("dp", "zero1", "zero2")):
        problems.append("--reduce-gradients once sums each device's gradients in a manual computation over "
                        "dp: --layout dp, zero1 or zero2, a dp axis, no cp, no MoE")
    if a.grad_dtype == "f32" and a.layout == "fsdp-flat":
        problems.append("--grad-dtype f32 is not written for --layout fsdp-flat (its flat gradient buffers "
                        "are of the weights' type)")
    if a.reshard_after_forward == "no" and a.layout != "fsdp":
        problems.append("--reshard-after-forward no is for --layout fsdp")
    if problems:
        raise SystemExit("gen_training_step: " + "; ".join(problems))
    out = []
    step = FlatStep if a.layout == "fsdp-flat" else OnceReducedStep if a.reduce_gradients == "once" else Step
    step(a).write(out)
    text = "\n".join(out) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
