"""The two S sets of a language in a repository: loaded, kept current, built.

Each language has two S sets, over raw tokens and over the normalized view. A language with fewer
than ``SMALL_CORPUS_TOKENS`` tokens in the repository uses the built-in sets shipped for it (see
:func:`crystal_lsp.metric.sset.builtin_sset`), or a k scaled to its size. They are a snapshot:
rebuilt when missing, when the settings change, or when more than ``sset_drift`` of the
language's tokens changed since they were built. Between rebuilds incremental updates stay cheap
and every score is reproducible from the S fingerprints recorded with the results.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.metric.sset import TriviallySharedSet, builtin_sset, suggest_k
from crystal_lsp.text.entries import OK
from crystal_lsp.text.lexers import lexer_label, resolve_lexer
from crystal_lsp.text.views import normalized

if TYPE_CHECKING:
    from crystal_lsp.clones.index import FileState, RepoIndex

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
# Below this many tokens of a language, a repository is too small to tell which n-grams are
# trivially shared: the built-in S sets of the language are used (or k is scaled down).
SMALL_CORPUS_TOKENS = 100_000


@dataclass
class LanguageSets:
    """The raw-view and normalized-view S sets of one language."""

    raw: TriviallySharedSet
    norm: TriviallySharedSet
    members: dict[str, str]
    tokens: int

    @property
    def fingerprint(self) -> str:
        """Both S fingerprints, e.g. ``3f2a9c1b7d0e/77c0de12ab34``."""
        return f"{self.raw.fingerprint()}/{self.norm.fingerprint()}"


def language_sets(index: RepoIndex, language: str, progress: Progress | None) -> LanguageSets:
    """The stored S sets of a language when current, else freshly built (and stored)."""
    key = f"sset:{language}:{index.config.signature()}"
    doc = index.store.get(key)
    if doc is not None:
        try:
            sets = LanguageSets(
                TriviallySharedSet.from_json(doc["raw"]),
                TriviallySharedSet.from_json(doc["norm"]),
                dict(doc["members"]),
                int(doc["tokens"]),
            )
            if is_current(index, sets, language):
                return sets
        except (KeyError, ValueError, TypeError) as exc:
            log.warning("S sets of %s are malformed (%s); rebuilding", language, exc)
    sets = build_sets(index, language, progress)
    index.store.set(
        key,
        {
            "raw": sets.raw.to_json(),
            "norm": sets.norm.to_json(),
            "members": sets.members,
            "tokens": sets.tokens,
        },
    )
    return sets


def is_current(index: RepoIndex, sets: LanguageSets, language: str) -> bool:
    """Whether no more than ``sset_drift`` of the language's tokens changed since ``sets``."""
    current = {
        p: s
        for p, s in index.files.items()
        if s.entry.language == language and s.entry.status == OK
    }
    changed = 0
    disk = has_disk_members(current.values())
    for path, state in current.items():
        # in-memory contents (unsaved buffers) do not move S: it is a snapshot of the disk
        if disk and state.override:
            continue
        if sets.members.get(path) != state.sha:
            changed += state.entry.token_count
    removed = set(sets.members) - set(current)
    changed += len(removed) * (sets.tokens // max(1, len(sets.members)))
    total = max(1, sets.tokens)
    return changed / total <= index.config.sset_drift


def build_sets(index: RepoIndex, language: str, progress: Progress | None) -> LanguageSets:
    """S sets of the language's files on disk (the built-in ones for a small corpus)."""
    members = {
        p: s
        for p, s in sorted(index.files.items())
        if s.entry.language == language and s.entry.status == OK
    }
    if has_disk_members(members.values()):
        members = {p: s for p, s in members.items() if not s.override}
    tokens = sum(s.entry.token_count for s in members.values())
    shas = {p: s.sha for p, s in members.items()}
    if tokens < SMALL_CORPUS_TOKENS:
        builtin = builtin_sets(index.config, language)
        if builtin is not None:
            return LanguageSets(builtin[0], builtin[1], shas, tokens)
    raw_docs: list[list[str]] = []
    norm_docs: list[list[str]] = []
    for done, path in enumerate(members, 1):
        heavy = index.heavy(path)
        raw_docs.append(heavy.texts)
        norm_docs.append(normalized(heavy.texts, heavy.cats))
        if progress is not None:
            progress(f"S sets ({language})", done, len(members))
    label = lexer_label(resolve_lexer(language))
    k = index.config.k
    if k != "auto" and tokens < SMALL_CORPUS_TOKENS:
        # k = 500 is the paper's choice for corpora of 0.5-2.6 M tokens; in a small
        # repository it would make nearly every n-gram "trivially shared".
        k = max(1, round(int(k) * tokens / SMALL_CORPUS_TOKENS))
    size, max_n = 5000 if k == "auto" else int(k), index.config.max_n
    raw = index.engine.make_sset(raw_docs, size, max_n=max_n, language=language, tokenizer=label)
    norm = index.engine.make_sset(
        norm_docs, size, max_n=max_n, language=language, tokenizer=label + " view:normalized"
    )
    if k == "auto":
        raw = raw.restricted(suggest_k(raw.meta.get("curve", [])))
        norm = norm.restricted(suggest_k(norm.meta.get("curve", [])))
    norm = norm.without_unigrams()
    for sset in (raw, norm):
        sset.meta["curve"] = sset.meta.get("curve", [])[:2000]
    return LanguageSets(raw, norm, shas, tokens)


def builtin_sets(
    config: ScanConfig, language: str
) -> tuple[TriviallySharedSet, TriviallySharedSet] | None:
    """The built-in S sets of a language restricted to the configured k, if shipped."""
    raw, norm = builtin_sset(language, "raw"), builtin_sset(language, "normalized")
    if raw is None or norm is None:
        return None
    k = config.k
    chosen = []
    for sset in (raw, norm):
        size = suggest_k(sset.meta.get("curve", [])) if k == "auto" else min(int(k), sset.k)
        picked = sset.restricted(size)
        picked.meta["source"] = f"built-in ({sset.meta.get('source', language)})"
        picked.meta["curve"] = picked.meta.get("curve", [])[:2000]
        chosen.append(picked)
    return chosen[0], chosen[1].without_unigrams()


def has_disk_members(states: Iterable[FileState]) -> bool:
    """Whether any file comes from disk (then in-memory overrides stay out of S)."""
    return any(not state.override for state in states)
