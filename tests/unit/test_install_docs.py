"""The install commands the docs give run from a checkout: crystal-lsp is not on a package index.

Every ``pip install`` in the README and docs/ installs this checkout (``.``, ``-e .``, with
extras that pyproject.toml defines) or names where it comes from (``crystal-lsp @ URL``), never
``crystal-lsp`` by name from an index.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
PIP = re.compile(r"pip install\b([^`\n#]*)")


def _docs() -> list[Path]:
    extension = REPO / "vscode-extension" / "README.md"
    return [REPO / "README.md", extension, *sorted((REPO / "docs").rglob("*.md"))]


def _extras() -> set[str]:
    with open(REPO / "pyproject.toml", "rb") as fh:
        return set(tomllib.load(fh)["project"]["optional-dependencies"])


def test_every_pip_install_of_crystal_lsp_installs_the_checkout() -> None:
    extras = _extras()
    wrong = []
    for doc in _docs():
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for match in PIP.finditer(line):
                # a direct reference (``crystal-lsp @ git+https://...``) names its source
                args = re.sub(r"crystal[-_]lsp(\[[\w,-]+\])?\s*@\s*\S+", "", match.group(1))
                where = f"{doc.relative_to(REPO)}:{number}: {line.strip()}"
                if re.search(r"(?<![\w/.-])crystal[-_]lsp(?![\w/.-])|crystal-lsp\[", args):
                    wrong.append(f"{where} (not on a package index)")
                for named in re.findall(r"\.\[([\w,-]+)\]", args):
                    unknown = set(named.split(",")) - extras
                    if unknown:
                        wrong.append(f"{where} (no extra {sorted(unknown)})")
    assert wrong == []


def test_every_pinned_revision_is_the_same_commit_of_this_repository() -> None:
    """The pre-commit ``rev`` and the CI recipes' ``@rev`` name one full commit id (no tag that
    the repository does not have), the same in every document."""
    pinned = set()
    for doc in _docs():
        text = doc.read_text(encoding="utf-8")
        pinned.update(re.findall(r"^\s*rev:\s*(\S+)", text, re.MULTILINE))
        pinned.update(re.findall(r"crystal-lsp@([^\s\"'`]+)", text))
    assert len(pinned) == 1, pinned
    [rev] = pinned
    assert re.fullmatch(r"[0-9a-f]{40}", rev), rev
