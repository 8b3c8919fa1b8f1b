"""Incremental re-tokenization: an edited buffer's index entry without re-lexing all of it.

Pygments lexes about 0.4 MB/s, so re-lexing a 3,000-line file on every keystroke costs a few
hundred milliseconds. :class:`IncrementalEntry` keeps, next to a document's tokens, a
*checkpoint* at every line start the lexer reached at a match boundary: the offset, the lexer's
state stack there, and how many tokens came before it. After an edit it

1. finds the changed region (common prefix and suffix of the old and new text),
2. restarts the lexer from the last checkpoint at least ``RESTART_LINES`` lines above the edit,
   with the state stack recorded there,
3. stops as soon as it reaches, past the edit, a checkpoint whose offset and state stack match a
   checkpoint of the old text shifted by the edit's length delta (from there on the lexer would
   do exactly what it did before, on the same text), and reuses the old tokens after it, shifted.

The token categories, token lines, snippets, shingles and suppressions are then rebuilt from
the spliced stream; snippets whose tokens lie wholly outside the re-lexed region keep their
digests and shingles. The result is the :class:`~crystal_lsp.text.entries.Entry` that
:func:`~crystal_lsp.text.entries.build_entry` gives for the new text, field for field (a property test
checks this on random edits).

Exactness rests on the lexer being a plain :class:`pygments.lexer.RegexLexer` (its state is the
stack of state names, which is recorded) whose rules look back at most ``SYNC_MARGIN`` characters
and whose matches ending above the restart point do not look ahead past the following lines.
Lexers that override ``get_tokens_unprocessed`` (C, C++, PHP, Ruby, Lua, ...) are re-lexed in
full; everything after the lexing is still incremental. This module has no LSP dependency.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from pygments.lexer import Lexer, RegexLexer
from pygments.token import Comment, Error, _TokenType

from crystal_lsp.text.entries import (
    _SUPPRESS,
    _SUPPRESS_FILE,
    NO_CODE,
    OK,
    Entry,
    Heavy,
    SnippetMeta,
    detect_status,
    snippet_meta,
)
from crystal_lsp.text.fingerprints import positional_shingles, text_sha
from crystal_lsp.text.lexers import canonical_name, resolve_lexer
from crystal_lsp.text.snippets import CODE_KINDS, DATA, extract, line_starts
from crystal_lsp.text.tokens import lex
from crystal_lsp.text.views import categories, normalized

RESTART_LINES = 2
"""How many whole lines above an edit the lexer restarts (matches seldom look further ahead)."""
SYNC_MARGIN = 16
"""How far past an edit a checkpoint must be to re-synchronise (covers look-behind rules)."""
LOOKBACK = 2
"""How many tokens back a token's category looks (:func:`crystal_lsp.text.views.categories`: a name
after ``.``, or after ``-`` ``>`` split in two tokens, is a member name)."""

Stack = tuple[str, ...]
ROOT: Stack = ("root",)


def supports_incremental(lexer: Lexer) -> bool:
    """Whether ``lexer`` can be restarted mid-text (a plain ``RegexLexer``)."""
    method = getattr(type(lexer), "get_tokens_unprocessed", None)
    return isinstance(lexer, RegexLexer) and method is RegexLexer.get_tokens_unprocessed


@dataclass
class Checkpoints:
    """Line starts the lexer reached at a match boundary (first arrival at each offset)."""

    offsets: list[int]
    stacks: list[Stack]
    kept: list[int]
    """Tokens kept (not whitespace or comments) before each checkpoint."""


@dataclass
class _Scan:
    texts: list[str]
    starts: list[int]
    types: list[_TokenType]
    checkpoints: Checkpoints
    synced_at: int | None
    """Index of the old checkpoint the stream re-synchronised with (None: lexed to the end)."""


def _scan(
    lexer: Lexer,
    text: str,
    pos: int,
    stack: Stack,
    kept_before: int,
    *,
    old: Checkpoints | None = None,
    delta: int = 0,
    sync_from: int = 0,
) -> _Scan:
    """Lex ``text`` from ``pos`` in state ``stack``, recording checkpoints.

    This is :meth:`pygments.lexer.RegexLexer.get_tokens_unprocessed` (Pygments 2.17-2.21), with
    the filtering of :func:`crystal_lsp.text.tokens.lex` and the checkpoints added. With ``old``, it
    stops at the first checkpoint at or after ``sync_from`` that equals an old checkpoint shifted
    by ``delta``.
    """
    tokendefs = lexer._tokens
    statestack = list(stack)
    statetokens = tokendefs[statestack[-1]]
    texts: list[str] = []
    starts: list[int] = []
    types: list[_TokenType] = []
    cps = Checkpoints([], [], [])
    last_cp = pos
    end = len(text)
    synced_at: int | None = None
    old_offsets = old.offsets if old is not None else []

    def keep(start: int, ttype: _TokenType, value: str) -> None:
        if value and not value.isspace() and ttype not in Comment:
            texts.append(value)
            starts.append(start)
            types.append(ttype)

    while True:
        for rexmatch, action, new_state in statetokens:
            m = rexmatch(text, pos)
            if m:
                if action is not None:
                    if type(action) is _TokenType:
                        keep(pos, action, m.group())
                    else:
                        for start, ttype, value in action(lexer, m):
                            keep(start, ttype, value)
                pos = m.end()
                if new_state is not None:
                    if isinstance(new_state, tuple):
                        for state in new_state:
                            if state == "#pop":
                                if len(statestack) > 1:
                                    statestack.pop()
                            elif state == "#push":
                                statestack.append(statestack[-1])
                            else:
                                statestack.append(state)
                    elif isinstance(new_state, int):
                        if abs(new_state) >= len(statestack):
                            del statestack[1:]
                        else:
                            del statestack[new_state:]
                    elif new_state == "#push":
                        statestack.append(statestack[-1])
                    else:  # pragma: no cover - Pygments validates state definitions
                        raise ValueError(f"wrong state def: {new_state!r}")
                    statetokens = tokendefs[statestack[-1]]
                break
        else:
            if pos >= end:
                break
            if text[pos] == "\n":
                statestack = ["root"]
                statetokens = tokendefs["root"]
            else:
                keep(pos, Error, text[pos])
            pos += 1
        if pos > last_cp and text[pos - 1] == "\n":
            last_cp = pos
            state = tuple(statestack)
            if old is not None and pos >= sync_from:
                i = bisect.bisect_left(old_offsets, pos - delta)
                if (
                    i < len(old_offsets)
                    and old_offsets[i] == pos - delta
                    and old.stacks[i] == state
                ):
                    synced_at = i
                    break
            cps.offsets.append(pos)
            cps.stacks.append(state)
            cps.kept.append(kept_before + len(texts))
    return _Scan(texts, starts, types, cps, synced_at)


def full_scan(
    lexer: Lexer, text: str
) -> tuple[list[str], list[int], list[_TokenType], Checkpoints]:
    """Tokens (as :func:`crystal_lsp.text.tokens.lex` keeps them) and checkpoints of a whole text."""
    scan = _scan(lexer, text, 0, ROOT, 0)
    cps = Checkpoints([0, *scan.checkpoints.offsets], [ROOT, *scan.checkpoints.stacks], [0])
    cps.kept.extend(scan.checkpoints.kept)
    return scan.texts, scan.starts, scan.types, cps


def _after_blank_line(text: str, offset: int) -> bool:
    """Whether the line ending just before ``offset`` holds only white space."""
    start = text.rfind("\n", 0, max(0, offset - 1)) + 1
    return text[start:offset].isspace()


def _common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """Length of the common prefix of two strings or lists (binary search on slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: Sequence[object], b: Sequence[object], limit: int) -> int:
    """Length of the common suffix of two strings or lists, at most ``limit``."""
    lo, hi = 0, min(len(a), len(b), limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True)
