"""The trivially shared set S: the k most frequent n-grams (orders 1..max_n, mixed) of a corpus.

Counting follows the reference implementation's README: every n-gram of every document (n-grams
never span two documents) is counted, and the ``k`` most frequent are kept, whatever their order.

Ties at the k-th count are broken as the reference does by default (``tie_break="first-seen"``):
``collections.Counter.most_common`` on the reference's iteration order (document by document,
orders 1..max_n within a document), so an S built here equals the one the ``crystalbleu`` README's
recipe and the reference evaluation build. ``tie_break="canonical"`` instead orders equal counts
independently of the order files are read in: lower order first, then the n-gram's tokens compared
as strings (code point order); the built-in sets and the distributed engines use it. Every S
records its tie-break, and every signature of a score names it.

With the native core (:mod:`crystal_lsp.metric.ngrams`), counting runs in C over token ids and only
the candidates for the top k (n-grams at least as frequent as the k-th count) become Python
tuples; they are ranked by the same :func:`top_k`, so S is the same.

S is saved as a small versioned JSON file (optionally gzip-compressed by a ``.gz`` suffix).
"""

from __future__ import annotations

import gzip
import hashlib
import heapq
import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.ngrams import Ngram, as_sequence, native_counter
from crystal_lsp.text.datafiles import read_json, write_atomic

if TYPE_CHECKING:
    from crystal_lsp.metric._native import NgramCounter

FORMAT = "crystal-lsp/sset"
FORMAT_VERSION = 1
DEFAULT_K = 500
DEFAULT_MAX_N = 4
TIE_BREAKS = ("first-seen", "canonical")
DEFAULT_TIE_BREAK = "first-seen"
"""The reference's ``Counter.most_common`` order: the default of every command and function."""
CURVE_POINTS = 10_000


@dataclass
class TriviallySharedSet:
    """S with the corpus count of each member, ranked, plus how it was built."""

    counts: dict[Ngram, int]
    k: int = DEFAULT_K
    max_n: int = DEFAULT_MAX_N
    language: str = ""
    documents: int = 0
    tokens: int = 0
    tie_break: str = DEFAULT_TIE_BREAK
    tokenizer: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    _frozen: frozenset[Ngram] | None = field(default=None, repr=False, compare=False)
    _fingerprint: str | None = field(default=None, repr=False, compare=False)

    def __contains__(self, gram: object) -> bool:
        return gram in self.counts

    def __len__(self) -> int:
        return len(self.counts)

    def __iter__(self) -> Iterator[Ngram]:
        return iter(self.counts)

    def as_frozenset(self) -> frozenset[Ngram]:
        """The members as a frozenset (built once)."""
        if self._frozen is None:
            self._frozen = frozenset(self.counts)
        return self._frozen

    def as_ignoring(self) -> dict[Ngram, int]:
        """The members with counts, in the ``ignoring=`` form the ``crystalbleu`` package takes."""
        return dict(self.counts)

    def top(self, n: int | None = None, order: int | None = None) -> list[tuple[Ngram, int]]:
        """The ``n`` highest-ranked members, optionally of one order only."""
        items = [(g, c) for g, c in self.counts.items() if order is None or len(g) == order]
        return items if n is None else items[:n]

    def fingerprint(self) -> str:
        """A 12-hex-digit digest of the members and their counts (part of every signature)."""
        # computed once, like as_frozenset(): a set is not changed after it is built (the
        # clone finder asks for it on every scan, a language server on every keystroke)
        if self._fingerprint is not None:
            return self._fingerprint
        digest = hashlib.sha256()
        for gram, count in self.counts.items():
            digest.update(json.dumps([list(gram), count], ensure_ascii=False).encode())
            digest.update(b"\n")
        self._fingerprint = digest.hexdigest()[:12]
        return self._fingerprint

    def restricted(self, k: int) -> TriviallySharedSet:
        """The top ``k`` of this set (a set built with a larger k contains every smaller one)."""
        if k > self.k:
            raise CrystalError(f"cannot take the top {k} of a set built with k={self.k}")
        return self._derived(dict(list(self.counts.items())[:k]), k, dict(self.meta))

    def without_unigrams(self) -> TriviallySharedSet:
        """The members of order 2 and above (same k, rank order and counts).

        The clone finder's normalized view uses this: its vocabulary is so small (``ID``, ``STR``,
        keywords, operators) that every unigram of a typical snippet is among the most frequent,
        and BLEU is 0 whenever no unigram is left to match, however many 4-grams agree.
        """
        kept = {g: c for g, c in self.counts.items() if len(g) > 1}
        return self._derived(kept, self.k, {**self.meta, "orders": f"2-{self.max_n}"})

    def _derived(
        self, counts: dict[Ngram, int], k: int, meta: dict[str, Any]
    ) -> TriviallySharedSet:
        """A set with other members, k and meta, built from the same corpus (no cached fields)."""
        return TriviallySharedSet(
            counts,
            k,
            self.max_n,
            self.language,
            self.documents,
            self.tokens,
            self.tie_break,
            self.tokenizer,
            meta,
        )

    def to_json(self) -> dict[str, Any]:
        """The versioned JSON document of this set."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "language": self.language,
            "k": self.k,
            "max_n": self.max_n,
            "documents": self.documents,
            "tokens": self.tokens,
            "tie_break": self.tie_break,
            "tokenizer": self.tokenizer,
            "fingerprint": self.fingerprint(),
            "meta": self.meta,
            "ngrams": [[list(g), c] for g, c in self.counts.items()],
        }

    @classmethod
    def from_json(cls, doc: Any, source: str = "<data>") -> TriviallySharedSet:
        """Validate and load a JSON document written by :meth:`to_json`."""
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise CrystalError(f"{source}: not a crystal-lsp S-set file")
        if doc.get("version") != FORMAT_VERSION:
            raise CrystalError(
                f"{source}: S-set format version {doc.get('version')!r} is not supported "
                f"(this crystal-lsp reads version {FORMAT_VERSION})"
            )
        try:
            counts: dict[Ngram, int] = {}
            for gram, count in doc["ngrams"]:
                if not isinstance(gram, list) or not all(isinstance(t, str) for t in gram):
                    raise TypeError("n-gram is not a list of strings")
                counts[tuple(gram)] = int(count)
            loaded = cls(
                counts,
                k=int(doc["k"]),
                max_n=int(doc["max_n"]),
                language=str(doc.get("language", "")),
                documents=int(doc.get("documents", 0)),
                tokens=int(doc.get("tokens", 0)),
                tie_break=str(doc.get("tie_break", "canonical")),
                tokenizer=str(doc.get("tokenizer", "")),
                meta=dict(doc.get("meta", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CrystalError(f"{source}: malformed S-set file ({exc})") from None
        expected = doc.get("fingerprint")
        if expected is not None and expected != loaded.fingerprint():
            raise CrystalError(f"{source}: S-set file is corrupted (fingerprint mismatch)")
        return loaded

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the set as JSON (gzip-compressed when the name ends in ``.gz``), atomically."""
        data = json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":")).encode()
        target = os.fspath(path)
        write_atomic(target, gzip.compress(data, mtime=0) if target.endswith(".gz") else data)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TriviallySharedSet:
        """Read a set written by :meth:`save` (through the guarded reader, size and depth bounded)."""
        name = os.fspath(path)
        return cls.from_json(read_json(name, "S-set file"), name)


