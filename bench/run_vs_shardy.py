#!/usr/bin/env python3
"""shardlab-opt beside Shardy's own sdy_opt, on the same modules and flags.

For generated modules (bench/gen_module.py: 2k, 10k and 100k ops) and the
largest real modules (the shared corpus's biggest and the transformer
example), each stage runs through both tools as whole processes, best wall
time of --repeats runs, and the peak resident memory of each (the child's
ru_maxrss):
  parse+print   no pass
  propagation   -sdy-propagation-pipeline
  prop+export   -sdy-propagation-pipeline -sdy-export-pipeline
Prints one markdown table (for bench/RESULTS.md) with the ratios
shardlab / Shardy, the load average before and after, and whether the two
printed the same module.

    python3 bench/run_vs_shardy.py [--opt build/shardlab-opt] [--repeats 3]
                                   [--sizes 2000,10000,100000]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import shared_data  # noqa: E402

STAGES = [("parse+print", []),
          ("propagation", ["-sdy-propagation-pipeline"]),
          ("prop+export", ["-sdy-propagation-pipeline", "-sdy-export-pipeline"])]


def run_once(argv, path):
    """(seconds, peak RSS in MiB, stdout) of one process. The peak comes from
    GNU time (a child forked from this Python process would count Python's
    own pages in its high-water mark)."""
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as mem:
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", mem.name, *argv, path],
                           stdout=out, stderr=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        if p.returncode != 0:
            return None, None, None
        out.seek(0)
        return elapsed, int(mem.read().split()[-1]) / 1024.0, out.read()


def best_of(argv, path, repeats):
    times, peak, text = [], 0.0, None
    for _ in range(repeats):
        t, rss, text = run_once(argv, path)
        if t is None:
            return None, None, None
        times.append(t)
        peak = max(peak, rss)
    return min(times), peak, text


def count_ops(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if " = " in line and "%" in line.split("=")[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--opt", default=os.path.join(ROOT, "build", "shardlab-opt"))
    ap.add_argument("--oracle", default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="2000,10000,100000")
    args = ap.parse_args()
    shared = shared_data.shared_root()
    oracle = args.oracle or os.path.join(shared, "tools", "shardy", "sdy_opt")
    modules = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.sizes.split(",") if x]:
            path = os.path.join(tmp, "gen_%d.mlir" % n)
            subprocess.run([sys.executable, os.path.join(HERE, "gen_module.py"), "--ops", str(n),
                            "-o", path], check=True, stdout=subprocess.DEVNULL)
            # This Shardy's propagation aborts without a @main.
            with open(path, encoding="utf-8") as f:
                text = f.read()
            with open(path, "w", encoding="utf-8") as f:
                f.write(re.sub(r"@block_0(?![\w])", "@main", text))
            modules.append(("generated %dk" % (n // 1000), path))
        corpus = os.path.join(shared, "corpus", "stablehlo-testdata")
        if os.path.isdir(corpus):
            biggest = sorted((os.path.getsize(os.path.join(corpus, f)), f)
                             for f in os.listdir(corpus) if f.endswith(".mlir"))[-1][1]
            modules.append(("corpus " + biggest, os.path.join(corpus, biggest)))
        modules.append(("transformer_train_step",
                        os.path.join(ROOT, "examples", "schedule", "transformer_train_step.mlir")))
        load_before = os.getloadavg()
        print("| module | ops | stage | shardlab s | Shardy s | speed ratio | shardlab MiB | "
              "Shardy MiB | memory ratio | same text |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for label, path in modules:
            ops = count_ops(path)
            for stage, flags in STAGES:
                t1, m1, out1 = best_of([args.opt, *flags], path, args.repeats)
                t2, m2, out2 = best_of([oracle, *flags], path, args.repeats)
                if t1 is None or t2 is None:
                    print("| %s | %d | %s | %s | %s | | | | | |" % (
                        label, ops, stage, "fails" if t1 is None else "%.3f" % t1,
                        "fails" if t2 is None else "%.3f" % t2))
                    continue
                print("| %s | %d | %s | %.3f | %.3f | %.1fx | %.0f | %.0f | %.1fx | %s |" % (
                    label, ops, stage, t1, t2, t2 / t1, m1, m2, m2 / m1,
                    "yes" if out1 == out2 else "no"))
                sys.stdout.flush()
        load_after = os.getloadavg()
    print()
    print("load average %.2f %.2f %.2f before, %.2f %.2f %.2f after; best of %d runs each" % (
        *load_before, *load_after, args.repeats))


if __name__ == "__main__":
    main()
