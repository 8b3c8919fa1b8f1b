"""How similar two pieces of code are: the one seam every adapter asks.

The clone finder, its Dask engine, the language server (diagnostics, hover, automatic references)
and the pre-commit hook (moves) all compare code the same way, through a :class:`Similarity`
built from the settings and one language's two S sets (see :mod:`crystal_lsp.clones.index.repo`):

* the **decision similarity**: CrystalBLEU of the normalized view (identifiers and literals
  abstracted, :mod:`crystal_lsp.text.views`) with the normalized S set, the lower of both
  directions. A consistent renaming leaves the normalized view unchanged, so renamed copies
  score 1; taking the lower direction keeps a small piece contained in a large one from
  passing as its copy.
* **raw CrystalBLEU**: the same on the raw tokens with the raw S set. It is also the check that
  normalization alone does not make different code look alike: two pieces are copies only when
  their raw tokens agree too (raw CrystalBLEU at least ``RAW_MIN``) or when they differ by a
  *consistent renaming* (:func:`renaming`: every identifier of one maps to one identifier of the
  other, and the literals are the same), which is what a renamed copy is.
* the **shared non-trivial n-grams** (not in S), which explain a score;
* a **retriever** of candidates: postings of the normalized-view shingles minus the shingles of
  S (:class:`crystal_lsp.clones.index.retrieval.Postings`).

Scores of a pair are computed lazily in a fixed order -- normalized a→b, then b→a only if that
reaches the threshold, then both raw directions only if both pass, then the renaming only if raw
CrystalBLEU is below ``RAW_MIN`` -- and ``-1`` marks a value not computed. They depend only on the
two contents, so they are cached by content digests.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from crystal_lsp.clones.index.retrieval import Postings
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.ngrams import Profile
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.fingerprints import SHINGLE_N, U64, gram_hashes
from crystal_lsp.text.views import normalized, normalized_positions

PROFILE_CACHE = 4096
Scores = tuple[float, float, float, float, float]
"""Normalized a→b, b→a, raw a→b, b→a, renaming (``-1``: not computed)."""
SCORES = 5
RAW_MIN = 0.5
"""Raw CrystalBLEU (lower direction) from which two normalized-alike pieces are copies outright."""
RENAMING_MIN = 0.85
"""Below ``RAW_MIN``, the consistency of the renaming that makes two pieces copies."""
NORMALIZED, RAW = "n", "r"


@dataclass(frozen=True)
class Code:
    """A piece of code as the seam compares it: raw token texts, categories (and lines)."""

    texts: Sequence[str]
    cats: str
    lines: Sequence[int] | None = None
    """The line of each token, when known: aligns a renaming line by line."""

    def view(self, name: str) -> list[str]:
        """The tokens of one view (``"n"`` normalized, ``"r"`` raw)."""
        if name == NORMALIZED:
            return normalized(self.texts, self.cats)
        return list(self.texts)


Loader = Callable[[], Code]
Item = tuple[str, Loader]
"""A piece of code by content digest, loaded only when its profile is not cached."""


@dataclass
class Similarity:
    """Pair similarity of one language under one set of S sets and settings (module docstring)."""

    raw: TriviallySharedSet
    norm: TriviallySharedSet
    max_n: int
    smoothing: Smoothing
    language: str
    threshold: float
    cache: dict[str, list[float]] = field(default_factory=dict)
    """The four scores of pairs by ``"lo|hi"`` content digests (see :meth:`pair_key`)."""

    def __post_init__(self) -> None:
        args = {"max_n": self.max_n, "smoothing": self.smoothing, "language": self.language}
        self._metrics = {
            RAW: CrystalBLEU(self.raw, **args),  # type: ignore[arg-type]
            NORMALIZED: CrystalBLEU(self.norm, **args),  # type: ignore[arg-type]
        }
        self._bleu = CrystalBLEU(None, **args)  # type: ignore[arg-type]
        self._needs_tokens = self.smoothing.method >= 5
        self._profiles: OrderedDict[tuple[str, str], tuple[Profile, list[str]]] = OrderedDict()

    @classmethod
    def of(
        cls, raw: TriviallySharedSet, norm: TriviallySharedSet, config: ScanConfig, language: str
    ) -> Similarity:
        """The similarity of a language's S sets under the clone-finding settings."""
        return cls(raw, norm, config.max_n, config.smoothing_spec, language, config.threshold)

    @property
    def fingerprint(self) -> str:
        """Both S fingerprints, e.g. ``3f2a9c1b7d0e/77c0de12ab34``."""
        return f"{self.raw.fingerprint()}/{self.norm.fingerprint()}"

    @property
    def signature(self) -> str:
        """The signature of the raw CrystalBLEU scores (metric, S, settings, version)."""
        return str(self._metrics[RAW].signature)

    # ------------------------------------------------------------------ scores
    def profile(self, view: str, item: Item) -> tuple[Profile, list[str]]:
        """The n-gram profile (and tokens) of one view of a piece of code, cached by digest."""
        key = (view, item[0])
        found = self._profiles.get(key)
        if found is not None:
            self._profiles.move_to_end(key)
            return found
        tokens = item[1]().view(view)
        found = (self._metrics[view].profile(tokens), tokens)
        if item[0]:
            self._profiles[key] = found
            if len(self._profiles) > PROFILE_CACHE:
                self._profiles.popitem(last=False)
        return found

    def directed(self, view: str, hyp: Item, ref: Item) -> float:
        """CrystalBLEU of ``hyp`` against ``ref`` in one view."""
        metric = self._metrics[view]
        h, r = self.profile(view, hyp), self.profile(view, ref)
        if self._needs_tokens:
            return metric.score_profiles(h[0], [r[0]], hypothesis=h[1], references=[r[1]])
        return metric.score_profiles(h[0], [r[0]])

    def pair_scores(self, lo: Item, hi: Item) -> list[float]:
        """The lazily computed scores of a pair (module docstring), ``lo`` first."""
        n_lh = self.directed(NORMALIZED, lo, hi)
        n_hl = r_lh = r_hl = renamed = -1.0
        if n_lh >= self.threshold:
            n_hl = self.directed(NORMALIZED, hi, lo)
            if n_hl >= self.threshold:
                r_lh = self.directed(RAW, lo, hi)
                r_hl = self.directed(RAW, hi, lo)
                if min(r_lh, r_hl) < RAW_MIN:
                    renamed = renaming(lo[1](), hi[1]())
        return [n_lh, n_hl, r_lh, r_hl, renamed]

    def copies(self, scores: Sequence[float]) -> bool:
        """Whether scores (:meth:`pair_scores`) make two pieces copies (module docstring)."""
        if min(scores[0], scores[1]) < self.threshold:
            return False
        return min(scores[2], scores[3]) >= RAW_MIN or scores[4] >= RENAMING_MIN

    @staticmethod
    def pair_key(a: str, b: str) -> tuple[str, bool]:
        """The cache key of a pair of digests, and whether ``a`` is its first member."""
        return (f"{a}|{b}", True) if a <= b else (f"{b}|{a}", False)

    def cached(self, a: str, b: str) -> Scores | None:
        """The scores of ``a`` against ``b`` if cached, oriented ``a`` first."""
        key, forward = self.pair_key(a, b)
        values = self.cache.get(key)
        if values is None or len(values) != SCORES:
            return None
        return oriented(values, forward)

    def scores(self, a: Item, b: Item) -> Scores:
        """The scores of ``a`` against ``b`` (cached by content when both have digests)."""
        found = self.cached(a[0], b[0]) if a[0] and b[0] else None
        if found is not None:
            return found
        key, forward = self.pair_key(a[0], b[0])
        values = self.pair_scores(a, b) if forward else self.pair_scores(b, a)
        if a[0] and b[0]:
            self.cache[key] = values
        return oriented(values, forward)

    def decision(self, a: Item, b: Item) -> float:
        """The decision similarity alone: both normalized directions, the lower one."""
        return min(self.directed(NORMALIZED, a, b), self.directed(NORMALIZED, b, a))

    def bleu(self, a: Sequence[str], b: Sequence[str]) -> float:
        """Plain BLEU of the raw tokens (no S), the lower of both directions."""
        return min(self._bleu.sentence_score(a, [b]), self._bleu.sentence_score(b, [a]))

    def shared_ngrams(
        self, a: Sequence[str], b: Sequence[str], n: int = 4, limit: int = 10
    ) -> list[list[str]]:
        """Non-trivial raw n-grams (not in the raw S) both share, in the order of ``a``."""
        return shared_ngrams(list(a), list(b), self.raw.as_frozenset(), n=n, limit=limit)

    # ------------------------------------------------------------------ retrieval
    def retriever(self, shingles: Sequence[U64], max_df: int) -> Postings:
        """Candidate retrieval over snippets' shingles, without the shingles of S."""
        return Postings(shingles, trivial_shingles(self.norm), max_df)


