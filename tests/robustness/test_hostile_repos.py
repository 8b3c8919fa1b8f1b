"""Hostile repositories: what a careless or malicious work tree does to scan and hook.

One test per case of issue 14 (numbers in the names), each with the real thing on disk.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hostile import BODY, BODY_LINES, git, run_cli

from crystal_lsp.text.sources import SkippedFile, read_bytes, read_source


def _json(done: subprocess.CompletedProcess[bytes]) -> dict:
    assert done.returncode in (0, 1), done.stderr.decode(errors="replace")
    return json.loads(done.stdout)


def _skipped(doc: dict) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in doc["skipped"]}


# --- 1, 5: symlinks to devices and out of the tree ---------------------------------------------


def test_01_committed_symlink_to_dev_zero_is_skipped(repo: Path, cache: Path) -> None:
    os.symlink("/dev/zero", repo / "z.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "zero")
    doc = _json(run_cli(["scan", ".", "--format", "json", "--no-progress"], repo, cache))
    assert _skipped(doc) == {"z.py": "symlink to a file outside the folder"}
    hook = run_cli(["--all"], repo, cache, module="crystal_lsp_hooks.clone_check")
    assert hook.returncode == 0, hook.stderr
    assert b"not checked z.py: symlink to a file outside the folder" in hook.stderr


def test_01_devices_are_refused_unread() -> None:
    with pytest.raises(SkippedFile, match=r"not a regular file \(a device\)"):
        read_bytes("/dev/zero")
    with pytest.raises(SkippedFile, match="symlink to a file outside the folder"):
        read_bytes("/dev/stdin", within="/tmp")


def test_01_size_limit_holds_for_what_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    big.write_bytes(b"x = 1\n" * 100)
    with pytest.raises(SkippedFile, match="too large"):
        read_bytes(big, max_bytes=50)
    assert len(read_bytes(big, max_bytes=600)) == 600


def test_05_symlink_out_of_the_tree_is_never_read(repo: Path, tmp_path: Path, cache: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text(BODY.replace("orders", "TOPSECRETTOKEN"), encoding="utf-8")
    os.symlink(secret, repo / "x.py")
    (repo / "b.py").write_text(BODY.replace("orders", "purchases"), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "leak")
    done = run_cli(["scan", ".", "--format", "json", "--show-ngrams", "--no-progress"], repo, cache)
    doc = _json(done)
    assert _skipped(doc) == {"x.py": "symlink to a file outside the folder"}
    assert b"TOPSECRETTOKEN" not in done.stdout
    assert all("x.py" not in {loc["path"] for loc in f["locations"]} for f in doc["findings"])
    # a symlink that stays inside the folder is followed
    os.remove(repo / "x.py")
    os.symlink("b.py", repo / "x.py")
    doc = _json(run_cli(["scan", ".", "--format", "json", "--no-progress"], repo, cache))
    assert "x.py" not in _skipped(doc)


# --- 3: named pipes ----------------------------------------------------------------------------


def test_03_named_pipe_outside_git_does_not_block(tmp_path: Path, cache: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "a.py").write_text(BODY, encoding="utf-8")
    os.mkfifo(folder / "p.py")
    done = run_cli(["scan", ".", "--format", "json", "--no-progress"], folder, cache, timeout=60)
    assert _skipped(_json(done)) == {"p.py": "not a regular file (a named pipe)"}
    with pytest.raises(SkippedFile, match="named pipe"):
        read_source(folder / "p.py")


# --- 4, 14: file names ---------------------------------------------------------------------------


def _odd_names(repo: Path) -> tuple[bytes, bytes]:
    latin = os.fsencode(repo) + b"/lat\xe9.py"
    escape = os.fsencode(repo) + b"/esc\x1b[31mred\nFAKE.py"
    with open(latin, "wb") as fh:
        fh.write(BODY.replace("orders", "purchases").encode())
    with open(escape, "wb") as fh:
        fh.write(BODY.replace("orders", "xs").encode())
    return latin, escape


def test_04_non_utf8_names_round_trip(repo: Path, cache: Path) -> None:
    _odd_names(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "names")
    for _ in range(2):  # cold, then from the cache
        doc = _json(run_cli(["scan", ".", "--format", "json", "--no-progress"], repo, cache))
        paths = {loc["path"] for f in doc["findings"] for loc in f["locations"]}
        assert "lat\udce9.py" in paths
    sarif = run_cli(["scan", ".", "--format", "sarif", "--no-progress"], repo, cache)
    assert sarif.returncode == 1, sarif.stderr
    assert b'"uri": "lat%E9.py"' in sarif.stdout
    # the hook, on a commit that adds another such file
    with open(os.fsencode(repo) + b"/n\xe9w.py", "wb") as fh:
        fh.write(BODY.replace("orders", "baskets").encode())
    git(repo, "add", "-A")
    hook = run_cli([], repo, cache, module="crystal_lsp_hooks.clone_check")
    assert hook.returncode == 1, hook.stderr
    assert b" copied to n\\xe9w.py:1 (" in hook.stdout


def test_14_untrusted_names_are_escaped_in_text(repo: Path, cache: Path) -> None:
    _odd_names(repo)
    done = run_cli(["scan", ".", "--no-progress"], repo, cache)
    assert done.returncode == 1, done.stderr
    out = done.stdout.decode("ascii")  # nothing but ASCII: escapes, not raw bytes
    assert "\x1b" not in out
    assert f'"esc\\x1b[31mred\\nFAKE.py":1-{BODY_LINES}' in out
    assert not any(line.startswith("FAKE.py") for line in out.splitlines())
    assert f"lat\\xe9.py:1-{BODY_LINES}" in out


# --- 10, 13: settings and output paths --------------------------------------------------------


@pytest.mark.parametrize(
    ("pyproject", "message"),
    [
        ("[tool.crystal-lsp]\nmax-df = 1e18\n", "max_df must be at most"),
        ("[tool.crystal-lsp]\nmax-df = 1000000000000000000\n", "max_df must be at most"),
        ('[tool.crystal-lsp]\ninclude = ["[z-a]"]\n', "include: invalid pattern '[z-a]'"),
        ('[tool.crystal-lsp]\ninclude = ["\\\\"]\n', "include: invalid pattern"),
        ("tool = 5\n", "[tool] must be a table"),
        ('tool = "x"\n', "[tool] must be a table"),
    ],
)
def test_10_13_bad_settings_exit_2_with_one_line(
    repo: Path, cache: Path, pyproject: str, message: str
) -> None:
    (repo / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    for module, args in (
        ("crystal_lsp", ["scan", ".", "--no-progress"]),
        ("crystal_lsp_hooks.clone_check", ["--all"]),
    ):
        done = run_cli(args, repo, cache, module=module, timeout=60)
        lines = done.stderr.decode().strip().splitlines()
        assert done.returncode == 2, done.stderr
        assert len(lines) == 1 and message in lines[0], lines


@pytest.mark.parametrize(
    "args",
    [
        ["scan", ".", "-o", "/missing/dir/x.json"],
        ["sset", "build", ".", "--lang", "python", "-o", "/missing/dir/s.json"],
        ["sset", "build", ".", "--lang", "python", "-o", "s.json", "--plot", "/missing/p.png"],
        ["scan", ".", "--baseline", "/missing/b.json", "--update-baseline"],
    ],
)
def test_13_output_paths_are_checked_before_the_work(
    repo: Path, cache: Path, args: list[str]
) -> None:
    done = run_cli([*args, "--no-progress"] if args[0] == "scan" else args, repo, cache)
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "does not exist" in lines[0], lines
    assert not cache.exists() or not any(cache.rglob("cache.db")), "work was done first"


def test_17_plot_without_matplotlib_fails_before_the_build(repo: Path, cache: Path) -> None:
    blocker = repo.parent / "nomatplotlib"
    blocker.mkdir()
    (blocker / "matplotlib.py").write_text("raise ImportError('not installed')\n")
    done = run_cli(
        ["sset", "build", ".", "--lang", "python", "-o", "s.json", "--plot", "p.png"],
        repo,
        cache,
        env={"PYTHONPATH": str(blocker)},
    )
    assert done.returncode == 2, done.stderr
    assert b"--plot needs the plot extra (not installed); install it with: " in done.stderr
    assert done.stderr.rstrip().endswith(b"[plot]'")
    assert not (repo / "s.json").exists()


# --- 16: git that refuses, bare repositories, undecodable content --------------------------------


def test_16_bare_repository_is_an_error(repo: Path, tmp_path: Path, cache: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    done = run_cli(["scan", ".", "--no-progress"], bare, cache)
    assert done.returncode == 2
    assert b"is a bare git repository" in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository to another user")
def test_16_dubious_ownership_is_reported_not_walked(repo: Path, cache: Path) -> None:
    subprocess.run(["chown", "-R", "nobody", str(repo)], check=True)
    for module, args in (("crystal_lsp", ["scan", "."]), ("crystal_lsp_hooks.clone_check", [])):
        done = run_cli(args, repo, cache, module=module, env={"HOME": str(cache)})
        assert done.returncode == 2, done.stderr
        assert b"dubious ownership" in done.stderr


def test_16_partly_undecodable_files_are_reported(repo: Path, cache: Path) -> None:
    (repo / "bad.py").write_bytes(b'def f(x):\n    s = "caf\xe9"\n    return x\n')
    done = run_cli(["scan", ".", "--no-progress"], repo, cache)
    assert b"1 file partly undecodable (bytes replaced by U+FFFD): bad.py (1)" in done.stdout
    doc = _json(run_cli(["scan", ".", "--format", "json", "--no-progress"], repo, cache))
    assert doc["undecodable"] == [{"path": "bad.py", "replaced": 1}]
