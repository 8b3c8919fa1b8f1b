"""Every relative link of README.md and docs/*.md names a file of the checkout, and a link to a
heading (``page.md#anchor``) names a heading of that page, as GitHub spells anchors."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"```.*?```", re.DOTALL)


def _docs() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces made hyphens."""
    found = set()
    for line in FENCE.sub("", text).splitlines():
        if re.match(r"#{1,6} ", line):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_anchors_follow_github() -> None:
    assert anchors("## Coding agents: `crystal-lsp mcp` and `--format agent`\n") == {
        "coding-agents-crystal-lsp-mcp-and---format-agent"
    }
    assert anchors("```\n## not a heading\n```\n") == set()


def test_every_relative_link_resolves() -> None:
    broken = []
    for doc in _docs():
        for target in LINK.findall(FENCE.sub("", doc.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            dest = (doc.parent / path) if path else doc
            where = f"{doc.relative_to(REPO)}: {target}"
            if not dest.is_file():
                broken.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md":
                if anchor not in anchors(dest.read_text(encoding="utf-8")):
                    broken.append(f"{where} (no such heading)")
    assert broken == []
