"""Which files a scan looks at: git's view of a repository, or a directory walk.

Inside a git work tree the files are ``git ls-files --cached --others --exclude-standard``
(tracked and untracked-but-not-ignored, so ``.gitignore`` is respected); elsewhere, or when git
is not installed, a directory walk that honours a top-level ``.gitignore``. Both are then
filtered by the ``include``/``exclude`` globs of the settings (gitignore-style patterns).
This module is the only place in the core's neighbourhood that runs git.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from collections.abc import Iterable

import pathspec

from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.errors import CrystalError

log = logging.getLogger(__name__)

_SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
}


def skip_directory(parent: str, name: str) -> bool:
    """Whether a walk should not enter ``parent/name``: VCS and tool folders, virtualenvs.

    A virtual environment is recognised by its ``pyvenv.cfg``, not by its name: CPython's own
    ``Lib/venv`` package is code.
    """
    if name in _SKIP_DIRS:
        return True
    return os.path.isfile(os.path.join(parent, name, "pyvenv.cfg"))


_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def git_available() -> bool:
    """Whether a ``git`` executable is on PATH."""
    return shutil.which("git") is not None


def _git(root: str, *args: str, check: bool = True) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", root, *args],
            capture_output=True,
            check=False,
            timeout=120,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except FileNotFoundError:
        raise CrystalError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise CrystalError(f"git {' '.join(args)} timed out") from None
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CrystalError(
            f"git {' '.join(args)} failed: {message[-1] if message else done.returncode}"
        )
    return done.stdout


def git_root(path: str) -> str | None:
    """The top of the git work tree containing ``path``, or None."""
    if not git_available():
        return None
    try:
        out = _git(
            path if os.path.isdir(path) else os.path.dirname(path) or ".",
            "rev-parse",
            "--show-toplevel",
        )
    except CrystalError:
        return None
    top = out.decode("utf-8", "surrogateescape").strip()
    return top or None


def list_files(root: str, config: ScanConfig) -> list[str]:
    """Files to index under ``root`` (relative, ``/``-separated), filtered by the settings.

    A directory that git ignores (a build output, a virtualenv holding an installed package) is
    walked instead: asking git would list nothing, yet the user asked for that directory.
    """
    if git_root(root) is not None and not _ignored_by_git(root):
        # run in `root`, git prints paths relative to it (also when it is a subdirectory)
        raw = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
        files = [p for p in raw.decode("utf-8", "surrogateescape").split("\0") if p]
        # tracked files deleted from the work tree are still "cached"; they are not there to scan
        files = [p for p in files if os.path.lexists(os.path.join(root, p))]
    else:
        if not git_available():
            log.info("git not found; walking %s and honouring its .gitignore", root)
        files = list(_walk(root, _prunable(config)))
    return filter_paths(sorted(set(files)), config)


def _ignored_by_git(root: str) -> bool:
    try:
        done = subprocess.run(
            ["git", "-C", root, "check-ignore", "-q", "."],
            capture_output=True,
            timeout=60,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _prunable(config: ScanConfig) -> pathspec.PathSpec | None:  # type: ignore[type-arg]
    """The exclude globs, for skipping whole directories during a walk.

    A directory whose path matches them holds only excluded files (gitignore semantics), unless
    a negated pattern re-includes some: then nothing is pruned and ``filter_paths`` decides.
    """
    patterns = config.all_excludes
    if not patterns or any(p.lstrip().startswith("!") for p in patterns):
        return None
    return pathspec.PathSpec.from_lines("gitignore", patterns)


def _walk(root: str, prune: pathspec.PathSpec | None = None) -> Iterable[str]:  # type: ignore[type-arg]
    ignore = _gitignore(root)
    for dirpath, dirs, names in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirs[:] = sorted(
            d
            for d in dirs
            if not skip_directory(dirpath, d)
            and not (ignore and ignore.match_file(f"{rel_dir}{d}/"))
            and not (prune and prune.match_file(f"{rel_dir}{d}/"))
        )
        for name in sorted(names):
            rel = f"{rel_dir}{name}"
            if ignore is None or not ignore.match_file(rel):
                yield rel


def _gitignore(root: str) -> pathspec.PathSpec | None:  # type: ignore[type-arg]
    path = os.path.join(root, ".gitignore")
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return pathspec.PathSpec.from_lines("gitignore", fh)
    except OSError:
        return None


def filter_paths(paths: list[str], config: ScanConfig) -> list[str]:
    """Apply the ``include`` and ``exclude``/``extend_exclude`` globs."""
    include = pathspec.PathSpec.from_lines("gitignore", config.include) if config.include else None
    exclude = (
        pathspec.PathSpec.from_lines("gitignore", config.all_excludes)
        if config.all_excludes
        else None
    )
    out = []
    for path in paths:
        if include is not None and not include.match_file(path):
            continue
        if exclude is not None and exclude.match_file(path):
            continue
        out.append(path)
    return out


def changed_lines(root: str, ref: str) -> dict[str, list[tuple[int, int]]]:
    """Lines added or changed since ``ref`` (working tree vs ref), plus untracked files whole."""
    if git_root(root) is None:
        raise CrystalError("--new-since needs a git repository (and git installed)")
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except CrystalError:
        raise CrystalError(f"--new-since: unknown git revision {ref!r}") from None
    out: dict[str, list[tuple[int, int]]] = {}
    diff = _git(
        root, "diff", "--no-color", "--no-ext-diff", "-U0", "--relative", "-z", "--name-only", ref
    )
    names = [n for n in diff.decode("utf-8", "surrogateescape").split("\0") if n]
    for name in names:
        patch = _git(
            root, "diff", "--no-color", "--no-ext-diff", "-U0", "--relative", ref, "--", name
        )
        spans = parse_hunks(patch)
        if spans:
            out[name] = spans
    untracked = _git(root, "ls-files", "-z", "--others", "--exclude-standard")
    for name in untracked.decode("utf-8", "surrogateescape").split("\0"):
        if name:
            out[name] = [(1, 10**9)]
    return out


def parse_hunks(patch: bytes) -> list[tuple[int, int]]:
    """New-side line ranges (1-based, inclusive) of the hunks of a ``-U0`` diff."""
    spans = []
    for line in patch.splitlines():
        match = _HUNK.match(line)
        if match:
            start = int(match.group(1))
            count = int(match.group(2)) if match.group(2) is not None else 1
            if count > 0:
                spans.append((start, start + count - 1))
    return spans
