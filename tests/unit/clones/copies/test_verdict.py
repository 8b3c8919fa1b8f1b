"""The shipped verdict: a fitted model with its definitions, cut and provenance, applied as fitted."""

from __future__ import annotations

import json
import math
from importlib import resources

import pytest

from crystal_lsp.clones.copies.evidence import Evidence
from crystal_lsp.clones.copies.verdict import FEATURES, Context, features, model, parse


def _doc() -> dict[str, object]:
    text = resources.files("crystal_lsp.data").joinpath("verdict.json").read_text("utf-8")
    doc: dict[str, object] = json.loads(text)
    return doc


def test_the_shipped_model_defines_its_features_and_says_how_it_was_fitted() -> None:
    doc = _doc()
    coefficients = doc["coefficients"]
    assert isinstance(coefficients, dict) and coefficients
    assert doc["features"] == {name: FEATURES[name] for name in coefficients}
    provenance = doc["provenance"]
    assert isinstance(provenance, dict) and provenance["script"] == "bench/fit_verdict.py"
    assert "leave_one_project_out" in provenance and provenance["examples"] > 100
    assert 0.0 <= model().demote < 1.0 and model().promote > model().demote


def test_the_probability_is_the_logistic_of_the_coefficients() -> None:
    ev = Evidence(12, 10, 9, False, False, 0.1, False, False, kinds=(("names", 3),))
    ctx = Context(120, 0.7, 0.8, True, 2, False, False, ("load", "load"))
    feats = features(ev, ctx)
    assert set(feats) == set(FEATURES)
    m = model()
    z = m.intercept + sum(w * feats[k] for k, w in m.coefficients.items())
    assert m.probability(feats) == pytest.approx(1 / (1 + math.exp(-z)), abs=1e-12)
    assert feats["share"] == pytest.approx(18 / 22) and feats["same_name"] == 1.0


def test_a_model_with_an_unknown_feature_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown features"):
        parse(json.dumps({"intercept": 0, "coefficients": {"colour": 1}, "cut": 0.5}))