def oriented(values: Sequence[float], forward: bool) -> Scores:
    """Stored scores (first member first) oriented as asked."""
    if forward:
        return (values[0], values[1], values[2], values[3], values[4])
    return (values[1], values[0], values[3], values[2], values[4])


def renaming(a: Code, b: Code, min_repeated: int = 4) -> float:
    """How consistently ``b`` is ``a`` with identifiers renamed and literals kept (0..1).

    Tokens are aligned (:func:`aligned_tokens`); over the aligned identifiers used more than
    once, the share of their uses that follow one bijection of names, and over the aligned
    literals that are values (not prose: docstrings and long messages get reworded), the share
    that are equal; the lower of the two. Fewer than ``min_repeated`` aligned uses of repeated
    identifiers say nothing about a renaming: 0.
    """
    names: Counter[tuple[str, str]] = Counter()
    literals = same_literals = 0
    for i, j in aligned_tokens(a, b):
        cat = a.cats[i]
        if cat == "N" and b.cats[j] == "N":
            names[(a.texts[i], b.texts[j])] += 1
        elif cat in "SM" and _value_like(a.texts[i]) and _value_like(b.texts[j]):
            literals += 1
            same_literals += a.texts[i] == b.texts[j]
    uses: Counter[str] = Counter()
    for (x, _), count in names.items():
        uses[x] += count
    repeated = sum(count for x, count in uses.items() if count > 1)
    if repeated < min_repeated:
        return 0.0
    forward: dict[str, str] = {}
    taken: set[str] = set()
    for (x, y), _count in names.most_common():
        if x not in forward and y not in taken:
            forward[x] = y
            taken.add(y)
    consistent = sum(c for (x, y), c in names.items() if uses[x] > 1 and forward.get(x) == y)
    literal_share = same_literals / literals if literals else 1.0
    return min(consistent / repeated, literal_share)


