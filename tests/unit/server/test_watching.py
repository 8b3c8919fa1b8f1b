"""Files changed on disk (:mod:`crystal_lsp.server.watching`) on a fake core."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_core import FakeCore, Folders, project
from lsprotocol import types

from crystal_lsp.server import watching
from crystal_lsp.server.indexing import Indexer
from crystal_lsp.server.watching import DiskWatcher

CREATED, CHANGED = types.FileChangeType.Created, types.FileChangeType.Changed


@pytest.fixture(autouse=True)
def no_debounce(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watching, "WATCH_DEBOUNCE", 0.0)


async def test_a_created_file_is_listed_then_the_folder_checked_again(tmp_path: Path) -> None:
    fake = FakeCore()
    fake.indexer = Indexer(fake)
    folder = project(tmp_path, fake)
    fake.folders = Folders(folder)
    try:
        await fake.indexer.start_build(folder)
        fake.documents.rechecked.clear()
        created = tmp_path / "c.py"
        created.write_text("def c(x):\n    return [y * 2 for y in x if y]\n")
        watcher = DiskWatcher(fake)
        watcher.changed({created.as_uri(): {CREATED}})
        assert watcher._task is not None
        await watcher._task
        assert any(path.endswith("c.py") for path in folder.paths)
        assert fake.documents.rechecked == [folder]
    finally:
        folder.shutdown()


async def test_a_changed_pyproject_rebuilds_the_folder(tmp_path: Path) -> None:
    fake = FakeCore()
    folder = project(tmp_path, fake)
    fake.folders = Folders(folder)
    try:
        watcher = DiskWatcher(fake)
        config = tmp_path / "pyproject.toml"
        config.write_text("[tool.crystal-lsp]\n")
        watcher.changed({config.as_uri(): {CHANGED}})
        assert watcher._task is not None
        await watcher._task
        assert fake.indexer.started == [folder]
        assert fake.documents.rechecked == []  # the build checks the documents when it ends
    finally:
        folder.shutdown()


async def test_a_file_outside_every_folder_changes_nothing(tmp_path: Path) -> None:
    fake = FakeCore()
    (tmp_path / "inside").mkdir()
    folder = project(tmp_path / "inside", fake)
    fake.folders = Folders(folder)
    try:
        watcher = DiskWatcher(fake)
        watcher.changed({(tmp_path / "elsewhere.py").as_uri(): {CREATED}})
        assert watcher._task is not None
        await watcher._task
        assert fake.indexer.started == [] and fake.documents.rechecked == []
    finally:
        folder.shutdown()
