#!/usr/bin/env python3
"""The GPU session kit (bench/gpu) without a GPU, so that the minutes a GPU
is lent go to measuring, not to debugging the script:

  - pyflakes3 finds no undefined name in the JAX scripts;
  - session.sh --dry-run runs every stage here (the sweeps' plans, the
    program lists) and writes a manifest; the lists hold what issue 46 asks
    for (>= 10 single-GPU programs in bf16 and f32 with and without the
    cuDNN attention call and a scanned stack; >= 50 sharded ones with while
    loops, gathers, convolutions and shard_map);
  - xla_hlo.py counts the kernels of a hand-written optimized HLO module
    whose answer is worked out below (loop trips, workspace not counted);
  - ingest.py, on a session folder built here: a GEMM table made of XLA's
    own measured points (one moved by +25%) compared back with XLA's table
    gives ratio 1 and finds the moved point; a program's estimate is the one
    shardlab-schedule gives, its error against the stated time; a Shardy
    pair whose "after" is the suite's sdy_opt's own output agrees in every
    value sharding, and one with a sharding changed does not.

    python3 tests/gpu/test_gpu_session.py --build build
Exit 0 when all hold; 77 when the shared data is missing and that is allowed.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURE = os.path.join(HERE, "fixture")
sys.path.insert(0, os.path.join(ROOT, "bench", "gpu"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import shared_data  # noqa: E402
import xla_hlo  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def dry_run(build):
    out = tempfile.mkdtemp(prefix="gpu-session-")
    stages = "env,build,gemm,programs,overlap,sharded,collectives"
    if not os.path.exists(os.path.join(build, "shardlab-collect-gemm")):
        stages = "env,programs,overlap,sharded"  # no CUDA toolkit where this runs
    p = subprocess.run(["bash", os.path.join(ROOT, "bench", "gpu", "session.sh"), "--dry-run", "--out", out,
                        "--build-dir", build, "--stages", stages], capture_output=True, text=True)
    check(p.returncode == 0, "session.sh --dry-run exit %d: %s" % (p.returncode, p.stderr[-800:]))
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    check(manifest["dry_run"] is True, "the manifest says it was a dry run")
    for s in stages.split(","):
        check(manifest["stages"].get(s, {}).get("exit") == 0, "stage %s ran: %s" % (s, manifest["stages"].get(s)))
    programs = open(os.path.join(out, "programs", "list.txt")).read()
    names = re.findall(r"^(\S+)\s", programs, re.M)
    check(len(names) >= 10, "at least 10 single-GPU programs (%d)" % len(names))
    for want in ("_bf16", "_f32", "attention_cudnn", "attention_bf16", "scan_", "block_", "train_step"):
        check(any(want in n for n in names), "a single-GPU program named *%s*" % want)
    sharded = open(os.path.join(out, "sharded", "list.txt")).read()
    snames = re.findall(r"^(\S+)\s", sharded, re.M)
    check(len(snames) >= 50, "at least 50 sharded programs (%d)" % len(snames))
    for want in ("mlp_dp", "mlp_fsdp", "mlp_tp", "shard_map", "fori_loop", "scan_layers", "gather", "conv2d"):
        check(any(n.startswith(want) for n in snames), "a sharded program %s*" % want)
    # A stage that does not exist is refused before anything runs.
    p = subprocess.run(["bash", os.path.join(ROOT, "bench", "gpu", "session.sh"), "--dry-run", "--out", out,
                        "--stages", "env,nonsense"], capture_output=True, text=True)
    check(p.returncode == 2 and "no stage 'nonsense'" in p.stderr, "an unknown stage is refused: %s" % p.stderr)
    shutil.rmtree(out)


def static_check():
    """The JAX scripts run only on a lent GPU: pyflakes finds what running
    them here would (undefined names, unused imports) before that."""
    scripts = [os.path.join(ROOT, "bench", "gpu", f) for f in sorted(os.listdir(os.path.join(ROOT, "bench", "gpu")))
               if f.endswith(".py")]
    try:
        p = subprocess.run(["pyflakes3", *scripts], capture_output=True, text=True)
    except OSError:
        check(False, "pyflakes3 is not installed (scripts/install-deps.sh installs it)")
        return
    check(p.returncode == 0, "pyflakes3 on bench/gpu: " + (p.stdout + p.stderr)[-1500:])


def hlo_kernels():
    text = open(os.path.join(FIXTURE, "loop_gelu.hlo.txt")).read()
    s = xla_hlo.summary(text)
    # ENTRY: copy, kInput fusion. Body x4 (known_trip_count): cuBLAS GEMM,
    # kLoop fusion, the counter's add. Condition x5: the compare.
    check(s["static"] == 6, "static kernels 6 (%d)" % s["static"])
    check(s["executed"] == 19, "executed kernels 19 (%d)" % s["executed"])
    check(s["per_kind"] == {"__cublas$gemm": 4, "kLoop": 4, "add": 4, "compare": 5, "copy": 1, "kInput": 1},
          "kinds %s" % s["per_kind"])
    mib2 = 2 * 1024 * 1024
    # GEMM: 2 operands + result, 2 MiB each, no workspace (x4); gelu: in +
    # out (x4); add 12 B (x4); compare 9 B (x5); copy 4 MiB; reduce 2 MiB + 4 KiB.
    want = 4 * 3 * mib2 + 4 * 2 * mib2 + 4 * 12 + 5 * 9 + 2 * mib2 + mib2 + 4096
    check(s["bytes"] == want, "bytes %d, want %d" % (s["bytes"], want))
    # Without the GEMMs' 24 MiB: the memory-bound kernels alone.
    check(s["memory_bound_bytes"] == want - 4 * 3 * mib2, "memory-bound bytes %d" % s["memory_bound_bytes"])
    # Operands printed by name only take their producers' shapes.
    bare = re.sub(r"\b(bf16|f32|s32|pred)\[[0-9,]*\]\{[0-9,]*\} %", "%", text)
    check(xla_hlo.summary(bare)["bytes"] == want, "bytes from names alone equal")


# A weight gathered while an independent GEMM runs: the gather's transfer
# runs beside the GEMM.
GATHER_BESIDE_GEMM = """
func.func @main(%x: tensor<4096x4096xbf16>, %w: tensor<512x4096xbf16>, %v: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %g = "stablehlo.all_gather"(%w) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>}> : (tensor<512x4096xbf16>) -> tensor<4096x4096xbf16>
  %a = stablehlo.dot_general %x, %v, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %b = stablehlo.dot_general %a, %g, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  return %b : tensor<4096x4096xbf16>
}
"""


def xla_points_as_table(xla_txtpb, path, moved):
    """A shardlab GEMM table holding XLA's measured H100 points, one moved."""
    import ingest

    points = ingest.read_xla_gemm_table(xla_txtpb)["sm_90"]
    gemms = []
    for (b, m, n, k, key), flops in sorted(points.items()):
        lhs, rest = key.split("x", 1)
        rhs, out = rest.split("->")
        rate = flops * (1.25 if (b, m, n, k, key) == moved else 1.0)
        gemms.append({"b": b, "m": m, "n": n, "k": k, "lhs_dtype": lhs, "rhs_dtype": rhs, "out_dtype": out,
                      "flop_per_s": rate})
    table = {"format": "shardlab-perf-table", "version": 1,
             "metadata": {"source": "measured", "date": "fixture",
                          "device": {"name": "NVIDIA H100 80GB HBM3", "sm_version": "sm_90", "gpu_count": 1},
                          "description": "test fixture: XLA's measured H100 points, one moved by +25%"},
             "gemms": gemms}
    with open(path, "w") as f:
        json.dump(table, f)
    return len([p for p in points if p[4] == "bf16xbf16->bf16"])


