"""Fixtures of the hook tests: hermetic git, a private cache, temporary repositories.

Git runs hermetically: fixed author and committer, no system or global configuration, a
private HOME; the crystal-lsp cache lives in the test's tmp directory.
"""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Iterator

import pytest

# The suite runs with --import-mode=importlib, which does not put test directories on
# sys.path: make this directory's helper modules (hook_repo, hook_samples) importable.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from hook_repo import HERMETIC_ENV, LEAKY_ENV, Repo, init_repo, write_corpus


@pytest.fixture(autouse=True)
def hermetic(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("home")
    for name in LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in HERMETIC_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def empty_repo(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Repo]:
    """An initialised repository with no commit; the working directory is its root."""
    repo = init_repo(tmp_path / "repo", capsys)
    monkeypatch.chdir(repo.path)
    yield repo


@pytest.fixture
def repo(empty_repo: Repo) -> Repo:
    """A repository whose first commit holds the sample modules and a ``pyproject.toml``."""
    write_corpus(empty_repo)
    empty_repo.git("add", "-A")
    empty_repo.commit("corpus")
    return empty_repo
