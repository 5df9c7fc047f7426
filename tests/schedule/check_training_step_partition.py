#!/usr/bin/env python3
"""ctest for the layouts of bench/models/gen_training_step.py: each is a
program whose per-device form computes the step's gradients exactly as the
global program does, before and after the gpu stage (XLA's collective
rewrites: the program shardlab-schedule estimates). For each layout the
generator writes a small step
(two layers, two micro-batches, f32, attention as two GEMMs and a softmax,
the gradients returned instead of AdamW's update) and `shardlab-run
--shardings module` partitions it with the module's own shardings
(Shardy's propagation, explicit collectives, the per-device program), runs
it on simulated devices, puts the results together by the output shardings
and compares them with the global run, with and without --gpu-passes.
Every one must match; with tensor and sequence parallelism the gpu stage
must have changed the program (all-reduces reassociated into
reduce-scatters) and left no all-reduce of an activation (Megatron's
sequence parallelism has none); a faulty interpreter (the first collective
dropped, or a slice offset shifted) must not match. Then --layout fsdp-flat
(a manual computation with the collectives written out, which the global
run would only repeat) is checked against the dp step on the same weights
by tests/schedule/flat_fsdp_equivalence.py (without and with tensor
parallelism inside), and must fail with the shards misaligned or, with tp,
each rank reading another rank's part.

--unroll (layers a loop iteration) is checked against one layer an
iteration: the same step, bit for bit, and not with an iteration's layers
swapped. --reduce-gradients once is checked against the step that
reduces each micro-batch's gradients (the same gradients within 1e-5),
and must fail with its dp sums reduced over single devices; FSDP not
resharded after the forward against zero2.

Why these settings: random inputs are scaled by 1/64 (a deep step on
unit-scale inputs has gradients of 1e6 with cancellation and rounds past
the check's tolerance in every partitioning alike); AdamW is left out
(m / (sqrt(v) + eps) magnifies the rounding of a near-zero gradient). GPT's
steps are compared with a tolerance floor of 1e-3 of the largest gradient
(`--tolerance-floor`): softmax ignores a constant added to every key's
score, so the key bias's gradient is zero but for rounding, and the query
projection's, read through keys that are mostly that bias, cancels to
1e-6 of the step's scale; relative to themselves both are noise (without
the floor every GPT layout "mismatches" there, in the sixth significant
digit). Llama's steps keep the strict check.

    python3 tests/schedule/check_training_step_partition.py \\
        --interpreter build/shardlab-run --faulty build/shardlab-run-faulty
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATOR = os.path.join(ROOT, "bench", "models", "gen_training_step.py")
SMALL = ["--layers", "2", "--hidden", "64", "--heads", "4", "--ffn", "128", "--vocab", "128",
         "--seq", "16", "--micro-batch", "4", "--grad-accum", "2", "--attention", "dots",
         "--dtype", "f32", "--optimizer", "none"]
TP_SP = ["--arch", "llama", "--mesh", "dp=2,tp=2", "--sequence-parallel", "--recompute", "selective"]
LAYOUTS = {
    "llama dp, tp+sp": TP_SP + ["--layout", "dp"],
    "llama zero1, tp+sp": TP_SP + ["--layout", "zero1"],
    "llama zero2, tp+sp": TP_SP + ["--layout", "zero2"],
    "llama fsdp, tp+sp": TP_SP + ["--layout", "fsdp"],
    "llama zero2, grouped K/V, no recompute": ["--arch", "llama", "--kv-heads", "2", "--mesh", "dp=2,tp=2",
                                               "--sequence-parallel", "--recompute", "none",
                                               "--layout", "zero2"],
    "llama fsdp, full recompute, dp only": ["--arch", "llama", "--mesh", "dp=4", "--recompute", "full",
                                            "--layout", "fsdp"],
    "moe, experts over dp": ["--arch", "moe", "--experts", "2", "--mesh", "dp=2,tp=2", "--layout", "dp"],
    "moe zero2, experts over dp": ["--arch", "moe", "--experts", "2", "--mesh", "dp=2,tp=2",
                                   "--layout", "zero2"],
    "gpt zero2, tp+sp": ["--arch", "gpt", "--mesh", "dp=2,tp=2", "--sequence-parallel",
                         "--recompute", "selective", "--layout", "zero2"],
    "gpt zero1, tp, full recompute": ["--arch", "gpt", "--mesh", "dp=2,tp=2", "--recompute", "full",
                                      "--layout", "zero1"],
    "gpt fsdp, full recompute, dp only": ["--arch", "gpt", "--mesh", "dp=4", "--recompute", "full",
                                          "--layout", "fsdp"],
    "llama zero2, tp+sp, two layers an iteration": TP_SP + ["--layout", "zero2", "--unroll", "2"],
    "llama zero2, tp+sp, reduced once": TP_SP + ["--layout", "zero2", "--reduce-gradients", "once"],
    "llama zero2, tp+sp, cuDNN attention in a shard_map": TP_SP + ["--layout", "zero2",
                                                                 "--attention", "shard_map"],
    "llama fsdp, tp+sp, not resharded after the forward": TP_SP + ["--layout", "fsdp",
                                                                 "--reshard-after-forward", "no"],
}
GPT_FLOOR = "1e-3"
SCALE = "0.015625"
# --layout fsdp-flat (the step in a manual computation over dp, weights as
# flat padded shards) against --layout dp on the same weights, over 3
# devices: no weight divides by 3, so every shard carries padding; and with
# Megatron's tensor parallelism over tp=2 inside (each rank's part of the
# split weights its own row of a flat buffer).
FLAT = {f"{arch}{', tp' if tp else ''}": ["--arch", arch, "--mesh", "dp=3" + (",tp=2" if tp else ""),
                                          "--recompute", "full", "--micro-batch", "6"]
        for arch in ("llama", "gpt") for tp in (False, True)}
EQUIVALENCE = os.path.join(ROOT, "tests", "schedule", "flat_fsdp_equivalence.py")


def floor_of(name):
    return ["--tolerance-floor", GPT_FLOOR] if name.startswith("gpt") else []


def activation_all_reduces(program):
    """All-reduces over "tp" (the minor mesh axis of 2 in the tp+sp
    layouts: groups [[0, 1], [2, 3]]) of activations ([batch, sequence,
    ...]: rank 3 or more)."""
    count = 0
    for op in program.split('"stablehlo.all_reduce"')[1:]:
        head = op.split("\n", 1)[0]
        operand = re.search(r"\}\) : \(tensor<([^>]*)>\)", op)
        if "replica_groups = dense<[[0, 1], [2, 3]]>" in head and operand and operand.group(1).count("x") >= 3:
            count += 1
    return count


def verdict(interpreter, module, extra=(), env=None):
    """(exit status, the verdict line, the per-device program's collectives)."""
    p = subprocess.run([interpreter, module, "--shardings", "module", "--input-scale", SCALE,
                        "--print"] + list(extra),
                       capture_output=True, text=True, env=env, timeout=600)
    kinds = {k: p.stdout.count('"stablehlo.%s"' % k) for k in ("all_reduce", "reduce_scatter")}
    kinds["activation_all_reduce"] = activation_all_reduces(p.stdout)
    for line in p.stdout.splitlines():
        if line.startswith("partitioned on "):
            return p.returncode, line, kinds
    return p.returncode, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1], kinds


