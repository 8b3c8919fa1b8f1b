"""Compiling a ``RegexLexer``'s processed states into per-character dispatch tables.

Pygments tries a state's rules one after the other and takes the first that matches at the
position. Python's ``re`` does the same with an alternation ``(A)|(B)|...``: it tries the
alternatives in order and commits to the first that matches, with the match that alternative
would give alone (nothing follows the alternation). ``lastindex`` names the outer group of the
alternative that matched, so the rule is known. A *bucket* holds, for one state and one next
ASCII character, only the rules whose pattern can start with that character, as *segments*:
runs of combinable rules joined into one alternation, and every other rule (backreferences,
named groups, verbose flags, odd matchers) tried alone with Pygments' own compiled pattern.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pygments.token import _TokenType

from crystal_lsp.text.fastlex.actions import translate_groups, translate_nested
from crystal_lsp.text.fastlex.firstchars import ASCII, first_chars

NON_ASCII = 128
"""Bucket index for a non-ASCII next character or the end of the text: every rule."""

_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")
_GROUP_REFS = re.compile(r"\\[1-9]|\(\?P=|\(\?\(")
_LETTERS = {"a": re.A, "i": re.I, "L": re.L, "m": re.M, "s": re.S, "u": re.U, "x": re.X}

Match = Callable[[str, int], "re.Match[str] | None"]
Compile = Callable[[str, int], "re.Pattern[str]"]
Step = tuple[int, Any, Any, Match, Any, int]
"""What the loop needs of a rule: kind, the executor's action, state transition, the rule's own
matcher, Pygments' action and the kind of transition (:data:`POPS`, :data:`PUSHES`, ...)."""
STAY, POPS, PUSHES, OTHER = 0, 1, 2, 3
"""Transitions: none; pop ``-n`` states (an int); push plain state names (a tuple); anything
else (``#push``, ``#pop`` inside a tuple), applied by :func:`~crystal_lsp.text.fastlex.run.enter`.
"""
TOKEN, CALLBACK, NOTHING, GROUPS, USING = 1, 2, 3, 4, 5
"""Kinds of action: a token type; a callback called with the rule's own match; none; a
``bygroups`` taking its groups from the combined match; a ``using`` of the matched text."""


@dataclass(frozen=True)
class Rule:
    """One processed Pygments rule: its own matcher, action and state transition."""

    match: Match
    action: Any
    new_state: Any
    kind: int
    run_action: Any
    """The action the executor runs (see :data:`GROUPS`, :data:`USING`)."""
    source: str | None
    """The rule's pattern as an alternative of a combined expression, or None (tried alone)."""
    starts: frozenset[int]
    groups: int

    @functools.cached_property
    def step(self) -> Step:
        """The rule as the loop uses it."""
        return (self.kind, self.run_action, self.new_state, self.match, self.action, _trans(self))


def _trans(rule: Rule) -> int:
    new_state = rule.new_state
    if new_state is None:
        return STAY
    if type(new_state) is int and new_state < 0:
        return POPS
    if type(new_state) is tuple and not any(s in ("#pop", "#push") for s in new_state):
        return PUSHES
    return OTHER


Segment = tuple[Match, "dict[int, Step] | None", "Step | None"]
"""A matcher and either the step of each outer group (combined) or the one step (alone)."""


@dataclass
class StateTable:
    """The rules of one state and its buckets, built on first use.

    A bucket's rules are tried one by one (each alone, in order) for its first
    :data:`COMPILE_AFTER` uses, and joined into alternations after that: compiling one costs
    about 2 ms, more than a rare bucket ever saves, in every worker process.
    """

    rules: list[Rule]
    flags: int
    compile: Compile = re.compile
    """How alternations are compiled (the lexer's stored tables, :mod:`.tables`)."""
    stored: Callable[[str, int], bool] = lambda source, flags: False
    """Whether an alternation is stored: then it is used from the first use of its bucket."""
    buckets: list[tuple[Segment, ...] | None] = field(default_factory=lambda: [None] * 129)
    _subsets: list[tuple[int, ...] | None] = field(default_factory=lambda: [None] * 129)
    _by_subset: dict[tuple[int, ...], tuple[Segment, ...]] = field(default_factory=dict)
    _uses: dict[tuple[int, ...], int] = field(default_factory=dict)

    def bucket(self, code: int) -> tuple[Segment, ...]:
        """The segments to try when the next character has code ``code`` (``NON_ASCII``: all)."""
        found = self.buckets[code]
        if found is not None:
            return found
        subset = self._subsets[code]
        if subset is None:
            subset = self._subsets[code] = tuple(
                i for i, rule in enumerate(self.rules) if code == NON_ASCII or code in rule.starts
            )
        found = self._by_subset.get(subset)
        if found is None:
            uses = self._uses[subset] = self._uses.get(subset, 0) + 1
            runs = [(run, _source(run)) for run in _runs([self.rules[i] for i in subset])]
            joined = [source for run, source in runs if len(run) > 1]
            if uses <= COMPILE_AFTER and not (
                joined and all(self.stored(source, self.flags) for source in joined)
            ):
                return tuple((self.rules[i].match, None, self.rules[i].step) for i in subset)
            found = self._by_subset[subset] = tuple(
                _segment(run, source, self.flags, self.compile) for run, source in runs
            )
        self.buckets[code] = found
        return found


