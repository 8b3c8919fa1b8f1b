"""Hostile inputs, round 2 (issue 24): every file the CLI reads, every parameter, atomic output.

One test per failure of the issue (numbers in the names are its rows), each with the real thing
(a device, a named pipe, a symlink out of a tree, a full disk when the test may mount one) and the
real command in a subprocess with a memory limit and a time-out. The helpers new with the issue
are imported in the tests that use them, so that the suite runs against the code before it.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from hostile import BODY, git, run_cli

from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric import statistics
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.statistics import CorpusCounts, resample_indices
from crystal_lsp.text.fingerprints import content_sha

PAIR = {"hypothesis": "def add(a, b):\n    return a + b\n", "references": ["def add(x, y): pass\n"]}
DEEP = "[" * 100_000


def _one_line_error(done: subprocess.CompletedProcess[bytes], *needles: str) -> str:
    """The single stderr line of a usage error (exit 2), checked for ``needles``."""
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    assert done.returncode == 2, done.stderr.decode(errors="replace")[-2000:]
    assert len(lines) == 1, lines
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _pairs(folder: Path, count: int = 20) -> Path:
    path = folder / "good.jsonl"
    path.write_text("".join(json.dumps(PAIR) + "\n" for _ in range(count)), encoding="utf-8")
    return path


# --- 5: --bootstrap range ------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["10000000", "1000000000", "-5"])
def test_05_bootstrap_out_of_range_is_a_usage_error(
    tmp_path: Path, cache: Path, value: str
) -> None:
    good = _pairs(tmp_path)
    done = run_cli(["score", "--jsonl", str(good), f"--bootstrap={value}"], tmp_path, cache)
    assert done.returncode == 2, done.stderr
    # argparse's usage, then its one error line
    assert b"error: argument --bootstrap:" in done.stderr.splitlines()[-1]


@pytest.mark.parametrize(
    "args",
    [
        ["score", "--example", "--max-n", "100000"],
        ["score", "--example", "-k", "-5"],
        ["score", "--example", "--keep", "0"],
        ["sset", "build", ".", "-k", "-1", "-o", "s.json"],
        ["sset", "show", "s.json", "--top", "-1"],
        ["disting", "d.jsonl", "--n", "0"],
    ],
)
def test_05_every_parameter_has_a_range(tmp_path: Path, cache: Path, args: list[str]) -> None:
    done = run_cli(args, tmp_path, cache)
    assert done.returncode == 2, done.stderr
    assert b": must be in " in done.stderr.splitlines()[-1]


def test_05_bootstrap_draws_in_blocks_give_the_same_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    hyps = [["a", "b", "c", str(i % 3)] for i in range(7)]
    refs = [[["a", "b", "c", str(i % 2)]] for i in range(7)]
    from crystal_lsp.metric.statistics import resampled_scores

    corpus = CorpusCounts(CrystalBLEU(None, max_n=2), hyps, refs)
    whole = corpus.resampled(resample_indices(len(corpus), 53, 11))
    monkeypatch.setattr(statistics, "BLOCK_VALUES", 3 * corpus.rows.shape[1] * len(corpus))
    (blocked,) = resampled_scores([corpus], 53, 11)  # blocks of 3 resamples
    assert np.array_equal(whole, blocked)


# --- 6: --max-bytes holds for JSONL corpora ----------------------------------------------------


def test_06_a_jsonl_item_over_max_bytes_is_refused(tmp_path: Path, cache: Path) -> None:
    big = tmp_path / "big.jsonl"
    item = {"hypothesis": "x" + " " * 3_000_000, "references": ["x"]}
    big.write_text(json.dumps(PAIR) + "\n" + json.dumps(item) + "\n", encoding="utf-8")
    done = run_cli(["score", "--jsonl", str(big)], tmp_path, cache)
    _one_line_error(done, "big.jsonl: line 2 is too long", "--max-bytes")
    # a limit of the user's choice, or none
    done = run_cli(
        ["score", "--jsonl", str(big), "--max-bytes", "0", "--lang", "py"], tmp_path, cache
    )
    assert done.returncode == 0, done.stderr
    done = run_cli(
        ["score", "--jsonl", str(_pairs(tmp_path)), "--max-bytes", "50"], tmp_path, cache
    )
    _one_line_error(done, "line 1 is too long")


# --- 7: devices and named pipes as input files ----------------------------------------------------


def _inputs(tmp_path: Path, bad: str) -> list[tuple[str, list[str]]]:
    good = str(_pairs(tmp_path))
    return [
        ("crystal_lsp", ["score", "--jsonl", good, "--sset", bad]),
        ("crystal_lsp", ["sset", "show", bad]),
        ("crystal_lsp", ["scan", ".", "--no-progress", "--baseline", bad]),
        ("crystal_lsp", ["score", "--jsonl", bad]),
        ("crystal_lsp_hooks.clone_check", ["--all", "--baseline", bad]),
    ]


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_07_devices_and_pipes_are_refused_unread(
    repo: Path, tmp_path: Path, cache: Path, kind: str
) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    bad = "/dev/zero"
    if kind == "fifo":
        bad = str(tmp_path / "pipe.json")
        os.mkfifo(bad)
    for module, args in _inputs(tmp_path, bad):
        done = run_cli(args, repo, cache, module=module, timeout=60)
        reason = "a device" if kind == "device" else "a named pipe"
        _one_line_error(done, f"not a regular file ({reason})")


# --- 8: sset build does not follow symlinks out of the tree --------------------------------------


@pytest.mark.parametrize("command", ["sset", "score"])
def test_08_corpus_trees_do_not_follow_symlinks_out(
    tmp_path: Path, cache: Path, command: str
) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("TOPSECRETTOKEN = 'nologin'\n" * 50, encoding="utf-8")
    tree = tmp_path / "hd"
    tree.mkdir()
    (tree / "a.py").write_text(BODY, encoding="utf-8")
    os.symlink(secret, tree / "d.py")
    os.symlink("a.py", tree / "inside.py")  # stays in the tree: followed
    out = tmp_path / "s.json"
    if command == "sset":
        args = ["sset", "build", str(tree), "-k", "100000", "-o", str(out), "--format", "json"]
    else:  # score --corpus builds S from the tree the same way
        hyp = tmp_path / "h.py"
        hyp.write_text(BODY, encoding="utf-8")
        args = ["score", "--hyp", str(hyp), "--ref", str(hyp), "--corpus", str(tree), "-k", "9999"]
    done = run_cli(args, tmp_path, cache)
    assert done.returncode == 0, done.stderr
    assert b"symlink to a file outside the folder" in done.stderr
    if command == "sset":
        saved = out.read_text(encoding="utf-8")
        assert "TOPSECRETTOKEN" not in saved and "nologin" not in saved
        assert json.loads(done.stdout)["documents"] == 2  # a.py and the link inside the tree


# --- 9: output files: atomic, and a full disk is one line ---------------------------------------


@pytest.mark.parametrize("target", ["/dev/full", "/proc/version"])
def test_09_unwritable_outputs_are_one_line(
    repo: Path, cache: Path, tmp_path: Path, target: str
) -> None:
    for args in (
        ["scan", ".", "--no-progress", "-o", target],
        ["sset", "build", ".", "--lang", "python", "-o", target],
        ["score", "--jsonl", str(_pairs(tmp_path)), "--lang", "py", "--per-item", target],
    ):
        done = run_cli(args, repo, cache)
        _one_line_error(done, target, "cannot write")


def test_09_a_failed_write_keeps_the_old_file_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    from crystal_lsp.text import datafiles
    from crystal_lsp.text.datafiles import write_atomic

    target = tmp_path / "report.json"
    target.write_text("old", encoding="utf-8")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(datafiles.os, "fsync", full)
        with pytest.raises(CrystalError, match=r"--output .*report.json: cannot write \(No space"):
            write_atomic(str(target), b"new", "--output")
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]
    write_atomic(str(target), b"new", "--output")
    assert target.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]
    # a symlink keeps pointing at the file, which gets the new content
    os.symlink("report.json", tmp_path / "link.json")
    write_atomic(str(tmp_path / "link.json"), b"newer")
    assert (tmp_path / "link.json").is_symlink() and target.read_bytes() == b"newer"


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    return done.returncode == 0


def test_09_outputs_on_a_full_disk(repo: Path, cache: Path, tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    if os.geteuid() != 0 or not _mount_tmpfs(disk, "64k"):
        pytest.skip("cannot mount a small file system here")
    try:
        for i in range(30):
            (repo / f"m{i}.py").write_text(BODY.replace("orders", f"orders{i}"), encoding="utf-8")
        baseline = disk / "baseline.json"
        done = run_cli(
            ["scan", ".", "--no-progress", "--baseline", str(baseline), "--update-baseline"],
            repo,
            cache,
        )
        assert done.returncode == 0, done.stderr
        kept = baseline.read_bytes()
        fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
        try:  # fill the disk to the last block
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        for args in (
            ["scan", ".", "--no-progress", "--baseline", str(baseline), "--update-baseline"],
            ["scan", ".", "--no-progress", "--format", "json", "-o", str(disk / "r.json")],
        ):
            done = run_cli(args, repo, cache)
            _one_line_error(done, "cannot write (No space left on device)")
        assert baseline.read_bytes() == kept
        assert sorted(p.name for p in disk.iterdir()) == ["baseline.json", "filler"]
    finally:
        subprocess.run(["umount", str(disk)], check=False)


# --- 12: JSON nesting --------------------------------------------------------------------------


def test_12_deep_json_is_one_line_everywhere(tmp_path: Path, cache: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP, encoding="utf-8")
    deep_lines = tmp_path / "deep.jsonl"
    deep_lines.write_text(json.dumps(PAIR) + "\n" + DEEP + "\n", encoding="utf-8")
    deep_items = tmp_path / "items.jsonl"
    deep_items.write_text(DEEP + "\n", encoding="utf-8")
    dataset = tmp_path / "pairs"
    dataset.mkdir()
    code = [{"id": i, "lang": "python", "code": BODY.replace("orders", f"o{i}")} for i in range(4)]
    (dataset / "code.jsonl").write_text("".join(json.dumps(c) + "\n" for c in code))
    pair = {"a": 0, "b": 1, "label": 1, "split": "test"}
    (dataset / "pairs.jsonl").write_text(json.dumps(pair) + "\n" + DEEP + "\n")
    for args, where in (
        (["score", "--jsonl", str(deep_lines)], "deep.jsonl:2"),
        (["score", "--jsonl", str(_pairs(tmp_path)), "--sset", str(deep)], "deep.json"),
        (["sset", "show", str(deep)], "deep.json"),
        (["disting", str(dataset), "--lang", "python"], "pairs.jsonl:2"),
        (["sset", "build", str(deep_items), "--lang", "python", "-o", "s.json"], "items.jsonl"),
    ):
        done = run_cli(args, tmp_path, cache)
        _one_line_error(done, where, "nested deeper than 64")


def test_12_depth_and_decompression_bounds() -> None:
    from crystal_lsp.text.datafiles import check_depth, gunzip

    check_depth('{"a": [[1, 2], {"b": "[[[[[[[[[[[[[[[["}]}', 4)  # brackets in strings do not count
    with pytest.raises(ValueError, match="deeper than 3"):
        check_depth('{"a": [[[1]]]}', 3)
    with pytest.raises(ValueError, match="deeper than 3"):
        check_depth('"\\"" [[[[', 3)  # an escaped quote does not end the string
    bomb = gzip.compress(b"\0" * 5_000_000)
    assert len(gunzip(bomb, 5_000_000)) == 5_000_000
    with pytest.raises(ValueError, match="more than 1,000,000 bytes"):
        gunzip(bomb, 1_000_000)
    with pytest.raises(ValueError, match="truncated"):
        gunzip(bomb[: len(bomb) // 2], 0)


# --- 15: a change that keeps size and mtime ----------------------------------------------------


def test_15_a_rewrite_that_restores_size_and_mtime_is_seen(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    path = root / "a.py"
    path.write_text(BODY, encoding="utf-8")
    old = os.stat(path).st_mtime_ns - 3600 * 10**9  # an hour old: trusted without reading
    os.utime(path, ns=(old, old))
    with Store(str(tmp_path / "cache")) as store:
        RepoIndex(str(root), ScanConfig(), store, jobs=1).refresh(["a.py"])
        hashed = os.stat(path)
        new = BODY.replace("orders", "ordres").encode()
        while os.stat(path).st_ctime_ns == hashed.st_ctime_ns:  # a clock tick later, surely
            time.sleep(0.01)
            path.write_bytes(new)
            os.utime(path, ns=(old, old))
        assert (os.stat(path).st_size, os.stat(path).st_mtime_ns) == (len(BODY), old)
        snap = RepoIndex(str(root), ScanConfig(), store, jobs=1).snapshot(["a.py"])
    assert snap.contents["a.py"][0] == content_sha(new)
