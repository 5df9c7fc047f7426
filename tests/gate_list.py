#!/usr/bin/env python3
"""The checked-in list of what must keep passing, and the gate over it.

Used by the conformance runner (cases and whole files of a lit suite) and the
corpus runner (modules and stages). An entry is one line of text naming
something a run can pass; `#` starts a comment line.

The gate is strict on purpose (it must not report green while checking
nothing):
  - a missing list is an error (create it with --update-passing);
  - a listed entry fails the gate when it failed, and also when it did not run
    (its file or case is gone, or it became unsupported);
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

    @property
    def ok(self):
        return not self.failed and not self.not_run and bool(self.passed)

    def print(self, list_name, out=print):
        for entry, why in self.not_run:
            out("NOT RUN: %s (%s)" % (entry, why))
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
        """`gate: N passed, M failed`; entries that did not run count as failed."""
        return "gate: %d passed, %d failed" % (
            len(self.passed), len(self.failed) + len(self.not_run))


def check(listed, results, in_scope, why_not_run):
    """Compares `listed` entries with `results` (entry -> True / False / None).

    None, or an entry missing from `results`, means it did not run;
    `why_not_run(entry)` says why. `in_scope(entry)` limits the check (--filter).
    """
    report = GateReport()
    listed_set = set(listed)
    for entry in listed:
        if not in_scope(entry):
            continue
        status = results.get(entry)
        if status is True:
            report.passed.append(entry)
        elif status is False:
            report.failed.append(entry)
        else:
            report.not_run.append((entry, why_not_run(entry)))
    report.new = sorted(e for e, ok in results.items() if ok is True and e not in listed_set)
    return report


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
