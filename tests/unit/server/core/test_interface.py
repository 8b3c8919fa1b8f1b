"""The narrow interface: the server implements it, and so does the tests' fake core."""

from __future__ import annotations

from typing import Any

from fake_core import FakeCore

from crystal_lsp.server import create_server
from crystal_lsp.server.core.interface import (
    ConfigurationPart,
    Core,
    DocumentsPart,
    FoldersPart,
    IndexerPart,
    InsertionsPart,
)

PARTS = {
    "configuration": ConfigurationPart,
    "folders": FoldersPart,
    "documents": DocumentsPart,
    "indexer": IndexerPart,
    "insertions": InsertionsPart,
}


def members(protocol: type) -> set[str]:
    """The public members a protocol (and the protocols it extends) declares."""
    return {
        name
        for cls in protocol.__mro__
        if cls.__module__ == Core.__module__
        for name in vars(cls)
        if not name.startswith("_")
    }


def missing(core: Any) -> list[str]:
    out = [name for name in sorted(members(Core)) if name not in dir(core)]
    for part, protocol in PARTS.items():
        out += [
            f"{part}.{n}" for n in sorted(members(protocol)) if n not in dir(getattr(core, part))
        ]
    return out


def test_the_interface_is_narrow() -> None:
    assert set(PARTS) <= members(Core)
    assert "feature" not in " ".join(members(Core))
    assert len(members(Core)) < 25


def test_the_server_implements_the_interface() -> None:
    assert missing(create_server()) == []


def test_the_fake_core_implements_the_interface() -> None:
    assert missing(FakeCore()) == []
