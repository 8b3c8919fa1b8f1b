"""``crystal-clones``: report clone-like code a commit adds, compared with the whole repository.

The pre-commit hook (id ``crystal-clones``) and the plain git hook (``hooks/pre-commit``) both
run this. It is an adapter: git tells it what the commit adds (:mod:`.staged`), the core's
:func:`crystal_lsp.clones.scan.run_scan` finds the clone classes of the snippets overlapping added
lines against every file of the repository at its staged state (sharing the on-disk index with
``crystal-lsp scan`` and the language server), and :mod:`.moves` drops code the same commit
removes elsewhere. What it checks depends on how it is called:

* **staged** (the default; ``pre-commit`` stage): the index against ``HEAD``. pre-commit passes
  the staged files; without file names, every staged file is checked.
* **range** (``--from-ref``/``--to-ref``, which pre-commit sets in the ``pre-push`` stage and
  for ``run --from-ref X --to-ref Y``): the lines the commits add.
* **files** (``--all``, or file names that are not all staged, as with
  ``pre-commit run --all-files``, ``--files`` or ``--hook-stage manual``): every clone in the
  given files, against the repository as it is on disk.

Exit codes (:func:`crystal_lsp.errors.run_guarded`, the boundary ``crystal-lsp`` uses too): 0
nothing found (or ``--warn-only``), 1 clone-like additions, 2 usage or configuration error (a
failing git too: ``git failed: ...``), 3 internal error (with a trace on stderr, never mistaken
for findings), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crystal_lsp.clones.created import (
    Before,
    Verdict,
    created_copies,
    only_moved,
    read_file,
    scan_before,
)
from crystal_lsp.clones.files import filter_paths, list_files
from crystal_lsp.clones.findings import Finding, at_level, display_path
from crystal_lsp.clones.git import Git, Spans, git_env, git_root
from crystal_lsp.clones.options import add_scan_options, command_line_overrides
from crystal_lsp.clones.reports.baseline import load_baseline, without_baselined
from crystal_lsp.clones.scan import ScanResult, open_store, run_scan
from crystal_lsp.clones.settings import ScanConfig, load_config
from crystal_lsp.errors import EXIT_FINDINGS, EXIT_OK, JOBS, CrystalError, run_guarded
from crystal_lsp.version import __version__

from .report import (
    FILES,
    PROG,
    Key,
    Outcome,
    StderrProgress,
    addition_for,
    note,
    summary,
)
from .staged import (
    Change,
    new_state_contents,
    old_contents,
    range_change,
    staged_change,
)

if TYPE_CHECKING:
    from crystal_lsp.clones.index import RepoIndex
    from crystal_lsp.clones.store import Store

    from .moves import Piece

WHOLE_FILE: Spans = [(1, 2**31 - 1)]
MAX_WARNINGS = 10
NEXT_STEP = (
    f"{PROG}: call or extend the original instead of copying it; if the copy is meant, mark it "
    "with a `crystal: ignore` comment on its first line; to commit anyway: git commit --no-verify"
)
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Request:
    """Everything :func:`check_clones` needs besides the repository."""

    filenames: tuple[str, ...] = ()
    all_files: bool = False
    from_ref: str | None = None
    to_ref: str | None = None
    baseline: str | None = None
    jobs: int | None = None


def repo_paths(cwd: str | None = None) -> tuple[str, str]:
    """The work tree's root and its git directory (a :class:`CrystalError` outside one)."""
    git = Git(cwd or os.getcwd(), git_env(cwd=cwd))
    try:
        top = git.run("rev-parse", "--show-toplevel")
        git_dir = git.run("rev-parse", "--absolute-git-dir")
    except CrystalError as exc:
        if "dubious ownership" in str(exc):
            git_root(cwd or os.getcwd())  # raises the error that says so
        raise CrystalError("not inside a git work tree") from None
    root, gdir = (
        top[:-1].decode("utf-8", "surrogateescape"),
        git_dir[:-1].decode("utf-8", "surrogateescape"),
    )
    if not root:
        raise CrystalError("not inside a git work tree")
    return root, gdir


