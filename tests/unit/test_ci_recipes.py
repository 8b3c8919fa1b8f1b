"""The CI recipes of docs/ci.md, their shell parts run as written on a scratch repository.

The target branch ``main`` already has a copy (which must not fail a pull request); a branch that
only edits code passes, a branch that adds a copy fails with the new copy annotated where it was
added (GitHub: a ``::warning`` line and SARIF's result location; GitLab: the Code Quality issue).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from scan_samples import ORIGINAL, UNRELATED, git, module, near_copy, renamed, write_tree

DOC = Path(__file__).resolve().parents[2] / "docs" / "ci.md"


def _yaml_blocks() -> list[Any]:
    text = DOC.read_text(encoding="utf-8")
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)]


def _github_steps() -> dict[str, str]:
    (workflow,) = [b for b in _yaml_blocks() if isinstance(b, dict) and "jobs" in b]
    steps = workflow["jobs"]["crystal"]["steps"]
    return {s.get("id") or s.get("name", ""): s["run"] for s in steps if "run" in s}


def _gitlab_script() -> str:
    (pipeline,) = [b for b in _yaml_blocks() if isinstance(b, dict) and "crystal-lsp" in b]
    return "\n".join(pipeline["crystal-lsp"]["script"])


@pytest.fixture
def pull_request(tmp_path: Path) -> Path:
    """A clone of ``upstream`` (main: an original, an old copy of it) on branch ``feature``."""
    upstream = write_tree(
        tmp_path / "upstream",
        {
            "app/orders.py": module(ORIGINAL),
            "legacy/orders_old.py": module(renamed()),
            "app/settings.py": module(UNRELATED[0]),
        },
    )
    git(upstream, "init", "-q", "-b", "main")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "main")
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(upstream), str(work)], check=True)
    git(work, "checkout", "-q", "-b", "feature")
    # the target branch moves on meanwhile: not the pull request's
    (upstream / "app" / "later.py").write_text(module(UNRELATED[1]), encoding="utf-8")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "later on main")
    git(work, "fetch", "-q", "origin")
    return work


def _commit(work: Path, files: dict[str, str]) -> None:
    write_tree(work, files)
    git(work, "add", "-A")
    git(work, "commit", "-qm", "change")


def _run(script: str, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=work,
        env={**os.environ, "PATH": path, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def _github(work: Path, tmp_path: Path) -> tuple[int, str, str, int | None]:
    """Run the scan step, then the failing step if the scan asks for it."""
    steps = _github_steps()
    output = tmp_path / "github_output"
    output.write_text("")
    env = {
        "GITHUB_BASE_REF": "main",
        "GITHUB_OUTPUT": str(output),
        "CRYSTAL_LSP_CACHE_DIR": str(tmp_path / "cache"),
    }
    scan = _run(steps["crystal"], work, env)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    fail = None
    if outputs.get("status") == "1":
        fail = _run(steps["Fail on new copies"], work, env).returncode
    return scan.returncode, scan.stdout, outputs.get("status", ""), fail


def test_github_a_pull_request_without_new_copies_passes(
    pull_request: Path, tmp_path: Path
) -> None:
    _commit(pull_request, {"app/settings.py": module(UNRELATED[0], UNRELATED[2])})
    code, stdout, status, fail = _github(pull_request, tmp_path)
    assert (code, status, fail) == (0, "0", None)
    assert "::warning" not in stdout
    sarif = json.loads((pull_request / "crystal.sarif").read_text())
    assert sarif["runs"][0]["results"] == []
    assert (pull_request / "crystal.html").read_text().startswith("<!DOCTYPE html>")


def test_github_a_new_copy_is_annotated_and_fails(pull_request: Path, tmp_path: Path) -> None:
    _commit(pull_request, {"app/reports.py": module(near_copy())})
    code, stdout, status, fail = _github(pull_request, tmp_path)
    assert (code, status, fail) == (0, "1", 1)
    warnings = [line for line in stdout.splitlines() if line.startswith("::warning ")]
    assert warnings and all("file=app/reports.py," in w for w in warnings), stdout
    sarif = json.loads((pull_request / "crystal.sarif").read_text())
    (result,) = sarif["runs"][0]["results"]
    where = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert where == "app/reports.py"
    assert "app/reports.py" in (pull_request / "crystal.html").read_text()


@pytest.mark.parametrize("adds_copy", [False, True])
def test_gitlab_fails_only_on_new_copies(
    pull_request: Path, tmp_path: Path, adds_copy: bool
) -> None:
    change = module(near_copy()) if adds_copy else module(UNRELATED[2])
    _commit(pull_request, {"app/reports.py": change})
    base = git(pull_request, "merge-base", "origin/main", "HEAD").strip()
    env = {
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": base,
        "CI_PROJECT_DIR": str(pull_request),
        "CRYSTAL_LSP_CACHE_DIR": str(pull_request / ".crystal-lsp-cache"),
    }
    done = _run(_gitlab_script(), pull_request, env)
    assert done.returncode == (1 if adds_copy else 0), done.stderr
    issues = json.loads((pull_request / "gl-code-quality-report.json").read_text())
    assert [i["location"]["path"] for i in issues] == (["app/reports.py"] if adds_copy else [])
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity"} <= set(issue)
        assert re.search(r"copy of (app/orders|legacy/orders_old)\.py:1-21", issue["description"])
    assert (pull_request / "crystal.html").is_file()
