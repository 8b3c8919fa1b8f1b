"""File URIs and paths, for every file name a file system allows.

pygls' conversions assume UTF-8 names: a name with other bytes (``lat\\xe9.py``, which Python
holds as a lone surrogate) makes ``from_fs_path`` raise, and ``to_fs_path`` turns its
percent-escapes into U+FFFD. Such names are percent-encoded byte by byte here, as RFC 8089 does,
and decoded back to the same bytes.
"""

from __future__ import annotations

import os
from urllib.parse import quote, unquote_to_bytes, urlparse

from pygls import uris


def from_fs_path(path: str) -> str | None:
    """The ``file:`` URI of an absolute path (``None`` for what is not one)."""
    try:
        uri: str | None = uris.from_fs_path(path)
    except UnicodeEncodeError:
        return "file://" + quote(os.fsencode(path), safe="/")
    return uri


def to_fs_path(uri: str) -> str | None:
    """The path of a ``file:`` URI (``None`` for other schemes)."""
    path = uris.to_fs_path(uri)
    if path is not None and "\ufffd" in path and "%" in uri:
        parsed = urlparse(uri)
        if not parsed.netloc or parsed.netloc == "localhost":
            return os.fsdecode(unquote_to_bytes(parsed.path))
    return path
