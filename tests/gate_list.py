#!/usr/bin/env python3
"""The checked-in list of what must keep passing, and the gate over it.

Used by the conformance runner (cases and whole files of a lit suite) and the
corpus runner (modules and stages). An entry is one line of text naming
something a run can pass; `#` starts a comment line.

Beside each passing list is its expected-failures list: every entry of the
suite that does not pass, one per line, `ENTRY  reason` (the reason is the
rest of the line and may not be empty). Together the two lists account for
every entry a run has.

The gate is strict on purpose (it must not report green while checking
nothing, nor hide what fails):
  - a missing passing list is an error (create it with --update-passing);
  - a listed entry fails the gate when it failed, and also when it did not run
    (its file or case is gone, or it became unsupported);
  - an entry that fails (or does not run) and is in neither list fails it;
  - an expected failure that passes fails it (move it to the passing list:
    --update-passing does), and so does one that is no longer in the suite;
  - an expected failure without a reason is an error;
  - a gate with nothing to check fails.
Updating never drops an entry silently: an entry that no longer passes is
dropped only when the person names it (--drop ENTRY); otherwise the update is
refused and the list is left as it was.
Standard library only.
"""

import os
import tempfile


class ListError(Exception):
    """A problem with the list itself (missing, malformed)."""


def read_list(path, required=True):
    """The entries of the list at `path`, in file order (duplicates removed)."""
    if not os.path.exists(path):
        if required:
            raise ListError("passing list %s not found; create it with --update-passing" % path)
        return []
    entries, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and line not in seen:
                seen.add(line)
                entries.append(line)
    return entries


def expected_failures_path(passing_path):
    """The expected-failures list beside a passing list: passing_X.txt ->
    expected_failures_X.txt (other names: X.txt -> X.expected_failures.txt)."""
    directory, name = os.path.split(passing_path)
    if "passing" in name:
        return os.path.join(directory, name.replace("passing", "expected_failures", 1))
    stem, ext = os.path.splitext(name)
    return os.path.join(directory, stem + ".expected_failures" + ext)


EXPECTED_HEADER = [
    "Entries of the suite that do not pass, one per line: ENTRY  reason.",
    "The gate fails when one of them passes (--update-passing moves it to the",
    "passing list), when an entry fails that is in neither list, and when a",
    "reason is missing. This list should shrink to nothing.",
]


def read_expected_failures(path):
    """entry -> reason of the expected-failures list at `path` ({} when the
    file does not exist). An entry without a reason is a ListError."""
    if not os.path.exists(path):
        return {}
    expected = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            entry, _, reason = line.partition(" ")
            if not reason.strip():
                raise ListError("%s:%d: the expected failure %s has no reason; write "
                                "`ENTRY  why it does not pass`" % (path, number, entry))
            expected[entry] = reason.strip()
    return expected


def write_expected_failures(path, expected, header):
    write_list_atomically(path, ["%s  %s" % (e, expected[e]) for e in sorted(expected)],
                          header=header)


