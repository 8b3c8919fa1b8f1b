"""Code actions on a flagged snippet: compare with or go to the other copy, suppress it."""

from __future__ import annotations

from lsprotocol import types

from crystal_lsp.server.compare import COMPARE, compare_spec
from crystal_lsp.server.diagnostics import CODE, SOURCE, Flag, LocationRanges
from crystal_lsp.server.positions import TextIndex
from crystal_lsp.text.comments import comment_for

SHOW_DOCUMENT = "crystal.showDocument"
MAX_TARGETS = 5
SUPPRESSION = "crystal: ignore"


def suppress_edit(uri: str, index: TextIndex, flag: Flag, language: str) -> types.WorkspaceEdit:
    """Insert ``<comment> crystal: ignore`` on a line of its own above the snippet."""
    line = flag.range.start.line
    text = index.line_text(line)
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    newline = "\r\n" if "\r\n" in index.text else "\n"
    prefix, suffix = comment_for(language)
    insert = f"{indent}{prefix} {SUPPRESSION}{suffix}{newline}"
    position = types.Position(line=line, character=0)
    return types.WorkspaceEdit(
        changes={
            uri: [types.TextEdit(range=types.Range(start=position, end=position), new_text=insert)]
        }
    )


def code_actions(
    ranges: LocationRanges,
    uri: str,
    index: TextIndex,
    flags: list[Flag],
    wanted: types.Range,
    diagnostics: list[types.Diagnostic],
    language: str,
) -> list[types.CodeAction]:
    """Actions for the flagged snippets overlapping ``wanted``."""
    out: list[types.CodeAction] = []
    for flag in flags:
        if not _overlaps(flag.range, wanted):
            continue
        matching = [
            d
            for d in diagnostics
            if d.code == CODE and d.source == SOURCE and d.range == flag.underline
        ]
        best = flag.other(flag.best_pair())
        others = [best] + [
            j for j in range(len(flag.finding.locations)) if j not in (best, flag.location)
        ]
        for j in others[:MAX_TARGETS]:
            location = flag.finding.locations[j]
            target = ranges.resolve(location)
            if target is None:
                continue
            start = target.range.start
            title = f"Go to the other copy ({location.label()})"  # label(): escaped
            out.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=matching or None,
                    command=types.Command(
                        title=title,
                        command=SHOW_DOCUMENT,
                        arguments=[
                            target.uri,
                            {
                                "start": {"line": start.line, "character": start.character},
                                "end": {"line": start.line, "character": start.character},
                            },
                        ],
                    ),
                )
            )
        out += _compare(ranges, uri, flag, best, matching)
        out.append(
            types.CodeAction(
                title=f"Suppress this duplicate ({SUPPRESSION})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=matching or None,
                edit=suppress_edit(uri, index, flag, language),
                is_preferred=False,
                data={"snippet": flag.here.describe()},
            )
        )
    return out


def _compare(
    ranges: LocationRanges,
    uri: str,
    flag: Flag,
    other: int,
    matching: list[types.Diagnostic],
) -> list[types.CodeAction]:
    """*Compare with the other copy*: the two copies in the editor's diff view."""
    location = flag.finding.locations[other]
    target = ranges.resolve(location)
    if target is None:
        return []
    title = f"Compare with the other copy ({location.label()})"
    here = types.Location(uri=uri, range=flag.range)
    spec = compare_spec(target, location.label(), here, flag.here.label())
    action = types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=matching or None,
        command=types.Command(title=title, command=COMPARE, arguments=[spec]),
    )
    return [action]


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)
