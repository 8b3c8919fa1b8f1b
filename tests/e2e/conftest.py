"""End-to-end fixtures: the real server in a subprocess, driven by pytest-lsp's client.

Every test gets its own workspace folder and cache directory (CRYSTAL_LSP_CACHE_DIR), and a
client that records every notification it receives, so tests wait for *conditions* (a
publishDiagnostics for a version, a status) instead of sleeping. There are no timing assertions:
waits only have generous time-outs. The harness itself is in ``lsp_harness.py``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

# the suite runs with --import-mode=importlib: make this folder's helper modules importable
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_harness import DUP_A, DUP_B, UNRELATED, Launcher
from raw_client import RawServer

E2E_DIRS = ("e2e", "real_clients")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: runs the language server in a subprocess")


def pytest_collection_modifyitems(session: pytest.Session, config: Any, items: list[Any]) -> None:
    """Server tests run after the unit tests (as pygls orders its suite), and are marked e2e."""

    def is_e2e(item: Any) -> bool:
        parts = Path(str(item.fspath)).parts
        return any(d in parts for d in E2E_DIRS)

    for item in items:
        if is_e2e(item):
            item.add_marker(pytest.mark.e2e)
    items.sort(key=is_e2e)


@pytest_asyncio.fixture
async def launcher(tmp_path: Path) -> AsyncIterator[Launcher]:
    launcher = Launcher(tmp_path, tmp_path / "cache")
    yield launcher
    for session in list(launcher.sessions):
        await launcher.stop(session)


@pytest.fixture
def dup_workspace(launcher: Launcher) -> Path:
    return launcher.workspace({"a.py": DUP_A, "b.py": DUP_B, "c.py": UNRELATED})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A folder with one copy's original and unrelated code, for the raw-protocol tests."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(DUP_A, encoding="utf-8")
    (root / "c.py").write_text(UNRELATED, encoding="utf-8")
    return root


@pytest.fixture
def raw(workspace: Path, tmp_path: Path) -> Iterator[RawServer]:
    """The real server over stdio, checked on close for anything on stdout that is not protocol."""
    server = RawServer(tmp_path / "cache")
    try:
        yield server
    finally:
        server.close()
        assert server.junk == [], "stdout carried something that is not protocol"