def check_flat(interpreter, tmp):
    """Each fsdp-flat step computes the dp step's gradients (its checks
    pass in the global run and on every device), and the check catches
    shards read at the wrong offsets."""
    failures = []
    for name, flags in FLAT.items():
        paths = {}
        for layout in ("dp", "fsdp-flat"):
            paths[layout] = os.path.join(tmp, "%s-%s.mlir" % (name.replace(", ", "-"), layout))
            subprocess.run([sys.executable, GENERATOR] + SMALL + flags + ["--layout", layout,
                                                                         "-o", paths[layout]], check=True)
        # Each fault must be caught: the padding in front of each weight, and
        # with tp each rank given another rank's part.
        for fault in [None, "--misalign"] + (["--swap-ranks"] if "tp" in name else []):
            module = paths["dp"].replace("-dp.mlir", "-equivalence%s.mlir" % (fault or ""))
            subprocess.run([sys.executable, EQUIVALENCE, paths["dp"], paths["fsdp-flat"], "-o", module]
                           + ([fault] if fault else []), check=True)
            failures += expect_checks(interpreter, module, "%s fsdp-flat = dp%s" % (
                name, ", " + fault if fault else ""), fault)
    return failures


def expect_checks(interpreter, module, label, fault):
    """Runs an equivalence module: every check must pass in the global run
    and on every device, unless the module holds a fault, which must fail
    one (or stop the run). The failures, if not."""
    p = subprocess.run([interpreter, module, "--shardings", "module", "--input-scale", SCALE],
                       capture_output=True, text=True, timeout=600)
    lines = [l for l in p.stdout.splitlines() if "checks passed" in l]
    said = " / ".join(lines) or p.stderr.strip()[-300:]
    print("%s: %s" % (label, said))
    counts = [re.match(r".*?(\d+) of (\d+) (?:device )?checks passed", l) for l in lines]
    all_passed = len(counts) == 2 and all(c and c.group(1) == c.group(2) != "0" for c in counts)
    return ["%s: %s" % (label, said)] if bool(fault) == all_passed else []


