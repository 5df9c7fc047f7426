#!/usr/bin/env python3
"""Runs Shardy's lit tests (the upstream .mlir files) against shardlab-opt.

Each `// RUN:` line of a test file is executed the way lit would run it, with
`sdy_opt` replaced by shardlab-opt, `%s` by the file and `FileCheck` by
FileCheck from llvm-14-tools, through `bash -o pipefail`.

Two counts, per folder and in total (see ../shared/spec/CONFORMANCE.md):
  files  a file passes when all its RUN lines pass on the whole file;
  cases  each `// -----` chunk of a split file (one whose RUN lines use
         -split-input-file), run alone: the chunk is written to a temporary
         file in which every other line is blank, so line numbers and
         `expected-error @+N` annotations are unchanged, and the same RUN lines
         run on it (without FileCheck when the chunk has no check lines of
         its own). A chunk also passes when its whole file passes: that is
         lit's verdict, which checked it in context. A file without splits
         is one case.

RUN lines that need a tool we do not have (anything but sdy_opt, FileCheck and
not) are counted as "unsupported" and skipped; a case or file with no runnable
RUN line is unsupported and counted in neither passed nor failed.

The closing line is `N passed, M failed` (cases). With --check-regressions the
run is gated on passing_cases.txt (see tests/gate_list.py): it lists whole
files (`dir/file.mlir`: all RUN lines pass on the whole file) and the chunks
of split files (`dir/file.mlir#N`); expected_failures_cases.txt lists every
other entry with the reason it does not pass. The gate fails when a listed
entry fails or did not run, when an entry in neither list fails, and when an
expected failure passes; its last line is `gate: N passed, M failed (K
expected failures)`. Without it, the exit status is non-zero when any case
fails.

A missing suite is an error unless --allow-missing is given (never under
CI=true); then the run prints `NOT RUN: ...` and exits 0.
Standard library only.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import gate_list  # noqa: E402
import shared_data  # noqa: E402

DEFAULT_SUITE = shared_data.default_path("conformance", "shardy")
DEFAULT_OPT = os.path.join(REPO_ROOT, "build", "shardlab-opt")
DEFAULT_FILECHECK = "/usr/lib/llvm-14/bin/FileCheck"
DEFAULT_PASSING = os.path.join(HERE, "passing_cases.txt")

SPLIT_MARKER = "// -----"
RUN_RE = re.compile(r"^\s*//\s*RUN:\s?(.*)$")
# Tools a RUN line may use; anything else makes that RUN line unsupported.
SUPPORTED_TOOLS = {"sdy_opt", "FileCheck", "not", "diff"}
# Tool names replaced by paths: only a command word (at the start or after
# whitespace or a shell operator), so `--check-prefixes=CHECK,FileCheck` or a
# path ending in FileCheck is left alone.
TOOL_WORD = r"(?<![^\s|;&(]){}(?![^\s|;&)])"
OUTPUT_LIMIT = 6000  # characters of a failure's output shown with -v


def die(msg, code=2):
    print("run_conformance: error: " + msg, file=sys.stderr)
    sys.exit(code)


# --------------------------------------------------------------------------
# Parsing test files


class RunLine:
    def __init__(self, lineno, text):
        self.lineno = lineno  # 1-based line of the first `RUN:` part
        self.text = text      # joined command, continuations resolved
        self.unsupported = unsupported_reason(text)

    @property
    def uses_split(self):
        return bool(re.search(r"(^|\s)--?split-input-file(\s|$)", self.text))


def parse_run_lines(lines):
    """Returns RunLine objects; a line ending in `\\` continues on the next RUN."""
    runs, pending, start = [], None, 0
    for i, line in enumerate(lines, 1):
        m = RUN_RE.match(line)
        if not m:
            continue
        part = m.group(1).strip()
        if pending is None:
            pending, start = "", i
        if part.endswith("\\"):
            pending += part[:-1].rstrip() + " "
            continue
        runs.append(RunLine(start, (pending + part).strip()))
        pending = None
    if pending is not None and pending.strip():
        runs.append(RunLine(start, pending.strip()))
    return runs


REDIRECTION_RE = re.compile(r"(?<!\S)\d*(>&\d+|&>>?\s*\S+|>>?\s*\S+|<\s*\S+)")


def pipeline_commands(text):
    """Splits a shell command line into simple commands (on |, &&, ||, ;),
    dropping redirections such as `2>&1`."""
    text = REDIRECTION_RE.sub(" ", text)
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars="|&;")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return None
    commands, current = [], []
    for tok in tokens:
        if tok in ("|", "||", "&&", ";", "&", "|&"):
            commands.append(current)
            current = []
        else:
            current.append(tok)
    commands.append(current)
    return [c for c in commands if c]


def unsupported_reason(text):
    """Why a RUN line cannot run here, or None when it can."""
    if "mpmd" in text:
        return "mpmd"
    commands = pipeline_commands(text)
    if commands is None:
        return "unparsable shell syntax"
    for cmd in commands:
        words = list(cmd)
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words.pop(0)  # VAR=value prefixes
        while words and words[0] == "not":
            words.pop(0)
            if words and words[0] == "--crash":
                words.pop(0)
        if not words:
            continue
        tool = words[0]
        if tool not in SUPPORTED_TOOLS:
            return "needs " + tool
    return None


def filecheck_prefixes(run_text):
    """The check prefixes a RUN line's FileCheck reads (CHECK by default)."""
    prefixes = []
    for m in re.finditer(r"--?check-prefix(?:es)?[= ](\S+)", run_text):
        prefixes += m.group(1).strip("'\"").split(",")
    return prefixes or ["CHECK"]


