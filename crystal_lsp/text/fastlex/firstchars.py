"""Which ASCII characters a regular expression can start a match with.

The executor dispatches on the character at the lexing position: only the rules whose pattern
can begin with that character are tried. The sets computed here are over-approximations read
from the parsed pattern (:mod:`re._parser`): whenever a construct is not understood exactly the
answer is "any character", which only costs speed, never a different token.
"""

from __future__ import annotations

import re
from typing import Any

try:  # Python 3.11+
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

ASCII = frozenset(range(128))
_C = sre_constants
_REPEATS = {_C.MAX_REPEAT, _C.MIN_REPEAT, getattr(_C, "POSSESSIVE_REPEAT", _C.MAX_REPEAT)}
_ZERO_WIDTH = {_C.AT, _C.ASSERT, _C.ASSERT_NOT}
_CATEGORIES = {
    _C.CATEGORY_DIGIT: re.compile(r"\d"),
    _C.CATEGORY_NOT_DIGIT: re.compile(r"\D"),
    _C.CATEGORY_SPACE: re.compile(r"\s"),
    _C.CATEGORY_NOT_SPACE: re.compile(r"\S"),
    _C.CATEGORY_WORD: re.compile(r"\w"),
    _C.CATEGORY_NOT_WORD: re.compile(r"\W"),
}
# the ASCII codes of each category, and each code with its other case (sets are tested per
# item, not per character: a lexer has a few hundred character sets to read in every process)
_CATEGORY_CODES = {
    category: frozenset(c for c in ASCII if test.match(chr(c)))
    for category, test in _CATEGORIES.items()
}
_CASES = [frozenset({c, ord(chr(c).lower()), ord(chr(c).upper())}) for c in range(128)]


def first_chars(pattern: re.Pattern[str]) -> frozenset[int]:
    """The ASCII code points a match of ``pattern`` can start with (all of them if it can be empty).

    Non-ASCII starts are not described: the executor tries every rule there.
    """
    if pattern.flags & re.LOCALE:
        return ASCII
    try:
        parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    except Exception:  # anything unexpected only means "no dispatch"
        return ASCII
    chars, nullable = _sequence(list(parsed), pattern.flags)
    return ASCII if nullable else frozenset(chars)


def _sequence(items: list[tuple[Any, Any]], flags: int) -> tuple[set[int], bool]:
    """First characters of a sequence of items and whether it can match the empty string."""
    out: set[int] = set()
    for op, arg in items:
        chars, nullable = _item(op, arg, flags)
        out |= chars
        if not nullable:
            return out, False
    return out, True


def _item(op: Any, arg: Any, flags: int) -> tuple[set[int], bool]:
    if op is _C.LITERAL:
        return _literal(arg, flags), False
    if op is _C.IN:
        return _charset(arg, flags), False
    if op is _C.BRANCH:
        out: set[int] = set()
        any_nullable = False
        for alternative in arg[1]:
            chars, nullable = _sequence(list(alternative), flags)
            out |= chars
            any_nullable = any_nullable or nullable
        return out, any_nullable
    if op is _C.SUBPATTERN:
        _group, add_flags, del_flags, sub = arg
        return _sequence(list(sub), (flags | add_flags) & ~del_flags)
    if op is getattr(_C, "ATOMIC_GROUP", None):
        return _sequence(list(arg), flags)
    if op in _REPEATS:
        low, _high, sub = arg
        chars, nullable = _sequence(list(sub), flags)
        return chars, nullable or low == 0
    if op in _ZERO_WIDTH:
        # an assertion consumes nothing: what follows it decides (an over-approximation)
        return set(), True
    return set(ASCII), False


def _literal(code: int, flags: int) -> set[int]:
    if not flags & re.IGNORECASE:
        return {code} if code < 128 else set()
    if code >= 128:
        # non-ASCII letters may fold to ASCII ones (KELVIN SIGN matches "k")
        return set(ASCII)
    char = chr(code)
    return {ord(c) for c in (char, char.lower(), char.upper()) if ord(c) < 128}


def _charset(items: list[tuple[Any, Any]], flags: int) -> set[int]:
    negate = any(op is _C.NEGATE for op, _ in items)
    if negate or (flags & re.IGNORECASE and _has_non_ascii(items)):
        return set(ASCII)
    matched: set[int] = set()  # the ASCII codes some item of the set matches
    for op, arg in items:
        if op is _C.LITERAL:
            matched.add(arg)
        elif op is _C.RANGE:
            matched.update(range(arg[0], min(arg[1], 127) + 1))
        elif op is _C.CATEGORY and arg in _CATEGORY_CODES:
            matched |= _CATEGORY_CODES[arg]
        else:
            return set(ASCII)
    matched &= ASCII
    if not flags & re.IGNORECASE:
        return matched
    # a code is in when it, or its other case, is matched
    return {code for code in ASCII if not matched.isdisjoint(_CASES[code])}


def _has_non_ascii(items: list[tuple[Any, Any]]) -> bool:
    for op, arg in items:
        if op is _C.LITERAL and arg >= 128:
            return True
        if op is _C.RANGE and arg[1] >= 128:
            return True
    return False
