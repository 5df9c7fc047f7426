#!/usr/bin/env python3
"""Pipeline parallelism (GPipe, bench/models/gen_pipeline.py): its values and
its estimate, each against answers worked out by hand.

    test_pipeline.py --run build/shardlab-run --schedule build/shardlab-schedule

Values: self-checking pipelines (integer inputs, the step computed in
Python's integers) run globally and partitioned on S simulated devices, and
every check passes; a pipeline whose stages pass activations the wrong way
fails them (the checks can fail).

Estimate, with a performance table written here (every GEMM at R FLOP/s,
a collective-permute inside a node LAT + bytes / BW) and the S-curve
network set by --sol-options across nodes: for S stages of K layers and M micro-batches of
B x H, each device runs T = M + S - 1 ticks forward and T backward, in each
K GEMMs forward and 2K backward of 2 B H^2 FLOPs, and sends one activation
(B H elements) per tick each way: 2T collective-permutes. So
  - GEMM time per device = 3 K T 2 B H^2 / R, which is (M + S - 1) / (M S)
    of one device running all S K layers on the M micro-batches (the bubble);
  - each permute's time is the table's for its bytes (XLA classes a chain
    of stages as a two-way permute with non-mutual pairs: a stage that
    receives also sends); when the stages span nodes (--gpus-per-node
    smaller than S) the slowest hop is a send/recv between 2 hosts:
    launch + rtt + chunk preparation + 1.025 bytes / NIC (XLA's S-curve),
    plus the HBM term of its bytes;
  - GPipe holds every micro-batch in flight: peak memory grows by
    (K + 3) B H bytes-per-element per micro-batch (K stashed layer inputs,
    the last stage's output, the input micro-batch and its padded copy);
  - the step time is at least the GEMM time, and at most everything one
    after another;
  - interleaved (V = 2 blocks of K/2 layers a device): M V + S - 1 ticks,
    (M V + S - 1) / (V (M + S - 1)) of GPipe's GEMM time. Its values are
    checked like GPipe's, and one without the ring's wrap-around fails.

Cut (shardlab-schedule --pipeline-stages S on gen_pipeline.py --scanned, the
same step written without a pipeline): the loops tick M + S - 1 times over K
layers, the GEMM time and permutes are the hand-written pipeline's, and the
stash of M micro-batches (GPipe) grows the peak as worked out by hand;
interleaved (--virtual-stages 2), M V + S - 1 chunk ticks of K/2 layers in
rounds of K layers, the hand-written interleaved pipeline's GEMM time and
2 (M V + S - 1) permutes.
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
GEN = ROOT / "bench" / "models" / "gen_pipeline.py"
RATE = 1.0e14           # FLOP/s, every GEMM
LAT_IN, BW_IN = 4.0, 200.0e9      # us, bytes/s: a permute inside a node
LAUNCH, RTT, CHUNK, NIC = 40.0, 30.0, 6.0, 25.0e9   # us, us, us, bytes/s: across nodes
SOL = f"nccl_op_launch_us={int(LAUNCH)},rtt_us={int(RTT)},chunk_prep_us={int(CHUNK)},nic_speed_gbps={NIC / 1e9:g}"
BYTES = {"bf16": 2, "f32": 4}


def generate(path, stages, micro, layers, hidden, rows, extra=(), virtual=1):
    subprocess.run([sys.executable, str(GEN), "--stages", str(stages), "--micro-batches", str(micro),
                    "--layers-per-stage", str(layers), "--hidden", str(hidden), "--virtual-stages", str(virtual),
                    "--micro-batch-size", str(rows), "-o", str(path), *extra], check=True)


def table(path, sizes):
    """Every GEMM at RATE; a permute inside a node LAT_IN + bytes / BW_IN."""
    collectives = [{"op": "collective-permute", "permute_type": "intra_partition_two_way_has_non_mutual",
                    "dtype": "bf16", "bytes": bytes_, "devices_per_group": 2, "num_groups": 1, "nodes": 1,
                    "time_us": {"median": LAT_IN + bytes_ / BW_IN * 1e6}} for bytes_ in sizes]
    one_rate_table(path, RATE, collectives)


def schedule(tool, module, tables, gpus_per_node, report, extra=()):
    run = subprocess.run([tool, str(module), "--preset", "h100", "--tables", str(tables), "--gpus-per-node",
                          str(gpus_per_node), "--sol-options", SOL, "--report", str(report), *extra],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise SystemExit(f"shardlab-schedule {module} failed: {run.stderr.strip()}")
    return json.loads(report.read_text())


def gemm_us(report):
    return sum(op["end_us"] - op["start_us"] for op in report["ops"]
               if op.get("fusion", {}).get("kind") == "gemm" or op["name"].startswith("stablehlo.dot_general"))


def permutes(report):
    return [op for op in report["ops"] if op.get("collective") == "collective-permute"]


def check_values(run_tool, work, checks):
    for stages, micro, layers, hidden, rows, virtual in (
            (4, 3, 1, 4, 2, 1), (4, 6, 2, 8, 2, 1), (8, 8, 2, 8, 4, 1), (2, 5, 3, 16, 3, 1), (3, 1, 1, 4, 1, 1),
            (1, 2, 1, 4, 2, 1), (4, 8, 1, 8, 2, 2), (4, 6, 2, 8, 2, 2), (2, 3, 1, 8, 2, 3), (3, 7, 2, 8, 1, 2)):
        path = work / f"check_{stages}_{micro}_{layers}_{virtual}.mlir"
        generate(path, stages, micro, layers, hidden, rows, ["--self-check", "--seed", str(stages * 7 + micro)],
                 virtual)
        run = subprocess.run([run_tool, "--shardings", "module", str(path)], capture_output=True, text=True,
                             timeout=300)
        verdict = [line for line in run.stdout.splitlines() if line.startswith("partitioned on ")]
        ok = run.returncode == 0 and "2 of 2 checks passed in the global run" in run.stdout and verdict and \
            f"partitioned on {stages} devices: match" in verdict[-1]
        checks.say(ok, f"S={stages} M={micro} K={layers} V={virtual}: {(verdict or [run.stdout.strip()])[-1]}")
    # Interleaved: the ring's wrap-around (stage S-1 back to stage 0) dropped.
    text = (work / "check_4_6_2_2.mlir").read_text()
    wrong, n = re.subn(r"\[\[0, 1\], \[1, 2\], \[2, 3\], \[3, 0\]\]", "[[0, 1], [1, 2], [2, 3], [3, 3]]", text,
                       count=1)
    bad = work / "no_wrap.mlir"
    bad.write_text(wrong)
    run = subprocess.run([run_tool, str(bad)], capture_output=True, text=True, timeout=300)
    checks.say(n == 1 and run.returncode == 1 and "FAIL check.expect_eq" in run.stdout,
               "an interleaved pipeline without the ring's wrap-around fails its checks")
    # Activations passed backwards in the forward loop: the checks must fail.
    text = (work / "check_4_6_2_1.mlir").read_text()
    wrong, n = re.subn(r"dense<\[\[0, 1\], \[1, 2\], \[2, 3\]\]>", "dense<[[1, 0], [2, 1], [3, 2]]>", text, count=1)
    bad = work / "wrong_direction.mlir"
    bad.write_text(wrong)
    run = subprocess.run([run_tool, str(bad)], capture_output=True, text=True, timeout=300)
    checks.say(n == 1 and run.returncode == 1 and "FAIL check.expect_eq" in run.stdout,
               "a pipeline sending activations the wrong way fails its checks")


def check_estimate(schedule_tool, work, checks):
    S, K, H, B = 4, 2, 4096, 16
    act = B * H * BYTES["bf16"]
    tables = work / "table.shardlab.json"
    table(tables, [act // 2, act, act * 2])
    reports = {}
    for M in (4, 8):
        module = work / f"pp_{M}.mlir"
        generate(module, S, M, K, H, B)
        reports[M] = schedule(schedule_tool, module, tables, 8, work / f"pp_{M}.json")
    one = work / "pp_one.mlir"  # one device, all S K layers, the same micro-batches
    generate(one, 1, 8, S * K, H, B)
    single = schedule(schedule_tool, one, tables, 8, work / "pp_one.json")
    per_gemm = 2.0 * B * H * H / RATE * 1e6
    for M, r in reports.items():
        T = M + S - 1
        loops = [loop["trip_count"] for loop in r["loops"]]
        checks.say(loops == [T, T], f"M={M}: the two loops run {loops} ticks, by hand [{T}, {T}]")
        checks.near(f"M={M}: GEMM time per device (us)", gemm_us(r), 3 * K * T * per_gemm)
        p = permutes(r)
        checks.say(len([op for op in p if op["name"].endswith("-start")]) == 2 * T,
                   f"M={M}: {len([op for op in p if op['name'].endswith('-start')])} collective-permutes, by hand {2 * T}")
        times = {round(op["end_us"] - op["start_us"], 6) for op in p if op["name"].endswith("-start")}
        checks.say(times == {round(LAT_IN + act / BW_IN * 1e6, 6)},
                   f"M={M}: each permute inside the node takes {sorted(times)} us, by hand {LAT_IN + act / BW_IN * 1e6:.4f}")
        lower = gemm_us(r)
        checks.say(lower <= r["step_time_us"] <= r["serial_us"] + 1e-6,
                   f"M={M}: step {r['step_time_us']:.2f} us between the GEMMs {lower:.2f} and serial {r['serial_us']:.2f}")
    # The bubble: per device, (M + S - 1) / (M S) of one device's GEMMs.
    checks.near("GEMM time, 4 stages over 1 device, M=8", gemm_us(reports[8]) / gemm_us(single), (8 + S - 1) / (8 * S))
    # Interleaved, V = 2 blocks of K/2 layers a device, the same layers:
    # M V + S - 1 ticks of half the GEMMs, so (M V + S - 1) / (V (M + S - 1))
    # of GPipe's GEMM time (the bubble V times shorter).
    inter = work / "pp_8_v2.mlir"
    generate(inter, S, 8, K // 2, H, B, virtual=2)
    r2 = schedule(schedule_tool, inter, tables, 8, work / "pp_8_v2.json")
    T2 = 8 * 2 + S - 1
    checks.say([loop["trip_count"] for loop in r2["loops"]] == [T2, T2], f"interleaved V=2, M=8: {T2} ticks each way")
    checks.near("interleaved V=2, M=8: GEMM time per device (us)", gemm_us(r2), 3 * (K // 2) * T2 * per_gemm)
    checks.near("interleaved over GPipe GEMM time, M=8", gemm_us(r2) / gemm_us(reports[8]),
                (8 * 2 + S - 1) / (2 * (8 + S - 1)))
    print(f"     step: GPipe {reports[8]['step_time_us']:.1f} us, interleaved V=2 {r2['step_time_us']:.1f} us")
    # GPipe keeps every micro-batch in flight.
    grow = reports[8]["peak_memory_bytes"] - reports[4]["peak_memory_bytes"]
    checks.say(grow == 4 * (K + 3) * act,
               f"peak memory per device grows {grow} B from M=4 to M=8, by hand {4 * (K + 3) * act}")
    # Stages on nodes of 2 GPUs: the middle hop crosses nodes, and the
    # permute takes as long as its slowest hop.
    across = schedule(schedule_tool, work / "pp_4.mlir", tables, 2, work / "pp_4_nodes.json")
    network = LAUNCH + RTT + CHUNK + 1.025 * act / NIC * 1e6
    for op in [op for op in permutes(across) if op["name"].endswith("-start")][:2]:
        text = op["cost_explanation"]
        hbm = re.search(r"^hbm = ([0-9.e+-]+) us", text, re.M)
        checks.say("hosts = 2 nodes" in text and "s-curve/send-recv" in text and hbm is not None, f"{op['name']}: a send/recv between 2 hosts")
        if hbm:
            checks.near(f"{op['name']}: network time across nodes (us)",
                        op["end_us"] - op["start_us"] - float(hbm.group(1)), network)


def check_cut(schedule_tool, work, checks):
    """The same GPipe step cut by shardlab-schedule --pipeline-stages from
    the step written without a pipeline (gen_pipeline.py --scanned: a loop
    over M micro-batches around a forward and a backward loop over the
    L = S K layers): T = M + S - 1 ticks of K layers' forward and backward,
    so the same 3 K T GEMMs and 2 T permutes per device as the pipeline
    written by hand; GPipe's stash holds M micro-batches of K layer inputs."""
    S, K, H, B = 4, 2, 4096, 16
    act = B * H * BYTES["bf16"]
    tables = work / "table.shardlab.json"  # written by check_estimate
    per_gemm = 2.0 * B * H * H / RATE * 1e6
    cut = {}
    for M in (4, 8):
        module = work / f"scanned_{M}.mlir"
        generate(module, S, M, K, H, B, ["--scanned"])
        cut[M] = schedule(schedule_tool, module, tables, 8, work / f"scanned_{M}.json",
                          ["--pipeline-stages", str(S), "--pipeline-schedule", "gpipe"])
        T = M + S - 1
        loops = [loop["trip_count"] for loop in cut[M]["loops"]]
        checks.say(loops == [T, K, K], f"cut, M={M}: the loops run {loops} times, by hand [{T}, {K}, {K}]")
        checks.near(f"cut, M={M}: GEMM time per device (us)", gemm_us(cut[M]), 3 * K * T * per_gemm)
        hand = json.loads((work / f"pp_{M}.json").read_text())
        checks.near(f"cut over written by hand, M={M}: GEMM time", gemm_us(cut[M]) / gemm_us(hand), 1.0)
        p = [op for op in permutes(cut[M]) if op["name"].endswith("-start")]
        checks.say(len(p) == 2 * T, f"cut, M={M}: {len(p)} collective-permutes, by hand {2 * T}")
        times = {round(op["end_us"] - op["start_us"], 6) for op in p}
        checks.say(times == {round(LAT_IN + act / BW_IN * 1e6, 6)},
                   f"cut, M={M}: each permute takes {sorted(times)} us, by hand {LAT_IN + act / BW_IN * 1e6:.4f}")
        said = [a for a in cut[M]["assumptions"] if a.startswith("pipeline: ")]
        checks.say(len(said) == 1 and f"{T} ticks" in said[0], f"cut, M={M}: the report says {said}")
    # A middle stage (--pipeline-stage-kind middle): this step has no
    # embedding or head, so the same layers' GEMMs and sends, by hand.
    mid = schedule(schedule_tool, work / "scanned_8.mlir", tables, 8, work / "scanned_8_mid.json",
                   ["--pipeline-stages", str(S), "--pipeline-schedule", "gpipe",
                    "--pipeline-stage-kind", "middle"])
    T = 8 + S - 1
    checks.near("cut, middle stage, M=8: GEMM time per device (us)", gemm_us(mid), 3 * K * T * per_gemm)
    p = [op for op in permutes(mid) if op["name"].endswith("-start")]
    checks.say(len(p) == 2 * T, f"cut, middle stage: {len(p)} collective-permutes, by hand {2 * T}")
    said = [a for a in mid["assumptions"] if a.startswith("pipeline: ")]
    checks.say(len(said) == 1 and "a middle stage" in said[0], f"cut, middle stage: the report says {said}")
    # Interleaved, V = 2 chunks of K/2 layers a device: M V + S - 1 chunk
    # ticks, the ring closed, counted in rounds of V chunks (K layers):
    # M + (S - 1) // V rounds, then one of the (S - 1) % V chunks left; the
    # hand-written interleaved pipeline's GEMMs.
    v2 = schedule(schedule_tool, work / "scanned_8.mlir", tables, 8, work / "scanned_8_v2.json",
                  ["--pipeline-stages", str(S), "--virtual-stages", "2", "--pipeline-schedule", "gpipe"])
    T2 = 8 * 2 + S - 1
    rounds, left = 8 + (S - 1) // 2, (S - 1) % 2
    by_hand = [rounds, K, K, 1, left * K // 2, left * K // 2]
    loops = [loop["trip_count"] for loop in v2["loops"]]
    checks.say(loops == by_hand, f"cut, interleaved V=2, M=8: the loops run {loops} times, by hand {by_hand}")
    checks.near("cut, interleaved V=2, M=8: GEMM time per device (us)", gemm_us(v2), 3 * (K // 2) * T2 * per_gemm)
    hand_v2 = json.loads((work / "pp_8_v2.json").read_text())
    checks.near("cut over written by hand, interleaved V=2: GEMM time", gemm_us(v2) / gemm_us(hand_v2), 1.0)
    p = [op for op in permutes(v2) if op["name"].endswith("-start")]
    checks.say(len(p) == 2 * T2, f"cut, interleaved V=2: {len(p)} collective-permutes, by hand {2 * T2}")
    # From M = 4 to 8: the stash [K M, B, H] grows by 4 K activations, the
    # input x and the outputs y [M, B, H] by 4 each.
    grow = cut[8]["peak_memory_bytes"] - cut[4]["peak_memory_bytes"]
    checks.say(grow == 4 * (K + 2) * act,
               f"cut: peak memory per device grows {grow} B from M=4 to M=8, by hand {4 * (K + 2) * act}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", required=True, help="shardlab-run")
    parser.add_argument("--schedule", required=True, help="shardlab-schedule")
    args = parser.parse_args()
    checks = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        check_values(args.run, work, checks)
        check_estimate(args.schedule, work, checks)
        check_cut(args.schedule, work, checks)
    if checks.failures:
        print(f"FAILED: {len(checks.failures)} check(s)")
        return 1
    print("all pipeline checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
