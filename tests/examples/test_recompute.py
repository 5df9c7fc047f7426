#!/usr/bin/env python3
"""Activation recomputation as a choice (shardlab-recompute): its values and
its estimate, against the training steps the generator writes itself.

    test_recompute.py --opt build/shardlab-opt --run build/shardlab-run \\
        --schedule build/shardlab-schedule

Values: a Llama step (bench/models/gen_training_step.py, attention written
as GEMMs and a softmax so the interpreter runs every op, f32) written with
each of the three policies, rewritten to each of the three, computes the
same weights, gradients and optimizer states bit for bit as the module
written (the interpreter's digest of every result, random inputs of seed
0): 9 rewrites. Each rewrite saves what its policy says (1 value per layer
for full, more for selective, most for none), so a rewrite that did
nothing fails; a rewrite whose new stack is written at the wrong layer
gives other values, so the digest check can fail.

Estimate: the generator's selective step rewritten to selective is costed
as the step written (the same values saved, the same recomputation); to
full, as the generator's full step. For L layers and M micro-batches, full
runs 6 L M more GEMMs (the layer's forward: Q, K, V, output, gate, up; the
down projection's output is only added to the residual, which nothing in
the backward reads), whose time with a table of one GEMM rate is worked
out from their shapes by hand, and L M more attention calls than none,
selective as many GEMMs as none; the peak memory (activations dominate this step) grows from full
to selective to none.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from hand_checks import Checks, one_rate_table  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = ROOT / "bench" / "models" / "gen_training_step.py"
POLICIES = ("full", "selective", "none")
LAYERS, MICRO = 3, 2
RATE = 1.0e14  # FLOP/s: every GEMM of the table written here


def generate(path, recompute, extra):
    subprocess.run([sys.executable, str(GEN), "--arch", "llama", "--layers", str(LAYERS),
                    "--grad-accum", str(MICRO), "--recompute", recompute, *extra, "-o", str(path)],
                   check=True)


def rewrite(opt, src, policy, out):
    run = subprocess.run([opt, str(src), f"--shardlab-recompute=policy={policy}", "-o", str(out)],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise SystemExit(f"shardlab-opt {src} policy={policy} failed: {run.stderr.strip()}")
    return out.read_text()


def digest(run_tool, module):
    run = subprocess.run([run_tool, str(module), "--print"], capture_output=True, text=True, timeout=600)
    if run.returncode not in (0, 1) or "elements, digest" not in run.stdout:
        raise SystemExit(f"shardlab-run {module} failed: {run.stderr.strip()}")
    return [line for line in run.stdout.splitlines() if "checks passed" not in line]


def saved(text):
    found = re.search(r"saves (\d+) values? per layer", text)
    return int(found.group(1)) if found else -1


def check_values(opt, run_tool, work, checks):
    tiny = ["--hidden", "32", "--heads", "4", "--kv-heads", "2", "--ffn", "64", "--vocab", "50",
            "--seq", "8", "--micro-batch", "2", "--attention", "dots", "--dtype", "f32"]
    none_text = None
    for src in POLICIES:
        module = work / f"tiny-{src}.mlir"
        generate(module, src, tiny)
        want = digest(run_tool, module)
        counts = {}
        for policy in POLICIES:
            out = work / f"tiny-{src}-to-{policy}.mlir"
            text = rewrite(opt, module, policy, out)
            counts[policy] = saved(text)
            checks.check(digest(run_tool, out) == want,
                         f"{src} -> {policy}: every result bit for bit as written ({len(want)} results)")
            if src == "full" and policy == "none":
                none_text = text
        checks.check(counts["full"] == 1 < counts["selective"] < counts["none"],
                     f"{src}: values saved per layer full {counts['full']} < selective "
                     f"{counts['selective']} < none {counts['none']}")
    # The digest check can fail: the last stack the rewrite adds, written at
    # layer 0 every trip instead of at the counter.
    updates = [m for m in re.finditer(r"stablehlo\.dynamic_update_slice (%[\w#]+), (%[\w#]+), (%[\w#]+), (%[\w#]+)",
                                      none_text)]
    last = updates[-1]
    broken = (none_text[:last.start(3)] + last.group(4) + none_text[last.end(3):])
    path = work / "tiny-broken.mlir"
    path.write_text(broken)
    checks.check(digest(run_tool, path) != digest(run_tool, work / "tiny-full.mlir"),
                 "a stack written at the wrong layer changes the results")


def schedule(tool, module, report, extra=()):
    run = subprocess.run([tool, str(module), "--preset", "h100", "--report", str(report), *extra],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise SystemExit(f"shardlab-schedule {module} failed: {run.stderr.strip()}")
    return json.loads(report.read_text())


def gemm_us(report):
    return sum(op["end_us"] - op["start_us"] for op in report["ops"]
               if op["kind"] == "compute" and op["name"].startswith("stablehlo.dot_general@"))


def count(report, name):
    return sum(1 for op in report["ops"] if op["kind"] == "compute" and op["name"].startswith(name + "@"))


def close(a, b):
    return abs(a - b) <= 1e-4 * max(abs(a), abs(b))


def check_estimate(tool, work, checks):
    H, HEADS, KV, F, S, B = 512, 8, 4, 1024, 2048, 8
    shape = ["--hidden", str(H), "--heads", str(HEADS), "--kv-heads", str(KV), "--ffn", str(F), "--vocab", "512",
             "--seq", str(S), "--micro-batch", str(B), "--attention", "rule"]
    written = {}
    for src in ("selective", "full"):
        generate(work / f"step-{src}.mlir", src, shape)
        written[src] = schedule(tool, work / f"step-{src}.mlir", work / f"w-{src}.json")
    got = {p: schedule(tool, work / "step-selective.mlir", work / f"r-{p}.json", ["--recompute", p])
           for p in POLICIES}
    for policy in ("selective", "full"):
        a, b = got[policy]["compute_us"], written[policy]["compute_us"]
        checks.check(close(a, b), f"selective -> {policy}: compute {a:.1f} us, the generator's {policy} "
                                  f"step {b:.1f} us")
    dots = {p: count(r, "stablehlo.dot_general") for p, r in got.items()}
    calls = {p: count(r, "stablehlo.custom_call") for p, r in got.items()}
    checks.check(dots["full"] - dots["none"] == 6 * LAYERS * MICRO and dots["selective"] == dots["none"],
                 f"GEMM kernels full {dots['full']}, selective {dots['selective']}, none {dots['none']} "
                 f"(full recomputes 6 x {LAYERS} layers x {MICRO} micro-batches)")
    checks.check(calls["full"] - calls["none"] == LAYERS * MICRO and calls["selective"] == calls["none"],
                 f"attention calls full {calls['full']}, selective {calls['selective']}, none {calls['none']}")
    # By hand: the recomputed GEMMs of a layer read B S tokens of width H
    # into Q (H), K and V (KV heads of H / HEADS), the output projection
    # (H) and gate and up (F): 2 B S H (2 H + 2 KV H / HEADS + 2 F) FLOPs.
    table = work / "gemms.shardlab.json"
    one_rate_table(table, RATE)
    timed = {p: schedule(tool, work / "step-selective.mlir", work / f"t-{p}.json",
                         ["--recompute", p, "--tables", str(table)]) for p in POLICIES}
    flops = 2 * B * S * H * (2 * H + 2 * KV * H // HEADS + 2 * F)
    extra = gemm_us(timed["full"]) - gemm_us(timed["none"])
    checks.check(close(extra, LAYERS * MICRO * flops / RATE * 1e6) and
                 close(gemm_us(timed["selective"]), gemm_us(timed["none"])),
                 f"GEMM time full - none {extra:.2f} us, by hand {LAYERS * MICRO * flops / RATE * 1e6:.2f} us; "
                 f"selective {gemm_us(timed['selective']):.2f} us = none {gemm_us(timed['none']):.2f} us")
    peak = {p: r["peak_memory_bytes"] for p, r in got.items()}
    checks.check(peak["full"] < peak["selective"] < peak["none"],
                 f"peak memory full {peak['full']} < selective {peak['selective']} < none {peak['none']}")
    said = [a for a in got["none"].get("assumptions", []) if a.startswith("recompute: none")]
    checks.check(len(said) == 1, "the report says what was recomputed: " + (said[0] if said else "nothing"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--opt", required=True, help="shardlab-opt")
    parser.add_argument("--run", required=True, help="shardlab-run")
    parser.add_argument("--schedule", required=True, help="shardlab-schedule")
    args = parser.parse_args()
    checks = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        check_values(args.opt, args.run, work, checks)
        check_estimate(args.schedule, work, checks)
    return checks.report("recompute")


if __name__ == "__main__":
    sys.exit(main())
