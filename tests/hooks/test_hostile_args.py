"""File names that look like options never become options (issue 24, row 2).

pre-commit runs ``entry args... files...``: a staged file called ``--help`` or ``--warn-only``
came after the hook's options and was read as one (the hook passed with a clone staged). The
hook's args end with ``--`` (``.pre-commit-hooks.yaml``), and without ``--`` an option-like
argument that names a file is refused. The end-to-end test runs the real pre-commit with the
manifest's entry arguments on a repository holding such files.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
import yaml
from hook_repo import REPO_DIR, Repo
from hook_samples import LOAD_SETTINGS, UNRELATED

HOSTILE = ["--help", "-V", "--warn-only", "--output=x.py", "--baseline=copy.py"]


def _manifest_hook() -> dict[str, object]:
    with open(REPO_DIR / ".pre-commit-hooks.yaml", encoding="utf-8") as fh:
        [hook] = yaml.safe_load(fh)
    assert isinstance(hook, dict)
    return hook


def _stage_hostile(repo: Repo, name: str) -> None:
    """A clone, plus an executable Python script (by its shebang) called ``name``."""
    repo.write("tools/settings.py", LOAD_SETTINGS)
    path = repo.write(name, "#!/usr/bin/env python3\n" + UNRELATED)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    repo.git("add", "--", "tools/settings.py", name)


def test_the_manifest_ends_the_args_with_a_double_dash() -> None:
    assert _manifest_hook()["args"] == ["--"]


@pytest.mark.parametrize("name", HOSTILE)
def test_file_names_after_the_double_dash_are_files(repo: Repo, name: str) -> None:
    _stage_hostile(repo, name)
    code, out, err = repo.hook("--", name, "tools/settings.py")
    assert code == 1, err
    assert any(" copied to tools/settings.py:1 (" in line for line in out), out


@pytest.mark.parametrize("name", HOSTILE)
def test_without_the_double_dash_an_option_like_file_is_refused(repo: Repo, name: str) -> None:
    _stage_hostile(repo, name)
    code, out, err = repo.hook(name, "tools/settings.py")
    assert code == 2, err
    assert out == []
    assert "reads as an option: put -- before the file names" in err


@pytest.mark.parametrize("name", HOSTILE)
def test_pre_commit_with_the_manifest_args_reports_the_clone(repo: Repo, name: str) -> None:
    hook = _manifest_hook()
    local = {
        "id": hook["id"],
        "name": hook["name"],
        # the installed console script's code, run by this interpreter
        "entry": f"{sys.executable} -m crystal_lsp_hooks.clone_check",
        "language": "system",
        "args": hook.get("args", []),
        "types_or": hook["types_or"],
        "require_serial": True,
    }
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    repo.write(".pre-commit-config.yaml", yaml.safe_dump(config))
    repo.git("add", ".pre-commit-config.yaml")
    _stage_hostile(repo, name)
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.path.parent / "pre-commit-home")}
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run"],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert " copied to tools/settings.py:1 (" in output
    assert "Failed" in output and "- exit code: 1" in output


@pytest.mark.parametrize("jobs", ["0", "99999", "-3", "many"])
def test_jobs_out_of_range_is_a_usage_error(repo: Repo, jobs: str) -> None:
    """``--jobs`` has the CLI's range: never a fork bomb of tokenizer processes."""
    repo.write("tools/settings.py", LOAD_SETTINGS)
    repo.git("add", "--", "tools/settings.py")
    code, out, err = repo.hook("--jobs", jobs, "--", "tools/settings.py")
    assert code == 2, err
    assert out == []
    assert "argument --jobs" in err
