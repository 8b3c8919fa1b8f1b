"""The one settings table against everything derived from it or declared elsewhere.

``ScanConfig``, the command-line options of ``scan`` and ``crystal-clones``, the server's checks,
the VS Code extension's ``package.json`` and ``src/core/settings.ts``, and the README.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import re
from typing import Any

import pytest
from crystal_lsp_hooks import clone_check

from crystal_lsp import CrystalError
from crystal_lsp.cli.main import build_parser, main
from crystal_lsp.clones.options import (
    CLI_SETTINGS,
    LSP_SETTINGS,
    SCAN_SETTINGS,
    SETTINGS,
    Setting,
    command_line_overrides,
    json_schema,
)
from crystal_lsp.clones.settings import ScanConfig, load_config
from crystal_lsp.server.settings import DEFAULTS, parse_settings

REPO_DIR = pathlib.Path(__file__).resolve().parents[3]
EXTENSION = REPO_DIR / "vscode-extension"
CLIENT_ONLY = {"kAuto", "interpreter", "installIfMissing", "trace.server", "scoreMetrics"}
SCHEMA_KEYS = ("type", "default", "items", "enum", "minimum", "exclusiveMinimum", "maximum")
NUMERIC = [s for s in SETTINGS if s.low is not None]


def _contributed() -> dict[str, dict[str, Any]]:
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    properties = manifest["contributes"]["configuration"]["properties"]
    return {key.removeprefix("crystalLsp."): value for key, value in properties.items()}


def _ts_object(name: str) -> dict[str, Any]:
    """An ``Object.freeze({...})`` constant of ``settings.ts``, read as JSON."""
    text = (EXTENSION / "src" / "core" / "settings.ts").read_text(encoding="utf-8")
    match = re.search(
        rf"export const {name}\b[^=]*= Object\.freeze\(\{{\n(.*?)\n\}}\);", text, re.S
    )
    assert match is not None, name
    body = re.sub(r"//[^\n]*", "", match[1]).replace("'", '"')
    body = re.sub(r"(?<=\d)_(?=\d)", "", body)
    body = re.sub(r"([A-Za-z]\w*):", r'"\1":', body)
    return json.loads("{" + re.sub(r",(\s*[}\]]|\s*$)", r"\1", body) + "}")


def test_every_scan_config_field_is_in_the_table_with_its_default() -> None:
    fields = {f.name for f in dataclasses.fields(ScanConfig)} - {"extra"}
    assert set(SCAN_SETTINGS) == fields
    config = ScanConfig()
    for setting in SCAN_SETTINGS.values():
        assert getattr(config, setting.name) == setting.default, setting.name


def test_every_number_has_a_documented_range() -> None:
    for setting in SETTINGS:
        if setting.kind in ("int", "float"):
            assert setting.low is not None and setting.high is not None, setting.name
            assert setting.low <= setting.default <= setting.high, setting.name
    assert (SCAN_SETTINGS["max_df"].low, SCAN_SETTINGS["max_df"].high) == (2, 10_000_000)
    assert (LSP_SETTINGS["debounceMs"].low, LSP_SETTINGS["debounceMs"].high) == (0, 60_000)
    assert LSP_SETTINGS["maxFileBytes"].high == 2**40
    assert SCAN_SETTINGS["threshold"].interval == "(0, 1]"


def test_package_json_declares_what_the_server_reads() -> None:
    contributed = _contributed()
    assert set(contributed) - CLIENT_ONLY == set(LSP_SETTINGS)
    for key, setting in LSP_SETTINGS.items():
        declared = {k: v for k, v in contributed[key].items() if k in SCHEMA_KEYS}
        assert declared == json_schema(setting), key


def test_settings_ts_defaults_and_ranges_are_the_tables() -> None:
    assert _ts_object("DEFAULT_SETTINGS") == DEFAULTS
    limits = _ts_object("LIMITS")
    assert set(limits) == {s.lsp for s in NUMERIC if s.lsp}
    for key, bounds in limits.items():
        schema = json_schema(LSP_SETTINGS[key])
        assert bounds == {b: schema[b] for b in SCHEMA_KEYS[4:] if b in schema}, key


def test_readme_documents_every_setting() -> None:
    readme = (REPO_DIR / "README.md").read_text(encoding="utf-8")
    for setting in SETTINGS:
        if setting.key:
            assert f"`{setting.key}`" in readme, setting.key
        if setting.lsp:
            assert f"`{setting.lsp}`" in readme and f"`crystalLsp.{setting.lsp}`" in readme


# --- out of range: pyproject.toml, command line, server ---------------------------------------


def _outside(setting: Setting) -> list[Any]:
    assert setting.low is not None and setting.high is not None
    step = 1 if setting.kind == "int" else 0.5
    below = setting.low if setting.low_open else setting.low - step
    return [below, setting.high + step]


@pytest.mark.parametrize(
    ("setting", "value"),
    [(s, v) for s in NUMERIC if not s.server_only for v in _outside(s)],
    ids=lambda x: x.name if isinstance(x, Setting) else repr(x),
)
def test_out_of_range_in_pyproject_is_a_user_error(
    tmp_path: pathlib.Path, setting: Setting, value: float
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.crystal-lsp]\n{setting.key} = {value}\n")
    with pytest.raises(CrystalError, match=rf"^{setting.name} must be ") as caught:
        load_config(str(tmp_path))
    assert caught.value.exit_code == 2 and "\n" not in str(caught.value)


def test_the_edges_of_each_range_are_accepted(tmp_path: pathlib.Path) -> None:
    for setting in NUMERIC:
        if setting.server_only or setting.low is None:
            continue
        for edge in (setting.high, *(() if setting.low_open else (setting.low,))):
            assert getattr(ScanConfig().with_overrides({setting.name: edge}), setting.name) == edge


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--min-lines", "100001"], "crystal-lsp: error: min_lines must be at most 100000, not 100001"),
        (["--threshold", "1.5"], "crystal-lsp: error: threshold must be in (0, 1], not 1.5"),
        (["-k", "10000001"], "crystal-lsp: error: k must be at most 10000000, not 10000001"),
        (["--min-tokens", "0"], "crystal-lsp: error: min_tokens must be at least 1, not 0"),
    ],
)  # fmt: skip
def test_out_of_range_on_the_command_line_is_one_line_and_exit_2(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["scan", str(tmp_path), *argv]) == 2
    assert capsys.readouterr().err.splitlines() == [message]


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("debounceMs", 60_001, "expected a whole number <= 60000"),
        ("debounceMs", -1, "expected a whole number >= 0"),
        ("maxFileBytes", 2**40 + 1, "expected a whole number <= 1099511627776"),
        ("minLines", 100_001, "expected a whole number <= 100000"),
        ("minTokens", 1_000_001, "expected a whole number <= 1000000"),
        ("k", 10_000_001, 'expected a whole number <= 10000000 or "auto"'),
        ("threshold", 1.01, "expected a number in (0, 1]"),
    ],
)
def test_out_of_range_in_the_server_is_a_problem_and_keeps_the_default(
    key: str, value: float, expected: str
) -> None:
    settings, problems = parse_settings({"threshold": 0.9, key: value})
    assert problems == [f"crystalLsp.{key}: {expected} (got {value!r}); using the default"]
    assert settings.debounce_ms == 300
    assert dict(settings.scan).get(LSP_SETTINGS[key].name) is None
    assert key == "threshold" or dict(settings.scan)["threshold"] == 0.9


def test_an_empty_list_as_the_settings_object_means_no_settings() -> None:
    assert parse_settings([]) == parse_settings(None) == parse_settings({})
    assert parse_settings([])[1] == []
    assert parse_settings([1, 2])[1] == ["settings: expected an object, got list"]


# --- one set of options for scan and crystal-clones -------------------------------------------


def _scan_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = sub.choices["scan"]
    return parser


ARGV = [
    "--threshold", "0.8", "-k", "auto", "--min-tokens", "30", "--min-lines", "3",
    "--lang", "py", "--lang", "java", "--include", "src/**", "--exclude", "gen/**",
    "--no-same-file", "--show-similar", "--tracked-only",
]  # fmt: skip


def test_scan_and_the_hook_take_the_same_setting_options() -> None:
    from_scan = command_line_overrides(_scan_parser().parse_args(ARGV))
    from_hook = command_line_overrides(clone_check.build_parser().parse_args(ARGV))
    assert (
        from_scan
        == from_hook
        == {
            "threshold": 0.8,
            "k": "auto",
            "min_tokens": 30,
            "min_lines": 3,
            "languages": ["py", "java"],
            "include": ["src/**"],
            "extend_exclude": ["gen/**"],
            "same_file": False,
            "show_similar": True,
            "tracked_only": True,
        }
    )
    assert {s.name for s in CLI_SETTINGS} == set(from_scan)
    assert command_line_overrides(_scan_parser().parse_args([])) == {}
