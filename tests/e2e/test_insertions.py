"""Inserted blocks scored as they land: code lenses, the tally, the comparison, the settings."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from lsp_harness import DUP_A, UNRELATED, Launcher, Session
from lsprotocol import types

FAST = {"debounceMs": 0}
RENAMED_A = (
    DUP_A.replace("merge_intervals", "join_ranges")
    .replace("intervals", "ranges")
    .replace("ordered", "by_start")
)
NEW_CODE = '''\
def roman(number):
    """The Roman numeral of a whole number from 1 to 3999."""
    digits = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC")]
    digits += [(50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = []
    for value, letters in digits:
        count, number = divmod(number, value)
        out.append(letters * count)
    return "".join(out)
'''


def _position(line: int, character: int = 0) -> types.Position:
    return types.Position(line=line, character=character)


def _at(line: int, character: int = 0) -> types.Range:
    return types.Range(start=_position(line, character), end=_position(line, character))


class Doc:
    """An open document and its text, edited as an editor would."""

    def __init__(self, s: Session, rel: str, text: str) -> None:
        self.s, self.text = s, text
        self.uri = s.open(rel, text)

    def insert(self, line: int, text: str, character: int = 0) -> int:
        lines = self.text.split("\n")
        offset = sum(len(x) + 1 for x in lines[:line]) + character
        self.text = self.text[:offset] + text + self.text[offset:]
        return self.s.edit(self.uri, _at(line, character), text)

    def type(self, line: int, character: int, text: str) -> None:
        """Type ``text`` one character at a time (a keystroke per change)."""
        for char in text:
            self.insert(line, char, character)
            if char == "\n":
                line, character = line + 1, 0
            else:
                character += 1

    @property
    def lines(self) -> int:
        return self.text.count("\n")


async def _start(launcher: Launcher, **settings: Any) -> tuple[Session, Doc]:
    ws = launcher.workspace({"a.py": DUP_A, "c.py": UNRELATED})
    s = await launcher.start(ws, configuration={**FAST, **settings})
    await s.ready()
    doc = Doc(s, "c.py", UNRELATED)
    await s.diagnostics(doc.uri)
    return s, doc


async def _no_lenses(s: Session, uri: str) -> None:
    """Wait until the document has no code lens (asked every 50 ms)."""
    for _ in range(1200):
        if not await s.lenses(uri):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the code lenses of {uri} did not go")


def _title(lens: types.CodeLens) -> str:
    assert lens.command is not None
    return lens.command.title


async def test_a_pasted_renamed_copy_gets_a_lens_naming_the_original(launcher: Launcher) -> None:
    s, doc = await _start(launcher)
    at = doc.lines
    doc.insert(at, "\n\n" + RENAMED_A)
    lens = await s.lens(doc.uri)
    title = _title(lens)
    assert title.startswith("≈ renamed copy of a.py:1-14 (function merge_intervals) · "), title
    assert lens.range.start.line == at + 2  # the block's first non-blank line
    assert lens.command is not None and lens.command.command == "crystal.compare"
    [spec] = lens.command.arguments or []
    assert spec["left"]["uri"] == s.uri("a.py") and spec["right"]["uri"] == doc.uri
    assert spec["right"]["range"]["start"]["line"] == at + 2
    # The lens may be asked for between the scoring and the refresh request reaching the client.
    await s.wait(lambda: s.lens_refreshes >= 1, "the server to ask for a lens refresh")
    [entry] = (await s.request("crystal/insertions", {}))["insertions"]
    assert entry["verdict"] == "copy" and entry["kind"] == "renamed"
    assert entry["similarity"] == 1.0 and 0 < entry["crystalbleu"] < 1
    assert entry["path"] == "c.py" and entry["lines"] == 14 and entry["state"] == "shown"
    assert entry["closest"]["label"].startswith("a.py:1-14")
    assert entry["closest"]["crystalbleu"] == entry["crystalbleu"] or len(entry["references"]) > 1


async def test_a_new_function_is_new_code(launcher: Launcher) -> None:
    s, doc = await _start(launcher)
    doc.insert(doc.lines, "\n\n" + NEW_CODE)
    title = _title(await s.lens(doc.uri))
    assert title.startswith("new code · "), title
    [entry] = (await s.request("crystal/insertions", {}))["insertions"]
    assert entry["verdict"] == "new" and entry["kind"] is None


async def test_score_equals_crystal_score_of_the_same_lines(launcher: Launcher) -> None:
    """One scoring path: the lens's numbers are crystal/score's for the block's range."""
    s, doc = await _start(launcher)
    at = doc.lines + 2
    doc.insert(doc.lines, "\n\n" + RENAMED_A)
    lens = await s.lens(doc.uri)
    [spec] = lens.command.arguments if lens.command and lens.command.arguments else []
    direct = await s.request(
        "crystal/score",
        {"hypothesis": {"uri": doc.uri, "range": spec["right"]["range"]}, "references": "auto"},
    )
    [entry] = (await s.request("crystal/insertions", {}))["insertions"]
    assert direct["crystalbleu"] == entry["crystalbleu"] and direct["bleu"] == entry["bleu"]
    assert [r["label"] for r in direct["references"]] == entry["references"]
    assert spec["right"]["range"]["start"]["line"] == at