def count_ngrams(
    documents: Iterable[Sequence[Any]], max_n: int = DEFAULT_MAX_N
) -> tuple[Counter[Ngram], int, int]:
    """Count every 1..max_n-gram of every document; returns ``(counts, documents, tokens)``.

    Insertion order is the reference's: document by document, orders 1..max_n within each.
    """
    table, docs, tokens = _count(documents, max_n)
    if isinstance(table, Counter):
        return table, docs, tokens
    return Counter(table.items()), docs, tokens


def _count(
    documents: Iterable[Sequence[Any]], max_n: int
) -> tuple[Counter[Ngram] | NgramCounter, int, int]:
    """The count table: native while every token is a ``str``, else a ``Counter``."""
    native = native_counter(max_n)
    if native is None:
        return _count_python(documents, max_n, Counter(), 0, 0)
    remaining = iter(documents)
    for doc in remaining:
        seq = as_sequence(doc)
        if not native.add(seq if type(seq) is list or type(seq) is tuple else list(seq)):
            # a token that is not a str: carry on in Python from the counts so far (the table
            # keeps its first-seen order, so the result is the same)
            counts = Counter(native.items())
            return _count_python(
                chain([seq], remaining), max_n, counts, native.documents, native.tokens
            )
    return native, native.documents, native.tokens


def _count_python(
    documents: Iterable[Sequence[Any]],
    max_n: int,
    counts: Counter[Ngram],
    docs: int,
    tokens: int,
) -> tuple[Counter[Ngram], int, int]:
    update = counts.update
    for doc in documents:
        seq = as_sequence(doc)
        docs += 1
        tokens += len(seq)
        update(zip(seq))
        for n in range(2, max_n + 1):
            update(zip(*[seq[i:] for i in range(n)]))
    return counts, docs, tokens


def rank_key(item: tuple[Ngram, int]) -> tuple[int, int, Ngram]:
    """The canonical ranking: count descending, order ascending, tokens ascending."""
    gram, count = item
    return (-count, len(gram), gram)


