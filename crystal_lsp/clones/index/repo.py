"""The repository index: file entries by content, per-language S sets, incremental refresh.

``RepoIndex.refresh(paths)`` brings the index up to date with the given files (paths relative to
the root, as :mod:`crystal_lsp.clones.files` lists them): files whose stat data match the
manifest are not read (unless racily clean, :mod:`crystal_lsp.clones.snapshot`), known contents reuse their stored
entry, and only new contents are tokenized, in parallel processes. In-memory contents (an
editor's unsaved buffer, a staged blob) can be layered on top with ``overrides``.

Each language has two S sets, over raw tokens and over the normalized view
(:mod:`crystal_lsp.clones.index.languagesets`), kept by the index and rebuilt when they drift.
"""

from __future__ import annotations

import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from crystal_lsp.clones.index.languagesets import LanguageSets, is_current, language_sets
from crystal_lsp.clones.index.state import (
    BuildJob,
    FileState,
    IndexEngine,
    LocalEngine,
    RefreshStats,
    build_job,
)
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.snapshot import Snapshot, manifest_key, save_manifest, take_snapshot
from crystal_lsp.clones.store import Store, decode
from crystal_lsp.errors import CrystalError
from crystal_lsp.text import sources
from crystal_lsp.text.entries import GENERATED, OK, Entry, Heavy, build_entry
from crystal_lsp.text.fingerprints import content_sha
from crystal_lsp.text.lexers import (
    GENERIC,
    PROGRAMMING_LANGUAGES,
    canonical_name,
    resolve_lexer,
)
from crystal_lsp.text.parallel import default_jobs, worker_pool
from crystal_lsp.text.sources import SkippedFile, read_source, source_from_bytes

log = logging.getLogger(__name__)
C_LANGUAGE, CPP_LANGUAGE = "c", "cpp"

Progress = Callable[[str, int, int], None]
_MIN_PARALLEL = 16


def _first_of_each_language(jobs: list[BuildJob]) -> list[int]:
    """The index of the first job of each language."""
    first: dict[str | None, int] = {}
    for i, job in enumerate(jobs):
        first.setdefault(job[2], i)
    return sorted(first.values())


def _in_order(
    total: int, local: dict[int, tuple[bytes, bytes]], rest: Iterable[tuple[bytes, bytes]]
) -> Iterator[tuple[bytes, bytes]]:
    """The results of ``total`` jobs in order: those of ``local`` by index, the others from ``rest``."""
    others = iter(rest)
    for i in range(total):
        yield local[i] if i in local else next(others)


