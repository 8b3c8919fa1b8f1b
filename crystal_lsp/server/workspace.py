"""One workspace folder: its repository index, clone finder and the open buffers layered on top.

All index and finder work of a folder runs on the folder's single worker thread, so it is
serialized without locks and never blocks the event loop. Building the index (start-up, settings
changes, ``crystal.rebuildIndex``) runs on its own thread and produces a new index that the
worker swaps in, so a rebuild does not stop diagnostics.

Open documents are handled so that the clone finder never rebuilds its retrieval structures
while someone types:

* a buffer whose content equals the file on disk is checked as that indexed file;
* a modified buffer is added to the index under a private key (``"\\0" + path``) as an
  *override* (see :mod:`crystal_lsp.clones.finder`), next to the file's on-disk entry, which stays in
  the retrieval index; findings are then shown with the buffer's path, and copies in the on-disk
  version of any modified buffer are dropped (they are the buffer's old self).

The index lives in the same on-disk cache as ``crystal-lsp scan`` and the pre-commit hook.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from crystal_lsp.clones.files import filter_paths, list_files
from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.findings import Finding, Location
from crystal_lsp.clones.index import FileState, RepoIndex
from crystal_lsp.clones.reports.sidebyside import token_span
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store, cache_root, repo_cache_dir
from crystal_lsp.errors import CrystalError
from crystal_lsp.server.buffers import Buffer, DocResult, DocumentSnapshot, entry_summary, present
from crystal_lsp.server.memory import release_memory
from crystal_lsp.text.entries import GENERATED, MINIFIED, NO_CODE, OK, Entry, Heavy
from crystal_lsp.text.fingerprints import content_sha, text_sha
from crystal_lsp.text.incremental import IncrementalEntry
from crystal_lsp.text.lexers import (
    GENERIC,
    PROGRAMMING_LANGUAGES,
    canonical_name,
    lexer_by_language,
    resolve_lexer,
)
from crystal_lsp.text.sources import SkippedFile, read_source

log = logging.getLogger(__name__)

T = TypeVar("T")
Progress = Callable[[str, int, int], None]


def disk_version(path: str) -> str | None:
    """The file on disk a modified buffer (indexed as ``"\\0" + path``) replaces, if any.

    That file is the buffer's old self: while the buffer is modified, the clone finder leaves it
    out (its copies would be the buffer's own previous version).
    """
    return path[1:] if path.startswith("\0") else None


def buffer_finder(index: RepoIndex) -> CloneFinder:
    """The clone finder of a language server's folder (buffers shadow their files on disk)."""
    return CloneFinder(index, shadow=disk_version, memoize_retrieval=True)


@dataclass(frozen=True)
class Span:
    """The indexed tokens ``[start, end)`` of a finding location."""

    heavy: Heavy
    start: int
    end: int
    exact: bool
    """Whether they are the tokens the clone finder reported (same digest)."""


@dataclass
class Built:
    """A freshly built index, ready to be swapped in."""

    config: ScanConfig
    index: RepoIndex
    finder: CloneFinder
    paths: list[str]
    seconds: float
    reused: int = 0
    """Files whose entries came from the on-disk cache (shared with the CLI and the hook)."""


class Folder:
    """A workspace folder (or, with ``root=None``, the place of documents outside any folder)."""

    def __init__(self, uri: str | None, root: str | None, config: ScanConfig) -> None:
        self.uri = uri
        self.root = os.path.abspath(root) if root is not None else None
        self.name = os.path.basename(self.root) if self.root else "(no folder)"
        self.config = config
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="crystal-folder")
        self.store = Store(
            repo_cache_dir(self.root) if self.root else os.path.join(cache_root(), "detached")
        )
        self.index = RepoIndex(self.root or os.getcwd(), config, self.store)
        self.finder: CloneFinder = buffer_finder(self.index)
        self.paths: list[str] = []
        self.buffers: dict[str, Buffer] = {}
        self.state = "indexing" if self.root else "ready"
        self.message = ""
        self.built = self.root is None
        """Whether a first build finished (or was abandoned); until then checks wait."""
        self.ready = asyncio.Event()
        """Set (on the event loop) once the first build finished or was abandoned."""
        if self.built:
            self.ready.set()
        self._texts: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self.signatures: dict[tuple[str, str], str] = {}
        """Score signatures by (language, S fingerprint and settings), see diagnostics."""

    # ------------------------------------------------------------------ paths
    def contains(self, fs_path: str | None) -> bool:
        """Whether a file path lies inside this folder."""
        if fs_path is None or self.root is None:
            return False
        try:
            return os.path.commonpath([self.root, os.path.abspath(fs_path)]) == self.root
        except ValueError:
            return False

    def display_path(self, uri: str, fs_path: str | None) -> tuple[str, bool]:
        """The path shown for a document and whether it is relative to the root."""
        if fs_path is None:
            return uri, False
        if self.contains(fs_path) and self.root is not None:
            return os.path.relpath(os.path.abspath(fs_path), self.root).replace(os.sep, "/"), True
        return os.path.abspath(fs_path), False

    def fs_path_of(self, path: str) -> str | None:
        """The file a displayed location path refers to (None for unsaved documents)."""
        if "://" in path or path.startswith("untitled:"):
            return None
        if os.path.isabs(path):
            return path
        if self.root is None:
            return None
        return os.path.join(self.root, path)

    def uri_of(self, path: str) -> str | None:
        """The URI of a displayed location path."""
        for buffer in self.buffers.values():
            if buffer.path == path:
                return buffer.uri
        from crystal_lsp.server.uris import from_fs_path

        fs_path = self.fs_path_of(path)
        return from_fs_path(fs_path) if fs_path else None

    # ------------------------------------------------------------------ building
    def build(
        self,
        config: ScanConfig,
        previous: dict[str, FileState] | None,
        progress: Progress,
    ) -> Built:
        """Build a new index for ``config`` (runs on a building thread, not the worker).

        ``progress(phase, done, total)`` may raise :class:`IndexingCancelled` to stop.
        """
        started = time.perf_counter()
        progress("listing files", 0, 1)
        paths = list_files(self.root, config) if self.root else []
        index = RepoIndex(self.root or os.getcwd(), config, self.store)
        if previous and config.entry_signature() == self.config.entry_signature():
            # same per-file entries: start from the current ones instead of the cache
            index.files = {p: s for p, s in previous.items() if not s.override}
        stats = index.refresh(paths, progress=progress)
        finder = buffer_finder(index)
        languages = index.languages()
        for done, language in enumerate(languages, 1):
            progress(f"S sets and retrieval ({language})", done - 1, len(languages))
            finder.similarity(language)  # builds the S sets and the seed table
        # a full scan of the disk (reusing the last one's unchanged pairs): what each edited
        # buffer is then compared against, aligning only the buffer
        finder.find(progress=progress)
        progress("ready", 1, 1)
        return Built(config, index, finder, paths, time.perf_counter() - started, stats.reused)

    def snapshot_files(self) -> dict[str, FileState]:
        """A copy of the current index's files (worker thread)."""
        return dict(self.index.files)

    def install(self, built: Built) -> None:
        """Swap in a new index and put the open buffers back on it (worker thread)."""
        old_config = self.config
        self.config, self.index, self.finder = built.config, built.index, built.finder
        self.paths = built.paths
        self.built = True
        self._texts.clear()
        rebuild = (
            old_config.min_tokens != self.config.min_tokens
            or old_config.min_lines != self.config.min_lines
        )
        for buffer in self.buffers.values():
            if rebuild:
                buffer.entry = None
            if buffer.injected and buffer.entry is not None:
                self._inject(buffer)
            else:
                buffer.injected = False
        # the build's full scan read nearly every file's tokens (the cache has them), and what
        # it allocated besides goes back: a cold start settles near a warm one
        self.index.forget_tokens()
        release_memory()

    def abandon(self, message: str) -> None:
        """Give up the first build (cancelled or failed): serve the open buffers alone."""
        self.built = True
        self.state = "error"
        self.message = message

    # ------------------------------------------------------------------ buffers
    def _inject(self, buffer: Buffer) -> None:
        assert buffer.entry is not None
        self.index.files[buffer.key] = FileState(buffer.key, buffer.sha, buffer.entry.entry, True)
        buffer.injected = True

    def _uninject(self, buffer: Buffer) -> None:
        self.index.files.pop(buffer.key, None)
        buffer.injected = False

    def close(self, uri: str) -> bool:
        """Forget an open document (worker thread); whether it was an unsaved buffer."""
        buffer = self.buffers.pop(uri, None)
        if buffer is None:
            return False
        injected = buffer.injected
        self._uninject(buffer)
        return injected

    def _language(self, doc: DocumentSnapshot, path: str) -> str | None:
        """The document's language, chosen as the index would choose it for the file."""
        name = canonical_name(resolve_lexer(None, path, doc.text, guess=False))
        if name == GENERIC and doc.language_id:
            try:
                name = canonical_name(lexer_by_language(doc.language_id))
            except CrystalError:
                return None
        return None if name == GENERIC else name

    def _wanted(self, language: str) -> bool:
        if self.config.languages:
            return language in self.config.languages
        return language in PROGRAMMING_LANGUAGES

    def check(self, doc: DocumentSnapshot) -> DocResult:
        """Find the copies of an open document's snippets (worker thread)."""
        path, relative = self.display_path(doc.uri, doc.fs_path)
        result = DocResult(doc.uri, doc.version, path)
        buffer = self.buffers.get(doc.uri)
        if buffer is None or buffer.path != path:
            if buffer is not None:
                self._uninject(buffer)
            buffer = self.buffers[doc.uri] = Buffer(doc.uri, path, relative)
        skip, language = self._checkable(doc, path, relative)
        if skip is not None or language is None:
            self._uninject(buffer)
            buffer.entry = None
            result.skip = skip
            return result
        result.language = language
        buffer.sha = content_sha(doc.text.encode("utf-8", "surrogatepass"))
        on_disk = self.index.files.get(path) if relative else None
        clean = on_disk is not None and not on_disk.override and on_disk.sha == buffer.sha
        if clean and on_disk is not None and buffer.entry is None:
            # the indexed file itself: check it as such, tokenize the buffer later (prepare)
            self._uninject(buffer)
            result.prepare = True
            result.indexed = on_disk.entry.snippets
            if on_disk.entry.status != OK:
                return self._status_skip(result, on_disk.entry.status)
            return self._find(result, path, on_disk.entry.language)
        entry = self._tokenized(buffer, doc.text, language, on_disk if clean else None)
        result.entry = buffer.entry
        if entry.status != OK:
            self._uninject(buffer)
            return self._status_skip(result, entry.status)
        if clean:
            self._uninject(buffer)
            return self._find(result, path, entry.language)
        self._inject(buffer)
        return self._find(result, buffer.key, entry.language)

    def _checkable(
        self, doc: DocumentSnapshot, path: str, relative: bool
    ) -> tuple[str | None, str | None]:
        """Why a document gets no diagnostics (or None), and its language."""
        skip = self._skip_reason(doc, path, relative)
        language = self._language(doc, path) if skip is None else None
        if skip is None and language is None:
            skip = f"unknown language (language id {doc.language_id!r})"
        if skip is None and language is not None and not self._wanted(language):
            skip = (
                f"language {language} is not in crystalLsp.languages"
                if self.config.languages
                else f"{language} is not a programming language crystal checks"
            )
        return skip, language

    def _tokenized(
        self, buffer: Buffer, text: str, language: str, on_disk: FileState | None
    ) -> Entry:
        """The buffer's entry for ``text``, re-lexed incrementally when it can be."""

        def tokenized() -> IncrementalEntry:
            return IncrementalEntry(
                buffer.path,
                text,
                language,
                min_tokens=self.config.min_tokens,
                min_lines=self.config.min_lines,
            )

        if buffer.entry is None or buffer.entry.language != language:
            buffer.entry = tokenized()
        else:
            buffer.entry = buffer.entry.update(text)
        if on_disk is not None and entry_summary(buffer.entry.entry) != entry_summary(
            on_disk.entry
        ):
            # the buffer equals the file: its incremental entry must equal the indexed one
            log.warning(
                "re-tokenizing %s: its incremental tokens diverged from the file's", buffer.path
            )
            buffer.entry = tokenized()
        return buffer.entry.entry

    def _find(self, result: DocResult, focus: str, language: str) -> DocResult:
        """The findings of one indexed file (or buffer key), as the user sees them."""
        found = self.finder.find({focus: None}).get(language)
        result.findings = self._present(found.findings if found is not None else [])
        return result

    def _status_skip(self, result: DocResult, status: str) -> DocResult:
        result.skip = {
            MINIFIED: "minified code",
            GENERATED: "generated code",
            NO_CODE: "no code",
        }.get(status, status)
        result.quiet = status == NO_CODE
        return result

    def prepare(self, uri: str, text: str) -> None:
        """Tokenize an open buffer ahead of its first edit (worker thread, after a check)."""
        buffer = self.buffers.get(uri)
        if buffer is None or buffer.entry is not None:
            return
        language = self._language(DocumentSnapshot(uri, None, text, "", None), buffer.path)
        if language is None:
            return
        buffer.entry = IncrementalEntry(
            buffer.path,
            text,
            language,
            min_tokens=self.config.min_tokens,
            min_lines=self.config.min_lines,
        )

    def _skip_reason(self, doc: DocumentSnapshot, path: str, relative: bool) -> str | None:
        limit = self.config.max_file_bytes
        if limit and len(doc.text) > limit // 4:
            size = len(doc.text.encode("utf-8", "surrogatepass"))
            if size > limit:
                return f"too large ({size:,} bytes > crystalLsp.maxFileBytes {limit:,})"
        if "\0" in doc.text[:8192]:
            return "binary content"
        if relative and not filter_paths([path], self.config):
            return "excluded by the include/exclude settings"
        return None

    def _present(self, findings: Iterable[Finding]) -> list[Finding]:
        """Findings as the user sees them (:func:`crystal_lsp.server.buffers.present`)."""
        return present(findings, self.buffers)

    # ------------------------------------------------------------------ disk changes
    def refresh(self, relist: bool) -> None:
        """Bring the index up to date with the disk (worker thread)."""
        if self.root is None or not self.built:
            return
        if relist:
            self.paths = list_files(self.root, self.config)
        injected = [b for b in self.buffers.values() if b.injected]
        for buffer in injected:
            self.index.files.pop(buffer.key, None)
        try:
            self.index.refresh(self.paths)
        finally:
            for buffer in injected:
                self._inject(buffer)
        self._texts.clear()

    # ------------------------------------------------------------------ other files
    def text_of(self, path: str) -> str | None:
        """The current text of a displayed location path: its open buffer, else the file."""
        for buffer in self.buffers.values():
            if buffer.path == path and buffer.entry is not None:
                return buffer.entry.source
        fs_path = self.fs_path_of(path)
        if fs_path is None:
            return None
        try:
            stat = os.stat(fs_path)
        except OSError:
            return None
        key = (fs_path, f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}")
        cached = self._texts.get(key)
        if cached is not None:
            self._texts.move_to_end(key)
            return str(cached)
        try:
            text = read_source(fs_path, self.config.max_file_bytes, self.root).text
        except SkippedFile:
            return None
        self._texts[key] = text
        while len(self._texts) > 64:
            self._texts.popitem(last=False)
        return text

    def tokens_of(self, location: Location) -> list[str] | None:
        """The raw tokens of a finding location, if its file still has exactly those tokens."""
        span = self.span_of(location)
        if span is None or not span.exact:
            return None
        return span.heavy.texts[span.start : span.end]

    def span_of(self, location: Location) -> Span | None:
        """The indexed tokens of a finding location (a modified open buffer's own tokens)."""
        key = location.path
        for buffer in self.buffers.values():
            if buffer.path == location.path and buffer.injected:
                key = buffer.key
                break
        if key not in self.index.files:
            return None
        try:
            heavy = self.index.heavy(key)
        except CrystalError as exc:
            log.debug("no tokens for %s: %s", location.label(), exc)
            return None
        tokens = token_span(heavy, location)
        if tokens is None:
            return None
        start, stop = tokens
        exact = text_sha(heavy.texts[start:stop]) == location.sha
        return Span(heavy, start, stop, exact)

    def save_scores(self) -> None:
        """Persist the finder's pair scores (worker thread, at shutdown)."""
        if self.root is not None:
            saved = self.finder.save_scores()
            log.info("saved %d pair scores of %s", saved, self.name)

    # ------------------------------------------------------------------ threading
    def shutdown(self) -> None:
        """Stop the worker and close the cache."""
        self.executor.shutdown(wait=False, cancel_futures=True)
        try:
            self.store.close()
        except Exception:  # pragma: no cover - closing is best effort
            log.debug("closing the cache of %s failed", self.name, exc_info=True)


def submit(folder: Folder, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Run ``fn`` on the folder's worker (returns an asyncio future)."""
    return asyncio.get_running_loop().run_in_executor(folder.executor, fn, *args)
