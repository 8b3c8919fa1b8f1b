"""Copies found by digest: identical files, and whole units with the same (normalized) tokens.

Alignment pairs the occurrences of a seed only while it is rare enough to tell a copy
(:mod:`crystal_lsp.clones.align.seeds`); code copied into dozens of files would be lost with that cut.
Whole copies need no seeds: files with the same content, and units (functions, classes, blocks)
with the same normalized tokens -- exact and consistently renamed copies -- are grouped by digest,
however many there are. Identical files make one finding each, whatever they hold.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from crystal_lsp.clones.align.regions import Region
from crystal_lsp.text.entries import Heavy, SnippetMeta, span_position
from crystal_lsp.text.snippets import DATA

FILE = "file"


@dataclass(frozen=True)
class Unit:
    """A snippet of an indexed file, as a candidate for digest grouping."""

    path: str
    index: int
    meta: SnippetMeta

    def region(self) -> Region:
        """The unit as a (whole) region."""
        m = self.meta
        return Region(
            self.path, m.start, m.end, m.first_line, m.first_col, m.last_line, m.last_col,
            self.index, True,
        )  # fmt: skip


def file_region(path: str, heavy: Heavy) -> Region:
    """A whole file as a region."""
    first, first_col, last, last_col = span_position(0, len(heavy.texts), heavy)
    return Region(path, 0, len(heavy.texts), first, first_col, last, last_col, -1, True)


def identical_files(files: Iterable[tuple[str, str, int]], min_tokens: int) -> list[list[str]]:
    """Groups of at least two paths with the same content ``(path, content digest, tokens)``."""
    groups: dict[str, list[str]] = defaultdict(list)
    for path, sha, tokens in files:
        if tokens >= min_tokens:
            groups[sha].append(path)
    return [sorted(paths) for paths in groups.values() if len(paths) > 1]


def unit_groups(units: Iterable[Unit], report_data: bool) -> list[list[Unit]]:
    """Units sharing normalized tokens, each group in (path, start) order, overlaps left out.

    Of a unit and a unit nested in it with the same tokens (a class around one method) only the
    outer one takes part: the inner one is its own copy, not another.
    """
    groups: dict[str, list[Unit]] = defaultdict(list)
    for unit in units:
        if unit.meta.suppressed or (unit.meta.kind == DATA and not report_data):
            continue
        groups[unit.meta.norm_sha].append(unit)
    out: list[list[Unit]] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        # an unsaved buffer ("\0" + path, see the language server) sorts where its file does
        members.sort(key=lambda u: (u.path.lstrip("\0"), u.meta.start, -u.meta.end))
        kept: list[Unit] = []
        for unit in members:
            if kept and kept[-1].path == unit.path and unit.meta.start < kept[-1].meta.end:
                continue
            kept.append(unit)
        if len(kept) > 1:
            out.append(kept)
    return out


def representative_pairs(groups: Sequence[list[Unit]]) -> list[tuple[Unit, Unit]]:
    """Each group's first unit paired with every other one."""
    return [(group[0], other) for group in groups for other in group[1:]]
