#!/usr/bin/env python3
"""Self-tests of run_conformance.py against a fake shardlab-opt and a tiny suite.

Run: python3 tests/conformance/test_run_conformance.py   (needs FileCheck)
"""

import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_conformance as rc  # noqa: E402

RUNNER = os.path.join(HERE, "run_conformance.py")

# Prints its input file. Env knobs: FAKE_DROP=<text> drops lines containing
# it; FAKE_SLEEP=<s> sleeps first; FAKE_FAIL_PATH=<text> fails when the input
# path contains it (the whole-file run reads the suite's file, a chunk run a
# temporary copy). Fails on -bad-flag. Records the line of
# `boom` annotations it sees in $FAKE_LOG.
FAKE_OPT = r"""#!/usr/bin/env bash
file=-
for a in "$@"; do
  case "$a" in
    -bad-flag) echo "error: unknown flag -bad-flag" >&2; exit 1 ;;
    -*) ;;
    *) file="$a" ;;
  esac
done
[ -n "${FAKE_SLEEP:-}" ] && sleep "$FAKE_SLEEP"
case "$file" in *"${FAKE_FAIL_PATH:-//none//}"*) echo "error: injected" >&2; exit 1 ;; esac
[ -n "${FAKE_LOG:-}" ] && grep -n boom "$file" >> "$FAKE_LOG"
if [ -n "${FAKE_DROP:-}" ]; then grep -v -- "$FAKE_DROP" "$file"; else cat "$file"; fi
"""

SPLIT = textwrap.dedent("""\
    // RUN: sdy_opt %s -split-input-file 2>&1 | FileCheck %s

    // CHECK: func @one
    func.func @one() {
      return
    }

    // -----

    // CHECK: func @two
    // expected-error @+1 {{boom}}
    func.func @two() {
      return
    }
    """)

PLAIN = textwrap.dedent("""\
    // RUN: sdy_opt %s | \\
    // RUN:   FileCheck %s
    // RUN: not sdy_opt %s -bad-flag
    // CHECK: func @plain
    func.func @plain() { return }
    // -----
    // CHECK: func @after_marker
    func.func @after_marker() { return }
    """)

TOOLS = "// RUN: sdy_opt %s | stablehlo-translate --serialize | FileCheck %s\n"


def read(path):
    with open(path) as f:
        return f.read()


def find_filecheck():
    try:
        return rc.find_filecheck(None)
    except SystemExit:
        return None


