"""Pygments tokens with their source offsets.

``tokenize`` keeps what the reference implementation of CrystalBLEU keeps: every token except
whitespace and comments (comments can be kept on request), lexed from the text Pygments itself
lexes with its default options (:mod:`crystal_lsp.text.lexinput`: byte-order mark dropped, line
ends made ``\\n``, one final line end), so the token texts are the reference's for every file.
Each token remembers its offset in the *raw* source string (in code points), so that later layers
can map n-grams back to line/column ranges; where a token spans ``\\r\\n`` line ends its text
is shorter than the source it covers (:func:`~crystal_lsp.text.lexinput.raw_end`). Broken or
partial code is tokenized like any other: Pygments never rejects input, it marks what it cannot
lex as ``Error`` tokens, which are kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple, overload

from pygments.lexer import Lexer
from pygments.token import _TokenType

from crystal_lsp.text.fastlex import columns_for, get_tokens, keep_all
from crystal_lsp.text.fastlex.tables import save_tables
from crystal_lsp.text.lexers import canonical_name, resolve_lexer
from crystal_lsp.text.lexinput import lex_input


class Token(NamedTuple):
    """One token: its text, its offset in the source (code points) and its Pygments type."""

    text: str
    start: int
    type: _TokenType

    @property
    def end(self) -> int:
        """``start + len(text)``: one past the token's last code point in the source.

        Unless the token spans ``\\r\\n`` line ends: then the source's end is
        :func:`~crystal_lsp.text.lexinput.raw_end`.
        """
        return self.start + len(self.text)


class Tokens(Sequence[Token]):
    """The tokens of one source, stored column-wise for fast n-gram work.

    ``texts`` is what the metrics use; ``starts`` and ``types`` map results back to the source.
    """

    __slots__ = ("language", "starts", "texts", "types")

    def __init__(
        self,
        texts: list[str],
        starts: list[int],
        types: list[_TokenType],
        language: str,
    ) -> None:
        self.texts = texts
        self.starts = starts
        self.types = types
        self.language = language

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, index: int) -> Token: ...

    @overload
    def __getitem__(self, index: slice) -> Tokens: ...

    def __getitem__(self, index: int | slice) -> Token | Tokens:
        if isinstance(index, slice):
            return Tokens(self.texts[index], self.starts[index], self.types[index], self.language)
        return Token(self.texts[index], self.starts[index], self.types[index])

    def __iter__(self) -> Iterator[Token]:
        return map(Token, self.texts, self.starts, self.types)

    def __repr__(self) -> str:
        return f"Tokens({self.language}, {len(self)} tokens)"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Tokens):
            return (self.texts, self.starts, self.types) == (other.texts, other.starts, other.types)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def lex(source: str, lexer: Lexer, *, keep_comments: bool = False) -> Tokens:
    """Tokenize ``source`` with a given lexer (see :func:`tokenize`).

    The tokens are those of Pygments' ``lexer.get_tokens(source)`` (default options), produced
    by :mod:`crystal_lsp.text.fastlex` where it can; their starts index ``source``.
    """
    prepared = lex_input(source)
    text = prepared.text
    found = columns_for(lexer, text, keep_comments)
    if found is None:
        found = ([], [], [])
        keep_all(found, get_tokens(lexer, text), keep_comments)
    save_tables(type(lexer))
    texts, starts, types = found
    return Tokens(texts, prepared.raw_starts(starts), types, canonical_name(lexer))


def tokenize(
    source: str,
    language: str | None = None,
    filename: str | None = None,
    *,
    keep_comments: bool = False,
    guess: bool = True,
) -> Tokens:
    """Tokenize code with Pygments, dropping whitespace and (by default) comments.

    The lexer is chosen from ``language`` (a Pygments name or an editor language id), then the
    ``filename``, a shebang line, a guess from the content, and finally the ``generic`` lexer.
    Every token keeps its start offset into ``source``.

    >>> [t.text for t in tokenize("x = f(1)  # note", "python")]
    ['x', '=', 'f', '(', '1', ')']
    """
    return lex(
        source, resolve_lexer(language, filename, source, guess=guess), keep_comments=keep_comments
    )


def token_texts(tokens: Sequence[str] | Tokens) -> Sequence[str]:
    """The token strings of either a ``Tokens`` object or a plain sequence of strings."""
    if isinstance(tokens, Tokens):
        return tokens.texts
    return tokens
