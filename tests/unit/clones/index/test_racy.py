"""The manifest and git's racy-clean rule: size and mtime are trusted only for files old enough.

A file changed again within its timestamp's granularity keeps its size and mtime; the index must
not serve the content it hashed before. Regression tests of a report: such a change was never seen.
"""

from __future__ import annotations

import os
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
from scan_samples import ORIGINAL, UNRELATED, module, renamed, write_tree

import crystal_lsp.text.sources as sources_module
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.text.fingerprints import content_sha

HOUR_NS = 3600 * 10**9
FILES = {"pkg/orders.py": module(ORIGINAL), "pkg/net.py": module(UNRELATED[1])}


@pytest.fixture
def repo(tmp_path: pathlib.Path) -> pathlib.Path:
    return write_tree(tmp_path / "repo", FILES)


@pytest.fixture
def store(tmp_path: pathlib.Path) -> Iterator[Store]:
    with Store(str(tmp_path / "cache")) as opened:
        yield opened


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the index reads (every read goes through ``sources.read_bytes``)."""
    names: list[str] = []
    real = sources_module.read_bytes

    def counting(file: Any, *args: Any, **kwargs: Any) -> Any:
        names.append(os.path.basename(str(file)))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(sources_module, "read_bytes", counting)
    return names


def new_index(repo: pathlib.Path, store: Store) -> RepoIndex:
    return RepoIndex(str(repo), ScanConfig(), store, jobs=1)


def same_size_other_content(path: pathlib.Path) -> bytes:
    """Rewrite ``path`` with other content of the same size, keeping its mtime."""
    st = path.stat()
    old = path.read_bytes()
    new = old.replace(b"summarize_orders", b"summarize_ordres")
    assert new != old and len(new) == len(old)
    path.write_bytes(new)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    return new


def age(repo: pathlib.Path, by_ns: int = HOUR_NS) -> None:
    """Set every file's mtime ``by_ns`` in the past."""
    then = time.time_ns() - by_ns
    for path in repo.rglob("*.py"):
        os.utime(path, ns=(then, then))


def test_racily_clean_change_is_seen(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(sorted(FILES))
    new = same_size_other_content(repo / "pkg/orders.py")
    # a later process over the same cache, and the same long-lived index
    for again in (new_index(repo, store), index):
        snap = again.snapshot(sorted(FILES))
        assert snap.contents["pkg/orders.py"][0] == content_sha(new)
    index.refresh(sorted(FILES))
    state = index.files["pkg/orders.py"]
    assert state.sha == content_sha(new)
    assert [m.name for m in state.entry.snippets] == ["summarize_ordres"]


def test_files_older_than_the_margin_are_not_read(
    repo: pathlib.Path, store: Store, opened: list[str]
) -> None:
    age(repo)
    new_index(repo, store).refresh(sorted(FILES))
    assert sorted(opened) == ["net.py", "orders.py"]
    opened.clear()
    snap = new_index(repo, store).snapshot(sorted(FILES))
    assert opened == []
    assert all(data is None for _, data in snap.contents.values())
    assert snap.contents["pkg/net.py"][0] == content_sha(FILES["pkg/net.py"].encode())


def test_only_the_racy_file_is_read(repo: pathlib.Path, store: Store, opened: list[str]) -> None:
    age(repo)
    (repo / "pkg/net.py").write_text(module(UNRELATED[1], renamed()))  # just now: racy
    new_index(repo, store).refresh(sorted(FILES))
    opened.clear()
    snap = new_index(repo, store).snapshot(sorted(FILES))
    assert opened == ["net.py"]
    # unchanged since it was hashed: its bytes are not kept, the index has its entry
    assert snap.contents["pkg/net.py"][1] is None


def test_racy_entry_is_trusted_once_hashed_safely_later(
    repo: pathlib.Path, store: Store, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    index = new_index(repo, store)
    index.refresh(sorted(FILES))
    opened.clear()
    index.refresh(sorted(FILES))
    assert sorted(opened) == ["net.py", "orders.py"]  # written just now: racily clean
    later = time.time_ns() + 3 * 10**9
    monkeypatch.setattr(time, "time_ns", lambda: later)
    opened.clear()
    index.refresh(sorted(FILES))  # hashed again, now safely after the last change
    assert sorted(opened) == ["net.py", "orders.py"]
    opened.clear()
    assert new_index(repo, store).refresh(sorted(FILES)).tokenized == 0
    assert opened == []


@pytest.mark.parametrize("kept", [3, 4], ids=["without-hashing-time", "without-ctime-inode"])
def test_old_manifest_entries_are_rehashed_not_trusted(
    repo: pathlib.Path, store: Store, opened: list[str], kept: int
) -> None:
    age(repo)
    index = new_index(repo, store)
    index.refresh(sorted(FILES))
    key = index._manifest_key
    manifest = store.get(key)
    assert all(len(entry) == 6 for entry in manifest.values())
    # manifests written before the hashing time ([size, mtime_ns, sha]) or the ctime and inode
    # ([size, mtime_ns, sha, hashed_ns]) were recorded
    new = same_size_other_content(repo / "pkg/orders.py")
    store.set(key, {rel: entry[:kept] for rel, entry in manifest.items()})
    opened.clear()
    snap = new_index(repo, store).snapshot(sorted(FILES))
    assert sorted(opened) == ["net.py", "orders.py"]
    assert snap.contents["pkg/orders.py"][0] == content_sha(new)
    new_index(repo, store).load(snap)
    assert all(len(entry) == 6 for entry in store.get(key).values())
    opened.clear()
    new_index(repo, store).snapshot(sorted(FILES))
    assert opened == []


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param(["not", "a", "dict"], id="list"),
        pytest.param("text", id="string"),
        pytest.param({"pkg/orders.py": [1], "pkg/net.py": None}, id="short-entries"),
        pytest.param({"pkg/orders.py": "abc", "pkg/net.py": {"size": 1}}, id="odd-entries"),
        pytest.param({"pkg/orders.py": [None, "x", 3, "y"]}, id="odd-types"),
    ],
)
def test_malformed_manifest_is_rehashed(repo: pathlib.Path, store: Store, manifest: Any) -> None:
    age(repo)
    index = new_index(repo, store)
    store.set(index._manifest_key, manifest)
    stats = index.refresh(sorted(FILES))
    assert stats.files == 2
    for rel, text in FILES.items():
        assert index.files[rel].sha == content_sha(text.encode())


def test_a_cached_scan_keeps_what_it_learned_about_racy_files(
    repo: pathlib.Path, tmp_path: pathlib.Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout scanned right away is racy; later scans answered from the cache stop re-reading it."""
    from crystal_lsp.clones.scan import run_scan

    paths, config = sorted(FILES), ScanConfig()
    with Store(str(tmp_path / "cache")) as store:
        first = run_scan(str(repo), paths, config, store=store, jobs=1)
        later = time.time_ns() + 3 * 10**9
        monkeypatch.setattr(time, "time_ns", lambda: later)
        opened.clear()
        again = run_scan(str(repo), paths, config, store=store, jobs=1)
        assert again.cached and sorted(opened) == ["net.py", "orders.py"]  # hashed safely now
        opened.clear()
        third = run_scan(str(repo), paths, config, store=store, jobs=1)
    assert third.cached and opened == []
    assert [f.to_json() for f in third.findings] == [f.to_json() for f in first.findings]
