"""Editor behaviours: clients without showDocument, ``[]`` options, unknown metrics."""

from __future__ import annotations

import asyncio

from lsp_harness import DUP_A, DUP_B, UNRELATED, Launcher

FAST = {"debounceMs": 0}


async def test_go_to_copy_without_show_document_says_where(launcher: Launcher) -> None:
    ws = launcher.workspace({"a.py": DUP_A, "b.py": DUP_B, "c.py": UNRELATED})
    s = await launcher.start(ws, configuration=FAST, profile="neovim-0.7")
    await s.ready()
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    result = await s.command("crystal.showDocument", s.uri("a.py"), rng)
    assert result["shown"] is False and result["location"] == "a.py:1"
    for _ in range(100):
        if any("a.py:1" in m.message for m in s.client.messages):
            break
        await asyncio.sleep(0.05)
    assert any(m.message == "crystal: the other copy is at a.py:1" for m in s.client.messages)
    assert s.client.shown_documents == []


async def test_empty_list_options_are_no_options(launcher: Launcher) -> None:
    ws = launcher.workspace({"a.py": DUP_A})
    s = await launcher.start(ws, configuration=FAST, initialization_options=[])
    await s.ready()
    await asyncio.sleep(0.2)
    assert not [m for m in s.client.messages if "initializationOptions" in m.message]
