"""The registry of pairwise code-similarity metrics that distinguishability can evaluate.

A metric is built from a :class:`MetricConfig` (the S set, smoothing, ...) and scores items of a
prepared collection by index: ``score(hyp, refs)`` with one hypothesis index and one or more
reference indices. Preparation (tokenizing, n-gram profiles, parse trees) happens once per item,
which is what makes all-pairs and sampled evaluations cheap. Further metrics (RUBY and its
levels) register themselves with :func:`register_metric`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.ngrams import Profile, merge_max
from crystal_lsp.metric.pairmetric import MetricConfig as MetricConfig
from crystal_lsp.metric.pairmetric import PairMetric as PairMetric
from crystal_lsp.metric.pairmetric import PreparedItem as PreparedItem

log = logging.getLogger(__name__)


class BleuFamilyMetric:
    """BLEU or CrystalBLEU (either variant) over precomputed n-gram profiles."""

    def __init__(self, name: str, metric: CrystalBLEU) -> None:
        self.name = name
        self.metric = metric
        self._profiles: list[Profile | None] = []
        self._texts: list[Sequence[str]] = []
        # classwise pairs reuse the same reference sets over and over
        self._merged: dict[tuple[int, ...], Profile] = {}

    @property
    def signature(self) -> str:
        return str(self.metric.signature)

    def prepare(self, items: Sequence[PreparedItem | None]) -> None:
        self._texts = [item.tokens.texts if item is not None else () for item in items]
        self._profiles = [
            self.metric.profile(item.tokens.texts) if item is not None else None for item in items
        ]

    def score(self, hyp: int, refs: Sequence[int]) -> float:
        needs_tokens = self.metric.smoothing.method >= 5
        profiles = self._profiles
        if len(refs) > 1 and not needs_tokens:
            key = tuple(refs)
            merged = self._merged.get(key)
            if merged is None:
                if len(self._merged) > 256:
                    self._merged.clear()
                merged = self._merged[key] = merge_max([profiles[r] for r in refs])  # type: ignore[misc]
            counts = self.metric.counts(
                profiles[hyp],  # type: ignore[arg-type]
                [merged],
                ref_lengths=[profiles[r].length for r in refs],  # type: ignore[union-attr]
            )
            return self.metric.score_counts(counts)
        return self.metric.score_profiles(
            profiles[hyp],  # type: ignore[arg-type]
            [profiles[r] for r in refs],  # type: ignore[misc]
            hypothesis=self._texts[hyp] if needs_tokens else None,
            references=[self._texts[r] for r in refs] if needs_tokens else None,
        )

    def corpus(self, pairs: Sequence[tuple[int, Sequence[int]]]) -> float:
        return self.metric.corpus_score(
            [self._texts[h] for h, _ in pairs],
            [[self._texts[r] for r in refs] for _, refs in pairs],
        )


def _bleu(config: MetricConfig) -> PairMetric:
    return BleuFamilyMetric(
        "bleu",
        CrystalBLEU(None, max_n=config.max_n, smoothing=config.smoothing, language=config.language),
    )


def _crystal(variant: str, name: str) -> Callable[[MetricConfig], PairMetric]:
    def factory(config: MetricConfig) -> PairMetric:
        if config.sset is None:
            raise CrystalError(f"metric {name} needs a trivially shared set")
        return BleuFamilyMetric(
            name,
            CrystalBLEU(
                config.sset,
                variant=variant,
                max_n=config.max_n,
                smoothing=config.smoothing,
                language=config.language,
            ),
        )

    return factory


def _codebleu(config: MetricConfig) -> PairMetric:
    # the codebleu package (an extra) is imported only when the metric is used
    from crystal_lsp.metric.codebleu import make_codebleu

    return make_codebleu(config)


_REGISTRY: dict[str, Callable[[MetricConfig], PairMetric]] = {
    "bleu": _bleu,
    "codebleu": _codebleu,
    "crystalbleu": _crystal("remove", "crystalbleu"),
    "crystalbleu-if": _crystal("weight", "crystalbleu-if"),
}
NEEDS_SSET = {"crystalbleu", "crystalbleu-if"}


def register_metric(
    name: str, factory: Callable[[MetricConfig], PairMetric], *, needs_sset: bool = False
) -> None:
    """Make a metric available to ``disting`` and ``score`` by name."""
    _REGISTRY[name] = factory
    if needs_sset:
        NEEDS_SSET.add(name)


def metric_names() -> list[str]:
    """Names of all registered metrics."""
    _load_optional_metrics()
    return sorted(_REGISTRY)


def make_metric(name: str, config: MetricConfig) -> PairMetric:
    """Build a registered metric."""
    _load_optional_metrics()
    factory = _REGISTRY.get(name)
    if factory is None:
        raise CrystalError(f"unknown metric {name!r} (known: {', '.join(sorted(_REGISTRY))})")
    return factory(config)


def parse_metric_list(text: str) -> list[str]:
    """Split ``"bleu,crystalbleu"`` and check every name."""
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not names:
        raise CrystalError("no metric given")
    known = metric_names()
    for name in names:
        if name not in known:
            raise CrystalError(f"unknown metric {name!r} (known: {', '.join(known)})")
    return names


PLUGIN_GROUP = "crystal_lsp.metrics"
"""Entry-point group of modules that register further metrics when imported (RUBY: the
``ruby`` adapter). Discovered through the installed packages' metadata, so this layer imports
no adapter by name."""
_plugins_loaded = False


def _load_optional_metrics() -> None:
    """Import the installed metric plugins once (kept lazy: they may be heavy)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    for point in entry_points(group=PLUGIN_GROUP):
        try:
            point.load()
        except ModuleNotFoundError as exc:
            # a plugin that is listed but not present (a partial install) offers no metric;
            # a missing dependency of a present plugin is an error worth seeing
            if exc.name is None or not point.value.startswith(exc.name):
                raise
            log.debug("metric plugin %s not found", point.value)
