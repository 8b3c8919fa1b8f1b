"""Fixtures of the unit suite: every test gets its own crystal-lsp cache directory."""

from __future__ import annotations

import pathlib

import pytest


@pytest.fixture(autouse=True)
def crystal_cache_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> pathlib.Path:
    """``CRYSTAL_LSP_CACHE_DIR`` points at a fresh directory (never the user's cache)."""
    path = tmp_path_factory.mktemp("crystal-cache")
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(path))
    return path
