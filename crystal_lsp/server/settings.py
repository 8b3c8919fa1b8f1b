"""The server's settings: ``initializationOptions.settings`` and ``workspace/configuration``.

The keys, their defaults and ranges come from the one table, :mod:`crystal_lsp.clones.options`
(the server's own keys, ``enable``, ``severity``, ``underline``, ``debounceMs`` and the
``insertion*`` keys, are there too). Every key is validated on its own: a bad value is reported
(one message naming the key) and that key keeps its default, the others still apply. Keys that
map to :class:`ScanConfig` fields are *overrides*: they replace ``[tool.crystal-lsp]`` of the
folder's ``pyproject.toml`` only when set to something other than their default (editors send
every key, defaults included, so a default value must not hide the project's configuration).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crystal_lsp.clones.options import LSP_SETTINGS, canonical_language, lsp_value
from crystal_lsp.clones.settings import ScanConfig, load_config
from crystal_lsp.errors import CrystalError

log = logging.getLogger(__name__)

SECTION = "crystalLsp"
DEFAULTS: dict[str, Any] = {
    key: list(s.default) if isinstance(s.default, tuple) else s.default
    for key, s in LSP_SETTINGS.items()
}
# setting -> ScanConfig field
SCAN_FIELDS = {key: s.name for key, s in LSP_SETTINGS.items() if not s.server_only}


@dataclass(frozen=True)
class Settings:
    """Validated settings (docs/settings.md describes each key)."""

    enable: bool = DEFAULTS["enable"]
    severity: str = DEFAULTS["severity"]
    underline: str = DEFAULTS["underline"]
    """``range``: diagnostics underline a copy's aligned range (a unit copied whole: its header
    line); ``firstLine``: its first line only."""
    debounce_ms: int = DEFAULTS["debounceMs"]
    references_outside_workspace: bool = DEFAULTS["referencesOutsideWorkspace"]
    """Whether ``crystal/score`` may read reference files outside the workspace folders."""
    max_diagnostics: int = DEFAULTS["maxDiagnostics"]
    """At most this many near-duplicate diagnostics per file (a note counts the rest)."""
    insertions: bool = DEFAULTS["insertions"]
    """Whether blocks landing in one edit are scored (:mod:`crystal_lsp.server.insertions`)."""
    insertion_min_lines: int = DEFAULTS["insertionMinLines"]
    insertion_threshold: float = DEFAULTS["insertionThreshold"]
    insertion_diagnostics: bool = DEFAULTS["insertionDiagnostics"]
    insertion_lens_seconds: int = DEFAULTS["insertionLensSeconds"]
    scan: Mapping[str, Any] = field(default_factory=dict)
    """``ScanConfig`` overrides from the keys set to non-default values."""

    @property
    def debounce(self) -> float:
        """The debounce delay in seconds."""
        return self.debounce_ms / 1000.0


def _check(key: str, value: Any) -> Any:
    """The normalized value of one setting; raises ``ValueError`` naming what is wrong."""
    checked = lsp_value(LSP_SETTINGS[key], value)
    if key != "languages":
        return checked
    names = []
    for name in checked:
        try:
            names.append(canonical_language(name))
        except CrystalError:
            raise ValueError(f"unknown language {name!r}") from None
    return sorted(set(names))


def parse_settings(*layers: Any) -> tuple[Settings, list[str]]:
    """Merge setting layers (later wins; ``None`` values are ignored) and validate them.

    Returns the settings and one problem description per invalid key (that key then keeps its
    default). Unknown keys are ignored.
    """
    merged: dict[str, Any] = {}
    problems: list[str] = []
    for layer in layers:
        if layer is None or layer == []:  # some clients send [] for "no settings"
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
        underline=values["underline"],
        debounce_ms=values["debounceMs"],
        references_outside_workspace=values["referencesOutsideWorkspace"],
        max_diagnostics=values["maxDiagnostics"],
        insertions=values["insertions"],
        insertion_min_lines=values["insertionMinLines"],
        insertion_threshold=values["insertionThreshold"],
        insertion_diagnostics=values["insertionDiagnostics"],
        insertion_lens_seconds=values["insertionLensSeconds"],
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
