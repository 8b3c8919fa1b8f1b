"""Chains: matched seeds of two files joined into aligned regions, with gaps for edited code.

Matches (:mod:`crystal_lsp.clones.align.seeds`) of one file pair that lie on the same diagonal
(``pb - pa``) and follow each other closely form a *run*: a stretch of identical normalized
tokens. A copy that was edited is a series of runs on nearby diagonals: an inserted line shifts
the diagonal by its length, a changed expression leaves a hole. Runs are joined into *chains* by
dynamic programming over the runs of each file pair (as read aligners chain their anchors): a run
may follow another when it starts after it in both files, no more than ``CHAIN_GAP`` tokens
later, and the score of a chain is the tokens its runs cover minus a cost for the gaps and for the
shift between the diagonals. Each chain is one candidate copy: a region of each file.

Within one file a chain must not overlap itself: three functions written alike one after the
other align on one diagonal (the first with the second, the second with the third), so a chain
whose two sides overlap is cut where its second side begins. A stretch that repeats with a short
period (the cases of a ``switch``, the rows of an ``if`` chain, a table) aligns with itself on
every multiple of that period; a pair whose span is covered by a diagonal shorter than half of
one side -- each side repeats within itself -- is such a *repetition*, not a copy, and is dropped
(and counted).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from crystal_lsp.clones.align.seeds import I64, SEED, Bools, Matches
from crystal_lsp.metric.ngrams import native_chain_pairs

RUN_GAP = SEED
"""Seeds on one diagonal at most this many positions apart belong to one run."""
CHAIN_GAP = 48
"""The most normalized tokens an edit may add or remove between two runs of one chain."""
LOOKBACK = 48
"""How many earlier runs the chaining considers as a run's predecessor."""
MAX_RUNS = 20_000
"""Runs of one file pair beyond this many (the longest are kept) are not chained, and counted."""
PERIODIC_COVER = 0.5


@dataclass
class Chain:
    """Aligned runs of two files: tokens ``[i0, i1)`` of ``fa`` align with ``j0..`` of ``fb``.

    A chain's runs are not changed once it is made (its extent is computed once).
    """

    fa: int
    fb: int
    runs: list[tuple[int, int, int]]
    _extent: tuple[int, int, int, int] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def a0(self) -> int:
        """First normalized token of the region in ``fa``."""
        return self.runs[0][0]

    @property
    def a1(self) -> int:
        """End (exclusive) of the region in ``fa``."""
        return self.extent[0]

    @property
    def b0(self) -> int:
        """First normalized token of the region in ``fb``."""
        return self.extent[1]

    @property
    def b1(self) -> int:
        """End (exclusive) of the region in ``fb``."""
        return self.extent[2]

    @property
    def density(self) -> float:
        """The share of each region its runs cover (the lower of the two)."""
        span = max(self.a1 - self.a0, self.b1 - self.b0)
        return self.aligned / span if span else 0.0

    @property
    def aligned(self) -> int:
        """Tokens of ``fa`` the runs cover."""
        return self.extent[3]

    @property
    def extent(self) -> tuple[int, int, int, int]:
        """``a1``, ``b0``, ``b1`` and ``aligned``, computed once."""
        if self._extent is None:
            covered = 0
            end = -1
            for i0, i1, _ in sorted(self.runs):
                covered += max(0, i1 - max(i0, end))
                end = max(end, i1)
            runs = self.runs
            self._extent = (
                max(i1 for _, i1, _ in runs),
                min(j0 for _, _, j0 in runs),
                max(j0 + i1 - i0 for i0, i1, j0 in runs),
                covered,
            )
        return self._extent


REPETITIVE, CONVENTION, CAPPED = "repetitive", "convention", "runs beyond the cap"


@dataclass
class ChainStats:
    """What chaining left out, by file pair and reason."""

    per_pair: dict[tuple[int, int], Counter[str]] = field(default_factory=dict)

    def count(self, fa: int, fb: int, reason: str, n: int = 1) -> None:
        """Add ``n`` to a reason of a file pair."""
        self.per_pair.setdefault((fa, fb), Counter())[reason] += n

    def total(self, reason: str) -> int:
        """A reason's count over all pairs."""
        return sum(c[reason] for c in self.per_pair.values())

    @property
    def repetitive(self) -> int:
        """Same-file pieces dropped as repetitions."""
        return self.total(REPETITIVE)

    @property
    def convention_pairs(self) -> int:
        """File pairs whose aligned tokens are all noise (:mod:`crystal_lsp.text.noise`)."""
        return self.total(CONVENTION)

    @property
    def capped_runs(self) -> int:
        """Runs of file pairs beyond ``MAX_RUNS``."""
        return self.total(CAPPED)


