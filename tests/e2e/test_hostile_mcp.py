"""The MCP server against hostile repositories and clients (issue 24, rows 1, 3, 10 and 14).

The real server in a subprocess, driven by the SDK's own client (``session``) or line by line
(``RawMcp``); repositories are the shipped demo project, a git repository, with files whose names
are not UTF-8 or hold control characters.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp_harness import RawMcp, call, session, text_of
from raw_client import assert_displayable

import crystal_lsp

DEMO = Path(crystal_lsp.__file__).resolve().parent / "examples" / "demo"
INVOICES = (DEMO / "billing" / "invoices.py").read_text(encoding="utf-8")
NEW_CODE = '''\
def render_table(rows, widths):
    """Format rows as a fixed-width text table."""
    lines = []
    for row in rows:
        cells = [str(cell).ljust(width) for cell, width in zip(row, widths)]
        lines.append(" | ".join(cells))
    return "\\n".join(lines)
'''
HOSTILE_NAMES = [b"\x1b]0;pwned\x07x.py", b"nl\nx.py", "\u202egnp.py".encode()]
WAIT = 30.0


def _function(source: str, name: str) -> str:
    """The source of one top-level function."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            segment = ast.get_source_segment(source, node)
            assert segment is not None
            return segment + "\n"
    raise AssertionError(name)


INVOICE_TOTAL = _function(INVOICES, "invoice_total")


def _git_repo(root: Path, extra: dict[bytes, str]) -> Path:
    for name, text in extra.items():
        with open(os.fsencode(root) + b"/" + name, "wb") as fh:
            fh.write(text.encode("utf-8"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "demo"]):
        subprocess.run(
            ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
            cwd=root,
            check=True,
            capture_output=True,
        )
    return root


def _demo(tmp_path: Path, extra: dict[bytes, str] | None = None) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    return _git_repo(root, extra or {})


