"""Smoothing specs as the CLI and configs write them, and their labels."""

from __future__ import annotations

import math

import pytest

from crystal_lsp import CrystalError, SmoothingFunction
from crystal_lsp.metric.smoothing import Smoothing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("1", Smoothing(1), id="digit"),
        pytest.param("0", Smoothing(0), id="zero"),
        pytest.param("method1", Smoothing(1), id="method1"),
        pytest.param("METHOD7", Smoothing(7), id="upper-case"),
        pytest.param(" m3 ", Smoothing(3), id="padded"),
        pytest.param("m1:eps=0.1", Smoothing(1, epsilon=0.1), id="m1-eps"),
        pytest.param("m1:epsilon=1e-3", Smoothing(1, epsilon=1e-3), id="m1-epsilon"),
        pytest.param("method4(k=3)", Smoothing(4, k=3), id="method4-parens"),
        pytest.param("m6:alpha=2.5", Smoothing(6, alpha=2.5), id="m6-alpha"),
        pytest.param("m7:k=2,eps=0.5", Smoothing(7, k=2, epsilon=0.5), id="two-params-comma"),
        pytest.param("m7(k=2; alpha=1)", Smoothing(7, k=2, alpha=1), id="two-params-semicolon"),
        pytest.param("2:", Smoothing(2), id="empty-params"),
    ],
)
def test_parse(text: str, expected: Smoothing) -> None:
    assert Smoothing.parse(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("8", id="method-8"),
        pytest.param("m9", id="m9"),
        pytest.param("method", id="no-number"),
        pytest.param("smooth1", id="wrong-prefix"),
        pytest.param("method 1", id="inner-space"),
        pytest.param("m1:eps", id="param-without-value"),
        pytest.param("m1:eps=", id="param-empty-value"),
        pytest.param("m1:eps=abc", id="param-not-a-number"),
        pytest.param("m1:beta=2", id="unknown-param"),
        pytest.param("m-1", id="negative-method"),
        pytest.param("12", id="two-digits"),
    ],
)
def test_parse_rejects_bad_specs(text: str) -> None:
    with pytest.raises(CrystalError, match="bad smoothing"):
        Smoothing.parse(text)


@pytest.mark.parametrize(
    "text",
    ["m4:k=0", "m4:k=-1", "m1:eps=-0.1", "m1:eps=nan", "m1:eps=inf", "m6:alpha=nan"],
)
def test_parse_rejects_invalid_parameter_values(text: str) -> None:
    with pytest.raises(CrystalError):
        Smoothing.parse(text)


def test_method_out_of_range() -> None:
    with pytest.raises(CrystalError, match="0-7"):
        Smoothing(8)


@pytest.mark.parametrize(
    ("smoothing", "label"),
    [
        pytest.param(Smoothing(), "m1:eps=0.0001", id="default"),
        pytest.param(Smoothing(0), "m0", id="m0"),
        pytest.param(Smoothing(1, epsilon=0.1), "m1:eps=0.1", id="m1"),
        pytest.param(Smoothing(2), "m2", id="m2"),
        pytest.param(Smoothing(3, epsilon=0.5), "m3", id="m3-ignores-eps"),
        pytest.param(Smoothing(4, k=3), "m4:k=3", id="m4"),
        pytest.param(Smoothing(5), "m5", id="m5"),
        pytest.param(Smoothing(6, alpha=2.5), "m6:alpha=2.5", id="m6"),
        pytest.param(Smoothing(7, k=5), "m7:k=5", id="m7"),
    ],
)
def test_label(smoothing: Smoothing, label: str) -> None:
    assert smoothing.label == label


@pytest.mark.parametrize("method", range(8))
def test_label_parses_back(method: int) -> None:
    smoothing = Smoothing(method, epsilon=0.25, alpha=3, k=7)
    parsed = Smoothing.parse(smoothing.label)
    assert parsed.method == method
    assert parsed.label == smoothing.label


def test_function_is_the_bound_method_with_parameters() -> None:
    fn = Smoothing(4, epsilon=0.2, alpha=3, k=9).function
    assert fn.__name__ == "method4"
    owner = fn.__self__
    assert isinstance(owner, SmoothingFunction)
    assert (owner.epsilon, owner.alpha, owner.k) == (0.2, 3, 9)


def test_default_is_the_papers_setting() -> None:
    default = Smoothing()
    assert (default.method, default.epsilon) == (1, 1e-4)
    assert math.isclose(Smoothing.parse("m1:eps=0.0001").epsilon, default.epsilon)
