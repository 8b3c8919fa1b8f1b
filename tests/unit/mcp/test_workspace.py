"""The MCP adapter's workspace: paths confined to the root, languages, snippet checks, S sets."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from scan_samples import MERGE_INTERVALS

from crystal_lsp.mcp.present import advice, duplicates
from crystal_lsp.mcp.workspace import SNIPPET_KEY, TOO_SHORT, ToolInputError, Workspace

ORIGINAL = MERGE_INTERVALS
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
    assert workspace.explicit_language("py", None, "") == "python"
    assert workspace.explicit_language(None, "a/b.java", "class A {}") == "java"
    assert workspace.explicit_language(None, None, "#!/usr/bin/env python3\nx = 1\n") == "python"
    assert workspace.explicit_language(None, None, "SELECT a FROM b") is None  # a guess
    with pytest.raises(ToolInputError, match="unknown language"):
        workspace.explicit_language("klingon", None, "")
    # a guess is one of the repository's languages, never Pygments' alone
    assert workspace.submit(workspace.guess_languages, "SELECT a FROM b").result() == ["python"]


def test_without_languages_in_the_repository_a_guess_needs_a_lexer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "repo").mkdir()
    ws = Workspace(str(tmp_path / "repo"), jobs=1)
    try:
        ws.start().result(timeout=120)
        with pytest.raises(ToolInputError, match="pass language"):
            ws.submit(ws.guess_languages, "a b c").result()
    finally:
        ws.close()


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


@pytest.mark.parametrize("max_df", [3, 50])
def test_a_checked_snippet_finds_what_a_fresh_scan_with_it_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_df: int
) -> None:
    """Differential: the snippet's copies equal those of a fresh scan of the tree with the snippet
    written as a file, also when it moves seeds across max-df (3: four copies make boilerplate)."""
    from scan_samples import ORIGINAL as SAMPLE
    from scan_samples import UNRELATED as OTHERS
    from scan_samples import module, near_copy, write_tree

    from crystal_lsp.clones.files import list_files
    from crystal_lsp.clones.scan import run_scan
    from crystal_lsp.clones.settings import ScanConfig
    from crystal_lsp.clones.store import Store

    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path / "cache"))
    files = {
        "a.py": module(SAMPLE, OTHERS[0]),
        "b.py": module(OTHERS[1], near_copy()),
        "c.py": module(near_copy(), OTHERS[2]),
        **{f"pkg/m{i}.py": f"X_{i} = {i}\n" for i in range(12)},
    }
    root = write_tree(tmp_path / "repo", files)
    (root / "pyproject.toml").write_text(f"[tool.crystal-lsp]\nmax-df = {max_df}\n")
    snippet = module(OTHERS[0].replace("parse_settings", "load_all"), near_copy())
    ws = Workspace(str(root), jobs=1)
    try:
        ws.start().result(timeout=120)
        outcome = ws.submit(ws.check, snippet, "python", None).result()
    finally:
        ws.close()
    # the other copies in the clone classes that hold the snippet (pairs join each member with
    # a class's representative, which may differ when the classes are made afresh)
    got = sorted(
        {
            (loc.path, loc.first_line, loc.last_line)
            for match in outcome.matches
            for loc in match.finding.locations
            if loc.path != SNIPPET_KEY
        }
    )
    assert {d.original.path for d in duplicates(outcome, None)} <= {p for p, _, _ in got}
    write_tree(root, {"new.py": snippet})
    config = ScanConfig(max_df=max_df)
    with Store(str(tmp_path / "fresh")) as store:
        fresh = run_scan(str(root), list_files(str(root), config), config, store=store, jobs=1)
    want = sorted(
        {
            (loc.path, loc.first_line, loc.last_line)
            for f in fresh.findings
            if any(loc.path == "new.py" for loc in f.locations)
            for loc in f.locations
            if loc.path != "new.py"
        }
    )
    assert got == want and want


def test_a_snippet_shorter_than_any_copy_is_not_sent_back_for_a_language(
    workspace: Workspace,
) -> None:
    """Three tokens can never be a copy (minTokens 50): say so, rather than asking the agent to
    call again with a language."""
    outcome = workspace.submit(workspace.check, "x = 1\n", None, None).result()
    sentence = advice([], outcome, 1, workspace.config.min_tokens)
    assert outcome.status == TOO_SHORT and outcome.tokens == 3
    assert "cannot repeat code" in sentence and "new code" in sentence
    assert "call again" not in sentence


def test_a_long_first_indexing_is_told_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = Workspace(str(tmp_path))
    try:
        for done in range(1, 201):
            ws._progress("tokenizing", done, 200)
        ws._progress("scoring (python)", 1, 1)
    finally:
        ws.close()
    notes = capsys.readouterr().err.splitlines()
    assert notes[0].startswith("crystal-lsp mcp: indexing 200 files")
    assert [n.split()[3] for n in notes[1:]] == ["50/200", "100/200", "150/200", "200/200"]
    assert ["s left)" in n for n in notes[1:]] == [True, True, True, False]


def test_a_small_indexing_is_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = Workspace(str(tmp_path))
    try:
        for done in range(1, 11):
            ws._progress("tokenizing", done, 10)
    finally:
        ws.close()
    assert capsys.readouterr().err == ""