def top_k(
    counts: Counter[Ngram] | dict[Ngram, int], k: int, tie_break: str = DEFAULT_TIE_BREAK
) -> dict[Ngram, int]:
    """The ``k`` highest-ranked n-grams of a count table, in rank order."""
    if tie_break not in TIE_BREAKS:
        raise CrystalError(f"unknown tie-break {tie_break!r} (use {' or '.join(TIE_BREAKS)})")
    if k <= 0:
        return {}
    if tie_break == "first-seen":
        if isinstance(counts, Counter):
            return dict(counts.most_common(k))
        return dict(Counter(counts).most_common(k))
    if len(counts) <= k:
        return dict(sorted(counts.items(), key=rank_key))
    # Only n-grams at least as frequent as the k-th count can be in the top k: rank just those
    # instead of calling the key function on every distinct n-gram.
    threshold = heapq.nlargest(k, counts.values())[-1]
    eligible = [item for item in counts.items() if item[1] >= threshold]
    return dict(heapq.nsmallest(k, eligible, key=rank_key))


def build_sset(
    documents: Iterable[Sequence[Any]],
    k: int = DEFAULT_K,
    max_n: int = DEFAULT_MAX_N,
    *,
    language: str = "",
    tie_break: str = DEFAULT_TIE_BREAK,
    tokenizer: str = "",
) -> TriviallySharedSet:
    """Build S from token sequences (one per document or snippet)."""
    if k < 0:
        raise CrystalError(f"k must be at least 0, not {k}")
    if max_n < 1:
        raise CrystalError(f"max n must be at least 1, not {max_n}")
    table, docs, tokens = _count(documents, max_n)
    if isinstance(table, Counter):
        top, curve = top_k(table, k, tie_break), frequency_curve(table)
    else:
        # Only n-grams at least as frequent as the k-th count can be in the top k, whatever the
        # tie-break: materialise those (in first-seen order) and rank them as top_k does.
        threshold = table.largest(k)[-1] if 0 < k < len(table) else 0
        candidates = table.items(threshold) if k > 0 else {}
        top, curve = top_k(candidates, k, tie_break), table.largest(CURVE_POINTS)
    return TriviallySharedSet(
        top, k, max_n, language, docs, tokens, tie_break, tokenizer, {"curve": curve}
    )


def frequency_curve(
    counts: Counter[Ngram] | dict[Ngram, int], points: int = CURVE_POINTS
) -> list[int]:
    """The counts of the ``points`` most frequent n-grams, descending (the paper's Fig. 7)."""
    return sorted(heapq.nlargest(points, counts.values()), reverse=True)


def suggest_k(curve: Sequence[int], hi: int = 5000) -> int:
    """The knee of a rank-frequency curve: Kneedle on linear axes over ranks 1..``hi``.

    The paper (§4.6, Fig. 7) picks k where the curve of the most frequent n-grams flattens.
    Kneedle (Satopää et al. 2011) normalises the curve to the unit square and takes the rank
    farthest below the chord joining its ends. On linear axes over the top 5,000 ranks this
    lands around 80-170 on Python and Java corpora, the low end of the paper's 100-1000 range;
    log-log axes have no knee (frequency curves are close to straight lines there).
    """
    hi = min(hi, len(curve))
    if hi < 3:
        return max(1, hi)
    top, bottom = curve[0], curve[hi - 1]
    span_y = (top - bottom) or 1
    best_rank, best_gap = 1, -math.inf
    for rank in range(1, hi + 1):
        xn = (rank - 1) / (hi - 1)
        yn = (curve[rank - 1] - bottom) / span_y
        gap = (1.0 - xn) - yn
        if gap > best_gap:
            best_rank, best_gap = rank, gap
    return best_rank


# Languages without a built-in set of their own borrow their closest relative's.
BUILTIN_FAMILY = {
    "jsx": "javascript",
    "tsx": "javascript",
    "typescript": "javascript",
    "vue": "javascript",
    "cuda": "cpp",
    "objective-c++": "cpp",
    "objective-c": "c",
}


def builtin_sset(language: str, view: str = "raw") -> TriviallySharedSet | None:
    """The S set shipped with crystal_lsp for a language (``view``: raw or normalized).

    Built by ``bench/build_builtin_ssets.py`` from large public code bases (CPython's standard
    library, a JDK's class library, npm's sources, the C and C++ system headers); see
    ``crystal_lsp/data/README.md``. Languages without a set of their own use their family's
    (TypeScript and JSX use JavaScript's, Objective-C uses C's).
    """
    from importlib import resources

    suffix = "" if view == "raw" else f".{view}"
    for name in (language, BUILTIN_FAMILY.get(language)):
        if not name:
            continue
        resource = (
            resources.files("crystal_lsp").joinpath("data").joinpath(f"sset-{name}{suffix}.json.gz")
        )
        if resource.is_file():
            with resources.as_file(resource) as path:
                return TriviallySharedSet.load(path)
    return None
