"""bench/fit_verdict.py: the fit is reproducible and the cut follows its stated rule."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import numpy as np
from bench_scripts import load

REPO = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    sys.path.insert(0, str(REPO / "bench"))
    return load("fit_verdict.py", "fit_verdict")


def _data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(300, 4))
    y = (x @ np.array([1.5, -1.0, 0.0, 0.5]) + rng.normal(size=300) > 0).astype(float)
    return x, y


def test_the_same_data_give_the_same_coefficients() -> None:
    fv = _script()
    x, y = _data(0)
    first, second = fv.fit(x, y, 1.0), fv.fit(x.copy(), y.copy(), 1.0)
    assert first[1] == second[1] and np.array_equal(first[0], second[0])
    assert first[0][0] > 0 > first[0][1]  # it learns the signs it was given
    other = fv.fit(*_data(1), 1.0)
    assert not np.array_equal(first[0], other[0])


def test_the_cut_is_the_most_precise_one_that_keeps_the_copies_and_the_top_ten() -> None:
    fv = _script()
    before = {"precision": 0.4, "A": 100, "top10_A": {"p x weight": 80}}

    def row(cut: float, precision: float, a: int, top: int) -> dict[str, object]:
        return {"cut": cut, "precision": precision, "A": a, "top10_A": top}

    rows = [
        row(0.1, 0.42, 100, 81),
        row(0.2, 0.50, 92, 80),
        row(0.3, 0.60, 89, 85),  # loses more than a tenth of the A
        row(0.4, 0.70, 95, 79),  # loses a genuine copy from the top tens
    ]
    assert fv.choose_cut(rows, before, 0.9) == (0.2, 0.2)
    assert fv.choose_cut(rows, before, 0.85) == (0.3, 0.3)
    worse = [row(0.1, 0.39, 100, 90)]
    assert fv.choose_cut(worse, before, 0.9) == fv.RULES  # nothing beats it: no move
