"""The result cache of run_scan: keyed by every input, never poisoned, repaired without the cache.

Regression tests of a report: ``crystal-lsp scan --new-since HEAD`` with nothing changed (a focus
on nothing, ``{}``) stored its empty result under the digest of a plain scan (focus ``None``), so
the next plain scan reported no findings; ``--no-cache`` computed the right findings but neither
read nor wrote the cache, so the scan after it was served the empty result again.
"""

from __future__ import annotations

import json
import os
import pathlib
import time
from typing import Any

import pytest
from scan_samples import ORIGINAL, UNRELATED, git_init, module, renamed, write_tree

import crystal_lsp.clones.scan as scan_module
from crystal_lsp.cli.main import main
from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.index import Snapshot
from crystal_lsp.clones.scan import ScanResult, open_store, result_key, run_scan
from crystal_lsp.clones.settings import ScanConfig

FILES = {
    "app/orders.py": module(ORIGINAL, UNRELATED[0]),
    "app/invoices.py": module(renamed(), UNRELATED[1]),
}
HOUR_NS = 3600 * 10**9


@pytest.fixture
def repo(tmp_path: pathlib.Path) -> pathlib.Path:
    return write_tree(tmp_path / "repo", FILES)


def scan(root: pathlib.Path, **kwargs: Any) -> ScanResult:
    config = ScanConfig()
    return run_scan(str(root), list_files(str(root), config), config, jobs=1, **kwargs)


def plain_key() -> str:
    return result_key(ScanConfig(), None, None)


def test_a_focus_on_nothing_does_not_answer_a_plain_scan(repo: pathlib.Path) -> None:
    focused = scan(repo, focus_lines={})
    assert focused.findings == []
    plain = scan(repo)
    assert not plain.cached and len(plain.findings) == 1
    # and the other way round: a plain scan's findings do not answer a focus on nothing
    assert scan(repo).cached
    again = scan(repo, focus_lines={})
    assert again.findings == []  # its own slot and digest: never the plain scan's findings


def test_each_kind_of_focus_has_its_own_result(repo: pathlib.Path) -> None:
    focuses: list[dict[str, list[tuple[int, int]]] | None] = [
        None,
        {},
        {"app/orders.py": []},
        {"app/orders.py": [(1, 3)]},
        {"app/orders.py": [(1, 10**9)]},
    ]
    for focus in focuses:
        first = scan(repo, focus_lines=focus)
        assert not first.cached, focus
        assert scan(repo, focus_lines=focus).cached, focus
    everything = scan(repo, focus_lines={"app/orders.py": [(1, 10**9)]})
    assert [f.to_json() for f in everything.findings] == [f.to_json() for f in scan(repo).findings]


def test_with_ngrams_has_its_own_result(repo: pathlib.Path) -> None:
    plain = scan(repo)
    with_ngrams = scan(repo, with_ngrams=True)
    assert not with_ngrams.cached
    assert with_ngrams.findings[0].shared_ngrams and not plain.findings[0].shared_ngrams


def test_inputs_digest_tells_every_input_apart() -> None:
    snap = Snapshot(contents={"a.py": ("sha-a", None)})
    config = ScanConfig()
    digest = scan_module.inputs_digest
    variants = [
        digest(snap, config, None, False),
        digest(snap, config, {}, False),
        digest(snap, config, {"a.py": []}, False),
        digest(snap, config, {"a.py": [(1, 5)]}, False),
        digest(snap, config, {"a.py": [(1, 6)]}, False),
        digest(snap, config, None, True),
        digest(snap, ScanConfig(threshold=0.7), None, False),
        digest(Snapshot(contents={"a.py": ("sha-b", None)}), config, None, False),
        digest(Snapshot(contents={"b.py": ("sha-a", None)}), config, None, False),
        digest(Snapshot(skipped=[("a.py", "too large")]), config, None, False),
        # the same content as an in-memory override: it stays out of the S sets
        digest(
            Snapshot(contents={"a.py": ("sha-a", b"")}, overrides={"a.py": b""}),
            config,
            None,
            False,
        ),
    ]
    assert len(set(variants)) == len(variants)
    # equal inputs, equal digests (span order and tuples or lists do not matter)
    as_lists: Any = {"a.py": [[1, 2], [7, 9]]}
    assert digest(snap, config, {"a.py": [(7, 9), (1, 2)]}, False) == digest(
        snap, config, as_lists, False
    )


