"""What findings read off tokens is kept by content: a rescan reads only what changed.

On the pinned corpus of real code (tests/data/pinned): a rescan after one file changed finds
exactly what a cold scan of the changed tree finds, and loads the tokens of no file that its
changed pairs do not reach; a rescan of nothing changed loads no tokens at all.
"""

from __future__ import annotations

import json
import pathlib
import tarfile
from typing import Any

import pytest

from crystal_lsp.clones.copies import reads
from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.index.repo import RepoIndex
from crystal_lsp.clones.scan import ScanResult, run_scan
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.text.entries import Heavy

PINNED = pathlib.Path(__file__).resolve().parents[3] / "data" / "pinned"
CONFIG = ScanConfig(show_similar=True)
EDITED = "rich/segment.py"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("reads")
    with tarfile.open(PINNED / "corpus.tar.gz") as archive:
        archive.extractall(root, filter="data")
    return root


def scan(root: pathlib.Path, cache: pathlib.Path, loaded: list[str] | None = None) -> ScanResult:
    """A scan without the result cache (so that it computes), noting whose tokens it loads."""
    original = RepoIndex.heavy

    def heavy(index: RepoIndex, path: str) -> Heavy:
        if loaded is not None:
            loaded.append(path)
        return original(index, path)

    with pytest.MonkeyPatch.context() as patch, Store(str(cache)) as store:
        patch.setattr(RepoIndex, "heavy", heavy)
        return run_scan(
            str(root), list_files(str(root), CONFIG), CONFIG, store=store, jobs=1, use_cache=False
        )


def memo_keys() -> list[str]:
    """The memo of each language of the corpus."""
    signature = CONFIG.signature()
    return [f"reads:{language}:{signature}:{reads.FORMAT}" for language in ("python", "javascript")]


def found(result: ScanResult) -> list[dict[str, Any]]:
    return [f.to_json() for f in result.findings]


def test_a_rescan_of_nothing_changed_loads_no_tokens(
    corpus: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    first = scan(corpus, tmp_path / "cache")
    loaded: list[str] = []
    again = scan(corpus, tmp_path / "cache", loaded)
    assert found(again) == found(first)
    assert len(first.findings) > 40
    assert loaded == []


def test_a_one_file_rescan_equals_a_cold_scan_and_reads_what_changed(
    corpus: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    scan(corpus, tmp_path / "cache")
    edited = corpus / EDITED
    original = edited.read_text(encoding="utf-8")
    loaded: list[str] = []
    try:
        edited.write_text(original + "\n\ndef added(value):\n    return value + 1\n")
        again = scan(corpus, tmp_path / "cache", loaded)
        cold = scan(corpus, tmp_path / "cold")
    finally:
        edited.write_text(original, encoding="utf-8")
    assert found(again) == found(cold)
    reached = {EDITED} | {
        loc.path
        for f in again.findings
        if any(loc.path == EDITED for loc in f.locations)
        for loc in f.locations
    }
    assert EDITED in loaded
    assert set(loaded) <= reached
    back = scan(corpus, tmp_path / "cache")
    assert found(back) == found(scan(corpus, tmp_path / "cold-again"))


def test_a_malformed_memo_is_read_afresh(corpus: pathlib.Path, tmp_path: pathlib.Path) -> None:
    first = scan(corpus, tmp_path / "cache")
    with Store(str(tmp_path / "cache")) as store:
        keys = [k for k in memo_keys() if store.get(k) is not None]
        assert len(keys) == 2
        for key in keys:
            doc = store.get(key)
            row = next(iter(doc["evidence"]))
            doc["evidence"][row] = doc["evidence"][row][:-1]  # a row of other fields
            store.set(key, doc)
    assert found(scan(corpus, tmp_path / "cache")) == found(first)


def test_the_memo_keeps_only_what_the_last_full_scan_read(
    corpus: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    scan(corpus, tmp_path / "cache")
    with Store(str(tmp_path / "cache")) as store:
        key = memo_keys()[0]
        doc = store.get(key)
        doc["evidence"]["stale"] = next(iter(doc["evidence"].values()))
        store.set(key, doc)
    scan(corpus, tmp_path / "cache")
    with Store(str(tmp_path / "cache")) as store:
        doc = store.get(key)
    assert "stale" not in doc["evidence"]
    assert doc["format"] == reads.FORMAT
    assert json.dumps(doc)  # plain JSON


def test_an_editors_buffer_is_not_kept(corpus: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """A search with an override (an unsaved buffer) reads it afresh and keeps nothing of it."""
    edited = corpus / EDITED
    buffer = edited.read_bytes() + b"\n\ndef added(value):\n    return value + 1\n"
    with Store(str(tmp_path / "cache")) as store:
        index = RepoIndex(str(corpus), CONFIG, store, jobs=1)
        finder = CloneFinder(index)
        paths = list_files(str(corpus), CONFIG)

        def scan_with(overrides: dict[str, bytes] | None) -> ScanResult:
            return run_scan(
                str(corpus),
                paths,
                CONFIG,
                overrides=overrides,
                use_cache=False,
                index=index,
                finder=finder,
            )

        first = scan_with(None)
        with_buffer = scan_with({EDITED: buffer})
        sha = index.files[EDITED].sha
        assert index.files[EDITED].override
        memo = finder.workset("python").state.reads  # the memo the search with the buffer used
        assert isinstance(memo, reads.Reads) and memo.size()
        kept = [*memo.evidence, *memo.digests, *memo.decisions]
        assert not [key for key in kept if sha in key]
    assert any(loc.path == EDITED for f in with_buffer.findings for loc in f.locations)
    assert found(first)
