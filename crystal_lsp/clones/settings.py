"""Clone-finding settings: defaults, ``[tool.crystal-lsp]`` in ``pyproject.toml``, overrides.

Names, defaults, ranges and forms of the settings come from the one table,
:mod:`crystal_lsp.clones.options`. Every setting that changes results is part of
:meth:`ScanConfig.signature`, which keys the on-disk index, so a changed setting never reuses
stale results.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from importlib import resources
from typing import Any

import pathspec

from crystal_lsp.clones.globs import compile_globs
from crystal_lsp.clones.options import (
    DEFAULT_EXCLUDE,
    SCAN_SETTINGS,
    canonical_language,
    check_range,
    coerce,
    default,
)
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.text.sources import SkippedFile, read_bytes
from crystal_lsp.version import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,no-redef]

__all__ = ["DECISION_VERSION", "DEFAULT_EXCLUDE", "SECTION", "ScanConfig", "load_config"]

SECTION = "crystal-lsp"
# Bumped whenever S sets, candidate retrieval or the decision change results, so that cached
# S sets, pair scores and results from an older crystal-lsp are never reused.
DECISION_VERSION = 10
DISPLAY_ONLY = ("show_similar",)
"""Settings that choose what is shown of the findings: no part of the signature or caches."""


@dataclass(frozen=True)
class ScanConfig:
    """What the clone finder looks at and how it decides. Documented in docs/settings.md."""

    threshold: float = default("threshold")
    """Minimum similarity (CrystalBLEU of the normalized view, the lower of both directions)."""
    k: int | str = default("k")
    """Size of each language's trivially shared set, or ``"auto"`` for the frequency-curve knee."""
    max_n: int = default("max_n")
    min_tokens: int = default("min_tokens")
    min_lines: int = default("min_lines")
    languages: tuple[str, ...] = default("languages")
    """Only these languages (Pygments names); empty means every language with a known lexer."""
    include: tuple[str, ...] = default("include")
    """Only files matching one of these globs (empty: all files)."""
    exclude: tuple[str, ...] = default("exclude")
    extend_exclude: tuple[str, ...] = default("extend_exclude")
    tracked_only: bool = default("tracked_only")
    """In a git repository, only the files git tracks (no listing of untracked files)."""
    max_file_bytes: int = default("max_file_bytes")
    smoothing: str = default("smoothing")
    same_file: bool = default("same_file")
    """Also report copies inside one file."""
    report_data: bool = default("report_data")
    """Also report data runs (tables, ``__all__`` lists); off because they drown real copies."""
    max_df: int = default("max_df")
    """Shingles in more snippets than this are too common to retrieve candidates by."""
    sset_drift: float = default("sset_drift")
    """Rebuild the S sets when this fraction of a language's tokens changed since they were built."""
    show_similar: bool = default("show_similar")
    """Also show findings of similar structure, not only copies (display only)."""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for setting in SCAN_SETTINGS.values():
            check_range(setting, getattr(self, setting.name))
        Smoothing.parse(self.smoothing)
        # Canonical Pygments names ("py" and "Python" mean "python"); unknown names are errors.
        try:
            canonical = tuple(dict.fromkeys(canonical_language(name) for name in self.languages))
        except CrystalError as exc:
            raise CrystalError(f"languages: {exc}") from None
        object.__setattr__(self, "languages", canonical)
        # malformed globs are errors now, not when the first file is matched
        _ = self.include_spec, self.exclude_spec

    @cached_property
    def include_spec(self) -> pathspec.PathSpec | None:  # type: ignore[type-arg]
        """``include`` compiled once (``None``: every file)."""
        return compile_globs(self.include, "include")

    @cached_property
    def exclude_spec(self) -> pathspec.PathSpec | None:  # type: ignore[type-arg]
        """``exclude`` and ``extend_exclude`` compiled once (``None``: nothing excluded)."""
        return compile_globs(self.all_excludes, "exclude")

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
                # 6: tokens of the text Pygments lexes (line ends made \n, one final line end)
                # 7: and transpiler headers mark generated code
                # 8: light entries packed (text/packing.py), line structure from text/layout.py
                # 9: lone \r line ends are \n (LSP lines: text/lexinput.py unify_line_ends)
                # 10: units named from their definition (namespaces, export macros, callbacks)
                # 11: PHP's one-token runs of brackets (`})`, `{}`) open and close units
                "format": 11,
                "languages": sorted(self.languages),
                "max_file_bytes": self.max_file_bytes,
            }
        )

    def signature(self) -> str:
        """Digest of every result-affecting setting."""
        values = asdict(self)
        values.pop("extra", None)
        for name in DISPLAY_ONLY:  # what is shown, not what is found
            values.pop(name, None)
        if not values.get("tracked_only"):
            values.pop("tracked_only", None)  # added later: at its default, signatures as before
        values["entry"] = self.entry_signature()
        values["decision"] = DECISION_VERSION
        values["verdict"] = _verdict_digest()
        return _digest(values)

    def with_overrides(self, overrides: Mapping[str, Any]) -> ScanConfig:
        """A copy with settings replaced (keys as in ``pyproject.toml``, ``-`` or ``_``)."""
        return replace(self, **coerce(overrides, "overrides"))


def _verdict_digest() -> str:
    """The shipped verdict model's digest: a refitted model gives new levels, not cached ones."""
    data = resources.files("crystal_lsp.data").joinpath("verdict.json")
    return hashlib.sha256(data.read_bytes()).hexdigest()[:16]


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


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


def load_config(root: str, overrides: Mapping[str, Any] | None = None) -> ScanConfig:
    """Defaults, then ``[tool.crystal-lsp]`` of ``root/pyproject.toml``, then ``overrides``."""
    values: dict[str, Any] = {}
    path = find_pyproject(root)
    if path is not None:
        try:
            doc = tomllib.loads(read_bytes(path).decode("utf-8"))
        except SkippedFile as exc:
            raise CrystalError(f"{path}: cannot read ({exc.reason})") from None
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise CrystalError(f"{path}: cannot read ({exc})") from None
        tool = doc.get("tool", {})
        if not isinstance(tool, dict):
            raise CrystalError(f"{path}: [tool] must be a table, not {type(tool).__name__}")
        section = tool.get(SECTION, {})
        if not isinstance(section, dict):
            raise CrystalError(f"{path}: [tool.{SECTION}] must be a table")
        values.update(coerce(section, f"{path} [tool.{SECTION}]"))
    if overrides:
        values.update(coerce(overrides, "command line"))
    return ScanConfig(**values)