COMPILE_AFTER = 24


def compile_rule(
    rexmatch: Any,
    action: Any,
    new_state: Any,
    base_flags: int,
    runner_for: Any,
    tables: Any = None,
) -> Rule:
    """A :class:`Rule` for one entry of ``lexer._tokens[state]``.

    ``runner_for`` gives the executor's runner of a lexer, for ``using`` callbacks; ``tables``
    the lexer's stored expressions (:class:`~crystal_lsp.text.fastlex.tables.Tables`), if any.
    """
    pattern = getattr(rexmatch, "__self__", None)
    if not isinstance(pattern, re.Pattern) or not isinstance(pattern.pattern, str):
        kind, run_action = _kind(action, 0, runner_for)
        if kind == GROUPS:
            kind, run_action = CALLBACK, action
        return Rule(rexmatch, action, new_state, kind, run_action, None, ASCII, 0)
    kind, run_action = _kind(action, pattern.groups, runner_for)
    if tables is None:
        source, starts = _alternative(pattern, base_flags, re.compile), first_chars(pattern)
    else:
        source = _alternative(pattern, base_flags, tables.compile)
        starts = tables.first_chars(pattern)
    return Rule(rexmatch, action, new_state, kind, run_action, source, starts, pattern.groups)


def _kind(action: Any, groups: int, runner_for: Any) -> tuple[int, Any]:
    if type(action) is _TokenType:
        return TOKEN, action
    if action is None:
        return NOTHING, None
    translated = translate_groups(action, groups, runner_for)
    if translated is not None:
        return GROUPS, translated
    nested = translate_nested(action, runner_for)
    return (CALLBACK, action) if nested is action else (USING, nested)


def _alternative(pattern: re.Pattern[str], base_flags: int, compile: Compile) -> str | None:
    """``pattern`` as text that means the same inside an expression compiled with ``base_flags``.

    Global inline flags such as a leading ``(?i)`` become a scoped group ``(?i:...)``.
    """
    source = pattern.pattern
    if pattern.groupindex or _GROUP_REFS.search(source) or pattern.flags & re.X:
        return None
    letters = ""
    while (m := _GLOBAL_FLAGS.match(source)) is not None:
        letters += m.group(1)
        source = source[m.end() :]
    if _GLOBAL_FLAGS.search(source):
        return None  # a global flag further in (Python 3.10 allows it) would govern every rule
    if letters:
        if any(c in "aLux" for c in letters):
            return None
        source = f"(?{letters}:{source})"
    try:
        alone = compile(source, base_flags)
    except re.error:
        return None
    if alone.flags | _flags_of(letters) != pattern.flags or alone.groups != pattern.groups:
        return None
    return source


def _flags_of(letters: str) -> int:
    out = 0
    for c in letters:
        out |= _LETTERS[c]
    return out


def _runs(rules: list[Rule]) -> list[list[Rule]]:
    """A bucket's segments: runs of rules joined into one alternation, and every other rule."""
    out: list[list[Rule]] = []
    run: list[Rule] = []
    for rule in rules:
        if rule.source is None:
            if run:
                out.append(run)
                run = []
            out.append([rule])
        else:
            run.append(rule)
    if run:
        out.append(run)
    return out


def _source(run: list[Rule]) -> str:
    return "|".join(f"({rule.source})" for rule in run)


def _segment(run: list[Rule], source: str, flags: int, compile: Compile) -> Segment:
    if len(run) == 1:
        return (run[0].match, None, run[0].step)
    table: dict[int, Step] = {}
    group = 1
    for rule in run:
        table[group] = rule.step
        group += rule.groups + 1
    return (compile(source, flags).match, table, None)
