"""run_scan: results, the result cache, focus lines, overrides, incremental equals fresh."""

from __future__ import annotations

import os
import pathlib
import sqlite3

import diskcache
import pytest
from scan_samples import (
    ALL_LIST,
    IMPORTS,
    ORIGINAL,
    UNRELATED,
    module,
    near_copy,
    renamed,
    write_tree,
)

from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.findings import SCHEMA_VERSION
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.scan import ScanResult, focus_of, open_store, result_key, run_scan
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store, repo_cache_dir

FILES = {
    "shop/orders.py": module(IMPORTS, ALL_LIST, ORIGINAL, UNRELATED[0]),
    "shop/invoices.py": module(IMPORTS, ALL_LIST, renamed(), UNRELATED[1]),
    "shop/near.py": module(IMPORTS, near_copy(), UNRELATED[2]),
    "lib/other.py": module(UNRELATED[1].replace("retry_download", "fetch_again")),
    "README.md": "# shop\n",
}


@pytest.fixture
def repo(tmp_path: pathlib.Path) -> pathlib.Path:
    return write_tree(tmp_path / "repo", FILES)


def scan(root: pathlib.Path, config: ScanConfig | None = None, **kwargs: object) -> ScanResult:
    config = config or ScanConfig()
    return run_scan(str(root), list_files(str(root), config), config, jobs=1, **kwargs)  # type: ignore[arg-type]


def summary(result: ScanResult) -> list[tuple[str, float, list[tuple[str, int, int]]]]:
    return [
        (f.id, f.score, [(loc.path, loc.first_line, loc.last_line) for loc in f.locations])
        for f in result.findings
    ]


def test_scan_result(repo: pathlib.Path) -> None:
    result = scan(repo)
    assert (result.files, result.cached) == (4, False)
    assert result.skipped == [("README.md", "not code (markdown)")]
    assert [(f.type, len(f.locations)) for f in result.findings] == [("near", 3), ("renamed", 2)]
    assert result.snippets == 7  # the functions; data runs (__all__) are not reported
    assert list(result.ssets) == ["python"]
    assert {"stat", "lexing", "scoring", "total"} <= set(result.timings)
    doc = result.to_json()
    assert doc["version"] == SCHEMA_VERSION and doc["summary"]["findings"] == 2
    assert doc["settings"]["threshold"] == 0.6 and "extra" not in doc["settings"]
    assert doc["signature"] == ScanConfig().signature()


def test_result_cache(repo: pathlib.Path) -> None:
    first = scan(repo)
    second = scan(repo)
    assert second.cached and not first.cached
    assert second.scored == 0 and set(second.timings) == {"stat", "total"}
    assert [f.to_json() for f in second.findings] == [f.to_json() for f in first.findings]
    assert (second.files, second.snippets, second.skipped) == (
        first.files,
        first.snippets,
        first.skipped,
    )
    assert [loc.sha for f in second.findings for loc in f.locations] == [
        loc.sha for f in first.findings for loc in f.locations
    ]
    uncached = scan(repo, use_cache=False)
    assert not uncached.cached and uncached.scored == 0  # the pair scores are reused
    assert summary(uncached) == summary(first)
    # any change of content, settings or focus misses the result cache
    (repo / "lib/other.py").write_text(module(UNRELATED[2]))
    assert not scan(repo).cached
    assert not scan(repo, ScanConfig(threshold=0.7)).cached
    assert not scan(repo, focus_lines={"shop/near.py": [(1, 5)]}).cached


def test_scan_writes_nothing_into_the_repository(
    repo: pathlib.Path, crystal_cache_dir: pathlib.Path
) -> None:
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    scan(repo)
    scan(repo, use_cache=False)
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before
    store_dir = pathlib.Path(repo_cache_dir(str(repo)))
    assert store_dir.is_relative_to(crystal_cache_dir) and (store_dir / "cache.db").is_file()


def test_focus_lines_give_the_same_findings(repo: pathlib.Path) -> None:
    full = scan(repo)
    # focus on a function whose copies elsewhere are copies of each other
    other_start = module(IMPORTS, ALL_LIST, renamed()).count("\n") + 3
    focused = scan(repo, focus_lines={"shop/invoices.py": [(other_start, other_start)]})
    assert summary(focused) == [summary(full)[1]]
    assert [f.to_json() for f in focused.findings] == [full.findings[1].to_json()]
    # focus outside every snippet, or on a file without one: nothing to report
    assert scan(repo, focus_lines={"shop/near.py": [(1, 2)]}).findings == []
    assert scan(repo, focus_lines={"missing.py": [(1, 10**9)]}).findings == []
    assert scan(repo, focus_lines={}).findings == []


