#!/usr/bin/env python3
"""The value checks, and proof that they can fail (a ctest).

1. The independent reader (mlir_literals.py) reads known literals to known
   bits (each worked out by hand from the formats' definitions) and tells a
   changed value from the same value spelled another way.
2. The property test (test_literal_roundtrip.py) passes on shardlab-opt, and
   with Shardy's sdy_opt as the oracle when it runs here (else it says NOT
   RUN for that part, with the reason).
3. The same property test fails on shardlab-opt-faulty with
   SHARDLAB_FAULT_LOSSY_INTEGERS=1 (integers through a double, the bug the
   reader was written to catch), and so does constants_survive.py.

    test_values.py --opt build/shardlab-opt --faulty build/shardlab-opt-faulty
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import mlir_literals as ml  # noqa: E402
import shared_data  # noqa: E402

FAILURES = []


def check(condition, what):
    print("%s  %s" % ("ok  " if condition else "FAIL", what))
    if not condition:
        FAILURES.append(what)


def reader_self_test():
    def one(text):
        lits = ml.literals(text)
        return lits[0][1] if lits else None

    check(one("dense<[1.0, 2.0]> : tensor<2xf32>") == (0x3F800000, 0x40000000),
          "f32 decimals read to their bits")
    check(one('dense<"0x0000803F00000040"> : tensor<2xf32>') == (0x3F800000, 0x40000000),
          "a hex blob reads to the same bits as the decimals")
    check(one("dense<0.1> : tensor<f16>") == ("splat", 0x2E66, 1), "f16 0.1 is 0x2E66")
    check(one("dense<0.1> : tensor<bf16>") == ("splat", 0x3DCD, 1), "bf16 0.1 is 0x3DCD")
    check(one("dense<0.1> : tensor<f8E4M3FN>") == ("splat", 0x1D, 1),
          "f8E4M3FN 0.1 is 1.625 * 2^-4, 0x1D")
    check(one("dense<500.0> : tensor<f8E4M3FN>") == ("splat", 0x7F, 1),
          "f8E4M3FN overflows to NaN (0x7F)")
    check(one("dense<70000.0> : tensor<f16>") == ("splat", 0x7C00, 1), "f16 overflows to inf")
    check(one("dense<[255, -1]> : tensor<2xi8>") == ("splat", 0xFF, 2),
          "255 and -1 are the same i8")
    check(one('dense<"0x55555555555555555555555515"> : tensor<101xi1>')
          == tuple((i + 1) % 2 for i in range(101)), "i1 hex blobs are packed bits")
    check(one("dense<(1.5, 0x7FC00000)> : tensor<complex<f32>>") == ("splat", (0x3FC00000, 0x7FC00000), 1),
          "complex parts read as pairs")
    src = "%0 = stablehlo.constant dense<[9007199254740993, 1]> : tensor<2xi64>"
    lossy = "%0 = stablehlo.constant dense<[9007199254740992, 1]> : tensor<2xi64>"
    check(ml.changed_literals(src, lossy), "a value changed by one unit is found")
    check(not ml.changed_literals(src, src.replace("1]", "0x1]")),
          "a value spelled in hex is the same value")
    check(ml.literals("// CHECK: dense<[1]> : tensor<1xi32>\n") == [],
          "literals in comments are not read")
    try:
        ml.literals("dense<256> : tensor<i8>")
        check(False, "a value out of its type's range is refused")
    except ml.LiteralError:
        check(True, "a value out of its type's range is refused")


def run(argv, env=None):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout.decode(errors="replace")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--opt", required=True)
    parser.add_argument("--faulty", required=True)
    args = parser.parse_args()
    prop = [sys.executable, os.path.join(HERE, "test_literal_roundtrip.py")]

    reader_self_test()

    status, out = run(prop + ["--opt", args.opt])
    print(out.strip().split("\n")[-2] if out.strip() else "")
    check(status == 0, "every literal survives shardlab-opt")
    sdy_opt, why = shared_data.sdy_opt()
    if sdy_opt:
        status, out = run(prop + ["--opt", args.opt, "--oracle", sdy_opt, "--rounds", "1"])
        lines = out.strip().split("\n")
        print("\n".join(l for l in lines if l.startswith(("modules printed", "FAIL"))))
        check(status == 0, "shardlab-opt prints every literal as sdy_opt does")
    else:
        print("NOT RUN  the comparison with sdy_opt: %s" % why)

    fault = {"SHARDLAB_FAULT_LOSSY_INTEGERS": "1"}
    status, out = run(prop + ["--opt", args.faulty, "--rounds", "1"], env=fault)
    check(status == 1 and "FAIL i64" in out,
          "the property test fails when integers go through a double")
    sample = os.path.join(HERE, "lossy_integers.mlir")
    status, out = run([sys.executable, os.path.join(HERE, "constants_survive.py"),
                       "--opt", args.faulty, sample], env=fault)
    check(status == 1 and "ui64" in out,
          "constants_survive.py fails when integers go through a double")
    status, out = run([sys.executable, os.path.join(HERE, "constants_survive.py"),
                       "--opt", args.opt, sample])
    check(status == 0, "... and passes on shardlab-opt")
    if FAILURES:
        print("%d checks failed" % len(FAILURES))
        return 1
    print("all value checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