@dataclass(frozen=True)
class Runs:
    """Runs of matched seeds: file pair, first token in each file, and length in tokens."""

    fa: I64
    fb: I64
    i0: I64
    j0: I64
    length: I64


def runs_of(matches: Matches) -> Runs:
    """The runs of a set of matches (module docstring), sorted by file pair, diagonal, start."""
    fa, pa, fb, pb = matches.fa, matches.pa, matches.fb, matches.pb
    diagonal = pb - pa
    order = _order(fa, fb, diagonal, pa)
    fa, fb, pa, diagonal = fa[order], fb[order], pa[order], diagonal[order]
    if not len(fa):
        empty = np.empty(0, dtype=np.int64)
        return Runs(empty, empty, empty, empty, empty)
    new = np.r_[
        True,
        (fa[1:] != fa[:-1])
        | (fb[1:] != fb[:-1])
        | (diagonal[1:] != diagonal[:-1])
        | (pa[1:] - pa[:-1] > RUN_GAP),
    ]
    first = np.flatnonzero(new)
    last = np.r_[first[1:], len(pa)] - 1
    i0 = pa[first]
    return Runs(fa[first], fb[first], i0, i0 + diagonal[first], pa[last] - i0 + SEED)


def _order(fa: I64, fb: I64, diagonal: I64, pa: I64) -> I64:
    """The order of matches by file pair, diagonal and start (no two matches are equal in all).

    One sort of a packed key when the four fit into 63 bits (they usually do), else a lexsort.
    """
    if not len(fa):
        return np.empty(0, dtype=np.int64)
    files = int(max(fa.max(), fb.max())) + 1
    low, high = int(diagonal.min()), int(diagonal.max())
    starts = int(pa.max()) + 1
    if files * files * (high - low + 1) * starts < 2**63:
        key = ((fa * files + fb) * (high - low + 1) + (diagonal - low)) * starts + pa
        order: I64 = np.argsort(key)
        return order
    order = np.lexsort((pa, diagonal, fb, fa))
    return order


def chains_of(
    runs: Runs,
    min_aligned: int,
    stats: ChainStats,
    keep_pair: Callable[[int, int], bool],
    weight: I64 | None = None,
    keep_pairs: Callable[[I64, I64], Bools] | None = None,
) -> list[Chain]:
    """The chains of every file pair whose runs cover at least ``min_aligned`` tokens.

    ``weight`` is what each run is worth to a chain (default: its length; the finder gives the
    tokens outside noise, so that aligned signatures do not pull two bodies together).
    ``keep_pairs``, if given, answers ``keep_pair`` for arrays of pairs at once (and is used
    instead).
    """
    if not len(runs.fa):
        return []
    key = runs.fa * (int(runs.fb.max()) + 1) + runs.fb
    bounds = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ends = np.r_[bounds[1:], len(key)]
    worth = runs.length if weight is None else weight
    support = np.add.reduceat(runs.length, bounds)
    worthy = np.add.reduceat(worth, bounds)
    chosen = np.flatnonzero(support >= min_aligned)
    if keep_pairs is not None:
        chosen = chosen[keep_pairs(runs.fa[bounds[chosen]], runs.fb[bounds[chosen]])]
        keep_pair = _always
    pairs: list[tuple[int, int, int, int, bool]] = []
    for b, e, worth_total, fa, fb in zip(
        bounds[chosen].tolist(),
        ends[chosen].tolist(),
        worthy[chosen].tolist(),
        runs.fa[bounds[chosen]].tolist(),
        runs.fb[bounds[chosen]].tolist(),
    ):
        if keep_pair(fa, fb):
            # below the worth: all they share is signatures, imports, tables (a convention)
            pairs.append((b, e, fa, fb, worth_total < min_aligned))
    chained = iter(_chained(runs, worth, [p[:4] for p in pairs if not p[4]], min_aligned))
    out: list[Chain] = []
    for b, e, fa, fb, convention in pairs:
        if convention:
            stats.count(fa, fb, CONVENTION)
            continue
        found, top = next(chained)
        if top is not None:
            stats.count(fa, fb, CAPPED, e - b - MAX_RUNS)
        if fa == fb:
            at = top if top is not None else slice(b, e)
            found = _not_self_overlapping(
                found, runs.i0[at], runs.j0[at], runs.length[at], stats, min_aligned
            )
        out.extend(c for c in found if c.aligned >= min_aligned)
    return out