class Splice:
    """How a new token stream relates to the old one.

    New tokens ``[0, head)`` equal old tokens ``[0, head)``; new tokens ``[tail, n)`` equal old
    tokens ``[tail - shift, n_old)`` (texts and types; starts moved by the text delta).
    """

    head: int
    tail: int
    shift: int


class IncrementalEntry:
    """A document's index entry that follows its edits (see the module docstring).

    Instances are immutable: :meth:`update` returns a new one and leaves this one usable.
    """

    __slots__ = (
        "checkpoints",
        "entry",
        "language",
        "lexer",
        "min_lines",
        "min_tokens",
        "path",
        "relexed",
        "source",
        "starts",
        "texts",
        "types",
    )

    def __init__(
        self,
        path: str,
        source: str,
        language: str | None,
        *,
        min_tokens: int,
        min_lines: int,
    ) -> None:
        self.path = path
        self.language = language
        self.min_tokens = min_tokens
        self.min_lines = min_lines
        self.source = source
        self.lexer = resolve_lexer(language, path, source, guess=False)
        if supports_incremental(self.lexer):
            self.texts, self.starts, self.types, self.checkpoints = full_scan(self.lexer, source)
        else:
            tokens = lex(source, self.lexer)
            self.texts, self.starts, self.types = tokens.texts, tokens.starts, tokens.types
            self.checkpoints = Checkpoints([0], [ROOT], [0])
        self.relexed = len(source)
        """How many characters the last build or update lexed (for tests and benchmarks)."""
        cats = categories(self.texts, self.types)
        starts_of_lines = line_starts(source)
        lines = _token_lines(self.starts, starts_of_lines)
        self.entry = self._assemble(cats, lines, starts_of_lines, None, None)

    # ------------------------------------------------------------------ updates
    def update(self, source: str) -> IncrementalEntry:
        """The entry of ``source``, a new version of this document."""
        if source == self.source:
            return self
        lexer = resolve_lexer(self.language, self.path, source, guess=False)
        if canonical_name(lexer) != canonical_name(self.lexer):
            return IncrementalEntry(
                self.path,
                source,
                self.language,
                min_tokens=self.min_tokens,
                min_lines=self.min_lines,
            )
        new = object.__new__(IncrementalEntry)
        new.path, new.language, new.lexer = self.path, self.language, lexer
        new.min_tokens, new.min_lines, new.source = self.min_tokens, self.min_lines, source
        starts_of_lines = line_starts(source)
        if supports_incremental(lexer):
            splice = new._relex_from(self)
            # tokens after the splice moved by whole lines: shift their lines
            old_lines = self.entry.heavy.lines if self.entry.heavy is not None else []
            line_delta = source.count("\n") - self.source.count("\n")
            lines = (
                old_lines[: splice.head]
                + _token_lines(new.starts[splice.head : splice.tail], starts_of_lines)
                + [line + line_delta for line in old_lines[splice.tail - splice.shift :]]
            )
        else:
            tokens = lex(source, lexer)
            new.texts, new.starts, new.types = tokens.texts, tokens.starts, tokens.types
            new.checkpoints = Checkpoints([0], [ROOT], [0])
            new.relexed = len(source)
            head = min(
                _common_prefix(self.texts, new.texts),
                _common_prefix(self.types, new.types),
            )
            limit = min(len(self.texts), len(new.texts)) - head
            same = min(
                _common_suffix(self.texts, new.texts, limit),
                _common_suffix(self.types, new.types, limit),
            )
            splice = Splice(head, len(new.texts) - same, len(new.texts) - len(self.texts))
            lines = _token_lines(new.starts, starts_of_lines)
        cats = new._spliced_categories(self, splice)
        new.entry = new._assemble(cats, lines, starts_of_lines, self, splice)
        return new

    def _relex_from(self, old: IncrementalEntry) -> Splice:
        """Re-lex the changed region of ``self.source`` against ``old``; returns the splice."""
        a, b = old.source, self.source
        prefix = _common_prefix(a, b)
        suffix = _common_suffix(a, b, min(len(a), len(b)) - prefix)
        new_end = len(b) - suffix
        delta = len(b) - len(a)
        # restart RESTART_LINES whole lines above the line of the edit
        target = a.rfind("\n", 0, prefix) + 1
        for _ in range(RESTART_LINES):
            if target == 0:
                break
            target = a.rfind("\n", 0, target - 1) + 1
        # A rule that failed at an Error token may have scanned to the end of the text looking
        # for a terminator (an unclosed quote): restart above the first one before the edit.
        before = bisect.bisect_left(old.starts, prefix)
        try:
            first_error = old.types.index(Error, 0, before)
        except ValueError:
            pass
        else:
            target = min(target, old.starts[first_error])
        cps = old.checkpoints
        c = bisect.bisect_right(cps.offsets, target) - 1
        # Only from the root state (other states, open strings and comments, may have been entered
        # by a rule whose match attempt looked arbitrarily far ahead), and not right after blank
        # lines (a rule starting with ``^\s*``, such as a docstring's, spans them).
        while c > 0 and (cps.stacks[c] != ROOT or _after_blank_line(a, cps.offsets[c])):
            c -= 1
        restart, stack, kept = cps.offsets[c], cps.stacks[c], cps.kept[c]
        scan = _scan(
            self.lexer,
            b,
            restart,
            stack,
            kept,
            old=cps,
            delta=delta,
            sync_from=new_end + SYNC_MARGIN,
        )
        self.relexed = (
            cps.offsets[scan.synced_at] + delta if scan.synced_at is not None else len(b)
        ) - restart
        head = kept
        if scan.synced_at is None:
            old_tail = len(old.texts)
            tail_offsets: list[int] = []
            tail_stacks: list[Stack] = []
            tail_kept: list[int] = []
        else:
            old_tail = cps.kept[scan.synced_at]
            tail_offsets = [o + delta for o in cps.offsets[scan.synced_at :]]
            tail_stacks = cps.stacks[scan.synced_at :]
            new_tail = head + len(scan.texts)
            tail_kept = [k - old_tail + new_tail for k in cps.kept[scan.synced_at :]]
        self.texts = old.texts[:head] + scan.texts + old.texts[old_tail:]
        self.types = old.types[:head] + scan.types + old.types[old_tail:]
        self.starts = old.starts[:head] + scan.starts + [s + delta for s in old.starts[old_tail:]]
        self.checkpoints = Checkpoints(
            cps.offsets[: c + 1] + scan.checkpoints.offsets + tail_offsets,
            cps.stacks[: c + 1] + scan.checkpoints.stacks + tail_stacks,
            cps.kept[: c + 1] + scan.checkpoints.kept + tail_kept,
        )
        tail = head + len(scan.texts)
        return Splice(head, tail, tail - old_tail)

    def _spliced_categories(self, old: IncrementalEntry, splice: Splice) -> str:
        """Token categories, recomputed only around the splice (a category looks back)."""
        old_cats = old.entry.heavy.cats if old.entry.heavy is not None else ""
        if len(old_cats) != len(old.texts):
            return categories(self.texts, self.types)
        lo = max(0, splice.head - LOOKBACK)
        hi = min(len(self.texts), splice.tail + LOOKBACK)
        window = categories(self.texts[lo:hi], self.types[lo:hi])
        return old_cats[: splice.head] + window[splice.head - lo :] + old_cats[hi - splice.shift :]

    # ------------------------------------------------------------------ the entry
    def _assemble(
        self,
        cats: str,
        lines: list[int],
        starts_of_lines: list[int],
        old: IncrementalEntry | None,
        splice: Splice | None,
    ) -> Entry:
        """The entry of the current tokens, as :func:`crystal_lsp.text.entries.build_entry` builds it."""
        source = self.source
        lang = canonical_name(self.lexer)
        heavy = Heavy(self.texts, cats, self.starts, lines)
        status = detect_status(source)
        if not self.texts:
            return Entry(lang, NO_CODE, 0, [], heavy=heavy)
        if status != OK:
            return Entry(lang, status, len(self.texts), [], heavy=heavy)
        source_lines = source.split("\n")
        suppress_file = any(_SUPPRESS_FILE.search(line) for line in source_lines[:10])
        suppressed_lines = {i for i, line in enumerate(source_lines) if _SUPPRESS.search(line)}
        reusable = _reusable(old, splice, cats)
        metas: list[SnippetMeta] = []
        for snippet in extract(
            self.texts,
            cats,
            lines,
            source,
            lang,
            min_tokens=self.min_tokens,
            min_lines=self.min_lines,
        ):
            if snippet.kind not in CODE_KINDS and snippet.kind != DATA:
                continue
            known = reusable(snippet.start, snippet.end)
            if known is None:
                window = self.texts[snippet.start : snippet.end]
                norm = normalized(window, cats[snippet.start : snippet.end])
                known = (text_sha(window), text_sha(norm))
            metas.append(
                snippet_meta(
                    snippet,
                    self.texts,
                    self.starts,
                    starts_of_lines,
                    suppressed_lines,
                    suppress_file,
                    known[0],
                    known[1],
                )
            )
        h4, npos = positional_shingles(self.texts, cats)
        return Entry(lang, OK, len(self.texts), metas, h4, npos, 0, heavy)


