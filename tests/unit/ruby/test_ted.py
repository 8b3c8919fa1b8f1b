"""TRS: syntax trees, the "can be built" rule, and Zhang–Shasha tree edit distance."""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp.ruby import RubyOptions, trees, trs
from crystal_lsp.ruby import ted as ted_module
from crystal_lsp.ruby.options import Timeout
from crystal_lsp.ruby.ted import tree_edit_distance
from crystal_lsp.ruby.trees import Ast, Unbuilt, build_ast, label_id, syntax_tree

pytest.importorskip("tree_sitter_python")

Tree = tuple[str, list[Any]]


def ast(tree: Tree) -> Ast:
    """Postorder arrays of a ``(label, [children])`` tree."""
    labels: list[int] = []
    leftmost: list[int] = []

    def visit(node: Tree) -> int:
        label, children = node
        first = [visit(child) for child in children]
        labels.append(label_id(label))
        leftmost.append(first[0] if first else len(labels) - 1)
        return leftmost[-1]

    visit(tree)
    return Ast(labels, leftmost)


def leaf(label: str) -> Tree:
    return (label, [])


# Zhang & Shasha's example: f(d(a, c(b)), e) and f(c(d(a, b)), e) are 2 edits apart
# (delete c below d, insert c above d).
ZS_A: Tree = ("f", [("d", [leaf("a"), ("c", [leaf("b")])]), leaf("e")])
ZS_B: Tree = ("f", [("c", [("d", [leaf("a"), leaf("b")])]), leaf("e")])


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_zhang_shasha_example(backend: str) -> None:
    if backend == "numba" and ted_module.backend() != "numba":
        pytest.skip("numba not installed")
    assert tree_edit_distance(ast(ZS_A), ast(ZS_B), backend=backend) == 2
    assert tree_edit_distance(ast(ZS_B), ast(ZS_A), backend=backend) == 2
    assert tree_edit_distance(ast(ZS_A), ast(ZS_A), backend=backend) == 0


def test_trs_hand_values_on_python() -> None:
    # module > expression_statement > assignment > (identifier:x, integer:1): 5 nodes each,
    # one relabelling -> 1 - 1/10.
    assert trs("x = 2", "x = 1", "python") == pytest.approx(0.9)
    # The second program adds a 4-node statement: 4 insertions over 5 + 9 nodes.
    assert trs("x = 1\ny = 2\n", "x = 1\n", "python") == pytest.approx(1 - 4 / 14)
    # Comments are not part of the tree.
    assert trs("x = 1  # one\n", "x = 1\n", "python") == 1.0


def test_operators_are_part_of_labels() -> None:
    assert trs("y = a - b", "y = a + b", "python") == pytest.approx(1 - 1 / 14)


def random_tree(draw: Any, depth: int = 0) -> Tree:
    children = [] if depth > 3 else draw(st.lists(st.just(None), max_size=3))
    return (draw(st.sampled_from("abc")), [random_tree(draw, depth + 1) for _ in children])


@st.composite
def trees_(draw: Any) -> Tree:
    return random_tree(draw)


@settings(max_examples=60)
@given(trees_(), trees_())
def test_backends_agree_and_distance_is_a_metric(a: Tree, b: Tree) -> None:
    x, y = ast(a), ast(b)
    d = tree_edit_distance(x, y, backend="python")
    assert d == tree_edit_distance(y, x, backend="python")
    assert abs(len(x) - len(y)) <= d <= len(x) + len(y)
    if ted_module.backend() == "numba":
        assert tree_edit_distance(x, y, backend="numba") == d


@settings(max_examples=60)
@given(trees_(), trees_())
def test_matches_apted(a: Tree, b: Tree) -> None:
    apted = pytest.importorskip("apted")

    class Node:
        def __init__(self, tree: Tree) -> None:
            self.label = tree[0]
            self.children = [Node(c) for c in tree[1]]

    class Config(apted.Config):  # type: ignore[misc,name-defined]
        def rename(self, p: Node, q: Node) -> int:
            return 0 if p.label == q.label else 1

        def children(self, node: Node) -> list[Node]:
            return node.children

    expected = apted.APTED(Node(a), Node(b), Config()).compute_edit_distance()
    assert tree_edit_distance(ast(a), ast(b)) == expected


def test_deadline_raises_timeout() -> None:
    x = ast(ZS_A)
    for backend in ("python", "numba"):
        if backend == "numba" and ted_module.backend() != "numba":
            continue
        with pytest.raises(Timeout):
            tree_edit_distance(x, x, deadline=time.perf_counter() - 1, backend=backend)


def test_syntax_error_cannot_be_built() -> None:
    root = syntax_tree("x = (1 +\n", "python", RubyOptions())
    assert isinstance(root, Unbuilt) and "syntax error" in root.reason
    assert trs("x = (1 +\n", "x = 1\n", "python") is None


def test_missing_node_counts_as_an_error() -> None:
    # tree-sitter recovers from a missing ';' with a MISSING node, which is still an error.
    root = syntax_tree("class A { void f() { int x = 1 } }", "java", RubyOptions())
    assert isinstance(root, Unbuilt)


def test_language_without_grammar_cannot_be_built() -> None:
    root = syntax_tree("puts 1", "ruby", RubyOptions())
    assert isinstance(root, Unbuilt) and "no tree-sitter grammar" in root.reason


def test_budgets() -> None:
    root = syntax_tree("x = 1\ny = 2\n", "python", RubyOptions())
    assert len(build_ast(root, 9)) == 9  # type: ignore[arg-type]
    over = build_ast(root, 8)
    assert isinstance(over, Unbuilt) and "more than 8 nodes" in over.reason
    long = syntax_tree("x = 1\n" * 10, "python", RubyOptions(max_source_chars=20))
    assert isinstance(long, Unbuilt) and "longer than 20" in long.reason


def test_without_tree_sitter_trees_cannot_be_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tree_sitter", None)
    trees.reset_parsers()
    try:
        root = syntax_tree("x = 1", "python", RubyOptions())
        assert isinstance(root, Unbuilt) and "not installed" in root.reason
        assert not trees.has_grammar("python")
        assert trees.parser_label("python") == "none"
    finally:
        monkeypatch.undo()
        trees.reset_parsers()
    assert trees.has_grammar("python")
