#!/usr/bin/env python3
"""Self-tests of run_differential.py's batching: modules sent to the oracle
together must be judged exactly as each sent alone, whatever the oracle does
with one of them (refuse it, crash on it). The oracle and shardlab-opt are
stand-ins written here: each prints a module's text upper-cased, the oracle
as sdy_opt does under -split-input-file (a context per chunk, the outputs
joined by the marker, nothing for a chunk it refuses, the whole process
killed by a chunk that crashes it)."""
import os
import re
import stat
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_differential as rd  # noqa: E402

ORACLE = r'''
import os, sys
text = sys.stdin.read()
split = "-split-input-file" in sys.argv
marker = "// -----"
for arg in sys.argv:
    if arg.startswith("-output-split-marker="):
        marker = arg.split("=", 1)[1]
chunks = []
if split:
    cur = []
    for line in text.split("\n"):
        if line.startswith("// -----"):
            chunks.append("\n".join(cur))
            cur = []
        else:
            cur.append(line)
    chunks.append("\n".join(cur))
else:
    chunks = [text]
outs, failed = [], False
for chunk in chunks:
    if "CRASH" in chunk:
        os.abort()
    if "EXIT1" in chunk:  # printed, yet the process fails: no chunk to blame
        failed = True
    if "REFUSE" in chunk:
        sys.stderr.write("error: refused\n")
        outs.append("")
        failed = True
    else:
        outs.append(chunk.strip().upper() + "\n\n")
sys.stdout.write((marker + "\n").join(outs))
sys.exit(1 if failed else 0)
'''

SHARDLAB = r'''
import sys
text = sys.stdin.read()
if "BROKEN" in text:
    sys.stderr.write("error: shardlab cannot\n")
    sys.exit(1)
out = text.strip().upper() + "\n\n"
sys.stdout.write(out.replace("DIFFER", "OTHER"))
'''


def script(directory, name, body):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write("#!%s\n%s" % (sys.executable, textwrap.dedent(body)))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


class BatchTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tools = rd.Tools(script(self.dir.name, "oracle", ORACLE),
                              script(self.dir.name, "shardlab", SHARDLAB), 60)

    def tearDown(self):
        self.dir.cleanup()

    def judged(self, texts):
        batch = self.tools.compare_batch(["-flag"], texts)
        alone = [self.tools.compare(["-flag"], t) for t in texts]
        self.assertEqual([k for k, _, _ in batch], [k for k, _, _ in alone])
        return [k for k, _, _ in batch]

    def test_each_module_judged_as_alone(self):
        texts = ["module a", "module REFUSE", "module DIFFER", "module BROKEN", "module b"]
        self.assertEqual(self.judged(texts),
                         ["identical", None, "printing", "shardlab fails", "identical"])
        self.assertEqual((self.tools.batches, self.tools.batches_split), (1, 0))

    def test_a_crash_halves_the_batch_down_to_the_module(self):
        texts = ["module %d" % i for i in range(8)]
        texts[1] = "module CRASH"
        kinds = self.judged(texts)
        self.assertEqual(kinds, ["identical"] + [None] + ["identical"] * 6)
        self.assertEqual((self.tools.batches, self.tools.batches_split), (1, 1))
        # The batch of 8 crashes, then its halves 0-3 (crashes) and 4-7,
        # 0-3's halves 0-1 (crashes) and 2-3, and 0 and 1 alone: 7 runs where
        # one at a time takes 8 (judged() then runs each alone: 8 more).
        self.assertEqual(self.tools.oracle_runs, 7 + 8)

    def test_a_failure_no_chunk_explains_is_judged_alone(self):
        # The oracle printed every module yet exited 1: which one failed is
        # not known, so the batch is not trusted; alone, the module that
        # fails it is refused and the others compared.
        kinds = self.judged(["module a", "module EXIT1", "module b"])
        self.assertEqual(kinds, ["identical", None, "identical"])
        self.assertEqual(self.tools.batches_split, 1)

    def test_batches_keep_flag_sets_apart_and_marker_modules_alone(self):
        jobs = [("a%d" % i, ["-x"], "m", False) for i in range(rd.BATCH + 3)]
        jobs += [("b", ["-y"], "m", False), ("c", ["-x"], "has\n// -----\ninside", False),
                 ("d", ["-x"], "m", True)]
        groups = list(rd.batches(jobs))
        self.assertEqual(sorted(len(g) for g in groups), [1, 1, 1, 3, rd.BATCH])
        for g in groups:
            self.assertEqual(len({(tuple(flags), values) for _, flags, _, values in g}), 1)
        self.assertEqual(sorted(e for g in groups for e, _, _, _ in g),
                         sorted(e for e, _, _, _ in jobs))


