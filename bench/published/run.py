#!/usr/bin/env python3
"""Estimates each published training run of runs.json with shardlab-schedule
and prints the error per run, the median and the worst, as a Markdown table
for bench/RESULTS.md.

  python3 bench/published/run.py [--build build] [--json out.json]

Each run's step is written by bench/models/gen_training_step.py from the
run's generator arguments (a pipelined run's pipeline by its `pipeline`
flags, given to every variant), and its schedule by the run's `schedule` flags:
how its framework overlapped communication (every run here is a PyTorch
program whose data-parallel collectives run on a stream of their own, a
layer or bucket ahead of or behind the compute: XLA's collective
pipeliner and a collective stream per link). Then it is estimated eight
ways, to show what each part of the model changes: as the run ran (the
default: XLA's passes and S-curve, all-reduces across nodes by NCCL's tree
where it is cheaper than the ring: 2 log2(nodes) of XLA's steps, not
2 (nodes - 1)); with XLA's default schedule (the run's flags left out: one
collective stream, no pipeliner, what `shardlab-schedule` does unless
told; the bands of the CLI's default estimates come from this variant,
those of estimates made with --pipeline-collectives --stream-per-link
from the runs estimated as they ran with those flags); with XLA's ring only (tree_all_reduce=0,
XLA's own model); with NCCL's ring hops (each ring step a 2.7 us hop
instead of XLA's round trip and chunk preparation: the latency NCCL's
tuning model gives its LL protocol, which it uses for small messages, not
the large ones here, so a lower bound); with --no-combine (each
collective its own call); with --no-fusion (every op its own kernel,
collectives combined as by default); with --gemms-at-peak (GEMMs at the datasheet peak, not
measured efficiency); and with f32 gradients (the step written with
--grad-dtype f32: the layers' weight gradients written and reduced in f32,
as Megatron-LM's gradient buffer is when it trains in bf16; the same step
for --layout fsdp-flat, which it is not written for). The measured step time is derived from the claim:
  - a model-FLOPs rate per GPU: step = FLOPs of the step / (rate x GPUs),
    with the FLOPs counted as the run's `assumed` entry says (of the
    model's own layers, `measured.layers`, where the program rounds them);
  - GPU-hours for a number of tokens: tokens / (GPU-hours x 3600) is the
    rate per GPU, step = tokens of the step / (rate x GPUs).
A pipeline balanced by giving its first and last stages fewer layers (the
run's `pipeline.end_stages`) is estimated twice, a middle stage (its layers
only) and a program for the end stages (their layers, the embedding and the
head), and each variant's step is the slower of the two.
When a step does not fit in device memory, its micro-batches are split
(gradient accumulation doubled, micro-batch halved, the same tokens per
step) until it fits: what a run that was measured had to do too.
"""
import argparse
import json
import re
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GENERATOR = os.path.join(ROOT, "bench", "models", "gen_training_step.py")
# (name, flags, whether the run's own schedule flags come first, the
# generator options the variant's step is written with).
VARIANTS = (("shardlab", [], True, {}),
            ("XLA's default schedule", [], False, {}),
            ("XLA's ring only", ["--sol-options", "tree_all_reduce=0"], True, {}),
            ("NCCL ring hops", ["--sol-options", "ring_hop_us=2.7"], True, {}),
            ("no combining", ["--no-combine"], True, {}),
            ("no fusion", ["--no-fusion"], True, {}),
            ("GEMMs at peak", ["--gemms-at-peak"], True, {}),
            # Megatron-LM's f32 gradient buffer: the layers' gradients
            # reduced at 4 bytes a parameter. Not written for --layout
            # fsdp-flat (OPT, MPT: the same step as the first variant).
            ("f32 gradients", [], True, {"--grad-dtype": "f32"}))
# The validation bands, kept for two schedules (core/src/schedule/
# validation.h): XLA's default, from that variant's rows, and the
# overlapped one, from the default variant's rows of the runs whose own
# schedule flags are OVERLAPPED_FLAGS.
BANDS_VARIANT = "XLA's default schedule"
OVERLAPPED_FLAGS = ["--pipeline-collectives", "--stream-per-link"]
BAND_SCHEDULES = (("kXlaDefault", "XLA's default schedule"),
                  ("kOverlapped", " ".join(OVERLAPPED_FLAGS)))


