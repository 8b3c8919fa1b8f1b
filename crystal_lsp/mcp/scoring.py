"""``score``: BLEU and CrystalBLEU of code against references, with the per-order statistics.

Sentence-level and corpus-free, as the language server's ``crystal/score``: the code against all
references together (multi-reference BLEU, NLTK semantics), CrystalBLEU with the repository's S
set for the language (the bundled one when the repository has no code in it), smoothing and max
n from the repository's settings. ``"auto"`` references are the indexed snippets that the clone
finder's retrieval ranks first (most shared non-trivial shingles), scored, best three kept.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from crystal_lsp.clones.findings import display_path
from crystal_lsp.errors import install_command
from crystal_lsp.mcp.models import OrderStats, ReferenceScore, ScoreResult
from crystal_lsp.mcp.workspace import ToolInputError, Workspace
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.registry import MetricConfig, PreparedItem, make_metric, metric_names
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.fingerprints import shingles
from crystal_lsp.text.lexers import lexer_by_language
from crystal_lsp.text.lexinput import raw_end
from crystal_lsp.text.sources import read_source
from crystal_lsp.text.tokens import lex
from crystal_lsp.text.views import categories, normalized

log = logging.getLogger(__name__)

AUTO_CANDIDATES = 20
AUTO_KEEP = 3


@dataclass
class Reference:
    """A reference: given text, or an indexed snippet (``path`` and character ``span``)."""

    label: str
    tokens: list[str]
    path: str = ""
    span: tuple[int, int] = (0, 0)
    text: str | None = None

    def source(self, ws: Workspace) -> str:
        """The reference's code (read from its file for an indexed snippet)."""
        if self.text is None:
            whole = read_source(
                os.path.join(ws.root, self.path), ws.config.max_file_bytes, ws.root
            ).text
            # the last token may span \r\n line ends: its text is shorter than its source
            last = self.tokens[-1] if self.tokens else ""
            end = raw_end(whole, self.span[1] - len(last), last) if last else self.span[1]
            self.text = whole[self.span[0] : end]
        return self.text


def auto_references(
    ws: Workspace, language: str, hypothesis: list[str], cats: str, crystal: CrystalBLEU
) -> list[Reference]:
    """The indexed snippets closest to the hypothesis, best first."""
    if not hypothesis or language not in ws.index.languages():
        return []
    refs, metas, postings = ws.finder.retrieval(language)
    owners, _ = postings.query(shingles(normalized(hypothesis, cats)), 0.0, AUTO_CANDIDATES * 2)
    profile = crystal.profile(hypothesis)
    scored: list[tuple[float, Reference]] = []
    for owner in np.asarray(owners).tolist()[:AUTO_CANDIDATES]:
        path, meta = refs[owner][0], metas[owner]
        heavy = ws.index.heavy(path)
        texts = list(heavy.texts[meta.start : meta.end])
        value = crystal.score_profiles(
            profile, [crystal.profile(texts)], hypothesis=hypothesis, references=[texts]
        )
        what = f"{meta.kind} {meta.name}".strip()
        label = f"{display_path(path)}:{meta.first_line}-{meta.last_line} ({display_path(what)})"
        span = (heavy.starts[meta.start], heavy.starts[meta.end - 1] + len(texts[-1]))
        scored.append((value, Reference(label, texts, path, span)))
    scored.sort(key=lambda x: (-x[0], x[1].label))
    return [ref for _, ref in scored[:AUTO_KEEP]]


def score_code(
    ws: Workspace,
    code: str,
    references: Sequence[str] | None,
    language: str | None,
    metrics: Sequence[str],
) -> ScoreResult:
    """The ``score`` tool's result (worker thread); ``references=None`` is ``"auto"``.

    Without a language, the likeliest of :meth:`Workspace.guess_languages` is used, with a note.
    """
    notes: list[str] = []
    if language is None:
        language = _likeliest(ws, code, ws.guess_languages(code))
        notes.append(f"language not given: scored as {language} (a guess; pass language)")
    config = ws.config
    sset, _ = ws.sset(language)
    lexer = lexer_by_language(language)
    tokens = lex(code, lexer)
    hyp = list(tokens.texts)
    bleu = CrystalBLEU(None, max_n=config.max_n, smoothing=config.smoothing_spec, language=language)
    crystal = CrystalBLEU(
        sset, max_n=config.max_n, smoothing=config.smoothing_spec, language=language
    )
    if references is None:
        refs = auto_references(ws, language, hyp, categories(tokens.texts, tokens.types), crystal)
        if not refs:
            notes.append("no indexed code resembles the hypothesis: nothing to score against")
    else:
        refs = [
            Reference(f"reference {i}", list(lex(text, lexer).texts), text=text)
            for i, text in enumerate(references, 1)
        ]
    result = _scores(hyp, refs, bleu, crystal, language)
    result.notes = notes
    if "ruby" in metrics and refs and hyp:
        result.ruby, result.signatures["ruby"] = _ruby(ws, code, refs, sset, crystal)
    result.notes += [
        f"metric {name} is not offered here (bleu, crystalbleu, ruby)"
        for name in metrics
        if name not in ("bleu", "crystalbleu", "ruby")
    ]
    return result


