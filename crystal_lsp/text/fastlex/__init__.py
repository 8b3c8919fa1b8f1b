"""A faster executor of Pygments' own ``RegexLexer`` definitions, with identical tokens.

:func:`get_tokens` is ``lexer.get_tokens_unprocessed(text)``: for a lexer it can compile (see
:mod:`~crystal_lsp.text.fastlex.program` and :mod:`~crystal_lsp.text.fastlex.select`) the loop
of :mod:`~crystal_lsp.text.fastlex.run` runs Pygments' rules with one alternation per state and
next character; any other lexer runs Pygments' own code. Setting ``CRYSTAL_LSP_FASTLEX=0`` in
the environment turns the executor off.
"""

from __future__ import annotations

from crystal_lsp.text.fastlex.columns import is_comment, keep_all
from crystal_lsp.text.fastlex.run import Program, next_match, run
from crystal_lsp.text.fastlex.select import FALLBACK_LEXERS, columns_for, get_tokens, program_for

__all__ = [
    "FALLBACK_LEXERS",
    "Program",
    "columns_for",
    "get_tokens",
    "is_comment",
    "keep_all",
    "next_match",
    "program_for",
    "run",
]
