"""Pygments' ``bygroups`` and ``using`` callbacks, run on the executor.

``bygroups`` takes each group's token from the combined match (the rule's group ``j`` is group
``base + j`` there), so the rule is not matched a second time; ``using`` lexes the matched text
with the executor too when it can run the target lexer. Both do what Pygments' closures of the
same name do (``pygments/lexer.py``), in the same order; any other callback is Pygments' own,
called with the rule's own match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pygments.lexer import _PseudoMatch
from pygments.token import _TokenType

TokenTuple = tuple[int, _TokenType, str]
Groups = Callable[[Any, Any, int], Iterator[TokenTuple]]
"""A translated ``bygroups``: ``(lexer, match, base)`` -> tokens."""
Runner = Callable[..., Iterator[TokenTuple]]


def _closure(action: Any, name: str) -> dict[str, Any] | None:
    """The closure variables of one of Pygments' ``name`` callbacks, or None."""
    code = getattr(action, "__code__", None)
    if (
        code is None
        or getattr(action, "__module__", None) != "pygments.lexer"
        or getattr(action, "__qualname__", None) != f"{name}.<locals>.callback"
    ):
        return None
    return {
        var: cell.cell_contents for var, cell in zip(code.co_freevars, action.__closure__ or ())
    }


def translate_groups(
    action: Any, groups_in_pattern: int, runner_for: Callable[[Any], Runner]
) -> Groups | None:
    """A ``bygroups`` callback taking its groups from a combined match, or None.

    None too when it names more groups than the pattern has: Pygments raises there, and in a
    combined match the next alternative's groups would answer instead.
    """
    found = _closure(action, "bygroups")
    if found is None or set(found) != {"args"} or len(found["args"]) > groups_in_pattern:
        return None
    args = tuple(
        a if a is None or type(a) is _TokenType else translate_nested(a, runner_for)
        for a in found["args"]
    )
    if all(a is None or type(a) is _TokenType for a in args):
        return TypeGroups(args)

    def groups(lexer: Any, match: Any, base: int) -> Iterator[TokenTuple]:
        for i, action in enumerate(args, base + 1):
            if action is None:
                continue
            data = match.group(i)
            if type(action) is _TokenType:
                if data:
                    yield match.start(i), action, data
            elif data is not None:
                for item in action(lexer, _PseudoMatch(match.start(i), data), None):
                    if item:
                        yield item

    return groups


class TypeGroups:
    """A translated ``bygroups`` whose arguments are all token types or None.

    The native loop reads :attr:`types` and takes the groups itself; calling it yields what the
    general translation would.
    """

    __slots__ = ("types",)

    def __init__(self, types: tuple[_TokenType | None, ...]) -> None:
        self.types = types

    def __call__(self, lexer: Any, match: Any, base: int) -> Iterator[TokenTuple]:
        """The tokens of the groups after ``base`` in ``match`` (``lexer`` is not needed)."""
        for i, action in enumerate(self.types, base + 1):
            if action is not None:
                data = match.group(i)
                if data:
                    yield match.start(i), action, data


def translate_nested(action: Any, runner_for: Callable[[Any], Runner]) -> Any:
    """``action`` itself, or a ``using`` callback that lexes with the executor."""
    found = _closure(action, "using")
    if found is None or not set(found) <= {"_other", "gt_kwargs", "kwargs"}:
        return action
    other = found.get("_other")
    kwargs: dict[str, Any] = found["kwargs"]
    gt_kwargs: dict[str, Any] = found["gt_kwargs"]

    def using(lexer: Any, match: Any, ctx: Any = None) -> Iterator[TokenTuple]:
        if other is None:
            lx = lexer.__class__(**{**lexer.options, **kwargs}) if kwargs else lexer
        else:
            lx = other(**{**lexer.options, **kwargs})
        s = match.start()
        for i, t, v in runner_for(lx)(lx, match.group(), **gt_kwargs):
            yield i + s, t, v
        if ctx:
            ctx.pos = match.end()

    return using
