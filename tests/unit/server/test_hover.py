"""Unit tests of the hover (:mod:`crystal_lsp.server.hover`) and its side-by-side alignment."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.server.alignment import (
    CHANGED,
    DIFF_WIDTH,
    GAP,
    HERE_ONLY,
    RENAMED,
    SAME,
    THERE_ONLY,
    Line,
    Row,
    align,
    diff_excerpt,
    pick,
)
from crystal_lsp.server.buffers import DocumentSnapshot
from crystal_lsp.server.compare import COMPARE_IDS
from crystal_lsp.server.diagnostics import diagnostics_of, flags_of
from crystal_lsp.server.hover import hover_markdown, md_text
from crystal_lsp.server.positions import TextIndex
from crystal_lsp.server.workspace import Folder

PARSE = """\
def parse_config(path):
    settings = {}
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if "=" not in line:
                raise ValueError(f"{path}:{number}: expected key = value")
            key, _, value = line.partition("=")
            key, value = key.strip().lower(), value.strip()
            if value.isdigit():
                value = int(value)
            elif value.lower() in ("true", "false"):
                value = value.lower() == "true"
            settings[key] = value
    return settings
"""

# the loop of parse_config copied into a longer function: renamed, one line changed, one added
MAIN = """\
import sys


def main(argv):
    if len(argv) < 2:
        print("usage: tool FILE", file=sys.stderr)
        return 2
    target = argv[1]
    verbose = "-v" in argv
    options = {}
    with open(target, encoding="utf-8") as fh:
        for lineno, text in enumerate(fh, 1):
            entry = text.strip()
            if not entry or entry.startswith("#"):
                continue
            if "=" not in entry:
                raise ValueError(f"{target}:{lineno}: expected key = value")
            name, _, setting = entry.partition("=")
            name, setting = name.strip().lower(), setting.strip()
            if setting.isdigit():
                setting = float(setting) * 2
            elif setting.lower() in ("true", "false"):
                setting = setting.lower() == "true"
            options[name] = setting
            seen.add(name)
    if verbose:
        for name in sorted(options):
            print(name, options[name])
    return 0
"""


def _line(number: int, shape: str, tokens: str | None = None) -> Line:
    return Line(number, shape, tokens if tokens is not None else shape)


def test_align_marks_renamed_changed_and_one_sided_lines() -> None:
    here = [
        _line(10, "def ID ( ID ) :", "def f ( a ) :"),
        _line(11, "ID = ID + LIT", "x = a + 1"),
        _line(12, "ID = ID ( ID ) * LIT"),
        _line(13, "ID . ID ( ID )"),
        _line(14, "return ID", "return x"),
    ]
    there = [
        _line(1, "def ID ( ID ) :", "def g ( b ) :"),
        _line(2, "ID = ID + LIT", "x = a + 1"),
        _line(3, "ID = ID ( ID )"),
        _line(4, "print ( LIT )"),
        _line(5, "return ID", "return x"),
    ]
    assert align(here, there) == [
        Row(RENAMED, 10, 1),
        Row(SAME, 11, 2),
        Row(CHANGED, 12, 3),
        Row(HERE_ONLY, 13, None),
        Row(THERE_ONLY, None, 4),
        Row(SAME, 14, 5),
    ]


def test_pick_keeps_the_differing_rows_of_a_long_alignment() -> None:
    rows = [Row(SAME, n, n) for n in range(1, 31)]
    rows[20] = Row(CHANGED, 21, 21)
    rows[25] = Row(HERE_ONLY, 26, None)
    assert pick(rows[:12]) == list(range(12))
    shown = pick(rows)
    assert len(shown) == 12 and {0, 1, 19, 20, 21, 24, 25, 26} <= set(shown)


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    (tmp_path / "config.py").write_text(PARSE, encoding="utf-8")
    (tmp_path / "tool.py").write_text(MAIN, encoding="utf-8")
    folder = Folder(tmp_path.as_uri(), str(tmp_path), ScanConfig())
    folder.install(folder.build(folder.config, None, lambda *_: None))
    return folder


def _hover(folder: Folder, path: str, text: str, underline: str = "range") -> tuple[str, str]:
    """The hover of the document's only flagged copy, and its diagnostic message."""
    fs_path = Path(folder.root or "") / path
    snapshot = DocumentSnapshot(fs_path.as_uri(), 1, text, "python", str(fs_path))
    result = folder.check(snapshot)
    index = TextIndex(text)
    [flag], _ = flags_of(result, index, underline)
    [diagnostic] = diagnostics_of(folder, result, [flag], "information", None)
    return hover_markdown(folder, result, flag, text), diagnostic.message


