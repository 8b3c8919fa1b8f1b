"""Findings as annotations of a pull request: which copy to point at, and GitLab's report.

A review tool shows an annotation only on the lines a change touches. With ``--new-since`` a
finding is reported because one of its copies lies in changed code, so that copy is the one to
point at (:func:`annotated`): SARIF takes it as the result's location (GitHub code scanning),
and GitLab's Code Quality report (``--format gitlab``, the JSON its merge-request widget and diff
read) gets one issue per changed copy, told in the reports' sentence
(:mod:`crystal_lsp.clones.reports.sentences`), and so does ``--format github`` (GitHub Actions' workflow
commands, which the pull request shows as annotations without code scanning). Without a focus
every copy but the representative is annotated: they are the copies of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from crystal_lsp.clones.findings import Finding, LineFocus, display_path
from crystal_lsp.clones.reports.sentences import sentence

Focus = LineFocus
"""Changed lines: paths, each with 1-based inclusive line ranges (``None``: the whole file)."""
CHECK_NAME = "crystal/near-duplicate"


def annotated(finding: Finding, focus: Focus | None) -> list[int]:
    """The copies to annotate, by index: the changed ones.

    All but the representative when there is no focus, or when none is changed.
    """
    if focus is not None:
        changed = [k for k, loc in enumerate(finding.locations) if loc.touches(focus)]
        if changed:
            return changed
    rest = [k for k in range(len(finding.locations)) if k != finding.representative]
    return rest or [finding.representative]


def to_code_quality(findings: Sequence[Finding], focus: Focus | None) -> list[dict[str, Any]]:
    """GitLab Code Quality issues: one per annotated copy, naming the other copies."""
    issues = []
    for finding in findings:
        for k in annotated(finding, focus):
            loc = finding.locations[k]
            issues.append(
                {
                    "description": sentence(finding, k),
                    "check_name": CHECK_NAME,
                    "fingerprint": hashlib.sha256(
                        f"{finding.id}\0{loc.fingerprint}".encode()
                    ).hexdigest()[:32],
                    "severity": "minor",
                    "location": {
                        "path": loc.path,
                        "lines": {"begin": loc.first_line, "end": loc.last_line},
                    },
                }
            )
    return issues


def _escape(text: str, prop: bool = False) -> str:
    """Workflow-command escaping (properties also escape ``:`` and ``,``)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def to_github(findings: Sequence[Finding], focus: Focus | None) -> list[str]:
    """``::warning`` workflow commands: one per annotated copy."""
    lines = []
    for finding in findings:
        for k in annotated(finding, focus):
            loc = finding.locations[k]
            where = (
                f"file={_escape(display_path(loc.path), True)},line={loc.first_line},"
                f"endLine={loc.last_line},title={_escape(f'crystal: {finding.type} copy', True)}"
            )
            lines.append(f"::warning {where}::{_escape(sentence(finding, k))}")
    return lines
