"""``crystal-lsp sset build`` on an engine: plan the inputs, count on the engine, merge exactly.

The client only plans (names and byte ranges, :func:`crystal_lsp.distributed.inputs.plan`);
reading, tokenizing and counting happen where each part is processed, and only count tables
travel. Without ``--lang`` a first, cheap pass over the parts (reading and naming languages, no
tokenizing) finds the one language of the inputs, with the same errors as always.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial

from crystal_lsp.distributed import engine_name
from crystal_lsp.distributed.engine import Engine, check_tie_break
from crystal_lsp.distributed.inputs import Part, Selection, iter_documents, plan
from crystal_lsp.distributed.topk import (
    PartCounts,
    PartStats,
    check_sizes,
    interned,
    split_counts,
)
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.sset import TriviallySharedSet, count_ngrams
from crystal_lsp.text.lexers import canonical_name, lexer_label, resolve_lexer
from crystal_lsp.text.sources import DEFAULT_MAX_BYTES
from crystal_lsp.text.tokens import lex

Skipped = list[tuple[str, str]]


def count_part(
    part: Part, buckets: int, *, selection: Selection, keep_comments: bool, max_n: int
) -> PartCounts:
    """The map step of ``sset build``: read, tokenize and count one part."""
    skipped: Skipped = []
    streams = (
        interned(
            lex(
                doc.text,
                resolve_lexer(doc.language, doc.name, doc.text),
                keep_comments=keep_comments,
            ).texts
        )
        for doc in iter_documents(part, selection, skipped)
    )
    counts, documents, tokens = count_ngrams(streams, max_n)
    return PartCounts(split_counts(counts, buckets), documents, tokens, skipped)


def survey_part(part: Part, selection: Selection) -> tuple[Counter[str], Skipped]:
    """The languages of one part's documents (read, not tokenized), and its skipped files."""
    skipped: Skipped = []
    found = Counter(doc.language for doc in iter_documents(part, selection, skipped))
    return found, skipped


def choose_language(engine: Engine, parts: list[Part], selection: Selection) -> str:
    """The one language of the inputs (an error when there are none or several)."""
    languages: Counter[str] = Counter()
    for found, _ in engine.map(partial(survey_part, selection=selection), parts):
        languages.update(found)
    if not languages:
        raise CrystalError("no code found in the given paths")
    if len(languages) > 1:
        found_text = ", ".join(f"{lang} ({n})" for lang, n in languages.most_common())
        raise CrystalError(
            f"the paths hold several languages ({found_text}); choose one with --lang"
        )
    return next(iter(languages))


def build_on_engine(
    engine: Engine,
    parts: list[Part],
    *,
    language: str | None = None,
    k: int,
    max_n: int = 4,
    split: str | None = None,
    keep_comments: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    tie_break: str = "canonical",
    progress: Callable[[PartStats], None] | None = None,
) -> tuple[TriviallySharedSet, Skipped]:
    """S of the documents of one language in ``parts`` (:func:`plan`), and the files skipped."""
    check_sizes(k, max_n)
    wanted = canonical_name(resolve_lexer(language)) if language else None
    chosen = wanted or choose_language(engine, parts, Selection(None, split, max_bytes))
    counted = engine.count(
        partial(
            count_part,
            selection=Selection(chosen, split, max_bytes),
            keep_comments=keep_comments,
            max_n=max_n,
        ),
        parts,
        k,
        tie_break=tie_break,
        progress=progress,
    )
    if not counted.documents:
        raise CrystalError(
            "no code found in the given paths" + (f" for {wanted}" if wanted else "")
        )
    tokenizer = lexer_label(resolve_lexer(chosen)) + (" comments:yes" if keep_comments else "")
    sset = counted.to_sset(k, max_n, language=chosen, tie_break=tie_break, tokenizer=tokenizer)
    return sset, counted.skipped


def plan_build(
    paths: list[str],
    *,
    language: str | None,
    k: int,
    max_n: int,
    tie_break: str,
    engine: str | None,
    scheduler: str | None,
) -> list[Part]:
    """Check ``sset build``'s options, then plan its inputs (for :func:`build_on_engine`).

    Errors in the options come before any work: before planning, and before an engine starts.
    """
    check_sizes(k, max_n)
    check_tie_break(engine_name(engine, scheduler), tie_break)
    if language:
        resolve_lexer(language)
    return plan(paths)
