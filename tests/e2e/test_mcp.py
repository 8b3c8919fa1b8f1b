"""``crystal-lsp mcp`` end to end: the real server in a subprocess, the SDK's own stdio client.

Every tool with its schemas, tool errors that leave the session working, paths confined to the
root, a root that is not a git repository, concurrent calls, cancellation, the cache shared with
``crystal-lsp scan``, and a raw exchange showing that stdout carries only the protocol.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from lsp_harness import DUP_A, DUP_B, UNRELATED
from mcp_harness import call, raw_exchange, session, text_of
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.lexers import lexer_by_language
from crystal_lsp.text.tokens import lex

TOOLS = {"check_duplication", "score", "file_clones", "scan", "trivially_shared"}
NEW_CODE = textwrap.dedent(
    '''\
    def render_table(rows, widths):
        """Format rows as a fixed-width text table."""
        lines = []
        for row in rows:
            cells = [str(cell).ljust(width) for cell, width in zip(row, widths)]
            lines.append(" | ".join(cells))
        header = "-+-".join("-" * width for width in widths)
        return "\\n".join([lines[0], header, *lines[1:]]) if lines else ""
    '''
)


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return _repo(tmp_path, {"a.py": DUP_A, "c.py": UNRELATED})


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


async def test_every_tool_is_listed_with_input_and_output_schemas(repo: Path, cache: Path) -> None:
    async with session(repo, cache) as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert tool.input_schema["type"] == "object"
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
            assert tool.annotations is not None and tool.annotations.read_only_hint
            assert tool.description
        assert tools["check_duplication"].input_schema["required"] == ["code"]
        assert tools["check_duplication"].input_schema["properties"]["code"]["maxLength"] > 0


async def test_check_duplication_names_the_original_of_a_renamed_copy(
    repo: Path, cache: Path
) -> None:
    async with session(repo, cache) as (client, recorder):
        result = await call(client, "check_duplication", {"code": DUP_B}, recorder)
        assert not result.is_error, text_of(result)
        found = result.structured_content
        assert found is not None and found["language"] == "python"
        best = found["duplicates"][0]
        assert best["original"]["path"] == "a.py"
        assert best["original"]["start_line"] == 1
        assert best["similarity"] >= 0.6 and 0 < best["crystalbleu"] <= 1
        assert best["shared_ngrams"] and all(len(g) == 4 for g in best["shared_ngrams"])
        assert best["snippet_start_line"] >= 4  # the copy starts after the import
        assert "a.py:1-" in found["advice"] and "reuse" in found["advice"]
        assert text_of(result).splitlines()[0] == found["advice"]
        assert found["indexed_files"] == 2


async def test_check_duplication_without_a_copy_reports_new_code(repo: Path, cache: Path) -> None:
    async with session(repo, cache) as (client, _):
        result = await call(client, "check_duplication", {"code": NEW_CODE, "path": "new/table.py"})
        assert not result.is_error, text_of(result)
        assert result.structured_content is not None
        assert result.structured_content["language"] == "python"  # from the path
        assert result.structured_content["duplicates"] == []
        assert "new code" in result.structured_content["advice"]
        tiny = await call(client, "check_duplication", {"code": "x = 1\n", "language": "python"})
        assert tiny.structured_content is not None
        assert tiny.structured_content["duplicates"] == []
        assert "new code" in tiny.structured_content["advice"]


async def test_score_with_given_references_equals_the_metric(repo: Path, cache: Path) -> None:
    async with session(repo, cache) as (client, _):
        result = await call(
            client,
            "score",
            {
                "code": DUP_B,
                "references": [DUP_A],
                "language": "python",
                "metrics": ["crystalbleu"],
            },
        )
        assert not result.is_error, text_of(result)
        got = result.structured_content
        assert got is not None
        shown = await call(client, "trivially_shared", {"language": "python", "top": 1000})
        trivial = shown.structured_content
        assert trivial is not None and trivial["omitted"] == 0
    lexer = lexer_by_language("python")
    hyp, ref = lex(DUP_B, lexer).texts, lex(DUP_A, lexer).texts
    smoothing = Smoothing.parse("m1:eps=0.0001")
    # the S set the server reports is the one it scores with
    counts = {tuple(g["ngram"]): g["count"] for g in trivial["ngrams"]}
    sset = TriviallySharedSet(counts, k=trivial["k"], language="python")
    assert sset.fingerprint() == trivial["fingerprint"]
    assert f"S:{trivial['fingerprint']}" in got["signatures"]["crystalbleu"]
    crystal = CrystalBLEU(sset, smoothing=smoothing, language="python")
    bleu = CrystalBLEU(None, smoothing=smoothing, language="python")
    assert abs(got["crystalbleu"] - crystal.sentence_score(hyp, [ref])) <= 1e-12
    nltk_bleu = sentence_bleu(
        [list(ref)], list(hyp), smoothing_function=SmoothingFunction(epsilon=0.0001).method1
    )
    assert abs(got["bleu"] - nltk_bleu) <= 1e-12
    assert abs(got["bleu"] - bleu.sentence_score(hyp, [ref])) <= 1e-12
    assert [o["n"] for o in got["orders"]] == [1, 2, 3, 4]
    assert all(o["crystalbleu_matches"] <= o["bleu_matches"] for o in got["orders"])
    assert got["signatures"]["crystalbleu"].startswith("crystalbleu|")
    assert got["hypothesis_length"] == len(hyp)


async def test_score_auto_finds_the_closest_code(repo: Path, cache: Path) -> None:
    async with session(repo, cache) as (client, _):
        result = await call(client, "score", {"code": DUP_B})
        assert not result.is_error, text_of(result)
        got = result.structured_content
        assert got is not None
        assert got["references"][0]["label"].startswith("a.py:1-")
        assert got["crystalbleu"] > 0
        unknown = await call(client, "score", {"code": DUP_B, "metrics": ["chrf"]})
        assert unknown.is_error


async def test_scan_file_clones_and_trivially_shared(tmp_path: Path, cache: Path) -> None:
    root = _repo(tmp_path, {"a.py": DUP_A, "b.py": DUP_B, "c.py": UNRELATED})
    async with session(root, cache) as (client, _):
        scanned = await call(client, "scan", {"top": 5})
        assert not scanned.is_error, text_of(scanned)
        got = scanned.structured_content
        assert got is not None and got["summary"]["files"] == 3
        assert got["summary"]["findings"] == len(got["top"]) + got["omitted"] >= 1
        places = {m["place"]["path"] for m in got["top"][0]["members"]}
        assert places == {"a.py", "b.py"}
        lines = text_of(scanned).splitlines()
        assert " ~ " in lines[0] and "similarity" in lines[0]
        assert lines[-1].startswith("crystal: ")

        clones = await call(client, "file_clones", {"path": "./b.py"})
        assert not clones.is_error, text_of(clones)
        assert clones.structured_content is not None
        assert clones.structured_content["path"] == "b.py"
        assert len(clones.structured_content["classes"]) == 1
        none = await call(client, "file_clones", {"path": "c.py"})
        assert none.structured_content is not None and none.structured_content["classes"] == []

        trivial = await call(client, "trivially_shared", {"language": "py", "top": 5})
        assert not trivial.is_error
        s = trivial.structured_content
        assert s is not None and s["language"] == "python" and len(s["ngrams"]) == 5
        assert s["omitted"] == s["size"] - 5


async def test_bad_arguments_are_tool_errors_and_the_session_goes_on(
    repo: Path, cache: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text(DUP_A)
    (repo / "link.py").symlink_to(outside)
    bad = [
        ("file_clones", {"path": "../secret.py"}),
        ("file_clones", {"path": str(outside)}),
        ("file_clones", {"path": "link.py"}),
        ("file_clones", {"path": "missing.py"}),
        ("check_duplication", {"code": DUP_B, "path": "../../etc/passwd"}),
        ("check_duplication", {"code": ""}),
        ("check_duplication", {"code": "x" * 200_001, "language": "python"}),
        ("check_duplication", {"code": DUP_B, "language": "no-such-language"}),
        ("check_duplication", {"code": DUP_B, "max_results": 0}),
        ("check_duplication", {}),
        ("score", {"code": DUP_B, "references": []}),
        ("score", {"code": DUP_B, "references": "all"}),
        ("score", {"code": DUP_B, "references": ["x"] * 21}),
        ("trivially_shared", {"language": "python", "top": -1}),
        ("trivially_shared", {"language": "klingon"}),
        ("scan", {"new_since": "HEAD"}),  # not a git repository
    ]
    async with session(repo, cache) as (client, _):
        for name, args in bad:
            result = await call(client, name, args)
            assert result.is_error, (name, args, text_of(result))
            assert text_of(result).strip(), (name, args)
            assert "Traceback" not in text_of(result)
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error
        ok = await call(client, "check_duplication", {"code": DUP_B})
        assert not ok.is_error
        scanned = await call(client, "scan", {})
        assert not scanned.is_error


async def test_concurrent_calls_get_their_own_answers(repo: Path, cache: Path) -> None:
    async with session(repo, cache) as (client, _):
        calls = [
            call(client, "check_duplication", {"code": DUP_B}),
            call(client, "scan", {}),
            call(client, "trivially_shared", {"language": "python", "top": 3}),
            call(client, "check_duplication", {"code": DUP_B}),
            call(client, "score", {"code": DUP_B, "references": [DUP_A]}),
            call(client, "file_clones", {"path": "a.py"}),
            call(client, "check_duplication", {"code": UNRELATED, "path": "greet.py"}),
        ]
        results = await asyncio.gather(*calls)
        assert not any(r.is_error for r in results), [text_of(r) for r in results if r.is_error]
        assert results[0].structured_content == results[3].structured_content
        assert results[0].structured_content is not None
        assert results[0].structured_content["duplicates"][0]["original"]["path"] == "a.py"
        assert results[2].structured_content is not None
        assert len(results[2].structured_content["ngrams"]) == 3
        assert results[6].structured_content is not None
        assert all(
            d["original"]["path"] == "c.py" for d in results[6].structured_content["duplicates"]
        )


async def test_a_cancelled_call_leaves_the_session_working(repo: Path, cache: Path) -> None:
    async with session(repo, cache) as (client, recorder):
        # sent at once: it waits for the first index build, so it is in flight when cancelled
        with anyio.move_on_after(0.05) as scope:
            await call(client, "check_duplication", {"code": DUP_B}, recorder)
        assert scope.cancelled_caught
        result = await call(client, "check_duplication", {"code": DUP_B}, recorder)
        assert not result.is_error
        assert result.structured_content is not None
        assert result.structured_content["duplicates"]


async def test_a_call_during_indexing_reports_progress(tmp_path: Path, cache: Path) -> None:
    # enough files that a cold index is still being built when the first call arrives
    files = {f"pkg/m{i}.py": NEW_CODE.replace("render_table", f"render_{i}") for i in range(300)}
    root = _repo(tmp_path, files)
    async with session(root, cache) as (client, recorder):
        result = await call(client, "scan", {}, recorder)
        assert not result.is_error
    assert recorder.progress, "no progress notification"
    assert all(m is not None and m.startswith("indexing") for _, _, m in recorder.progress)
    assert recorder.progress[-1] == (1, 1, "indexing: ready (300 files)")


async def test_a_call_that_cannot_wait_says_where_the_indexing_is(
    tmp_path: Path, cache: Path
) -> None:
    files = {f"pkg/m{i}.py": NEW_CODE.replace("render_table", f"render_{i}") for i in range(300)}
    root = _repo(tmp_path, files)
    async with session(root, cache, "--wait", "0") as (client, recorder):
        early = await call(client, "scan", {}, recorder)
        assert early.is_error
        note = text_of(early)
        assert "the repository's index is being built" in note and "Call again in about" in note
        assert "nothing was checked" in note
        with anyio.fail_after(600):  # the session goes on; once built, the same call answers
            while (later := await call(client, "scan", {})).is_error:
                assert "the repository's index is being built" in text_of(later)
                await anyio.sleep(0.5)
        assert not later.is_error and later.structured_content is not None


def test_the_cache_is_shared_with_crystal_lsp_scan(tmp_path: Path, cache: Path) -> None:
    root = _repo(tmp_path, {"a.py": DUP_A, "b.py": DUP_B, "c.py": UNRELATED})
    env = {"CRYSTAL_LSP_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}
    cli = subprocess.run(
        [sys.executable, "-m", "crystal_lsp", "scan", str(root), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert cli.returncode == 1, cli.stderr
    expected = json.loads(cli.stdout)

    async def scan() -> dict[str, object]:
        async with session(root, cache) as (client, _):
            result = await call(client, "scan", {"top": 100})
            assert result.structured_content is not None
            return result.structured_content

    got = anyio.run(scan)
    assert got["summary"]["cached"] is True  # type: ignore[index]
    assert got["summary"]["findings"] == expected["summary"]["findings"]  # type: ignore[index]
    assert [c["id"] for c in got["top"]] == [f["id"] for f in expected["findings"]]  # type: ignore[index]


def test_stdout_carries_only_the_protocol(repo: Path, cache: Path) -> None:
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        "not json",
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "check_duplication", "arguments": {"code": DUP_B}},
        },
    ]
    lines = raw_exchange(repo, cache, messages, last_id=3)  # type: ignore[arg-type]
    assert lines
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line
    answers = [json.loads(x) for x in lines if json.loads(x).get("id") == 3]
    assert len(answers) == 1
    assert answers[0]["result"]["structuredContent"]["duplicates"]


def test_a_missing_root_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "crystal_lsp", "mcp", str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().count("\n") == 0 and "not a directory" in proc.stderr


async def test_scan_new_since_in_a_git_repository(tmp_path: Path, cache: Path) -> None:
    root = _repo(tmp_path, {"a.py": DUP_A, "c.py": UNRELATED})
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    (root / "b.py").write_text(DUP_B, encoding="utf-8")  # untracked: new since HEAD
    async with session(root, cache) as (client, _):
        since = await call(client, "scan", {"new_since": "HEAD"})
        assert not since.is_error, text_of(since)
        got = since.structured_content
        assert got is not None and got["new_since"] == "HEAD"
        assert [{m["place"]["path"] for m in c["members"]} for c in got["top"]] == [
            {"a.py", "b.py"}
        ]
        bad = await call(client, "scan", {"new_since": "no-such-revision"})
        assert bad.is_error and "git" in text_of(bad).lower()
