"""RUBY and its levels as registered pair metrics: ``sts``, ``trs``, ``grs`` and ``ruby``.

Importing this module registers them with :mod:`crystal_lsp.metric.registry` (which imports it lazily, through the ``crystal_lsp.metrics`` entry point),
so ``crystal-lsp score --metric ruby,sts,trs,grs`` and ``crystal-lsp disting`` can use them.

* With several references, a hypothesis gets the **maximum** over its references (the closest
  reference wins, as a reviewer comparing against several acceptable solutions would), and
  ``last_details`` names the level and the reference that gave it.
* ``trs`` and ``grs`` fall back to STS for a pair whose trees or graphs cannot be built (so every
  pair is scored, as ``disting`` needs); ``ruby`` falls back GRS → TRS → STS as the paper defines.
  ``last_details["level"]`` always says which level produced the last score.
* ``corpus`` is the mean of the pairs' scores (RUBY defines no corpus-level aggregate).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from crystal_lsp.metric.registry import MetricConfig, PairMetric, PreparedItem, register_metric
from crystal_lsp.ruby.ensemble import (
    DEFAULT_OPTIONS,
    RubyItem,
    pair_grs,
    pair_ruby,
    pair_sts,
    pair_trs,
)
from crystal_lsp.ruby.ged import WL_ROUNDS
from crystal_lsp.ruby.lexical import TokenIds
from crystal_lsp.ruby.options import RubyOptions
from crystal_lsp.ruby.trees import Unbuilt, parser_label
from crystal_lsp.text.lexers import tokenizer_name
from crystal_lsp.version import __version__

Scorer = Callable[[RubyItem, RubyItem], tuple[float, str, str]]


def _sts(hyp: RubyItem, ref: RubyItem) -> tuple[float, str, str]:
    return pair_sts(hyp, ref), "sts", ""


def _with_sts_fallback(
    level: str, compute: Callable[[RubyItem, RubyItem], float | Unbuilt]
) -> Scorer:
    def score(hyp: RubyItem, ref: RubyItem) -> tuple[float, str, str]:
        value = compute(hyp, ref)
        if isinstance(value, Unbuilt):
            return pair_sts(hyp, ref), "sts", f"{level}: {value.reason}"
        return value, level, ""

    return score


class RubyFamilyMetric:
    """One of sts, trs, grs, ruby over items prepared once (token ids; trees and graphs lazily)."""

    def __init__(self, name: str, config: MetricConfig, options: RubyOptions) -> None:
        self.name = name
        self.language = config.language
        self.options = options
        self.last_details: dict[str, Any] | None = None
        self._items: list[RubyItem | None] = []
        self._score: Scorer = {
            "sts": _sts,
            "trs": _with_sts_fallback("trs", pair_trs),
            "grs": _with_sts_fallback("grs", pair_grs),
            "ruby": pair_ruby,
        }[name]

    @property
    def signature(self) -> str:
        language = self.language
        tokens = f"tok:{tokenizer_name(language)}"
        parser = f"parser:{parser_label(language)}"
        tree = f"ast:named+leaf|ted:zs|{self.options.tree_label()}"
        graph = f"{self.options.graph_label()}|ged:wl{WL_ROUNDS}-greedy"
        fields = {
            "sts": [tokens, f"lang:{language}", "ed:levenshtein"],
            "trs": [parser, f"lang:{language}", tree, "fallback:sts", tokens],
            "grs": [parser, f"lang:{language}", graph, "fallback:sts", tokens],
            "ruby": [tokens, parser, f"lang:{language}", "level:auto", tree, graph],
        }[self.name]
        return "|".join([self.name, *fields, f"v:{__version__}"])

    def prepare(self, items: Sequence[PreparedItem | None]) -> None:
        ids = TokenIds()
        self._items = [
            None
            if item is None
            else RubyItem(
                item.code,
                ids(item.tokens.texts),
                self.language if self.language != "-" else item.tokens.language,
                self.options,
            )
            for item in items
        ]

    def score(self, hyp: int, refs: Sequence[int]) -> float:
        items = self._items
        best: tuple[float, str, str, int] | None = None
        for ref in refs:
            value, level, note = self._score(items[hyp], items[ref])  # type: ignore[arg-type]
            if best is None or value > best[0]:
                best = (value, level, note, ref)
        if best is None:
            raise ValueError("score needs at least one reference")
        details: dict[str, Any] = {"level": best[1]}
        if best[2]:
            details["fallback"] = best[2]
        if len(refs) > 1:
            details["reference"] = best[3]
        self.last_details = details
        return best[0]

    def corpus(self, pairs: Sequence[tuple[int, Sequence[int]]]) -> float:
        if not pairs:
            return 0.0
        return sum(self.score(hyp, refs) for hyp, refs in pairs) / len(pairs)


def _factory(name: str) -> Callable[[MetricConfig], PairMetric]:
    def factory(config: MetricConfig) -> PairMetric:
        return RubyFamilyMetric(name, config, DEFAULT_OPTIONS)

    return factory


for _name in ("sts", "trs", "grs", "ruby"):
    register_metric(_name, _factory(_name))
