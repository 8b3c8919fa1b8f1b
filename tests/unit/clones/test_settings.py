"""Scan settings: defaults, [tool.crystal-lsp] in pyproject.toml, validation, signatures."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

from crystal_lsp import CrystalError
from crystal_lsp.clones.settings import (
    DEFAULT_EXCLUDE,
    DISPLAY_ONLY,
    ScanConfig,
    find_pyproject,
    load_config,
)


def write_pyproject(root: pathlib.Path, body: str) -> pathlib.Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(body, encoding="utf-8")
    return root


def test_defaults(tmp_path: pathlib.Path) -> None:
    config = load_config(str(tmp_path))
    assert config == ScanConfig()
    assert (config.threshold, config.k, config.min_tokens, config.min_lines) == (0.6, 500, 50, 5)
    assert (config.languages, config.include, config.extend_exclude) == ((), (), ())
    assert config.exclude == DEFAULT_EXCLUDE
    assert (config.same_file, config.report_data) == (True, False)
    assert find_pyproject(str(tmp_path)) is None


def test_pyproject_without_our_section(tmp_path: pathlib.Path) -> None:
    write_pyproject(tmp_path, '[project]\nname = "x"\n\n[tool.ruff]\nline-length = 99\n')
    assert load_config(str(tmp_path)) == ScanConfig()
    assert find_pyproject(str(tmp_path)) == str(tmp_path / "pyproject.toml")


FULL = """
[tool.crystal-lsp]
threshold = 0.75
k = 200
min-tokens = 30
min-lines = 4
languages = ["python", "java"]
include = ["src/**"]
exclude = ["**/generated/**"]
extend-exclude = ["**/fixtures/**", "legacy/*.py"]
same-file = false
report-data = true
max-n = 3
max-file-bytes = 100000
smoothing = "m2"
max-df = 20
sset-drift = 0.1
"""


def test_every_key(tmp_path: pathlib.Path) -> None:
    config = load_config(str(write_pyproject(tmp_path, FULL)))
    assert config == ScanConfig(
        threshold=0.75,
        k=200,
        min_tokens=30,
        min_lines=4,
        languages=("python", "java"),
        include=("src/**",),
        exclude=("**/generated/**",),
        extend_exclude=("**/fixtures/**", "legacy/*.py"),
        same_file=False,
        report_data=True,
        max_n=3,
        max_file_bytes=100_000,
        smoothing="m2",
        max_df=20,
        sset_drift=0.1,
    )
    assert config.all_excludes == ("**/generated/**", "**/fixtures/**", "legacy/*.py")
    assert config.smoothing_spec.method == 2


@pytest.mark.parametrize(
    ("line", "field", "value"),
    [
        pytest.param('k = "auto"', "k", "auto", id="k-auto"),
        pytest.param("k = 0", "k", 0, id="k-zero"),
        pytest.param('k = "64"', "k", 64, id="k-string-number"),
        pytest.param("threshold = 1", "threshold", 1.0, id="threshold-int"),
        pytest.param('languages = "python"', "languages", ("python",), id="one-string-list"),
        pytest.param("min_tokens = 7", "min_tokens", 7, id="underscore-key"),
        pytest.param("include = []", "include", (), id="empty-list"),
    ],
)
def test_value_forms(tmp_path: pathlib.Path, line: str, field: str, value: object) -> None:
    config = load_config(str(write_pyproject(tmp_path, f"[tool.crystal-lsp]\n{line}\n")))
    assert getattr(config, field) == value


def test_command_line_overrides_pyproject(tmp_path: pathlib.Path) -> None:
    root = write_pyproject(tmp_path, "[tool.crystal-lsp]\nthreshold = 0.75\nk = 200\n")
    config = load_config(str(root), {"threshold": 0.9, "extend_exclude": ["x/**"]})
    assert (config.threshold, config.k, config.extend_exclude) == (0.9, 200, ("x/**",))
    assert config.with_overrides({"min-lines": 9}).min_lines == 9
    assert config.with_overrides({}) == config


@pytest.mark.parametrize(
    ("body", "names"),
    [
        pytest.param("thresold = 0.5", "'thresold'", id="unknown-key"),
        pytest.param("extra = 1", "'extra'", id="extra-is-not-a-setting"),
        pytest.param('threshold = "high"', "'threshold'", id="threshold-not-a-number"),
        pytest.param("threshold = 1.5", "threshold", id="threshold-above-one"),
        pytest.param("threshold = 0", "threshold", id="threshold-zero"),
        pytest.param('k = "big"', "'k'", id="k-word"),
        pytest.param("k = -1", "k", id="k-negative"),
        pytest.param("k = [1]", "'k'", id="k-list"),
        pytest.param("min-tokens = 0", "min_tokens", id="min-tokens-zero"),
        pytest.param("min-lines = 0", "min_lines", id="min-lines-zero"),
        pytest.param("min-tokens = true", "'min-tokens'", id="min-tokens-bool"),
        pytest.param('min-lines = "five"', "'min-lines'", id="min-lines-word"),
        pytest.param("languages = [1, 2]", "'languages'", id="languages-not-strings"),
        pytest.param("include = 3", "'include'", id="include-number"),
        pytest.param('exclude = {a = "b"}', "'exclude'", id="exclude-table"),
        pytest.param('extend-exclude = [["x"]]', "'extend-exclude'", id="extend-exclude-nested"),
        pytest.param('same-file = "yes"', "'same-file'", id="same-file-string"),
        pytest.param("report-data = 1", "'report-data'", id="report-data-number"),
        pytest.param("max-n = 0", "max_n", id="max-n-zero"),
        pytest.param('smoothing = "bogus"', "smoothing", id="smoothing"),
    ],
)
def test_bad_settings_name_the_key(tmp_path: pathlib.Path, body: str, names: str) -> None:
    root = write_pyproject(tmp_path, f"[tool.crystal-lsp]\n{body}\n")
    with pytest.raises(CrystalError) as caught:
        load_config(str(root))
    assert names in str(caught.value)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("threshold = true", id="threshold-bool"),
        pytest.param("k = true", id="k-bool"),
        pytest.param("min-tokens = 12.5", id="min-tokens-fraction"),
        pytest.param("max-df = 0", id="max-df-zero"),
        pytest.param("sset-drift = -0.5", id="sset-drift-negative"),
        pytest.param("max-file-bytes = -1", id="max-file-bytes-negative"),
        pytest.param('languages = ["pythn"]', id="unknown-language"),
    ],
)
def test_more_bad_settings_are_rejected(tmp_path: pathlib.Path, body: str) -> None:
    root = write_pyproject(tmp_path, f"[tool.crystal-lsp]\n{body}\n")
    key = body.split(" = ")[0]
    with pytest.raises(CrystalError, match=key.replace("-", "[-_]")):
        load_config(str(root))


def test_language_aliases_are_canonical(tmp_path: pathlib.Path) -> None:
    root = write_pyproject(tmp_path, '[tool.crystal-lsp]\nlanguages = ["py", "JavaScript"]\n')
    assert load_config(str(root)).languages == ("python", "javascript")


def test_section_must_be_a_table(tmp_path: pathlib.Path) -> None:
    root = write_pyproject(tmp_path, '[tool]\ncrystal-lsp = "fast"\n')
    with pytest.raises(CrystalError, match=r"\[tool.crystal-lsp\] must be a table"):
        load_config(str(root))


def test_malformed_toml(tmp_path: pathlib.Path) -> None:
    root = write_pyproject(tmp_path, "[tool.crystal-lsp\nthreshold = \n")
    with pytest.raises(CrystalError, match=r"pyproject\.toml: cannot read"):
        load_config(str(root))


def test_bad_command_line_override_names_its_origin(tmp_path: pathlib.Path) -> None:
    with pytest.raises(CrystalError, match="command line: unknown setting 'colour'"):
        load_config(str(tmp_path), {"colour": "red"})
    with pytest.raises(CrystalError, match="overrides: bad value for 'threshold'"):
        ScanConfig().with_overrides({"threshold": "x"})


# --- signatures ------------------------------------------------------------------------------

CHANGES = {
    "threshold": 0.7,
    "k": "auto",
    "max_n": 3,
    "min_tokens": 40,
    "min_lines": 4,
    "languages": ("python",),
    "include": ("src/**",),
    "exclude": (),
    "extend_exclude": ("x/**",),
    "max_file_bytes": 1000,
    "smoothing": "m2",
    "same_file": False,
    "report_data": True,
    "max_df": 10,
    "sset_drift": 0.2,
    "show_similar": True,
    "tracked_only": True,
}
ENTRY_FIELDS = {"max_n", "min_tokens", "min_lines", "languages", "max_file_bytes"}


def test_every_setting_is_covered() -> None:
    names = {f.name for f in dataclasses.fields(ScanConfig)} - {"extra"}
    assert names == set(CHANGES)


@pytest.mark.parametrize(("name", "value"), CHANGES.items())
def test_signature_changes_with_each_setting(name: str, value: object) -> None:
    base = ScanConfig()
    changed = dataclasses.replace(base, **{name: value})
    # what is shown of the findings is no part of what is found (nor of the caches' keys)
    assert (changed.signature() != base.signature()) == (name not in DISPLAY_ONLY)
    assert (changed.entry_signature() != base.entry_signature()) == (name in ENTRY_FIELDS)


def test_signature_is_stable_otherwise(tmp_path: pathlib.Path) -> None:
    base = ScanConfig()
    assert ScanConfig().signature() == base.signature()
    assert len(base.signature()) == 16
    assert dataclasses.replace(base, extra={"note": 1}).signature() == base.signature()
    # the same values from pyproject.toml, from the command line and from Python agree
    root = write_pyproject(
        tmp_path, '[tool.crystal-lsp]\nthreshold = 0.7\nlanguages = ["python"]\nk = "300"\n'
    )
    from_file = load_config(str(root))
    from_cli = load_config(
        str(tmp_path / "none"), {"threshold": "0.7", "languages": ["python"], "k": 300}
    )
    direct = ScanConfig(threshold=0.7, languages=("python",), k=300)
    assert from_file.signature() == from_cli.signature() == direct.signature()
    # setting a value to its default changes nothing
    assert ScanConfig(threshold=0.6, k=500, same_file=True).signature() == base.signature()
