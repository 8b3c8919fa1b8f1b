"""Line ends: one line-numbering rule, the LSP's (a line ends at ``\\r\\n``, ``\\r`` or ``\\n``).

A module of its own, without numpy: the file reader (:mod:`crystal_lsp.text.sources`) uses it on
the hook's cheap path, which loads no index.
"""

from __future__ import annotations

import re

_LONE_CR = re.compile(r"\r(?!\n)")


def unify_line_ends(source: str) -> str:
    """``source`` with each lone ``\\r`` made ``\\n`` (LSP line ends; offsets unchanged)."""
    return _LONE_CR.sub("\n", source) if "\r" in source else source
