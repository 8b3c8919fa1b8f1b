"""The settings feature (:mod:`crystal_lsp.server.configuration`) on a fake core."""

from __future__ import annotations

import asyncio

from fake_core import FakeCore
from lsprotocol import types

from crystal_lsp.server.configuration import Configuration
from crystal_lsp.server.settings import SECTION, Settings

FOLDER = "file:///work/project"
ASKS = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(configuration=True))


def test_settings_are_pulled_globally_and_per_folder() -> None:
    fake = FakeCore(ASKS, answer=[{"maxDiagnostics": 7}, {"maxDiagnostics": 3}])
    configuration = Configuration(fake)
    configuration.init_settings = {"debounceMs": 50}
    asyncio.run(configuration.pull([FOLDER]))
    assert fake.of("workspace/configuration") == [[None, FOLDER]]
    assert configuration.settings.max_diagnostics == 7
    assert configuration.settings.debounce_ms == 50  # initializationOptions under the answer
    assert configuration.folder_settings[FOLDER].max_diagnostics == 3
    assert fake.methods() == ["workspace/configuration"]


def test_a_bad_value_is_told_once_and_falls_back_to_its_default() -> None:
    fake = FakeCore(ASKS, answer=[{"maxDiagnostics": "many"}])
    configuration = Configuration(fake)
    asyncio.run(configuration.pull([]))
    asyncio.run(configuration.pull([]))
    told = fake.of("window/showMessage")
    assert len(told) == 1 and "maxDiagnostics" in told[0]
    assert configuration.settings.max_diagnostics == Settings().max_diagnostics


def test_no_answer_means_the_defaults() -> None:
    for answer in (None, RuntimeError("the client went away")):
        fake = FakeCore(ASKS, answer=answer)
        configuration = Configuration(fake)
        asyncio.run(configuration.pull([FOLDER]))
        assert configuration.settings == Settings()
        assert configuration.folder_settings[FOLDER] == Settings()
        assert fake.of("window/showMessage") == []


def test_a_client_that_cannot_answer_is_not_asked() -> None:
    fake = FakeCore(answer=[{"maxDiagnostics": 7}])
    configuration = Configuration(fake)
    asyncio.run(configuration.pull([FOLDER]))
    assert fake.sent == []
    configuration.apply({SECTION: {"maxDiagnostics": 4}}, [FOLDER])
    assert configuration.settings.max_diagnostics == 4
    assert configuration.folder_settings[FOLDER].max_diagnostics == 4