def _always(fa: int, fb: int) -> bool:
    return True


def _chained(
    runs: Runs, worth: I64, pairs: list[tuple[int, int, int, int]], min_aligned: int
) -> list[tuple[list[Chain], I64 | None]]:
    """The chains of each file pair's runs ``[b, e)``, and the runs kept when capped.

    Of a pair with more than ``MAX_RUNS`` runs, the longest are chained (the rest counted by
    the caller).
    """
    out: list[tuple[list[Chain], I64 | None]] = [([], None) for _ in pairs]
    plain: list[int] = []
    for k, (b, e, fa, fb) in enumerate(pairs):
        if e - b <= MAX_RUNS:
            plain.append(k)
            continue
        top = b + np.sort(np.argsort(-runs.length[b:e], kind="stable")[:MAX_RUNS])
        capped = Runs(runs.fa[top], runs.fb[top], runs.i0[top], runs.j0[top], runs.length[top])
        out[k] = (_chain_spans(capped, worth[top], [(0, MAX_RUNS, fa, fb)], min_aligned)[0], top)
    found = _chain_spans(runs, worth, [pairs[k] for k in plain], min_aligned)
    for k, chains in zip(plain, found):
        out[k] = (chains, None)
    return out


def _chain_spans(
    runs: Runs, worth: I64, spans: list[tuple[int, int, int, int]], min_aligned: int
) -> list[list[Chain]]:
    """The chains of runs ``[b, e)`` of file pair ``(fa, fb)``, for each span given.

    The native core chains them all in one call; chains covering fewer than ``min_aligned``
    tokens (which no caller keeps) are not made into :class:`Chain` objects then.
    """
    native = native_chain_pairs()
    if native is None:
        return [_chain_pair_of(runs, worth, span, min_aligned) for span in spans]
    as64 = np.ascontiguousarray
    found, members = native(
        as64(runs.i0, np.int64),
        as64(runs.j0, np.int64),
        as64(runs.length, np.int64),
        as64(worth, np.int64),
        np.array([b for b, *_ in spans], np.int64),
        np.array([e for _, e, *_ in spans], np.int64),
        min_aligned,
        CHAIN_GAP,
        LOOKBACK,
        SEED,
    )
    rows = np.frombuffer(found, np.int64).reshape(-1, 3)
    members_at = np.frombuffer(members, np.int64)
    ends = np.r_[rows[1:, 2], len(members_at)]
    kept = np.flatnonzero(rows[:, 1] >= min_aligned)
    sizes = ends[kept] - rows[kept, 2]
    offsets = np.cumsum(sizes) - sizes
    at = members_at[np.repeat(rows[kept, 2] - offsets, sizes) + np.arange(int(sizes.sum()))]
    i0s = runs.i0[at].tolist()
    i1s = (runs.i0[at] + runs.length[at]).tolist()
    j0s = runs.j0[at].tolist()
    out: list[list[Chain]] = [[] for _ in spans]
    for span, first, size in zip(rows[kept, 0].tolist(), offsets.tolist(), sizes.tolist()):
        _, _, fa, fb = spans[span]
        last = first + size
        out[span].append(
            Chain(fa, fb, list(zip(i0s[first:last], i1s[first:last], j0s[first:last])))
        )
    return out


def _chain_pair_of(
    runs: Runs, worth: I64, span: tuple[int, int, int, int], min_aligned: int
) -> list[Chain]:
    """:func:`_chain_pair` of one span of runs (a single run is its own chain)."""
    b, e, fa, fb = span
    i0, j0, length = runs.i0[b:e], runs.j0[b:e], runs.length[b:e]
    if e - b == 1:
        return [Chain(fa, fb, [(int(i0[0]), int(i0[0] + length[0]), int(j0[0]))])]
    return _chain_pair(
        fa, fb, i0.tolist(), j0.tolist(), length.tolist(), worth[b:e].tolist(), min_aligned
    )


