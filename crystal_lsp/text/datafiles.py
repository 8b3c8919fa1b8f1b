"""Data files the project reads and writes: S sets, baselines, JSONL corpora, reports.

Every read goes through the guarded reader of :mod:`crystal_lsp.text.sources` (regular files
only, named pipes never waited on, symlinks confined when a folder is given, sizes bounded), with
two more bounds for what a data file may hold: gzip decompresses to at most as many bytes as the
file may have, and JSON nests at most :data:`MAX_JSON_DEPTH` deep (deeper nesting exhausts the
parser's recursion). Every write replaces its target atomically: a temporary file in the same
folder, renamed over the target, removed on failure; a full disk is a :class:`CrystalError`.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
import zlib
from collections.abc import Iterator
from typing import Any

from crystal_lsp.errors import CrystalError
from crystal_lsp.text.sources import GZIP_MAGIC, SkippedFile, read_bytes, read_lines

MAX_DATA_BYTES = 64 << 20
"""The largest data file (after decompression) or JSONL line read without a limit of its own."""
MAX_JSON_DEPTH = 64
"""How deep a JSON document may nest; the project's own formats need 4."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH = {"[": 1, "{": 1, "]": -1, "}": -1}


def check_depth(text: str, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON text that nests deeper than ``max_depth`` (a ``ValueError``), unparsed."""
    if text.count("[") + text.count("{") <= max_depth:
        return
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    deepest = max(itertools.accumulate(map(_DEPTH.__getitem__, brackets)), default=0)
    if deepest > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")


def loads(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` with the nesting bound (``ValueError`` for bad JSON, as json raises)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    check_depth(text, max_depth)
    return json.loads(text)


def gunzip(data: bytes, max_bytes: int) -> bytes:
    """The content of gzip ``data`` (all members), refused past ``max_bytes`` (``ValueError``)."""
    out: list[bytes] = []
    size = 0
    while data:
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        chunk = inflate.decompress(data, max_bytes + 1 - size if max_bytes else 0)
        size += len(chunk)
        out.append(chunk)
        if max_bytes and size > max_bytes:
            raise ValueError(f"decompresses to more than {max_bytes:,} bytes")
        if not inflate.eof:
            raise ValueError("truncated gzip data")
        data = inflate.unused_data.lstrip(b"\0")
    return b"".join(out)


def read_json(path: str, what: str, max_bytes: int = MAX_DATA_BYTES) -> Any:
    """The JSON document of a (possibly gzip-compressed) file, else a one-line ``CrystalError``."""
    try:
        data = read_bytes(path, max_bytes)
    except SkippedFile as exc:
        raise CrystalError(f"{path}: cannot read {what} ({exc.reason})") from None
    try:
        if data[:2] == GZIP_MAGIC:
            data = gunzip(data, max_bytes)
        return loads(data)
    except (ValueError, zlib.error) as exc:  # JSONDecodeError and UnicodeDecodeError too
        raise CrystalError(f"{path}: not a readable {what} ({exc})") from None


def json_lines(
    path: str, max_line_bytes: int = MAX_DATA_BYTES, within: str | None = None
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a JSONL file (gzip too), bounded."""
    for number, line in read_lines(path, max_line_bytes, within):
        if not line.strip():
            continue
        try:
            yield number, loads(line)
        except ValueError as exc:
            raise CrystalError(f"{path}:{number}: not JSON ({exc})") from None


def write_atomic(path: str, data: bytes, what: str = "output") -> None:
    """Write ``data`` to ``path`` so that it holds either the old content or all of the new.

    The data goes to a temporary file in the target's folder (through a symlink: the folder of
    the file it names), which is then renamed over the target; on failure the temporary file is
    removed and the target is untouched. A target that exists and is not a regular file
    (``/dev/null``, ``/dev/stdout``, a named pipe) is written in place: a rename would replace
    the device. A failing write (a full disk) is a ``CrystalError`` naming ``what``.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    try:
        if mode is not None and not stat.S_ISREG(mode):
            with open(path, "wb") as fh:
                fh.write(data)
            return
        _replace(os.path.realpath(path), data, mode)
    except OSError as exc:
        raise CrystalError(f"{what} {path}: cannot write ({exc.strerror or exc})") from None


def check_writable(path: str, what: str = "output") -> None:
    """Refuse, before any work, a target :func:`write_atomic` could not create its file next to."""
    try:
        if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
            return  # written in place (a device, a pipe): only the write itself can tell
        fd, tmp = _temporary(os.path.dirname(os.path.realpath(path)) or ".", "probe")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise CrystalError(f"{what} {path}: cannot write ({exc.strerror or exc})") from None


def _replace(target: str, data: bytes, mode: int | None) -> None:
    folder, name = os.path.split(target)
    fd, tmp = _temporary(folder or ".", name)
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode is not None:
                os.fchmod(fh.fileno(), stat.S_IMODE(mode))  # a new file gets the umask's mode
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _temporary(folder: str, name: str) -> tuple[int, str]:
    """A new file next to the target (``.NAME.RANDOM.tmp``), opened for writing."""
    import secrets  # here: only a write needs it

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
