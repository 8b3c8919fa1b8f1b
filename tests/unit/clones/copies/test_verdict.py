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
    assert 0.0 <= model().demote < 1.0 and model().promote >= model().demote


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


def test_unit_names_that_differ_by_a_mirror_a_type_or_an_async_word_are_said() -> None:
    from crystal_lsp.clones.copies.verdict import name_variants

    def kinds(a: str, b: str) -> set[str]:
        return {k for k, v in name_variants(a, b).items() if v}

    assert kinds("getNext", "getPrev") == {"name_mirror"}
    assert kinds("database_forwards", "database_backwards") == {"name_mirror"}
    assert kinds("readInt", "readLong") == {"name_type"}
    assert kinds("serialize_i8", "serialize_i16") == {"name_type"}
    assert kinds("get_pixel_BGR15", "get_pixel_BGR16") == {"name_type"}
    assert kinds("send_robust", "asend_robust") == {"name_async"}
    assert kinds("parse", "parseAsync") == {"name_async"}
    assert kinds("append", "extend") == set()  # other words: no variant
    assert kinds("load", "load") == set() and kinds("", "load") == set()


def test_test_files_and_typed_languages_are_features() -> None:
    from crystal_lsp.clones.copies.verdict import is_test

    tests = ["tests/x.py", "a/foo_test.go", "src/FooTest.java", "x.spec.ts", "test_a.py"]
    others = ["src/contest.py", "lib/latest.py", "src/attest/x.py", "main.go"]
    assert all(map(is_test, tests)) and not any(map(is_test, others))
    ev = Evidence(12, 10, 9, False, False, 0.1, False, False, kinds=(("called names", 3),))
    java = Context(120, 0.7, 0.8, True, 2, False, False, ("a", "b"), "java", ("T.java", "U.java"))
    feats = features(ev, java)
    assert feats["typed"] == 1.0 and feats["called"] == 1.0 and feats["tests"] == 0.0
    py = Context(
        120, 0.7, 0.8, False, 2, False, False, ("a", "b"), "python", ("tests/a.py", "tests/b.py")
    )
    assert features(ev, py)["typed"] == 0.0 and features(ev, py)["tests"] == 1.0