INTERPRETER = r'''
import sys
text = open(sys.argv[-1]).read()
assert sys.argv[1:3] == ["--shardings", "module"]
if "DYNAMIC" in text:
    sys.stderr.write("module.mlir: argument 0 is not a static tensor\n")
    sys.exit(1)
program = open(sys.argv[4]).read() if "--program" in sys.argv else text
print("1 of 1 checks passed in the global run")
if "NOOP" in program:
    print("partitioned on 2 devices: not run at devices: an op it cannot run")
    sys.exit(1)
if "WRONG" in program:
    print("partitioned on 2 devices: mismatch at results: result 0: element 4: "
          "global 1, partitioned 0; 0 of 0 device checks passed")
    sys.exit(1)
print("partitioned on 2 devices: match (bit-exact); 2 of 2 device checks passed")
'''


class ValuesTest(unittest.TestCase):
    """Which value entries a module makes and what makes one pass: each
    program that printed is run against the global run (shardlab's through
    its own partition pipeline, sdy_opt's as given); one that cannot be
    judged makes no entry."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tools = rd.Tools(None, None, 60, script(self.dir.name, "run", INTERPRETER))

    def tearDown(self):
        self.dir.cleanup()

    def verdicts(self, module, oracle, mine="program"):
        return {tool: ok for tool, (ok, _) in self.tools.values(module, oracle, mine).items()}

    def test_both_programs_match(self):
        self.assertEqual(self.verdicts("m", "o"), {"shardlab": True, "sdy_opt": True})

    def test_a_wrong_value_fails_the_tool_that_computed_it(self):
        self.assertEqual(self.verdicts("m", "WRONG"), {"shardlab": True, "sdy_opt": False})
        self.assertEqual(self.verdicts("WRONG", "o"), {"shardlab": False, "sdy_opt": True})
        _, detail = self.tools.values("m", "WRONG", "p")["sdy_opt"]
        self.assertIn("mismatch at results", detail)

    def test_what_cannot_be_judged_makes_no_entry(self):
        self.assertEqual(self.verdicts("DYNAMIC", "o"), {})
        self.assertEqual(self.verdicts("m", "NOOP"), {"shardlab": True})

    def test_no_program_no_entry(self):
        self.assertEqual(self.verdicts("m", None), {"shardlab": True})
        self.assertEqual(self.verdicts("m", "o", None), {"sdy_opt": True})


MODULE = """module @jit_f {
  func.func public @main() -> (tensor<8x4xf32> {jax.result_info = ""}) {
    %0:2 = call @inputs() : () -> (tensor<8x4xf32>, tensor<8x4xf32>)
    %1 = call @expected() : () -> tensor<8x4xf32>
    %2 = stablehlo.add %0#0, %0#1 : tensor<8x4xf32>
    %3 = stablehlo.custom_call @check.eq(%2, %1) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<i1>
    return %2 : tensor<8x4xf32>
  }
  func.func private @inputs() -> (tensor<8x4xf32>, tensor<8x4xf32>) {
    %c = stablehlo.constant dense<1.0> : tensor<8x4xf32>
    return %c, %c : tensor<8x4xf32>, tensor<8x4xf32>
  }
  func.func private @expected() -> tensor<8x4xf32> {
    %c = stablehlo.constant dense<2.0> : tensor<8x4xf32>
    return %c : tensor<8x4xf32>
  }
}"""


class RunnableVariantTest(unittest.TestCase):
    def test_inputs_constrained_in_main_and_checks_read_whole(self):
        import sharded_variants as sv
        moved_inputs = 0
        for seed in range(6):
            plain, runnable = sv.variant(MODULE, seed), sv.variant(MODULE, seed, True)
            constraints = re.findall(r"sdy\.sharding_constraint (\S+) (<@mesh, .*>) :", plain)
            moved = re.findall(r"sdy\.sharding_constraint (\S+) (<@mesh, .*>) :", runnable)
            # The same draws: the same shardings, on main's call results.
            self.assertEqual([sh for _, sh in constraints],
                             [sh for v, sh in moved if not v.startswith("%2") and v != "%1"])
            main = runnable.split("func.func private")[0]
            moved_inputs += sum(v.startswith("%0#") for v, _ in moved)
            for value, _ in moved:
                if value.startswith("%0#"):
                    self.assertNotRegex(main.split("= call @expected")[1],
                                        re.escape(value) + r"[,)\s]")
            self.assertIn("sdy.sharding_constraint %2 <@mesh, [{}, {}]>", runnable)
            self.assertIn("sdy.sharding_constraint %1 <@mesh, [{}, {}]>", runnable)
            self.assertIn("@check.eq(%check_operand0, %check_operand1) {has_side_effect = true}",
                          runnable)
            self.assertNotIn("sharding_constraint", runnable.split("@inputs() ->")[1])
        self.assertGreater(moved_inputs, 0)
        self.assertTrue(sv.self_checking(MODULE))
        self.assertFalse(sv.self_checking(MODULE.replace("@main()", "@main(%a: tensor<?xf32>)")))


if __name__ == "__main__":
    unittest.main()
