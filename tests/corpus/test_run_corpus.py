#!/usr/bin/env python3
"""The corpus runner's stages, shown to fail on wrong answers (a ctest).

Runs run_corpus.py over a small set of modules copied from tests/corpus and
tests/values, with tools made wrong on purpose:
  - a shardlab-schedule that exits 0 without writing its report;
  - one whose report lists no collectives for a module that has them;
  - one whose memory peak its account of the peak does not add up to;
  - shardlab-opt-faulty with SHARDLAB_FAULT_LOSSY_INTEGERS (the pretty
    stage must see the changed values), and with SHARDLAB_FAULT_DROP_ATTR
    (it must see the attribute gone, though the text is a fixed point);
  - shardlab-run-faulty, whose per-device program has a collective
    dropped (SHARDLAB_FAULT_DROP_COLLECTIVE) or a table of slice offsets
    reversed (SHARDLAB_FAULT_SLICE_OFFSET): the partition stage must fail;
and with the real tools, which must pass every stage. The run stage, on
two self-checking modules (one whose expected values are wrong): the real
interpreter passes the right one and fails the wrong one; an interpreter
that runs no check, or says nothing, fails it.

    test_run_corpus.py --opt build/shardlab-opt --faulty build/shardlab-opt-faulty
                       --schedule build/shardlab-schedule --interpreter build/shardlab-run
                       --faulty-interpreter build/shardlab-run-faulty
"""
import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "run_corpus.py")
MODULES = [os.path.join(HERE, "torch_xla", "linear_relu_bias.mlir"),
           os.path.join(HERE, "xla", "concat_pad_slice.mlir"),
           os.path.join(HERE, "jax_shardy", "mlp_2d.mlir"),
           os.path.join(os.path.dirname(HERE), "values", "lossy_integers.mlir")]


def fake_tool(folder, name, body):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


# A self-checking module as JAX exports them: its expected value, and a
# copy whose expected value is wrong.
SELF_CHECKING = """func.func @main() -> tensor<2xi32> {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %e = stablehlo.constant dense<[EXPECTED]> : tensor<2xi32>
  %r = stablehlo.add %a, %a : tensor<2xi32>
  stablehlo.custom_call @check.expect_eq(%r, %e) {has_side_effect = true} : (tensor<2xi32>, tensor<2xi32>) -> ()
  return %r : tensor<2xi32>
}
"""


def run_stage(tmp, args, expect):
    root = os.path.join(tmp, "self_checking")
    os.makedirs(root)
    for name, expected in (("right.mlir", "2, 4"), ("wrong.mlir", "2, 5")):
        with open(os.path.join(root, name), "w") as f:
            f.write(SELF_CHECKING.replace("EXPECTED", expected))
    common = ["--set", "shared", "--root", root, "-q", "-v", "-j", "2",
              "--opt", args.opt, "--schedule", args.schedule]
    expect("the interpreter passes a right answer and fails a wrong one",
           [*common, "--interpreter", args.interpreter], {}, 1,
           "FAIL run wrong.mlir: FAIL check.expect_eq at")
    expect("... and only the wrong one",
           [*common, "--interpreter", args.interpreter], {}, 1,
           "run                1         1")
    no_checks = fake_tool(tmp, "no-checks", 'echo "0 of 0 checks passed"; exit 0')
    expect("an interpreter that runs no check fails the run stage",
           [*common, "--interpreter", no_checks], {}, 1, "ran no check")
    mute = fake_tool(tmp, "mute", "exit 0")
    expect("an interpreter that says nothing fails the run stage",
           [*common, "--interpreter", mute], {}, 1, "without its summary")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--opt", required=True)
    ap.add_argument("--faulty", required=True)
    ap.add_argument("--schedule", required=True)
    ap.add_argument("--interpreter", required=True)
    ap.add_argument("--faulty-interpreter", required=True)
    args = ap.parse_args()
    checks = []

    def expect(name, argv, env, status, text):
        p = subprocess.run([sys.executable, RUNNER, *argv], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, **env), timeout=600)
        ok = p.returncode == status and text in p.stdout
        checks.append(ok)
        print("%s  %s (exit %d)" % ("ok  " if ok else "FAIL", name, p.returncode))
        if not ok:
            print("expected exit %d and %r; got:\n%s" % (status, text, p.stdout[-3000:]))

    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "modules")
        os.makedirs(root)
        for m in MODULES:
            shutil.copy(m, root)
        common = ["--set", "local", "--root", root, "-q", "-v", "-j", "2",
                  "--interpreter", args.interpreter]
        expect("the real tools pass every stage",
               [*common, "--opt", args.opt, "--schedule", args.schedule], {}, 0,
               "modules through every stage: 4 of 4")
        faulty_run = [*common, "--opt", args.opt, "--schedule", args.schedule,
                      "--interpreter", args.faulty_interpreter]
        expect("a per-device program with a collective dropped fails the "
               "partition stage",
               faulty_run, {"SHARDLAB_FAULT_DROP_COLLECTIVE": "1"}, 1,
               "FAIL partition mlp_2d.mlir: ")
        expect("a per-device program slicing at the wrong offsets fails the "
               "partition stage",
               faulty_run, {"SHARDLAB_FAULT_SLICE_OFFSET": "1"}, 1,
               "FAIL partition concat_pad_slice.mlir: ")
        expect("... while the faulty build without a fault passes it",
               faulty_run, {}, 0, "modules through every stage: 4 of 4")
        silent = fake_tool(tmp, "silent-schedule", "exit 0")
        expect("a scheduler that writes no report fails the schedule stage",
               [*common, "--opt", args.opt, "--schedule", silent], {}, 1,
               "without writing its report")
        # A report with no collectives: the stage must compare, not trust.
        empty = fake_tool(tmp, "empty-schedule",
                          'while [ $# -gt 0 ]; do [ "$1" = --report ] && '
                          'echo \'{"per_kind": {}}\' > "$2"; shift; done; exit 0')
        expect("a report missing the module's collectives fails the schedule stage",
               [*common, "--opt", args.opt, "--schedule", empty], {}, 1,
               "the schedule has collectives {}")
        # A report whose peak its memory account does not make up.
        lying = fake_tool(tmp, "lying-schedule",
                          'r=""; prev=""; for a in "$@"; do [ "$prev" = --report ] && r="$a"; '
                          'prev="$a"; done\n"%s" "$@" || exit $?\n"%s" -c "import json, sys; '
                          'p = sys.argv[1]; d = json.load(open(p)); '
                          'd[\'memory_per_device\'][\'peak_bytes\'] += 1; '
                          'json.dump(d, open(p, \'w\'))" "$r"' % (args.schedule, sys.executable))
        expect("a memory peak its account does not add up to fails the schedule stage",
               [*common, "--opt", args.opt, "--schedule", lying], {}, 1,
               "the memory account adds up to")
        expect("an attribute the parser drops and the printer never prints "
               "fails the pretty stage",
               [*common, "--opt", args.faulty, "--schedule", args.schedule],
               {"SHARDLAB_FAULT_DROP_ATTR": "mhlo.is_dynamic"}, 1,
               "the printed module differs from the source: op ")
        expect("integers read through a double fail the pretty stage",
               [*common, "--opt", args.faulty, "--schedule", args.schedule],
               {"SHARDLAB_FAULT_LOSSY_INTEGERS": "1"}, 1,
               "FAIL pretty lossy_integers.mlir: 3 literal value(s) changed")
        run_stage(tmp, args, expect)
    failed = checks.count(False)
    print("%d passed, %d failed" % (len(checks) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
