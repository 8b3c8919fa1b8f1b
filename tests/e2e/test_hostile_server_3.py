"""The language server against hostile names, clients and line ends, round 3 (issue 33).

The real server in a subprocess over stdio (``RawServer``); numbers in the names are the items of
the issue.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from lsp_harness import DUP_A, DUP_B
from raw_client import RawServer

# a live command link with arguments of the repository's choosing, an image, raw HTML
HOSTILE = (
    "[click](command:crystal.compare?%5B%7B%22left%22%3A1%7D%5D) "
    "![x](https:e.test) <img src=x onerror=alert(1)>"
)


def _open(raw: RawServer, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    raw.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
    )
    return uri


def _hover(raw: RawServer, uri: str, diagnostic: dict[str, Any]) -> str:
    hover = raw.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": diagnostic["range"]["start"]},
    )
    return str(hover["result"]["contents"]["value"])


# --- 1: Markdown injection in the hover ----------------------------------------------------------


def test_01_a_hostile_file_name_is_no_markup_and_compare_takes_only_ids(
    raw: RawServer, workspace: Path
) -> None:
    (workspace / f"{HOSTILE}.py").write_text(DUP_B, encoding="utf-8")
    raw.initialize(workspace)
    uri = _open(raw, workspace / "a.py", DUP_A)
    [diagnostic] = raw.diagnostics(uri, 1)
    markdown = _hover(raw, uri, diagnostic)
    # the name is shown, escaped: no link, image or HTML of its own
    assert HOSTILE not in markdown and "\\[click\\]\\(command\\:crystal\\.compare" in markdown
    assert (
        not re.search(r"(?<!\\)<img", markdown)
        and "\\<img src\\=x onerror\\=alert\\(1\\)\\>" in markdown
    )
    links = re.findall(r"(?<!\\)\]\(([^)\s]*)\)", markdown)
    commands = [link for link in links if link.startswith("command:")]
    assert len(commands) == 1, links
    assert all(link.startswith("file:///") for link in links if link not in commands), links
    # the one trusted command link carries an id the server minted, and no path
    [argument] = json.loads(unquote(commands[0].split("?", 1)[1]))
    assert list(argument) == ["id"]
    answer = raw.request(
        "workspace/executeCommand",
        {"command": "crystal.compare", "arguments": [{**argument, "goTo": False}]},
    )
    result = answer["result"]
    assert result["left"]["uri"].endswith(".py") and "merge" in result["right"]["text"]
    assert "def combine_ranges" in result["left"]["text"]


def test_01_an_unknown_id_is_refused_with_one_log_line(raw: RawServer, workspace: Path) -> None:
    raw.initialize(workspace)
    for _ in range(3):
        answer = raw.request(
            "workspace/executeCommand",
            {"command": "crystal.compare", "arguments": [{"id": "0123456789abcdef"}]},
        )
        assert "unknown or expired id" in answer["error"]["message"]
    answer = raw.request(
        "workspace/executeCommand",
        {"command": "crystal.compare", "arguments": [{"left": {"uri": 3}}]},
    )
    assert "error" in answer
    assert raw.request("shutdown")["result"] is None
    raw.notify("exit")
    raw.proc.wait(timeout=30)
    log = raw.stderr_path.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
    refused = [line for line in log.splitlines() if "crystal.compare" in line]
    assert len(refused) == 4, refused


# --- 4: a client answering workspace/configuration with null or nonsense -------------------------


class OddClient(RawServer):
    """Answers ``workspace/configuration`` with a fixed (malformed) result."""

    answer: Any = None

    def on_message(self, message: dict[str, Any]) -> None:
        if message.get("method") == "workspace/configuration" and "id" in message:
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": self.answer})
            return
        super().on_message(message)


@pytest.mark.parametrize("answer", [None, "x", {"crystalLsp": 1}, [1, [2]], 5])
def test_04_a_malformed_configuration_answer_means_defaults(
    workspace: Path, tmp_path: Path, answer: Any
) -> None:
    (workspace / "b.py").write_text(DUP_B, encoding="utf-8")
    client = OddClient(tmp_path / "cache")
    client.answer = answer
    try:
        client.initialize(workspace)  # waits for indexing to end: it does not stall
        uri = _open(client, workspace / "a.py", DUP_A)
        assert client.diagnostics(uri, 1), "the copy is reported with the default settings"
        assert client.request("shutdown")["result"] is None
        client.notify("exit")
        client.proc.wait(timeout=30)
    finally:
        client.reap()
    assert client.junk == []
    log = client.stderr_path.read_text(errors="replace")
    assert "Traceback" not in log and "Unable to deserialize" not in log, log[-3000:]
    if not isinstance(answer, list):
        # one message (pygls reads a string or an object as a list of its characters or keys:
        # then each is a malformed settings object, told once)
        told = {
            line.split(" WARNING ", 1)[-1]
            for line in log.splitlines()
            if "workspace/configuration failed" in line or "settings: expected an object" in line
        }
        assert len(told) == 1, told


# --- 2: a .gitignore that makes git's listing of untracked files exponential ---------------------


def test_02_a_slow_git_listing_is_an_error_and_the_server_keeps_serving(
    workspace: Path, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / ".gitignore").write_text("a*" * 40 + "b\n", encoding="utf-8")
    (workspace / ("a" * 60 + ".py")).write_text("x = 1\n", encoding="utf-8")
    server = RawServer(tmp_path / "cache", env={"CRYSTAL_LSP_GIT_TIMEOUT": "3"})
    try:
        server.initialize(workspace)
        told = " ".join(json.dumps(m.get("params")) for m in server.received if "method" in m)
        assert "git ls-files" in told and "--tracked-only" in told, told[-2000:]
        # still serving: a score request is answered
        answer = server.request(
            "crystal/score",
            {"hypothesis": {"text": DUP_B}, "references": [{"text": DUP_A}], "language": "python"},
        )
        assert answer["result"]["crystalbleu"] > 0
        assert server.request("shutdown")["result"] is None
    finally:
        server.reap()
    assert server.junk == []


# --- 3: a buffer whose lines end in \r alone or in a mix -----------------------------------------


@pytest.mark.parametrize("head", ["", "# a\rb = 1\n\r\n\r"])
def test_03_cr_line_ends_give_the_lines_the_editor_shows(
    raw: RawServer, workspace: Path, head: str
) -> None:
    raw.initialize(workspace)
    text = head + DUP_B.replace("\n", "\r")
    uri = _open(raw, workspace / "b.py", text)
    [diagnostic] = raw.diagnostics(uri, 1)
    start = text.index("def combine_ranges")
    assert diagnostic["range"]["start"] == {
        "line": len(re.findall(r"\r\n|\r|\n", text[:start])),
        "character": 0,
    }


def test_04_a_well_formed_configuration_answer_is_applied(raw: RawServer, workspace: Path) -> None:
    (workspace / "b.py").write_text(DUP_B, encoding="utf-8")
    raw.settings = {"debounceMs": 0, "severity": "warning"}
    raw.initialize(workspace)
    uri = _open(raw, workspace / "a.py", DUP_A)
    [diagnostic] = raw.diagnostics(uri, 1)
    assert diagnostic["severity"] == 2
    assert "workspace/configuration failed" not in raw.stderr_path.read_text(errors="replace")
