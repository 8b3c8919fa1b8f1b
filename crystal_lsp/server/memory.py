"""Giving memory back after an index build.

A cold build allocates far more than the index it leaves (tokens of every file, the workers'
results, the full scan's temporaries). Once it is installed, the garbage is collected and, on
glibc, the allocator is asked to return its free pages to the system (``malloc_trim``), so that
a server that indexed cold settles near the footprint of one that started from the cache.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import logging
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    """Glibc's ``malloc_trim``, or None elsewhere (musl, macOS, Windows)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def release_memory() -> bool:
    """Collect garbage and return free heap pages to the system; whether pages were returned."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    try:
        return bool(trim(0))
    except Exception:  # pragma: no cover - a foreign libc without the call's semantics
        log.debug("malloc_trim failed", exc_info=True)
        return False
