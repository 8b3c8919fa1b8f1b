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

The lexer runs on the text Pygments lexes (:mod:`crystal_lsp.text.lexinput`: line ends made
``\\n``, one final line end); offsets, checkpoints and the changed region are in that text, and
token starts are mapped to the source once per update.

Exactness rests on the lexer being a plain :class:`pygments.lexer.RegexLexer` (its state is the
stack of state names, which is recorded) whose rules look back at most ``SYNC_MARGIN`` characters
and whose matches ending above the restart point do not look ahead past the following lines.
Lexers that override ``get_tokens_unprocessed`` (C, C++, PHP, Ruby, Lua, ...) are re-lexed in
full; everything after the lexing is still incremental. This module has no LSP dependency.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from crystal_lsp.text.entries import OK, Entry, Heavy, assemble_entry
from crystal_lsp.text.lexers import canonical_name, resolve_lexer
from crystal_lsp.text.lexinput import lex_input, unify_line_ends
from crystal_lsp.text.relex import (
    ROOT,
    Checkpoints,
    Sync,
    after_blank_line,
    common_prefix,
    common_suffix,
    first_error_before,
    full_scan,
    scan,
    supports_incremental,
    token_lines,
)
from crystal_lsp.text.snippets import line_starts
from crystal_lsp.text.tokens import lex
from crystal_lsp.text.views import categories

__all__ = ["IncrementalEntry", "Splice", "full_scan", "supports_incremental"]

