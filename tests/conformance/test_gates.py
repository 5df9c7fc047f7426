#!/usr/bin/env python3
"""The conformance gate, tested against real builds of shardlab-opt.

A gate that cannot fail checks nothing. This runs run_conformance.py with
--check-regressions over a slice of Shardy's suite and shows that it
  - passes with the real shardlab-opt and with shardlab-opt-faulty left alone;
  - fails when shardlab-opt-faulty makes one pass a no-op
    (SHARDLAB_FAULT_NOOP_PASS, compiled only into that test binary);
  - fails on a missing suite, an empty suite, a missing passing list, and a
    passing list whose entries cannot run;
  - fails when a case fails that is in neither the passing list nor the
    expected failures, when an expected failure passes, and when an expected
    failure has no reason; passes when every failure is expected;
  - the inputs' round trip (roundtrip.py) fails when an attribute is lost
    though the print is a fixed point (SHARDLAB_FAULT_DROP_ATTR).

  test_gates.py --opt build/shardlab-opt --faulty build/shardlab-opt-faulty

Exit 0 when every check holds, 1 otherwise, 77 when the suite is missing and
a person allowed that (SHARDLAB_ALLOW_MISSING_DATA=1, never under CI).
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import shared_data  # noqa: E402

RUNNER = os.path.join(HERE, "run_conformance.py")
PASSING = os.path.join(HERE, "passing_cases.txt")
# A slice that runs in seconds and exercises one pass on every case.
SLICE = "transforms/propagation/test/basic_propagation.mlir"
BROKEN_PASS = "sdy-basic-propagate"


def runner(suite, opt, *args, env=None):
    full_env = dict(os.environ)
    full_env.pop("SHARDLAB_ALLOW_MISSING_DATA", None)
    full_env.update(env or {})
    p = subprocess.run([sys.executable, RUNNER, suite, "--opt", opt, "-q", *args],
                       env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--opt", required=True)
    ap.add_argument("--faulty", required=True)
    ap.add_argument("--suite", default=shared_data.default_path("conformance", "shardy"))
    args = ap.parse_args()
    if not os.path.isdir(args.suite):
        if shared_data.missing_allowed():
            print("NOT RUN: suite not found at %s" % args.suite)
            return shared_data.NOT_RUN_EXIT
        print("test_gates: " + shared_data.how_to_get("conformance suite", args.suite),
              file=sys.stderr)
        return 2

    checks = []

    def expect(name, result, status, text=None):
        code, out = result
        ok = code == status and (text is None or text in out)
        checks.append(ok)
        print("%s  %s (exit %d%s)" % ("ok  " if ok else "FAIL", name, code,
                                      "" if ok else "; expected %d%s\n%s" % (
                                          status, " and %r" % text if text else "",
                                          out[-3000:])))

    gate = ("--filter", SLICE, "--check-regressions")
    expect("real shardlab-opt passes the gate", runner(args.suite, args.opt, *gate), 0,
           "regression check: ok")
    expect("faulty build with no fault passes the gate",
           runner(args.suite, args.faulty, *gate), 0, "regression check: ok")
    expect("faulty build with -%s a no-op fails the gate" % BROKEN_PASS,
           runner(args.suite, args.faulty, *gate,
                  env={"SHARDLAB_FAULT_NOOP_PASS": BROKEN_PASS}), 1, "REGRESSIONS:")
    with tempfile.TemporaryDirectory() as tmp:
        expect("a missing suite fails",
               runner(os.path.join(tmp, "missing"), args.opt, "--check-regressions"), 2,
               "conformance suite not found")
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        expect("an empty suite fails", runner(empty, args.opt, "--check-regressions"), 2,
               "nothing to run")
        expect("a missing passing list fails",
               runner(args.suite, args.opt, *gate, "--passing-list",
                      os.path.join(tmp, "none.txt")), 2, "not found")
        stale = os.path.join(tmp, "stale.txt")
        with open(stale, "w") as f:
            f.write(SLICE + "\n" + SLICE + "#9999\n")
        expect("a listed case that does not exist fails",
               runner(args.suite, args.opt, *gate, "--passing-list", stale), 1,
               "NOT RUN: %s#9999" % SLICE)
        # The slice's entries split between the two lists, as a suite whose
        # pass breaks would have to record them.
        only_file = os.path.join(tmp, "only_file.txt")
        with open(only_file, "w") as f:
            f.write(SLICE + "\n")
        empty_expected = os.path.join(tmp, "empty_expected.txt")
        open(empty_expected, "w").close()
        broken = {"SHARDLAB_FAULT_NOOP_PASS": BROKEN_PASS}
        expect("an unlisted case that fails fails the gate",
               runner(args.suite, args.faulty, *gate, "--passing-list", only_file,
                      "--expected-failures", empty_expected, env=broken), 1,
               "UNLISTED FAILURES:")
        code, out = runner(args.suite, args.faulty, "--filter", SLICE, "--json",
                           os.path.join(tmp, "cases.json"), env=broken)
        import json
        with open(os.path.join(tmp, "cases.json")) as f:
            cases = json.load(f)["cases"]
        failing = ["%s#%d" % (c["file"], c["case"]) for c in cases if not c["passed"]]
        passing = ["%s#%d" % (c["file"], c["case"]) for c in cases if c["passed"]]
        listed_ok = os.path.join(tmp, "listed_ok.txt")
        with open(listed_ok, "w") as f:
            f.write("\n".join(passing) + "\n")
        expected = os.path.join(tmp, "expected.txt")
        with open(expected, "w") as f:
            f.write("".join("%s  the pass is a no-op in this build\n" % e
                            for e in failing + [SLICE]))
        expect("failures listed with reasons pass the gate (%d of %d cases)" % (
                   len(failing), len(cases)),
               runner(args.suite, args.faulty, *gate, "--passing-list", listed_ok,
                      "--expected-failures", expected, env=broken), 0,
               "(%d expected failures)" % (len(failing) + 1))
        expect("an expected failure that passes fails the gate",
               runner(args.suite, args.opt, *gate, "--passing-list", listed_ok,
                      "--expected-failures", expected), 1, "NOW PASSING:")
        # The round trip of the inputs: a fixed point that lost an attribute
        # everywhere (parser and printer alike) must fail it.
        one = os.path.join(tmp, "one")
        os.makedirs(one)
        import shutil
        shutil.copy(os.path.join(args.suite, SLICE), one)
        roundtrip = [sys.executable, os.path.join(HERE, "roundtrip.py"), one]
        for name, opt, env, status, text in (
                ("the round trip passes on shardlab-opt", args.opt, {}, 0, "0 failed"),
                ("the round trip fails when sdy.sharding is dropped and never printed",
                 args.faulty, {"SHARDLAB_FAULT_DROP_ATTR": "sdy.sharding"}, 1,
                 "attributes ['sdy.sharding'] lost")):
            p = subprocess.run(roundtrip + ["--opt", opt, "-v"], env=dict(os.environ, **env),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            expect(name, (p.returncode, p.stdout), status, text)
        no_reason = os.path.join(tmp, "no_reason.txt")
        with open(no_reason, "w") as f:
            f.write(SLICE + "\n")
        expect("an expected failure without a reason is refused",
               runner(args.suite, args.opt, *gate, "--expected-failures", no_reason), 2,
               "has no reason")
    failed = checks.count(False)
    print("%d passed, %d failed" % (len(checks) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
