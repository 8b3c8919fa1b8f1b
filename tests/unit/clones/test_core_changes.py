"""Unit tests of core changes made for the language server (retrieval, listing, S sets)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from crystal_lsp.clones.files import _walk, filter_paths, list_files
from crystal_lsp.clones.index import FileState, RepoIndex
from crystal_lsp.clones.index.retrieval import Postings
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.entries import build_entry


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
