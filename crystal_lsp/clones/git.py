"""Every git call of crystal_lsp: one runner, the parsers of git's output, lines added since a ref.

``crystal-lsp scan`` (file listing, ``--new-since``) and the ``crystal-clones`` hook both run git
through :class:`Git`, with one timeout and one environment (:func:`git_env`): the caller's
environment, so that a commit hook sees ``GIT_INDEX_FILE`` (``git commit -a`` and
``git commit <paths>`` stage into a temporary index), with relative ``GIT_*`` paths made
absolute (git runs with ``-C``), ``GIT_OPTIONAL_LOCKS=0`` so that read-only commands never
rewrite the index, ``LC_ALL=C`` so that messages are parsable, no prompt, pager or external diff.

Every listing is read with ``-z`` (paths with spaces, quotes, newlines or non-ASCII bytes come
back verbatim); the only place git quotes paths is the ``---``/``+++`` lines of a patch, which
:func:`unquote` decodes. Paths are ``str`` decoded with ``surrogateescape``, so any byte
sequence round-trips to the file system.

A failing git is a :class:`GitError` whose message starts with ``git failed:`` and ends with
git's last line of stderr, so that it never reads like a mistake in the user's options.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from crystal_lsp.errors import CrystalError

TIMEOUT = 300
"""Seconds any one git command may take (a ``git diff`` of a very large repository is slow)."""
LISTING_TIMEOUT = 60
"""Seconds a listing of untracked files may take (some ``.gitignore`` patterns make git's
matching exponential: ``a*a*...a*b`` against a long name of ``a``)."""
TIMEOUT_VAR = "CRYSTAL_LSP_GIT_TIMEOUT"
"""Environment variable: the bound of every git call in seconds (both of the above)."""
UNTRACKED_HINT = (
    "some .gitignore patterns make git's listing of untracked files slow; list tracked files"
    " only (--tracked-only, or tracked-only = true in [tool.crystal-lsp]), or raise the bound"
    f" with {TIMEOUT_VAR}=SECONDS"
)
ZERO_SHA = re.compile(r"^0+$")
REGULAR_MODES = frozenset({"100644", "100755"})
WHOLE_FILE = 10**9
"""The last line of the span an untracked file gets in :func:`changed_lines`."""
_PATH_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
)
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {
    ord("a"): 7,
    ord("b"): 8,
    ord("t"): 9,
    ord("n"): 10,
    ord("v"): 11,
    ord("f"): 12,
    ord("r"): 13,
    ord('"'): 34,
    ord("\\"): 92,
}
# --raw and a -U0 patch in one run; prefixes and every display option pinned, so that neither
# the user's config (diff.noprefix, diff.external, textconv, color.diff) nor GIT_DIFF_OPTS moves
# the line numbers or the paths
_DIFF = (
    "diff",
    "--raw",
    "-p",
    "-z",
    "-U0",
    "--inter-hunk-context=0",
    "--no-abbrev",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--ignore-submodules",
)
Spans = list[tuple[int, int]]
Hunk = tuple[int, int, int, int]


class GitError(CrystalError):
    """git is missing, failed or timed out (exit code 2, like any error in the user's setup)."""


def decode_path(raw: bytes) -> str:
    """A path from git's bytes (surrogateescape keeps undecodable bytes)."""
    return raw.decode("utf-8", "surrogateescape")


def git_env(base: Mapping[str, str] | None = None, cwd: str | None = None) -> dict[str, str]:
    """The environment git runs with (see the module docstring)."""
    env = dict(os.environ if base is None else base)
    here = cwd or os.getcwd()
    for name in _PATH_VARS:
        value = env.get(name)
        if value and not os.path.isabs(value):
            env[name] = os.path.join(here, value)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_PAGER"] = "cat"
    env.pop("GIT_EXTERNAL_DIFF", None)
    env.pop("GIT_DIFF_OPTS", None)
    return env


def git_available() -> bool:
    """Whether a ``git`` executable is on PATH."""
    return shutil.which("git") is not None


def time_bound(default: float) -> float:
    """The bound of a git call: ``default``, or the seconds :data:`TIMEOUT_VAR` gives."""
    value = os.environ.get(TIMEOUT_VAR, "")
    try:
        seconds = float(value)
    except ValueError:
        return default
    return seconds if 0 < seconds < 10**6 else default


class Git:
    """Runs git in one work tree (or any directory inside it)."""

    def __init__(self, root: str, env: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.env = dict(env) if env is not None else git_env()

    def _run(
        self, args: tuple[str, ...], stdin: bytes | None, timeout: float = TIMEOUT
    ) -> subprocess.CompletedProcess[bytes]:
        bound = time_bound(timeout)
        try:
            return subprocess.run(
                ["git", "-C", self.root, *args],
                input=stdin if stdin is not None else b"",
                capture_output=True,
                check=False,
                env=self.env,
                timeout=bound,
            )
        except FileNotFoundError:
            raise GitError("git is not installed") from None
        except subprocess.TimeoutExpired:
            raise GitError(f"git failed: {_shown(args)}: timed out after {bound:g} s") from None

    def run(
        self,
        *args: str,
        check: bool = True,
        stdin: bytes | None = None,
        timeout: float = TIMEOUT,
    ) -> bytes:
        """Run ``git ARGS``; its stdout, or :class:`GitError` when it fails or times out."""
        done = self._run(args, stdin, timeout)
        if check and done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            fatal = [line for line in lines if line.startswith("fatal:")]
            detail = (fatal or lines or [f"exit status {done.returncode}"])[-1]
            raise GitError(f"git failed: {_shown(args)}: {detail}")
        return done.stdout

    def succeeds(self, *args: str) -> bool:
        """Whether ``git ARGS`` exits 0 (its output is discarded)."""
        return self._run(args, None).returncode == 0

    def commit(self, rev: str) -> str | None:
        """The commit ``rev`` names, or None (e.g. ``HEAD`` before the first commit)."""
        if rev.startswith("-"):
            raise CrystalError(f"not a revision: {rev!r}")
        out = self.run("rev-parse", "-q", "--verify", f"{rev}^{{commit}}", check=False)
        return out.decode().strip() or None

    def empty_tree(self) -> str:
        """The id of the empty tree (SHA-1 or SHA-256, as the repository uses)."""
        return self.run("hash-object", "-t", "tree", "--stdin").decode().strip()

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Contents of blobs by id, in one ``git cat-file --batch``."""
        wanted = sorted(set(shas))
        if not wanted:
            return {}
        out = self.run("cat-file", "--batch", stdin="".join(f"{s}\n" for s in wanted).encode())
        blobs: dict[str, bytes] = {}
        pos = 0
        for sha in wanted:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            pos = end + 1
            if len(header) != 3:
                raise GitError(f"git failed: git cat-file: object {sha} is missing")
            size = int(header[2])
            blobs[sha] = out[pos : pos + size]
            pos += size + 1
        return blobs

    def diff(self, *revs: str, renames: bool = True, relative: bool = False) -> Diff:
        """The entries and the added and removed lines of ``git diff REVS``, in one run.

        ``revs`` as ``git diff`` takes them: ``REF`` (work tree), ``--cached REF`` (index),
        ``A B`` (two commits). With ``renames``, a renamed file adds only the lines its rename
        changed; without, it is a deletion plus a whole new file. ``relative``: only paths under
        the directory git runs in, relative to it.
        """
        options = ("-M",) if renames else ("--no-renames",)
        scope = ("--relative",) if relative else ()
        raw, patch = split_raw_and_patch(self.run(*_DIFF, *options, *scope, *revs))
        return Diff(parse_raw(raw), parse_patch(patch))


def _shown(args: tuple[str, ...]) -> str:
    """A git command line for a message: the subcommand and its first options."""
    return " ".join(("git", *args[:3], *(("...",) if len(args) > 3 else ())))


def list_paths(git: Git, *options: str) -> list[str]:
    """``git ls-files -z OPTIONS -- .``: paths relative to where git runs.

    A listing of untracked files (``--others``) has :data:`LISTING_TIMEOUT`; its time-out says
    how to do without it (:data:`UNTRACKED_HINT`).
    """
    untracked = "--others" in options
    try:
        raw = git.run(
            "ls-files", "-z", *options, "--", ".", timeout=LISTING_TIMEOUT if untracked else TIMEOUT
        )
    except GitError as exc:
        if untracked and "timed out" in str(exc):
            raise GitError(f"{exc}: {UNTRACKED_HINT}") from None
        raise
    return [decode_path(p) for p in raw.split(b"\0") if p]


def git_root(path: str) -> str | None:
    """The top of the git work tree containing ``path``, or None."""
    if not git_available():
        return None
    where = path if os.path.isdir(path) else os.path.dirname(path) or "."
    git = Git(where)
    try:
        out = git.run("rev-parse", "--show-toplevel")
    except CrystalError as exc:
        if "dubious ownership" in str(exc):
            # a silent directory walk would ignore nested .gitignore files and --new-since
            raise CrystalError(
                f"git refuses the repository at {where} (dubious ownership: another user owns"
                f" it); run as its owner or add it with `git config --global --add"
                f" safe.directory <path>`"
            ) from None
        if git.run("rev-parse", "--is-bare-repository", check=False).strip() == b"true":
            raise CrystalError(
                f"{where} is a bare git repository: it has no files to scan"
            ) from None
        return None
    top = decode_path(out).strip()
    return top or None


def since(root: str, ref: str) -> tuple[Git, str]:
    """The repository of ``root`` and the commit ``--new-since ref`` names (user errors raised)."""
    if git_root(root) is None:
        raise CrystalError("--new-since needs a git repository (and git installed)")
    git = Git(root)
    commit = None if ref.startswith("-") else git.commit(ref)
    if commit is None:
        raise CrystalError(f"--new-since: unknown git revision {ref!r}")
    return git, commit


def changed_lines(root: str, ref: str, untracked: bool = True) -> dict[str, Spans]:
    """Lines added or changed since ``ref`` (work tree against ref), plus untracked files whole.

    Paths are relative to ``root`` (only files under it). One ``git diff`` for all files,
    without rename detection: a renamed file counts as new in every line, as its lines are new
    at that path. ``untracked`` false (``tracked-only``): untracked files are not listed.
    """
    git, commit = since(root, ref)
    out = dict(git.diff(commit, renames=False, relative=True).patch.added)
    if untracked:
        for name in list_paths(git, "--others", "--exclude-standard"):
            out[name] = [(1, WHOLE_FILE)]
    return out


def unquote(raw: bytes) -> bytes:
    """Undo git's C-style quoting of a path (``"a/new\\nline.py"``); unquoted input is kept."""
    if not raw.startswith(b'"'):
        return raw
    out = bytearray()
    i = 1
    while i < len(raw) and raw[i] != ord('"'):
        c = raw[i]
        if c == ord("\\") and i + 1 < len(raw):
            nxt = raw[i + 1]
            if ord("0") <= nxt <= ord("7"):
                out.append(int(raw[i + 1 : i + 4], 8))
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return bytes(out)


@dataclass(frozen=True)
class RawEntry:
    """One line of ``git diff --raw -z``."""

    status: str
    old_mode: str
    new_mode: str
    old_sha: str
    new_sha: str
    old_path: str
    new_path: str

    @property
    def old_is_file(self) -> bool:
        """The old side is a regular file with content."""
        return self.old_mode in REGULAR_MODES and not ZERO_SHA.match(self.old_sha)

    @property
    def new_is_file(self) -> bool:
        """The new side is a regular file (its id may be zeros for the work tree)."""
        return self.new_mode in REGULAR_MODES


def parse_raw(out: bytes) -> list[RawEntry]:
    """Entries of ``git diff --raw -z`` (renames and copies carry two paths)."""
    fields = out.split(b"\0")
    entries = []
    i = 0
    while i < len(fields) and fields[i].startswith(b":"):
        meta = fields[i][1:].decode().split()
        old_mode, new_mode, old_sha, new_sha, status = meta[:5]
        letter = status[0]
        if letter in "RC":
            old, new = fields[i + 1], fields[i + 2]
            i += 3
        else:
            old = new = fields[i + 1]
            i += 2
        entries.append(
            RawEntry(
                letter, old_mode, new_mode, old_sha, new_sha, decode_path(old), decode_path(new)
            )
        )
    return entries


@dataclass
class Patch:
    """Line numbers a ``-U0`` patch adds (new side) and removes (old side), per path."""

    added: dict[str, Spans] = field(default_factory=dict)
    removed: dict[str, Spans] = field(default_factory=dict)
    hunks: dict[str, list[Hunk]] = field(default_factory=dict)
    """Per new path, each hunk's old start and count and new start and count (git's numbers)."""


@dataclass(frozen=True)
class Diff:
    """What :meth:`Git.diff` reads: the ``--raw`` entries and the patch's line numbers."""

    entries: list[RawEntry]
    patch: Patch


def _patch_path(line: bytes, prefix: bytes) -> str | None:
    name = line[4:]
    if name.endswith(b"\t"):  # git appends a tab when the name has a space
        name = name[:-1]
    if name == b"/dev/null":
        return None
    name = unquote(name)
    return decode_path(name[len(prefix) :] if name.startswith(prefix) else name)


def parse_patch(patch: bytes) -> Patch:
    """Parse a ``git diff -U0 --src-prefix=a/ --dst-prefix=b/`` patch (hunk bodies skipped)."""
    out = Patch()
    old_path: str | None = None
    new_path: str | None = None
    lines = patch.split(b"\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith(b"diff --git "):
            old_path = new_path = None
        elif line.startswith(b"--- "):
            old_path = _patch_path(line, b"a/")
        elif line.startswith(b"+++ "):
            new_path = _patch_path(line, b"b/")
        elif line.startswith(b"@@ "):
            match = _HUNK.match(line)
            if match is None:
                continue
            old_start, old_count = int(match[1]), int(match[2] or 1)
            new_start, new_count = int(match[3]), int(match[4] or 1)
            if old_count and old_path is not None:
                out.removed.setdefault(old_path, []).append((old_start, old_start + old_count - 1))
            if new_count and new_path is not None:
                out.added.setdefault(new_path, []).append((new_start, new_start + new_count - 1))
            if new_path is not None:
                out.hunks.setdefault(new_path, []).append(
                    (old_start, old_count, new_start, new_count)
                )
            # skip the body: old_count '-' lines and new_count '+' lines ("\ No newline" aside)
            left = old_count + new_count
            while left and i < len(lines):
                if not lines[i].startswith(b"\\"):
                    left -= 1
                i += 1
    return out


def split_raw_and_patch(out: bytes) -> tuple[bytes, bytes]:
    """Split ``git diff --raw -p -z`` output: NUL-separated entries, an empty field, the patch."""
    if not out.startswith(b":"):
        return b"", out
    raw, sep, patch = out.partition(b"\0\0")
    return (raw + b"\0", patch) if sep else (raw, b"")


@dataclass(frozen=True)
class IndexEntry:
    """A regular file of a listing (index or tree): path, blob id and mode."""

    path: str
    sha: str
    mode: str


def _records(out: bytes) -> Iterator[tuple[list[str], str]]:
    """The fields before the tab and the path of each ``META\tPATH`` record of a listing."""
    for record in out.split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            yield meta.decode().split(), decode_path(path)


def parse_ls_files(out: bytes) -> list[IndexEntry]:
    """Regular files at stage 0 of ``git ls-files -s -z`` (symlinks, submodules, conflicts out)."""
    return [
        IndexEntry(path, sha, mode)
        for (mode, sha, stage), path in _records(out)
        if stage == "0" and mode in REGULAR_MODES
    ]


def parse_ls_tree(out: bytes) -> list[IndexEntry]:
    """Regular files of ``git ls-tree -r -z --full-tree``."""
    return [
        IndexEntry(path, sha, mode)
        for (mode, kind, sha), path in _records(out)
        if kind == "blob" and mode in REGULAR_MODES
    ]
