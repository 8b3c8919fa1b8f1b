"""A one-file rescan on a warm cache reports what a cold scan of the same tree reports.

Edits are applied one after another to one repository and one cache, as a developer's saves
are: a copy added, a copy changed (edited apart, then back), a copy removed, an unrelated file
edited. After each, the warm rescan (``run_scan`` as the CLI runs it: the stored index, the
previous scan's alignment, reads and result) must equal a cold scan in an empty cache --
findings, their order, the filtered counts and the candidates. A finding the incremental path
kept from before an edit (a stale copy) makes them differ.
"""

from __future__ import annotations

import json
import pathlib

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
    **{
        f"pkg/m{i}.py": f"VALUE_{i} = {i}\n\n\ndef value_{i}():\n    return VALUE_{i}\n"
        for i in range(8)
    },
}
CHANGED_APART = (
    renamed()
    .replace("sorted(", "list(")
    .replace("reverse=True", "")
    .replace("amount -= amount * order.coupon.rate", "pass")
)
EDITS = [  # (what, the files written, whether the report changes)
    ("a copy added", {"c.py": module(UNRELATED[2], near_copy())}, True),
    ("a copy changed apart", {"b.py": module(UNRELATED[1], CHANGED_APART)}, True),
    ("the copy changed back", {"b.py": module(UNRELATED[1], renamed())}, True),
    (
        "a copy removed",
        {"d.py": module(UNRELATED[0].replace("parse_settings", "read_settings"))},
        True,
    ),
    ("an unrelated file edited", {"pkg/m3.py": "VALUE_3 = 33\n"}, False),
    ("a copy removed from the original's file", {"a.py": module(UNRELATED[0])}, True),
]


def scan(root: pathlib.Path, cache: pathlib.Path) -> ScanResult:
    config = ScanConfig()
    with Store(str(cache)) as store:
        return run_scan(str(root), list_files(str(root), config), config, store=store, jobs=1)


def report(result: ScanResult) -> str:
    doc = result.to_json()
    summary = doc["summary"]
    return json.dumps(
        [doc["findings"], summary["filtered"], summary["candidates"], summary["snippets"]],
        sort_keys=True,
        indent=1,
    )


def copied_paths(result: ScanResult) -> set[frozenset[str]]:
    return {frozenset(loc.path for loc in f.locations) for f in result.findings}


def test_each_one_file_rescan_equals_a_cold_scan(tmp_path: pathlib.Path) -> None:
    root = write_tree(tmp_path / "repo", FILES)
    warm = tmp_path / "warm"
    before = report(scan(root, warm))
    for n, (what, change, moves) in enumerate(EDITS):
        write_tree(root, change)
        again = scan(root, warm)
        assert not again.cached, what
        cold = scan(root, tmp_path / f"cold-{n}")
        assert report(again) == report(cold), what
        # the edit changed what is found (or not): the comparison is about something
        now = report(again)
        assert (now != before) == moves, what
        before = now


def test_a_rescan_after_a_rescan_forgets_a_removed_copy(tmp_path: pathlib.Path) -> None:
    """Two rescans in a row: the second must not bring back what the first removed."""
    root = write_tree(tmp_path / "repo", FILES)
    warm = tmp_path / "warm"
    scan(root, warm)
    write_tree(root, {"b.py": module(UNRELATED[1])})
    first = scan(root, warm)
    assert not any("b.py" in group for group in copied_paths(first))
    write_tree(root, {"pkg/m1.py": "VALUE_1 = 11\n"})
    second = scan(root, warm)
    assert not any("b.py" in group for group in copied_paths(second))
    assert report(second) == report(scan(root, tmp_path / "cold"))
