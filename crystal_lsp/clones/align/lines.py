"""What snapping reads of a file, computed once per file instead of once per candidate.

Snapping a candidate (:mod:`crystal_lsp.clones.align.regions`) reads lines -- where each starts
and ends, its *shape* -- and the file's units and noise ranges, many times per candidate and for
thousands of candidates per file. A :class:`LineTable` holds a file's lines (each line's shape
computed on first use, then kept) and :class:`EntryFacts` the units and ranges of an index entry;
both are kept per object for as long as it lives (:func:`line_table`, :func:`entry_facts`).

A line's shape is its tokens with names (member names and builtins too) as ``ID`` and literals as
``LIT``: what stays when code is renamed. A line holding nothing but a string (a docstring, a
comment-like literal) keeps its text: two docstrings correspond only when they say the same.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from crystal_lsp.text.entries import Entry, Heavy, SnippetMeta
from crystal_lsp.text.noise import DECORATOR, EXPORT, IMPORT, SIGNATURE
from crystal_lsp.text.snippets import CONTAINERS

HEADER_KINDS = (SIGNATURE, DECORATOR)
EDGE_KINDS = (IMPORT, EXPORT)
TRIVIAL = "trivial"
"""The noise kind of tokens no noise range covers."""

# a token category's word in a line shape (names and literals); other tokens are their text
_SHAPE_WORDS = {"N": "ID", "A": "ID", "B": "ID", "S": "LIT", "M": "LIT"}
T = TypeVar("T")


def shape_of(heavy: Heavy, start: int, end: int) -> str:
    """The shape of tokens ``[start, end)`` of one line (module docstring)."""
    cats, texts = heavy.cats, heavy.texts
    shape = _SHAPE_WORDS.get
    if end - start == 1 and cats[start] == "S":
        return texts[start]
    return " ".join([shape(cats[i]) or texts[i] for i in range(start, end)])


class LineTable:
    """The lines of a file's tokens: their token spans, and their shapes once asked for."""

    def __init__(self, heavy: Heavy) -> None:
        self.heavy = heavy
        lines = heavy.lines
        n = len(lines)
        firsts = [0] if n else []
        firsts += [i for i in range(1, n) if lines[i] != lines[i - 1]]
        self.firsts: list[int] = firsts
        self.ends: list[int] = [*firsts[1:], n] if n else []
        self._shapes: list[str | None] = [None] * len(firsts)

    @functools.cached_property
    def semicolons(self) -> bool:
        """Whether the file ends its statements with ``;`` (else at line ends: Go, Kotlin, ...)."""
        count = sum(1 for text in self.heavy.texts if text == ";")
        return count >= 0.05 * len(self.firsts)

    def index(self, token: int) -> int:
        """The line (position in :attr:`firsts`) holding a token."""
        return bisect.bisect_right(self.firsts, token) - 1

    def shape(self, k: int) -> str:
        """The shape of whole line ``k``."""
        found = self._shapes[k]
        if found is None:
            found = self._shapes[k] = shape_of(self.heavy, self.firsts[k], self.ends[k])
        return found

    def line(self, token: int) -> tuple[int, int, str]:
        """The token span of the line holding ``token``, and its shape."""
        k = self.index(token)
        return self.firsts[k], self.ends[k], self.shape(k)

    def spans(self, start: int, end: int) -> list[tuple[int, int]]:
        """``(first token, end)`` of each line of tokens ``[start, end)`` (edges cut to it)."""
        if start >= end:
            return []
        k0, k1 = self.index(start), self.index(end - 1)
        if k0 == k1:
            return [(start, end)]
        firsts, ends = self.firsts, self.ends
        out = [(start, ends[k0])]
        out += [(firsts[k], ends[k]) for k in range(k0 + 1, k1)]
        out.append((firsts[k1], end))
        return out

    def shapes(self, start: int, end: int) -> list[tuple[int, str]]:
        """``(first token, shape)`` of each line of tokens ``[start, end)``.

        A line the span holds only part of (at either edge) has the shape of that part.
        """
        if start >= end:
            return [(start, "")]
        k0, k1 = self.index(start), self.index(end - 1)
        firsts, ends = self.firsts, self.ends
        if k0 == k1:
            whole = firsts[k0] == start and ends[k0] == end
            return [(start, self.shape(k0) if whole else shape_of(self.heavy, start, end))]
        head = self.shape(k0) if firsts[k0] == start else shape_of(self.heavy, start, ends[k0])
        out = [(start, head)]
        out += [(firsts[k], self.shape(k)) for k in range(k0 + 1, k1)]
        tail = self.shape(k1) if ends[k1] == end else shape_of(self.heavy, firsts[k1], end)
        out.append((firsts[k1], tail))
        return out