async def test_keystrokes_and_small_pastes_do_not_land(launcher: Launcher) -> None:
    s, doc = await _start(launcher)
    doc.type(doc.lines, 0, "\ndef twice(x):\n    y = x * 2\n    return y\n")
    doc.insert(doc.lines, "\nz = 1\nw = 2\n")  # two non-blank lines: below the minimum
    doc.insert(doc.lines, "\n\n" + NEW_CODE)
    await s.lens(doc.uri)
    [entry] = (await s.request("crystal/insertions", {}))["insertions"]
    assert entry["lines"] == 9
    assert len(await s.lenses(doc.uri)) == 1


async def test_the_lens_moves_with_edits_above_and_goes_when_the_block_is_edited(
    launcher: Launcher,
) -> None:
    s, doc = await _start(launcher, insertionLensSeconds=0)
    first = doc.lines + 2
    doc.insert(doc.lines, "\n\n" + RENAMED_A)
    await s.lens(doc.uri)
    doc.insert(0, "import os\n")  # above the block: the lens moves down one line
    doc.type(5, 0, "# note ")  # typing elsewhere: the lens stays
    await s.diagnostics(doc.uri)
    [lens] = await s.lenses(doc.uri)
    assert lens.range.start.line == first + 1
    refreshes = s.lens_refreshes
    doc.type(first + 3, 4, "x")  # inside the block
    await s.wait(lambda: s.lens_refreshes > refreshes, "a refresh after the edit")
    await _no_lenses(s, doc.uri)
    [entry] = (await s.request("crystal/insertions", {}))["insertions"]
    assert entry["state"] == "edited" and entry["verdict"] == "copy"


async def test_the_lens_expires(launcher: Launcher) -> None:
    s, doc = await _start(launcher, insertionLensSeconds=1)
    doc.insert(doc.lines, "\n\n" + NEW_CODE)
    await s.lens(doc.uri)
    await _no_lenses(s, doc.uri)
    [entry] = (await s.request("crystal/insertions", {}))["insertions"]
    assert entry["state"] == "expired"


async def test_several_changes_in_one_did_change_land_where_they_end(launcher: Launcher) -> None:
    """An agent's edit: several changes in one didChange, each block found where it ends."""
    s, doc = await _start(launcher)
    end = doc.lines
    version = s.versions[doc.uri] = s.versions[doc.uri] + 1
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=doc.uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(range=_at(end), text="\n\n" + NEW_CODE),
                types.TextDocumentContentChangePartial(range=_at(0), text=RENAMED_A + "\n"),
            ],
        )
    )
    await s.lens(doc.uri, lambda lens: _title(lens).startswith("≈"))
    await s.lens(doc.uri, lambda lens: _title(lens).startswith("new code"))
    titles = {lens.range.start.line: _title(lens) for lens in await s.lenses(doc.uri)}
    assert titles[0].startswith("≈ renamed copy of a.py:1-14"), titles
    assert titles[RENAMED_A.count("\n") + 1 + end + 2].startswith("new code"), titles


