"""Bounded soak tests of the servers: random messages, edits, file changes, calls and garbage.

Language server: Hypothesis draws sequences of actions against one running server: edits of an
open buffer at random (also out-of-range) positions, files written and deleted on disk with the
watched-files notification, ``crystal/score`` requests with good and hostile references, and
garbage frames. After every sequence the server must answer, stay under a memory bound, write only
protocol to stdout, and -- once the buffer and the disk are back to a known state -- publish
exactly the diagnostics a fresh scan of that state gives (same clone classes at the same lines).

MCP server: the same for random tool calls with good and hostile arguments (paths outside the
root, names with control characters or bytes that are not UTF-8, unknown languages), files
written and deleted, garbage lines and malformed requests, in a repository with hostile file
names: every request is answered, memory stays bounded, and ``scan`` then reports exactly the
clone classes of a fresh scan.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsp_harness import DUP_A, DUP_B, UNRELATED
from mcp_harness import RawMcp
from raw_client import RawServer

from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.scan import ScanResult, run_scan
from crystal_lsp.clones.settings import load_config
from crystal_lsp.clones.store import Store

MEMORY_BOUND_KB = 1_500_000
FRAGMENTS = [
    DUP_B,
    UNRELATED,
    "def f(x):\n    return x + 1\n",
    "{[(",
    "\x00\ufffd\u202e é 𝔘\r\n\r",
    "    " * 40 + "if x:\n",
    "",
]
_versions = itertools.count(10)


def _filler(i: int) -> str:
    return (
        f"def handler_{i}(request, store_{i}):\n"
        f"    items = store_{i}.fetch(request.key, limit={i + 3})\n"
        f"    return [item.render(style='{i}') for item in items if item.visible]\n"
    )


def _corpus(root: Path, fillers: int) -> Path:
    """``a.py`` (a copy's original), ``c.py`` and ``fillers`` files of unrelated code."""
    (root / "a.py").write_text(DUP_A, encoding="utf-8")
    (root / "c.py").write_text(UNRELATED, encoding="utf-8")
    for i in range(fillers):
        (root / f"filler_{i}.py").write_text(_filler(i), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def soak(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawServer, Path]]:
    root = _corpus(tmp_path_factory.mktemp("soak"), 30)
    raw = RawServer(root.parent / (root.name + "-cache"))
    try:
        raw.initialize(root)
        raw.notify("textDocument/didOpen", _open_params(root, DUP_A, next(_versions)))
        yield raw, root
    finally:
        code = raw.close()
        assert raw.junk == [], "stdout carried something that is not protocol"
        assert code == 0


def _open_params(root: Path, text: str, version: int) -> dict[str, Any]:
    uri = (root / "a.py").as_uri()
    return {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}}


def _edit(root: Path) -> st.SearchStrategy[Any]:
    position = st.fixed_dictionaries({"line": st.integers(0, 40), "character": st.integers(0, 120)})
    return st.tuples(st.just("edit"), position, position, st.sampled_from(FRAGMENTS))


_ACTIONS = st.one_of(
    st.tuples(st.just("disk"), st.sampled_from(["new.py", "b.py"]), st.sampled_from(FRAGMENTS)),
    st.tuples(st.just("delete"), st.sampled_from(["new.py", "b.py"])),
    st.tuples(
        st.just("score"),
        st.sampled_from(["text", "a.py", "file:///dev/zero", "file:///etc/passwd", "missing"]),
    ),
    st.tuples(st.just("garbage"), st.binary(max_size=200)),
)


def _disk(root: Path, action: tuple[Any, ...]) -> Path:
    """``("disk", name, text)`` writes a file, ``("delete", name)`` removes it."""
    path = root / action[1]
    if action[0] == "disk":
        path.write_text(action[2], encoding="utf-8")
    elif path.exists():
        path.unlink()
    return path


def _score_reference(root: Path, kind: str) -> dict[str, Any]:
    if kind == "text":
        return {"text": DUP_B}
    if kind in ("a.py", "missing"):
        return {"uri": (root / kind).as_uri()}
    return {"uri": kind}


