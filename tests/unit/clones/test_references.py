"""References for a hypothesis: the best-aligned regions of a repository, ranked, order-free."""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Sequence

import pytest
from scan_samples import GETTERS_A, ORIGINAL, UNRELATED, module, renamed, write_tree

from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.references import HYPOTHESIS_KEY, BestRegions, best_regions
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.text.lexers import lexer_by_language
from crystal_lsp.text.tokens import lex

REPO = pathlib.Path(__file__).resolve().parents[3]
HYPOTHESIS = renamed(ORIGINAL)


def _corpus() -> dict[str, str]:
    """The package's and the tests' modules (thousands of snippets), the original planted once."""
    files = {
        str(p.relative_to(REPO)): p.read_text(encoding="utf-8")
        for top in ("crystal_lsp", "tests")
        for p in sorted((REPO / top).rglob("*.py"))
        if "test_references" not in p.name
    }
    files["orders/report.py"] = module(*UNRELATED, ORIGINAL)
    return files


def _search(
    root: pathlib.Path,
    files: dict[str, str],
    *,
    limit: int = 5,
    skip: tuple[str, int, int] | None = None,
    paths: Callable[[str], bool] | None = None,
) -> tuple[BestRegions, int]:
    write_tree(root, files)
    with Store(str(root / ".cache")) as store:
        index = RepoIndex(str(root), ScanConfig(), store, jobs=1)
        index.refresh(sorted(files))
        snippets = sum(len(s.entry.snippets) for s in index.files.values())
        crystal = CrystalBLEU(index.sets("python").raw, language="python")
        hyp = list(lex(HYPOTHESIS, lexer_by_language("python")).texts)

        def score(tokens: Sequence[str]) -> float:
            return crystal.sentence_score(hyp, [list(tokens)])

        found = best_regions(
            CloneFinder(index), "python", HYPOTHESIS, score, limit=limit, skip=skip, paths=paths
        )
        assert HYPOTHESIS_KEY not in index.files  # the temporary override is gone
        return found, snippets


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    return _corpus()


def test_renamed_copy_is_the_best_reference_among_thousands(
    tmp_path: pathlib.Path, corpus: dict[str, str]
) -> None:
    found, snippets = _search(tmp_path, corpus)
    assert snippets > 1500
    best = found.regions[0]
    assert best.region.path == "orders/report.py"
    assert best.score > 0.3
    scores = [r.score for r in found.regions]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)
    regions = [r.region for r in found.regions]
    assert not any(a.overlap(b) for i, a in enumerate(regions) for b in regions[i + 1 :])
    # everything aligned is either kept or counted under a reason
    assert len(found.regions) + sum(found.left_out.values()) >= found.aligned


def test_ranking_does_not_depend_on_file_names(
    tmp_path: pathlib.Path, corpus: dict[str, str]
) -> None:
    names = sorted(corpus)
    # the same files under names sorting in the opposite order
    renaming = {
        old: f"f{len(names) - k:04d}_{old.replace('/', '_')}" for k, old in enumerate(names)
    }
    first, _ = _search(tmp_path / "a", corpus, limit=10_000)
    second, _ = _search(tmp_path / "b", {renaming[k]: v for k, v in corpus.items()}, limit=10_000)
    assert renaming[first.regions[0].region.path] == second.regions[0].region.path
    key = {(renaming[r.region.path], r.region.first_line, r.score) for r in first.regions}
    assert key == {(r.region.path, r.region.first_line, r.score) for r in second.regions}
    assert [r.score for r in first.regions] == [r.score for r in second.regions]


def test_own_lines_and_paths_are_left_out(tmp_path: pathlib.Path, corpus: dict[str, str]) -> None:
    found, _ = _search(tmp_path / "all", corpus)
    best = found.regions[0].region
    skip = (best.path, best.first_line, best.last_line)
    without, _ = _search(tmp_path / "skip", corpus, skip=skip)
    assert all(not r.region.overlap(best) for r in without.regions)
    assert without.left_out.get("the hypothesis itself", 0) >= 1
    only, _ = _search(tmp_path / "within", corpus, paths=lambda p: p.startswith("crystal_lsp/"))
    assert only.regions and all(r.region.path.startswith("crystal_lsp/") for r in only.regions)
    assert only.left_out["outside the reference path"] >= 1


def test_unrelated_code_gives_no_reference(tmp_path: pathlib.Path) -> None:
    found, _ = _search(tmp_path, {"a.py": GETTERS_A})
    assert found.regions == []
