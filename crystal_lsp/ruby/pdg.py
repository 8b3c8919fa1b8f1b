"""Program dependence graphs: statements as nodes, control and data dependences as edges.

One graph per program: every function (method, constructor, lambda-free body), class body and the
module's top level is a *region* with an entry node; a region's statements hang off their
controlling statement. Edges:

* ``ctrl`` u → v: statement v runs only when predicate (or entry) u decides so. Control
  dependence is taken from the syntax (the nearest enclosing ``if``/loop/``try``/``case``/entry),
  which equals post-dominator control dependence for structured code; the extra dependences that
  ``break``, ``continue``, ``return`` and exceptions create are not modelled.
* ``data`` u → v: a definition of a variable at u reaches a use at v (reaching definitions,
  iterated to a fixpoint over the region's control-flow graph, which does model ``break``,
  ``continue``, ``return``/``raise``/``throw`` and loop back edges). Assignments to a plain name
  kill earlier definitions; writes through a field, an element or a method call on a name
  (``a[i] = x``, ``a.f = x``, ``a.add(x)``) define the name without killing. One edge per
  (u, v) pair, whatever the number of variables.

Limits: no inter-procedural edges (calls, globals, fields across methods, closures), aliasing is
ignored, exceptions flow only from a ``try`` body to its handlers. Node labels are statement kinds
(see the language modules); variable names never appear in labels, so renaming does not change the
graph.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from crystal_lsp.ruby.ged import Graph
from crystal_lsp.ruby.options import RubyOptions
from crystal_lsp.ruby.trees import Unbuilt

# Canonical language name -> module with a ``Walker`` class.
PDG_LANGUAGES = {
    "python": "crystal_lsp.ruby.pdg_python",
    "python2": "crystal_lsp.ruby.pdg_python",
    "java": "crystal_lsp.ruby.pdg_java",
}


class OverBudget(Exception):
    """The graph grew past its node or edge budget."""


@dataclass
class _Region:
    entry: int
    entry_defs: frozenset[str]
    nodes: list[int] = field(default_factory=list)
    succ: dict[int, list[int]] = field(default_factory=dict)


class PdgBuilder:
    """Collects statement nodes, control edges and per-region control flow; then adds data edges."""

    def __init__(self, max_nodes: int, max_edges: int) -> None:
        self.max_nodes = max_nodes
        self.max_edges = max_edges
        self.labels: list[str] = []
        self.uses: list[frozenset[str]] = []
        self.defs: list[frozenset[str]] = []
        self.weak: list[frozenset[str]] = []
        self.edges: set[tuple[int, int, str]] = set()
        self.regions: list[_Region] = []
        self._current: list[_Region] = []

    def node(
        self,
        label: str,
        ctrl: int | None,
        preds: Iterable[int],
        uses: Iterable[str] = (),
        defs: Iterable[str] = (),
        weak: Iterable[str] = (),
    ) -> int:
        """Add a statement node controlled by ``ctrl`` that control flow reaches from ``preds``."""
        n = self._new(label, uses, defs, weak)
        if ctrl is not None:
            self._edge(ctrl, n, "ctrl")
        region = self._current[-1]
        region.nodes.append(n)
        for p in preds:
            region.succ.setdefault(p, []).append(n)
        return n

    def root(self, label: str) -> int:
        """The program's entry node, which opens the top-level region."""
        n = self._new(label, (), (), ())
        self.enter(n)
        return n

    def _new(
        self, label: str, uses: Iterable[str], defs: Iterable[str], weak: Iterable[str]
    ) -> int:
        n = len(self.labels)
        if n >= self.max_nodes:
            raise OverBudget(f"dependence graph has more than {self.max_nodes} nodes")
        self.labels.append(label)
        self.uses.append(frozenset(uses))
        strong = frozenset(defs)
        self.defs.append(strong)
        self.weak.append(frozenset(weak) - strong)
        return n

    def flow(self, source: int, target: int) -> None:
        """A control-flow edge added after both nodes exist (loop back edges, ``continue``)."""
        self._current[-1].succ.setdefault(source, []).append(target)

    def enter(self, entry: int, params: Iterable[str] = ()) -> None:
        """Start the region of a function or class body whose entry node is ``entry``."""
        region = _Region(entry, frozenset(params))
        self.regions.append(region)
        self._current.append(region)

    def leave(self) -> None:
        """End the innermost region."""
        self._current.pop()

    def created_since(self, mark: int) -> list[int]:
        """Nodes of the current region created after node count ``mark``."""
        return [n for n in self._current[-1].nodes if n >= mark]

    def graph(self) -> Graph:
        """The finished graph, with data edges from reaching definitions."""
        for region in self.regions:
            self._data_edges(region)
        return Graph(tuple(self.labels), tuple(sorted(self.edges)))

    def _edge(self, source: int, target: int, kind: str) -> None:
        self.edges.add((source, target, kind))
        if len(self.edges) > self.max_edges:
            raise OverBudget(f"dependence graph has more than {self.max_edges} edges")

    def _data_edges(self, region: _Region) -> None:
        # Definition sites are bits: site k is (site_node[k], variable).
        site_node: list[int] = []
        sites_of: dict[str, int] = {}
        gen: dict[int, int] = {}
        strong_vars: dict[int, frozenset[str]] = {}
        order = [region.entry, *region.nodes]
        for n in order:
            if n == region.entry:
                strong: frozenset[str] = region.entry_defs
                weak: frozenset[str] = frozenset()
            else:
                strong, weak = self.defs[n], self.weak[n]
            strong_vars[n] = strong
            bits = 0
            for var in sorted(strong | weak):
                bit = 1 << len(site_node)
                site_node.append(n)
                sites_of[var] = sites_of.get(var, 0) | bit
                bits |= bit
            gen[n] = bits
        kill = {
            n: sum(sites_of[v] for v in strong_vars[n]) & ~gen[n] for n in order if strong_vars[n]
        }
        preds: dict[int, list[int]] = {n: [] for n in order}
        for source, targets in region.succ.items():
            for target in targets:
                if target in preds:
                    preds[target].append(source)
        reach_in = dict.fromkeys(order, 0)
        reach_out = {n: gen[n] for n in order}
        changed = True
        while changed:
            changed = False
            for n in order:
                incoming = 0
                for p in preds[n]:
                    incoming |= reach_out.get(p, 0)
                out = gen[n] | (incoming & ~kill.get(n, 0))
                reach_in[n] = incoming
                if out != reach_out[n]:
                    reach_out[n] = out
                    changed = True
        for n in region.nodes:
            reaching = 0
            for var in self.uses[n]:
                reaching |= reach_in[n] & sites_of.get(var, 0)
            while reaching:
                low = reaching & -reaching
                self._edge(site_node[low.bit_length() - 1], n, "data")
                reaching ^= low