def write_list_atomically(path, entries, header=None):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".passing.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for line in header or []:
                f.write("# " + line + "\n")
            for e in entries:
                f.write(e + "\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class GateReport:
    def __init__(self):
        self.passed = []     # listed and passed
        self.failed = []     # listed and failed
        self.not_run = []    # (entry, why) listed but did not run
        self.new = []        # passing, not listed yet
        self.expected = []   # failed (or did not run) as the expected-failures list says
        self.unlisted = []   # (entry, status) failed or did not run, in neither list
        self.fixed = []      # listed as an expected failure, and passed
        self.stale = []      # listed as an expected failure, not in the suite
        self.both = []       # in both lists

    @property
    def ok(self):
        return (not self.failed and not self.not_run and not self.unlisted
                and not self.fixed and not self.stale and not self.both
                and bool(self.passed))

    def print(self, list_name, out=print, expected_name="the expected failures"):
        for entry, why in self.not_run:
            out("NOT RUN: %s (%s)" % (entry, why))
        if self.unlisted:
            out("UNLISTED FAILURES: %d entr%s failed or did not run and %s in neither %s "
                "nor %s; fix them, or add each to %s with its reason:" % (
                    len(self.unlisted), "y" if len(self.unlisted) == 1 else "ies",
                    "is" if len(self.unlisted) == 1 else "are", list_name, expected_name,
                    expected_name))
            for entry, status in self.unlisted:
                out("  %s (%s)" % (entry, "did not run" if status is None else "failed"))
        if self.fixed:
            out("NOW PASSING: %d expected failure%s pass%s; take %s out of %s "
                "(--update-passing does):" % (
                    len(self.fixed), "" if len(self.fixed) == 1 else "s",
                    "es" if len(self.fixed) == 1 else "", "it" if len(self.fixed) == 1
                    else "them", expected_name))
            for e in self.fixed:
                out("  " + e)
        for e in self.stale:
            out("STALE: %s is listed in %s but is not in the suite" % (e, expected_name))
        for e in self.both:
            out("CONFLICT: %s is in both %s and %s" % (e, list_name, expected_name))
        if self.new:
            out("%d passing entr%s not in %s yet; record them with --update-passing"
                % (len(self.new), "y" if len(self.new) == 1 else "ies", list_name))
        if self.failed:
            out("REGRESSIONS: %d entr%s of %s no longer pass:" % (
                len(self.failed), "y" if len(self.failed) == 1 else "ies", list_name))
            for e in self.failed:
                out("  " + e)
        if not self.passed and not self.failed and not self.not_run:
            out("gate: nothing to check (no listed entry is in scope)")
        elif self.ok:
            out("regression check: ok (%d listed entries pass)" % len(self.passed))

    def closing_line(self):
        """`gate: N passed, M failed (K expected failures)`; entries that did
        not run, unlisted failures and the expected-failures list's own
        problems count as failed."""
        bad = (len(self.failed) + len(self.not_run) + len(self.unlisted) + len(self.fixed)
               + len(self.stale) + len(self.both))
        return "gate: %d passed, %d failed (%d expected failures)" % (
            len(self.passed), bad, len(self.expected))


def check(listed, results, in_scope, why_not_run, expected=None):
    """Compares `listed` entries and `expected` failures (entry -> reason)
    with `results` (entry -> True / False / None).

    None, or an entry missing from `results`, means it did not run;
    `why_not_run(entry)` says why. `in_scope(entry)` limits the check (--filter).
    """
    expected = expected or {}
    report = GateReport()
    listed_set = set(listed)
    for entry in listed:
        if not in_scope(entry):
            continue
        if entry in expected:
            report.both.append(entry)
        status = results.get(entry)
        if status is True:
            report.passed.append(entry)
        elif status is False:
            report.failed.append(entry)
        else:
            report.not_run.append((entry, why_not_run(entry)))
    for entry in sorted(expected):
        if not in_scope(entry) or entry in listed_set:
            continue
        if entry not in results:
            report.stale.append(entry)
        elif results[entry] is True:
            report.fixed.append(entry)
        else:
            report.expected.append(entry)
    for entry in sorted(results):
        if in_scope(entry) and results[entry] is not True and entry not in listed_set \
                and entry not in expected:
            report.unlisted.append((entry, results[entry]))
    report.new = sorted(e for e, ok in results.items() if ok is True and e not in listed_set)
    return report


def passing_now_removed(expected, results, in_scope):
    """The expected failures without those that pass now (--update-passing
    moves them to the passing list)."""
    return {e: r for e, r in expected.items()
            if not (in_scope(e) and results.get(e) is True)}


class UpdateResult:
    def __init__(self, entries, added, dropped, refused):
        self.entries = entries  # the new list (sorted)
        self.added = added
        self.dropped = dropped
        self.refused = refused  # listed entries that would be dropped unnamed

    def print(self, out=print):
        for e in self.added:
            out("added: " + e)
        for e in self.dropped:
            out("dropped: " + e)
        if self.refused:
            out("passing list NOT updated: %d listed entr%s no longer pass%s; fix them, or "
                "drop each one by name with --drop ENTRY:" % (
                    len(self.refused), "y" if len(self.refused) == 1 else "ies",
                    "es" if len(self.refused) == 1 else ""))
            for e in self.refused:
                out("  " + e)


def update(listed, results, in_scope, drops):
    """The list after recording what passes now.

    Entries outside `in_scope` are kept. A listed entry in scope that does not
    pass now is dropped only if it is in `drops`; otherwise it is refused.
    """
    drops = set(drops)
    keep, refused, dropped = [], [], []
    for entry in listed:
        if not in_scope(entry) or results.get(entry) is True:
            keep.append(entry)
        elif entry in drops:
            dropped.append(entry)
        else:
            refused.append(entry)
    passing = [e for e, ok in results.items() if ok is True]
    listed_set = set(listed)
    added = sorted(e for e in passing if e not in listed_set)
    entries = sorted(set(keep) | set(passing))
    return UpdateResult(entries, added, dropped, refused)
