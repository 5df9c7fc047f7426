#!/usr/bin/env python3
"""Writes a pipeline-parallel training step (GPipe or interleaved) as StableHLO.

As JAX programs write one with shard_map: the stacked layer weights [S*K, H, H] split over a
"stage" mesh axis (each stage holds its K layers), a counted loop of
M + S - 1 ticks over the micro-batches, each stage's output passed to the
next stage by `collective_permute`, then a second loop of M + S - 1 ticks
carrying the gradients back, stage to stage, last stage first.

  python3 bench/models/gen_pipeline.py --stages 4 --micro-batches 8 \\
      --layers-per-stage 2 --hidden 4096 --micro-batch-size 8 -o /tmp/pp.mlir

The layers are linear (h <- h W), the loss is sum(y^2) / 2 over the last
stage's outputs y (so dL/dy = y); the step returns the weights' gradients
(split over "stage" as the weights are) and y (all-reduced over the stages,
as jax.lax.psum would). Inside the loop, on stage s at tick t:

  forward   j = t - s             the micro-batch it works on
            in = s == 0 ? x[min(t, M)] : what stage s-1 sent   (x padded
                 with one zero micro-batch, so idle ticks carry zeros)
            stash[clamp(j, 0, M), k] = each layer's input (GPipe: all M
                 micro-batches in flight; slot M takes idle ticks' zeros)
            out = in W_1 ... W_K; sent to stage s+1
  backward  j = t - (S - 1 - s)
            g = s == S-1 ? y[clamp(j, 0, M)] : what stage s+1 sent
            per layer, last first: dW_k += x_k^T g; g = g W_k^T; sent to s-1

Idle ticks carry exact zeros (linear layers), so no mask is needed: a
stage's gradient sums only its micro-batches' terms, in micro-batch order.

--virtual-stages V > 1 writes the interleaved (circular) schedule instead:
weights [V, S*K, H, H] split over "stage" on dimension 1, so each device
holds V blocks of K layers (block r*S + s on stage s), the micro-batches go
round the ring of stages V times (stage S-1 sends back to stage 0), and a
step takes M V + S - 1 ticks of K layers (M a multiple of S): the bubble
is V times shorter than GPipe's with the same layers per device.

--self-check writes a module with no arguments, as JAX's self-checking test
modules are: small integer weights and inputs as f32 constants (every
product and sum exact), y and the gradients computed here in Python's
integers, and `check.expect_eq` of the pipeline's results against them.
`shardlab-run --shardings module` runs it globally and partitioned.
"""
import argparse
import random
import sys


