"""A copy is new only when the change creates it: each false alarm of real history, replayed small.

Every test builds a short git history in which ``legacy/settings.py`` already copies
``app/config.py`` (or test functions copy each other), stages one change, and runs the hook,
``crystal-lsp scan --new-since HEAD`` and the MCP server's diff check on it: edits inside
existing duplication pass all three; a copy the change adds is reported by all three.
"""

from __future__ import annotations

import json

import pytest
from hook_repo import Repo
from hook_samples import LINE, LOAD_SETTINGS, MODULES, PARSE_CONFIG

from crystal_lsp.cli.main import main as cli_main

ORIGINAL = "app/config.py"
COPY = "legacy/settings.py"

# a test module of near-identical test functions, as linters sweep them
TEST_CASE = """\
def test_{name}_parses_{what}(tmp_path):
    path = tmp_path / "{name}.conf"
    path.write_text("alpha = 1\\nbeta = two\\n# comment\\n", encoding="utf-8")
    result = parse_config(str(path), {{"gamma": "3"}})
    assert result["alpha"] == "1"
    assert result["beta"] == "two"
    assert result["gamma"] == "3"
    assert result.get("delta") == None
    assert len(result) == 3
"""


def _tests_module(prefix: str) -> str:
    cases = [TEST_CASE.format(name=prefix, what=w) for w in ("keys", "values", "defaults")]
    return "from app.config import parse_config\n\n\n" + "\n\n".join(cases)


def _with_copy(repo: Repo, text: str = LOAD_SETTINGS) -> None:
    repo.write(COPY, text)
    repo.add(COPY)
    repo.commit("an older copy")


