#!/usr/bin/env python3
"""Real programs through every stage: the corpus runner.

Two sets of modules (see ../shared/spec/CONFORMANCE.md, section 4):
  shared  ../shared/corpus/stablehlo-testdata: 960 modules exported from JAX
          (a file whose first RUN line has -split-input-file holds several
          modules separated by `// -----`; each is its own module, `file#N`)
  local   tests/corpus/*.mlir: modules written here in the exact forms JAX,
          PyTorch/XLA and Reactant export (each says at its top what it
          imitates)

Stages, in order (a module that fails one does not run the later ones):
  parse      shardlab-opt reads and verifies it
  pretty     its printed form reads back to the same text (fixed point),
             every literal value of the source (dense elements, decimal or
             hex, and scalar attributes) is in it with the same bits, and it
             has the source's ops in order with the same attribute names and
             result types, as independent readers (tests/values/
             mlir_literals.py, op_skeleton.py) read both
  generic    its generic form (-mlir-print-op-generic) reads back to the same
             module (printed pretty: the same text) and is a fixed point
  propagate  -sdy-propagation-pipeline succeeds and its output round-trips
  export     propagation + -sdy-export-pipeline with explicit collectives
             succeeds and its output round-trips
  schedule   shardlab-schedule estimates a step and writes its report (a
             run without one fails), and it schedules exactly the
             collectives counted in the exported text (plus the
             all-gathers that let an op without a sharding rule read its
             sharded operands whole) without the
             scheduler (collective_count.py: calls expanded, loop bodies
             times their trip count, GSPMD modules imported first); the
             modules collective_count.py cannot count (branches with
             different collectives, an unknown callee) are counted and
             named with the reason (zero today); and its memory account
             adds up: the parameters, the largest temporaries live at the
             peak (each defined by an op of the schedule) and the rest
             summed make the peak
  run        (shared set) shardlab-run runs the module's @main with the
             interpreter and every one of its own check.* calls passes:
             the values JAX computed are the oracle; a module whose @main
             takes arguments (its inputs are not in it: dynamic shapes)
             passes when it is refused for that
  partition  shardlab-run --shardings partitions the module (a random mesh
             and random shardings of its inputs, for each of the seeds
             1..4 in the shared set; its own mesh and shardings, then seed
             1, in the local set), runs the per-device program on simulated
             devices and compares with the global run (and the module's own
             checks on every device): every seed must match. A module the
             interpreter refuses for dynamic shapes passes as refused
A module with dynamic shapes passes propagate and export when it is refused
with Shardy's message ("only supports ranked tensors with a static shape"),
or, as in Shardy, when only function arguments are dynamic and the pipeline
succeeds; it passes schedule only when refused with that message (a step of
unknown shape cannot be estimated). A crash (signal, exit >= 128) or a timeout always
fails, and is named CRASH.

The gate (--check-regressions) is tests/corpus/passing_<set>.txt, entries
`stage:module`, and expected_failures_<set>.txt, every other entry with the
reason it does not pass (tests/gate_list.py: a listed entry that fails or did
not run fails the gate, and so does a failure in neither list and an
expected failure that passes). For the local set every module must pass every stage but
partition, where a module without a global run to compare with (a per-device program
already, a manual computation, an op the interpreter does not run) is an expected failure
with its reason.
Prints a table of modules per stage, then `N passed, M failed` (module
stages) and, with --check-regressions, `gate: N passed, M failed`.
Standard library only.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collective_count import collective_counts, unknown_why as collective_count_unknown_why  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "values"))
import gate_list  # noqa: E402
import mlir_literals  # noqa: E402
import op_skeleton  # noqa: E402
import shared_data  # noqa: E402

BASE_STAGES = ["parse", "pretty", "generic", "propagate", "export", "schedule"]
# The shared set's modules are self-checking; the local set's take their
# inputs as arguments (the partition stage of issue 44 will run them).
STAGES = BASE_STAGES + ["run", "partition"]
PARTITION_TIMEOUT = 300.0  # seconds per partitioned run
SHARED_PARTITIONINGS = ["random:1", "random:2", "random:3", "random:4"]
LOCAL_PARTITIONINGS = ["module", "random:1"]
DYNAMIC_REFUSAL_RUN = "dynamic shapes are not run by the interpreter"
NOT_SELF_CONTAINED = "arguments and 0 were given"
PROPAGATE = ["-sdy-propagation-pipeline"]
# What the scheduler runs on a module in GSPMD form: MHLO ops to StableHLO
# (a no-op for StableHLO input), then the stablehlo import.
GSPMD_IMPORT = "-xla-sdy-mhlo-import-pipeline"
EXPORT = PROPAGATE + ["-sdy-export-pipeline=enable-insert-explicit-collectives=true"]
UNKNOWN_OPS_REPLICATED = ["-sdy-replicate-operands-of-unknown-ops",
                          "-sdy-replicate-inputs-of-custom-reductions",
                          "-sdy-reshard-to-collectives"]
DYNAMIC_REFUSAL = "only supports ranked tensors with a static shape"
SPLIT_MARKER = "// -----"


def die(msg, code=2):
    print("run_corpus: error: " + msg, file=sys.stderr)
    sys.exit(code)


class Module:
    def __init__(self, name, text, path):
        self.name = name      # "file.mlir" or "file.mlir#N"
        self.text = text
        self.path = path      # the file it comes from
        self.dynamic = bool(re.search(r"tensor<[^>]*\?", text))


def modules_of(root, rel):
    path = os.path.join(root, rel)
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    first_run = next((l for l in text.split("\n") if "RUN:" in l), "")
    if "split-input-file" not in first_run:
        return [Module(rel, text, path)]
    parts, current = [], []
    for line in text.split("\n"):
        if line.strip().startswith(SPLIT_MARKER):
            parts.append("\n".join(current))
            current = []
        else:
            current.append(line)
    parts.append("\n".join(current))
    return [Module("%s#%d" % (rel, i), part, path) for i, part in enumerate(parts)]


def discover(root, substring):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".mlir"):
                rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                found.append(rel)
    modules = []
    for rel in sorted(found):
        modules.extend(m for m in modules_of(root, rel) if not substring or substring in m.name)
    return modules


class Tools:
    def __init__(self, opt, schedule, timeout, interpreter=None):
        self.opt, self.schedule, self.timeout = opt, schedule, timeout
        self.interpreter = interpreter  # shardlab-run, for the run stage

    def run(self, argv, text, timeout=None):
        """(status, stdout, stderr); status None on timeout."""
        timeout = timeout or self.timeout
        try:
            p = subprocess.run(argv, input=text.encode("utf-8", "surrogateescape"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "", "timed out after %g s" % timeout
        return (p.returncode, p.stdout.decode("utf-8", "replace"),
                p.stderr.decode("utf-8", "replace"))

    def opt_run(self, text, *flags):
        # -verify-each: every pass a pipeline runs is verified (see
        # run_conformance.py).
        return self.run([self.opt, "-verify-each", *flags, "-"], text)


def crashed(status):
    return status is None or status < 0 or status >= 128


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def skeleton_differs(source, printed):
    """"" when the printed module has the source's ops, in order, with the
    same attribute names and result types (tests/values/op_skeleton.py: a
    parser that drops an attribute and a printer that never prints it still
    reach a fixed point)."""
    why = op_skeleton.compare(source, printed)
    return "the printed module differs from the source: " + why if why else ""


def changed_values(source, printed):
    """How the literal values of `source` differ in `printed`: "" when every
    one is there with the same bits (a fixed point can still have changed a
    value: reading an i64 through a double printed 2^53 + 1 as 2^53)."""
    try:
        lost = mlir_literals.changed_literals(source, printed)
    except (mlir_literals.LiteralError, ValueError, IndexError) as e:
        return "the source's literals cannot be read independently: %s" % e
    if not lost:
        return ""
    types = sorted({t for (t, _) in lost})
    return "%d literal value(s) changed (%s)" % (sum(lost.values()), ", ".join(types[:3]))


def run_stage(tools, module):
    """(ok, why) of running the module's own checks with the interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "module.mlir")
        with open(src, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(module.text)
        status, out, err = tools.run([tools.interpreter, src], "")
    summary = re.search(r"^(\d+) of (\d+) checks passed", out, re.M)
    if status == 0 and summary and summary.group(1) == summary.group(2) \
            and int(summary.group(2)) > 0:
        return (True, "")
    if status == 0:
        # Every module of the set checks something: a run that reports no
        # check (or no summary) is not a pass.
        return (False, "the interpreter exited 0 but ran no check" if summary
                else "the interpreter exited 0 without its summary")
    if crashed(status):
        return (False, "CRASH: " + (first_line(err) or "exit %s" % status))
    if module.dynamic and (NOT_SELF_CONTAINED in err or DYNAMIC_REFUSAL_RUN in err):
        return (True, "refused (dynamic shapes: inputs are arguments)")
    failed = [line for line in out.splitlines() if line.startswith("FAIL ")]
    why = failed[0] if failed else first_line(err) or "exit %s" % status
    # The module's temporary path says nothing: keep line:col and the cause.
    return (False, re.sub(r"^\S*module\.mlir:", "", why.replace(src, "")))


def partition_stage(tools, module):
    """(ok, why) of the partitioned runs: each partitioning must match."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "module.mlir")
        with open(src, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(module.text)
        for how in tools.partitionings:
            # The interpreter computes every element of the local MLPs'
            # 512x1024x4096 products, globally and on each device.
            status, out, err = tools.run(
                [tools.interpreter, "--shardings", how, src], "",
                timeout=max(tools.timeout, PARTITION_TIMEOUT))
            verdict = re.search(r"^partitioned on \d+ devices: (.*)$", out, re.M)
            if status == 0 and verdict and verdict.group(1).startswith("match"):
                continue
            if crashed(status):
                return (False, "CRASH %s: %s" % (how, first_line(err) or "exit %s" % status))
            if module.dynamic and DYNAMIC_REFUSAL_RUN in err:
                return (True, "refused (dynamic shapes)")
            why = verdict.group(1) if verdict else first_line(err) or "exit %s" % status
            why = re.sub(r"^\S*module\.mlir:\s*", "", why.replace(src, ""))
            return (False, "%s: %s" % (how, why))
    return (True, "")



def memory_account_error(report):
    """Why the report's account of its memory peak does not add up ("" when
    it does): parameter_bytes, every largest_live buffer (each one an op
    of ops[]) and other_live make peak_bytes; with no temporaries at the
    peak, the parameters alone do."""
    memory = report.get("memory_per_device") or {}
    peak, params = memory.get("peak_bytes"), memory.get("parameter_bytes")
    if peak is None or params is None:
        return "the report's memory_per_device has no peak_bytes or parameter_bytes"
    if "peak_at" not in memory:
        return "" if peak == params else "a peak above the parameters with no account of it"
    ops = {op["name"] for op in report.get("ops", [])}
    live = memory.get("largest_live", [])
    unknown = [b["name"] for b in live if b["name"] not in ops]
    if memory["peak_at"] not in ops or unknown:
        return "the memory account names ops the schedule does not have: %s" % (
            ", ".join(([memory["peak_at"]] if memory["peak_at"] not in ops else []) + unknown))
    total = params + sum(b["bytes"] for b in live) + memory["other_live"]["bytes"]
    if total != peak:
        return "the memory account adds up to %d bytes, the peak is %d" % (total, peak)
    return ""

def run_module(tools, module):
    """stage -> (ok, why) for the stages that ran."""
    results = {}

    def fail(stage, status, err, what=""):
        kind = "CRASH" if crashed(status) else "error"
        results[stage] = (False, "%s%s: %s" % (kind, (" " + what) if what else "",
                                               first_line(err) or "exit %s" % status))
        return results

    status, pretty, err = tools.opt_run(module.text)
    if status != 0:
        return fail("parse", status, err)
    results["parse"] = (True, "")
    if tools.interpreter and "run" in STAGES:
        results["run"] = run_stage(tools, module)
    if tools.interpreter and "partition" in STAGES:
        results["partition"] = partition_stage(tools, module)

    status, again, err = tools.opt_run(pretty)
    if status != 0:
        return fail("pretty", status, err, "re-reading the printed form")
    if again != pretty:
        results["pretty"] = (False, "print -> read -> print differs")
        return results
    changed = changed_values(module.text, pretty) or skeleton_differs(module.text, pretty)
    if changed:
        results["pretty"] = (False, changed)
        return results
    results["pretty"] = (True, "")

    status, generic, err = tools.opt_run(module.text, "-mlir-print-op-generic")
    if status != 0:
        return fail("generic", status, err, "printing generic")
    status, from_generic, err = tools.opt_run(generic)
    if status != 0:
        return fail("generic", status, err, "re-reading the generic form")
    status2, generic2, err2 = tools.opt_run(generic, "-mlir-print-op-generic")
    if from_generic != pretty:
        results["generic"] = (False, "the generic form reads back to another module")
        return results
    if status2 != 0 or generic2 != generic:
        results["generic"] = (False, "generic print -> read -> print differs")
        return results
    results["generic"] = (True, "")

    for stage, flags in (("propagate", PROPAGATE), ("export", EXPORT)):
        status, out, err = tools.opt_run(module.text, *flags)
        # Shardy checks op results only: a module whose dynamic shapes are
        # all on function arguments propagates like any other.
        if module.dynamic and status != 0:
            if not crashed(status) and DYNAMIC_REFUSAL in err:
                results[stage] = (True, "refused (dynamic shapes)")
                continue
            results[stage] = (False, "dynamic shapes not refused with Shardy's message: "
                              + (first_line(err) or "exit %s" % status))
            return results
        if status != 0:
            return fail(stage, status, err)
        status, again, err = tools.opt_run(out)
        if status != 0 or again != out:
            results[stage] = (False, "its output does not round-trip: "
                              + (first_line(err) if status else "prints differ"))
            return results
        results[stage] = (True, "")
        exported = out

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "module.mlir")
        with open(src, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(module.text)
        report_path = os.path.join(tmp, "report.json")
        status, out, err = tools.run([tools.schedule, src, "--report", report_path], "")
        report = None
        if status == 0 and os.path.exists(report_path):
            with open(report_path, encoding="utf-8") as f:
                report = json.load(f)
    if module.dynamic:
        ok = status != 0 and not crashed(status) and DYNAMIC_REFUSAL in err + out
        results["schedule"] = (ok, "refused (dynamic shapes)" if ok else
                               "dynamic shapes not refused: " + (first_line(err) or
                                                                 "exit %s" % status))
        return results
    if status != 0:
        return fail("schedule", status, err)
    if report is None:
        results["schedule"] = (False, "shardlab-schedule exited 0 without writing its report")
        return results
    # The schedule must hold exactly the collectives the exported module has;
    # a module in GSPMD form is exported as the scheduler sees it, imported.
    if "mhlo.sharding" in module.text:
        status, exported, _ = tools.opt_run(module.text, GSPMD_IMPORT, *EXPORT)
        if status != 0:
            return fail("schedule", status, "GSPMD import then export failed")
    # An op without a sharding rule, and a reduce whose partial results no
    # all-reduce combines, read sharded operands whole (the per-device
    # program's first steps): count the all-gathers that adds.
    status, exported, err = tools.opt_run(exported, *UNKNOWN_OPS_REPLICATED)
    if status != 0:
        return fail("schedule", status, err, "replicating unknown ops' operands")
    expected = collective_counts(exported)
    if expected is not None:
        scheduled = {k: v["count"] for k, v in report.get("per_kind", {}).items()
                     if v.get("count")}
        if scheduled != expected:
            results["schedule"] = (False, "the schedule has collectives %s, the exported "
                                   "module %s" % (scheduled, expected))
            return results
    wrong = memory_account_error(report)
    if wrong:
        results["schedule"] = (False, wrong)
        return results
    results["facts"] = {
        "checked": expected is not None,
        "unchecked_why": collective_count_unknown_why(exported) if expected is None else "",
        "collectives": sum((expected or {}).values()),
        "loops_or_calls": bool(re.search(r"stablehlo\.while\b|\bcall @", exported)),
        "not_costed": (report or {}).get("not_costed") or {}}
    results["schedule"] = (True, "")
    return results


def print_table(modules, results):
    print("%-10s %9s %9s %9s" % ("stage", "passed", "failed", "not run"))
    for stage in STAGES:
        p = f = n = 0
        for m in modules:
            r = results[m.name].get(stage)
            if r is None:
                n += 1
            elif r[0]:
                p += 1
            else:
                f += 1
        print("%-10s %9d %9d %9d" % (stage, p, f, n))
    complete = sum(1 for m in modules if all(results[m.name].get(s, (False,))[0] for s in STAGES))
    print("modules through every stage: %d of %d (%d with dynamic shapes, refused as "
          "expected where they pass)" % (complete, len(modules),
                                         sum(1 for m in modules if m.dynamic)))
    facts = [results[m.name]["facts"] for m in modules if "facts" in results[m.name]]
    checked = [f for f in facts if f["checked"]]
    print("schedules whose collectives match the text: %d of %d scheduled (%d with "
          "collectives, %d collectives; %d with loops or calls)" % (
              len(checked), len(facts), sum(1 for f in checked if f["collectives"]),
              sum(f["collectives"] for f in checked),
              sum(1 for f in checked if f["loops_or_calls"])))
    unchecked = {}
    for f in facts:
        if not f["checked"]:
            unchecked[f["unchecked_why"]] = unchecked.get(f["unchecked_why"], 0) + 1
    print("schedules not checked independently (collective_count.py could not count "
          "the text): %d%s" % (sum(unchecked.values()), "".join(
              "\n  %d: %s" % (n, why) for why, n in sorted(unchecked.items()))))
    not_costed = {}
    for f in facts:
        for target, n in f["not_costed"].items():
            not_costed[target] = not_costed.get(target, 0) + n
    print("complete schedules (nothing listed as not costed): %d of %d%s" % (
        sum(1 for f in facts if not f["not_costed"]), len(facts),
        "; not costed: " + ", ".join("%s x%d" % kv for kv in sorted(not_costed.items()))
        if not_costed else ""))


class Progress:
    def __init__(self, total, quiet):
        self.total, self.done, self.quiet = total, 0, quiet
        self.start = self.last = time.monotonic()
        self.lock = threading.Lock()

    def step(self):
        with self.lock:
            self.done += 1
            now = time.monotonic()
            if not self.quiet and (now - self.last >= 10 or self.done == self.total):
                self.last = now
                print("[%d/%d] %.0f s" % (self.done, self.total, now - self.start),
                      file=sys.stderr, flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Examples:\n"
                                        "  %(prog)s --set shared --check-regressions\n"
                                        "  %(prog)s --set local -v\n"
                                        "  %(prog)s --set shared --filter dynamic -v\n")
    ap.add_argument("--set", choices=["shared", "local"], required=True)
    ap.add_argument("--root", help="folder of the set's modules (default: the set's)")
    ap.add_argument("--opt", default=os.path.join(REPO_ROOT, "build", "shardlab-opt"))
    ap.add_argument("--schedule", default=os.path.join(REPO_ROOT, "build", "shardlab-schedule"))
    ap.add_argument("--interpreter", default=os.path.join(REPO_ROOT, "build", "shardlab-run"),
                    help="shardlab-run, for the run and partition stages")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per command")
    ap.add_argument("--filter", metavar="SUBSTRING", help="only modules whose name contains it")
    ap.add_argument("--passing-list", metavar="PATH",
                    help="default: tests/corpus/passing_<set>.txt")
    ap.add_argument("--check-regressions", action="store_true")
    ap.add_argument("--update-passing", action="store_true")
    ap.add_argument("--drop", action="append", default=[], metavar="ENTRY")
    ap.add_argument("--allow-missing", action="store_true",
                    help="a missing shared corpus prints NOT RUN (refused under CI=true)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every failing stage")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)

    under_ci = os.environ.get("CI", "").lower() in ("true", "1", "yes")
    if args.allow_missing and under_ci:
        die("--allow-missing is refused under CI")
    root = args.root or (shared_data.default_path("corpus", "stablehlo-testdata")
                         if args.set == "shared" else HERE)
    if not os.path.isdir(root):
        if args.allow_missing or shared_data.missing_allowed():
            print("NOT RUN: corpus not found at %s" % root)
            return 0
        die(shared_data.how_to_get("corpus", root))
    for tool in (args.opt, args.schedule):
        if not os.access(tool, os.X_OK):
            die("%s not found (build it: bash scripts/build.sh)" % tool)
    modules = discover(root, args.filter)
    if not modules:
        die("no .mlir modules under %s%s" % (root, " matching " + args.filter if args.filter else ""))
    passing = args.passing_list or os.path.join(HERE, "passing_%s.txt" % args.set)
    expected_path = gate_list.expected_failures_path(passing)
    listed, expected = [], {}
    if args.check_regressions or args.update_passing:
        try:
            listed = gate_list.read_list(passing, required=not args.update_passing)
            expected = gate_list.read_expected_failures(expected_path)
        except gate_list.ListError as e:
            die(str(e))

    global STAGES
    STAGES = BASE_STAGES + (["run", "partition"] if args.set == "shared"
                            else ["partition"])
    interpreter = args.interpreter
    if not os.access(interpreter, os.X_OK):
        die("%s not found (build it: bash scripts/build.sh)" % interpreter)
    tools = Tools(args.opt, args.schedule, args.timeout, interpreter)
    tools.partitionings = (SHARED_PARTITIONINGS if args.set == "shared"
                           else LOCAL_PARTITIONINGS)
    results = {}
    progress = Progress(len(modules), args.quiet)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_module, tools, m): m for m in modules}
        for fut in concurrent.futures.as_completed(futures):
            results[futures[fut].name] = fut.result()
            progress.step()

    failures = [(m.name, s, why) for m in modules for s in STAGES
                for ok, why in [results[m.name].get(s, (True, ""))] if not ok]
    if args.verbose:
        for name, stage, why in failures:
            print("FAIL %s %s: %s" % (stage, name, why))
    print_table(modules, results)
    crashes = [f for f in failures if f[2].startswith("CRASH")]
    if crashes:
        print("CRASHES: %d" % len(crashes))
        for name, stage, why in crashes:
            print("  %s %s: %s" % (stage, name, why))

    entries = {"%s:%s" % (s, m.name): results[m.name].get(s, (None,))[0]
               for m in modules for s in STAGES}
    n_passed = sum(1 for v in entries.values() if v is True)
    n_failed = sum(1 for v in entries.values() if v is False)
    names = {m.name for m in modules}
    in_scope = lambda e: not args.filter or args.filter in e.split(":", 1)[1]
    why = lambda e: ("module not found" if e.split(":", 1)[1] not in names
                     else "an earlier stage failed")
    status = 0 if n_failed == 0 else 1
    gate = None
    list_name = os.path.relpath(passing, REPO_ROOT)
    if args.check_regressions:
        gate = gate_list.check(listed, entries, in_scope, why, expected)
        gate.print(list_name, expected_name=os.path.relpath(expected_path, REPO_ROOT))
        status = 0 if gate.ok and not crashes else 1
        beyond_partition = [f for f in failures if f[1] != "partition"]
        if args.set == "local" and beyond_partition:
            print("local corpus: every module must pass every stage but partition")
            status = 1
    if args.update_passing:
        unknown = [d for d in args.drop if d not in listed]
        if unknown:
            die("--drop names entries that are not in %s: %s" % (list_name, ", ".join(unknown)))
        upd = gate_list.update(listed, entries, in_scope, args.drop)
        upd.print()
        if upd.refused:
            status = 1
        else:
            gate_list.write_list_atomically(passing, upd.entries)
            print("passing list: %d entries written to %s (%d added, %d dropped)" % (
                len(upd.entries), list_name, len(upd.added), len(upd.dropped)))
            kept = gate_list.passing_now_removed(expected, entries, in_scope)
            if kept != expected:
                gate_list.write_expected_failures(expected_path, kept, gate_list.EXPECTED_HEADER)
            if not args.check_regressions:
                status = 0
    print("%d passed, %d failed" % (n_passed, n_failed))
    if gate is not None:
        print(gate.closing_line())
    return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("run_corpus: interrupted", file=sys.stderr)
        sys.exit(130)