def _relative(root: str, name: str) -> str:
    absolute = os.path.abspath(name)
    real = os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))
    rel = os.path.relpath(real, os.path.realpath(root))
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        raise CrystalError(f"{name}: outside the repository {root}")
    return rel.replace(os.sep, "/")


def check_clones(
    root: str,
    git_dir: str,
    config: ScanConfig,
    request: Request,
    progress: Progress | None = None,
) -> Outcome:
    """Find the clone-like additions of a change (see the module docstring); no output."""
    started = time.perf_counter()
    git = Git(root, git_env())
    names = [_relative(root, n) for n in request.filenames]
    change: Change | None = None
    if not request.all_files:
        if request.from_ref and request.to_ref:
            change = range_change(git, request.from_ref, request.to_ref)
        else:
            change = staged_change(git, git_dir)
            if names and not change.merging and not set(names) <= change.staged:
                change = None  # explicit files (pre-commit run --all-files / --files)
    if change is None:
        outcome = _check_files(root, config, request, names, progress)
    else:
        outcome = _check_change(root, git, change, config, request, names, progress)
    outcome.seconds = time.perf_counter() - started
    return outcome


def _check_change(
    root: str,
    git: Git,
    change: Change,
    config: ScanConfig,
    request: Request,
    names: list[str],
    progress: Progress | None,
) -> Outcome:
    corpus = filter_paths(sorted(change.files), config)
    in_corpus = set(corpus)
    targets = set(names) & set(change.changed) if names else set(change.changed)
    focus = {p: change.added[p] for p in sorted(targets & in_corpus) if p in change.added}
    outcome = Outcome(change.kind, files=len(focus))
    if not focus:
        return outcome  # nothing added: no need to look at the index at all
    overrides = new_state_contents(git, change, change.dirty & in_corpus)
    with open_store(root) as store:
        # Moved code is matched in the index, and only a change that removes lines can move
        # code: without one, a result served from the cache loads neither the index nor numpy.
        index = _index(root, config, store, request) if change.old_blobs else None
        result = run_scan(
            root,
            corpus,
            config,
            store=store,
            overrides=overrides,
            focus_lines=focus,
            progress=progress,
            jobs=request.jobs,
            index=index,
        )
        _record(outcome, result, set(focus))
        findings = _apply_baseline(result.findings, request, outcome, config)
        verdicts, before = _created(
            root, git, change, config, store, request, corpus, overrides, focus, findings
        )
        kept = {id(v.finding) for v in verdicts}
        moves = sum(
            1
            for f in findings
            if before is not None and id(f) not in kept and only_moved(f, focus, before)
        )
        outcome.moves += moves
        outcome.existing = len(findings) - len(verdicts) - moves
        moved: dict[Key, Piece] = {}
        if verdicts and index is not None:
            if result.cached:
                index.refresh(corpus, overrides)
            moved = _moved_pieces(root, git, change, config, store, request, index, focus, before)
    for verdict in verdicts:
        addition = addition_for(verdict.finding, focus, moved, verdict=verdict)
        if addition is None:
            outcome.moves += 1
        else:
            outcome.additions.append(addition)
    return outcome


def _moved_pieces(
    root: str,
    git: Git,
    change: Change,
    config: ScanConfig,
    store: Store,
    request: Request,
    index: RepoIndex,
    focus: dict[str, Spans],
    before: Before | None,
) -> dict[Key, Piece]:
    """Added snippets the change moved from removed ones (:mod:`.moves`)."""
    from .moves import added_pieces, match_moves, removed_pieces

    old_index = _index(root, config, store, request)
    removed = removed_pieces(old_index, old_contents(git, change), change.removed)
    # removed code the line-level move map already gave to added code moved there cannot
    # explain a second place too
    if before is not None:
        removed = [r for r in removed if not before.claims(r.path, r.first_line, r.last_line)]
    if not removed:
        return {}
    return match_moves(index, added_pieces(index, focus), removed, change.renamed_from)


