"""JSON documents as ``json.dumps(doc, indent=2, ensure_ascii=False)`` writes them, faster.

With ``indent``, the standard library encodes in pure Python, through a generator per nested
container: for a scan report of a few hundred findings that is most of what a scan served
from the cache costs. :func:`dumps_indented` builds the same text with one recursive function
and the C string encoder. Anything it does not know (keys that are not strings, values of other
types, subclasses it cannot be sure of) goes to ``json.dumps``, so the text is always the
standard library's.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

_INF = float("inf")


class _Other(Exception):
    """A value this encoder leaves to ``json.dumps``."""


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INF:
        return "Infinity"
    if value == -_INF:
        return "-Infinity"
    return float.__repr__(value)


_SCALARS: dict[type, Any] = {
    str: encode_basestring,
    int: int.__repr__,
    float: _float,
    bool: lambda v: "true" if v else "false",
    type(None): lambda _: "null",
}


def dumps_indented(doc: Any) -> str:
    """``json.dumps(doc, indent=2, ensure_ascii=False)``, the same text (module docstring)."""
    out: list[str] = []
    put = out.append

    def encode(value: Any, pad: str) -> None:
        scalar = _SCALARS.get(type(value))
        if scalar is not None:
            put(scalar(value))
            return
        inner = pad + "  "
        if type(value) is dict:
            if not value:
                put("{}")
                return
            put("{\n" + inner)
            sep = ""
            for key, item in value.items():
                if type(key) is not str:
                    raise _Other
                put(sep + encode_basestring(key) + ": ")
                encode(item, inner)
                sep = ",\n" + inner
            put("\n" + pad + "}")
        elif type(value) is list or type(value) is tuple:
            if not value:
                put("[]")
                return
            put("[\n" + inner)
            sep = ""
            for item in value:
                put(sep)
                encode(item, inner)
                sep = ",\n" + inner
            put("\n" + pad + "]")
        else:
            raise _Other

    try:
        encode(doc, "")
    except (_Other, RecursionError):
        return json.dumps(doc, indent=2, ensure_ascii=False)
    return "".join(out)
