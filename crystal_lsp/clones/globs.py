"""Gitignore-style globs (``include``, ``exclude``) compiled once, matched in bounded time.

Patterns are translated by pathspec (gitignore semantics: anchoring, ``**``, negation,
directory patterns). Its translation of ``*`` is ``[^/]*``, and a path segment with several of
them (``a*a*a*…b``) makes Python's backtracking ``re`` take exponential time on a long name. So
each segment ``P0*P1*…*Pk`` is rewritten the way CPython's ``fnmatch`` does it:
``P0(?>[^/]*?P1)…[^/]*Pk``. The middle pieces have a fixed length, so taking the leftmost
place of each is never wrong, and the atomic group stops the search from trying any other:
a segment is matched in linear time. ``**`` spans several segments and is limited to
:data:`MAX_DOUBLE_STARS` per pattern. Malformed patterns are errors naming the setting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pathspec
from pathspec import RegexPattern

from crystal_lsp.errors import CrystalError

MAX_DOUBLE_STARS = 3
STAR = "[^/]*"
# what pathspec emits around segments; a segment ends at any of them
_BOUNDARIES = ("(?:.+/)?", "(?:/.+)?", "(?:/|$)", "/?$", "^", "$", "/", ".")
ONE = "[^/]"
_TOKEN = re.compile(r"\\.|\[\^?\]?(?:\\.|[^\]])*\]|[^\\\[]", re.DOTALL)


def compile_globs(
    patterns: Iterable[str], setting: str, *, skip_invalid: bool = False
) -> pathspec.PathSpec | None:  # type: ignore[type-arg]
    """The patterns as one matcher (``None`` for no patterns); errors name ``setting``.

    ``skip_invalid`` drops malformed patterns instead, as git does with a ``.gitignore``.
    """
    compiled = []
    for pattern in patterns:
        try:
            spec = pathspec.PathSpec.from_lines("gitignore", [pattern])
        except (ValueError, re.error) as exc:
            if skip_invalid:
                continue
            why = re.sub(r" at position \d+$", "", str(exc))
            raise CrystalError(f"{setting}: invalid pattern {pattern!r} ({why})") from None
        for part in spec.patterns:
            if part.include is None or part.regex is None:
                continue
            if part.regex.pattern.count("(?:/.+)?") + part.regex.pattern.count("(?:.+/)?") > (
                MAX_DOUBLE_STARS + 1
            ):
                raise CrystalError(
                    f"{setting}: pattern {pattern!r} has more than {MAX_DOUBLE_STARS} '**'"
                )
            compiled.append(RegexPattern(re.compile(bounded(part.regex.pattern)), part.include))
    return pathspec.PathSpec(compiled) if compiled else None


def bounded(regex: str) -> str:
    """Pathspec's regex with every many-star segment rewritten to match in linear time."""
    tokens = _tokens(regex)
    out: list[str] = []
    segment: list[str] = []
    for token in tokens:
        if token in _BOUNDARIES:
            out.append(_segment(segment))
            out.append(token)
            segment = []
        else:
            segment.append(token)
    out.append(_segment(segment))
    return "".join(out)


def _tokens(regex: str) -> list[str]:
    tokens: list[str] = []
    i = 0
    while i < len(regex):
        if regex.startswith("[^/]+", i):  # one character, then any number
            tokens += [ONE, STAR]
            i += 5
            continue
        for fixed in (*_BOUNDARIES[:5], STAR, ONE):
            if regex.startswith(fixed, i):
                tokens.append(fixed)
                i += len(fixed)
                break
        else:
            match = _TOKEN.match(regex, i)
            if match is None:  # a lone "\" or "[" at the end: keep it, re reports it
                tokens.append(regex[i:])
                break
            tokens.append(match.group())
            i = match.end()
    return tokens


def _segment(tokens: list[str]) -> str:
    """``P0*P1*…*Pk`` with the middle pieces atomic; segments with one star stay as they are."""
    pieces: list[list[str]] = [[]]
    for token in tokens:
        if token == STAR:
            if pieces[-1] or len(pieces) == 1:
                pieces.append([])
            continue  # consecutive stars are one
        pieces[-1].append(token)
    if len(pieces) <= 2:
        return STAR.join("".join(p) for p in pieces)
    head, *middle, tail = ("".join(p) for p in pieces)
    return head + "".join(f"(?>[^/]*?{m})" for m in middle) + STAR + tail
