"""The two S sets of a language in a repository: loaded, kept current, built.

Each language has two S sets, over raw tokens and over the normalized view. They are a snapshot:
rebuilt when missing, when the settings change, or when more than ``sset_drift`` of the
language's tokens changed since they were built. Between rebuilds incremental updates stay cheap
and every score is reproducible from the S fingerprints recorded with the results.

S is the paper's: the k most frequent n-grams of a corpus, every n-gram of every document
counted. The corpus is the repository's *distinct* code (:func:`distinct_corpus`): near-copies
of a file count once, so a template stamped out into thousands of small files cannot fill S. A
language with fewer than ``SMALL_CORPUS_TOKENS`` tokens of distinct code uses the built-in sets
shipped for it (see :func:`crystal_lsp.metric.sset.builtin_sset`), or a k scaled to its size.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from crystal_lsp.clones.index.state import FileState, IndexEngine
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.metric.sset import TriviallySharedSet, builtin_sset, suggest_k
from crystal_lsp.text.entries import OK, Entry, Heavy
from crystal_lsp.text.fingerprints import U64, text_sha
from crystal_lsp.text.lexers import lexer_label, resolve_lexer
from crystal_lsp.text.views import file_view


class RepoIndex(Protocol):
    """What the S sets need of the index (:class:`crystal_lsp.clones.index.repo.RepoIndex`)."""

    config: ScanConfig
    store: Store
    files: dict[str, FileState]
    engine: IndexEngine

    def heavy(self, path: str) -> Heavy:
        """The heavy part (token texts, categories, lines) of an indexed file."""

    def compared_as(self, language: str) -> str:
        """The language a file of ``language`` is compared in (C with C++ where both are)."""


log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
# Below this many tokens of distinct code in a language, a repository is too small to tell
# which n-grams are trivially shared: the built-in S sets of the language are used (or k is
# scaled down).
SMALL_CORPUS_TOKENS = 100_000
# Two files whose normalized views share this fraction of their distinct 4-grams (Jaccard) are
# near-copies: the same file up to a few changed lines, renamed names and other literals.
NEAR_COPY_JACCARD = 0.7
# MinHash LSH that finds them: 32 hashes in 8 bands of 4 put a pair at Jaccard 0.7 in a common
# bucket with probability 0.89 (0.98 at 0.8); each candidate is then checked exactly.
_MINHASHES, _BANDS = 32, 8
_ROWS = _MINHASHES // _BANDS
_BUCKET_CAP = 16  # representatives kept per bucket: bounds the work on boilerplate-heavy files
_TRIES = 4  # representatives checked per file, those sharing the most buckets first
_SEEDS = np.array(
    [(j + 1) * 0x9E3779B97F4A7C15 % 2**64 for j in range(_MINHASHES)], dtype=np.uint64
)


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


@dataclass
class Corpus:
    """What a language's own S sets are counted over: one document per family of near-copies."""

    raw: list[list[str]]
    norm: list[list[str]]
    files: int
    """Files of the language, near-copies included."""
    tokens: int
    """Tokens of distinct code: top-level units (and the code between them), each counted once."""


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
        if index.compared_as(s.entry.language) == language and s.entry.status == OK
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
    """S sets of the language's files on disk, counted over their distinct code.

    The built-in sets stand in while the distinct code (:attr:`Corpus.tokens`) is under
    ``SMALL_CORPUS_TOKENS``: thousands of copies of a few small files, or one long generated
    table, make a repository large without telling anything more about which n-grams every
    piece of code shares.
    """
    members = {
        p: s
        for p, s in sorted(index.files.items())
        if index.compared_as(s.entry.language) == language and s.entry.status == OK
    }
    if has_disk_members(members.values()):
        members = {p: s for p, s in members.items() if not s.override}
    tokens = sum(s.entry.token_count for s in members.values())
    shas = {p: s.sha for p, s in members.items()}
    label = f"S sets ({language})"
    corpus = None
    # distinct code is never more than all the code: below the bar there is nothing to look at
    if tokens >= SMALL_CORPUS_TOKENS:
        corpus = distinct_corpus(index, members, progress, label)
    if corpus is None or corpus.tokens < SMALL_CORPUS_TOKENS:
        builtin = builtin_sets(index.config, language)
        if builtin is not None:
            return LanguageSets(builtin[0], builtin[1], shas, tokens)
    if corpus is None:
        corpus = distinct_corpus(index, members, progress, label)
    raw, norm = count_sets(index, language, corpus, tokens)
    return LanguageSets(raw, norm, shas, tokens)


