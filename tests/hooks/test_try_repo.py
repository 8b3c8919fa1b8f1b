"""End to end with the real framework: ``pre-commit try-repo <this checkout> crystal-clones``.

pre-commit builds the hook's environment the way users get it (a virtualenv with this project
pip-installed from the hook repository); ``PRE_COMMIT_HOME`` points into the test's tmp
directory so nothing outside it is touched. The hook repository is a snapshot of this
checkout's files (committed and not yet committed), so the test checks exactly what would be
published. try-repo builds the environment afresh in a temporary store on every call, which
downloads the dependencies from the package index and takes tens of seconds: one run per
outcome.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest
import yaml
from hook_repo import CONFIG, HERMETIC_ENV, LEAKY_ENV, REPO_DIR
from hook_samples import LOAD_SETTINGS, MODULES, UNRELATED

pytestmark = pytest.mark.slow

PUBLISHED = (
    ".pre-commit-hooks.yaml",
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "crystal_lsp/",
    "hooks/",
)


def _run(
    cmd: list[str], cwd: pathlib.Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=1200
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    base = tmp_path_factory.mktemp("try-repo")
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
    env.update(HERMETIC_ENV)
    env.update(
        {
            "HOME": str(base / "home"),
            "GIT_CONFIG_GLOBAL": str(base / "home" / ".gitconfig"),
            "PRE_COMMIT_HOME": str(base / "pre-commit-home"),
            "CRYSTAL_LSP_CACHE_DIR": str(base / "cache"),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PRE_COMMIT_COLOR": "never",
        }
    )
    (base / "home").mkdir()
    # the hook repository: a snapshot of what this checkout would publish
    hook_repo = base / "hook-repo"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_DIR,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "surrogateescape")
    for rel in sorted({p for p in listed.split("\0") if p}):
        source = REPO_DIR / rel
        if rel.startswith(PUBLISHED) and source.is_file():
            target = hook_repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "hook"]):
        subprocess.run(cmd, cwd=hook_repo, env=env, check=True, capture_output=True)
    # the user's repository
    scratch = base / "scratch"
    scratch.mkdir()
    (scratch / "pyproject.toml").write_text(CONFIG)
    for rel, text in MODULES.items():
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        (scratch / rel).write_text(text)
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "corpus"]):
        subprocess.run(cmd, cwd=scratch, env=env, check=True, capture_output=True)
    yield {"env": env, "hook_repo": hook_repo, "scratch": scratch}


def _try_repo(world: dict[str, object], staged: str, text: str) -> subprocess.CompletedProcess[str]:
    scratch = world["scratch"]
    env = world["env"]
    assert isinstance(scratch, pathlib.Path) and isinstance(env, dict)
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=scratch, env=env, check=True)
    subprocess.run(["git", "clean", "-qfdx"], cwd=scratch, env=env, check=True)
    (scratch / staged).parent.mkdir(parents=True, exist_ok=True)
    (scratch / staged).write_text(text)
    subprocess.run(["git", "add", staged], cwd=scratch, env=env, check=True)
    cmd = [
        sys.executable,
        "-m",
        "pre_commit",
        "try-repo",
        str(world["hook_repo"]),
        "crystal-clones",
    ]
    return _run(cmd, scratch, env)


def test_staged_near_copy_fails_and_names_the_original(world: dict[str, object]) -> None:
    done = _try_repo(world, "tools/settings.py", LOAD_SETTINGS)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "crystal clone check" in output and "Failed" in output
    assert "app/config.py:4: function parse_config copied to tools/settings.py:1 (" in output
    assert "- exit code: 1" in output


def test_unrelated_code_passes(world: dict[str, object]) -> None:
    done = _try_repo(world, "graph.py", UNRELATED)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "crystal clone check" in output and "Passed" in output


def _pinned_rev() -> str:
    """The ``rev`` of the README's pre-commit snippet."""
    readme = (REPO_DIR / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("```yaml\nrepos:") :]
    [config] = [yaml.safe_load(block[8 : block.index("```", 8)])]
    rev = config["repos"][0]["rev"]
    assert isinstance(rev, str)
    return rev


def test_the_readmes_pinned_rev_installs_and_runs(world: dict[str, object]) -> None:
    """The README's snippet as written: pre-commit installs this repository at its ``rev`` (a
    commit of this repository's history) and the hook refuses a staged copy."""
    rev = _pinned_rev()
    shallow = subprocess.run(
        ["git", "rev-parse", "--is-shallow-repository"],
        cwd=REPO_DIR,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if shallow == "true":
        pytest.skip("a shallow clone may not hold the pinned commit")
    scratch, env = world["scratch"], world["env"]
    assert isinstance(scratch, pathlib.Path) and isinstance(env, dict)
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=scratch, env=env, check=True)
    subprocess.run(["git", "clean", "-qfdx"], cwd=scratch, env=env, check=True)
    (scratch / "tools").mkdir(exist_ok=True)
    (scratch / "tools" / "settings.py").write_text(LOAD_SETTINGS)
    subprocess.run(["git", "add", "tools/settings.py"], cwd=scratch, env=env, check=True)
    cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO_DIR), "crystal-clones"]
    done = _run([*cmd, "--ref", rev], scratch, env)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "tools/settings.py:1" in output and "app/config.py:4" in output
