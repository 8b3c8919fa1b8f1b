"""The server's settings: ``initializationOptions.settings`` and ``workspace/configuration``.

Every key is validated on its own: a bad value is reported (one message naming the key) and that
key keeps its default, the others still apply. Keys that map to :class:`ScanConfig` fields are
*overrides*: they replace ``[tool.crystal-lsp]`` of the folder's ``pyproject.toml`` only when
set to something other than their default (editors send every key, defaults included, so a
default value must not hide the project's configuration).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crystal_lsp.clones.settings import ScanConfig, load_config
from crystal_lsp.errors import CrystalError
from crystal_lsp.text.lexers import canonical_name, lexer_by_language

log = logging.getLogger(__name__)

SECTION = "crystalLsp"
SEVERITIES = ("hint", "information", "warning", "error")
DEFAULTS: dict[str, Any] = {
    "enable": True,
    "threshold": 0.6,
    "k": 500,
    "minTokens": 50,
    "minLines": 5,
    "severity": "information",
    "languages": [],
    "exclude": [],
    "debounceMs": 300,
    "maxFileBytes": 2_000_000,
}
# setting -> ScanConfig field
SCAN_FIELDS = {
    "threshold": "threshold",
    "k": "k",
    "minTokens": "min_tokens",
    "minLines": "min_lines",
    "languages": "languages",
    "exclude": "extend_exclude",
    "maxFileBytes": "max_file_bytes",
}


@dataclass(frozen=True)
class Settings:
    """Validated settings (see the README's protocol section for each key)."""

    enable: bool = True
    severity: str = "information"
    debounce_ms: int = 300
    scan: Mapping[str, Any] = field(default_factory=dict)
    """``ScanConfig`` overrides from the keys set to non-default values."""

    @property
    def debounce(self) -> float:
        """The debounce delay in seconds."""
        return self.debounce_ms / 1000.0


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    return _number(value) and float(value).is_integer()


def _check(key: str, value: Any) -> Any:
    """The normalized value of one setting; raises ``ValueError`` naming what is wrong."""
    if key == "enable":
        if not isinstance(value, bool):
            raise ValueError("expected true or false")
        return value
    if key == "threshold":
        if not _number(value) or not 0.0 < float(value) <= 1.0:
            raise ValueError("expected a number in (0, 1]")
        return float(value)
    if key == "k":
        if value == "auto":
            return value
        if not _integer(value) or int(value) < 0:
            raise ValueError('expected a whole number >= 0 or "auto"')
        return int(value)
    if key in ("minTokens", "minLines"):
        if not _integer(value) or int(value) < 1:
            raise ValueError("expected a whole number >= 1")
        return int(value)
    if key in ("debounceMs", "maxFileBytes"):
        if not _integer(value) or int(value) < 0:
            raise ValueError("expected a whole number >= 0")
        return int(value)
    if key == "severity":
        if not isinstance(value, str) or value.lower() not in SEVERITIES:
            raise ValueError("expected one of " + ", ".join(SEVERITIES))
        return value.lower()
    if key == "languages":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("expected a list of language names")
        names = []
        for name in value:
            try:
                names.append(canonical_name(lexer_by_language(name)))
            except CrystalError:
                raise ValueError(f"unknown language {name!r}") from None
        return sorted(set(names))
    if key == "exclude":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("expected a list of glob patterns")
        return list(value)
    raise KeyError(key)  # pragma: no cover - callers pass known keys


def parse_settings(*layers: Any) -> tuple[Settings, list[str]]:
    """Merge setting layers (later wins; ``None`` values are ignored) and validate them.

    Returns the settings and one problem description per invalid key (that key then keeps its
    default). Unknown keys are ignored.
    """
    merged: dict[str, Any] = {}
    problems: list[str] = []
    for layer in layers:
        if layer is None:
            continue
        if not isinstance(layer, Mapping):
            problems.append(f"settings: expected an object, got {type(layer).__name__}")
            continue
        for key, value in layer.items():
            if value is None:
                continue
            if key not in DEFAULTS:
                log.debug("ignoring unknown setting %r", key)
                continue
            merged[key] = value
    values = dict(DEFAULTS)
    for key, value in merged.items():
        try:
            values[key] = _check(key, value)
        except ValueError as exc:
            problems.append(f"{SECTION}.{key}: {exc} (got {value!r}); using the default")
    scan = {
        SCAN_FIELDS[key]: (tuple(values[key]) if isinstance(values[key], list) else values[key])
        for key in SCAN_FIELDS
        if key in merged and values[key] != DEFAULTS[key] and values[key] != []
    }
    settings = Settings(
        enable=values["enable"],
        severity=values["severity"],
        debounce_ms=values["debounceMs"],
        scan=scan,
    )
    return settings, problems


def folder_config(root: str | None, settings: Settings) -> tuple[ScanConfig, list[str]]:
    """Defaults, then the folder's ``[tool.crystal-lsp]``, then the settings' overrides.

    A broken ``pyproject.toml`` section is reported and skipped (defaults plus settings apply).
    """
    overrides = dict(settings.scan)
    if root is None:
        return ScanConfig().with_overrides(overrides), []
    try:
        return load_config(root, overrides), []
    except CrystalError as exc:
        problem = f"{exc}; using the defaults instead of [tool.crystal-lsp]"
    try:
        return ScanConfig().with_overrides(overrides), [problem]
    except CrystalError as exc:  # pragma: no cover - the settings were validated
        return ScanConfig(), [problem, str(exc)]
