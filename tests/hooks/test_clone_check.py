"""``crystal-clones`` in temporary git repositories: what it reports, in every git situation."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from crystal_lsp_hooks import clone_check, report
from hook_repo import Repo, init_repo, lines_naming, write_corpus
from hook_samples import (
    LINE,
    LOAD_SETTINGS,
    MODULES,
    OTHER_UNRELATED,
    PARSE_CONFIG,
    UNRELATED,
)

ORIGINAL = "app/config.py"


def _only_line(lines: list[str]) -> dict[str, str]:
    assert len(lines) == 1, lines
    match = LINE.match(lines[0])
    assert match, lines[0]
    return match.groupdict()


# ----------------------------------------------------------------------------- basics


def test_staged_near_copy_of_an_unchanged_file_is_reported(repo: Repo) -> None:
    repo.write("tools/settings.py", LOAD_SETTINGS)
    repo.add("tools/settings.py")
    code, lines, err = repo.hook(*repo.staged())
    assert code == 1
    found = _only_line(lines)
    assert (found["path"], found["line"]) == ("tools/settings.py", "1")
    assert (found["other"], found["oline"]) == (ORIGINAL, "4")
    assert lines[0] == (
        "app/config.py:4: function parse_config copied to tools/settings.py:1 (lines 1-13), "
        "similarity 1.00"
    )
    assert "1 clone-like addition in 1 staged file" in err


def test_agent_format_names_the_original_first_and_summarizes_on_stdout(repo: Repo) -> None:
    repo.write("tools/settings.py", LOAD_SETTINGS)
    repo.add("tools/settings.py")
    code, lines, err = repo.hook("--format", "agent", *repo.staged())
    assert code == 1
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"{ORIGINAL}:4-")
    assert " ~ tools/settings.py:1-" in lines[0]
    assert lines[0].endswith("similarity 1.00 (function parse_config)")
    assert lines[1].startswith("crystal-clones: 1 clone-like addition in 1 staged file")
    assert lines[1].endswith("reuse the original on the left of each ~")
    assert "\x1b" not in "".join(lines) and err == ""


def test_unrelated_code_is_clean(repo: Repo) -> None:
    repo.write("graph.py", UNRELATED)
    repo.write("rle.py", OTHER_UNRELATED)
    repo.add("graph.py", "rle.py")
    code, lines, err = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])
    assert "0 clone-like additions in 2 staged files" in err


def test_warn_only_prints_the_same_and_exits_0(repo: Repo) -> None:
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    code, lines, _ = repo.hook(*repo.staged())
    warn_code, warn_lines, _ = repo.hook("--warn-only", *repo.staged())
    assert (code, warn_code) == (1, 0)
    assert warn_lines == lines and len(lines) == 1


def test_no_file_names_checks_every_staged_file(repo: Repo) -> None:
    """The plain git hook calls it without file names."""
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    code, lines, _ = repo.hook()
    assert code == 1 and lines_naming(lines, ORIGINAL)


def test_nothing_staged_is_clean(repo: Repo) -> None:
    repo.write("settings.py", LOAD_SETTINGS)  # untracked, not staged
    code, lines, _ = repo.hook()
    assert (code, lines) == (0, [])


def test_copy_of_another_staged_file_is_reported(repo: Repo) -> None:
    repo.write("lib/a.py", UNRELATED)
    repo.write("lib/b.py", UNRELATED.replace("best", "dist").replace("queue", "heap"))
    repo.add("lib/a.py", "lib/b.py")
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1
    found = _only_line(lines)
    assert {found["path"], found["other"]} == {"lib/a.py", "lib/b.py"}
    assert "also added at" not in lines[0]


def test_only_files_the_tool_indexes_are_checked(repo: Repo) -> None:
    repo.write("notes.md", PARSE_CONFIG)
    repo.write("data.json", '{"a": 1}\n')
    repo.add("notes.md", "data.json")
    code, lines, _ = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])


# ----------------------------------------------------------------------------- staged content


def test_the_staged_blob_is_checked_not_the_work_tree(repo: Repo) -> None:
    repo.write("settings.py", "\n\n" + LOAD_SETTINGS)
    repo.add("settings.py")
    repo.write("settings.py", UNRELATED)  # unstaged edit hides the copy on disk
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1
    assert _only_line(lines)["line"] == "3"  # the line in the staged blob


def test_an_unstaged_copy_is_not_reported(repo: Repo) -> None:
    repo.write("settings.py", UNRELATED)
    repo.add("settings.py")
    repo.write("settings.py", UNRELATED + "\n\n" + LOAD_SETTINGS)  # not staged
    code, lines, _ = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])


def test_partial_staging_checks_only_the_staged_hunks(repo: Repo) -> None:
    final = UNRELATED + "\n\n" + LOAD_SETTINGS
    repo.write("mixed.py", UNRELATED)
    repo.add("mixed.py")
    repo.write("mixed.py", final)
    assert repo.hook(*repo.staged())[0] == 0
    # now stage the copy, and leave an unrelated edit unstaged
    repo.add("mixed.py")
    repo.write("mixed.py", OTHER_UNRELATED + "\n\n" + final)
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1
    assert _only_line(lines)["line"] == str(UNRELATED.count("\n") + 3)


def test_corpus_is_the_staged_state_of_unstaged_edits(repo: Repo) -> None:
    """An original edited on disk but not staged is still compared as committed."""
    repo.write(ORIGINAL, UNRELATED)  # unstaged: the commit keeps parse_config
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1 and lines_naming(lines, ORIGINAL)


def test_corpus_ignores_code_that_exists_only_on_disk(repo: Repo) -> None:
    repo.write("app/cache.py", MODULES["app/cache.py"] + "\n\n" + UNRELATED)  # not staged
    repo.write("scratch.py", UNRELATED)  # untracked
    repo.write("graph.py", UNRELATED)
    repo.add("graph.py")
    code, lines, _ = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])


def test_a_file_deleted_on_disk_but_not_in_the_index_is_still_compared(repo: Repo) -> None:
    os.remove(repo.path / ORIGINAL)
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1 and lines_naming(lines, ORIGINAL)


def test_intent_to_add_is_not_staged_content(repo: Repo) -> None:
    repo.write("settings.py", LOAD_SETTINGS)
    repo.git("add", "-N", "settings.py")
    code, lines, _ = repo.hook()
    assert (code, lines) == (0, [])


# ----------------------------------------------------------------------------- moves


def test_a_function_moved_to_another_file_is_not_a_clone(repo: Repo) -> None:
    # an existing copy elsewhere, so that the moved code does have a clone in the repository
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.add("legacy/settings.py")
    repo.commit("existing copy")
    config = MODULES[ORIGINAL]
    repo.write(ORIGINAL, config.replace(PARSE_CONFIG, ""))
    repo.write("app/parsing.py", PARSE_CONFIG)
    repo.add(ORIGINAL, "app/parsing.py")
    code, lines, err = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])
    assert "1 moved" in err


def test_a_deleted_file_whose_code_reappears_is_a_move(repo: Repo) -> None:
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.add("legacy/settings.py")
    repo.commit("existing copy")
    repo.git("rm", "-q", ORIGINAL)
    # mostly new code around it, so that git sees a new file, not a rename
    repo.write("core/tools.py", UNRELATED + "\n\n" + PARSE_CONFIG + "\n\n" + OTHER_UNRELATED)
    repo.add("core/tools.py")
    assert "R" not in repo.git("diff", "--cached", "--name-status", "-M")
    code, lines, err = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])
    assert "1 moved" in err


def test_a_rename_with_edits_is_not_a_clone(repo: Repo) -> None:
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.add("legacy/settings.py")
    repo.commit("existing copy")
    repo.git("mv", ORIGINAL, "app/configuration.py")
    edited = MODULES[ORIGINAL].replace("result = dict(defaults)", "result = {**defaults}")
    repo.write("app/configuration.py", edited)
    repo.add("app/configuration.py")
    assert "R" in repo.git("diff", "--cached", "--name-status", "-M")
    code, lines, err = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])
    assert "1 edit of existing copies" in err  # the pair existed before the rename


def test_moving_a_function_within_its_file_is_not_a_clone(repo: Repo) -> None:
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.write("app/misc.py", PARSE_CONFIG + "\n\n" + UNRELATED + "\n\n" + OTHER_UNRELATED)
    repo.add("legacy/settings.py", "app/misc.py")
    repo.commit("existing copies")
    repo.write("app/misc.py", UNRELATED + "\n\n" + OTHER_UNRELATED + "\n\n" + PARSE_CONFIG)
    repo.add("app/misc.py")
    assert "+def parse_config" in repo.git("diff", "--cached", "-U0")
    code, lines, err = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])
    assert "1 moved" in err


def test_copy_plus_edit_of_the_original_is_still_a_copy(repo: Repo) -> None:
    """The original is edited in place (a removed line), and copied elsewhere."""
    config = MODULES[ORIGINAL]
    repo.write(ORIGINAL, config.replace('line.startswith("#")', 'line.startswith(("#", ";"))'))
    repo.write("settings.py", PARSE_CONFIG)
    repo.add(ORIGINAL, "settings.py")
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1
    found = _only_line(lines)
    assert {found["path"], found["other"]} == {"settings.py", ORIGINAL}


def test_a_copy_of_moved_code_is_reported(repo: Repo) -> None:
    config = MODULES[ORIGINAL]
    repo.write(ORIGINAL, config.replace(PARSE_CONFIG, ""))
    repo.write("app/parsing.py", PARSE_CONFIG)
    repo.write("tools/settings.py", LOAD_SETTINGS)
    repo.add(ORIGINAL, "app/parsing.py", "tools/settings.py")
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1
    found = _only_line(lines)
    assert {found["path"], found["other"]} == {"app/parsing.py", "tools/settings.py"}


def test_editing_code_that_already_had_a_copy_is_not_new(repo: Repo) -> None:
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.add("legacy/settings.py")
    repo.commit("existing copy")
    repo.write(ORIGINAL, MODULES[ORIGINAL].replace("line = line.strip()", "line = line.rstrip()"))
    repo.add(ORIGINAL)
    code, lines, err = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])
    assert "1 edit of existing copies" in err


# ----------------------------------------------------------------------------- git situations


def test_first_commit_compares_staged_files_with_each_other(empty_repo: Repo) -> None:
    write_corpus(empty_repo)
    empty_repo.write("settings.py", LOAD_SETTINGS)
    empty_repo.git("add", "-A")
    code, lines, err = empty_repo.hook(*empty_repo.staged())
    assert code == 1
    found = _only_line(lines)
    assert {found["path"], found["other"]} == {"settings.py", ORIGINAL}
    assert "in 7 staged files" in err  # the modules and the copy; pyproject.toml is no code


def test_first_commit_without_copies_is_clean(empty_repo: Repo) -> None:
    write_corpus(empty_repo)
    empty_repo.git("add", "-A")
    code, lines, _ = empty_repo.hook(*empty_repo.staged())
    assert (code, lines) == (0, [])


def test_pure_rename_adds_nothing(repo: Repo) -> None:
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.add("legacy/settings.py")
    repo.commit("existing copy")
    (repo.path / "old").mkdir()
    repo.git("mv", "legacy/settings.py", "old/settings.py")
    code, lines, err = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])
    assert "in 0 staged files" in err


def test_deletions_only(repo: Repo) -> None:
    repo.git("rm", "-q", "app/words.py")
    code, lines, _ = repo.hook()
    assert (code, lines) == (0, [])


def test_binary_files_are_skipped(repo: Repo) -> None:
    repo.write("blob.py", b"\x00\x01binary" + PARSE_CONFIG.encode())
    repo.write("image.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    repo.write("settings.py", UNRELATED)
    repo.add("blob.py", "image.png", "settings.py")
    code, lines, _ = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])


def test_binary_blob_named_like_code_is_reported_as_not_checked(repo: Repo) -> None:
    # git sees text (the NUL is past its 8000-byte window? no: git sees it as binary)
    data = PARSE_CONFIG.encode() + b"\x00"
    repo.write("weird.py", data)
    repo.add("weird.py")
    code, lines, err = repo.hook("--all", "weird.py")
    assert (code, lines) == (0, [])
    assert "not checked weird.py: binary file" in err


def test_merge_commit_compares_against_head(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("feature/settings.py", LOAD_SETTINGS)
    repo.add("feature/settings.py")
    repo.commit("feature copies")
    repo.git("checkout", "-q", "main")
    repo.write("graph.py", UNRELATED)
    repo.add("graph.py")
    repo.commit("main work")
    repo.git("merge", "--no-ff", "--no-commit", "feature")
    assert (repo.path / ".git" / "MERGE_HEAD").exists()
    # pre-commit passes the files that differ between HEAD and MERGE_HEAD during a merge
    conflicted = repo.git("diff", "--name-only", "-z", "HEAD", "MERGE_HEAD").split("\0")
    code, lines, _ = repo.hook(*[p for p in conflicted if p])
    assert code == 1
    assert _only_line(lines)["path"] == "feature/settings.py"


def test_merge_commit_of_unrelated_work_is_clean(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("feature/rle.py", OTHER_UNRELATED)
    repo.add("feature/rle.py")
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    repo.write("graph.py", UNRELATED)
    repo.add("graph.py")
    repo.commit("main work")
    repo.git("merge", "--no-ff", "--no-commit", "feature")
    conflicted = repo.git("diff", "--name-only", "-z", "HEAD", "MERGE_HEAD").split("\0")
    code, lines, _ = repo.hook(*[p for p in conflicted if p])
    assert (code, lines) == (0, [])


@pytest.mark.parametrize(
    ("copy_path", "original_path"),
    [
        ("with space/new copy.py", "dir with space/the original.py"),
        ("ünïcödé/cøpy.py", "日本/原本.py"),
        ("new\nline/co\tpy.py", 'quote"d/back\\slash.py'),
    ],
)
def test_paths_with_spaces_unicode_and_newlines(
    repo: Repo, copy_path: str, original_path: str
) -> None:
    repo.write(original_path, UNRELATED)
    repo.add(original_path)
    repo.commit("original with an odd name")
    repo.write(copy_path, UNRELATED.replace("best", "dist").replace("queue", "heap"))
    repo.add(copy_path)
    code, lines, _ = repo.hook(*repo.staged())
    assert code == 1
    assert len(lines) == 1  # one line per finding even when a path has a newline
    shown, original = report.display_path(copy_path), report.display_path(original_path)
    assert lines[0].startswith(f"{original}:4: function dijkstra copied to {shown}:4 ")


def test_display_path_escapes_control_characters() -> None:
    assert report.display_path("a b/c.py") == "a b/c.py"
    assert report.display_path("ü.py") == "ü.py"
    assert report.display_path("a\nb.py") == '"a\\nb.py"'
    assert report.display_path("bad\udcff.py") == "bad\\xff.py"


def test_symlinks_are_not_files_of_the_commit(repo: Repo) -> None:
    os.symlink("app/config.py", repo.path / "link.py")
    repo.add("link.py")
    code, lines, _ = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])


# ----------------------------------------------------------------------------- files mode


def test_all_files_reports_clones_within_the_given_files(repo: Repo) -> None:
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.add("legacy/settings.py")
    repo.commit("existing copy")
    files = [p for p in repo.git("ls-files", "-z").split("\0") if p]
    # `pre-commit run --all-files` passes every file; nothing is staged
    code, lines, err = repo.hook(*files)
    assert code == 1
    found = _only_line(lines)
    assert {found["path"], found["other"]} == {"legacy/settings.py", ORIGINAL}
    assert "1 clone in" in err


def test_manual_stage_with_some_files_reports_their_clones_only(repo: Repo) -> None:
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.add("legacy/settings.py")
    repo.commit("existing copy")
    code, lines, _ = repo.hook("legacy/settings.py")
    assert code == 1 and lines_naming(lines, ORIGINAL)
    assert repo.hook("app/words.py")[:2] == (0, [])


def test_all_flag_checks_whole_staged_files(repo: Repo) -> None:
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.add("legacy/settings.py")
    repo.commit("existing copy")
    repo.write("legacy/settings.py", LOAD_SETTINGS + "\n\n" + OTHER_UNRELATED)
    repo.add("legacy/settings.py")
    assert repo.hook(*repo.staged())[0] == 0  # only the unrelated addition is new
    code, lines, _ = repo.hook("--all", *repo.staged())
    assert code == 1 and lines_naming(lines, ORIGINAL)


def test_all_without_files_scans_the_repository(repo: Repo) -> None:
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.add("legacy/settings.py")
    repo.commit("existing copy")
    code, lines, _ = repo.hook("--all")
    assert code == 1 and len(lines) == 1


# ----------------------------------------------------------------------------- range mode


def test_from_ref_to_ref_checks_the_pushed_commits(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    repo.commit("copy")
    repo.write("graph.py", UNRELATED)
    repo.add("graph.py")
    repo.commit("unrelated")
    head = repo.git("rev-parse", "HEAD").strip()
    code, lines, err = repo.hook("--from-ref", base, "--to-ref", head, "settings.py", "graph.py")
    assert code == 1 and lines_naming(lines, ORIGINAL)
    assert "in 2 changed files" in err
    code, lines, _ = repo.hook("--from-ref", f"{head}~1", "--to-ref", head, "graph.py")
    assert (code, lines) == (0, [])


def test_pre_commit_refs_come_from_the_environment(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    repo.commit("copy")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", "HEAD")
    code, lines, _ = repo.hook("settings.py")
    assert code == 1 and lines_naming(lines, ORIGINAL)


# ----------------------------------------------------------------------------- settings


def test_args_override_the_pyproject_settings(repo: Repo) -> None:
    repo.write("pyproject.toml", "[tool.crystal-lsp]\nmin-tokens = 500\n")
    repo.add("pyproject.toml")
    repo.commit("strict settings")
    repo.write(
        "settings.py", LOAD_SETTINGS.replace("settings[name", "settings[name.upper() + name")
    )
    repo.add("settings.py")
    assert repo.hook(*repo.staged())[0] == 0
    code, lines, _ = repo.hook("--min-tokens=50", *repo.staged())
    assert code == 1 and lines_naming(lines, ORIGINAL)
    assert repo.hook("--min-tokens=50", "--threshold=1.0", "--min-lines=30", *repo.staged())[0] == 0
    assert repo.hook("--min-tokens=50", "--exclude=app/**", *repo.staged())[0] == 0


def test_suppression_comment_silences_a_copy(repo: Repo) -> None:
    repo.write("settings.py", "# crystal: ignore (vendored from app.config)\n" + LOAD_SETTINGS)
    repo.add("settings.py")
    code, lines, _ = repo.hook(*repo.staged())
    assert (code, lines) == (0, [])


def test_baseline_of_crystal_lsp_scan_is_honoured(repo: Repo) -> None:
    repo.write("legacy/settings.py", LOAD_SETTINGS)
    repo.add("legacy/settings.py")
    from crystal_lsp.cli.main import main as cli_main

    assert cli_main(["scan", "--update-baseline", "--baseline", "base.json", "--no-progress"]) == 0
    code, lines, err = repo.hook("--baseline", "base.json", *repo.staged())
    assert (code, lines) == (0, [])
    assert "1 baselined" in err
    repo.write("tools/again.py", PARSE_CONFIG)  # a new copy changes the class: reported
    repo.add("tools/again.py")
    assert repo.hook("--baseline", "base.json", *repo.staged())[0] == 1


# ----------------------------------------------------------------------------- errors


def test_not_a_git_repository_is_a_usage_error(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert clone_check.main([]) == 2
    assert "not inside a git work tree" in capsys.readouterr().err


def test_bad_settings_are_a_usage_error(repo: Repo) -> None:
    code, lines, err = repo.hook("--threshold", "7")
    assert (code, lines) == (2, [])
    assert "threshold" in err


def test_missing_baseline_is_a_usage_error(repo: Repo) -> None:
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    code, _, err = repo.hook("--baseline", "missing.json")
    assert code == 2 and "missing.json" in err


def test_internal_errors_exit_3_and_never_look_like_findings(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(clone_check, "run_scan", broken)
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    code, lines, err = repo.hook()
    assert (code, lines) == (3, [])
    assert "internal error" in err and "RuntimeError: boom" in err


def test_warn_only_does_not_hide_internal_errors(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clone_check, "run_scan", lambda *a, **k: 1 / 0)
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    assert repo.hook("--warn-only")[0] == 3


def test_one_ref_without_the_other_is_a_usage_error(repo: Repo) -> None:
    assert repo.hook("--from-ref", "HEAD")[0] == 2


# ----------------------------------------------------------------------------- side effects


def test_never_writes_to_the_work_tree_or_the_git_directory(repo: Repo) -> None:
    repo.write(".gitignore", "ignored/\n")
    repo.add(".gitignore")
    repo.commit("ignore")
    repo.write("ignored/x.py", UNRELATED)
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    repo.write("settings.py", LOAD_SETTINGS + "\n# unstaged\n")
    status = repo.git("status", "--porcelain", "-z")  # (git status itself refreshes the index)
    before = repo.tree_state()
    assert repo.hook()[0] == 1
    assert repo.hook("--all")[0] == 1
    assert repo.hook("--from-ref", "HEAD~1", "--to-ref", "HEAD")[0] == 0
    assert repo.tree_state() == before
    assert repo.git("status", "--porcelain", "-z") == status


def test_git_index_file_of_commit_a_is_used(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """``git commit -a`` runs the hook with GIT_INDEX_FILE pointing at a temporary index."""
    repo.write("settings.py", UNRELATED)
    repo.add("settings.py")
    repo.commit("unrelated")
    repo.write("settings.py", LOAD_SETTINGS)  # modified, not staged in .git/index
    temp_index = repo.path / ".git" / "next-index.lock"
    temp_index.write_bytes((repo.path / ".git" / "index").read_bytes())
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/next-index.lock")  # relative, as git may pass it
    subprocess.run(["git", "add", "settings.py"], cwd=repo.path, check=True)
    code, lines, _ = repo.hook()
    assert code == 1 and lines_naming(lines, ORIGINAL)
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert repo.hook()[0] == 0  # the real index has nothing staged


def test_concurrent_runs_share_the_cache_safely(repo: Repo) -> None:
    repo.write("settings.py", LOAD_SETTINGS)
    repo.write("graph.py", UNRELATED)
    repo.add("settings.py", "graph.py")
    expected = repo.hook()
    hook = [sys.executable, "-m", "crystal_lsp_hooks.clone_check", "--jobs=1"]
    scan = [sys.executable, "-m", "crystal_lsp", "scan", "--no-progress", "--format", "json"]
    procs = [
        subprocess.Popen(cmd, cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for cmd in (hook, scan, hook, hook)
    ]
    results = [(p.wait(timeout=300), p.stdout, p.stderr) for p in procs]
    outs = []
    for (code, out, err), cmd in zip(results, (hook, scan, hook, hook)):
        assert out is not None and err is not None
        text, error = out.read().decode(), err.read().decode()
        out.close()
        err.close()
        assert code == 1, error
        if cmd is hook:
            outs.append(text.splitlines())
    assert outs == [expected[1]] * 3


def test_a_second_run_reuses_the_cached_result(repo: Repo) -> None:
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    first = repo.hook()
    second = repo.hook()
    assert first[:2] == second[:2]
    assert "(cached)" in second[2]


def test_a_cached_result_of_added_code_loads_no_index(repo: Repo) -> None:
    """A change that only adds lines cannot move code: its cached result needs no index."""
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    first = repo.hook()
    probe = (
        "import json, sys\n"
        "from crystal_lsp_hooks.clone_check import main\n"
        "code = main([])\n"
        "heavy = ['numpy', 'crystal_lsp.clones.index', 'crystal_lsp.text.fastlex']\n"
        "print(json.dumps([code, [m for m in heavy if m in sys.modules]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo.path, capture_output=True, text=True, check=True
    )
    code, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == first[0] == 1 and "(cached)" in done.stderr
    assert loaded == []


def test_runs_from_a_subdirectory(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tools/settings.py", LOAD_SETTINGS)
    repo.add("tools/settings.py")
    monkeypatch.chdir(repo.path / "tools")
    code, lines, _ = repo.hook("settings.py")
    assert code == 1 and _only_line(lines)["path"] == "tools/settings.py"


def test_second_repository_does_not_see_the_first(
    repo: Repo, tmp_path: os.PathLike[str], capsys: pytest.CaptureFixture[str]
) -> None:
    other = init_repo(repo.path.parent / "other", capsys)
    write_corpus(other, {"x.py": UNRELATED})
    other.git("add", "-A")
    other.commit()
    repo.write("settings.py", LOAD_SETTINGS)
    repo.add("settings.py")
    assert repo.hook()[0] == 1


def test_explicit_untracked_file_is_checked(repo: Repo) -> None:
    repo.write("scratch/settings.py", LOAD_SETTINGS)  # untracked: `pre-commit run --files`
    code, lines, _ = repo.hook("scratch/settings.py")
    assert code == 1 and lines_naming(lines, ORIGINAL)


def test_excluded_files_are_not_checked(repo: Repo) -> None:
    repo.write("pyproject.toml", '[tool.crystal-lsp]\nextend-exclude = ["generated/**"]\n')
    repo.add("pyproject.toml")
    repo.commit("exclude generated code")
    repo.write("generated/settings.py", LOAD_SETTINGS)
    repo.add("generated/settings.py")
    assert repo.hook(*repo.staged())[:2] == (0, [])
    assert repo.hook("--all", *repo.staged())[:2] == (0, [])


def test_progress_notes_on_a_pipe(capsys: pytest.CaptureFixture[str]) -> None:
    progress = report.StderrProgress(bars=False)
    for done in range(1, 101):
        progress("tokenizing", done, 100)
    progress("scoring (python)", 1, 1)
    notes = capsys.readouterr().err.splitlines()
    assert notes[0].startswith("crystal-clones: indexing 100 files")
    assert [n.split()[2] for n in notes[1:]] == ["25/100", "50/100", "75/100", "100/100"]
    # an estimate of the time left until the last note
    assert ["s left)" in n for n in notes[1:]] == [True, True, True, False]


def test_small_indexing_is_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    progress = report.StderrProgress(bars=False)
    for done in range(1, 11):
        progress("tokenizing", done, 10)
    assert capsys.readouterr().err == ""


def test_module_entry_point_and_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "crystal_lsp_hooks.clone_check", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.startswith("crystal-clones ")
    with pytest.raises(SystemExit) as exc:
        clone_check.main(["--help"])
    assert exc.value.code == 0


def test_two_new_copies_of_one_original_are_one_finding(repo: Repo) -> None:
    repo.write("a/settings.py", LOAD_SETTINGS)
    repo.write("b/settings.py", PARSE_CONFIG)
    repo.add("a/settings.py", "b/settings.py")
    code, lines, err = repo.hook(*repo.staged())
    assert code == 1
    assert len(lines) == 1
    assert lines[0] == (
        "app/config.py:4: function parse_config copied to a/settings.py:1 (lines 1-13), "
        "similarity 1.00; also added at b/settings.py:1"
    )
    assert "1 clone-like addition in 2 staged files" in err