# Steps that compute the same gradients as another written otherwise:
# name -> (the reference's flags, the step's, the faults the check must
# catch in the step); both on SMALL + TP_SP.
SINGLE_DEVICE_GROUPS = "single-device groups"
SAME_GRADIENTS = {
    "llama dp, reduced once = each micro-batch": (
        ["--layout", "dp"], ["--layout", "dp", "--reduce-gradients", "once"], [SINGLE_DEVICE_GROUPS]),
    "llama zero2, reduced once = each micro-batch": (
        ["--layout", "zero2"], ["--layout", "zero2", "--reduce-gradients", "once"], []),
    "llama fsdp not resharded after the forward = zero2": (
        ["--layout", "zero2"], ["--layout", "fsdp", "--reshard-after-forward", "no"], []),
}


def check_same_gradients(interpreter, tmp):
    """Each step of SAME_GRADIENTS computes its reference's gradients:
    --reduce-gradients once (each device's micro-batches summed, then
    reduced over dp) as the step that reduces each micro-batch's, with the
    sum whole (dp: all-reduce) and scattered (zero2: reduce-scatter); FSDP
    keeping the forward's gathered weights for the backward as zero2. The
    check catches sums reduced over no device (each dp all-reduce's groups
    made single devices)."""
    failures = []
    for number, (name, (reference, flags, faults)) in enumerate(SAME_GRADIENTS.items()):
        paths = {}
        for which, extra in (("reference", reference), ("step", flags)):
            paths[which] = os.path.join(tmp, "same-%d-%s.mlir" % (number, which))
            subprocess.run([sys.executable, GENERATOR] + SMALL + TP_SP + extra + ["-o", paths[which]], check=True)
        for fault in [None] + faults:
            step = paths["step"]
            if fault == SINGLE_DEVICE_GROUPS:
                with open(step) as f:
                    text = f.read()
                # The dp groups of a 2 x 2 mesh ([[0, 2], [1, 3]]) as four of one.
                faulty = text.replace("dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>",
                                      "dense<[[0], [1], [2], [3]]> : tensor<4x1xi64>")
                step = step.replace(".mlir", "-fault.mlir")
                with open(step, "w") as f:
                    f.write(faulty)
            module = step.replace(".mlir", "-equivalence.mlir")
            subprocess.run([sys.executable, EQUIVALENCE, paths["reference"], step, "--same-arguments",
                            "-o", module], check=True)
            failures += expect_checks(interpreter, module, "%s%s" % (name, ", " + fault if fault else ""), fault)
    return failures


def results(interpreter, module):
    """The global run's results as --print writes them (a digest of every
    element's bits), or the error."""
    p = subprocess.run([interpreter, module, "--input-scale", SCALE, "--print"],
                       capture_output=True, text=True, timeout=600)
    lines = [l for l in p.stdout.splitlines() if l.startswith("tensor<")]
    return lines if p.returncode == 0 and lines else ["exit %d: %s" % (p.returncode, p.stderr[-300:])]


