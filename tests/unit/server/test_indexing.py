"""Index builds (:mod:`crystal_lsp.server.indexing`) on a fake core: status, progress, rechecks."""

from __future__ import annotations

from pathlib import Path

from fake_core import FakeCore, project
from lsprotocol import types

from crystal_lsp.server.indexing import Indexer

SHOWS_PROGRESS = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True)
)


async def test_a_build_is_reported_then_the_folder_is_checked_again(tmp_path: Path) -> None:
    fake = FakeCore()
    indexer = fake.indexer = Indexer(fake)
    folder = project(tmp_path, fake)
    try:
        assert not folder.ready.is_set()
        await indexer.start_build(folder)
        assert folder.ready.is_set() and folder.built
        statuses = fake.of("crystal/status")
        assert [state for state, _ in statuses] == ["indexing", "ready"]
        assert statuses[-1][1].startswith(f"indexed 2 files of {folder.name}")
        assert fake.documents.rechecked == [folder]
        assert not [m for m in fake.methods() if "rogress" in m]  # the client shows none
        assert indexer.builds == {}
    finally:
        folder.shutdown()


async def test_a_client_that_shows_progress_sees_the_build(tmp_path: Path) -> None:
    fake = FakeCore(SHOWS_PROGRESS)
    indexer = fake.indexer = Indexer(fake)
    folder = project(tmp_path, fake)
    try:
        await indexer.start_build(folder)
        methods = [m for m in fake.methods() if "rogress" in m]
        assert methods[:2] == ["window/workDoneProgress/create", "$/progress begin"]
        assert methods[-1] == "$/progress end"
        assert fake.of("$/progress begin") == ["crystal: indexing"]
        assert fake.of("$/progress end")[0].startswith("indexed 2 files")
    finally:
        folder.shutdown()


async def test_a_build_started_again_supersedes_the_first(tmp_path: Path) -> None:
    fake = FakeCore()
    indexer = fake.indexer = Indexer(fake)
    folder = project(tmp_path, fake)
    try:
        first = indexer.start_build(folder)
        second = indexer.start_build(folder)
        await second
        assert first.done()
        assert [state for state, _ in fake.of("crystal/status")] == ["indexing", "ready"]
        assert fake.documents.rechecked == [folder]  # once: the superseded build is silent
        assert fake.of("window/logMessage") == []
    finally:
        folder.shutdown()