RESTART_LINES = 2
"""How many whole lines above an edit the lexer restarts (matches seldom look further ahead)."""
SYNC_MARGIN = 16
"""How far past an edit a checkpoint must be to re-synchronise (covers look-behind rules)."""
LOOKBACK = 2
"""How many tokens back a token's category looks (:func:`crystal_lsp.text.views.categories`: a name
after ``.``, or after ``-`` ``>`` split in two tokens, is a member name)."""


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
        "lexed_starts",
        "lexer",
        "min_lines",
        "min_tokens",
        "path",
        "prepared",
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
        self.source = source = unify_line_ends(source)
        self.prepared = lex_input(source)
        self.lexer = resolve_lexer(language, path, source, guess=False)
        if supports_incremental(self.lexer):
            scanned = full_scan(self.lexer, self.prepared.text)
            self.texts, self.lexed_starts, self.types, self.checkpoints = scanned
            self.starts = self.prepared.raw_starts(self.lexed_starts)
        else:
            self._lex_whole()
        self.relexed = len(source)
        """How many characters the last build or update lexed (for tests and benchmarks)."""
        cats = categories(self.texts, self.types)
        starts_of_lines = line_starts(source)
        lines = token_lines(self.starts, starts_of_lines)
        self.entry = self._assemble(cats, lines, None, None)

    def _lex_whole(self) -> None:
        """Tokens of the whole source (lexers that cannot restart mid-text)."""
        tokens = lex(self.source, self.lexer)
        self.texts, self.starts, self.types = tokens.texts, tokens.starts, tokens.types
        self.lexed_starts = self.starts  # not used: such lexers are never restarted
        self.checkpoints = Checkpoints([0], [ROOT], [0])

    # ------------------------------------------------------------------ updates
    def update(self, source: str) -> IncrementalEntry:
        """The entry of ``source``, a new version of this document."""
        source = unify_line_ends(source)
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
        new.prepared = lex_input(source)
        starts_of_lines = line_starts(source)
        if supports_incremental(lexer):
            splice = new._relex_from(self)
            new.starts = new.prepared.raw_starts(new.lexed_starts)
            if new.prepared.same_prefix and self.prepared.same_prefix:
                # tokens after the splice moved by whole lines: shift their lines (the lexed
                # text before a token is the source before it)
                old_lines = self.entry.heavy.lines if self.entry.heavy is not None else []
                line_delta = new.prepared.text.count("\n") - self.prepared.text.count("\n")
                lines = (
                    old_lines[: splice.head]
                    + token_lines(new.starts[splice.head : splice.tail], starts_of_lines)
                    + [line + line_delta for line in old_lines[splice.tail - splice.shift :]]
                )
            else:
                lines = token_lines(new.starts, starts_of_lines)
        else:
            new._lex_whole()
            new.relexed = len(source)
            head = min(
                common_prefix(self.texts, new.texts),
                common_prefix(self.types, new.types),
            )
            limit = min(len(self.texts), len(new.texts)) - head
            same = min(
                common_suffix(self.texts, new.texts, limit),
                common_suffix(self.types, new.types, limit),
            )
            splice = Splice(head, len(new.texts) - same, len(new.texts) - len(self.texts))
            lines = token_lines(new.starts, starts_of_lines)
        cats = new._spliced_categories(self, splice)
        new.entry = new._assemble(cats, lines, self, splice)
        return new

    def _relex_from(self, old: IncrementalEntry) -> Splice:
        """Re-lex the changed region of the lexed text against ``old``'s; returns the splice."""
        a, b = old.prepared.text, self.prepared.text
        prefix = common_prefix(a, b)
        suffix = common_suffix(a, b, min(len(a), len(b)) - prefix)
        delta = len(b) - len(a)
        cps = old.checkpoints
        c = _restart_checkpoint(old, prefix)
        restart, stack, kept = cps.offsets[c], cps.stacks[c], cps.kept[c]
        sync = Sync(cps, delta, len(b) - suffix + SYNC_MARGIN)
        run = scan(self.lexer, b, restart, stack, kept, sync)
        synced = run.synced_at
        self.relexed = (cps.offsets[synced] + delta if synced is not None else len(b)) - restart
        head = kept
        old_tail = len(old.texts) if synced is None else cps.kept[synced]
        tail = head + len(run.texts)
        tail_cps = Checkpoints([], [], [])
        if synced is not None:
            tail_cps = Checkpoints(
                [o + delta for o in cps.offsets[synced:]],
                cps.stacks[synced:],
                [k - old_tail + tail for k in cps.kept[synced:]],
            )
        self.texts = old.texts[:head] + run.texts + old.texts[old_tail:]
        self.types = old.types[:head] + run.types + old.types[old_tail:]
        self.lexed_starts = (
            old.lexed_starts[:head] + run.starts + [s + delta for s in old.lexed_starts[old_tail:]]
        )
        self.checkpoints = Checkpoints(
            cps.offsets[: c + 1] + run.checkpoints.offsets + tail_cps.offsets,
            cps.stacks[: c + 1] + run.checkpoints.stacks + tail_cps.stacks,
            cps.kept[: c + 1] + run.checkpoints.kept + tail_cps.kept,
        )
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
        old: IncrementalEntry | None,
        splice: Splice | None,
    ) -> Entry:
        """The entry of the current tokens, as :func:`crystal_lsp.text.entries.build_entry` builds it."""
        heavy = Heavy(self.texts, cats, self.starts, lines, line_starts(self.source))
        return assemble_entry(
            canonical_name(self.lexer),
            self.source,
            heavy,
            (self.min_tokens, self.min_lines),
            known=_reusable(old, splice, cats),
        )


def _restart_checkpoint(old: IncrementalEntry, prefix: int) -> int:
    """The old checkpoint to re-lex from, for an edit starting at offset ``prefix``."""
    a, cps = old.prepared.text, old.checkpoints
    # restart RESTART_LINES whole lines above the line of the edit
    target = a.rfind("\n", 0, prefix) + 1
    for _ in range(RESTART_LINES):
        if target == 0:
            break
        target = a.rfind("\n", 0, target - 1) + 1
    target = min(target, first_error_before(old.types, old.lexed_starts, prefix))
    c = bisect.bisect_right(cps.offsets, target) - 1
    # Only from the root state (other states, open strings and comments, may have been entered
    # by a rule whose match attempt looked arbitrarily far ahead), and not right after blank
    # lines (a rule starting with ``^\s*``, such as a docstring's, spans them).
    while c > 0 and (cps.stacks[c] != ROOT or after_blank_line(a, cps.offsets[c])):
        c -= 1
    return c


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
