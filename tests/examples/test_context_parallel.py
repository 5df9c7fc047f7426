#!/usr/bin/env python3
"""Context parallelism (ring attention over a "cp" mesh axis, as
bench/models/gen_training_step.py --mesh cp=C writes it in shard_map): its
estimate against one worked out by hand.

    test_context_parallel.py --schedule build/shardlab-schedule

A Llama step of L layers and M micro-batches, batch b, sequence S, N heads
of width d (K/V widened to N heads before attention, as the generator's
grouped-query attention does), the sequence split over C devices. Each
device keeps its S/C queries; per layer and micro-batch:
  - forward: C cuDNN attention calls of S/C queries against S/C keys, the
    keys and values passed on C - 1 times: 2 (C - 1) collective-permutes;
  - backward: C calls, the keys and values passed on C - 1 times and their
    gradients C times (home after a full turn): 2 (C - 1) + 2 C permutes;
  - every permute moves one chunk, b (S/C) N d elements of bf16;
  - with a table of one GEMM rate R, a call's time is its two GEMMs of
    2 (b N) (S/C)^2 d FLOPs each, halved by the causal mask, x 2.5 in the
    backward: the attention time per device is 1/C of the same step's on one
    device.

The comparer's CP row on the same step written without a cp axis
(--attention rule: one fused call under a sharding rule), which
shardlab-context-ring rewrites into the ring, must be the same program:
the same permutes and bytes and the same step time as the ring written by
hand.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from hand_checks import Checks, one_rate_table  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = ROOT / "bench" / "models" / "gen_training_step.py"
RATE = 1.0e13  # FLOP/s: slow enough that every call is GEMM-bound
L, M, B, S, H, N, C = 2, 2, 2, 4096, 512, 8, 4
D = H // N


def generate(path, mesh, attention="shard_map"):
    subprocess.run([sys.executable, str(GEN), "--arch", "llama", "--layers", str(L), "--grad-accum", str(M),
                    "--micro-batch", str(B), "--seq", str(S), "--hidden", str(H), "--heads", str(N),
                    "--kv-heads", "4", "--ffn", "1024", "--vocab", "512", "--mesh", mesh,
                    "--attention", attention, "-o", str(path)],
                   check=True)


def schedule(tool, module, table, report, *extra):
    run = subprocess.run([tool, str(module), "--preset", "h100", "--tables", str(table), "--report", str(report),
                          *extra],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise SystemExit(f"shardlab-schedule {module} failed: {run.stderr.strip()}")
    return json.loads(report.read_text())


def attention(report):
    return [op for op in report["ops"] if op["kind"] == "compute" and
            "flash attention (cuDNN)" in op.get("cost_explanation", "")]


def close(a, b):
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--schedule", required=True, help="shardlab-schedule")
    args = parser.parse_args()
    checks = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        table = work / "gemms.shardlab.json"
        one_rate_table(table, RATE)
        generate(work / "ring.mlir", f"cp={C}")
        generate(work / "one.mlir", "dp=1")
        ring = schedule(args.schedule, work / "ring.mlir", table, work / "ring.json")
        one = schedule(args.schedule, work / "one.mlir", table, work / "one.json")
        permutes = [op for op in ring["ops"]
                    if op.get("collective") == "collective-permute" and op["name"].endswith("-start")]
        want = L * M * (2 * (C - 1) + 2 * (C - 1) + 2 * C)
        checks.check(len(permutes) == want, f"{len(permutes)} collective-permutes, by hand {want}")
        chunk = B * (S // C) * N * D * 2
        moved = ring["per_kind"].get("collective-permute", {}).get("bytes", 0)
        checks.check(moved == want * chunk, f"{moved} bytes permuted, by hand {want} x {chunk}")
        calls = attention(ring)
        checks.check(len(calls) == 2 * C * L * M, f"{len(calls)} attention calls, by hand {2 * C * L * M}")
        per_call = 2 * (2.0 * B * N * (S // C) ** 2 * D) / RATE * 1e6 * 0.5
        by_hand = L * M * C * per_call * (1 + 2.5)
        took = sum(op["end_us"] - op["start_us"] for op in calls)
        checks.check(close(took, by_hand), f"attention time per device {took:.3f} us, by hand {by_hand:.3f} us")
        alone = sum(op["end_us"] - op["start_us"] for op in attention(one))
        checks.check(close(took * C, alone),
                     f"{C} devices: {took:.3f} us each, 1/{C} of one device's {alone:.3f} us")
        checks.check(ring["exposed_comm_us"] < ring["comm_us"],
                     f"the ring's permutes overlap the chunks' attention: {ring['exposed_comm_us']:.1f} of "
                     f"{ring['comm_us']:.1f} us exposed")
        check_candidate(checks, args.schedule, work, table, ring)
        check_one_sequence(checks, args.schedule, work, table)
    return checks.report("context-parallel")


def check_one_sequence(checks, tool, work, table):
    """A batch of one sequence (micro-batch 1, as long-context training
    runs): the batch is the size-1 dim, which no data-parallel layout can
    split (their rows say so); the sequence after it is what SP and CP
    split, and the ring beats gathering the sequence for attention."""
    module = work / "one_sequence.mlir"
    subprocess.run([sys.executable, str(GEN), "--arch", "llama", "--layers", str(L), "--grad-accum", str(M),
                    "--micro-batch", "1", "--seq", str(S), "--hidden", str(H), "--heads", str(N),
                    "--kv-heads", "4", "--ffn", "1024", "--vocab", "512", "--attention", "rule", "-o", str(module)],
                   check=True)
    report = schedule(tool, module, table, work / "one.json", "--compare", "--devices", str(C))
    rows = {row["name"]: row for row in report["rows"]}
    dp = rows.get("DP", {})
    checks.check(not dp.get("ok") and "(size 1) does not divide" in dp.get("error", ""),
                 f"DP on a batch of one: {dp.get('error')}")
    cp, sp = rows.get("CP", {}), rows.get("SP", {})
    ran = bool(cp.get("ok") and sp.get("ok"))
    checks.check(ran, "CP and SP ran on a batch of one sequence")
    if ran:
        checks.check(cp["step_time_us"] < sp["step_time_us"],
                     f"the ring {cp['step_time_us']:.1f} us, gathering the sequence {sp['step_time_us']:.1f} us")
    # The ring's devices split the parameters too (ZeRO-3 over them): less
    # memory than CP's replicated weights, gathered and reduce-scattered.
    fsdp = rows.get("CP FSDP", {})
    kinds = {k["kind"] for k in fsdp.get("collectives", [])}
    checks.check(bool(fsdp.get("ok")) and {"all-gather", "reduce-scatter", "collective-permute"} <= kinds
                 and fsdp["peak_memory_bytes"] < cp.get("peak_memory_bytes", 0),
                 f"CP FSDP: {sorted(kinds)}, peak {fsdp.get('peak_memory_bytes')} B, CP's "
                 f"{cp.get('peak_memory_bytes')} B")
    # A pipeline of 2 stages with rings of 2 in each: every tick (M + 1 of
    # them each way) runs the stage's L/2 layers, each a ring of c = 2 in
    # the forward (2 (c - 1) permutes) and the backward (2 (c - 1) + 2 c),
    # and passes its activations on (one permute a tick each way).
    pp = rows.get("PP×CP 2×2", {})
    stages, c, ticks = 2, 2, M + 1
    want = (L // stages) * ticks * (2 * (c - 1) + 2 * (c - 1) + 2 * c) + 2 * ticks
    got = sum(k["count"] for k in pp.get("collectives", []) if k["kind"] == "collective-permute")
    checks.check(pp.get("ok") and got == want,
                 f"PP×CP 2×2: {got} collective-permutes, by hand {want} ({pp.get('error', 'ran')})")


def check_candidate(checks, tool, work, table, ring):
    """The comparer's CP row against the ring written by hand."""
    generate(work / "rule.mlir", "dp=1", attention="rule")
    report = schedule(tool, work / "rule.mlir", table, work / "compare.json", "--compare", "--devices", str(C))
    rows = {row["name"]: row for row in report["rows"]}
    cp = rows.get("CP")
    ran = cp is not None and cp.get("ok")
    checks.check(ran, "the comparer's CP row ran" + ("" if ran else f": {cp and cp.get('error')}"))
    if not ran:
        return
    kinds = {k["kind"]: (k["count"], k["bytes"]) for k in cp["collectives"]}
    written = ring["per_kind"]
    for kind, (count, moved) in kinds.items():
        want = written.get(kind, {})
        checks.check((count, moved) == (want.get("count"), want.get("bytes")),
                     f"CP row: {kind} {count}x {moved} B, the ring as written {want}")
    checks.check(set(kinds) == set(k for k, v in written.items() if v.get("count")),
                 f"CP row's collectives {sorted(kinds)}, the ring's {sorted(written)}")
    checks.check(close(cp["step_time_us"], ring["step_time_us"]),
                 f"CP row {cp['step_time_us']:.3f} us, the ring as written {ring['step_time_us']:.3f} us")


if __name__ == "__main__":
    sys.exit(main())
