"""The MCP adapter's workspace: paths confined to the root, languages, snippet checks, S sets."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from crystal_lsp.mcp.present import advice, duplicates
from crystal_lsp.mcp.workspace import SNIPPET_KEY, ToolInputError, Workspace

ORIGINAL = '''\
def merge_intervals(intervals):
    """Merge overlapping intervals."""
    ordered = sorted(intervals, key=lambda pair: pair[0])
    merged = []
    for start, end in ordered:
        if merged and start <= merged[-1][1]:
            last_start, last_end = merged[-1]
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    total = 0
    for start, end in merged:
        total += end - start
    return merged, total
'''
NAMES = {"merge_intervals": "combine", "merged": "out", "start": "lo", "end": "hi"}
RENAMED = re.sub(r"\b(\w+)\b", lambda m: NAMES.get(m.group(1), m.group(1)), ORIGINAL)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "intervals.py").write_text(ORIGINAL)
    ws = Workspace(str(root), jobs=1)
    ws.start().result(timeout=120)
    yield ws
    ws.close()


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/intervals.py", "src/intervals.py"),
        ("./src/../src/x.py", "src/x.py"),
        ("new.py", "new.py"),
    ],
)
def test_paths_inside_the_root_are_made_relative(
    workspace: Workspace, path: str, expected: str
) -> None:
    assert workspace.confine(path) == expected


@pytest.mark.parametrize("path", ["../x.py", "/etc/passwd", "src/../../x.py", ".", "", "a\0b"])
def test_paths_outside_the_root_are_refused(workspace: Workspace, path: str) -> None:
    with pytest.raises(ToolInputError):
        workspace.confine(path)


def test_a_symlink_out_of_the_root_is_refused(workspace: Workspace, tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text("x = 1\n")
    os.symlink(tmp_path / "outside.py", os.path.join(workspace.root, "link.py"))
    with pytest.raises(ToolInputError, match="outside"):
        workspace.confine("link.py")


def test_languages(workspace: Workspace) -> None:
    assert workspace.language_of("py", None, "") == "python"
    assert workspace.language_of(None, "a/b.java", "class A {}") == "java"
    with pytest.raises(ToolInputError, match="unknown language"):
        workspace.language_of("klingon", None, "")
    with pytest.raises(ToolInputError, match="pass language"):
        workspace.language_of(None, None, "a b c")


def test_a_renamed_copy_is_found_and_the_snippet_leaves_the_index(workspace: Workspace) -> None:
    before = dict(workspace.index.files)
    outcome = workspace.submit(workspace.check, RENAMED, "python", None).result()
    assert workspace.index.files == before and SNIPPET_KEY not in workspace.index.files
    found = duplicates(outcome, None)
    assert len(found) == 1
    assert found[0].original.path == "src/intervals.py"
    assert found[0].original.what == "function merge_intervals"
    assert found[0].type == "renamed"
    assert found[0].similarity == pytest.approx(1.0)
    assert found[0].shared_ngrams
    sentence = advice(found, outcome, 1)
    assert sentence.startswith("This repeats function merge_intervals at src/intervals.py:1-14")


def test_the_snippet_already_in_the_file_it_names_is_not_its_own_copy(
    workspace: Workspace,
) -> None:
    outcome = workspace.submit(workspace.check, ORIGINAL, "python", "src/intervals.py").result()
    assert duplicates(outcome, "src/intervals.py") == []
    assert duplicates(outcome, None)  # named elsewhere, it is a copy


def test_code_too_small_to_compare_says_so(workspace: Workspace) -> None:
    outcome = workspace.submit(workspace.check, "   \n", "python", None).result()
    assert outcome.matches == []
    assert "no duplicate check" in advice([], outcome, 1)


def test_s_sets_come_from_the_index_or_the_bundled_sets(workspace: Workspace) -> None:
    sset, source = workspace.submit(workspace.sset, "python").result()
    assert source == "index" and len(sset) > 0
    _, source = workspace.submit(workspace.sset, "java").result()
    assert source == "built-in"
    empty, source = workspace.submit(workspace.sset, "fortran").result()
    assert source == "none" and len(empty) == 0
