"""The docs' figures agree with the benchmark results they come from (bench/doc_figures.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType

from bench_scripts import load

REPO = Path(__file__).resolve().parents[2]


def _figures() -> ModuleType:
    return load("doc_figures.py", "doc_figures")


def test_the_docs_state_the_results_figures() -> None:
    assert _figures().disagreements() == []


def test_a_re_run_result_is_caught_and_written_into_the_docs(tmp_path: Path) -> None:
    figures = _figures()
    docs, results = tmp_path / "repo", tmp_path / "results"
    for doc in {doc for doc, _ in figures.CLAIMS}:
        (docs / doc).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / doc, docs / doc)
    results.mkdir()
    for name in {source for source, _, _ in figures.FIGURES.values()}:
        shutil.copy(REPO / "bench/results" / name, results / name)
    clone = json.loads((results / "clone_bench.json").read_text())
    [row] = [r for r in clone["results"] if r["tool"] == "crystal-lsp" and r["lang"] == "python"]
    row["runs"]["cold"]["cpu"] = 12.34
    (results / "clone_bench.json").write_text(json.dumps(clone))
    wrong = figures.disagreements(docs, results)
    assert {line.split(":")[0] for line in wrong} == {
        "README.md",
        "docs/benchmarks.md",
        "docs/ci.md",
    }
    assert all("10.0" in line for line in wrong)
    assert sorted(figures.write(docs, results)) == ["README.md", "docs/benchmarks.md", "docs/ci.md"]
    assert figures.disagreements(docs, results) == []
    assert "| 12.3 / **0.2** / 2.0 |" in (docs / "README.md").read_text()
    assert "327k lines: 12.3 s" in (docs / "docs/ci.md").read_text()
