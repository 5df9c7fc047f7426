#!/usr/bin/env python3
"""Time and memory against module size: propagation, export, the
per-device steps and scheduling on generated transformer modules of 1k, 10k,
100k and 1M ops (bench/gen_module.py), one process per module so each peak
RSS is its own. Prints one markdown table and, for each stage, the growth
exponent between consecutive sizes (log of the time ratio over log of the
size ratio: 1.0 is linear).

  python3 bench/run_scale.py [--build build] [--sizes 1000,10000,...]

Propagation, export and the per-device steps are bench_export's columns on
a module of 4-layer functions; scheduling is bench_api's `schedule` call
(parse, the propagation pipeline, export with explicit collectives, the
per-device steps, the scheduler) on a module whose ops are all in @main,
since the schedule estimates one entry function. Peak RSS is
/usr/bin/time's maximum resident set; heap/op is bench_export's.
"""
import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPS_PER_LAYER = 34  # bench/gen_module.py


def generate(ops, path, layers_per_func=None):
    argv = [sys.executable, str(ROOT / "bench" / "gen_module.py"), "--ops",
            str(ops), "-o", str(path)]
    if layers_per_func:
        argv += ["--layers-per-func", str(layers_per_func)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def timed(argv):
    """Runs argv under /usr/bin/time; (stdout, peak RSS in MB)."""
    result = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, check=True,
                            capture_output=True, text=True)
    rss_kb = int(result.stderr.strip().splitlines()[-1])
    return result.stdout, rss_kb / 1024


def export_row(build, path):
    out, rss = timed([str(build / "bench_export"), str(path)])
    fields = out.strip().splitlines()[-1].split()
    # module ops propagate export local total cpu kops/s heap/op
    return {"ops": int(fields[1]), "propagate": float(fields[2]),
            "export": float(fields[3]), "local": float(fields[4]),
            "heap_per_op": float(fields[8]), "rss_mb": rss}


def schedule_row(build, path):
    out, rss = timed([str(build / "bench_api"), "--repeats", "1", str(path),
                      "schedule", "{}"])
    reply = json.loads(out)
    if not reply.get("ok"):
        raise SystemExit("schedule failed on %s" % path)
    return {"schedule": reply["ms"] / 1e3, "rss_mb": rss}


def exponent(rows, key, i):
    a, b = rows[i - 1], rows[i]
    if a[key] <= 0 or b[key] <= 0:
        return None
    return math.log(b[key] / a[key]) / math.log(b["ops"] / a["ops"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    args = parser.parse_args()
    build = (ROOT / args.build).resolve()
    subprocess.run(["ninja", "-C", str(build), "bench_export", "bench_api"],
                   check=True, stdout=subprocess.DEVNULL)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(s) for s in args.sizes.split(",")]:
            multi = pathlib.Path(tmp) / ("multi_%d.mlir" % size)
            single = pathlib.Path(tmp) / ("main_%d.mlir" % size)
            generate(size, multi)
            generate(size, single, max(1, size // OPS_PER_LAYER))
            text = single.read_text().replace("@block_0(", "@main(")
            single.write_text(text)
            row = export_row(build, multi)
            sched = schedule_row(build, single)
            row["schedule"] = sched["schedule"]
            row["schedule_rss_mb"] = sched["rss_mb"]
            rows.append(row)
            os.remove(multi)
            os.remove(single)
            print("done %d ops" % row["ops"], file=sys.stderr)
    load = ", ".join("%.2f" % l for l in os.getloadavg())
    print("load average at the end: %s; times are one run, seconds\n" % load)
    print("| ops | propagate s | export s | per-device s | schedule s (all "
          "stages, one @main) | heap/op B | peak RSS MB (export / schedule) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %.3f | %.3f | %.3f | %.3f | %.0f | %.0f / %.0f |" % (
            format(r["ops"], ","), r["propagate"], r["export"], r["local"],
            r["schedule"], r["heap_per_op"], r["rss_mb"],
            r["schedule_rss_mb"]))
    print("\nGrowth exponents (1.0 = linear):\n")
    print("| from -> to | propagate | export | per-device | schedule |")
    print("|---|---|---|---|---|")
    for i in range(1, len(rows)):
        cells = []
        for key in ("propagate", "export", "local", "schedule"):
            e = exponent(rows, key, i)
            cells.append("%.2f" % e if e is not None else "-")
        print("| %s -> %s | %s |" % (format(rows[i - 1]["ops"], ","),
                                     format(rows[i]["ops"], ","),
                                     " | ".join(cells)))


if __name__ == "__main__":
    main()
