"""The one table of settings: every knob of the clone finder and of the language server, once.

Each :class:`Setting` says where it can be set -- ``[tool.crystal-lsp]`` in ``pyproject.toml``
(its name, ``-`` or ``_``), a flag of ``crystal-lsp scan`` and ``crystal-clones``, a
``crystalLsp.*`` key the language server reads -- and what it accepts: type, default, range.
The rest is derived from :data:`SETTINGS`: the defaults and validation of
:class:`~crystal_lsp.clones.settings.ScanConfig`, the command-line options
(:func:`add_scan_options`, :func:`command_line_overrides`), the server's per-key checks
(:func:`lsp_value`), and the JSON schema of the VS Code extension's settings
(:func:`json_schema`, which a test holds ``package.json`` to).

Two dialects: ``pyproject.toml`` and the command line are lenient about form (``"0.7"``, one
string for a list; :func:`coerce`) and stop at the first bad value, a user error naming the
setting; the server takes JSON as sent and reports each bad key, which keeps its default.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crystal_lsp.errors import CrystalError

BOOL, INT, FLOAT, TEXT, STRINGS, CHOICE = "bool", "int", "float", "str", "strings", "choice"
SEVERITIES = ("hint", "information", "warning", "error")
UNDERLINES = ("range", "firstLine")
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
class Setting:
    """One setting: where it is set, what it accepts, and what it means."""

    name: str
    """The :class:`ScanConfig` field (snake_case; for a server-only setting, its own name)."""
    kind: str
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    """The range excludes ``low`` (``threshold`` is in (0, 1])."""
    why_low: str = ""
    auto: bool = False
    """The word ``"auto"`` is a value too (``k``)."""
    choices: tuple[str, ...] = ()
    items: str = "strings"
    """What a list holds, for the server's messages."""
    lsp: str | None = None
    """The ``crystalLsp.*`` key the server reads, if any."""
    flags: tuple[str, ...] = ()
    """Flags of ``crystal-lsp scan`` and ``crystal-clones`` (a bool's flag sets the opposite)."""
    metavar: str | None = None
    cli_help: str | None = None
    server_only: bool = False

    @property
    def key(self) -> str | None:
        """The key in ``[tool.crystal-lsp]`` (None for the server's own settings)."""
        return None if self.server_only else self.name.replace("_", "-")

    @property
    def interval(self) -> str:
        """The range as an interval, ``(0, 1]``."""
        return f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}]"


