"""The server's settings: ``initializationOptions``, ``workspace/configuration`` and per folder.

Settings are pulled from the client when it can answer ``workspace/configuration`` (globally and
once per workspace folder) and otherwise taken from ``didChangeConfiguration``. Every problem is
told to the user once and the offending value falls back to its default. An answer that is not a
list (``null``), cannot be read, or does not come within :data:`ANSWER_TIMEOUT` means the
defaults, with one log line; indexing goes on.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.server.settings import SECTION, Settings, folder_config, parse_settings

if TYPE_CHECKING:
    from crystal_lsp.server.core.interface import Core

log = logging.getLogger(__name__)

ANSWER_TIMEOUT = 30.0
"""Seconds a client has to answer ``workspace/configuration`` (then: the defaults)."""


class Configuration:
    """The global settings and those of each workspace folder."""

    def __init__(self, server: Core) -> None:
        self.server = server
        self.settings = Settings()
        self.init_settings: Any = None
        """The ``settings`` of ``initializationOptions`` (the base of every other source)."""
        self.folder_settings: dict[str, Settings] = {}

    async def pull(self, uris: list[str]) -> None:
        """Read ``workspace/configuration`` (global and for each folder URI) and apply it."""
        items = [types.ConfigurationItem(section=SECTION)]
        items += [types.ConfigurationItem(scope_uri=uri, section=SECTION) for uri in uris]
        values: list[Any] = [None] * len(items)
        if self.server.caps("workspace", "configuration"):
            try:
                answer = await asyncio.wait_for(
                    self.server.workspace_configuration_async(
                        types.ConfigurationParams(items=items)
                    ),
                    ANSWER_TIMEOUT,
                )
                if not isinstance(answer, (list, tuple)):  # pygls gives a tuple
                    raise TypeError(f"expected a list, got {type(answer).__name__}")
                values = list(answer)[: len(items)]
            except Exception as exc:
                # null, malformed or no answer: the defaults, said in one line
                reason = str(exc) or f"no answer within {ANSWER_TIMEOUT:g} s"
                log.warning("workspace/configuration failed: %s; using the defaults", reason)
        values += [None] * (len(items) - len(values))
        self.settings = self._parse(values[0])
        for uri, value in zip(uris, values[1:]):
            self.folder_settings[uri] = self._parse(values[0], value)

    def apply(self, raw: Any, uris: list[str]) -> None:
        """Use ``didChangeConfiguration`` settings when the client cannot be asked."""
        section = raw.get(SECTION) if isinstance(raw, dict) else None
        self.settings = self._parse(section)
        self.folder_settings = {uri: self.settings for uri in uris}

    def scan_config(self, uri: str | None, root: str | None) -> ScanConfig:
        """The ``ScanConfig`` of a folder for the current settings (problems told once)."""
        settings = self.folder_settings.get(uri or "", self.settings)
        config, problems = folder_config(root, settings)
        self._tell(problems)
        return config

    def detached_config(self) -> ScanConfig:
        """The ``ScanConfig`` of documents outside every workspace folder."""
        return ScanConfig().with_overrides(dict(self.settings.scan))

    def _parse(self, *values: Any) -> Settings:
        settings, problems = parse_settings(self.init_settings, *values)
        self._tell(problems)
        return settings

    def _tell(self, problems: list[str]) -> None:
        for problem in problems:
            self.server.tell_once(problem)
