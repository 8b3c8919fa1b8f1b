"""Clone-finding settings: defaults, ``[tool.crystal-lsp]`` in ``pyproject.toml``, overrides.

Every setting that changes results is part of :meth:`ScanConfig.signature`, which keys the
on-disk index, so a changed setting never reuses stale results.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.text.lexers import canonical_name, lexer_by_language
from crystal_lsp.version import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,no-redef]

SECTION = "crystal-lsp"
# Bumped whenever S sets, candidate retrieval or the decision change results, so that cached
# S sets, pair scores and results from an older crystal-lsp are never reused.
DECISION_VERSION = 2
DEFAULT_EXCLUDE = (
    "**/node_modules/**",
    "**/vendor/**",
    "**/third_party/**",
    "**/third-party/**",
    "**/_vendor/**",
    "**/bower_components/**",
    "**/site-packages/**",
    "**/dist/**",
    "**/build/**",
    "**/*.min.js",
    "**/*.min.css",
)


@dataclass(frozen=True)
class ScanConfig:
    """What the clone finder looks at and how it decides. Documented in README (Configuration)."""

    threshold: float = 0.6
    """Minimum similarity (CrystalBLEU of the normalized view, the lower of both directions)."""
    k: int | str = 500
    """Size of each language's trivially shared set, or ``"auto"`` for the frequency-curve knee."""
    max_n: int = 4
    min_tokens: int = 50
    min_lines: int = 5
    languages: tuple[str, ...] = ()
    """Only these languages (Pygments names); empty means every language with a known lexer."""
    include: tuple[str, ...] = ()
    """Only files matching one of these globs (empty: all files)."""
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    max_file_bytes: int = 2_000_000
    smoothing: str = "m1:eps=0.0001"
    same_file: bool = True
    """Also report copies inside one file."""
    report_data: bool = False
    """Also report data runs (tables, ``__all__`` lists); off because they drown real copies."""
    max_df: int = 50
    """Shingles in more snippets than this are too common to retrieve candidates by."""
    sset_drift: float = 0.05
    """Rebuild the S sets when this fraction of a language's tokens changed since they were built."""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold <= 1.0:
            raise CrystalError(f"threshold must be in (0, 1], not {self.threshold}")
        if isinstance(self.k, str):
            if self.k != "auto":
                raise CrystalError(f"k must be a number or 'auto', not {self.k!r}")
        elif self.k < 0:
            raise CrystalError(f"k must be at least 0, not {self.k}")
        if self.min_tokens < 1 or self.min_lines < 1:
            raise CrystalError("min_tokens and min_lines must be at least 1")
        if self.max_n < 1:
            raise CrystalError("max_n must be at least 1")
        if self.max_df < 2:
            raise CrystalError(
                f"max_df must be at least 2 (a shingle must link two snippets), not {self.max_df}"
            )
        if not 0.0 <= self.sset_drift <= 1.0:
            raise CrystalError(f"sset_drift must be in [0, 1], not {self.sset_drift}")
        if self.max_file_bytes < 0:
            raise CrystalError(
                f"max_file_bytes must be at least 0 (0: no limit), not {self.max_file_bytes}"
            )
        Smoothing.parse(self.smoothing)
        # Canonical Pygments names ("py" and "Python" mean "python"); unknown names are errors.
        try:
            canonical = tuple(
                dict.fromkeys(canonical_name(lexer_by_language(name)) for name in self.languages)
            )
        except CrystalError as exc:
            raise CrystalError(f"languages: {exc}") from None
        object.__setattr__(self, "languages", canonical)

    @property
    def smoothing_spec(self) -> Smoothing:
        """The parsed smoothing setting."""
        return Smoothing.parse(self.smoothing)

    @property
    def all_excludes(self) -> tuple[str, ...]:
        """``exclude`` plus ``extend_exclude``."""
        return self.exclude + self.extend_exclude

    def entry_signature(self) -> str:
        """Digest of what per-file index entries depend on (tokenizer, snippet sizes)."""
        import pygments

        return _digest(
            {
                "v": __version__,
                "pygments": pygments.__version__,
                "min_tokens": self.min_tokens,
                "min_lines": self.min_lines,
                "max_n": self.max_n,
                "format": 3,
                "languages": sorted(self.languages),
                "max_file_bytes": self.max_file_bytes,
            }
        )

    def signature(self) -> str:
        """Digest of every result-affecting setting."""
        values = asdict(self)
        values.pop("extra", None)
        values["entry"] = self.entry_signature()
        values["decision"] = DECISION_VERSION
        return _digest(values)

    def with_overrides(self, overrides: Mapping[str, Any]) -> ScanConfig:
        """A copy with settings replaced (keys as in ``pyproject.toml``, ``-`` or ``_``)."""
        return replace(self, **_coerce(overrides, "overrides"))


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


