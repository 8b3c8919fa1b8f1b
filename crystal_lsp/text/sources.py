"""Reading source files safely: size limits, binary detection and a fixed decoding policy.

Decoding policy (the same everywhere: CLI, index, hook, server):

1. a UTF-8, UTF-16 or UTF-32 byte-order mark selects that encoding (and is dropped);
2. otherwise the bytes are decoded as UTF-8;
3. bytes that are not valid in that encoding are replaced by U+FFFD, and the file is reported
   as *partly undecodable* (``Source.replaced`` counts the replacements) instead of failing.

A file is *binary* when its first 8 KiB contain a NUL byte (git's heuristic) and no UTF-16/32
byte-order mark; binary files and files above the size limit are refused with a clear error.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass

from crystal_lsp.errors import CrystalError

DEFAULT_MAX_BYTES = 2_000_000
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class Source:
    """Decoded text of a file, with how it was decoded."""

    path: str
    text: str
    encoding: str
    replaced: int = 0


class SkippedFile(CrystalError):
    """A file that cannot be used (binary, too large, unreadable), with the reason."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def is_binary(data: bytes) -> bool:
    """Git's heuristic: a NUL byte in the first 8 KiB (text with a UTF-16/32 BOM excepted)."""
    head = data[:8192]
    if any(head.startswith(bom) for bom, _ in _BOMS):
        return False
    return b"\0" in head


def decode(data: bytes) -> tuple[str, str, int]:
    """Decode bytes by the documented policy: ``(text, encoding, replacements)``."""
    encoding = "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            data = data[len(bom) :]
            encoding = name
            break
    try:
        return data.decode(encoding), encoding, 0
    except UnicodeDecodeError:
        text = data.decode(encoding, errors="replace")
        return (
            text,
            encoding,
            text.count("\ufffd") - data.decode(encoding, errors="ignore").count("\ufffd"),
        )


def read_source(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> Source:
    """Read and decode a source file, refusing binary and oversized files with ``SkippedFile``."""
    name = os.fspath(path)
    try:
        size = os.path.getsize(name)
        if max_bytes and size > max_bytes:
            raise SkippedFile(name, f"too large ({size:,} bytes > limit {max_bytes:,})")
        with open(name, "rb") as fh:
            data = fh.read()
    except IsADirectoryError:
        raise SkippedFile(name, "is a directory") from None
    except FileNotFoundError:
        raise SkippedFile(name, "no such file") from None
    except PermissionError:
        raise SkippedFile(name, "permission denied") from None
    except OSError as exc:
        raise SkippedFile(name, f"cannot read ({exc.strerror or exc})") from None
    return source_from_bytes(name, data, max_bytes)


def source_from_bytes(name: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> Source:
    """Decode in-memory file content (e.g. a staged git blob) by the same rules as files."""
    if max_bytes and len(data) > max_bytes:
        raise SkippedFile(name, f"too large ({len(data):,} bytes > limit {max_bytes:,})")
    if is_binary(data):
        raise SkippedFile(name, "binary file")
    text, encoding, replaced = decode(data)
    return Source(name, text, encoding, replaced)