def _created(
    root: str,
    git: Git,
    change: Change,
    config: ScanConfig,
    store: Store,
    request: Request,
    corpus: list[str],
    overrides: dict[str, bytes],
    focus: dict[str, Spans],
    findings: list[Finding],
) -> tuple[list[Verdict], Before | None]:
    """The findings with a copy the change creates (:mod:`crystal_lsp.clones.created`)."""
    if not findings or change.diff is None:
        return [], None
    # the new state: staged blobs where the work tree differs, the work tree elsewhere
    before = Before.of(
        git,
        change.diff,
        read=lambda path: overrides[path] if path in overrides else read_file(root, path),
    )

    def run(
        paths: list[str], old: dict[str, bytes], old_focus: Mapping[str, Spans]
    ) -> list[Finding]:
        unchanged = {p: d for p, d in overrides.items() if p not in change.changed}
        return run_scan(
            root,
            paths,
            config,
            store=store,
            overrides={**unchanged, **old},
            focus_lines=old_focus,
            jobs=request.jobs,
        ).findings

    def scan(old_focus: Mapping[str, Spans]) -> list[Finding]:
        return scan_before(before, corpus, old_focus, run, lambda p: filter_paths(p, config))

    verdicts, _ = created_copies(findings, focus, before, scan)
    return verdicts, before


def _check_files(
    root: str,
    config: ScanConfig,
    request: Request,
    names: list[str],
    progress: Progress | None,
) -> Outcome:
    corpus = list_files(root, config)
    listed = set(corpus)
    targets = filter_paths(sorted(set(names)), config) if names else list(corpus)
    extra = {p for p in targets if p not in listed and os.path.isfile(os.path.join(root, p))}
    paths = sorted(listed | extra)
    wanted = {p for p in targets if p in listed or p in extra}
    focus = None if wanted >= set(paths) else {p: WHOLE_FILE for p in sorted(wanted)}
    outcome = Outcome(FILES, files=len(wanted))
    if focus is not None and not focus:
        return outcome
    with open_store(root) as store:
        result = run_scan(
            root,
            paths,
            config,
            focus_lines=focus,
            progress=progress,
            index=_index(root, config, store, request),
        )
    _record(outcome, result, wanted)
    for finding in _apply_baseline(result.findings, request, outcome, config):
        addition = addition_for(finding, focus, {}, new=False)
        if addition is not None:
            outcome.additions.append(addition)
    return outcome


def _index(root: str, config: ScanConfig, store: Store, request: Request) -> RepoIndex:
    """A repository index (imported on use: numpy and the lexers come with it)."""
    from crystal_lsp.clones.index import RepoIndex

    return RepoIndex(root, config, store, jobs=request.jobs)


def _record(outcome: Outcome, result: ScanResult, checked: set[str]) -> None:
    """Count the checked files the index took, and keep the reasons worth a note."""
    mine = [(p, r) for p, r in result.skipped if p in checked]
    outcome.cached = result.cached
    outcome.corpus = result.files
    outcome.files -= len({p for p, _ in mine})
    outcome.skipped = [(p, r) for p, r in mine if not _routine_skip(r)]


def _routine_skip(reason: str) -> bool:
    """Files that are not code the tool compares: no note needed."""
    return reason.startswith("not indexed") or reason in ("unknown language", "no-code")


