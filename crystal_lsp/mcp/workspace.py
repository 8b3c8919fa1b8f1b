"""The repository behind ``crystal-lsp mcp``: its index, clone finder and last scan.

The index, the clone finder and the result cache are those of ``crystal-lsp scan``, ``serve``
and the pre-commit hook (the same on-disk store, keyed by the settings signature), so a folder
scanned before starts warm. All of it is touched only on the workspace's single worker thread:
the background build first, then every tool call in arrival order, so concurrent calls are
serialized without locks and never block the event loop. A snippet checked by
``check_duplication`` joins the index as an *override* for the duration of one search, exactly
as the language server's unsaved buffers do, and leaves it afterwards.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError

from crystal_lsp.clones.created import change_since, keep_created
from crystal_lsp.clones.files import filter_paths, list_files
from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.findings import Finding, at_level, display_path
from crystal_lsp.clones.index import FileState, RepoIndex
from crystal_lsp.clones.scan import ScanResult, run_scan
from crystal_lsp.clones.settings import ScanConfig, load_config
from crystal_lsp.clones.store import Store, repo_cache_dir
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.sset import TriviallySharedSet, builtin_sset
from crystal_lsp.text.entries import OK, Entry, build_entry
from crystal_lsp.text.fingerprints import content_sha
from crystal_lsp.text.lexers import GENERIC, canonical_name, lexer_by_language, resolve_lexer

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_GUESSES = 4
SNIPPET_KEY = "\0snippet"
"""The index key of a checked snippet (no file on disk has a NUL in its path)."""


class ToolInputError(ToolError):
    """Bad arguments of a tool call (answered as a tool error, ``isError``)."""


@dataclass
class Status:
    """Where the background indexing is (read by the event loop, written by the worker)."""

    state: str = "indexing"
    phase: str = "starting"
    done: int = 0
    total: int = 1
    message: str = ""
    files: int = 0
    seconds: float = 0.0
    started: float = field(default_factory=time.perf_counter)

    def note(self) -> str:
        """What a call that could not wait for the index tells the agent: where it is, how long."""
        elapsed = time.perf_counter() - self.started
        where = f"{self.phase}: {self.done:,} of {self.total:,}" if self.total > 1 else self.phase
        left = ""
        if self.phase == "tokenizing" and 0 < self.done < self.total:
            more = elapsed * (self.total - self.done) / self.done
            left = f"; about {more:.0f} s more for this step, then the clone finder"
        retry = max(5, min(60, round(elapsed)))
        return (
            f"not answered yet: the repository's index is being built ({where} after "
            f"{elapsed:.0f} s{left}); nothing was checked. Call again in about {retry} s. "
            "The index is cached on disk: later starts answer in seconds."
        )


@dataclass
class SnippetMatch:
    """A finding holding the checked snippet, as the worker found it."""

    finding: Finding
    entry: Entry
    language: str


TOO_SHORT = "too-short"
"""The status of a snippet with fewer tokens than the smallest copy (``minTokens``)."""


@dataclass
class CheckOutcome:
    """What ``check_duplication`` found for one snippet."""

    language: str
    status: str
    tokens: int
    matches: list[SnippetMatch] = field(default_factory=list)
    ignore: frozenset[tuple[str, ...]] = frozenset()
    texts: dict[str, list[str]] = field(default_factory=dict)
    """Raw tokens of every other location's file lines, keyed by ``path:first-last``."""
    guessed: tuple[str, ...] = ()
    """The languages the snippet was checked as when none was given (else empty)."""

    def strength(self) -> float:
        """How strongly the snippet repeats code: its best pair's copied tokens x similarity."""
        return max(
            (p.copied * p.similarity for m in self.matches for p in m.finding.pairs), default=0.0
        )


NOTE_FILES = 50
WAIT_SECONDS = 5.0
"""How long a tool call waits for the first index before it answers with where the index is."""
"""An indexing of at least this many files is told on stderr (the protocol is on stdout)."""


