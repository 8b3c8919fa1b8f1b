"""What the index knows about one file: its tokens, its snippets and their shingles.

An entry is computed once per file *content* (keyed by a digest of the bytes) and stored in two
parts: the light part (language, snippet metadata, shingles) that every scan needs for candidate
retrieval, and the heavy part (tokens with offsets and categories) needed only to score pairs
that are not cached yet. Both are plain JSON (see :mod:`crystal_lsp.clones.store`).

Files that should not take part are marked with a status instead of being dropped silently:
``minified`` (very long lines) or ``no-code``; binary, oversized and unreadable files never get
an entry (see :mod:`sources`). ``generated`` files (a generated-code marker in the first lines)
keep their snippets: they are compared with hand-written code (a function pasted into a
generated file is still a copy) but never with each other, which is where generated code repeats.
"""

from __future__ import annotations

import bisect
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from crystal_lsp.text.fingerprints import U64, ngram_hashes, text_sha, token_hashes
from crystal_lsp.text.lexers import canonical_name, resolve_lexer
from crystal_lsp.text.lexinput import unify_line_ends
from crystal_lsp.text.noise import Range, noise_ranges
from crystal_lsp.text.packing import array_b64, b64_array, pack_ints, unpack_ints
from crystal_lsp.text.snippets import CODE_KINDS, DATA, Snippet, extract, line_starts, token_lines
from crystal_lsp.text.tokens import lex
from crystal_lsp.text.views import STR, categories, file_view, normalized

OK, GENERATED, MINIFIED, NO_CODE = "ok", "generated", "minified", "no-code"
# A real marker: `@generated` or "do not edit" anywhere in the head, or a comment line that
# *starts* with a generation notice. Prose that merely mentions something generated ("keys
# generated from the results") is not a marker.
_GENERATED = re.compile(
    r"@generated\b|\bdo not edit\b|"
    r"^\W*(?:this (?:file|code|module|class) (?:is|was|has been) )?"
    r"(?:automatically |auto-?|machine[- ])generated\b|"
    r"^\W*(?:this (?:file|code|module|class) (?:is|was|has been) )?(?:code )?"
    r"generated (?:by|from|with|using)\b|"
    # a transpiler's header: "// Three.js Transpiler", "# transpiled from foo.glsl"
    r"^\W{1,4}(?:[\w.\-]+ ){0,3}transpil(?:er|ed)\b",
    re.IGNORECASE | re.MULTILINE,
)
_SUPPRESS = re.compile(r"crystal:\s*ignore(?!-file)")
_SUPPRESS_FILE = re.compile(r"crystal:\s*ignore-file")
MINIFIED_LINE = 1000


@dataclass
class SnippetMeta:
    """A snippet with what reporting and retrieval need (1-based lines and columns)."""

    start: int
    end: int
    kind: str
    name: str
    depth: int
    first_line: int
    first_col: int
    last_line: int
    last_col: int
    sha: str
    norm_sha: str
    suppressed: bool = False

    @property
    def tokens(self) -> int:
        """Token count."""
        return self.end - self.start

    @property
    def lines(self) -> int:
        """Line count."""
        return self.last_line - self.first_line + 1

    def to_json(self) -> list[Any]:
        """Compact JSON form."""
        return [
            self.start,
            self.end,
            self.kind,
            self.name,
            self.depth,
            self.first_line,
            self.first_col,
            self.last_line,
            self.last_col,
            self.sha,
            self.norm_sha,
            self.suppressed,
        ]

    @classmethod
    def from_json(cls, row: list[Any]) -> SnippetMeta:
        """Inverse of :meth:`to_json`."""
        return cls(*row)


U32 = npt.NDArray[np.uint32]
_EMPTY_U64: U64 = np.empty(0, dtype=np.uint64)
_EMPTY_U32: U32 = np.empty(0, dtype=np.uint32)


