"""The indented JSON writer: the very text of ``json.dumps(indent=2, ensure_ascii=False)``."""

from __future__ import annotations

import json
import math
import pathlib
import random
from collections import OrderedDict
from typing import Any

import pytest

from crystal_lsp.cli.jsonout import dumps_indented


def reference(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False)


def random_doc(rng: random.Random, depth: int = 0) -> Any:
    scalars = [
        lambda: rng.randint(-(10**20), 10**20),
        lambda: rng.random() * 10 ** rng.randint(-30, 30),
        lambda: rng.choice([0.0, -0.0, 1e16, 1.5, math.inf, -math.inf, math.nan]),
        lambda: rng.choice([True, False, None]),
        lambda: "".join(
            rng.choice('ab "\\\n\t\x00\x1fé€😀/\u2028') for _ in range(rng.randint(0, 8))
        ),
    ]
    if depth > 3 or rng.random() < 0.4:
        return rng.choice(scalars)()
    if rng.random() < 0.5:
        return [random_doc(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = [str(random_doc(rng, 4)) for _ in range(rng.randint(0, 4))]
    return {k: random_doc(rng, depth + 1) for k in keys}


@pytest.mark.parametrize("seed", range(300))
def test_random_documents_are_written_as_json_dumps_writes_them(seed: int) -> None:
    doc = random_doc(random.Random(seed))
    assert dumps_indented(doc) == reference(doc)


class Score(float):
    """A float subclass (json.dumps writes it with float.__repr__)."""


@pytest.mark.parametrize(
    "doc",
    [
        {},
        [],
        {"a": ()},
        {"a": (1, [2, {"b": None}])},
        {1: "x", "y": 2},  # a key that is not a string: json.dumps's rules
        {True: 1, None: 2, 1.5: 3},
        [Score(0.5), OrderedDict(a=1)],
        {"deep": [[[[[[[[[[[]]]]]]]]]]]},
    ],
)
def test_unusual_values_are_written_as_json_dumps_writes_them(doc: Any) -> None:
    assert dumps_indented(doc) == reference(doc)


def test_what_json_cannot_write_fails_as_json_dumps_fails() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError):
        dumps_indented(loop)
    with pytest.raises(TypeError):
        dumps_indented({"set": {1}})


def test_a_scan_report_is_written_as_before(tmp_path: pathlib.Path) -> None:
    from scan_samples import ORIGINAL, UNRELATED, module, renamed, write_tree

    from crystal_lsp.cli.main import main

    root = write_tree(tmp_path / "repo", {"a.py": module(ORIGINAL), "b.py": module(renamed())})
    root = write_tree(root, {"c.py": module(UNRELATED[0])})
    out = tmp_path / "report.json"
    assert main(["scan", str(root), "--format", "json", "-o", str(out), "--no-progress"]) == 1
    text = out.read_text(encoding="utf-8")
    assert text == reference(json.loads(text)) + "\n"
