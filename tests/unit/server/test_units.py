"""Unit tests of the language server's pure parts and of the core changes made for it."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from lsprotocol import types

from crystal_lsp.clones.files import _walk, filter_paths, list_files
from crystal_lsp.clones.findings import Finding, Location, Pair
from crystal_lsp.clones.index import FileState, RepoIndex
from crystal_lsp.clones.retrieval import Postings
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.server.actions import comment_for
from crystal_lsp.server.positions import TextIndex
from crystal_lsp.server.settings import folder_config, parse_settings
from crystal_lsp.server.workspace import _regroup
from crystal_lsp.text.entries import build_entry

# ---------------------------------------------------------------------- settings


def test_settings_defaults_and_layers() -> None:
    settings, problems = parse_settings(None, None)
    assert problems == [] and settings.enable and settings.severity == "information"
    assert settings.debounce_ms == 300 and dict(settings.scan) == {}
    settings, problems = parse_settings(
        {"threshold": 0.8, "severity": "error"}, {"threshold": 0.7, "languages": ["py", "JS"]}
    )
    assert problems == []
    assert settings.severity == "error"
    assert dict(settings.scan) == {"threshold": 0.7, "languages": ("javascript", "python")}


def test_default_values_do_not_override_the_project() -> None:
    settings, _ = parse_settings({"threshold": 0.6, "k": 500, "minTokens": 50, "exclude": []})
    assert dict(settings.scan) == {}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("threshold", "high"),
        ("threshold", 0),
        ("threshold", True),
        ("k", -1),
        ("k", "many"),
        ("minTokens", 0),
        ("minLines", 2.5),
        ("severity", "loud"),
        ("languages", ["klingon"]),
        ("languages", "python"),
        ("exclude", [1]),
        ("debounceMs", -5),
        ("maxFileBytes", "big"),
        ("enable", "yes"),
    ],
)
def test_each_bad_key_is_reported_and_defaulted(key: str, value: object) -> None:
    settings, problems = parse_settings(
        {key: value, "severity": "hint"} if key != "severity" else {key: value}
    )
    [problem] = problems
    assert f"crystalLsp.{key}" in problem
    default, _ = parse_settings(None)
    assert settings.scan == default.scan and settings.enable == default.enable
    assert settings.debounce_ms == default.debounce_ms


def test_unknown_keys_and_nulls_are_ignored() -> None:
    settings, problems = parse_settings({"interpreter": ["python"], "threshold": None})
    assert problems == [] and dict(settings.scan) == {}
    _, problems = parse_settings([1, 2])
    assert len(problems) == 1


def test_folder_config_reads_pyproject_and_reports_a_broken_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.crystal-lsp]\nmin-tokens = 80\n")
    settings, _ = parse_settings({"threshold": 0.9})
    config, problems = folder_config(str(tmp_path), settings)
    assert problems == [] and config.min_tokens == 80 and config.threshold == 0.9
    (tmp_path / "pyproject.toml").write_text('[tool.crystal-lsp]\nthreshold = "x"\n')
    config, problems = folder_config(str(tmp_path), settings)
    assert config.threshold == 0.9 and config.min_tokens == 50
    assert "pyproject.toml" in problems[0]


# ---------------------------------------------------------------------- positions


def test_positions_in_utf16_with_crlf_and_lone_cr() -> None:
    text = "a😀b\r\nxy\rz\n\tq"
    index = TextIndex(text)
    assert index.position(text.index("b")) == types.Position(line=0, character=3)
    assert index.position(text.index("z")) == types.Position(line=2, character=0)
    assert index.position(len(text)) == types.Position(line=3, character=2)
    for offset in range(len(text) + 1):
        if text[offset - 1 : offset] in ("\r",) and text[offset : offset + 1] == "\n":
            continue
        assert index.offset_at(index.position(offset)) == offset
    assert index.offset_at(types.Position(line=99, character=0)) == len(text)
    assert index.offset_at(types.Position(line=0, character=99)) == text.index("\r")
    # the core's 1-based \n lines and inclusive end columns
    assert index.range(1, 1, 1, 3) == types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=4)
    )


# ---------------------------------------------------------------------- actions, findings


def test_comment_prefixes() -> None:
    assert comment_for("python") == ("#", "")
    assert comment_for("java") == ("//", "")
    assert comment_for("sql") == ("--", "")
    assert comment_for("css") == ("/*", " */")


def _loc(path: str, line: int) -> Location:
    return Location(path, line, 1, line + 5, 2, "function", "f", 60, f"s{line}", "n")


def test_regroup_splits_a_class_that_lost_its_bridge() -> None:
    finding = Finding(
        "python",
        [_loc("a.py", 1), _loc("b.py", 1), _loc("c.py", 1), _loc("\0d.py", 1)],
        [Pair(0, 1, 0.9, 0.5), Pair(1, 2, 0.8, 0.4), Pair(2, 3, 0.7, 0.3)],
    )
    parts = _regroup(finding, [0, 2, 3], {"\0d.py": "d.py"})
    assert len(parts) == 1
    [part] = parts
    assert [loc.path for loc in part.locations] == ["c.py", "d.py"]
    assert part.pairs == [Pair(0, 1, 0.7, 0.3)]


# ---------------------------------------------------------------------- core changes


def test_postings_query_counts_every_shared_shingle() -> None:
    rng = random.Random(2)
    for _ in range(200):
        arrays = [
            np.unique(
                np.array([rng.randint(0, 60) for _ in range(rng.randint(0, 25))], dtype=np.uint64)
            )
            for _ in range(rng.randint(1, 20))
        ]
        postings = Postings(arrays, np.array([3], dtype=np.uint64), rng.randint(1, 8))
        query = np.unique(
            np.array([rng.randint(0, 60) for _ in range(rng.randint(1, 25))], dtype=np.uint64)
        )
        owners, shared = postings.query(query, 0.0, 10**6)
        expected: dict[int, int] = {}
        for value in query.tolist():
            holders = [i for i, a in enumerate(arrays) if value in a.tolist() and value != 3]
            # the query snippet is not indexed, so it counts as one more holder
            if 1 <= len(holders) and len(holders) + 1 <= postings.max_df:
                for i in holders:
                    expected[i] = expected.get(i, 0) + 1
        assert dict(zip(owners.tolist(), shared.tolist())) == expected


def test_walk_prunes_excluded_directories_without_changing_the_listing(tmp_path: Path) -> None:
    for rel in [
        "a.py",
        "build/x.py",
        "pkg/site-packages/m.py",
        "pkg/b.py",
        "test/t.py",
        "x.min.js/y.py",
    ]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    for extra in ([], ["test/**"], ["pkg/"], ["*.py", "!pkg/b.py"]):
        config = ScanConfig(extend_exclude=tuple(extra))
        unpruned = filter_paths(sorted(set(_walk(str(tmp_path)))), config)
        assert list_files(str(tmp_path), config) == unpruned


def test_fingerprint_is_cached_and_stable() -> None:
    sset = TriviallySharedSet({("a",): 3, ("b", "c"): 2}, k=2)
    first = sset.fingerprint()
    assert sset.fingerprint() is first
    fresh = TriviallySharedSet({("a",): 3, ("b", "c"): 2}, k=2)
    assert fresh.fingerprint() == first
    assert sset.restricted(1).fingerprint() != first


def test_unsaved_buffers_do_not_move_the_s_sets(tmp_path: Path) -> None:
    code = "def f(x):\n    return [y * 2 for y in x if y]\n"
    for i in range(4):
        (tmp_path / f"m{i}.py").write_text(code.replace("f", f"f{i}"))
    config = ScanConfig(min_tokens=5, min_lines=1)
    with Store(str(tmp_path / ".cache")) as store:
        index = RepoIndex(str(tmp_path), config, store, jobs=1)
        index.refresh([f"m{i}.py" for i in range(4)])
        before = index.sets("python").fingerprint
        buffer = build_entry("\0new.py", "import os\n" * 50, "python", min_tokens=5, min_lines=1)
        index.files["\0new.py"] = FileState("\0new.py", "buffer", buffer, True)
        assert index.sets("python").fingerprint == before