def has_checks(text, prefixes):
    """Whether `text` has a directive of one of `prefixes`."""
    alternatives = "|".join(re.escape(p) for p in prefixes)
    directive = r"(?<![\w-])(%s)(-(NEXT|SAME|DAG|NOT|LABEL|EMPTY|COUNT-\d+))?(\{LITERAL\})?:" % alternatives
    return re.search(directive, text) is not None


def without_vacuous_filecheck(run_text, chunk_text):
    """A chunk with no check lines of its own (one that only expects
    diagnostics, in a file whose other chunks are checked) has nothing for
    FileCheck to check: lit runs the whole file, so its output is checked
    against the other chunks' lines and it passes when the command does.
    Run alone, its RUN line's FileCheck stage is dropped; a chunk that has
    lines of some of the RUN line's prefixes only is checked with
    --allow-unused-prefixes."""
    match = re.search(r"\|\s*FileCheck\b.*$", run_text)
    if not match:
        return run_text
    prefixes = filecheck_prefixes(match.group(0))
    if not has_checks(chunk_text, prefixes):
        return run_text[:match.start()] + "> /dev/null"
    # A prefix the whole file uses may have no line in this chunk: FileCheck
    # would refuse it, lit (which checks the whole file) would not.
    if not all(has_checks(chunk_text, [p]) for p in prefixes):
        return run_text + " --allow-unused-prefixes"
    return run_text


def split_chunks(lines):
    """(start, end) line index ranges (0-based, end exclusive) of the chunks."""
    chunks, start = [], 0
    for i, line in enumerate(lines):
        if line.strip() == SPLIT_MARKER:
            chunks.append((start, i))
            start = i + 1
    chunks.append((start, len(lines)))
    return chunks


class TestFile:
    def __init__(self, suite_root, path):
        self.path = path
        self.rel = os.path.relpath(path, suite_root).replace(os.sep, "/")
        self.folder = os.path.dirname(self.rel) or "."
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            self.text = f.read()
        self.lines = self.text.split("\n")
        self.runs = parse_run_lines(self.lines)
        self.supported_runs = [r for r in self.runs if not r.unsupported]
        # A file is split into cases only when its RUN lines split the input;
        # otherwise `// -----` is just a comment (e.g. unreduced.mlir).
        splits = any(r.uses_split for r in self.supported_runs)
        self.chunks = split_chunks(self.lines) if splits else [(0, len(self.lines))]

    @property
    def num_cases(self):
        return len(self.chunks)

    def chunk_text(self, index):
        """The file with every line outside chunk `index` blanked."""
        start, end = self.chunks[index]
        out = [line if start <= i < end else "" for i, line in enumerate(self.lines)]
        return "\n".join(out)


