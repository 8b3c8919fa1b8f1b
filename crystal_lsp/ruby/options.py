"""Budgets that keep every RUBY level bounded in time, and the version strings of its parsers.

A representation that exceeds its budget "cannot be built", exactly like one that does not parse,
and RUBY falls back to the next level. Node budgets are deterministic (they are part of the
signatures); the optional wall-clock ``timeout`` is not, so it is only recorded in signatures when
set.
"""

from __future__ import annotations

from dataclasses import dataclass


class Timeout(Exception):
    """A comparison ran past its deadline."""


@dataclass(frozen=True)
class RubyOptions:
    """Per-level budgets.

    ``max_tree_nodes`` bounds TRS: a syntax tree with more named nodes cannot be built for tree
    edit distance (Zhang–Shasha is quadratic or worse in the tree size). ``max_graph_nodes`` and
    ``max_graph_edges`` bound GRS the same way for dependence graphs. ``max_source_chars``: larger
    sources are not parsed at all. ``timeout`` (seconds, per pair and level, ``None`` for none)
    abandons a tree or graph comparison that runs longer, and the pair falls back a level.
    """

    max_tree_nodes: int = 2000
    max_graph_nodes: int = 4000
    max_graph_edges: int = 40000
    max_source_chars: int = 1_000_000
    timeout: float | None = None

    def __post_init__(self) -> None:
        from crystal_lsp.errors import CrystalError

        for name in ("max_tree_nodes", "max_graph_nodes", "max_graph_edges", "max_source_chars"):
            if getattr(self, name) < 1:
                raise CrystalError(f"{name} must be positive")
        if self.timeout is not None and self.timeout <= 0:
            raise CrystalError("timeout must be positive (or None)")

    def tree_label(self) -> str:
        """The TRS budget as a signature field."""
        return f"nodes:{self.max_tree_nodes}" + self._timeout_label()

    def graph_label(self) -> str:
        """The GRS budget as a signature field."""
        return f"pdg:{self.max_graph_nodes}/{self.max_graph_edges}" + self._timeout_label()

    def _timeout_label(self) -> str:
        return "" if self.timeout is None else f"|timeout:{self.timeout:g}s"