def _likeliest(ws: Workspace, code: str, languages: Sequence[str]) -> str:
    """Of the guessed languages, the one whose indexed code the snippet resembles most."""
    if len(languages) == 1:
        return languages[0]
    config = ws.config
    best, best_value = languages[0], -1.0
    for language in languages:
        tokens = lex(code, lexer_by_language(language))
        sset, _ = ws.sset(language)
        crystal = CrystalBLEU(
            sset, max_n=config.max_n, smoothing=config.smoothing_spec, language=language
        )
        cats = categories(tokens.texts, tokens.types)
        refs = auto_references(ws, language, list(tokens.texts), cats, crystal)
        value = max(
            (crystal.sentence_score(list(tokens.texts), [r.tokens]) for r in refs), default=0
        )
        if value > best_value:
            best, best_value = language, value
    return best


def _scores(
    hyp: list[str],
    refs: list[Reference],
    bleu: CrystalBLEU,
    crystal: CrystalBLEU,
    language: str,
) -> ScoreResult:
    """Both scores and their per-order counts against all references together."""
    signatures = {"bleu": str(bleu.signature), "crystalbleu": str(crystal.signature)}
    ref_tokens = [r.tokens for r in refs]
    if not hyp or not ref_tokens:
        return ScoreResult(
            language=language,
            bleu=0.0,
            crystalbleu=0.0,
            orders=[],
            hypothesis_length=len(hyp),
            reference_length=0,
            references=[],
            signatures=signatures,
        )
    plain = bleu.counts(bleu.profile(hyp), [bleu.profile(r) for r in ref_tokens])
    trimmed = crystal.counts(crystal.profile(hyp), [crystal.profile(r) for r in ref_tokens])
    orders = [
        OrderStats(
            n=i + 1,
            bleu_matches=plain.numerators[i],
            bleu_total=plain.denominators[i],
            crystalbleu_matches=trimmed.numerators[i],
            crystalbleu_total=trimmed.denominators[i],
        )
        for i in range(len(plain.numerators))
    ]
    per_reference = [
        ReferenceScore(
            label=ref.label,
            bleu=bleu.sentence_score(hyp, [ref.tokens]),
            crystalbleu=crystal.sentence_score(hyp, [ref.tokens]),
        )
        for ref in refs
    ]
    return ScoreResult(
        language=language,
        bleu=bleu.sentence_score(hyp, ref_tokens),
        crystalbleu=crystal.sentence_score(hyp, ref_tokens),
        orders=orders,
        hypothesis_length=plain.hyp_len,
        reference_length=plain.ref_len,
        references=per_reference,
        signatures=signatures,
    )


def _ruby(
    ws: Workspace, code: str, refs: list[Reference], sset: TriviallySharedSet, crystal: CrystalBLEU
) -> tuple[float, str]:
    """RUBY of the code against the references, and its signature."""
    if "ruby" not in metric_names():
        raise ToolInputError(
            f"metric ruby is not available: install the ruby extra with {install_command('ruby')}"
        )
    language = crystal.language
    metric = make_metric(
        "ruby",
        MetricConfig(
            sset=sset, smoothing=crystal.smoothing, max_n=crystal.max_n, language=language
        ),
    )
    lexer = lexer_by_language(language)
    texts = [code, *(ref.source(ws) for ref in refs)]
    items: list[PreparedItem | None] = [PreparedItem(t, lex(t, lexer)) for t in texts]
    metric.prepare(items)
    return float(metric.score(0, list(range(1, len(items))))), metric.signature