def variant_flags(run, variant):
    """shardlab-schedule's flags for a run under a variant of VARIANTS: the
    run's layout flags (its pipeline) always, its schedule flags where the
    variant keeps them."""
    _, flags, as_run, _ = variant
    return (list(run.get("pipeline", {}).get("flags", [])) +
            (list(run.get("schedule", {}).get("flags", [])) if as_run else []) + list(flags))


def variant_module(run, gen, module, variant, tmp):
    """The step a variant estimates: the run's, or, for a variant with
    generator options, the run's written with them (where they apply)."""
    options = variant[3]
    if not options or (option(gen, "--layout") == "fsdp-flat" and "--grad-dtype" in options):
        return module
    out = os.path.join(tmp, "%s-%s.mlir" % (run["id"], re.sub(r"\W+", "-", variant[0])))
    for name, value in options.items():
        gen = with_option(gen, name, value)
    subprocess.run([sys.executable, GENERATOR] + gen + ["-o", out], check=True)
    return out


def end_stages(run, gen):
    """A balanced pipeline's first and last stages, estimated beside its
    middle ones (`pipeline.end_stages`): the generator arguments (the
    run's, its overrides applied) and the pipeline flags that replace the
    run's for them; None for a run without."""
    ends = run.get("pipeline", {}).get("end_stages")
    if not ends:
        return None
    out = list(gen)
    for name, value in ends["generator"].items():
        out = with_option(out, name, value)
    return out, ends["flags"]


def slower(a, b):
    """Of two stages' reports, the slower one's: a pipeline's step is its
    slowest stage's."""
    return a if b is None or a["step_time_us"] >= b["step_time_us"] else b


