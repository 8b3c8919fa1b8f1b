"""Diagnostics: unsaved buffers, debouncing and stale results, closing, disk changes, filters."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import DUP_A, DUP_B, UNRELATED, Launcher, Session, copy_range, other_copies
from lsprotocol import types

FAST = {"debounceMs": 0}


async def until(session: Session, uri: str, predicate, what: str) -> list[types.Diagnostic]:
    await session.wait(
        lambda: (
            uri in session.client.diagnostics and predicate(list(session.client.diagnostics[uri]))
        ),
        what,
    )
    return list(session.client.diagnostics[uri])


def watched(session: Session, *changes: tuple[str, types.FileChangeType]) -> None:
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=session.uri(rel), type=kind) for rel, kind in changes]
        )
    )


async def test_the_unsaved_buffer_is_checked(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    uri = s.open("c.py")
    assert await s.diagnostics(uri) == []
    version = s.change(uri, UNRELATED + "\n\n" + DUP_A.replace("intervals", "spans"))
    [diag] = await s.diagnostics(uri, version)
    assert diag.range.start.line == 13
    assert {r.location.uri for r in other_copies(diag)} == {s.uri("a.py"), s.uri("b.py")}
    # the file on disk did not change: undo the edit, the duplicate goes
    version = s.change(uri, UNRELATED)
    assert await s.diagnostics(uri, version) == []


async def test_copies_within_one_file(launcher: Launcher) -> None:
    root = launcher.workspace({"c.py": UNRELATED})
    s = await launcher.start(root, configuration=FAST)
    await s.ready()
    uri = s.open("twice.py", DUP_A + "\n\n" + DUP_B)
    # one diagnostic per copy and file: at the first copy, the second named in the related entries
    [diag] = await s.diagnostics(uri)
    assert diag.range.start.line == 0
    [related] = other_copies(diag)
    assert related.location.uri == uri and related.location.range.start.line == 19


async def test_incremental_edits_keep_diagnostics_right(
    launcher: Launcher, dup_workspace: Path
) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    uri = s.open("b.py")
    [before] = await s.diagnostics(uri)
    # insert two lines above the function, then type inside it
    at = types.Position(line=1, character=0)
    version = s.edit(uri, types.Range(start=at, end=at), "x = 1\ny = 2\n")
    [moved] = await s.diagnostics(uri, version)
    assert moved.range.start.line == before.range.start.line + 2
    inside = types.Position(line=7, character=4)
    version = s.edit(uri, types.Range(start=inside, end=inside), "# note\n    ")
    [still] = await s.diagnostics(uri, version)
    assert still.range.start.line == moved.range.start.line
    assert copy_range(still).end.line == copy_range(moved).end.line + 1


async def test_rapid_edits_publish_only_current_results(
    launcher: Launcher, dup_workspace: Path
) -> None:
    s = await launcher.start(dup_workspace, configuration={"debounceMs": 150})
    await s.ready()
    uri = s.open("c.py")
    await s.diagnostics(uri)
    texts = [UNRELATED + "\n" * i for i in range(1, 8)] + [UNRELATED + "\n\n" + DUP_A]
    versions = [s.change(uri, text) for text in texts]
    diags = await s.diagnostics(uri, versions[-1])
    assert len(diags) == 1
    published = [p.version for p in s.publications(uri)]
    assert published == sorted(published)
    assert published[-1] == versions[-1]


async def test_stale_results_are_dropped(launcher: Launcher, dup_workspace: Path) -> None:
    # every check takes 1.5 s on the worker: the edit arrives while version 1 is checked
    s = await launcher.start(
        dup_workspace, configuration=FAST, env={"CRYSTAL_LSP_TEST_CHECK_DELAY": "1.5"}
    )
    await s.ready()
    uri = s.open("b.py")
    version = s.change(uri, "print('nothing to see')\n")
    assert await s.diagnostics(uri, version) == []
    assert [p.version for p in s.publications(uri)] == [version]


async def test_closing_clears_diagnostics(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    uri = s.open("b.py")
    assert len(await s.diagnostics(uri)) == 1
    s.close(uri)
    await s.wait(lambda: len(s.publications(uri)[-1].diagnostics) == 0, "cleared diagnostics")
    assert s.publications(uri)[-1].version is None


async def test_watched_files_update_the_index_and_open_documents(
    launcher: Launcher, dup_workspace: Path
) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    uri = s.open("c.py")
    assert await s.diagnostics(uri) == []
    copy = UNRELATED.replace("Greeter", "Welcomer").replace("greet", "welcome")
    (dup_workspace / "d.py").write_text(copy, encoding="utf-8")
    watched(s, ("d.py", types.FileChangeType.Created))
    [diag] = await until(s, uri, lambda d: len(d) == 1, "the new copy in d.py")
    assert diag.related_information[0].location.uri == s.uri("d.py")
    (dup_workspace / "d.py").write_text("print('gone')\n", encoding="utf-8")
    watched(s, ("d.py", types.FileChangeType.Changed))
    await until(s, uri, lambda d: d == [], "d.py no longer a copy")
    (dup_workspace / "d.py").unlink()
    watched(s, ("d.py", types.FileChangeType.Deleted))
    status = await s.command("crystal.rebuildIndex")
    assert status["files"] == 3


async def test_saving_updates_the_index(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    b = s.open("b.py")
    [diag] = await s.diagnostics(b)
    assert len(other_copies(diag)) == 1
    c = s.open("c.py")
    text = DUP_A.replace("merged", "joined")
    version = s.change(c, text)
    await s.diagnostics(c, version)
    (dup_workspace / "c.py").write_text(text, encoding="utf-8")
    s.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=c))
    )
    [diag] = await until(
        s, b, lambda d: len(d) == 1 and len(other_copies(d[0])) == 2, "three copies"
    )
    assert {r.location.uri for r in other_copies(diag)} == {s.uri("a.py"), c}


async def test_suppressions_excludes_and_languages(launcher: Launcher) -> None:
    suppressed = DUP_B.replace("def combine", "# crystal: ignore\ndef combine")
    root = launcher.workspace(
        {"a.py": DUP_A, "b.py": suppressed, "lib/b2.py": DUP_B, "c.py": UNRELATED}
    )
    s = await launcher.start(root, configuration={"debounceMs": 0, "exclude": ["lib/**"]})
    await s.ready()
    a = s.open("a.py")
    assert await s.diagnostics(a) == []  # its only copies are suppressed or excluded
    v = s.open("lib/b2.py")
    assert await s.diagnostics(v) == []
    assert any("excluded" in m.message for m in s.client.log_messages)
    s.configuration["exclude"] = []
    s.configuration["languages"] = ["java"]
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await s.wait(
        lambda: any("not in crystalLsp.languages" in m.message for m in s.client.log_messages),
        "language skip",
    )
    s.configuration["languages"] = ["python"]
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    [diag] = await until(s, a, lambda d: len(d) == 1, "lib copy once not excluded")
    assert diag.related_information[0].location.uri == s.uri("lib/b2.py")


async def test_documents_that_get_no_diagnostics_log_once(launcher: Launcher) -> None:
    root = launcher.workspace({"a.py": DUP_A, "b.py": DUP_B})
    s = await launcher.start(root, configuration={"debounceMs": 0, "maxFileBytes": 20000})
    await s.ready()
    cases = {
        "bin.py": ("python", "x = 1\n\0\0binary"),
        "big.py": ("python", DUP_B * 60),
        "min.js": ("javascript", "var a=1;" * 2000),
        "notes.unknownext": ("foo-lang", DUP_A),
        "notes.txt": ("plaintext", DUP_A),
    }
    uris = {name: s.open(name, text, language_id) for name, (language_id, text) in cases.items()}
    for name, uri in uris.items():
        assert await s.diagnostics(uri) == [], name
        version = s.change(uri, cases[name][1] + " ")
        assert await s.diagnostics(uri, version) == [], name
    for name, uri in uris.items():
        lines = [m for m in s.client.log_messages if uri in m.message]
        assert len(lines) == 1, (name, lines)
    reasons = " ".join(m.message for m in s.client.log_messages)
    for reason in ("binary", "too large", "minified", "unknown language", "not a programming"):
        assert reason in reasons


async def test_positions_are_utf16(launcher: Launcher) -> None:
    emoji = DUP_A.replace("return merged, total", 'return merged, total, "😀😀"')
    root = launcher.workspace({"a.py": emoji, "c.py": UNRELATED})
    s = await launcher.start(root, configuration=FAST)
    await s.ready()
    text = "x = '😀'\r\n" + DUP_B.replace("return out, size", 'return out, size, "😀😀"').replace(
        "\n", "\r\n"
    )
    uri = s.open("b.py", text)
    [diag] = await s.diagnostics(uri)
    last = text.split("\r\n")[diag.range.end.line]
    assert diag.range.end.character == len(last.encode("utf-16-le")) // 2
    assert diag.range.start == types.Position(line=4, character=0)
    related = diag.related_information[0].location.range
    assert (
        related.end.character == len(emoji.split("\n")[related.end.line].encode("utf-16-le")) // 2
    )


async def test_a_whole_file_copy_is_flagged_on_its_code_not_its_imports(
    launcher: Launcher,
) -> None:
    module = "import os\nimport sys\n\n\n" + DUP_A + "\n\n" + UNRELATED
    root = launcher.workspace({"a.py": module, "b.py": module, "c.py": "x = 1\n"})
    s = await launcher.start(root, configuration=FAST)
    await s.ready()
    uri = s.open("b.py")
    diagnostics = await s.diagnostics(uri)
    assert diagnostics, "a whole-file copy is flagged"
    first = min(d.range.start.line for d in diagnostics)
    # on `def merge_intervals(...)` (line 4), the first unit, not on `import os` (line 0)
    assert first == module.split("\n").index("def merge_intervals(intervals):") == 4
    assert all(d.range.start.line == d.range.end.line for d in diagnostics)