def _apply_baseline(
    findings: list[Finding], request: Request, outcome: Outcome, config: ScanConfig
) -> list[Finding]:
    """The findings the hook reports: not baselined, and copies (all levels with the setting)."""
    if request.baseline:
        kept = without_baselined(findings, load_baseline(request.baseline))
        outcome.baselined = len(findings) - len(kept)
        findings = kept
    shown = at_level(findings, config.show_similar)
    outcome.similar = len(findings) - len(shown)
    return shown


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``crystal-clones``."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Report code a commit adds that looks like a copy of code already in the "
        "repository (or of other staged code). Settings come from [tool.crystal-lsp] in "
        "pyproject.toml; options override them.",
        epilog="exit codes: 0 nothing found (or --warn-only), 1 clone-like additions, "
        "2 usage or configuration error, 3 internal error",
    )
    p.add_argument(
        "filenames",
        nargs="*",
        help="Filenames pre-commit believes are changed (after --, which the hook's args end with).",
    )
    add_scan_options(p)
    p.add_argument("--baseline", metavar="FILE", help="do not report findings in this baseline")
    p.add_argument(
        "--warn-only", action="store_true", help="report findings but exit 0 (do not block)"
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="check every clone in the given files (all files if none), not just added code",
    )
    p.add_argument(
        "--from-ref",
        metavar="REF",
        default=os.environ.get("PRE_COMMIT_FROM_REF") or None,
        help="check the lines added since this commit (default: $PRE_COMMIT_FROM_REF)",
    )
    p.add_argument(
        "--to-ref",
        metavar="REF",
        default=os.environ.get("PRE_COMMIT_TO_REF") or None,
        help="... up to this commit (default: $PRE_COMMIT_TO_REF)",
    )
    p.add_argument("--jobs", type=JOBS, metavar="N", help="tokenizer processes for a cold index")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars on stderr (default: when stderr is a terminal)",
    )
    p.add_argument(
        "--format",
        choices=("text", "agent"),
        default="text",
        help="agent: one line per copy (original ~ new copy) and the summary, all on stdout",
    )
    p.add_argument(
        "--max-warnings",
        type=_count,
        default=MAX_WARNINGS,
        metavar="N",
        help=f"print at most N findings and count the rest (default {MAX_WARNINGS}; 0: all)",
    )
    p.add_argument("-V", "--version", action="version", version=f"%(prog)s {__version__}")
    return p


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value}")
    return value


def run(args: argparse.Namespace) -> int:
    """Run the check for parsed arguments: print the findings and return the exit code."""
    if bool(args.from_ref) != bool(args.to_ref):
        raise CrystalError("give both --from-ref and --to-ref")
    root, git_dir = repo_paths()
    config = load_config(root, command_line_overrides(args))
    baseline = args.baseline
    if baseline and not os.path.isabs(baseline) and not os.path.exists(baseline):
        baseline = os.path.join(root, baseline)  # relative to the root, like pyproject.toml
    request = Request(
        tuple(args.filenames),
        args.all,
        args.from_ref,
        args.to_ref,
        baseline,
        args.jobs,
    )
    progress = StderrProgress(sys.stderr.isatty() if args.progress is None else args.progress)
    try:
        outcome = check_clones(root, git_dir, config, request, progress)
    finally:
        progress.close()
    agent = args.format == "agent"
    limit = args.max_warnings or len(outcome.additions)
    for addition in outcome.additions[:limit]:
        sys.stdout.write((addition.agent_line() if agent else addition.line()) + "\n")
    rest = len(outcome.additions) - limit
    if rest > 0:
        sys.stdout.write(f"... and {rest} more (--max-warnings {args.max_warnings})\n")
    if agent:
        # an agent reads stdout only: the summary goes there too, with what to do
        advice = "; reuse the original on the left of each ~" if outcome.additions else ""
        sys.stdout.write(summary(outcome, config) + advice + "\n")
    sys.stdout.flush()
    if not agent:
        note(summary(outcome, config))
        if outcome.additions and outcome.mode != FILES:
            note(NEXT_STEP)
    for path, reason in outcome.skipped:
        note(f"{PROG}: not checked {display_path(path)}: {reason}")
    if outcome.additions and not args.warn_only:
        return EXIT_FINDINGS
    return EXIT_OK


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; a file name that would be read as an option is refused.

    File names follow ``--`` (the hook's default ``args``, ``[--]``); without it, an argument
    that starts with ``-`` and names an existing file is ambiguous -- a staged file called
    ``--warn-only`` must never switch the check off -- so it is a usage error, not a guess.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" not in args:
        for arg in args:
            if arg.startswith("-") and arg != "-" and os.path.lexists(arg):
                raise CrystalError(
                    f"{display_path(arg)} is a file name that reads as an option: put -- "
                    "before the file names (end the hook's args: with --)"
                )
    return build_parser().parse_args(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``crystal-clones``; returns the exit code (see the module docstring)."""
    return run_guarded(PROG, lambda: run(parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
