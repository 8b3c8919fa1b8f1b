"""Unit tests of :mod:`crystal_lsp.server.settings`: layered, validated settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from crystal_lsp.server.settings import folder_config, parse_settings


def test_settings_defaults_and_layers() -> None:
    settings, problems = parse_settings(None, None)
    assert problems == [] and settings.enable and settings.severity == "information"
    assert settings.debounce_ms == 300 and dict(settings.scan) == {}
    settings, problems = parse_settings(
        {"threshold": 0.8, "severity": "error"}, {"threshold": 0.7, "languages": ["py", "JS"]}
    )
    assert problems == []
    assert settings.severity == "error"
    assert dict(settings.scan) == {"threshold": 0.7, "languages": ("javascript", "python")}


def test_default_values_do_not_override_the_project() -> None:
    settings, _ = parse_settings({"threshold": 0.6, "k": 500, "minTokens": 50, "exclude": []})
    assert dict(settings.scan) == {}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("threshold", "high"),
        ("threshold", 0),
        ("threshold", True),
        ("k", -1),
        ("k", "many"),
        ("minTokens", 0),
        ("minLines", 2.5),
        ("severity", "loud"),
        ("underline", "squiggle"),
        ("underline", ["range"]),
        ("languages", ["klingon"]),
        ("languages", "python"),
        ("exclude", [1]),
        ("debounceMs", -5),
        ("maxFileBytes", "big"),
        ("enable", "yes"),
    ],
)
def test_each_bad_key_is_reported_and_defaulted(key: str, value: object) -> None:
    settings, problems = parse_settings(
        {key: value, "severity": "hint"} if key != "severity" else {key: value}
    )
    [problem] = problems
    assert f"crystalLsp.{key}" in problem
    default, _ = parse_settings(None)
    assert settings.scan == default.scan and settings.enable == default.enable
    assert settings.debounce_ms == default.debounce_ms
    assert settings.underline == "range"


def test_underline_is_range_or_first_line() -> None:
    assert parse_settings(None)[0].underline == "range"
    for value in ("firstLine", "firstline", "FIRSTLINE"):
        settings, problems = parse_settings({"underline": value})
        assert problems == [] and settings.underline == "firstLine"
    settings, problems = parse_settings({"underline": "firstLine"}, {"underline": "range"})
    assert problems == [] and settings.underline == "range"
    assert dict(settings.scan) == {}  # a server setting, not a ScanConfig override
    settings, problems = parse_settings({"underline": "first", "severity": "hint"})
    assert problems == [
        "crystalLsp.underline: expected one of range, firstLine (got 'first'); using the default"
    ]
    assert settings.underline == "range" and settings.severity == "hint"


def test_unknown_keys_and_nulls_are_ignored() -> None:
    settings, problems = parse_settings({"interpreter": ["python"], "threshold": None})
    assert problems == [] and dict(settings.scan) == {}
    _, problems = parse_settings([1, 2])
    assert len(problems) == 1


def test_folder_config_reads_pyproject_and_reports_a_broken_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.crystal-lsp]\nmin-tokens = 80\n")
    settings, _ = parse_settings({"threshold": 0.9})
    config, problems = folder_config(str(tmp_path), settings)
    assert problems == [] and config.min_tokens == 80 and config.threshold == 0.9
    (tmp_path / "pyproject.toml").write_text('[tool.crystal-lsp]\nthreshold = "x"\n')
    config, problems = folder_config(str(tmp_path), settings)
    assert config.threshold == 0.9 and config.min_tokens == 50
    assert "pyproject.toml" in problems[0]
