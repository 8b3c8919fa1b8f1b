"""What a commit is about to change, read from git: the *new state* and what it adds and removes.

Two kinds of change:

``staged``
    the index against ``HEAD`` (against the empty tree before the first commit): what
    ``git commit`` will record. During a merge (``MERGE_HEAD``) this is still the index against
    ``HEAD``, i.e. what the merge brings in.
``range``
    a commit against the merge base of another (``pre-push``: the commits being pushed).

For either, the new state is every regular file of the index (or of the commit): its content is
the blob git records. Where the work tree differs (unstaged edits, partial staging, files
deleted on disk) the hook passes that blob to the core as an *override*; every other file,
changed ones included, is read from disk, which git has just found identical to what it
records, and where the cache makes unchanged files free. (The core compares overrides with each
other pair by pair, so keeping them to the differing files keeps big commits fast.) Symlinks, submodules and
unmerged entries are not files of the new state; intent-to-add entries (``git add -N``) are not
staged content. Added lines come from a ``-U0`` patch with rename detection, so a renamed file
adds only the lines its rename changed; the removed lines and the old blobs are kept for the
move check (:mod:`crystal_lsp_hooks.moves`). Git runs through :mod:`crystal_lsp.clones.git`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from crystal_lsp.clones.git import (
    Diff,
    Git,
    RawEntry,
    Spans,
    parse_ls_files,
    parse_ls_tree,
    parse_raw,
)
from crystal_lsp.errors import CrystalError

STAGED, RANGE = "staged", "range"
_WORKTREE_DIFF = ("diff", "--raw", "-z", "--no-renames", "--no-abbrev", "--ignore-submodules")


@dataclass
class Change:
    """A change and the state it produces (see the module docstring)."""

    kind: str
    base: str | None
    files: dict[str, str]
    """Every regular file of the new state: path -> blob id."""
    changed: dict[str, RawEntry]
    """Added, modified, renamed, copied or retyped files, by new path (regular files only)."""
    added: dict[str, Spans]
    removed: dict[str, Spans]
    old_blobs: dict[str, str]
    """Old path -> blob id of the files the change removes lines from (or deletes)."""
    renamed_from: dict[str, str] = field(default_factory=dict)
    staged: set[str] = field(default_factory=set)
    """Every path the change adds or modifies, whatever its kind (symlinks and submodules too)."""
    dirty: set[str] = field(default_factory=set)
    """Files of the new state whose work-tree content differs from it."""
    merging: bool = False
    diff: Diff | None = None
    """The diff the change was read from (hunks and old blobs: what existed before)."""


def _apply_diff(change: Change, diff: Diff) -> None:
    change.diff = diff
    parsed = diff.patch
    for entry in diff.entries:
        if entry.status == "U":
            continue
        if entry.status != "D":
            change.staged.add(entry.new_path)
        if entry.status != "D" and entry.new_is_file:
            change.changed[entry.new_path] = entry
            spans = parsed.added.get(entry.new_path)
            if spans:
                change.added[entry.new_path] = spans
        if entry.status == "R":
            change.renamed_from[entry.new_path] = entry.old_path
        if entry.status in "MDRT" and entry.old_is_file:
            spans = parsed.removed.get(entry.old_path)
            if spans:
                change.removed[entry.old_path] = spans
                change.old_blobs[entry.old_path] = entry.old_sha


def _apply_worktree(change: Change, out: bytes) -> None:
    for entry in parse_raw(out):
        if entry.status == "A":  # intent-to-add: listed in the index, but nothing is staged
            change.files.pop(entry.new_path, None)
            change.staged.discard(entry.new_path)
            change.changed.pop(entry.new_path, None)
            change.added.pop(entry.new_path, None)
        elif entry.new_path in change.files:
            change.dirty.add(entry.new_path)


def staged_change(git: Git, git_dir: str) -> Change:
    """The index against ``HEAD`` (see the module docstring)."""
    head = git.commit("HEAD")
    base = head or git.empty_tree()
    files = {e.path: e.sha for e in parse_ls_files(git.run("ls-files", "-s", "-z"))}
    change = Change(STAGED, head, files, {}, {}, {}, {})
    change.merging = os.path.exists(os.path.join(git_dir, "MERGE_HEAD"))
    _apply_diff(change, git.diff("--cached", base))
    _apply_worktree(change, git.run(*_WORKTREE_DIFF))
    return change


def range_change(git: Git, from_ref: str, to_ref: str) -> Change:
    """Commit ``to_ref`` against its merge base with ``from_ref`` (pre-push's view)."""
    new = git.commit(to_ref)
    if new is None:
        raise CrystalError(f"--to-ref: unknown commit {to_ref!r}")
    old = git.commit(from_ref)
    if old is None:
        raise CrystalError(f"--from-ref: unknown commit {from_ref!r}")
    merge_base = git.run("merge-base", old, new, check=False).decode().strip()
    base = merge_base or old
    listing = git.run("ls-tree", "-r", "-z", "--full-tree", new)
    files = {e.path: e.sha for e in parse_ls_tree(listing)}
    change = Change(RANGE, base, files, {}, {}, {}, {})
    _apply_diff(change, git.diff(base, new))
    _apply_worktree(change, git.run(*_WORKTREE_DIFF, new))
    return change


def new_state_contents(git: Git, change: Change, paths: set[str]) -> dict[str, bytes]:
    """The new-state bytes of ``paths`` (files of the new state only), read from git."""
    wanted = {p: change.files[p] for p in paths if p in change.files}
    blobs = git.blobs(wanted.values())
    return {path: blobs[sha] for path, sha in wanted.items()}


def old_contents(git: Git, change: Change) -> dict[str, bytes]:
    """The old bytes of every file the change removes lines from."""
    blobs = git.blobs(change.old_blobs.values())
    return {path: blobs[sha] for path, sha in change.old_blobs.items()}
