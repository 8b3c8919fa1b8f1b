"""RUBY: the level used for each pair, falling back level by level, within budgets."""

from __future__ import annotations

import sys
import time

import pytest

from crystal_lsp.ruby import LEVELS, RubyOptions, RubyResult, grs, ruby_score, sts, trees, trs
from crystal_lsp.ruby import ted as ted_module

pytest.importorskip("tree_sitter_python")

PROGRAM = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"
OTHER = "def total(xs):\n    return sum(xs)\n"
BROKEN = "def total(xs):\n    s = 0\n    for x in xs\n        s += x\n"


def test_valid_python_uses_the_graph_level() -> None:
    result = ruby_score(PROGRAM, OTHER, "python")
    assert isinstance(result, RubyResult)
    assert result.level == "grs" and result.note == ""
    assert result.score == result.grs == grs(PROGRAM, OTHER, "python")
    assert result.trs == trs(PROGRAM, OTHER, "python")
    assert result.sts == sts(PROGRAM, OTHER, "python")
    assert 0 < result.score < 1
    assert ruby_score(PROGRAM, PROGRAM, "py").score == 1.0


def test_syntax_error_falls_back_to_tokens() -> None:
    result = ruby_score(BROKEN, PROGRAM, "python")
    assert result.level == "sts"
    assert result.trs is None and result.grs is None
    assert result.score == result.sts == sts(BROKEN, PROGRAM, "python")
    assert "syntax error" in result.note and result.note.startswith("grs: hypothesis")


def test_tree_without_graph_falls_back_to_trees() -> None:
    pytest.importorskip("tree_sitter_c")
    result = ruby_score("int f(int a) { return a + 1; }", "int f(int b) { return b; }", "c")
    assert result.level == "trs" and result.grs is None
    assert result.score == result.trs
    assert "no dependence-graph builder for 'c'" in result.note


def test_language_without_grammar_uses_tokens() -> None:
    result = ruby_score("puts 1", "puts 2", "ruby")
    assert result.level == "sts" and "no tree-sitter grammar" in result.note


def test_without_tree_sitter_ruby_is_sts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tree_sitter", None)
    trees.reset_parsers()
    try:
        result = ruby_score(PROGRAM, OTHER, "python")
        assert result.level == "sts" and result.trs is None and result.grs is None
        assert "not installed" in result.note
    finally:
        monkeypatch.undo()
        trees.reset_parsers()


def test_huge_input_falls_back_quickly() -> None:
    huge = "".join(f"v{i} = v{i - 1} + {i}\n" for i in range(1, 5000))
    started = time.perf_counter()
    result = ruby_score(huge, PROGRAM, "python")
    assert time.perf_counter() - started < 8  # mostly Pygments tokenizing 25,000 tokens
    assert result.level == "sts"
    assert "more than 4000 nodes" in result.note and "more than 2000 nodes" in result.note


def test_tree_budget_is_per_tree() -> None:
    options = RubyOptions(max_tree_nodes=10, max_graph_nodes=2)
    result = ruby_score(PROGRAM, OTHER, "python", options)
    assert result.level == "sts"
    assert "more than 2 nodes" in result.note and "more than 10 nodes" in result.note


def test_timeout_falls_back_level_by_level(monkeypatch: pytest.MonkeyPatch) -> None:
    # Force the pure-Python tree edit distance so that the deadline is checked, and make every
    # deadline already past: both structural levels time out and RUBY reports STS.
    monkeypatch.setattr(ted_module, "_KERNEL", [None])
    result = ruby_score(PROGRAM, OTHER, "python", RubyOptions(timeout=1e-9))
    assert result.level == "sts"
    assert "graph edit distance exceeded" in result.note
    assert "tree edit distance exceeded" in result.note


def test_levels_constant() -> None:
    assert LEVELS == ("grs", "trs", "sts")


def test_invalid_options_are_user_errors() -> None:
    from crystal_lsp.errors import CrystalError

    with pytest.raises(CrystalError):
        RubyOptions(max_tree_nodes=0)
    with pytest.raises(CrystalError):
        RubyOptions(timeout=0)