def count_sets(
    index: RepoIndex, language: str, corpus: Corpus, tokens: int
) -> tuple[TriviallySharedSet, TriviallySharedSet]:
    """The raw and normalized S sets counted over ``corpus`` (``tokens``: all the language's)."""
    label = lexer_label(resolve_lexer(language))
    k = index.config.k
    if k != "auto" and tokens < SMALL_CORPUS_TOKENS:
        # k = 500 is the paper's choice for corpora of 0.5-2.6 M tokens; in a small
        # repository it would make nearly every n-gram "trivially shared".
        k = max(1, round(int(k) * tokens / SMALL_CORPUS_TOKENS))
    size, max_n = 5000 if k == "auto" else int(k), index.config.max_n
    engine = index.engine
    raw = engine.make_sset(corpus.raw, size, max_n=max_n, language=language, tokenizer=label)
    norm = engine.make_sset(
        corpus.norm, size, max_n=max_n, language=language, tokenizer=label + " view:normalized"
    )
    if k == "auto":
        raw = raw.restricted(suggest_k(raw.meta.get("curve", [])))
        norm = norm.restricted(suggest_k(norm.meta.get("curve", [])))
    norm = norm.without_unigrams()
    for sset in (raw, norm):
        sset.meta["curve"] = sset.meta.get("curve", [])[:2000]
        sset.meta["corpus"] = {"files": corpus.files, "distinct_tokens": corpus.tokens}
    return raw, norm


def distinct_corpus(
    index: RepoIndex,
    members: Mapping[str, FileState],
    progress: Progress | None = None,
    label: str = "S sets",
) -> Corpus:
    """One document per family of near-copy files (its first file), and their distinct code.

    S stands for the n-grams that code shares because it is code: ``self . ID``, ``ID = ID (``.
    Copies share n-grams because they were copied, and copying is what the clone finder looks
    for. Counted as they are, a template stamped out into thousands of small files (settings
    modules, migrations, test stubs, plugins), differing only in names, literals or a line or
    two, gives its n-grams counts in the thousands; they fill S, and a function that shares
    them with the template loses whole n-gram orders to S, and with them its score, however
    exact a copy it is. So the corpus counts each family of near-copies once
    (:func:`near_copy_families`), and how big it is is measured on its distinct code: each
    top-level unit, and each stretch of code between units, counted once up to renaming (the
    rows of a long table, a generated file's near-identical functions count once).

    A repository without near-copy files keeps the paper's counts exactly. On 300 files of
    CPython's standard library (two families of tiny shims) S keeps all its members, counts
    within 2 %; on Pygments (25 style modules from one template, lexers copied from lexers,
    word lists) 7 of 500 members change.
    """
    paths = list(members)
    leaders = near_copy_families([np.unique(members[p].entry.h4) for p in paths])
    firsts = [p for i, p in enumerate(paths) if leaders[i] == i]
    raw_docs: list[list[str]] = []
    norm_docs: list[list[str]] = []
    seen_files: set[str] = set()
    seen_units: set[str] = set()
    distinct = 0
    for done, path in enumerate(firsts, 1):
        heavy = index.heavy(path)
        norm, _ = file_view(heavy.texts, heavy.cats)
        # files too short to have a 4-gram are left to this exact test
        digest = text_sha(norm)
        if digest not in seen_files:
            seen_files.add(digest)
            raw_docs.append(heavy.texts)
            norm_docs.append(norm)
            distinct += new_unit_tokens(members[path].entry, norm, seen_units)
        if progress is not None:
            progress(label, done, len(firsts))
    return Corpus(raw_docs, norm_docs, len(paths), distinct)


