"""Start-up, capabilities, settings, indexing progress and its cancellation, TCP."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import DUP_A, DUP_B, UNRELATED, Launcher, Session, copy_range, other_copies
from lsprotocol import types

COMMANDS = {
    "crystal.scoreSelection",
    "crystal.scoreText",
    "crystal.showTrivialNgrams",
    "crystal.rebuildIndex",
    "crystal.showDocument",
}


async def until(session: Session, uri: str, predicate, what: str) -> list[types.Diagnostic]:
    await session.wait(
        lambda: (
            uri in session.client.diagnostics and predicate(list(session.client.diagnostics[uri]))
        ),
        what,
    )
    return list(session.client.diagnostics[uri])


@pytest.mark.parametrize("profile", ["vscode", "neovim-0.7", "neovim", "emacs", "bare"])
async def test_every_profile_gets_the_duplicate_with_its_other_copy(
    launcher: Launcher, dup_workspace: Path, profile: str
) -> None:
    s = await launcher.start(dup_workspace, profile=profile)
    caps = s.initialize_result.capabilities
    assert caps.hover_provider and caps.code_action_provider
    assert COMMANDS <= set(caps.execute_command_provider.commands)
    assert caps.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    await s.ready()
    uri = s.open("b.py")
    [diag] = await s.diagnostics(uri)
    assert diag.code == "near-duplicate" and diag.source == "crystal"
    assert diag.severity == types.DiagnosticSeverity.Information
    # a function copied whole: its header line underlined, its whole range the last related entry
    assert diag.range.start == types.Position(line=3, character=0)
    assert diag.range.end == types.Position(line=3, character=len(DUP_B.split("\n")[3]))
    assert copy_range(diag).end == types.Position(line=16, character=20)
    assert diag.message.startswith("Near-duplicate (similarity 1.00, CrystalBLEU ")
    assert ") of function merge_intervals in a.py:1: " in diag.message
    assert diag.message.endswith("(this copy: lines 4-17)")
    assert "code lines identical" in diag.message  # issue 31: the evidence, then the kinds
    [related] = other_copies(diag)
    assert related.location.uri == s.uri("a.py")
    assert related.message == "function merge_intervals (representative, similarity 1.00)"
    assert related.location.range.start == types.Position(line=0, character=0)
    assert diag.data["type"] == "renamed" and diag.data["score"] == 1.0
    assert len(diag.data["findingId"]) == 16
    assert diag.data["signature"].startswith("crystalbleu|tok:pygments-")
    assert "|lang:python|" in diag.data["signature"]
    clean = s.open("c.py")
    assert await s.diagnostics(clean) == []


async def test_progress_status_and_registrations(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace)
    status = await s.ready()
    assert status["state"] == "ready" and status["files"] == 3
    assert s.statuses[0]["state"] == "indexing"
    assert status["folder"] == dup_workspace.as_uri()
    [(_, reports)] = [
        (t, r) for t, r in s.client.progress_reports.items() if str(t).startswith("crystal")
    ]
    await s.wait(lambda: isinstance(reports[-1], types.WorkDoneProgressEnd), "progress end")
    begin = reports[0]
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.title == "crystal: indexing" and begin.cancellable
    assert "indexed 3 files" in reports[-1].message
    await s.wait(lambda: len(s.registrations) >= 2, "registrations")
    methods = {r.method for r in s.registrations}
    assert {"workspace/didChangeConfiguration", "workspace/didChangeWatchedFiles"} <= methods


async def test_indexing_can_be_cancelled_and_rebuilt(
    launcher: Launcher, dup_workspace: Path
) -> None:
    s = await launcher.start(dup_workspace, env={"CRYSTAL_LSP_TEST_HOLD_INDEXING": "1"})
    token = await s.wait(
        lambda: next((t for t, r in s.client.progress_reports.items() if r), None), "progress"
    )
    s.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    status = await s.ready()
    assert status["state"] == "error" and "cancelled" in status["message"]
    await s.wait(
        lambda: isinstance(s.client.progress_reports[token][-1], types.WorkDoneProgressEnd),
        "progress end",
    )
    uri = s.open("b.py")
    assert await s.diagnostics(uri) == []  # nothing indexed: the buffer alone has no copies
    result = await s.command("crystal.rebuildIndex")
    assert result["files"] == 3 and result["seconds"] >= 0
    await until(s, uri, lambda d: len(d) == 1, "the duplicate after rebuilding")


async def test_the_index_is_shared_with_the_cli(launcher: Launcher, dup_workspace: Path) -> None:
    env = {**__import__("os").environ, "CRYSTAL_LSP_CACHE_DIR": str(launcher.cache)}
    env["GIT_CEILING_DIRECTORIES"] = str(launcher.tmp_path)
    scan = subprocess.run(
        [sys.executable, "-m", "crystal_lsp", "scan", str(dup_workspace), "--format", "json"],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert scan.returncode == 1, scan.stderr  # 1: findings
    s = await launcher.start(dup_workspace)
    status = await s.ready()
    assert status["message"].endswith("(3 from the cache)")


async def test_settings_layers(launcher: Launcher, dup_workspace: Path) -> None:
    # initializationOptions set minTokens very high: nothing is big enough
    s = await launcher.start(dup_workspace, init_settings={"minTokens": 5000})
    await s.ready()
    uri = s.open("b.py")
    assert await s.diagnostics(uri) == []
    # workspace/configuration wins over initializationOptions
    s.configuration.update({"minTokens": 40, "severity": "warning"})
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    diags = await until(s, uri, lambda d: len(d) == 1, "diagnostics after the settings change")
    assert diags[0].severity == types.DiagnosticSeverity.Warning
    s.configuration["enable"] = False
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await until(s, uri, lambda d: d == [], "diagnostics cleared when disabled")


async def test_bad_settings_are_told_once_and_defaults_used(
    launcher: Launcher, dup_workspace: Path
) -> None:
    s = await launcher.start(dup_workspace, configuration={"threshold": "very", "k": -3})
    await s.ready()
    uri = s.open("b.py")
    assert len(await s.diagnostics(uri)) == 1  # defaults apply
    warnings = [m for m in s.client.messages if m.type == types.MessageType.Warning]
    assert len(warnings) == 2
    assert any("crystalLsp.threshold" in m.message for m in warnings)
    assert any("crystalLsp.k" in m.message for m in warnings)
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await s.command("crystal.showTrivialNgrams", {"language": "python", "top": 1})
    assert len([m for m in s.client.messages if m.type == types.MessageType.Warning]) == 2


async def test_pyproject_configuration_applies_and_settings_override_it(
    launcher: Launcher,
) -> None:
    root = launcher.workspace(
        {
            "a.py": DUP_A,
            "b.py": DUP_B,
            "pyproject.toml": "[tool.crystal-lsp]\nmin-tokens = 5000\n",
        }
    )
    s = await launcher.start(root, configuration={"minTokens": 50})  # the default: no override
    await s.ready()
    uri = s.open("b.py")
    assert await s.diagnostics(uri) == []
    s.configuration["minTokens"] = 40
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await until(s, uri, lambda d: len(d) == 1, "settings override pyproject.toml")


async def test_broken_pyproject_is_reported(launcher: Launcher) -> None:
    root = launcher.workspace(
        {"a.py": DUP_A, "b.py": DUP_B, "pyproject.toml": '[tool.crystal-lsp]\nthreshold = "x"\n'}
    )
    s = await launcher.start(root)
    await s.ready()
    uri = s.open("b.py")
    assert len(await s.diagnostics(uri)) == 1
    assert any("pyproject.toml" in m.message for m in s.client.messages)


async def test_configuration_from_did_change_for_clients_without_pull(
    launcher: Launcher, dup_workspace: Path
) -> None:
    s = await launcher.start(dup_workspace, profile="bare")
    await s.ready()
    uri = s.open("b.py")
    assert len(await s.diagnostics(uri)) == 1
    s.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"crystalLsp": {"severity": "error"}})
    )
    diags = await until(
        s, uri, lambda d: d and d[0].severity == types.DiagnosticSeverity.Error, "severity error"
    )
    assert len(diags) == 1


async def test_two_folders_are_indexed_separately(launcher: Launcher) -> None:
    one = launcher.workspace({"a.py": DUP_A, "b.py": DUP_B}, name="one")
    two = launcher.workspace({"c.py": UNRELATED}, name="two")
    s = await launcher.start(one, folders=[one, two])
    await s.wait(lambda: len([x for x in s.statuses if x["state"] == "ready"]) == 2, "two folders")
    assert {x["folder"] for x in s.statuses} == {one.as_uri(), two.as_uri()}
    uri = s.open("b.py")
    assert len(await s.diagnostics(uri)) == 1


async def test_workspace_folders_come_and_go(launcher: Launcher) -> None:
    one = launcher.workspace({"c.py": UNRELATED}, name="one")
    two = launcher.workspace({"a.py": DUP_A, "b.py": DUP_B}, name="two")
    s = await launcher.start(one, configuration={"debounceMs": 0})
    await s.ready()
    s.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=two.as_uri(), name="two")], removed=[]
            )
        )
    )
    await s.wait(
        lambda: any(x["folder"] == two.as_uri() and x["state"] == "ready" for x in s.statuses),
        "the added folder indexed",
    )
    uri = (two / "b.py").as_uri()
    s.versions[uri] = 1
    s.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=DUP_B
            )
        )
    )
    [diag] = await s.diagnostics(uri)
    assert diag.related_information[0].location.uri == (two / "a.py").as_uri()


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_frame(sock_file) -> dict:
    length = 0
    while True:
        line = sock_file.readline()
        if not line:
            raise EOFError
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
        if line in (b"\r\n", b"\n") and length:
            return json.loads(sock_file.read(length))


def test_tcp_transport(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**__import__("os").environ, "CRYSTAL_LSP_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "crystal_lsp", "serve", "--tcp", f"127.0.0.1:{port}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(300):
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=60)
                break
            except OSError:
                if proc.poll() is not None:
                    raise AssertionError(proc.stderr.read().decode()) from None
                __import__("time").sleep(0.1)
        else:
            raise AssertionError("the server did not listen")
        with sock, sock.makefile("rb") as reader:
            sock.sendall(
                _frame(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {"capabilities": {}, "rootUri": None, "processId": None},
                    }
                )
            )
            response = _read_frame(reader)
            assert response["id"] == 1
            assert response["result"]["serverInfo"]["name"] == "crystal-lsp"
            sock.sendall(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            while _read_frame(reader).get("id") != 2:
                pass
            sock.sendall(_frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.wait(timeout=60)
        assert proc.stdout.read() == b""  # nothing printed: TCP carries the protocol
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_nothing_but_protocol_on_stdout(launcher: Launcher, dup_workspace: Path) -> None:
    """Drive a whole session; pytest-lsp would fail on any non-protocol byte on stdout."""
    s = await launcher.start(dup_workspace, init_settings={"debounceMs": 0})
    await s.ready()
    uri = s.open("b.py")
    await s.diagnostics(uri)
    s.change(uri, DUP_B + "\nprint('hello')\n")
    await s.diagnostics(uri)
    assert s.client.error is None
    await asyncio.sleep(0)