SETTINGS: tuple[Setting, ...] = (
    Setting("threshold", FLOAT, 0.6, "minimum similarity", low=0.0, high=1.0, low_open=True,
            lsp="threshold", flags=("--threshold",), metavar="X"),
    Setting("k", INT, 500, "size of S per language, or 'auto'", low=0, high=10_000_000,
            auto=True, lsp="k", flags=("-k", "--k"), metavar="N"),
    Setting("max_n", INT, 4, "highest n-gram order", low=1, high=16),
    Setting("min_tokens", INT, 50, "smallest snippet in tokens", low=1, high=1_000_000,
            lsp="minTokens", flags=("--min-tokens",), metavar="N"),
    Setting("min_lines", INT, 5, "smallest snippet in lines", low=1, high=100_000,
            lsp="minLines", flags=("--min-lines",), metavar="N"),
    Setting("languages", STRINGS, (), "only these languages (repeatable)",
            items="language names", lsp="languages", flags=("--lang",), metavar="LANG"),
    Setting("include", STRINGS, (), "only files matching (repeatable)", items="glob patterns",
            flags=("--include",), metavar="GLOB"),
    Setting("exclude", STRINGS, DEFAULT_EXCLUDE, "files to leave out", items="glob patterns"),
    Setting("extend_exclude", STRINGS, (), "also exclude files matching (repeatable)",
            items="glob patterns", lsp="exclude", flags=("--exclude",), metavar="GLOB"),
    Setting("tracked_only", BOOL, False, "in a git repository, scan only the files git tracks, "
            "not untracked ones (for a .gitignore that makes git's listing of untracked files "
            "slow)", flags=("--tracked-only",), cli_help="scan only the files git tracks"),
    Setting("max_file_bytes", INT, 2_000_000, "larger files are skipped", low=0, high=2**40,
            why_low="0: no limit", lsp="maxFileBytes"),
    Setting("smoothing", TEXT, "m1:eps=0.0001", "NLTK smoothing for the scores"),
    Setting("same_file", BOOL, True, "also report copies inside one file",
            flags=("--no-same-file",), cli_help="ignore copies within one file"),
    Setting("report_data", BOOL, False, "also report data runs (tables, __all__ lists)"),
    Setting("max_df", INT, 50, "seeds found at more places than this pair nothing (boilerplate)",
            low=2, high=10_000_000, why_low="a shingle must link two snippets"),
    Setting("sset_drift", FLOAT, 0.05, "rebuild the S sets when this fraction of tokens changed",
            low=0.0, high=1.0),
    Setting("show_similar", BOOL, False, "also show findings of similar structure (families of "
            "parallel code, declarations, parallel structure), not only copies, in reports, "
            "diagnostics, the hook and agents' answers (JSON and SARIF always carry both)",
            lsp="showSimilar", flags=("--show-similar",),
            cli_help="also show findings of similar structure, not only copies"),
    Setting("enable", BOOL, True, "publish diagnostics", lsp="enable", server_only=True),
    Setting("severity", CHOICE, "information", "diagnostic severity", choices=SEVERITIES,
            lsp="severity", server_only=True),
    Setting("underline", CHOICE, "range", "what a diagnostic underlines: the copy's aligned range "
            "(a unit copied whole: its header line), or its first line", choices=UNDERLINES, lsp="underline",
            server_only=True),
    Setting("debounce_ms", INT, 300, "wait after the last edit before checking, in ms", low=0,
            high=60_000, lsp="debounceMs", server_only=True),
    Setting("max_diagnostics", INT, 20, "at most this many near-duplicate diagnostics per file, "
            "the most telling first; a note counts the rest", low=1, high=100_000,
            lsp="maxDiagnostics", server_only=True),
    Setting("references_outside_workspace", BOOL, False, "crystal/score may read reference "
            "files outside the workspace folders", lsp="referencesOutsideWorkspace",
            server_only=True),
    Setting("insertions", BOOL, True, "score blocks of code that land in one edit (an accepted "
            "completion, a paste, an agent's edit) and show the verdict as a code lens",
            lsp="insertions", server_only=True),
    Setting("insertion_min_lines", INT, 3, "smallest inserted block scored, in non-blank lines",
            low=1, high=100_000, lsp="insertionMinLines", server_only=True),
    Setting("insertion_threshold", FLOAT, 0.6, "similarity from which an inserted block is a "
            "copy of its closest region (below: new code)", low=0.0, high=1.0, low_open=True,
            lsp="insertionThreshold", server_only=True),
    Setting("insertion_diagnostics", BOOL, False, "also raise a diagnostic on an inserted "
            "block that is a copy", lsp="insertionDiagnostics", server_only=True),
    Setting("insertion_lens_seconds", INT, 120, "how long an inserted block's lens stays, in "
            "seconds (it goes at once when the block is edited)", low=0, high=86_400,
            why_low="0: until edited", lsp="insertionLensSeconds", server_only=True),
)  # fmt: skip
SCAN_SETTINGS = {s.name: s for s in SETTINGS if not s.server_only}
LSP_SETTINGS = {s.lsp: s for s in SETTINGS if s.lsp is not None}
CLI_SETTINGS = tuple(s for s in SETTINGS if s.flags)


def default(name: str) -> Any:
    """The default of a setting (what :class:`ScanConfig` fields start from)."""
    return SCAN_SETTINGS[name].default


def canonical_language(name: str) -> str:
    """The canonical Pygments name of a language name or alias (``py`` -> ``python``)."""
    # imported here: the lexers' tables are needed only when a setting names languages
    from crystal_lsp.text.lexers import canonical_name, lexer_by_language

    return canonical_name(lexer_by_language(name))


def check_range(setting: Setting, value: Any) -> None:
    """Raise a :class:`CrystalError` naming the setting when ``value`` is out of its range."""
    name = setting.name
    if setting.auto and isinstance(value, str):
        if value != "auto":
            raise CrystalError(f"{name} must be a number or 'auto', not {value!r}")
        return
    if setting.low is None or setting.high is None:
        return
    if setting.kind == FLOAT:
        if not _in_interval(setting, value):
            raise CrystalError(f"{name} must be in {setting.interval}, not {value}")
    elif value < setting.low:
        why = f" ({setting.why_low})" if setting.why_low else ""
        raise CrystalError(f"{name} must be at least {setting.low}{why}, not {value}")
    elif value > setting.high:
        raise CrystalError(f"{name} must be at most {setting.high}, not {value}")


