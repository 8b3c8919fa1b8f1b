"""Type stub of the optional native core (``crystal_lsp/_native.c``)."""

from collections.abc import Iterable, Sequence
from types import NotImplementedType
from typing import Any, final

@final
class Vocabulary:
    """Token interning table (str -> id) shared by the profiles that are compared."""

    def __init__(self) -> None: ...
    def __len__(self) -> int: ...

@final
class IgnoreSet:
    """n-grams to leave out of profiles, encoded for one vocabulary."""

    def __len__(self) -> int: ...

@final
class ProfileCore:
    """n-gram counts of one token sequence per order, as sorted arrays."""

    @property
    def length(self) -> int: ...
    @property
    def max_n(self) -> int: ...
    @property
    def totals(self) -> tuple[int, ...]: ...
    @property
    def vocabulary(self) -> Vocabulary: ...
    @property
    def nbytes(self) -> int: ...
    def clip(self, ref: ProfileCore, /) -> list[int] | NotImplementedType: ...
    def count(self, gram: tuple[Any, ...], /) -> int | NotImplementedType: ...
    def counts(self, n: int, /) -> dict[tuple[Any, ...], int]: ...
    def export(
        self,
    ) -> tuple[tuple[set[tuple[Any, ...]], ...], tuple[dict[tuple[Any, ...], int], ...]]: ...
    def sizes(self) -> tuple[int, ...]: ...

@final
class NgramCounter:
    """Counts of every 1..max_n-gram of many documents (for building S)."""

    def __init__(self, max_n: int) -> None: ...
    def __len__(self) -> int: ...
    @property
    def documents(self) -> int: ...
    @property
    def tokens(self) -> int: ...
    @property
    def max_n(self) -> int: ...
    def add(self, tokens: Sequence[Any], /) -> bool: ...
    def largest(self, m: int, /) -> list[int]: ...
    def items(self, min_count: int = 0, /) -> dict[tuple[Any, ...], int]: ...

def build(
    vocab: Vocabulary, tokens: Sequence[Any], max_n: int, ignore: IgnoreSet | None, /
) -> ProfileCore | NotImplementedType: ...
def merge_max(profiles: Sequence[ProfileCore], /) -> ProfileCore | NotImplementedType: ...
def bleu_tail(
    numerators: Sequence[Any],
    denominators: Sequence[Any],
    hyp_len: int,
    ref_len: int,
    tail: tuple[Any, ...],
    /,
) -> float | NotImplementedType: ...
def encode_ignore(vocab: Vocabulary, grams: Iterable[Any], /) -> IgnoreSet | NotImplementedType: ...

@final
class ProfileCache:
    """Profiles keyed by token ids (least recently used evicted first)."""

    max_tokens: int
    def __init__(self, vocabulary: Vocabulary, max_tokens: int) -> None: ...
    def __len__(self) -> int: ...
    @property
    def tokens(self) -> int: ...
    @property
    def vocabulary(self) -> Vocabulary: ...
    def get(
        self, tokens: Sequence[Any], max_n: int, ignore: IgnoreSet | None, /
    ) -> ProfileCore | NotImplementedType: ...
    def corpus_counts(
        self,
        list_of_references: Sequence[Sequence[Any]],
        hypotheses: Sequence[Any],
        max_n: int,
        ignore: IgnoreSet | None,
        tail: tuple[Any, ...] | None = None,
        /,
    ) -> float | tuple[list[int], list[int], int, int] | NotImplementedType: ...
    def clear(self) -> None: ...

def lex_columns(
    tables: Any, lexer: Any, text: str, keep_comments: bool, helpers: tuple[Any, ...], /
) -> tuple[list[str], list[int], list[Any]]:
    """The fastlex executor's columns loop (``crystal_lsp.text.fastlex.columns``)."""

def lex_tokens(
    tables: Any, lexer: Any, text: str, stack: Sequence[str], helpers: tuple[Any, ...], /
) -> tuple[list[str], list[int], list[Any]]:
    """Every token of the fastlex executor's run loop, as columns."""

def chain_pairs(
    i0: Any,
    j0: Any,
    length: Any,
    worth: Any,
    starts: Any,
    ends: Any,
    min_worth: int,
    gap: int,
    lookback: int,
    seed: int,
    /,
) -> tuple[bytes, bytes]:
    """The clone finder's chaining of seed runs (``crystal_lsp.clones.align.chains``)."""
