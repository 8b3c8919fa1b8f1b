"""Inserted blocks and their code lenses (:mod:`crystal_lsp.server.insertions`) on a fake core
with the real index builds and scoring."""

from __future__ import annotations

from pathlib import Path

from fake_core import CODE, FakeCore, Folders, project
from lsprotocol import types

from crystal_lsp.server.compare import COMPARE
from crystal_lsp.server.indexing import Indexer
from crystal_lsp.server.insertions import Insertions
from crystal_lsp.server.settings import SECTION

START = "import os\n\n"


async def test_a_pasted_copy_gets_a_lens_that_compares_it(tmp_path: Path) -> None:
    fake = FakeCore()
    fake.configuration.apply({SECTION: {"debounceMs": 0, "insertionLensSeconds": 0}}, [])
    fake.indexer = Indexer(fake)
    folder = project(tmp_path, fake)
    fake.folders = Folders(folder)
    insertions = fake.insertions = Insertions(fake)
    try:
        await fake.indexer.start_build(folder)
        uri = (tmp_path / "c.py").as_uri()
        fake.workspace.put_text_document(types.TextDocumentItem(uri, "python", 1, START))
        insertions.opened(uri, START)
        end = types.Position(line=2, character=0)
        change = types.TextDocumentContentChangePartial(types.Range(end, end), CODE)
        fake.workspace.update_text_document(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri), change
        )
        insertions.changed(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=2, uri=uri), [change]
            )
        )
        [landing] = insertions.docs[uri].landings
        assert landing.span == (2, 2 + CODE.count("\n") - 1)
        assert landing.task is not None
        await landing.task
        [lens] = insertions.lenses(uri)
        assert lens.range.start.line == 2
        assert lens.command is not None and lens.command.command == COMPARE
        assert lens.command.title.startswith("≈"), lens.command.title
        assert "a.py" in lens.command.title or "b.py" in lens.command.title
        assert insertions.tally({})["summary"]
        assert fake.documents.republished == [uri]  # its diagnostics follow the lens
        insertions.closed(uri)
        assert insertions.lenses(uri) == []
    finally:
        folder.shutdown()