def discover(suite_root, substring):
    files = []
    for dirpath, dirnames, filenames in os.walk(suite_root):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".mlir"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, suite_root).replace(os.sep, "/")
            if substring and substring not in rel:
                continue
            files.append(path)
    return sorted(files, key=lambda p: os.path.relpath(p, suite_root))


# --------------------------------------------------------------------------
# Running


NOT_SHIM = r"""#!/usr/bin/env bash
# lit's `not`: succeeds when the command fails without crashing;
# `not --crash` succeeds only when it crashes (killed by a signal).
crash=0
if [ "${1-}" = "--crash" ]; then crash=1; shift; fi
"$@"
rc=$?
if [ $crash = 1 ]; then [ $rc -ge 128 ]; else [ $rc -ne 0 ] && [ $rc -lt 128 ]; fi
"""


class Runner:
    def __init__(self, opt, filecheck, timeout, workdir):
        self.opt = opt
        self.filecheck = filecheck
        self.timeout = timeout
        self.workdir = workdir
        shim_dir = os.path.join(workdir, "bin")
        os.makedirs(shim_dir, exist_ok=True)
        shim = os.path.join(shim_dir, "not")
        with open(shim, "w") as f:
            f.write(NOT_SHIM)
        os.chmod(shim, 0o755)
        self.env = dict(os.environ)
        self.env["PATH"] = shim_dir + os.pathsep + self.env.get("PATH", "")
        self.env.pop("FILECHECK_OPTS", None)
        self._counter = 0
        self._lock = threading.Lock()

    def substitute(self, text, test_path, tmp_base):
        q = shlex.quote
        # %% must survive the other substitutions; use a placeholder.
        text = text.replace("%%", "\0")
        text = text.replace("%s", q(test_path))
        text = text.replace("%S", q(os.path.dirname(test_path)))
        text = text.replace("%p", q(os.path.dirname(test_path)))
        text = text.replace("%t", q(tmp_base + ".tmp"))
        text = text.replace("%T", q(os.path.dirname(tmp_base)))
        text = text.replace("\0", "%")
        # -verify-each (MLIR's default, not shardlab-opt's): every pass a
        # pipeline runs is verified, so a pass that breaks an invariant is
        # named in the tests.
        text = re.sub(TOOL_WORD.format("sdy_opt"),
                      lambda m: q(self.opt) + " -verify-each", text)
        text = re.sub(TOOL_WORD.format("FileCheck"), lambda m: q(self.filecheck), text)
        return text

    def new_dir(self):
        with self._lock:
            self._counter += 1
            n = self._counter
        d = os.path.join(self.workdir, "j%05d" % n)
        os.makedirs(d)
        return d

    def run_command(self, command, cwd):
        """Returns (ok, output); output is the combined stdout/stderr."""
        try:
            proc = subprocess.Popen(
                ["bash", "-o", "pipefail", "-c", command],
                cwd=cwd, env=self.env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True)
        except OSError as e:
            return False, "cannot start bash: %s" % e
        try:
            out, _ = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            out, _ = proc.communicate()
            text = out.decode("utf-8", "replace")
            return False, text + "\n[timed out after %g s]" % self.timeout
        text = out.decode("utf-8", "replace")
        if proc.returncode != 0:
            text += "\n[exit status %d]" % proc.returncode
        return proc.returncode == 0, text

    def run_test(self, tf, case):
        """Runs the supported RUN lines of `tf` (case None: the whole file).

        Returns (passed, log) where log describes the first failure."""
        d = self.new_dir()
        if case is None:
            test_path = tf.path
        else:
            # Same base name as the original, so diagnostics name the file alike.
            test_path = os.path.join(d, os.path.basename(tf.path))
            with open(test_path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(tf.chunk_text(case))
        tmp_base = os.path.join(d, os.path.basename(tf.path))
        try:
            for run in tf.supported_runs:
                text = run.text
                if case is not None:
                    text = without_vacuous_filecheck(text, tf.chunk_text(case))
                command = self.substitute(text, test_path, tmp_base)
                ok, out = self.run_command(command, d)
                if not ok:
                    return False, "RUN (line %d): %s\n$ %s\n%s" % (
                        run.lineno, run.text, command, out)
            return True, ""
        finally:
            shutil.rmtree(d, ignore_errors=True)


# --------------------------------------------------------------------------
# Passing list entries: `rel` is the whole-file run, `rel#N` a chunk of a
# split file (a file without splits has only its whole-file entry).


def entry_results(files, file_results, case_results):
    """entry -> True / False / None (did not run) for every file and chunk."""
    results = {}
    for tf in files:
        results[tf.rel] = file_results[tf.rel]
        if tf.num_cases > 1:
            for i in range(tf.num_cases):
                results["%s#%d" % (tf.rel, i)] = case_results[(tf.rel, i)]
    return results


def why_not_run(suite, files_by_rel, entry):
    rel, sep, case = entry.rpartition("#") if "#" in entry else (entry, "", "")
    tf = files_by_rel.get(rel)
    if tf is None:
        if os.path.isfile(os.path.join(suite, rel)):
            return "file not selected"
        return "file no longer exists"
    if sep and not case.isdigit():
        return "malformed entry"
    if sep and int(case) >= tf.num_cases:
        return "the file has no case %s (it has %d)" % (case, tf.num_cases)
    if sep and tf.num_cases == 1:
        return "the file is not split; its entry is %s" % rel
    if not tf.supported_runs:
        return "unsupported: " + ", ".join(sorted({r.unsupported for r in tf.runs})) \
            if tf.runs else "no RUN line"
    return "did not run"


# --------------------------------------------------------------------------
# Reporting


class Progress:
    """Progress on stderr: a rewritten line on a terminal, else a line every 10 s."""

    def __init__(self, total, quiet):
        self.total, self.done, self.failed = total, 0, 0
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.start = self.last = time.monotonic()
        self.lock = threading.Lock()

    def step(self, ok):
        with self.lock:
            self.done += 1
            self.failed += 0 if ok else 1
            if self.quiet:
                return
            now = time.monotonic()
            msg = "[%d/%d] %d failing, %.0f s" % (
                self.done, self.total, self.failed, now - self.start)
            if self.tty:
                sys.stderr.write("\r" + msg + "   ")
                sys.stderr.flush()
            elif now - self.last >= 10 or self.done == self.total:
                self.last = now
                print(msg, file=sys.stderr, flush=True)

    def finish(self):
        if self.tty and not self.quiet and self.total:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()


def print_table(files, file_results, case_results, by_file=False):
    """file_results: rel -> True/False/None; case_results: (rel, i) -> bool/None.
    One row per folder, or per file with by_file."""
    folders = OrderedDict()
    for tf in files:
        folders.setdefault(tf.rel if by_file else tf.folder, []).append(tf)
    rows = []
    tot = [0, 0, 0, 0, 0]
    for folder in sorted(folders):
        fp = ft = cp = ct = uns = 0
        for tf in folders[folder]:
            r = file_results[tf.rel]
            if r is None:
                uns += 1
            else:
                ft += 1
                fp += 1 if r else 0
            for i in range(tf.num_cases):
                c = case_results[(tf.rel, i)]
                if c is not None:
                    ct += 1
                    cp += 1 if c else 0
        rows.append((folder, fp, ft, cp, ct, uns))
        for k, v in enumerate((fp, ft, cp, ct, uns)):
            tot[k] += v
    rows.append(("total",) + tuple(tot))
    width = max(len(r[0]) for r in rows)

    def pct(a, b):
        return "%5.1f%%" % (100.0 * a / b) if b else "     -"

    header = "%-*s  %15s  %15s  %11s" % (width, "file" if by_file else "folder", "files",
                                         "cases", "unsupported")
    print(header)
    print("-" * len(header))
    for i, (folder, fp, ft, cp, ct, uns) in enumerate(rows):
        if i == len(rows) - 1:
            print("-" * len(header))
        print("%-*s  %6s %s  %6s %s  %11s" % (
            width, folder, "%d/%d" % (fp, ft), pct(fp, ft),
            "%d/%d" % (cp, ct), pct(cp, ct), uns or ""))


def flag_census(files):
    """Distinct sdy_opt flags -> set of files using them."""
    usage = {}
    for tf in files:
        for run in tf.runs:
            for cmd in pipeline_commands(run.text) or []:
                while cmd and cmd[0] in ("not", "--crash"):
                    cmd = cmd[1:]
                if not cmd or cmd[0] != "sdy_opt":
                    continue
                for word in cmd[1:]:
                    if word.startswith("-") and word != "--":
                        name = word.split("=", 1)[0].lstrip("-")
                        usage.setdefault(name, set()).add(tf.rel)
                    elif word == "--":
                        usage.setdefault("-- (end of options)", set()).add(tf.rel)
    return usage


# --------------------------------------------------------------------------


def find_filecheck(requested):
    if requested:
        if os.path.isfile(requested) and os.access(requested, os.X_OK):
            return os.path.abspath(requested)
        found = shutil.which(requested)
        if found:
            return found
        die("FileCheck not found at '%s'" % requested)
    if os.access(DEFAULT_FILECHECK, os.X_OK):
        return DEFAULT_FILECHECK
    found = shutil.which("FileCheck")
    if found:
        return found
    die("FileCheck not found (looked at %s and on PATH); install llvm-14-tools "
        "(bash scripts/install-deps.sh) or pass --filecheck PATH" % DEFAULT_FILECHECK)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Run Shardy's upstream lit tests (.mlir RUN lines) against shardlab-opt "
                    "and report files and cases passed, per folder.",
        epilog="Examples:\n"
               "  %(prog)s                               # whole suite, default paths\n"
               "  %(prog)s --filter ir/test -v           # one folder, show failures\n"
               "  %(prog)s --check-regressions           # CI: fail if a listed case fails\n"
               "  %(prog)s --update-passing              # record the cases passing now\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite", nargs="?", default=DEFAULT_SUITE,
                    help="suite root (default: ../shared/conformance/shardy beside the repo)")
    ap.add_argument("--opt", default=DEFAULT_OPT,
                    help="shardlab-opt to run in place of sdy_opt (default: build/shardlab-opt)")
    ap.add_argument("--filecheck", default=None,
                    help="FileCheck binary (default: %s, then FileCheck on PATH)" % DEFAULT_FILECHECK)
    ap.add_argument("--json", metavar="PATH", help="write a JSON report of the cases")
    ap.add_argument("--filter", metavar="SUBSTRING",
                    help="only files whose path relative to the suite root contains SUBSTRING")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="parallel commands (default 2)")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds allowed per RUN command (default 60)")
    ap.add_argument("--expected-failures", metavar="PATH",
                    help="the entries that do not pass, with reasons (default: beside the "
                         "passing list, passing_X.txt -> expected_failures_X.txt)")
    ap.add_argument("--passing-list", default=DEFAULT_PASSING, metavar="PATH",
                    help="list of cases expected to pass (default: tests/conformance/passing_cases.txt)")
    ap.add_argument("--check-regressions", action="store_true",
                    help="fail (only) when a case of the passing list does not pass")
    ap.add_argument("--update-passing", action="store_true",
                    help="add the files and cases passing now to the passing list (entries "
                         "outside --filter are kept); refuses to drop a listed entry that "
                         "no longer passes unless it is named with --drop")
    ap.add_argument("--drop", action="append", default=[], metavar="ENTRY",
                    help="with --update-passing: drop this listed entry although it no "
                         "longer passes (repeat for each entry)")
    ap.add_argument("--allow-missing", action="store_true",
                    help="a missing suite prints NOT RUN and exits 0 instead of failing "
                         "(refused under CI=true)")
    ap.add_argument("--list-flags", action="store_true",
                    help="print the sdy_opt flags used by the RUN lines, with file counts, and exit")
    ap.add_argument("--per-file", action="store_true",
                    help="one row per file in the table (default: per folder)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the output of failures")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)

    if args.jobs < 1:
        die("--jobs must be at least 1")
    if args.timeout <= 0:
        die("--timeout must be positive")

    if args.drop and not args.update_passing:
        die("--drop only makes sense with --update-passing")
    if args.allow_missing and os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        die("--allow-missing is refused under CI: the suite must be there")
    allow_missing = args.allow_missing or shared_data.missing_allowed()

    suite = os.path.abspath(args.suite)
    if not os.path.isdir(suite):
        if allow_missing:
            print("NOT RUN: conformance suite not found at %s" % suite)
            return 0
        die(shared_data.how_to_get("conformance suite", suite))

    paths = discover(suite, args.filter)
    files = [TestFile(suite, p) for p in paths]
    if not files and not args.list_flags:
        die("no .mlir files under %s%s: nothing to run" % (
            suite, " matching '%s'" % args.filter if args.filter else ""))
    listed, expected = [], {}
    expected_path = args.expected_failures or gate_list.expected_failures_path(args.passing_list)
    if args.check_regressions or args.update_passing:
        try:
            listed = gate_list.read_list(args.passing_list, required=not args.update_passing)
            expected = gate_list.read_expected_failures(expected_path)
        except gate_list.ListError as e:
            die(str(e))

    if args.list_flags:
        usage = flag_census(files)
        for name in sorted(usage, key=lambda n: (-len(usage[n]), n)):
            print("%4d  %s" % (len(usage[name]), name))
        return 0

    opt = os.path.abspath(args.opt)
    if not (os.path.isfile(opt) and os.access(opt, os.X_OK)):
        die("shardlab-opt not found or not executable at %s (build it: bash scripts/build.sh, "
            "or pass --opt PATH)" % opt)
    filecheck = find_filecheck(args.filecheck)

    # Jobs: the whole file, plus each chunk when the file is split.
    jobs = []
    for tf in files:
        if not tf.supported_runs:
            continue
        jobs.append((tf, None))
        if tf.num_cases > 1:
            jobs.extend((tf, i) for i in range(tf.num_cases))

    file_results = {tf.rel: None for tf in files}
    case_results = {(tf.rel, i): None for tf in files for i in range(tf.num_cases)}
    failure_logs = {}
    progress = Progress(len(jobs), args.quiet)

    workdir = tempfile.mkdtemp(prefix="shardlab-conformance.")
    try:
        runner = Runner(opt, filecheck, args.timeout, workdir)
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(runner.run_test, tf, case): (tf, case) for tf, case in jobs}
            try:
                for fut in concurrent.futures.as_completed(futures):
                    tf, case = futures[fut]
                    ok, log = fut.result()
                    progress.step(ok)
                    if case is None:
                        file_results[tf.rel] = ok
                        if tf.num_cases == 1:
                            case_results[(tf.rel, 0)] = ok
                    else:
                        case_results[(tf.rel, case)] = ok
                    if not ok:
                        failure_logs[(tf.rel, case)] = log
            except KeyboardInterrupt:
                for f in futures:
                    f.cancel()
                raise
    finally:
        progress.finish()
        shutil.rmtree(workdir, ignore_errors=True)

    # lit's verdict is the whole file: when it passes, every chunk's checks
    # and expected diagnostics matched in context, so every chunk passes,
    # also one that cannot pass alone (a diagnostic Shardy emits once per
    # run is expected only in the first chunk that triggers it).
    for tf in files:
        if tf.num_cases > 1 and file_results[tf.rel]:
            for i in range(tf.num_cases):
                case_results[(tf.rel, i)] = True
                failure_logs.pop((tf.rel, i), None)

    if args.verbose:
        for (rel, case) in sorted(failure_logs, key=lambda k: (k[0], -1 if k[1] is None else k[1])):
            log = failure_logs[(rel, case)]
            if len(log) > OUTPUT_LIMIT:
                log = log[:OUTPUT_LIMIT] + "\n[... %d more characters]" % (len(log) - OUTPUT_LIMIT)
            print("=" * 78)
            print("FAIL %s%s" % (rel, " (whole file)" if case is None else "#%d" % case))
            print(log.rstrip())
        if failure_logs:
            print("=" * 78)

    unsupported_runs = [(tf.rel, r) for tf in files for r in tf.runs if r.unsupported]
    print_table(files, file_results, case_results, args.per_file)
    if unsupported_runs:
        reasons = {}
        for _, r in unsupported_runs:
            reasons[r.unsupported] = reasons.get(r.unsupported, 0) + 1
        print("unsupported RUN lines: %d (%s)" % (len(unsupported_runs), ", ".join(
            "%s: %d" % kv for kv in sorted(reasons.items()))))

    counted = sorted((k for k, v in case_results.items() if v is not None))
    passed_cases = ["%s#%d" % k for k in counted if case_results[k]]
    n_passed = len(passed_cases)
    n_failed = len(counted) - n_passed

    if args.json:
        report = {"cases": [{"file": rel, "case": i, "passed": bool(case_results[(rel, i)])}
                            for rel, i in counted]}
        tmp = args.json + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
        os.replace(tmp, args.json)

    # Plain run: fail on any failure, like lit. Recording or regression
    # checking: the status says whether that went well instead.
    status = 0 if n_failed == 0 else 1
    results = entry_results(files, file_results, case_results)
    files_by_rel = {tf.rel: tf for tf in files}
    in_scope = lambda entry: not args.filter or args.filter in entry.split("#")[0]
    list_name = os.path.relpath(args.passing_list, REPO_ROOT)

    gate = None
    if args.check_regressions:
        gate = gate_list.check(listed, results, in_scope,
                               lambda e: why_not_run(suite, files_by_rel, e), expected)
        gate.print(list_name, expected_name=os.path.relpath(expected_path, REPO_ROOT))
        status = 0 if gate.ok else 1

    if args.update_passing:
        unknown = [d for d in args.drop if d not in listed]
        if unknown:
            die("--drop names entries that are not in %s: %s" % (list_name, ", ".join(unknown)))
        upd = gate_list.update(listed, results, in_scope, args.drop)
        still_passing = [d for d in args.drop if d not in upd.dropped]
        upd.print()
        if still_passing:
            print("--drop names entries that still pass (kept): " + ", ".join(still_passing))
        if upd.refused:
            status = 1
        else:
            gate_list.write_list_atomically(args.passing_list, upd.entries)
            print("passing list: %d entries written to %s (%d added, %d dropped)" % (
                len(upd.entries), list_name, len(upd.added), len(upd.dropped)))
            kept = gate_list.passing_now_removed(expected, results, in_scope)
            if kept != expected:
                gate_list.write_expected_failures(expected_path, kept, gate_list.EXPECTED_HEADER)
                print("expected failures: %d now pass, taken out of %s" % (
                    len(expected) - len(kept), os.path.relpath(expected_path, REPO_ROOT)))
            if not args.check_regressions:
                status = 0

    print("%d passed, %d failed" % (n_passed, n_failed))
    if gate is not None:
        # The last line is what CI gates on: the listed entries, and how many
        # of them failed or did not run. The line above counts the whole suite.
        print(gate.closing_line())
    sys.stdout.flush()
    return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("run_conformance: interrupted", file=sys.stderr)
        sys.exit(130)