def _stderr(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # pragma: no cover - stderr closed
        pass


class Workspace:
    """One repository root served over MCP (see the module docstring)."""

    def __init__(self, root: str, jobs: int | None = None, wait: float = WAIT_SECONDS) -> None:
        self.root = os.path.realpath(root)
        self.wait = wait
        self.config: ScanConfig = load_config(self.root)
        self.store = Store(repo_cache_dir(self.root))
        self.index = RepoIndex(self.root, self.config, self.store, jobs=jobs)
        self._only: str | None = None
        self.finder = CloneFinder(self.index, memoize_retrieval=True, pair_filter=self._compared)
        self.paths: list[str] = []
        self.status = Status()
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="crystal-mcp")
        self.built: concurrent.futures.Future[None] | None = None
        self._notes = 0
        self._noted = time.perf_counter()

    # ------------------------------------------------------------------ threading
    def start(self) -> concurrent.futures.Future[None]:
        """Start indexing in the background (once); the future ends when the index is ready."""
        if self.built is None:
            self.built = self.executor.submit(self._build)
        return self.built

    def submit(self, fn: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        """Run ``fn`` on the worker, after the build and every earlier call."""
        return self.executor.submit(fn, *args)

    def close(self) -> None:
        """Stop the worker (queued calls are dropped) and close the cache."""
        self.executor.shutdown(wait=False, cancel_futures=True)
        try:
            self.store.close()
        except Exception:  # pragma: no cover - closing is best effort
            log.debug("closing the cache failed", exc_info=True)

    def _compared(self, a: str, b: str) -> bool:
        """While a snippet is checked, only its pairs are aligned (see :meth:`check`)."""
        return self._only is None or self._only in (a, b)

    # ------------------------------------------------------------------ building
    def _progress(self, phase: str, done: int, total: int) -> None:
        status = self.status
        status.phase, status.done, status.total = phase, done, max(total, 1)
        if phase == "tokenizing" and total >= NOTE_FILES:
            self._note(done, total)

    def _note(self, done: int, total: int) -> None:
        """A line on stderr at the start and each quarter of a long indexing, with time left."""
        quarter = 4 * done // total
        if done <= 1 and self._notes == 0:
            self._noted = time.perf_counter()
            self._notes = 1
            _stderr(
                f"crystal-lsp mcp: indexing {total} files (first run or many changes; later "
                "starts reuse the cache; tools answer once it is done)"
            )
        elif quarter >= self._notes:
            self._notes = quarter + 1
            seconds = time.perf_counter() - self._noted
            left = f", about {seconds * (total - done) / done:.0f} s left" if done < total else ""
            _stderr(f"crystal-lsp mcp: indexed {done}/{total} files ({seconds:.0f} s{left})")

    def _build(self) -> None:
        started = self.status.started = time.perf_counter()
        try:
            self._progress("listing files", 0, 1)
            self.paths = list_files(self.root, self.config)
            self.index.refresh(self.paths, progress=self._progress)
            # a full scan (its pairs cached for the next start): what each snippet is then
            # compared against, aligning only the snippet
            self.finder.find(progress=self._progress)
        except Exception as exc:
            self.status.state, self.status.message = "error", str(exc)
            log.exception("indexing %s failed", self.root)
            raise
        self.status.files = sum(1 for s in self.index.files.values() if not s.override)
        self.status.seconds = time.perf_counter() - started
        self.status.state, self.status.phase = "ready", "ready"
        log.info("indexed %d files in %.1f s", self.status.files, self.status.seconds)

    # ------------------------------------------------------------------ languages
    def canonical_language(self, language: str) -> str:
        """The canonical name of a language name or alias (a tool error when unknown)."""
        try:
            return canonical_name(lexer_by_language(language))
        except CrystalError as exc:
            raise ToolInputError(str(exc)) from None

    def explicit_language(self, language: str | None, path: str | None, code: str) -> str | None:
        """A snippet's language when it is known: given, else from its path's name or a shebang.

        None: it would have to be guessed (:meth:`guess_languages`, once the index is ready).
        """
        if language:
            return self.canonical_language(language)
        name = canonical_name(resolve_lexer(None, path, code, guess=False))
        return None if name == GENERIC else name

    def guess_languages(self, code: str) -> list[str]:
        """The languages a snippet of unknown language may be in, likeliest first (worker thread).

        The repository's own languages (at most :data:`MAX_GUESSES`, Pygments' guess first when
        it is one of them, then by number of files); Pygments' guess alone in a repository
        without code. A guess is only a guess: callers say so.
        """
        counts = Counter(
            s.entry.language
            for s in self.index.files.values()
            if not s.override and s.entry.status == OK
        )
        guess = canonical_name(resolve_lexer(None, None, code, guess=True))
        if not counts:
            if guess == GENERIC:
                raise ToolInputError("cannot tell the language of the code: pass language or path")
            return [guess]
        ranked = sorted(counts, key=lambda lang: (lang != guess, -counts[lang], lang))
        return ranked[:MAX_GUESSES]

    def confine(self, path: str) -> str:
        """``path`` relative to the root (``/``-separated); refuses anything outside it."""
        if not path or "\0" in path:
            raise ToolInputError("path must be a non-empty file path")
        absolute = os.path.realpath(os.path.join(self.root, path))
        if os.path.commonpath([self.root, absolute]) != self.root or absolute == self.root:
            raise ToolInputError(f"{display_path(path)}: outside the repository root")
        return os.path.relpath(absolute, self.root).replace(os.sep, "/")

    # ------------------------------------------------------------------ tools (worker)
    def check(self, code: str, language: str | None, path: str | None) -> CheckOutcome:
        """The findings that hold the snippet ``code`` (worker thread).

        Without a language, the snippet is checked as each language :meth:`guess_languages`
        names, and the outcome with the strongest copy is kept (``guessed`` lists them all).
        """
        if path is not None:
            path = self.indexed_name(path)
        if language is not None:
            return self._check(code, language, path)
        tried = self.guess_languages(code)
        outcomes = [self._check(code, lang, path) for lang in tried]
        best = max(outcomes, key=lambda o: o.strength())  # the first of equals: the likeliest
        best.guessed = tuple(tried)
        return best

    def _check(self, code: str, language: str, path: str | None) -> CheckOutcome:
        entry = build_entry(
            path or SNIPPET_KEY,
            code,
            language,
            min_tokens=self.config.min_tokens,
            min_lines=self.config.min_lines,
        )
        outcome = CheckOutcome(language, entry.status, entry.token_count)
        if entry.status == OK and entry.token_count < self.config.min_tokens:
            outcome.status = TOO_SHORT  # no copy is that short: nothing to check, in any language
        if outcome.status != OK:
            return outcome
        sha = content_sha(code.encode("utf-8", "surrogatepass"))
        self.index.files[SNIPPET_KEY] = FileState(SNIPPET_KEY, sha, entry, True)
        # The snippet can move a seed across the max-df cut, which would have every file holding
        # that seed aligned afresh against all others; only the snippet's own pairs matter here
        # (the other pairs come from the last full scan), so only they are aligned.
        self._only = SNIPPET_KEY
        try:
            found = self.finder.find({SNIPPET_KEY: None}).get(language)
            outcome.ignore = self.index.sets(language).raw.as_frozenset()
        finally:
            self._only = None
            self.index.files.pop(SNIPPET_KEY, None)
        shown = at_level(found.findings, self.config.show_similar) if found is not None else []
        for finding in shown:
            outcome.matches.append(SnippetMatch(finding, entry, language))
            for loc in finding.locations:
                if loc.path != SNIPPET_KEY and loc.path in self.index.files:
                    key = f"{loc.path}:{loc.first_line}-{loc.last_line}"
                    outcome.texts[key] = self.lines_tokens(loc.path, loc.first_line, loc.last_line)
        return outcome

    def indexed_name(self, path: str) -> str:
        """An indexed file named by its path or as answers show it (:func:`display_path`)."""
        if path in self.index.files:
            return path
        return next((p for p in self.index.files if display_path(p) == path), path)

    def lines_tokens(self, path: str, first: int, last: int) -> list[str]:
        """The raw tokens of lines ``first``..``last`` (1-based) of an indexed file."""
        import bisect

        heavy = self.index.heavy(path)
        start = bisect.bisect_left(heavy.lines, first - 1)
        end = bisect.bisect_right(heavy.lines, last - 1)
        return list(heavy.texts[start:end])

    def scan(self, new_since: str | None = None) -> ScanResult:
        """A scan of the repository as it is on disk now (the cached result when unchanged)."""
        self.paths = list_files(self.root, self.config)
        focus = None
        before = None
        if new_since:
            wanted = set(self.paths)
            added, before = change_since(
                self.root, new_since, untracked=not self.config.tracked_only
            )
            focus = {p: s for p, s in added.items() if p in wanted}
        result = run_scan(
            self.root,
            self.paths,
            self.config,
            focus_lines=focus,
            index=self.index,
            finder=self.finder,
        )
        if before is not None and focus is not None:
            # the same rule as the hook: only copies the change creates
            config = self.config
            keep = lambda p: filter_paths(p, config)  # noqa: E731
            keep_created(result, focus, before, self.paths, keep, self.index.store)
        return result

    def file_findings(self, path: str) -> list[Finding]:
        """The findings of a scan with a copy in one indexed file (worker thread)."""
        scanned = self.scan()
        path = self.indexed_name(path)
        if path not in self.index.files:
            raise ToolInputError(f"{display_path(path)}: not an indexed file of the repository")
        shown = at_level(scanned.findings, self.config.show_similar)
        return [f for f in shown if any(loc.path == path for loc in f.locations)]

    def sset(self, language: str) -> tuple[TriviallySharedSet, str]:
        """The raw-view S set of a language and where it comes from (worker thread)."""
        if any(
            s.entry.language == language and s.entry.status == OK and not s.override
            for s in self.index.files.values()
        ):
            return self.index.sets(language).raw, "index"
        bundled = builtin_sset(language)
        if bundled is not None:
            return bundled, "built-in"
        return TriviallySharedSet({}, k=0, language=language), "none"
