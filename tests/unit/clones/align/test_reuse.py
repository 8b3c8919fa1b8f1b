"""Reusing a full scan's alignment: after a change, a scan equals a fresh scan of the new tree."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
from scan_samples import ORIGINAL, UNRELATED, module, near_copy, renamed, write_tree

from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.scan import ScanResult, run_scan
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store

FILES = {
    "a.py": module(ORIGINAL, UNRELATED[0]),
    "b.py": module(UNRELATED[1], renamed()),
    "c.py": module(UNRELATED[2]),
    "d.py": module(near_copy(), UNRELATED[0].replace("parse_settings", "read_settings")),
}


def scan(root: pathlib.Path, cache: pathlib.Path, config: ScanConfig) -> ScanResult:
    with Store(str(cache)) as store:
        return run_scan(
            str(root), list_files(str(root), config), config, store=store, jobs=1, use_cache=False
        )


def report(result: ScanResult) -> str:
    doc = result.to_json()
    return json.dumps(
        [doc["findings"], doc["summary"]["filtered"], doc["summary"]["candidates"]],
        sort_keys=True,
    )


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"c.py": module(UNRELATED[2], ORIGINAL)}, id="a-copy-added"),
        pytest.param({"b.py": module(UNRELATED[1])}, id="a-copy-removed"),
        pytest.param({"e.py": module(renamed(), UNRELATED[2])}, id="a-file-added"),
        pytest.param({"a.py": module(ORIGINAL, UNRELATED[0]) + "# a comment\n"}, id="a-comment"),
    ],
)
def test_a_rescan_equals_a_fresh_scan(tmp_path: pathlib.Path, change: dict[str, str]) -> None:
    config = ScanConfig()
    root = write_tree(tmp_path / "repo", FILES)
    scan(root, tmp_path / "cache", config)
    write_tree(root, change)
    again = scan(root, tmp_path / "cache", config)
    fresh = scan(root, tmp_path / "fresh", config)
    assert report(again) == report(fresh)
    assert again.findings  # the comparison is about something


def test_a_removed_file_takes_its_copies_along(tmp_path: pathlib.Path) -> None:
    config = ScanConfig()
    root = write_tree(tmp_path / "repo", FILES)
    first = scan(root, tmp_path / "cache", config)
    assert any(loc.path == "b.py" for f in first.findings for loc in f.locations)
    (root / "b.py").unlink()
    again = scan(root, tmp_path / "cache", config)
    assert not any(loc.path == "b.py" for f in again.findings for loc in f.locations)
    assert report(again) == report(scan(root, tmp_path / "fresh", config))


def test_a_change_moving_seeds_across_max_df_realigns_their_files(tmp_path: pathlib.Path) -> None:
    """With max-df 3, a fourth copy makes the copied code's seeds boilerplate: the pairs of the
    three unchanged files change too, and the rescan must see that."""
    config = ScanConfig(max_df=3)
    files = {
        "a.py": module(ORIGINAL),
        "b.py": module(UNRELATED[0], near_copy()),
        "c.py": module(near_copy(), UNRELATED[1]),
    }
    root = write_tree(tmp_path / "repo", files)
    before = scan(root, tmp_path / "cache", config)
    write_tree(root, {"d.py": module(UNRELATED[2], near_copy())})
    again = scan(root, tmp_path / "cache", config)
    fresh = scan(root, tmp_path / "fresh", config)
    assert report(again) == report(fresh)
    assert report(again) != report(before)


def test_a_buffer_that_moves_seeds_across_max_df_equals_a_fresh_scan(
    tmp_path: pathlib.Path,
) -> None:
    """The language server's way: a modified buffer ("\\0" + path) shadows its file on disk;
    taking a copy out of it moves the copied code's seeds back under max-df."""
    from crystal_lsp.clones.index import RepoIndex
    from crystal_lsp.server.workspace import buffer_finder

    config = ScanConfig(max_df=3)
    files = {
        "a.py": module(ORIGINAL, near_copy()),
        "b.py": module(UNRELATED[0], near_copy()),
        "c.py": module(near_copy(), UNRELATED[1]),
        "d.py": module(UNRELATED[2], near_copy()),
        # other files, so that two changed paths (the buffer, its file) are few enough to reuse
        **{f"pkg/m{i}.py": f"X_{i} = {i}\n" for i in range(12)},
    }
    root = write_tree(tmp_path / "repo", files)
    buffer = module(UNRELATED[2])  # four copies on disk (boilerplate), three with the buffer
    with Store(str(tmp_path / "cache")) as store:
        index = RepoIndex(str(root), config, store, jobs=1)
        index.refresh(sorted(files))
        finder = buffer_finder(index)
        finder.find()  # the full scan the server runs when it builds its index
        index.refresh(sorted(files), {"\0d.py": buffer.encode()})
        found = finder.find({"\0d.py": None, "b.py": None})["python"].findings
    write_tree(root, {"d.py": buffer})
    fresh = scan(root, tmp_path / "fresh", config)
    spans = sorted(
        sorted((loc.path, loc.first_line, loc.last_line) for loc in f.locations) for f in found
    )
    want = sorted(
        sorted((loc.path, loc.first_line, loc.last_line) for loc in f.locations)
        for f in fresh.findings
        if any(loc.path == "b.py" for loc in f.locations)
    )
    assert spans == want and want


def test_a_rescan_stores_the_records_a_fresh_scan_stores(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The records taken over are saved as they were read (not encoded again), and the stored
    memo equals a fresh scan's."""
    from crystal_lsp.clones.align import reuse

    saved: list[Any] = []
    encoded: list[int] = []
    set_value, record_json = Store.set, reuse._record_json

    def spy_set(self: Store, key: str, value: Any) -> None:
        if key.startswith("align:"):
            saved.append(json.loads(json.dumps(value)))
        set_value(self, key, value)

    def spy_json(record: Any) -> Any:
        encoded.append(1)
        return record_json(record)

    monkeypatch.setattr(Store, "set", spy_set)
    monkeypatch.setattr(reuse, "_record_json", spy_json)
    config = ScanConfig()
    files = {**FILES, **{f"u{i}.py": module(UNRELATED[i % 3], ORIGINAL) for i in range(6)}}
    root = write_tree(tmp_path / "repo", files)
    scan(root, tmp_path / "cache", config)
    write_tree(root, {"c.py": module(UNRELATED[2], renamed())})
    encoded.clear()
    scan(root, tmp_path / "cache", config)
    rescan, rescan_encoded = saved[-1], len(encoded)
    fresh = scan(root, tmp_path / "fresh", config) and saved[-1]
    assert json.dumps(rescan, sort_keys=True) == json.dumps(fresh, sort_keys=True)
    touching = [k for k in rescan["records"] if "c.py" in k.split("\0")]
    assert len(rescan["records"]) > 2 * len(touching) > 0
    assert rescan_encoded == len(touching)  # only the records of pairs with the changed file