def _apply(raw: RawServer, root: Path, action: tuple[Any, ...]) -> None:
    kind = action[0]
    uri = (root / "a.py").as_uri()
    if kind == "edit":
        _, start, end, text = action
        change = {"range": {"start": start, "end": end}, "text": text}
        raw.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": next(_versions)}, "contentChanges": [change]},
        )
    elif kind in ("disk", "delete"):
        path = _disk(root, action)
        change = {"uri": path.as_uri(), "type": 2 if kind == "disk" else 3}
        raw.notify("workspace/didChangeWatchedFiles", {"changes": [change]})
    elif kind == "score":
        params = {
            "hypothesis": {"uri": uri},
            "references": [_score_reference(root, action[1])],
            "language": "python",
        }
        response = raw.request("crystal/score", params)
        assert "result" in response or "error" in response
    else:
        raw.send_bytes(b"Content-Length: %d\r\n\r\n" % len(action[1]) + action[1])


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _fresh_scan(root: Path, cache: Path) -> ScanResult:
    config = load_config(str(root))
    with Store(str(cache)) as store:
        return run_scan(str(root), list_files(str(root), config), config, store=store)


def _fresh_scan_flags(root: Path, cache: Path) -> list[tuple[str, int]]:
    result = _fresh_scan(root, cache)
    return sorted(
        (finding.id, loc.first_line - 1)
        for finding in result.findings
        for loc in finding.locations
        if loc.path == "a.py"
    )