def _python_only(tmp_path: Path) -> Path:
    root = tmp_path / "py"
    for rel in ("billing/invoices.py", "inventory/stock.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DEMO / rel, root / rel)
    return _git_repo(root, {})


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


# --- 1: a file name that is not UTF-8 ----------------------------------------------------------


async def test_01_a_non_utf8_file_name_keeps_every_tool_answering(
    tmp_path: Path, cache: Path
) -> None:
    # not byte-identical to invoices.py: identical files are one finding of their own
    root = _demo(tmp_path, {b"lat\xe9.py": INVOICES + "\nLATIN = True\n"})
    async with session(root, cache) as (client, _):
        scanned = await call(client, "scan", {"top": 100})
        assert not scanned.is_error, text_of(scanned)
        got = scanned.structured_content
        assert got is not None
        paths = {m["place"]["path"] for c in got["top"] for m in c["members"]}
        assert "lat\\xe9.py" in paths  # escaped as everywhere: valid UTF-8, one line
        assert "lat\\xe9.py:" in text_of(scanned)
        # the name as the answers show it names the file
        clones = await call(client, "file_clones", {"path": "lat\\xe9.py"})
        assert not clones.is_error, text_of(clones)
        assert clones.structured_content is not None
        assert clones.structured_content["path"] == "lat\\xe9.py"
        assert clones.structured_content["classes"]
        checked = await call(
            client, "check_duplication", {"code": INVOICE_TOTAL, "path": "lat\\xe9.py"}
        )
        assert not checked.is_error, text_of(checked)
        assert "lat\\xe9.py:" in text_of(checked)
        later = await call(client, "trivially_shared", {"language": "python", "top": 1})
        assert not later.is_error


# --- 3: a snippet without a language -------------------------------------------------------------


@pytest.mark.parametrize("repository", ["python-only", "demo"])
async def test_03_the_language_of_a_snippet_comes_from_the_repository(
    tmp_path: Path, cache: Path, repository: str
) -> None:
    root = _python_only(tmp_path) if repository == "python-only" else _demo(tmp_path)
    async with session(root, cache) as (client, _):
        copy = await call(client, "check_duplication", {"code": INVOICE_TOTAL})
        assert not copy.is_error, text_of(copy)
        found = copy.structured_content
        assert found is not None
        assert found["language"] == "python" and found["language_guessed"] is True
        assert found["duplicates"], found["advice"]
        assert found["duplicates"][0]["original"]["path"] == "billing/invoices.py"
        assert "language guessed: python" in found["advice"]
        # nothing found on a guess: never called new code
        new = await call(client, "check_duplication", {"code": NEW_CODE})
        assert not new.is_error, text_of(new)
        assert new.structured_content is not None
        advice = new.structured_content["advice"]
        assert new.structured_content["duplicates"] == []
        assert "it is new code" not in advice and "call again with language" in advice
        # with the language given, nothing is guessed
        given = await call(client, "check_duplication", {"code": NEW_CODE, "language": "python"})
        assert given.structured_content is not None
        assert given.structured_content["language_guessed"] is False
        assert "it is new code" in given.structured_content["advice"]
        scored = await call(client, "score", {"code": INVOICE_TOTAL})
        assert not scored.is_error, text_of(scored)
        assert scored.structured_content is not None
        assert scored.structured_content["language"] == "python"
        assert any("language not given" in n for n in scored.structured_content["notes"])


# --- 10: control characters and bidi overrides in names -----------------------------------------


async def test_10_hostile_names_are_escaped_in_every_answer(tmp_path: Path, cache: Path) -> None:
    # each a copy of the invoices module, none byte-identical (identical files are one finding)
    root = _demo(
        tmp_path, {name: INVOICES + f"\nMARK = {k}\n" for k, name in enumerate(HOSTILE_NAMES)}
    )
    async with session(root, cache) as (client, _):
        checked = await call(client, "check_duplication", {"code": INVOICE_TOTAL})
        assert not checked.is_error, text_of(checked)
        text = text_of(checked)
        assert_displayable(text)
        lines = text.splitlines()
        pattern = re.compile(r"^\S.*:\d+-\d+ ~ <snippet>:\d+-\d+ similarity \d\.\d\d \(.*\)$")
        assert all(pattern.match(line) for line in lines[1:]), lines  # one line per copy
        assert len(lines) >= 1 + len(HOSTILE_NAMES) + 1  # advice, each copy, the original
        assert '"\\x1b]0;pwned\\x07x.py":' in text and '"nl\\nx.py":' in text
        assert checked.structured_content is not None
        for dup in checked.structured_content["duplicates"]:
            assert_displayable(dup["original"]["path"])
        for name, args in (("scan", {"top": 100}), ("file_clones", {"path": "nl\nx.py"})):
            result = await call(client, name, args)
            assert not result.is_error, text_of(result)
            assert_displayable(text_of(result))
            assert result.structured_content is not None
            assert_displayable(repr(result.structured_content).replace("\\n", ""))


# --- 14: requests the SDK would leave unanswered -------------------------------------------------

FRAMES = [
    (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}', 5),
    (b'{"jsonrpc":"1.0","id":6,"method":"tools/list"}', 6),
    (b'{"id":7,"method":"tools/call","params":{"name":"scan","arguments":{}}}', 7),
    (
        b'{"jsonrpc":"2.0","id":8,"method":"tools/call",'
        b'"params":{"name":"file_clones","arguments":{"path":"\\udcff"}}}',
        8,
    ),
    (b'{"jsonrpc":"2.0","id":"nine","method":"tools/list","params":[1]}', "nine"),
]


def test_14_every_request_gets_an_answer(tmp_path: Path, cache: Path) -> None:
    raw = RawMcp(_demo(tmp_path), cache)
    try:
        raw.initialize()
        for line, ident in FRAMES:
            raw.send_line(line)
            answer = raw.answer(ident, timeout=WAIT)
            assert answer["error"]["code"] == -32600, answer
        raw.send_line(b"not json")
        assert raw.answer(None, timeout=WAIT)["error"]["code"] == -32700
        # a line over the frame limit is skipped as it is read, and answered
        raw.send_line(b'{"jsonrpc":"2.0","id":10,"method":"x","p":"' + b"a" * (33 << 20) + b'"}')
        too_long = raw.answer(None, timeout=WAIT)
        assert "message over" in too_long["error"]["message"], too_long
        # notifications are never answered, and the session goes on
        raw.send_line(b'{"jsonrpc":"2.0","method":"notifications/x","params":"x"}')
        assert "result" in raw.call("scan", {"top": 1})
        answered = [m.get("id") for m in raw.received if "error" in m]
        assert answered == [5, 6, 7, 8, "nine", None, None], answered
    finally:
        assert raw.close() == 0
        assert raw.junk == [], raw.junk
