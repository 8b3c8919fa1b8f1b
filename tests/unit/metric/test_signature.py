"""Signatures: rendering, parsing back, and what a BLEU signature leaves out."""

from __future__ import annotations

import pygments
import pytest

from crystal_lsp import Signature, __version__
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.lexers import lexer_label, resolve_lexer

README_EXAMPLE = (
    "crystalbleu|tok:pygments-2.21.0|lang:java|comments:no|k:500|n:4|smooth:m1:eps=0.0001|"
    "variant:remove|S:6a4c384bf7fe|v:0.1.0"
)


def test_default_rendering() -> None:
    assert str(Signature()) == (
        f"crystalbleu|tok:pygments-{pygments.__version__}|lang:-|comments:no|k:500|n:4|"
        f"smooth:m1:eps=0.0001|variant:remove|S:-|v:{__version__}"
    )


def test_readme_example_parses() -> None:
    sig = Signature.parse(README_EXAMPLE)
    assert sig == Signature(
        metric="crystalbleu",
        tokenizer="pygments-2.21.0",
        language="java",
        comments="no",
        k=500,
        max_n=4,
        smoothing="m1:eps=0.0001",
        variant="remove",
        sset="6a4c384bf7fe",
        version="0.1.0",
    )
    assert str(sig) == README_EXAMPLE


SIGNATURES = [
    pytest.param(Signature(), id="default"),
    pytest.param(
        Signature(
            metric="crystalbleu-if",
            language="objective-c++",
            k=1000,
            max_n=3,
            smoothing="m4:k=3",
            variant="weight",
            sset="0123456789ab",
            comments="yes",
        ),
        id="weight-variant",
    ),
    pytest.param(
        CrystalBLEU(TriviallySharedSet({("a",): 3}, k=7), smoothing=Smoothing(6)).signature,
        id="from-metric",
    ),
    pytest.param(Signature(smoothing="m1:eps=1e-05", tokenizer="pygments-2.17.2"), id="colons"),
]


@pytest.mark.parametrize("sig", SIGNATURES)
def test_parse_round_trip(sig: Signature) -> None:
    text = str(sig)
    assert Signature.parse(text) == sig
    assert str(Signature.parse(text)) == text


def test_bleu_signature_leaves_out_s_fields() -> None:
    sig = CrystalBLEU(None, language="python").signature
    text = str(sig)
    assert text.startswith("bleu|")
    assert "|k:" not in text and "variant:" not in text and "|S:" not in text
    assert str(Signature.parse(text)) == text


def test_bleu_signature_object_round_trip() -> None:
    sig = CrystalBLEU(None, language="python").signature
    assert Signature.parse(str(sig)) == sig


def test_unknown_fields_are_ignored_and_with_changes_one_field() -> None:
    sig = Signature.parse("crystalbleu|lang:go|future:thing|k:7")
    assert (sig.language, sig.k) == ("go", 7)
    assert sig.with_(k=9) == Signature(language="go", k=9)
    assert sig.with_(k=9) != sig


def test_signatures_differ_when_settings_differ() -> None:
    sset = TriviallySharedSet({("a",): 3}, k=1)
    base = CrystalBLEU(sset).signature
    assert CrystalBLEU(sset, smoothing=Smoothing(2)).signature != base
    assert CrystalBLEU(sset, max_n=3).signature != base
    assert CrystalBLEU(sset, comments=True).signature != base
    assert CrystalBLEU(TriviallySharedSet({("a",): 4}, k=1)).signature != base
    assert CrystalBLEU(sset, variant="weight").signature != base


@pytest.mark.parametrize(
    ("language", "tokenizer"),
    [
        ("text", "crystal-lsp-text"),
        ("generic", "crystal-lsp-generic"),
        ("python", f"pygments-{pygments.__version__}"),
        ("-", f"pygments-{pygments.__version__}"),
    ],
)
def test_the_signature_names_the_tokenizer_of_the_language(language: str, tokenizer: str) -> None:
    # text and generic are crystal_lsp's own lexers, not Pygments'
    for sset in (None, TriviallySharedSet({("a",): 2}, k=1)):
        signature = CrystalBLEU(sset, language=language).signature
        assert signature.tokenizer == tokenizer
        assert f"|tok:{tokenizer}|lang:{language}|" in str(signature)
    label = lexer_label(resolve_lexer(language if language != "-" else "python"))
    assert label.endswith(
        f"@crystal-lsp-{__version__}" if "crystal" in tokenizer else f"@{tokenizer}"
    )


@pytest.mark.parametrize("tie_break", ["first-seen", "canonical"])
def test_signature_names_the_tie_break(tie_break: str) -> None:
    sset = TriviallySharedSet({("a",): 3}, k=7, tie_break=tie_break)
    text = str(CrystalBLEU(sset).signature)
    assert f"|S:{sset.fingerprint()}|ties:{tie_break}|" in text
    assert Signature.parse(text).tie_break == tie_break
