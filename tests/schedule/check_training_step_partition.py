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
reduce-scatters); a faulty interpreter (the first collective dropped, or a
slice offset shifted) must not match.

Why these settings: random inputs are scaled by 1/64 (a deep step on
unit-scale inputs has gradients of 1e6 with cancellation and rounds past
the check's tolerance in every partitioning alike); AdamW is left out
(m / (sqrt(v) + eps) magnifies the rounding of a near-zero gradient); GPT
is left out (its key bias has a gradient that is zero but for rounding, as
softmax ignores a constant added to every key's score, and a tensor of
rounding noise cannot be compared relative to itself).

    python3 tests/schedule/check_training_step_partition.py \\
        --interpreter build/shardlab-run --faulty build/shardlab-run-faulty
"""
import argparse
import os
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
}
SCALE = "0.015625"


def verdict(interpreter, module, extra=(), env=None):
    """(exit status, the verdict line, the per-device program's collectives)."""
    p = subprocess.run([interpreter, module, "--shardings", "module", "--input-scale", SCALE,
                        "--print"] + list(extra),
                       capture_output=True, text=True, env=env, timeout=600)
    kinds = {k: p.stdout.count('"stablehlo.%s"' % k) for k in ("all_reduce", "reduce_scatter")}
    for line in p.stdout.splitlines():
        if line.startswith("partitioned on "):
            return p.returncode, line, kinds
    return p.returncode, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1], kinds


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
            subprocess.run([sys.executable, GENERATOR] + layout + SMALL + ["-o", module], check=True)
            modules[name] = module
            programs = {}
            for gpu in ((), ("--gpu-passes",)):
                status, line, kinds = verdict(args.interpreter, module, gpu)
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
        # The check can fail: a dropped collective or a shifted slice is caught.
        for fault in ("SHARDLAB_FAULT_DROP_COLLECTIVE", "SHARDLAB_FAULT_SLICE_OFFSET"):
            env = dict(os.environ, **{fault: "1"})
            status, line, _ = verdict(args.faulty, modules["llama zero2, tp+sp"], env=env)
            print("faulty (%s): %s" % (fault, line))
            if ": mismatch" not in line:
                failures.append("the faulty interpreter (%s) was not caught: %s" % (fault, line))
    for f in failures:
        print("FAIL:", f)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