def aligned_tokens(a: Code, b: Code) -> list[tuple[int, int]]:
    """Raw token pairs that correspond in two pieces of code.

    With lines: the lines are aligned by shape (names as ``ID``, literals as ``LIT``), and the
    tokens of two corresponding lines pair up in order -- an edited line pairs nothing, so an
    edit never shifts what a name is paired with. Without: the normalized views are aligned by
    their longest matching blocks.
    """
    if a.lines is not None and b.lines is not None:
        la, lb = _shaped_lines(a), _shaped_lines(b)
        matcher = SequenceMatcher(None, [s for _, _, s in la], [s for _, _, s in lb], False)
        out: list[tuple[int, int]] = []
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                (a0, a1, _), (b0, _, _) = la[block.a + k], lb[block.b + k]
                out.extend((a0 + t, b0 + t) for t in range(a1 - a0))
        return out
    pos_a, pos_b = normalized_positions(a.cats), normalized_positions(b.cats)
    matcher = SequenceMatcher(None, a.view(NORMALIZED), b.view(NORMALIZED), autojunk=False)
    return [
        (pos_a[block.a + t], pos_b[block.b + t])
        for block in matcher.get_matching_blocks()
        for t in range(block.size)
    ]


def _shaped_lines(code: Code) -> list[tuple[int, int, str]]:
    """``(first token, end, shape)`` of each line of a piece of code with lines."""
    assert code.lines is not None
    out: list[tuple[int, int, str]] = []
    start = 0
    for i in range(1, len(code.texts) + 1):
        if i == len(code.texts) or code.lines[i] != code.lines[i - 1]:
            shape = " ".join(
                "ID" if c in "NAB" else "LIT" if c in "SM" else t
                for t, c in zip(code.texts[start:i], code.cats[start:i])
            )
            out.append((start, i, shape))
            start = i
    return out


def _value_like(text: str) -> bool:
    """A literal a renamed copy keeps: not prose (a docstring, a message of many words)."""
    return len(text) < 40 and "\n" not in text and not text.startswith(('"""', "'''"))


def trivial_shingles(norm: TriviallySharedSet) -> U64:
    """The shingle hashes of the normalized S set's 4-grams (never used to retrieve)."""
    return gram_hashes([g for g in norm.counts if len(g) == SHINGLE_N])


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