class RepoIndex:
    """The index of one repository (see the module docstring)."""

    def __init__(
        self,
        root: str,
        config: ScanConfig,
        store: Store,
        *,
        jobs: int | None = None,
        engine: IndexEngine | None = None,
    ) -> None:
        self.root = os.path.abspath(root)
        self.engine: IndexEngine = engine if engine is not None else LocalEngine()
        self.config = config
        self.store = store
        self.jobs = jobs if jobs is not None else default_jobs()
        self.files: dict[str, FileState] = {}
        self.skipped: list[tuple[str, str]] = []
        self.generated: list[str] = []  # indexed, but compared only with hand-written code
        self._entry_sig = config.entry_signature()
        self._heavy: OrderedDict[str, Heavy] = OrderedDict()
        self._pending_heavy: dict[str, bytes] = {}  # encoded tokens of files built in this run
        self._sets: dict[str, LanguageSets] = {}
        self._cfamily: tuple[dict[str, FileState], bool] | None = None

    # ----------------------------------------------------------------- files
    def _key(self, kind: str, sha: str) -> str:
        return f"{kind}:{self._entry_sig}:{sha}"

    def snapshot(
        self,
        paths: Iterable[str],
        overrides: Mapping[str, bytes] | None = None,
        *,
        verify: bool = False,
    ) -> Snapshot:
        """Content digests of ``paths`` (see :func:`~crystal_lsp.clones.snapshot.take_snapshot`)."""
        return take_snapshot(self.root, self.config, self.store, paths, overrides, verify=verify)

    @property
    def _manifest_key(self) -> str:
        return manifest_key(self.config)

    def refresh(
        self,
        paths: Iterable[str],
        overrides: Mapping[str, bytes] | None = None,
        progress: Progress | None = None,
    ) -> RefreshStats:
        """Bring the index up to date with ``paths`` (see :meth:`snapshot` and :meth:`load`)."""
        return self.load(self.snapshot(paths, overrides), progress)

    def load(self, snap: Snapshot, progress: Progress | None = None) -> RefreshStats:
        """Make the index hold exactly the snapshot's files, tokenizing only new contents."""
        stats = RefreshStats()
        stats.timings["stat"] = snap.seconds
        overrides = snap.overrides
        skipped = list(snap.skipped)
        started = time.perf_counter()
        states, to_build = self._reuse(snap, skipped, stats)
        stats.timings["load"] = time.perf_counter() - started

        started = time.perf_counter()
        built = self._build(to_build, skipped, progress)
        for rel, sha, entry in built:
            states[rel] = FileState(rel, sha, entry, rel in overrides)
        stats.tokenized = len(built)
        stats.timings["lexing"] = time.perf_counter() - started

        generated = self._sort_out(states, skipped)
        self.files = states
        self.skipped = sorted(skipped)
        self.generated = sorted(generated)
        stats.files = len(states)
        stats.skipped = self.skipped
        save_manifest(self.store, self.config, snap)
        return stats

    def _reuse(
        self, snap: Snapshot, skipped: list[tuple[str, str]], stats: RefreshStats
    ) -> tuple[dict[str, FileState], list[tuple[str, str, bytes | None]]]:
        """The files whose entries are known (current or cached), and those to tokenize."""
        states: dict[str, FileState] = {}
        to_build: list[tuple[str, str, bytes | None]] = []
        docs: dict[str, Any] = {}  # one read per content, whatever its paths
        for rel, (sha, data) in snap.contents.items():
            current = self.files.get(rel)
            if current is not None and current.sha == sha:
                states[rel] = current
                stats.reused += 1
                continue
            doc = docs[sha] if sha in docs else docs.setdefault(sha, self._light(sha))
            entry = None
            if isinstance(doc, dict) and "skip" in doc:
                skipped.append((rel, str(doc["skip"])))
                continue
            if doc is not None:
                try:
                    entry = Entry.from_light_json(doc)
                except (KeyError, ValueError, TypeError) as exc:
                    log.warning("index entry of %s is malformed (%s); rebuilding", rel, exc)
            if entry is not None:
                states[rel] = FileState(rel, sha, entry, rel in snap.overrides)
                stats.reused += 1
            else:
                to_build.append((rel, sha, data))
        return states, to_build

    def _sort_out(self, states: dict[str, FileState], skipped: list[tuple[str, str]]) -> list[str]:
        """Drop files that are not wanted code (recording why); returns the generated ones."""
        generated: list[str] = []
        for rel, state in list(states.items()):
            language = state.entry.language
            if language != GENERIC and not self._wanted_language(language):
                skipped.append((rel, f"not code ({language})"))
                del states[rel]
                continue
            if state.entry.status == GENERATED:
                generated.append(rel)
            elif state.entry.status != OK:
                skipped.append((rel, state.entry.status))
            elif language == GENERIC:
                skipped.append((rel, "unknown language"))
                del states[rel]
        return generated

    def _prepare(
        self, jobs: list[tuple[str, str, bytes | None]], skipped: list[tuple[str, str]]
    ) -> tuple[list[BuildJob], list[str]]:
        """The tokenizer jobs of new contents (read, decoded, language known and wanted)."""
        prepared: list[BuildJob] = []
        shas: list[str] = []
        for rel, sha, data in jobs:
            try:
                if data is None:
                    source = read_source(
                        os.path.join(self.root, rel), self.config.max_file_bytes, self.root
                    )
                else:
                    source = source_from_bytes(rel, data, self.config.max_file_bytes)
            except SkippedFile as exc:
                self._skip(rel, sha, exc.reason, skipped)
                continue
            language = self._language_for(rel, source.text)
            if language is None:
                self._skip(rel, sha, "unknown language", skipped)
                continue
            if not self._wanted_language(language):
                self._skip(rel, sha, f"not code ({language})", skipped)
                continue
            config = self.config
            prepared.append(
                (rel, source.text, language, source.replaced, config.min_tokens, config.min_lines)
            )
            shas.append(sha)
        return prepared, shas

    def _build(
        self,
        jobs: list[tuple[str, str, bytes | None]],
        skipped: list[tuple[str, str]],
        progress: Progress | None,
    ) -> list[tuple[str, str, Entry]]:
        """Tokenize the new contents: each distinct content (and language) once, whatever its paths."""
        prepared, shas = self._prepare(jobs, skipped)
        distinct: dict[tuple[str, str | None], int] = {}
        todo: list[BuildJob] = []
        for job, sha in zip(prepared, shas):
            if (sha, job[2]) not in distinct:
                distinct[(sha, job[2])] = len(todo)
                todo.append(job)
        built = self._run_jobs(todo, [s for (s, _) in distinct], progress)
        return [
            (job[0], sha, Entry.from_light_json(built[distinct[(sha, job[2])]]))
            for job, sha in zip(prepared, shas)
        ]

    def _run_jobs(
        self, todo: list[BuildJob], shas: list[str], progress: Progress | None
    ) -> list[dict[str, Any]]:
        """:func:`build_job` of each job (in the pool when there are many), stored by digest."""
        out: list[dict[str, Any]] = []
        total = len(todo)
        workers = min(self.jobs, max(1, total // _MIN_PARALLEL))
        results: Iterable[tuple[bytes, bytes]]
        elsewhere = self.engine.map_build_jobs(todo)
        pool = None
        if elsewhere is not None:
            results = elsewhere
        elif workers <= 1:
            results = map(build_job, todo)
        else:
            # the first file of each language here: its lexer tables are built once, in this
            # process, and the pool's forked workers start with them
            local = {i: build_job(todo[i]) for i in _first_of_each_language(todo)}
            rest = [job for i, job in enumerate(todo) if i not in local]
            pool = worker_pool(workers)
            results = _in_order(len(todo), local, pool.map(build_job, rest, chunksize=8))
        try:
            for done, (sha, (light, heavy)) in enumerate(zip(shas, results), 1):
                self.store.set_encoded(self._key("light", sha), light)
                self.store.set_encoded(self._key("heavy", sha), heavy)
                out.append(decode(light))
                self._pending_heavy[sha] = heavy
                if progress is not None:
                    progress("tokenizing", done, total)
        finally:
            if pool is not None:
                # cancel_futures: an interrupted build (a cancelled editor's indexing) must not
                # wait for every queued file
                pool.shutdown(cancel_futures=True)
        return out

    def _light(self, sha: str) -> Any:
        return self.store.get(self._key("light", sha))

    def cached_entry(self, sha: str) -> Entry | None:
        """The stored index entry of a file content (any earlier one), if the cache has it."""
        doc = self.store.get(self._key("light", sha))
        if not isinstance(doc, dict) or "skip" in doc:
            return None
        try:
            return Entry.from_light_json(doc)
        except (KeyError, ValueError, TypeError):
            return None

    def _skip(self, rel: str, sha: str, reason: str, skipped: list[tuple[str, str]]) -> None:
        """Record why a content is not indexed, so later scans need not read it again."""
        skipped.append((rel, reason))
        self.store.set(self._key("light", sha), {"skip": reason})

    def _wanted_language(self, language: str) -> bool:
        if self.config.languages:
            return language in self.config.languages
        return language in PROGRAMMING_LANGUAGES

    def _language_for(self, rel: str, text: str) -> str | None:
        name = canonical_name(resolve_lexer(None, rel, text, guess=False))
        return None if name == GENERIC else name

    # ----------------------------------------------------------------- heavy
    def forget_tokens(self) -> None:
        """Drop the tokens kept in memory (the cache has them; :meth:`heavy` reads them again).

        A full scan reads the tokens of nearly every file: after a cold one they would stay.
        """
        self._pending_heavy.clear()
        self._heavy.clear()

    def _remember_heavy(self, sha: str, heavy: Heavy) -> None:
        self._heavy[sha] = heavy
        self._heavy.move_to_end(sha)
        while len(self._heavy) > 4096:
            self._heavy.popitem(last=False)

    def heavy(self, path: str) -> Heavy:
        """The tokens of an indexed file (loaded on demand, rebuilt if the cache lost them)."""
        state = self.files[path]
        if state.entry.heavy is not None:
            return state.entry.heavy
        cached = self._heavy.get(state.sha)
        if cached is not None:
            self._heavy.move_to_end(state.sha)
            return cached
        pending = self._pending_heavy.pop(state.sha, None)
        doc = (
            decode(pending)
            if pending is not None
            else self.store.get(self._key("heavy", state.sha))
        )
        heavy = None
        if doc is not None:
            try:
                heavy = Heavy.from_json(doc)
            except (KeyError, ValueError, TypeError) as exc:
                log.warning("token cache of %s is malformed (%s); re-tokenizing", path, exc)
        if heavy is None:
            try:
                data = sources.read_bytes(
                    os.path.join(self.root, path), self.config.max_file_bytes, self.root
                )
            except SkippedFile as exc:
                raise CrystalError(f"{path}: {exc.reason}") from None
            if content_sha(data) != state.sha:
                raise CrystalError(f"{path} changed while it was being indexed; run again")
            source = source_from_bytes(path, data, self.config.max_file_bytes)
            entry = build_entry(
                path,
                source.text,
                state.entry.language,
                min_tokens=self.config.min_tokens,
                min_lines=self.config.min_lines,
            )
            assert entry.heavy is not None
            heavy = entry.heavy
            self.store.set(self._key("heavy", state.sha), heavy.to_json())
        self._remember_heavy(state.sha, heavy)
        return heavy

    # ----------------------------------------------------------------- S sets
    def languages(self) -> list[str]:
        """Languages with at least one indexed file."""
        return sorted({s.entry.language for s in self.files.values() if s.entry.status == OK})

    def compared_as(self, language: str) -> str:
        """The language a file of ``language`` is compared in (its S sets, its findings).

        The C family is one: where a repository has C++ files, its C files (``.c``, and headers
        without C++, which lex as C) are compared with them -- a function in ``x.c`` and a copy
        in ``y.cc`` or a C++ header is found. Every other language is compared with itself.
        """
        if language != C_LANGUAGE:
            return language
        files = self.files
        if self._cfamily is None or self._cfamily[0] is not files:
            cpp = any(s.entry.language == CPP_LANGUAGE for s in files.values())
            self._cfamily = (files, cpp)
        return CPP_LANGUAGE if self._cfamily[1] else language

    def sets(self, language: str, progress: Progress | None = None) -> LanguageSets:
        """The S sets of a language, rebuilt when missing, stale or drifted too far."""
        cached = self._sets.get(language)
        if cached is None or not is_current(self, cached, language):
            cached = self._sets[language] = language_sets(self, language, progress)
        return cached
