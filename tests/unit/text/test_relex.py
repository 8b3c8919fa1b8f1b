"""The restartable lexer loop: Pygments' tokens, checkpoints, and re-synchronisation."""

from __future__ import annotations

from pygments.lexers import PythonLexer
from pygments.token import Error

from crystal_lsp.text.relex import (
    ROOT,
    Checkpoints,
    Sync,
    after_blank_line,
    common_prefix,
    common_suffix,
    first_error_before,
    full_scan,
    scan,
    token_lines,
)
from crystal_lsp.text.snippets import line_starts
from crystal_lsp.text.tokens import lex

SOURCE = 'def f(x):\n    """doc\n    more"""\n    return x + 1\n\n\nclass C:\n    y = "s"\n'


def test_full_scan_keeps_the_tokens_lex_keeps() -> None:
    texts, starts, types, cps = full_scan(PythonLexer(), SOURCE)
    tokens = lex(SOURCE, PythonLexer())
    assert (texts, starts, types) == (tokens.texts, tokens.starts, tokens.types)
    assert cps.offsets[0] == 0 and cps.stacks[0] == ROOT
    assert all(SOURCE[o - 1] == "\n" for o in cps.offsets[1:])
    assert cps.kept == sorted(cps.kept)


def test_a_restart_from_a_checkpoint_gives_the_rest_of_the_stream() -> None:
    texts, _, _, cps = full_scan(PythonLexer(), SOURCE)
    c = cps.offsets.index(SOURCE.index("class"))
    rest = scan(PythonLexer(), SOURCE, cps.offsets[c], cps.stacks[c], cps.kept[c])
    assert rest.texts == texts[cps.kept[c] :]
    assert rest.synced_at is None


def test_sync_stops_at_an_equal_shifted_checkpoint() -> None:
    old = Checkpoints([0, 10, 20], [ROOT, ROOT, ("root", "x")], [0, 3, 6])
    sync = Sync(old, delta=5, sync_from=12)
    assert sync.matches(15, ROOT) == 1
    assert sync.matches(25, ROOT) is None  # the old state there was ("root", "x")
    assert sync.matches(25, ("root", "x")) == 2
    assert sync.matches(11, ROOT) is None  # before sync_from


def test_helpers() -> None:
    assert common_prefix("abcdef", "abcxef") == 3
    assert common_suffix("abcdef", "abcxef", 10) == 2
    assert common_suffix("abcdef", "abcxef", 1) == 1
    assert after_blank_line("a\n  \nb", 5) and not after_blank_line("a\nb\nc", 4)
    assert first_error_before([Error], [3], 10) == 3
    assert first_error_before([Error], [3], 2) == 2
    starts = [0, 4, 9, 12]
    assert token_lines(starts, line_starts("abc\nefgh\nij\nk")) == [0, 1, 2, 3]
