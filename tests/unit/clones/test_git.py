"""The one git module: the runner, parsing git's output, lines added since a revision."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess

import pytest
from scan_samples import GIT_ENV, git, git_init, write_tree

from crystal_lsp import CrystalError
from crystal_lsp.cli.main import main
from crystal_lsp.clones.git import (
    WHOLE_FILE,
    Git,
    GitError,
    changed_lines,
    git_env,
    parse_ls_files,
    parse_ls_tree,
    parse_patch,
    parse_raw,
    split_raw_and_patch,
    unquote,
)

SHA_A = "a" * 40
SHA_B = "b" * 40
ZERO = "0" * 40


@pytest.mark.parametrize(
    ("quoted", "plain"),
    [
        (b"a/plain.py", b"a/plain.py"),
        (b'"a/new\\nline.py"', b"a/new\nline.py"),
        (b'"b/q\\"uote\\\\.py"', b'b/q"uote\\.py'),
        (b'"a/\\303\\274n\\303\\257.py"', "a/ünï.py".encode()),
        (b'"a/tab\\there"', b"a/tab\there"),
    ],
)
def test_unquote(quoted: bytes, plain: bytes) -> None:
    assert unquote(quoted) == plain


def test_parse_patch_added_and_removed_lines() -> None:
    patch = b"\n".join(
        [
            b"diff --git a/x.py b/x.py",
            b"index 1111111..2222222 100644",
            b"--- a/x.py",
            b"+++ b/x.py",
            b"@@ -2 +2,2 @@ def f():",
            b"-    return 1",
            b"+    x = 1",
            b"+    return x",
            b"@@ -10,0 +12 @@",
            b"++++ b/fake.py",  # an added line that looks like a header
            b"@@ -20,3 +21,0 @@",
            b"-a",
            b"-b",
            b"-c",
            b"\\ No newline at end of file",
            b'diff --git "a/sp ace\\n.py" "b/sp ace\\n.py"',
            b"new file mode 100644",
            b"--- /dev/null",
            b'+++ "b/sp ace\\n.py"',
            b"@@ -0,0 +1,3 @@",
            b"+1",
            b"+2",
            b"+3",
            b"diff --git a/with space.py b/with space.py",
            b"deleted file mode 100644",
            b"--- a/with space.py\t",
            b"+++ /dev/null",
            b"@@ -1,2 +0,0 @@",
            b"-x",
            b"-y",
            b"diff --git a/img.png b/img.png",
            b"Binary files a/img.png and b/img.png differ",
            b"",
        ]
    )
    parsed = parse_patch(patch)
    assert parsed.added == {"x.py": [(2, 3), (12, 12)], "sp ace\n.py": [(1, 3)]}
    assert parsed.removed == {"x.py": [(2, 2), (20, 22)], "with space.py": [(1, 2)]}
    assert "fake.py" not in parsed.added


def test_parse_raw_entries() -> None:
    out = b"\0".join(
        [
            f":000000 100644 {ZERO} {SHA_A} A".encode(),
            b"new\nline.py",
            f":100644 100644 {SHA_A} {SHA_B} R087".encode(),
            b"old name.py",
            b"new name.py",
            f":100644 100644 {SHA_A} {SHA_A} C100".encode(),
            b"src.py",
            b"copy.py",
            f":120000 100644 {SHA_A} {SHA_B} T".encode(),
            b"was_link.py",
            f":100644 000000 {SHA_A} {ZERO} D".encode(),
            "gone\u00e9.py".encode(),
            b"",
        ]
    )
    entries = parse_raw(out)
    assert [(e.status, e.old_path, e.new_path) for e in entries] == [
        ("A", "new\nline.py", "new\nline.py"),
        ("R", "old name.py", "new name.py"),
        ("C", "src.py", "copy.py"),
        ("T", "was_link.py", "was_link.py"),
        ("D", "goneé.py", "goneé.py"),
    ]
    assert not entries[0].old_is_file and entries[0].new_is_file
    assert not entries[3].old_is_file  # a symlink's target is not code
    assert entries[4].old_is_file and not entries[4].new_is_file


def test_undecodable_path_bytes_round_trip() -> None:
    [entry] = parse_raw(f":000000 100644 {ZERO} {SHA_A} A\0bad\xff.py\0".encode("latin-1"))
    assert entry.new_path.encode("utf-8", "surrogateescape") == b"bad\xff.py"


def test_split_raw_and_patch() -> None:
    raw = f":000000 100644 {ZERO} {SHA_A} A\0a.py\0".encode()
    assert split_raw_and_patch(raw + b"\0diff --git a/a.py b/a.py\n") == (
        raw,
        b"diff --git a/a.py b/a.py\n",
    )
    assert split_raw_and_patch(raw) == (raw, b"")
    assert split_raw_and_patch(b"") == (b"", b"")


def test_parse_ls_files_keeps_regular_files_at_stage_0() -> None:
    out = b"\0".join(
        [
            f"100644 {SHA_A} 0\tplain.py".encode(),
            f"100755 {SHA_A} 0\tscript with space.sh".encode(),
            f"120000 {SHA_A} 0\tlink.py".encode(),
            f"160000 {SHA_A} 0\tsubmodule".encode(),
            f"100644 {SHA_A} 1\tconflict.py".encode(),
            f"100644 {SHA_B} 2\tconflict.py".encode(),
            b"100644 " + SHA_B.encode() + b" 0\tnew\nline.py",
            b"",
        ]
    )
    assert [e.path for e in parse_ls_files(out)] == [
        "plain.py",
        "script with space.sh",
        "new\nline.py",
    ]


def test_parse_ls_tree() -> None:
    out = b"\0".join(
        [
            f"100644 blob {SHA_A}\ta.py".encode(),
            f"160000 commit {SHA_B}\tsub".encode(),
            f"120000 blob {SHA_B}\tlink".encode(),
            b"",
        ]
    )
    assert [(e.path, e.sha) for e in parse_ls_tree(out)] == [("a.py", SHA_A)]


# --- the runner ------------------------------------------------------------------------------


def test_a_failing_git_says_git_failed(tmp_path: pathlib.Path) -> None:
    with pytest.raises(GitError) as caught:
        Git(str(tmp_path)).run("log", "--oneline", "-n", "1")
    message = str(caught.value)
    assert message.startswith("git failed: git log --oneline -n ...: fatal: not a git repository")
    assert "\n" not in message and caught.value.exit_code == 2


def test_missing_git(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GitError, match=r"^git is not installed$"):
        Git(str(tmp_path)).run("status")


def test_a_git_that_hangs_times_out(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def hang(args: list[str], **kwargs: object) -> None:
        raise subprocess.TimeoutExpired(args, 300)

    monkeypatch.setattr(subprocess, "run", hang)
    with pytest.raises(GitError, match=r"^git failed: git diff: timed out after 300 s$"):
        Git(str(tmp_path)).run("diff")


def test_git_env_keeps_the_hook_environment_and_pins_the_rest(tmp_path: pathlib.Path) -> None:
    base = {
        "GIT_INDEX_FILE": ".git/next-index.lock",
        "GIT_DIR": "/abs/.git",
        "GIT_EXTERNAL_DIFF": "meld",
        "GIT_DIFF_OPTS": "--unified=5",
        "LC_ALL": "de_DE.UTF-8",
        "PATH": "/bin",
    }
    env = git_env(base, cwd=str(tmp_path))
    assert env["GIT_INDEX_FILE"] == str(tmp_path / ".git" / "next-index.lock")
    assert env["GIT_DIR"] == "/abs/.git" and env["PATH"] == "/bin"
    assert "GIT_EXTERNAL_DIFF" not in env and "GIT_DIFF_OPTS" not in env
    assert (env["LC_ALL"], env["GIT_OPTIONAL_LOCKS"], env["GIT_TERMINAL_PROMPT"]) == ("C", "0", "0")


def test_scan_reports_a_failing_git_as_git_failed(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = git_init(write_tree(tmp_path / "repo", {"a.py": "x = 1\n"}))
    (repo / ".git" / "index").write_bytes(b"DIRC garbage")
    assert main(["scan", str(repo)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("crystal-lsp: error: git failed: git ls-files -z --cached ...: ")


# --- lines added since a revision ------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "spans"),
    [
        pytest.param(b"@@ -1,2 +3,4 @@ def f():\n", [(3, 6)], id="range"),
        pytest.param(b"@@ -5 +5 @@\n", [(5, 5)], id="one-line"),
        pytest.param(b"@@ -3,2 +2,0 @@\n", [], id="deletion-only"),
        pytest.param(b"@@ -0,0 +1,3 @@\n", [(1, 3)], id="new-file"),
        pytest.param(
            b"@@ -1 +1 @@\n-a\n+b\n@@ -10,0 +11,2 @@\n+c\n+d\n", [(1, 1), (11, 12)], id="two-hunks"
        ),
        pytest.param(b"+@@ -1 +1 @@ inside a line\n", [], id="not-at-line-start"),
        pytest.param(b"", [], id="empty"),
    ],
)
def test_hunks_of_one_file(patch: bytes, spans: list[tuple[int, int]]) -> None:
    header = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n"
    assert parse_patch(header + patch).added.get("x", []) == spans


def _lines(n: int, prefix: str = "line") -> str:
    return "".join(f"{prefix} {i}\n" for i in range(1, n + 1))


@pytest.fixture
def history(tmp_path: pathlib.Path) -> pathlib.Path:
    root = write_tree(
        tmp_path / "hist",
        {
            "a.py": _lines(20),
            "dir with space/é.py": _lines(5),
            "gone.py": _lines(3),
            ".gitignore": "*.log\n",
        },
    )
    git_init(root)
    git(root, "tag", "base")
    return root


def test_changed_lines(history: pathlib.Path) -> None:
    text = _lines(20).replace("line 3\n", "changed 3\n").replace("line 10\n", "")
    (history / "a.py").write_text(text + "added 21\nadded 22\n")
    (history / "dir with space/é.py").write_text(_lines(5) + "more\n")
    (history / "gone.py").unlink()
    write_tree(history, {"fresh/new.py": _lines(2), "ignored.log": "x\n"})
    git(history, "add", "fresh/new.py")  # staged new files count like untracked ones
    write_tree(history, {"untracked.py": _lines(2)})
    assert changed_lines(str(history), "base") == {
        "a.py": [(3, 3), (20, 21)],
        "dir with space/é.py": [(6, 6)],
        "fresh/new.py": [(1, 2)],
        "untracked.py": [(1, 10**9)],
    }


def test_changed_lines_since_a_commit_range(history: pathlib.Path) -> None:
    (history / "a.py").write_text(_lines(21))
    git(history, "commit", "-qam", "second")
    assert changed_lines(str(history), "base") == {"a.py": [(21, 21)]}
    assert changed_lines(str(history), "HEAD") == {}


def test_changed_lines_in_a_subdirectory(history: pathlib.Path) -> None:
    (history / "dir with space/é.py").write_text("first\n" + _lines(5))
    (history / "a.py").write_text(_lines(21))
    write_tree(history, {"dir with space/new.py": "x\n"})
    assert changed_lines(str(history / "dir with space"), "base") == {
        "é.py": [(1, 1)],
        "new.py": [(1, 10**9)],
    }


@pytest.mark.parametrize("ref", ["no-such-branch", "base~5", "0" * 40, "--output=x"])
def test_unknown_ref(history: pathlib.Path, ref: str) -> None:
    with pytest.raises(CrystalError, match="unknown git revision"):
        changed_lines(str(history), ref)
    assert not (history / "x").exists()


def test_changed_lines_outside_git(tmp_path: pathlib.Path) -> None:
    tree = write_tree(tmp_path / "tree", {"a.py": "x = 1\n"})
    with pytest.raises(CrystalError, match="needs a git repository"):
        changed_lines(str(tree), "HEAD")


_OLD_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _changed_lines_per_file(root: pathlib.Path, ref: str) -> dict[str, list[tuple[int, int]]]:
    """The former ``changed_lines``: one ``git diff`` per changed file."""

    def run(*args: str | bytes) -> bytes:
        command = ["git", "-C", str(root), *args]
        return subprocess.run(command, capture_output=True, check=True).stdout

    options = ("diff", "--no-color", "--no-ext-diff", "-U0", "--relative")
    out: dict[str, list[tuple[int, int]]] = {}
    for name in run(*options, "-z", "--name-only", ref).split(b"\0"):
        if not name:
            continue
        spans = []
        for line in run(*options, ref, "--", name).splitlines():
            match = _OLD_HUNK.match(line)
            if match:
                start, count = int(match[1]), int(match[2] or 1)
                if count > 0:
                    spans.append((start, start + count - 1))
        if spans:
            out[os.fsdecode(name)] = spans
    for name in run("ls-files", "-z", "--others", "--exclude-standard").split(b"\0"):
        if name:
            out[os.fsdecode(name)] = [(1, WHOLE_FILE)]
    return out


NOT_UTF8 = os.fsdecode(b"caf\xe9.py")


@pytest.fixture
def busy(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """A repository with one change of every kind since the tag ``base``."""
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    root = tmp_path / "busy"
    files: dict[str, str | bytes] = {
        "a.py": _lines(20),
        "moved.py": _lines(8, "moved"),
        "edited.py": _lines(12, "edited"),
        "image.bin": b"\x89PNG\0\0" + bytes(range(256)),
        NOT_UTF8: _lines(4),
        "gone.py": _lines(3),
        "sub dir/é.py": _lines(5),
        "sub dir/tab\tname.py": _lines(2),
        "new\nline.py": _lines(2),
    }
    git_init(write_tree(root, files))
    git(root, "tag", "base")
    (root / "a.py").write_text(
        _lines(20).replace("line 3\n", "x\n").replace("line 9\n", "") + "z\n"
    )
    git(root, "mv", "moved.py", "renamed.py")
    git(root, "mv", "edited.py", "sub dir/edited.py")
    (root / "sub dir/edited.py").write_text(_lines(12, "edited") + "one more\n")
    (root / "image.bin").write_bytes(b"\x89PNG\0\1" + bytes(range(256)))
    (root / NOT_UTF8).write_text(_lines(4) + "five\n")
    (root / "gone.py").unlink()
    (root / "sub dir/é.py").write_text("zero\n" + _lines(5))
    (root / "sub dir/tab\tname.py").write_text(_lines(3))
    (root / "new\nline.py").write_text("top\n" + _lines(2))
    write_tree(root, {"staged.py": _lines(2), "sub dir/untracked.py": "u\n"})
    write_tree(root, {os.fsdecode(b"raw\xff.py"): "r\n"})
    git(root, "add", "staged.py")
    return root


def test_one_diff_for_all_files_equals_one_diff_per_file(busy: pathlib.Path) -> None:
    for where in (busy, busy / "sub dir"):
        assert changed_lines(str(where), "base") == _changed_lines_per_file(where, "base")
    git(busy, "add", "-A")
    git(busy, "commit", "-qm", "second")
    (busy / "a.py").write_text(_lines(2))
    assert changed_lines(str(busy), "base") == _changed_lines_per_file(busy, "base")
    assert changed_lines(str(busy), "HEAD") == _changed_lines_per_file(busy, "HEAD")


def test_what_one_diff_reports(busy: pathlib.Path) -> None:
    found = changed_lines(str(busy), "base")
    assert found["a.py"] == [(3, 3), (20, 20)]
    assert found["renamed.py"] == [(1, 8)]  # a rename: every line is new at its path
    assert found["sub dir/edited.py"] == [(1, 13)]
    assert found[NOT_UTF8] == [(5, 5)]
    assert found["sub dir/tab\tname.py"] == [(3, 3)]
    assert found["new\nline.py"] == [(1, 1)]
    assert found[os.fsdecode(b"raw\xff.py")] == [(1, WHOLE_FILE)]
    assert "image.bin" not in found and "gone.py" not in found  # binary, deleted
    assert "moved.py" not in found and "edited.py" not in found


def test_user_diff_settings_do_not_move_the_lines(busy: pathlib.Path) -> None:
    expected = changed_lines(str(busy), "base")
    for key, value in (
        ("diff.noprefix", "true"),
        ("diff.mnemonicPrefix", "true"),
        ("color.diff", "always"),
        ("diff.renames", "copies"),
        ("core.quotePath", "false"),
    ):
        git(busy, "config", key, value)
    assert changed_lines(str(busy), "base") == expected


def test_the_hook_and_the_scan_read_one_diff(busy: pathlib.Path) -> None:
    diff = Git(str(busy)).diff("--cached", "base")
    statuses = {e.new_path: e.status for e in diff.entries}
    assert statuses["renamed.py"] == "R" and statuses["staged.py"] == "A"
    assert "renamed.py" not in diff.patch.added  # a pure rename adds nothing to the hook
    assert diff.patch.added["staged.py"] == [(1, 2)]
