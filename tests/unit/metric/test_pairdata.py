"""Pair-labeled datasets: the code.jsonl + pairs.jsonl layout and CodeXGLUE's BigCloneBench."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from crystal_lsp import CrystalError
from crystal_lsp.metric.pairdata import layout_of, load_pair_dataset


def _write_pairs_layout(root: Path) -> Path:
    root.mkdir()
    code = [{"id": f"p{k}", "lang": "python", "code": f"x{k} = {k}\n"} for k in range(4)]
    pairs = [
        {"a": "p0", "b": "p1", "label": 1, "split": "train"},
        {"a": "p2", "b": "p3", "label": 0, "split": "test"},
        {"a": "p0", "b": "nope", "label": 1, "split": "test"},
    ]
    (root / "code.jsonl").write_text("".join(json.dumps(r) + "\n" for r in code))
    with gzip.open(root / "pairs.jsonl.gz", "wt") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in pairs))
    return root


def _write_codexglue(root: Path) -> Path:
    root.mkdir()
    funcs = [{"func": f"int f{k}() {{ return {k}; }}", "idx": str(100 + k)} for k in range(4)]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in funcs))
    (root / "train.txt").write_text("100 101 1\n102 103 0\n")
    (root / "valid.txt").write_text("100 102 0\n")
    (root / "test.txt").write_text("101 103 1\n100 103 0\n999 100 1\n")
    return root


def test_pairs_layout(tmp_path: Path) -> None:
    root = _write_pairs_layout(tmp_path / "set")
    assert layout_of(str(root)) == "pairs"
    data = load_pair_dataset(str(root))
    assert data.ids == ["p0", "p1", "p2", "p3"] and data.langs == ["python"] * 4
    assert [(p.a, p.b, p.label, p.split) for p in data.pairs] == [
        (0, 1, 1, "train"),
        (2, 3, 0, "test"),
    ]
    assert data.left_out == {"unknown program": 1}


def test_codexglue_layout(tmp_path: Path) -> None:
    root = _write_codexglue(tmp_path / "bcb")
    assert layout_of(str(root)) == "codexglue"
    data = load_pair_dataset(str(root))
    assert data.ids == ["100", "101", "102", "103"] and data.langs == ["java"] * 4
    assert [(p.a, p.b, p.label) for p in data.split("test")] == [(1, 3, 1), (0, 3, 0)]
    assert len(data.split("train")) == 2 and len(data.split("valid")) == 1
    assert data.left_out == {"unknown program": 1}


def test_bad_lines_and_folders_are_one_line_errors(tmp_path: Path) -> None:
    assert layout_of(str(tmp_path)) is None
    with pytest.raises(CrystalError, match="not a pair-labeled dataset"):
        load_pair_dataset(str(tmp_path))
    root = _write_codexglue(tmp_path / "bcb")
    (root / "test.txt").write_text("100 101\n")
    with pytest.raises(CrystalError, match=r"test\.txt:1: expected 'idx1 idx2 label'"):
        load_pair_dataset(str(root))


def test_duplicate_ids_are_an_error_naming_the_first(tmp_path: Path) -> None:
    root = _write_pairs_layout(tmp_path / "set")
    code = root / "code.jsonl"
    code.write_text(code.read_text() + json.dumps({"id": "p1", "code": "y = 2\n"}) + "\n")
    with pytest.raises(CrystalError) as raised:
        load_pair_dataset(str(root))
    assert str(raised.value) == f"{code}:5: duplicate id 'p1' (first on line 2)"
    glue = _write_codexglue(tmp_path / "bcb")
    data = glue / "data.jsonl"
    data.write_text(data.read_text() + json.dumps({"func": "int g() {}", "idx": "100"}) + "\n")
    with pytest.raises(
        CrystalError, match=r"data\.jsonl:5: duplicate id '100' \(first on line 1\)"
    ):
        load_pair_dataset(str(glue))


def test_programs_of_a_split_are_ordered_by_id(tmp_path: Path) -> None:
    data = load_pair_dataset(str(_write_codexglue(tmp_path / "bcb")))
    assert data.programs() == [0, 1, 2, 3]
    assert data.programs("test") == [0, 1, 3]
    assert data.programs("nothing") == []
