"""A bounded typing soak: the language server's memory must not grow with the keystrokes.

The real server over stdio (the raw JSON-RPC client) gets two hundred incremental edits of a
3,000-line file (the standard library's ``email/_header_value_parser.py``) -- a character typed at the end of a line, then deleted, one at a time, each
waiting for the diagnostics of its version. Its resident memory after the warm-up edits and
after all of them must stay within a bound: every version of the buffer's tokens used to stay
in memory (about 1 MB a keystroke in a 3,000-line file). The same for typing that only appends
(new statements written at the end of a function body, nothing deleted: every version of the
buffer is new). No timing is asserted.
"""

from __future__ import annotations

import random
import shutil
import sysconfig
from pathlib import Path

import pytest
from raw_client import RawServer

WARM_UP = 40
KEYSTROKES = 200
GROWTH_BOUND_KB = 40_000
TARGET = "_header_value_parser.py"


STATEMENTS = (
    "total_{n} = compute(items, offset + {n})",
    "if total_{n} > limit:",
    "    return None",
)


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _opened(tmp_path: Path) -> tuple[RawServer, str, list[str]]:
    """The server on a copy of the email package, the 3,000-line file open: server, uri, lines."""
    # real code: the standard library's email package (its 3,000-line header parser is edited)
    root = tmp_path / "ws"
    shutil.copytree(Path(sysconfig.get_paths()["stdlib"]) / "email", root)
    text = (root / TARGET).read_text(encoding="utf-8")
    raw = RawServer(tmp_path / "cache")
    raw.initialize(root)
    uri = (root / TARGET).as_uri()
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": text}
    raw.notify("textDocument/didOpen", {"textDocument": doc})
    raw.diagnostics(uri, 1)
    return raw, uri, text.split("\n")


def _type(raw: RawServer, uri: str, version: int, at: tuple[int, int, int], text: str) -> None:
    """Replace columns ``at[1]:at[2]`` of line ``at[0]`` by ``text`` and wait for diagnostics."""
    line, start, end = at
    change = {
        "range": {
            "start": {"line": line, "character": start},
            "end": {"line": line, "character": end},
        },
        "text": text,
    }
    raw.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
    )
    raw.diagnostics(uri, version)


def _assert_bounded(rss: dict[int, int], what: str) -> None:
    growth = rss[KEYSTROKES] - rss[WARM_UP]
    print(f"RSS after {WARM_UP} and {KEYSTROKES} {what}: {rss} kB")
    assert growth < GROWTH_BOUND_KB, (
        f"RSS grew {growth} kB from keystroke {WARM_UP} to {KEYSTROKES}: {rss}"
    )


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_typing_does_not_grow_memory(tmp_path: Path) -> None:
    raw, uri, lines = _opened(tmp_path)
    try:
        body = [i for i, line in enumerate(lines) if line.startswith("    ")]
        rng = random.Random(7)
        version, rss = 1, {}
        for n in range(KEYSTROKES // 2):
            line = rng.choice(body)
            column = len(lines[line])
            for typed in ("x", ""):
                version += 1
                _type(raw, uri, version, (line, column, column + (0 if typed else 1)), typed)
            if 2 * (n + 1) in (WARM_UP, KEYSTROKES):
                rss[2 * (n + 1)] = _rss_kb(raw.proc.pid)
            raw.received.clear()  # the client's own memory
        _assert_bounded(rss, "keystrokes")
    finally:
        assert raw.close() == 0


def _appended(indent: str, count: int) -> str:
    """``count`` characters of new statements, no line repeating another."""
    text = "".join(
        "\n" + indent + s.format(n=n) for n in range(count // 20 + 1) for s in STATEMENTS
    )
    return text[:count]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_typing_that_only_appends_does_not_grow_memory(tmp_path: Path) -> None:
    raw, uri, lines = _opened(tmp_path)
    try:
        # the end of a function body in the second half of the file
        line = next(
            i
            for i in range(len(lines) // 2, len(lines) - 1)
            if lines[i].startswith("        ") and lines[i].strip() and not lines[i + 1].strip()
        )
        column, version, rss = len(lines[line]), 1, {}
        for n, key in enumerate(_appended(" " * 8, KEYSTROKES), 1):
            version += 1
            _type(raw, uri, version, (line, column, column), key)
            line, column = (line + 1, 0) if key == "\n" else (line, column + 1)
            if n in (WARM_UP, KEYSTROKES):
                rss[n] = _rss_kb(raw.proc.pid)
            raw.received.clear()
        _assert_bounded(rss, "appended keystrokes")
    finally:
        assert raw.close() == 0
