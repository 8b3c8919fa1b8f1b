"""crystal_lsp: CrystalBLEU code similarity, a clone finder, a language server and a pre-commit hook.

The public Python API is re-exported here. ``corpus_bleu`` and ``sentence_bleu`` have the call
shape of NLTK's and of the ``crystalbleu`` package's (keyword ``ignoring=``), so research code can
switch imports and get identical numbers faster.
"""

from __future__ import annotations

import os as _os
import sys as _sys

# `python -m crystal_lsp` (sys.argv[0] is "-m" while the package is located) puts the working
# directory first on sys.path: inside a scanned repository its `copy.py` or `json.py` would be
# imported, i.e. executed, instead of the standard library's. Drop it before importing anything.
if _sys.argv[:1] == ["-m"] and _sys.path and _sys.path[0] in ("", _os.getcwd()):
    del _sys.path[0]

from typing import TYPE_CHECKING

from crystal_lsp.errors import CrystalError
from crystal_lsp.version import __version__

if TYPE_CHECKING:
    from crystal_lsp.metric.bleu import SmoothingFunction, brevity_penalty, closest_ref_length
    from crystal_lsp.metric.crystal import (
        CrystalBLEU,
        corpus_bleu,
        modified_precision,
        sentence_bleu,
    )
    from crystal_lsp.metric.ngrams import native_available
    from crystal_lsp.metric.signature import Signature
    from crystal_lsp.metric.smoothing import Smoothing
    from crystal_lsp.metric.sset import TriviallySharedSet, build_sset
    from crystal_lsp.text.tokens import Token, Tokens, tokenize

# The API is imported on first use (PEP 562): the command line, the hook and the server import
# submodules of this package, and a scan served from the cache needs neither the metric nor the
# lexers, so importing them here would cost every such start-up about a tenth of a second.
_EXPORTS = {
    "SmoothingFunction": "crystal_lsp.metric.bleu",
    "brevity_penalty": "crystal_lsp.metric.bleu",
    "closest_ref_length": "crystal_lsp.metric.bleu",
    "CrystalBLEU": "crystal_lsp.metric.crystal",
    "corpus_bleu": "crystal_lsp.metric.crystal",
    "modified_precision": "crystal_lsp.metric.crystal",
    "sentence_bleu": "crystal_lsp.metric.crystal",
    "native_available": "crystal_lsp.metric.ngrams",
    "Signature": "crystal_lsp.metric.signature",
    "Smoothing": "crystal_lsp.metric.smoothing",
    "TriviallySharedSet": "crystal_lsp.metric.sset",
    "build_sset": "crystal_lsp.metric.sset",
    "Token": "crystal_lsp.text.tokens",
    "Tokens": "crystal_lsp.text.tokens",
    "tokenize": "crystal_lsp.text.tokens",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "CrystalBLEU",
    "CrystalError",
    "Signature",
    "Smoothing",
    "SmoothingFunction",
    "Token",
    "Tokens",
    "TriviallySharedSet",
    "__version__",
    "brevity_penalty",
    "build_sset",
    "closest_ref_length",
    "corpus_bleu",
    "modified_precision",
    "native_available",
    "sentence_bleu",
    "tokenize",
]
