"""Class-labeled code datasets: JSONL lines ``{"id", "class", "lang", "code"[, "split"]}``.

Files may be gzip-compressed (``.gz``); they are read through the guarded reader, one bounded
line at a time. Splits: either every item has a ``split`` of ``train`` or ``test``, or none has
one, and then a seeded (``SPLIT_SEED``), per-class stratified 30 % train / 70 % test split is
assigned (the shared datasets' convention) -- which callers announce (:func:`load_dataset` says
so). Anything between (some items without a split, or other split names such as ``dev``) is an
error naming what was found, never silently re-split.
"""

from __future__ import annotations

import os
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from crystal_lsp.errors import CrystalError
from crystal_lsp.text.datafiles import MAX_DATA_BYTES, loads
from crystal_lsp.text.sources import SkippedFile, read_lines

TRAIN_FRACTION = 0.3
SPLIT_SEED = 20220
SPLITS = ("train", "test")


@dataclass(frozen=True)
class Item:
    """One labeled program."""

    id: str
    cls: str
    lang: str
    code: str
    split: str = ""


def text_lines(path: str) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line of a dataset file, gunzipped when it is gzip.

    Read through the guarded reader (regular files only, each line bounded), with one-line errors.
    """
    try:
        for number, line in read_lines(path, MAX_DATA_BYTES):
            yield number, line.decode("utf-8")
    except SkippedFile as exc:
        raise CrystalError(f"{path}: cannot read dataset ({exc.reason})") from None
    except UnicodeDecodeError as exc:
        raise CrystalError(f"{path}: unreadable dataset ({exc})") from None


def iter_items(path: str | os.PathLike[str]) -> Iterator[Item]:
    """Stream the items of a JSONL dataset, with one-line errors naming the bad line."""
    name = os.fspath(path)
    for lineno, line in text_lines(name):
        if not line.strip():
            continue
        try:
            row = loads(line)
            yield Item(
                str(row["id"]),
                str(row["class"]),
                str(row.get("lang", "")),
                str(row["code"]),
                str(row.get("split", "")),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise CrystalError(
                f"{name}:{lineno}: not a dataset line with id, class and code ({exc})"
            ) from None


def load_items(path: str | os.PathLike[str], seed: int = SPLIT_SEED) -> list[Item]:
    """All items of a dataset, with a split assigned where the file has none (module docstring).

    Ids must be unique (pairs and scores are reported by id): the first repeated one is an error.
    """
    return load_dataset(path, seed)[0]


def load_dataset(path: str | os.PathLike[str], seed: int = SPLIT_SEED) -> tuple[list[Item], bool]:
    """``(items, assigned)``: :func:`load_items`, and whether the splits were assigned here."""
    items = list(iter_items(path))
    if not items:
        raise CrystalError(f"{os.fspath(path)}: the dataset is empty")
    repeated = first_duplicate([it.id for it in items])
    if repeated is not None:
        ident, first, again = repeated
        raise CrystalError(
            f"{os.fspath(path)}: duplicate id {ident!r} (items {first + 1} and {again + 1}); "
            "ids must be unique"
        )
    found = Counter(item.split for item in items)
    if not found.keys() - set(SPLITS):
        return items, False
    if set(found) == {""}:
        return assign_splits(items, seed), True
    named = ", ".join(f"{name or '(none)'} {n:,}" for name, n in sorted(found.items()))
    raise CrystalError(
        f"{os.fspath(path)}: splits must be train or test on every item, or absent from all "
        f"(then a seeded 30 % train split is assigned); found: {named}"
    )


def split_counts(items: Iterable[Item]) -> str:
    """``train 500, test 1,165``: the items of each split, for messages."""
    found = Counter(item.split or "(none)" for item in items)
    return ", ".join(f"{name} {n:,}" for name, n in sorted(found.items()))


def first_duplicate(ids: Iterable[str]) -> tuple[str, int, int] | None:
    """The first id that repeats an earlier one: ``(id, its first position, this one)``."""
    seen: dict[str, int] = {}
    for position, ident in enumerate(ids):
        first = seen.setdefault(ident, position)
        if first != position:
            return ident, first, position
    return None


def assign_splits(items: list[Item], seed: int) -> list[Item]:
    """Stratified per class: about 30 % of each class's items become ``train``."""
    rng = random.Random(seed)
    by_class: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        by_class[item.cls].append(index)
    train: set[int] = set()
    for cls in sorted(by_class):
        members = by_class[cls]
        rng.shuffle(members)
        train.update(members[: round(len(members) * TRAIN_FRACTION)])
    return [
        Item(it.id, it.cls, it.lang, it.code, "train" if i in train else "test")
        for i, it in enumerate(items)
    ]
