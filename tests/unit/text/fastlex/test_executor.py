"""The executor's token streams are Pygments' own: stdlib files, generated text, every language."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest
from fastlex_samples import FRAGMENTS
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import Lexer

from crystal_lsp.text.fastlex import get_tokens, program, program_for, select
from crystal_lsp.text.fastlex.select import runner_for
from crystal_lsp.text.fastlex.tables import Tables
from crystal_lsp.text.lexers import PROGRAMMING_LANGUAGES, lexer_by_language
from crystal_lsp.text.relex import full_scan
from crystal_lsp.text.tokens import lex

STDLIB = Path(sysconfig.get_paths()["stdlib"])
# every 7th module of the standard library, sorted: about 90 files of all kinds of Python
STDLIB_FILES = sorted(STDLIB.glob("*.py"))[::7]

TEXT = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), min_size=1, max_size=10
).map("".join)


def _compiled_languages() -> list[str]:
    return sorted(n for n in PROGRAMMING_LANGUAGES if program_for(lexer_by_language(n)))


def _same(lexer: Lexer, text: str) -> None:
    assert list(get_tokens(lexer, text)) == list(lexer.get_tokens_unprocessed(text))


def test_most_programming_languages_are_compiled() -> None:
    compiled = _compiled_languages()
    for name in ("python", "java", "javascript", "typescript", "c", "cpp", "go", "rust"):
        assert name in compiled
    assert len(compiled) >= 40


@pytest.mark.parametrize("path", STDLIB_FILES, ids=lambda p: p.name)
def test_stdlib_file_gives_pygments_tokens(path: Path) -> None:
    _same(lexer_by_language("python"), path.read_text(encoding="utf-8", errors="replace"))


@pytest.mark.parametrize("language", _compiled_languages())
@settings(max_examples=25)
@given(text=TEXT)
def test_generated_text_gives_pygments_tokens(language: str, text: str) -> None:
    _same(lexer_by_language(language), text)


@given(text=TEXT)
def test_lex_is_unchanged_with_the_executor_off(text: str) -> None:
    lexer = lexer_by_language("python")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CRYSTAL_LSP_FASTLEX", "0")
        assert runner_for(lexer).__name__ == "_pygments"
        slow = lex(text, lexer, keep_comments=True)
    assert lex(text, lexer, keep_comments=True) == slow


@pytest.mark.parametrize("path", STDLIB_FILES[:20], ids=lambda p: p.name)
def test_incremental_checkpoints_are_unchanged(path: Path) -> None:
    """The relexer records the same states at the same line starts with the executor."""
    text = path.read_text(encoding="utf-8", errors="replace")
    lexer = lexer_by_language("python")
    fast = full_scan(lexer, text)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CRYSTAL_LSP_FASTLEX", "0")
        slow = full_scan(lexer, text)
    assert fast[:3] == slow[:3]
    assert (fast[3].offsets, fast[3].stacks, fast[3].kept) == (
        slow[3].offsets,
        slow[3].stacks,
        slow[3].kept,
    )


@pytest.mark.parametrize("compile_after", [0, 10**9])
@pytest.mark.parametrize("language", ["python", "javascript", "c"])
def test_rules_alone_and_joined_give_the_same_tokens(
    compile_after: int, language: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Buckets joined from their first use, or never joined: Pygments' tokens either way.

    With no stored tables: a stored alternation is joined from its first use whatever the count.
    """
    monkeypatch.setattr(program, "COMPILE_AFTER", compile_after)
    monkeypatch.setattr(select, "_PROGRAMS", {})
    monkeypatch.setattr(select, "_RUNNERS", {})
    monkeypatch.setattr(select, "tables_for", lambda cls: Tables(None))
    lexer = lexer_by_language(language)
    for text in [*FRAGMENTS, "".join(FRAGMENTS)]:
        _same(lexer, text)
    state = program_for(lexer)
    assert state is not None
    joined = sum(len(table._by_subset) for table in state.tables.values())
    assert (joined > 0) == (compile_after == 0)
