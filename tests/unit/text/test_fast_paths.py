"""The index's faster per-file passes give exactly what the token loops they replaced gave.

The oracles are the old loops (:mod:`loop_references`), run on the same tokens: real code (a sample
of the standard library, the clone-finder samples), fragments and broken code in several
languages, and random token streams. Every stored entry is built from these passes, so equal
passes mean equal entries, and equal entries mean the same findings.
"""

from __future__ import annotations

import json
import random
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import loop_references as ref
import numpy as np
import pytest
from fastlex_samples import FRAGMENTS
from hypothesis import given, settings
from hypothesis import strategies as st
from scan_samples import ALL_LIST, IMPORTS, ORIGINAL, UNRELATED, module, near_copy, renamed

from crystal_lsp.text import noise, snippets
from crystal_lsp.text.entries import (
    Entry,
    _suppressions,
    build_entry,
    detect_status,
)
from crystal_lsp.text.fingerprints import ngram_hashes, text_sha, token_hashes
from crystal_lsp.text.lexers import canonical_name, resolve_lexer
from crystal_lsp.text.tokens import lex
from crystal_lsp.text.views import categories, file_view, normalized, normalized_positions

LANGUAGES = ("python", "javascript", "java", "c", "cpp", "go", "ruby", "typescript")
STDLIB_SAMPLE = 40
"""Standard-library modules in the sample (every n-th of the sorted list, up to 80 KB each)."""


@dataclass
class Lexed:
    name: str
    source: str
    language: str
    texts: list[str]
    cats: str
    lines: list[int]


def _lexed(name: str, source: str, language: str | None) -> Lexed:
    lexer = resolve_lexer(language, name, source, guess=False)
    tokens = lex(source, lexer)
    cats = categories(tokens.texts, tokens.types)
    lines = snippets.token_lines(tokens.starts, source)
    return Lexed(name, source, canonical_name(lexer), tokens.texts, cats, lines)