def option(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def model_flops_per_step(gen, layers=None):
    """6N + 12 l h s FLOPs per token (forward and backward, no recompute),
    N the parameters of the model: a GPT decoder (4h^2 attention, 2 h ffn
    MLP, biases and LayerNorms, embedding tied) or a Llama decoder (Q and O
    h^2 each, K and V h x the K/V heads' width, SwiGLU's 3 h ffn, RMSNorm
    scales, embedding and head untied). `layers` (the model's) when the
    step is written with another number (a pipeline's stages rounded)."""
    layers = layers or int(option(gen, "--layers"))
    hidden = int(option(gen, "--hidden"))
    vocab, seq = int(option(gen, "--vocab")), int(option(gen, "--seq"))
    tokens = int(option(gen, "--micro-batch")) * seq * int(option(gen, "--grad-accum", 1))
    arch = option(gen, "--arch", "llama")
    if arch == "gpt":
        ffn = int(option(gen, "--ffn", 4 * hidden))
        per_layer = 4 * hidden * hidden + 2 * hidden * ffn + 9 * hidden + ffn
        params = layers * per_layer + vocab * hidden + seq * hidden
    elif arch != "llama":
        sys.exit("no model FLOPs count for --arch %s (a run measured in FLOPs needs one)" % arch)
    else:
        ffn = int(option(gen, "--ffn"))
        heads = int(option(gen, "--heads"))
        kv_width = hidden // heads * int(option(gen, "--kv-heads", heads))
        per_layer = 2 * hidden * hidden + 2 * hidden * kv_width + 3 * hidden * ffn + 2 * hidden
        params = layers * per_layer + hidden + 2 * vocab * hidden
    return tokens * (6 * params + 12 * layers * hidden * seq), params


def measured_step_s(run, gen):
    m, n = run["measured"], devices(gen)
    tokens = int(option(gen, "--micro-batch")) * int(option(gen, "--seq")) * \
        int(option(gen, "--grad-accum", 1))
    if m["kind"] == "model_tflops_per_gpu":
        flops, _ = model_flops_per_step(gen, m.get("layers"))
        return flops / (m["model_tflops_per_gpu"] * 1e12 * n)
    if m["kind"] == "gpu_hours":
        per_gpu = m["tokens"] / (m["gpu_hours"] * 3600)
        return tokens / (per_gpu * n)
    sys.exit("%s: unknown measurement kind %r" % (run["id"], m["kind"]))


def with_option(gen, name, value):
    gen = list(gen)
    if name in gen:
        gen[gen.index(name) + 1] = str(value)
    else:
        gen += [name, str(value)]
    return gen


def without_options(gen, names):
    """The generator arguments without the options `names` (each with its
    value)."""
    out, skip = [], False
    for arg in gen:
        if skip:
            skip = False
        elif arg in names:
            skip = True
        else:
            out.append(arg)
    return out


def fitting_step(build, run, tmp):
    """The run's generator arguments and module, micro-batches split until
    the default estimate fits in device memory."""
    gen = run["generator"]
    while True:
        module = os.path.join(tmp, run["id"] + ".mlir")
        subprocess.run([sys.executable, GENERATOR] + gen + ["-o", module], check=True)
        r = estimate(build, module, run["preset"], variant_flags(run, VARIANTS[0]))
        micro = int(option(gen, "--micro-batch"))
        fits = r["peak_memory_bytes"] <= r["hardware"]["device_memory_bytes"]
        if fits or micro % 2 or (micro // 2) % axis_size(gen, "dp"):
            return gen, module, r
        print("%s: %.1f GiB does not fit; micro-batch %d -> %d" % (
            run["id"], r["peak_memory_bytes"] / 2**30, micro, micro // 2), file=sys.stderr)
        gen = with_option(with_option(gen, "--micro-batch", micro // 2), "--grad-accum",
                          2 * int(option(gen, "--grad-accum", 1)))


def axis_size(gen, name):
    for part in option(gen, "--mesh", "dp=1").split(","):
        if part.startswith(name + "="):
            return int(part.split("=")[1])
    return 1


def devices(gen):
    total = 1
    for part in option(gen, "--mesh", "dp=1").split(","):
        total *= int(part.split("=")[1])
    return total


def estimate(build, module, preset, flags):
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        cmd = [os.path.join(build, "shardlab-schedule"), module, "--preset", preset,
               "--report", report.name] + flags
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("shardlab-schedule failed on %s:\n%s" % (module, p.stderr[-2000:]))
        with open(report.name) as f:
            return json.load(f)


# The classes of cost the bands are kept by (core/src/schedule/validation.h):
# the share of the estimated step that is exposed communication.
COMPUTE_BOUND_BELOW = 0.25
COMMUNICATION_BOUND_ABOVE = 0.6
MIN_RUNS_PER_KIND = 3


def cost_kind(step, exposed):
    share = exposed / step if step > 0 else 0
    if share < COMPUTE_BOUND_BELOW:
        return "compute-bound"
    if share > COMMUNICATION_BOUND_ABOVE:
        return "communication-bound"
    return "mixed"


def percentile(values, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    values = sorted(values)
    at = (len(values) - 1) * q
    lo = int(at)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (at - lo)


def kind_bands(estimates):
    """kind -> (p10, p90, runs) of measured / estimated step over
    (measured step, the variant's estimate) pairs."""
    by_kind = {"compute-bound": [], "mixed": [], "communication-bound": [], "all": []}
    for measured, v in estimates:
        ratio = measured / v["step_s"]
        by_kind[cost_kind(v["step_s"], v["exposed_comm_s"])].append(ratio)
        by_kind["all"].append(ratio)
    return {k: (round(percentile(r, 0.1), 2), round(percentile(r, 0.9), 2), len(r)) if r
            else (0.0, 0.0, 0) for k, r in by_kind.items()}


def bands(rows, runs):
    """(schedule constant, kind) -> (p10, p90, runs) for both schedules."""
    overlapped = {r["id"] for r in runs if r.get("schedule", {}).get("flags") == OVERLAPPED_FLAGS}
    estimates = {
        "kXlaDefault": [(row["measured_step_s"], row["variants"][BANDS_VARIANT]) for row in rows],
        "kOverlapped": [(row["measured_step_s"], row["variants"]["shardlab"]) for row in rows
                        if row["id"] in overlapped],
    }
    return {(schedule, kind): band for schedule, _ in BAND_SCHEDULES
            for kind, band in kind_bands(estimates[schedule]).items()}


def bands_text(found, rows):
    runs = len(rows)
    lines = ["// Generated by bench/published/run.py --write-bands; do not edit. The",
             "// p10 and p90 of measured / estimated step over the published runs, by",
             "// the kind of cost that dominates the estimate (validation.h), for",
             "// each schedule the runs were estimated with.",
             "constexpr double kComputeBoundBelow = %s;" % COMPUTE_BOUND_BELOW,
             "constexpr double kCommunicationBoundAbove = %s;" % COMMUNICATION_BOUND_ABOVE,
             "constexpr int kMinRunsPerKind = %d;" % MIN_RUNS_PER_KIND,
             "constexpr int64_t kFewestDevices = %d;" % min(r["devices"] for r in rows),
             "constexpr int64_t kMostDevices = %d;" % max(r["devices"] for r in rows),
             "constexpr const char *kBasis =",
             '    "bench/published/runs.json, %d published training runs";' % runs]
    for constant, name in BAND_SCHEDULES:
        one = 'constexpr const char *%sName = "%s";' % (constant, name.replace('"', '\\"'))
        lines.append(one if len(one) <= 80 else one.replace(' = "', ' =\n    "'))
    lines.append("constexpr BandRow kBands[] = {")
    for (schedule, kind), (lo, hi, n) in found.items():
        lines.append('    {%s, "%s", %.2f, %.2f, %d},' % (schedule, kind, lo, hi, n))
    lines.append("};")
    return "\n".join(lines) + "\n"


def read_bands(path):
    with open(path) as f:
        text = f.read()
    return {(m.group(1), m.group(2)): (float(m.group(3)), float(m.group(4)), int(m.group(5)))
            for m in re.finditer(r'\{(k\w+), "([a-z-]+)", ([0-9.]+), ([0-9.]+), (\d+)\}', text)}


def variant_names(text):
    """The variants a comma-separated list names (names may hold commas:
    "+ pipelined, NCCL ring hops"), or None when a piece is no name."""
    known = {v[0] for v in VARIANTS}
    names, piece = [], ""
    for part in text.split(","):
        piece = part.strip() if not piece else piece + ", " + part.strip()
        if piece in known:
            names.append(piece)
            piece = ""
    return names if not piece and names else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", default=os.path.join(HERE, "runs.json"))
    ap.add_argument("--json", help="write the rows here too")
    ap.add_argument("--variants", help="comma-separated variant names (default: all)")
    ap.add_argument("--overlap-slowdown", metavar="C,M",
                    help="give every estimate shardlab-schedule's --overlap-slowdown C,M: how much "
                         "the estimates hinge on kernels and transfers slowing each other, which no "
                         "table here measured (a sensitivity study; not with the bands)")
    ap.add_argument("--attention-slowdown", metavar="F[,B]",
                    help="give every estimate shardlab-schedule's --attention-slowdown F[,B]: how much "
                         "the estimates hinge on what a fused attention call takes beyond its GEMMs "
                         "(the softmax), which no table here measured (a sensitivity study; not with "
                         "the bands)")
    ap.add_argument("--write-bands", metavar="INC",
                    help="write the validation bands (core/src/schedule/validation_bands.inc)")
    ap.add_argument("--check-bands", metavar="INC",
                    help="exit 1 unless INC holds the bands the current model gives")
    args = ap.parse_args()
    variants = VARIANTS
    if args.variants:
        wanted = variant_names(args.variants)
        if wanted is None:
            sys.exit("unknown variant in %r; known: %s" % (
                args.variants, ", ".join(v[0] for v in VARIANTS)))
        variants = [v for v in VARIANTS if v[0] in wanted]
    with_bands = {BANDS_VARIANT, "shardlab"} <= {v[0] for v in variants}
    if (args.write_bands or args.check_bands) and not with_bands:
        sys.exit("the bands are taken from the variants shardlab and %r" % BANDS_VARIANT)
    extra = []
    for flag in ("--overlap-slowdown", "--attention-slowdown"):
        value = getattr(args, flag[2:].replace("-", "_"))
        if value and (args.write_bands or args.check_bands):
            sys.exit("the bands are the model's as it estimates by default, not under %s" % flag)
        extra += [flag, value] if value else []
    with open(args.runs) as f:
        runs = json.load(f)["runs"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in runs:
            gen, module, _ = fitting_step(args.build, run, tmp)
            n = devices(gen)
            row = {"id": run["id"], "devices": n, "generator": gen,
                   "measured_step_s": measured_step_s(run, gen), "variants": {}}
            ends = end_stages(run, gen)
            ends_module = None
            if ends:
                ends_module = os.path.join(tmp, run["id"] + "-ends.mlir")
                subprocess.run([sys.executable, GENERATOR] + ends[0] + ["-o", ends_module],
                               check=True)
            for variant in variants:
                name = variant[0]
                print("estimating %s (%s)..." % (run["id"], name), file=sys.stderr)
                r = estimate(args.build, variant_module(run, gen, module, variant, tmp), run["preset"],
                             variant_flags(run, variant) + extra)
                r_ends = None
                if ends:
                    flags = variant_flags(dict(run, pipeline={"flags": ends[1]}), variant)
                    r_ends = estimate(args.build, ends_module, run["preset"], flags + extra)
                slowest = slower(r, r_ends)
                step = slowest["step_time_us"] / 1e6
                row["variants"][name] = {
                    "step_s": step, "error": step / row["measured_step_s"] - 1,
                    "compute_s": slowest["compute_us"] / 1e6,
                    "exposed_comm_s": slowest["exposed_comm_us"] / 1e6,
                    # Of it, collectives only the step's results read (a
                    # next step could overlap them; this program cannot).
                    "results_only_comm_s": slowest["results_only_comm_us"] / 1e6,
                    "peak_memory_gib": max(x["peak_memory_bytes"] for x in (r, r_ends) if x)
                    / 2**30}
                if ends:
                    row["variants"][name]["slowest_stage"] = (
                        "middle" if slowest is r else "first and last")
                    row["variants"][name]["end_stages_step_s"] = r_ends["step_time_us"] / 1e6
            rows.append(row)
    print("| run | GPUs | micro-batches | measured step | variant | estimate | error | compute | exposed comm "
          "| of it read by no kernel | peak memory |")
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        for name, v in row["variants"].items():
            print("| %s | %d | %s | %.2f s | %s | %.2f s | %+.1f%% | %.2f s | %.2f s | %.2f s | %.1f GiB |" % (
                row["id"], row["devices"], option(row["generator"], "--grad-accum", 1),
                row["measured_step_s"], name, v["step_s"],
                100 * v["error"], v["compute_s"], v["exposed_comm_s"], v["results_only_comm_s"], v["peak_memory_gib"]))
    for name, _, _, _ in variants:
        errors = [abs(r["variants"][name]["error"]) for r in rows]
        print("%s: %d runs, median |error| %.1f%%, worst %.1f%%" % (
            name, len(errors), 100 * statistics.median(errors), 100 * max(errors)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    found = bands(rows, runs) if with_bands else {}
    for (schedule, kind), (lo, hi, n) in found.items():
        print("band %s, %s: measured / estimated %.2f-%.2f over %d runs" % (
            dict(BAND_SCHEDULES)[schedule], kind, lo, hi, n))
    if args.write_bands:
        tmp = args.write_bands + ".tmp"
        with open(tmp, "w") as f:
            f.write(bands_text(found, rows))
        os.replace(tmp, args.write_bands)
    if args.check_bands:
        current = read_bands(args.check_bands)
        with open(args.check_bands) as f:
            text = f.read()
        scale = "kFewestDevices = %d;" % min(r["devices"] for r in rows) in text and \
            "kMostDevices = %d;" % max(r["devices"] for r in rows) in text
        if current != found or not scale:
            print("%s is stale: it holds %s, the model now gives %s; run\n"
                  "  python3 bench/published/run.py --variants \"shardlab,%s\" --write-bands %s"
                  % (args.check_bands, current, found, BANDS_VARIANT, args.check_bands))
            return 1
        print("%s: current" % args.check_bands)
    return 0


if __name__ == "__main__":
    sys.exit(main())
