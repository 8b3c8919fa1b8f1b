"""Findings as the MCP tools report them: compact models, the agent's sentence and texts."""

from __future__ import annotations

from collections.abc import Sequence

from crystal_lsp.clones.findings import Finding, Location, at_level, display_path
from crystal_lsp.clones.reports.agent import agent_lines, agent_summary, what
from crystal_lsp.clones.scan import ScanResult
from crystal_lsp.clones.similarity import shared_ngrams
from crystal_lsp.mcp.models import (
    CheckResult,
    CloneClass,
    CloneMember,
    Duplicate,
    Place,
    ScanSummary,
    ScanToolResult,
)
from crystal_lsp.mcp.workspace import SNIPPET_KEY, TOO_SHORT, CheckOutcome

MAX_MEMBERS = 10
NGRAMS = 8


def place_of(loc: Location) -> Place:
    """A location as a :class:`Place`."""
    path = display_path(loc.path)  # shown to an agent: escaped, and always valid UTF-8
    return Place(path=path, start_line=loc.first_line, end_line=loc.last_line, what=what(loc))


def clone_class(finding: Finding) -> CloneClass:
    """A finding, compact: the representative first, then at most ``MAX_MEMBERS`` copies."""
    rep = finding.representative
    members = [CloneMember(place=place_of(finding.locations[rep]), similarity=None)]
    # each member once, with its pair to the representative (a member of a joined copy may
    # be paired with other members only: those are left out, and counted)
    to_rep = {p.b if p.a == rep else p.a: p for p in finding.pairs if rep in (p.a, p.b)}
    for k in [k for k in range(len(finding.locations)) if k in to_rep][: MAX_MEMBERS - 1]:
        place = place_of(finding.locations[k])
        members.append(CloneMember(place=place, similarity=to_rep[k].similarity))
    return CloneClass(
        id=finding.id,
        type=finding.type,
        language=finding.language,
        score=finding.score,
        copied_tokens=finding.copied,
        members=members,
        omitted_members=max(0, len(finding.locations) - len(members)),
    )


def duplicates(outcome: CheckOutcome, path: str | None) -> list[Duplicate]:
    """Each repository region the snippet repeats (strongest first), with the evidence."""
    out: list[tuple[float, Duplicate]] = []
    for match in outcome.matches:
        finding = match.finding
        locs = finding.locations
        for pair in finding.pairs:
            mine, other = (pair.a, pair.b) if locs[pair.a].path == SNIPPET_KEY else (pair.b, pair.a)
            if locs[mine].path != SNIPPET_KEY or locs[other].path == SNIPPET_KEY:
                continue
            snippet, original = locs[mine], locs[other]
            if path is not None and original.path == path and original.sha == snippet.sha:
                continue  # the snippet itself, already written to the file it names
            heavy = match.entry.heavy
            assert heavy is not None
            start = next(i for i, line in enumerate(heavy.lines) if line >= snippet.first_line - 1)
            end = max(i for i, line in enumerate(heavy.lines) if line <= snippet.last_line - 1) + 1
            theirs = outcome.texts.get(
                f"{original.path}:{original.first_line}-{original.last_line}", []
            )
            dup = Duplicate(
                original=place_of(original),
                snippet_start_line=snippet.first_line,
                snippet_end_line=snippet.last_line,
                similarity=pair.similarity,
                crystalbleu=pair.crystalbleu,
                type=finding.type,
                copied_tokens=pair.copied,
                shared_ngrams=shared_ngrams(
                    list(heavy.texts[start:end]), theirs, outcome.ignore, limit=NGRAMS
                ),
                other_copies=len(locs) - 2,
            )
            out.append((pair.copied * pair.similarity, dup))
    out.sort(key=lambda x: (-x[0], x[1].original.path, x[1].original.start_line))
    return [d for _, d in out]


def advice(
    found: Sequence[Duplicate], outcome: CheckOutcome, files: int, min_tokens: int = 0
) -> str:
    """One sentence telling the agent what to reuse (or that the code is new)."""
    if outcome.status == TOO_SHORT:
        return (
            f"The code has {outcome.tokens} tokens, fewer than the smallest copy ({min_tokens} "
            "tokens, setting minTokens): it cannot repeat code, so it is new code."
        )
    if outcome.status != "ok":
        return (
            f"Nothing to compare: the code is {outcome.status.replace('_', ' ')} "
            f"({outcome.tokens} tokens); no duplicate check was made."
        )
    indexed = f"{files} file{'' if files == 1 else 's'} indexed"
    if not found and outcome.guessed:
        # a guessed language may be the wrong one: never call the code new on a guess
        return (
            f"No copy found when checked as {' and as '.join(outcome.guessed)} ({indexed}); "
            "the language was not given, so it is not known to be new code: call again with "
            "language (or path) to be sure."
        )
    if not found:
        return f"No copy of this code in the repository ({indexed}): it is new code."
    best = found[0]
    orig = best.original
    what = "the whole file" if orig.what == "file" else orig.what
    more = f" ({len(found) - 1} more below)" if len(found) > 1 else ""
    guess = f" (language guessed: {outcome.language})" if outcome.guessed else ""
    return (
        f"This repeats {what} at {orig.path}:{orig.start_line}-{orig.end_line} "
        f"(similarity {best.similarity:.2f}): reuse or extend it instead of adding a copy"
        f"{more}{guess}."
    )


def check_text(result: CheckResult) -> str:
    """The short text of a ``check_duplication`` result."""
    lines = [result.advice]
    for dup in result.duplicates:
        orig = dup.original
        lines.append(
            f"{orig.path}:{orig.start_line}-{orig.end_line} ~ "
            f"<snippet>:{dup.snippet_start_line}-{dup.snippet_end_line} "
            f"similarity {dup.similarity:.2f} ({orig.what})"
        )
    if result.omitted:
        lines.append(f"... and {result.omitted} more (max_results)")
    return "\n".join(lines)


def scan_result(result: ScanResult, top: int, new_since: str | None) -> ScanToolResult:
    """A scan's summary and its ``top`` findings."""
    summary = ScanSummary(
        files=result.files,
        snippets=result.snippets,
        findings=len(result.findings),
        skipped_files=len(result.skipped),
        filtered=dict(sorted(result.filtered.items())),
        cached=result.cached,
        signature=result.config.signature(),
    )
    listed = at_level(result.findings, result.config.show_similar)
    shown = listed[:top]
    return ScanToolResult(
        summary=summary,
        top=[clone_class(f) for f in shown],
        omitted=len(listed) - len(shown),
        new_since=new_since,
    )


def findings_text(
    findings: Sequence[Finding],
    shown: int,
    files: int,
    threshold: float,
    summary: str = "",
    show_all: bool = False,
) -> str:
    """The agent report (``--format agent``) of the first ``shown`` findings, then one summary.

    ``findings``: every finding; those of :func:`at_level` are listed.
    """
    listed = at_level(list(findings), show_all)
    lines = agent_lines(listed[:shown])
    if len(listed) > shown:
        lines.append(f"... and {len(listed) - shown} more findings")
    lines.append(summary or agent_summary(findings, files, threshold, show_all=show_all))
    return "\n".join(lines)