async def test_a_whole_document_change_lands_the_inserted_lines(launcher: Launcher) -> None:
    s, doc = await _start(launcher)
    doc.text = doc.text + "\n\n" + NEW_CODE
    s.change(doc.uri, doc.text)
    lens = await s.lens(doc.uri)
    assert lens.range.start.line == UNRELATED.count("\n") + 2
    assert _title(lens).startswith("new code")


async def test_tally_exports_jsonl_that_score_reads(launcher: Launcher, tmp_path: Path) -> None:
    s, doc = await _start(launcher)
    doc.insert(doc.lines, "\n\n" + RENAMED_A)
    await s.lens(doc.uri)
    doc.insert(doc.lines, "\n\n" + NEW_CODE)
    await s.lens(doc.uri, lambda lens: _title(lens).startswith("new code"))
    tally = await s.request("crystal/insertions", {})
    assert tally["summary"] == {
        "landed": 2,
        "copies": 1,
        "new": 1,
        "unscored": 0,
        "kinds": {"renamed": 1},
        "dropped": 0,
    }
    export = await s.request("crystal/insertions", {"format": "jsonl"})
    assert (export["count"], export["withoutReferences"]) == (2, 0) or (
        export["count"],
        export["withoutReferences"],
    ) == (1, 1)  # the new code aligned with nothing: no item for `score`
    rows = [json.loads(line) for line in export["jsonl"].splitlines()]
    assert rows[0]["hypothesis"] == RENAMED_A.rstrip("\n")
    assert rows[0]["references"][0] == DUP_A.rstrip("\n")
    path = tmp_path / "insertions.jsonl"
    path.write_text(export["jsonl"], encoding="utf-8")
    per_item = tmp_path / "items.jsonl"
    command = ["score", "--jsonl", str(path), "--lang", "python", "--metric", "bleu"]
    run = subprocess.run(
        [sys.executable, "-m", "crystal_lsp", *command, "--per-item", str(per_item)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    items = [json.loads(line) for line in per_item.read_text(encoding="utf-8").splitlines()]
    assert [item["id"] for item in items] == [row["id"] for row in rows]
    by_id = {e["id"]: e for e in tally["insertions"]}
    for item, row in zip(items, rows):
        entry = by_id[int(row["id"].rsplit("#", 1)[1])]
        assert abs(item["bleu"] - entry["bleu"]) < 1e-12  # BLEU needs no S: the same score


async def test_settings_turn_it_off_and_raise_a_diagnostic(launcher: Launcher) -> None:
    s, doc = await _start(launcher, insertionDiagnostics=True)
    doc.insert(doc.lines, "\n\n" + RENAMED_A)
    await s.lens(doc.uri)
    diagnostics = await s.wait(
        lambda: [
            d for p in s.publications(doc.uri) for d in p.diagnostics if d.code == "inserted-copy"
        ],
        "the inserted-copy diagnostic",
    )
    assert diagnostics[0].message.startswith("Inserted code is a renamed copy of a.py:1-14")
    [related] = diagnostics[0].related_information or []
    assert related.location.uri == s.uri("a.py")
    refreshes = s.lens_refreshes
    s.configuration["insertions"] = False
    s.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"crystalLsp": s.configuration})
    )
    await s.wait(lambda: s.lens_refreshes > refreshes, "the lens to go")
    await _no_lenses(s, doc.uri)
    await s.wait(
        lambda: all(d.code != "inserted-copy" for d in s.publications(doc.uri)[-1].diagnostics),
        "the inserted-copy diagnostic to go",
    )
    doc.insert(doc.lines, "\n\n" + NEW_CODE)
    await s.diagnostics(doc.uri)
    assert len((await s.request("crystal/insertions", {}))["insertions"]) == 1