def tensor_type(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def dense(values, shape, dtype):
    """A dense literal of nested lists (row-major `values`)."""
    def nest(flat, dims):
        if not dims:
            return fmt(flat[0], dtype)
        step = len(flat) // dims[0]
        return "[" + ", ".join(nest(flat[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])) + "]"
    return f"dense<{nest(values, list(shape))}> : {tensor_type(shape, dtype)}"


def fmt(v, dtype):
    return f"{float(v):.6e}" if dtype.startswith(("f", "bf")) else str(int(v))


class Writer:
    def __init__(self):
        self.lines, self.indent, self.count = [], "", 0

    def line(self, text):
        self.lines.append(self.indent + text)

    def fresh(self, stem="v"):
        self.count += 1
        return f"%{stem}{self.count}"

    def op(self, text, stem="v"):
        name = self.fresh(stem)
        self.line(f"{name} = {text}")
        return name


class Pipeline:
    def __init__(self, a):
        self.a = a
        self.S, self.M, self.K = a.stages, a.micro_batches, a.layers_per_stage
        self.H, self.B, self.dt = a.hidden, a.micro_batch_size, a.dtype
        self.V = a.virtual_stages
        self.L = self.S * self.K * self.V
        # Ticks each way: until the last micro-batch's last block leaves
        # the last stage (GPipe, V = 1: M + S - 1; M a multiple of S:
        # M V + S - 1).
        S, M, V = self.S, self.M, self.V
        self.ticks = (M - 1) // S * S * V + (V - 1) * S + (M - 1) % S + S
        self.w = Writer()

    # -- types --
    def t(self, *shape, dtype=None):
        return tensor_type(shape, dtype or self.dt)

    @property
    def act(self):
        return self.t(self.B, self.H)

    # -- small op helpers --
    def const_i32(self, value):
        return self.w.op(f"stablehlo.constant dense<{value}> : tensor<i32>", "c")

    def zeros(self, *shape):
        zero = self.w.op(f"stablehlo.constant dense<0.000000e+00> : tensor<{self.dt}>", "z")
        return self.w.op(f"stablehlo.broadcast_in_dim {zero}, dims = [] : (tensor<{self.dt}>) -> {self.t(*shape)}", "z")

    def scalar(self, op, a, b):
        return self.w.op(f"stablehlo.{op} {a}, {b} : tensor<i32>", "i")

    def slice_rows(self, value, shape, index, keep):
        """value[index] for a leading index (a tensor<i32>), as `keep` dims."""
        starts = ", ".join([index] + [self.c0] * (len(shape) - 1))
        sizes = ", ".join(["1"] + [str(d) for d in shape[1:]])
        sl = self.w.op(f"stablehlo.dynamic_slice {value}, {starts}, sizes = [{sizes}] : "
                       f"({self.t(*shape)}, {', '.join(['tensor<i32>'] * len(shape))}) -> {self.t(1, *shape[1:])}")
        return self.w.op(f"stablehlo.reshape {sl} : ({self.t(1, *shape[1:])}) -> {self.t(*keep)}")

    def update_rows(self, into, shape, value, value_shape, indices):
        """into[indices...] = value, `value` reshaped to leading size-1 dims."""
        lead = len(shape) - len(value_shape)
        up_shape = [1] * lead + list(value_shape)
        r = self.w.op(f"stablehlo.reshape {value} : ({self.t(*value_shape)}) -> {self.t(*up_shape)}")
        starts = ", ".join(list(indices) + [self.c0] * len(value_shape))
        return self.w.op(f"stablehlo.dynamic_update_slice {into}, {r}, {starts} : "
                         f"({self.t(*shape)}, {self.t(*up_shape)}, {', '.join(['tensor<i32>'] * len(shape))}) -> {self.t(*shape)}")

    def weight(self, lw, k):
        H, K = self.H, self.K
        if K == 1:
            return self.w.op(f"stablehlo.reshape {lw} : ({self.t(1, H, H)}) -> {self.t(H, H)}")
        sl = self.w.op(f"stablehlo.slice {lw} [{k}:{k + 1}, 0:{H}, 0:{H}] : ({self.t(K, H, H)}) -> {self.t(1, H, H)}")
        return self.w.op(f"stablehlo.reshape {sl} : ({self.t(1, H, H)}) -> {self.t(H, H)}")

    def dot(self, a, b, ca, cb, out_shape, a_shape, b_shape):
        return self.w.op(f"stablehlo.dot_general {a}, {b}, contracting_dims = [{ca}] x [{cb}] : "
                         f"({self.t(*a_shape)}, {self.t(*b_shape)}) -> {self.t(*out_shape)}")

    def permute(self, value, pairs, handle):
        if not pairs:  # one stage: nothing to pass on
            return value
        text = ", ".join(f"[{s}, {d}]" for s, d in pairs)
        return self.w.op(f"\"stablehlo.collective_permute\"({value}) <{{channel_handle = #stablehlo.channel_handle<handle = {handle}, "
                         f"type = 1>, source_target_pairs = dense<[{text}]> : tensor<{len(pairs)}x2xi64>}}> : "
                         f"({self.act}) -> {self.act}", "send")

    def loop(self, carries, body, limit=None):
        """A counted while loop of M + S - 1 ticks (or `limit`, a constant);
        `carries` are (name, init, type); `body(tick, names)` returns the
        next values."""
        w = self.w
        res = w.fresh("loop")
        names = [f"%{n}" for n, _, _ in carries]
        inits = ", ".join(f"{nm} = {init}" for nm, (_, init, _) in zip(names[1:], carries[1:]))
        tick = names[0]
        types = [ty for _, _, ty in carries]
        w.line(f"{res}:{len(carries)} = stablehlo.while({tick} = {carries[0][1]}, {inits}) : {', '.join(types)}")
        w.line(" cond {")
        more = f"%more{w.count}"
        w.line(f"  {more} = stablehlo.compare LT, {tick}, {limit or self.cT}, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>")
        w.line(f"  stablehlo.return {more} : tensor<i1>")
        w.line("} do {")
        outer = w.indent
        w.indent += "  "
        nexts = body(tick, names[1:])
        step = self.scalar("add", tick, self.c1)
        w.line(f"stablehlo.return {step}, {', '.join(nexts)} : {', '.join(types)}")
        w.indent = outer
        w.line("}")
        return [f"{res}#{i}" for i in range(len(carries))]

    # -- the per-stage program (inside the manual computation) --
    def prelude(self, lx):
        """What both schedules start with: the loop constants, this stage's
        index (partition_id: the mesh is the "stage" axis alone), whether it
        is the first and the last, and x padded with one zero micro-batch.
        Returns (stage, first, last, the constant S - 1, padded x)."""
        S, M, H, B, w = self.S, self.M, self.H, self.B, self.w
        self.c0, self.c1 = self.const_i32(0), self.const_i32(1)
        self.cM, self.cT = self.const_i32(M), self.const_i32(self.ticks)
        c_last = self.const_i32(S - 1)
        pid = w.op("stablehlo.partition_id : tensor<ui32>", "pid")
        stage = w.op(f"stablehlo.convert {pid} : (tensor<ui32>) -> tensor<i32>", "stage")
        pred = "(tensor<i32>, tensor<i32>) -> tensor<i1>"
        first = w.op(f"stablehlo.compare EQ, {stage}, {self.c0}, SIGNED : {pred}", "first")
        last = w.op(f"stablehlo.compare EQ, {stage}, {c_last}, SIGNED : {pred}", "last")
        pad = w.op(f"stablehlo.constant dense<0.000000e+00> : tensor<{self.dt}>", "z")
        xp = w.op(f"stablehlo.pad {lx}, {pad}, low = [0, 0, 0], high = [1, 0, 0], interior = [0, 0, 0] : "
                  f"({self.t(M, B, H)}, tensor<{self.dt}>) -> {self.t(M + 1, B, H)}", "xp")
        return stage, first, last, c_last, xp

    def body(self, lw, lx):
        S, M, K, H, B = self.S, self.M, self.K, self.H, self.B
        w = self.w
        stage, first, last, c_last, xp = self.prelude(lx)
        stash_shape, out_shape = (M + 1, K, B, H), (M + 1, B, H)
        # The stage's layers, sliced once: loop-invariant, as XLA hoists
        # them out of the loops (a K = 1 stage's is a reshape, no copy).
        weights = [self.weight(lw, k) for k in range(K)]
        fwd_pairs = [(s, s + 1) for s in range(S - 1)]
        bwd_pairs = [(s + 1, s) for s in range(S - 1)]

        def forward(tick, names):
            recv, stash, outs = names
            xi = w.op(f"stablehlo.minimum {tick}, {self.cM} : tensor<i32>", "i")
            xt = self.slice_rows(xp, (M + 1, B, H), xi, (B, H))
            h = w.op(f"stablehlo.select {first}, {xt}, {recv} : tensor<i1>, {self.act}", "in")
            j = self.scalar("subtract", tick, stage)
            slot = w.op(f"stablehlo.clamp {self.c0}, {j}, {self.cM} : tensor<i32>", "slot")
            for k in range(K):
                stash = self.update_rows(stash, stash_shape, h, (B, H), [slot, self.const_i32(k)])
                h = self.dot(h, weights[k], 1, 0, (B, H), (B, H), (H, H))
            outs = self.update_rows(outs, out_shape, h, (B, H), [slot])
            return [self.permute(h, fwd_pairs, 1), stash, outs]

        fw = self.loop([("t", self.c0, "tensor<i32>"), ("recv", self.zeros(B, H), self.act),
                        ("stash", self.zeros(*stash_shape), self.t(*stash_shape)),
                        ("outs", self.zeros(*out_shape), self.t(*out_shape))], forward)
        stash, outs = fw[2], fw[3]

        def backward(tick, names):
            recv, grads = names[0], list(names[1:])
            j = self.scalar("add", self.scalar("subtract", tick, c_last), stage)
            slot = w.op(f"stablehlo.clamp {self.c0}, {j}, {self.cM} : tensor<i32>", "slot")
            y = self.slice_rows(outs, out_shape, slot, (B, H))
            g = w.op(f"stablehlo.select {last}, {y}, {recv} : tensor<i1>, {self.act}", "g")
            for k in reversed(range(K)):
                xk = self.slice_rows(self.stash_row(stash, slot, stash_shape), (K, B, H),
                                     self.const_i32(k), (B, H))
                dw = self.dot(xk, g, 0, 0, (H, H), (B, H), (B, H))
                grads[k] = w.op(f"stablehlo.add {grads[k]}, {dw} : {self.t(H, H)}", "gw")
                g = self.dot(g, weights[k], 1, 1, (B, H), (B, H), (H, H))
            return [self.permute(g, bwd_pairs, 2)] + grads

        bw = self.loop([("u", self.c0, "tensor<i32>"), ("recvg", self.zeros(B, H), self.act)] +
                       [(f"gw{k}_", self.zeros(H, H), self.t(H, H)) for k in range(K)], backward)
        parts = [w.op(f"stablehlo.reshape {g} : ({self.t(H, H)}) -> {self.t(1, H, H)}") for g in bw[2:]]
        grads = parts[0] if K == 1 else w.op(
            f"stablehlo.concatenate {', '.join(parts)}, dim = 0 : ({', '.join([self.t(1, H, H)] * K)}) -> {self.t(K, H, H)}", "gw")
        return grads, self.sum_outputs(outs, out_shape, last)

    def circular_body(self, lw, lx):
        """The interleaved (circular) schedule: V virtual stages per device,
        device s holding layer blocks s, s + S, ..., each micro-batch going
        round the ring of stages V times. Micro-batches enter in groups of S;
        on stage s at tick t, with t' = t - s >= 0:
          group = t' / (S V), r = (t' % (S V)) / S   (the repeat),
          m = group S + t' % S                        (the micro-batch);
        the stage runs its block r on m, stage 0 taking x[m] when r = 0 and
        what stage S-1 sent otherwise (the ring's wrap-around). The bubble
        is S - 1 ticks of V times shorter ones."""
        S, M, K, H, B, V = self.S, self.M, self.K, self.H, self.B, self.V
        w = self.w
        stage, first, last, c_last, xp = self.prelude(lx)
        c_rlast = self.const_i32(V - 1)
        c_s, c_sv, c_trash = self.const_i32(S), self.const_i32(S * V), self.const_i32(M + 1)
        c_end = self.const_i32(self.ticks - 1)
        pred = "(tensor<i32>, tensor<i32>) -> tensor<i1>"
        # Slot M: idle ticks' zeros; outs slot M + 1: outputs of repeats
        # before the last (slot M stays zero: an idle backward reads it).
        stash_shape, out_shape, w_shape = (M + 1, V, K, B, H), (M + 2, B, H), (V, K, H, H)
        ring = [(s, (s + 1) % S) for s in range(S)]
        back_ring = [(d, s) for s, d in ring]

        def where(tick):
            """(slot, r, active, final) of this stage at forward tick `tick`."""
            rel = self.scalar("subtract", tick, stage)
            tc = self.scalar("maximum", rel, self.c0)
            group = self.scalar("divide", tc, c_sv)
            within = self.scalar("remainder", tc, c_sv)
            r = self.scalar("divide", within, c_s)
            m = self.scalar("add", self.scalar("multiply", group, c_s), self.scalar("remainder", within, c_s))
            started = w.op(f"stablehlo.compare GE, {rel}, {self.c0}, SIGNED : {pred}", "p")
            inside = w.op(f"stablehlo.compare LT, {m}, {self.cM}, SIGNED : {pred}", "p")
            active = w.op(f"stablehlo.and {started}, {inside} : tensor<i1>", "active")
            slot = w.op(f"stablehlo.select {active}, {m}, {self.cM} : tensor<i1>, tensor<i32>", "slot")
            at_end = w.op(f"stablehlo.compare EQ, {r}, {c_rlast}, SIGNED : {pred}", "p")
            final = w.op(f"stablehlo.and {active}, {at_end} : tensor<i1>", "final")
            return slot, r, at_end, final

        def layer_weight(r, k):
            sl = w.op(f"stablehlo.dynamic_slice {lw}, {r}, {self.const_i32(k)}, {self.c0}, {self.c0}, "
                      f"sizes = [1, 1, {H}, {H}] : ({self.t(*w_shape)}, tensor<i32>, tensor<i32>, tensor<i32>, "
                      f"tensor<i32>) -> {self.t(1, 1, H, H)}")
            return w.op(f"stablehlo.reshape {sl} : ({self.t(1, 1, H, H)}) -> {self.t(H, H)}")

        def forward(tick, names):
            recv, stash, outs = names
            slot, r, _, final = where(tick)
            xt = self.slice_rows(xp, (M + 1, B, H), slot, (B, H))
            fresh = w.op(f"stablehlo.compare EQ, {r}, {self.c0}, SIGNED : {pred}", "p")
            take_x = w.op(f"stablehlo.and {first}, {fresh} : tensor<i1>", "p")
            h = w.op(f"stablehlo.select {take_x}, {xt}, {recv} : tensor<i1>, {self.act}", "in")
            for k in range(K):
                stash = self.update_rows(stash, stash_shape, h, (B, H), [slot, r, self.const_i32(k)])
                h = self.dot(h, layer_weight(r, k), 1, 0, (B, H), (B, H), (H, H))
            out_slot = w.op(f"stablehlo.select {final}, {slot}, {c_trash} : tensor<i1>, tensor<i32>", "slot")
            outs = self.update_rows(outs, out_shape, h, (B, H), [out_slot])
            return [self.permute(h, ring, 1), stash, outs]

        fw = self.loop([("t", self.c0, "tensor<i32>"), ("recv", self.zeros(B, H), self.act),
                        ("stash", self.zeros(*stash_shape), self.t(*stash_shape)),
                        ("outs", self.zeros(*out_shape), self.t(*out_shape))], forward)
        stash, outs = fw[2], fw[3]

        def backward(tick, names):
            # Forward time reversed: backward tick u undoes forward tick T-1-u.
            recv, grads = names[0], names[1]
            slot, r, at_end, _ = where(self.scalar("subtract", c_end, tick))
            y = self.slice_rows(outs, out_shape, slot, (B, H))
            from_loss = w.op(f"stablehlo.and {last}, {at_end} : tensor<i1>", "p")
            g = w.op(f"stablehlo.select {from_loss}, {y}, {recv} : tensor<i1>, {self.act}", "g")
            for k in reversed(range(K)):
                row = self.slice_rows(stash, stash_shape, slot, stash_shape[1:])
                xk = self.slice_rows(self.slice_rows(row, stash_shape[1:], r, stash_shape[2:]), stash_shape[2:],
                                     self.const_i32(k), (B, H))
                dw = self.dot(xk, g, 0, 0, (H, H), (B, H), (B, H))
                kk = self.const_i32(k)
                old = w.op(f"stablehlo.dynamic_slice {grads}, {r}, {kk}, {self.c0}, {self.c0}, sizes = [1, 1, {H}, {H}] : "
                           f"({self.t(*w_shape)}, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> {self.t(1, 1, H, H)}")
                old = w.op(f"stablehlo.reshape {old} : ({self.t(1, 1, H, H)}) -> {self.t(H, H)}")
                total = w.op(f"stablehlo.add {old}, {dw} : {self.t(H, H)}", "gw")
                grads = self.update_rows(grads, w_shape, total, (H, H), [r, kk])
                g = self.dot(g, layer_weight(r, k), 1, 1, (B, H), (B, H), (H, H))
            return [self.permute(g, back_ring, 2), grads]

        bw = self.loop([("u", self.c0, "tensor<i32>"), ("recvg", self.zeros(B, H), self.act),
                        ("gw", self.zeros(*w_shape), self.t(*w_shape))], backward)
        return bw[2], self.sum_outputs(outs, out_shape, last)

    def sum_outputs(self, outs, out_shape, last):
        """y: the last stage's outputs, summed over the stages (zeros
        elsewhere), as jax.lax.psum would."""
        S, M, B, H, w = self.S, self.M, self.B, self.H, self.w
        ys = w.op(f"stablehlo.slice {outs} [0:{M}, 0:{B}, 0:{H}] : ({self.t(*out_shape)}) -> {self.t(M, B, H)}", "y")
        mine = w.op(f"stablehlo.select {last}, {ys}, {self.zeros(M, B, H)} : tensor<i1>, {self.t(M, B, H)}", "y")
        groups = ", ".join(str(s) for s in range(S))
        w.line(f"%ysum = \"stablehlo.all_reduce\"({mine}) <{{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, "
               f"replica_groups = dense<[[{groups}]]> : tensor<1x{S}xi64>, use_global_device_ids}}> ({{")
        w.line(f"^bb0(%ra: tensor<{self.dt}>, %rb: tensor<{self.dt}>):")
        w.line(f"  %rs = stablehlo.add %ra, %rb : tensor<{self.dt}>")
        w.line(f"  stablehlo.return %rs : tensor<{self.dt}>")
        w.line(f"}}) : ({self.t(M, B, H)}) -> {self.t(M, B, H)}")
        return "%ysum"

    def stash_row(self, stash, slot, shape):
        return self.slice_rows(stash, shape, slot, shape[1:])

    # -- the module --
    def write(self, out, inputs=None):
        S, M, K, H, B, L = self.S, self.M, self.K, self.H, self.B, self.L
        w = self.w
        V, T = self.V, self.ticks
        rep3 = "<@mesh, [{}, {}, {}]>"
        if V == 1:  # [S K, H, H]: stage s holds layers s K .. s K + K - 1
            w_global, w_local, w_sh = (L, H, H), (K, H, H), '<@mesh, [{"stage"}, {}, {}]>'
        else:  # [V, S K, H, H]: stage s holds block s of every repeat
            w_global, w_local, w_sh = (V, S * K, H, H), (V, K, H, H), '<@mesh, [{}, {"stage"}, {}, {}]>'
        out.append(f"// Generated by bench/models/gen_pipeline.py {' '.join(sys.argv[1:])}")
        kind = "GPipe" if V == 1 else f"interleaved, {V} virtual stages per device"
        out.append(f"// {kind}: {S} stages x {K} layers, {M} micro-batches of {B} x {H}, {self.dt}: "
                   f"{T} ticks forward and {T} backward")
        # By hand: one activation sent each tick each way, y summed once.
        expected = ([f"collective-permute={2 * T}"] if S > 1 else []) + ["all-reduce=1"]
        out.append(f"// expected collectives: {' '.join(expected)}")
        out.append(f'sdy.mesh @mesh = <["stage"={S}]>')
        wt, xt = self.t(*w_global), self.t(M, B, H)
        if inputs is None:
            out.append(f"func.func @main(%w: {wt} {{sdy.sharding = #sdy.sharding{w_sh}}}, "
                       f"%x: {xt} {{sdy.sharding = #sdy.sharding{rep3}}})")
            out.append(f"    -> ({wt} {{sdy.sharding = #sdy.sharding{w_sh}}}, {xt}) {{")
            wv, xv = "%w", "%x"
        else:
            out.append(f"func.func @main() {{")
            w.indent = "  "
            wv = w.op(f"stablehlo.constant {dense(inputs['w'], w_global, self.dt)}", "w")
            xv = w.op(f"stablehlo.constant {dense(inputs['x'], (M, B, H), self.dt)}", "x")
        w.indent = "  "
        w.line(f"%r:2 = sdy.manual_computation({wv}, {xv}) in_shardings=[{w_sh}, {rep3}] "
               f"out_shardings=[{w_sh}, {rep3}] manual_axes={{\"stage\"}} "
               f"(%lw: {self.t(*w_local)}, %lx: {xt}) {{")
        w.indent = "    "
        grads, y = (self.body if V == 1 else self.circular_body)("%lw", "%lx")
        w.line(f"sdy.return {grads}, {y} : {self.t(*w_local)}, {xt}")
        w.indent = "  "
        w.line(f"}} : ({wt}, {xt}) -> ({wt}, {xt})")
        if inputs is None:
            w.line(f"return %r#0, %r#1 : {wt}, {xt}")
        else:
            dw, y = reference(inputs["w"], inputs["x"], L, M, B, H)
            ew = w.op(f"stablehlo.constant {dense(dw, w_global, self.dt)}", "expected")
            ey = w.op(f"stablehlo.constant {dense(y, (M, B, H), self.dt)}", "expected")
            w.line(f"stablehlo.custom_call @check.expect_eq(%r#0, {ew}) {{has_side_effect = true}} : ({wt}, {wt}) -> ()")
            w.line(f"stablehlo.custom_call @check.expect_eq(%r#1, {ey}) {{has_side_effect = true}} : ({xt}, {xt}) -> ()")
            w.line("return")
        out.extend(w.lines)
        out.append("}")


class Scanned(Pipeline):
    """The same step with no pipeline, as a scanned-layers training step
    writes it: a loop over the M micro-batches, in it a forward loop over
    the L = S K layers (weights [L, H, H] sliced by layer, each layer's
    input stacked [L, B, H]) and a backward loop, last layer first, writing
    each layer's gradient into [L, H, H], summed over the micro-batches.
    The mesh keeps a "stage" axis of S devices that no sharding uses:
    `shardlab-schedule --pipeline-stages S` cuts it into the pipeline the
    Pipeline class writes by hand, to compare the two estimates."""

    def write(self, out, inputs=None):
        S, M, K, H, B, L = self.S, self.M, self.K, self.H, self.B, self.L
        w = self.w
        if self.V != 1:
            raise SystemExit("--scanned writes the step without a pipeline: drop --virtual-stages")
        wt, xt = self.t(L, H, H), self.t(M, B, H)
        out.append(f"// Generated by bench/models/gen_pipeline.py {' '.join(sys.argv[1:])}")
        out.append(f"// scanned layers, no pipeline: {L} layers, {M} micro-batches of {B} x {H}, {self.dt}")
        out.append(f'sdy.mesh @mesh = <["stage"={S}]>')
        out.append(f"func.func @main(%w: {wt}, %x: {xt}) -> ({wt}, {xt}) {{")
        w.indent = "  "
        self.c0, self.c1 = self.const_i32(0), self.const_i32(1)
        cM, cL, cLast = self.const_i32(M), self.const_i32(L), self.const_i32(L - 1)

        def micro_batch(j, names):
            gacc, ys = names
            xj = self.slice_rows("%x", (M, B, H), j, (B, H))

            def forward(i, names):
                h, stash = names
                wi = self.slice_rows("%w", (L, H, H), i, (H, H))
                stash2 = self.update_rows(stash, (L, B, H), h, (B, H), [i])
                return [self.dot(h, wi, 1, 0, (B, H), (B, H), (H, H)), stash2]
            fw = self.loop([("i", self.c0, "tensor<i32>"), ("h", xj, self.act),
                            ("st", self.zeros(L, B, H), self.t(L, B, H))], forward, cL)
            y = fw[1]
            ys2 = self.update_rows(ys, (M, B, H), y, (B, H), [j])

            def backward(k, names):  # dW_l += x_l^T g, in place
                g, dw = names
                l = self.scalar("subtract", cLast, k)
                xl = self.slice_rows(fw[2], (L, B, H), l, (B, H))
                wl = self.slice_rows("%w", (L, H, H), l, (H, H))
                dwl = self.dot(xl, g, 0, 0, (H, H), (B, H), (B, H))
                acc = w.op(f"stablehlo.add {self.slice_rows(dw, (L, H, H), l, (H, H))}, {dwl} : {self.t(H, H)}")
                dw2 = self.update_rows(dw, (L, H, H), acc, (H, H), [l])
                return [self.dot(g, wl, 1, 1, (B, H), (B, H), (H, H)), dw2]
            bw = self.loop([("k", self.c0, "tensor<i32>"), ("g", y, self.act),
                            ("dw", gacc, wt)], backward, cL)
            return [bw[2], ys2]
        mb = self.loop([("j", self.c0, "tensor<i32>"), ("gacc", self.zeros(L, H, H), wt),
                        ("ys", self.zeros(M, B, H), xt)], micro_batch, cM)
        w.line(f"return {mb[1]}, {mb[2]} : {wt}, {xt}")
        out.extend(w.lines)
        out.append("}")


def reference(wflat, xflat, L, M, B, H):
    """The step computed directly, in Python's integers: y and dL/dW for
    L = sum(y^2) / 2, every micro-batch through every layer in turn."""
    W = [[wflat[(l * H + i) * H:(l * H + i + 1) * H] for i in range(H)] for l in range(L)]
    dW = [[[0] * H for _ in range(H)] for _ in range(L)]
    ys = []

    def matmul(a, b):  # a [n x H], b [H x H]
        return [[sum(r[i] * b[i][c] for i in range(H)) for c in range(H)] for r in a]

    for m in range(M):
        h = [xflat[(m * B + r) * H:(m * B + r + 1) * H] for r in range(B)]
        inputs = []
        for l in range(L):
            inputs.append(h)
            h = matmul(h, W[l])
        ys.extend(v for row in h for v in row)
        g = h
        for l in reversed(range(L)):
            x = inputs[l]
            for i in range(H):
                for c in range(H):
                    dW[l][i][c] += sum(x[r][i] * g[r][c] for r in range(B))
            g = [[sum(row[c] * W[l][i][c] for c in range(H)) for i in range(H)] for row in g]
    flat = [v for layer in dW for row in layer for v in row]
    largest = max(abs(v) for v in flat + ys)
    if largest >= 1 << 24:
        raise SystemExit(f"--self-check: a value reaches {largest}, not exact in f32; use smaller sizes")
    return flat, ys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stages", type=int, default=4, help="pipeline stages S (devices on the \"stage\" axis)")
    ap.add_argument("--micro-batches", type=int, default=8, help="micro-batches M per step")
    ap.add_argument("--layers-per-stage", type=int, default=1,
                    help="layers K in each stage's block (with --virtual-stages V: per block, V blocks a device)")
    ap.add_argument("--virtual-stages", type=int, default=1,
                    help="V > 1: the interleaved (circular) schedule, V blocks of K layers on each device")
    ap.add_argument("--hidden", type=int, default=1024, help="hidden size H (each layer is H x H)")
    ap.add_argument("--micro-batch-size", type=int, default=8, help="rows of each micro-batch")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    ap.add_argument("--self-check", action="store_true",
                    help="constant integer inputs and check.expect_eq against the step computed here (f32)")
    ap.add_argument("--seed", type=int, default=0, help="--self-check: the inputs' seed")
    ap.add_argument("--scanned", action="store_true",
                    help="the same step without a pipeline (scanned layers in a micro-batch loop, a "
                         "\"stage\" axis unused), for shardlab-schedule --pipeline-stages S to cut")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args(argv)
    for name in ("stages", "micro_batches", "layers_per_stage", "virtual_stages", "hidden", "micro_batch_size"):
        if getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    inputs = None
    if a.self_check:
        a.dtype = "f32"
        rng = random.Random(a.seed)
        L, H = a.stages * a.layers_per_stage * a.virtual_stages, a.hidden
        # Each weight a signed permutation with one more +-1: values stay
        # non-zero through the layers, grow slowly, and stay exact.
        w = []
        for _ in range(L):
            layer = [0] * (H * H)
            for row, col in enumerate(rng.sample(range(H), H)):
                layer[row * H + col] = rng.choice((-1, 1))
            layer[rng.randrange(H * H)] = rng.choice((-1, 1))
            w.extend(layer)
        inputs = {"w": w,
                  "x": [rng.choice((-2, -1, 0, 1, 2)) for _ in range(a.micro_batches * a.micro_batch_size * H)]}
    out = []
    if a.scanned and a.self_check:
        ap.error("--scanned does not write a self-checking module")
    (Scanned if a.scanned else Pipeline)(a).write(out, inputs)
    text = "\n".join(out) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        import os
        import tempfile
        d = os.path.dirname(os.path.abspath(a.output))
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".gen_pipeline.")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, a.output)


if __name__ == "__main__":
    main()