def _sequences(examples: int) -> settings:
    """Hypothesis settings of a soak test: ``examples`` sequences, no deadline."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@pytest.mark.slow
@_sequences(150)
@given(data=st.data())
def test_soak(soak: tuple[RawServer, Path], tmp_path: Path, data: st.DataObject) -> None:
    raw, root = soak
    actions = data.draw(st.lists(st.one_of(_edit(root), _ACTIONS), min_size=5, max_size=25))
    for action in actions:
        _apply(raw, root, action)
    assert raw.proc.poll() is None
    # back to a known state: the disk as it was, the buffer a renamed copy of a.py, saved
    for name in ("new.py", "b.py"):
        _apply(raw, root, ("delete", name))
    (root / "b.py").write_text(DUP_B, encoding="utf-8")
    change = {"uri": (root / "b.py").as_uri(), "type": 1}
    raw.notify("workspace/didChangeWatchedFiles", {"changes": [change]})
    version = next(_versions)
    raw.notify("textDocument/didClose", {"textDocument": {"uri": (root / "a.py").as_uri()}})
    raw.notify("textDocument/didOpen", _open_params(root, DUP_A, version))
    expected = _fresh_scan_flags(root, tmp_path / f"fresh-{os.getpid()}-{version}")
    uri = (root / "a.py").as_uri()

    def published(message: dict[str, Any]) -> list[tuple[str, int]] | None:
        if message.get("method") != "textDocument/publishDiagnostics":
            return None
        params = message["params"]
        if params["uri"] != uri or params.get("version") != version:
            return None
        return sorted(
            (d["data"]["findingId"], d["range"]["start"]["line"]) for d in params["diagnostics"]
        )

    # the watched-file change is indexed in the background: the document is checked again then
    try:
        raw.wait(lambda m: published(m) == expected, timeout=60)
    except AssertionError:
        last = [published(m) for m in raw.received if published(m) is not None]
        raise AssertionError(
            f"diagnostics {last[-1:]} never matched a fresh scan's {expected}"
        ) from None
    assert _rss_kb(raw.proc.pid) < MEMORY_BOUND_KB
    os.remove(root / "b.py")
    raw.notify(
        "workspace/didChangeWatchedFiles",
        {"changes": [{"uri": (root / "b.py").as_uri(), "type": 3}]},
    )


# ------------------------------------------------------------------------------ the MCP server
MCP_MEMORY_BOUND_KB = 1_000_000
MCP_NAMES = [b"lat\xe9.py", b"\x1b]0;pwned\x07x.py", "\u202egnp.py".encode(), b"nl\nx.py"]
_PATHS = st.sampled_from(
    [None, "a.py", "lat\\xe9.py", "nl\nx.py", "../x.py", "/etc/passwd", "new.py", "\udcff"]
)
_LANGUAGES = st.sampled_from([None, "python", "py", "klingon", ""])
_BAD_LINES = st.sampled_from(
    [  # (line, the id of its error answer: None for a null id, "" for no answer)
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}', 1),
        (b'{"jsonrpc":"1.0","id":2,"method":"tools/list"}', 2),
        (
            b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"scan","arguments":5}}',
            3,
        ),
        (
            b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{"p":"\\udcff"}}}',
            4,
        ),
        (b"[" * 100_000, None),
        (b"", ""),
    ]
)


def _arguments(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


_MCP_ACTIONS = st.one_of(
    st.builds(
        lambda code, language, path: (
            "check_duplication",
            _arguments(code=code, language=language, path=path),
        ),
        st.sampled_from(FRAGMENTS),
        _LANGUAGES,
        _PATHS,
    ),
    st.builds(lambda path: ("file_clones", _arguments(path=path)), _PATHS),
    st.builds(lambda top: ("scan", {"top": top}), st.integers(0, 5)),
    st.builds(
        lambda code, refs: ("score", {"code": code, "references": refs}),
        st.sampled_from(FRAGMENTS),
        st.sampled_from(["auto", [DUP_A], [], "x"]),
    ),
    st.builds(lambda language: ("trivially_shared", _arguments(language=language)), _LANGUAGES),
    st.builds(lambda bad: ("line", *bad), _BAD_LINES),
    st.builds(lambda b: ("line", b.replace(b"\n", b" "), ""), st.binary(max_size=200)),
    st.tuples(st.just("disk"), st.sampled_from(["new.py", "b.py"]), st.sampled_from(FRAGMENTS)),
    st.tuples(st.just("delete"), st.sampled_from(["new.py", "b.py"])),
)


@pytest.fixture(scope="module")
def mcp_soak(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawMcp, Path]]:
    root = _corpus(tmp_path_factory.mktemp("mcp-soak"), 20)
    for name in MCP_NAMES:
        with open(os.fsencode(root) + b"/" + name, "wb") as fh:
            fh.write(DUP_B.encode())
    raw = RawMcp(root, root.parent / (root.name + "-cache"))
    try:
        raw.initialize()
        yield raw, root
    finally:
        assert raw.close() == 0
        assert raw.junk == [], "stdout carried something that is not protocol"


def _apply_mcp(raw: RawMcp, root: Path, action: tuple[Any, ...]) -> None:
    kind = action[0]
    if kind == "line":
        raw.send_line(action[1])
        if action[2] != "":
            assert "error" in raw.answer(action[2])
    elif kind in ("disk", "delete"):
        _disk(root, action)
    else:
        answer = raw.call(kind, action[1])
        assert "result" in answer or "error" in answer, answer


@_sequences(40)
@given(data=st.data())
def test_mcp_soak(mcp_soak: tuple[RawMcp, Path], tmp_path: Path, data: st.DataObject) -> None:
    raw, root = mcp_soak
    for action in data.draw(st.lists(_MCP_ACTIONS, min_size=3, max_size=10)):
        _apply_mcp(raw, root, action)
    assert raw.proc.poll() is None
    for name in ("new.py", "b.py"):
        _apply_mcp(raw, root, ("delete", name))
    answer = raw.call("scan", {"top": 100})
    assert "result" in answer, answer
    got = answer["result"]["structuredContent"]
    expected = [f.id for f in _fresh_scan(root, tmp_path / f"fresh-{next(_versions)}").findings]
    assert got["summary"]["findings"] == len(expected)
    assert [c["id"] for c in got["top"]] == expected
    assert _rss_kb(raw.proc.pid) < MCP_MEMORY_BOUND_KB