async def test_min_lines_setting(launcher: Launcher) -> None:
    s, doc = await _start(launcher, insertionMinLines=20)
    doc.insert(doc.lines, "\n\n" + NEW_CODE)
    await s.diagnostics(doc.uri)
    doc.insert(doc.lines, "\n\n" + NEW_CODE.replace("roman", "roman2") * 3)
    await s.lens(doc.uri)
    [entry] = (await s.request("crystal/insertions", {}))["insertions"]
    assert entry["lines"] == 27


async def test_compare_gives_both_texts_and_goes_to_the_original(launcher: Launcher) -> None:
    s, doc = await _start(launcher)
    doc.insert(doc.lines, "\n\n" + RENAMED_A)
    lens = await s.lens(doc.uri)
    assert lens.command is not None and lens.command.arguments
    result = await s.command("crystal.compare", *lens.command.arguments)
    assert result["left"]["text"] == DUP_A and result["right"]["text"] == RENAMED_A
    assert result["shown"]["shown"] is True
    [shown] = s.client.shown_documents
    assert shown.uri == s.uri("a.py") and shown.selection is not None
    assert shown.selection.start.line == 0
    quiet = await s.command("crystal.compare", {**lens.command.arguments[0], "goTo": False})
    assert "shown" not in quiet and len(s.client.shown_documents) == 1


async def test_compare_action_on_a_flagged_copy(launcher: Launcher) -> None:
    ws = launcher.workspace({"a.py": DUP_A, "b.py": RENAMED_A})
    s = await launcher.start(ws, configuration=FAST)
    await s.ready()
    uri = s.open("b.py")
    [diagnostic] = await s.diagnostics(uri)
    actions = await s.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    compare = [a for a in actions or [] if a.title.startswith("Compare with the other copy")]
    assert compare and isinstance(compare[0], types.CodeAction)
    command = compare[0].command
    assert command is not None and command.command == "crystal.compare"
    result = await s.command("crystal.compare", {**(command.arguments or [])[0], "goTo": False})
    assert result["left"]["text"] == DUP_A and result["right"]["text"] == RENAMED_A
    # the renaming, and the copy with the original's names: only the docstring still differs
    assert result["renaming"] == [
        ["merge_intervals", "join_ranges"],
        ["intervals", "ranges"],
        ["ordered", "by_start"],
    ]
    assert result["right"]["mapped"] == DUP_A.replace(
        '"""Merge overlapping intervals', '"""Merge overlapping ranges'
    )
    assert result["header"].startswith("# crystal: renamed in the copy (3)")


async def test_a_selection_of_a_modified_buffer_is_not_its_own_reference(
    launcher: Launcher,
) -> None:
    s, doc = await _start(launcher)
    doc.insert(doc.lines, "\n\n" + NEW_CODE)
    await s.diagnostics(doc.uri)  # the buffer, with the block, is in the index now
    first = UNRELATED.count("\n") + 2
    rng = {"start": {"line": first, "character": 0}, "end": {"line": first + 8, "character": 0}}
    result = await s.request(
        "crystal/score", {"hypothesis": {"uri": doc.uri, "range": rng}, "references": "auto"}
    )
    assert all(not r["label"].startswith("c.py") for r in result["references"]), result


async def test_bad_tally_params_are_invalid(launcher: Launcher) -> None:
    import pytest
    from pygls.exceptions import JsonRpcInvalidParams

    s, _ = await _start(launcher)
    with pytest.raises(JsonRpcInvalidParams):
        await s.request("crystal/insertions", {"format": "xml"})
    with pytest.raises(JsonRpcInvalidParams):
        await s.command("crystal.compare", {"left": {"uri": 3}})
