"""Deciding which snippets are copies of each other, and grouping them into clone classes.

For every language: retrieve candidate pairs (:mod:`retrieval`), score each with CrystalBLEU in
both directions on two views (the raw tokens with the raw S set, and the normalized view with its
own S set, see :mod:`views`), and keep the pairs whose *similarity* -- the lower of the two
directions of the normalized-view CrystalBLEU -- reaches the threshold.

Why this decision: a consistent renaming leaves the normalized view unchanged, so renamed copies
score 1 where raw CrystalBLEU gives them a median of about 0.35; an inserted and a deleted
statement cost a few 4-grams in each direction. Taking the lower direction keeps a small snippet
contained in a large one from passing as its copy. Removing each view's S set keeps the
structure every function shares (``ID = ID ( ID )``) from counting as similarity.

Pairs nested in a reported pair (a method of a reported class against the matching method of the
other copy) are dropped, then the remaining pairs are joined into clone classes (connected
components).

A :class:`CloneFinder` keeps, per language, the retrieval index of the files on disk, the scores
of every pair it has seen (keyed by both snippets' contents, persisted by full scans) and an LRU
of n-gram profiles, so that a long-lived caller (the language server) answers "what does this
edited buffer duplicate?" by scoring only the pairs that changed. Files given to the index as
``overrides`` (unsaved buffers, staged blobs) are kept out of that retrieval index and compared
with it and with each other.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from crystal_lsp.clones.findings import Finding, Location, Pair, sort_findings
from crystal_lsp.clones.index import LanguageSets, RepoIndex
from crystal_lsp.clones.retrieval import I64, Postings
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.ngrams import Profile
from crystal_lsp.text.entries import GENERATED, OK, SnippetMeta
from crystal_lsp.text.fingerprints import SHINGLE_N, U64, gram_hashes
from crystal_lsp.text.snippets import DATA

MIN_SHARE = 0.35
# Candidates are every pair sharing MIN_SHARE of the smaller snippet's shingles: a property of
# the two snippets alone, so incremental and full scans see the same pairs.
MAX_CANDIDATES = 1_000_000
PAIR_CACHE_LIMIT = 400_000
PROFILE_CACHE = 4096
Progress = Callable[[str, int, int], None]
Ref = tuple[str, int]  # (path, snippet index)
Scores = tuple[float, float, float, float]  # normalized a→b, b→a, raw a→b, b→a (-1: not computed)


@dataclass
class LanguageResult:
    """Findings of one language and what it took."""

    findings: list[Finding]
    snippets: int
    candidates: int
    scored: int
    sets: str
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class _Snippets:
    refs: list[Ref]
    metas: list[SnippetMeta]
    shingles: list[U64]


@dataclass
class _LanguageState:
    key: tuple[object, ...]
    sets: LanguageSets
    base: _Snippets
    postings: Postings
    raw_metric: CrystalBLEU
    norm_metric: CrystalBLEU
    pair_cache: dict[str, list[float]]
    pair_cache_key: str
    profiles: OrderedDict[tuple[str, str], tuple[Profile, list[str]]] = field(
        default_factory=OrderedDict
    )


class CloneFinder:
    """Finds clone classes in an up-to-date :class:`RepoIndex` (reusable across refreshes)."""

    def __init__(self, index: RepoIndex) -> None:
        self.index = index
        self.config = index.config
        self._smoothing = self.config.smoothing_spec
        self._states: dict[str, _LanguageState] = {}

    def find(
        self,
        focus: Mapping[str, set[int] | None] | None = None,
        progress: Progress | None = None,
    ) -> dict[str, LanguageResult]:
        """Clone classes per language; with ``focus``, only those involving focus snippets.

        ``focus`` maps paths to the snippet indices to look at (``None``: all of the file's).
        """
        out: dict[str, LanguageResult] = {}
        for language in self.index.languages():
            if focus is not None and not any(
                p in self.index.files and self.index.files[p].entry.language == language
                for p in focus
            ):
                continue
            out[language] = self._find_language(language, focus, progress)
        return out

    # ------------------------------------------------------------------ state
    def _snippets(self, language: str, volatile: bool) -> _Snippets:
        refs: list[Ref] = []
        metas: list[SnippetMeta] = []
        arrays: list[U64] = []
        for path, state in sorted(self.index.files.items()):
            entry = state.entry
            if (
                entry.language != language
                or entry.status not in (OK, GENERATED)
                or state.override != volatile
            ):
                continue
            for i, meta in enumerate(entry.snippets):
                if meta.suppressed or (meta.kind == DATA and not self.config.report_data):
                    continue
                refs.append((path, i))
                metas.append(meta)
                arrays.append(entry.shingles[i])
        return _Snippets(refs, metas, arrays)

    def _state(self, language: str, progress: Progress | None) -> _LanguageState:
        sets = self.index.sets(language, progress)
        files_key = tuple(
            (p, s.sha)
            for p, s in sorted(self.index.files.items())
            if s.entry.language == language and not s.override
        )
        key = (sets.fingerprint, files_key)
        state = self._states.get(language)
        if state is not None and state.key == key:
            return state
        base = self._snippets(language, volatile=False)
        excluded = gram_hashes([g for g in sets.norm.counts if len(g) == SHINGLE_N])
        postings = Postings(base.shingles, excluded, self.config.max_df)
        if state is not None and state.sets.fingerprint == sets.fingerprint:
            pair_cache, profiles = state.pair_cache, state.profiles
            pair_cache_key = state.pair_cache_key
        else:
            pair_cache_key = f"pairs:{language}:{sets.fingerprint}:{self.config.signature()}"
            pair_cache = self.index.store.get(pair_cache_key) or {}
            profiles = OrderedDict()
        metric_args = {
            "max_n": self.config.max_n,
            "smoothing": self._smoothing,
            "language": language,
        }
        state = _LanguageState(
            key,
            sets,
            base,
            postings,
            CrystalBLEU(sets.raw, **metric_args),  # type: ignore[arg-type]
            CrystalBLEU(sets.norm, **metric_args),  # type: ignore[arg-type]
            pair_cache,
            pair_cache_key,
            profiles,
        )
        self._states[language] = state
        return state

    # ------------------------------------------------------------------ one language
    def _find_language(
        self, language: str, focus: Mapping[str, set[int] | None] | None, progress: Progress | None
    ) -> LanguageResult:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        state = self._state(language, progress)
        extra = self._snippets(language, volatile=True)
        # snippet ids: base snippets first, then the volatile ones
        refs = state.base.refs + extra.refs
        metas = state.base.metas + extra.metas
        shingles = state.base.shingles + extra.shingles
        offset = len(state.base.refs)
        timings["ngrams"] = time.perf_counter() - started

        started = time.perf_counter()
        pairs = self._candidates(state, refs, shingles, offset, focus)
        pairs = [(a, b) for a, b in pairs if self._comparable(refs[a], refs[b], metas[a], metas[b])]
        timings["retrieval"] = time.perf_counter() - started

        started = time.perf_counter()
        scores, scored = self._score(language, state, refs, metas, pairs, progress)
        if focus is None and scored:
            self._persist(state, scores, metas)
        elif focus is not None:
            scored += self._close_classes(
                language, state, refs, metas, shingles, offset, focus, scores
            )
        timings["scoring"] = time.perf_counter() - started

        started = time.perf_counter()
        kept = {pair: s for pair, s in scores.items() if min(s[0], s[1]) >= self.config.threshold}
        kept = self._drop_nested(kept, refs, metas)
        findings = self._group(language, kept, refs, metas)
        timings["grouping"] = time.perf_counter() - started
        return LanguageResult(
            findings, len(refs), len(pairs), scored, state.sets.fingerprint, timings
        )

    def _close_classes(
        self,
        language: str,
        state: _LanguageState,
        refs: list[Ref],
        metas: list[SnippetMeta],
        shingles: list[U64],
        offset: int,
        focus: Mapping[str, set[int] | None],
        scores: dict[tuple[int, int], Scores],
    ) -> int:
        """Extend a focused scan to whole clone classes (adds to ``scores``; returns pairs scored).

        A focused scan first scores only pairs with a focus snippet. The copies it finds may have
        further copies, and their pairs decide the class's members and score in a full scan, so
        every snippet reached is queried in turn until no new copy turns up.
        """
        threshold = self.config.threshold

        def copies(pairs: Iterable[tuple[int, int]]) -> set[int]:
            return {
                i
                for pair in pairs
                if min(scores[pair][0], scores[pair][1]) >= threshold
                for i in pair
            }

        asked = {
            i
            for i, (path, k) in enumerate(refs)
            if path in focus and (focus[path] is None or k in focus[path])  # type: ignore[operator]
        }
        frontier = copies(scores) - asked
        scored = 0
        while frontier:
            asked |= frontier
            wanted: dict[str, set[int] | None] = {}
            for i in frontier:
                path, k = refs[i]
                entry = wanted.setdefault(path, set())
                assert entry is not None
                entry.add(k)
            found = self._candidates(state, refs, shingles, offset, wanted)
            fresh = [
                (a, b)
                for a, b in found
                if (a, b) not in scores and self._comparable(refs[a], refs[b], metas[a], metas[b])
            ]
            more, count = self._score(language, state, refs, metas, fresh, None)
            scores.update(more)
            scored += count
            frontier = copies(more) - asked
        return scored

    def _candidates(
        self,
        state: _LanguageState,
        refs: list[Ref],
        shingles: list[U64],
        offset: int,
        focus: Mapping[str, set[int] | None] | None,
    ) -> list[tuple[int, int]]:
        top = MAX_CANDIDATES
        found: set[tuple[int, int]] = set()
        if focus is None:
            a, b, _ = state.postings.all_pairs(MIN_SHARE, top)
            found.update(zip(a.tolist(), b.tolist()))
            wanted = list(range(offset, len(refs)))
        else:
            wanted = [
                i
                for i, (path, k) in enumerate(refs)
                if path in focus and (focus[path] is None or k in focus[path])  # type: ignore[operator]
            ]
        for i in wanted:
            owners, _ = state.postings.query(
                shingles[i], MIN_SHARE, top, exclude=i if i < offset else -1
            )
            for j in owners.tolist():
                found.add((min(i, j), max(i, j)))
        # volatile snippets against each other (a buffer's own copies, staged files together)
        found.update(_volatile_pairs(shingles, wanted, range(offset, len(refs))))
        return sorted(found)

    def _comparable(self, ra: Ref, rb: Ref, ma: SnippetMeta, mb: SnippetMeta) -> bool:
        files = self.index.files
        if files[ra[0]].entry.status == GENERATED and files[rb[0]].entry.status == GENERATED:
            return False  # generated code repeating itself is what generators do
        if ra[0] != rb[0]:
            return True
        if not self.config.same_file:
            return False
        return (
            ma.end <= mb.start or mb.end <= ma.start
        )  # nested or overlapping snippets are not copies

    # ------------------------------------------------------------------ scoring
    def _profile(
        self, state: _LanguageState, view: str, ref: Ref, meta: SnippetMeta
    ) -> tuple[Profile, list[str]]:
        key = (view, meta.sha)
        found = state.profiles.get(key)
        if found is not None:
            state.profiles.move_to_end(key)
            return found
        heavy = self.index.heavy(ref[0])
        if view == "n":
            texts = heavy.normalized(meta.start, meta.end)
            found = (state.norm_metric.profile(texts), texts)
        else:
            texts = heavy.texts[meta.start : meta.end]
            found = (state.raw_metric.profile(texts), texts)
        state.profiles[key] = found
        if len(state.profiles) > PROFILE_CACHE:
            state.profiles.popitem(last=False)
        return found

    def _score(
        self,
        language: str,
        state: _LanguageState,
        refs: list[Ref],
        metas: list[SnippetMeta],
        pairs: list[tuple[int, int]],
        progress: Progress | None,
    ) -> tuple[dict[tuple[int, int], Scores], int]:
        needs_tokens = self._smoothing.method >= 5
        threshold = self.config.threshold

        def score(view: str, hyp: int, ref: int) -> float:
            metric = state.norm_metric if view == "n" else state.raw_metric
            h = self._profile(state, view, refs[hyp], metas[hyp])
            r = self._profile(state, view, refs[ref], metas[ref])
            if needs_tokens:
                return metric.score_profiles(h[0], [r[0]], hypothesis=h[1], references=[r[1]])
            return metric.score_profiles(h[0], [r[0]])

        out: dict[tuple[int, int], Scores] = {}
        scored = 0
        cache = state.pair_cache
        for done, (a, b) in enumerate(pairs, 1):
            lo, hi = (a, b) if metas[a].sha <= metas[b].sha else (b, a)
            cache_key = f"{metas[lo].sha}|{metas[hi].sha}"
            values = cache.get(cache_key)
            if values is None or len(values) != 4:
                # Later values are only needed when the earlier ones pass: -1 marks "not computed".
                n_lh = score("n", lo, hi)
                n_hl = r_lh = r_hl = -1.0
                if n_lh >= threshold:
                    n_hl = score("n", hi, lo)
                    if n_hl >= threshold:
                        r_lh = score("r", lo, hi)
                        r_hl = score("r", hi, lo)
                values = [n_lh, n_hl, r_lh, r_hl]
                cache[cache_key] = values
                scored += 1
            if lo == a:
                out[(a, b)] = (values[0], values[1], values[2], values[3])
            else:
                out[(a, b)] = (values[1], values[0], values[3], values[2])
            if progress is not None and done % 500 == 0:
                progress(f"scoring ({language})", done, len(pairs))
        return out, scored

    def _persist(
        self,
        state: _LanguageState,
        scores: Mapping[tuple[int, int], Scores],
        metas: list[SnippetMeta],
    ) -> None:
        """Save the pair scores of a full scan (only pairs among current snippets)."""
        current = {m.sha for m in metas}
        kept = {
            k: v
            for k, v in state.pair_cache.items()
            if k.split("|", 1)[0] in current and k.split("|", 1)[1] in current
        }
        if len(kept) > PAIR_CACHE_LIMIT:
            kept = dict(list(kept.items())[-PAIR_CACHE_LIMIT:])
        state.pair_cache.clear()
        state.pair_cache.update(kept)
        self.index.store.set(state.pair_cache_key, kept)

    # ------------------------------------------------------------------ grouping
    def _drop_nested(
        self,
        kept: dict[tuple[int, int], Scores],
        refs: list[Ref],
        metas: list[SnippetMeta],
    ) -> dict[tuple[int, int], Scores]:
        ancestors = _ancestors(refs, metas, {i for pair in kept for i in pair})
        out = {}
        for (a, b), s in kept.items():
            dominated = any(
                (x, y) != (a, b) and ((x, y) in kept or (y, x) in kept)
                for x in ancestors[a]
                for y in ancestors[b]
            )
            if not dominated:
                out[(a, b)] = s
        return out

    def _group(
        self,
        language: str,
        kept: dict[tuple[int, int], Scores],
        refs: list[Ref],
        metas: list[SnippetMeta],
    ) -> list[Finding]:
        parent: dict[int, int] = {}

        def find(x: int) -> int:
            root = x
            while parent.get(root, root) != root:
                root = parent[root]
            while parent.get(x, x) != root:
                parent[x], x = root, parent[x]
            return root

        for a, b in kept:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        classes: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for pair in kept:
            classes[find(pair[0])].append(pair)
        findings = []
        for members_pairs in classes.values():
            members = sorted(
                {i for pair in members_pairs for i in pair},
                key=lambda i: (refs[i][0], metas[i].start),
            )
            position = {m: k for k, m in enumerate(members)}
            locations = [_location(refs[i], metas[i]) for i in members]
            pair_objs = []
            for a, b in sorted(
                members_pairs, key=lambda p: tuple(sorted((position[p[0]], position[p[1]])))
            ):
                n_ab, n_ba, r_ab, r_ba = kept[(a, b)]
                pa, pb = sorted((position[a], position[b]))
                pair_objs.append(Pair(pa, pb, min(n_ab, n_ba), min(r_ab, r_ba)))
            findings.append(Finding(language, locations, pair_objs))
        return sort_findings(findings)


_VOLATILE = threading.local()


def _volatile_index(shingles: list[U64], volatile: range) -> tuple[U64, I64, I64]:
    """The volatile snippets' shingles sorted, with their owners and each snippet's size.

    Kept for the last ``shingles`` list of the thread: a focused scan asks again for every
    round of copies it follows (``_close_classes``).
    """
    cached = getattr(_VOLATILE, "last", None)
    if cached is not None and cached[0] is shingles and cached[1] == volatile:
        return cached[2], cached[3], cached[4]
    members = [j for j in volatile if len(shingles[j])]
    sizes = np.array([len(s) for s in shingles], dtype=np.int64)
    if members:
        lengths = sizes[members]
        hashes = np.concatenate([shingles[j] for j in members])
        owners = np.repeat(np.array(members, dtype=np.int64), lengths)
        order = np.argsort(hashes, kind="stable")
        hashes, owners = hashes[order], owners[order]
    else:
        hashes, owners = np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    _VOLATILE.last = (shingles, volatile, hashes, owners, sizes)
    return hashes, owners, sizes


def _volatile_pairs(
    shingles: list[U64], wanted: list[int], volatile: range
) -> set[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i`` wanted, ``j`` volatile, ``i != j``, with ``_share >= MIN_SHARE``.

    The same pairs as testing ``_share`` on every combination, in a few array operations:
    shingle arrays hold distinct values, so the postings hits of ``j`` for ``i``'s shingles count
    the shingles both share.
    """
    asking = [i for i in wanted if len(shingles[i])]
    if not asking or not len(volatile):
        return set()
    hashes, owners, sizes = _volatile_index(shingles, volatile)
    if not len(hashes):
        return set()
    ask_lengths = sizes[asking]
    queries = np.concatenate([shingles[i] for i in asking])
    askers = np.repeat(np.array(asking, dtype=np.int64), ask_lengths)
    lo = np.searchsorted(hashes, queries, side="left")
    counts = np.searchsorted(hashes, queries, side="right") - lo
    total = int(counts.sum())
    if not total:
        return set()
    before = np.repeat(np.cumsum(counts) - counts, counts)
    hit_owner = owners[np.repeat(lo, counts) + np.arange(total) - before]
    found: set[tuple[int, int]] = set()
    volatile_ids = np.unique(owners)
    if len(asking) * len(volatile_ids) <= 4_000_000:
        # count shared shingles in a dense (asking x volatile) table
        rows = np.repeat(np.arange(len(asking), dtype=np.int64), ask_lengths)
        rows = np.repeat(rows, counts)
        cols = np.searchsorted(volatile_ids, hit_owner)
        width = len(volatile_ids)
        table = np.bincount(rows * width + cols, minlength=len(asking) * width)
        table = table.reshape(len(asking), width)
        smaller = np.minimum(ask_lengths[:, None], sizes[volatile_ids][None, :])
        with np.errstate(divide="ignore", invalid="ignore"):
            share = table / smaller
        asking_ids = np.array(asking, dtype=np.int64)
        hit = (share >= MIN_SHARE) & (asking_ids[:, None] != volatile_ids[None, :])
        r, c = np.nonzero(hit)
        for i, j in zip(asking_ids[r].tolist(), volatile_ids[c].tolist()):
            found.add((min(i, j), max(i, j)))
        return found
    hit_asker = np.repeat(askers, counts)
    keep = hit_owner != hit_asker
    n = np.int64(len(sizes))
    keys, shared = np.unique(hit_asker[keep] * n + hit_owner[keep], return_counts=True)
    a, b = keys // n, keys % n
    smaller_ab = np.minimum(sizes[a], sizes[b])
    for i, j, common, small in zip(a.tolist(), b.tolist(), shared.tolist(), smaller_ab.tolist()):
        if common / small >= MIN_SHARE:
            found.add((min(i, j), max(i, j)))
    return found


def _share(a: U64, b: U64) -> float:
    smaller = min(len(a), len(b))
    if not smaller:
        return 0.0
    return len(np.intersect1d(a, b, assume_unique=True)) / smaller


def _location(ref: Ref, meta: SnippetMeta) -> Location:
    return Location(
        ref[0],
        meta.first_line,
        meta.first_col,
        meta.last_line,
        meta.last_col,
        meta.kind,
        meta.name,
        meta.tokens,
        meta.sha,
        meta.norm_sha,
    )


def _ancestors(
    refs: list[Ref], metas: list[SnippetMeta], wanted: Iterable[int]
) -> dict[int, list[int]]:
    """For each wanted snippet: itself and every snippet of its file that contains it."""
    by_path: dict[str, list[int]] = defaultdict(list)
    for i, (path, _) in enumerate(refs):
        by_path[path].append(i)
    out: dict[int, list[int]] = {}
    for i in wanted:
        path = refs[i][0]
        m = metas[i]
        out[i] = [j for j in by_path[path] if metas[j].start <= m.start and m.end <= metas[j].end]
    return out


def shared_ngrams(
    texts_a: list[str],
    texts_b: list[str],
    ignore: frozenset[tuple[str, ...]],
    n: int = 4,
    limit: int = 10,
) -> list[list[str]]:
    """Non-trivial n-grams two token sequences share, in the order they occur in the first."""
    other = set(zip(*[texts_b[i:] for i in range(n)]))
    seen: set[tuple[str, ...]] = set()
    out: list[list[str]] = []
    for gram in zip(*[texts_a[i:] for i in range(n)]):
        if gram in other and gram not in ignore and gram not in seen:
            seen.add(gram)
            out.append(list(gram))
            if len(out) >= limit:
                break
    return out
