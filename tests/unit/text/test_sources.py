"""Reading source files: byte-order marks, replacement of bad bytes, binaries, limits, errors."""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Any

import pytest

from crystal_lsp import CrystalError
from crystal_lsp.text.sources import (
    SkippedFile,
    decode,
    is_binary,
    read_source,
    source_from_bytes,
)

TEXT = "def f(x):\n    return 'café 😀'\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        pytest.param(TEXT.encode("utf-8"), "utf-8", id="utf-8-no-bom"),
        pytest.param(codecs.BOM_UTF8 + TEXT.encode("utf-8"), "utf-8", id="utf-8-bom"),
        pytest.param(codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "utf-16-le", id="utf-16-le"),
        pytest.param(codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "utf-16-be", id="utf-16-be"),
        pytest.param(codecs.BOM_UTF32_LE + TEXT.encode("utf-32-le"), "utf-32-le", id="utf-32-le"),
        pytest.param(codecs.BOM_UTF32_BE + TEXT.encode("utf-32-be"), "utf-32-be", id="utf-32-be"),
    ],
)
def test_bom_selects_encoding_and_is_dropped(tmp_path: Path, data: bytes, encoding: str) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(data)
    source = read_source(path)
    assert (source.text, source.encoding, source.replaced) == (TEXT, encoding, 0)
    assert source.path == str(path)


@pytest.mark.parametrize(
    ("data", "text", "replaced"),
    [
        pytest.param(b"x = '\xff'\n", "x = '\ufffd'\n", 1, id="one-bad-byte"),
        pytest.param(b"a\xff\xfe caf\xe9", "a\ufffd\ufffd caf\ufffd", 3, id="three-bad-bytes"),
        pytest.param(b"ok \xe2\x82", "ok \ufffd", 1, id="truncated-sequence"),
        pytest.param("keep \ufffd".encode() + b"\xc0", "keep \ufffd\ufffd", 1, id="real-fffd-kept"),
    ],
)
def test_invalid_utf8_is_replaced_and_counted(data: bytes, text: str, replaced: int) -> None:
    assert decode(data) == (text, "utf-8", replaced)
    source = source_from_bytes("mem.py", data)
    assert (source.text, source.replaced) == (text, replaced)


def test_odd_utf16_tail_is_replaced() -> None:
    text, encoding, replaced = decode(codecs.BOM_UTF16_LE + "ab".encode("utf-16-le") + b"c")
    assert (text, encoding, replaced) == ("ab\ufffd", "utf-16-le", 1)


@pytest.mark.parametrize(
    ("data", "binary"),
    [
        pytest.param(b"abc\x00def", True, id="nul"),
        pytest.param(b"a" * 8191 + b"\x00", True, id="nul-at-8191"),
        pytest.param(b"a" * 8192 + b"\x00", False, id="nul-after-8-kib"),
        pytest.param(codecs.BOM_UTF16_LE + "x".encode("utf-16-le"), False, id="utf-16-has-nuls"),
        pytest.param(codecs.BOM_UTF32_BE + "x".encode("utf-32-be"), False, id="utf-32-has-nuls"),
        pytest.param(b"", False, id="empty"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", True, id="png"),
    ],
)
def test_binary_detection(data: bytes, binary: bool) -> None:
    assert is_binary(data) is binary


def test_binary_file_is_skipped_with_reason(tmp_path: Path) -> None:
    path = tmp_path / "img.py"
    path.write_bytes(b"\x00\x01\x02")
    with pytest.raises(SkippedFile) as info:
        read_source(path)
    assert info.value.reason == "binary file"
    assert info.value.path == str(path)
    assert isinstance(info.value, CrystalError)


def test_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    path.write_bytes(b"x" * 101)
    with pytest.raises(SkippedFile, match="too large") as info:
        read_source(path, max_bytes=100)
    assert "101 bytes > limit 100" in info.value.reason
    assert read_source(path, max_bytes=101).text == "x" * 101
    assert read_source(path, max_bytes=0).text == "x" * 101  # 0: no limit
    with pytest.raises(SkippedFile, match="too large"):
        source_from_bytes("blob", b"x" * 11, max_bytes=10)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SkippedFile) as info:
        read_source(tmp_path / "nope.py")
    assert info.value.reason == "no such file"


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(SkippedFile) as info:
        read_source(tmp_path)
    assert info.value.reason == "is a directory"


def test_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulated, because tests may run as root, for whom chmod 000 does not deny reading.
    path = tmp_path / "secret.py"
    path.write_text("x = 1\n")

    real_open = os.open

    def deny(name: str, *args: Any, **kwargs: Any) -> int:
        if name == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    with pytest.raises(SkippedFile) as info:
        read_source(path)
    assert info.value.reason == "permission denied"


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read mode-000 files"
)
def test_permission_denied_for_real(tmp_path: Path) -> None:
    path = tmp_path / "secret.py"
    path.write_text("x = 1\n")
    path.chmod(0)
    try:
        with pytest.raises(SkippedFile, match="permission denied"):
            read_source(path)
    finally:
        path.chmod(0o600)


def test_other_os_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.py"
    path.write_text("x")
    real_open = os.open

    def broken(name: str, *args: Any, **kwargs: Any) -> int:
        if name == str(path):
            raise OSError(5, "Input/output error")
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", broken)
    with pytest.raises(SkippedFile, match="cannot read \\(Input/output error\\)"):
        read_source(path)
