"""A real editor as the client: headless Neovim 0.7 (Debian's ``neovim``) and crystal-lsp.

Neovim starts the server, opens a file with a planted duplicate, and must receive the
diagnostic with its related location. Skipped when nvim is missing, except in CI (CI=true),
where a missing nvim is a failure (tests/ci/system-packages.sh installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scan_samples import MERGE_INTERVALS

HERE = Path(__file__).resolve().parent
NVIM = shutil.which("nvim")
IN_CI = os.environ.get("CI") == "true"

ORIGINAL = MERGE_INTERVALS.split("    total = 0\n")[0] + "    return merged\n"

PLANTED = '''\
import sys


def combine(ranges):
    """Combine ranges that overlap."""
    items = sorted(ranges, key=lambda item: item[0])
    out = []
    for lo, hi in items:
        if out and lo <= out[-1][1]:
            prev_lo, prev_hi = out[-1]
            out[-1] = (prev_lo, max(prev_hi, hi))
        else:
            out.append((lo, hi))
    return out
'''


def _run_nvim(
    tmp_path: Path,
    script: str,
    open_file: str = "planted.py",
    files: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    before: Path | None = None,
    git: bool = False,
) -> tuple[dict[str, Any], Path, int]:
    """Neovim on the planted workspace with a Lua script; its JSON line, the root, exit code."""
    if NVIM is None:
        if IN_CI:
            pytest.fail("nvim is not installed (tests/ci/system-packages.sh installs neovim)")
        pytest.skip("nvim is not installed (apt-get install neovim)")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "original.py").write_text(ORIGINAL, encoding="utf-8")
    (root / "planted.py").write_text(PLANTED, encoding="utf-8")
    for rel, text in (files or {}).items():
        (root / rel).write_text(text, encoding="utf-8")
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = {
        **os.environ,
        **(env or {}),
        "LSP_CMD": f"{sys.executable} -m crystal_lsp serve",
        "LSP_ROOT": str(root),
        "LSP_TIMEOUT_MS": "60000",
        "CRYSTAL_LSP_CACHE_DIR": str(tmp_path / "cache"),
        "GIT_CEILING_DIRECTORIES": str(tmp_path),
        "HOME": str(tmp_path),  # --clean, and no user state either
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    first = ["--cmd", f"luafile {before}"] if before else []
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "--clean",
            *first,
            "-c",
            f"luafile {HERE / script}",
            str(root / open_file),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=root,
    )
    lines = [line for line in proc.stdout.strip().splitlines() if line.startswith("{")]
    assert lines, f"no output from nvim (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(lines[-1]), root, proc.returncode


def test_neovim_receives_the_duplicate_with_its_related_location(tmp_path: Path) -> None:
    report, root, code = _run_nvim(tmp_path, "lsp_diag.lua")
    assert code == 0 and report["ok"], report
    [diagnostic] = report["diagnostics"]
    assert diagnostic["source"] == "crystal" and diagnostic["code"] == "near-duplicate"
    assert diagnostic["lnum"] == 3  # the planted copy's def line (0-based)
    assert "original.py:1" in diagnostic["message"]
    assert diagnostic["severity"] == 3  # vim.diagnostic.severity.INFO
    [raw] = report["raw"]
    # the other copy first; a function copied whole is underlined on its def line, and its own
    # full range comes last
    related, own = raw["relatedInformation"]
    assert related["location"]["uri"] == (root / "original.py").as_uri()
    assert related["location"]["range"]["start"] == {"line": 0, "character": 0}
    assert (
        own["message"].startswith("this copy: ") and own["location"]["range"]["start"]["line"] == 3
    )


def _readme_snippet() -> str:
    """The Lua block of the README's Neovim section, as a user copies it."""
    readme = (HERE.parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Neovim\n") :]
    return section[section.index("```lua\n") + 7 : section.index("```\n", section.index("```lua"))]


def test_the_readmes_neovim_snippet_works_as_written(tmp_path: Path) -> None:
    """The README's block, loaded unchanged, starts crystal-lsp from PATH at the git root of
    the opened file (Debian's Neovim 0.7 has no vim.fs and no vim.lsp.start)."""
    snippet = tmp_path / "snippet.lua"
    snippet.write_text(_readme_snippet(), encoding="utf-8")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    report, root, code = _run_nvim(
        tmp_path, "lsp_readme.lua", env={"PATH": path}, before=snippet, git=True
    )
    assert code == 0 and report["ok"], report
    assert report["root"] == str(root)
    [diagnostic] = report["diagnostics"]
    assert diagnostic["lnum"] == 3 and "original.py:1" in diagnostic["message"]


def test_neovim_07_is_told_where_the_other_copy_is(tmp_path: Path) -> None:
    """No window/showDocument in 0.7: the server says path:line; init_options {} is no options."""
    report, _, code = _run_nvim(tmp_path, "lsp_actions.lua")
    assert code == 0 and report["ok"], report
    assert report["titles"][0] == "Go to the other copy (original.py:1)"
    assert report["result"]["shown"] is False and report["result"]["location"] == "original.py:1"
    messages = report["messages"]
    assert "crystal: the other copy is at original.py:1" in messages
    assert not [m for m in messages if "initializationOptions" in m]


NOTES = '''\
"""Notes kept while working."""

LIMIT = 10
'''

COPY = (
    ORIGINAL.replace("merge_intervals", "join_spans")
    .replace("intervals", "spans")
    .replace("ordered", "by_start")
)
NEW = '''\
def word_counts(text):
    """How often each word occurs, most frequent first."""
    counts = {}
    for word in text.lower().split():
        counts[word.strip(".,;:!?")] = counts.get(word.strip(".,;:!?"), 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
'''


def test_neovim_gets_the_lens_of_pasted_blocks_and_the_diff_recipe(tmp_path: Path) -> None:
    """A pasted renamed copy and a new function: lenses through textDocument/codeLens; the
    copy's lens runs docs/neovim/crystal-lsp.lua, which opens both copies in diff mode."""
    (tmp_path / "copy.txt").write_text("\n" + COPY, encoding="utf-8")
    (tmp_path / "new.txt").write_text("\n" + NEW, encoding="utf-8")
    recipe = HERE.parents[1] / "docs" / "neovim" / "crystal-lsp.lua"
    report, _, code = _run_nvim(
        tmp_path,
        "lsp_lens.lua",
        open_file="notes.py",
        files={"notes.py": NOTES},
        env={
            "CRYSTAL_RECIPE": str(recipe),
            "PASTE_COPY": str(tmp_path / "copy.txt"),
            "PASTE_NEW": str(tmp_path / "new.txt"),
        },
    )
    assert code == 0 and report["ok"], report
    copy, new = report["copy"], report["new"]
    assert copy["title"].startswith("≈ renamed copy of original.py:1-11 (function merge_intervals)")
    assert copy["line"] == NOTES.count("\n") + 1 and copy["command"] == "crystal.compare"
    assert new["title"].startswith("new code")
    assert new["line"] == NOTES.count("\n") + 1 + COPY.count("\n") + 1
    diff = report["diff"]
    assert diff["windows"] == 2 and all(side["diff"] for side in diff["sides"])
    left, right = diff["sides"]  # the other copy on the left, the pasted one on the right
    assert left["lines"] == ORIGINAL.rstrip("\n").split("\n")
    assert right["lines"] == COPY.rstrip("\n").split("\n")
