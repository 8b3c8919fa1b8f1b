"""What a piece of code repeats: the best-matching indexed code, whatever the file names."""

from __future__ import annotations

import pathlib

import pytest
from scan_samples import ORIGINAL, UNRELATED, module, renamed, write_tree

from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.matches import find_matches
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.text.lexers import lexer_by_language
from crystal_lsp.text.tokens import lex
from crystal_lsp.text.views import categories


def _finder(root: pathlib.Path, files: dict[str, str], tmp: pathlib.Path) -> CloneFinder:
    write_tree(root, files)
    index = RepoIndex(str(root), ScanConfig(), Store(str(tmp / "cache")), jobs=1)
    index.refresh(sorted(files))
    return CloneFinder(index)


def _query(source: str) -> tuple[list[str], str]:
    tokens = lex(source, lexer_by_language("python"))
    return list(tokens.texts), categories(tokens.texts, tokens.types)


def _filler(count: int) -> dict[str, str]:
    """Many modules of unrelated functions (each unrelated sample renamed per module)."""
    out = {}
    for i in range(count):
        parts = [u.replace("def ", f"def m{i}_", 1) for u in UNRELATED]
        out[f"pkg/filler_{i:03d}.py"] = module(*parts)
    return out


@pytest.mark.parametrize("name", ["aaa/first.py", "zzz/last.py", "pkg/filler_050.py"])
def test_a_renamed_copy_is_the_best_match_whatever_the_file_names(
    tmp_path: pathlib.Path, name: str
) -> None:
    files = _filler(120)
    files[name] = module(ORIGINAL)
    finder = _finder(tmp_path / "repo", files, tmp_path)
    texts, cats = _query(renamed())
    found = find_matches(finder, "python", texts, cats, limit=3)
    assert found and found[0].path == name
    assert found[0].similarity == 1.0
    assert found[0].name == "summarize_orders"
    assert all(m.similarity > 0 or m.crystalbleu > 0 for m in found)
    assert [m.similarity for m in found] == sorted((m.similarity for m in found), reverse=True)


def test_exclude_leaves_code_out_and_nothing_matches_unknown_languages(
    tmp_path: pathlib.Path,
) -> None:
    finder = _finder(tmp_path / "repo", {"a.py": module(ORIGINAL)}, tmp_path)
    texts, cats = _query(renamed())
    assert find_matches(finder, "python", texts, cats, exclude=lambda p, a, b: p == "a.py") == []
    assert find_matches(finder, "java", texts, cats) == []
    assert find_matches(finder, "python", [], "") == []
