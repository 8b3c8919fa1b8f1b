"""RUBY (Tran et al., ICSE-SEIP 2019) and its levels STS, TRS and GRS.

STS compares tokens, TRS syntax trees, GRS program dependence graphs; the RUBY ensemble uses the
highest level both programs allow.

Importing this package is cheap and needs no optional dependency; tree-sitter grammars (and numba,
which speeds tree edit distance up) come with ``pip install 'crystal-lsp[ruby]'``. Without them,
TRS and GRS report that the representation cannot be built and RUBY falls back to STS.
"""

from __future__ import annotations

from crystal_lsp.ruby.ensemble import LEVELS, RubyResult, grs, ruby_score, sts, trs
from crystal_lsp.ruby.options import RubyOptions

__all__ = ["LEVELS", "RubyOptions", "RubyResult", "grs", "ruby_score", "sts", "trs"]
