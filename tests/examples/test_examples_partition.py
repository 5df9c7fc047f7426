#!/usr/bin/env python3
"""The examples, partitioned and run on simulated devices, equal their global run.

    test_examples_partition.py --interpreter build/shardlab-run
                               --faulty build/shardlab-run-faulty

Every module under examples/ (hello and the playground's) is partitioned by
its own shardings and by seeds 1 and 2 (shardlab-run --shardings), the
per-device program runs on simulated devices with random inputs, and the
results put back together must equal the global run. The schedule examples
are left out: their realistic widths (matmuls of 4096 and more) take the
interpreter minutes per device. The check must be able to fail: with the
faulty interpreter dropping the first collective, the examples that have
one must mismatch.
"""
import argparse
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PARTITIONINGS = ["module", "random:1", "random:2"]
TIMEOUT = 300


def examples():
    files = sorted(ROOT.glob("examples/*.mlir")) + sorted(ROOT.glob("examples/playground/*.mlir"))
    if not files:
        sys.exit("no examples under %s" % ROOT / "examples")
    return files


def verdict(tool, how, path, env=None):
    run = subprocess.run([tool, "--shardings", how, str(path)], capture_output=True,
                         text=True, timeout=TIMEOUT, env=env)
    last = [line for line in run.stdout.splitlines() if line.startswith("partitioned on ")]
    return run.returncode, (last[-1] if last else (run.stderr.strip() or "no verdict"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--interpreter", required=True)
    parser.add_argument("--faulty", required=True)
    args = parser.parse_args()
    failures = []
    for path in examples():
        for how in PARTITIONINGS:
            status, line = verdict(args.interpreter, how, path)
            ok = status == 0 and ": match" in line
            print("%s %s %s: %s" % ("ok  " if ok else "FAIL", path.relative_to(ROOT), how, line))
            if not ok:
                failures.append("%s %s" % (path.name, how))
    # The faulty build must be caught where a collective exists.
    caught = 0
    env = {"SHARDLAB_FAULT_DROP_COLLECTIVE": "1", "PATH": "/usr/bin:/bin"}
    for path in examples():
        status, line = verdict(args.faulty, "module", path, env)
        if "mismatch" in line:
            caught += 1
    print("faulty interpreter (first collective dropped): %d example(s) mismatch" % caught)
    if caught < 3:
        failures.append("the faulty interpreter was caught on %d examples (expected >= 3)" % caught)
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
