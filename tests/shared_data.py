#!/usr/bin/env python3
"""Where the shared test data lives, and what to say when it does not.

The conformance suites, the corpus of real programs and XLA's measured tables
are third-party data kept outside the repository, in a folder named `shared`
beside the checkout (../shared). A clone made from such a checkout (as CI and
`git clone . /tmp/x/p` do) finds it beside the repository it was cloned from.
`SHARDLAB_SHARED` overrides both.

Missing data is an error unless a person asked to go on without it
(`--allow-missing`, or SHARDLAB_ALLOW_MISSING_DATA=1 set by scripts/test.sh
--allow-missing-data); under CI (CI=true) it is always an error.

Run as a script it prints the folder it found (exit 0) or says where it
looked (exit 1).  Standard library only.
"""

import os
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_RUN_EXIT = 77  # what a check that was allowed to skip exits with


def _origin_dir(repo):
    """The local repository `repo` was cloned from, or None."""
    try:
        url = subprocess.run(["git", "-C", repo, "config", "--get", "remote.origin.url"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    if url.startswith("file://"):
        url = url[len("file://"):]
    if not url or "://" in url or ":" in url.split("/")[0]:
        return None  # a remote URL: nothing beside it on this disk
    path = url if os.path.isabs(url) else os.path.join(repo, url)
    return os.path.normpath(path[:-4] if path.endswith("/.git") else path)


def candidates(repo=REPO_ROOT):
    """Folders that may be the shared data, in the order they are tried."""
    env = os.environ.get("SHARDLAB_SHARED")
    if env:
        return [os.path.abspath(env)]
    found = [os.path.normpath(os.path.join(repo, "..", "shared"))]
    origin = _origin_dir(repo)
    if origin:
        found.append(os.path.normpath(os.path.join(origin, "..", "shared")))
    return found


def shared_root(repo=REPO_ROOT):
    """The first candidate that exists, else the first candidate."""
    options = candidates(repo)
    for path in options:
        if os.path.isdir(path):
            return path
    return options[0]


def default_path(*parts):
    """A path inside the shared folder, e.g. default_path('conformance', 'shardy')."""
    return os.path.join(shared_root(), *parts)


def sdy_opt_status(path):
    """None when Shardy's sdy_opt at `path` runs here, else why not (the
    oracle of the differential and value checks; its runtime is Debian's
    libmlir-22)."""
    if not os.path.exists(path):
        return "%s is missing (the shared data's tools/shardy)" % path
    try:
        p = subprocess.run([path, "--version"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
    except OSError as e:
        return "sdy_opt does not run: %s" % e
    if p.returncode != 0:
        return "sdy_opt does not run (%s); install its runtime: apt-get install libmlir-22" % (
            p.stderr.decode(errors="replace").strip().split("\n")[0][:160])
    return None


def sdy_opt():
    """(the shared data's sdy_opt, None) when it runs here, else (None, why)."""
    path = default_path("tools", "shardy", "sdy_opt")
    why = sdy_opt_status(path)
    return (None, why) if why else (path, None)


def missing_allowed():
    """True when a person asked to go on without the data (never under CI)."""
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        return False
    return os.environ.get("SHARDLAB_ALLOW_MISSING_DATA") == "1"


def how_to_get(what, path):
    """The message for missing data: what, where it was looked for, how to get it."""
    looked = ", ".join(candidates())
    return ("%s not found at %s (looked in: %s). The shared data lives in a folder "
            "named 'shared' beside the checkout (../shared) or beside the repository it "
            "was cloned from; set SHARDLAB_SHARED=/path/to/shared to point elsewhere. "
            "To go on without it, pass --allow-missing (scripts/test.sh: "
            "--allow-missing-data); the summary then says NOT RUN."
            % (what, path, looked))


if __name__ == "__main__":
    root = shared_root()
    if os.path.isdir(root):
        print(root)
        sys.exit(0)
    print("shared data not found; looked in: " + ", ".join(candidates()), file=sys.stderr)
    sys.exit(1)
