"""A named, parseable smoothing setting (method and parameters) for CLIs, configs and signatures."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from crystal_lsp.errors import CrystalError

_PARAM_NAMES = {"eps": "epsilon", "epsilon": "epsilon", "alpha": "alpha", "k": "k"}
_SPEC = re.compile(r"^(?:m(?:ethod)?)?([0-7])(?:[:(](.*?)\)?)?$")


@dataclass(frozen=True)
class Smoothing:
    """Which of NLTK's smoothing methods to use, with its parameters.

    The default (method 1, epsilon 1e-4) is the setting of the CrystalBLEU paper's experiments
    and of the reference figures in the shared datasets' README.
    """

    method: int = 1
    epsilon: float = 1e-4
    alpha: float = 5
    k: float = 5

    def __post_init__(self) -> None:
        if self.method not in range(8):
            raise CrystalError(f"smoothing method must be 0-7, not {self.method}")
        # NLTK accepts anything here, but a negative, infinite or NaN parameter makes smoothed
        # precisions non-positive, which the geometric mean then silently skips.
        for name, value, low in (
            ("epsilon", self.epsilon, 0.0),
            ("alpha", self.alpha, 0.0),
            ("k", self.k, None),
        ):
            if not math.isfinite(value) or (value < low if low is not None else value <= 0):
                bound = ">= 0" if low is not None else "> 0"
                raise CrystalError(
                    f"smoothing parameter {name} must be finite and {bound}, not {value}"
                )

    @property
    def function(self) -> Any:
        """The bound smoothing method, as NLTK's API expects it."""
        # imported here: settings parse a smoothing without scoring anything (a cached scan)
        from crystal_lsp.metric.bleu import SmoothingFunction

        smoother = SmoothingFunction(epsilon=self.epsilon, alpha=self.alpha, k=self.k)
        return getattr(smoother, f"method{self.method}")

    @property
    def label(self) -> str:
        """A short text naming the method and the parameters it uses, e.g. ``m1:eps=0.0001``."""
        if self.method == 1:
            return f"m1:eps={self.epsilon:g}"
        if self.method in (4, 7):
            return f"m{self.method}:k={self.k:g}"
        if self.method == 6:
            return f"m6:alpha={self.alpha:g}"
        return f"m{self.method}"

    @classmethod
    def parse(cls, text: str) -> Smoothing:
        """Parse ``"1"``, ``"method1"``, ``"m1:eps=0.1"`` or ``"method4(k=3)"``."""
        match = _SPEC.match(text.strip().lower())
        if match is None:
            raise CrystalError(
                f"bad smoothing {text!r}: expected e.g. 'method1', 'm1:eps=0.1' or '4'"
            )
        params: dict[str, float] = {}
        for part in filter(None, re.split(r"[,;\s]+", match.group(2) or "")):
            name, _, value = part.partition("=")
            key = _PARAM_NAMES.get(name.strip())
            if key is None or not value:
                raise CrystalError(
                    f"bad smoothing parameter {part!r} in {text!r} (use eps=, alpha=, k=)"
                )
            try:
                params[key] = float(value)
            except ValueError:
                raise CrystalError(f"bad smoothing parameter {part!r} in {text!r}") from None
        return cls(method=int(match.group(1)), **params)
