#!/usr/bin/env python3
"""Shardy itself as the oracle: the same module and flags through Shardy's
own sdy_opt and through shardlab-opt, their printed modules compared.

Sets of modules (--set, repeatable; default all):
  local   tests/corpus/**.mlir and examples/**.mlir
  shardy  every `// -----` chunk of Shardy's lit tests
          (../shared/conformance/shardy), as inputs
  shared  seeded sharded variants of ../shared/corpus/stablehlo-testdata
          (tests/differential/sharded_variants.py; --seeds N per module);
          under per-device, runnable ones (the same shardings; the inputs
          constrained in main, each check reading its operands whole)

Flag sets (--flags, repeatable; default: every one for local and shardy,
generic, propagate, export and per-device for shared):
  print        parse and print, no pass
  generic      parse and print in MLIR's generic form (-mlir-print-op-generic:
               properties, enums as numbers, unique value numbers)
  debuginfo    parse and print with locations (-mlir-print-debuginfo: #loc
               aliases); each module alone, as a batch's line numbers
               would be the batch's
  import       -sdy-import-pipeline
  propagate    -sdy-propagation-pipeline
  basic, aggressive, op-priority, user-priority
               each propagation pass on its own
  export       -sdy-propagation-pipeline
               -sdy-export-pipeline=enable-insert-explicit-collectives=true
  per-device   the partition pipeline's steps Shardy has: propagation,
               export with explicit collectives (meshes kept as symbols),
               -sdy-resolve-permutation-factors -sdy-reshard-to-collectives
               -sdy-pad-for-divisibility -sdy-convert-global-to-local: the
               program one device runs

This Shardy aborts on a module with no function named `main` under the
propagation passes; such a module is compared with its first function
renamed to main (in both tools). shardlab-opt verifies after every pass
of a pipeline (-verify-each), as sdy_opt does. A module the oracle refuses
is not compared (counted). Otherwise each pair is:
  identical         the same text
  printing          the same ops, attribute names, result types and
                    shardings (tests/values/op_skeleton.py), other text
  sharding          the same ops, other shardings
  ops               other ops, attributes or types
  shardlab fails    sdy_opt printed a module, shardlab-opt failed

Values (per-device; the shared and Shardy sets' by default, --values-sets):
each program for one device is run on simulated
devices by the interpreter beside --opt (shardlab-run --shardings module
[--program P]) against the module run as written: the same random inputs
(none for JAX's self-checking modules), each device its shards, the results
put together by the program's shardings and compared, the module's checks
(JAX's expected values) run on every device. The shared set's variants are
runnable ones here (the same shardings; the inputs constrained in @main,
each check reading its operands whole). Entries:
  sdy_opt-values:SET/M    sdy_opt's program (what it printed);
  shardlab-values:SET/M   shardlab's partition pipeline, the product's (the
          flag set's steps and those Shardy lacks).
A program that cannot be judged (the global run or the program cannot run:
an op the interpreter lacks, dynamic shapes) makes no entry; nor does a
module whose run would pass --max-work (shardlab-run's budget: elements
and multiply-adds, the same on any machine; a training step's GEMMs of
hundreds of billions). One that still runs past --timeout is counted as
timed out, not judged, and is out of the gate.

Every pair must be identical: a pair that is not must be listed in
tests/differential/expected_differences.txt with its reason (ENTRY
reason, ENTRY = flags:set/module); the gate (tests/gate_list.py) fails on
an unlisted difference and on a listed pair that is now identical.

The oracle is ../shared/tools/shardy/sdy_opt (its runtime: Debian's
libmlir-22, which scripts/install-deps.sh installs). When it cannot run,
the run prints NOT RUN with the reason and exits 0 (77 with
--exit-77-when-not-run). The value entries are gated by the same list.
Standard library only.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "values"))
sys.path.insert(0, HERE)
import gate_list  # noqa: E402
import op_skeleton  # noqa: E402
import shared_data  # noqa: E402
import sharded_variants  # noqa: E402

FLAG_SETS = {
    "print": [],
    "generic": ["-mlir-print-op-generic"],
    "debuginfo": ["-mlir-print-debuginfo"],
    "import": ["-sdy-import-pipeline"],
    "propagate": ["-sdy-propagation-pipeline"],
    "basic": ["-sdy-basic-propagate"],
    "aggressive": ["-sdy-aggressive-propagate"],
    "op-priority": ["-sdy-op-priority-propagate"],
    "user-priority": ["-sdy-user-priority-propagate"],
    "export": ["-sdy-propagation-pipeline",
               "-sdy-export-pipeline=enable-insert-explicit-collectives=true"],
    # The partition pipeline's steps that Shardy has (the product's
    # "partition" pipeline, pass_manager.cpp: meshes kept as symbols, the
    # reshards that resolving adds made collectives), to the program one
    # device runs.
    "per-device": ["-sdy-propagation-pipeline",
                   "-sdy-export-pipeline=enable-insert-explicit-collectives=true "
                   "inline-meshes=false",
                   "-sdy-resolve-permutation-factors", "-sdy-reshard-to-collectives",
                   "-sdy-pad-for-divisibility", "-sdy-convert-global-to-local"],
}
DEFAULT_FLAGS = {"local": list(FLAG_SETS), "shardy": list(FLAG_SETS),
                 "shared": ["generic", "propagate", "export", "per-device"]}
CLASSES = ["identical", "printing", "sharding", "ops", "shardlab fails"]
EXPECTED = os.path.join(HERE, "expected_differences.txt")


def die(message, code=2):
    print("run_differential: error: " + message, file=sys.stderr)
    sys.exit(code)


# ---- inputs ------------------------------------------------------------------

def chunks(text):
    parts, cur = [], []
    for line in text.split("\n"):
        if line.strip().startswith("// -----"):
            parts.append("\n".join(cur))
            cur = []
        else:
            cur.append(line)
    parts.append("\n".join(cur))
    return parts


def with_main(text):
    """The module with its first function renamed to main when none is."""
    if re.search(r"func\.func\s+(?:public\s+|private\s+)?@main\(", text):
        return text
    m = re.search(r"func\.func\s+(?:public\s+)?@([\w.$-]+)\(", text)
    if not m:
        return text
    return re.sub(r"@%s(?![\w.$-])" % re.escape(m.group(1)), "@main", text)


def mlir_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".mlir"):
                yield os.path.join(dirpath, name)


def modules(set_name, shared, seeds, runnable=False):
    """(name, text) of every module of a set (the shared set's runnable
    variants when `runnable`)."""
    if set_name == "local":
        for top in ("tests/corpus", "examples"):
            for path in mlir_files(os.path.join(ROOT, top)):
                with open(path, encoding="utf-8") as f:
                    yield os.path.relpath(path, ROOT), with_main(f.read())
    elif set_name == "shardy":
        root = os.path.join(shared, "conformance", "shardy")
        for path in mlir_files(root):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            split = "split-input-file" in text
            for i, chunk in enumerate(chunks(text) if split else [text]):
                yield "%s#%d" % (os.path.relpath(path, root), i), with_main(chunk)
    else:
        root = os.path.join(shared, "corpus", "stablehlo-testdata")
        for path in mlir_files(root):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for seed in range(seeds):
                v = sharded_variants.variant(text, seed, runnable)
                if v is not None:
                    yield "%s@%d" % (os.path.relpath(path, root), seed), with_main(v)


# ---- comparing ---------------------------------------------------------------

SHARDING = re.compile(r"#sdy\.sharding(?:_per_value)?<|<@[\w.$-]+,|<mesh<")


def balanced_from(text, start):
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == "<":
            depth += 1
        elif c == ">" and text[i - 1] != "-":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
        i += 1
    return text[start:]


def shardings_by_line(text):
    """The shardings written on each op line, in order (their text)."""
    out = []
    for line in text.split("\n"):
        found = []
        for m in SHARDING.finditer(line):
            found.append(re.sub(r"\s+", " ", balanced_from(line, m.start())))
        if found:
            out.append(tuple(found))
    return out


def classify(oracle, mine):
    if oracle == mine:
        return "identical"
    if op_skeleton.compare(oracle, mine, ignore_attrs=("sdy.sharding",)):
        return "ops"
    if shardings_by_line(oracle) != shardings_by_line(mine):
        return "sharding"
    return "printing"


def first_difference(oracle, mine):
    for a, b in zip(oracle.split("\n"), mine.split("\n")):
        if a != b:
            return "sdy_opt: %s\n    shardlab: %s" % (a.strip()[:240], b.strip()[:240])
    return "lengths differ"


# The oracle's start-up (about 0.1 s: it loads MLIR's shared libraries) is
# most of its time on a small module, so modules of one flag set go to it
# together, split as its -split-input-file splits them: each in a context
# of its own, as when run alone, the outputs joined by the marker (an empty
# output is a module it refused). A batch it does not answer chunk for
# chunk (a crash, a timeout, a count that does not match) is halved and run
# again, down to one module; a module holding the marker itself runs alone.
SPLIT_MARKER = "// -----"
BATCH = 32


PARTITIONED = re.compile(r"^partitioned on \d+ devices: (.*)$", re.M)


class Tools:
    def __init__(self, oracle, opt, timeout, interpreter=None, max_work=None):
        self.oracle, self.opt, self.timeout = oracle, opt, timeout
        self.interpreter, self.max_work = interpreter, max_work
        self.oracle_runs = self.batches = self.batches_split = 0
        self.lock = threading.Lock()

    def run(self, tool, flags, text):
        if tool == self.oracle:
            with self.lock:
                self.oracle_runs += 1
        elif tool == self.opt:
            # sdy_opt verifies after every pass of a pipeline (MLIR's
            # default); shardlab-opt, after each flag given. A module valid
            # at the end but not between two passes (edges added to an
            # input that has them) is then refused by both, and not judged
            # by its values either.
            flags = [*flags, "-verify-each"]
        try:
            p = subprocess.run([tool, *flags, "-allow-unregistered-dialect", "-"],
                               input=text.encode("utf-8", "surrogateescape"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return None, "", "timed out"
        return (p.returncode, p.stdout.decode("utf-8", "replace"),
                p.stderr.decode("utf-8", "replace"))

    def oracle_outputs(self, flags, texts):
        """The oracle's printed module for each text, None where it refused;
        None for the whole batch when it did not answer chunk for chunk."""
        joined = ("\n%s\n" % SPLIT_MARKER).join(texts)
        status, out, _ = self.run(self.oracle, [*flags, "-split-input-file",
                                                "-output-split-marker=" + SPLIT_MARKER], joined)
        if status is None or status < 0:
            return None
        parts = re.split(r"(?m)^%s\n" % re.escape(SPLIT_MARKER), out)
        printed = [bool(p.strip()) for p in parts]
        if len(parts) != len(texts) or (status == 0) != all(printed):
            return None
        return [p if p.strip() else None for p in parts]

    def partitioned(self, module, program=None):
        """(passed, detail) of a per-device program of `module` run on
        simulated devices against the global run (shardlab-run --shardings
        module: the same random inputs, each device its shards, the results
        put together by the program's shardings, the module's checks on
        every device): shardlab's partition pipeline, or `program` (another
        tool's) when given. passed is None when nothing could be judged (the
        global run or the program cannot run: an op the interpreter lacks,
        dynamic shapes)."""
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for name, text in (("module.mlir", module), ("program.mlir", program)):
                if text is not None:
                    paths.append(os.path.join(tmp, name))
                    with open(paths[-1], "w", encoding="utf-8", errors="surrogateescape") as f:
                        f.write(text)
            args = [self.interpreter, "--shardings", "module"]
            if self.max_work:
                args += ["--max-work", "%d" % self.max_work]
            if program is not None:
                args += ["--program", paths[1]]
            try:
                p = subprocess.run(args + [paths[0]], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                return None, "timed out"
        if p.returncode < 0:
            return False, "CRASH (signal %d)" % -p.returncode
        verdict = PARTITIONED.search(p.stdout.decode("utf-8", "replace"))
        if not verdict or verdict.group(1).startswith("not run"):
            return None, (verdict.group(0) if verdict else
                          p.stderr.decode("utf-8", "replace").strip()[:200])
        detail = verdict.group(0).replace(tmp + "/", "")[:300]
        return verdict.group(1).startswith("match"), detail

    def values(self, module, oracle, mine):
        """{tool: (passed, detail)} of each program that could be judged:
        sdy_opt's when it printed one, shardlab's partition pipeline's when
        shardlab-opt printed one (the same flags' program: the product's
        adds steps Shardy lacks, and it is the product's that is run)."""
        out = {}
        if mine is not None:
            out["shardlab"] = self.partitioned(module)
        if oracle is not None:
            out["sdy_opt"] = self.partitioned(module, oracle)
        return {tool: v for tool, v in out.items()
                if v[0] is not None or v[1] == "timed out"}

    def compare_with(self, flags, text, oracle, values=False):
        """(class, detail, values) of shardlab's output against the
        oracle's; values: {tool: (passed, detail)} when asked, else {}."""
        status, mine, err = self.run(self.opt, flags, text)
        if status != 0:
            return ("shardlab fails", (err.strip().split("\n") or [""])[0][:300], {})
        kind = classify(oracle, mine)
        return (kind, "" if kind == "identical" else first_difference(oracle, mine),
                self.values(text, oracle, mine) if values else {})

    def refused(self, flags, text, detail, values):
        """The oracle refused: (None, detail, shardlab's values when asked)."""
        if not values:
            return None, detail, {}
        status, mine, _ = self.run(self.opt, flags, text)
        return None, detail, self.values(text, None, mine if status == 0 else None)

    def compare(self, flags, text, values=False):
        """(class or None when the oracle refuses, detail, values)."""
        status, oracle, err = self.run(self.oracle, flags, text)
        if status != 0:
            return self.refused(flags, text, (err.strip().split("\n") or [""])[0][:200],
                                values)
        return self.compare_with(flags, text, oracle, values)

    def compare_batch(self, flags, texts, first=True, values=False):
        """compare() of each text, the oracle run once for all of them; a
        batch it does not answer (a module that crashes it) is halved until
        the module is alone."""
        if len(texts) == 1:
            return [self.compare(flags, texts[0], values)]
        outputs = self.oracle_outputs(flags, texts)
        with self.lock:
            self.batches += first
            self.batches_split += first and outputs is None
        if outputs is None:
            half = len(texts) // 2
            return (self.compare_batch(flags, texts[:half], False, values) +
                    self.compare_batch(flags, texts[half:], False, values))
        return [self.refused(flags, text, "refused (its error is printed when the module "
                             "is run alone)", values)
                if oracle is None else self.compare_with(flags, text, oracle, values)
                for text, oracle in zip(texts, outputs)]


def batches(jobs):
    """The jobs (entry, flags, text, values) in groups of one flag set and
    one values mark, BATCH at most, a text holding the split marker alone."""
    groups = collections.OrderedDict()
    for job in jobs:
        _, flags, text, values = job
        # Locations name the line in what the tool read: a module alone.
        if SPLIT_MARKER in text or "-mlir-print-debuginfo" in flags:
            yield [job]
            continue
        key = (tuple(flags), values)
        group = groups.setdefault(key, [])
        group.append(job)
        if len(group) == BATCH:
            yield group
            groups[key] = []
    for group in groups.values():
        if group:
            yield group


class Progress:
    def __init__(self, total, quiet):
        self.total, self.done, self.quiet = total, 0, quiet
        self.start = self.last = time.monotonic()
        self.lock = threading.Lock()

    def step(self):
        with self.lock:
            self.done += 1
            now = time.monotonic()
            if not self.quiet and (now - self.last >= 15 or self.done == self.total):
                self.last = now
                print("[%d/%d] %.0f s" % (self.done, self.total, now - self.start),
                      file=sys.stderr, flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", choices=["local", "shardy", "shared"])
    ap.add_argument("--flags", action="append", choices=list(FLAG_SETS))
    ap.add_argument("--seeds", type=int, default=2, help="variants per shared module")
    ap.add_argument("--opt", default=os.path.join(ROOT, "build", "shardlab-opt"))
    ap.add_argument("--interpreter", help="shardlab-run, for the values (default: beside "
                    "--opt; 'none' skips them)")
    ap.add_argument("--values-sets", default="local,shardy,shared", metavar="SET,...",
                    help="the sets whose per-device programs are run (default: all three)")
    ap.add_argument("--max-work", type=float, default=6e9,
                    help="shardlab-run's budget for one module's values (default 6e9, some "
                    "10 s here): a module past it is not judged, on any machine alike; 0: none")
    ap.add_argument("--oracle", help="sdy_opt (default: the shared data's)")
    ap.add_argument("--expected", default=EXPECTED, help="the expected differences")
    ap.add_argument("--filter", metavar="SUBSTRING")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--check-regressions", action="store_true",
                    help="gate on the expected differences")
    ap.add_argument("--exit-77-when-not-run", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true", help="show each difference")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)

    shared = shared_data.shared_root()
    oracle = args.oracle or os.path.join(shared, "tools", "shardy", "sdy_opt")
    why = shared_data.sdy_opt_status(oracle)
    if why:
        print("NOT RUN: the differential against Shardy: %s" % why)
        return 77 if args.exit_77_when_not_run else 0
    if not os.access(args.opt, os.X_OK):
        die("shardlab-opt not found at %s (bash scripts/build.sh)" % args.opt)
    interpreter = args.interpreter or os.path.join(os.path.dirname(args.opt), "shardlab-run")
    if interpreter == "none":
        interpreter = None
    elif not os.access(interpreter, os.X_OK):
        die("shardlab-run not found at %s (bash scripts/build.sh; --interpreter none "
            "skips the values)" % interpreter)
    sets = args.set or ["local", "shardy", "shared"]
    jobs = []
    for set_name in sets:
        for flags in args.flags or DEFAULT_FLAGS[set_name]:
            values = (bool(interpreter) and flags == "per-device" and
                      set_name in args.values_sets.split(","))
            runnable = values and set_name == "shared"
            for name, text in modules(set_name, shared, args.seeds, runnable=runnable):
                if not args.filter or args.filter in name:
                    jobs.append(("%s:%s/%s" % (flags, set_name, name), FLAG_SETS[flags],
                                 text, values and (not runnable or
                                                   sharded_variants.self_checking(text))))
    if not jobs:
        die("nothing to compare")
    tools = Tools(oracle, args.opt, args.timeout, interpreter, int(args.max_work))
    progress = Progress(len(jobs), args.quiet)
    results, values = {}, {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(tools.compare_batch, batch[0][1], [job[2] for job in batch],
                               True, batch[0][3]):
                   [job[0] for job in batch] for batch in batches(jobs)}
        for fut in concurrent.futures.as_completed(futures):
            for entry, (kind, detail, ran) in zip(futures[fut], fut.result()):
                results[entry] = (kind, detail)
                for tool, verdict in ran.items():
                    values["%s-values:%s" % (tool, entry.split(":", 1)[1])] = verdict
                progress.step()

    table = collections.OrderedDict()
    for entry in sorted(results):
        flags, rest = entry.split(":", 1)
        key = (rest.split("/", 1)[0], flags)
        row = table.setdefault(key, collections.Counter())
        kind = results[entry][0]
        row[kind or "oracle refuses"] += 1
    print("%-8s %-14s %9s %9s %9s %9s %9s %9s %9s" % (
        "set", "flags", "compared", *[c.split()[0] for c in CLASSES], "refused"))
    for (set_name, flags), row in table.items():
        compared = sum(row[c] for c in CLASSES)
        print("%-8s %-14s %9d %9d %9d %9d %9d %9d %9d" % (
            set_name, flags, compared, *[row[c] for c in CLASSES], row["oracle refuses"]))
    total = collections.Counter()
    for row in table.values():
        total.update(row)
    compared = sum(total[c] for c in CLASSES)
    print("%d pairs compared: %d identical, %d differ (%s); %d the oracle refused" % (
        compared, total["identical"], compared - total["identical"],
        ", ".join("%s %d" % (c, total[c]) for c in CLASSES[1:]), total["oracle refuses"]))

    print("the oracle ran %d times for %d modules (%d batches of up to %d; %d of them, "
          "holding a module that crashes it, halved until that module ran alone)" % (
              tools.oracle_runs, len(jobs), tools.batches, BATCH, tools.batches_split))
    for tool in ("sdy_opt", "shardlab"):
        mine = [v for e, v in values.items() if e.startswith(tool + "-values:")]
        ran = [ok for ok, _ in mine if ok is not None]
        if mine:
            print("values: %s's programs for one device against the global run: %d judged, "
                  "%d match, %d do not; %d timed out (not judged)" % (
                      tool, len(ran), sum(ran), len(ran) - sum(ran), len(mine) - len(ran)))
    differing = sorted(e for e, (k, _) in results.items() if k and k != "identical")
    wrong = sorted(e for e, (ok, _) in values.items() if ok is False)
    if args.verbose:
        for e in differing:
            print("DIFF %s [%s]\n    %s" % (e, results[e][0], results[e][1]))
        for e in wrong:
            print("VALUES %s\n    %s" % (e, values[e][1]))
    status = 0 if not differing and not wrong else 1
    if args.check_regressions:
        try:
            expected = gate_list.read_expected_failures(args.expected)
        except gate_list.ListError as e:
            die(str(e))
        # Each compared pair must be identical, and each program run must
        # pass its checks, unless listed; refused pairs did not run, and a
        # program that timed out (a slower machine) is out of the gate.
        entries = {e: (k == "identical") for e, (k, _) in results.items() if k}
        entries.update({e: ok for e, (ok, _) in values.items() if ok is not None})
        listed = sorted(e for e in entries if e not in expected)
        ran = {e.split(":", 1)[0] for e in list(results) + list(values)}
        ran.update({"sdy_opt-values", "shardlab-values"} if interpreter else ())
        valued = args.values_sets.split(",")

        timed_out = {e for e, (ok, detail) in values.items()
                     if ok is None and detail == "timed out"}

        def in_scope(e):
            if e in timed_out:
                return False
            prefix, rest = e.split(":", 1)
            set_name = rest.split("/", 1)[0]
            return ((not args.filter or args.filter in e) and prefix in ran
                    and set_name in sets
                    and (not prefix.endswith("-values") or set_name in valued))
        gate = gate_list.check(listed, entries, in_scope, lambda e: "did not run", expected)
        gate.print("the identical pairs", expected_name=os.path.relpath(args.expected, ROOT))
        if gate.failed:
            print("differences (each must be fixed, or listed with its reason in %s):" %
                  os.path.relpath(args.expected, ROOT))
            for e in gate.failed[:40]:
                detail = results[e] if e in results else ("values", values[e][1])
                print("  %s [%s]\n    %s" % (e, *detail))
        status = 0 if gate.ok else 1
        print(gate.closing_line())
    return status


if __name__ == "__main__":
    sys.exit(main())
