"""Pair-labeled code datasets: programs plus pairs labeled clone (1) or not (0), with splits.

Two layouts, each a folder:

* ``code.jsonl`` lines ``{"id", "lang", "code"}`` and ``pairs.jsonl`` lines
  ``{"a", "b", "label", "split"}`` (GPTCloneBench and similar sets converted to it);
* CodeXGLUE's BigCloneBench: ``data.jsonl`` lines ``{"func", "idx"}`` and ``train.txt``,
  ``valid.txt``, ``test.txt`` lines ``idx1 idx2 label`` (Java).

Files may be gzip-compressed (``name.gz``). Pairs naming an unknown program are counted and left
out, never silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.datasets import text_lines
from crystal_lsp.text.datafiles import loads

SPLIT_FILES = {"train": "train.txt", "valid": "valid.txt", "test": "test.txt"}


@dataclass(frozen=True)
class LabeledPair:
    """Two programs (indices into the dataset's programs), their label and split."""

    a: int
    b: int
    label: int
    split: str


@dataclass
class PairDataset:
    """Programs and labeled pairs of a pair-labeled set."""

    layout: str
    ids: list[str]
    codes: list[str]
    langs: list[str]
    pairs: list[LabeledPair]
    left_out: dict[str, int] = field(default_factory=dict)

    def split(self, name: str) -> list[LabeledPair]:
        """The pairs of one split."""
        return [p for p in self.pairs if p.split == name]

    def programs(self, split: str | None = None) -> list[int]:
        """All programs in file order, or those of one split's pairs ordered by id.

        By id is the order in which the reference evaluation counts a split's programs.
        """
        if split is None:
            return list(range(len(self.ids)))
        return sorted({i for p in self.split(split) for i in (p.a, p.b)}, key=self.ids.__getitem__)


def layout_of(path: str) -> str | None:
    """``pairs`` or ``codexglue`` for a pair-labeled folder, None for anything else."""
    if not os.path.isdir(path):
        return None
    names = set(os.listdir(path))
    if {"code.jsonl", "code.jsonl.gz"} & names and {"pairs.jsonl", "pairs.jsonl.gz"} & names:
        return "pairs"
    if {"data.jsonl", "data.jsonl.gz"} & names and any(
        f in names or f + ".gz" in names for f in SPLIT_FILES.values()
    ):
        return "codexglue"
    return None


def _file(root: str, name: str) -> str | None:
    for candidate in (name, name + ".gz"):
        if os.path.exists(os.path.join(root, candidate)):
            return os.path.join(root, candidate)
    return None


def _json_lines(path: str) -> Iterator[tuple[int, dict[str, object]]]:
    for lineno, line in text_lines(path):
        if line.strip():
            try:
                row = loads(line)
            except ValueError as exc:
                raise CrystalError(f"{path}:{lineno}: not JSON ({exc})") from None
            if not isinstance(row, dict):
                raise CrystalError(f"{path}:{lineno}: not a JSON object")
            yield lineno, row


def load_pair_dataset(path: str) -> PairDataset:
    """The programs and pairs of a pair-labeled folder (module docstring)."""
    layout = layout_of(path)
    if layout == "pairs":
        return _pairs_layout(path)
    if layout == "codexglue":
        return _codexglue(path)
    raise CrystalError(
        f"{path}: not a pair-labeled dataset folder (code.jsonl + pairs.jsonl, or CodeXGLUE "
        "data.jsonl + train.txt/valid.txt/test.txt)"
    )


def _add_pair(
    out: PairDataset, where: dict[str, int], a: str, b: str, label: int, split: str
) -> None:
    if a not in where or b not in where:
        out.left_out["unknown program"] = out.left_out.get("unknown program", 0) + 1
    elif label not in (0, 1):
        out.left_out["label not 0 or 1"] = out.left_out.get("label not 0 or 1", 0) + 1
    else:
        out.pairs.append(LabeledPair(where[a], where[b], label, split))


def _unique(path: str, lineno: int, ident: str, lines: dict[str, int]) -> None:
    """Refuse an id given before (pairs name programs by id): the first repeat is the error."""
    first = lines.setdefault(ident, lineno)
    if first != lineno:
        raise CrystalError(f"{path}:{lineno}: duplicate id {ident!r} (first on line {first})")


def _pairs_layout(root: str) -> PairDataset:
    out = PairDataset("pairs", [], [], [], [])
    code = _file(root, "code.jsonl")
    assert code is not None
    lines: dict[str, int] = {}
    for lineno, row in _json_lines(code):
        if "id" not in row or not isinstance(row.get("code"), str):
            raise CrystalError(f"{code}:{lineno}: needs an id and a string code")
        _unique(code, lineno, str(row["id"]), lines)
        out.ids.append(str(row["id"]))
        out.codes.append(str(row["code"]))
        out.langs.append(str(row.get("lang", "")))
    where = {ident: k for k, ident in enumerate(out.ids)}
    pairs = _file(root, "pairs.jsonl")
    assert pairs is not None
    for lineno, row in _json_lines(pairs):
        try:
            label = int(row["label"])  # type: ignore[call-overload]
            a, b = str(row["a"]), str(row["b"])
        except (KeyError, TypeError, ValueError):
            raise CrystalError(f"{pairs}:{lineno}: needs a, b and a 0/1 label") from None
        _add_pair(out, where, a, b, label, str(row.get("split", "test")))
    return out


def _codexglue(root: str) -> PairDataset:
    out = PairDataset("codexglue", [], [], [], [])
    data = _file(root, "data.jsonl")
    assert data is not None
    lines: dict[str, int] = {}
    for lineno, row in _json_lines(data):
        if "idx" not in row or not isinstance(row.get("func"), str):
            raise CrystalError(f"{data}:{lineno}: needs an idx and a string func")
        _unique(data, lineno, str(row["idx"]), lines)
        out.ids.append(str(row["idx"]))
        out.codes.append(str(row["func"]))
        out.langs.append("java")
    where = {ident: k for k, ident in enumerate(out.ids)}
    for split, name in SPLIT_FILES.items():
        path = _file(root, name)
        if path is None:
            continue
        for lineno, line in text_lines(path):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 3 or parts[2] not in ("0", "1"):
                raise CrystalError(f"{path}:{lineno}: expected 'idx1 idx2 label'")
            _add_pair(out, where, parts[0], parts[1], int(parts[2]), split)
    return out