def calls_us(report):
    """(cuDNN forward calls' us, backward calls' us, other ops' us) of a
    single-device estimate, counted here as the test's own arithmetic."""
    fwd = sum(o["end_us"] - o["start_us"] for o in report["ops"]
              if "flash attention" in o.get("cost_explanation", "") and "forward" in o["cost_explanation"])
    bwd = sum(o["end_us"] - o["start_us"] for o in report["ops"]
              if "flash attention" in o.get("cost_explanation", "") and "backward" in o["cost_explanation"])
    return fwd, bwd, report["step_time_us"] - fwd - bwd


def ingest_session(build, shared):
    xla_txtpb = os.path.join(shared, "data", "xla-perf-tables", "matmul_perf_table.txtpb")
    sdy_opt = os.path.join(shared, "tools", "shardy", "sdy_opt")
    session = tempfile.mkdtemp(prefix="gpu-ingest-")
    os.makedirs(os.path.join(session, "tables"))
    moved = (2, 1024, 1024, 1024, "bf16xbf16->bf16")
    n_bf16 = xla_points_as_table(xla_txtpb, os.path.join(session, "tables", "gemm.shardlab.json"), moved)

    programs = os.path.join(session, "programs")
    os.makedirs(programs)
    measured_s = 200e-6  # stated here, not measured: the test checks arithmetic
    for name in ("matmul_bf16", "gelu_f32"):
        for ext in (".mlir", ".hlo.txt"):
            shutil.copyfile(os.path.join(FIXTURE, name + ext), os.path.join(programs, name + ext))
        json.dump({"name": name, "median_s": measured_s}, open(os.path.join(programs, name + ".json"), "w"))
    # cuDNN attention: times stated as x1.3 (forward) and x1.12 (backward)
    # the price of their calls' GEMMs with the session's table, every other
    # op as priced; ingest must find those factors.
    table = os.path.join(session, "tables", "gemm.shardlab.json")
    priced = {}
    for name in ("attention_cudnn_bf16", "attention_cudnn_grad_bf16"):
        shutil.copyfile(os.path.join(FIXTURE, name + ".mlir"), os.path.join(programs, name + ".mlir"))
        report = os.path.join(session, name + ".report.json")
        subprocess.run([os.path.join(build, "shardlab-schedule"), os.path.join(FIXTURE, name + ".mlir"),
                        "--preset", "h100", "--tables", table, "--report", report], capture_output=True, check=True)
        priced[name] = calls_us(json.load(open(report)))
    fwd, _, other = priced["attention_cudnn_bf16"]
    attention_s = {"attention_cudnn_bf16": (1.3 * fwd + other) * 1e-6}
    fwd, bwd, other = priced["attention_cudnn_grad_bf16"]
    attention_s["attention_cudnn_grad_bf16"] = (1.3 * fwd + 1.12 * bwd + other) * 1e-6
    for name, seconds in attention_s.items():
        json.dump({"name": name, "median_s": seconds}, open(os.path.join(programs, name + ".json"), "w"))
    json.dump({"environment": {"device_kind": "NVIDIA H100 80GB HBM3"},
               "programs": [{"name": "matmul_bf16", "ok": True}, {"name": "gelu_f32", "ok": True},
                            {"name": "attention_cudnn_bf16", "ok": True},
                            {"name": "attention_cudnn_grad_bf16", "ok": True},
                            {"name": "broken", "ok": False, "error": "XlaRuntimeError: out of memory"}]},
              open(os.path.join(programs, "programs.json"), "w"))

    # Overlap: stated numbers (not measured), the table and the medians.
    cases = [{"gemm": [8192, 8192, 8192], "collective": op, "bytes": 256 << 20, "gpus": 8,
              "gemm_alone_ms": 60.0, "gemm_together_ms": 60.0 * g, "gemm_slowdown": g,
              "collective_alone_ms": 50.0, "collective_together_ms": 50.0 * c, "collective_slowdown": c}
             for op, g, c in (("all-gather", 1.10, 1.30), ("reduce-scatter", 1.20, 1.50), ("all-reduce", 1.05, 1.40))]
    json.dump({"metadata": {"device": "NVIDIA H100 80GB HBM3", "gpus": 8, "nccl": "2.21.5"}, "cases": cases},
              open(os.path.join(session, "overlap.json"), "w"))

    sharded = os.path.join(session, "sharded")
    os.makedirs(sharded)
    before = os.path.join(FIXTURE, "mlp_dp.before_propagation.mlir")
    have_oracle = shared_data_runs(sdy_opt)
    entries = []
    if have_oracle:
        after = subprocess.run([sdy_opt, "-sdy-propagation-pipeline", before], capture_output=True, text=True)
        check(after.returncode == 0, "sdy_opt propagates the fixture: " + after.stderr[:300])
        for name, text in (("mlp_dp", after.stdout),
                           ("mlp_dp_changed", after.stdout.replace('[{"x"}, {}]', '[{}, {"x"}]', 1))):
            shutil.copyfile(before, os.path.join(sharded, name + ".before_propagation.mlir"))
            open(os.path.join(sharded, name + ".after_propagation.mlir"), "w").write(text)
            entries.append({"name": name, "ok": True, "oracle": True})
    json.dump({"environment": {"jax": "fixture"}, "programs": entries + [{"name": "no_dump", "ok": True, "oracle": False}]},
              open(os.path.join(sharded, "sharded.json"), "w"))

    report_md = os.path.join(session, "report.md")
    facts_json = os.path.join(session, "facts.json")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gpu", "ingest.py"), session, "--build", build,
                        "--out", report_md, "--json", facts_json], capture_output=True, text=True)
    check(p.returncode == 0, "ingest exit %d: %s" % (p.returncode, p.stderr[-800:]))
    text = p.stdout
    check(open(report_md).read().strip() == text.strip(), "the report file is what was printed")
    # 1. The table loads and, against XLA's, is XLA's but for one point.
    check("loads: yes" in text, "the measured table loads in the cost model")
    row = re.search(r"\| bf16xbf16->bf16 \| (\d+) \| ([\d.]+) \| ([\d.]+)% \| [\d.]+% \| (.*) \|", text)
    check(row is not None, "a bf16 row against XLA's table")
    if row:
        check(int(row.group(1)) == n_bf16, "every bf16 point compared (%s of %d)" % (row.group(1), n_bf16))
        check(row.group(2) == "1.000" and row.group(3) == "0.0", "median ratio 1, median error 0: " + row.group(0))
        check(row.group(4) == "+25.0% at b=2 m=1024 n=1024 k=1024", "the moved point is the worst: " + row.group(4))
    # 2. The program's estimate is shardlab-schedule's with that table.
    direct = subprocess.run([os.path.join(build, "shardlab-schedule"), os.path.join(FIXTURE, "matmul_bf16.mlir"),
                             "--preset", "h100", "--tables", os.path.join(session, "tables", "gemm.shardlab.json")],
                            capture_output=True, text=True)
    est_us = float(re.search(r"step time\s+([\d.]+) us", direct.stdout).group(1))
    row = re.search(r"\| matmul_bf16 \| ([\d.]+) \| ([\d.]+) \| ([+-][\d.]+)% \| (\d+) \((.*?)\) \| (.*?) \| (.*?) \|", text)
    check(row is not None, "a row for the program: " + text[text.find("## Programs"):][:600])
    if row:
        check(abs(float(row.group(2)) - est_us / 1e3) < 1e-3, "estimate %s ms = shardlab-schedule's %.3f" % (row.group(2), est_us / 1e3))
        want_err = 100 * (est_us * 1e-6 / measured_s - 1)
        check(abs(float(row.group(3)) - want_err) < 0.06, "error %s%%, want %.1f%%" % (row.group(3), want_err))
        check(row.group(4) == "1" and row.group(5) == "gemm 1", "shardlab: one GEMM kernel (%s)" % row.group(0))
        check(row.group(6) == "1 (__cublas$gemm 1)", "XLA: one cuBLAS call (%s)" % row.group(6))
        check(row.group(7) == "0.0 / 0.0", "no memory-bound kernel on either side (%s)" % row.group(7))
    # One loop fusion on each side, reading 4 MiB and writing 4 MiB.
    row = re.search(r"\| gelu_f32 \|.*\| (\d+) \((.*?)\) \| (.*?) \| (.*?) \|\n", text)
    check(row is not None and row.groups() == ("1", "loop fusion 1", "1 (kLoop 1)", "8.0 / 8.0"),
          "gelu: one fusion of 8 MiB on both sides (%s)" % (row and row.group(0)))
    check("2 programs estimated" in text and "the 2 that set an entry left out" in text,
          "both programs estimated, the attention ones apart: " + text[text.find("## Programs"):][:1200])
    # The attention factors: found, in the derived tables, and applied.
    derived = os.path.join(session, "derived", "tables", "gemm.shardlab.json")
    entry = json.load(open(derived)).get("fused_attention", {})
    check((entry.get("forward_slowdown"), entry.get("backward_slowdown")) == (1.3, 1.12),
          "the fused_attention entry %s: " % entry + text[text.find("## cuDNN"):][:900])
    check("| attention_cudnn_grad_bf16 (sets fused_attention) |" in text, "the fitted rows are marked")
    for name, seconds in attention_s.items():
        direct = subprocess.run([os.path.join(build, "shardlab-schedule"), os.path.join(FIXTURE, name + ".mlir"),
                                 "--preset", "h100", "--tables", derived], capture_output=True, text=True)
        step_us = float(re.search(r"step time\s+([\d.]+) us", direct.stdout).group(1))
        check(abs(step_us - 1e6 * seconds) < 0.01, "%s with the entry: %.3f us, measured %.3f" % (
            name, step_us, 1e6 * seconds))
        check("times x1.3 (forward) and x1.12 (backward)" in direct.stdout, "%s: the entry said" % name)
    check("| broken | failed on the GPU: XlaRuntimeError: out of memory | | | | | |\n" in text, "a program that failed is listed")
    check("preset h100" in text, "the preset is the device's")
    check("| 8192x8192x8192 | reduce-scatter | 256 | 60.00 | 72.00 | x1.200 | 50.00 | 75.00 | x1.500 |" in text,
          "the overlap table's rows: " + text[text.find("## GEMM and"):][:400])
    check("Median slowdown while overlapped: GEMM x1.100, collective x1.400" in text, "the overlap medians")
    # ... become the tables' overlap entry, which the scheduler applies.
    check("with the overlap entry; loads: yes" in text, "the table with the overlap entry loads")
    derived = os.path.join(session, "derived", "tables", "gemm.shardlab.json")
    entry = json.load(open(derived)).get("overlap", {})
    check((entry.get("compute_slowdown"), entry.get("comm_slowdown")) == (1.1, 1.4), "the entry's medians %s" % entry)
    check(json.load(open(os.path.join(session, "tables", "gemm.shardlab.json"))).get("overlap") is None,
          "the session's own table is not touched")
    module = os.path.join(session, "gather_beside_gemm.mlir")
    with open(module, "w") as f:
        f.write(GATHER_BESIDE_GEMM)
    slowed = subprocess.run([os.path.join(build, "shardlab-schedule"), module, "--preset", "h100", "--no-propagation",
                             "--tables", derived], capture_output=True, text=True)
    check(slowed.returncode == 0, "shardlab-schedule with the derived table: " + slowed.stderr[-300:])
    check("a kernel beside a transfer takes x1.1 its time, a transfer beside a kernel x1.4" in slowed.stdout and
          "medians of 3 cases" in slowed.stdout and "beside transfers" in slowed.stdout,
          "the schedule applies and says the entry: " + slowed.stdout[-900:])
    # 4. The oracle: identical where Shardy's own output is the answer.
    if have_oracle:
        check("identical 1" in text and "sharding 1" in text, "one identical, one sharding difference: " +
              text[text.find("## Shardy"):][:500])
        m = re.search(r"Value shardings agreeing: (\d+) / (\d+)", text)
        # Two pairs of N sharded lines each; one line changed in the second.
        check(m is not None and int(m.group(2)) % 2 == 0 and int(m.group(1)) == int(m.group(2)) - 1,
              "agreement counts the one changed value: %s" % (m and m.group(0)))
        check("mlp_dp_changed | sharding:" in text, "the changed pair's first difference is shown")
    check("No Shardy dump kept for 1: no_dump." in text, "a program without a dump is named")
    # The JSON holds the same measures as the text.
    facts = json.load(open(facts_json))
    rows = {r["name"]: r for r in facts["programs"]["rows"]}
    check(set(rows) == {"matmul_bf16", "gelu_f32", "attention_cudnn_bf16", "attention_cudnn_grad_bf16"},
          "JSON: the estimated programs (%s)" % sorted(rows))
    check(facts["attention"]["entry"]["forward_slowdown"] == 1.3, "JSON: the attention entry")
    if "matmul_bf16" in rows:
        check(abs(rows["matmul_bf16"]["estimated_s"] - est_us * 1e-6) < 1e-9, "JSON: the estimate")
        check(rows["matmul_bf16"]["xla"]["per_kind"] == {"__cublas$gemm": 1}, "JSON: XLA's kernels")
    worst = facts["tables"][0]["against_xla"]["rows"][0]["worst"] if facts["tables"] else ""
    check(worst.startswith("+25.0%"), "JSON: the moved point (%s)" % worst)
    check(len(facts["overlap"]["cases"]) == 3, "JSON: the overlap cases")
    if have_oracle:
        o = facts["oracle"]
        check(o["classes"] == {"identical": 1, "sharding": 1} and o["values_agreeing"] == o["values"] - 1,
              "JSON: the oracle's counts %s" % o)
    shutil.rmtree(session)


def shared_data_runs(sdy_opt):
    try:
        return subprocess.run([sdy_opt, "--version"], capture_output=True).returncode == 0
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    dry_run(build)
    static_check()
    hlo_kernels()
    shared = shared_data.shared_root()
    if os.path.exists(os.path.join(shared, "data", "xla-perf-tables", "matmul_perf_table.txtpb")):
        ingest_session(build, shared)
    elif shared_data.missing_allowed():
        print("NOT RUN: ingest (the shared data's XLA table is missing)")
        return 77 if not failures else 1
    else:
        check(False, shared_data.how_to_get("data", shared))
    print("%d failures" % len(failures) if failures else "gpu session kit: all checks hold")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
