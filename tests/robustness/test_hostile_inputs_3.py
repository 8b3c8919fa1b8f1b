"""Hostile inputs, round 3 (issue 33): git listings, line ends, invisible characters in names.

One test per failure of the issue (numbers in the names are its items), each with the real thing
(a .gitignore that makes git's listing exponential, files whose lines end in ``\\r`` alone, names
holding zero-width characters) and the real command in a subprocess with a memory limit and a
time-out.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from hostile import BODY, git, run_cli

from crystal_lsp.clones.findings import display_path

# --- 6: zero-width and other invisible characters in names ---------------------------------------

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u2028", "\u3164"]


@pytest.mark.parametrize("char", INVISIBLE)
def test_06_invisible_characters_are_escaped_like_bidi_overrides(char: str) -> None:
    shown = display_path(f"zw{char}name.py")
    assert char not in shown and char.encode("unicode_escape").decode() in shown
    assert display_path("\u202egnp.py") == '"\\u202egnp.py"'
    assert display_path("plain é.py") == "plain é.py"


@pytest.mark.parametrize("fmt", ["text", "html", "sarif"])
def test_06_a_zero_width_name_is_escaped_in_every_report(
    repo: Path, cache: Path, tmp_path: Path, fmt: str
) -> None:
    name = "zw\u200bname.py"
    (repo / name).write_text(BODY, encoding="utf-8")
    out = tmp_path / f"report.{fmt}"
    done = run_cli(["scan", ".", "--format", fmt, "-o", str(out)], repo, cache)
    assert done.returncode == 1, done.stderr.decode(errors="replace")
    report = out.read_text(encoding="utf-8")
    if fmt == "sarif":
        messages = [r["message"]["text"] for r in json.loads(report)["runs"][0]["results"]]
        report = "\n".join(messages)
    assert "\u200b" not in report and "zw\\u200bname.py" in report


# --- 2: a .gitignore that makes git's listing of untracked files exponential ---------------------


def slow_listing_repo(root: Path) -> Path:
    """A repository where ``git ls-files --others --exclude-standard`` does not end in minutes."""
    (root / ".gitignore").write_text("a*" * 40 + "b\n", encoding="utf-8")
    (root / ("a" * 60 + ".py")).write_text("x = 1\n", encoding="utf-8")
    (root / "b.py").write_text(BODY, encoding="utf-8")
    git(root, "add", "a.py", "b.py")
    return root


def test_02_a_slow_git_listing_is_bounded_and_says_the_way_out(repo: Path, cache: Path) -> None:
    slow_listing_repo(repo)
    fast = {"CRYSTAL_LSP_GIT_TIMEOUT": "3"}
    done = run_cli(["scan", "."], repo, cache, env=fast, timeout=60)
    err = done.stderr.decode(errors="replace").strip().splitlines()
    assert done.returncode == 2 and len(err) == 1, err
    assert "git ls-files" in err[0] and "timed out after 3 s" in err[0]
    assert "--tracked-only" in err[0] and "CRYSTAL_LSP_GIT_TIMEOUT" in err[0]
    # the way out: tracked files only (the copy of a.py in b.py is found)
    done = run_cli(["scan", ".", "--tracked-only", "--format", "json"], repo, cache, env=fast)
    assert done.returncode == 1, done.stderr.decode(errors="replace")
    paths = {loc["path"] for f in json.loads(done.stdout)["findings"] for loc in f["locations"]}
    assert paths == {"a.py", "b.py"}
    (repo / "pyproject.toml").write_text("[tool.crystal-lsp]\ntracked-only = true\n")
    assert run_cli(["scan", "."], repo, cache, env=fast).returncode == 1


# --- 3: lines ending in \r alone, and mixed line ends ---------------------------------------------

MIXED_HEAD = "import os\r\n\r\nX = 1\rY = 2\nZ = 3\r\n\r\n\r"


def _lsp_line(text: str, needle: str) -> int:
    """The 1-based line of ``needle`` as the LSP (and editors) count: \\r\\n, \\r and \\n."""
    return len(re.findall(r"\r\n|\r|\n", text[: text.index(needle)])) + 1


def test_03_a_copy_with_cr_line_ends_is_found_at_the_lines_editors_show(
    repo: Path, cache: Path
) -> None:
    (repo / "b.py").write_bytes(BODY.replace("\n", "\r").encode())
    mixed = "# pad\n" * 3 + MIXED_HEAD + "\r\n".join(BODY.split("\n"))
    (repo / "c.py").write_bytes(mixed.encode())
    first = _lsp_line(mixed, "def compute_totals")
    assert first == 11 and mixed.encode().decode().splitlines().index(BODY.split("\n")[0]) == 10
    done = run_cli(["scan", ".", "--format", "json"], repo, cache)
    assert done.returncode == 1, done.stderr.decode(errors="replace")
    doc = json.loads(done.stdout)
    assert not doc["skipped"]
    [finding] = doc["findings"]
    where = {
        loc["path"]: (loc["start"]["line"], loc["end"]["line"]) for loc in finding["locations"]
    }
    last = BODY.count("\n")
    assert where == {"a.py": (1, last), "b.py": (1, last), "c.py": (first, first + last - 1)}


# --- also seen: a read-only warm cache (as CI restores it) ----------------------------------------


def test_a_read_only_warm_cache_is_read_and_nothing_written(repo: Path, tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(disk)], capture_output=True
    )
    if os.geteuid() != 0 or mounted.returncode != 0:
        pytest.skip("cannot mount a file system here")
    try:
        (repo / "b.py").write_text(BODY, encoding="utf-8")
        cache = disk / "cache"
        warm = run_cli(["scan", ".", "--format", "json"], repo, cache)
        assert warm.returncode == 1, warm.stderr
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        done = run_cli(["scan", ".", "--format", "json"], repo, cache)
        assert done.returncode == 1, done.stderr
        assert json.loads(done.stdout)["findings"] == json.loads(warm.stdout)["findings"]
        err = done.stderr.decode(errors="replace")
        assert err.count("reading it as it is, writing nothing") == 1, err[-2000:]
        assert "working in memory" not in err and "Traceback" not in err
    finally:
        subprocess.run(["umount", str(disk)], check=False)
