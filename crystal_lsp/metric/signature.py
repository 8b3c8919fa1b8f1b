"""Reproducibility signatures, in the spirit of sacrebleu's.

A signature is one short string naming everything that changes a score: the metric and its
variant, the tokenizer (Pygments version), the language, whether comments were kept, k, max n,
the smoothing, a fingerprint of S and how S broke ties at its k-th count, the bootstrap's
resamples and seed when a confidence interval or paired test is reported, and the crystal_lsp
version. It is printed with every score
and stored with every cached result, so two numbers are comparable only if their signatures are
equal.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import pygments

from crystal_lsp.version import __version__

_FIELDS = (
    ("metric", ""),
    ("tok", "tokenizer"),
    ("lang", "language"),
    ("comments", "comments"),
    ("k", "k"),
    ("n", "max_n"),
    ("smooth", "smoothing"),
    ("variant", "variant"),
    ("S", "sset"),
    ("ties", "tie_break"),
    ("bs", "bootstrap"),
    ("seed", "seed"),
    ("v", "version"),
)


@dataclass(frozen=True)
class Signature:
    """Everything a score depends on, rendered as ``metric|tok:...|lang:...|...``."""

    metric: str = "crystalbleu"
    tokenizer: str = f"pygments-{pygments.__version__}"
    language: str = "-"
    comments: str = "no"
    k: int = 500
    max_n: int = 4
    smoothing: str = "m1:eps=0.0001"
    variant: str = "remove"
    sset: str = "-"
    tie_break: str = "-"
    """S's tie-break (first-seen or canonical); ``-`` without S, and not rendered then."""
    bootstrap: int = 0
    """Bootstrap resamples behind a confidence interval or paired test (0: none, not rendered)."""
    seed: int = 0
    """The bootstrap's seed (rendered with ``bs``)."""
    version: str = __version__

    def __str__(self) -> str:
        values = asdict(self)
        parts = [self.metric]
        for label, name in _FIELDS[1:]:
            if self.metric == "bleu" and name in ("k", "variant", "sset", "tie_break"):
                continue
            if name == "tie_break" and self.tie_break == "-":
                continue
            if name in ("bootstrap", "seed") and not self.bootstrap:
                continue
            parts.append(f"{label}:{values[name]}")
        return "|".join(parts)

    def with_(self, **changes: object) -> Signature:
        """A copy with some fields changed."""
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def parse(cls, text: str) -> Signature:
        """Read a signature back from its string form."""
        metric, *parts = text.split("|")
        names = {label: name for label, name in _FIELDS[1:]}
        values: dict[str, object] = {"metric": metric}
        if metric == "bleu":  # not rendered for BLEU: what CrystalBLEU(None) reports
            values.update(k=0, variant="remove", sset="-", tie_break="-")
        for part in parts:
            label, _, value = part.partition(":")
            name = names.get(label)
            if name is None:
                continue
            values[name] = int(value) if name in ("k", "max_n", "bootstrap", "seed") else value
        return cls(**values)  # type: ignore[arg-type]