def test_hover_of_a_member_shows_the_representative_and_the_alignment(folder: Folder) -> None:
    markdown, message = _hover(folder, "tool.py", MAIN)
    assert message.startswith("Near-duplicate (similarity 0.6")
    assert ") of function parse_config in config.py:1: " in message
    assert message.endswith("1 of 26 code lines identical (this copy: lines 4-29)")
    # the kinds of the differing lines: in the hover, below the diff, not above it
    assert "differing lines" not in message
    assert "- differing lines\\: 13 names\\, 1 called names\\, 11 structure\n" in markdown
    uri = (Path(folder.root or "") / "config.py").as_uri()
    first, second, third = markdown.split("\n", 3)[:3]
    assert first.startswith(
        f"**crystal: near copy** · `-` [config\\.py:1-17]({uri}#L1) · `+` this copy · "
        "similarity **0.6"
    )
    assert re.search(r"CrystalBLEU 0\.\d{3} · \[compare\]\(command:", first)
    assert (second, third) == ("", "```diff")  # the diff right under the head
    assert "- this copy: function main (tool\\.py:4-29, python)" in markdown
    assert (
        f"- other copy: [config\\.py:1-17]({uri}#L1) function parse\\_config "
        "(the representative of the class)"
    ) in markdown
    assert re.search(r"- \d+ copied tokens, BLEU 0\.\d{3}", markdown)
    assert "- clone class: 2 copies, lowest similarity 0.6" in markdown
    assert "(this copy is a member)" in markdown
    assert "*6 of 27 corresponding lines, the differing ones kept.*" in markdown
    rows = _diff(markdown)
    assert rows[:3] == [
        "- 1 def parse_config(path):",
        "+ 4 def main(argv):",
        "+ 5     if len(argv) < 2:",
    ]
    assert len(rows) <= 2 * 6 + 2 and max(len(r) for r in rows) <= 2 + 3 + 64
    assert markdown.index("```diff") < markdown.index("- this copy:")  # the diff comes first
    assert "Shared non-trivial n-grams" in markdown
    assert markdown.count("```") % 2 == 0
    [link] = re.findall(r"\[compare\]\(command:crystal\.compare\?([^)]*)\)", markdown)
    [arg] = json.loads(unquote(link))
    assert list(arg) == ["id"]  # a trusted command link carries no path, only the server's id
    spec = COMPARE_IDS.get(arg["id"])
    assert spec is not None
    assert spec["left"]["uri"] == uri and spec["left"]["range"]["start"]["line"] == 0
    assert (
        spec["right"]["uri"].endswith("/tool.py") and spec["right"]["range"]["start"]["line"] == 3
    )


def test_hover_of_the_representative_shows_its_closest_copy(folder: Folder) -> None:
    markdown, message = _hover(folder, "config.py", PARSE, underline="firstLine")
    assert ") of function main in tool.py:4: " in message
    assert message.endswith(" (this copy: lines 1-17)")
    assert markdown.startswith("**crystal: near copy** · `-` [tool\\.py:4-29](")
    assert "- other copy: [tool\\.py:4-29](" in markdown
    assert "function main (closest)" in markdown
    assert "(this copy is the representative)" in markdown
    rows = _diff(markdown)
    assert rows[:2] == ["- 4 def main(argv):", "+ 1 def parse_config(path):"]
    assert "- 5     if len(argv) < 2:" in rows


def _diff(markdown: str) -> list[str]:
    return markdown.split("```diff\n", 1)[1].split("\n```", 1)[0].split("\n")


