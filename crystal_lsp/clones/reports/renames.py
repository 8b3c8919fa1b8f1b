"""The renaming between two copies, and a copy shown with its original's names.

A renamed copy differs from its original on nearly every line, so a plain line diff of the two
hides what really changed. :func:`renaming` reads the names a copy gave to its original's names:
the tokens of lines of the same shape are paired (:func:`crystal_lsp.clones.similarity.aligned_tokens`:
names as ``ID``, literals as ``LIT``), and of the plain names (category ``N``: not builtins, not
members after a ``.``, whose change is a change of what the code calls) each original name is
paired with the copy's name it meets most often, one to one, when that is most of its uses.
:func:`mapped_back` rewrites the copy with those names turned back into the original's, so a diff
of the original and the mapped copy shows only what differs beyond the renaming.

A pair is left out when the original's name is also a name of the copy that would stay as it is:
mapping would make two different names of the copy read alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from crystal_lsp.clones.similarity import Code, aligned_tokens

NAME = "N"


@dataclass(frozen=True)
class Tokens:
    """The tokens of a text: their texts, categories, start offsets and 0-based lines."""

    texts: Sequence[str]
    cats: str
    starts: Sequence[int]
    lines: Sequence[int]


def renaming(original: Tokens, copy: Tokens) -> list[tuple[str, str]]:
    """``(original's name, copy's name)`` of each name the copy renamed, in the original's order.

    See the module docstring; identical names are not listed.
    """
    a = Code(original.texts, original.cats, original.lines)
    b = Code(copy.texts, copy.cats, copy.lines)
    pairs: Counter[tuple[str, str]] = Counter()
    for i, j in aligned_tokens(a, b):
        if a.cats[i] == NAME and b.cats[j] == NAME:
            pairs[(a.texts[i], b.texts[j])] += 1
    uses: Counter[str] = Counter()
    for (x, _), count in pairs.items():
        uses[x] += count
    forward: dict[str, str] = {}
    taken: set[str] = set()
    for (x, y), count in pairs.most_common():
        if x not in forward and y not in taken and 2 * count > uses[x]:
            forward[x] = y
            taken.add(y)
    renamed = {x: y for x, y in forward.items() if x != y}
    kept = {t for t, c in zip(copy.texts, copy.cats) if c == NAME}
    while True:
        targets = set(renamed.values())
        clash = [x for x in renamed if x in kept and x not in targets]
        if not clash:
            break
        for x in clash:
            del renamed[x]
    order = {name: k for k, name in reversed(list(enumerate(original.texts)))}
    return sorted(renamed.items(), key=lambda pair: order[pair[0]])


def mapped_back(text: str, copy: Tokens, pairs: Sequence[tuple[str, str]]) -> str:
    """``text`` (whose tokens are ``copy``) with each renamed name turned back into the original's.

    ``pairs``: :func:`renaming` of the original and this copy.
    """
    back = {y: x for x, y in pairs}
    out: list[str] = []
    at = 0
    for token, cat, start in zip(copy.texts, copy.cats, copy.starts):
        name = back.get(token) if cat == NAME else None
        if name is None or text[start : start + len(token)] != token:
            continue
        out += [text[at:start], name]
        at = start + len(token)
    out.append(text[at:])
    return "".join(out)