def has_pdg(language: str) -> bool:
    """Whether dependence graphs can be built for the language (given a syntax tree)."""
    return language in PDG_LANGUAGES


def build_pdg(root: Any, language: str, options: RubyOptions) -> Graph | Unbuilt:
    """The dependence graph of an error-free parse tree, or why it cannot be built."""
    module = PDG_LANGUAGES.get(language)
    if module is None:
        return Unbuilt(f"no dependence-graph builder for {language!r} (python and java only)")
    builder = PdgBuilder(options.max_graph_nodes, options.max_graph_edges)
    try:
        importlib.import_module(module).Walker(builder).program(root)
        return builder.graph()
    except OverBudget as exc:
        return Unbuilt(str(exc))
    except RecursionError:
        return Unbuilt("program nested too deeply for the dependence-graph builder")


@dataclass
class _Loop:
    head: int
    breaks: list[int] = field(default_factory=list)
    switch: bool = False


class NameCollector(Protocol):
    """What a language's name collector records of a piece of code."""

    uses: set[str]
    defs: set[str]
    weak: set[str]

    def expr(self, node: Any) -> None:
        """Record the names an expression reads and binds."""


class BaseWalker:
    """Control-flow bookkeeping shared by the language walkers.

    ``stmt(node, ctrl, preds)`` adds a statement's nodes and returns the nodes control flow leaves
    it from (empty after ``return``, ``break``, ...). A language sets ``root_kind`` (the label of
    the program node), ``calls`` (see :func:`statement_label`) and ``new_names`` (its name
    collector).
    """

    root_kind: str
    calls: dict[str, str]
    new_names: Callable[[], NameCollector]

    def __init__(self, builder: PdgBuilder) -> None:
        self.b = builder
        self.loops: list[_Loop] = []

    def program(self, root: Any) -> None:
        """Add a whole parsed file."""
        entry = self.b.root(self.root_kind)
        self.block(root.named_children, entry, [entry])

    def simple(self, node: Any, ctrl: int, preds: list[int], label_: str | None = None) -> int:
        """A node for a simple statement (or a header part) with its uses and definitions."""
        names = self.new_names()
        names.expr(node)
        label = label_ or statement_label(node, self.calls)
        return self.b.node(label, ctrl, preds, names.uses, names.defs, names.weak)

    def stmt(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        """Add one statement (language-specific)."""
        raise NotImplementedError

    def block(self, statements: Iterable[Any], ctrl: int, preds: list[int]) -> list[int]:
        """Add statements in sequence."""
        for statement in statements:
            if not statement.is_extra:
                preds = self.stmt(statement, ctrl, preds)
        return preds

    def loop(self, head: int, body: Iterable[Any]) -> list[int]:
        """A loop whose predicate node is ``head``; returns the exits (head and breaks)."""
        self.loops.append(_Loop(head))
        for end in self.block(body, head, [head]):
            self.b.flow(end, head)
        loop = self.loops.pop()
        return [head, *loop.breaks]

    def jump_break(self, node: int) -> list[int]:
        """``break`` leaves the innermost loop (or switch)."""
        if self.loops:
            self.loops[-1].breaks.append(node)
        return []

    def jump_continue(self, node: int) -> list[int]:
        """``continue`` goes back to the innermost loop's head (switches do not count)."""
        for scope in reversed(self.loops):
            if not scope.switch:
                self.b.flow(node, scope.head)
                break
        return []

    def enter_switch(self, head: int) -> None:
        """A scope that ``break`` leaves but ``continue`` passes through."""
        self.loops.append(_Loop(head, switch=True))

    def leave_switch(self) -> list[int]:
        """End the innermost switch scope; returns its ``break`` nodes."""
        return self.loops.pop().breaks

    def region(self, entry: int, params: Iterable[str], body: Iterable[Any]) -> None:
        """A function or class body: its own data flow, loops do not cross it."""
        outer, self.loops = self.loops, []
        self.b.enter(entry, params)
        self.block(body, entry, [entry])
        self.b.leave()
        self.loops = outer


def text(node: Any) -> str:
    """A node's source text."""
    return str(node.text.decode("utf-8", "replace"))


def statement_label(node: Any, calls: dict[str, str]) -> str:
    """A simple statement's label: its kind and the name of the first call in it.

    An expression statement's kind includes its expression's (``expression_statement/call``).
    ``calls`` maps call node types to the field holding the called name; the search stays
    outside nested bodies, and only the last part of a dotted name is kept
    (``sys.stdin.readline`` -> ``readline``).
    """
    kind = str(node.type)
    if kind == "expression_statement" and node.named_child_count:
        kind = f"expression_statement/{node.named_children[0].type}"
    stack = [node]
    while stack:
        current = stack.pop()
        field_name = calls.get(current.type)
        if field_name is not None:
            name = current.child_by_field_name(field_name)
            if name is not None:
                return f"{kind}:{text(name).rsplit('.', 1)[-1]}"
        if current.type not in ("block", "class_body"):
            stack.extend(reversed(current.named_children))
    return kind