def test_diff_excerpt_is_one_narrow_column() -> None:
    here_text = "\n".join(["x"] * 9 + ["    if ready:", "        go(" + "a" * 80 + ")"])
    here_text += "\n    end()"
    there_text = "\tif done:\n\t\tstop()\n\t\tmore()\n\tend()\n"
    rows = [Row(RENAMED, 10, 1), Row(CHANGED, 11, 2), Row(THERE_ONLY, None, 3), Row(SAME, 12, 4)]
    block = diff_excerpt(rows, here_text, there_text)
    assert block.split("\n") == [
        "```diff",
        "-  1 if done:",
        "+ 10 if ready:",
        "-  2     stop()",
        f"+ 11     go({'a' * (DIFF_WIDTH - 8)}…",
        "-  3     more()",
        "  12 end()",
        "```",
    ]
    long = [Row(SAME, n, n) for n in range(1, 21)]
    assert block_lines(diff_excerpt(long, "a\n" * 20, "a\n" * 20, 4)) == [
        "  1 a",
        "  2 a",
        "  3 a",
        "  4 a",
        f"@@ {GAP} @@",
    ]


def test_diff_excerpt_fences_code_holding_backticks() -> None:
    fenced = diff_excerpt([Row(SAME, 1, 1)], "a = '```'", "a = '```'")
    assert fenced.startswith("````diff\n") and fenced.endswith("\n````")


def block_lines(block: str) -> list[str]:
    return block.split("\n")[1:-1]


HOSTILE = "[click](command:crystal.compare?%5B%7B%7D%5D) ![x](https:e.test) <img src=x onerror=alert(1)> *_`x`_*"


def test_hostile_names_are_markdown_that_shows_them_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / f"{HOSTILE}.py").write_text(PARSE, encoding="utf-8")
    (tmp_path / "tool.py").write_text(MAIN, encoding="utf-8")
    folder = Folder(tmp_path.as_uri(), str(tmp_path), ScanConfig())
    folder.install(folder.build(folder.config, None, lambda *_: None))
    markdown, _ = _hover(folder, "tool.py", MAIN)
    escaped = md_text(f"{HOSTILE}.py")
    assert escaped in markdown and f"{HOSTILE}.py" not in markdown
    # every character of the name that could start markup is escaped
    assert all(f"\\{c}" in escaped for c in "[]()!<>*_`:?%")
    # the only command link is the server's, with its id; the only other links are file links
    targets = re.findall(r"\]\(([^)\s]*)\)", markdown)
    commands = [t for t in targets if t.startswith("command:")]
    assert len(commands) == 1 and markdown.count("command:") == 1  # the name has command\\:
    [arg] = json.loads(unquote(commands[0].split("?", 1)[1]))
    assert list(arg) == ["id"] and COMPARE_IDS.get(arg["id"]) is not None
    assert all(t.startswith("file:///") and "(" not in t for t in targets if t not in commands)


def test_md_text_escapes_every_ascii_punctuation_character() -> None:
    import string

    assert md_text(string.punctuation) == "".join("\\" + c for c in string.punctuation)
    assert md_text("zw\u200bname.py") == '\\"zw\\\\u200bname\\.py\\"'


def test_other_copies_show_their_similarity_to_the_representative(tmp_path: Path) -> None:
    """A copy joined from two classes: a member's pair with another member is not shown as its
    similarity to the representative, and a member paired with others only is no representative.
    """
    from lsprotocol import types

    from crystal_lsp.clones.findings import Finding, Location, Pair
    from crystal_lsp.server.diagnostics import Flag
    from crystal_lsp.server.hover import _copies

    places = [
        Location(name, 1, 1, 9, 1, "function", name.split(".")[0], 80, "", "")
        for name in ("a.py", "b.py", "c.py", "d.py")
    ]
    pairs = [
        Pair(0, 1, 0.9, 0.8, copied=90),
        Pair(2, 0, 0.8, 0.7, copied=80),
        Pair(2, 1, 0.7, 0.6, copied=70),
        Pair(3, 2, 0.6, 0.5, copied=60),
    ]
    at = types.Range(types.Position(0, 0), types.Position(8, 0))
    flag = Flag(Finding("python", places, pairs), 1, at, 0, 10, at)
    folder = Folder(tmp_path.as_uri(), str(tmp_path), ScanConfig())
    rows = [row for row in _copies(folder, flag, 0) if row.startswith("| [")]
    assert rows[0].endswith("| 0.800 | 80 |")  # c.py: its pair (2, 0), not (2, 1)
    assert rows[1].endswith("| - | |")  # d.py: paired with c.py only
