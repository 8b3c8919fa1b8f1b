"""The benchmark results' index (``bench/results/INDEX.md``, written by bench/results_index.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from bench_scripts import load

REPO = Path(__file__).resolve().parents[2]


def _index() -> ModuleType:
    return load("results_index.py", "results_index")


def test_the_index_lists_every_result_as_the_script_writes_it() -> None:
    index = _index()
    text = (REPO / "bench/results/INDEX.md").read_text(encoding="utf-8")
    assert text == index.render(), "bench/results/INDEX.md is stale: run bench/results_index.py"
    for path in index.result_files():
        assert f"]({path.relative_to(index.RESULTS).as_posix()})" in text
    assert "| `not known` |" not in text


def test_producer_and_date_come_from_the_files(tmp_path: Path) -> None:
    index = _index()
    (tmp_path / "x_run.json").write_text(
        json.dumps(
            {"meta": {"command": "python bench/metric_bench.py --quick", "date": "2026-01-02"}}
        )
    )
    (tmp_path / "x_run.md").write_text("# report\n")
    (tmp_path / "clone_bench.md").write_text("# Clones\n\nRun of 2026-03-04 05:06 UTC.\n")
    (tmp_path / "notes.md").write_text("# Notes\n\nsee bench/real_bench.py\n")
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "a.jsonl").write_text("{}\n")
    rows = {
        line.split("](")[1].split(")")[0]: [cell.strip(" `") for cell in line.split("|")[2:4]]
        for line in index.render(tmp_path).splitlines()
        if line.startswith("| [")
    }
    assert rows == {
        "x_run.json": ["bench/metric_bench.py", "2026-01-02"],
        "x_run.md": ["bench/metric_bench.py", "2026-01-02"],  # its companion's
        "clone_bench.md": ["bench/clone_bench.py", "2026-03-04 05:06 UTC"],
        "notes.md": ["bench/real_bench.py", "not recorded"],
        "labels/a.jsonl": ["hand labels (see the folder's README.md)", "not recorded"],
    }
