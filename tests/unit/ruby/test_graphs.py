"""GRS: dependence graphs for Python and Java, and the bounded approximate graph edit distance."""

from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp.ruby import RubyOptions, grs
from crystal_lsp.ruby.ensemble import DEFAULT_OPTIONS, RubyItem
from crystal_lsp.ruby.ged import Graph, graph_edit_distance, lower_bound
from crystal_lsp.ruby.options import Timeout
from crystal_lsp.ruby.trees import Unbuilt

pytest.importorskip("tree_sitter_java")
pytest.importorskip("tree_sitter_python")


def pdg(code: str, language: str, options: RubyOptions = DEFAULT_OPTIONS) -> Graph:
    graph = RubyItem(code, [], language, options).pdg
    assert isinstance(graph, Graph), graph
    return graph


def data_edges(graph: Graph) -> set[tuple[str, str]]:
    return {(graph.labels[s], graph.labels[t]) for s, t, kind in graph.edges if kind == "data"}


def data_pairs(graph: Graph) -> set[tuple[int, int]]:
    return {(s, t) for s, t, kind in graph.edges if kind == "data"}


def test_python_def_use_and_control_edges() -> None:
    graph = pdg("a = 1\nb = a + 1\n", "python")
    assert graph.labels == (
        "module",
        "expression_statement/assignment",
        "expression_statement/assignment",
    )
    assert graph.edges == ((0, 1, "ctrl"), (0, 2, "ctrl"), (1, 2, "data"))


def test_grs_hand_value() -> None:
    # Same three nodes and two control edges; the hypothesis lacks the data edge a -> b.
    # GED = 1 (insert one edge), sizes 5 + 6 -> 1 - 1/11.
    assert grs("a = 1\nb = 2\n", "a = 1\nb = a + 1\n", "python") == pytest.approx(10 / 11)
    assert grs("a = 1\nb = a + 1\n", "a = 1\nb = a + 1\n", "python") == 1.0


def test_renaming_variables_keeps_the_graph() -> None:
    left = "def f(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"
    right = "def g(vals):\n    t = 0\n    for v in vals:\n        t += v\n    return t\n"
    assert pdg(left, "python") == pdg(right, "python")
    assert grs(left, right, "python") == 1.0


def test_later_definitions_kill_earlier_ones() -> None:
    graph = pdg("x = 1\nx = 2\nprint(x)\n", "python")
    assert data_pairs(graph) == {(2, 3)}


def test_element_and_method_writes_do_not_kill() -> None:
    graph = pdg("a = []\na.append(1)\na[0] = 2\nprint(a)\n", "python")
    assert {(1, 4), (2, 4), (3, 4), (1, 2), (1, 3), (2, 3)} <= data_pairs(graph)


def test_loop_carried_dependences_and_branches() -> None:
    code = (
        "s = 0\n"  # 1
        "i = 0\n"  # 2
        "while i < 10:\n"  # 3
        "    if i % 2:\n"  # 4
        "        s += i\n"  # 5
        "    else:\n"
        "        s -= 1\n"  # 6
        "    i += 1\n"  # 7
        "print(s)\n"  # 8
    )
    graph = pdg(code, "python")
    edges = data_pairs(graph)
    assert {(2, 3), (7, 3), (7, 4), (7, 5), (7, 7), (5, 5), (6, 5), (5, 6)} <= edges
    assert {(1, 8), (5, 8), (6, 8)} <= edges  # the loop may run zero times
    ctrl = {(s, t) for s, t, kind in graph.edges if kind == "ctrl"}
    assert {(3, 4), (3, 7), (4, 5), (4, 6)} <= ctrl


def test_parameters_are_defined_at_the_function_entry() -> None:
    graph = pdg("def f(a, b=2):\n    return a + b\n", "python")
    assert graph.labels[1] == "function_definition"
    assert (1, 2) in data_pairs(graph)


def test_java_method_with_loop_break_and_continue() -> None:
    code = """
class A {
  int f(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
      if (i == 3) continue;
      if (s > 100) break;
      s += i;
    }
    return s;
  }
}
"""
    graph = pdg(code, "java")
    labels = graph.labels
    assert labels[:4] == (
        "program",
        "class_declaration",
        "method_declaration",
        "local_variable_declaration",
    )
    index = {label: i for i, label in enumerate(labels)}
    loop = index["for_statement"]
    ret = index["return_statement"]
    assert (2, loop) in data_pairs(graph)  # n is a parameter
    assert (loop, loop) in data_pairs(graph)  # i++ reaches the loop header again
    add = labels.index("expression_statement/assignment_expression")
    assert (3, ret) in data_pairs(graph) and (add, ret) in data_pairs(graph)
    assert ("continue_statement" in labels) and ("break_statement" in labels)