def new_unit_tokens(entry: Entry, norm: Sequence[str], seen: set[str]) -> int:
    """Tokens of a file's top-level units and the code between them not in ``seen`` (updated).

    Units are compared on their normalized view (``norm``, the file's).
    """
    count = 0
    for start, end in top_level_spans(entry):
        a, b = entry.normalized_span(start, end)
        digest = text_sha(norm[a:b])
        if digest not in seen:
            seen.add(digest)
            count += end - start
    return count


def top_level_spans(entry: Entry) -> list[tuple[int, int]]:
    """Token ranges covering a file: its outermost snippets and the stretches between them."""
    spans: list[tuple[int, int]] = []
    end = 0
    for meta in sorted(entry.snippets, key=lambda m: (m.start, -m.end)):
        if meta.start < end:
            continue  # nested in the previous unit
        if meta.start > end:
            spans.append((end, meta.start))
        spans.append((meta.start, meta.end))
        end = meta.end
    if end < entry.token_count:
        spans.append((end, entry.token_count))
    return spans


def near_copy_families(sets: Sequence[U64]) -> list[int]:
    """For each file, the index of the first file of its family of near-copies.

    ``sets`` are the files' sorted distinct normalized 4-gram hashes, in a fixed order (by
    path). A file joins the earliest family whose first file shares ``NEAR_COPY_JACCARD`` of
    their 4-grams with it, else starts a family; candidates come from MinHash LSH and are
    checked exactly. A file without a 4-gram is a family of its own.
    """
    leaders = list(range(len(sets)))
    full = [i for i, s in enumerate(sets) if len(s)]
    if len(full) < 2:
        return leaders
    bands = band_keys(minhash([sets[i] for i in full])).tolist()
    buckets: dict[int, list[int]] = {}
    for i, keys in zip(full, bands):
        votes: dict[int, int] = {}
        for key in keys:
            for rep in buckets.get(key, ()):
                votes[rep] = votes.get(rep, 0) + 1
        ranked = sorted(votes, key=lambda rep: (-votes[rep], rep))[:_TRIES]
        found = [rep for rep in ranked if jaccard(sets[i], sets[rep]) >= NEAR_COPY_JACCARD]
        if found:
            leaders[i] = found[0]
            continue
        for key in keys:
            reps = buckets.setdefault(key, [])
            if len(reps) < _BUCKET_CAP:
                reps.append(i)
    return leaders


def band_keys(signatures: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """One 64-bit key per band of each signature (a collision only adds a candidate to check)."""
    keys = np.empty((len(signatures), _BANDS), dtype=np.uint64)
    for band in range(_BANDS):
        key = np.full(len(signatures), _SEEDS[band], dtype=np.uint64)
        for row in range(band * _ROWS, (band + 1) * _ROWS):
            key = _mix(key ^ signatures[:, row])
        keys[:, band] = key
    return keys


def minhash(sets: Sequence[U64]) -> npt.NDArray[np.uint64]:
    """``_MINHASHES`` MinHash values of each non-empty set of 64-bit hashes (one row per set)."""
    flat = np.concatenate(sets)
    starts = np.cumsum([0] + [len(s) for s in sets[:-1]], dtype=np.int64)
    out = np.empty((len(sets), _MINHASHES), dtype=np.uint64)
    for j, seed in enumerate(_SEEDS):
        out[:, j] = np.minimum.reduceat(_mix(flat ^ seed), starts)
    return out


def _mix(values: U64) -> U64:
    """SplitMix64's finalizer: a bijection of 64-bit values (one permutation per seed)."""
    with np.errstate(over="ignore"):
        x = (values ^ (values >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        out: U64 = x ^ (x >> np.uint64(31))
    return out


def jaccard(a: U64, b: U64) -> float:
    """Jaccard similarity of two sorted arrays of distinct values."""
    shared = len(np.intersect1d(a, b, assume_unique=True))
    return shared / max(1, len(a) + len(b) - shared)


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
