#!/usr/bin/env python3
"""Self-tests of run_differential.py's batching: modules sent to the oracle
together must be judged exactly as each sent alone, whatever the oracle does
with one of them (refuse it, crash on it). The oracle and shardlab-opt are
stand-ins written here: each prints a module's text upper-cased, the oracle
as sdy_opt does under -split-input-file (a context per chunk, the outputs
joined by the marker, nothing for a chunk it refuses, the whole process
killed by a chunk that crashes it)."""
import os
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
        self.assertEqual([k for k, _ in batch], [k for k, _ in alone])
        return [k for k, _ in batch]

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
        jobs = [("a%d" % i, ["-x"], "m") for i in range(rd.BATCH + 3)]
        jobs += [("b", ["-y"], "m"), ("c", ["-x"], "has\n// -----\ninside")]
        groups = list(rd.batches(jobs))
        self.assertEqual(sorted(len(g) for g in groups), [1, 1, 3, rd.BATCH])
        for g in groups:
            self.assertEqual(len({tuple(flags) for _, flags, _ in g}), 1)
        self.assertEqual(sorted(e for g in groups for e, _, _ in g), sorted(e for e, _, _ in jobs))


if __name__ == "__main__":
    unittest.main()
