"""Reading source files safely: size limits, binary detection and a fixed decoding policy.

Decoding policy (the same everywhere: CLI, index, hook, server):

1. a UTF-8, UTF-16 or UTF-32 byte-order mark selects that encoding (and is dropped);
2. otherwise the bytes are decoded as UTF-8;
3. bytes that are not valid in that encoding are replaced by U+FFFD, and the file is reported
   as *partly undecodable* (``Source.replaced`` counts the replacements) instead of failing.

A file is *binary* when its first 8 KiB contain a NUL byte (git's heuristic) and no UTF-16/32
byte-order mark; binary files and files above the size limit are refused with a clear error.

Only regular files are read (devices, named pipes and sockets are refused without blocking), the
size limit is checked on the bytes actually read, and a symlink is followed only when it stays
inside the folder it was found in (:func:`read_bytes` with ``within``).
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import itertools
import os
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from crystal_lsp.errors import CrystalError
from crystal_lsp.text.lineends import unify_line_ends

DEFAULT_MAX_BYTES = 2_000_000
GZIP_MAGIC = b"\x1f\x8b"
MAX_SNIPPET_CHARS = 200_000
"""The longest text scored or checked on request (a snippet, a reference), in the language
server and the MCP server alike: beyond it, one request costs seconds and gigabytes."""
MAX_REFERENCES = 20
"""The most reference texts one scoring request may give."""
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
    """Decode bytes by the documented policy: ``(text, encoding, replacements)``.

    Lone ``\r`` line ends become ``\n`` (:func:`~crystal_lsp.text.lexinput.unify_line_ends`).
    """
    encoding = "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            data = data[len(bom) :]
            encoding = name
            break
    try:
        return unify_line_ends(data.decode(encoding)), encoding, 0
    except UnicodeDecodeError:
        text = data.decode(encoding, errors="replace")
        return (
            unify_line_ends(text),
            encoding,
            text.count("\ufffd") - data.decode(encoding, errors="ignore").count("\ufffd"),
        )


def contained(path: str, within: str) -> bool:
    """Whether ``path``, its symlinks resolved, lies inside the folder ``within`` (resolved too)."""
    real = os.path.realpath(path)
    base = os.path.realpath(within)
    try:
        return os.path.commonpath([real, base]) == base
    except ValueError:
        return False


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_regular(name: str, mode: int) -> None:
    """Refuse anything but a regular file with ``SkippedFile`` naming what it is."""
    if stat.S_ISDIR(mode):
        raise SkippedFile(name, "is a directory")
    if not stat.S_ISREG(mode):
        reason = _kind(mode)
        raise SkippedFile(
            name, reason if reason.startswith("not") else f"not a regular file ({reason})"
        )


def stat_regular(path: str, within: str | None = None) -> os.stat_result:
    """``os.stat`` of a regular file (symlinks confined to ``within``), else ``SkippedFile``."""
    if within is not None and os.path.islink(path) and not contained(path, within):
        raise SkippedFile(path, "symlink to a file outside the folder")
    try:
        info = os.stat(path)
    except OSError as exc:
        raise SkippedFile(path, f"cannot read ({exc.strerror or exc})") from None
    check_regular(path, info.st_mode)
    return info


def open_regular(path: str | os.PathLike[str], within: str | None = None) -> BinaryIO:
    """A regular file opened for binary reading, else ``SkippedFile`` (the one guarded open).

    A named pipe is never waited on (opened non-blocking, then refused), devices and sockets are
    refused unread, and ``within`` confines symlinks: a path that resolves outside that folder
    is refused unopened.
    """
    name = os.fspath(path)
    if within is not None and os.path.islink(name) and not contained(name, within):
        raise SkippedFile(name, "symlink to a file outside the folder")
    try:
        # O_NONBLOCK: opening a named pipe must not wait for a writer
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except IsADirectoryError:
        raise SkippedFile(name, "is a directory") from None
    except FileNotFoundError:
        raise SkippedFile(name, "no such file") from None
    except PermissionError:
        raise SkippedFile(name, "permission denied") from None
    except OSError as exc:
        raise SkippedFile(name, f"cannot read ({exc.strerror or exc})") from None
    try:
        check_regular(name, os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_bytes(
    path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES, within: str | None = None
) -> bytes:
    """The bytes of a regular file, at most ``max_bytes`` of them, else ``SkippedFile``.

    ``within`` confines symlinks: a path that resolves outside that folder is refused unread.
    """
    name = os.fspath(path)
    with open_regular(name, within) as fh:
        size = os.fstat(fh.fileno()).st_size
        if max_bytes and size > max_bytes:
            raise SkippedFile(name, f"too large ({size:,} bytes > limit {max_bytes:,})")
        try:
            data = _read_all(fh, max_bytes + 1 if max_bytes else -1)
        except OSError as exc:
            raise SkippedFile(name, f"cannot read ({exc.strerror or exc})") from None
    if max_bytes and len(data) > max_bytes:
        # it grew while being read: the limit holds for what was read, not what stat said
        raise SkippedFile(name, f"too large (over the limit of {max_bytes:,} bytes)")
    return data


def read_lines(
    path: str | os.PathLike[str], max_line_bytes: int, within: str | None = None
) -> Iterator[tuple[int, bytes]]:
    """``(number, bytes)`` of each line of a regular file (gunzipped when it is gzip).

    Lines are read one at a time, each at most ``max_line_bytes`` long (its line break not
    counted; ``0``: no limit): a longer line is ``SkippedFile`` before more of it is read.
    """
    name = os.fspath(path)
    with open_regular(name, within) as raw:
        stream: BinaryIO = raw
        if raw.peek(2)[:2] == GZIP_MAGIC:  # type: ignore[attr-defined]
            stream = gzip.GzipFile(fileobj=raw)  # type: ignore[assignment]
        limit = max_line_bytes + 2 if max_line_bytes else -1
        try:
            for number in itertools.count(1):
                line = stream.readline(limit)
                if not line:
                    return
                if max_line_bytes and len(line.rstrip(b"\r\n")) > max_line_bytes:
                    raise SkippedFile(
                        name,
                        f"line {number} is too long (over the limit of {max_line_bytes:,} bytes)",
                    )
                yield number, line
        except (OSError, EOFError, zlib.error) as exc:
            raise SkippedFile(
                name, f"cannot read ({getattr(exc, 'strerror', None) or exc})"
            ) from None


def _read_all(fh: Any, limit: int) -> bytes:
    """Read to the end, or ``limit`` bytes (``-1``: no limit)."""
    chunks = []
    size = 0
    while limit < 0 or size < limit:
        chunk = fh.read(1 << 20 if limit < 0 else min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_source(
    path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES, within: str | None = None
) -> Source:
    """Read and decode a source file, refusing what :func:`read_bytes` refuses and binary files."""
    name = os.fspath(path)
    return source_from_bytes(name, read_bytes(name, max_bytes, within), max_bytes)


def source_from_bytes(name: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> Source:
    """Decode in-memory file content (e.g. a staged git blob) by the same rules as files."""
    if max_bytes and len(data) > max_bytes:
        raise SkippedFile(name, f"too large ({len(data):,} bytes > limit {max_bytes:,})")
    if is_binary(data):
        raise SkippedFile(name, "binary file")
    text, encoding, replaced = decode(data)
    return Source(name, text, encoding, replaced)


def content_sha(data: bytes) -> str:
    """Digest naming a file's content in the cache."""
    return hashlib.sha256(data).hexdigest()[:24]
