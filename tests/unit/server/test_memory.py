"""Unit tests of :mod:`crystal_lsp.server.memory` and what an installed build keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from crystal_lsp.clones.settings import load_config
from crystal_lsp.server.memory import release_memory
from crystal_lsp.server.workspace import Folder


def _function(i: int) -> str:
    return (
        f"def handler_{i}(request, store):\n"
        f"    items = store.fetch(request.key, limit={i})\n"
        f"    return [item.render(style='{i}') for item in items if item.visible]\n"
    )


def test_release_memory_runs() -> None:
    assert release_memory() in (True, False)


def test_an_installed_cold_build_keeps_no_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(6):
        (root / f"m{i}.py").write_text(_function(i) + _function(i + 10), encoding="utf-8")
    config = load_config(str(root))
    folder = Folder(root.as_uri(), str(root), config)
    try:
        built = folder.build(config, None, lambda *_: None)
        assert built.index._pending_heavy or built.index._heavy  # a cold build keeps tokens...
        folder.install(built)
        assert not folder.index._pending_heavy and not folder.index._heavy  # ...not installed
        assert folder.index.heavy("m0.py").texts[:2] == ["def", "handler_0"]  # read back
    finally:
        folder.shutdown()
