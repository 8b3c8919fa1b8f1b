"""A bounded soak test of the server: random messages, edits, file changes and score requests.

Hypothesis draws sequences of actions against one running server: edits of an open buffer at
random (also out-of-range) positions, files written and deleted on disk with the watched-files
notification, ``crystal/score`` requests with good and hostile references, and garbage frames.
After every sequence the server must answer, stay under a memory bound, write only protocol to
stdout, and -- once the buffer and the disk are back to a known state -- publish exactly the
diagnostics a fresh scan of that state gives (same clone classes at the same lines).
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
from raw_client import RawServer

from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.scan import run_scan
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


@pytest.fixture(scope="module")
def soak(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawServer, Path]]:
    root = tmp_path_factory.mktemp("soak")
    (root / "a.py").write_text(DUP_A, encoding="utf-8")
    (root / "c.py").write_text(UNRELATED, encoding="utf-8")
    for i in range(30):
        (root / f"filler_{i}.py").write_text(_filler(i), encoding="utf-8")
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
        path = root / action[1]
        if kind == "disk":
            path.write_text(action[2], encoding="utf-8")
        elif path.exists():
            path.unlink()
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


def _fresh_scan_flags(root: Path, cache: Path) -> list[tuple[str, int]]:
    config = load_config(str(root))
    with Store(str(cache)) as store:
        result = run_scan(str(root), list_files(str(root), config), config, store=store)
    return sorted(
        (finding.id, loc.first_line - 1)
        for finding in result.findings
        for loc in finding.locations
        if loc.path == "a.py"
    )


@pytest.mark.slow
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
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
