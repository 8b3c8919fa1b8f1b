"""Syntax trees from tree-sitter grammars, and the rule for when a tree "can be built".

A syntax tree can be built for a source when

1. tree-sitter and a grammar for the language are installed (``pip install crystal-lsp[ruby]``:
   Python, Java, JavaScript, C, C++ and Go),
2. the source has at most ``max_source_chars`` characters,
3. tree-sitter parses it without any ``ERROR`` or ``MISSING`` node (tree-sitter always returns a
   tree, recovering from errors; a recovered tree is not the program's AST), and
4. for TRS only: the AST has at most ``max_tree_nodes`` nodes.

The AST is tree-sitter's tree restricted to *named* nodes (anonymous nodes are punctuation and
keywords, already implied by their parent's type) without comments. A node's label is its type; a
leaf (identifier, literal) also carries its text, and an operator node its operator
(``binary_expression:+``), so that ``a + b`` and ``a - c`` differ. The label choice was measured
against the types-only labels (see bench/results/ruby_choices.md).
"""

from __future__ import annotations

import functools
import importlib
from importlib import metadata
from typing import Any, NamedTuple

from crystal_lsp.errors import install_command
from crystal_lsp.ruby.options import RubyOptions

# Pygments' canonical language names -> the grammar package for them.
GRAMMARS = {
    "python": "tree_sitter_python",
    "python2": "tree_sitter_python",
    "java": "tree_sitter_java",
    "javascript": "tree_sitter_javascript",
    "c": "tree_sitter_c",
    "cpp": "tree_sitter_cpp",
    "go": "tree_sitter_go",
}


class Unbuilt(NamedTuple):
    """Why a representation (tree or graph) cannot be built."""

    reason: str


class Ast:
    """A syntax tree in the postorder arrays Zhang–Shasha works on.

    ``labels[i]`` is the label id of the i-th node in postorder, ``leftmost[i]`` the postorder
    index of its leftmost leaf, ``keyroots`` the nodes with no ancestor sharing their leftmost leaf
    (in increasing order). The root is the last node.
    """

    __slots__ = ("_arrays", "keyroots", "labels", "leftmost")

    def __init__(self, labels: list[int], leftmost: list[int]) -> None:
        self.labels = labels
        self.leftmost = leftmost
        highest: dict[int, int] = {}
        for i, leaf in enumerate(leftmost):
            highest[leaf] = i
        self.keyroots = sorted(highest.values())
        self._arrays: Any = None

    def __len__(self) -> int:
        return len(self.labels)


_LABEL_IDS: dict[str, int] = {}


def label_id(label: str) -> int:
    """A process-wide integer id for a node label."""
    return _LABEL_IDS.setdefault(label, len(_LABEL_IDS))


@functools.cache
def _parser(language: str) -> Any:
    """A tree-sitter parser for the language, or the reason there is none."""
    module_name = GRAMMARS.get(language)
    if module_name is None:
        return Unbuilt(f"no tree-sitter grammar for {language!r}")
    try:
        tree_sitter = importlib.import_module("tree_sitter")
        grammar = importlib.import_module(module_name)
    except ImportError:
        return Unbuilt(
            f"tree-sitter or {module_name} is not installed (install it with: "
            f"{install_command('ruby')})"
        )
    return tree_sitter.Parser(tree_sitter.Language(grammar.language()))


def reset_parsers() -> None:
    """Forget loaded parsers (after installing grammars, or in tests)."""
    _parser.cache_clear()


def has_grammar(language: str) -> bool:
    """Whether syntax trees can be parsed for the language here."""
    return not isinstance(_parser(language), Unbuilt)


def parser_label(language: str) -> str:
    """The parser and grammar versions, for signatures (``-`` when unavailable)."""
    module_name = GRAMMARS.get(language)
    if module_name is None or not has_grammar(language):
        return "none"
    return f"ts-{_version('tree-sitter')}/{language}-{_version(module_name.replace('_', '-'))}"


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "?"


def syntax_tree(code: str, language: str, options: RubyOptions) -> Any:
    """The root node of the error-free parse of ``code``, or an :class:`Unbuilt` reason."""
    parser = _parser(language)
    if isinstance(parser, Unbuilt):
        return parser
    if len(code) > options.max_source_chars:
        return Unbuilt(f"source longer than {options.max_source_chars} characters")
    root = parser.parse(code.encode("utf-8", "surrogatepass")).root_node
    if root.has_error:
        return Unbuilt("syntax error (the parse tree has ERROR or MISSING nodes)")
    return root


def build_ast(root: Any, max_nodes: int) -> Ast | Unbuilt:
    """The AST of a parse tree for tree edit distance, or why it is over budget."""
    labels: list[int] = []
    leftmost: list[int] = []
    # Iterative postorder; each frame is (node, its named children, index of the next child,
    # postorder index of its first child's leftmost leaf or -1).
    stack: list[tuple[Any, list[Any], list[int]]] = [(root, _children(root), [0, -1])]
    while stack:
        node, children, state = stack[-1]
        if state[0] < len(children):
            child = children[state[0]]
            state[0] += 1
            stack.append((child, _children(child), [0, -1]))
            continue
        stack.pop()
        index = len(labels)
        if index >= max_nodes:
            return Unbuilt(f"syntax tree has more than {max_nodes} nodes")
        labels.append(label_id(_label(node, not children)))
        leftmost.append(state[1] if state[1] >= 0 else index)
        if stack and stack[-1][2][1] < 0:
            stack[-1][2][1] = leftmost[-1]
    return Ast(labels, leftmost)


def _children(node: Any) -> list[Any]:
    return [c for c in node.named_children if not c.is_extra]


def _label(node: Any, leaf: bool) -> str:
    if leaf:
        return f"{node.type}:{node.text.decode('utf-8', 'replace')}"
    operator = node.child_by_field_name("operator")
    if operator is not None and not operator.is_named:
        return f"{node.type}:{operator.type}"
    return str(node.type)
