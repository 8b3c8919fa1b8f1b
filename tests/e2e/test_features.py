"""Hover, code actions, crystal/score and the workspace commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsp_harness import DUP_A, DUP_B, Launcher, Session, copy_range
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.registry import metric_names
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.tokens import tokenize

FAST = {"debounceMs": 0}
SUGGESTION = """\
def merge_spans(spans):
    ordered = sorted(spans, key=lambda s: s[0])
    result = []
    for start, end in ordered:
        if result and start <= result[-1][1]:
            result[-1] = (result[-1][0], max(result[-1][1], end))
        else:
            result.append((start, end))
    return result
"""


async def _flagged(s: Session) -> tuple[str, types.Diagnostic]:
    await s.ready()
    uri = s.open("b.py")
    [diag] = await s.diagnostics(uri)
    return uri, diag


def _range(rng: dict) -> types.Range:
    return types.Range(start=types.Position(**rng["start"]), end=types.Position(**rng["end"]))


def _text_in(text: str, rng: dict) -> str:
    lines = text.split("\n")
    (sl, sc), (el, ec) = (
        (rng["start"]["line"], rng["start"]["character"]),
        (
            rng["end"]["line"],
            rng["end"]["character"],
        ),
    )
    if sl == el:
        return lines[sl][sc:ec]
    return "\n".join([lines[sl][sc:], *lines[sl + 1 : el], lines[el][:ec]])


def _hover(s: Session, uri: str, line: int, character: int = 8) -> Any:
    return s.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
        )
    )


def _aligned_rows(markdown: str) -> list[str]:
    """The rows of the hover's alignment (its fenced diff block)."""
    return markdown.split("```diff\n", 1)[1].split("\n```", 1)[0].splitlines()


