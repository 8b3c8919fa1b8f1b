"""What researchers report with a BLEU-family score, and its uncertainty.

:class:`Statistics` holds a score's sufficient statistics as sacrebleu prints them: per order the
clipped n-gram matches and the hypothesis's n-gram total (NLTK's ``modified_precision``, its
denominator floored at 1), the plain precisions, the brevity penalty and the lengths. Corpus
statistics are per-pair counts summed (NLTK's ``corpus_bleu``), so a corpus score can be
recomputed from any resample of its pairs without re-counting: :func:`bootstrap` gives a seeded
95 % confidence interval and :func:`paired_bootstrap` a p-value for the difference of two systems
on the same items, both as sacrebleu computes them (seed 12345 by default, 1000 resamples,
``estimate_ci``'s 2.5 %/97.5 % order statistics, Koehn's paired test with sacrebleu's centring).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from crystal_lsp.metric.bleu import brevity_penalty
from crystal_lsp.metric.crystal import Counts, CrystalBLEU
from crystal_lsp.metric.ngrams import as_sequence

DEFAULT_SEED = 12345
DEFAULT_RESAMPLES = 1000
F64 = npt.NDArray[np.float64]
BLOCK_VALUES = 1 << 21
"""How many pair counts one block of bootstrap resamples may gather (16 MiB of float64)."""


@dataclass(frozen=True)
class Statistics:
    """A score with its sufficient statistics (module docstring)."""

    score: float
    matches: tuple[float, ...]
    totals: tuple[float, ...]
    hyp_len: int
    ref_len: int

    @property
    def precisions(self) -> tuple[float, ...]:
        """Per order, matches / total (unsmoothed)."""
        return tuple(m / t for m, t in zip(self.matches, self.totals))

    @property
    def brevity_penalty(self) -> float:
        """BLEU's brevity penalty of the lengths."""
        return float(brevity_penalty(self.ref_len, self.hyp_len))

    @property
    def ratio(self) -> float:
        """Hypothesis length over reference length."""
        return self.hyp_len / self.ref_len if self.ref_len else 0.0

    def to_json(self) -> dict[str, Any]:
        """The statistics as reported in JSON."""
        return {
            "score": self.score,
            "matches": list(self.matches),
            "totals": list(self.totals),
            "precisions": list(self.precisions),
            "brevityPenalty": self.brevity_penalty,
            "ratio": self.ratio,
            "hypLen": self.hyp_len,
            "refLen": self.ref_len,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Statistics:
        """The statistics back from :meth:`to_json` (the derived fields are recomputed)."""
        return cls(
            doc["score"], tuple(doc["matches"]), tuple(doc["totals"]), doc["hypLen"], doc["refLen"]
        )

    def line(self) -> str:
        """One line, as sacrebleu prints it (precisions in percent, then matches/totals)."""
        pct = "/".join(f"{100 * p:.1f}" for p in self.precisions)
        counts = " ".join(f"{_num(m)}/{_num(t)}" for m, t in zip(self.matches, self.totals))
        return (
            f"{pct} ({counts}) BP = {self.brevity_penalty:.3f} ratio = {self.ratio:.3f} "
            f"hyp_len = {self.hyp_len} ref_len = {self.ref_len}"
        )


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def pair_counts(
    metric: CrystalBLEU, hypothesis: Sequence[Any], references: Sequence[Sequence[Any]]
) -> Counts:
    """The counts of one pair (what :meth:`CrystalBLEU.sentence_score` scores)."""
    hyp = as_sequence(hypothesis)
    return metric.counts(metric.profile(hyp), [metric.profile(as_sequence(r)) for r in references])


def sentence_statistics(
    metric: CrystalBLEU, hypothesis: Sequence[Any], references: Sequence[Sequence[Any]]
) -> Statistics:
    """The sentence score of one pair with its statistics."""
    counts = pair_counts(metric, hypothesis, references)
    refs = [as_sequence(r) for r in references]
    score = metric.score_counts(counts, references=refs, hypothesis=as_sequence(hypothesis))
    return Statistics(score, counts.numerators, counts.denominators, counts.hyp_len, counts.ref_len)


class CorpusCounts:
    """Every pair's counts as one matrix (rows: pairs; columns: matches, totals, lengths)."""

    def __init__(
        self,
        metric: CrystalBLEU,
        hypotheses: Sequence[Sequence[Any]],
        list_of_references: Sequence[Sequence[Sequence[Any]]],
    ) -> None:
        self.metric = metric
        self.n = metric.max_n
        rows = []
        for hyp, refs in zip(hypotheses, list_of_references):
            c = pair_counts(metric, hyp, refs)
            rows.append([*c.numerators, *c.denominators, c.hyp_len, c.ref_len])
        self.rows: F64 = np.array(rows, dtype=np.float64).reshape(len(rows), 2 * self.n + 2)
        # NLTK hands the corpus's last pair to smoothing methods 5-7
        self._last = (
            (as_sequence(hypotheses[-1]), [as_sequence(r) for r in list_of_references[-1]])
            if len(hypotheses)
            else ((), [])
        )

    def __len__(self) -> int:
        return len(self.rows)

    def statistics(self, summed: F64 | None = None) -> Statistics:
        """The corpus statistics of summed rows (default: every pair)."""
        total = self.rows.sum(axis=0) if summed is None else summed
        n = self.n
        exact = self.metric.sset is None or self.metric.variant == "remove"
        matches = tuple(int(x) if exact else float(x) for x in total[:n])
        totals = tuple(int(x) if exact else float(x) for x in total[n : 2 * n])
        counts = Counts(matches, totals, int(total[2 * n]), int(total[2 * n + 1]))
        hyp, refs = self._last
        score = self.metric.score_counts(counts, references=refs, hypothesis=hyp)
        return Statistics(score, matches, totals, counts.hyp_len, counts.ref_len)

    def resampled(self, indices: npt.NDArray[np.int64]) -> F64:
        """The corpus score of each resample (one row of pair indices each)."""
        sums = self.rows[indices].sum(axis=1)
        return np.array([self.statistics(row).score for row in sums], dtype=np.float64)


@dataclass(frozen=True)
class Interval:
    """A bootstrap estimate: the mean of the resampled scores and the 95 % half-width."""

    mean: float
    ci: float
    resamples: int
    seed: int

    def to_json(self) -> dict[str, Any]:
        """The estimate as reported in JSON."""
        return {
            "mean": self.mean,
            "ci95": self.ci,
            "low": self.mean - self.ci,
            "high": self.mean + self.ci,
            "resamples": self.resamples,
            "seed": self.seed,
        }


def resample_indices(n: int, resamples: int, seed: int) -> npt.NDArray[np.int64]:
    """``resamples`` rows of ``n`` pair indices drawn with replacement (sacrebleu's draw)."""
    rng = np.random.default_rng(seed)
    return rng.choice(n, size=(resamples, n), replace=True).astype(np.int64)


def resampled_scores(corpora: Sequence[CorpusCounts], resamples: int, seed: int) -> list[F64]:
    """Each corpus's scores on the same ``resamples`` draws of :func:`resample_indices`.

    The draw is made a block of rows at a time (the generator gives the same numbers either
    way), so memory stays at about :data:`BLOCK_VALUES` pair counts whatever the number of
    resamples and pairs.
    """
    n = len(corpora[0])
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_VALUES // max(1, n * corpora[0].rows.shape[1]))
    scores: list[list[F64]] = [[] for _ in corpora]
    for start in range(0, resamples, block):
        rows = min(block, resamples - start)
        indices = rng.choice(n, size=(rows, n), replace=True).astype(np.int64)
        for out, corpus in zip(scores, corpora):
            out.append(corpus.resampled(indices))
    return [np.concatenate(out) if out else np.zeros(0, dtype=np.float64) for out in scores]


def estimate_ci(scores: F64) -> tuple[float, float]:
    """Mean and 95 % half-width: half the distance of the 2.5 % and 97.5 % order statistics."""
    ordered = np.sort(scores)
    lower = len(ordered) // 40
    upper = len(ordered) - lower - 1
    return float(ordered.mean()), float(0.5 * (ordered[upper] - ordered[lower]))


def bootstrap(
    corpus: CorpusCounts, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> Interval:
    """A seeded bootstrap confidence interval of a corpus score."""
    (scores,) = resampled_scores([corpus], resamples, seed)
    mean, ci = estimate_ci(scores)
    return Interval(mean, ci, resamples, seed)


@dataclass(frozen=True)
class PairedResult:
    """Paired bootstrap resampling of a system against a baseline on the same items."""

    system: float
    baseline: float
    p_value: float
    system_interval: Interval
    baseline_interval: Interval

    def to_json(self) -> dict[str, Any]:
        """The comparison as reported in JSON."""
        return {
            "system": self.system,
            "baseline": self.baseline,
            "difference": self.system - self.baseline,
            "pValue": self.p_value,
            "systemInterval": self.system_interval.to_json(),
            "baselineInterval": self.baseline_interval.to_json(),
        }


def paired_bootstrap(
    system: CorpusCounts,
    baseline: CorpusCounts,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedResult:
    """Koehn's paired bootstrap test, as sacrebleu's ``--paired-bs`` runs it.

    Both systems are scored on the same resamples; the p-value is the share of resamples whose
    centred absolute difference exceeds the observed one (``(c + 1) / (resamples + 1)``).
    """
    if len(system) != len(baseline):
        raise ValueError(f"{len(system)} items against a baseline of {len(baseline)}")
    sys_scores, base_scores = resampled_scores([system, baseline], resamples, seed)
    observed = abs(system.statistics().score - baseline.statistics().score)
    diffs = np.abs(sys_scores - base_scores)
    centred = diffs - diffs.mean()
    p_value = (int(np.sum(centred > observed)) + 1) / (resamples + 1)
    sys_ci = Interval(*estimate_ci(sys_scores), resamples, seed)
    # the baseline's interval comes from the same draw (sacrebleu seeds both alike)
    base_ci = Interval(*estimate_ci(base_scores), resamples, seed)
    return PairedResult(
        system.statistics().score, baseline.statistics().score, p_value, sys_ci, base_ci
    )
