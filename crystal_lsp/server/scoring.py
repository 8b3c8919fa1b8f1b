"""``crystal/score``: BLEU and CrystalBLEU of a hypothesis (an AI suggestion) against references.

Scores are sentence-level, corpus-free: the hypothesis against all references together
(multi-reference BLEU, NLTK semantics), CrystalBLEU with the S set of the workspace for the
language (the bundled set, or none, when the workspace has no code in that language). References
are texts, document ranges, files or folders (their best-aligned regions, or a whole file when
asked), or ``"auto"``: the best-aligned regions of the workspace (:mod:`.references`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.registry import MetricConfig, PreparedItem, make_metric, metric_names
from crystal_lsp.metric.sset import TriviallySharedSet, builtin_sset
from crystal_lsp.metric.statistics import sentence_statistics
from crystal_lsp.server.positions import Codec, TextIndex
from crystal_lsp.server.workspace import Folder
from crystal_lsp.text.entries import OK
from crystal_lsp.text.lexers import GENERIC, canonical_name, lexer_by_language, resolve_lexer
from crystal_lsp.text.lexinput import raw_end
from crystal_lsp.text.sources import MAX_REFERENCES, MAX_SNIPPET_CHARS
from crystal_lsp.text.tokens import Tokens, lex
from crystal_lsp.text.views import categories

log = logging.getLogger(__name__)

MAX_MATCHES = 200


class ScoreError(ValueError):
    """Bad parameters of a scoring request (answered with a JSON-RPC error)."""


@dataclass
class Piece:
    """A hypothesis or reference: tokens with their positions in a text."""

    label: str
    uri: str | None
    text: str
    start: int
    end: int
    range: types.Range | None
    tokens: list[str]
    starts: list[int]
    cats: str
    index: TextIndex

    @property
    def code(self) -> str:
        """The scored text."""
        return self.text[self.start : self.end]

    def span(self, first: int, last: int) -> types.Range:
        """The range of tokens ``first``..``last`` (inclusive)."""
        end = raw_end(self.text, self.starts[last], self.tokens[last])
        return types.Range(
            start=self.index.position(self.starts[first]), end=self.index.position(end)
        )

    def to_json(self, bleu: float, crystalbleu: float) -> dict[str, Any]:
        """The per-reference entry of a result."""
        out: dict[str, Any] = {"label": self.label, "bleu": bleu, "crystalbleu": crystalbleu}
        if self.uri is not None:
            out["uri"] = self.uri
        if self.range is not None:
            out["range"] = _range_json(self.range)
        return out


def _range_json(rng: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def parse_range(value: Any) -> types.Range:
    """A ``Range`` from its JSON form; raises :class:`ScoreError`."""
    try:
        start, end = value["start"], value["end"]
        positions = [
            types.Position(line=int(p["line"]), character=int(p["character"])) for p in (start, end)
        ]
    except (KeyError, TypeError, ValueError):
        raise ScoreError(f"not a range: {value!r}") from None
    if any(isinstance(p[k], bool) for p in (start, end) for k in ("line", "character")):
        raise ScoreError(f"not a range: {value!r}")
    return types.Range(start=positions[0], end=positions[1])


def resolve_language(language: Any, filename: str | None, text: str) -> str:
    """The canonical language of a request (explicit, else from the file name or the text)."""
    if language is not None and not isinstance(language, str):
        raise ScoreError("language must be a string")
    if language:
        try:
            return canonical_name(lexer_by_language(language))
        except CrystalError as exc:
            raise ScoreError(str(exc)) from None
    return canonical_name(resolve_lexer(None, filename, text, guess=True))


def make_piece(
    label: str,
    uri: str | None,
    text: str,
    rng: types.Range | None,
    language: str,
    codec: Codec | None,
) -> Piece:
    """Tokenize ``text`` (or the part of it in ``rng``) for scoring."""
    index = TextIndex(text, codec)
    start, end = 0, len(text)
    if rng is not None:
        start, end = index.offset_at(rng.start), index.offset_at(rng.end)
        if end < start:
            raise ScoreError("range end is before its start")
    if end - start > MAX_SNIPPET_CHARS:
        raise ScoreError(
            f"{label}: {end - start:,} characters to score, over the limit of "
            f"{MAX_SNIPPET_CHARS:,} (score a range of it)"
        )
    tokens: Tokens = lex(text[start:end], lexer_by_language(language))
    return Piece(
        label,
        uri,
        text,
        start,
        end,
        rng,
        list(tokens.texts),
        [s + start for s in tokens.starts],
        categories(tokens.texts, tokens.types),
        index,
    )


def sset_for(folder: Folder | None, language: str) -> TriviallySharedSet:
    """The raw-view S set of a language: the workspace's, else the bundled one, else empty."""
    if folder is not None and any(
        s.entry.language == language and s.entry.status == OK and not s.override
        for s in folder.index.files.values()
    ):
        return folder.index.sets(language).raw
    bundled = builtin_sset(language)
    if bundled is not None:
        return bundled
    return TriviallySharedSet({}, k=0, language=language)