def coerce(raw: Mapping[str, Any], origin: str) -> dict[str, Any]:
    """Settings from ``pyproject.toml`` or overrides, by field name, in their Python types.

    Keys may use ``-`` or ``_``; unknown keys and values of the wrong type are errors naming
    ``origin``. Ranges are checked by :class:`ScanConfig`.
    """
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        setting = SCAN_SETTINGS.get(name)
        if setting is None:
            known = ", ".join(sorted(k.replace("_", "-") for k in SCAN_SETTINGS))
            raise CrystalError(f"{origin}: unknown setting {key!r} (known: {known})")
        try:
            out[name] = _loose(setting, value)
        except (TypeError, ValueError) as exc:
            raise CrystalError(f"{origin}: bad value for {key!r}: {value!r} ({exc})") from None
    return out


def _loose(setting: Setting, value: Any) -> Any:
    if setting.kind == STRINGS:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise TypeError("expected a list of strings")
        return tuple(value)
    if setting.auto and value == "auto":
        return value
    if setting.kind == INT:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError("expected a whole number")
        number = float(value)
        if not number.is_integer():
            raise ValueError("expected a whole number")
        return int(number)
    if setting.kind == FLOAT:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError("expected a number")
        return float(value)
    if setting.kind == BOOL:
        if not isinstance(value, bool):
            raise TypeError("expected true or false")
        return value
    return str(value)


def lsp_value(setting: Setting, value: Any) -> Any:
    """The server's reading of one JSON value; ``ValueError("expected ...")`` when it is bad."""
    if setting.kind == BOOL:
        if not isinstance(value, bool):
            raise ValueError("expected true or false")
        return value
    if setting.kind == CHOICE:
        chosen = {choice.lower(): choice for choice in setting.choices}
        if not isinstance(value, str) or value.lower() not in chosen:
            raise ValueError("expected one of " + ", ".join(setting.choices))
        return chosen[value.lower()]
    if setting.kind == STRINGS:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"expected a list of {setting.items}")
        return list(value)
    if setting.auto and value == "auto":
        return value
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if setting.kind == FLOAT:
        if number is None or not _in_interval(setting, float(number)):
            raise ValueError(f"expected a number in {setting.interval}")
        return float(number)
    auto = ' or "auto"' if setting.auto else ""
    if number is None or not float(number).is_integer() or number < (setting.low or 0):
        raise ValueError(f"expected a whole number >= {setting.low}{auto}")
    if setting.high is not None and number > setting.high:
        raise ValueError(f"expected a whole number <= {setting.high}{auto}")
    return int(number)


def _in_interval(setting: Setting, value: float) -> bool:
    if setting.low is None or setting.high is None:
        return True
    above_low = setting.low < value if setting.low_open else setting.low <= value
    return above_low and value <= setting.high


def json_schema(setting: Setting) -> dict[str, Any]:
    """The setting as a JSON schema, the form of ``contributes.configuration`` in VS Code."""
    types = {BOOL: "boolean", INT: "integer", FLOAT: "number", TEXT: "string", CHOICE: "string"}
    default = list(setting.default) if isinstance(setting.default, tuple) else setting.default
    schema: dict[str, Any] = {"type": types.get(setting.kind, "array"), "default": default}
    if setting.kind == STRINGS:
        schema["items"] = {"type": "string"}
    if setting.choices:
        schema["enum"] = list(setting.choices)
    if setting.low is not None:
        schema["exclusiveMinimum" if setting.low_open else "minimum"] = setting.low
    if setting.high is not None:
        schema["maximum"] = setting.high
    return schema


def add_scan_options(parser: argparse.ArgumentParser) -> None:
    """The settings' flags, shared by ``crystal-lsp scan`` and ``crystal-clones``."""
    for setting in CLI_SETTINGS:
        shown = f"{setting.help} (default {setting.default})"
        if setting.kind == BOOL:
            parser.add_argument(
                *setting.flags,
                dest=setting.name,
                action="store_const",
                const=not setting.default,
                default=None,
                help=setting.cli_help or setting.help,
            )
        elif setting.kind == STRINGS:
            parser.add_argument(
                *setting.flags,
                dest=setting.name,
                action="append",
                metavar=setting.metavar,
                help=setting.help,
            )
        else:
            parser.add_argument(
                *setting.flags,
                dest=setting.name,
                type=str if setting.auto else {INT: int, FLOAT: float}[setting.kind],
                metavar=setting.metavar,
                help=setting.cli_help or shown,
            )


def command_line_overrides(options: Any) -> dict[str, Any]:
    """The settings given as command-line options (:func:`add_scan_options`), by field name."""
    return {
        s.name: getattr(options, s.name)
        for s in CLI_SETTINGS
        if getattr(options, s.name, None) is not None
    }