async def test_hover_shows_the_alignment_and_why(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    uri, diag = await _flagged(s)
    hover = await _hover(s, uri, diag.range.start.line + 2)
    assert hover is not None and hover.range == copy_range(diag)
    assert hover.contents.kind == types.MarkupKind.Markdown
    text = hover.contents.value
    assert text.startswith(
        f"**crystal: renamed copy** · `-` [a\\.py:1-14]({s.uri('a.py')}#L1) · `+` this copy · "
        "similarity **1.000** · CrystalBLEU "
    )
    assert "- this copy: function combine\\_ranges (b\\.py:4-17, python)" in text
    assert f"- other copy: [a\\.py:1-14]({s.uri('a.py')}#L1) function merge\\_intervals" in text
    assert " copied tokens" in text
    assert "- clone class: 2 copies, lowest similarity 1.000" in text
    rows = _aligned_rows(text)
    assert rows[:2] == ["- 1 def merge_intervals(intervals):", "+ 4 def combine_ranges(ranges):"]
    assert "+ 8     for lo, hi in items:" in rows
    assert "*6 of 15 corresponding lines, the differing ones kept.*" in text
    assert 6 <= len([r for r in rows if "⋯" not in r]) <= 12  # six rows, renamed ones two lines
    assert "[compare](command:crystal.compare?" in text
    assert "Shared non-trivial n-grams" in text
    assert "crystalbleu|tok:" in text
    assert await _hover(s, uri, 0, 0) is None


async def test_underline_first_line(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration={**FAST, "underline": "firstLine"})
    uri, diag = await _flagged(s)
    header = DUP_B.split("\n")[3]
    assert diag.range == types.Range(
        start=types.Position(line=3, character=0),
        end=types.Position(line=3, character=len(header)),
    )
    assert " of function merge_intervals in a.py:1: " in diag.message
    assert diag.message.endswith(" (this copy: lines 4-17)")
    # the hover and the quick fixes still cover the whole copy
    hover = await _hover(s, uri, 12)
    assert hover is not None and (hover.range.start.line, hover.range.end.line) == (3, 16)
    actions = await s.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    assert [list(a.diagnostics) for a in actions] == [[diag], [diag], [diag]]
    # back to ranges, live: a function copied whole keeps its header line, its full range
    # is the last related entry
    s.configuration["underline"] = "range"
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    [again] = await s.diagnostics(uri, s.change(uri, DUP_B + "\n"))
    assert again.range == diag.range
    whole = copy_range(again)
    assert (whole.start.line, whole.end.line) == (3, 16)
    assert not [m for m in s.client.messages if "crystalLsp.underline" in m.message]


async def test_code_actions_go_to_the_copy_and_suppress(
    launcher: Launcher, dup_workspace: Path
) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    uri, diag = await _flagged(s)
    actions = await s.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    titles = [a.title for a in actions]
    assert titles == [
        "Go to the other copy (a.py:1)",
        "Compare with the other copy (a.py:1)",
        "Suppress this duplicate (crystal: ignore)",
    ]
    go, _, suppress = actions
    assert list(go.diagnostics) == [diag] and go.kind == types.CodeActionKind.QuickFix
    await s.command(go.command.command, *go.command.arguments)
    [shown] = s.client.shown_documents
    assert shown.uri == s.uri("a.py") and shown.selection.start.line == 0
    [edit] = suppress.edit.changes[uri]
    assert edit.new_text == "# crystal: ignore\n"
    assert edit.range.start == types.Position(line=diag.range.start.line, character=0)
    lines = DUP_B.split("\n")
    lines.insert(diag.range.start.line, edit.new_text.rstrip("\n"))
    version = s.change(uri, "\n".join(lines))
    assert await s.diagnostics(uri, version) == []


async def test_score_with_texts_matches_the_library(
    launcher: Launcher, dup_workspace: Path
) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    result = await s.request(
        "crystal/score",
        {"hypothesis": {"text": SUGGESTION}, "references": [{"text": DUP_A}], "language": "python"},
    )
    trivial = await s.command("crystal.showTrivialNgrams", {"language": "python", "top": 100000})
    sset = TriviallySharedSet(
        {tuple(x["ngram"]): x["count"] for x in trivial["ngrams"]},
        k=trivial["k"],
        language="python",
    )
    hyp, ref = tokenize(SUGGESTION, "python").texts, tokenize(DUP_A, "python").texts
    assert result["language"] == "python"
    assert result["bleu"] == pytest.approx(CrystalBLEU(None).sentence_score(hyp, [ref]))
    assert result["crystalbleu"] == pytest.approx(CrystalBLEU(sset).sentence_score(hyp, [ref]))
    assert f"S:{trivial['fingerprint']}" in result["signature"]["crystalbleu"]
    assert result["signature"]["bleu"].startswith("bleu|")
    [reference] = result["references"]
    assert reference["bleu"] == pytest.approx(result["bleu"])
    assert result["matches"], "shared non-trivial n-grams"
    for match in result["matches"]:
        assert tuple(match["ngram"]) not in sset
        for rng in match["hypothesisRanges"]:
            assert "".join(_text_in(SUGGESTION, rng).split()) == "".join(match["ngram"])
        assert all(r["index"] == 0 and "uri" not in r for r in match["referenceRanges"])


async def test_score_document_ranges_and_files(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    uri, diag = await _flagged(s)
    whole = copy_range(diag)
    rng = {
        "start": {"line": whole.start.line, "character": 0},
        "end": {"line": whole.end.line, "character": whole.end.character},
    }
    result = await s.request(
        "crystal/score",
        {"hypothesis": {"uri": uri, "range": rng}, "references": [{"uri": s.uri("a.py")}]},
    )
    assert result["language"] == "python"
    assert 0 < result["crystalbleu"] < 1
    assert result["references"][0]["uri"] == s.uri("a.py")
    for match in result["matches"]:
        for hr in match["hypothesisRanges"]:
            assert whole.start.line <= hr["start"]["line"] <= whole.end.line
        assert all(r["uri"] == s.uri("a.py") for r in match["referenceRanges"])
    same = await s.command(
        "crystal.scoreSelection", {"uri": uri, "range": rng, "references": [{"uri": s.uri("a.py")}]}
    )
    assert same == result


async def test_score_auto_references(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    result = await s.command(
        "crystal.scoreText", {"text": SUGGESTION, "language": "python", "references": "auto"}
    )
    assert 1 <= len(result["references"]) <= 3
    uris = {r["uri"] for r in result["references"]}
    assert uris <= {s.uri("a.py"), s.uri("b.py")} and uris
    assert all("function" in r["label"] for r in result["references"])
    assert result["crystalbleu"] > 0
    # a selection is never its own reference
    a = s.open("a.py")
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 14, "character": 0}}
    own = await s.request(
        "crystal/score", {"hypothesis": {"uri": a, "range": whole}, "references": "auto"}
    )
    assert all(r["uri"] != a for r in own["references"])
    assert own["references"][0]["uri"] == s.uri("b.py")


async def test_score_extra_metrics(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    result = await s.request(
        "crystal/score",
        {
            "hypothesis": {"text": SUGGESTION},
            "references": [{"text": DUP_A}],
            "language": "python",
            "metrics": ["ruby"],
        },
    )
    if "ruby" in metric_names():
        assert 0.0 <= result["ruby"] <= 1.0
    else:
        assert "ruby" not in result


async def test_unknown_metrics_are_errors(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    params = {"hypothesis": {"text": SUGGESTION}, "references": [{"text": DUP_A}]}
    with pytest.raises(JsonRpcInvalidParams, match="unknown metric 'meteor'"):
        await s.request("crystal/score", {**params, "language": "python", "metrics": ["meteor"]})


async def test_trivial_ngrams_and_rebuild(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    top = await s.command("crystal.showTrivialNgrams", {"language": "python", "top": 5})
    assert top["language"] == "python" and top["k"] == 500 and len(top["fingerprint"]) == 12
    counts = [x["count"] for x in top["ngrams"]]
    assert len(counts) == 5 and counts == sorted(counts, reverse=True)
    default = await s.command("crystal.showTrivialNgrams", {"language": "py"})
    assert len(default["ngrams"]) == 50 and default["language"] == "python"
    java = await s.command("crystal.showTrivialNgrams", {"language": "java", "top": 3})
    assert java["language"] == "java" and len(java["ngrams"]) == 3  # the bundled set
    rebuilt = await s.command("crystal.rebuildIndex")
    assert rebuilt["files"] == 3


BAD_SCORES = [
    {"hypothesis": 3, "references": "auto"},
    {"hypothesis": {"text": "x"}, "references": []},
    {"hypothesis": {"text": "x"}, "references": "auto", "language": "klingon"},
    {"hypothesis": {"uri": "file:///no/such/file.py"}, "references": "auto"},
    [1, 2],
    {"hypothesis": {"text": "x", "range": {"start": 1}}, "references": "auto"},
    {"hypothesis": {"text": "x"}, "references": [{"label": "no text"}]},
    {"hypothesis": {"text": "x"}, "references": "auto", "metrics": "ruby"},
]


async def test_bad_score_requests_are_errors(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    for params in BAD_SCORES:
        with pytest.raises(JsonRpcException):
            await s.request("crystal/score", params)
    ok = await s.request(
        "crystal/score", {"hypothesis": {"text": "x = 1"}, "references": [{"text": "x = 2"}]}
    )
    assert ok["language"] == "python"


async def test_bad_commands_are_errors(launcher: Launcher, dup_workspace: Path) -> None:
    s = await launcher.start(dup_workspace, configuration=FAST)
    await s.ready()
    for name, args in [
        ("crystal.noSuchCommand", []),
        ("crystal.scoreText", []),
        ("crystal.scoreText", [{"text": 3}]),
        ("crystal.scoreSelection", [{"uri": 3}]),
        ("crystal.showTrivialNgrams", [{"language": "python", "top": -1}]),
        ("crystal.showTrivialNgrams", [{}]),
        ("crystal.showDocument", ["file:///x"]),
    ]:
        with pytest.raises(JsonRpcException):
            await s.command(name, *args)
    assert not [m for m in s.client.messages if m.type == types.MessageType.Error]
    uri = s.open("b.py")
    assert len(await s.diagnostics(uri)) == 1