def _chain_pair(
    fa: int,
    fb: int,
    i0: list[int],
    j0: list[int],
    length: list[int],
    worth: list[int],
    min_worth: int = 0,
) -> list[Chain]:
    """Chains of one file pair's runs (dynamic programming, then disjoint backtracking).

    Chains whose runs are worth less than ``min_worth`` in all are not returned.
    """
    order = sorted(range(len(i0)), key=lambda r: (i0[r], j0[r]))
    xs = [i0[r] for r in order]
    ys = [j0[r] for r in order]
    ls = [length[r] for r in order]
    ws = [worth[r] for r in order]
    longest = max(ls)
    score = [float(w) for w in ws]
    total = list(ws)
    pred = [-1] * len(xs)
    for s in range(len(xs)):
        best, choice = score[s], -1
        x, y, w = xs[s], ys[s], ws[s]
        for r in range(s - 1, max(-1, s - LOOKBACK - 1), -1):
            if x - xs[r] - longest > CHAIN_GAP:
                break  # every earlier run ends too far before this one
            gap_i = x - xs[r] - ls[r]
            gap_j = y - ys[r] - ls[r]
            if gap_i > CHAIN_GAP or gap_j > CHAIN_GAP or gap_i < -SEED or gap_j < -SEED:
                continue
            if y <= ys[r]:
                continue
            overlap = -gap_i if gap_i < gap_j else -gap_j
            cost = 0.25 * (gap_i if gap_i > gap_j else gap_j) + 0.5 * abs(gap_i - gap_j)
            value = score[r] + w - min(max(0, overlap), w) - max(0.0, cost)
            if value > best:
                best, choice = value, r
        score[s], pred[s] = best, choice
        if choice >= 0:
            total[s] = total[choice] + w
    used = [False] * len(xs)
    out: list[Chain] = []
    for s in sorted(range(len(xs)), key=lambda k: -score[k]):
        if used[s] or total[s] < min_worth:
            continue
        path: list[int] = []
        k = s
        while k >= 0 and not used[k]:
            used[k] = True
            path.append(k)
            k = pred[k]
        path.reverse()
        out.append(Chain(fa, fb, [(xs[k], xs[k] + ls[k], ys[k]) for k in path]))
    return out


def split_at_widest_gap(chain: Chain) -> list[Chain]:
    """The two chains on either side of a chain's widest gap (none for a single run)."""
    runs = sorted(chain.runs)
    if len(runs) < 2:
        return []
    gaps = [
        max(runs[k + 1][0] - runs[k][1], runs[k + 1][2] - (runs[k][2] + runs[k][1] - runs[k][0]))
        for k in range(len(runs) - 1)
    ]
    cut = max(range(len(gaps)), key=lambda k: gaps[k]) + 1
    return [Chain(chain.fa, chain.fb, runs[:cut]), Chain(chain.fa, chain.fb, runs[cut:])]


def _not_self_overlapping(
    chains: list[Chain], i0: I64, j0: I64, length: I64, stats: ChainStats, min_aligned: int
) -> list[Chain]:
    """Same-file chains cut where their second side begins; repetitions dropped."""
    out: list[Chain] = []
    order = np.argsort(i0, kind="stable")
    i0, diagonal, length = i0[order], (j0 - i0)[order], length[order]
    longest = int(length.max()) if len(length) else 0
    for chain in chains:
        pending = sorted(chain.runs)
        while pending:
            b0 = min(j for _, _, j in pending)
            head = [(a, min(e, b0), j) for a, e, j in pending if a < b0 and min(e, b0) > a]
            pending = [(max(a, b0), e, j + max(a, b0) - a) for a, e, j in pending if e > b0]
            if not head:
                break
            piece = Chain(chain.fa, chain.fb, head)
            if piece.aligned < min_aligned:
                continue
            # only runs that start before the piece ends and reach into it can cover it
            lo = int(np.searchsorted(i0, piece.a0 - longest, "right"))
            hi = int(np.searchsorted(i0, piece.b1, "left"))
            if _periodic(piece, i0[lo:hi], diagonal[lo:hi], length[lo:hi]):
                stats.count(piece.fa, piece.fb, REPETITIVE)
            else:
                out.append(piece)
    return out


def _periodic(piece: Chain, i0: I64, diagonal: I64, length: I64) -> bool:
    """Whether the span of a same-file pair also aligns with itself at a much shorter shift."""
    start, end = piece.a0, piece.b1
    # repetitive *inside* the copy: a period that fits twice into one side (three functions
    # written alike in a row are copies of each other, not a repetition)
    period = (piece.a1 - piece.a0) // 2
    shorter = (diagonal > 0) & (diagonal <= period) & (i0 < end) & (i0 + length > start)
    if not shorter.any():
        return False
    lo = np.maximum(i0[shorter], start) - start
    hi = np.minimum(i0[shorter] + length[shorter], end) - start
    order = np.argsort(lo, kind="stable")
    covered, reach = 0, 0
    for a, b in zip(lo[order].tolist(), hi[order].tolist()):
        if b > reach:
            covered += b - max(a, reach)
            reach = b
    return covered >= PERIODIC_COVER * (end - start)