class ParsingTests(unittest.TestCase):
    def test_continuation_lines_are_joined(self):
        runs = rc.parse_run_lines(PLAIN.split("\n"))
        self.assertEqual([r.text for r in runs],
                         ["sdy_opt %s | FileCheck %s", "not sdy_opt %s -bad-flag"])
        self.assertEqual([r.lineno for r in runs], [1, 3])

    def test_unsupported_tools(self):
        self.assertIsNone(rc.unsupported_reason("sdy_opt %s 2>&1 | FileCheck %s"))
        self.assertIsNone(rc.unsupported_reason("not sdy_opt %s -x 2> %t && FileCheck %s < %t"))
        self.assertEqual(rc.unsupported_reason(TOOLS[8:]), "needs stablehlo-translate")
        self.assertEqual(rc.unsupported_reason("split-file %s %t"), "needs split-file")
        self.assertEqual(rc.unsupported_reason("mpmd_opt %s | FileCheck %s"), "mpmd")

    def test_quoted_pass_options_stay_one_word(self):
        cmds = rc.pipeline_commands(
            "sdy_opt %s -p=\"filter='a=0, b=0'\" | FileCheck %s --check-prefixes=CHECK,V1")
        self.assertEqual(cmds[0], ["sdy_opt", "%s", "-p=filter='a=0, b=0'"])
        self.assertEqual(cmds[1][0], "FileCheck")

    def test_tool_substitution_leaves_prefixes_alone(self):
        with tempfile.TemporaryDirectory() as d:
            r = rc.Runner("/o/shardlab-opt", "/f/FileCheck", 5, d)
            out = r.substitute("sdy_opt %s | FileCheck %s --check-prefixes=CHECK,FileCheck",
                               "/s/a.mlir", "/t/a")
        # sdy_opt becomes shardlab-opt verifying after every pass, as MLIR does.
        self.assertEqual(out, "/o/shardlab-opt -verify-each /s/a.mlir | "
                              "/f/FileCheck /s/a.mlir --check-prefixes=CHECK,FileCheck")

    def test_chunks_keep_line_numbers(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "split.mlir")
            with open(path, "w") as f:
                f.write(SPLIT)
            tf = rc.TestFile(d, path)
            self.assertEqual(tf.num_cases, 2)
            for i in range(2):
                lines = tf.chunk_text(i).split("\n")
                self.assertEqual(len(lines), len(tf.lines))
                start, end = tf.chunks[i]
                for n, line in enumerate(lines):
                    self.assertEqual(line, tf.lines[n] if start <= n < end else "")
            self.assertNotIn("// -----", tf.chunk_text(0) + tf.chunk_text(1))

    def test_chunk_without_checks_drops_filecheck(self):
        run = "sdy_opt %s -split-input-file -verify-diagnostics | FileCheck %s"
        self.assertEqual(
            rc.without_vacuous_filecheck(run, "// expected-error @+1 {{x}}\nop"),
            "sdy_opt %s -split-input-file -verify-diagnostics > /dev/null")
        self.assertEqual(rc.without_vacuous_filecheck(run, "// CHECK: op\nop"), run)
        prefixed = run + " --check-prefixes=A,B"
        self.assertEqual(
            rc.without_vacuous_filecheck(prefixed, "// A: x\n// B-NEXT: op"), prefixed)
        # Lines of only some prefixes: lit checks the whole file, where the
        # others have lines; alone, FileCheck must be told not to refuse.
        self.assertEqual(
            rc.without_vacuous_filecheck(prefixed, "// B-NEXT: op"),
            prefixed + " --allow-unused-prefixes")
        self.assertNotEqual(
            rc.without_vacuous_filecheck(prefixed, "// CHECK: op"), prefixed)

    def test_marker_without_split_flag_is_one_case(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plain.mlir")
            with open(path, "w") as f:
                f.write(PLAIN)
            self.assertEqual(rc.TestFile(d, path).num_cases, 1)


@unittest.skipIf(find_filecheck() is None, "FileCheck not installed")
class EndToEndTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = self.tmp.name
        self.suite = os.path.join(root, "suite")
        os.makedirs(os.path.join(self.suite, "a"))
        os.makedirs(os.path.join(self.suite, "b"))
        for rel, text in (("a/split.mlir", SPLIT), ("a/plain.mlir", PLAIN),
                          ("b/tools.mlir", TOOLS)):
            with open(os.path.join(self.suite, rel), "w") as f:
                f.write(text)
        self.opt = os.path.join(root, "fake-opt")
        with open(self.opt, "w") as f:
            f.write(FAKE_OPT)
        os.chmod(self.opt, 0o755)
        self.passing = os.path.join(root, "passing.txt")
        self.expected = os.path.join(root, "expected_failures.txt")
        self.log = os.path.join(root, "boom.log")

    def tearDown(self):
        self.tmp.cleanup()

    def run_runner(self, *args, **env):
        full_env = dict(os.environ, FAKE_LOG=self.log, **env)
        p = subprocess.run(
            [sys.executable, RUNNER, self.suite, "--opt", self.opt, "-q",
             "--passing-list", self.passing] + list(args),
            env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def test_all_pass_and_json(self):
        report = os.path.join(self.tmp.name, "r.json")
        code, out, err = self.run_runner("--json", report)
        self.assertEqual(code, 0, out + err)
        self.assertEqual(out.strip().splitlines()[-1], "3 passed, 0 failed")
        self.assertIn("unsupported RUN lines: 1", out)
        with open(report) as f:
            cases = json.load(f)["cases"]
        self.assertEqual(cases, [
            {"file": "a/plain.mlir", "case": 0, "passed": True},
            {"file": "a/split.mlir", "case": 0, "passed": True},
            {"file": "a/split.mlir", "case": 1, "passed": True},
        ])
        # The chunk run alone saw its annotation on the same line as the file run.
        with open(self.log) as f:
            self.assertEqual(set(l.split(":")[0] for l in f), {"11"})

    def test_failure_counts_and_exit_status(self):
        code, out, _ = self.run_runner("-v", FAKE_DROP="@two")
        self.assertEqual(code, 1)
        self.assertEqual(out.strip().splitlines()[-1], "2 passed, 1 failed")
        self.assertIn("FAIL a/split.mlir#1", out)
        self.assertIn("FAIL a/split.mlir (whole file)", out)
        self.assertRegex(out, r"\ba\s+1/2\s+50\.0%\s+2/3")

    def expect_tools_to_fail(self):
        # b/tools.mlir needs a tool the runner does not have: it never runs,
        # and the gate only accepts that when the reason is written down.
        with open(self.expected, "w") as f:
            f.write("b/tools.mlir  needs stablehlo-translate\n")

    def test_update_then_regression_check(self):
        self.expect_tools_to_fail()
        code, out, _ = self.run_runner("--update-passing", FAKE_DROP="@two")
        self.assertEqual(code, 0, out)
        # Whole files are entries too; a split file's whole run failed here.
        with open(self.passing) as f:
            self.assertEqual(f.read(), "a/plain.mlir\na/split.mlir#0\n")
        self.assertIn("added: a/plain.mlir", out)
        # Everything passes now: ok, and the new entries are hinted at.
        code, out, _ = self.run_runner("--check-regressions")
        self.assertEqual(code, 0, out)
        self.assertIn("2 passing entries not in", out)
        self.assertEqual(out.strip().splitlines()[-1],
                         "gate: 2 passed, 0 failed (1 expected failures)")
        # A listed case fails: regression.
        code, out, _ = self.run_runner("--check-regressions", FAKE_DROP="@plain")
        self.assertEqual(code, 1, out)
        self.assertIn("REGRESSIONS: 1 entry", out)
        self.assertIn("  a/plain.mlir", out)
        self.assertEqual(out.strip().splitlines()[-1],
                         "gate: 1 passed, 1 failed (1 expected failures)")
        # A failure in neither list fails the gate too: no case fails unnoticed.
        code, out, _ = self.run_runner("--check-regressions", FAKE_DROP="@two")
        self.assertEqual(code, 1, out)
        self.assertIn("UNLISTED FAILURES: 2 entries", out)
        self.assertIn("  a/split.mlir#1 (failed)", out)
        self.assertIn("  a/split.mlir (failed)", out)

    def test_unrun_entry_in_neither_list_fails_the_gate(self):
        with open(self.passing, "w") as f:
            f.write("a/plain.mlir\n")
        code, out, _ = self.run_runner("--check-regressions")
        self.assertEqual(code, 1, out)
        self.assertIn("b/tools.mlir (did not run)", out)
        self.expect_tools_to_fail()
        code, out, _ = self.run_runner("--check-regressions")
        self.assertEqual(code, 0, out)

    def test_chunks_of_a_passing_file_pass(self):
        # Every chunk fails alone (its copy lives in the runner's work
        # directory); the whole file passes, and lit's verdict covers them.
        code, out, _ = self.run_runner(FAKE_FAIL_PATH="shardlab-conformance.")
        self.assertEqual(code, 0, out)
        self.assertEqual(out.strip().splitlines()[-1], "3 passed, 0 failed")
        code, out, _ = self.run_runner(FAKE_DROP="@two")
        self.assertEqual(out.strip().splitlines()[-1], "2 passed, 1 failed")

    def test_listed_entries_that_did_not_run_fail_the_gate(self):
        with open(self.passing, "w") as f:
            f.write("a/plain.mlir\ngone/x.mlir\na/split.mlir#7\nb/tools.mlir\n"
                    "a/plain.mlir#0\n")
        code, out, _ = self.run_runner("--check-regressions")
        self.assertEqual(code, 1, out)
        self.assertIn("NOT RUN: gone/x.mlir (file no longer exists)", out)
        self.assertIn("NOT RUN: a/split.mlir#7 (the file has no case 7 (it has 2))", out)
        self.assertIn("NOT RUN: b/tools.mlir (unsupported: needs stablehlo-translate)", out)
        self.assertIn("NOT RUN: a/plain.mlir#0 (the file is not split", out)
        self.assertEqual(out.strip().splitlines()[-1],
                         "gate: 1 passed, 4 failed (0 expected failures)")

    def test_whole_file_runs_of_split_files_are_gated(self):
        self.expect_tools_to_fail()
        with open(self.passing, "w") as f:
            f.write("a/split.mlir\na/split.mlir#0\na/split.mlir#1\n")
        code, out, _ = self.run_runner("--check-regressions")
        self.assertEqual(code, 0, out)
        # The chunks pass alone, the whole-file run does not: that fails the gate.
        code, out, _ = self.run_runner("--check-regressions",
                                       FAKE_FAIL_PATH="suite/a/split.mlir")
        self.assertEqual(code, 1, out)
        self.assertIn("REGRESSIONS: 1 entry", out)
        self.assertIn("  a/split.mlir\n", out)

    def test_missing_list_and_empty_scope_fail(self):
        code, _, err = self.run_runner("--check-regressions")
        self.assertEqual(code, 2)
        self.assertIn("passing list", err)
        self.assertIn("not found", err)
        with open(self.passing, "w") as f:
            f.write("# nothing listed\n")
        code, out, _ = self.run_runner("--check-regressions")
        self.assertEqual(code, 1, out)
        self.assertIn("nothing to check", out)

    def test_update_refuses_to_drop_unless_named(self):
        with open(self.passing, "w") as f:
            f.write("a/plain.mlir\na/split.mlir#1\n")
        before = read(self.passing)
        code, out, _ = self.run_runner("--update-passing", FAKE_DROP="@plain")
        self.assertEqual(code, 1, out)
        self.assertIn("passing list NOT updated", out)
        self.assertIn("  a/plain.mlir", out)
        self.assertEqual(read(self.passing), before)
        code, out, _ = self.run_runner("--update-passing", "--drop", "a/plain.mlir",
                                       FAKE_DROP="@plain")
        self.assertEqual(code, 0, out)
        self.assertIn("dropped: a/plain.mlir", out)
        self.assertIn("added: a/split.mlir#0", out)
        with open(self.passing) as f:
            self.assertEqual(f.read(), "a/split.mlir\na/split.mlir#0\na/split.mlir#1\n")
        code, _, err = self.run_runner("--update-passing", "--drop", "not/listed.mlir")
        self.assertEqual(code, 2)
        self.assertIn("not in", err)

    def test_update_with_filter_keeps_other_entries(self):
        with open(self.passing, "w") as f:
            f.write("b/other.mlir\nzz/kept.mlir\n")
        os.makedirs(os.path.join(self.suite, "zz"))
        with open(os.path.join(self.suite, "zz", "kept.mlir"), "w") as f:
            f.write(PLAIN)
        code, out, _ = self.run_runner("--update-passing", "--filter", "a/split")
        self.assertEqual(code, 0, out)
        with open(self.passing) as f:
            self.assertEqual(f.read(), "a/split.mlir\na/split.mlir#0\na/split.mlir#1\n"
                                       "b/other.mlir\nzz/kept.mlir\n")

    def test_timeout(self):
        code, out, _ = self.run_runner("--timeout", "1", "--filter", "plain", "-v", FAKE_SLEEP="5")
        self.assertEqual(code, 1)
        self.assertIn("timed out", out)

    def test_missing_or_empty_suite_fails(self):
        env = dict(os.environ)
        env.pop("SHARDLAB_ALLOW_MISSING_DATA", None)
        none = os.path.join(self.tmp.name, "none")
        p = subprocess.run([sys.executable, RUNNER, none], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("conformance suite not found at " + none, p.stderr)
        self.assertIn("SHARDLAB_SHARED", p.stderr)
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(empty)
        p = subprocess.run([sys.executable, RUNNER, empty, "--opt", self.opt], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("nothing to run", p.stderr)

    def test_missing_suite_is_not_run_only_when_allowed(self):
        env = dict(os.environ)
        env.pop("CI", None)
        none = os.path.join(self.tmp.name, "none")
        p = subprocess.run([sys.executable, RUNNER, none, "--allow-missing"], env=env,
                           stdout=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertTrue(p.stdout.startswith("NOT RUN: conformance suite not found"))
        env["CI"] = "true"
        p = subprocess.run([sys.executable, RUNNER, none, "--allow-missing"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("refused under CI", p.stderr)

    def test_missing_opt_is_an_error(self):
        p = subprocess.run([sys.executable, RUNNER, self.suite, "--opt",
                            os.path.join(self.tmp.name, "none")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("shardlab-opt not found", p.stderr)


if __name__ == "__main__":
    unittest.main()
