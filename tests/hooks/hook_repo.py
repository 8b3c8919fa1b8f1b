"""Temporary git repositories for the hook tests (pre-commit-hooks' ``temp_git_dir`` shape)."""

from __future__ import annotations

import os
import pathlib
import subprocess
from collections.abc import Sequence

import pytest
from crystal_lsp_hooks import clone_check
from hook_samples import MODULES

HERMETIC_ENV = {
    "GIT_AUTHOR_NAME": "Hook Test",
    "GIT_AUTHOR_EMAIL": "hook@example.invalid",
    "GIT_COMMITTER_NAME": "Hook Test",
    "GIT_COMMITTER_EMAIL": "hook@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}
# Set when the suite itself runs inside a git hook or pre-commit: they would leak in.
LEAKY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "PRE_COMMIT_FROM_REF",
    "PRE_COMMIT_TO_REF",
    "PRE_COMMIT",
)
CONFIG = "[tool.crystal-lsp]\n"
REPO_DIR = pathlib.Path(__file__).resolve().parents[2]


class Repo:
    """A git work tree with helpers to write, stage, commit and run the hook."""

    def __init__(self, path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.path = path
        self.capsys = capsys

    def git(self, *args: str, check: bool = True, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=self.path,
            capture_output=True,
            text=True,
            check=False,
            input=stdin,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
        return done.stdout

    def write(self, rel: str, text: str | bytes) -> pathlib.Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
        return target

    def add(self, *paths: str) -> None:
        self.git("add", "--", *paths)

    def commit(self, message: str = "commit") -> None:
        self.git("commit", "-q", "--no-verify", "-m", message)

    def hook(self, *argv: str) -> tuple[int, list[str], str]:
        """Run ``main(argv)`` in the repository: exit code, stdout lines, stderr."""
        self.capsys.readouterr()
        try:
            code = clone_check.main(list(argv))
        except SystemExit as exit_:  # argparse's usage errors exit as the console script does
            code = exit_.code if isinstance(exit_.code, int) else 2
        captured = self.capsys.readouterr()
        return code, captured.out.splitlines(), captured.err

    def staged(self) -> list[str]:
        """What pre-commit passes in the pre-commit stage."""
        out = self.git("diff", "--staged", "--name-only", "-z", "--diff-filter=ACMRTUXB")
        return [p for p in out.split("\0") if p]

    def tree_state(self) -> dict[str, tuple[int, bytes]]:
        """Every file under the work tree (``.git`` included) with its mtime and content."""
        out = {}
        for dirpath, _, names in os.walk(self.path):
            for name in names:
                full = os.path.join(dirpath, name)
                with open(full, "rb") as fh:
                    out[os.path.relpath(full, self.path)] = (os.stat(full).st_mtime_ns, fh.read())
        return out


def init_repo(path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    repo = Repo(path, capsys)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "core.autocrlf", "false")
    return repo


def write_corpus(repo: Repo, modules: dict[str, str] | None = None) -> None:
    repo.write("pyproject.toml", CONFIG)
    for rel, text in (modules or MODULES).items():
        repo.write(rel, text)


def lines_naming(lines: Sequence[str], other: str) -> list[str]:
    return [line for line in lines if line.startswith(f"{other}:")]
