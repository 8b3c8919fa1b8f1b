"""CodeBLEU (Ren et al. 2020) through the maintained ``codebleu`` package (the codebleu extra).

Every score is the package's own ``calc_codebleu`` on the items' code (its tokenizer: white space;
its tree-sitter grammars), default weights 0.25 each: a pair is one call with the hypothesis and
its references, a corpus one call with every pair, so the numbers are the package's by
construction (``tests/unit/metric/test_codebleu.py`` checks that on a shared set's pairs). The
package's languages (``AVAILABLE_LANGS``) with crystal_lsp's names: python, java, javascript, c,
cpp, go, ruby, php, csharp (its ``c_sharp``), rust -- each needs its ``tree-sitter-<lang>``
grammar installed. Other languages are an error naming these.

The package's numbers depend on Python's hash seed (its syntax and data-flow matches iterate
sets): equal in one process or under one ``PYTHONHASHSEED``, they differ slightly between runs
otherwise (measured: up to 0.011 on gcj_java pairs). The signature names the hash seed
(``hashseed:random`` when unset); set ``PYTHONHASHSEED=0`` for reproducible figures.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

from crystal_lsp.errors import CrystalError, missing_extra

if TYPE_CHECKING:
    from crystal_lsp.metric.pairmetric import MetricConfig, PairMetric, PreparedItem

LANGUAGES = {
    "python": "python",
    "java": "java",
    "javascript": "javascript",
    "c": "c",
    "cpp": "cpp",
    "go": "go",
    "ruby": "ruby",
    "php": "php",
    "csharp": "c_sharp",
    "rust": "rust",
}
"""crystal_lsp's language name -> the ``codebleu`` package's."""
GRAMMARS = {"c_sharp": "tree-sitter-c-sharp"}


def _calc() -> Any:
    try:
        from codebleu import calc_codebleu
    except ImportError as exc:
        raise missing_extra("metric codebleu", "codebleu", exc) from None
    return calc_codebleu


def hash_seed() -> str:
    """The ``PYTHONHASHSEED`` of this process (``random`` when unset): CodeBLEU depends on it."""
    return os.environ.get("PYTHONHASHSEED") or "random"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "missing"


class CodeBleuMetric:
    """CodeBLEU of prepared items (their code), by the ``codebleu`` package."""

    name = "codebleu"

    def __init__(self, config: MetricConfig) -> None:
        lang = LANGUAGES.get(config.language)
        if lang is None:
            raise CrystalError(
                f"metric codebleu covers {', '.join(LANGUAGES)}; not {config.language}"
            )
        self._calc = _calc()
        self.lang = lang
        grammar = GRAMMARS.get(lang, f"tree-sitter-{lang}")
        self._signature = (
            f"codebleu|lang:{config.language}|weights:0.25,0.25,0.25,0.25|"
            f"codebleu:{_version('codebleu')}|tree-sitter:{_version('tree-sitter')}|"
            f"grammar:{grammar}-{_version(grammar)}|hashseed:{hash_seed()}"
        )
        self._codes: list[str] = []
        self.last_details: dict[str, float] = {}
        # the package warns through logging when a set has no data flow (score degenerates to 0)
        logging.getLogger("codebleu").setLevel(logging.ERROR)

    @property
    def signature(self) -> str:
        """The package, its grammar and the weights."""
        return self._signature

    def prepare(self, items: Sequence[PreparedItem | None]) -> None:
        """Keep each item's code (the package tokenizes and parses it on every call)."""
        self._codes = [item.code if item is not None else "" for item in items]

    def _run(self, pairs: Sequence[tuple[int, Sequence[int]]]) -> float:
        refs = [[self._codes[r] for r in group] for _, group in pairs]
        hyps = [self._codes[h] for h, _ in pairs]
        try:
            result = self._calc(refs, hyps, lang=self.lang)
        except (AssertionError, ValueError, TypeError, OSError) as exc:
            raise CrystalError(f"codebleu ({self.lang}): {exc}") from None
        self.last_details = {k: float(v) for k, v in result.items() if k != "codebleu"}
        return float(result["codebleu"])

    def score(self, hyp: int, refs: Sequence[int]) -> float:
        """CodeBLEU of one hypothesis against its references (one package call)."""
        return self._run([(hyp, refs)])

    def corpus(self, pairs: Sequence[tuple[int, Sequence[int]]]) -> float:
        """Corpus CodeBLEU of the pairs (one package call over all of them)."""
        return self._run(pairs)


def make_codebleu(config: MetricConfig) -> PairMetric:
    """The registry's factory of ``codebleu``."""
    return CodeBleuMetric(config)