def _new_since(repo: Repo, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    capsys.readouterr()
    code = cli_main(["scan", str(repo.path), "--new-since", "HEAD", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == (1 if doc["findings"] else 0)
    return list(doc["findings"])


def _mcp_findings(repo: Repo) -> int:
    pytest.importorskip("mcp")
    from crystal_lsp.mcp.workspace import Workspace

    ws = Workspace(str(repo.path), jobs=1)
    try:
        return len(ws.scan("HEAD").findings)
    finally:
        ws.close()


def _passes_everywhere(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = repo.hook(*repo.staged())
    assert (code, lines) == (0, []), err
    assert _new_since(repo, capsys) == []
    assert _mcp_findings(repo) == 0


# ----------------------------------------------------------------------------- never block


def test_a_comment_fix_inside_a_duplicated_function(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    commented = LOAD_SETTINGS.replace(
        "            if not text",
        "            # skip blank lines and coments\n            if not text",
    )
    _with_copy(repo, commented)
    repo.write(COPY, commented.replace("coments", "comments"))
    repo.add(COPY)
    _passes_everywhere(repo, capsys)


def test_added_doc_comments(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    _with_copy(repo)
    documented = LOAD_SETTINGS.replace(
        "    settings = dict(base)\n",
        "    # Start from the defaults: a key the file does not set keeps its value.\n"
        "    # Keys are case-insensitive and stored in lower case.\n"
        "    settings = dict(base)\n",
    ).replace(
        "    return settings\n",
        "    # Values are strings: the caller converts them.\n    return settings\n",
    )
    repo.write(COPY, "# Settings of the legacy tools.\n\n\n" + documented)
    repo.add(COPY)
    _passes_everywhere(repo, capsys)


def test_a_linter_sweep_over_duplicated_tests(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("tests/test_config.py", _tests_module("config"))
    repo.write("tests/test_settings.py", _tests_module("settings"))
    repo.add("tests")
    repo.commit("duplicated tests")
    for name in ("config", "settings"):
        swept = _tests_module(name).replace('.get("delta") == None', '.get("delta") is None')
        repo.write(
            f"tests/test_{name}.py",
            swept.replace("len(result) == 3", "len(result) == 3  # a, b, g"),
        )
    repo.add("tests")
    _passes_everywhere(repo, capsys)


def test_a_refactor_that_removes_duplication(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    _with_copy(repo)
    merged = LOAD_SETTINGS.replace(
        '            if not text or text.startswith(";"):\n                continue\n'
        '            if "=" not in text:\n'
        '                raise ValueError(f"{filename}:{lineno}: expected name = value")\n',
        '            if text and not text.startswith(";") and "=" not in text:\n'
        '                raise ValueError(f"{filename}:{lineno}: expected name = value")\n',
    )
    assert merged != LOAD_SETTINGS
    repo.write(COPY, merged)
    repo.add(COPY)
    _passes_everywhere(repo, capsys)


def test_fixing_a_typo_in_a_name_inside_an_old_copy(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    _with_copy(repo, LOAD_SETTINGS.replace("settings", "setings"))
    repo.write(COPY, LOAD_SETTINGS)
    repo.add(COPY)
    _passes_everywhere(repo, capsys)


# two old tests that share their set-up, before and after a sweep rewrites both alike
# (isolated_filesystem -> tmp_path, with the same new assertions)
FIXTURE_BEFORE = """\
import os

import click


def test_write_file(runner):
    @click.command()
    @click.option("--file", type=click.File("w"))
    def cli(file):
        file.write("Hello")

    with runner.isolated_filesystem():
        result = runner.invoke(cli, ["--file=out.txt"])
        assert result.exit_code == 0
        with open("out.txt") as fh:
            assert fh.read() == "Hello"


def test_write_lazy_file(runner):
    @click.command()
    @click.option("--file", type=click.File("w", lazy=True))
    def cli(file):
        file.write("Hello")

    with runner.isolated_filesystem():
        os.mkdir("sub")
        result = runner.invoke(cli, ["--file", os.path.join("sub", "out.txt")])
        assert not result.exception
        assert os.listdir("sub") == ["out.txt"]
"""
FIXTURE_AFTER = """\
import os

import click


def test_write_file(runner, tmp_path):
    @click.command()
    @click.option("--file", type=click.File("w"))
    def cli(file):
        file.write("Hello")

    target = tmp_path / "out.txt"
    result = runner.invoke(cli, [f"--file={target}"])
    assert result.exit_code == 0, result.output
    assert target.read_text() == "Hello"
    assert target.stat().st_size == len("Hello")
    assert not result.exception
    assert result.output == ""
    assert result.return_value is None


def test_write_lazy_file(runner, tmp_path):
    @click.command()
    @click.option("--file", type=click.File("w", lazy=True))
    def cli(file):
        file.write("Hello")

    target = tmp_path / "sub" / "out.txt"
    target.parent.mkdir()
    result = runner.invoke(cli, [f"--file={target}"])
    assert result.exit_code == 0, result.output
    assert os.listdir(target.parent) == ["out.txt"]
    assert target.stat().st_size == len("Hello")
    assert not result.exception
    assert result.output == ""
    assert result.return_value is None
"""


def test_two_old_tests_rewritten_alike_by_a_sweep(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sweep lifts the pair over the threshold; neither test copies the other's old code."""
    repo.write("tests/test_files.py", FIXTURE_BEFORE)
    repo.add("tests")
    repo.commit("two tests")
    repo.write("tests/test_files.py", FIXTURE_AFTER)
    repo.add("tests")
    _passes_everywhere(repo, capsys)


# tests that check one stream after another: blocks alike within one test function
STREAMS_HEAD = """\
import sys
from io import StringIO

from app import report


"""
STAYING = """\
def test_report_title_is_centred():
    text = report.title("Totals", width=20)
    assert text.startswith(" ")
    assert text.strip() == "Totals"
    assert len(text) == 20
"""
STREAMS = """\
def test_messages_reach_the_right_stream(capfd, monkeypatch):
    def type_in(text):
        \"\"\"Pretend the user typed this.\"\"\"
        monkeypatch.setattr(sys, "stdin", StringIO(text))

    report.say("Saying to standard output")
    out, err = capfd.readouterr()
    assert out == "Saying to standard output\\n"
    assert err == ""

    report.say("Saying to standard error", err=True)
    out, err = capfd.readouterr()
    assert out == ""
    assert err == "Saying to standard error\\n"

    type_in("answer\\n")
    report.ask("Asking on stdin")
    out, err = capfd.readouterr()
    assert out == "Asking on stdin: "
    assert err == ""

    type_in("answer\\n")
    report.ask("Asking on stderr", err=True)
    out, err = capfd.readouterr()
    assert out == ""
    assert err == "Asking on stderr: "

    monkeypatch.setattr(report, "isatty", lambda stream: True)
    monkeypatch.setattr(report, "getchar", lambda: " ")

    report.wait("Waiting on stdout")
    out, err = capfd.readouterr()
    assert out == "Waiting on stdout\\n"
    assert err == ""

    report.wait("Waiting on stderr", err=True)
    out, err = capfd.readouterr()
    assert out == ""
    assert err == "Waiting on stderr\\n"
"""


def _streams_moved_out(repo: Repo) -> None:
    """An old test module with alike blocks inside one test, which a commit moves out."""
    repo.write("tests/test_report.py", STREAMS_HEAD + STAYING + "\n\n" + STREAMS)
    repo.add("tests")
    repo.commit("tests of the report module")
    repo.write("tests/test_report.py", STREAMS_HEAD + STAYING)
    repo.write("tests/streams/test_messages.py", STREAMS_HEAD + STREAMS)
    repo.add("tests")


def test_alike_blocks_moved_together_into_a_new_file(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both sides of an old pair move (parts of one function: no whole unit to match)."""
    _streams_moved_out(repo)
    _passes_everywhere(repo, capsys)
    _, _, err = repo.hook(*repo.staged())
    assert "1 moved" in err
    capsys.readouterr()
    cli_main(["scan", str(repo.path), "--new-since", "HEAD", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["filtered"]["code moved by the change"] == 1


def test_code_moved_and_copied_in_one_commit_leaves_one_copy(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The removed code explains one of the two places it now is, never both."""
    _streams_moved_out(repo)
    again = STREAMS.replace("test_messages_reach_the_right_stream", "test_streams_again")
    repo.write("tests/other/test_again.py", STREAMS_HEAD + again)
    repo.add("tests")
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1 and len(lines) == 1, lines
    found = LINE.match(lines[0])
    assert found and found["path"] == "tests/other/test_again.py", lines[0]
    assert found["other"] == "tests/streams/test_messages.py"
    assert len(_new_since(repo, capsys)) == 1


# ----------------------------------------------------------------------------- still reported


def test_the_old_code_is_the_original_and_the_added_code_the_copy(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """A commit that edits a line of the original and adds a copy of it names them right."""
    edited = MODULES[ORIGINAL].replace("line = line.strip()", "line = line.strip()  # no blanks")
    appended = edited + "\n\n" + LOAD_SETTINGS
    repo.write(ORIGINAL, appended)
    repo.add(ORIGINAL)
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1 and len(lines) == 1, lines
    found = LINE.match(lines[0])
    assert found, lines[0]
    first_new = appended.count("\n") - LOAD_SETTINGS.count("\n") + 1
    assert (found["other"], found["oline"]) == (ORIGINAL, "4")  # the old function
    assert found["path"] == ORIGINAL and int(found["line"]) >= first_new
    assert int(found["first"]) <= int(found["line"]) <= int(found["last"])
    assert len(_new_since(repo, capsys)) == 1


def test_a_copy_appended_to_a_file_with_an_older_copy(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """Adding code next to an old copy is no edit of it: a second copy is new."""
    _with_copy(repo)
    second = PARSE_CONFIG.replace("parse_config", "read_config").replace("result", "values")
    repo.write(COPY, LOAD_SETTINGS + "\n\n" + second)
    repo.add(COPY)
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1 and len(lines) == 1, lines
    found = LINE.match(lines[0])
    assert found and found["path"] == COPY and int(found["line"]) > LOAD_SETTINGS.count("\n")
    assert len(_new_since(repo, capsys)) == 1
    assert _mcp_findings(repo) == 1


def test_a_planted_renamed_copy_in_a_new_file_is_reported_everywhere(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("tools/settings.py", LOAD_SETTINGS)
    repo.add("tools/settings.py")
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1 and len(lines) == 1
    assert len(_new_since(repo, capsys)) == 1
    assert _mcp_findings(repo) == 1


def test_existing_copies_are_counted_not_hidden(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    _with_copy(repo)
    repo.write(COPY, LOAD_SETTINGS.replace("settings = dict(base)", "settings = {**base}"))
    repo.add(COPY)
    code, lines, err = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])
    assert "1 edit of existing copies" in err
    capsys.readouterr()
    cli_main(["scan", str(repo.path), "--new-since", "HEAD", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["findings"] == []
    assert doc["summary"]["filtered"]["copy existing before the change"] == 1


def test_at_most_max_warnings_lines_then_a_count_and_the_next_step(repo: Repo) -> None:
    for rel in ("app/matrix.py", "app/cache.py", "app/report.py"):
        repo.write("copied/" + rel.split("/")[1], MODULES[rel])
    repo.add("copied")
    code, lines, err = repo.hook("--max-warnings", "2", "--", *repo.staged())
    assert code == 1
    assert len(lines) == 3 and lines[2] == "... and 1 more (--max-warnings 2)", lines
    assert all(LINE.match(line) for line in lines[:2])
    assert "crystal: ignore" in err and "git commit --no-verify" in err
    code, lines, _ = repo.hook("--max-warnings", "0", "--", *repo.staged())
    assert code == 1 and len(lines) == 3 and all(LINE.match(line) for line in lines)
    code, _, err = repo.hook("--max-warnings", "-1", "--")
    assert code == 2 and "must be 0 or more" in err
