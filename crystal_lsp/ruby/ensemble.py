"""RUBY (Tran et al. 2019): the highest level both programs allow.

That is the graph level when both programs have a dependence graph, else the tree level when both
have a syntax tree, else the token level.

``RubyItem`` holds what one program contributes (token ids, and its syntax tree and dependence
graph, built on first use and cached); the ``pair_*`` functions score two items at one level and
return an :class:`~crystal_lsp.ruby.trees.Unbuilt` reason when that level is not available for the
pair (a representation cannot be built, or the comparison ran out of time). The top-level
functions :func:`sts`, :func:`trs`, :func:`grs` and :func:`ruby_score` take source strings.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, NamedTuple

from crystal_lsp.ruby.ged import Graph, graph_edit_distance, grs_from_distance
from crystal_lsp.ruby.lexical import TokenIds, sts_from_ids
from crystal_lsp.ruby.options import RubyOptions, Timeout
from crystal_lsp.ruby.pdg import build_pdg, has_pdg
from crystal_lsp.ruby.ted import tree_edit_distance, trs_from_distance
from crystal_lsp.ruby.trees import Ast, Unbuilt, build_ast, syntax_tree
from crystal_lsp.text.lexers import canonical_name, resolve_lexer
from crystal_lsp.text.tokens import lex

LEVELS = ("grs", "trs", "sts")
DEFAULT_OPTIONS = RubyOptions()


class RubyItem:
    """One program: its token ids now, its syntax tree and dependence graph when first asked."""

    __slots__ = ("_ast", "_pdg", "_root", "code", "ids", "language", "options")

    def __init__(
        self, code: str, ids: Sequence[int], language: str, options: RubyOptions = DEFAULT_OPTIONS
    ) -> None:
        self.code = code
        self.ids = ids
        self.language = language
        self.options = options
        self._ast: Ast | Unbuilt | None = None
        self._pdg: Graph | Unbuilt | None = None

    @property
    def ast(self) -> Ast | Unbuilt:
        """The syntax tree for TRS, or why it cannot be built."""
        if self._ast is None:
            root = syntax_tree(self.code, self.language, self.options)
            self._ast = (
                root if isinstance(root, Unbuilt) else build_ast(root, self.options.max_tree_nodes)
            )
        return self._ast

    @property
    def pdg(self) -> Graph | Unbuilt:
        """The dependence graph for GRS, or why it cannot be built."""
        if self._pdg is None:
            if not has_pdg(self.language):
                self._pdg = Unbuilt(f"no dependence-graph builder for {self.language!r}")
            else:
                root = syntax_tree(self.code, self.language, self.options)
                self._pdg = (
                    root
                    if isinstance(root, Unbuilt)
                    else build_pdg(root, self.language, self.options)
                )
        return self._pdg


class RubyResult(NamedTuple):
    """RUBY's score, the level it came from, and every level that could be computed.

    ``note`` says why higher levels were not used (empty when the level is ``grs``).
    """

    score: float
    level: str
    sts: float
    trs: float | None
    grs: float | None
    note: str = ""


def pair_sts(hyp: RubyItem, ref: RubyItem) -> float:
    """STS of two items (always available)."""
    return sts_from_ids(hyp.ids, ref.ids)


def pair_trs(hyp: RubyItem, ref: RubyItem) -> float | Unbuilt:
    """TRS of two items, or why it is not available."""
    a, b = hyp.ast, ref.ast
    for tree, side in ((a, "hypothesis"), (b, "reference")):
        if isinstance(tree, Unbuilt):
            return Unbuilt(f"{side}: {tree.reason}")
    assert isinstance(a, Ast) and isinstance(b, Ast)
    try:
        distance = tree_edit_distance(a, b, _deadline(hyp.options))
    except Timeout:
        return Unbuilt(f"tree edit distance exceeded {hyp.options.timeout:g} s")
    return trs_from_distance(distance, len(a), len(b))


def pair_grs(hyp: RubyItem, ref: RubyItem) -> float | Unbuilt:
    """GRS of two items, or why it is not available."""
    a, b = hyp.pdg, ref.pdg
    for graph, side in ((a, "hypothesis"), (b, "reference")):
        if isinstance(graph, Unbuilt):
            return Unbuilt(f"{side}: {graph.reason}")
    assert isinstance(a, Graph) and isinstance(b, Graph)
    try:
        result = graph_edit_distance(a, b, deadline=_deadline(hyp.options))
    except Timeout:
        return Unbuilt(f"graph edit distance exceeded {hyp.options.timeout:g} s")
    return grs_from_distance(result.distance, a.size, b.size)


def pair_ruby(hyp: RubyItem, ref: RubyItem) -> tuple[float, str, str]:
    """RUBY of two items: ``(score, level, why higher levels were skipped)``."""
    notes = []
    graph = pair_grs(hyp, ref)
    if not isinstance(graph, Unbuilt):
        return graph, "grs", ""
    notes.append(f"grs: {graph.reason}")
    tree = pair_trs(hyp, ref)
    if not isinstance(tree, Unbuilt):
        return tree, "trs", "; ".join(notes)
    notes.append(f"trs: {tree.reason}")
    return pair_sts(hyp, ref), "sts", "; ".join(notes)


def _deadline(options: RubyOptions) -> float | None:
    return None if options.timeout is None else time.perf_counter() + options.timeout


def _items(
    hyp: str, ref: str, language: str | None, options: RubyOptions
) -> tuple[RubyItem, RubyItem]:
    lexer = resolve_lexer(language, None, hyp)
    name = canonical_name(lexer)
    ids = TokenIds()
    return (
        RubyItem(hyp, ids(lex(hyp, lexer).texts), name, options),
        RubyItem(ref, ids(lex(ref, lexer).texts), name, options),
    )


def sts(hyp: str, ref: str, language: str | None = None) -> float:
    """STS: 1 − token edit distance / the longer token count (Pygments tokens, as for BLEU)."""
    a, b = _items(hyp, ref, language, DEFAULT_OPTIONS)
    return pair_sts(a, b)


def trs(
    hyp: str, ref: str, language: str | None = None, options: RubyOptions = DEFAULT_OPTIONS
) -> float | None:
    """TRS: 1 − tree edit distance / (|T1| + |T2|); ``None`` when a tree cannot be built."""
    value = pair_trs(*_items(hyp, ref, language, options))
    return None if isinstance(value, Unbuilt) else value


def grs(
    hyp: str, ref: str, language: str | None = None, options: RubyOptions = DEFAULT_OPTIONS
) -> float | None:
    """GRS: 1 − graph edit distance / (size1 + size2); ``None`` when a graph cannot be built."""
    value = pair_grs(*_items(hyp, ref, language, options))
    return None if isinstance(value, Unbuilt) else value


def ruby_score(
    hyp: str, ref: str, language: str | None = None, options: RubyOptions = DEFAULT_OPTIONS
) -> RubyResult:
    """RUBY of a hypothesis against a reference, with every level that can be computed.

    >>> ruby_score("x = 1\\nprint(x)\\n", "x = 1\\nprint(x)\\n", "python").level
    'grs'
    """
    a, b = _items(hyp, ref, language, options)
    graph, tree = pair_grs(a, b), pair_trs(a, b)
    token = pair_sts(a, b)
    notes = []
    if isinstance(graph, Unbuilt):
        notes.append(f"grs: {graph.reason}")
        if isinstance(tree, Unbuilt):
            notes.append(f"trs: {tree.reason}")
    levels: dict[str, Any] = {
        "grs": None if isinstance(graph, Unbuilt) else graph,
        "trs": None if isinstance(tree, Unbuilt) else tree,
        "sts": token,
    }
    level = next(name for name in LEVELS if levels[name] is not None)
    return RubyResult(levels[level], level, token, levels["trs"], levels["grs"], "; ".join(notes))