_FIELD_TYPES = {f.name: f.type for f in fields(ScanConfig) if f.name != "extra"}


def _coerce(raw: Mapping[str, Any], origin: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        if name not in _FIELD_TYPES:
            known = ", ".join(sorted(k.replace("_", "-") for k in _FIELD_TYPES))
            raise CrystalError(f"{origin}: unknown setting {key!r} (known: {known})")
        kind = str(_FIELD_TYPES[name])
        try:
            if "tuple" in kind:
                if isinstance(value, str):
                    value = [value]
                if not isinstance(value, (list, tuple)) or not all(
                    isinstance(v, str) for v in value
                ):
                    raise TypeError("expected a list of strings")
                value = tuple(value)
            elif name == "k":
                value = value if value == "auto" else _integer(value)
            elif kind == "float":
                if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                    raise TypeError("expected a number")
                value = float(value)
            elif kind == "int":
                value = _integer(value)
            elif kind == "bool":
                if not isinstance(value, bool):
                    raise TypeError("expected true or false")
            elif kind == "str":
                value = str(value)
        except (TypeError, ValueError) as exc:
            raise CrystalError(f"{origin}: bad value for {key!r}: {value!r} ({exc})") from None
        out[name] = value
    return out


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError("expected a whole number")
    number = float(value)
    if not number.is_integer():
        raise ValueError("expected a whole number")
    return int(number)


def find_pyproject(root: str) -> str | None:
    """The nearest ``pyproject.toml`` at or above ``root``, not beyond the repository's top.

    Like black and ruff: scanning a subdirectory uses the project's settings.
    """
    current = os.path.abspath(root)
    while True:
        path = os.path.join(current, "pyproject.toml")
        if os.path.isfile(path):
            return path
        parent = os.path.dirname(current)
        if parent == current or os.path.exists(os.path.join(current, ".git")):
            return None
        current = parent


def command_line_overrides(options: Any) -> dict[str, Any]:
    """The settings given as command-line options (``crystal-lsp scan``, ``crystal-clones``).

    ``options`` is the parsed namespace: ``threshold``, ``k``, ``min_tokens``, ``min_lines``,
    ``languages``, ``include`` (``None`` when not given), ``exclude`` (appended to the
    configured excludes) and ``no_same_file``.
    """
    out: dict[str, Any] = {}
    for name in ("threshold", "k", "min_tokens", "min_lines", "languages", "include"):
        value = getattr(options, name)
        if value is not None:
            out[name] = value
    if options.exclude:
        out["extend_exclude"] = options.exclude
    if options.no_same_file:
        out["same_file"] = False
    return out


def load_config(root: str, overrides: Mapping[str, Any] | None = None) -> ScanConfig:
    """Defaults, then ``[tool.crystal-lsp]`` of ``root/pyproject.toml``, then ``overrides``."""
    values: dict[str, Any] = {}
    path = find_pyproject(root)
    if path is not None:
        try:
            with open(path, "rb") as fh:
                doc = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise CrystalError(f"{path}: cannot read ({exc})") from None
        section = doc.get("tool", {}).get(SECTION, {})
        if not isinstance(section, dict):
            raise CrystalError(f"{path}: [tool.{SECTION}] must be a table")
        values.update(_coerce(section, f"{path} [tool.{SECTION}]"))
    if overrides:
        values.update(_coerce(overrides, "command line"))
    return ScanConfig(**values)