@dataclass
class Entry:
    """The index entry of one file content.

    ``h4`` holds the hash of every 4-gram of the file's normalized view, by position
    (:func:`crystal_lsp.text.fingerprints.positional_shingles`), and ``npos`` the raw token each
    normalized token starts at: the clone finder aligns files by them. A snippet's shingles are
    the distinct values of its slice of ``h4``. ``token_hashes`` (the hash of each normalized
    token) is what is stored: ``h4`` is computed from it, and the few distinct token hashes of a
    file and their small indices take a fraction of the bytes of ``h4``'s random 64-bit values.
    """

    language: str
    status: str
    token_count: int
    snippets: list[SnippetMeta]
    h4: U64 = field(default_factory=lambda: _EMPTY_U64, repr=False)
    npos: U32 = field(default_factory=lambda: _EMPTY_U32, repr=False)
    replaced: int = 0
    heavy: Heavy | None = field(default=None, repr=False)
    noise: list[Range] = field(default_factory=list, repr=False)
    """Token ranges that repeat by convention (:mod:`crystal_lsp.text.noise`)."""
    _shingles: list[U64] | None = field(default=None, repr=False, compare=False)
    token_hashes: U64 | None = field(default=None, repr=False, compare=False)

    def normalized_span(self, start: int, end: int) -> tuple[int, int]:
        """The normalized positions of raw tokens ``[start, end)``."""
        a = int(np.searchsorted(self.npos, start, side="left"))
        b = int(np.searchsorted(self.npos, end, side="left"))
        return a, b

    def snippet_shingles(self, meta: SnippetMeta) -> U64:
        """The sorted distinct shingles of one snippet (from ``h4``)."""
        a, b = self.normalized_span(meta.start, meta.end)
        if b - a < 4:
            return _EMPTY_U64
        out: U64 = np.unique(self.h4[a : b - 3])
        return out

    @property
    def shingles(self) -> list[U64]:
        """The shingles of every snippet, in snippet order (computed once)."""
        if self._shingles is None:
            self._shingles = [self.snippet_shingles(m) for m in self.snippets]
        return self._shingles

    def light_json(self) -> dict[str, Any]:
        """The part every scan loads (normalized tokens as indices into their distinct hashes)."""
        hashes = self.token_hashes
        if hashes is None:
            if len(self.npos):
                raise ValueError("an entry without its token hashes cannot be stored")
            hashes = _EMPTY_U64
        vocabulary, ids = np.unique(hashes, return_inverse=True)
        width = 2 if len(vocabulary) <= 1 << 16 else 4
        gaps = np.diff(self.npos.astype(np.int64), prepend=0)
        return {
            "language": self.language,
            "status": self.status,
            "tokens": self.token_count,
            "replaced": self.replaced,
            "snippets": [s.to_json() for s in self.snippets],
            "vocabulary": b64_array(vocabulary, "<u8"),
            "id_bytes": width,
            "ids": b64_array(ids, f"<u{width}"),
            "gaps": b64_array(gaps, "<u4"),
            "noise": [list(r) for r in self.noise],
        }

    @classmethod
    def from_light_json(cls, doc: dict[str, Any]) -> Entry:
        """Inverse of :meth:`light_json` (raises ``KeyError``/``ValueError`` when malformed)."""
        vocabulary = array_b64(doc["vocabulary"], "<u8").astype(np.uint64)
        width = doc["id_bytes"]
        if width not in (2, 4):
            raise ValueError(f"token ids of {width!r} bytes")
        ids = array_b64(doc["ids"], f"<u{width}")
        gaps = array_b64(doc["gaps"], "<u4")
        if len(ids) != len(gaps):
            raise ValueError("token ids do not match the normalized positions")
        if len(ids) and int(ids.max()) >= len(vocabulary):
            raise ValueError("token ids beyond the distinct token hashes")
        npos = np.cumsum(gaps, dtype=np.int64)
        if len(npos) and int(npos[-1]) >= int(doc["tokens"]):
            raise ValueError("normalized positions beyond the tokens")
        hashes: U64 = vocabulary[ids]
        return cls(
            doc["language"],
            doc["status"],
            int(doc["tokens"]),
            [SnippetMeta.from_json(r) for r in doc["snippets"]],
            ngram_hashes(hashes),
            npos.astype(np.uint32),
            int(doc.get("replaced", 0)),
            noise=[(int(a), int(b), str(k)) for a, b, k in doc["noise"]],
            token_hashes=hashes,
        )


