#!/usr/bin/env python3
"""Where each published run's layout ranks among shardlab's candidates.

  python3 bench/published/rank.py [--build build] [--runs ID,ID] [--json out.json]
                                  [--variant NAME]

For each run of runs.json, its step is written as bench/published/run.py
writes it (the run's generator arguments, micro-batches split until it fits)
with the attention under a Shardy rule (--attention rule), so that the
comparer can replace the layout. `shardlab-schedule --compare` on the run's
devices then estimates every candidate beside the module as written, which
is the published layout. Printed per run: the published layout's estimated
step and rank among the candidates that ran (and among those that fit), the
best candidate (the fastest that fits, as the comparison's reasons explain
it; the fastest when none fits), and its step / the published layout's. The issue's goal: the
published layout in the top 3, or a faster layout the tool shows with its
reasons (the rows' collectives and memory). --variant ranks under one of
run.py's variants (e.g. "XLA's default schedule", "NCCL ring hops"): the
same modules, every candidate costed with that variant's flags (by
default the run's own schedule flags, as run.py's default), to show how
much a rank depends on that part of the model.

A step whose layer loops run several layers an iteration (--grad-bucket)
has pipeline candidates of its own only where the stages divide the
loops' iterations (a stage's layers are whole iterations; two iterations
of 16 layers: 2 stages); the others are taken from the same step with one
layer an iteration, and the time of both comparisons is counted.

A layout the comparer cannot replace (--layout fsdp-flat: the whole step
in a manual computation) is estimated alone, as run.py estimates it, and
ranked among the candidates of the same step written with --layout dp.
A run whose gradients are reduced once a step (--reduce-gradients once,
the micro-batch loop in a manual computation) is not ranked: the
comparer's candidates would reduce every micro-batch's gradients, M times
its data-parallel bytes, and rank it against steps no one would run.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as published  # noqa: E402  (bench/published/run.py)


def compare(build, module, preset, devices, loops=None, flags=()):
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        cmd = [os.path.join(build, "shardlab-schedule"), module, "--preset", preset, "--compare",
               "--devices", str(devices), "--report", report.name, *flags]
        if loops:
            cmd += ["--loops", loops]
        start = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True)
        elapsed = time.monotonic() - start
        if p.returncode != 0:
            sys.exit("shardlab-schedule --compare failed on %s:\n%s" % (module, p.stderr[-2000:]))
        with open(report.name) as f:
            return json.load(f), elapsed


def rank_of(rows, name, only_fitting=False):
    ran = [row for row in rows if row["ok"] and (row["fits"] or not only_fitting)]
    ran.sort(key=lambda row: row["step_time_us"])
    for i, row in enumerate(ran):
        if row["name"] == name:
            return i + 1, len(ran)
    return None, len(ran)


def with_published_row(rows, alone):
    """The candidates (none of them the published layout) and the published
    layout's own estimate as the user's row."""
    fits = alone["peak_memory_bytes"] <= alone["hardware"]["device_memory_bytes"]
    return [dict(row, is_user=False) for row in rows] + [
        {"name": "as published", "ok": True, "is_user": True, "fits": fits,
         "step_time_us": alone["step_time_us"], "peak_memory_bytes": alone["peak_memory_bytes"]}]


def without_buckets(gen):
    """The generator arguments with one layer an iteration."""
    return published.without_options(gen, ("--grad-bucket", "--unroll"))


def pipeline_rows(build, gen, run, devices, loops, flags, tmp):
    """The comparison's pipeline candidates for a step whose layer loops run
    several layers an iteration (--grad-bucket): the comparer cuts stages
    from whole iterations, so the rest are taken from the same step with
    one layer an iteration (its gradients not bucketed: slower by the
    latency buckets save)."""
    module = os.path.join(tmp, run["id"] + "-rule-plain.mlir")
    subprocess.run([sys.executable, published.GENERATOR] + without_buckets(gen) +
                   ["--attention", "rule", "-o", module], check=True)
    report, elapsed = compare(build, module, run["preset"], devices, loops, flags)
    return [dict(row, is_user=False) for row in report["rows"]
            if row["name"].startswith("PP") and not row.get("is_user")], elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(published.ROOT, "build"))
    ap.add_argument("--runs", help="comma-separated run ids (default: all)")
    ap.add_argument("--json", help="write the rows here too")
    ap.add_argument("--loops", choices=("unroll", "extrapolate"),
                    help="the candidates' loops (default: the comparison's, extrapolate)")
    # Variants that write the step otherwise (run.py's generator options)
    # are not offered: the candidates are written by the comparer.
    variants = {v[0]: v for v in published.VARIANTS if not v[3]}
    ap.add_argument("--variant", choices=list(variants), default="shardlab",
                    help="cost every candidate as this variant of run.py does (default: shardlab)")
    args = ap.parse_args()
    with open(os.path.join(HERE, "runs.json")) as f:
        runs = json.load(f)["runs"]
    if args.runs:
        wanted = args.runs.split(",")
        runs = [r for r in runs if r["id"] in wanted]
    out, why = [], []
    print("| run | devices | published layout | its step s | rank (fitting) | best candidate | best s | best / published | compare s |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for r in runs:
            if published.option(r["generator"], "--reduce-gradients") == "once":
                # Its candidates would be the same step reducing each
                # micro-batch's gradients: M times the data-parallel bytes.
                print("| %s | %d | %s | not ranked: gradients reduced once a step in a manual computation, "
                      "which the comparer cannot replace; its candidates would reduce every micro-batch's "
                      "| - | - | - | - | - |" % (r["id"], published.devices(r["generator"]),
                                                  published.option(r["generator"], "--mesh")))
                continue
            gen, written, _ = published.fitting_step(args.build, r, tmp)
            manual = published.option(gen, "--layout") == "fsdp-flat"
            module = os.path.join(tmp, r["id"] + "-rule.mlir")
            candidates = published.with_option(gen, "--layout", "dp") if manual else gen
            subprocess.run([sys.executable, published.GENERATOR] + candidates + ["--attention", "rule",
                                                                                "-o", module], check=True)
            devices = published.devices(gen)
            flags = published.variant_flags(r, variants[args.variant])
            report, elapsed = compare(args.build, module, r["preset"], devices, args.loops, flags)
            rows = report["rows"]
            if without_buckets(candidates) != candidates:
                more, seconds = pipeline_rows(args.build, candidates, r, devices, args.loops, flags, tmp)
                # The bucketed step's own pipelines first; the plain step's
                # for the stage counts it could not cut.
                have = {row["name"] for row in rows}
                rows = rows + [row for row in more if row["name"] not in have]
                elapsed += seconds
            if manual:
                rows = with_published_row(rows, published.estimate(args.build, written, r["preset"], flags))
            mine = next(row for row in rows if row["is_user"])
            rank, ran = rank_of(rows, mine["name"])
            rank_fit, fitting = rank_of(rows, mine["name"], only_fitting=True)
            # The comparison's answer: the fastest layout that fits (the
            # fastest, when none fits), the one its reasons explain.
            ran_rows = [row for row in rows if row["ok"]]
            fitting_rows = [row for row in ran_rows if row.get("fits", True)]
            best = min(fitting_rows or ran_rows, key=lambda row: row["step_time_us"])
            layout = "%s, %s%s" % (published.option(gen, "--mesh"), published.option(gen, "--layout"),
                                   ", SP" if "--sequence-parallel" in gen else "")
            if mine["ok"]:
                step = "%.2f" % (mine["step_time_us"] / 1e6)
                ratio = "%.2f" % (best["step_time_us"] / mine["step_time_us"])
                where = "%s of %d (%s)" % (rank, ran, "%s of %d" % (rank_fit, fitting) if rank_fit else
                                           "does not fit")
            else:
                step, ratio, where = "not run: " + mine["error"], "-", "-"
            print("| %s | %d | %s | %s | %s | %s%s | %.2f | %s | %.1f |" % (
                r["id"], devices, layout, step, where, best["name"], "" if best["fits"] else " (does not fit)",
                best["step_time_us"] / 1e6, ratio, elapsed))
            sys.stdout.flush()
            why.append((r["id"], report.get("why_fastest_row", best["name"]),
                        report.get("why_fastest", [])))
            out.append({"run": r["id"], "devices": devices, "layout": layout, "published": mine, "best": best,
                        "rank": rank, "ran": ran, "rank_fitting": rank_fit, "fitting": fitting,
                        "compare_s": elapsed, "why_fastest": report.get("why_fastest", []), "rows": [{k: row[k] for k in ("name", "ok", "error", "step_time_us", "fits",
                                                                           "peak_memory_bytes")
                                                        if k in row} for row in rows]})
    # The comparison's own account of its fastest row against the published
    # layout (the module as written): collective by collective.
    for run, best, reasons in why:
        if reasons:
            print("\nwhy %s is faster than %s's published layout:" % (best, run))
            for reason in reasons:
                print("  " + reason)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
