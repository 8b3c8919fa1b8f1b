"""Hostile repositories, clients and disks (issue 14): fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# the suite runs with --import-mode=importlib: make this folder's helper module importable
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile import BODY, git


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one ordinary Python file."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text(BODY, encoding="utf-8")
    git(root, "init", "-q")
    return root
