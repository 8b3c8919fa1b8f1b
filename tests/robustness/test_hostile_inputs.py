"""Pathological inputs and machines: nesting, globs, full and read-only disks, killed parents."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pathspec
import pytest
from hostile import BODY, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp.clones.globs import compile_globs
from crystal_lsp.clones.store import Store, is_damage
from crystal_lsp.text.entries import build_entry
from crystal_lsp.text.snippets import MAX_NESTING

# --- 8: unclosed braces --------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["{\n", "function f() {\n"])
def test_08_unclosed_braces_give_a_bounded_number_of_units(line: str) -> None:
    lines = 20_000
    entry = build_entry("a.js", line * lines, "javascript", min_tokens=5, min_lines=2)
    # before: one unit per brace, each to the end of the file (quadratic in size and time)
    assert len(entry.snippets) <= MAX_NESTING + 1
    assert sum(s.tokens for s in entry.snippets) <= (MAX_NESTING + 1) * len(line) * lines


def test_08_ordinary_nesting_is_unchanged() -> None:
    source = "function outer() {\n  function inner() {\n" + "    x = x + 1;\n" * 8 + "  }\n}\n"
    entry = build_entry("a.js", source, "javascript", min_tokens=5, min_lines=2)
    assert [s.name for s in entry.snippets] == ["outer", "inner"]


# --- 9: globs ----------------------------------------------------------------------------------


def test_09_pathological_glob_is_matched_in_bounded_time() -> None:
    code = (
        "from crystal_lsp.clones.globs import compile_globs\n"
        "spec = compile_globs(['a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'], 'exclude')\n"
        "assert not spec.match_file('a' * 250 + '.py')\n"
        "assert spec.match_file('d/' + 'a' * 40 + 'b')\n"
    )
    # pathspec's own regex needs minutes for this; ours a few microseconds
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


_GLOB_CHARS = st.sampled_from(["a", "b", "*", "?", "/", "**/", "[ab]", "[!a]", "."])
_NAME_CHARS = st.sampled_from(["a", "b", "c", "/", "."])


@settings(max_examples=400, deadline=None)
@given(
    patterns=st.lists(st.lists(_GLOB_CHARS, min_size=1, max_size=8).map("".join), max_size=3),
    names=st.lists(st.lists(_NAME_CHARS, min_size=1, max_size=10).map("".join), max_size=6),
    negate=st.booleans(),
)
def test_09_bounded_globs_match_exactly_like_pathspec(
    patterns: list[str], names: list[str], negate: bool
) -> None:
    if negate and patterns:
        patterns = [*patterns, "!" + patterns[0]]
    try:
        reference = pathspec.PathSpec.from_lines("gitignore", patterns)
    except Exception:
        return  # malformed for pathspec too (tested below)
    ours = compile_globs(patterns, "exclude")
    for name in names:
        expected = reference.match_file(name)
        assert (ours.match_file(name) if ours is not None else False) == expected, (
            patterns,
            name,
        )


def test_09_too_many_double_stars_is_an_error() -> None:
    from crystal_lsp.errors import CrystalError

    with pytest.raises(CrystalError, match="more than 3"):
        compile_globs(["**/a/**/b/**/c/**/d/**/e"], "exclude")


# --- 11: full and read-only caches -----------------------------------------------------------------


def test_11_disk_full_is_not_damage() -> None:
    assert not is_damage(sqlite3.OperationalError("database or disk is full"))
    assert not is_damage(sqlite3.OperationalError("attempt to write a readonly database"))
    assert is_damage(sqlite3.DatabaseError("file is not a database"))


def test_11_a_failing_write_keeps_the_cache(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(str(tmp_path / "c"))
    store.set("kept", {"v": 1})

    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store._cache, "set", full)
    with caplog.at_level(logging.WARNING):
        store.set("new", {"v": 2})
        store.set("newer", {"v": 3})
    assert store.get("kept") == {"v": 1}  # before: the whole cache was deleted
    assert store.write_failures == 2
    assert caplog.text.count("cannot write to the cache") == 1


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    return done.returncode == 0


def test_11_scan_on_a_full_disk_still_answers(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    if os.geteuid() != 0 or not _mount_tmpfs(disk, "96k"):
        pytest.skip("cannot mount a small file system here")
    try:
        corpus = tmp_path / "corpus"
        corpus.mkdir()
        for i in range(40):
            (corpus / f"m{i}.py").write_text(BODY.replace("orders", f"orders{i}"))
        (corpus / "dup.py").write_text(BODY.replace("orders", "purchases"))
        results = []
        for _ in range(2):
            done = run_cli(["scan", ".", "--no-progress"], corpus, disk / "cache")
            assert done.returncode == 1, done.stderr
            assert b"crystal-lsp: warning:" in done.stderr
            results.append(done.stdout)
        assert results[0] == results[1]
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_11_read_only_cache_is_used_from_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import diskcache

    Store(str(tmp_path / "c")).set("old", {"v": 1})

    def read_only(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(diskcache, "Cache", read_only)
    with caplog.at_level(logging.WARNING):
        store = Store(str(tmp_path / "c"))
        # issue 33: a warm cache that cannot be written is read as it is, nothing written
        assert store.read_only and not store.in_memory
        assert store.get("old") == {"v": 1}
        store.set("new", {"v": 2})
        store.delete("old")
    assert caplog.text.count("reading it as it is, writing nothing") == 1
    assert "cannot write to the cache" not in caplog.text
    monkeypatch.undo()
    assert Store(str(tmp_path / "c")).get("new") is None
    # a folder without a cache to read: memory for this run
    monkeypatch.setattr(diskcache, "Cache", read_only)
    with caplog.at_level(logging.WARNING):
        assert Store(str(tmp_path / "empty")).in_memory
    assert "working in memory" in caplog.text
    monkeypatch.undo()
    assert Store(str(tmp_path / "c")).get("old") == {"v": 1}  # nothing was deleted


# --- 12: workers of a killed parent ------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def test_12_workers_end_when_the_scan_is_killed(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(600):
        (corpus / f"m{i}.py").write_text(BODY.replace("orders", f"orders{i}") * 20)
    proc = subprocess.Popen(
        [sys.executable, "-m", "crystal_lsp", "scan", ".", "--no-progress", "--jobs", "2"],
        cwd=corpus,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "CRYSTAL_LSP_CACHE_DIR": str(tmp_path / "cache")},
    )
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None and len(workers) < 2:
        workers = _children(proc.pid)
        time.sleep(0.05)
    if proc.poll() is not None:
        pytest.fail("the scan ended before it started its workers")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)], "workers outlived their parent"