def test_no_cache_recomputes_and_repairs_a_bad_cached_result(repo: pathlib.Path) -> None:
    good = scan(repo)
    assert len(good.findings) == 1
    with open_store(str(repo)) as store:
        doc = store.get(plain_key())
        doc["result"]["findings"] = []  # a poisoned result under the right digest
        store.set(plain_key(), doc)
    assert scan(repo).findings == []  # served from the cache, as any cached result is
    fresh = scan(repo, use_cache=False)
    assert not fresh.cached and len(fresh.findings) == 1
    repaired = scan(repo)
    assert repaired.cached
    assert [f.to_json() for f in repaired.findings] == [f.to_json() for f in good.findings]


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(["not", "a", "dict"], id="list"),
        pytest.param({"digest": None}, id="no-result"),
        pytest.param("same-digest", id="malformed-result"),
    ],
)
def test_malformed_cached_result_is_recomputed(repo: pathlib.Path, bad: Any) -> None:
    scan(repo)
    with open_store(str(repo)) as store:
        if bad == "same-digest":
            bad = {"digest": store.get(plain_key())["digest"], "result": {"findings": [{}]}}
        store.set(plain_key(), bad)
    result = scan(repo)
    assert not result.cached and len(result.findings) == 1
    assert scan(repo).cached


def test_a_rescan_of_a_changed_tree_does_not_read_the_stale_result(
    repo: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stored digest tells the result is stale: the whole result is not decoded for that."""
    from crystal_lsp.clones.store import Store

    scan(repo)
    (repo / "app" / "orders.py").write_text(module(ORIGINAL), encoding="utf-8")
    read: list[str] = []
    get = Store.get

    def spy(self: Store, key: str) -> Any:
        read.append(key)
        return get(self, key)

    with monkeypatch.context() as patched:
        patched.setattr(Store, "get", spy)
        again = scan(repo)
    assert not again.cached and plain_key() not in read
    assert scan(repo).cached  # and the new result is found again by its digest


def test_a_result_without_its_digest_key_is_still_served(repo: pathlib.Path) -> None:
    """A cache written before the digest was kept on its own: the result is read as before."""
    scan(repo)
    with open_store(str(repo)) as store:
        store.delete(plain_key() + ":digest")
    assert scan(repo).cached


def test_no_cache_rehashes_files_the_manifest_would_trust(repo: pathlib.Path) -> None:
    """A content change that keeps size and an old mtime (``cp -p``, ``rsync -t``)."""
    target = repo / "app/invoices.py"
    old_ns = time.time_ns() - HOUR_NS
    for path in repo.rglob("*.py"):
        os.utime(path, ns=(old_ns, old_ns))
    assert len(scan(repo).findings) == 1
    text = target.read_text()
    replaced = text.replace("tally_invoices", "tally_invoicez")
    assert len(replaced) == len(text) and replaced != text
    target.write_text(replaced)
    os.utime(target, ns=(old_ns, old_ns))
    fresh = scan(repo, use_cache=False)
    names = {loc.name for f in fresh.findings for loc in f.locations}
    assert "tally_invoicez" in names and "tally_invoices" not in names


def cli_json(root: pathlib.Path, capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main(["scan", str(root), "--format", "json", *argv])
    out, err = capsys.readouterr()
    assert err == ""
    doc = json.loads(out)
    assert code == (1 if doc["findings"] else 0)
    return doc


def test_cli_new_since_then_plain_scan_then_no_cache(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reported sequence, in a real git repository with everything committed."""
    root = git_init(write_tree(tmp_path / "project", FILES))
    focused = cli_json(root, capsys, "--new-since", "HEAD")
    assert focused["findings"] == []
    plain = cli_json(root, capsys)
    assert len(plain["findings"]) == 1 and not plain["summary"]["cached"]
    assert cli_json(root, capsys, "--new-since", "HEAD")["findings"] == []
    uncached = cli_json(root, capsys, "--no-cache")
    assert len(uncached["findings"]) == 1 and not uncached["summary"]["cached"]
    after = cli_json(root, capsys)
    assert after["summary"]["cached"] and after["findings"] == plain["findings"]


def test_a_partial_scan_keeps_the_whole_tree_result(repo: pathlib.Path) -> None:
    """The hook's scans (staged contents as overrides, a focus) do not evict a plain scan's result."""
    plain = scan(repo)
    assert not plain.cached
    staged = {"app/invoices.py": (repo / "app/invoices.py").read_bytes() + b"\n# staged\n"}
    partial = scan(repo, overrides=staged, focus_lines={"app/invoices.py": [(1, 5)]})
    assert not partial.cached
    again = scan(repo)
    assert again.cached and again.findings == plain.findings
    assert scan(repo, overrides=staged, focus_lines={"app/invoices.py": [(1, 5)]}).cached