def check_unroll(interpreter, tmp):
    """--unroll K (K layers an iteration of the layer loops) computes the
    same step bit for bit as one layer an iteration; the check catches an
    iteration that runs its layers in the wrong order."""
    flags = SMALL + TP_SP + ["--layout", "zero2", "--layers", "4"]
    found, failures = {}, []
    for k in (1, 2, 4):
        module = os.path.join(tmp, "unroll%d.mlir" % k)
        subprocess.run([sys.executable, GENERATOR] + flags + ["--unroll", str(k), "-o", module], check=True)
        found[k] = results(interpreter, module)
    with open(os.path.join(tmp, "unroll2.mlir")) as f:
        text = f.read()
    # The wrong order: each iteration's first layer is the one after it.
    swapped = re.sub(r"(%at\d+ = stablehlo\.constant dense<)([01])>",
                     lambda m: m.group(1) + ("1" if m.group(2) == "0" else "0") + ">", text)
    faulty = os.path.join(tmp, "unroll2-swapped.mlir")
    with open(faulty, "w") as f:
        f.write(swapped)
    found["swapped"] = results(interpreter, faulty)
    for k in (2, 4):
        same = found[k] == found[1]
        print("--unroll %d = --unroll 1: %s (%d results)" % (k, same, len(found[k])))
        if not same or len(found[1]) < 2:
            failures.append("--unroll %d computes another step: %s" % (k, found[k][:2]))
    if swapped == text or found["swapped"] == found[1]:
        failures.append("layers run in the wrong order were not caught")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--interpreter", required=True)
    ap.add_argument("--faulty", required=True)
    args = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        modules = {}
        for name, layout in LAYOUTS.items():
            module = os.path.join(tmp, "step%d.mlir" % len(modules))
            # A layout's own flags come last, so that they override SMALL's.
            subprocess.run([sys.executable, GENERATOR] + SMALL + layout + ["-o", module], check=True)
            modules[name] = module
            programs = {}
            for gpu in ((), ("--gpu-passes",)):
                status, line, kinds = verdict(args.interpreter, module, gpu + tuple(floor_of(name)))
                label = "%s%s" % (name, ", gpu stage" if gpu else "")
                print("%s: %s (%s)" % (label, line, kinds))
                programs[bool(gpu)] = kinds
                if status != 0 or ": match" not in line:
                    failures.append("%s: %s" % (label, line))
            if "tp+sp" in name and not (
                    programs[True]["all_reduce"] < programs[False]["all_reduce"]
                    and programs[True]["reduce_scatter"] > programs[False]["reduce_scatter"]):
                failures.append("%s: the gpu stage left the collectives as they were: %s"
                                % (name, programs))
            # Megatron's sequence parallelism all-reduces no activation: each
            # block's input gradient is reduce-scattered onto the slices.
            if "tp+sp" in name and programs[True]["activation_all_reduce"]:
                failures.append("%s: the gpu stage's program all-reduces activations: %s"
                                % (name, programs))
        # The check can fail: a dropped collective or a shifted slice is
        # caught, with GPT's floor too. (Where the first sliced table is the
        # batch's over dp alone, as in "fsdp, dp only", a shifted slice only
        # moves rows between devices whose gradients are summed anyway:
        # the same step, so layouts with other tables are used.)
        for name in ("llama zero2, tp+sp", "gpt zero2, tp+sp"):
            for fault in ("SHARDLAB_FAULT_DROP_COLLECTIVE", "SHARDLAB_FAULT_SLICE_OFFSET"):
                env = dict(os.environ, **{fault: "1"})
                status, line, _ = verdict(args.faulty, modules[name], floor_of(name), env=env)
                print("faulty (%s, %s): %s" % (fault, name, line))
                if ": mismatch" not in line:
                    failures.append("the faulty interpreter (%s) was not caught on %s: %s"
                                    % (fault, name, line))
        failures += check_flat(args.interpreter, tmp)
        failures += check_unroll(args.interpreter, tmp)
        failures += check_same_gradients(args.interpreter, tmp)
    for f in failures:
        print("FAIL:", f)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
