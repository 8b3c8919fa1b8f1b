"""Class-labeled code datasets: JSONL lines ``{"id", "class", "lang", "code"[, "split"]}``.

Files may be gzip-compressed (``.gz``); they are read through the guarded reader, one bounded
line at a time. Items without a ``split`` are assigned one by a seeded,
per-class stratified 30 % train / 70 % test split (the shared datasets' convention).
"""

from __future__ import annotations

import os
import random
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from crystal_lsp.errors import CrystalError
from crystal_lsp.text.datafiles import MAX_DATA_BYTES, loads
from crystal_lsp.text.sources import SkippedFile, read_lines

TRAIN_FRACTION = 0.3


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


def load_items(path: str | os.PathLike[str], seed: int = 20220) -> list[Item]:
    """All items of a dataset, with a split assigned where the file has none.

    Ids must be unique (pairs and scores are reported by id): the first repeated one is an error.
    """
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
    if all(item.split in ("train", "test") for item in items):
        return items
    return assign_splits(items, seed)


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