def matches(
    hypothesis: Piece, references: Sequence[Piece], ignore: frozenset[tuple[str, ...]], n: int
) -> list[dict[str, Any]]:
    """The non-trivial n-grams (not in S) the hypothesis shares with the references."""
    n = max(1, min(n, len(hypothesis.tokens)))
    where: dict[tuple[str, ...], list[int]] = {}
    for i in range(len(hypothesis.tokens) - n + 1):
        gram = tuple(hypothesis.tokens[i : i + n])
        if gram not in ignore:
            where.setdefault(gram, []).append(i)
    in_refs: list[dict[tuple[str, ...], list[int]]] = []
    for ref in references:
        found: dict[tuple[str, ...], list[int]] = {}
        for i in range(len(ref.tokens) - n + 1):
            gram = tuple(ref.tokens[i : i + n])
            if gram in where:
                found.setdefault(gram, []).append(i)
        in_refs.append(found)
    out = []
    for gram, places in where.items():
        ref_ranges = []
        for k, (ref, found) in enumerate(zip(references, in_refs)):
            for i in found.get(gram, []):
                item: dict[str, Any] = {"index": k, "range": _range_json(ref.span(i, i + n - 1))}
                if ref.uri is not None:
                    item["uri"] = ref.uri
                ref_ranges.append(item)
        if not ref_ranges:
            continue
        out.append(
            {
                "ngram": list(gram),
                "hypothesisRanges": [_range_json(hypothesis.span(i, i + n - 1)) for i in places],
                "referenceRanges": ref_ranges,
            }
        )
        if len(out) >= MAX_MATCHES:
            break
    return out


def _statistics(
    hypothesis: Piece, references: Sequence[Piece], metrics: Mapping[str, CrystalBLEU]
) -> dict[str, Any]:
    """Each metric's per-order statistics of the hypothesis against all references."""
    if not references or not hypothesis.tokens:
        return {}
    refs = [r.tokens for r in references]
    return {
        name: sentence_statistics(metric, hypothesis.tokens, refs).to_json()
        for name, metric in metrics.items()
    }


def score_pieces(
    hypothesis: Piece,
    references: Sequence[Piece],
    sset: TriviallySharedSet,
    folder: Folder | None,
    language: str,
    metrics: Sequence[str],
) -> dict[str, Any]:
    """The ``crystal/score`` result."""
    config = folder.config if folder is not None else None
    smoothing = config.smoothing_spec if config is not None else None
    max_n = config.max_n if config is not None else 4
    bleu = CrystalBLEU(None, max_n=max_n, smoothing=smoothing, language=language)
    crystal = CrystalBLEU(sset, max_n=max_n, smoothing=smoothing, language=language)

    def both(refs: Sequence[Piece]) -> tuple[float, float]:
        if not refs or not hypothesis.tokens:
            return 0.0, 0.0
        ref_tokens = [r.tokens for r in refs]
        return (
            bleu.sentence_score(hypothesis.tokens, ref_tokens),
            crystal.sentence_score(hypothesis.tokens, ref_tokens),
        )

    total = both(references)
    result: dict[str, Any] = {
        "language": language,
        "bleu": total[0],
        "crystalbleu": total[1],
        "statistics": _statistics(hypothesis, references, {"bleu": bleu, "crystalbleu": crystal}),
        "signature": {"bleu": str(bleu.signature), "crystalbleu": str(crystal.signature)},
        "references": [r.to_json(*both([r])) for r in references],
        "matches": matches(hypothesis, references, sset.as_frozenset(), max_n),
    }
    extra = [m for m in metrics if m not in ("bleu", "crystalbleu")]
    if extra and references and hypothesis.tokens:
        for name in extra:
            try:
                metric = make_metric(
                    name,
                    MetricConfig(
                        sset=sset,
                        smoothing=crystal.smoothing,
                        max_n=max_n,
                        language=language,
                    ),
                )
                lexer = lexer_by_language(language)
                items: list[PreparedItem | None] = [
                    PreparedItem(p.code, lex(p.code, lexer)) for p in (hypothesis, *references)
                ]
                metric.prepare(items)
                result[name] = float(metric.score(0, list(range(1, len(items)))))
            except Exception as exc:  # an optional metric must not break scoring
                log.warning("metric %s failed: %s", name, exc)
    return result


def parse_metrics(value: Any) -> list[str]:
    """The ``metrics`` parameter."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ScoreError("metrics must be a list of metric names")
    names = [v.lower() for v in value]
    known = metric_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ScoreError(f"unknown metric {unknown[0]!r} (available: {', '.join(known)})")
    return names


def reference_specs(value: Any) -> list[Mapping[str, Any]] | None:
    """The ``references`` parameter: a list of specs, or None for ``"auto"``."""
    if value == "auto":
        return None
    if not isinstance(value, list) or not value:
        raise ScoreError('references must be "auto" or a non-empty list')
    if len(value) > MAX_REFERENCES:
        raise ScoreError(f"at most {MAX_REFERENCES} references, not {len(value)}")
    for item in value:
        if not isinstance(item, Mapping) or not ({"text", "uri"} & set(item)):
            raise ScoreError(f'each reference needs "text" or "uri": {item!r:.200}')
    return list(value)


def is_generic(language: str) -> bool:
    """Whether a language is the fallback lexer."""
    return language == GENERIC