def _stdlib_sample() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py") if p.stat().st_size < 80_000)
    step = max(1, len(files) // STDLIB_SAMPLE)
    return files[::step][:STDLIB_SAMPLE]


@pytest.fixture(scope="module")
def corpus() -> list[Lexed]:
    out = [
        _lexed(f"fragment{i}", text, language)
        for i, text in enumerate(FRAGMENTS)
        for language in LANGUAGES
    ]
    samples = [
        module(IMPORTS, ALL_LIST, ORIGINAL, UNRELATED[0], renamed(), near_copy()),
        module(*UNRELATED),
        "\t\tx = (1,\n\t 2)\n  \ty = '''a\n\tb'''\n\tz = 3 \\\n + 4\n",
        "# crystal: ignore-file\ndef f():\n    return 1\n",
    ]
    out += [_lexed(f"sample{i}.py", text, None) for i, text in enumerate(samples)]
    for path in _stdlib_sample():
        out.append(_lexed(path.name, path.read_text(encoding="utf-8", errors="replace"), None))
    return out


def test_the_corpus_holds_real_code(corpus: list[Lexed]) -> None:
    assert sum(len(x.texts) for x in corpus) > 50_000
    assert {x.language for x in corpus} >= {"python", "javascript", "java", "c"}


def test_logical_and_physical_lines(corpus: list[Lexed]) -> None:
    for x in corpus:
        assert noise.logical_lines(x.texts, x.cats, x.lines) == ref.logical_lines(
            x.texts, x.cats, x.lines
        ), x.name
        assert noise.physical_lines(x.lines) == ref.physical_lines(x.lines), x.name


def test_logical_lines_of_indented_units(corpus: list[Lexed]) -> None:
    for x in corpus:
        expected = ref.indented_logical_lines(x.texts, x.cats, x.lines, x.source)
        offsets = snippets.line_starts(x.source)
        assert snippets._logical_lines(x.texts, x.cats, x.lines, x.source) == expected, x.name
        assert snippets._logical_lines(x.texts, x.cats, x.lines, x.source, offsets) == expected


def test_statement_runs(corpus: list[Lexed]) -> None:
    for x in corpus:
        if not x.texts:
            continue
        for units in (
            snippets._indented_units(x.texts, x.cats, x.lines, x.source),
            snippets._brace_units(x.texts, x.cats, x.lines),
        ):
            covered = snippets._covered(len(x.texts), units)
            assert covered == ref.covered_tokens(len(x.texts), units), x.name
            got = snippets._statement_runs(x.texts, x.cats, x.lines, covered)
            assert got == ref.statement_runs(x.texts, x.cats, x.lines, covered), x.name


def test_line_kinds(corpus: list[Lexed]) -> None:
    for x in corpus:
        for start, end in ref.logical_lines(x.texts, x.cats, x.lines):
            for python_like in (True, False):
                got = noise._line_kind(x.texts, x.cats, start, end, python_like)
                assert got == ref.line_kind(x.texts, x.cats, start, end, python_like), x.name


def test_merged_noise_ranges() -> None:
    rng = random.Random(22)
    for _ in range(3000):
        count = rng.randint(0, 40)
        found = [
            (rng.randint(0, 45), rng.randint(0, 50), rng.choice(noise.KINDS))
            for _ in range(rng.randint(0, 8))
        ]
        assert noise._merge(found, count) == ref.merge(found, count), (found, count)


def test_file_view(corpus: list[Lexed]) -> None:
    for x in corpus:
        view, positions = file_view(x.texts, x.cats)
        assert view == normalized(x.texts, x.cats), x.name
        assert positions.tolist() == normalized_positions(x.cats), x.name
        assert positions.dtype == np.uint32


def test_entries_keep_their_digests_and_hashes(corpus: list[Lexed]) -> None:
    for x in corpus:
        entry = build_entry(x.name, x.source, x.language, min_tokens=5, min_lines=1)
        if entry.heavy is None or not entry.snippets:
            continue
        texts, cats = entry.heavy.texts, entry.heavy.cats
        for meta in entry.snippets:
            window = texts[meta.start : meta.end]
            assert meta.sha == text_sha(window), x.name
            assert meta.norm_sha == text_sha(normalized(window, cats[meta.start : meta.end]))
        assert entry.h4.tolist() == ngram_hashes(token_hashes(normalized(texts, cats))).tolist()
        assert entry.npos.tolist() == normalized_positions(cats)
        back = Entry.from_light_json(json.loads(json.dumps(entry.light_json())))
        assert back.h4.dtype == entry.h4.dtype and back.npos.dtype == entry.npos.dtype
        assert back.h4.tolist() == entry.h4.tolist() and back.npos.tolist() == entry.npos.tolist()
        assert back.light_json() == entry.light_json()


def test_generated_and_minified_status(corpus: list[Lexed]) -> None:
    long_line = "x = [" + "1, " * 2000 + "]\n"
    sources = [x.source for x in corpus] + [
        "y = 1\n" * 300 + long_line,
        long_line * 3,
        "a" * 5001,
        "a" * 25001,
        ("b" * 4000 + "\n") * 3,
        "\n" * 6000 + "c" * 25001 + "\n",
    ]
    for source in sources:
        expected = ref.detect_status(source)
        assert detect_status(source) == expected
        assert detect_status(source, snippets.line_starts(source)) == expected


@pytest.mark.parametrize(
    "source",
    [
        "x = 1\n",
        "x = 1  # crystal: ignore\ny = 2\n",
        "# crystal:ignore-file\nx = 1\n",
        "\n" * 12 + "# crystal: ignore-file\n",
        "a = 1  # crystal:\n# ignore\n",
        "a = 1  # crystal:\u2028ignore\nb = 2 # crystal:  \tignore\n",
        "crystal lattice\n",
    ],
)
def test_suppressions(source: str) -> None:
    lines = source.split("\n")
    from crystal_lsp.text.entries import _SUPPRESS, _SUPPRESS_FILE

    expected = (
        any(_SUPPRESS_FILE.search(line) for line in lines[:10]),
        {i for i, line in enumerate(lines) if _SUPPRESS.search(line)},
    )
    assert _suppressions(source, lines) == expected


TOKENS = ["(", ")", "[", "]", "{", "}", "x", "'a\nb'", "'''", "\n", ":", ".", "", "((", "def"]


@st.composite
def token_streams(draw: st.DrawFn) -> tuple[list[str], str, list[int], str]:
    count = draw(st.integers(0, 60))
    texts = draw(st.lists(st.sampled_from(TOKENS), min_size=count, max_size=count))
    cats = "".join(draw(st.lists(st.sampled_from("POSNKM"), min_size=count, max_size=count)))
    steps = draw(st.lists(st.integers(0, 2), min_size=count, max_size=count))
    lines = list(np.cumsum(steps).tolist()) if count else []
    height = (lines[-1] + 2) if lines else 1
    indents = draw(st.lists(st.sampled_from(["", " ", "\t", "  \t ", "\t\t"]), min_size=height))
    source = "\n".join(f"{indent}y" for indent in indents[:height])
    return texts, cats, lines, source


@settings(max_examples=300, deadline=None)
@given(token_streams())
def test_random_token_streams(stream: tuple[list[str], str, list[int], str]) -> None:
    texts, cats, lines, source = stream
    assert noise.logical_lines(texts, cats, lines) == ref.logical_lines(texts, cats, lines)
    assert noise.physical_lines(lines) == ref.physical_lines(lines)
    assert snippets._logical_lines(texts, cats, lines, source) == ref.indented_logical_lines(
        texts, cats, lines, source
    )
    view, positions = file_view(texts, cats)
    assert view == normalized(texts, cats) and positions.tolist() == normalized_positions(cats)
