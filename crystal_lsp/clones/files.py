"""Which files a scan looks at: git's view of a repository, or a directory walk.

Inside a git work tree the files are ``git ls-files --cached --others --exclude-standard``
(tracked and untracked-but-not-ignored, so ``.gitignore`` is respected; with ``tracked-only``
only ``--cached``, for a repository whose ``.gitignore`` makes git's matching slow); elsewhere, or when git
is not installed, a directory walk that honours a top-level ``.gitignore``. Both are then
filtered by the ``include``/``exclude`` globs of the settings (gitignore-style patterns).
Git runs through :mod:`crystal_lsp.clones.git`, which also answers ``--new-since``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator

import pathspec

from crystal_lsp.clones.git import Git, git_available, git_root, list_paths
from crystal_lsp.clones.globs import compile_globs
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.errors import CrystalError
from crystal_lsp.text.sources import SkippedFile, read_bytes

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


def walk_files(paths: list[str]) -> Iterator[str]:
    """Files under the given paths (directories recursively, skipping VCS and tool folders).

    Unlike :func:`list_files` this ignores git and ``.gitignore``: it reads corpora
    (``sset build``, ``score --corpus``), which are whatever the user points at.
    """
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(
                    d for d in dirs if d != "node_modules" and not skip_directory(root, d)
                )
                for name in sorted(files):
                    yield os.path.join(root, name)
        elif os.path.exists(path):
            yield path
        else:
            raise CrystalError(f"{path}: no such file or directory")


def list_files(root: str, config: ScanConfig) -> list[str]:
    """Files to index under ``root`` (relative, ``/``-separated), filtered by the settings.

    A directory that git ignores (a build output, a virtualenv holding an installed package) is
    walked instead: asking git would list nothing, yet the user asked for that directory.
    """
    if git_root(root) is not None and not _ignored_by_git(root):
        # run in `root`, git prints paths relative to it (also when it is a subdirectory)
        untracked = () if config.tracked_only else ("--others", "--exclude-standard")
        files = list_paths(Git(root), "--cached", *untracked)
        # tracked files deleted from the work tree are still "cached"; they are not there to scan
        files = [p for p in files if os.path.lexists(os.path.join(root, p))]
    else:
        if not git_available():
            log.info("git not found; walking %s and honouring its .gitignore", root)
        files = list(_walk(root, _prunable(config)))
    return filter_paths(sorted(set(files)), config)


def _ignored_by_git(root: str) -> bool:
    try:
        return Git(root).succeeds("check-ignore", "-q", ".")
    except CrystalError:
        return False


def _prunable(config: ScanConfig) -> pathspec.PathSpec | None:  # type: ignore[type-arg]
    """The exclude globs, for skipping whole directories during a walk.

    A directory whose path matches them holds only excluded files (gitignore semantics), unless
    a negated pattern re-includes some: then nothing is pruned and ``filter_paths`` decides.
    """
    patterns = config.all_excludes
    if not patterns or any(p.lstrip().startswith("!") for p in patterns):
        return None
    return config.exclude_spec


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
        data = read_bytes(path, within=root)
    except SkippedFile:
        return None
    text = data.decode("utf-8", errors="replace")
    return compile_globs(text.splitlines(), path, skip_invalid=True)


def filter_paths(paths: list[str], config: ScanConfig) -> list[str]:
    """Apply the ``include`` and ``exclude``/``extend_exclude`` globs."""
    include = config.include_spec
    exclude = config.exclude_spec
    out = []
    for path in paths:
        if include is not None and not include.match_file(path):
            continue
        if exclude is not None and exclude.match_file(path):
            continue
        out.append(path)
    return out