@dataclass
class Heavy:
    """Tokens of a file: texts, categories, start offsets and 0-based lines."""

    texts: list[str]
    cats: str
    starts: list[int]
    lines: list[int]
    line_offsets: list[int] = field(default_factory=list)
    """The offset at which each line of the source begins."""

    def to_json(self) -> dict[str, Any]:
        """JSON form (offsets and lines as packed differences, :mod:`~crystal_lsp.text.packing`)."""
        return {
            "texts": self.texts,
            "cats": self.cats,
            "starts": pack_ints(self.starts),
            "lines": pack_ints(self.lines),
            "line_offsets": pack_ints(self.line_offsets),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Heavy:
        """Inverse of :meth:`to_json`."""
        heavy = cls(
            list(doc["texts"]),
            str(doc["cats"]),
            unpack_ints(doc["starts"]),
            unpack_ints(doc["lines"]),
            unpack_ints(doc["line_offsets"]),
        )
        if not (len(heavy.texts) == len(heavy.cats) == len(heavy.starts) == len(heavy.lines)):
            raise ValueError("token columns differ in length")
        return heavy

    def normalized(self, start: int, end: int) -> list[str]:
        """The normalized view of tokens ``[start, end)``."""
        return normalized(self.texts[start:end], self.cats[start:end])


def detect_status(source: str, line_offsets: Sequence[int] | None = None) -> str:
    """``generated``, ``minified`` or ``ok`` from the text alone.

    ``line_offsets`` (:func:`~crystal_lsp.text.snippets.line_starts` of ``source``, if known)
    spares splitting the text to find its longest line.
    """
    head = "\n".join(source.split("\n", 30)[:30])
    if _GENERATED.search(head):
        return GENERATED
    lines = source.count("\n") + 1
    if len(source) > 5000 and (
        len(source) / lines > 300 or _longest_line(source, line_offsets) > MINIFIED_LINE * 5
    ):
        return MINIFIED
    return OK


def _longest_line(source: str, line_offsets: Sequence[int] | None) -> int:
    if not line_offsets:
        return max(map(len, source.split("\n")))
    # a line ends one character (its newline) before the next one starts
    inner = max(map(operator.sub, line_offsets[1:], line_offsets), default=1) - 1
    return max(inner, len(source) - line_offsets[-1])


def build_entry(
    path: str,
    source: str,
    language: str | None,
    *,
    min_tokens: int,
    min_lines: int,
    replaced: int = 0,
) -> Entry:
    """Tokenize a file and extract its snippets, shingles and suppressions."""
    source = unify_line_ends(source)
    lang, heavy = lex_file(path, source, language)
    sizes = (min_tokens, min_lines)
    return assemble_entry(lang, source, heavy, sizes, replaced=replaced)


def lex_file(path: str, source: str, language: str | None) -> tuple[str, Heavy]:
    """A file's language (canonical name) and tokens, as the index lexes it."""
    source = unify_line_ends(source)
    lexer = resolve_lexer(language, path, source, guess=False)
    tokens = lex(source, lexer)
    cats = categories(tokens.texts, tokens.types)
    lines = token_lines(tokens.starts, source)
    return canonical_name(lexer), Heavy(
        tokens.texts, cats, tokens.starts, lines, line_starts(source)
    )


DigestLookup = Callable[[int, int], "tuple[str, str] | None"]
"""``(start, end) -> (sha, norm_sha)`` of a snippet whose digests are already known, or None."""


def assemble_entry(
    lang: str,
    source: str,
    heavy: Heavy,
    sizes: tuple[int, int],
    *,
    replaced: int = 0,
    known: DigestLookup | None = None,
) -> Entry:
    """The entry of a lexed file: snippets (``sizes``: min tokens and lines), digests, shingles.

    ``known`` supplies the digests of snippets that did not change (incremental re-lexing).
    """
    texts, cats = heavy.texts, heavy.cats
    starts_of_lines = heavy.line_offsets or line_starts(source)
    status = detect_status(source, starts_of_lines)
    if not texts:
        return Entry(lang, NO_CODE, 0, [], replaced=replaced, heavy=heavy)
    if status not in (OK, GENERATED):
        return Entry(lang, status, len(texts), [], replaced=replaced, heavy=heavy)
    source_lines = source.split("\n")
    suppress_file, suppressed_lines = _suppressions(source, source_lines)
    norm, npos = file_view(texts, cats)
    digest = _digests(texts, cats, norm, npos.tolist(), known)
    units = extract(
        texts,
        cats,
        heavy.lines,
        source,
        lang,
        min_tokens=sizes[0],
        min_lines=sizes[1],
        line_offsets=starts_of_lines,
    )
    metas = [
        snippet_meta(
            snippet,
            heavy,
            starts_of_lines,
            suppressed_lines,
            suppress_file,
            *digest(snippet.start, snippet.end),
        )
        for snippet in units
        if snippet.kind in CODE_KINDS or snippet.kind == DATA
    ]
    hashes = token_hashes(norm)
    noise = noise_ranges(texts, cats, heavy.lines, LineIndents(source_lines), lang)
    return Entry(
        lang,
        status,
        len(texts),
        metas,
        ngram_hashes(hashes),
        npos,
        replaced,
        heavy,
        noise,
        token_hashes=hashes,
    )


def _suppressions(source: str, source_lines: list[str]) -> tuple[bool, set[int]]:
    """Whether the file opts out (``crystal: ignore-file`` in its first lines), and which lines do."""
    if "crystal" not in source:  # both markers spell it
        return False, set()
    suppress_file = any(_SUPPRESS_FILE.search(line) for line in source_lines[:10])
    return suppress_file, {i for i, line in enumerate(source_lines) if _SUPPRESS.search(line)}


def _digests(
    texts: list[str], cats: str, norm: list[str], npos: list[int], known: DigestLookup | None
) -> Callable[[int, int], tuple[str, str]]:
    """``(start, end) -> (sha, norm_sha)`` of tokens ``[start, end)``, from the file's views.

    ``known`` answers first (the digests of unchanged snippets, when re-lexing incrementally).
    A window's normalized view is the file's, sliced at the window's raw tokens, except that a
    window starting inside a run of string tokens starts with its own ``STR``.
    """

    def digest(start: int, end: int) -> tuple[str, str]:
        found = known(start, end) if known is not None else None
        if found is not None:
            return found
        view = norm[bisect.bisect_left(npos, start) : bisect.bisect_left(npos, end)]
        if start and cats[start] == "S" and cats[start - 1] == "S":
            view.insert(0, STR)
        return text_sha(texts[start:end]), text_sha(view)

    return digest


class LineIndents(Sequence[int]):
    """The indentation (leading spaces and tabs, in characters) of each line, measured on use."""

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines

    def __len__(self) -> int:
        return len(self._lines)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        line = self._lines[index]
        return len(line) - len(line.lstrip(" \t"))


def snippet_meta(
    snippet: Snippet,
    heavy: Heavy,
    starts_of_lines: list[int],
    suppressed_lines: set[int],
    suppress_file: bool,
    sha: str,
    norm_sha: str,
) -> SnippetMeta:
    """The stored description of one snippet: its line/column range, digests and suppression.

    ``sha`` and ``norm_sha`` are the digests of its raw and normalized token texts.
    """
    first, first_col, last_text_line, last_col = span_position(
        snippet.start, snippet.end, heavy, starts_of_lines
    )
    first -= 1
    suppressed = suppress_file or bool(suppressed_lines & {first, first - 1})
    return SnippetMeta(
        snippet.start,
        snippet.end,
        snippet.kind,
        snippet.name,
        snippet.depth,
        first + 1,
        first_col,
        last_text_line,
        last_col,
        sha,
        norm_sha,
        suppressed,
    )


def span_position(
    start: int,
    end: int,
    heavy: Heavy,
    starts_of_lines: list[int] | None = None,
) -> tuple[int, int, int, int]:
    """1-based ``(first line, first column, last line, last column)`` of tokens ``[start, end)``.

    The last column is inclusive; a multi-line last token (a docstring) ends on the line where
    its text ends, after the text's last line (its ``\\r\\n`` line ends are ``\\n`` in the text).
    """
    texts, starts, lines = heavy.texts, heavy.starts, heavy.lines
    offsets = starts_of_lines if starts_of_lines is not None else heavy.line_offsets
    first = lines[start]
    text = texts[end - 1]
    breaks = text.count("\n")
    last = lines[end - 1] + breaks
    first_col = starts[start] - offsets[first] + 1
    if last >= len(offsets):  # the text's last line end is the one Pygments appends
        last = len(offsets) - 1
        last_col = starts[end - 1] + len(text.rstrip("\n")) - offsets[last]
    elif breaks:
        last_col = len(text) - text.rfind("\n") - 1
    else:
        last_col = starts[end - 1] + len(text) - offsets[last]
    return first + 1, first_col, last + 1, max(1, last_col)
