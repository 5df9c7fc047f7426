#!/usr/bin/env python3
"""ctest for bench/models/gen_training_step.py: every architecture and
recomputation policy it writes goes through shardlab-schedule (propagation,
export, schedule), and the estimate shows what the options mean:

  - the micro-batch loop and the layer loops run their trip counts;
  - tensor parallelism gives all-reduces, FSDP all-gathers and
    reduce-scatters, the mixture of experts all-to-alls;
  - cuDNN's flash attention is costed (never in not_costed);
  - recomputation: full runs the layer's GEMMs again (more GEMM kernels
    than none; selective recomputes only elementwise ops, so as many GEMMs
    as none), and saves less per layer (fewer in-place writes into the
    saved stacks: none > selective > full; peak memory none > full);
  - --attention rule writes the same step with the cuDNN calls on global
    shapes under a Shardy sharding rule (no manual computation): the calls
    cost what the shard_map form's do, and --compare can replace the layout
    (every family but EP runs; splitting the sequence gathers it for the
    attention, whose rule needs it whole);
  - --layout zero1 and zero2 shard the optimizer states over dp on a
    dimension dp divides (no padding, which JAX would refuse); zero2 also
    lands each layer's gradient sharded: it reduce-scatters what zero1
    all-reduces, and holds less;
  - --layout fsdp-flat moves what PyTorch's FSDP moves, worked out by
    hand from the model's sizes: per micro-batch one gather of each
    layer's flat buffer in the forward and one in the backward's
    recomputation, one of the embedding, and one reduce-scatter of each,
    every buffer padded to a multiple of dp; it holds less than dp; with
    tensor parallelism inside, each rank's part of the split weights;
  - --grad-bucket N runs the fewest layers an iteration whose weights
    hold N elements per device (worked out by hand), and reduce-scatters
    their gradients together: fewer collectives, the same bytes;
  - the comparer's EP row of a mixture of experts is the program JAX
    writes: the generator's own expert layout (its sharding constraints
    around the experts) and the EP row (its constraints added by
    shardlab-expert-exchange) take the same time, and the tokens move by
    all-to-all, as many and as large as worked out by hand.

    python3 tests/schedule/check_training_step_generator.py --cli build/shardlab-schedule
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATOR = os.path.join(ROOT, "bench", "models", "gen_training_step.py")
SMALL = ["--layers", "3", "--hidden", "2048", "--heads", "16", "--ffn", "8192",
         "--vocab", "4096", "--seq", "1024", "--micro-batch", "16", "--grad-accum", "2",
         "--mesh", "dp=2,tp=2", "--layout", "fsdp"]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def estimate(cli, tmp, args, flags=()):
    module = os.path.join(tmp, "step.mlir")
    report = os.path.join(tmp, "report.json")
    subprocess.run([sys.executable, GENERATOR] + args + ["-o", module], check=True)
    p = subprocess.run([cli, module, "--preset", "h100", "--report", report] + list(flags),
                       capture_output=True, text=True)
    if p.returncode != 0:
        failures.append("%s: shardlab-schedule failed: %s" % (" ".join(args), p.stderr[-800:]))
        return None
    with open(report) as f:
        return json.load(f)


def is_gemm(op):
    fusion = op.get("fusion") or {}
    return fusion.get("kind") == "gemm" or op["name"].startswith("stablehlo.dot_general@")


def is_save(op):
    return (op.get("fusion") or {}).get("kind") == "in-place update"


def kernels(report, predicate):
    return sum(1 for op in report["ops"] if op["kind"] == "compute" and predicate(op))


def attention_us(report):
    return sum(op["end_us"] - op["start_us"] for op in report["ops"]
               if op["cost_explanation"].startswith("flash attention (cuDNN)"))


def check_attention_rule(cli, tmp):
    args = ["--arch", "llama", "--kv-heads", "4"] + SMALL
    by_form = {form: estimate(cli, tmp, args + ["--attention", form]) for form in ("shard_map", "rule")}
    if None in by_form.values():
        return
    a, b = attention_us(by_form["shard_map"]), attention_us(by_form["rule"])
    print("attention: %.3f us as a shard_map, %.3f us under a rule" % (a, b))
    check(a > 0 and abs(a - b) <= 1e-6 * a,
          "attention costs %.3f us as a shard_map, %.3f us under a rule" % (a, b))
    module = os.path.join(tmp, "rule.mlir")
    report = os.path.join(tmp, "compare.json")
    subprocess.run([sys.executable, GENERATOR] + args + ["--attention", "rule", "-o", module], check=True)
    with open(module) as f:
        check("manual_computation" not in f.read(), "--attention rule wrote a manual computation")
    p = subprocess.run([cli, module, "--preset", "h100", "--compare", "--devices", "4", "--report", report],
                       capture_output=True, text=True)
    if not check(p.returncode == 0, "--compare on the rule form failed: %s" % p.stderr[-800:]):
        return
    with open(report) as f:
        rows = {row["name"]: row for row in json.load(f)["rows"]}
    # EP: no expert weights; CP: 1,024 tokens over 4 devices are too few
    # for a ring (their rows say so; tests/examples/test_context_parallel.py
    # checks the ring's numbers on a longer sequence).
    failed = sorted(name for name, row in rows.items() if not row["ok"] and name not in ("EP", "CP"))
    check("expert weight" in rows.get("EP", {}).get("error", ""), "--compare: no EP row saying why")
    check("256 tokens of the sequence" in rows.get("CP", {}).get("error", ""),
          "--compare: no CP row saying why: %s" % rows.get("CP", {}).get("error"))
    check(not failed, "--compare: %s did not run" % failed)
    sp = rows.get("SP", {})
    gathers = sum(c["count"] for c in sp.get("collectives", []) if c["kind"] == "all-gather")
    print("--compare on the rule form: %d rows ran; SP gathers %d times" %
          (sum(1 for row in rows.values() if row["ok"]), gathers))
    check(gathers > 0, "SP: no all-gather before the attention that needs the sequence whole")


def check_expert_layout(cli, tmp):
    """EP as JAX writes it, against the comparer's EP row (4 devices)."""
    L, M, b, s, E, H = 2, 2, 8, 512, 4, 512
    args = ["--arch", "moe", "--layers", str(L), "--hidden", str(H), "--heads", "8",
            "--kv-heads", "4", "--ffn", "1024", "--vocab", "1024", "--seq", str(s),
            "--micro-batch", str(b), "--grad-accum", str(M), "--experts", str(E),
            "--mesh", "dp=4", "--attention", "rule"]
    module = os.path.join(tmp, "moe.mlir")
    report = os.path.join(tmp, "moe-compare.json")
    subprocess.run([sys.executable, GENERATOR] + args + ["-o", module], check=True)
    p = subprocess.run([cli, module, "--preset", "h100", "--compare", "--devices", "4",
                        "--loops", "unroll", "--report", report],
                       capture_output=True, text=True)
    if not check(p.returncode == 0, "--compare on the MoE failed: %s" % p.stderr[-800:]):
        return
    with open(report) as f:
        rows = {row["name"]: row for row in json.load(f)["rows"]}
    ep, written = rows.get("EP", {}), rows.get("as written", {})
    if not check(ep.get("ok") and written.get("ok"), "MoE: EP or the module as written did not run"):
        return
    print("MoE on 4 devices: EP %.3f us, as JAX writes it %.3f us"
          % (ep["step_time_us"], written["step_time_us"]))
    check(abs(ep["step_time_us"] - written["step_time_us"]) <= 1e-3 * written["step_time_us"],
          "MoE: EP %.3f us, the module as JAX writes it %.3f us"
          % (ep["step_time_us"], written["step_time_us"]))
    kinds = {c["kind"]: c for c in ep["collectives"]}
    # By hand: top-2 routing at capacity factor 1.25 gives C = 512 * 2 *
    # 1.25 / 4 = 320 slots per expert; the dispatched tokens [b, E, C, H]
    # bf16 hold 8 * 4 * 320 * 512 * 2 B, a quarter on each device. They go
    # to the experts and back in the forward, and their gradients both
    # ways in the backward: 4 all-to-alls per layer and micro-batch.
    per_call = b * E * (s * 2 * 5 // 4 // E) * H * 2 // 4
    a2a = kinds.get("all-to-all", {})
    check(a2a.get("count") == 4 * L * M and a2a.get("bytes") == 4 * L * M * per_call,
          "MoE EP: all-to-all %s x %s B, by hand %d x %d B"
          % (a2a.get("count"), a2a.get("bytes"), 4 * L * M, 4 * L * M * per_call))
    check("all-gather" not in kinds,
          "MoE EP: the tokens were gathered (%s), not exchanged" % kinds.get("all-gather"))


def check_zero_layouts(cli, tmp):
    # dp = 3 divides the hidden width (1,536) but not the head width (128):
    # the output projection's states [L, heads, 128, 1536] must split the
    # hidden width, not the first free dimension.
    args = ["--arch", "llama", "--layers", "2", "--hidden", "1536", "--heads", "12",
            "--ffn", "6144", "--vocab", "3072", "--seq", "256", "--micro-batch", "6",
            "--mesh", "dp=3,tp=2", "--recompute", "selective"]
    by_layout = {}
    for layout in ("zero1", "zero2"):
        r = estimate(cli, tmp, args + ["--layout", layout])
        if r is None:
            return
        by_layout[layout] = r
        padded = [a for a in r["assumptions"] if "padding" in a]
        check(not padded, "%s: padded shardings %s" % (layout, padded[:2]))
    kinds = {k: by_layout[k]["per_kind"] for k in by_layout}
    ar = {k: v.get("all-reduce", {}).get("bytes", 0) for k, v in kinds.items()}
    rs = {k: v.get("reduce-scatter", {}).get("bytes", 0) for k, v in kinds.items()}
    check(rs["zero2"] > rs["zero1"] and ar["zero2"] < ar["zero1"],
          "zero2 should reduce-scatter what zero1 all-reduces: all-reduce bytes %s, "
          "reduce-scatter bytes %s" % (ar, rs))
    peak = {k: v["peak_memory_bytes"] for k, v in by_layout.items()}
    check(peak["zero2"] < peak["zero1"],
          "zero2 holds gradient shards, zero1 whole gradients: peaks %s" % peak)


def check_gradient_buckets(cli, tmp):
    # A Llama layer's weights on each of tp = 2 devices: both RMSNorm scales
    # whole, Q/K/V/O and the three MLP matrices halved.
    H, D, heads, F, L = 1536, 128, 12, 6144, 4
    per_layer = 2 * H + (4 * H * heads * D + 3 * H * F) // 2
    args = ["--arch", "llama", "--layers", str(L), "--hidden", str(H), "--heads", str(heads),
            "--ffn", str(F), "--vocab", "3072", "--seq", "256", "--micro-batch", "6",
            "--mesh", "dp=3,tp=2", "--recompute", "selective", "--sequence-parallel",
            "--layout", "zero2"]
    by_bucket = {}
    for bucket, layers in ((0, 1), (2 * per_layer, 2), (2 * per_layer + 1, 4)):
        r = estimate(cli, tmp, args + (["--grad-bucket", str(bucket)] if bucket else []))
        if r is None:
            return
        by_bucket[layers] = r
        trips = sorted(loop["trip_count"] for loop in r["loops"])
        check(trips.count(L // layers) >= 2,
              "--grad-bucket %d: layer loops %s, want %d iterations of %d layers"
              % (bucket, trips, L // layers, layers))
    # Each iteration's gradients land together and are reduce-scattered as
    # one bucket: fewer collectives, the same bytes.
    rs = {k: (r["per_kind"]["reduce-scatter"]["count"], r["per_kind"]["reduce-scatter"]["bytes"])
          for k, r in by_bucket.items()}
    print("reduce-scatters (count, bytes) by layers an iteration: %s" % rs)
    check(rs[1][0] > rs[2][0] > rs[4][0] and rs[1][1] == rs[2][1] == rs[4][1],
          "gradient buckets: reduce-scatters (count, bytes) by layers an iteration %s" % rs)


def gpt_layer_params(H, F):
    """A GPT layer's parameters: two LayerNorms (scale, bias), Q/K/V/O
    (H x H) and their biases, the MLP (H x F, F x H) and its biases."""
    return 4 * H + 4 * H * H + 4 * H + 2 * H * F + F + H


def check_once_reduction(cli, tmp):
    """--reduce-gradients once reduces each device's f32 sums over dp once a
    step, whatever the micro-batches: a GPT step on dp = 2 alone (every
    collective a data-parallel one) reduce-scatters 4 bytes a parameter
    over dp (zero2), where reducing as each micro-batch's bf16 gradients
    land moves 2 bytes a parameter a micro-batch; both gather the new bf16
    weights once."""
    L, H, F, V, dp = 2, 512, 2048, 4096, 2
    layer = gpt_layer_params(H, F)
    params = L * layer + V * H
    got = {}
    for mode in ("each-micro-batch", "once"):
        for M in (2, 4):
            r = estimate(cli, tmp, ["--arch", "gpt", "--layers", str(L), "--hidden", str(H), "--heads", "8",
                                    "--ffn", str(F), "--vocab", str(V), "--seq", "256",
                                    "--micro-batch", "4", "--grad-accum", str(M), "--recompute", "full",
                                    "--mesh", "dp=%d" % dp, "--layout", "zero2", "--reduce-gradients", mode])
            if r is None:
                return
            got[mode, M] = {k: v["bytes"] for k, v in r["per_kind"].items() if v["count"]}
    # Reduced as they land, the embedding's gradient is also resharded each
    # micro-batch (an all-to-all and a small gather): only the
    # reduce-scatters are worked out by hand there.
    want = {("once", M): {"reduce-scatter": 4 * params // dp, "all-gather": 2 * params} for M in (2, 4)}
    want.update({("each-micro-batch", M): {"reduce-scatter": 2 * M * params // dp} for M in (2, 4)})
    got = {k: v if k[0] == "once" else {"reduce-scatter": v.get("reduce-scatter")} for k, v in got.items()}
    print("zero2 collective bytes by (reduction, micro-batches): %s, by hand %s" % (got, want))
    check(got == want, "--reduce-gradients: collective bytes %s, by hand %s" % (got, want))


def check_f32_gradients(cli, tmp):
    """--grad-dtype f32 (Megatron-LM's f32 gradient buffer): the layers'
    weight-gradient GEMMs write f32 and zero2 reduce-scatters them at 4
    bytes a parameter; the norms' and biases' gradients (reductions, not
    GEMMs) and the embedding's stay at the weights' 2. Worked out by hand
    for a bf16 GPT step on dp = 2, every collective a data-parallel one."""
    L, H, F, V, dp = 2, 512, 2048, 4096, 2
    gemm_weights = 4 * H * H + 2 * H * F        # Q, K, V, O and the MLP's two
    other = gpt_layer_params(H, F) - gemm_weights
    want = {"weights": 2 * (L * (gemm_weights + other) + V * H) // dp,
            "f32": (4 * L * gemm_weights + 2 * L * other + 2 * V * H) // dp}
    got = {}
    for dtype in want:
        r = estimate(cli, tmp, ["--arch", "gpt", "--layers", str(L), "--hidden", str(H), "--heads", "8",
                                "--ffn", str(F), "--vocab", str(V), "--seq", "256", "--micro-batch", "4",
                                "--recompute", "full", "--mesh", "dp=%d" % dp, "--layout", "zero2",
                                "--grad-dtype", dtype])
        if r is None:
            return
        got[dtype] = r["per_kind"]["reduce-scatter"]["bytes"]
    print("zero2 reduce-scatter bytes by --grad-dtype: %s, by hand %s" % (got, want))
    check(got == want, "--grad-dtype: reduce-scatter bytes %s, by hand %s" % (got, want))
    with open(os.path.join(tmp, "step.mlir")) as f:
        text = f.read()
    wgrad = re.findall(r"stablehlo\.dot_general [^\n]*: \(tensor<[^>]*xbf16>, tensor<[^>]*xbf16>\) -> tensor<[^>]*xf32>", text)
    # The backward loop's body is one layer: its six weight gradients.
    check(len(wgrad) == 6, "--grad-dtype f32: %d bf16 x bf16 -> f32 GEMMs, want a layer's 6 weight "
          "gradients" % len(wgrad))


def check_pipelined_once(cli, tmp):
    """A step with a stage axis, its gradients reduced once, run as S
    pipeline stages (as the Llama 3 rows of bench/published are): each
    device reduce-scatters its stage's L/S layers and the embedding once
    (4 bytes a parameter over dp) and gathers them once (2 bytes), whatever
    the micro-batches; the stages pass a micro-batch's activations on twice
    a tick (forward and backward), M + S - 1 ticks."""
    L, H, F, V, S, dp, seq, b = 4, 512, 2048, 4096, 2, 2, 256, 4
    layer = gpt_layer_params(H, F)
    held = L // S * layer + V * H
    activation = 2 * (b // dp) * seq * H  # bf16, dp's share of a micro-batch
    for M in (2, 4):
        r = estimate(cli, tmp, ["--arch", "gpt", "--layers", str(L), "--hidden", str(H), "--heads", "8",
                                "--ffn", str(F), "--vocab", str(V), "--seq", str(seq), "--micro-batch", str(b),
                                "--grad-accum", str(M), "--recompute", "full",
                                "--mesh", "stage=%d,dp=%d" % (S, dp), "--layout", "zero2",
                                "--reduce-gradients", "once"], ["--pipeline-stages", str(S)])
        if r is None:
            return
        got = {k: (v["count"], v["bytes"]) for k, v in r["per_kind"].items() if v["count"]}
        ticks = M + S - 1
        want = {"reduce-scatter": (1, 4 * held // dp), "all-gather": (1, 2 * held),
                "collective-permute": (2 * ticks, 2 * ticks * activation)}
        print("pipelined, reduced once, %d micro-batches: %s, by hand %s" % (M, got, want))
        check(got == want, "pipelined once-reduced step, %d micro-batches: %s, by hand %s" % (M, got, want))


def check_pipelined_buckets(cli, tmp):
    """A pipeline over layer loops that run two layers an iteration
    (--unroll 2, as --grad-bucket picks): each of S = 2 stages runs its
    L / S = 2 layers as one iteration, the same GEMMs and hand-overs as the
    step with one layer an iteration, and its gradients reduce-scattered in
    half as many calls of the same bytes."""
    L, S, M = 4, 2, 2
    args = ["--arch", "gpt", "--layers", str(L), "--hidden", "512", "--heads", "8", "--ffn", "2048",
            "--vocab", "4096", "--seq", "256", "--micro-batch", "4", "--grad-accum", str(M),
            "--recompute", "full", "--mesh", "stage=%d,dp=2" % S, "--layout", "zero2"]
    by_unroll = {}
    for unroll in (1, 2):
        r = estimate(cli, tmp, args + ["--unroll", str(unroll)], ["--pipeline-stages", str(S)])
        if r is None:
            return
        by_unroll[unroll] = r
        trips = sorted(loop["trip_count"] for loop in r["loops"])
        want = L // S // unroll
        check(trips.count(want) >= 2,
              "pipelined, %d layers an iteration: loops %s, want layer loops of %d" % (unroll, trips, want))
        check(any(re.search(r"\(\d+ trips? of 2\)", a) for a in r["assumptions"]) == (unroll == 2),
              "pipelined, %d layers an iteration: assumptions %s" % (unroll, r["assumptions"]))
    one, two = by_unroll[1], by_unroll[2]
    kinds = lambda r, k: (r["per_kind"].get(k, {}).get("count", 0), r["per_kind"].get(k, {}).get("bytes", 0))
    print("pipelined, one and two layers an iteration: GEMMs %d, %d; permutes %s, %s; reduce-scatters %s, %s"
          % (kernels(one, is_gemm), kernels(two, is_gemm), kinds(one, "collective-permute"),
             kinds(two, "collective-permute"), kinds(one, "reduce-scatter"), kinds(two, "reduce-scatter")))
    check(kernels(one, is_gemm) == kernels(two, is_gemm) > 0,
          "pipelined buckets: GEMM kernels %d and %d" % (kernels(one, is_gemm), kernels(two, is_gemm)))
    check(kinds(one, "collective-permute") == kinds(two, "collective-permute") != (0, 0),
          "pipelined buckets: permutes %s and %s" % (kinds(one, "collective-permute"),
                                                     kinds(two, "collective-permute")))
    rs1, rs2 = kinds(one, "reduce-scatter"), kinds(two, "reduce-scatter")
    check(rs2[0] < rs1[0] and rs2[1] == rs1[1],
          "pipelined buckets: reduce-scatters (count, bytes) %s and %s" % (rs1, rs2))


def check_kept_gathers(cli, tmp):
    """FSDP not resharded after the forward gathers each layer's sharded
    weights once a micro-batch (in the forward) where resharding gathers
    them again in the backward: at least M L layers' sharded weights fewer
    bytes gathered, at least M L still gathered, the same reduce-scatters."""
    L, H, F, V, M = 2, 512, 2048, 4096, 2
    sharded_layer = 2 * (4 * H * H + 2 * H * F)  # bf16 Q/K/V/O and the MLP's two
    got = {}
    for keep in ("yes", "no"):
        r = estimate(cli, tmp, ["--arch", "gpt", "--layers", str(L), "--hidden", str(H), "--heads", "8",
                                "--ffn", str(F), "--vocab", str(V), "--seq", "256", "--micro-batch", "4",
                                "--grad-accum", str(M), "--recompute", "full", "--mesh", "dp=2",
                                "--layout", "fsdp", "--reshard-after-forward", keep])
        if r is None:
            return
        got[keep] = {k: r["per_kind"][k]["bytes"] for k in ("all-gather", "reduce-scatter")}
    layers = M * L * sharded_layer
    print("fsdp gathered / scattered bytes by --reshard-after-forward: %s; M L layers: %d" % (got, layers))
    check(got["no"]["all-gather"] <= got["yes"]["all-gather"] - layers
          and got["no"]["all-gather"] >= layers
          and got["no"]["reduce-scatter"] == got["yes"]["reduce-scatter"],
          "--reshard-after-forward no: bytes %s, M L layers %d" % (got, layers))


def check_flat_fsdp(cli, tmp):
    L, M, H, F, V, dp = 3, 2, 512, 2048, 4096, 3
    model = ["--arch", "gpt", "--layers", str(L), "--hidden", str(H), "--heads", "8", "--ffn", str(F),
             "--vocab", str(V), "--seq", "512", "--micro-batch", "6", "--grad-accum", str(M),
             "--recompute", "full"]
    args = model + ["--mesh", "dp=%d" % dp]
    flat, plain = estimate(cli, tmp, args + ["--layout", "fsdp-flat"]), estimate(cli, tmp, args + ["--layout", "dp"])
    if flat is None or plain is None:
        return
    layer = gpt_layer_params(H, F)  # bf16, padded to dp
    padded = lambda n: -(-n // dp) * dp
    layer_bytes, embed_bytes = 2 * padded(layer), 2 * padded(V * H)
    gathers = M * (2 * L + 1)
    gathered = M * (2 * L * layer_bytes + embed_bytes)  # what the gathers output
    scattered = M * (L * layer_bytes + embed_bytes) // dp  # what each device keeps
    kinds = flat["per_kind"]
    got = {k: (v["count"], v["bytes"]) for k, v in kinds.items() if v["count"]}
    want = {"all-gather": (gathers, gathered), "reduce-scatter": (M * (L + 1), scattered)}
    print("fsdp-flat: collectives %s, by hand %s" % (got, want))
    check(got == want, "fsdp-flat: collectives %s, by hand %s" % (got, want))
    check(flat["peak_memory_bytes"] < plain["peak_memory_bytes"],
          "fsdp-flat holds shards, dp whole weights and states: peaks %d, %d"
          % (flat["peak_memory_bytes"], plain["peak_memory_bytes"]))

    # With Megatron's tensor parallelism inside (tp = 2): each device
    # gathers its rank's half of Q/K/V/O, their biases, the MLP and its
    # first bias (one buffer), and the LayerNorms and output biases every
    # rank holds whole (another), per layer and use; its half of the
    # vocabulary of the embedding. Over tp only activations are summed
    # (all-reduces): no gather of the logits, no reduce-scatter.
    tp = 2
    flat = estimate(cli, tmp, model + ["--mesh", "dp=%d,tp=%d" % (dp, tp), "--layout", "fsdp-flat"])
    if flat is None:
        return
    whole_bytes = 2 * padded(6 * H)
    split_bytes = 2 * padded((4 * H * H + 3 * H + 2 * H * F + F) // tp)
    embed_bytes = 2 * padded(V * H // tp)
    gathered = M * (2 * L * (whole_bytes + split_bytes) + embed_bytes)
    scattered = M * (L * (whole_bytes + split_bytes) + embed_bytes) // dp
    kinds = flat["per_kind"]
    got = {k: (kinds[k]["count"], kinds[k]["bytes"]) for k in ("all-gather", "reduce-scatter") if k in kinds}
    want = {"all-gather": (M * (4 * L + 1), gathered), "reduce-scatter": (M * (2 * L + 1), scattered)}
    print("fsdp-flat, tp: collectives %s, by hand %s" % (got, want))
    check(got == want, "fsdp-flat, tp: collectives %s, by hand %s" % (got, want))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    cli = ap.parse_args().cli
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ("gpt", "llama", "moe"):
            extra = ["--kv-heads", "4"] if arch != "gpt" else []
            extra += ["--experts", "2"] if arch == "moe" else []
            by_policy = {}
            for policy in ("none", "selective", "full"):
                name = "%s/%s" % (arch, policy)
                r = estimate(cli, tmp, ["--arch", arch, "--recompute", policy] + SMALL + extra)
                if r is None:
                    continue
                by_policy[policy] = r
                trips = sorted(loop["trip_count"] for loop in r["loops"])
                check(trips.count(3) >= 2 and 2 in trips,
                      "%s: loops %s, want the micro-batch loop (2) and both layer loops (3)"
                      % (name, trips))
                kinds = {k for k, v in r["per_kind"].items() if v["count"] > 0}
                want = {"all-reduce", "all-gather", "reduce-scatter"}
                want |= {"all-to-all"} if arch == "moe" else set()
                check(want <= kinds, "%s: collectives %s, want at least %s" % (name, kinds, want))
                check(not any("fmha" in t for t in r.get("not_costed", {})),
                      "%s: flash attention not costed: %s" % (name, r.get("not_costed")))
                # The step is at least the compute it schedules; the two are
                # summed in different orders, so allow the last bits.
                check(r["compute_us"] > 0
                      and r["step_time_us"] >= r["compute_us"] * (1 - 1e-12),
                      "%s: step %s below compute %s" % (name, r["step_time_us"], r["compute_us"]))
            if len(by_policy) == 3:
                gemms = {p: kernels(by_policy[p], is_gemm) for p in by_policy}
                saves = {p: kernels(by_policy[p], is_save) for p in by_policy}
                m = {p: by_policy[p]["peak_memory_bytes"] for p in by_policy}
                check(gemms["full"] > gemms["selective"] == gemms["none"],
                      "%s: GEMM kernels by policy %s, want full > selective == none"
                      % (arch, gemms))
                check(saves["none"] > saves["selective"] > saves["full"],
                      "%s: in-place writes by policy %s, want none > selective > full"
                      % (arch, saves))
                check(m["none"] > m["full"],
                      "%s: peak memory %s, want none above full" % (arch, m))
        check_attention_rule(cli, tmp)
        check_expert_layout(cli, tmp)
        check_zero_layouts(cli, tmp)
        check_flat_fsdp(cli, tmp)
        check_gradient_buckets(cli, tmp)
        check_pipelined_buckets(cli, tmp)
        check_once_reduction(cli, tmp)
        check_f32_gradients(cli, tmp)
        check_kept_gathers(cli, tmp)
        check_pipelined_once(cli, tmp)
    for f in failures:
        print("FAIL:", f)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