def test_focus_of_keeps_the_ranges_of_indexed_files(repo: pathlib.Path) -> None:
    config = ScanConfig()
    with open_store(str(repo)) as store:
        index = RepoIndex(str(repo), config, store, jobs=1)
        index.refresh(list_files(str(repo), config))
        spans = {"shop/orders.py": [(3, 9)], "nope.py": [(1, 9)], "shop/near.py": []}
        assert focus_of(index, spans) == {"shop/orders.py": [(3, 9)]}


def test_overrides(repo: pathlib.Path) -> None:
    buffer = module(UNRELATED[1].replace("retry_download", "fetch_again"), near_copy())
    result = scan(repo, overrides={"lib/other.py": buffer.encode()})
    near = result.findings[0]
    assert "lib/other.py" in [loc.path for loc in near.locations]
    assert len(near.locations) == 4
    # the disk is unchanged: a scan without the override does not see the buffer
    assert len(scan(repo).findings[0].locations) == 3


def test_incremental_rescan_equals_a_fresh_scan(
    repo: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scan(repo)
    (repo / "lib/other.py").write_text(module(UNRELATED[2], renamed().replace("(", " (", 1)))
    (repo / "shop/near.py").write_text(module(IMPORTS, UNRELATED[2]))
    incremental = scan(repo)
    assert not incremental.cached
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path / "empty-cache"))
    fresh = scan(repo)
    assert fresh.scored >= incremental.scored
    assert summary(incremental) == summary(fresh)
    assert [[p.to_json() for p in f.pairs] for f in incremental.findings] == [
        [p.to_json() for p in f.pairs] for f in fresh.findings
    ]
    assert (incremental.files, incremental.snippets, incremental.skipped) == (
        fresh.files,
        fresh.snippets,
        fresh.skipped,
    )


def test_focus_on_a_near_copy_gives_the_full_scan_finding(repo: pathlib.Path) -> None:
    full = scan(repo)
    near_start = module(IMPORTS).count("\n") + 3
    focused = scan(repo, focus_lines={"shop/near.py": [(near_start + 3, near_start + 4)]})
    assert [f.id for f in focused.findings] == [full.findings[0].id]  # this part holds
    assert [f.to_json() for f in focused.findings] == [full.findings[0].to_json()]


def test_with_ngrams(repo: pathlib.Path) -> None:
    result = scan(repo, with_ngrams=True)
    for finding in result.findings:
        assert finding.shared_ngrams and all(len(g) == 4 for g in finding.shared_ngrams)
        assert "shared_ngrams" in finding.to_json(with_ngrams=True)
    cached = scan(repo, with_ngrams=True)
    assert cached.cached
    assert [f.shared_ngrams for f in cached.findings] == [f.shared_ngrams for f in result.findings]


def test_given_store_is_left_open(repo: pathlib.Path, tmp_path: pathlib.Path) -> None:
    with Store(str(tmp_path / "own")) as store:
        first = scan(repo, store=store)
        assert store.get(result_key(ScanConfig(), None, None)) is not None
        assert scan(repo, store=store).cached
    assert first.findings
    assert not (pathlib.Path(repo_cache_dir(str(repo))) / "cache.db").exists()


class _Payload:
    """Unpickling this creates a file."""

    def __init__(self, marker: pathlib.Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def test_planted_pickles_are_never_loaded(repo: pathlib.Path, tmp_path: pathlib.Path) -> None:
    expected = summary(scan(repo))
    directory = repo_cache_dir(str(repo))
    database = sqlite3.connect(os.path.join(directory, "cache.db"))
    keys = [k for (k,) in database.execute("SELECT key FROM Cache")]
    database.close()
    assert any(k.startswith("light:") for k in keys) and any(k.startswith("result:") for k in keys)
    marker = tmp_path / "PWNED"
    plain = diskcache.Cache(directory)
    for key in keys:
        plain.set(key, _Payload(marker))
    plain.close()
    assert summary(scan(repo)) == expected
    assert not marker.exists()
    assert summary(scan(repo)) == expected  # and the cache works again
