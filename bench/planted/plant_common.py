"""What planting a copy needs in any language: the plan of one copy, fresh names, edits by column."""

from __future__ import annotations

import builtins
import keyword
import random
from dataclasses import dataclass, field

import java_methods as jm

MIN_LINES, MAX_LINES = 8, 60


# Vocabulary for fresh names: real words, not the old name with a suffix.
_NOUNS = """item entry record node value buffer chunk token payload target source result
total offset limit width label handle stream count index key text data path name mode flag
state queue table block field part piece element member unit slot cursor anchor marker bucket
batch span window frame layer packet message header prefix suffix pattern match hint spec
option setting config context scope owner parent child peer client worker task event signal
sample metric score weight ratio factor delta step phase stage level depth size length
capacity amount accum tally origin dest sink reader writer holder carrier bundle group cluster
series sequence column row cell grid tree branch leaf root edge link route channel port
address host domain realm region zone sector area section chapter page line word letter
symbol glyph char code digit number figure measure quota budget cost price rate speed
""".split()


_QUALIFIERS = """new old raw tmp next prev first last base main extra local inner outer cur
final partial full pending active spare alt saved cached parsed initial working staged
""".split()


_PY_AVOID = set(keyword.kwlist) | set(dir(builtins)) | {"self", "cls", "match", "case", "_"}


def _fresh_names(
    rng: random.Random, olds: list[str], taken: set[str], camel: bool
) -> dict[str, str]:
    """A new, unused, plausible name for each old name (deterministic given rng)."""
    out: dict[str, str] = {}
    used = set(taken) | set(olds)
    for old in olds:
        for _attempt in range(1000):
            noun = rng.choice(_NOUNS)
            if rng.random() < 0.5:
                name = noun
            else:
                q = rng.choice(_QUALIFIERS)
                name = q + noun.capitalize() if camel else f"{q}_{noun}"
            if old[:1].isupper():
                name = name[0].upper() + name[1:]
            if old.startswith("_") and not name.startswith("_"):
                name = "_" + name
            if name not in used and name not in _PY_AVOID and name not in jm.KEYWORDS:
                break
        else:  # pragma: no cover - the vocabulary is large
            raise RuntimeError("out of fresh names")
        used.add(name)
        out[old] = name
    return out


def _rng_for(seed: int, *parts: object) -> random.Random:
    return random.Random(f"{seed}:" + ":".join(str(p) for p in parts))


@dataclass
class Plan:
    """One function to copy: where it is and the text of each type's copy."""

    path: str  # relative path of the original
    start: int  # 1-based inclusive line range of the original
    end: int
    name: str
    is_method: bool
    indent: str
    texts: dict[str, str] = field(default_factory=dict)  # type -> planted text
    renames: dict[str, str] = field(default_factory=dict)
    inserted: str = ""
    inserted_line: int = 0  # line within the copy (1-based) of the inserted statement
    deleted: str = ""
    deleted_line: int = 0  # line within the original (1-based, of the function text)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _apply_edits(lines: list[str], edits: list[tuple[int, int, int, str]]) -> list[str]:
    """Replace (line index, col start, col end) spans, in character columns."""
    out = list(lines)
    for li, c0, c1, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        s = out[li]
        out[li] = s[:c0] + new + s[c1:]
    return out


def _t3_lines(
    lines: list[str],
    delete: tuple[int, int],
    insert_before: int,
    insert_text: str,
) -> tuple[list[str], int]:
    """Delete lines [d0, d1] and insert one line before line index insert_before.

    Returns the new lines and the 0-based index of the inserted line.
    """
    d0, d1 = delete
    out = list(lines)
    ins = insert_before
    if ins > d1:
        out.insert(ins, insert_text)
        del out[d0 : d1 + 1]
        ins -= d1 - d0 + 1
    else:
        del out[d0 : d1 + 1]
        out.insert(ins, insert_text)
    return out, ins