_Known = tuple[str, str]


def _reusable(old: IncrementalEntry | None, splice: Splice | None, cats: str) -> _ReuseLookup:
    """A lookup of the digests of snippets whose tokens did not change."""
    if old is None or splice is None or old.entry.status != OK:
        return _ReuseLookup({}, 0, 0, 0)
    by_bounds: dict[tuple[int, int], _Known] = {
        (m.start, m.end): (m.sha, m.norm_sha) for m in old.entry.snippets
    }
    old_cats = old.entry.heavy.cats if old.entry.heavy is not None else ""
    tail = splice.tail
    # the first tokens after the splice may have changed category (they look back)
    for t in range(splice.tail, min(splice.tail + LOOKBACK, len(cats))):
        if t - splice.shift >= len(old_cats) or cats[t] != old_cats[t - splice.shift]:
            tail = t + 1
    return _ReuseLookup(by_bounds, splice.head, tail, splice.shift)


@dataclass
class _ReuseLookup:
    by_bounds: dict[tuple[int, int], _Known]
    head: int
    tail: int
    shift: int

    def __call__(self, start: int, end: int) -> _Known | None:
        if end <= self.head:
            return self.by_bounds.get((start, end))
        if start >= self.tail:
            return self.by_bounds.get((start - self.shift, end - self.shift))
        return None


def _token_lines(starts: Sequence[int], starts_of_lines: Sequence[int]) -> list[int]:
    """The 0-based line of every token (as :func:`crystal_lsp.text.snippets.token_lines`).

    ``starts`` must be sorted; the first one may be anywhere in the text.
    """
    out: list[int] = []
    if not starts:
        return out
    append = out.append
    n = len(starts_of_lines)
    line = bisect.bisect_right(starts_of_lines, starts[0]) - 1
    for start in starts:
        # lines only move forward: step, and bisect when the jump is long
        if line + 1 < n and starts_of_lines[line + 1] <= start:
            if line + 8 < n and starts_of_lines[line + 8] <= start:
                line = bisect.bisect_right(starts_of_lines, start, line) - 1
            else:
                while line + 1 < n and starts_of_lines[line + 1] <= start:
                    line += 1
        append(line)
    return out
