#!/usr/bin/env python3
"""ctest for shardlab-schedule: the full pipeline (propagation, explicit
collectives, schedule) on every examples/schedule/*.mlir.

Each example names the collectives it must produce in a comment line
`// expected collectives: all-reduce=2 ...`; the report must hold exactly
those, every field the issue asks for, and the schedule's invariants. Also
checks the per-kind limit flags, the memory rerun loop in the report, bad
flags, the Chrome trace's tracks, and that scripts/schedule_svg.py draws a
report.

    python3 tests/schedule/check_schedule_cli.py --cli build/shardlab-schedule
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FIELDS = ["step_time_us", "compute_us", "exposed_comm_us", "serial_us",
          "lower_bound_us", "peak_memory_bytes", "overlap_limit", "ops",
          "per_kind_limits", "memory_limit"]
OP_FIELDS = ["name", "kind", "stream", "start_us", "end_us", "deps"]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run_cli(cli, args, tmp):
    report = os.path.join(tmp, "report.json")
    if os.path.exists(report):
        os.remove(report)
    proc = subprocess.run([cli] + args + ["--report", report],
                          capture_output=True, text=True, timeout=300)
    data = None
    if proc.returncode == 0 and os.path.exists(report):
        with open(report) as f:
            data = json.load(f)
    return proc, data


def expected_collectives(path):
    with open(path) as f:
        for line in f:
            if line.startswith("// expected collectives:"):
                pairs = line.split(":", 1)[1].split()
                return {k: int(v) for k, v in (p.split("=") for p in pairs)}
    return None


def check_invariants(name, r):
    for key in FIELDS:
        check(key in r, "%s: report lacks %s" % (name, key))
    if any(key not in r for key in FIELDS):
        return
    step = r["step_time_us"]
    eps = 1e-6 * (1 + step)
    check(step + eps >= r["lower_bound_us"], "%s: step < lower bound" % name)
    check(step <= r["serial_us"] + eps, "%s: step > serial" % name)
    check(step + eps >= r["compute_us"], "%s: step < compute" % name)
    check(abs(r["forward_sim_us"] - step) <= 1e-6 * (1 + step),
          "%s: forward simulation %s != step %s" % (name, r["forward_sim_us"],
                                                  step))
    check(0 <= r["exposed_comm_us"] <= r["comm_us"] + eps,
          "%s: exposed communication out of range" % name)
    check(r["peak_memory_bytes"] > 0, "%s: no memory" % name)
    ops = r["ops"]
    for i, op in enumerate(ops):
        if not check(all(k in op for k in OP_FIELDS),
                     "%s: op %d lacks a field" % (name, i)):
            continue
        check(op["kind"] in ("compute", "collective"),
              "%s: op %d kind %s" % (name, i, op["kind"]))
        check(op["start_us"] <= op["end_us"] <= step + eps,
              "%s: op %d times" % (name, i))
        for d in op["deps"]:
            if check(0 <= d < len(ops), "%s: op %d dep %d" % (name, i, d)):
                check(ops[d]["end_us"] <= op["start_us"] + eps,
                      "%s: op %d starts before its dep %d ends" % (name, i, d))


def collective_counts(r):
    return dict(collections.Counter(op["collective"] for op in r["ops"]
                                    if op["kind"] == "collective"))


def check_examples(cli, tmp):
    paths = sorted(glob.glob(os.path.join(ROOT, "examples/schedule/*.mlir")))
    check(len(paths) >= 3, "fewer than three schedule examples")
    for path in paths:
        name = os.path.basename(path)
        expected = expected_collectives(path)
        check(expected is not None, "%s: no '// expected collectives:'" % name)
        proc, r = run_cli(cli, [path], tmp)
        if not check(r is not None, "%s: exit %d: %s" % (name, proc.returncode,
                                                        proc.stderr)):
            continue
        check("step time" in proc.stdout, "%s: no summary" % name)
        check_invariants(name, r)
        check(collective_counts(r) == (expected or {}),
              "%s: collectives %s, expected %s" % (name, collective_counts(r),
                                                   expected))
        print("ok %-32s step %10.1f us, exposed %9.1f us, %s" % (
            name, r["step_time_us"], r["exposed_comm_us"],
            collective_counts(r)))


def check_flags(cli, tmp):
    zero = os.path.join(ROOT, "examples/schedule/zero_optimizer_step.mlir")
    proc, r = run_cli(cli, [zero, "--overlap-limit", "2",
                            "--all-gather-limit", "2"], tmp)
    if check(r is not None, "per-kind flags: %s" % proc.stderr):
        check(r["per_kind_limits"]["all-gather"] == 2, "all-gather limit")
        check(r["per_kind_limits"]["reduce-scatter"] == 1, "default limit")
        check(r["overlap_limit"] == 2, "overlap limit")
        check_invariants("zero --all-gather-limit 2", r)
    # GEMMs at the datasheet peak: less compute, and the report says why.
    _, measured = run_cli(cli, [zero, "--preset", "a100"], tmp)
    proc, peak = run_cli(cli, [zero, "--preset", "a100", "--gemms-at-peak"], tmp)
    if check(measured is not None and peak is not None,
             "--gemms-at-peak: %s" % proc.stderr):
        check(peak["compute_us"] < measured["compute_us"],
              "--gemms-at-peak: compute %s not below %s"
              % (peak["compute_us"], measured["compute_us"]))
        check("--gemms-at-peak" in peak["hardware"]["sources"]["gemm"],
              "--gemms-at-peak source: %s" % peak["hardware"]["sources"]["gemm"])
    # Kernels slowed beside transfers: the step grows by what the compute
    # stream lost, and the assumption gives the factors and their source.
    proc, slowed = run_cli(cli, [zero, "--preset", "a100", "--overlap-slowdown", "1.25,1.5"], tmp)
    if check(measured is not None and slowed is not None, "--overlap-slowdown: %s" % proc.stderr):
        check(measured["contention_us"] == 0 and slowed["contention_us"] > 0,
              "--overlap-slowdown contention %s" % slowed["contention_us"])
        check(slowed["step_time_us"] > measured["step_time_us"], "--overlap-slowdown: a longer step")
        said = [a for a in slowed["assumptions"] if a.startswith("overlap: ")]
        check(len(said) == 1 and "x1.25 its time" in said[0] and "from --overlap-slowdown 1.25,1.5" in said[0],
              "--overlap-slowdown said: %s" % said)
        said = [a for a in measured["assumptions"] if a.startswith("overlap: ")]
        check(len(said) == 1 and "not to slow each other" in said[0], "no slowdown said: %s" % said)
    for bad in ("0.9", "1.2,", "x", "1.2,101"):
        proc, _ = run_cli(cli, [zero, "--overlap-slowdown", bad], tmp)
        check(proc.returncode == 1 and "bad value '%s' for --overlap-slowdown" % bad in proc.stderr,
              "--overlap-slowdown %s: %s" % (bad, proc.stderr))
    check_attention_slowdown(cli, tmp)
    proc, _ = run_cli(cli, [zero, "--reduce-scatter-limit", "2"], tmp)
    check(proc.returncode == 1 and "exceeds" in proc.stderr,
          "a per-kind limit above --overlap-limit must fail: %s" % proc.stderr)
    proc, _ = run_cli(cli, [zero, "--all-to-all-limit", "x"], tmp)
    check(proc.returncode == 1 and "bad value" in proc.stderr, "bad value")
    proc, _ = run_cli(cli, [zero, "--pipeline-stage-kind", "sideways"], tmp)
    check(proc.returncode == 1 and "bad value" in proc.stderr,
          "--pipeline-stage-kind sideways: %s" % proc.stderr)
    # A pipeline's settings without the stages they describe say so.
    proc, _ = run_cli(cli, [zero, "--pipeline-stage-kind", "middle"], tmp)
    check(proc.returncode == 1 and "need --pipeline-stages" in proc.stderr,
          "--pipeline-stage-kind without --pipeline-stages: %s" % proc.stderr)
    # An option the CLI does not know is named as such, not as a bad value.
    proc, _ = run_cli(cli, [zero, "--thread", "2"], tmp)
    check(proc.returncode == 1 and "unknown option --thread" in proc.stderr,
          "unknown option: %s" % proc.stderr)
    proc, r = run_cli(cli, [zero, "--memory-limit", "1000000", "--reruns",
                            "2"], tmp)
    if check(r is not None, "memory limit: %s" % proc.stderr):
        m = r["memory_limit"]
        check(m["reruns"] == 2 and len(m["attempts"]) == 3,
              "rerun loop: %s" % m)
        check(m["initial_limit_bytes"] == 1000000, "initial limit")
        check(m["limit_bytes"] == 810000, "final limit %s" % m["limit_bytes"])
        check(m["over_limit"], "over limit")
    proc, r = run_cli(cli, [zero], tmp)
    if r is not None:
        check(r["memory_limit"]["reruns"] == 0 and
              r["memory_limit"]["limit_bytes"] > 0, "default memory limit")
    check_loops(cli, tmp)
    proc = subprocess.run([cli, "--help"], capture_output=True, text=True)
    for flag in ("--all-gather-limit", "--collective-permute-limit",
                 "--reruns", "--device-memory", "--loops",
                 "--pipeline-stage-kind", "--overlap-slowdown",
                 "--attention-slowdown"):
        check(flag in proc.stdout, "--help lacks %s" % flag)


def check_attention_slowdown(cli, tmp):
    """--attention-slowdown F,B: each fused attention call (cuDNN) takes F
    (forward) or B (backward) times the price of its GEMMs, and the
    assumption names the factors and where they came from in place of
    "not priced"."""
    ring = os.path.join(ROOT, "examples/schedule/ring_attention.mlir")
    _, plain = run_cli(cli, [ring, "--preset", "h100"], tmp)
    proc, slowed = run_cli(cli, [ring, "--preset", "h100", "--attention-slowdown", "2"], tmp)
    if not check(plain is not None and slowed is not None, "--attention-slowdown: %s" % proc.stderr):
        return

    def attention_us(report):
        return sum(o["end_us"] - o["start_us"] for o in report["ops"]
                   if "flash attention" in o.get("cost_explanation", ""))
    check(attention_us(plain) > 0 and
          abs(attention_us(slowed) - 2 * attention_us(plain)) < 1e-6 * attention_us(slowed),
          "--attention-slowdown 2: attention %s us, was %s" % (attention_us(slowed), attention_us(plain)))
    said = [a for a in slowed["assumptions"] if a.startswith("fused attention: ")]
    check(len(said) == 1 and "times x2 (forward) and x2 (backward)" in said[0]
          and "from --attention-slowdown 2:" in said[0], "--attention-slowdown said: %s" % said)
    said = [a for a in plain["assumptions"] if a.startswith("fused attention: ")]
    check(len(said) == 1 and "is not priced" in said[0], "unpriced softmax said: %s" % said)
    for bad in ("0.05", "1.2,", "x", "1.2,101"):
        proc, _ = run_cli(cli, [ring, "--attention-slowdown", bad], tmp)
        check(proc.returncode == 1 and "bad value '%s' for --attention-slowdown" % bad in proc.stderr,
              "--attention-slowdown %s: %s" % (bad, proc.stderr))


def check_loops(cli, tmp):
    """--loops extrapolate schedules a loop's first, one steady and last
    three iterations and counts the steady one for the rest: on the
    examples with loops, the totals are the unrolled ones (their
    iterations are alike), and each loop says it was extrapolated; so
    with kernels and transfers slowing each other (--overlap-slowdown: the
    steady iteration's contention counted for the rest too)."""
    for name, slowed in (("pipeline_gpipe.mlir", []), ("scanned_layers.mlir", []),
                         ("transformer_train_step.mlir", []),
                         ("pipeline_gpipe.mlir", ["--overlap-slowdown", "1.25,1.5"]),
                         ("scanned_layers.mlir", ["--overlap-slowdown", "1.5"])):
        path = os.path.join(ROOT, "examples/schedule", name)
        _, full = run_cli(cli, [path, "--loops", "unroll"] + slowed, tmp)
        proc, few = run_cli(cli, [path, "--loops", "extrapolate"] + slowed, tmp)
        name = " ".join([name] + slowed)
        if not check(full is not None and few is not None,
                     "%s --loops: %s" % (name, proc.stderr)):
            continue
        check(not slowed or full["contention_us"] > 0, "%s: no contention" % name)
        for key in ("step_time_us", "compute_us", "comm_us", "exposed_comm_us", "contention_us"):
            check(abs(few[key] - full[key]) <= 1e-9 * max(1.0, full[key]),
                  "%s --loops extrapolate: %s %s, unrolled %s" % (
                      name, key, few[key], full[key]))
        check(few["peak_memory_bytes"] == full["peak_memory_bytes"],
              "%s --loops extrapolate: peak memory" % name)
        check(any("extrapolated from 5" in a for a in few["assumptions"]),
              "%s --loops extrapolate: no assumption says so" % name)
        check(not any("extrapolated" in a for a in full["assumptions"]),
              "%s --loops unroll: says extrapolated" % name)
    proc, _ = run_cli(cli, [path, "--loops", "some"], tmp)
    check(proc.returncode == 1 and "bad value 'some' for --loops" in proc.stderr,
          "--loops some: %s" % proc.stderr)
    # The comparison extrapolates by default. The rows stay within 1% of
    # the unrolled ones: the work around a loop that the scheduler lays into
    # its last iterations can reach past the three kept whole (measured
    # here: DP's backward, 0.3%).
    _, quick = run_cli(cli, [path, "--compare", "--devices", "16"], tmp)
    _, slow = run_cli(cli, [path, "--compare", "--devices", "16",
                            "--loops", "unroll"], tmp)
    if check(quick is not None and slow is not None, "--compare --loops"):
        times = {x["name"]: x["step_time_us"] for x in slow["rows"] if x["ok"]}
        for x in quick["rows"]:
            if x["ok"] and x["name"] in times:
                check(abs(x["step_time_us"] - times[x["name"]]) <=
                      0.01 * times[x["name"]],
                      "--compare %s: %s extrapolated, %s unrolled" % (
                          x["name"], x["step_time_us"], times[x["name"]]))


def check_two_writings(cli, tmp):
    """The same step written as one batch of 1,024 sequences and as 16
    micro-batches of 64: on 64 and 1,024 devices the comparison's fastest
    layout that fits, among the layouts both writings can run, is the same
    layout at the same step time, reached by splitting micro-batches from
    either writing (measured: identical). Micro-batches of 64 sequences
    cannot split 256 or more ways on the batch (ZeRO-1 on 1,024 devices:
    the one-batch writing's fastest; no candidate merges micro-batches)."""
    gen = os.path.join(ROOT, "bench/models/gen_training_step.py")
    model = ["--arch", "llama", "--layers", "80", "--hidden", "8192", "--heads", "64",
             "--kv-heads", "8", "--ffn", "28672", "--vocab", "32000", "--seq", "4096",
             "--recompute", "selective", "--attention", "rule"]
    writings = {"1x1024": ["--micro-batch", "1024"],
                "16x64": ["--micro-batch", "64", "--grad-accum", "16"]}
    for name, batch in writings.items():
        subprocess.run([sys.executable, gen] + model + batch +
                       ["-o", os.path.join(tmp, name + ".mlir")], check=True)
    # "mb÷k" says how the micro-batches were split, which differs by
    # writing (1 split in 16, or 16 as written).
    layout = lambda row: re.sub(r" mb÷\d+", "", row["name"])
    for devices in (64, 1024):
        fitting = {}
        for name in writings:
            proc, r = run_cli(cli, [os.path.join(tmp, name + ".mlir"), "--preset", "h100",
                                    "--compare", "--devices", str(devices)], tmp)
            if not check(r is not None, "70B %s --compare %d: %s" % (name, devices, proc.stderr)):
                return
            fitting[name] = [x for x in r["rows"] if x["ok"] and x.get("fits")]
            check(fitting[name], "70B %s on %d: nothing fits" % (name, devices))
        both = ({layout(x) for x in fitting["1x1024"]} & {layout(x) for x in fitting["16x64"]})
        if not check(both, "70B on %d devices: no layout fits in both writings" % devices):
            continue
        a, b = ([x for x in fitting[w] if layout(x) in both][0] for w in writings)
        check(layout(a) == layout(b) and
              abs(a["step_time_us"] - b["step_time_us"]) <= 1e-3 * a["step_time_us"],
              "70B on %d devices, two writings, two answers: %s %.0f us, %s %.0f us" % (
                  devices, a["name"], a["step_time_us"], b["name"], b["step_time_us"]))
        print("ok 70B on %d devices: both writings' fastest that fits: %s, %.3f s "
              "(fastest of either: %s, %s)" % (
                  devices, layout(a), a["step_time_us"] / 1e6,
                  fitting["1x1024"][0]["name"], fitting["16x64"][0]["name"]))


def check_svg(cli, tmp):
    dp = os.path.join(ROOT, "examples/schedule/dp_mlp.mlir")
    proc, r = run_cli(cli, [dp], tmp)
    if not check(r is not None, "dp_mlp: %s" % proc.stderr):
        return
    trace = os.path.join(tmp, "trace.json")
    proc = subprocess.run([cli, dp, "--trace", trace], capture_output=True,
                          text=True)
    if check(proc.returncode == 0 and os.path.exists(trace),
             "--trace: %s" % proc.stderr):
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        tracks = {e.get("tid") for e in events if e.get("ph") == "X"}
        check(tracks == {0, 1}, "trace tracks %s" % tracks)
    svg = os.path.join(tmp, "t.svg")
    script = os.path.join(ROOT, "scripts/schedule_svg.py")
    proc = subprocess.run([sys.executable, script,
                           os.path.join(tmp, "report.json"), "-o", svg],
                          capture_output=True, text=True)
    if check(proc.returncode == 0, "schedule_svg.py: %s" % proc.stderr):
        with open(svg) as f:
            text = f.read()
        check(text.startswith("<svg") and text.count("<rect") > 5, "svg")


def check_compare(cli, tmp):
    """--compare on every example: >= 8 candidates beside the module as
    written, rows sorted, failures with reasons, the SVG; the transformer
    step at 64 devices orders as Megatron-LM's takeaways say (tensor
    parallelism within a node, data parallelism across nodes beats tensor
    parallelism across all 64); --suggest finds something and says why."""
    svg = os.path.join(tmp, "bars.svg")
    for path in sorted(glob.glob(os.path.join(ROOT, "examples/schedule/*.mlir"))):
        name = os.path.basename(path)
        proc, r = run_cli(cli, [path, "--compare", "--svg", svg], tmp)
        if not check(r is not None, "%s --compare: exit %d: %s" % (
                name, proc.returncode, proc.stderr)):
            continue
        rows = r["rows"]
        users = [x for x in rows if x["is_user"]]
        check(len(rows) - len(users) >= 8, "%s: %d candidates" % (name, len(rows) - 1))
        check(len(users) == 1, "%s: %d rows as written" % (name, len(users)))
        ran = [x for x in rows if x["ok"]]
        check([x["step_time_us"] for x in ran] ==
              sorted(x["step_time_us"] for x in ran), "%s: rows not sorted" % name)
        check(all(x.get("error") for x in rows if not x["ok"]),
              "%s: a failed row without its reason" % name)
        check(rows.index(ran[-1]) + 1 == len(ran) if ran else True,
              "%s: failed rows before evaluated ones" % name)
        with open(svg) as f:
            picture = f.read()
        check(picture.startswith("<svg") and picture.count("<rect") >= len(ran),
              "%s: the SVG lacks its bars" % name)
        print("ok %-32s --compare: %d rows, %d evaluated, fastest %s" % (
            name, len(rows), len(ran), ran[0]["name"] if ran else "-"))
    step = os.path.join(ROOT, "examples/schedule/transformer_train_step.mlir")
    proc, r = run_cli(cli, [step, "--compare", "--devices", "64"], tmp)
    if check(r is not None, "transformer --compare 64: %s" % proc.stderr):
        # Tensor parallelism stays inside a node of 8: TP over 64 and
        # DP×TP 4×16 are listed with the reason, DP×TP 8×8 runs.
        rows = {x["name"]: x for x in r["rows"]}
        for name in ("TP", "DP×TP 4×16"):
            check(not rows.get(name, {"ok": True})["ok"] and
                  "would span nodes of 8 GPUs" in rows[name].get("error", ""),
                  "transformer at 64: %s not kept off the network: %s" % (name, rows.get(name)))
        check(rows.get("DP×TP 8×8", {}).get("ok"), "transformer at 64: DP×TP 8×8 did not run")
    megatron = os.path.join(ROOT, "examples/schedule/megatron_block.mlir")
    proc, r = run_cli(cli, [megatron, "--suggest", "--budget-ms", "3000"], tmp)
    if check(r is not None, "--suggest: %s" % proc.stderr):
        found = r["suggestions"]
        check(len(found) >= 1, "--suggest found nothing")
        for g in found:
            check(g["changes"] and g["reasons"], "a suggestion without changes or reasons")
        # Every suggestion is strictly faster than the block as written (its
        # exposed tensor-parallel all-reduces leave room: 1.47x today).
        for g in found:
            check(g["candidate"]["step_time_us"] < r["user"]["step_time_us"] and
                  g["speedup"] > 1, "a suggestion is not faster than the user's")
    proc = subprocess.run([cli, megatron, "--svg", svg], capture_output=True, text=True)
    check(proc.returncode != 0 and "--svg needs --compare" in proc.stderr,
          "--svg without --compare accepted")


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        check_examples(args.cli, tmp)
        check_flags(args.cli, tmp)
        check_svg(args.cli, tmp)
        check_compare(args.cli, tmp)
        check_two_writings(args.cli, tmp)
    for f in failures:
        print("FAIL:", f)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
