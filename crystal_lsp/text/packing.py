"""Compact JSON forms of number columns, for the index entries stored in the cache.

Columns of ints (token offsets, lines) are stored as the differences of consecutive values, packed
little-endian into the narrowest of 1, 2 or 4 bytes and base64-encoded: ``[width, text]``. Encoding
and decoding are numpy passes, not a JSON number per token. A column whose differences do not fit
(a decreasing column, or a jump of 4 GiB) is stored as the plain list of differences, which
:func:`unpack_ints` reads too.
"""

from __future__ import annotations

import base64
import itertools
import operator
from typing import Any

import numpy as np
import numpy.typing as npt

_WIDTHS = (1, 2, 4)


def b64_array(values: npt.NDArray[Any], dtype: str) -> str:
    """``values`` as ``dtype`` (e.g. ``"<u8"``), base64-encoded."""
    return base64.b64encode(values.astype(dtype).tobytes()).decode("ascii")


def array_b64(text: str, dtype: str) -> npt.NDArray[Any]:
    """Inverse of :func:`b64_array` (``ValueError`` if malformed)."""
    return np.frombuffer(base64.b64decode(text), dtype=dtype)


def pack_ints(values: list[int]) -> list[Any]:
    """The differences of consecutive ``values`` (the first from 0), packed when they fit."""
    gaps = np.diff(np.asarray(values, dtype=np.int64), prepend=0)
    if not len(gaps):
        return [1, ""]
    low, high = int(gaps.min()), int(gaps.max())
    if low < 0 or high >= 1 << 32:
        return list(map(operator.sub, values, itertools.chain((0,), values)))
    width = next(w for w in _WIDTHS if high < 1 << (8 * w))
    return [width, b64_array(gaps, f"<u{width}")]


def unpack_ints(packed: Any) -> list[int]:
    """Inverse of :func:`pack_ints` (``ValueError``/``TypeError`` if malformed)."""
    if not isinstance(packed, list):
        raise TypeError(f"a column must be a list, not {type(packed).__name__}")
    if len(packed) == 2 and isinstance(packed[1], str):
        width, text = packed
        if width not in _WIDTHS:
            raise ValueError(f"a column of {width!r}-byte numbers")
        gaps = array_b64(text, f"<u{width}")
        out: list[int] = np.cumsum(gaps, dtype=np.int64).tolist()
        return out
    return list(itertools.accumulate(packed))
