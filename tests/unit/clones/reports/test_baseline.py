"""Baseline files: format, errors, and `scan --update-baseline` / `--baseline` end to end."""

from __future__ import annotations

import json
import pathlib

import pytest
from scan_samples import ORIGINAL, UNRELATED, module, near_copy, renamed, write_tree

from crystal_lsp import CrystalError
from crystal_lsp.cli.main import main
from crystal_lsp.clones.findings import Finding, Location, Pair
from crystal_lsp.clones.reports.baseline import (
    FORMAT,
    load_baseline,
    without_baselined,
    write_baseline,
)


def finding(path_a: str, path_b: str, norm: str = "n") -> Finding:
    locs = [
        Location(path, 3, 1, 20, 5, "function", "f", 80, "s", norm) for path in (path_a, path_b)
    ]
    return Finding("python", locs, [Pair(0, 1, 0.9, 0.5)])


def test_write_and_load(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "baseline.json"
    findings = [finding("a.py", "b.py"), finding("c.py", "d.py")]
    assert write_baseline(str(target), findings) == 2
    doc = json.loads(target.read_text())
    assert doc["format"] == FORMAT and doc["version"] == 1
    assert [row["id"] for row in doc["findings"]] == sorted(f.id for f in findings)
    assert doc["findings"][0]["score"] == 0.9
    assert {tuple(row["locations"]) for row in doc["findings"]} == {
        ("a.py:3", "b.py:3"),
        ("c.py:3", "d.py:3"),
    }
    assert load_baseline(str(target)) == {f.id for f in findings}
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.json"]  # no temporary file left
    assert without_baselined([*findings, finding("e.py", "f.py")], {findings[0].id}) == [
        findings[1],
        finding("e.py", "f.py"),
    ]
    assert write_baseline(str(target), []) == 0
    assert load_baseline(str(target)) == set()


def test_ids_ignore_line_moves_but_not_new_copies() -> None:
    moved = finding("a.py", "b.py")
    moved_locs = [
        Location(loc.path, 30, 1, 47, 5, loc.kind, loc.name, loc.tokens, "s2", loc.norm_sha)
        for loc in moved.locations
    ]
    assert Finding("python", moved_locs, moved.pairs).id == moved.id
    assert finding("a.py", "c.py").id != moved.id
    assert finding("a.py", "b.py", norm="other").id != moved.id


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(None, "no such baseline file", id="missing"),
        pytest.param("{not json", "not a readable baseline file", id="bad-json"),
        pytest.param(b"\xff\xfe\x00", "not a readable baseline file", id="not-utf8"),
        pytest.param("[]", "not a crystal-lsp baseline file", id="list"),
        pytest.param(
            '{"format": "other", "findings": []}', "not a crystal-lsp baseline", id="format"
        ),
        pytest.param(
            f'{{"format": "{FORMAT}", "findings": 3}}', "not a crystal-lsp", id="findings"
        ),
    ],
)
def test_bad_baseline_files(
    tmp_path: pathlib.Path, content: str | bytes | None, message: str
) -> None:
    target = tmp_path / "b.json"
    if isinstance(content, bytes):
        target.write_bytes(content)
    elif content is not None:
        target.write_text(content)
    with pytest.raises(CrystalError, match=message):
        load_baseline(str(target))


def test_rows_without_id_are_ignored(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "b.json"
    target.write_text(json.dumps({"format": FORMAT, "findings": [{"id": "abc"}, {"x": 1}, 5]}))
    assert load_baseline(str(target)) == {"abc"}


# --- end to end ------------------------------------------------------------------------------


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_update_baseline_then_only_new_copies(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_tree(
        tmp_path / "repo",
        {"a.py": module(ORIGINAL, UNRELATED[0]), "b.py": module(UNRELATED[1], renamed())},
    )
    baseline = tmp_path / "baseline.json"
    code, out, err = run(
        ["scan", str(root), "--update-baseline", "--baseline", str(baseline)], capsys
    )
    assert code == 0 and out == ""
    assert f"wrote 1 findings to the baseline {baseline}" in err
    assert len(load_baseline(str(baseline))) == 1

    code, out, _ = run(["scan", str(root), "--baseline", str(baseline)], capsys)
    assert code == 0
    assert "0 copies worth a look" in out and "1 baselined" in out
    code, out, _ = run(["scan", str(root), "--baseline", str(baseline), "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["findings"] == [] and doc["summary"]["baselined"] == 1

    # moving the baselined code within its file keeps it baselined
    (root / "a.py").write_text("\n\n\n" + module(UNRELATED[0], ORIGINAL))
    assert run(["scan", str(root), "--baseline", str(baseline)], capsys)[0] == 0

    # a new copy is reported: an unrelated new clone class, and a third copy of the old one
    write_tree(
        root, {"c.py": module(UNRELATED[2].replace("transpose_matrix", "flip"), UNRELATED[2])}
    )
    code, out, _ = run(["scan", str(root), "--baseline", str(baseline), "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 1 and len(doc["findings"]) == 1 and doc["summary"]["baselined"] == 1
    assert [loc["path"] for loc in doc["findings"][0]["locations"]] == ["c.py", "c.py"]
    write_tree(root, {"d.py": module(near_copy())})
    code, out, _ = run(["scan", str(root), "--baseline", str(baseline), "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["summary"]["baselined"] == 0
    assert sorted(len(f["locations"]) for f in doc["findings"]) == [2, 3]


def test_update_baseline_needs_a_file(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["scan", str(tmp_path), "--update-baseline"], capsys)
    assert code == 2 and err == "crystal-lsp: error: --update-baseline needs --baseline FILE\n"


def test_missing_baseline_is_a_usage_error(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["scan", str(tmp_path), "--baseline", str(tmp_path / "nope.json")], capsys)
    assert code == 2 and out == ""
    assert "no such baseline file (create it with --update-baseline)" in err
    assert len(err.strip().splitlines()) == 1