def test_java_switch_and_try() -> None:
    code = """
class A {
  void g(int k) {
    int r = 0;
    switch (k) { case 1: r = 1; break; default: r = 2; }
    try { r = Integer.parseInt("3"); } catch (Exception e) { e.printStackTrace(); } finally { k = r; }
  }
}
"""
    graph = pdg(code, "java")
    assert "switch" in graph.labels and "catch_clause" in graph.labels
    finally_ = len(graph.labels) - 1
    sources = {s for s, t in data_pairs(graph) if t == finally_}
    assert len(sources) >= 2  # r from the try body and from before it (an exception path)


def test_graph_budgets() -> None:
    code = "x = 1\n" * 50
    small = RubyItem(code, [], "python", RubyOptions(max_graph_nodes=20)).pdg
    assert isinstance(small, Unbuilt) and "more than 20 nodes" in small.reason
    code = "x = 1\n" + "y = x\n" * 30
    edges = RubyItem(code, [], "python", RubyOptions(max_graph_edges=40)).pdg
    assert isinstance(edges, Unbuilt) and "more than 40 edges" in edges.reason


def test_no_graph_for_other_languages() -> None:
    graph = RubyItem("int main() { return 0; }", [], "c").pdg
    assert isinstance(graph, Unbuilt) and "no dependence-graph builder" in graph.reason


# --- graph edit distance ----------------------------------------------------------------------


def exact_ged(a: Graph, b: Graph) -> int:
    """Brute force over every injective partial node mapping (tiny graphs only)."""
    best = a.size + b.size
    nodes_a, nodes_b = range(len(a.labels)), list(range(len(b.labels)))
    none = [None] * len(a.labels)
    for image in itertools.product([None, *nodes_b], repeat=len(a.labels)) if a.labels else [none]:
        used = [v for v in image if v is not None]
        if len(used) != len(set(used)):
            continue
        mapping = {u: v for u, v in zip(nodes_a, image) if v is not None}
        cost = sum(a.labels[u] != b.labels[v] for u, v in mapping.items())
        cost += len(a.labels) + len(b.labels) - 2 * len(mapping)
        mapped = [(mapping.get(s), mapping.get(t), k) for s, t, k in a.edges]
        mapped_pairs = {(s, t): k for s, t, k in mapped if s is not None and t is not None}
        cost += sum(1 for s, t, k in mapped if s is None or t is None)
        target = {(s, t): k for s, t, k in b.edges}
        for pair in mapped_pairs.keys() | target.keys():
            x, y = mapped_pairs.get(pair), target.get(pair)
            cost += 0 if x == y else 1
        best = min(best, cost)
    return best


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    n = draw(st.integers(0, 4))
    labels = tuple(draw(st.lists(st.sampled_from("xy"), min_size=n, max_size=n)))
    pairs = [(s, t) for s in range(n) for t in range(n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=5)) if pairs else []
    edges = tuple(sorted((s, t, draw(st.sampled_from(["data", "ctrl"]))) for s, t in chosen))
    return Graph(labels, edges)


@settings(max_examples=60)
@given(graphs(), graphs())
def test_edit_path_cost_brackets_the_exact_distance(a: Graph, b: Graph) -> None:
    result = graph_edit_distance(a, b)
    exact = exact_ged(a, b)
    assert result.lower_bound == lower_bound(a, b)
    assert result.lower_bound <= exact <= result.distance <= a.size + b.size
    assert graph_edit_distance(a, a).distance == 0


def test_ged_hand_value() -> None:
    a = Graph(("e", "s", "s"), ((0, 1, "ctrl"), (0, 2, "ctrl"), (1, 2, "data")))
    b = Graph(("e", "s", "t"), ((0, 1, "ctrl"), (0, 2, "ctrl"), (2, 1, "data")))
    # Mapping 1 -> 2 and 2 -> 1 keeps all three edges and relabels one node: GED 1. Matching
    # by label alone (1 -> 1) would cost 3 (a relabelling and a reversed data edge); the
    # incident-edge profiles (s with an incoming data edge) find the cheap mapping.
    assert exact_ged(a, b) == 1
    assert graph_edit_distance(a, b).distance == 1


def test_ged_deadline() -> None:
    graph = Graph(("a", "b"), ((0, 1, "data"),))
    with pytest.raises(Timeout):
        graph_edit_distance(graph, graph, deadline=time.perf_counter() - 1)


def test_labels_name_the_first_call() -> None:
    graph = pdg("n = int(input())\nprint(n)\nsys.stdout.write('x')\n", "python")
    assert graph.labels[1:] == (
        "expression_statement/assignment:int",
        "expression_statement/call:print",
        "expression_statement/call:write",
    )
    java = pdg("class A { void f(int[] a) { System.out.println(a.length); } }", "java")
    assert java.labels[-1] == "expression_statement/method_invocation:println"
