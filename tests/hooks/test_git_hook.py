"""``hooks/pre-commit``, the plain git hook: installed into ``.git/hooks`` and run by git itself.

Git sends a hook's standard output to its standard error, so the findings are read there.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from hook_repo import REPO_DIR, Repo
from hook_samples import LOAD_SETTINGS, UNRELATED

SCRIPT = REPO_DIR / "hooks" / "pre-commit"


def _install(repo: Repo) -> None:
    target = repo.path / ".git" / "hooks" / "pre-commit"
    target.parent.mkdir(exist_ok=True)
    shutil.copy(SCRIPT, target)
    target.chmod(0o755)


def _commit(
    repo: Repo, *args: str, path: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ)
    environ["PATH"] = path or os.path.dirname(sys.executable) + os.pathsep + environ["PATH"]
    environ.update(env)
    return subprocess.run(
        ["git", "commit", "-q", "-m", "change", *args],
        cwd=repo.path,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )


def _head(repo: Repo) -> str:
    return repo.git("rev-parse", "HEAD").strip()


def test_script_is_posix_sh_and_executable() -> None:
    assert SCRIPT.read_text().startswith("#!/bin/sh\n")
    assert os.access(SCRIPT, os.X_OK)
    subprocess.run(["sh", "-n", str(SCRIPT)], check=True)


def test_commit_with_a_copy_is_refused(repo: Repo) -> None:
    _install(repo)
    before = _head(repo)
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    done = _commit(repo)
    assert done.returncode != 0
    assert "app/config.py:4: function parse_config copied to settings.py:1" in done.stderr
    assert _head(repo) == before


def test_commit_of_unrelated_code_goes_through(repo: Repo) -> None:
    _install(repo)
    before = _head(repo)
    repo.write("graph.py", UNRELATED)
    repo.add("graph.py")
    done = _commit(repo)
    assert done.returncode == 0, done.stderr
    assert _head(repo) != before


def test_commit_all_checks_the_temporary_index(repo: Repo) -> None:
    _install(repo)
    repo.write("settings.py", UNRELATED)
    repo.add("settings.py")
    repo.commit("unrelated")
    repo.write("settings.py", LOAD_SETTINGS)  # tracked, modified, not staged
    done = _commit(repo, "-a")
    assert done.returncode != 0
    assert "app/config.py:4: function parse_config copied to " in done.stderr
    done = _commit(repo, "settings.py")  # `git commit <paths>` uses another temporary index
    assert done.returncode != 0


def test_options_come_from_the_environment(repo: Repo) -> None:
    _install(repo)
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    done = _commit(repo, CRYSTAL_CLONES_ARGS="--warn-only --threshold 0.9")
    assert done.returncode == 0, done.stderr
    assert "app/config.py:4: function parse_config copied to " in done.stderr


def test_explicit_interpreter(repo: Repo, tmp_path: pathlib.Path) -> None:
    _install(repo)
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    done = _commit(repo, path="/usr/bin:/bin", CRYSTAL_CLONES_PYTHON=sys.executable)
    assert done.returncode != 0
    assert "app/config.py:4: function parse_config copied to " in done.stderr


def test_not_installed_warns_and_lets_the_commit_through(repo: Repo) -> None:
    bare_path = "/usr/bin:/bin"
    for python in ("python3", "python"):
        found = shutil.which(python, path=bare_path)
        if (
            found
            and subprocess.run(
                [found, "-c", "import crystal_lsp_hooks"], capture_output=True
            ).returncode
            == 0
        ):
            pytest.skip("crystal-lsp is installed for the system Python")
    if shutil.which("crystal-clones", path=bare_path):
        pytest.skip("crystal-clones is installed system-wide")
    _install(repo)
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    done = _commit(repo, path=bare_path, CRYSTAL_CLONES_REQUIRED="1")
    assert done.returncode != 0
    assert "not installed" in done.stderr
    done = _commit(repo, path=bare_path)
    assert done.returncode == 0
    assert "not installed" in done.stderr