class EntryFacts:
    """The units and noise ranges of an index entry that snapping reads."""

    def __init__(self, entry: Entry) -> None:
        self.units: list[SnippetMeta] = [m for m in entry.snippets if m.kind in CONTAINERS]
        """Functions and classes, in the entry's order."""
        self.headers = [(a, b) for a, b, kind in entry.noise if kind in HEADER_KINDS]
        """Token ranges of signatures and decorators."""
        self.edges = [(a, b) for a, b, kind in entry.noise if kind in EDGE_KINDS]
        """Token ranges of imports and exports."""
        self.snippets = entry.snippets
        self._starts = np.array([m.start for m in entry.snippets], dtype=np.int64)
        self._ends = np.array([m.end for m in entry.snippets], dtype=np.int64)
        self._unit = [m.kind in CONTAINERS for m in entry.snippets]
        self._near: dict[tuple[int, int], list[int]] = {}
        kinds = list(dict.fromkeys(kind for _, _, kind in entry.noise))
        at = {kind: k for k, kind in enumerate(kinds)}
        self._kinds = kinds
        self._noise = np.array(
            [(a, b, at[kind]) for a, b, kind in entry.noise], dtype=np.int64
        ).reshape(-1, 3)

    def near(self, start: int, end: int) -> list[int]:
        """The snippets (indices, in the entry's order) that overlap or touch ``[start, end]``.

        Every snippet that holds, enters, leaves or lies in the span is among them: what
        snapping looks for around a span, without reading every snippet of a large file.
        """
        if len(self.snippets) <= _FEW:
            return list(range(len(self.snippets)))
        found = self._near.get((start, end))
        if found is None:
            if len(self._near) >= _NEAR_KEPT:
                self._near.clear()
            near = (self._starts <= end) & (self._ends >= start)
            found = self._near[(start, end)] = np.flatnonzero(near).tolist()
        return found

    def units_near(self, start: int, end: int) -> list[SnippetMeta]:
        """The functions and classes among :meth:`near` (in the entry's order)."""
        return [self.snippets[k] for k in self.near(start, end) if self._unit[k]]

    def enclosing(self, start: int, end: int) -> int:
        """The smallest snippet holding tokens ``[start, end)``, or -1 (the first of equals)."""
        best, size = -1, 0
        for k in self.near(start, end):
            m = self.snippets[k]
            if m.start <= start and end <= m.end and (best < 0 or m.tokens < size):
                best, size = k, m.tokens
        return best

    def main_noise_kind(self, spans: Sequence[tuple[int, int]]) -> str:
        """The noise kind covering most raw tokens of the spans (``trivial`` if none does).

        A token in two ranges of a kind counts twice; of kinds covering as many tokens, the
        one whose first range comes first in the entry wins.
        """
        if not spans or not self._kinds:
            return TRIVIAL
        lo = np.fromiter((s for s, _ in spans), np.int64, len(spans))
        hi = np.fromiter((e for _, e in spans), np.int64, len(spans))
        noise = self._noise
        near = noise[(noise[:, 1] > lo.min()) & (noise[:, 0] < hi.max())]
        totals = np.zeros(len(self._kinds), dtype=np.int64)
        for k in range(0, len(lo), _CHUNK):
            a, b = lo[k : k + _CHUNK, None], hi[k : k + _CHUNK, None]
            inside = np.minimum(near[:, 1], b) - np.maximum(near[:, 0], a)
            per_range = np.maximum(inside, 0).sum(axis=0)
            totals += np.bincount(near[:, 2], weights=per_range, minlength=len(totals)).astype(
                np.int64
            )
        best = int(np.argmax(totals))
        return self._kinds[best] if totals[best] > 0 else TRIVIAL


_FEW = 16
"""Files with at most this many snippets are searched snippet by snippet."""
_NEAR_KEPT = 4096
"""Spans whose :meth:`EntryFacts.near` snippets a file keeps (asked again and again)."""
_CHUNK = 256
"""Spans compared with the noise ranges at once (bounds the size of one comparison)."""


def _kept(make: Callable[[Any], T]) -> Callable[[Any], T]:
    """``make(obj)`` computed once per live object (forgotten when the object is).

    The value is kept on the object itself: a value may refer to its object (a
    :class:`LineTable` holds its tokens), so a table beside the objects, keyed by ``id`` and
    emptied by a finalizer, would keep every object alive -- the language server kept every
    version of an edited buffer's tokens that way, about 1 MB a keystroke.
    """
    attribute = f"_kept_{make.__name__}"

    def get(obj: Any) -> T:
        found: T | None = obj.__dict__.get(attribute)
        if found is None:
            found = obj.__dict__[attribute] = make(obj)
        return found

    return get


line_table: Callable[[Heavy], LineTable] = _kept(LineTable)
"""The :class:`LineTable` of a file's tokens."""
entry_facts: Callable[[Entry], EntryFacts] = _kept(EntryFacts)
"""The :class:`EntryFacts` of an index entry."""
