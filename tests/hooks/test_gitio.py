"""Parsing git's output: quoted paths, ``-U0`` patches, ``--raw -z`` entries, listings."""

from __future__ import annotations

import pytest
from crystal_lsp_hooks.gitio import (
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
