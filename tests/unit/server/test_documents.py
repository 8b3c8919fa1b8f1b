"""Checks and published diagnostics of open documents (:mod:`crystal_lsp.server.documents`),
on a fake core with the real index builds."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fake_core import FakeCore, Folders, project
from lsprotocol import types

from crystal_lsp.server.documents import Documents
from crystal_lsp.server.indexing import Indexer

PUBLISH = "textDocument/publishDiagnostics"


async def test_an_open_copy_gets_its_diagnostics_once_and_loses_them_on_close(
    tmp_path: Path,
) -> None:
    fake = FakeCore()
    fake.indexer = Indexer(fake)
    folder = project(tmp_path, fake)
    fake.folders = Folders(folder)
    documents = fake.documents = Documents(fake)
    try:
        await fake.indexer.start_build(folder)
        fake.initialized.set()
        uri = (tmp_path / "a.py").as_uri()
        item = types.TextDocumentItem(uri, "python", 1, (tmp_path / "a.py").read_text())
        fake.workspace.put_text_document(item)
        for _ in range(2):  # the second check finds the same: nothing is sent again
            documents.schedule(uri, delay=0.0)
            task = documents.docs[uri].task
            assert task is not None
            await task
        [published] = fake.of(PUBLISH)
        assert published.uri == uri and published.version == 1
        assert published.diagnostics, "a.py is a copy of b.py"
        related = published.diagnostics[0].related_information or []
        assert any(r.location.uri.endswith("/b.py") for r in related)
        assert documents.result_of(uri) is not None
        documents.close(uri)
        await asyncio.gather(*documents._background)
        assert fake.of(PUBLISH)[-1].diagnostics == []
        assert documents.result_of(uri) is None
    finally:
        folder.shutdown()
